static inline __attribute__((device)) float teeny_bf2f(unsigned short h) { return __builtin_bit_cast(float, (unsigned int)h << 16); }
static inline __attribute__((device)) unsigned short teeny_f2bf(float f) {
  unsigned int x = __builtin_bit_cast(unsigned int, f);
  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);
  return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 8))) r_8_8(unsigned short* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*8+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0*8);
    float acc2 = 0.0f;
    for (int r1 = 0; r1 < 8; r1++) {
      float val3 = ((float)(teeny_bf2f(teeny_f2bf((teeny_bf2f(teeny_f2bf(data1[(val1+r1)]))*2.0f)))));
      acc2 = (acc2+val3);
    }
    data0[g0] = teeny_f2bf(acc2);
  }
}
