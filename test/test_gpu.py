"""GPU backends without a GPU: CUDA, HIP and OpenCL source rendered through NULL:<lang>, compiled by NVRTC (sm_90) and
clang (gfx1100, gfx90a); OpenCL values through PoCL when pyopencl is installed.

A test whose toolchain is missing skips and says why, except under TEENY_REQUIRE_TOOLCHAINS=1 (CI), where it fails.
Toolchains: pip install cuda-python nvidia-cuda-nvrtc · apt-get install clang-19 lld-19 · pip install pyopencl
pocl-binary-distribution
"""
from __future__ import annotations
import re, sys, types
import numpy as np
import pytest
from teeny import Device, Tensor, dtypes
from teeny.codegen.kernel import get_program
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp
from helpers import _toolchain, toolchain

LANGS = ("CUDA", "HIP", "CL")
_compiler, compiler = _toolchain, toolchain

TARGETS = {"CUDA": ["sm_90"], "HIP": ["gfx1100", "gfx90a"], "CL": ["CL"]}

# ---- representative programs: each builds tensors on `dev` and returns the tensor to realize
def p_elementwise(dev): return (Tensor(np.ones(1000, np.float32), device=dev) * 3 + 1).relu()
def p_reduce_small(dev): return Tensor(np.ones((4, 8), np.float32), device=dev).sum(1)
def p_reduce_grouped(dev): return Tensor(np.ones((64, 1000), np.float32), device=dev).max(1)
def p_sum_all(dev): return Tensor(np.ones((300, 700), np.float32), device=dev).sum()
def p_sum_axis0(dev): return Tensor(np.ones((2000, 16), np.float32), device=dev).sum(0)
def p_matmul(dev):
  return Tensor(np.ones((128, 96), np.float32), device=dev) @ Tensor(np.ones((96, 128), np.float32), device=dev)
def p_softmax(dev): return Tensor(np.ones((32, 300), np.float32), device=dev).softmax(-1)
def p_half(dev):
  a = Tensor(np.ones((16, 32), np.float16), device=dev)
  return (a * a + 1).exp() + a.sum(1, keepdim=True)
def p_half_matmul(dev):
  return Tensor(np.ones((32, 64), np.float16), device=dev) @ Tensor(np.ones((64, 32), np.float16), device=dev)
def p_bf16(dev): return Tensor(np.ones((8, 8), np.float32), device=dev).cast(dtypes.bfloat16) * 2
def p_pad_flip(dev): return Tensor(np.ones((4, 8), np.float32), device=dev).pad(((1, 1), (2, 0))).flip(1) * 2
def p_math(dev):
  x = Tensor(np.ones(256, np.float32), device=dev)
  return (x.exp() + x.log() + x.sin() + x.cos() + x.tanh() + x.sqrt() + x.pow(x) + x.erf() + x.tan() + x.floor()
          + x.ceil())
def p_double(dev):
  x = Tensor(np.ones(64, np.float64), device=dev)
  return (x.exp() + x.sqrt()).maximum(x) / 3
