#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void E_24(__global double* restrict data0, __global const float* restrict data1, __global const int* restrict data2) {
  int g0 = (int)get_global_id(0);
  {
    float val1 = data1[g0];
    data0[g0] = (((double)(((5.0f<val1)?((int)(val1)):((int)(((uint)(data2[g0]))*3u)))))/7.0);
  }
}
