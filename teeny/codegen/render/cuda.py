"""CUDA C for NVRTC. No headers are needed: float16/bfloat16 are stored as 16 bits and computed in float32 through the
PTX conversion instructions (cvt), math uses the device builtins (expf, ...)."""
from __future__ import annotations
import os, re
from teeny.dtype import dtypes
from teeny.uop.ops import Ops
from teeny.codegen.render.gpu import GPULanguage
from teeny.codegen.tc import wgmma_n

_MMA_IN = {dtypes.float16: "f16", dtypes.bfloat16: "bf16"}

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

# tensor cores (codegen/tc.py). Shared memory is addressed as the array's base (converted to a shared-space address
# once: the conversion of the same base is common to every call) plus a 32-bit word offset.
_TC_HELPERS = r"""
__device__ __forceinline__ unsigned int teeny_smem(const unsigned int* p) {
  unsigned int s; asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(s) : "l"(p));
  return s;
}
// 16 bytes to shared memory, asynchronously: n of them read from src, the rest zero-filled
__device__ __forceinline__ void teeny_cp_async16(const unsigned int* base, int w, const void* src, int n) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(teeny_smem(base) + 4 * w), "l"(src), "r"(n));
}
// the same from a row that may start unaligned: n/2 16-bit loads, zeros after them, stored as 4 words
__device__ __forceinline__ void teeny_copy16(unsigned int* base, int w, const unsigned short* src, int n) {
  unsigned int v[4];
#pragma unroll
  for (int i = 0; i < 4; i++) v[i] = (2 * i < n / 2 ? (unsigned int)src[2 * i] : 0u) |
                                     ((2 * i + 1 < n / 2 ? (unsigned int)src[2 * i + 1] : 0u) << 16);
#pragma unroll
  for (int i = 0; i < 4; i++) base[w + i] = v[i];
}
// the same for float32: n/4 loads, zeros after them
__device__ __forceinline__ void teeny_copy16_f32(unsigned int* base, int w, const float* src, int n) {
  float v[4];
#pragma unroll
  for (int i = 0; i < 4; i++) v[i] = 4 * i < n ? src[i] : 0.0f;
#pragma unroll
  for (int i = 0; i < 4; i++) base[w + i] = __float_as_uint(v[i]);
}
// the same where an operand is a padded view (a convolution's input read through its padding): value i read only
// where bit i of mask is set, zero elsewhere
__device__ __forceinline__ void teeny_copy16m(unsigned int* base, int w, const unsigned short* src, int mask) {
  unsigned int v[4];
#pragma unroll
  for (int i = 0; i < 4; i++) v[i] = ((mask >> (2 * i)) & 1 ? (unsigned int)src[2 * i] : 0u) |
                                     (((mask >> (2 * i + 1)) & 1 ? (unsigned int)src[2 * i + 1] : 0u) << 16);
#pragma unroll
  for (int i = 0; i < 4; i++) base[w + i] = v[i];
}
__device__ __forceinline__ void teeny_copy16m_f32(unsigned int* base, int w, const float* src, int mask) {
  float v[4];
#pragma unroll
  for (int i = 0; i < 4; i++) v[i] = (mask >> i) & 1 ? src[i] : 0.0f;
#pragma unroll
  for (int i = 0; i < 4; i++) base[w + i] = __float_as_uint(v[i]);
}
// four float32 values (16 bytes, w a multiple of 4) from shared memory into registers
__device__ __forceinline__ void teeny_lds128(float* r, const unsigned int* base, int w) {
  float4 v = *reinterpret_cast<const float4*>(base + w);
  r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
}
// four 8x8 matrices of 16-bit values: lane 8q+r gives the address of row r of matrix q
__device__ __forceinline__ void teeny_ldsm_x4(unsigned int* r, const unsigned int* base, int w) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(teeny_smem(base) + 4 * w));
}
__device__ __forceinline__ void teeny_ldsm_x4_trans(unsigned int* r, const unsigned int* base, int w) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(teeny_smem(base) + 4 * w));
}
"""
_MMA = r"""
__device__ __forceinline__ void teeny_mma_DT(float* c, const unsigned int* a, const unsigned int* b) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.DT.DT.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
"""
# name -> definition: each block of _TC_HELPERS (ending at a line "}") is named by the __device__ function it defines
CUDA_HELPERS.update({re.search(r"__device__[^(]* (\w+)\(", blk).group(1): blk.strip() + "\n"   # type: ignore[union-attr]
                     for blk in re.split(r"(?<=\n})\n", _TC_HELPERS) if blk.strip()})
