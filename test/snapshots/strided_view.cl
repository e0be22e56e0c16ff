__kernel void E_4_4(__global float* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    data0[g0] = data1[((((g0%4)*24)+12)+((g0/4)*3))];
  }
}
