"""torch's other Tensor spellings from teeny/tensor_math.py against torch 2.x CPU: elementwise math (atan2, hypot,
xlogy, sinc, nan_to_num, logit...), the matrix products with beta/alpha (mm, bmm, mv, addmm, baddbmm, addr, addcmul...),
casts and new_* constructors, and the in-place op_ variants (written through views, autograd through them, torch's
cast errors), plus copy_, the random fills and fill_diagonal_.

`compare_torch` (helpers.py) compares values, dtypes and gradients with torch; under DEV=NULL it still builds,
schedules and renders every graph (nothing runs), and the tests that read values are marked `needs_values`."""
from __future__ import annotations
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers import assert_like_torch, compare_torch, is_null, needs_values, raises_like_torch, sample_array
from teeny import Tensor, dtypes
from teeny.tensor_math import INPLACE

torch = pytest.importorskip("torch")

def _arr(shape, dtype=np.float32, low=-2.0, high=2.0, seed=0):
  rng = np.random.default_rng(seed)
  if np.dtype(dtype).kind in "iu": return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
  if np.dtype(dtype) == np.bool_: return rng.random(shape) < 0.5
  return rng.uniform(low, high, size=shape).astype(dtype)

def _tol(dtype):
  return dict(atol=2e-3, rtol=2e-3) if np.dtype(dtype) == np.float16 else dict(atol=1e-5, rtol=1e-4)

# ***** elementwise, one operand: name -> (torch function, input range, float-only)

UNARY = {
  "deg2rad": (torch.deg2rad, (-200, 200), False), "rad2deg": (torch.rad2deg, (-4, 4), False),
  "frac": (torch.frac, (-5, 5), True), "sgn": (torch.sign, (-3, 3), False), "fix": (torch.fix, (-5, 5), False),
  "absolute": (torch.absolute, (-3, 3), False), "negative": (torch.negative, (-3, 3), False),
  "sinc": (torch.sinc, (-3, 3), False), "nan_to_num": (torch.nan_to_num, (-3, 3), False),
  "logit": (torch.logit, (0.05, 0.95), False), "arcsin": (torch.arcsin, (-0.9, 0.9), False),
  "arccos": (torch.arccos, (-0.9, 0.9), False), "arctan": (torch.arctan, (-3, 3), False),
  "arcsinh": (torch.arcsinh, (-3, 3), False), "arccosh": (torch.arccosh, (1.1, 4), False),
  "arctanh": (torch.arctanh, (-0.9, 0.9), False), "positive": (torch.positive, (-3, 3), False),
}

def _unary_inputs(name, shape, dtype, seed=0):
  lo, hi = UNARY[name][1]
  if np.dtype(dtype).kind in "iu": lo, hi = (0, 1) if name == "logit" else (math.floor(lo), math.ceil(hi))
  return _arr(shape, dtype, lo, hi, seed)

@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_unary(name, dtype):
  tfn, _, float_only = UNARY[name]
  x = _unary_inputs(name, (3, 4), dtype)
  if float_only and dtype != np.float32:
    raises_like_torch(lambda: getattr(Tensor(x), name)(), lambda: tfn(torch.tensor(x)), NotImplementedError,
                      names=(name, "int32"))
    return
  compare_torch(lambda t: getattr(t, name)(), tfn, [x], atol=1e-5, rtol=1e-5)

# (shapes from a short list and modest example counts: every new shape is a new kernel to compile)
@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(UNARY)), shape=st.sampled_from([(), (0,), (1, 3), (2, 3), (3, 1, 2), (4, 2, 2)]),
       dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int64, np.int16]), transpose=st.booleans(),
       seed=st.integers(0, 9))
def test_unary_property(name, shape, dtype, transpose, seed):
  tfn, _, float_only = UNARY[name]
  if float_only and np.dtype(dtype).kind != "f": return
  x = _unary_inputs(name, tuple(shape), dtype, seed)
  views = {0: lambda t: t.transpose(0, -1)} if transpose and len(shape) >= 2 else None
  compare_torch(lambda t: getattr(t, name)(), tfn, [x], views=views, **_tol(dtype))

def test_unary_special_values():
  x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1.5], dtype=np.float32)
  for name in ("sinc", "frac", "sgn", "fix", "deg2rad", "rad2deg", "nan_to_num", "signbit"):
    assert_like_torch(getattr(Tensor(x), name)(), getattr(torch, name)(torch.tensor(x)), 1e-6, 1e-6, name)
  p = np.array([0.0, 1.0, 0.5, -0.1, 1.1, np.nan, 1e-4], dtype=np.float32)
  for eps in (None, 0.0, 0.01, 0.6):
    assert_like_torch(Tensor(p).logit(eps=eps), torch.logit(torch.tensor(p), eps=eps), 1e-5, 1e-5, f"logit eps={eps}")

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_nan_to_num(dtype):
  x = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0], dtype=dtype)
  for kw in ({}, {"nan": 1.0}, {"posinf": 7.0}, {"neginf": -3.0}, {"nan": -1.0, "posinf": 2.0, "neginf": -2.0}):
    assert_like_torch(Tensor(x).nan_to_num(**kw), torch.nan_to_num(torch.tensor(x), **kw), 0, 0, str(kw))
  compare_torch(lambda t: t.nan_to_num(), torch.nan_to_num, [x.astype(np.float32)])   # the gradient: 1 where kept
  i = np.array([1, -2, 3], dtype=np.int64)
  assert_like_torch(Tensor(i).nan_to_num(), torch.nan_to_num(torch.tensor(i)))
  b = np.array([True, False])
  assert_like_torch(Tensor(b).nan_to_num(), torch.nan_to_num(torch.tensor(b)))

def test_signbit():
  for x in (np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.nan, -np.inf], dtype=np.float32),
            np.array([-1, 0, 5], dtype=np.int32), np.array([0, 200], dtype=np.uint8), np.array([True, False]),
            np.array([-0.0, 3.0, -np.inf], dtype=np.float16), np.array([-0.0, 3.0], dtype=np.float64)):
    # (no float16 -nan: CUDA's conversion gives every float16 NaN the bits 0x7FFF, as torch's CUDA float16 does)
    out = Tensor(x).signbit()
    assert_like_torch(out, torch.signbit(torch.tensor(x)))
    assert out.requires_grad is not True

