#include <math.h>
#include <stdint.h>
void E_4_4(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (4 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 4 ? g0_lo + g0_per : 4;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    for (long g1 = 0; g1 < 4; g1++) {
      data0[((g0*4)+g1)] = data1[(((g1*24)+12)+(g0*3))];
    }
  }
}
void teeny_entry(void **a, int core, int ncores) { E_4_4(a[0], a[1], core, ncores); }
