"""More of torch's Tensor API against torch 2.x CPU: quantile/nanquantile, aminmax, gcd/lcm, cov/corrcoef, histogram,
combinations, block_diag, cdist, trapezoid/cumulative_trapezoid, vander, tril/triu_indices, diagflat, fliplr/flipud,
atleast_*d, broadcast_tensors, equal, detach_, renorm, frexp, lgamma/digamma/erfinv/i0, matrix_power, is_cuda (in
teeny/tensor_math.py and teeny/tensor_select.py), and the fifth fuzz pass's mode-with-NaN and empty index_add/index_copy
fixes.

`compare_torch` (helpers.py) compares values, dtypes and gradients with torch; under DEV=NULL it still builds,
schedules and renders every graph, and the tests that read values are marked `needs_values`. Shapes are shared between
tests so kernels are reused (a cold cache compiles each new one)."""
from __future__ import annotations
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers import assert_like_torch, compare_torch, needs_values, raises_like_torch
from teeny import Device, Tensor, dtypes
from teeny.indexing import _reads_allowed

torch = pytest.importorskip("torch")

def _arr(shape, seed=0, dtype=np.float32, low=None, high=None):
  rng = np.random.default_rng(seed)
  if np.dtype(dtype).kind in "iu": return rng.integers(low if low is not None else -9, high if high is not None else 10,
                                                       size=shape).astype(dtype)
  if low is not None: return rng.uniform(low, high, size=shape).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)

X = _arr((3, 5))       # no ties: gradients through sorts and maxima match torch's
Y = _arr((4, 5), 1)

# ***** quantile / nanquantile

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interpolation):
  q = np.array([0.0, 0.1, 0.5, 0.93, 1.0], dtype=np.float32)
  compare_torch(lambda t, qq: t.quantile(qq, dim=1, keepdim=True, interpolation=interpolation),
                lambda t, qq: torch.quantile(t, qq, dim=1, keepdim=True, interpolation=interpolation), [X, q])

def test_quantile_dims():
  compare_torch(lambda t: t.quantile(0.75, dim=0), lambda t: torch.quantile(t, 0.75, dim=0), [X],
                views={0: lambda t: t.transpose(0, 1)})
  compare_torch(lambda t: t.nanquantile(0.25, dim=None, keepdim=True),
                lambda t: torch.nanquantile(t, 0.25, dim=None, keepdim=True), [X])

def test_quantile_nan_and_edges():
  x = X.copy()
  x[0, 1] = np.nan
  x[2, :] = np.nan
  for q in (0.0, 0.4, 1.0):
    for interp in ("linear", "nearest"):
      compare_torch(lambda t: t.quantile(q, dim=1, interpolation=interp),
                    lambda t: torch.quantile(t, q, dim=1, interpolation=interp), [x], grad=False)
      compare_torch(lambda t: t.nanquantile(q, dim=1, interpolation=interp),
                    lambda t: torch.nanquantile(t, q, dim=1, interpolation=interp), [x], grad=False)
  compare_torch(lambda t: t.quantile(0.5), lambda t: torch.quantile(t, 0.5), [np.array(2.5)])
  compare_torch(lambda t: t.quantile(0.2, dim=0), lambda t: torch.quantile(t, 0.2, dim=0),
                [np.ones((1, 4), np.float64)])
  qt = np.array(0.6, dtype=np.float32)
  compare_torch(lambda t, q: t.quantile(q, dim=1), lambda t, q: torch.quantile(t, q, dim=1), [X, qt], no_grad=(1,))

def test_quantile_errors():
  t, p = Tensor(X), torch.tensor(X)
  raises_like_torch(lambda: t.quantile(1.5), lambda: torch.quantile(p, 1.5), match=r"range \[0, 1\]",
                    names=("quantile",))
  raises_like_torch(lambda: t.nanquantile(-0.1), lambda: torch.nanquantile(p, -0.1), match=r"\[0, 1\]",
                    names=("nanquantile",))
  raises_like_torch(lambda: Tensor([1, 2]).quantile(0.5), lambda: torch.quantile(torch.tensor([1, 2]), 0.5),
                    match="float or double")
  raises_like_torch(lambda: Tensor([1.0, 2.0], dtype=dtypes.float16).quantile(0.5),
                    lambda: torch.quantile(torch.tensor([1.0, 2.0]).half(), 0.5), match="float or double")
  raises_like_torch(lambda: Tensor(np.zeros(0, np.float32)).quantile(0.5),
                    lambda: torch.quantile(torch.zeros(0), 0.5), match="non-empty")
  raises_like_torch(lambda: t.quantile(0.5, interpolation="foo"), lambda: torch.quantile(p, 0.5, interpolation="foo"),
                    match="interpolation must be one of")
  raises_like_torch(lambda: t.quantile(Tensor([[0.5]])), lambda: torch.quantile(p, torch.tensor([[0.5]])),
                    match="scalar or 1D")
  raises_like_torch(lambda: t.quantile(Tensor([0.5], dtype=dtypes.float64)),
                    lambda: torch.quantile(p, torch.tensor([0.5], dtype=torch.float64)), match="same dtype")
  raises_like_torch(lambda: t.quantile(0.5, dim=2), lambda: torch.quantile(p, 0.5, dim=2), IndexError,
                    match="out of range")

