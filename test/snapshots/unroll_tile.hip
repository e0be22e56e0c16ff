extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 8))) unroll_tile(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*8+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0*4);
    float acc2[4];
    for (int acc2_i = 0; acc2_i < 4; acc2_i++) acc2[acc2_i] = 0.0f;
    for (int r2 = 0; r2 < 16; r2++) {
      float val3 = data1[(((r2*32)+val1)+0)];
      acc2[0] = (acc2[0]+val3);
      float val4 = data1[(((r2*32)+val1)+1)];
      acc2[1] = (acc2[1]+val4);
      float val5 = data1[(((r2*32)+val1)+2)];
      acc2[2] = (acc2[2]+val5);
      float val6 = data1[(((r2*32)+val1)+3)];
      acc2[3] = (acc2[3]+val6);
    }
    data0[(val1+0)] = (acc2[0]*2.0f);
    data0[(val1+1)] = (acc2[1]*2.0f);
    data0[(val1+2)] = (acc2[2]*2.0f);
    data0[(val1+3)] = (acc2[3]*2.0f);
  }
}
