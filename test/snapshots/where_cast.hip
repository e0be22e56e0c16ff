extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 24))) E_24(double* __restrict__ data0, const float* __restrict__ data1, const int* __restrict__ data2) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*24+__builtin_amdgcn_workitem_id_x());
  {
    float val1 = data1[g0];
    data0[g0] = (((double)(((5.0f<val1)?((int)(val1)):((int)(((unsigned int)(data2[g0]))*3u)))))/7.0);
  }
}
