extern "C" __global__ void __launch_bounds__(24) E_24(double* __restrict__ data0, const float* __restrict__ data1, const int* __restrict__ data2) {
  int g0 = (blockIdx.x*24+threadIdx.x);
  {
    float val1 = data1[g0];
    data0[g0] = (((double)(((5.0f<val1)?((int)(val1)):((int)(((unsigned int)(data2[g0]))*3u)))))/7.0);
  }
}
