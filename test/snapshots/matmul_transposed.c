#include <math.h>
#include <stdint.h>
void r_16_24_64(float* restrict data0, const float* restrict data1, const float* restrict data2, int core, int ncores) {
  int g0_per = (8 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 8 ? g0_lo + g0_per : 8;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    for (long g1 = 0; g1 < 6; g1++) {
      long val1 = (g0*128);
      long val2 = (g1*256);
      float acc3[64];
      for (int acc3_i = 0; acc3_i < 64; acc3_i++) acc3[acc3_i] = 0.0f;
      #pragma clang loop vectorize(disable)
      for (long r3 = 0; r3 < 8; r3++) {
        #pragma clang loop vectorize(disable)
        for (long u100 = 0; u100 < 2; u100++) {
          #pragma clang loop vectorize(disable)
          for (long u101 = 0; u101 < 4; u101++) {
            for (long u103 = 0; u103 < 8; u103++) {
              long val4 = ((r3*8)+u103);
              float val5 = (data1[((val1+(u100*64))+val4)]*data2[((val2+(u101*64))+val4)]);
              acc3[u100*32+u101*8+u103] = (acc3[u100*32+u101*8+u103]+val5);
            }
          }
        }
      }
      float acc6[8];
      for (int acc6_i = 0; acc6_i < 8; acc6_i++) acc6[acc6_i] = 0.0f;
      #pragma clang loop vectorize(disable)
      for (long u103 = 0; u103 < 8; u103++) {
        #pragma clang loop vectorize(disable)
        for (long u100 = 0; u100 < 2; u100++) {
          for (long u101 = 0; u101 < 4; u101++) {
            acc6[u100*4+u101] = (acc6[u100*4+u101]+acc3[u100*32+u101*8+u103]);
          }
        }
      }
      for (long u100 = 0; u100 < 2; u100++) {
        for (long u101 = 0; u101 < 4; u101++) {
          data0[(((g0*48)+(u100*24))+((g1*4)+u101))] = acc6[u100*4+u101];
        }
      }
    }
  }
}
void teeny_entry(void **a, int core, int ncores) { r_16_24_64(a[0], a[1], a[2], core, ncores); }
