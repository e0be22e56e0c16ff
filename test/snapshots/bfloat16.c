#include <math.h>
#include <stdint.h>
static inline float teeny_bf2f(unsigned short h) { unsigned int b = (unsigned int)h << 16; float f; __builtin_memcpy(&f, &b, 4); return f; }
static inline unsigned short teeny_f2bf(float f) {
  unsigned int x; __builtin_memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);
  return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
void r_8_8(unsigned short* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (8 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 8 ? g0_lo + g0_per : 8;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    long val1 = (g0*8);
    float acc2 = 0.0f;
    #pragma omp simd reduction(+:acc2)
    for (long r1 = 0; r1 < 8; r1++) {
      float val3 = ((float)(teeny_bf2f(teeny_f2bf((teeny_bf2f(teeny_f2bf(data1[(val1+r1)]))*2.0f)))));
      acc2 = (acc2+val3);
    }
    data0[g0] = teeny_f2bf(acc2);
  }
}
void teeny_entry(void **a, int core, int ncores) { r_8_8(a[0], a[1], core, ncores); }
