extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 96))) E_8_12(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2, const float* __restrict__ data3) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*96+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0%12);
    data0[g0] = ((data1[(g0/12)]+data2[val1])*data3[val1]);
  }
}
