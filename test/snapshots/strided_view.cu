extern "C" __global__ void __launch_bounds__(16) E_4_4(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (blockIdx.x*16+threadIdx.x);
  {
    data0[g0] = data1[((((g0%4)*24)+12)+((g0/4)*3))];
  }
}
