extern "C" __global__ void __launch_bounds__(4) r_4_8(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  int g0 = (blockIdx.x*4+threadIdx.x);
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
