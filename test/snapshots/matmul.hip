extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 256))) r_64_64_48(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*256+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = ((g0/16)*48);
    int val2 = ((g0%16)*4);
    float acc3[4];
    for (int acc3_i = 0; acc3_i < 4; acc3_i++) acc3[acc3_i] = 0.0f;
    for (int r3 = 0; r3 < 48; r3++) {
      #pragma unroll
      for (int u101 = 0; u101 < 4; u101++) {
        float val4 = (data1[(val1+r3)]*data2[((r3*64)+(val2+u101))]);
        acc3[u101] = (acc3[u101]+val4);
      }
    }
    #pragma unroll
    for (int u101 = 0; u101 < 4; u101++) {
      data0[(u101+(g0*4))] = acc3[u101];
    }
  }
}
