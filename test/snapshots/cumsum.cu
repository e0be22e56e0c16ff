extern "C" __global__ void __launch_bounds__(64) r_4_16_16(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (blockIdx.x*64+threadIdx.x);
  {
    int val1 = (g0%16);
    int val2 = ((g0/16)*16);
    float acc3 = 0.0f;
    for (int r3 = 0; r3 < 16; r3++) {
      float val4 = ((r3<=val1)?data1[(val2+r3)]:0.0f);
      acc3 = (acc3+val4);
    }
    data0[g0] = acc3;
  }
}
