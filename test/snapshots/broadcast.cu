extern "C" __global__ void __launch_bounds__(96) E_8_12(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2, const float* __restrict__ data3) {
  int g0 = (blockIdx.x*96+threadIdx.x);
  {
    int val1 = (g0%12);
    data0[g0] = ((data1[(g0/12)]+data2[val1])*data3[val1]);
  }
}
