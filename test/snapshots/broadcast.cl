__kernel void E_8_12(__global float* restrict data0, __global const float* restrict data1, __global const float* restrict data2, __global const float* restrict data3) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0%12);
    data0[g0] = ((data1[(g0/12)]+data2[val1])*data3[val1]);
  }
}
