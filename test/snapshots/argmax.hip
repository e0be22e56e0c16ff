#define INFINITY (__builtin_inff())
static inline __attribute__((device)) float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 6))) r_6_40(float* __restrict__ data0, const float* __restrict__ data1) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*6+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0*40);
    float acc2 = -INFINITY;
    for (int r2 = 0; r2 < 40; r2++) {
      float val3 = data1[(val1+r2)];
      acc2 = teeny_fmax(acc2,val3);
    }
    data0[g0] = acc2;
  }
}

extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, 6))) r_6_40(int* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  int g0 = (__builtin_amdgcn_workgroup_id_x()*6+__builtin_amdgcn_workitem_id_x());
  {
    int val1 = (g0*40);
    float val2 = data2[g0];
    int acc3 = (-2147483647-1);
    for (int r1 = 0; r1 < 40; r1++) {
      float val4 = data1[(val1+r1)];
      int val5 = (((int)(((val4==val2)|(val4!=val4))))*((r1*-1)+40));
      acc3 = ((acc3>val5)?acc3:val5);
    }
    data0[g0] = ((int)(((unsigned int)(((int)(((unsigned int)(acc3))*4294967295u))))+40u));
  }
}
