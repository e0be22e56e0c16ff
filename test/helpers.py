"""Shared test helpers: device checks, `helper_test_op` (a teeny op against numpy) and the torch-parity helpers
(`compare_torch`, `assert_like_torch`, `raises_like_torch` and their pieces) the files that test against torch use."""
from __future__ import annotations
import functools, os
from typing import Any, Callable, Sequence
import numpy as np
import pytest
from teeny import Tensor, Device, dtypes

def is_null() -> bool:
  """True when the default device is NULL: graphs are scheduled, lowered and rendered, but nothing runs."""
  return str(Device.DEFAULT).upper().startswith("NULL")

needs_values = pytest.mark.skipif(is_null(), reason="NULL device runs nothing")

# ---- GPU toolchains (no GPU needed): NVRTC through cuda-python (sm_90), clang-19 + lld-19 (gfx1100, gfx90a), OpenCL
# (pyopencl + PoCL). A test whose toolchain is missing skips and says why, except under TEENY_REQUIRE_TOOLCHAINS=1 (CI),
# where it fails. Install: pip install cuda-python nvidia-cuda-nvrtc · apt-get install clang-19 lld-19 ·
# pip install pyopencl pocl-binary-distribution

REQUIRE_TOOLCHAINS = os.environ.get("TEENY_REQUIRE_TOOLCHAINS", "") == "1"

def missing(what: str, why: str):
  """Skip (developer machine) or fail (CI with TEENY_REQUIRE_TOOLCHAINS=1) for a missing toolchain."""
  msg = f"{what} unavailable: {why}"
  if REQUIRE_TOOLCHAINS: pytest.fail(msg + " (TEENY_REQUIRE_TOOLCHAINS=1)")
  pytest.skip(msg)

@functools.lru_cache(maxsize=None)
def _toolchain(kind: str):
  try:
    if kind in ("sm_90", "sm_90a"):   # (sm_90a: Hopper's arch-specific instructions, wgmma)
      from teeny.runtime.ops_cuda import NVRTCCompiler
      return NVRTCCompiler(kind), None
    if kind.startswith("gfx"):
      from teeny.runtime.ops_amd import HIPCompiler
      c = HIPCompiler(kind)
      # clang + lld + AMDGPU target
      c.compile('extern "C" __attribute__((global)) void probe(float* a) { a[0] = 1.0f; }\n')
      return c, None
    if kind == "CL":
      return Device["CL"].compiler, None
  except Exception as e:  # any failure to set up a toolchain is "missing", reported with the reason
    return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
  raise ValueError(kind)

def toolchain(kind: str):
  """The compiler for kind ("sm_90": NVRTC; "gfx1100"/"gfx90a": clang; "CL": the OpenCL device's), or skip/fail."""
  c, why = _toolchain(kind)
  if c is None:
    names = {"sm_90": "NVRTC (cuda-python)", "sm_90a": "NVRTC (cuda-python)", "CL": "OpenCL (pyopencl + PoCL)"}
    missing(names.get(kind, f"clang for {kind}"), why)
  return c

def bf16_round(a) -> np.ndarray:
  """float32 values rounded to the nearest bfloat16 (round-half-to-even), returned as float32."""
  u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
  bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16
  return np.where(np.isnan(a), np.float32(np.nan), bits.astype(np.uint32).view(np.float32)).astype(np.float32)

def random_array(rng: np.random.Generator, shape, dtype=np.float32, low=-2, high=2) -> np.ndarray:
  dt = np.dtype(dtype)
  if dt == np.bool_: return np.asarray(rng.random(shape) < 0.5)
  if np.issubdtype(dt, np.integer):
    info = np.iinfo(dt)
    lo, hi = max(int(low), info.min), min(int(high), info.max + 1)
    return np.asarray(rng.integers(lo, hi, size=shape)).astype(dt)
  return np.asarray(rng.uniform(low, high, size=shape)).astype(dt)

def _check(out: Any, ref: Any, atol: float, rtol: float, in_dtypes: set, out_dtype) -> None:
  if isinstance(ref, (list, tuple)):
    assert isinstance(out, (list, tuple)), f"expected a sequence of {len(ref)} Tensors, got {type(out).__name__}"
    assert len(out) == len(ref), f"teeny returned {len(out)} outputs, numpy {len(ref)}"
    for o, r in zip(out, ref): _check(o, r, atol, rtol, in_dtypes, out_dtype)
    return
  ref = np.asarray(ref)
  assert isinstance(out, Tensor), f"expected a Tensor, got {type(out).__name__}"
  assert tuple(out.shape) == ref.shape, f"shape mismatch: teeny {tuple(out.shape)} vs numpy {ref.shape}"
  if out_dtype is not None: assert out.dtype == out_dtype, f"dtype mismatch: teeny {out.dtype} vs expected {out_dtype}"
  elif ref.dtype in in_dtypes:  # numpy and torch agree when the result keeps an input dtype
    assert out.dtype == dtypes.from_np(ref.dtype), f"dtype mismatch: teeny {out.dtype} vs numpy {ref.dtype}"
  if is_null():
    out.realize()
    return
  got = out.numpy()
  assert got.shape == ref.shape, f"numpy() shape {got.shape} vs expected {ref.shape}"
  if ref.dtype == np.bool_ or np.issubdtype(ref.dtype, np.integer):
    assert (got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer)
            or ref.size == 0), f"expected ints, got {got.dtype}"
    np.testing.assert_equal(got, ref)
  else:
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True)

