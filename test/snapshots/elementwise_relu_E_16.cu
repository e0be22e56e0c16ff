extern "C" __global__ void __launch_bounds__(16) E_16(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2, const float* __restrict__ data3) {
  int g0 = (blockIdx.x*16+threadIdx.x);
  {
    float val1 = ((data1[g0]*data2[g0])+data3[g0]);
    data0[g0] = ((val1<=0.0f)?0.0f:val1);
  }
}
