#include <math.h>
#include <stdint.h>
static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
void r_6_40(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (6 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 6 ? g0_lo + g0_per : 6;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    long val1 = (g0*40);
    float acc2[8];
    for (int acc2_i = 0; acc2_i < 8; acc2_i++) acc2[acc2_i] = -INFINITY;
    #pragma clang loop vectorize(disable)
    for (long r2 = 0; r2 < 5; r2++) {
      for (long u102 = 0; u102 < 8; u102++) {
        float val3 = data1[(val1+((r2*8)+u102))];
        acc2[u102] = teeny_fmax(acc2[u102],val3);
      }
    }
    float acc4 = -INFINITY;
    for (long u102 = 0; u102 < 8; u102++) {
      acc4 = teeny_fmax(acc4,acc2[u102]);
    }
    data0[g0] = acc4;
  }
}
void teeny_entry(void **a, int core, int ncores) { r_6_40(a[0], a[1], core, ncores); }

#include <math.h>
#include <stdint.h>
void r_6_40(int* restrict data0, const float* restrict data1, const float* restrict data2, int core, int ncores) {
  int g0_per = (6 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 6 ? g0_lo + g0_per : 6;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    long val1 = (g0*40);
    float val2 = data2[g0];
    int acc3[8];
    for (int acc3_i = 0; acc3_i < 8; acc3_i++) acc3[acc3_i] = (-2147483647-1);
    #pragma clang loop vectorize(disable)
    for (int r1 = 0; r1 < 5; r1++) {
      for (int u101 = 0; u101 < 8; u101++) {
        float val4 = data1[(val1+((r1*8)+u101))];
        int val5 = (((int)(((val4==val2)|(val4!=val4))))*(((r1*-8)+(u101*-1))+40));
        acc3[u101] = ((acc3[u101]>val5)?acc3[u101]:val5);
      }
    }
    int acc6 = (-2147483647-1);
    #pragma omp simd reduction(max:acc6)
    for (int u101 = 0; u101 < 8; u101++) {
      acc6 = ((acc6>acc3[u101])?acc6:acc3[u101]);
    }
    data0[g0] = ((acc6*-1)+40);
  }
}
void teeny_entry(void **a, int core, int ncores) { r_6_40(a[0], a[1], a[2], core, ncores); }