CUDA_HELPERS.update({f"teeny_mma_{d}": _MMA.replace("DT", d).lstrip() for d in ("f16", "bf16")})
# TF32: float32 words rounded to TF32 (to nearest, ties away, as cuBLAS's conversion) and multiplied m16n8k8
CUDA_HELPERS["teeny_mma_tf32"] = r"""
__device__ __forceinline__ void teeny_mma_tf32(float* c, const unsigned int* a, const unsigned int* b) {
  unsigned int t[6];
#pragma unroll
  for (int i = 0; i < 6; i++)
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t[i]) : "f"(__uint_as_float(i < 4 ? a[i] : b[i - 4])));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(t[0]), "r"(t[1]), "r"(t[2]), "r"(t[3]), "r"(t[4]), "r"(t[5]));
}
""".lstrip()
# wgmma (sm_90a, codegen/tc.py's WGConfig tiles): a warpgroup's m64nNk16 on descriptors of 128-byte swizzled tiles in
# shared memory (start address, leading byte offset, stride byte offset 1024: 8 rows of 128 bytes, swizzle mode 1),
# issued asynchronously; the fence before and the wait after name the accumulators as operands, so the compiler
# keeps every other access to them outside
# (from the shared array's address, computed once, and a word offset into it: 32-bit sums in the k loop, where a
# conversion of each operand's pointer to a shared address cost ~8 instructions a descriptor between the wgmmas)
CUDA_HELPERS["teeny_wgdesc"] = r"""
__device__ __forceinline__ unsigned long long teeny_wgdesc(unsigned int base, int w, int lbo) {
  // (base: the array's shared address with only its low 18 bits, which the sum does not outgrow: 228 KB at most)
  return (unsigned long long)(((base + 4u * (unsigned int)w) >> 4) | (((lbo >> 4) & 0x3FFF) << 16)) |
         (64ull << 32) | (1ull << 62);
}
""".lstrip()
# the tensor memory accelerator (sm_90; codegen/tc.py's TMA tiles): a CUtensorMap (128 opaque bytes the runtime encodes
# with cuTensorMapEncodeTiled) passed by value as a __grid_constant__ parameter; mbarriers in shared memory (a 64-bit
# word each) count the arrivals of a phase and, with expect_tx, the bytes the copies that complete on them must land
CUDA_HELPERS["teeny_tmap"] = "struct __align__(64) teeny_tmap { unsigned long long v[16]; };\n"
CUDA_HELPERS["teeny_mbar_init"] = r"""
__device__ __forceinline__ void teeny_mbar_init(const unsigned int* base, int w, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(teeny_smem(base) + 4 * w), "r"(count) : "memory");
}
""".lstrip()
# Each takes a predicate `p` and acts only where it is nonzero, predicated inside the PTX: a C branch between wgmma
# instructions made ptxas serialize them (a wait for each before the next: 4096^3 float16 at half speed)
CUDA_HELPERS["teeny_mbar_arrive"] = r"""
__device__ __forceinline__ void teeny_mbar_arrive(const unsigned int* base, int w, int p) {
  asm volatile("{ .reg .pred q; .reg .b64 s; setp.ne.b32 q, %1, 0; @q mbarrier.arrive.shared::cta.b64 s, [%0]; }"
               :: "r"(teeny_smem(base) + 4 * w), "r"(p) : "memory");
}
""".lstrip()
# one arrival that also expects `bytes` more of the phase's copies
CUDA_HELPERS["teeny_mbar_expect"] = r"""
__device__ __forceinline__ void teeny_mbar_expect(const unsigned int* base, int w, int bytes, int p) {
  asm volatile("{ .reg .pred q; .reg .b64 s; setp.ne.b32 q, %2, 0; "
               "@q mbarrier.arrive.expect_tx.shared::cta.b64 s, [%0], %1; }"
               :: "r"(teeny_smem(base) + 4 * w), "r"(bytes), "r"(p) : "memory");
}
""".lstrip()
# until the barrier's phase of this parity has completed (its arrivals and bytes all in); the loop is the PTX's own
CUDA_HELPERS["teeny_mbar_wait"] = r"""
__device__ __forceinline__ void teeny_mbar_wait(const unsigned int* base, int w, int parity, int p) {
  asm volatile("{ .reg .pred q, d; setp.eq.b32 q, %2, 0; @q bra TEENY_DONE;\n"
               "TEENY_WAIT: mbarrier.try_wait.parity.shared::cta.b64 d, [%0], %1; @!d bra TEENY_WAIT;\n"
               "TEENY_DONE: }" :: "r"(teeny_smem(base) + 4 * w), "r"(parity), "r"(p) : "memory");
}
""".lstrip()
# a box of a 3-d tensor map at coordinates (c0 innermost) into shared memory word w, completing on the barrier at word
# bar (out-of-bounds elements land as zeros)
CUDA_HELPERS["teeny_tma3"] = r"""
__device__ __forceinline__ void teeny_tma3(const unsigned int* base, int w, const teeny_tmap* map, int c0, int c1,
                                           int c2, int bar, int p) {
  asm volatile("{ .reg .pred q; setp.ne.b32 q, %6, 0; @q cp.async.bulk.tensor.3d.shared::cluster.global.tile"
               ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5]; }"
               :: "r"(teeny_smem(base) + 4 * w), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(teeny_smem(base) + 4 * bar),
               "r"(p) : "memory");
}
""".lstrip()
# the TMA tiles' epilogue (codegen/tc.py: _staged_epilogue): values into a tile in shared memory at a byte offset, then
# 16 bytes of it to global memory
CUDA_HELPERS["teeny_sts_f16"] = r"""
__device__ __forceinline__ void teeny_sts_f16(unsigned int* base, int byte, float v) {
  reinterpret_cast<unsigned short*>(base)[byte >> 1] = teeny_f2h(v);
}
""".lstrip()
CUDA_HELPERS["teeny_sts_bf16"] = r"""
__device__ __forceinline__ void teeny_sts_bf16(unsigned int* base, int byte, float v) {
  reinterpret_cast<unsigned short*>(base)[byte >> 1] = teeny_f2bf(v);
}
""".lstrip()
CUDA_HELPERS["teeny_sts_f32"] = r"""
__device__ __forceinline__ void teeny_sts_f32(unsigned int* base, int byte, float v) {
  reinterpret_cast<float*>(base)[byte >> 2] = v;
}
""".lstrip()
CUDA_HELPERS["teeny_copy_out16"] = r"""
__device__ __forceinline__ void teeny_copy_out16(void* dst, const unsigned int* base, int byte) {
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(base + (byte >> 2));
}
""".lstrip()
WGMMA_N = (64, 128, 192, 256)