def test_positive_bool_raises():
  raises_like_torch(lambda: Tensor([True]).positive(), lambda: torch.positive(torch.tensor([True])),
                    match="bool", names=("positive",))
  x = Tensor([1.0, 2.0])
  assert x.positive() is x

@needs_values
def test_unary_int_and_bool_promotion():
  for name in ("deg2rad", "rad2deg", "sinc", "logit", "sgn", "fix", "absolute", "nan_to_num"):
    for x in (np.array([0, 1, -2, 3], dtype=np.int64), np.array([0, 1, 2], dtype=np.uint8)):
      assert_like_torch(getattr(Tensor(x), name)(), getattr(torch, name)(torch.tensor(x)), 1e-6, 1e-5, name)
  for name in ("deg2rad", "sinc", "logit"):
    b = np.array([True, False])
    assert_like_torch(getattr(Tensor(b), name)(), getattr(torch, name)(torch.tensor(b)), 1e-6, 1e-5, name)

# ***** elementwise, two operands

BINARY = {
  "atan2": (torch.atan2, (-3, 3), (-3, 3), False), "arctan2": (torch.arctan2, (-3, 3), (-3, 3), False),
  "hypot": (torch.hypot, (-3, 3), (-3, 3), True), "xlogy": (torch.xlogy, (-3, 3), (0.1, 4), False),
  "ldexp": (torch.ldexp, (-3, 3), (-4, 4), False), "true_divide": (torch.true_divide, (-3, 3), (0.5, 3), False),
  "multiply": (torch.multiply, (-3, 3), (-3, 3), False), "float_power": (torch.float_power, (0.1, 3), (-2, 2), False),
}

@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtypes_", [(np.float32, np.float32), (np.int32, np.int32), (np.float32, np.int64),
                                     (np.int16, np.float64)])
def test_binary(name, dtypes_):
  tfn, r1, r2, float_only = BINARY[name]
  if name == "ldexp" and dtypes_[1] == np.float64: pytest.skip("(exponent range: covered by the float cases)")
  a = _arr((3, 4), dtypes_[0], *(r1 if np.dtype(dtypes_[0]).kind == "f" else (1, 3)))
  b = _arr((1, 4), dtypes_[1], *(r2 if np.dtype(dtypes_[1]).kind == "f" else (1, 3)), seed=1)
  if float_only and all(np.dtype(d).kind != "f" for d in dtypes_):
    raises_like_torch(lambda: getattr(Tensor(a), name)(Tensor(b)), lambda: tfn(torch.tensor(a), torch.tensor(b)),
                      NotImplementedError, names=(name,))
    return
  compare_torch(lambda x, y: getattr(x, name)(y), tfn, [a, b], atol=1e-5, rtol=1e-5)

@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(BINARY)), shapes=st.sampled_from([((3, 1), (1, 4)), ((2, 3), (3,)), ((), (2, 2)),
                                                                     ((0, 3), (1, 3)), ((4,), ())]),
       dtype=st.sampled_from([np.float32, np.float64, np.float16]), seed=st.integers(0, 9))
def test_binary_property(name, shapes, dtype, seed):
  tfn, r1, r2, _ = BINARY[name]
  a, b = _arr(shapes[0], dtype, *r1, seed=seed), _arr(shapes[1], dtype, *r2, seed=seed + 1)
  if name == "ldexp": b = np.asarray(np.round(b), dtype)
  tol = dict(atol=5e-3, rtol=5e-3) if dtype == np.float16 else dict(atol=1e-5, rtol=1e-4)
  compare_torch(lambda x, y: getattr(x, name)(y), tfn, [a, b], **tol)

def test_atan2_quadrants_and_specials():
  v = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 1e30]
  y, x = (np.array(g, dtype=np.float32).ravel() for g in np.meshgrid(v, v))
  assert_like_torch(Tensor(y).atan2(Tensor(x)), torch.atan2(torch.tensor(y), torch.tensor(x)), 1e-6, 1e-6)
  for dt in (np.float16, np.float64):
    with np.errstate(over="ignore"): yd, xd = y.astype(dt), x.astype(dt)   # (1e30 is inf in float16)
    assert_like_torch(Tensor(yd).atan2(Tensor(xd)), torch.atan2(torch.tensor(yd), torch.tensor(xd)), 1e-3, 1e-3,
                      str(dt))
  # the gradient on the axes (y = 0 or x = 0, away from the origin) is the true one, as torch's
  ya, xa = np.array([0.0, 0.0, 2.0, -2.0, 1.0], np.float32), np.array([3.0, -3.0, 0.0, 0.0, -1.0], np.float32)
  compare_torch(lambda a, b: a.atan2(b), torch.atan2, [ya, xa])

def test_hypot_and_xlogy_specials():
  a = np.array([3e30, 1e-30, np.inf, np.nan, np.nan, 0.0, -np.inf], dtype=np.float32)
  b = np.array([4e30, 1e-30, np.nan, np.inf, 1.0, 0.0, 2.0], dtype=np.float32)
  assert_like_torch(Tensor(a).hypot(Tensor(b)), torch.hypot(torch.tensor(a), torch.tensor(b)), 0, 1e-6)
  x = np.array([0.0, 0.0, 0.0, 0.0, 2.0, -1.0, np.nan], dtype=np.float32)
  y = np.array([0.0, np.nan, np.inf, -1.0, 0.0, np.inf, 1.0], dtype=np.float32)
  assert_like_torch(Tensor(x).xlogy(Tensor(y)), torch.xlogy(torch.tensor(x), torch.tensor(y)), 0, 1e-6)
  assert_like_torch(Tensor(x).xlogy(2.0), torch.xlogy(torch.tensor(x), 2.0), 0, 1e-6)
  # the gradient where x == 0: log(y) for x (0 where y <= 0), no nan from log(0) (torch's gradient for y at x == y == 0
  # is 0 / 0 = nan; teeny's is 0, a deliberate difference, so that point is left out)
  compare_torch(lambda p, q: p.xlogy(q), torch.xlogy, [np.array([0.0, 0.0, 1.5, 0.0], np.float32),
                                                       np.array([0.5, 2.0, 3.0, -1.0], np.float32)])

