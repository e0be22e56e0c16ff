#include <math.h>
#include <stdint.h>
void E_24(double* restrict data0, const float* restrict data1, const int* restrict data2, int core, int ncores) {
  int g0_per = (24 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 24 ? g0_lo + g0_per : 24;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    float val1 = data1[g0];
    data0[g0] = (((double)(((5.0f<val1)?((int)(val1)):(data2[g0]*3))))/7.0);
  }
}
void teeny_entry(void **a, int core, int ncores) { E_24(a[0], a[1], a[2], core, ncores); }
