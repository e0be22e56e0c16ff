"""cross_entropy on GPUs (teeny/kernels/nll.py): the forward is one kernel that reads the logits once (one block per
row, a running max and rescaled sum per thread, combined as a tree over the block) and writes each row's loss,
logsumexp and validity; the backward is one kernel of one block per row that writes every element once (no atomic).

Without a GPU (CI): the kernels are chosen on GPU renderers, their values come from the numpy GPU interpreter
(test/gpu_interp.py) against numpy over random shapes with infinities, NaN, ignored and out-of-range targets, and they
run for real on OpenCL through PoCL (loss and gradient against torch). On CUDA (DEV=CUDA): the same against torch."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Device, Tensor
from teeny.codegen.kernel import get_program
import teeny.kernels as K

def np_lse(x: np.ndarray) -> np.ndarray:
  """logsumexp of each row, from the max (or from 0 where the max is infinite, as Tensor.logsumexp)."""
  with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
    m = x.max(1)
    ref = np.where(np.isinf(m), 0.0, m).astype(np.float32)
    return (np.log(np.exp(x - ref[:, None]).sum(1)) + ref).astype(np.float32)

def np_rows(x: np.ndarray, t: np.ndarray, ignore: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  nc = x.shape[1]
  valid = (t != ignore) & (t >= 0) & (t < nc)
  lse = np_lse(x)
  with np.errstate(invalid="ignore"):
    rows = np.where(valid, lse - x[np.arange(len(t)), np.where(valid, t, 0)], 0.0).astype(np.float32)
  return rows, lse, valid.astype(np.float32)

def programs(t: Tensor, dev: str) -> list:
  return [get_program(si.ast, Device[dev].renderer) for si in t.schedule() if si.kind == "custom"]

def fwd_interpreted(x: np.ndarray, t: np.ndarray, ignore: int, dev: str = "NULL:CUDA") -> np.ndarray:
  from gpu_interp import run_kernel
  stats, lse = K.nll.ce_rows(Tensor(x, device=dev).realize(), Tensor(t, device=dev).realize(), ignore)
  p, = programs(stats, dev)
  assert p.name.startswith("ce_fwd_"), p.name
  bufs = {0: np.zeros(2 * len(t), np.float32), 1: np.zeros(len(t), np.float32), 2: x.ravel().astype(np.float32),
          3: t.astype(np.int32)}
  run_kernel(p.uops, bufs, p.local_size[0])
  rows, valid = bufs[0].reshape(2, len(t))
  return np.stack([rows, bufs[1], valid])

def bwd_interpreted(x: np.ndarray, t: np.ndarray, lse: np.ndarray, g: np.ndarray, scale: float | None, ignore: int,
                    dev: str = "NULL:CUDA") -> np.ndarray:
  from gpu_interp import run_kernel
  T = lambda a: Tensor(a, device=dev).realize()
  d = K.cross_entropy_bwd(T(x), T(t), T(lse), T(g), ignore, T(np.float32([scale])) if scale is not None else None)
  p, = programs(d, dev)
  assert p.name.startswith("ce_bwd_") and "atomic" not in p.src.lower(), p.name
  bufs = {0: np.full(x.size, np.nan, np.float32), 1: g.astype(np.float32), 2: t.astype(np.int32),
          3: x.ravel().astype(np.float32), 4: lse.astype(np.float32)}
  if scale is not None: bufs[5] = np.float32([scale])
  run_kernel(p.uops, bufs, p.local_size[0])
  return bufs[0].reshape(x.shape)

def np_grad(x: np.ndarray, t: np.ndarray, gr: np.ndarray, ignore: int) -> np.ndarray:
  nc = x.shape[1]
  valid = (t != ignore) & (t >= 0) & (t < nc)
  gr = np.where(valid, gr, 0.0).astype(np.float32)
  with np.errstate(invalid="ignore", over="ignore"):
    d = np.exp(x - np_lse(x)[:, None]) * gr[:, None]
  d[np.arange(len(t))[valid], t[valid]] -= gr[valid]
  return d

def test_forward_is_one_kernel_on_gpus():
  for dev in ("NULL:CUDA", "NULL:HIP", "NULL:CL"):
    x = Tensor.empty(64, 1000, device=dev, requires_grad=True)
    loss = x.cross_entropy(Tensor(np.arange(64, dtype=np.int32) % 1000, device=dev))
    names = [getattr(si.ast.arg, "name", "") for si in loss.schedule()]
    assert sum(n.startswith("ce_fwd_") for n in names) == 1 and not any(n.startswith("r_64_1000") for n in names), names

@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3000), st.integers(0, 2**31 - 1), st.booleans())
def test_forward_values_interpreted(rows, nc, seed, specials):
  rng = np.random.default_rng(seed)
  x = (rng.standard_normal((rows, nc)) * 5).astype(np.float32)
  t = rng.integers(0, nc, rows).astype(np.int32)
  if rows > 1: t[1] = -100                     # ignored
  if rows > 2: t[2] = nc + 3                   # out of range: counted as ignored by the kernel
  if specials:
    x[0, rng.integers(0, nc, 2)] = -np.inf
    if rows > 3: x[3] = -np.inf                # a row of -inf: lse -inf, its loss NaN (as torch)
    if rows > 4: x[4, 0] = np.nan
    if rows > 5: x[5, -1] = np.inf
  got = fwd_interpreted(x, t, -100)
  for g, w in zip(got, np_rows(x, t, -100)):
    np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-5, equal_nan=True)

def test_forward_large_logits_rescale():
  """The running max grows along the row (sorted logits up to 80): each step rescales the partial sum; a naive
  exp(x) would overflow."""
  x = np.stack([np.linspace(-90, 80, 1500), np.linspace(80, -90, 1500)]).astype(np.float32)
  t = np.int32([7, 1499])
  for g, w in zip(fwd_interpreted(x, t, -100), np_rows(x, t, -100)):
    np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-5)

@pytest.mark.parametrize("dev", ["NULL:CUDA", "NULL:HIP", "NULL:CL"])
@pytest.mark.parametrize("per_row", [False, True])
def test_backward_values_interpreted(dev, per_row):
  rng = np.random.default_rng(3)
  x = (rng.standard_normal((7, 1100)) * 3).astype(np.float32)
  t = rng.integers(0, 1100, 7).astype(np.int32)
  t[2], t[5] = -100, 2000
  lse = np_lse(x)
  g = rng.standard_normal(7 if per_row else 1).astype(np.float32)
  scale = None if per_row else 0.25
  got = bwd_interpreted(x, t, lse, g, scale, -100, dev)
  want = np_grad(x, t, g if per_row else np.full(7, g[0] * 0.25, np.float32), -100)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)

def test_values_and_grad_run_on_opencl():
  """Both kernels really run with work-groups and barriers: OpenCL through PoCL on this CPU (CI installs it)."""
  from helpers import toolchain
  toolchain("CL")
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(0)
  x = (rng.standard_normal((33, 2500)) * 3).astype(np.float32)
  t = rng.integers(0, 2500, 33).astype(np.int32)
  t[4] = 7
  t[[5, 9]] = -1
  for reduction in ("mean", "sum", "none"):
    X = Tensor(x, device="CL", requires_grad=True)
    loss = X.cross_entropy(Tensor(t, device="CL"), reduction=reduction, ignore_index=-1)
    g = rng.standard_normal(loss.shape).astype(np.float32)
    loss.backward(Tensor(g, device="CL"))
    tx = torch.tensor(x, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t).long(), reduction=reduction, ignore_index=-1)
    tl.backward(torch.tensor(g))
    np.testing.assert_allclose(loss.numpy(), tl.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(X.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-7)

def _on_gpu() -> bool:
  try: return bool(getattr(Device[Device.DEFAULT].renderer, "is_gpu", False))
  except Exception: return False

@pytest.mark.skipif(not _on_gpu(), reason="needs a GPU device (DEV=CUDA)")
@pytest.mark.parametrize("shape", [(128, 10), (64, 32000), (1000, 777)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_values_and_grad_on_the_gpu(shape, reduction):
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(0)
  x = (rng.standard_normal(shape) * 4).astype(np.float32)
  t = rng.integers(0, shape[1], shape[0]).astype(np.int32)
  t[::7] = -100
  X = Tensor(x, requires_grad=True)
  loss = X.cross_entropy(Tensor(t), reduction=reduction)
  g = rng.standard_normal(loss.shape).astype(np.float32)
  loss.backward(Tensor(g))
  tx = torch.tensor(x, requires_grad=True)
  tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t).long(), reduction=reduction)
  tl.backward(torch.tensor(g))
  np.testing.assert_allclose(loss.numpy(), tl.detach().numpy(), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(X.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-7)