# (checks that read values run where index checks read: the CPU, by default)
reads_values = pytest.mark.skipif(not _reads_allowed(Device.DEFAULT), reason="the check reads values (CPU only)")

@needs_values
@reads_values
def test_quantile_tensor_q_out_of_range():
  with pytest.raises(RuntimeError, match=r"quantile\(\) q values must be in the range \[0, 1\]"):
    Tensor(X).quantile(Tensor([0.5, 1.5]))
  with pytest.raises(RuntimeError, match=r"\[0, 1\]"): Tensor(X).nanquantile(Tensor([math.nan]))

@settings(max_examples=4, deadline=None)
@given(shape=st.sampled_from([(5,), (3, 5), (2, 3, 4)]), data=st.data(), seed=st.integers(0, 5),
       interpolation=st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]), nan=st.booleans(),
       name=st.sampled_from(["quantile", "nanquantile"]))
def test_quantile_property(shape, data, seed, interpolation, nan, name):
  x = _arr(shape, seed)
  if nan: x.reshape(-1)[seed % x.size] = np.nan
  dim = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
  keepdim = data.draw(st.booleans())
  q = np.array(data.draw(st.lists(st.floats(0, 1, width=32), min_size=1, max_size=3)), dtype=np.float32)
  compare_torch(lambda t, qq: getattr(t, name)(qq, dim=dim, keepdim=keepdim, interpolation=interpolation),
                lambda t, qq: getattr(torch, name)(t, qq, dim=dim, keepdim=keepdim, interpolation=interpolation),
                [x, q], grad=not nan, no_grad=(1,))

# ***** aminmax

def test_aminmax():
  # (the gradients against amin/amax's: torch before 2.13 has no derivative for aminmax)
  for kw in ({}, dict(dim=-2, keepdim=True)):
    compare_torch(lambda t: tuple(t.aminmax(**kw)), lambda t: (torch.amin(t, **kw), torch.amax(t, **kw)), [X])
  compare_torch(lambda t: tuple(t.aminmax())[::-1], lambda t: (torch.amax(t), torch.amin(t)), [X])
  assert Tensor(X).aminmax(keepdim=True).max.shape == (1, 1)
  ties = np.array([3.0, 1.0, 3.0, 1.0], np.float32)   # the gradient is split among ties, as torch's amax/amin's
  compare_torch(lambda t: t.aminmax().max, lambda t: torch.amax(t), [ties])   # (older torch: aminmax has no gradient)
  compare_torch(lambda t: t.aminmax().min, lambda t: torch.amin(t), [ties])
  for x in (_arr((3, 5), dtype=np.int32), np.array([True, False]), np.array([np.nan, 1.0], np.float32)):
    assert_like_torch(Tensor(x).aminmax(dim=0), tuple(torch.aminmax(torch.tensor(x), dim=0)))
  r = Tensor(X).aminmax(dim=0)
  assert r.min.shape == (5,) and r.max.shape == (5,)
  raises_like_torch(lambda: Tensor(np.zeros(0, np.float32)).aminmax(), lambda: torch.aminmax(torch.zeros(0)),
                    match="empty dimension")
  raises_like_torch(lambda: Tensor(np.zeros((2, 0), np.float32)).aminmax(dim=1),
                    lambda: torch.aminmax(torch.zeros(2, 0), dim=1), IndexError, match="non-zero size")
  raises_like_torch(lambda: Tensor(X).aminmax(dim=3), lambda: torch.aminmax(torch.tensor(X), dim=3), IndexError)

# ***** gcd / lcm

INT_PAIRS = ([12, -18, 0, 7, 0, -5, 1, 35, 2 ** 5 * 3 ** 4, -1], [-8, 12, 0, 0, -5, 0, -1, 14, 2 ** 3 * 3 ** 7, -1])

def _int_pairs(dtype) -> tuple:
  """14 pairs: mixed signs and zeros, INT_MIN with 0 and 6 (torch's wrapped abs), and the two largest Fibonacci
  neighbours of the dtype (Euclid's longest run)."""
  info = np.iinfo(dtype)
  fib = [1, 1]
  while fib[-1] + fib[-2] <= info.max: fib.append(fib[-1] + fib[-2])
  a, b = (np.clip(v, info.min, info.max) for v in INT_PAIRS)
  if info.min < 0: a, b = np.append(a, [info.min, info.min]), np.append(b, [0, 6])
  else: a, b = np.append(np.abs(a), [0, 6]), np.append(np.abs(b), [0, 0])
  return np.append(a, fib[-2:]).astype(dtype), np.append(b, fib[-3:-1]).astype(dtype)

