#include <math.h>
#include <stdint.h>
void r_4_16_16(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (4 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 4 ? g0_lo + g0_per : 4;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    for (int g1 = 0; g1 < 16; g1++) {
      long val1 = (g0*16);
      float acc2 = 0.0f;
      #pragma omp simd reduction(+:acc2)
      for (int r3 = 0; r3 < 16; r3++) {
        float val3 = ((r3<=g1)?data1[(val1+r3)]:0.0f);
        acc2 = (acc2+val3);
      }
      data0[(val1+g1)] = acc2;
    }
  }
}
void teeny_entry(void **a, int core, int ncores) { r_4_16_16(a[0], a[1], core, ncores); }
