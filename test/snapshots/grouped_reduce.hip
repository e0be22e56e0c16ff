#define INFINITY (__builtin_inff())
static inline __attribute__((device)) float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 256))) r_64_1000(float* __restrict__ data0, const float* __restrict__ data1) {
  __attribute__((shared)) float smem0[256];
  int lidx0 = __builtin_amdgcn_workitem_id_x();
  int g0 = __builtin_amdgcn_workgroup_id_x();
  {
    int val1 = (g0*1000);
    float acc2 = -INFINITY;
    for (int i2 = lidx0; i2 < 1000; i2 += 256) {
      float val3 = data1[(val1+i2)];
      acc2 = teeny_fmax(acc2,val3);
    }
    smem0[lidx0] = acc2;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (int s = 128; s > 0; s >>= 1) {
      if (lidx0 < s) smem0[lidx0] = teeny_fmax(smem0[lidx0],smem0[lidx0+s]);
      __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    }
    acc2 = smem0[0];
    if ((lidx0==0)) data0[g0] = acc2;
  }
}
