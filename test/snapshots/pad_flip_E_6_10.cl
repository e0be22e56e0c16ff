__kernel void E_6_10(__global float* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0/10);
    int val2 = ((g0%10)*-1);
    data0[g0] = (((((1<=val1)&((val1-1)<4))&(2<=(val2+9)))?data1[(((val1*8)+val2)-1)]:0.0f)*2.0f);
  }
}
