extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 16))) E_4_4(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*16+__builtin_amdgcn_workitem_id_x());
  {
    data0[g0] = data1[((((g0%4)*24)+12)+((g0/4)*3))];
  }
}