@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_gcd_lcm(dtype):
  a, b = _int_pairs(dtype)
  for name in ("gcd", "lcm"):
    compare_torch(lambda x, y: getattr(x, name)(y), getattr(torch, name), [a, b])

def test_gcd_broadcast_scalar_and_errors():
  a = np.array([[4, 6], [9, 10]], dtype=np.int64)
  compare_torch(lambda x, y: x.gcd(y), torch.gcd, [a, np.array([6, 4], dtype=np.int64)],
                views={0: lambda t: t.transpose(0, 1)})
  assert_like_torch(Tensor(a).lcm(6), torch.lcm(torch.tensor(a), torch.tensor(6)))
  for name in ("gcd", "lcm"):
    raises_like_torch(lambda: getattr(Tensor([1.0]), name)(Tensor([2.0])),
                      lambda: getattr(torch, name)(torch.tensor([1.0]), torch.tensor([2.0])), NotImplementedError,
                      names=(name, "float32"))
    raises_like_torch(lambda: getattr(Tensor([True]), name)(Tensor([False])),
                      lambda: getattr(torch, name)(torch.tensor([True]), torch.tensor([False])), NotImplementedError)

@settings(max_examples=5, deadline=None)
@given(dtype=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 100), shape=st.sampled_from([(14,), (2, 7)]))
def test_gcd_property(dtype, seed, shape):
  info = np.iinfo(dtype)
  rng = np.random.default_rng(seed)
  a = rng.integers(info.min // 2, info.max // 2, size=shape).astype(dtype)
  a = a * rng.integers(0, 3, size=shape).astype(dtype)
  b = rng.integers(-1000, 1000, size=shape).astype(dtype)
  compare_torch(lambda x, y: x.gcd(y), torch.gcd, [a, b])
  compare_torch(lambda x, y: x.lcm(y), torch.lcm, [b, np.flip(b).copy()])

# ***** cov / corrcoef

def test_cov():
  fw = np.array([1, 2, 0, 3, 1], dtype=np.int64)
  aw = np.array([0.5, 1.0, 2.0, 0.1, 1.0], dtype=np.float32)
  compare_torch(lambda t: t.cov(), torch.cov, [X])
  compare_torch(lambda t, a: t.cov(fweights=Tensor(fw), aweights=a),
                lambda t, a: torch.cov(t, fweights=torch.tensor(fw), aweights=a), [X, aw])
  compare_torch(lambda t: t.cov(fweights=Tensor(fw), correction=0),
                lambda t: torch.cov(t, fweights=torch.tensor(fw), correction=0), [X], grad=False)
  compare_torch(lambda t: t.cov(), torch.cov, [X[0]], grad=False)   # one variable: 0-d
  with pytest.warns(UserWarning):
    ref = torch.cov(torch.tensor(X), correction=5)
  assert_like_torch(Tensor(X).cov(correction=5), ref)   # degrees of freedom 0: inf and nan, as torch

def test_corrcoef():
  compare_torch(lambda t: t.corrcoef(), torch.corrcoef, [X])
  compare_torch(lambda t: t.corrcoef(), torch.corrcoef, [X[1]], grad=False)
  i = _arr((3, 5), dtype=np.int32)
  assert_like_torch(Tensor(i).corrcoef(), torch.corrcoef(torch.tensor(i)))

def test_cov_errors():
  t, p = Tensor(X), torch.tensor(X)
  raises_like_torch(lambda: Tensor(np.zeros((2, 2, 2), np.float32)).cov(), lambda: torch.cov(torch.zeros(2, 2, 2)),
                    match="two or fewer dimensions")
  raises_like_torch(lambda: t.cov(fweights=Tensor([1, 2])), lambda: torch.cov(p, fweights=torch.tensor([1, 2])),
                    match="same numel")
  raises_like_torch(lambda: t.cov(fweights=Tensor(np.ones(5, np.float32))),
                    lambda: torch.cov(p, fweights=torch.ones(5)), match="integral")
  raises_like_torch(lambda: t.cov(aweights=Tensor(np.ones(5, np.int64))),
                    lambda: torch.cov(p, aweights=torch.ones(5, dtype=torch.int64)), match="floating point")
  raises_like_torch(lambda: t.cov(aweights=Tensor(np.ones((5, 1), np.float32))),
                    lambda: torch.cov(p, aweights=torch.ones(5, 1)), match="one or fewer")

@needs_values
@reads_values
def test_cov_negative_weights():
  with pytest.raises(RuntimeError, match="fweights cannot be negative"):
    Tensor(X).cov(fweights=Tensor([1, -1, 1, 1, 1]))

# ***** histogram

@needs_values
def test_histogram():
  x = np.concatenate([X.reshape(-1), [0.0, 2.0]]).astype(np.float32)
  for args, kw in (((4,), {}), ((3,), dict(range=(-1.0, 1.0), density=True))):
    assert_like_torch(Tensor(x).histogram(*args, **kw), tuple(torch.histogram(torch.tensor(x), *args, **kw)),
                      1e-6, 1e-6, str(kw))
  edges = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)
  w = np.abs(x)
  assert_like_torch(Tensor(x).histogram(Tensor(edges), weight=Tensor(w), density=True),
                    tuple(torch.histogram(torch.tensor(x), torch.tensor(edges), weight=torch.tensor(w), density=True)))
  x64 = np.array([1.0, 1.0, 1.0])   # one value: edges widened by 0.5
  assert_like_torch(Tensor(x64).histogram(2), tuple(torch.histogram(torch.tensor(x64), 2)))
  e = np.zeros(0, np.float32)
  assert_like_torch(Tensor(e).histogram(2), tuple(torch.histogram(torch.tensor(e), 2)))
  h = Tensor(x, requires_grad=True).histogram(bins=4)
  assert h.hist.shape == (4,) and h.bin_edges.shape == (5,) and not h.hist.requires_grad

