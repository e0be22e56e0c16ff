#include <math.h>
#include <stdint.h>
void E_16(float* restrict data0, const float* restrict data1, const float* restrict data2, const float* restrict data3, int core, int ncores) {
  int g0_per = (16 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 16 ? g0_lo + g0_per : 16;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    float val1 = ((data1[g0]*data2[g0])+data3[g0]);
    data0[g0] = ((val1<=0.0f)?0.0f:val1);
  }
}
void teeny_entry(void **a, int core, int ncores) { E_16(a[0], a[1], a[2], a[3], core, ncores); }
