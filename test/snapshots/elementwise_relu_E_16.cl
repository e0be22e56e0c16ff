__kernel void E_16(__global float* restrict data0, __global const float* restrict data1, __global const float* restrict data2, __global const float* restrict data3) {
  int g0 = (int)get_global_id(0);
  {
    float val1 = ((data1[g0]*data2[g0])+data3[g0]);
    data0[g0] = ((val1<=0.0f)?0.0f:val1);
  }
}