def test_heaviside():
  x = np.array([-1.5, 0.0, -0.0, 2.0, np.nan], dtype=np.float32)
  for v in (np.array(0.5, np.float32), np.array([1, 2, 3, 4, 5], np.float32)):
    assert_like_torch(Tensor(x).heaviside(Tensor(v)), torch.heaviside(torch.tensor(x), torch.tensor(v)))
  i = np.array([-2, 0, 3], dtype=np.int64)
  assert_like_torch(Tensor(i).heaviside(Tensor(np.array([7], np.int64))),
                    torch.heaviside(torch.tensor(i), torch.tensor([7])))
  raises_like_torch(lambda: Tensor(x).heaviside(Tensor(np.array(1.0))),
                    lambda: torch.heaviside(torch.tensor(x), torch.tensor(1.0, dtype=torch.float64)),
                    match="same dtype", names=("heaviside",))

def test_float_power_is_float64():
  for a, e in ((np.array([1, 2, 3], np.int32), 2), (np.array([1.5, 2.0], np.float16), np.array([2, 3], np.int64)),
               (np.array([2.0, 3.0], np.float32), 0.5), (np.array([2.0, 3.0], np.float32), np.array(-1.0, np.float32))):
    te, pe = (Tensor(e), torch.tensor(e)) if isinstance(e, np.ndarray) else (e, e)
    assert_like_torch(Tensor(a).float_power(te), torch.float_power(torch.tensor(a), pe), 1e-12, 1e-12)
  compare_torch(lambda a, b: a.float_power(b), torch.float_power, [np.array([0.5, 2.0], np.float64),
                                                                   np.array([1.5, -2.0], np.float64)])

def test_aliases_and_rounding_modes():
  a, b = _arr((3, 4), np.float32), _arr((3, 4), np.float32, 0.5, 3, seed=1)
  for mode in (None, "trunc", "floor"):
    compare_torch(lambda x, y: x.divide(y, rounding_mode=mode), lambda x, y: torch.divide(x, y, rounding_mode=mode),
                  [a, b], grad=mode is None)
  compare_torch(lambda x, y: x.subtract(y, alpha=2.5), lambda x, y: torch.subtract(x, y, alpha=2.5), [a, b])
  compare_torch(lambda x: x.clamp_min(0.3), lambda x: torch.clamp_min(x, 0.3), [a])
  compare_torch(lambda x: x.clamp_max(-0.3), lambda x: torch.clamp_max(x, -0.3), [a])
  i = np.array([1, -2, 3], np.int32)
  assert_like_torch(Tensor(i).clamp_min(0.5), torch.clamp_min(torch.tensor(i), 0.5))
  assert_like_torch(Tensor(i).true_divide(Tensor(i)), torch.true_divide(torch.tensor(i), torch.tensor(i)))

# ***** matrix products

def _mats(*shapes, dtype=np.float32, seed=0):
  return [_arr(s, dtype, -1, 1, seed + k) for k, s in enumerate(shapes)]

def test_mm_bmm_mv():
  compare_torch(lambda a, b: a.mm(b), torch.mm, _mats((3, 4), (4, 5)))
  compare_torch(lambda a, b: a.bmm(b), torch.bmm, _mats((2, 3, 4), (2, 4, 5)))
  compare_torch(lambda a, b: a.mv(b), torch.mv, _mats((3, 4), (4,)))
  compare_torch(lambda a, b: a.mm(b), torch.mm, _mats((4, 3), (4, 5)), views={0: lambda t: t.T})   # non-contiguous
  compare_torch(lambda a, b: a.mm(b), torch.mm, _mats((0, 4), (4, 2)))
  compare_torch(lambda a, b: a.mm(b), torch.mm, _mats((3, 4), (4, 5), dtype=np.int64))
  compare_torch(lambda a, b: a.bmm(b), torch.bmm, _mats((1, 3, 4), (1, 4, 1), dtype=np.float64))

@pytest.mark.parametrize("fn,shapes,match", [
  ("mm", ((2, 3), (2, 3)), r"2x3 and 2x3"), ("mm", ((2, 3), (3,)), r"mat2 must be a matrix.*\(3,\)"),
  ("mm", ((2, 3, 1), (1, 3)), r"mat1 must be a matrix"),
  ("bmm", ((2, 3, 4), (1, 4, 5)), r"\(2, 3, 4\).*\(1, 4, 5\)"),
  ("bmm", ((2, 3, 4), (2, 3, 5)), r"\(2, 3, 4\).*\(2, 3, 5\)"),
  ("bmm", ((3, 4), (4, 5)), r"batch1 must be a 3-D tensor"),
  ("mv", ((2, 3), (4,)), r"\(2, 3\).*\(4,\)"), ("mv", ((2, 3), (3, 1)), r"vec must be a vector")])
def test_matrix_product_errors(fn, shapes, match):
  a, b = _mats(*shapes)
  raises_like_torch(lambda: getattr(Tensor(a), fn)(Tensor(b)), lambda: getattr(torch, fn)(torch.tensor(a),
                                                                                        torch.tensor(b)),
                    RuntimeError, match=match, names=(fn,))

def test_matrix_product_dtype_errors():
  a, b = _mats((2, 3), (3, 4))
  raises_like_torch(lambda: Tensor(a).mm(Tensor(b.astype(np.float64))),
                    lambda: torch.mm(torch.tensor(a), torch.tensor(b.astype(np.float64))), RuntimeError,
                    match="same dtype", names=("mm", "float32", "float64"))
  raises_like_torch(lambda: Tensor(a > 0).mm(Tensor(b > 0)), lambda: torch.mm(torch.tensor(a > 0), torch.tensor(b > 0)),
                    NotImplementedError, match="bool", names=("mm",))
  raises_like_torch(lambda: Tensor(np.ones(4)).addmm(Tensor(a), Tensor(b)),
                    lambda: torch.addmm(torch.ones(4, dtype=torch.float64), torch.tensor(a), torch.tensor(b)),
                    RuntimeError, match="same dtype", names=("addmm",))
  raises_like_torch(lambda: Tensor(np.ones(3, np.float32)).addmm(Tensor(a), Tensor(b)),
                    lambda: torch.addmm(torch.ones(3), torch.tensor(a), torch.tensor(b)), RuntimeError,
                    match=r"\(3,\).*\(2, 4\)", names=("addmm",))
  raises_like_torch(lambda: Tensor(np.ones((2, 3), np.float32)).addr(Tensor(a), Tensor(b[0])),
                    lambda: torch.addr(torch.ones(2, 3), torch.tensor(a), torch.tensor(b[0])), RuntimeError,
                    match="vec1 must be a vector", names=("addr",))

