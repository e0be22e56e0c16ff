"""Shared test helpers: device checks and `helper_test_op`, which compares a teeny op against numpy."""
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
