"""Tensor-core fragment layouts (teeny/codegen/tc.py): each map covers its matrix (lanes that hold an element twice
agree), a warp instruction played through the maps gives numpy's product, and on an NVIDIA GPU the CUDA map is the
hardware's: fragments loaded on the host through it, one real mma.sync, the result placed through it, against
numpy."""
import numpy as np
import pytest
from teeny.codegen.tc import CUDA_M16N8K16, CUDA_M16N8K8_TF32, LAYOUTS, TCLayout, fragments, simulate

@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_maps_cover_each_matrix(name):
  t: TCLayout = LAYOUTS[name]
  for fmap, (rows, cols), elems in ((t.a, (t.m, t.k), t.elems[0]), (t.b, (t.k, t.n), t.elems[1]),
                                    (t.c, (t.m, t.n), t.elems[2])):
    held = [fmap(lane, i) for lane in range(t.lanes) for i in range(elems)]
    assert all(0 <= r < rows and 0 <= c < cols for r, c in held)
    assert set(held) == {(r, c) for r in range(rows) for c in range(cols)}
  # C and D: every element exactly once (a lane's result registers are its own)
  assert len({t.c(lane, i) for lane in range(t.lanes) for i in range(t.elems[2])}) == t.lanes * t.elems[2]

@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_simulated_instruction_multiplies(name):
  t = LAYOUTS[name]
  rng = np.random.default_rng(0)
  a, b, c = (rng.integers(-4, 5, s).astype(np.float32) for s in ((t.m, t.k), (t.k, t.n), (t.m, t.n)))
  np.testing.assert_array_equal(simulate(t, a, b, c), a @ b + c)