ADD_PRODUCTS = {  # name -> (input shape, operand shapes)
  "addmm": ((1, 5), ((3, 4), (4, 5))), "addmv": ((3,), ((3, 4), (4,))), "baddbmm": ((3, 5), ((2, 3, 4), (2, 4, 5))),
  "addbmm": ((3, 1), ((2, 3, 4), (2, 4, 5))), "addr": ((3, 4), ((3,), (4,))),
}

@pytest.mark.parametrize("name", sorted(ADD_PRODUCTS))
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 1.5)])
def test_add_products(name, beta, alpha):
  ishape, (s1, s2) = ADD_PRODUCTS[name]
  ins = _mats(ishape, s1, s2)
  compare_torch(lambda i, a, b: getattr(i, name)(a, b, beta=beta, alpha=alpha),
                lambda i, a, b: getattr(torch, name)(i, a, b, beta=beta, alpha=alpha), ins)

@pytest.mark.parametrize("name", sorted(ADD_PRODUCTS))
def test_add_products_beta0_ignores_nan(name):
  ishape, (s1, s2) = ADD_PRODUCTS[name]
  i, a, b = _mats(ishape, s1, s2)
  i[...] = np.nan
  compare_torch(lambda i, a, b: getattr(i, name)(a, b, beta=0), lambda i, a, b: getattr(torch, name)(i, a, b, beta=0),
                [i, a, b])
  assert_like_torch(getattr(Tensor(i), name)(Tensor(a), Tensor(b), beta=0.0),
                    getattr(torch, name)(torch.tensor(i), torch.tensor(a), torch.tensor(b), beta=0.0))

def test_add_products_int_truncate_scalars():
  i, a, b = (np.arange(n, dtype=np.int64).reshape(s) for n, s in ((4, (4,)), (6, (2, 3)), (12, (3, 4))))
  assert_like_torch(Tensor(i).addmm(Tensor(a), Tensor(b), beta=2.7, alpha=1.5),
                    torch.addmm(torch.tensor(i), torch.tensor(a), torch.tensor(b), beta=2.7, alpha=1.5))
  v1, v2 = np.array([1, 2], np.int64), np.array([3, 4, 5], np.int64)
  raises_like_torch(lambda: Tensor(np.ones((2, 3), np.int64)).addr(Tensor(v1), Tensor(v2), alpha=0.5),
                    lambda: torch.addr(torch.ones(2, 3, dtype=torch.long), torch.tensor(v1), torch.tensor(v2),
                                       alpha=0.5), match="alpha", names=("addr",))
  assert_like_torch(Tensor(np.ones((2, 3), np.float32)).addr(Tensor(v1), Tensor(v2.astype(np.float32)), alpha=0.5),
                    torch.addr(torch.ones(2, 3), torch.tensor(v1), torch.tensor(v2.astype(np.float32)), alpha=0.5))

@settings(max_examples=16, deadline=None)
@given(batched=st.booleans(), b=st.sampled_from([1, 3]), n=st.sampled_from([0, 1, 3]), m=st.sampled_from([1, 4]),
       p=st.sampled_from([1, 5]), beta=st.sampled_from([0, 1, 0.5, -1.25]), alpha=st.sampled_from([1, 0.75, -2.0]),
       ibcast=st.sampled_from(["full", "row", "col", "scalar"]), seed=st.integers(0, 9))
def test_addmm_baddbmm_property(batched, b, n, m, p, beta, alpha, ibcast, seed):
  ishape = {"full": (n, p), "row": (1, p), "col": (n, 1), "scalar": ()}[ibcast]
  name = "baddbmm" if batched else "addmm"
  i, a, c = _mats(ishape, *(((b, n, m), (b, m, p)) if batched else ((n, m), (m, p))), seed=seed)
  compare_torch(lambda i, a, c: getattr(i, name)(a, c, beta=beta, alpha=alpha),
                lambda i, a, c: getattr(torch, name)(i, a, c, beta=beta, alpha=alpha), [i, a, c])

@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name):
  i, a = _mats((3, 1), (1, 4))
  c = _arr((3, 4), np.float32, 0.5, 2, seed=5)
  for value in (1, 0.5, -2):
    compare_torch(lambda i, a, c: getattr(i, name)(a, c, value=value),
                  lambda i, a, c: getattr(torch, name)(i, a, c, value=value), [i, a, c])
  # promotion: an int input with float tensors, float16 with float32
  li, h = np.array([1, 2, 3, 4], np.int64), np.array([0.5, 1.5, 2.0, -1.0], np.float16)
  assert_like_torch(getattr(Tensor(li), name)(Tensor(c), Tensor(h), value=2),
                    getattr(torch, name)(torch.tensor(li), torch.tensor(c), torch.tensor(h), value=2), 1e-3, 1e-3)

def test_addcmul_int_and_addcdiv_int_error():
  i, a, c = (np.array([1, 2, 3], np.int64), np.array([3, 3, -3], np.int64), np.array([1, 2, 5], np.int64))
  for value in (1, 0.5, 1.7, 3):
    assert_like_torch(Tensor(i).addcmul(Tensor(a), Tensor(c), value=value),
                      torch.addcmul(torch.tensor(i), torch.tensor(a), torch.tensor(c), value=value))
  raises_like_torch(lambda: Tensor(i).addcdiv(Tensor(a), Tensor(c)),
                    lambda: torch.addcdiv(torch.tensor(i), torch.tensor(a), torch.tensor(c)), RuntimeError,
                    match="[Ii]nteger division", names=("addcdiv",))

