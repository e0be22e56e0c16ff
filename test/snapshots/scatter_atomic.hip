extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 64))) hist(float* __restrict__ data0, const int* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*64+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = data1[g0];
    (((val1<8)&((val1<0)^1))?__hip_atomic_fetch_add((float*)(data0+val1), (float)(1.0f), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT):0.0f);
  }
}
