#include <math.h>
#include <stdint.h>
void r_5_6_32(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g1_per = (5 + ncores - 1) / ncores, g1_lo = core * g1_per, g1_hi = g1_lo + g1_per < 5 ? g1_lo + g1_per : 5;
  for (long g1 = g1_lo; g1 < g1_hi; g1++) {
    long val1 = (g1*32);
    float acc2 = 0.0f;
    for (long r3 = 0; r3 < 6; r3++) {
      #pragma omp simd reduction(+:acc2)
      for (long r4 = 0; r4 < 32; r4++) {
        float val3 = data1[(((r3*160)+val1)+r4)];
        acc2 = (acc2+val3);
      }
    }
    data0[g1] = acc2;
  }
}
void teeny_entry(void **a, int core, int ncores) { r_5_6_32(a[0], a[1], core, ncores); }
