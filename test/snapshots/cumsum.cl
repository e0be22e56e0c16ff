__kernel void r_4_16_16(__global float* restrict data0, __global const float* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = (g0%16);
    int val2 = ((g0/16)*16);
    float acc3 = 0.0f;
    for (int r3 = 0; r3 < 16; r3++) {
      float val4 = ((r3<=val1)?data1[(val2+r3)]:0.0f);
      acc3 = (acc3+val4);
    }
    data0[g0] = acc3;
  }
}
