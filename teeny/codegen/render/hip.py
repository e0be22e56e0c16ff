"""HIP source for clang's AMDGPU backend with no ROCm headers (-nogpuinc): thread indices, barriers, shared memory and
math come from clang builtins, declared or spelled here. float16/bfloat16 are stored as 16 bits, computed in float32."""
from __future__ import annotations
from teeny.dtype import dtypes
from teeny.uop.ops import Ops
from teeny.codegen.render.gpu import GPULanguage

_D = "static inline __attribute__((device)) "
HIP_HELPERS = {
  "INFINITY": "#define INFINITY (__builtin_inff())\n",
  "NAN": "#define NAN (__builtin_nanf(\"\"))\n",
  "teeny_h2f": _D + "float teeny_h2f(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }\n",
  "teeny_f2h": _D + "unsigned short teeny_f2h(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }\n",
  "teeny_bf2f": _D + "float teeny_bf2f(unsigned short h) { "
                "return __builtin_bit_cast(float, (unsigned int)h << 16); }\n",
  "teeny_f2bf": _D + "unsigned short teeny_f2bf(float f) {\n  unsigned int x = __builtin_bit_cast(unsigned int, f);\n"
                "  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);\n"
                "  return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);\n}\n",
  "teeny_fmax64": _D + "double teeny_fmax64(double a, double b) { return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin64": _D + "double teeny_fmin64(double a, double b) { return (a < b || a != a) ? a : b; }\n",
  "teeny_fmax": _D + "float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin": _D + "float teeny_fmin(float a, float b) { return (a < b || a != a) ? a : b; }\n",
  # no device libraries (-nogpulib): what the AMDGPU backend cannot lower by itself is written out in terms of what it
  # can
  "teeny_tanhf": _D + "float teeny_tanhf(float x) {\n  float a = __builtin_fabsf(x);\n"
                 "  if (a < 0.0625f) { float x2 = x*x; "
                 "return x*(1.0f + x2*(-1.0f/3.0f + x2*(2.0f/15.0f - x2*17.0f/315.0f))); }\n"
                 "  float e = __builtin_expf(-2.0f*a), t = (1.0f - e)/(1.0f + e);\n  return x < 0.0f ? -t : t;\n}\n",
  "teeny_erff": _D + "float teeny_erff(float x) {\n  float a = __builtin_fabsf(x), t = 1.0f/(1.0f + 0.3275911f*a);\n"
                "  float y = 1.0f - (((((1.061405429f*t - 1.453152027f)*t) + 1.421413741f)*t - 0.284496736f)*t "
                "+ 0.254829592f)*t"
                "*__builtin_expf(-a*a);\n  return x < 0.0f ? -y : y;\n}\n",
  "teeny_tanf": _D + "float teeny_tanf(float x) { return __builtin_sinf(x)/__builtin_cosf(x); }\n",
  "teeny_powf": _D + "float teeny_powf(float a, float b) {\n  if (b == 0.0f || a == 1.0f) return 1.0f;\n"
                "  float r = __builtin_exp2f(b*__builtin_log2f(__builtin_fabsf(a)));\n  if (a < 0.0f) {\n"
                "    if (__builtin_truncf(b) != b) return __builtin_nanf(\"\");\n    float h = b*0.5f;\n"
                "    if (__builtin_truncf(h) != h) r = -r;\n  }\n  return r;\n}\n",
}

def _hip(fn: str, f64: bool = True):
  """A float32 builtin; float64 natively when the backend has the instruction, else through float32."""
  def spell(x: str, dt) -> str:
    if dt != dtypes.float64: return f"{fn}({x})" if fn.startswith("teeny_") else f"__builtin_{fn}f({x})"
    if f64: return f"__builtin_{fn}({x})"
    return f"((double){fn if fn.startswith('teeny_') else '__builtin_' + fn + 'f'}((float)({x})))"
  return spell

class HIPRenderer(GPULanguage):
  lang = "HIP"
  helpers = HIP_HELPERS
  block_idx = ("__builtin_amdgcn_workgroup_id_x()", "__builtin_amdgcn_workgroup_id_y()",
               "__builtin_amdgcn_workgroup_id_z()")
  thread_idx = ("__builtin_amdgcn_workitem_id_x()", "__builtin_amdgcn_workitem_id_y()",
                "__builtin_amdgcn_workitem_id_z()")
  shared_prefix = "__attribute__((shared)) "
  barrier = ('__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); '
             '__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup")')
  unary = {Ops.SQRT: _hip("sqrt"), Ops.EXP: _hip("exp", False), Ops.LOG: _hip("log", False),
           Ops.EXP2: _hip("exp2", False),
           Ops.LOG2: _hip("log2", False), Ops.SIN: _hip("sin", False), Ops.COS: _hip("cos", False),
           Ops.TAN: _hip("teeny_tanf", False), Ops.TANH: _hip("teeny_tanhf", False), Ops.ERF: _hip("teeny_erff", False),
           Ops.TRUNC: _hip("trunc"), Ops.FLOOR: _hip("floor"), Ops.CEIL: _hip("ceil"), Ops.RINT: _hip("rint")}
  def render_kernel_prefix(self, threads: int) -> str:
    return f'extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, {threads})))'
  def render_alu(self, op: Ops, srcs: list[str], dt, src_dt) -> str:
    if op is Ops.POW:
      if dt == dtypes.float64: return f"((double)teeny_powf((float)({srcs[0]}),(float)({srcs[1]})))"
      return f"teeny_powf({srcs[0]},{srcs[1]})"
    return super().render_alu(op, srcs, dt, src_dt)
  def render_fmod(self, a: str, b: str, dt) -> str:  # no libm (-nogpulib): clang's builtin lowers to LLVM's frem
    return f"__builtin_fmod{'f' if dt != dtypes.float64 else ''}({a},{b})"
  def render_bitcast(self, x: str, src, dst) -> str: return f"__builtin_bit_cast({self.render_dtype(dst)}, {x})"