# ***** casts, constructors and metadata

@pytest.mark.parametrize("name", ["bfloat16", "byte", "char", "short"])
def test_casts(name):
  x = np.array([-3.7, -1.0, 0.0, 2.5, 100.0], np.float32)
  if name == "byte": x = np.abs(x)
  assert_like_torch(getattr(Tensor(x), name)(), getattr(torch.tensor(x), name)())
  compare_torch(lambda t: getattr(t, name)().float(), lambda t: getattr(t, name)().float(), [x],
                grad=name == "bfloat16")

def test_type_and_type_as():
  x, i = Tensor([1.0, 2.5]), Tensor(np.array([1, 2], np.int64))
  assert_like_torch(x.type_as(i), torch.tensor([1.0, 2.5]).type_as(torch.tensor([1, 2])))
  assert x.type() == "teeny.FloatTensor" and i.type() == "teeny.LongTensor"
  for dt, tdt in ((dtypes.float16, torch.float16), (dtypes.bfloat16, torch.bfloat16), (dtypes.bool, torch.bool),
                  (dtypes.uint8, torch.uint8), (dtypes.int8, torch.int8), (dtypes.int16, torch.int16),
                  (dtypes.int32, torch.int32), (dtypes.float64, torch.float64)):
    assert x.cast(dt).type() == torch.tensor([1.0]).to(tdt).type().replace("torch.", "teeny.")
  assert x.type(dtypes.int32).dtype == dtypes.int32 and x.type("float16").dtype == dtypes.float16

def test_new_constructors():
  x = Tensor(np.ones((2, 3), np.float16))
  tx = torch.ones(2, 3, dtype=torch.float16)
  assert_like_torch(x.new_zeros(4, 2), tx.new_zeros(4, 2))
  assert_like_torch(x.new_zeros((4, 2)), tx.new_zeros((4, 2)))
  assert_like_torch(x.new_ones([3]), tx.new_ones([3]))
  assert_like_torch(x.new_full((2, 2), 7.5), tx.new_full((2, 2), 7.5))
  assert_like_torch(x.new_full((2, 2), 3, dtype=dtypes.int64), tx.new_full((2, 2), 3, dtype=torch.int64))
  assert_like_torch(x.new_tensor([[1, 2], [3, 4]]), tx.new_tensor([[1, 2], [3, 4]]))
  assert_like_torch(x.new_tensor([1.5], dtype=dtypes.float32), tx.new_tensor([1.5], dtype=torch.float32))
  e = x.new_empty(3, 0, 2)
  assert e.shape == (3, 0, 2) and e.dtype == dtypes.float16
  assert x.new_empty((2,)).shape == (2,) and x.new_zeros(()).shape == ()
  assert x.new_ones(2, requires_grad=True).requires_grad and x.new_zeros(2, dtype=dtypes.float32).device == x.device
  src = Tensor([1.0, 2.0], requires_grad=True) * 2
  copy = x.new_tensor(src)
  assert copy.dtype == dtypes.float16 and copy.requires_grad is not True
  assert_like_torch(copy, torch.tensor([2.0, 4.0], dtype=torch.float16))

def test_views_and_metadata():
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  compare_torch(lambda t: t.view_as(Tensor.empty(2, 6)), lambda t: t.view_as(torch.empty(2, 6)), [a])
  compare_torch(lambda t: t.reshape_as(Tensor.empty(6, 2)), lambda t: t.reshape_as(torch.empty(6, 2)), [a],
                views={0: lambda t: t.T})
  compare_torch(lambda t: t.ravel(), lambda t: t.ravel(), [a], views={0: lambda t: t.T})
  for arr in (a, np.zeros((2, 0, 3), np.int8), np.array(3.0), np.array([True])):
    t, tt = Tensor(arr), torch.tensor(arr)
    for m in ("dim", "ndimension", "nelement", "is_floating_point", "is_complex", "is_signed"):
      assert getattr(t, m)() == getattr(tt, m)(), m
  for dt in (np.uint8, np.int16, np.float16, np.float64, np.bool_):
    assert Tensor(np.zeros(1, dt)).is_signed() == torch.tensor(np.zeros(1, dt)).is_signed()

# ***** in place

def _inplace_case(name):
  """(arguments, input range) for Tensor.<name>_ on a float tensor, matching torch's signature."""
  if name in UNARY: return (), UNARY[name][1]
  special = {"acosh": ((), (1.1, 4)), "arccosh": ((), (1.1, 4)), "log": ((), (0.1, 3)), "log2": ((), (0.1, 3)),
             "log10": ((), (0.1, 3)), "sqrt": ((), (0.1, 3)), "rsqrt": ((), (0.1, 3)), "asin": ((), (-0.9, 0.9)),
             "acos": ((), (-0.9, 0.9)), "atanh": ((), (-0.9, 0.9)), "log1p": ((), (-0.5, 3)),
             "reciprocal": ((), (0.5, 2)), "logit": ((), (0.05, 0.95)), "clamp_min": ((0.2,), (-1, 1)),
             "clamp_max": ((0.2,), (-1, 1)), "clip": ((-0.5, 0.5), (-1, 1)), "pow": ((2.5,), (0.1, 2)),
             "fmod": ((0.7,), (-2, 2)), "remainder": ((0.7,), (-2, 2)), "round": ((), (-3, 3))}
  return special.get(name, ((), (-2, 2)))

_UNARY_NAMES = ("abs absolute neg negative exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid tanh relu floor ceil "
                "round trunc fix frac sin cos tan asin acos atan sinh cosh asinh acosh atanh arcsin arccos arctan "
                "arcsinh arccosh arctanh reciprocal square sign sgn erf deg2rad rad2deg sinc logit nan_to_num "
                "clamp_min clamp_max clip pow fmod remainder").split()
UNARY_INPLACE = sorted(n for n in INPLACE if n in _UNARY_NAMES)

