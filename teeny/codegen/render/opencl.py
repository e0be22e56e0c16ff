"""OpenCL C. float16 needs cl_khr_fp16 for arithmetic, so float16/bfloat16 are stored as ushort and computed in float
through bit conversions; bool buffers are uchar (kernel arguments may not be bool); float64 enables cl_khr_fp64."""
from __future__ import annotations
import math
from teeny.dtype import dtypes
from teeny.uop.ops import Ops
from teeny.codegen.gpu import AxisMap
from teeny.codegen.render.gpu import GPULanguage

CL_HELPERS = {
  "teeny_h2f": """static inline float teeny_h2f(ushort h) {
  uint s = (uint)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  if (e == 0) { if (m == 0) bits = s; else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } """
  """bits = s | (e << 23) | ((m & 0x3ff) << 13); } }
  else if (e == 31) bits = s | 0x7f800000 | (m << 13);
  else bits = s | ((e + 112) << 23) | (m << 13);
  return as_float(bits);
}
""",
  "teeny_f2h": """static inline ushort teeny_f2h(float f) {
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
""",
  "teeny_bf2f": "static inline float teeny_bf2f(ushort h) { return as_float((uint)h << 16); }\n",
  "teeny_f2bf": """static inline ushort teeny_f2bf(float f) {
  uint x = as_uint(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (ushort)((x >> 16) | 0x40);
  return (ushort)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
""",
  "teeny_fmax64": "static inline double teeny_fmax64(double a, double b) { return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin64": "static inline double teeny_fmin64(double a, double b) { return (a < b || a != a) ? a : b; }\n",
  "teeny_fmax": "static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin": "static inline float teeny_fmin(float a, float b) { return (a < b || a != a) ? a : b; }\n",
}

def _cl(fn: str): return lambda x, dt: f"{fn}({x})"

class OpenCLRenderer(GPULanguage):
  lang = "CL"
  wide_type = "long"
  helpers = CL_HELPERS
  kernel_prefix = "__kernel void"
  buffer_prefix = "__global "
  restrict = "restrict"
  block_idx = ("(int)get_group_id(0)", "(int)get_group_id(1)", "(int)get_group_id(2)")
  thread_idx = ("(int)get_local_id(0)", "(int)get_local_id(1)", "(int)get_local_id(2)")
  shared_prefix = "__local "
  barrier = "barrier(CLK_LOCAL_MEM_FENCE)"
  type_map = {dtypes.bool: "bool", dtypes.int8: "char", dtypes.int16: "short", dtypes.int32: "int",
              dtypes.int64: "long",
              dtypes.uint8: "uchar", dtypes.uint16: "ushort", dtypes.uint32: "uint", dtypes.uint64: "ulong",
              dtypes.float16: "float", dtypes.bfloat16: "float", dtypes.float32: "float", dtypes.float64: "double",
              dtypes.void: "void"}
  storage_map = {dtypes.float16: "ushort", dtypes.bfloat16: "ushort", dtypes.bool: "uchar"}
  unary = {Ops.SQRT: _cl("sqrt"), Ops.EXP: _cl("exp"), Ops.LOG: _cl("log"), Ops.EXP2: _cl("exp2"),
           Ops.LOG2: _cl("log2"),
           Ops.SIN: _cl("sin"), Ops.COS: _cl("cos"), Ops.TAN: _cl("tan"), Ops.TANH: _cl("tanh"), Ops.ERF: _cl("erf"),
           Ops.TRUNC: _cl("trunc"), Ops.FLOOR: _cl("floor"), Ops.CEIL: _cl("ceil"), Ops.RINT: _cl("rint")}
  def render_global_idx(self, m: AxisMap) -> str: return f"(int)get_global_id({m.dim})"
  def render_kernel_prefix(self, threads: int) -> str: return self.kernel_prefix
  def render_const(self, v, dt) -> str:
    if dt == dtypes.int64: return f"{v}l" if v != -(1 << 63) else "(-9223372036854775807l-1)"
    if dt == dtypes.uint64: return f"{v}ul"
    if dt == dtypes.float64 and isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
      return "((double)NAN)" if math.isnan(v) else f"({'-' if v < 0 else ''}(double)INFINITY)"
    return super().render_const(v, dt)
  def render_alu(self, op: Ops, srcs: list[str], dt, src_dt) -> str:
    if op is Ops.POW: return f"pow({srcs[0]},{srcs[1]})"
    if op is Ops.RECIP and dt == dtypes.float64: return f"(1.0/{srcs[0]})"
    return super().render_alu(op, srcs, dt, src_dt)
  def render_fmod(self, a: str, b: str, dt) -> str: return f"fmod({a},{b})"  # overloaded for float and double
  def render_bitcast_bits(self, x: str, src, dst) -> str: return f"as_{self.render_dtype(dst)}({x})"
  def render_prelude(self, body: str) -> str:
    pre = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if "double" in body else ""
    return pre + super().render_prelude(body)