def test_histogram_errors():
  raises_like_torch(lambda: Tensor([1, 2]).histogram(2), lambda: torch.histogram(torch.tensor([1, 2]), 2),
                    NotImplementedError)
  raises_like_torch(lambda: Tensor([1.0, 2.0]).histogram(0), lambda: torch.histogram(torch.tensor([1.0, 2.0]), 0),
                    match="bins must be > 0")
  raises_like_torch(lambda: Tensor([1.0, 2.0]).histogram(2, range=(2.0, 1.0)),
                    lambda: torch.histogram(torch.tensor([1.0, 2.0]), 2, range=(2.0, 1.0)), match="should not exceed")

@needs_values
@reads_values
def test_histogram_nonfinite_data():
  raises_like_torch(lambda: Tensor([1.0, math.nan]).histogram(2),
                    lambda: torch.histogram(torch.tensor([1.0, math.nan]), 2), match="not finite")

# ***** combinations, cartesian_prod, block_diag, vander, tril/triu_indices, diagflat, flips

def test_combinations():
  for r, wr in ((2, False), (3, False), (2, True), (1, False), (5, False), (6, False), (0, False)):
    compare_torch(lambda t: t.combinations(r, with_replacement=wr),
                  lambda t: torch.combinations(t, r, with_replacement=wr), [X[0]], grad=r > 0)
  i = np.array([1, 2, 3], np.int64)
  assert_like_torch(Tensor.combinations(Tensor(i)), torch.combinations(torch.tensor(i)))
  raises_like_torch(lambda: Tensor(X).combinations(), lambda: torch.combinations(torch.tensor(X)), match="1D")
  raises_like_torch(lambda: Tensor(X[0]).combinations(-1), lambda: torch.combinations(torch.tensor(X[0]), -1),
                    match="non-negative")

def test_cartesian_prod():
  compare_torch(lambda a, b: Tensor.cartesian_prod(a, b), torch.cartesian_prod, [X[0, :3], X[1, :2]])

def test_block_diag():
  compare_torch(lambda a, b, c: Tensor.block_diag(a, b, c), torch.block_diag, [np.array(1.5, np.float32), X[0],
                                                                               X[:2, :3]])
  compare_torch(lambda a, b: Tensor.block_diag(a, b), torch.block_diag, [X[:2, :3], np.zeros((0, 2), np.float32)])
  assert_like_torch(Tensor.block_diag([Tensor([1, 2]), Tensor([[1.5]])]),
                    torch.block_diag(torch.tensor([1, 2]), torch.tensor([[1.5]])))
  raises_like_torch(lambda: Tensor.block_diag(Tensor(np.zeros((1, 1, 1)))),
                    lambda: torch.block_diag(torch.zeros(1, 1, 1)), match="2 or fewer")