@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_inplace_unary_writes_through_view(name):
  args, (lo, hi) = _inplace_case(name)
  x = _arr((4, 3), np.float32, lo, hi)
  a, ta = Tensor(x.copy()), torch.tensor(x.copy())
  b, tb = a[1:], ta[1:]
  ret = getattr(b, name + "_")(*args)
  getattr(tb, name + "_")(*args)
  assert ret is b
  assert_like_torch(a, ta, 1e-5, 1e-5, f"{name}_ base")
  assert_like_torch(b, tb, 1e-5, 1e-5, f"{name}_ view")

@pytest.mark.parametrize("name", ["exp", "sigmoid", "sinc", "clamp_min", "pow", "atan2", "xlogy", "hypot", "lerp",
                                  "addcmul", "addcdiv", "addmm"])
def test_inplace_autograd(name):
  # in place on a non-leaf is recorded: the gradient flows through the write to the leaf (and to the other operands)
  args_np = {"clamp_min": [0.1], "pow": [2.0], "atan2": [_arr((3, 4), seed=2)], "xlogy": [_arr((3, 4), np.float32,
             0.5, 2, seed=2)], "hypot": [_arr((3, 4), seed=2)], "lerp": [_arr((3, 4), seed=2), 0.3],
             "addcmul": [_arr((3, 4), seed=2), _arr((1, 4), seed=3)],
             "addcdiv": [_arr((3, 4), seed=2), _arr((1, 4), np.float32, 0.5, 2, seed=3)],
             "addmm": [_arr((3, 5), seed=2), _arr((5, 4), seed=3)]}.get(name, [])
  def run(x, *ops):
    y = x * 1.5
    kw = {"value": 0.5} if name in ("addcmul", "addcdiv") else {"beta": 0.5} if name == "addmm" else {}
    getattr(y, name + "_")(*ops, **kw)
    return y
  x = _arr((3, 4), np.float32, 0.2, 1.5)
  compare_torch(run, run, [x, *args_np])

def _other_inplace_cases(lib):
  T = (lambda a: Tensor(a)) if lib is Tensor else (lambda a: torch.tensor(a))
  m, v = _arr((3, 4), seed=4), _arr((4,), np.float32, 0.5, 2, seed=5)
  return [("lerp", (T(m), 0.25), {}), ("lerp", (T(m), T(v)), {}), ("addcmul", (T(m), T(v)), {"value": -0.5}),
          ("addcdiv", (T(m), T(v)), {"value": 2}), ("atan2", (T(v),), {}), ("hypot", (T(m),), {}),
          ("xlogy", (T(v),), {}), ("ldexp", (T(np.array([1, -2, 0, 3], np.int32)),), {}), ("copysign", (T(m),), {}),
          ("heaviside", (T(np.array(0.5, np.float32)),), {}), ("tril", (1,), {}), ("triu", (-1,), {}),
          ("addmm", (T(_arr((3, 2), seed=6)), T(_arr((2, 4), seed=7))), {"beta": 0.5, "alpha": 2}),
          ("addr", (T(_arr((3,), seed=6)), T(v)), {}), ("true_divide", (T(v),), {}),
          ("subtract", (T(m),), {"alpha": 3}), ("divide", (T(v),), {"rounding_mode": "floor"}),
          ("float_power", (2,), {}), ("pow", (T(v),), {})]

@pytest.mark.parametrize("k", range(19))
def test_inplace_binary_write_through_view(k):
  name, args, kw = _other_inplace_cases(Tensor)[k]
  _, targs, tkw = _other_inplace_cases(torch)[k]
  dt = np.float64 if name == "float_power" else np.float32
  x = _arr((4, 4), dt, 0.1, 2)
  a, ta = Tensor(x.copy()), torch.tensor(x.copy())
  b, tb = a[1:], ta[1:]
  assert getattr(b, name + "_")(*args, **kw) is b
  getattr(tb, name + "_")(*targs, **tkw)
  assert_like_torch(a, ta, 1e-5, 1e-5, f"{name}_ base")

def test_inplace_on_leaf_matches_add_():
  # teeny's add_ on a leaf that requires grad updates its data without recording it (torch raises); every op_ does
  # the same
  a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([1.0, 2.0], requires_grad=True)
  a.add_(1)
  b.exp_()
  assert a.requires_grad and b.requires_grad
  if not is_null(): np.testing.assert_allclose(b.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)

@pytest.mark.parametrize("name,args", [("exp", ()), ("sqrt", ()), ("sigmoid", ()), ("sinc", ()), ("deg2rad", ()),
                                       ("pow", (0.5,)), ("clamp_min", (1.5,)), ("true_divide", (2,)),
                                       ("atan2", (Tensor([1.0]),))])
def test_inplace_int_result_errors(name, args):
  targs = tuple(torch.tensor([1.0]) if isinstance(a, Tensor) else a for a in args)
  raises_like_torch(lambda: getattr(Tensor([1, 2, 3]), name + "_")(*args),
                    lambda: getattr(torch.tensor([1, 2, 3], dtype=torch.int32), name + "_")(*targs), RuntimeError,
                    match="can't be cast to the desired output type", names=(name + "_", "int32"))

@needs_values
def test_inplace_int_ok_and_casts():
  for name, args in (("abs", ()), ("neg", ()), ("square", ()), ("sign", ()), ("floor_divide", (2,)),
                     ("remainder", (3,)), ("bitwise_and", (6,)), ("bitwise_not", ()), ("clamp_min", (0,)),
                     ("fix", ()), ("multiply", (3,)), ("subtract", (1,)), ("lt", (1,)), ("logical_not", ())):
    x = np.array([-3, 0, 4, 7], np.int32)
    a, ta = Tensor(x.copy()), torch.tensor(x.copy())
    getattr(a, name + "_")(*args)
    getattr(ta, name + "_")(*args)
    assert_like_torch(a, ta, what=name + "_")
  # a float16 tensor takes a float32 result (the cast torch allows); a bool tensor takes comparisons
  h, th = Tensor(np.array([1.0, 2.0], np.float16)), torch.tensor([1.0, 2.0], dtype=torch.float16)
  h.mul_(Tensor([1.5, 2.5]))
  th.mul_(torch.tensor([1.5, 2.5]))
  h.atan2_(Tensor([0.5, -1.0]))
  th.atan2_(torch.tensor([0.5, -1.0]))
  assert_like_torch(h, th, 1e-3, 1e-3)
  bl, tbl = Tensor([True, False]), torch.tensor([True, False])
  bl.ge_(Tensor([True, True]))
  tbl.ge_(torch.tensor([True, True]))
  assert_like_torch(bl, tbl)

