#include <math.h>
#include <stdint.h>
void r_4_8(float* restrict data0, const float* restrict data1, const float* restrict data2, int core, int ncores) {
  int g0_per = (4 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 4 ? g0_lo + g0_per : 4;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    long val1 = (g0*8);
    float acc2 = 0.0f;
    #pragma omp simd reduction(+:acc2)
    for (long r1 = 0; r1 < 8; r1++) {
      long val3 = (val1+r1);
      float val4 = (data1[val3]*data2[val3]);
      acc2 = (acc2+val4);
    }
    data0[g0] = ((acc2<=0.0f)?0.0f:acc2);
  }
}
void teeny_entry(void **a, int core, int ncores) { r_4_8(a[0], a[1], a[2], core, ncores); }
