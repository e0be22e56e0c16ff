"""CUDA C for NVRTC. No headers are needed: float16/bfloat16 are stored as 16 bits and computed in float32 through the
PTX conversion instructions (cvt), math uses the device builtins (expf, ...)."""
from __future__ import annotations
from teeny.codegen.render.gpu import GPULanguage

CUDA_HELPERS = {
  "INFINITY": "#define INFINITY (__int_as_float(0x7f800000))\n",
  "NAN": "#define NAN (__int_as_float(0x7fffffff))\n",
  "teeny_h2f": "__device__ __forceinline__ float teeny_h2f(unsigned short h) { float f; "
               "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n",
  "teeny_f2h": "__device__ __forceinline__ unsigned short teeny_f2h(float f) { unsigned short h; "
               "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n",
  "teeny_bf2f": "__device__ __forceinline__ float teeny_bf2f(unsigned short h) { "
                "return __uint_as_float((unsigned int)h << 16); }\n",
  "teeny_f2bf": "__device__ __forceinline__ unsigned short teeny_f2bf(float f) {\n"
                "  unsigned int x = __float_as_uint(f);\n"
                "  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);\n"
                "  return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);\n}\n",
  "teeny_fmax64": "__device__ __forceinline__ double teeny_fmax64(double a, double b) { "
                  "return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin64": "__device__ __forceinline__ double teeny_fmin64(double a, double b) { "
                  "return (a < b || a != a) ? a : b; }\n",
  "teeny_fmax": "__device__ __forceinline__ float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }\n",
  "teeny_fmin": "__device__ __forceinline__ float teeny_fmin(float a, float b) { return (a < b || a != a) ? a : b; }\n",
  "teeny_bitcast": "template <class D, class S> __device__ __forceinline__ D teeny_bitcast(S s) "
                   "{ union { S s; D d; } u; u.s = s; return u.d; }\n",
}

class CUDARenderer(GPULanguage):
  lang = "CUDA"
  helpers = CUDA_HELPERS
  def render_kernel_prefix(self, threads: int) -> str: return f'extern "C" __global__ void __launch_bounds__({threads})'
  def render_bitcast(self, x: str, src, dst) -> str: return f"teeny_bitcast<{self.render_dtype(dst)}>({x})"