def p_int(dev):
  a, b = Tensor(np.arange(1, 65, dtype=np.int32), device=dev), Tensor(np.full(64, 7, np.int32), device=dev)
  return (a // b) + (a % b) + (a.cast(dtypes.int64) * 3).cast(dtypes.int32) + (a < b).cast(dtypes.int32)
def p_bool(dev): return (Tensor(np.ones((8, 8), np.float32), device=dev) > 0).any(1)
def p_custom_local(dev):
  """A hand-written kernel: blocks of 64 reversed through shared memory (LOCAL range + barrier)."""
  x = Tensor(np.arange(256, dtype=np.float32), device=dev)
  out = Tensor.zeros(256, device=dev).contiguous().realize()
  def fxn(o: UOp, a: UOp) -> UOp:
    g, lane = UOp.range(4, 0, AxisType.GLOBAL), UOp.range(64, 1, AxisType.LOCAL)
    decl = UOp.custom({"CUDA": "__shared__ float sm[64];", "HIP": "__attribute__((shared)) float sm[64];",
                       "CL": "__local float sm[64];", "C": "float sm[64];"})
    put = UOp.custom("sm[{0}] = {1};", lane, a.index(g * 64 + lane).load())
    got = UOp.custom("sm[63-{0}]", lane, dtype=dtypes.float32)
    return decl.sink(put, UOp(Ops.BARRIER), o.index(g * 64 + lane).store(got), arg=KernelInfo(name="block_reverse"))
  return out.custom_kernel(x, fxn=fxn)[0]

PROGRAMS = {k[2:]: v for k, v in globals().items() if k.startswith("p_")}

def kernels(prog, lang: str, renderer=None):
  """ProgramSpecs of every kernel the program schedules, rendered for lang through NULL:<lang> (or `renderer`)."""
  dev = f"NULL:{lang}"
  t = prog(dev)
  items = [si for si in t.schedule() if si.kind in ("kernel", "custom")]
  assert items, "the program scheduled no kernel"
  return [get_program(si.ast, renderer or Device[dev].renderer) for si in items]

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_render(name, lang):
  """Rendering needs no toolchain: GPU structure, no CPU thread split."""
  for p in kernels(PROGRAMS[name], lang):
    assert "ncores" not in p.src, "GPU kernels are not split across CPU threads"
    assert p.local_size is not None and len(p.global_size) == 3 and len(p.local_size) == 3
    assert np.prod(p.local_size) <= 1024
    if lang == "CL": assert "__kernel void" in p.src and "__global" in p.src
    else: assert 'extern "C"' in p.src

@pytest.mark.parametrize("target", [(lang, t) for lang in LANGS for t in TARGETS[lang]], ids=lambda x: f"{x[0]}-{x[1]}")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_compile(name, target):
  lang, kind = target
  c = compiler(kind)
  # HIP source is for one gfx target (its tensor-core instruction: WMMA on gfx11, MFMA on gfx90a)
  from teeny.codegen.render.hip import HIPRenderer
  for p in kernels(PROGRAMS[name], lang, HIPRenderer(kind) if lang == "HIP" else None):
    lib = c.compile(p.src)
    assert c.valid_binary(lib) if kind != "CL" else len(lib) > 0, f"{kind}: bad binary for {p.name}"

# ---- shape of the generated code

def src_of(prog, lang="CUDA") -> list:
  return kernels(prog, lang)

def test_elementwise_uses_thread_index():
  p, = src_of(p_elementwise)
  assert "blockIdx.x*256+threadIdx.x" in p.src and "if (g0 < 1000)" in p.src
  assert p.global_size == [4, 1, 1] and p.local_size == [256, 1, 1]
  assert "__launch_bounds__(256)" in p.src
  p, = src_of(p_elementwise, "CL")
  assert "get_global_id(0)" in p.src

def test_grouped_reduce_shape():
  for lang, sync, shared in (("CUDA", "__syncthreads()", "__shared__"),
                             ("CL", "barrier(CLK_LOCAL_MEM_FENCE)", "__local"),
                             ("HIP", "__builtin_amdgcn_s_barrier()", "__attribute__((shared))")):
    p, = src_of(p_reduce_grouped, lang)
    assert p.global_size == [64, 1, 1] and p.local_size == [256, 1, 1], (p.global_size, p.local_size)
    assert sync in p.src and shared in p.src
    assert re.search(r"for \(int \w+ = lidx0; \w+ < 1000; \w+ \+= 256\)", p.src), p.src
    assert "if ((lidx0==0))" in p.src, "only lane 0 stores"

def test_big_sum_is_not_one_thread():
  for p in src_of(lambda d: Tensor(np.ones(1 << 20, np.float32), device=d).sum()):
    assert np.prod(p.global_size) * np.prod(p.local_size) >= 256, (p.name, p.global_size, p.local_size)

def test_matmul_register_tiles():
  """float32 matmuls: register tiles on OpenCL; on CUDA shared-memory tiles (the SMEM Opt, test_smem.py), and register
  tiles again with SMEM=0."""
  p, = src_of(p_matmul, "CL")
  assert "#pragma unroll" in p.src and re.search(r"float acc\d+\[32\]", p.src)
  p, = src_of(p_matmul)
  assert "teeny_lds128(" in p.src and "teeny_cp_async16(" in p.src
  import teeny.codegen.opt as opt
  old, opt.SMEM = opt.SMEM, 0
  try: p, = src_of(p_matmul)
  finally: opt.SMEM = old
  assert "#pragma unroll" in p.src and re.search(r"float acc\d+\[32\]", p.src)

def test_half_storage_and_conversion():
  p = src_of(p_half)[-1]
  assert "unsigned short* __restrict__ data0" in p.src and "teeny_f2h" in p.src and "cvt.rn.f16.f32" in p.src
  p = src_of(p_half, "CL")[-1]
  assert "__global ushort* restrict data0" in p.src and "teeny_f2h" in p.src

def test_custom_kernel_local_barrier():
  for lang in LANGS:
    p, = src_of(p_custom_local, lang)
    assert p.global_size == [4, 1, 1] and p.local_size == [64, 1, 1]
    head = p.src.split("{")[0:2]
    assert "sm[64]" in "{".join(head), "shared memory is declared at kernel scope"

def test_bool_buffers_are_uchar_on_cl():
  p, = src_of(p_bool, "CL")
  assert "__global uchar* restrict data0" in p.src

# ---- values: OpenCL runs the GPU code path for real (PoCL on a CPU-only machine)

def _softmax(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)

# name: (teeny program on device d, numpy reference in float64, rtol, atol). float32 tolerances cover float32 rounding
# of
# sums of up to 1024 terms of [-1, 1) (measured at most ~2e-6 absolute on PoCL); half: a float16 result, 2^-10 relative
VALUE_CASES = {
  "elementwise": (lambda d, x: (Tensor(x, device=d) * 3 + 1).relu(), lambda x: np.maximum(x * 3 + 1, 0), 1e-6, 1e-6),
  "sum1": (lambda d, x: Tensor(x, device=d).sum(1), lambda x: x.sum(1), 1e-5, 1e-5),
  "max1": (lambda d, x: Tensor(x, device=d).max(1), lambda x: x.max(1), 0, 0),
  "sum0": (lambda d, x: Tensor(x, device=d).sum(0), lambda x: x.sum(0), 1e-5, 1e-5),
  "sum_all": (lambda d, x: Tensor(x, device=d).sum(), lambda x: x.sum(), 1e-5, 1e-4),
  "softmax": (lambda d, x: Tensor(x, device=d).softmax(-1), _softmax, 1e-5, 1e-7),
  "matmul": (lambda d, x: Tensor(x, device=d) @ Tensor(x.T.copy(), device=d), lambda x: x @ x.T, 1e-5, 1e-5),
  "pad_flip": (lambda d, x: Tensor(x, device=d).pad(((1, 1), (2, 0))).flip(1) * 2,
               lambda x: np.pad(x, ((1, 1), (2, 0)))[:, ::-1] * 2, 0, 0),
  "half": (lambda d, x: (Tensor(x.astype(np.float16), device=d) * 2).exp(),
           lambda x: np.exp((x.astype(np.float16) * 2).astype(np.float64)), 2e-3, 0),
}

@pytest.fixture(scope="module")
def cl_device():
  compiler("CL")
  return "CL"

@pytest.mark.parametrize("case", list(VALUE_CASES))
@pytest.mark.parametrize("shape", [(7, 300), (64, 1024), (3, 5)], ids=str)
def test_cl_values(cl_device, case, shape):
  """The GPU code path on OpenCL against numpy (float64), not against teeny's own CPU result."""
  prog, ref, rtol, atol = VALUE_CASES[case]
  x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
  got = prog(cl_device, x).numpy()
  want = ref(x.astype(np.float64))
  assert got.shape == want.shape
  np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)

