#define INFINITY (__int_as_float(0x7f800000))
__device__ __forceinline__ float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
extern "C" __global__ void __launch_bounds__(256) r_64_1000(float* __restrict__ data0, const float* __restrict__ data1) {
  __shared__ float smem0[256];
  int lidx0 = threadIdx.x;
  int g0 = blockIdx.x;
  {
    int val1 = (g0*1000);
    float acc2 = -INFINITY;
    for (int i2 = lidx0; i2 < 1000; i2 += 256) {
      float val3 = data1[(val1+i2)];
      acc2 = teeny_fmax(acc2,val3);
    }
    smem0[lidx0] = acc2;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
      if (lidx0 < s) smem0[lidx0] = teeny_fmax(smem0[lidx0],smem0[lidx0+s]);
      __syncthreads();
    }
    acc2 = smem0[0];
    if ((lidx0==0)) data0[g0] = acc2;
  }
}