def test_vander():
  for kw in (dict(N=3), dict(N=1, increasing=True), dict(N=0)):
    compare_torch(lambda t: t.vander(**kw), lambda t: torch.vander(t, **kw), [X[0]], grad=False)
  # (torch 2.13's own vander backward fails: the gradient is checked against x ** powers, incl. at 0)
  for x, N, inc in ((X[0], 5, False), (np.array([0.0, 2.0, -1.5], np.float32), 4, True)):
    pw = torch.arange(N, dtype=torch.float32) if inc else torch.arange(N - 1, -1, -1, dtype=torch.float32)
    compare_torch(lambda t: t.vander(N, increasing=inc), lambda t: t.unsqueeze(1) ** pw, [x])
  for x in (np.array([1, -2, 3], np.int32), np.array([True, False, True])):
    assert_like_torch(Tensor(x).vander(5), torch.vander(torch.tensor(x), 5))
  raises_like_torch(lambda: Tensor(X).vander(), lambda: torch.vander(torch.tensor(X)), match="one-dimensional")
  raises_like_torch(lambda: Tensor(X[0]).vander(-1), lambda: torch.vander(torch.tensor(X[0]), -1),
                    match="non-negative")

def test_tri_indices():
  for args in ((3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 0), (2, 5, 10), (5, 2, -10)):
    assert_like_torch(Tensor.tril_indices(*args), torch.tril_indices(*args))
    assert_like_torch(Tensor.triu_indices(*args), torch.triu_indices(*args))
  assert_like_torch(Tensor.tril_indices(3, 3, dtype=dtypes.int32), torch.tril_indices(3, 3, dtype=torch.int32))
  raises_like_torch(lambda: Tensor.tril_indices(-1, 3), lambda: torch.tril_indices(-1, 3), match="non-negative")
  raises_like_torch(lambda: Tensor.triu_indices(2, 2, dtype=dtypes.float32),
                    lambda: torch.triu_indices(2, 2, dtype=torch.float32), NotImplementedError)

def test_diagflat_and_flips():
  compare_torch(lambda t: t.diagflat(1), lambda t: torch.diagflat(t, 1), [X[:2, :2]])
  compare_torch(lambda t: t.diagflat(-2), lambda t: torch.diagflat(t, -2), [X[0]], grad=False)
  compare_torch(lambda t: t.fliplr(), torch.fliplr, [X], views={0: lambda t: t.transpose(0, 1)})
  compare_torch(lambda t: t.flipud(), torch.flipud, [X[0]])
  raises_like_torch(lambda: Tensor(X[0]).fliplr(), lambda: torch.fliplr(torch.tensor(X[0])), match=">= 2-d")
  raises_like_torch(lambda: Tensor(1.0).flipud(), lambda: torch.flipud(torch.tensor(1.0)), match=">= 1-d")

# ***** atleast_*d, broadcast_tensors, equal, detach_, is_cuda

def test_atleast_and_broadcast_tensors():
  shapes = [(), (4,), (2, 3), (2, 3, 1), (1, 2, 3, 4)]
  for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
    for s in shapes:
      assert getattr(Tensor.zeros(*s), fn)().shape == tuple(getattr(torch, fn)(torch.zeros(s)).shape), (fn, s)
    got = getattr(Tensor, fn)(Tensor(1.0), Tensor.zeros(4))
    want = getattr(torch, fn)(torch.tensor(1.0), torch.zeros(4))
    assert [t.shape for t in got] == [tuple(t.shape) for t in want]
    assert isinstance(getattr(Tensor, fn)([Tensor(1.0)]), tuple)
  compare_torch(lambda a: a.atleast_3d(), torch.atleast_3d, [X])
  compare_torch(lambda a, b: Tensor.broadcast_tensors(a, b), torch.broadcast_tensors, [X[:, :1], X[0]])
  out = Tensor.broadcast_tensors([Tensor.zeros(2, 1), Tensor.zeros(3), Tensor(1.0)])
  assert [t.shape for t in out] == [(2, 3)] * 3
  raises_like_torch(lambda: Tensor.broadcast_tensors(Tensor.zeros(2), Tensor.zeros(3)),
                    lambda: torch.broadcast_tensors(torch.zeros(2), torch.zeros(3)), match="broadcast")

@needs_values
def test_equal():
  a = Tensor(X)
  assert a.equal(Tensor(X.copy())) is True
  assert a.equal(Tensor(X + 1)) is False and a.equal(Tensor(X[:2])) is False
  assert Tensor([1, 2]).equal(Tensor([1.0, 2.0])) == torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
  assert Tensor([math.nan]).equal(Tensor([math.nan])) is False
  assert Tensor.zeros(0).equal(Tensor.zeros(0)) is True
  assert a.transpose(0, 1).equal(Tensor(np.ascontiguousarray(X.T)))

def test_detach_and_is_cuda():
  w = Tensor(X, requires_grad=True)
  y = w * 2
  assert y.detach_() is y and not y.requires_grad
  z = (y * 3).sum()
  assert not z.requires_grad
  w2 = Tensor(X, requires_grad=True)
  w2.detach_()
  assert not w2.requires_grad
  v = Tensor(X, requires_grad=True) * 1
  with pytest.raises(RuntimeError, match="views in-place"): v[0].detach_()
  assert Tensor(X).is_cuda is str(Device.DEFAULT).startswith("CUDA") and Tensor(X).to("CPU").is_cuda is False

