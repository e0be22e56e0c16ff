extern "C" __global__ void __launch_bounds__(256) r_16_24_64(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  int g0 = (blockIdx.x*256+threadIdx.x);
  if (g0 < 384) {
    int val1 = ((g0/24)*64);
    int val2 = ((g0%24)*64);
    float acc3 = 0.0f;
    for (int r3 = 0; r3 < 64; r3++) {
      float val4 = (data1[(val1+r3)]*data2[(val2+r3)]);
      acc3 = (acc3+val4);
    }
    data0[g0] = acc3;
  }
}