def test_cl_big_sum(cl_device):
  x = np.random.default_rng(1).uniform(0, 1, 1 << 20).astype(np.float32)
  np.testing.assert_allclose(Tensor(x, device=cl_device).sum().numpy(), x.astype(np.float64).sum(), rtol=1e-4)

def _wide_case(dev: str):
  """Five rows of a reshaped expanded view of 2^32 elements: their addresses pass 2^31 (rows from 2^19-5 on, 8192
  apart), which 32-bit index math would wrap to wrong places."""
  av = np.arange(64, dtype=np.float32)
  a = Tensor(av.reshape(64, 1, 1), device=dev).expand(64, 2**13, 2**13)
  return (a.permute(1, 0, 2).reshape(2**19, 2**13)[-5:] * 2).sum(1), 2 * 8192 * av[np.arange(2**19 - 5, 2**19) % 64]

def test_addresses_past_int32_render_64_bit():
  """GPU kernels compute addresses in int; one whose addresses would pass 2^31 declares its address-only values (loop
  counters included) 64-bit, in every GPU language (C always does), and a kernel whose overflowing value is also data
  is refused with a reason instead of wrapping."""
  for lang, ty in (("CUDA", "long long"), ("HIP", "long long"), ("CL", "long")):
    p, = kernels(lambda d: _wide_case(d)[0], lang)
    assert f"{ty} g0 = " in p.src, p.src
  p, = kernels(p_matmul, "CUDA")   # (small kernels keep int)
  assert "long long" not in p.src