# ***** cdist

@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, math.inf])
def test_cdist(p):
  compare_torch(lambda a, b: a.cdist(b, p), lambda a, b: torch.cdist(a, b, p), [X, Y], atol=1e-5, rtol=1e-5)
  if p in (0.5, 2.0):   # a zero distance: gradient 0 there, as torch's
    same = np.stack([X[0], X[0] + 1, X[0]])
    compare_torch(lambda a, b: a.cdist(b, p), lambda a, b: torch.cdist(a, b, p), [same, X], atol=1e-5, rtol=1e-5)

def test_cdist_batched_and_errors():
  a, b = _arr((2, 3, 4), 2), _arr((1, 5, 4), 3)
  compare_torch(lambda x, y: x.cdist(y), torch.cdist, [a, b], atol=1e-5, rtol=1e-5)
  compare_torch(lambda x, y: x.cdist(y), torch.cdist, [X, np.zeros((0, 5), np.float32)], grad=False)
  t, p = Tensor(X), torch.tensor(X)
  raises_like_torch(lambda: t.cdist(Tensor(X[:, :2])), lambda: torch.cdist(p, torch.tensor(X[:, :2])),
                    match="same number of columns")
  raises_like_torch(lambda: Tensor(X[0]).cdist(t), lambda: torch.cdist(torch.tensor(X[0]), p), match="at least 2D")
  raises_like_torch(lambda: t.cdist(t, -1.0), lambda: torch.cdist(p, p, -1.0), match="non-negative")
  raises_like_torch(lambda: Tensor([[1, 2]]).cdist(Tensor([[1, 2]])),
                    lambda: torch.cdist(torch.tensor([[1, 2]]), torch.tensor([[1, 2]])), match="floating")

@settings(max_examples=4, deadline=None)
@given(p=st.sampled_from([1.0, 2.0]), P=st.integers(1, 4), R=st.integers(1, 4), seed=st.integers(0, 9))
def test_cdist_property(p, P, R, seed):
  compare_torch(lambda a, b: a.cdist(b, p), lambda a, b: torch.cdist(a, b, p),
                [_arr((P, 3), seed), _arr((R, 3), seed + 1)], atol=1e-5, rtol=1e-5)

# ***** trapezoid / cumulative_trapezoid

def test_trapezoid():
  xs = np.sort(_arr(5, 2))
  for fn in ("trapezoid", "cumulative_trapezoid"):
    tf = getattr(torch, fn)
    compare_torch(lambda t: getattr(t, fn)(), tf, [X])
    compare_torch(lambda t, x: getattr(t, fn)(x), tf, [X, xs])
    compare_torch(lambda t, x: getattr(t, fn)(x, dim=-1), lambda t, x: tf(t, x, dim=-1), [X, np.sort(_arr((3, 5), 4))],
                  grad=False)
    compare_torch(lambda t: getattr(t, fn)(dx=0.5, dim=0), lambda t: tf(t, dx=0.5, dim=0), [X], grad=False,
                  views={0: lambda t: t.transpose(0, 1)})
    compare_torch(lambda t: getattr(t, fn)(), tf, [np.zeros((2, 0), np.float32)], grad=False)
  i = _arr((3, 5), dtype=np.int32)
  assert_like_torch(Tensor(i).trapezoid(), torch.trapezoid(torch.tensor(i)))
  assert_like_torch(Tensor(X[:, :1]).cumulative_trapezoid(), torch.cumulative_trapezoid(torch.tensor(X[:, :1])))
  raises_like_torch(lambda: Tensor(X).trapezoid(Tensor([1.0, 2.0])),
                    lambda: torch.trapezoid(torch.tensor(X), torch.tensor([1.0, 2.0])), match="one `x` value")
  raises_like_torch(lambda: Tensor(X).trapezoid(dim=2), lambda: torch.trapezoid(torch.tensor(X), dim=2), IndexError)

# ***** renorm, matrix_power

@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.0), (1, 1, 0.5), (3, -1, 0.8), (math.inf, 1, 0.5), (2, 1, 100.0)])
def test_renorm(p, dim, maxnorm):
  compare_torch(lambda t: t.renorm(p, dim, maxnorm), lambda t: torch.renorm(t, p, dim, maxnorm), [X])

