#include <math.h>
#include <stdint.h>
void r_64_64_48(float* restrict data0, const float* restrict data1, const float* restrict data2, int core, int ncores) {
  int g0_per = (16 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 16 ? g0_lo + g0_per : 16;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    for (long g1 = 0; g1 < 4; g1++) {
      long val1 = (g0*192);
      long val2 = (g1*16);
      float acc3[64];
      for (int acc3_i = 0; acc3_i < 64; acc3_i++) acc3[acc3_i] = 0.0f;
      #pragma clang loop vectorize(disable)
      for (long r3 = 0; r3 < 48; r3++) {
        #pragma clang loop vectorize(disable)
        for (long u100 = 0; u100 < 4; u100++) {
          for (long u101 = 0; u101 < 16; u101++) {
            long val4 = (val2+u101);
            float val5 = (data1[((val1+(u100*48))+r3)]*data2[((r3*64)+val4)]);
            acc3[u100*16+u101] = (acc3[u100*16+u101]+val5);
          }
        }
      }
      for (long u100 = 0; u100 < 4; u100++) {
        for (long u101 = 0; u101 < 16; u101++) {
          long val6 = (val2+u101);
          data0[(((g0*256)+(u100*64))+val6)] = acc3[u100*16+u101];
        }
      }
    }
  }
}
void teeny_entry(void **a, int core, int ncores) { r_64_64_48(a[0], a[1], a[2], core, ncores); }
