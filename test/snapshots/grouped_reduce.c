#include <math.h>
#include <stdint.h>
static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
void r_64_1000(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (64 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 64 ? g0_lo + g0_per : 64;
  for (long g0 = g0_lo; g0 < g0_hi; g0++) {
    long val1 = (g0*1000);
    float acc2[8];
    for (int acc2_i = 0; acc2_i < 8; acc2_i++) acc2[acc2_i] = -INFINITY;
    #pragma clang loop vectorize(disable)
    for (long r2 = 0; r2 < 125; r2++) {
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
void teeny_entry(void **a, int core, int ncores) { r_64_1000(a[0], a[1], core, ncores); }