def test_renorm_more():
  z = X.copy()
  z[1] = 0   # a zero slice: finite gradients
  compare_torch(lambda t: t.renorm(2, 0, 1.0), lambda t: torch.renorm(t, 2, 0, 1.0), [z])
  compare_torch(lambda t: t.renorm(2, 1, 0.5), lambda t: torch.renorm(t, 2, 1, 0.5), [_arr((2, 3, 4))])
  h = X.astype(np.float16)
  assert_like_torch(Tensor(h).renorm(2, 0, 1.0), torch.renorm(torch.tensor(h), 2, 0, 1.0), 2e-3, 2e-3)
  t, p = Tensor(X), torch.tensor(X)
  raises_like_torch(lambda: Tensor(X[0]).renorm(2, 0, 1.0), lambda: torch.renorm(torch.tensor(X[0]), 2, 0, 1.0),
                    match="at least 2 dimensions")
  raises_like_torch(lambda: t.renorm(0, 0, 1.0), lambda: torch.renorm(p, 0, 0, 1.0), match="non-positive-norm")
  raises_like_torch(lambda: t.renorm(2, 0, -1.0), lambda: torch.renorm(p, 2, 0, -1.0), match="maxnorm")
  raises_like_torch(lambda: Tensor([[1, 2]]).renorm(2, 0, 1.0), lambda: torch.renorm(torch.tensor([[1, 2]]), 2, 0, 1.0),
                    NotImplementedError)

@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_matrix_power(n):
  m = _arr((2, 3, 3), 3) * 0.7
  compare_torch(lambda t: t.matrix_power(n), lambda t: torch.matrix_power(t, n), [m], atol=1e-5, rtol=1e-4)

def test_matrix_power_more():
  m = _arr((2, 3, 3), 3)
  compare_torch(lambda t: t.matrix_power(0), lambda t: torch.matrix_power(t, 0), [m], grad=False)
  compare_torch(lambda t: t.matrix_power(3), lambda t: torch.matrix_power(t, 3), [m[0]], views={0: lambda t: t.T},
                atol=1e-4, rtol=1e-4)
  i = _arr((3, 3), dtype=np.int64, low=-3, high=4)
  assert_like_torch(Tensor(i).matrix_power(5), torch.matrix_power(torch.tensor(i), 5))
  assert_like_torch(Tensor(i).matrix_power(0), torch.matrix_power(torch.tensor(i), 0))
  compare_torch(lambda t: t.matrix_power(-1), lambda t: torch.matrix_power(t, -1), [m], atol=1e-4, rtol=1e-4)
  raises_like_torch(lambda: Tensor(X).matrix_power(2), lambda: torch.matrix_power(torch.tensor(X), 2),
                    match="square matrices")
  raises_like_torch(lambda: Tensor(X[0]).matrix_power(2), lambda: torch.matrix_power(torch.tensor(X[0]), 2),
                    match="square matrices")

# ***** frexp, lgamma, digamma, erfinv, i0

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3.0, 3e38, 1e-45, 0.75, -1.0, 1024.0], np.float32)

def test_frexp():
  for x in (SPECIAL, SPECIAL.astype(np.float64), np.array([1e-310, -5e-324, 1.7e308], np.float64),
            np.array([0.0, -3.5, 65504.0, 6e-8, np.inf], np.float16)):
    assert_like_torch(Tensor(x).frexp(), tuple(torch.frexp(torch.tensor(x))), 0, 0)
  m, e = Tensor(X).frexp()
  assert m.dtype == dtypes.float32 and e.dtype == dtypes.int32
  compare_torch(lambda t: t.frexp().mantissa, lambda t: torch.frexp(t).mantissa, [X * 100])
  raises_like_torch(lambda: Tensor([1, 2]).frexp(), lambda: torch.frexp(torch.tensor([1, 2])), match="floating")

GRID = np.linspace(-9.7, 30.3, 60).astype(np.float32)   # (no negative integers: the poles)

@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "i0"])
def test_special_values(name):
  x = {"erfinv": np.linspace(-0.999, 0.999, 60).astype(np.float32),
       "i0": np.linspace(-30, 30, 60).astype(np.float32)}.get(name, GRID)
  tol = dict(atol=1e-5, rtol=1e-5) if name != "i0" else dict(atol=1e-5, rtol=3e-6)
  compare_torch(lambda t: getattr(t, name)(), getattr(torch, name), [x], grad=name != "i0", **tol)
  compare_torch(lambda t: getattr(t, name)(), getattr(torch, name), [x.astype(np.float64)], grad=name != "i0",
                atol=1e-11, rtol=1e-11 if name != "i0" else 1e-13, grad_atol=1e-9, grad_rtol=1e-9)
  h = x.astype(np.float16)
  assert_like_torch(getattr(Tensor(h), name)(), getattr(torch, name)(torch.tensor(h)), 2e-3, 2e-3)
  ints = np.array([1, 2, 5, 0], np.int32) if name != "erfinv" else np.array([0, 1, -1], np.int32)
  for i in (ints, np.array([True, False])):
    assert_like_torch(getattr(Tensor(i), name)(), getattr(torch, name)(torch.tensor(i)), 1e-6, 1e-6)
  edge = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-30, 1.0, 2.0, 1.5, -1.5, 1e30, 0.5, -0.5],
                  np.float32)
  assert_like_torch(getattr(Tensor(edge), name)(), getattr(torch, name)(torch.tensor(edge)), 1e-5, 1e-5)

