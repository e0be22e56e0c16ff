"""softmax on GPUs as one kernel (teeny/kernels/softmax.py): one block per row, the row read once into shared memory.

Without a GPU (CI): the kernel is chosen for float32 last-axis softmax on GPU renderers, its values come from the numpy
GPU interpreter (test/gpu_interp.py) against numpy over random shapes with -inf and NaN entries, it runs for real
(values and gradients) on OpenCL through PoCL, and NVRTC / clang / PoCL compile it (test_gpu.py's programs include
softmax). On CUDA (DEV=CUDA): values and gradients against numpy."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Device, Tensor
from teeny.codegen.kernel import get_program

def np_softmax(x: np.ndarray) -> np.ndarray:
  with np.errstate(invalid="ignore", over="ignore"):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)

def kernels(t: Tensor, dev: str) -> list:
  return [si for si in t.schedule() if si.kind in ("kernel", "custom")]

def interpreted(x: np.ndarray, dev: str = "NULL:CUDA") -> np.ndarray:
  from gpu_interp import run_kernel
  si, = kernels(Tensor(x, device=dev).realize().softmax(-1), dev)
  p = get_program(si.ast, Device[dev].renderer)
  assert p.name.startswith("softmax_"), p.name
  bufs = {0: np.zeros(x.size, np.float32), 1: x.ravel().astype(np.float32)}
  run_kernel(p.uops, bufs, p.local_size[0])
  return bufs[0].reshape(x.shape)

@pytest.mark.parametrize("dev", ["NULL:CUDA", "NULL:HIP", "NULL:CL"])
def test_one_kernel_on_gpus(dev):
  x = Tensor(np.ones((64, 1000), np.float32), device=dev).realize()
  ks = kernels(x.softmax(-1), dev)
  assert len(ks) == 1 and ks[0].kind == "custom"
  # not for another axis or a row too long for shared memory: the plain graph (max, sum, normalise)
  assert all(si.kind == "kernel" for si in kernels(x.softmax(0), dev))
  assert all(si.kind == "kernel" for si in kernels(Tensor(np.ones((2, 1 << 16), np.float32), device=dev).realize()
                                                  .softmax(-1), dev))

@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(32, 3000), st.integers(0, 2**31 - 1), st.booleans())
def test_values_interpreted(rows, n, seed, specials):
  rng = np.random.default_rng(seed)
  x = (rng.standard_normal((rows, n)) * 4).astype(np.float32)
  if specials:   # -inf entries, a row of -inf (NaN out, as numpy and torch), a NaN
    x[0, rng.integers(0, n, 3)] = -np.inf
    if rows > 1: x[1] = -np.inf
    if rows > 2: x[2, 0] = np.nan
  np.testing.assert_allclose(interpreted(x), np_softmax(x), rtol=1e-5, atol=1e-7)

def test_register_and_shared_arrays_are_no_written_parameters():
  """The kernel stores into its shared memory (DEFINE_LOCAL 0) and registers (DEFINE_REG 1): only the output (slot 0)
  is a written parameter. Counting DEFINE_REG 1 as slot 1 made the input look overwritten (a second softmax of the
  same tensor raised "needs the contents a tensor had before it was modified in place")."""
  x = Tensor(np.ones((4, 100), np.float32), device="NULL:CUDA").realize()
  x.softmax(-1).realize()
  x.softmax(-1).realize()
  assert all(si.kind == "kernel" for si in kernels(x.softmax(0), "NULL:CUDA"))

def test_backward_recomputes_rows_not_one_long_row():
  """The kernel's tensors are flat; its gradient must recompute softmax per row (softmax_8_100), not over all 800
  values as one row (the bug the H200 run found)."""
  t = Tensor(np.ones((8, 100), np.float32), device="NULL:CUDA", requires_grad=True)
  t.softmax(-1).sum().backward()
  names = [getattr(si.ast.arg, "name", "") for si in t.grad.schedule()]
  assert "softmax_8_100" in names and "softmax_1_800" not in names, names

def test_values_interpreted_hip_and_cl():
  x = np.random.default_rng(1).standard_normal((3, 777)).astype(np.float32)
  for dev in ("NULL:HIP", "NULL:CL"):
    np.testing.assert_allclose(interpreted(x, dev), np_softmax(x), rtol=1e-5, atol=1e-7)

def test_values_and_grad_run_on_opencl():
  """The kernel really run with work-groups and barriers: OpenCL through PoCL on this CPU (CI installs it)."""
  from helpers import toolchain
  toolchain("CL")   # skips (or fails under TEENY_REQUIRE_TOOLCHAINS=1) without pyopencl + PoCL
  rng = np.random.default_rng(0)
  x = (rng.standard_normal((5, 3000)) * 3).astype(np.float32)
  x[0, 3] = -np.inf
  g = rng.standard_normal(x.shape).astype(np.float32)
  t = Tensor(x, device="CL", requires_grad=True)
  y = t.softmax(-1)
  assert [si.kind for si in y.schedule()] == ["custom"]
  (y * Tensor(g, device="CL")).sum().backward()
  want = np_softmax(x)
  np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(t.grad.numpy(), want * (g - (g * want).sum(-1, keepdims=True)), rtol=1e-4, atol=1e-7)

def _on_gpu() -> bool:
  try: return bool(getattr(Device[Device.DEFAULT].renderer, "is_gpu", False))
  except Exception: return False

@pytest.mark.skipif(not _on_gpu(), reason="needs a GPU device (DEV=CUDA)")
@pytest.mark.parametrize("shape", [(8, 100), (64, 8192), (3, 5, 777)])
def test_values_and_grad_on_the_gpu(shape):
  rng = np.random.default_rng(0)
  x = (rng.standard_normal(shape) * 3).astype(np.float32)
  g = rng.standard_normal(shape).astype(np.float32)
  t = Tensor(x, requires_grad=True)
  y = t.softmax(-1)
  assert any(si.kind == "custom" for si in y.schedule())
  (y * Tensor(g)).sum().backward()
  want = np_softmax(x)
  np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.grad.numpy(), want * (g - (g * want).sum(-1, keepdims=True)), rtol=1e-4, atol=1e-6)

def test_backward_reads_its_input_in_place():
  """The recompute in the backward reads the (detached, reshaped) input where it is: one kernel computes x * 2, none
  copies it again for the recomputing softmax (custom_kernel took a detached input for a value to copy)."""
  x = Tensor.empty(64, 1000, device="NULL:CUDA", requires_grad=True)
  (x * 2).softmax(-1).sum().backward()
  names = [getattr(si.ast.arg, "name", "") for si in x.grad.schedule()]
  # x * 2, the recomputing softmax, the rows' sum(g * y), dx: no copy of x * 2 between them
  assert sorted(names) == sorted(["E_64_1000", "softmax_64_1000", "r_64_1000", "E_64_1000"]), names
