#include <math.h>
#include <stdint.h>
void unroll_tile(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (8 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 8 ? g0_lo + g0_per : 8;
  for (long g0 = 0; g0 < 8; g0++) {
    if (g0 < g0_lo || g0 >= g0_hi) continue;
    long val1 = (g0*4);
    float acc2 = 0.0f;
    float acc3 = 0.0f;
    float acc4 = 0.0f;
    float acc5 = 0.0f;
    for (long r2 = 0; r2 < 16; r2++) {
      long val6 = ((r2*32)+val1);
      float val7 = data1[val6];
      acc2 = (acc2+val7);
      float val8 = data1[(val6+1)];
      acc3 = (acc3+val8);
      float val9 = data1[(val6+2)];
      acc4 = (acc4+val9);
      float val10 = data1[(val6+3)];
      acc5 = (acc5+val10);
    }
    data0[val1] = (acc2*2.0f);
    data0[(val1+1)] = (acc3*2.0f);
    data0[(val1+2)] = (acc4*2.0f);
    data0[(val1+3)] = (acc5*2.0f);
  }
}
void teeny_entry(void **a, int core, int ncores) { unroll_tile(a[0], a[1], core, ncores); }