def _wgmma_helpers(n: int) -> dict[str, str]:
  h = n // 2   # accumulators per thread
  acc = ", ".join(f'"+f"(d[{i}])' for i in range(h))
  regs = ", ".join(f"%{i}" for i in range(h))
  out = {f"teeny_wgmma_fence_n{h}": f"__device__ __forceinline__ void teeny_wgmma_fence_n{h}(float* d) {{\n"
                                    f'  asm volatile("wgmma.fence.sync.aligned;" : {acc} : : "memory");\n}}\n',
         # commit this iteration's group, then wait until at most 0 or 1 groups are in flight
         **{f"teeny_wgmma_wait{w}_n{h}": f"__device__ __forceinline__ void teeny_wgmma_wait{w}_n{h}(float* d) {{\n"
                                         '  asm volatile("wgmma.commit_group.sync.aligned;\\n\\t'
                                         f'wgmma.wait_group.sync.aligned {w};" : {acc} : : "memory");\n}}\n'
            for w in (0, 1)}}
  for dt in ("f16", "bf16"):
    out[f"teeny_wgmma_n{n}_{dt}"] = (
      f"template <int TA, int TB, int LA, int LB>\n__device__ __forceinline__ void teeny_wgmma_n{n}_{dt}(float* d, "
      "const unsigned int* s, int a, int b, int acc = 1) {\n"
      "  unsigned int base = teeny_smem(s) & 0x3FFFF;\n"
      f'  asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{h + 2}, 0;\\n\\t"\n'
      f'    "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dt}.{dt} {{{regs}}}, %{h}, %{h + 1}, p, 1, 1, %{h + 3}, '
      f'%{h + 4};\\n\\t}}"\n'
      f'    : {acc}\n    : "l"(teeny_wgdesc(base, a, LA)), "l"(teeny_wgdesc(base, b, LB)), "r"(acc), "n"(TA), "n"(TB));'
      '\n}\n')
  return out
for _n in WGMMA_N: CUDA_HELPERS.update(_wgmma_helpers(_n))

