static inline __attribute__((device)) float teeny_h2f(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }
static inline __attribute__((device)) unsigned short teeny_f2h(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }
extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 16))) E_16(unsigned short* __restrict__ data0, const unsigned short* __restrict__ data1, const unsigned short* __restrict__ data2) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*16+__builtin_amdgcn_workitem_id_x());
  {
    data0[g0] = teeny_f2h((teeny_h2f(data1[g0])+teeny_h2f(data2[g0])));
  }
}
