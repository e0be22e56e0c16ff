static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
__kernel void r_6_40(__global float* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0*40);
    float acc2 = -INFINITY;
    for (int r2 = 0; r2 < 40; r2++) {
      float val3 = data1[(val1+r2)];
      acc2 = teeny_fmax(acc2,val3);
    }
    data0[g0] = acc2;
  }
}

__kernel void r_6_40(__global int* restrict data0, __global const float* restrict data1, __global const float* restrict data2) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0*40);
    float val2 = data2[g0];
    int acc3 = (-2147483647-1);
    for (int r1 = 0; r1 < 40; r1++) {
      float val4 = data1[(val1+r1)];
      int val5 = (((int)(((val4==val2)|(val4!=val4))))*((r1*-1)+40));
      acc3 = ((acc3>val5)?acc3:val5);
    }
    data0[g0] = ((int)(((uint)(((int)(((uint)(acc3))*4294967295u))))+40u));
  }
}
