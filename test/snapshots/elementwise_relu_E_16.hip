extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 16))) E_16(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2, const float* __restrict__ data3) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*16+__builtin_amdgcn_workitem_id_x());
  {
    float val1 = ((data1[g0]*data2[g0])+data3[g0]);
    data0[g0] = ((val1<=0.0f)?0.0f:val1);
  }
}
