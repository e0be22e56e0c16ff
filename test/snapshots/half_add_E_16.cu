__device__ __forceinline__ float teeny_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short teeny_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
extern "C" __global__ void __launch_bounds__(16) E_16(unsigned short* __restrict__ data0, const unsigned short* __restrict__ data1, const unsigned short* __restrict__ data2) {
  int g0 = (blockIdx.x*16+threadIdx.x);
  {
    data0[g0] = teeny_f2h((teeny_h2f(data1[g0])+teeny_h2f(data2[g0])));
  }
}
