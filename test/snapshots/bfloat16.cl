static inline float teeny_bf2f(ushort h) { return as_float((uint)h << 16); }
static inline ushort teeny_f2bf(float f) {
  uint x = as_uint(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (ushort)((x >> 16) | 0x40);
  return (ushort)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
__kernel void r_8_8(__global ushort* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
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
