__kernel void r_4_8(__global float* restrict data0, __global const float* restrict data1, __global const float* restrict data2) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0*8);
    float acc2 = 0.0f;
    for (int r1 = 0; r1 < 8; r1++) {
      int val3 = (val1+r1);
      float val4 = (data1[val3]*data2[val3]);
      acc2 = (acc2+val4);
    }
    data0[g0] = ((acc2<=0.0f)?0.0f:acc2);
  }
}