def test_special_gradients_more():
  compare_torch(lambda t: t.lgamma(), torch.lgamma,
                [np.array([0.1, 0.5, 1.0, 2.0, 7.9, 8.1, 100.0, -0.5, -7.3], np.float32)])
  compare_torch(lambda t: t.digamma(), torch.digamma,
                [np.array([0.1, 0.5, 1.0, 7.9, 8.1, 50.0, -0.5, -3.3], np.float32)], grad_atol=1e-3, grad_rtol=1e-4)
  compare_torch(lambda t: t.erfinv(), torch.erfinv, [np.array([0.0, 0.3, -0.9, 0.9999, -0.999999], np.float32)],
                atol=1e-5, rtol=1e-5, grad_rtol=1e-4)
  compare_torch(lambda t: t.i0(), torch.i0, [np.array([0.0, 0.5, -3.0, 19.9, 20.1, -40.0], np.float32)], grad=False,
                rtol=3e-6)

@settings(max_examples=6, deadline=None)
@given(name=st.sampled_from(["lgamma", "digamma", "erfinv", "i0"]), seed=st.integers(0, 99),
       shape=st.sampled_from([(4,), (2, 3)]))
def test_special_property(name, seed, shape):
  lo, hi = {"erfinv": (-0.99, 0.99), "i0": (-25, 25), "lgamma": (-20, 40), "digamma": (-20, 40)}[name]
  x = _arr(shape, seed, low=lo, high=hi)
  compare_torch(lambda t: getattr(t, name)(), getattr(torch, name), [x], atol=1e-5, rtol=1e-5, grad=name != "i0",
                grad_atol=1e-3, grad_rtol=1e-4)

# ***** fuzz pass 2026-12-03e: mode with NaN, empty index_add / index_copy keep autograd

def test_mode_nan():
  x = np.array([[np.nan, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, np.nan, np.nan]], np.float32)
  out, ref = Tensor(x).mode(1), torch.mode(torch.tensor(x), 1)
  assert_like_torch(tuple(out)[0][:2], ref.values[:2])   # (rows 0 and 1 as torch; row 2's NaN: torch picks 2.0)
  assert_like_torch(out.values, torch.tensor([math.nan, 1.0, math.nan]))   # a slice holding NaN gives NaN
  assert_like_torch(out.indices, torch.tensor([0, 1, 1]))

@pytest.mark.parametrize("fn", ["index_add", "index_copy"])
def test_index_ops_empty_index_keep_grad(fn):
  src = np.zeros((3, 0), np.float32)
  idx = np.zeros(0, np.int64)
  outs = compare_torch(lambda s, x: getattr(s, fn)(1, Tensor(idx), x),
                       lambda s, x: getattr(s, fn)(1, torch.tensor(idx), x), [X[:, :4].copy(), src])
  assert outs[0].requires_grad
  s = Tensor(src, requires_grad=True)
  Tensor(X).__getattribute__(fn)(1, Tensor(idx), s).sum().backward()
  assert s.grad is not None and s.grad.shape == (3, 0)
  neg = np.array([[-0.0, 1.0]], np.float32)   # x - 0 keeps -0.0
  assert_like_torch(getattr(Tensor(neg), fn)(0, Tensor(np.zeros(0, np.int64)), Tensor(np.zeros((0, 2), np.float32),
                                                                                         requires_grad=True)),
                    torch.tensor(neg))

@needs_values
def test_inplace_variants():
  x = _arr((3, 5), low=0.5, high=3.0)
  for name, args in (("lgamma", ()), ("digamma", ()), ("i0", ()), ("renorm", (2, 0, 1.0))):
    t, p = Tensor(x.copy()), torch.tensor(x)
    assert getattr(t, name + "_")(*args) is t
    assert_like_torch(t, getattr(p, name + "_")(*args))
  e = np.clip(x - 2, -0.9, 0.9).astype(np.float32)
  t = Tensor(e.copy())
  assert_like_torch(t.erfinv_(), torch.tensor(e).erfinv_())
  a, b = _int_pairs(np.int32)
  for name in ("gcd", "lcm"):
    t = Tensor(a.copy())
    getattr(t, name + "_")(Tensor(b))
    assert_like_torch(t, getattr(torch.tensor(a), name + "_")(torch.tensor(b)))
