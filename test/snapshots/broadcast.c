#include <math.h>
#include <stdint.h>
void E_8_12(float* restrict data0, const float* restrict data1, const float* restrict data2, const float* restrict data3, int core, int ncores) {
  int g0_per = (8 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 8 ? g0_lo + g0_per : 8;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    for (long g1 = 0; g1 < 12; g1++) {
      data0[((g0*12)+g1)] = ((data1[g0]+data2[g1])*data3[g1]);
    }
  }
}
void teeny_entry(void **a, int core, int ncores) { E_8_12(a[0], a[1], a[2], a[3], core, ncores); }
