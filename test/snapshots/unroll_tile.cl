__kernel void unroll_tile(__global float* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0*4);
    float acc2 = 0.0f;
    float acc3 = 0.0f;
    float acc4 = 0.0f;
    float acc5 = 0.0f;
    for (int r2 = 0; r2 < 16; r2++) {
      int val6 = ((r2*32)+val1);
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
