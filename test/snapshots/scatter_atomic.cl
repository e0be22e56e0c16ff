__kernel void hist(__global float* restrict data0, __global const int* restrict data1) {
  int g0 = (int)get_global_id(0);
  {
    int val1 = data1[g0];
    (((val1<8)&((val1<0)^1))?({ volatile __global uint* _tq = (volatile __global uint*)(data0+val1); float _tv = (1.0f); uint _ta, _told = *_tq; do { _ta = _told; float _to = as_float(_ta), _tn = _to + _tv; _told = atomic_cmpxchg(_tq, _ta, as_uint(_tn)); } while (_told != _ta); as_float(_ta); }):0.0f);
  }
}
