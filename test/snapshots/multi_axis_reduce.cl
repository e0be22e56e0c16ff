__kernel void r_5_6_32(__global float* restrict data0, __global const float* restrict data1) {
  int g1 = (int)get_global_id(0);
  {
    int val1 = (g1*32);
    float acc2 = 0.0f;
    for (int r3 = 0; r3 < 6; r3++) {
      for (int r4 = 0; r4 < 32; r4++) {
        float val3 = data1[(((r3*160)+val1)+r4)];
        acc2 = (acc2+val3);
      }
    }
    data0[g1] = acc2;
  }
}
