"""C for the CPU runtime. float16/bfloat16 are stored as 16 bits and computed in float through conversion functions,
so any C compiler handles them."""
from __future__ import annotations
from teeny.codegen.render.atomics import C_ATOMIC_HELPERS
from teeny.codegen.render.cstyle import CStyleLanguage
from teeny.helpers import prod
from teeny.uop.ops import Ops, UOp

# non-temporal stores: clang's builtin (vectorised to streaming stores), a plain store elsewhere
C_STREAM = """#if defined(__clang__)
#define teeny_stream(p, v) __builtin_nontemporal_store((v), (p))
#else
#define teeny_stream(p, v) (*(p) = (v))
#endif
"""
STREAM_BYTES = 8 << 20

C_PRELUDE = (r"""#include <math.h>
#include <stdint.h>
static inline float teeny_h2f(unsigned short h) {
#if (defined(__F16C__) || defined(__aarch64__)) && (defined(__clang__) || defined(__FLT16_MAX__))
  TEENY_F16 v; __builtin_memcpy(&v, &h, 2); return (float)v;
#else
  unsigned int s = (unsigned int)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  if (e == 0) { if (m == 0) bits = s; else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } """
  r"""bits = s | (e << 23) | ((m & 0x3ff) << 13); } }
  else if (e == 31) bits = s | 0x7f800000 | (m << 13);
  else bits = s | ((e + 112) << 23) | (m << 13);
  float f; __builtin_memcpy(&f, &bits, 4); return f;
#endif
}
static inline unsigned short teeny_f2h(float f) {
#if (defined(__F16C__) || defined(__aarch64__)) && (defined(__clang__) || defined(__FLT16_MAX__))
  TEENY_F16 v = (TEENY_F16)f; unsigned short h; __builtin_memcpy(&h, &v, 2); return h;
#else
  unsigned int x; __builtin_memcpy(&x, &f, 4);
  unsigned int s = (x >> 16) & 0x8000, a = x & 0x7fffffff;
  if (a > 0x7f800000) return (unsigned short)(s | 0x7e00);
  if (a >= 0x477ff000) return (unsigned short)(s | 0x7c00);
  if (a < 0x38800000) {
    if (a < 0x33000000) return (unsigned short)s;
    unsigned int e = a >> 23, m = (a & 0x7fffff) | 0x800000, shift = 126 - e;
    unsigned int half = m >> shift, rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (unsigned short)(s | half);
  }
  unsigned int r = a + 0xc8000fff + ((a >> 13) & 1);
  return (unsigned short)(s | (r >> 13));
#endif
}
static inline float teeny_bf2f(unsigned short h) { unsigned int b = (unsigned int)h << 16; float f; """
  r"""__builtin_memcpy(&f, &b, 4); return f; }
static inline unsigned short teeny_f2bf(float f) {
  unsigned int x; __builtin_memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);
  return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
static inline float teeny_fmax(float a, float b) { return (a > b || a != a) ? a : b; }
static inline float teeny_fmin(float a, float b) { return (a < b || a != a) ? a : b; }
static inline double teeny_fmax64(double a, double b) { return (a > b || a != a) ? a : b; }
static inline double teeny_fmin64(double a, double b) { return (a < b || a != a) ? a : b; }
""")

# float16 conversions in hardware where the target has them (x86's F16C, every AArch64): clang's __fp16 (any version)
# or gcc's _Float16 (12 and later); elsewhere teeny_h2f/teeny_f2h convert in integer code (the same values: RNE)
C_F16 = """#if defined(__clang__)
#define TEENY_F16 __fp16
#else
#define TEENY_F16 _Float16
#endif
"""

def _helpers(prelude: str) -> dict[str, str]:
  """Split the prelude into named helper functions, each kept with what it needs."""
  out, cur, name = {}, [], None
  for line in prelude.splitlines(keepends=True):
    if line.startswith("static inline"):
      if name: out[name] = "".join(cur)
      name, cur = line.split("(")[0].split()[-1], [line]
    elif name: cur.append(line)
  if name: out[name] = "".join(cur)
  return out

class CRenderer(CStyleLanguage):
  """`vector_bytes` and `cache_bytes` are facts of the target the code is compiled for (runtime/ops_cpu.py's
  `cpu_target` reads them from the compiler and the machine, TEENY_CPU_ARCH picks the target); the heuristics size
  their tiles from them. The defaults (AVX2: 32-byte vectors) keep a renderer made without a target deterministic."""
  lang = "C"
  prelude = C_PRELUDE
  def __init__(self, vector_bytes: int = 32, cache_bytes: dict[str, int] | None = None, vector_registers: int = 16):
    self.vector_bytes, self.vector_registers = vector_bytes, vector_registers
    self.cache_bytes = cache_bytes or {"L1d": 32 << 10, "L2": 512 << 10, "L3": 8 << 20}
  simd_reduce = {Ops.ADD: "+", Ops.MUL: "*", Ops.MAX: "max", Ops.MIN: "min"}
  no_vectorize = "#pragma clang loop vectorize(disable)"   # (gcc ignores a clang pragma)
  wide_index = "long"
  wraps_signed = True   # (-fwrapv: runtime/ops_cpu.py)
  helpers = {**_helpers(C_PRELUDE), **C_ATOMIC_HELPERS}   # atomics: CAS loops for float (gcc has no float fetch_add)
  def render_kernel_footer(self, name: str, params: list[str]) -> list[str]:
    """`teeny_entry`: the kernel with its parameters in one array (buffer addresses, then variable values), which
    is how the CPU runtime's worker pool (runtime/cpu_pool.py) runs any kernel on several cores."""
    args = ", ".join(f"a[{i}]" if "*" in p else f"(int)(intptr_t)a[{i}]" for i, p in enumerate(params))
    return [f"void teeny_entry(void **a, int core, int ncores) {{ {name}({args}{', ' if args else ''}core, ncores); }}"]
  def render_prelude(self, body: str) -> str:
    used = [h for n, h in self.helpers.items() if n in body]
    f16 = C_F16 if any(n in body for n in ("teeny_h2f", "teeny_f2h")) else ""
    stream = C_STREAM if "teeny_stream(" in body else ""
    return "#include <math.h>\n#include <stdint.h>\n" + stream + f16 + "".join(used)
  def streams(self, store: UOp) -> bool:
    """A fill (a store of a value that reads no memory: zeros, ones, arange) of a buffer bigger than the caches streams
    past them: with no read-for-ownership of every line it writes, zeroing 153 MB took 3.3 instead of 8.3 ms on 2 cores
    (streaming the output of elementwise kernels that read memory measured slower: 28.5 vs 31.2 GB/s on the fused
    bench)."""
    buf = store.src[0].src[0]
    if buf.op is not Ops.DEFINE_GLOBAL or prod(buf.arg[1]) * buf.dtype.base.itemsize < STREAM_BYTES: return False
    return not any(x.op in (Ops.LOAD, Ops.REDUCE, Ops.CUSTOM, Ops.ATOMIC, Ops.ATOMIC_CAS)
                   for x in store.src[1].toposort)
  def render_store(self, buf: str, idx: str, v: str, stream: bool) -> str:
    return f"teeny_stream(&{buf}[{idx}], {v});" if stream else f"{buf}[{idx}] = {v};"
