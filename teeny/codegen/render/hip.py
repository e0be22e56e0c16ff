"""HIP source for clang's AMDGPU backend with no ROCm headers (-nogpuinc): thread indices, barriers, shared memory and
math come from clang builtins, declared or spelled here. float16/bfloat16 are stored as 16 bits, computed in float32."""
from __future__ import annotations
import os
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

# tensor cores (codegen/tc.py): tiles copied into shared memory 16 bytes at a time (n of them read, zeros after), and
# the matrix instructions on fragments held as 32-bit words (two 16-bit values each)
_TC = r"""
static inline __attribute__((device)) void teeny_copy16(unsigned int* base, int w, const unsigned short* src, int n) {
  for (int i = 0; i < 4; i++) base[w + i] = (2 * i < n / 2 ? (unsigned int)src[2 * i] : 0u) |
                                            ((2 * i + 1 < n / 2 ? (unsigned int)src[2 * i + 1] : 0u) << 16);
}
"""
# (a padded view's chunk: value i read where bit i of mask is set)
_TCM = r"""
static inline __attribute__((device)) void teeny_copy16m(unsigned int* base, int w, const unsigned short* src, int m) {
  for (int i = 0; i < 4; i++) base[w + i] = ((m >> (2 * i)) & 1 ? (unsigned int)src[2 * i] : 0u) |
                                            (((m >> (2 * i + 1)) & 1 ? (unsigned int)src[2 * i + 1] : 0u) << 16);
}
"""
_AMD_MMA = r"""
typedef unsigned int teeny_uNA __attribute__((ext_vector_type(NA)));
typedef float teeny_fNC __attribute__((ext_vector_type(NC)));
static inline __attribute__((device)) void teeny_NAME(float* c, const unsigned int* a, const unsigned int* b) {
  teeny_uNA wa, wb;
  teeny_fNC vc;
  for (int i = 0; i < NA; i++) { wa[i] = a[i]; wb[i] = b[i]; }
  for (int i = 0; i < NC; i++) vc[i] = c[i];
  vc = BUILTIN(__builtin_bit_cast(VIN, wa), __builtin_bit_cast(VIN, wb), vcEXTRA);
  for (int i = 0; i < NC; i++) c[i] = vc[i];
}
"""
def _amd_mma(name: str, words: int, acc: int, builtin: str, vin: str, extra: str = "") -> str:
  vec = vin.split("x")
  vin = vin.replace("_Float16", "half")
  return (f"typedef {vec[0]} teeny_{vin} __attribute__((ext_vector_type({vec[1]})));\n" +
          _AMD_MMA.replace("NAME", name).replace("NA", str(words)).replace("NC", str(acc)).replace("BUILTIN", builtin)
          .replace("VIN", f"teeny_{vin}").replace("EXTRA", extra).lstrip())
HIP_HELPERS.update({
  "teeny_copy16": _TC.strip() + "\n",
  "teeny_copy16m": _TCM.strip() + "\n",
  # gfx11 (RDNA3, wave32): 16x16x16, A and B 16 values a lane (lanes 16-31 repeat 0-15), 8 floats of C
  "teeny_wmma_f16": _amd_mma("wmma_f16", 8, 8, "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", "_Float16x16"),
  "teeny_wmma_bf16": _amd_mma("wmma_bf16", 8, 8, "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32", "shortx16"),
  # gfx90a/gfx94x (CDNA, wave64): 16x16x16, 4 values of A and B and 4 floats of C a lane
  "teeny_mfma_f16": _amd_mma("mfma_f16", 2, 4, "__builtin_amdgcn_mfma_f32_16x16x16f16", "_Float16x4", ", 0, 0, 0"),
  "teeny_mfma_bf16": _amd_mma("mfma_bf16", 2, 4, "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "shortx4", ", 0, 0, 0"),
})

def _hip(fn: str, f64: bool = True):
  """A float32 builtin; float64 natively when the backend has the instruction, else through float32."""
  def spell(x: str, dt) -> str:
    if dt != dtypes.float64: return f"{fn}({x})" if fn.startswith("teeny_") else f"__builtin_{fn}f({x})"
    if f64: return f"__builtin_{fn}({x})"
    return f"((double){fn if fn.startswith('teeny_') else '__builtin_' + fn + 'f'}((float)({x})))"
  return spell

class HIPRenderer(GPULanguage):
  """arch: the gfx target the source is for (the tensor-core instruction differs: WMMA on gfx11, MFMA on CDNA)."""
  lang = "HIP"
  wide_type = "long long"
  helpers = HIP_HELPERS
  max_shared = 64 * 1024   # LDS per workgroup
  def __init__(self, arch: str | None = None): self.arch = arch or os.environ.get("AMD_ARCH", "gfx1100")
  @property
  def tensor_cores(self) -> tuple[str, ...]:
    if self.arch.startswith("gfx11"): return ("amd_wmma_16x16x16",)
    if self.arch in ("gfx90a", "gfx940", "gfx941", "gfx942"): return ("amd_mfma_16x16x16",)
    return ()
  def render_wmma(self, arg, acc: str, a: str, b: str) -> str:
    kind = {"amd_wmma_16x16x16": "wmma", "amd_mfma_16x16x16": "mfma"}.get(arg.layout)
    if kind is None or arg.dtype_acc != dtypes.float32 or arg.dtype_in not in (dtypes.float16, dtypes.bfloat16):
      raise NotImplementedError(f"HIP renderer: no matrix instruction for {arg}")
    return f"teeny_{kind}_{'f16' if arg.dtype_in == dtypes.float16 else 'bf16'}({acc}, {a}, {b})"
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
  def render_bitcast_bits(self, x: str, src, dst) -> str: return f"__builtin_bit_cast({self.render_dtype(dst)}, {x})"