def test_inplace_shape_and_broadcast():
  a, ta = Tensor(np.zeros((2, 3), np.float32)), torch.zeros(2, 3)
  a.atan2_(Tensor([1.0, -1.0, 2.0]))
  ta.atan2_(torch.tensor([1.0, -1.0, 2.0]))
  assert_like_torch(a, ta)
  raises_like_torch(lambda: Tensor(np.zeros((1, 3), np.float32)).hypot_(Tensor(np.ones((2, 3), np.float32))),
                    lambda: torch.zeros(1, 3).hypot_(torch.ones(2, 3)), RuntimeError,
                    match=r"\(1, 3\).*\(2, 3\)", names=("hypot_",))
  raises_like_torch(lambda: Tensor(np.zeros(3, np.float32)).float_power_(2),
                    lambda: torch.zeros(3).float_power_(2), RuntimeError, match="float64", names=("float_power_",))
  a64, ta64 = Tensor(np.array([2.0, 3.0])), torch.tensor([2.0, 3.0], dtype=torch.float64)
  a64.float_power_(Tensor(np.array([1.5, 0.5], np.float32)))
  ta64.float_power_(torch.tensor([1.5, 0.5]))
  assert_like_torch(a64, ta64, 1e-12, 1e-12)

def test_copy_():
  x = _arr((2, 3), np.float32, -5, 5)
  for dst_dt in (np.float32, np.float16, np.int32, np.uint8, np.bool_):
    for src in (x, x[:1], x[:, :1]):
      a, ta = Tensor(np.zeros((2, 3), dst_dt)), torch.zeros(2, 3, dtype=getattr(torch, np.dtype(dst_dt).name))
      s = np.abs(src) if dst_dt == np.uint8 else src   # (negative floats into uint8 are undefined in C and torch)
      a.copy_(Tensor(s))
      ta.copy_(torch.tensor(s))
      assert_like_torch(a, ta, 1e-3, 1e-3, f"copy_ into {np.dtype(dst_dt).name}")
  # into a view (writes through), from a transposed source, with the gradient flowing to the source
  def run(src, lib):
    y = lib.zeros(3, 4) * 1.0
    y[1:].copy_(src.T * 2)
    return y
  compare_torch(lambda s: run(s, Tensor), lambda s: run(s, torch), [_arr((4, 2))])
  raises_like_torch(lambda: Tensor(np.zeros((3, 3), np.float32)).copy_(Tensor(np.zeros((2, 3), np.float32))),
                    lambda: torch.zeros(3, 3).copy_(torch.zeros(2, 3)), RuntimeError, match=r"\(2, 3\).*\(3, 3\)",
                    names=("copy_",))
  with pytest.raises(TypeError, match="copy_"): Tensor([1.0]).copy_(2.0)

@needs_values
def test_random_fills():
  a = Tensor.zeros(100, 100)
  assert a.uniform_(2, 5) is a
  v = a.numpy()
  assert v.min() >= 2 and v.max() < 5 and abs(v.mean() - 3.5) < 0.05
  v = Tensor.zeros(100, 100).uniform_(**{"from": -1, "to": 1}).numpy()
  assert v.min() >= -1 and v.max() < 1
  v = Tensor.zeros(100, 100, dtype=dtypes.float64).normal_(3, 2).numpy()
  assert abs(v.mean() - 3) < 0.1 and abs(v.std() - 2) < 0.1 and v.dtype == np.float64
  v = Tensor.zeros(100, 100).exponential_(4.0).numpy()
  assert v.min() >= 0 and abs(v.mean() - 0.25) < 0.02
  v = Tensor.zeros(100, 100, dtype=dtypes.int32).bernoulli_(0.3).numpy()
  assert set(np.unique(v)) <= {0, 1} and abs(v.mean() - 0.3) < 0.03 and v.dtype == np.int32
  p = Tensor([0.0, 1.0]).reshape(1, 2)
  v = Tensor.zeros(50, 2).bernoulli_(p).numpy()
  assert (v[:, 0] == 0).all() and (v[:, 1] == 1).all()
  # a view is filled in place, the rest of its base kept
  base = Tensor.zeros(4, 4)
  base[1:3].uniform_(1, 2)
  v = base.numpy()
  assert (v[[0, 3]] == 0).all() and (v[1:3] >= 1).all()
  h = Tensor.zeros(8, dtype=dtypes.float16).normal_()
  assert h.dtype == dtypes.float16 and np.isfinite(h.numpy()).all()

def test_random_fill_errors():
  for name, args in (("uniform_", ()), ("normal_", ()), ("exponential_", ())):
    raises_like_torch(lambda: getattr(Tensor([1, 2]), name)(*args),
                      lambda: getattr(torch.tensor([1, 2]), name)(*args), names=(name, "int32"))
  with pytest.raises(RuntimeError, match="lambd"): Tensor([1.0]).exponential_(0)
  with pytest.raises(RuntimeError, match="std"): Tensor([1.0]).normal_(0, -1)

@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 3), False), ((5, 3), True), ((7, 3), True),
                                        ((2, 5), True), ((3, 3, 3), False), ((1, 4), False), ((4, 4, 4, 4), False)])
def test_fill_diagonal_(shape, wrap):
  x = _arr(shape, np.float32)
  a, ta = Tensor(x.copy()), torch.tensor(x.copy())
  assert a.fill_diagonal_(-7.5, wrap=wrap) is a
  ta.fill_diagonal_(-7.5, wrap=wrap)
  assert_like_torch(a, ta)
  i, ti = Tensor(np.zeros(shape, np.int32)), torch.zeros(shape, dtype=torch.int32)
  assert_like_torch(i.fill_diagonal_(3, wrap=wrap), ti.fill_diagonal_(3, wrap=wrap))