def test_cuda_layout_is_the_ptx_one():
  # spot checks against the PTX ISA's tables for mma.m16n8k16 (.f16/.bf16 A and B, .f32 C/D)
  t = CUDA_M16N8K16
  assert [t.a(0, i) for i in range(8)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
  assert [t.a(5, i) for i in range(8)] == [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]
  assert [t.b(6, i) for i in range(4)] == [(4, 1), (5, 1), (12, 1), (13, 1)]
  assert [t.c(31, i) for i in range(4)] == [(7, 6), (7, 7), (15, 6), (15, 7)]
  # mma.m16n8k8 with .tf32 A and B (one 32-bit value a register): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
  # b0 (t, g), b1 (t+4, g)
  t = CUDA_M16N8K8_TF32
  assert [t.a(5, i) for i in range(4)] == [(1, 1), (9, 1), (1, 5), (9, 5)]
  assert [t.b(6, i) for i in range(2)] == [(2, 1), (6, 1)]

_MMA_CHECK = r"""
extern "C" __global__ void NAME(float* d, const unsigned* a, const unsigned* b) {
  int l = threadIdx.x;
  float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
  asm volatile("INSTR {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a[l*4]), "r"(a[l*4+1]), "r"(a[l*4+2]), "r"(a[l*4+3]), "r"(b[l*2]), "r"(b[l*2+1]));
  d[l*4] = c0; d[l*4+1] = c1; d[l*4+2] = c2; d[l*4+3] = c3;
}
"""
# one warp, one instruction: four A and two B registers a lane (f16: two values each; TF32: one)
MMA_SRC = _MMA_CHECK.replace("NAME", "mma_check").replace("INSTR", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
MMA_TF32_SRC = _MMA_CHECK.replace("NAME", "mma_tf32_check") \
  .replace("INSTR", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")

def test_cuda_mma_source_compiles_for_sm90():
  """The check below compiles with NVRTC for sm_90 wherever NVRTC is installed (CI), GPU or not."""
  try:
    from teeny.runtime.ops_cuda import null_compiler
    comp = null_compiler()
  except Exception as e: pytest.skip(f"no NVRTC here: {e}")
  assert comp.valid_binary(comp.compile(MMA_SRC)) and comp.valid_binary(comp.compile(MMA_TF32_SRC))

def _mma_on_the_gpu(src: str, name: str, t: TCLayout, a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """D of one warp instruction on the GPU: fragments of a and b loaded on the host through t's maps (32-bit words), the
  kernel `name` of `src` run by one warp, its four result values per lane placed through C's map."""
  from teeny import Device
  from teeny.device import Buffer
  from teeny.dtype import dtypes
  try: dev = Device["CUDA"]
  except Exception as e: pytest.skip(f"no CUDA GPU here: {e}")
  # (16-bit values: a lane's register holds two, the lower index in the low 16 bits)
  fa = np.ascontiguousarray(fragments(a, t.a, 32, t.elems[0])).view(np.uint32)
  fb = np.ascontiguousarray(fragments(b, t.b, 32, t.elems[1])).view(np.uint32)
  bufs = [Buffer("CUDA", 128, dtypes.float32), Buffer("CUDA", fa.size, dtypes.uint32),
          Buffer("CUDA", fb.size, dtypes.uint32)]
  bufs[1].copyin(memoryview(fa).cast("B"))
  bufs[2].copyin(memoryview(fb).cast("B"))
  prog = dev.program(name, dev.compiler.compile(src))
  prog(*[x.opaque for x in bufs], global_size=[1], local_size=[32], wait=True)
  got = bufs[0].numpy().reshape(32, 4)
  d = np.zeros((t.m, t.n), np.float32)
  for lane in range(32):
    for i in range(4): d[t.c(lane, i)] = got[lane, i]
  return d

def test_cuda_mma_layout_on_the_gpu():
  rng = np.random.default_rng(1)
  a, b = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 8)).astype(np.float16)
  d = _mma_on_the_gpu(MMA_SRC, "mma_check", CUDA_M16N8K16, a, b)
  np.testing.assert_allclose(d, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)

def test_cuda_tf32_mma_layout_on_the_gpu():
  """The TF32 map against the hardware: values exact in TF32 (small integers over 8), so the product is exact."""
  rng = np.random.default_rng(2)
  a, b = (rng.integers(-16, 17, s).astype(np.float32) / 8 for s in ((16, 8), (8, 8)))
  np.testing.assert_array_equal(_mma_on_the_gpu(MMA_TF32_SRC, "mma_tf32_check", CUDA_M16N8K8_TF32, a, b), a @ b)

# the AMD instructions of the same layouts, compiled with clang for their targets (no AMD GPU here: compile only;
# -nogpuinc, so the kernels use clang's builtins and vector types, not the HIP headers)
AMD_SRC = {
  "gfx1100": r"""
typedef _Float16 h16 __attribute__((ext_vector_type(16)));
typedef float f8 __attribute__((ext_vector_type(8)));
extern "C" __attribute__((global)) void wmma_check(float* d, const _Float16* a, const _Float16* b) {
  int l = __builtin_amdgcn_workitem_id_x();
  h16 av, bv;
  for (int i = 0; i < 16; i++) { av[i] = a[l*16+i]; bv[i] = b[l*16+i]; }
  f8 c = {};
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(av, bv, c);
  for (int i = 0; i < 8; i++) d[l*8+i] = c[i];
}""",
  "gfx90a": r"""
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef float f4 __attribute__((ext_vector_type(4)));
extern "C" __attribute__((global)) void mfma_check(float* d, const _Float16* a, const _Float16* b) {
  int l = __builtin_amdgcn_workitem_id_x();
  h4 av, bv;
  for (int i = 0; i < 4; i++) { av[i] = a[l*4+i]; bv[i] = b[l*4+i]; }
  f4 c = {};
  c = __builtin_amdgcn_mfma_f32_16x16x16f16(av, bv, c, 0, 0, 0);
  for (int i = 0; i < 4; i++) d[l*4+i] = c[i];
}"""}

@pytest.mark.parametrize("arch", sorted(AMD_SRC))
def test_amd_matrix_instruction_compiles(arch):
  from teeny.device import elf_complete
  try:
    from teeny.runtime.ops_amd import HIPCompiler
    comp = HIPCompiler(arch)
  except Exception as e: pytest.skip(f"no clang for {arch} here: {e}")
  assert elf_complete(comp.compile(AMD_SRC[arch]))   # a wrong builtin or vector type fails here
