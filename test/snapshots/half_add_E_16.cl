static inline float teeny_h2f(ushort h) {
  uint s = (uint)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  if (e == 0) { if (m == 0) bits = s; else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } bits = s | (e << 23) | ((m & 0x3ff) << 13); } }
  else if (e == 31) bits = s | 0x7f800000 | (m << 13);
  else bits = s | ((e + 112) << 23) | (m << 13);
  return as_float(bits);
}
static inline ushort teeny_f2h(float f) {
  uint x = as_uint(f);
  uint s = (x >> 16) & 0x8000, a = x & 0x7fffffff;
  if (a > 0x7f800000) return (ushort)(s | 0x7e00);
  if (a >= 0x477ff000) return (ushort)(s | 0x7c00);
  if (a < 0x38800000) {
    if (a < 0x33000000) return (ushort)s;
    uint e = a >> 23, m = (a & 0x7fffff) | 0x800000, shift = 126 - e;
    uint half_ = m >> shift, rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half_ & 1))) half_++;
    return (ushort)(s | half_);
  }
  uint r = a + 0xc8000fff + ((a >> 13) & 1);
  return (ushort)(s | (r >> 13));
}
__kernel void E_16(__global ushort* restrict data0, __global const ushort* restrict data1, __global const ushort* restrict data2) {
  int g0 = (int)get_global_id(0);
  {
    data0[g0] = teeny_f2h((teeny_h2f(data1[g0])+teeny_h2f(data2[g0])));
  }
}
