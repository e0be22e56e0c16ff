static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
__kernel void r_64_1000(__global float* restrict data0, __global const float* restrict data1) {
  __local float smem0[256];
  int lidx0 = (int)get_local_id(0);
  int g0 = (int)get_group_id(0);
  {
    int val1 = (g0*1000);
    float acc2 = -INFINITY;
    for (int i2 = lidx0; i2 < 1000; i2 += 256) {
      float val3 = data1[(val1+i2)];
      acc2 = teeny_fmax(acc2,val3);
    }
    smem0[lidx0] = acc2;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 128; s > 0; s >>= 1) {
      if (lidx0 < s) smem0[lidx0] = teeny_fmax(smem0[lidx0],smem0[lidx0+s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc2 = smem0[0];
    if ((lidx0==0)) data0[g0] = acc2;
  }
}