def test_cl_addresses_past_int32(cl_device):
  got, want = _wide_case(cl_device)
  np.testing.assert_array_equal(got.numpy(), want)

def test_cl_custom_local_barrier(cl_device):
  got = p_custom_local(cl_device).numpy()
  np.testing.assert_equal(got, np.arange(256, dtype=np.float32).reshape(4, 64)[:, ::-1].reshape(-1))

def test_missing_gpu_names_device():
  compiler("CL")   # needs a real OpenCL platform (skips here, fails under TEENY_REQUIRE_TOOLCHAINS=1)
  with pytest.raises(RuntimeError, match=r"CL:7 does not exist.*DEV="):
    Device["CL:7"]

# ---- a missing package or driver: the error names what to install AND how to pick another device. Absence is simulated
# (a None entry in sys.modules makes the import fail), so these run the same with and without the optional packages.

def _without(monkeypatch, *mods: str):
  for m in mods: monkeypatch.setitem(sys.modules, m, None)

CUDA_MODS = ("cuda", "cuda.bindings", "cuda.bindings.driver", "cuda.bindings.nvrtc")

def test_no_cuda_python_message(monkeypatch):
  _without(monkeypatch, *CUDA_MODS)
  from teeny.runtime.ops_cuda import CUDADevice, NVRTCCompiler
  for make in (lambda: CUDADevice("CUDA"), lambda: NVRTCCompiler("sm_90")):
    with pytest.raises(RuntimeError) as e: make()
    msg = str(e.value)
    assert "cuda-python" in msg and "pip install cuda-python nvidia-cuda-nvrtc" in msg, msg
    assert "DEV=CPU" in msg, msg

def test_no_cuda_driver_message(monkeypatch):
  """cuda-python installed but no libcuda: a stand-in driver module whose cuInit fails as cuda-python's does."""
  fake_driver = types.ModuleType("cuda.bindings.driver")
  def cuInit(flags): raise RuntimeError("Failed to dlopen libcuda.so.1")
  fake_driver.cuInit = cuInit
  bindings = types.ModuleType("cuda.bindings")
  bindings.driver = fake_driver
  monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
  monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
  monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake_driver)
  from teeny.runtime.ops_cuda import CUDADevice
  with pytest.raises(RuntimeError, match=r"no CUDA driver found.*NVIDIA driver.*DEV=CPU"):
    CUDADevice("CUDA")

def test_no_cuda_driver_message_real():
  """The same on this machine, without stand-ins, when cuda-python is installed and no NVIDIA driver is."""
  pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (test_no_cuda_python_message covers "
                      "it)")
  import ctypes.util
  if ctypes.util.find_library("cuda"): pytest.skip("a CUDA driver is installed here")
  from teeny.runtime.ops_cuda import CUDADevice
  with pytest.raises(RuntimeError, match=r"no CUDA driver found.*DEV=CPU"):
    CUDADevice("CUDA")

def test_no_pyopencl_message(monkeypatch):
  _without(monkeypatch, "pyopencl")
  from teeny.runtime.ops_cl import CLDevice
  with pytest.raises(RuntimeError, match=r"pip install pyopencl pocl-binary-distribution.*DEV=CPU"):
    CLDevice("CL")

def test_no_hip_clang_message(monkeypatch):
  monkeypatch.delenv("HIP_CLANG", raising=False)
  monkeypatch.setenv("PATH", "/nonexistent")
  from teeny.runtime.ops_amd import HIPCompiler
  with pytest.raises(RuntimeError, match=r"apt-get install clang-19 lld-19.*DEV=CPU"):
    HIPCompiler("gfx1100")

def test_no_hip_runtime_message(monkeypatch):
  from teeny.runtime import ops_amd
  monkeypatch.setattr(ops_amd, "load_hip", lambda: None)
  monkeypatch.setattr(ops_amd, "find_clang", lambda: "clang")   # never run here: no compile happens
  dev = ops_amd.AMDDevice("AMD")   # compiles without a runtime; using memory names the fix
  with pytest.raises(RuntimeError, match=r"no HIP runtime found.*libamdhip64.*DEV=CPU"):
    dev.allocator.alloc(16)