def test_fill_diagonal_errors():
  raises_like_torch(lambda: Tensor.zeros(2, 3, 2).fill_diagonal_(1), lambda: torch.zeros(2, 3, 2).fill_diagonal_(1),
                    RuntimeError, match="equal length", names=("fill_diagonal_",))
  raises_like_torch(lambda: Tensor.zeros(3).fill_diagonal_(1), lambda: torch.zeros(3).fill_diagonal_(1),
                    RuntimeError, match="at least 2 dims", names=("fill_diagonal_",))
  assert_like_torch(Tensor.zeros(2, 2, dtype=dtypes.int32).fill_diagonal_(1.7),
                    torch.zeros(2, 2, dtype=torch.int32).fill_diagonal_(1.7))
  assert_like_torch(Tensor.zeros(2, 2, dtype=dtypes.bool).fill_diagonal_(2),
                    torch.zeros(2, 2, dtype=torch.bool).fill_diagonal_(2))

def test_every_inplace_name_is_torchs():
  for n in INPLACE:
    assert hasattr(torch.Tensor, n + "_") and hasattr(Tensor, n + "_"), n
    assert getattr(Tensor, n + "_").__doc__

@needs_values
def test_sample_data_ops_smoke():
  # a chain of the new ops on one lazy graph, realized once
  x = Tensor(sample_array((4, 5)))
  y = x.atan2(x.hypot(Tensor(sample_array((4, 5), seed=1)))).sinc().nan_to_num().xlogy(x.abs() + 1)
  tx = torch.tensor(sample_array((4, 5)))
  ty = torch.xlogy(torch.nan_to_num(torch.sinc(torch.atan2(tx, torch.hypot(tx, torch.tensor(sample_array((4, 5),
                                                                                                      seed=1)))))),
                   tx.abs() + 1)
  assert_like_torch(y, ty, 1e-5, 1e-5)

# ***** more torch spellings: fmax/fmin, logaddexp2, comparison and shift aliases, inner, vdot, itemsize/nbytes

def test_fmax_fmin():
  a = np.array([1.0, np.nan, np.nan, -2.0, 3.0, 0.5], np.float32)
  b = np.array([np.nan, 2.0, np.nan, -1.0, 3.0, -0.5], np.float32)
  for name in ("fmax", "fmin"):
    assert_like_torch(getattr(Tensor(a), name)(Tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    compare_torch(lambda x, y: getattr(x, name)(y), getattr(torch, name), [_arr((3, 4)), _arr((4,), seed=1)])
    i, j = np.array([1, 5, -3], np.int32), np.array([2, 2, 2], np.int64)
    assert_like_torch(getattr(Tensor(i), name)(Tensor(j)), getattr(torch, name)(torch.tensor(i), torch.tensor(j)))

def test_logaddexp2_and_logical_xor():
  compare_torch(lambda x, y: x.logaddexp2(y), torch.logaddexp2, [_arr((3, 4), low=-50, high=50),
                                                                 _arr((3, 4), low=-50, high=50, seed=1)])
  x = np.array([0.0, 1.0, -2.0, 0.0], np.float32)
  for other in (np.array([0, 0, 3, 1], np.int32), np.array([True, False, True, False])):
    assert_like_torch(Tensor(x).logical_xor(Tensor(other)), torch.logical_xor(torch.tensor(x), torch.tensor(other)))
    a, ta = Tensor(x.copy()), torch.tensor(x.copy())
    a.logical_xor_(Tensor(other))
    ta.logical_xor_(torch.tensor(other))
    assert_like_torch(a, ta)

def test_comparison_and_shift_aliases():
  a, b = np.array([1, 2, 3, -4], np.int32), np.array([2, 2, 2, 2], np.int32)
  for name in ("greater", "greater_equal", "less", "less_equal", "not_equal", "bitwise_left_shift",
               "bitwise_right_shift"):
    assert_like_torch(getattr(Tensor(a), name)(Tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    x, tx = Tensor(a.copy()), torch.tensor(a.copy())
    getattr(x, name + "_")(Tensor(b))
    getattr(tx, name + "_")(torch.tensor(b))
    assert_like_torch(x, tx, what=name + "_")
  f = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
  for name in ("isposinf", "isneginf"):
    for arr in (f, a):
      assert_like_torch(getattr(Tensor(arr), name)(), getattr(torch, name)(torch.tensor(arr)))

def test_cumsum_cumprod_inplace():
  for name in ("cumsum", "cumprod"):
    for dt in (np.float32, np.int32):
      x = _arr((3, 4), dt, 1, 3)
      a, ta = Tensor(x.copy()), torch.tensor(x.copy())
      getattr(a[:, 1:], name + "_")(1)
      getattr(ta[:, 1:], name + "_")(1)
      assert_like_torch(a, ta, 1e-5, 1e-5, name)

def test_inner_vdot():
  for s1, s2 in (((3,), (3,)), ((2, 3), (4, 3)), ((2, 1, 3), (3,)), ((), (2, 3)), ((2, 3), ())):
    compare_torch(lambda x, y: x.inner(y), torch.inner, [_arr(s1), _arr(s2, seed=1)])
  compare_torch(lambda x, y: x.vdot(y), torch.vdot, [_arr((5,)), _arr((5,), seed=1)])
  raises_like_torch(lambda: Tensor(_arr((3,))).inner(Tensor(_arr((3,), np.float64))),
                    lambda: torch.inner(torch.ones(3), torch.ones(3, dtype=torch.float64)), RuntimeError,
                    match="same dtype", names=("inner",))
  raises_like_torch(lambda: Tensor(_arr((3,))).inner(Tensor(_arr((4,)))),
                    lambda: torch.inner(torch.ones(3), torch.ones(4)), RuntimeError, match=r"\(3,\).*\(4,\)",
                    names=("inner",))
  raises_like_torch(lambda: Tensor(_arr((2, 3))).vdot(Tensor(_arr((3,)))),
                    lambda: torch.vdot(torch.ones(2, 3), torch.ones(3)), RuntimeError, match="vector", names=("vdot",))

def test_itemsize_nbytes():
  for dt in (np.float32, np.float16, np.int64, np.uint8, np.bool_):
    x = np.zeros((3, 5), dt)
    assert Tensor(x).itemsize == torch.tensor(x).itemsize and Tensor(x).nbytes == torch.tensor(x).nbytes
