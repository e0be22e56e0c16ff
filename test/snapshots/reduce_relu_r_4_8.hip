extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 4))) r_4_8(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*4+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0*8);
    float acc2 = 0.0f;
    for (int r1 = 0; r1 < 8; r1++) {
      int val3 = (val1+r1);
      float val4 = (data1[val3]*data2[val3]);
      acc2 = (acc2+val4);
    }
    data0[g0] = ((acc2<=0.0f)?0.0f:acc2);
  }
}