class CUDARenderer(GPULanguage):
  """arch: the target (sm_90 ...; the device's, or CUDA_ARCH, or sm_90): sm_90a adds wgmma tiles to the TC Opt."""
  lang = "CUDA"
  def __init__(self, arch: str | None = None):
    self.arch = arch or os.environ.get("CUDA_ARCH", "sm_90")
    self.wgmma = self.arch == "sm_90a"
    self.sm_count = 132   # the tile heuristics' waves of blocks (an H100/H200's SMs; a CUDA device sets its own)
  wide_type = "long long"   # addresses past int32 (codegen/kernel.py: _wide_addresses)
  helpers = CUDA_HELPERS
  def render_kernel_prefix(self, threads: int) -> str: return f'extern "C" __global__ void __launch_bounds__({threads})'
  def render_bitcast_bits(self, x: str, src, dst) -> str: return f"teeny_bitcast<{self.render_dtype(dst)}>({x})"
  def render_tensor_map_param(self, idx: int) -> str: return f"const __grid_constant__ teeny_tmap tmap{idx}"
  tensor_cores = ("cuda_m16n8k16", "cuda_m16n8k8_tf32")   # the TC Opt's layouts (codegen/tc.py; TF32 opt-in)
  smem_tiles = True   # the SMEM Opt's float32 tiles (codegen/tc.py)
  max_shared = 227 * 1024   # sm_80/sm_90 opt-in limit per block
  def dynamic_shared(self, uops: list) -> int:
    """Bytes of the kernel's one DEFINE_LOCAL array, provided at launch (dynamic shared memory: a static array stops
    at 48 KB)."""
    arrs = [u for u in uops if u.op is Ops.DEFINE_LOCAL]
    if len(arrs) > 1: raise ValueError("a CUDA kernel has at most one DEFINE_LOCAL array (dynamic shared memory)")
    return arrs[0].arg[1] * arrs[0].dtype.base.itemsize if arrs else 0
  def _r_local(self, st, u):
    st.r[u] = f"local{u.arg[0]}"
    # (1024-byte aligned: wgmma's swizzled tiles repeat every 1024 bytes of address)
    st.emit(f"extern __shared__ __align__(1024) {self.render_storage(u.dtype.base)} local{u.arg[0]}[];   "
            f"// {u.arg[1]} values, provided at launch")
  def _r_wmma(self, st, u):
    if u.arg.smem is None: return super()._r_wmma(st, u)
    # wgmma: the operands' sources index one shared array; passed as the array and the two start words
    ia, ib = u.src[1], u.src[2]
    assert ia.src[0] is ib.src[0], "wgmma's operands lie in the kernel's one shared array"
    st.emit(self.render_wgmma(u.arg, st.ptr(u.src[0]), st.val(ia.src[0]), st.val(ia), st.val(ib),
                              *[st.val(s) for s in u.src[3:]]) + ";")
  def render_wgmma(self, arg, acc: str, smem: str, a: str, b: str, accumulate: str | None = None) -> str:
    """wgmma: a and b are the operands' start words in shared array smem (accumulate 0: D = A@B)."""
    n = wgmma_n(arg.layout)
    if not self.wgmma or n not in WGMMA_N or arg.dtype_in not in _MMA_IN:
      raise NotImplementedError(f"CUDA renderer ({self.arch}): no wgmma for {arg}")
    (ma, la), (mb, lb) = arg.smem
    flags = f"{int(ma == 'mn')}, {int(mb == 'mn')}, {la}, {lb}"   # (transposes: MN-major operands)
    more = "" if accumulate is None else ", " + accumulate
    return f"teeny_wgmma_n{n}_{_MMA_IN[arg.dtype_in]}<{flags}>({acc}, {smem}, {a}, {b}{more})"
  def render_wmma(self, arg, acc: str, a: str, b: str, accumulate: str | None = None) -> str:
    if arg.layout == "cuda_m16n8k8_tf32" and arg.dtype_in == dtypes.float32 and arg.dtype_acc == dtypes.float32:
      return f"teeny_mma_tf32({acc}, {a}, {b})"
    if arg.layout != "cuda_m16n8k16" or arg.dtype_acc != dtypes.float32 or arg.dtype_in not in _MMA_IN:
      raise NotImplementedError(f"CUDA renderer: no mma.sync for {arg}")
    return f"teeny_mma_{_MMA_IN[arg.dtype_in]}({acc}, {a}, {b})"