def helper_test_op(shapes: Sequence | None, np_fxn: Callable, teeny_fxn: Callable, atol: float = 1e-6,
                   rtol: float = 1e-6, low: float = -2, high: float = 2, dtype=np.float32, vals: Sequence | None = None,
                   out_dtype=None) -> None:
  """Run `np_fxn` on random numpy inputs of `shapes` (or on `vals`) and `teeny_fxn` on the same data as Tensors;
  compare.

  On the NULL device the teeny graph is still built and realized (schedule, lower, render), but values are not compared.
  `dtype` may be one dtype or a list, one per input. `out_dtype` asserts the teeny result dtype.
  Floats pass when |teeny - ref| <= atol + rtol * |ref| elementwise. Both defaults are tight (float32 rounding of a few
  ops); a caller that needs looser (float16, long reductions) passes its own atol AND rtol.
  """
  rng = np.random.default_rng(0)
  n = len(vals) if vals is not None else len(shapes)
  dts = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * n
  if vals is not None: xs = [v if isinstance(v, np.ndarray) else np.asarray(v, dtype=d) for v, d in zip(vals, dts)]
  else: xs = [random_array(rng, s, d, low, high) for s, d in zip(shapes, dts)]
  with np.errstate(all="ignore"): ref = np_fxn(*[x.copy() for x in xs])
  out = teeny_fxn(*[Tensor(x) for x in xs])
  _check(out, ref, atol, rtol, {x.dtype for x in xs}, out_dtype)

# ---- parity with torch: the test files that compare teeny against torch share these (torch is imported on first use,
# so files that do not need torch never load it). Under DEV=NULL each still builds and realizes every teeny graph
# (forward and backward) and compares shapes and dtypes; values are compared off NULL only.

def teeny_dtype(torch_dtype):
  """teeny's dtype of the same name as a torch dtype (torch.bfloat16 -> dtypes.bfloat16)."""
  return getattr(dtypes, str(torch_dtype).split(".")[-1])

def torch_numpy(ref) -> np.ndarray:
  """A torch tensor's values as a numpy array (detached; bfloat16, which numpy lacks, widened exactly to float32)."""
  import torch
  ref = ref.detach()
  return (ref.float() if ref.dtype == torch.bfloat16 else ref).numpy()

def sample_array(shape, seed: int = 0, dtype=np.float32) -> np.ndarray:
  """Seeded test data of a shape and numpy dtype: floats standard normal, ints in [0, 9), bools True half the time."""
  rng = np.random.default_rng(seed)
  if np.dtype(dtype).kind in "iu": return rng.integers(0, 9, size=shape).astype(dtype)
  if np.dtype(dtype) == np.bool_: return rng.random(shape) < 0.5
  return rng.standard_normal(shape).astype(dtype)

def teeny_and_torch(a) -> tuple:
  """A Tensor and a torch tensor of the same array."""
  import torch
  return Tensor(a), torch.tensor(a)

def assert_close(got, want, atol: float, rtol: float, what: str = "") -> None:
  """Elementwise |got - want| <= atol + rtol * |want| in float64, NaN == NaN; `what` names the values on failure."""
  np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), atol=atol,
                             rtol=rtol, err_msg=what, equal_nan=True)

def assert_like_torch(out: Any, ref: Any, atol: float = 1e-5, rtol: float = 1e-5, what: str = "output",
                      dtype: bool = True) -> None:
  """out (a Tensor) matches ref (a torch tensor): the shape, the dtype of the same name (unless dtype=False) and, off
  DEV=NULL, the values: bool and integer ones exactly, floats by `assert_close`. A tuple or list of torch tensors (as
  torch's multi-output ops return) wants a sequence of as many Tensors, each compared. Under NULL out is realized."""
  if isinstance(ref, (tuple, list)):
    assert isinstance(out, (tuple, list)), f"expected a sequence of {len(ref)} Tensors, got {type(out).__name__}"
    assert len(out) == len(ref), f"teeny gave {len(out)} outputs, torch {len(ref)}"
    for i, (o, r) in enumerate(zip(out, ref)): assert_like_torch(o, r, atol, rtol, f"{what} {i}", dtype)
    return
  assert isinstance(out, Tensor), f"{what}: expected a Tensor, got {type(out).__name__}"
  assert tuple(out.shape) == tuple(ref.shape), f"{what} shape: teeny {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  if dtype: assert out.dtype == teeny_dtype(ref.dtype), f"{what} dtype: teeny {out.dtype} vs torch {ref.dtype}"
  if is_null():
    out.realize()
    return
  want, got = torch_numpy(ref), out.numpy()
  if want.dtype.kind in "biu": np.testing.assert_array_equal(got, want, err_msg=what)
  else: assert_close(got, want, atol, rtol, what)

