#include <math.h>
#include <stdint.h>
void unroll_tile(float* restrict data0, const float* restrict data1, int core, int ncores) {
  int g0_per = (8 + ncores - 1) / ncores, g0_lo = core * g0_per, g0_hi = g0_lo + g0_per < 8 ? g0_lo + g0_per : 8;
  for (long g0 = 0; g0 < 8; g0++) {
    if (g0 < g0_lo || g0 >= g0_hi) continue;
    long val1 = (g0*4);
    float acc2[4];
    for (int acc2_i = 0; acc2_i < 4; acc2_i++) acc2[acc2_i] = 0.0f;
    for (long r2 = 0; r2 < 16; r2++) {
      float val3 = data1[(((r2*32)+val1)+0)];
      acc2[0] = (acc2[0]+val3);
      float val4 = data1[(((r2*32)+val1)+1)];
      acc2[1] = (acc2[1]+val4);
      float val5 = data1[(((r2*32)+val1)+2)];
      acc2[2] = (acc2[2]+val5);
      float val6 = data1[(((r2*32)+val1)+3)];
      acc2[3] = (acc2[3]+val6);
    }
    data0[(val1+0)] = (acc2[0]*2.0f);
    data0[(val1+1)] = (acc2[1]*2.0f);
    data0[(val1+2)] = (acc2[2]*2.0f);
    data0[(val1+3)] = (acc2[3]*2.0f);
  }
}
void teeny_entry(void **a, int core, int ncores) { unroll_tile(a[0], a[1], core, ncores); }
