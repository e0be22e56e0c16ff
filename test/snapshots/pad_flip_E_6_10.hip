extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 60))) E_6_10(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*60+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0/10);
    int val2 = ((g0%10)*-1);
    data0[g0] = (((((1<=val1)&((val1-1)<4))&(2<=(val2+9)))?data1[(((val1*8)+val2)-1)]:0.0f)*2.0f);
  }
}