def compare_torch(teeny_fn: Callable, torch_fn: Callable, inputs: Sequence, *, atol: float = 1e-5, rtol: float = 1e-4,
                  grad: bool = True, grad_atol: float | None = None, grad_rtol: float | None = None,
                  no_grad: Sequence[int] = (), views: dict | None = None, seed: int = 1, upstream: str = "normal",
                  dtype: bool = True, quiet: bool = False) -> tuple:
  """Run teeny_fn on Tensors and torch_fn on torch tensors made from the same `inputs` (numpy arrays; anything else is
  passed to both as it is) and compare what they return (a tuple: each output) with `assert_like_torch`.

  Gradients (grad=True): every float array input but those at the indices in `no_grad` requires grad; both sides
  backpropagate sum(first output * u) for one random upstream gradient u, seeded by `seed` ("normal" `upstream`:
  standard normal; "positive": uniform in [0.5, 1.5)) and cast to the output's dtype. An input torch gives a gradient
  must get one in teeny of the same shape, dtype and values within grad_atol/grad_rtol (default: 10 times atol/rtol);
  one torch gives none (the output does not depend on it) must get none or all zeros. `views` maps an input's index to
  a function applied to both sides' leaf before the call (a transpose or slice: non-contiguous inputs); the gradients
  compared are the leaves'. dtype=False skips the dtype checks of the outputs; quiet=True ignores warnings the two
  calls raise.
  Returns the teeny outputs as a tuple."""
  import torch, warnings
  assert upstream in ("normal", "positive"), f"compare_torch: upstream is 'normal' or 'positive', not {upstream!r}"
  rg = [grad and isinstance(x, np.ndarray) and x.dtype.kind == "f" and i not in no_grad for i, x in enumerate(inputs)]
  tt = [Tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  pt = [torch.tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  views = views or {}
  tv = [views[i](t) if i in views else t for i, t in enumerate(tt)]
  pv = [views[i](p) if i in views else p for i, p in enumerate(pt)]
  with warnings.catch_warnings():
    if quiet: warnings.simplefilter("ignore")
    refs, outs = torch_fn(*pv), teeny_fn(*tv)
  if not isinstance(refs, tuple): outs, refs = (outs,), (refs,)
  assert isinstance(outs, tuple) and len(outs) == len(refs), f"teeny gave {outs!r}, torch {len(refs)} outputs"
  for i, (o, r) in enumerate(zip(outs, refs)):
    assert isinstance(o, Tensor), f"output {i}: expected a Tensor, got {type(o).__name__}"
    assert tuple(o.shape) == tuple(r.shape), f"output {i} shape: teeny {tuple(o.shape)} vs torch {tuple(r.shape)}"
    if dtype: assert o.dtype == teeny_dtype(r.dtype), f"output {i} dtype: teeny {o.dtype} vs torch {r.dtype}"
  if any(rg):
    rng = np.random.default_rng(seed)
    shape = tuple(refs[0].shape)
    up = rng.standard_normal(shape) if upstream == "normal" else rng.uniform(0.5, 1.5, shape)
    up = up.astype(np.float32)
    (outs[0] * Tensor(up, dtype=outs[0].dtype)).sum().backward()
    (refs[0] * torch.tensor(up).to(refs[0].dtype)).sum().backward()
  for i, (o, r) in enumerate(zip(outs, refs)): assert_like_torch(o, r, atol, rtol, f"output {i}", dtype)
  gatol, grtol = 10 * atol if grad_atol is None else grad_atol, 10 * rtol if grad_rtol is None else grad_rtol
  for i, (t, p) in enumerate(zip(tt, pt)):
    if not rg[i]: continue
    if p.grad is not None:
      assert t.grad is not None, f"input {i} got no gradient (torch's is {p.grad})"
      assert_like_torch(t.grad, p.grad, gatol, grtol, f"grad of input {i}")
    elif t.grad is not None:   # torch gives none: the output does not depend on this input
      assert_like_torch(t.grad, torch.zeros_like(p), 0.0, 0.0, f"grad of input {i} (torch gives none: zeros)")
  return outs

def raises_like_torch(teeny_fn: Callable, torch_fn: Callable, exc: type | None = None, match: str | None = None, *,
                      names: Sequence[str] = ()) -> None:
  """torch_fn raises (so the case is an error in torch too), and teeny_fn raises `exc` (default: the type torch raised,
  or a subclass) with a message matching the regex `match` and naming each of `names` (in any case)."""
  with pytest.raises(Exception) as te: torch_fn()
  with pytest.raises(exc or type(te.value), match=match) as e: teeny_fn()
  for n in names: assert n.lower() in str(e.value).lower(), f"message does not name {n!r}: {e.value}"
