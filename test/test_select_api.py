"""torch's selection and indexing methods added in teeny/tensor_select.py, against torch 2.13 CPU: index_add/copy/fill/
put, take, put, masked_scatter and their in-place forms (and scatter_/scatter_add_/scatter_reduce_/masked_fill_),
kthvalue, mode, msort, argwhere, isin, searchsorted, bucketize, bincount, histc, tensor_split/hsplit/vsplit/dsplit and
diag_embed: values, dtypes, shapes, gradients, torch's errors, duplicates, negative and out-of-range indices, empty
and non-contiguous inputs, writes through views. Under DEV=NULL every graph is still built and realized; value checks,
the data-dependent ops (bincount, bool index_put, tensor_split by tensor) and the errors that need reading an index
skip there."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Tensor, dtypes
from helpers import is_null, needs_values
from teeny.device import Device
from teeny.indexing import _reads_allowed

# checks that read values (the data of a histc, a mask's count) run where index checks read: the CPU by default
READS = _reads_allowed(Device.DEFAULT)

torch = pytest.importorskip("torch")
FAST = settings(max_examples=12, deadline=None)   # (each example compiles new kernels: CI time)

def tdt(t):
  """teeny's dtype of a torch tensor's dtype."""
  return getattr(dtypes, str(t.dtype).split(".")[-1])

def T(a, **kw) -> Tensor: return Tensor(np.asarray(a), **kw)
def P(a, **kw): return torch.tensor(np.asarray(a), **kw)

def same(out, ref, atol: float = 0.0, rtol: float = 0.0):
  """out (a Tensor) has ref's (a torch tensor's) shape and dtype, and its values (exactly unless atol/rtol; NaN equals
  NaN; under NULL only realized)."""
  assert isinstance(out, Tensor), f"expected a Tensor, got {type(out).__name__}"
  assert tuple(out.shape) == tuple(ref.shape), f"shape: teeny {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  assert out.dtype == tdt(ref), f"dtype: teeny {out.dtype} vs torch {ref.dtype}"
  if is_null():
    out.realize()
    return
  got, want = out.numpy(), ref.detach().numpy()
  if atol or rtol: np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, equal_nan=True)
  else: np.testing.assert_array_equal(got, want)

def grads(fn_teeny, fn_torch, arrays, wrt, seed=0, atol=1e-5):
  """fn on teeny and torch over float32 `arrays`; the inputs whose positions are in `wrt` require grad. Compares the
  output and those inputs' gradients for a fixed random upstream gradient."""
  tt = [Tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
  pt = [torch.tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
  to, po = fn_teeny(*tt), fn_torch(*pt)
  up = np.random.default_rng(seed).standard_normal(tuple(po.shape)).astype(np.float32)
  (to * Tensor(up)).sum().backward()
  (po * torch.tensor(up)).sum().backward()
  same(to, po, atol=atol, rtol=1e-6)
  for i in wrt:
    assert tt[i].grad is not None, f"input {i} got no gradient"
    same(tt[i].grad, pt[i].grad, atol=atol, rtol=1e-6)

def raises_both(fn_teeny, fn_torch, exc, match):
  """torch raises exc, and so does teeny, with a message matching `match`."""
  with pytest.raises(exc): fn_torch()
  with pytest.raises(exc, match=match): fn_teeny()

RNG = np.random.default_rng(0)
def rand(*shape, dtype=np.float32): return RNG.standard_normal(shape).astype(dtype)

# ------------------------------------------------------------------ index_add / index_copy / index_fill

@pytest.mark.parametrize("dim", [0, 1, -1, -3])
def test_index_add_dims_duplicates_alpha(dim):
  x, i = rand(3, 4, 5), np.array([2, 0, 2, 1, 0])
  d = dim % 3
  src = rand(*[5 if j == d else s for j, s in enumerate(x.shape)])
  for alpha in (1, 2.5):
    same(T(x).index_add(dim, T(i), T(src), alpha=alpha),
         P(x).index_add(dim, P(i), P(src), alpha=alpha), atol=1e-5, rtol=1e-5)
  i2 = i[:min(5, x.shape[d])] % x.shape[d]
  src2 = np.take(src, range(len(i2)), axis=d)
  same(T(x).index_add(dim, T(i2), T(src2)), P(x).index_add(dim, P(i2), P(src2)), atol=1e-5, rtol=1e-5)

@pytest.mark.parametrize("dt", [np.int32, np.int8, np.int64, np.uint8, np.bool_, np.float16, np.float64])
def test_index_add_dtypes(dt):
  x = (np.arange(12).reshape(3, 4) * 37 % 11).astype(dt)
  src = (np.arange(20).reshape(5, 4) * 29 % 100).astype(dt)   # int8 sums overflow and wrap, as torch's
  i = np.array([1, 1, 0, 1, 2])
  same(T(x).index_add(0, T(i), T(src)), P(x).index_add(0, P(i), P(src)))
  if dt not in (np.bool_,): same(T(x).index_add(0, T(i), T(src), alpha=3), P(x).index_add(0, P(i), P(src), alpha=3))

def test_index_add_int_alpha_float_and_scalars_and_empty():
  x = np.zeros(3, np.int64)
  same(T(x).index_add(0, T([1, 1]), T(np.ones(2, np.int64)), alpha=2.5),
       P(x).index_add(0, P([1, 1]), P(np.ones(2, np.int64)), alpha=2.5))
  same(T(np.float32(1)).index_add(0, T([0]), T(np.float32(2))), P(np.float32(1)).index_add(0, P([0]), P(np.float32(2))))
  same(T(np.float32(1)).index_add(0, T(0), T(np.float32(2))), P(np.float32(1)).index_add(0, P(0), P(np.float32(2))))
  e = np.zeros(0, np.int64)
  same(T(rand(3, 2)).index_add(0, T(e), T(np.ones((0, 2), np.float32))).realize() * 0,
       P(np.zeros((3, 2), np.float32)))
  x = rand(3, 2)
  same(T(x).index_add(0, T(e), T(np.ones((0, 2), np.float32))), P(x))
  same(T(x).index_copy(0, T(e), T(np.ones((0, 2), np.float32))), P(x))
  same(T(x).index_fill(1, T(e), 3.0), P(x))

def test_index_add_copy_noncontiguous():
  x = rand(4, 3)
  src = rand(3, 2)
  i = np.array([3, 0])
  same(T(x).T.index_add(1, T(i), T(src)), P(x).T.index_add(1, P(i), P(src)), atol=1e-6)
  same(T(x).T.index_copy(1, T(i), T(src)), P(x).T.index_copy(1, P(i), P(src)))
  s2 = rand(2, 3)
  same(T(x).index_add(0, T(i), T(s2.T.copy()).T), P(x).index_add(0, P(i), P(s2.T.copy()).T), atol=1e-6)
  same(T(x)[::2].index_fill(1, T([-1]), -2.0), P(x)[::2].index_fill(1, P([-1]), -2.0))

@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
@FAST
def test_index_ops_hypothesis(shape, data):
  rng = np.random.default_rng(len(shape) * 7 + sum(shape))
  dim = data.draw(st.integers(-len(shape), len(shape) - 1))
  d = dim % len(shape)
  n = shape[d]
  k = data.draw(st.integers(0, 5))
  idx = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), dtype=np.int64)
  x = rng.integers(-5, 5, shape).astype(np.float32)
  src = rng.integers(-5, 5, [k if j == d else s for j, s in enumerate(shape)]).astype(np.float32)
  same(T(x).index_add(dim, T(idx), T(src)), P(x).index_add(dim, P(idx), P(src)))
  # index_copy with duplicates: teeny takes the last slice (torch leaves it undefined): a numpy reference
  want = np.moveaxis(x.copy(), d, 0)
  for r, j in enumerate(idx): want[j] = np.moveaxis(src, d, 0)[r]
  same(T(x).index_copy(dim, T(idx), T(src)), torch.tensor(np.moveaxis(want, 0, d).copy()))
  neg = idx - n * (np.arange(k) % 2)   # index_fill also takes negative indices
  same(T(x).index_fill(dim, T(neg), 9.5), P(x).index_fill(dim, P(neg), 9.5))

def test_index_copy_duplicates_last_wins_and_grad():
  x, src = np.zeros((3, 2), np.float32), np.arange(8, dtype=np.float32).reshape(4, 2)
  i = np.array([1, 2, 1, 1])
  same(T(x).index_copy(0, T(i), T(src)), P(np.array([[0, 0], [6, 7], [2, 3]], np.float32)))
  # -0.0 and nan survive the copy exactly
  s2 = np.array([[-0.0, np.nan]], np.float32)
  out = T(x).index_copy(0, T([2]), T(s2))
  if not is_null(): assert np.signbit(out.numpy()[2, 0]) and np.isnan(out.numpy()[2, 1])
  # gradients with distinct indices equal torch's
  grads(lambda a, s: a.index_copy(1, T([3, 0]), s), lambda a, s: a.index_copy(1, P([3, 0]), s),
        [rand(2, 4), rand(2, 2)], wrt=(0, 1))

def test_index_fill_values_and_dtypes():
  same(T(np.zeros(3, np.int32)).index_fill(0, T([1]), 2.7), P(np.zeros(3, np.int32)).index_fill(0, P([1]), 2.7))
  same(T(np.zeros(3, np.int32)).index_fill(0, T([1]), T(np.float32(2.7))),
       P(np.zeros(3, np.int32)).index_fill(0, P([1]), P(np.float32(2.7))))
  same(T(np.zeros(3, bool)).index_fill(0, T([1]), 2), P(np.zeros(3, bool)).index_fill(0, P([1]), 2))
  same(T(np.float32(1)).index_fill(0, T([0]), 3.0), P(np.float32(1)).index_fill(0, P([0]), 3.0))
  same(T(np.zeros(3, np.float32)).index_fill(0, T(1), 3.0), P(np.zeros(3, np.float32)).index_fill(0, P(1), 3.0))
  grads(lambda a, v: a.index_fill(0, T([2, 0, 2]), v.sum()), lambda a, v: a.index_fill(0, P([2, 0, 2]), v.sum()),
        [rand(3, 2), rand(1)], wrt=(0, 1))

def test_index_add_grads():
  i = [2, 0, 2]
  grads(lambda a, s: a.index_add(0, T(i), s, alpha=2), lambda a, s: a.index_add(0, P(i), s, alpha=2),
        [rand(3, 2), rand(3, 2)], wrt=(0, 1))
  grads(lambda a, s: a.index_add(-1, T(i), s), lambda a, s: a.index_add(-1, P(i), s), [rand(2, 3), rand(2, 3)],
        wrt=(0, 1))

def test_index_errors():
  x = T(np.zeros((3, 4), np.float32))
  px = torch.zeros(3, 4)
  one = np.ones((1, 4), np.float32)
  raises_both(lambda: x.index_add(0, T([1]), T(one.astype(np.float64))),
              lambda: px.index_add(0, P([1]), P(one.astype(np.float64))), RuntimeError, "same scalar type")
  raises_both(lambda: x.index_add(0, T([1]), T(np.ones((2, 4), np.float32))),
              lambda: px.index_add(0, P([1]), P(np.ones((2, 4), np.float32))), RuntimeError, "Number of indices")
  raises_both(lambda: x.index_add(0, T([1]), T(np.ones((1, 5), np.float32))),
              lambda: px.index_add(0, P([1]), P(np.ones((1, 5), np.float32))), RuntimeError, "shape must match")
  raises_both(lambda: x.index_add(0, T([[1]]), T(one)), lambda: px.index_add(0, P([[1]]), P(one)), IndexError,
              "vector")
  raises_both(lambda: x.index_add(0, T(np.float32([1])), T(one)), lambda: px.index_add(0, P(np.float32([1])), P(one)),
              RuntimeError, "integer dtype")
  raises_both(lambda: x.index_add(2, T([1]), T(one)), lambda: px.index_add(2, P([1]), P(one)), IndexError,
              "out of range")
  raises_both(lambda: x.index_copy(0, T([1]), T(np.ones((2, 4), np.float32))),
              lambda: px.index_copy(0, P([1]), P(np.ones((2, 4), np.float32))), IndexError, "Number of indices")
  raises_both(lambda: x.index_fill(0, T([1]), T(np.float32([5]))), lambda: px.index_fill(0, P([1]), P(np.float32([5]))),
              RuntimeError, "0-dimensional value")

@needs_values
def test_index_out_of_range_errors():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  one = np.ones((1, 4), np.float32)
  for bad in (3, -1):
    raises_both(lambda: x.index_add(0, T([bad]), T(one)), lambda: px.index_add(0, P([bad]), P(one)), RuntimeError,
                f"index {bad} is out of bounds for dimension 0 with size 3")
    raises_both(lambda: x.index_copy(0, T([bad]), T(one)), lambda: px.index_copy(0, P([bad]), P(one)), IndexError,
                f"index {bad} is out of bounds")
  for bad in (3, -4):
    raises_both(lambda: x.index_fill(0, T([bad]), 1.0), lambda: px.index_fill(0, P([bad]), 1.0), IndexError,
                f"index {bad} is out of bounds")

# ------------------------------------------------------------------ index_put / take / put / masked_scatter

def test_index_put_values():
  x = rand(3, 4)
  cases = [((np.array([[0], [2]]), np.array([1, -1])), np.float32([7, 8])),
           ((np.array([1, -3]),), rand(4)),
           ((np.array([2, 0]), np.array([3, 3])), np.float32(5)),
           ((np.array(1), np.array(2)), np.float32(4))]
  for idx, v in cases:
    same(T(x).index_put(tuple(T(i) for i in idx), T(v)), P(x).index_put(tuple(P(i) for i in idx), P(v)))
    same(T(x).index_put(tuple(T(i) for i in idx), T(v), accumulate=True),
         P(x).index_put(tuple(P(i) for i in idx), P(v), accumulate=True), atol=1e-6)
  # duplicates accumulate; int dtype; a list of indices; int32 indices
  xi = np.arange(12, dtype=np.int32).reshape(3, 4)
  same(T(xi).index_put([T(np.int32([1, 1, 0]))], T(np.int32([1, 2, 3, 4])), accumulate=True),
       P(xi).index_put([P(np.int32([1, 1, 0]))], P(np.int32([1, 2, 3, 4])), accumulate=True))
  # duplicates without accumulate: the last value
  same(T(x).index_put((T([1, 1]), T([2, 2])), T(np.float32([5, 6]))),
       P(x).index_put((P([1]), P([2])), P(np.float32([6]))))
  # non-contiguous self, empty index
  same(T(x).T.index_put((T([0, 3]),), T(np.float32(1))), P(x).T.index_put((P([0, 3]),), P(np.float32(1))))
  e = np.zeros(0, np.int64)
  same(T(x).index_put((T(e),), T(np.float32(1))), P(x).index_put((P(e),), P(np.float32(1))))

@needs_values
def test_index_put_bool_mask():
  x = rand(3, 4)
  m = np.array([True, False, True])
  same(T(x).index_put((T(m),), T(np.float32(1))), P(x).index_put((P(m),), P(np.float32(1))))
  m2 = x > 0
  same(T(x).index_put((T(m2),), T(np.float32(-1)), accumulate=True),
       P(x).index_put((P(m2),), P(np.float32(-1)), accumulate=True))

def test_index_put_grads():
  idx = (np.array([[0], [2]]), np.array([1, -1]))
  for acc in (False, True):
    grads(lambda a, v: a.index_put(tuple(T(i) for i in idx), v, accumulate=acc),
          lambda a, v: a.index_put(tuple(P(i) for i in idx), v, accumulate=acc), [rand(3, 4), rand(2)], wrt=(0, 1))
  grads(lambda a, v: a.index_put((T([1, 1, 0]),), v, accumulate=True),
        lambda a, v: a.index_put((P([1, 1, 0]),), v, accumulate=True), [rand(3, 4), rand(3, 4)], wrt=(0, 1))

def test_index_put_errors():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  raises_both(lambda: x.index_put((T([1]),), T(np.float64(1))), lambda: px.index_put((P([1]),), P(np.float64(1))),
              RuntimeError, "dtypes match")
  raises_both(lambda: x.index_put((T(np.float32([1])),), T(np.float32(1))),
              lambda: px.index_put((P(np.float32([1])),), P(np.float32(1))), IndexError, "long, int, byte or bool")
  raises_both(lambda: x.index_put((T([1, 2]),), T(np.ones(3, np.float32))),
              lambda: px.index_put((P([1, 2]),), P(np.ones(3, np.float32))), RuntimeError, "shape mismatch")
  raises_both(lambda: x.index_put((T([1]),) * 3, T(np.ones(1, np.float32))),
              lambda: px.index_put((P([1]),) * 3, P(np.ones(1, np.float32))), IndexError, "too many indices")
  raises_both(lambda: x.index_put((None, T([1])), T(np.float32(1))),
              lambda: px.index_put((None, P([1])), P(np.float32(1))), TypeError, "expected Tensor")
  raises_both(lambda: x.index_put((T([0, 1]), T([0, 1, 2])), T(np.float32(1))),
              lambda: px.index_put((P([0, 1]), P([0, 1, 2])), P(np.float32(1))), IndexError, "broadcast")

@needs_values
def test_index_put_out_of_range():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  raises_both(lambda: x.index_put((T([3]),), T(np.float32(1))), lambda: px.index_put((P([3]),), P(np.float32(1))),
              IndexError, "index 3 is out of bounds for dimension 0 with size 3")
  raises_both(lambda: x.index_put((T([0]), T([-5])), T(np.float32(1))),
              lambda: px.index_put((P([0]), P([-5])), P(np.float32(1))), IndexError, "index -5 is out of bounds")

def test_take_and_put():
  x = rand(3, 4)
  for i in (np.array([[-1, 0], [5, 3]]), np.array(7), np.zeros((0, 2), np.int64), np.int32([11, -12])):
    same(T(x).take(T(i)), P(x).take(P(i.astype(np.int64))))
    same(T(x).T.take(T(i)), P(x).T.take(P(i.astype(np.int64))))
  e = np.zeros(0, np.int64)
  same(T(np.zeros(0, np.float32)).take(T(e)), P(np.zeros(0, np.float32)).take(P(e)))
  grads(lambda a: a.take(T([[-1, 0], [0, 5]])), lambda a: a.take(P([[-1, 0], [0, 5]])), [rand(3, 2)], wrt=(0,))
  src = np.float32([1, 2, 3])
  for i in (np.array([-1, 0, 5]), np.array([[1], [1], [-12]])):
    # (duplicates summed in another order than torch's: an ulp apart)
    same(T(x).put(T(i), T(src), accumulate=True), P(x).put(P(i), P(src), accumulate=True), rtol=1e-6)
  same(T(x).put(T([-1, 0, 5]), T(src)), P(x).put(P([-1, 0, 5]), P(src)))
  # duplicates without accumulate: the last one's value
  same(T(x).put(T([[1], [1], [-12]]), T(src)), P(x).put(P([1, 0]), P(src[1:])))
  grads(lambda a, s: a.put(T([4, -1, 0]), s), lambda a, s: a.put(P([4, -1, 0]), s), [rand(3, 2), rand(3)], wrt=(0, 1))
  grads(lambda a, s: a.put(T([1, 1, 0]), s, accumulate=True), lambda a, s: a.put(P([1, 1, 0]), s, accumulate=True),
        [rand(3, 2), rand(3)], wrt=(0, 1))

def test_take_put_errors():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  raises_both(lambda: x.put(T([1, 2]), T(np.float32([1]))), lambda: px.put(P([1, 2]), P(np.float32([1]))), IndexError,
              "same number of elements")
  raises_both(lambda: x.put(T([1]), T(np.float64([1]))), lambda: px.put(P([1]), P(np.float64([1]))), RuntimeError,
              "same dtype")
  raises_both(lambda: x.take(T(np.float32([1]))), lambda: px.take(P(np.float32([1]))), RuntimeError, "integer")
  raises_both(lambda: T(np.zeros(0, np.float32)).take(T([0])), lambda: torch.zeros(0).take(P([0])), IndexError,
              "empty tensor")

@needs_values
def test_take_put_out_of_range():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  for bad in (12, -13):
    raises_both(lambda: x.take(T([bad])), lambda: px.take(P([bad])), IndexError,
                f"tried to access index {bad} on a tensor of 12 elements")
    raises_both(lambda: x.put(T([bad]), T(np.float32([1]))), lambda: px.put(P([bad]), P(np.float32([1]))), IndexError,
                f"tried to access index {bad}")

def test_masked_scatter():
  x = rand(3, 4)
  src = np.arange(1, 20, dtype=np.float32)
  for m in (np.array([[True, False, True, False]]), x > 0, np.zeros((3, 4), bool), np.array(True)):
    same(T(x).masked_scatter(T(m), T(src)), P(x).masked_scatter(P(m), P(src)))
    same(T(x).T.masked_scatter(T(m).T if m.ndim == 2 else T(m), T(src.reshape(1, 19))),
         P(x).T.masked_scatter(P(m).T if m.ndim == 2 else P(m), P(src.reshape(1, 19))))
  # the mask may broadcast self out of place
  same(T(np.zeros(4, np.float32)).masked_scatter(T(np.ones((2, 4), bool)), T(src)),
       P(np.zeros(4, np.float32)).masked_scatter(P(np.ones((2, 4), bool)), P(src)))
  same(T(np.float32(1)).masked_scatter(T(True), T(np.float32([5]))),
       P(np.float32(1)).masked_scatter(P(True), P(np.float32([5]))))
  same(T(np.zeros(2, np.float32)).masked_scatter(T([False, False]), T(np.zeros(0, np.float32))),
       P(np.zeros(2, np.float32)).masked_scatter(P([False, False]), P(np.zeros(0, np.float32))))
  same(T(np.zeros(0, np.float32)).masked_scatter(T(np.zeros(0, bool)), T(src)),
       P(np.zeros(0, np.float32)).masked_scatter(P(np.zeros(0, bool)), P(src)))
  grads(lambda a, s: a.masked_scatter(T(np.array([[True, False, True, False]])), s),
        lambda a, s: a.masked_scatter(P(np.array([[True, False, True, False]])), s), [rand(3, 4), rand(19)], wrt=(0, 1))

def test_masked_scatter_errors():
  x, px = T(np.zeros((3, 4), np.float32)), torch.zeros(3, 4)
  m = np.array([[True, False, True, False]])
  raises_both(lambda: x.masked_scatter(T(m.astype(np.int32)), T(np.ones(9, np.float32))),
              lambda: px.masked_scatter(P(m.astype(np.int32)), P(np.ones(9, np.float32))), RuntimeError,
              "boolean masks")
  raises_both(lambda: x.masked_scatter(T(m), T(np.ones(9))), lambda: px.masked_scatter(P(m), P(np.ones(9))),
              RuntimeError, "same dtypes")
  if READS:
    raises_both(lambda: x.masked_scatter(T(m), T(np.ones(2, np.float32))),
                lambda: px.masked_scatter(P(m), P(np.ones(2, np.float32))), RuntimeError, "fewer than the mask")

# ------------------------------------------------------------------ in-place forms

def _inplace_cases():
  i, s = np.array([2, 0, 2]), rand(3, 4)
  m = rand(3, 4) > 0
  idx3 = np.array([[1, 0, 2, 1]])
  return [
    ("index_add_", lambda t, Q: t.index_add_(0, Q(i), Q(s), alpha=2)),
    ("index_copy_", lambda t, Q: t.index_copy_(1, Q([3, 0]), Q(s[:, :2]))),
    ("index_fill_", lambda t, Q: t.index_fill_(1, Q([-1]), 4.0)),
    ("index_put_", lambda t, Q: t.index_put_((Q([0, 2]), Q([1, 3])), Q(np.float32([7, 8])))),
    ("index_put_ acc", lambda t, Q: t.index_put_((Q([0, 0]),), Q(s[0]), accumulate=True)),
    ("put_", lambda t, Q: t.put_(Q([-1, 3]), Q(np.float32([1, 2])))),
    ("put_ acc", lambda t, Q: t.put_(Q([1, 1]), Q(np.float32([1, 2])), accumulate=True)),
    ("masked_fill_", lambda t, Q: t.masked_fill_(Q(m), -3.0)),
    ("masked_fill_ row", lambda t, Q: t.masked_fill_(Q(m[0]), -3.0)),
    ("masked_scatter_", lambda t, Q: t.masked_scatter_(Q(m), Q(np.arange(12, dtype=np.float32)))),
    ("scatter_", lambda t, Q: t.scatter_(0, Q(idx3), Q(s))),
    ("scatter_ value", lambda t, Q: t.scatter_(0, Q(idx3), 2.5)),
    ("scatter_ add", lambda t, Q: t.scatter_(0, Q(idx3), Q(s), reduce="add")),
    ("scatter_ multiply", lambda t, Q: t.scatter_(0, Q(idx3), Q(s), reduce="multiply")),
    ("scatter_add_", lambda t, Q: t.scatter_add_(1, Q(np.array([[3, 3], [0, 1], [2, 2]])), Q(s[:, :2]))),
    ("scatter_reduce_", lambda t, Q: t.scatter_reduce_(0, Q(idx3), Q(s), "amax", include_self=False)),
  ]

@pytest.mark.parametrize("name,fn", _inplace_cases(), ids=[c[0] for c in _inplace_cases()])
def test_inplace_forms(name, fn):
  x = rand(3, 4)
  a, pa = T(x), P(x)
  out = fn(a, T)
  fn(pa, P)
  assert out is a, f"{name} must return self"
  same(a, pa, atol=1e-6)
  # through a view: the write reaches the base
  base, pbase = T(np.zeros((5, 4), np.float32)) + 1, torch.ones(5, 4)
  base.realize()
  v, pv = base[1:4], pbase[1:4]
  v.assign(T(x))
  pv.copy_(P(x))
  fn(v, T)
  fn(pv, P)
  same(base, pbase, atol=1e-6)

def test_inplace_through_view_example_and_grad():
  a = T(np.arange(12, dtype=np.float32).reshape(4, 3)).contiguous().realize()
  pa = P(np.arange(12, dtype=np.float32).reshape(4, 3))
  b, pb = a[1:], pa[1:]
  b.index_fill_(0, T([1]), 5.0)
  pb.index_fill_(0, P([1]), 5.0)
  same(a, pa)
  # a transposed view
  a.T.index_add_(0, T([2, 2]), T(np.ones((2, 4), np.float32)))
  pa.T.index_add_(0, P([2, 2]), P(np.ones((2, 4), np.float32)))
  same(a, pa)
  # in-place ops on a non-leaf are recorded for autograd: gradients w.r.t. self and source, as torch's
  x, s = rand(3, 4), rand(2, 4)
  def run(lib, Q):
    xl, sl = Q(x, requires_grad=True), Q(s, requires_grad=True)
    y = xl * 2
    y.index_add_(0, Q([2, 2]), sl, alpha=3)
    y.scatter_(1, Q(np.array([[0], [1], [3]])), Q(np.float32([[1], [2], [3]])))
    y.masked_scatter_(Q(x > 0), sl.reshape(-1) * 1)
    y.index_put_((Q([0]),), sl[0] * 2, accumulate=True)
    return y, xl, sl
  ty, tx, ts = run(Tensor, lambda a, **kw: Tensor(np.asarray(a), **kw))
  py, px, ps = run(torch, lambda a, **kw: torch.tensor(np.asarray(a), **kw))
  up = rand(3, 4)
  (ty * Tensor(up)).sum().backward()
  (py * torch.tensor(up)).sum().backward()
  same(ty, py, atol=1e-5)
  same(tx.grad, px.grad, atol=1e-5)
  same(ts.grad, ps.grad, atol=1e-5)

@pytest.mark.parametrize("op", ["scatter_", "scatter_add_", "scatter_reduce_"])
def test_inplace_scatter_grads(op):
  idx = np.array([[2, 0, 1, 1], [0, 1, 2, 0]])   # distinct per column for scatter_ (torch gives duplicates each a grad)
  def run(Q):
    def f(a, s):
      y = a * 1
      if op == "scatter_": return y.scatter_(0, Q(idx), s)
      if op == "scatter_add_": return y.scatter_add_(0, Q(idx), s)
      return y.scatter_reduce_(0, Q(idx), s, "sum", include_self=True)
    return f
  grads(run(T), run(P), [rand(3, 4), rand(2, 4)], wrt=(0, 1))

def test_inplace_errors():
  x, px = T(np.zeros(4, np.float32)), torch.zeros(4)
  big = np.ones((2, 4), bool)
  raises_both(lambda: x.masked_fill_(T(big), 1.0), lambda: px.masked_fill_(P(big), 1.0), RuntimeError, "in-place")
  raises_both(lambda: x.masked_scatter_(T(big), T(np.ones(8, np.float32))),
              lambda: px.masked_scatter_(P(big), P(np.ones(8, np.float32))), RuntimeError, "in-place")
  for name in ("scatter_", "scatter_add_"):
    raises_both(lambda: getattr(x, name)(0, T([1]), T(np.ones(1))), lambda: getattr(px, name)(0, P([1]), P(np.ones(1))),
                RuntimeError, "self.dtype to be equal to src.dtype")
  raises_both(lambda: x.scatter_(0, T([1]), 1.0, reduce="mean"), lambda: px.scatter_(0, P([1]), 1.0, reduce="mean"),
              RuntimeError, "add or multiply")

# ------------------------------------------------------------------ kthvalue / mode / msort / argwhere

@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
@FAST
def test_kthvalue_hypothesis(shape, data):
  dim = data.draw(st.integers(-len(shape), len(shape) - 1))
  n = shape[dim]
  k = data.draw(st.integers(1, n))
  keepdim = data.draw(st.booleans())
  rng = np.random.default_rng(sum(shape) + k)
  x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)   # distinct: indices are unique
  r, pr = T(x).kthvalue(k, dim, keepdim), P(x).kthvalue(k, dim, keepdim)
  assert r.values is r[0] and r.indices is r[1]
  same(r.values, pr.values)
  same(r.indices, pr.indices)
  # ties (and NaN, the largest): the values are torch's, the index names an equal element
  y = rng.integers(0, 3, shape).astype(np.float32)
  y.reshape(-1)[::5] = np.nan
  r, pr = T(y).kthvalue(k, dim, True), P(y).kthvalue(k, dim, True)
  same(r.values, pr.values)
  if not is_null(): np.testing.assert_array_equal(np.take_along_axis(y, r.indices.numpy(), dim), pr.values.numpy())

def test_kthvalue_edges_and_grad():
  v = np.float32([3, 1, 2, 1, 3, 1])
  same(T(v).kthvalue(2).values, P(v).kthvalue(2).values)
  same(T(np.float32(3)).kthvalue(1).values, P(np.float32(3)).kthvalue(1).values)
  same(T(v.astype(np.int32)).kthvalue(4).values, P(v.astype(np.int32)).kthvalue(4).values)
  same(T(v.astype(np.float16)).kthvalue(4).values, P(v.astype(np.float16)).kthvalue(4).values)
  same(T(np.zeros((0, 3), np.float32)).kthvalue(1).values, P(np.zeros((0, 3), np.float32)).kthvalue(1).values)
  grads(lambda a: a.kthvalue(2, 0).values, lambda a: a.kthvalue(2, 0).values, [rand(4, 3)], wrt=(0,))
  x, px = T(v), P(v)
  for k in (0, 7):
    raises_both(lambda: x.kthvalue(k), lambda: px.kthvalue(k), RuntimeError, "out of range")
  raises_both(lambda: T(np.zeros(0, np.float32)).kthvalue(1), lambda: torch.zeros(0).kthvalue(1), IndexError,
              "non-zero size")
  raises_both(lambda: T([True, False]).kthvalue(1), lambda: P([True, False]).kthvalue(1), NotImplementedError, "bool")

@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=3), data=st.data())
@FAST
def test_mode_hypothesis(shape, data):
  dim = data.draw(st.integers(-len(shape), len(shape) - 1))
  keepdim = data.draw(st.booleans())
  dt = data.draw(st.sampled_from([np.float32, np.int32, np.int64, np.float16, np.bool_]))
  rng = np.random.default_rng(sum(shape) * 3 + dim)
  x = rng.integers(0, 3, shape).astype(dt)
  r, pr = T(x).mode(dim, keepdim), P(x).mode(dim, keepdim)
  same(r.values, pr.values)
  same(r.indices, pr.indices)   # (torch's CPU sort is stable up to 16 elements: the last occurrence)

def test_mode_edges_and_grad():
  for v in ([3., 1, 2, 1, 3, 1], [5., 4, 4, 5, 4, 5], [0., -0.], [-0., 0., -0.], [2.]):
    a = np.float32(v)
    r, pr = T(a).mode(), P(a).mode()
    same(r.values, pr.values)
    same(r.indices, pr.indices)
    if not is_null(): assert np.signbit(r.values.numpy()) == np.signbit(pr.values.numpy())
  # longer rows: torch's unstable sort may name another occurrence; teeny names the last
  x = RNG.integers(0, 4, (3, 40)).astype(np.float32)
  r, pr = T(x).mode(1), P(x).mode(1)
  same(r.values, pr.values)
  if not is_null():
    last = [max(np.flatnonzero(row == m)) for row, m in zip(x, pr.values.numpy())]
    np.testing.assert_array_equal(r.indices.numpy(), last)
  same(T(np.float32(2)).mode().values, P(np.float32(2)).mode().values)
  same(T(np.zeros((0, 2), np.float32)).mode(1).values, P(np.zeros((0, 2), np.float32)).mode(1).values)
  raises_both(lambda: T(np.zeros((2, 0), np.float32)).mode(1), lambda: torch.zeros(2, 0).mode(1), IndexError,
              "non-zero size")
  grads(lambda a: a.round().mode(0).values * a.sum() + a.mode(1).values.sum(), lambda a: a.round().mode(0).values *
        a.sum() + a.mode(1).values.sum(), [rand(4, 3)], wrt=(0,))
  # NaN: a slice holding NaN gives NaN at its first NaN (torch's answer here)
  r = T(np.float32([np.nan, 1, np.nan, 2])).mode()
  if not is_null(): assert np.isnan(r.values.numpy()) and r.indices.numpy() == 0

def test_msort_argwhere():
  x = rand(4, 3)
  same(T(x).msort(), P(x).msort())
  same(T(x).T.msort(), P(x).T.msort())
  if not is_null():
    same(T(x > 0).argwhere(), P(x > 0).argwhere())
    same(T(np.float32(0)).argwhere(), P(np.float32(0)).argwhere())

# ------------------------------------------------------------------ isin / searchsorted / bucketize

def test_isin():
  cases = [(np.array([1, 2, 3]), np.float32([2, 3.5])), (np.float32([1, np.nan, -0.0]), np.float32([np.nan, 1, 0])),
           (np.array([1, 2], np.uint8), np.array([257, 2])), (rand(3, 4).round(), rand(2, 2).round()),
           (np.array([1, 2]), np.zeros(0, np.int64)), (np.array([[1, 2]]), np.array([[2]]))]
  for e, t in cases:
    for inv in (False, True):
      same(Tensor.isin(T(e), T(t), invert=inv), torch.isin(P(e), P(t), invert=inv))
      same(T(e).isin(T(t), invert=inv), torch.isin(P(e), P(t), invert=inv))
  same(Tensor.isin(T([1, 2]), 2), torch.isin(P([1, 2]), 2))
  same(Tensor.isin(2, T([1, 2])), torch.isin(2, P([1, 2])))
  raises_both(lambda: Tensor.isin(T([1, 2]), T([True])), lambda: torch.isin(P([1, 2]), P([True])), RuntimeError, "Bool")

@given(n=st.integers(1, 40), m=st.integers(0, 12), lead=st.sampled_from([(), (2,), (2, 3)]), data=st.data())
@FAST
def test_searchsorted_hypothesis(n, m, lead, data):
  rng = np.random.default_rng(n * 13 + m)
  seq = np.sort(rng.integers(-4, 5, lead + (n,)).astype(np.float32), -1)
  vals = (rng.integers(-10, 11, lead + (m,)) / 2).astype(np.float32)
  right = data.draw(st.booleans())
  i32 = data.draw(st.booleans())
  same(T(seq).searchsorted(T(vals), right=right, out_int32=i32),
       torch.searchsorted(P(seq), P(vals), right=right, out_int32=i32))
  same(T(seq).searchsorted(T(vals), side="right" if right else "left"),
       torch.searchsorted(P(seq), P(vals), side="right" if right else "left"))
  # an unsorted sequence with its sorter; int sequences and float values promote
  perm = np.stack([rng.permutation(n) for _ in range(int(np.prod(lead)) or 1)]).reshape(lead + (n,))
  shuf = np.take_along_axis(seq, np.argsort(perm, -1), -1)
  sorter = np.argsort(shuf, -1, kind="stable")
  same(T(shuf).searchsorted(T(vals), sorter=T(sorter), right=right),
       torch.searchsorted(P(shuf), P(vals), sorter=P(sorter), right=right))
  same(T(seq.astype(np.int32)).searchsorted(T(vals)), torch.searchsorted(P(seq.astype(np.int32)), P(vals)))
  if not lead:
    same(T(vals).bucketize(T(seq), right=right), torch.bucketize(P(vals), P(seq), right=right))

def test_searchsorted_nan_scalars_and_edges():
  seq = np.float32([1, 2, 2, 3, np.nan])
  vals = np.float32([0, 2, 2.5, 3, 4, np.nan, np.inf, -np.inf])
  for right in (False, True):
    same(T(seq).searchsorted(T(vals), right=right), torch.searchsorted(P(seq), P(vals), right=right))
    same(T(seq[:4]).searchsorted(T(vals), right=right), torch.searchsorted(P(seq[:4]), P(vals), right=right))
  same(T(seq).searchsorted(2), torch.searchsorted(P(seq), 2))
  same(T(seq).searchsorted(2.5, out_int32=True), torch.searchsorted(P(seq), 2.5, out_int32=True))
  same(T(np.zeros(0, np.float32)).searchsorted(T(np.float32([2]))),
       torch.searchsorted(P(np.zeros(0, np.float32)), P(np.float32([2]))))
  same(T(np.float16([1, 2])).searchsorted(T(np.float32([1.5]))),
       torch.searchsorted(P(np.float16([1, 2])), P(np.float32([1.5]))))
  same(T(np.float32([[1, 2, 3], [4, 5, 6]])).T.searchsorted(T(np.float32([[2], [5], [1]]))),
       torch.searchsorted(P(np.float32([[1, 2, 3], [4, 5, 6]])).T.contiguous(), P(np.float32([[2], [5], [1]]))))
  same(Tensor.bucketize(2.5, T(np.float32([1, 2, 3]))), torch.bucketize(2.5, P(np.float32([1, 2, 3]))))
  x = rand(3, 4)
  same(T(x).bucketize(T(np.float32([-1, 0, 1])), out_int32=True),
       torch.bucketize(P(x), P(np.float32([-1, 0, 1])), out_int32=True))

def test_searchsorted_errors():
  s, ps = T(np.float32([1, 2, 3])), P(np.float32([1, 2, 3]))
  v, pv = T(np.float32([2])), P(np.float32([2]))
  raises_both(lambda: s.searchsorted(v, side="left", right=True),
              lambda: torch.searchsorted(ps, pv, side="left", right=True), RuntimeError, "opposites")
  raises_both(lambda: s.searchsorted(v, side="middle"), lambda: torch.searchsorted(ps, pv, side="middle"),
              RuntimeError, "'left' or 'right'")
  s2, ps2 = T(np.float32([[1, 2, 3], [4, 5, 6]])), P(np.float32([[1, 2, 3], [4, 5, 6]]))
  raises_both(lambda: s2.searchsorted(T(np.float32([2, 5]))), lambda: torch.searchsorted(ps2, P(np.float32([2, 5]))),
              RuntimeError, "first N-1 dimensions")
  raises_both(lambda: s.searchsorted(v, sorter=T([1, 2])), lambda: torch.searchsorted(ps, pv, sorter=P([1, 2])),
              RuntimeError, "same size")
  raises_both(lambda: s.searchsorted(v, sorter=T(np.float32([1, 2, 0]))),
              lambda: torch.searchsorted(ps, pv, sorter=P(np.float32([1, 2, 0]))), RuntimeError, "long dtype")
  raises_both(lambda: T(np.float32(3)).searchsorted(v), lambda: torch.searchsorted(P(np.float32(3)), pv),
              RuntimeError, "positive dimension")
  raises_both(lambda: T([False, True]).searchsorted(T([True])),
              lambda: torch.searchsorted(P([False, True]), P([True])), NotImplementedError, "bool")
  raises_both(lambda: T(np.float32([0, 2])).bucketize(s2), lambda: torch.bucketize(P(np.float32([0, 2])), ps2),
              RuntimeError, "1 dimension")
  if not is_null():
    raises_both(lambda: s.searchsorted(v, sorter=T([1, 2, 3])), lambda: torch.searchsorted(ps, pv, sorter=P([1, 2, 3])),
                RuntimeError, "sorter index out of range")

# ------------------------------------------------------------------ bincount / histc

@needs_values
def test_bincount():
  a = np.array([0, 1, 1, 3, 7, 1])
  same(T(a).bincount(), P(a).bincount())
  same(T(a.astype(np.int32)).bincount(minlength=10), P(a.astype(np.int32)).bincount(minlength=10))
  same(T(a.astype(np.uint8)).bincount(), P(a.astype(np.uint8)).bincount())
  for w in (rand(6), rand(6).astype(np.float16), rand(6).astype(np.float64), np.arange(6), np.arange(6) % 2 == 0):
    same(T(a).bincount(T(w)), P(a).bincount(P(w)), atol=1e-5, rtol=1e-5)
  same(T(np.zeros(0, np.int64)).bincount(), P(np.zeros(0, np.int64)).bincount())
  same(T(np.zeros(0, np.int64)).bincount(minlength=3), P(np.zeros(0, np.int64)).bincount(minlength=3))
  same(T(a)[::2].bincount(), P(a)[::2].bincount())
  raises_both(lambda: T([0, -1]).bincount(), lambda: P([0, -1]).bincount(), RuntimeError, "non-negative")
  raises_both(lambda: T([[0, 1]]).bincount(), lambda: P([[0, 1]]).bincount(), RuntimeError, "1-d")
  raises_both(lambda: T(np.float32([0, 1])).bincount(), lambda: P(np.float32([0, 1])).bincount(), NotImplementedError,
              "not implemented")
  raises_both(lambda: T([1]).bincount(minlength=-1), lambda: P([1]).bincount(minlength=-1), RuntimeError, ">= 0")
  raises_both(lambda: T(a).bincount(T(rand(3))), lambda: P(a).bincount(P(rand(3))), RuntimeError, "same length")

@given(n=st.integers(0, 30), bins=st.integers(1, 12), data=st.data())
@FAST
def test_histc_hypothesis(n, bins, data):
  rng = np.random.default_rng(n * 31 + bins)
  dt = data.draw(st.sampled_from([np.float32, np.float64, np.float16]))
  x = (rng.standard_normal(n) * 3).astype(dt)
  if n > 2: x[:2] = [0.25, 1.0]   # values on bin edges
  lo, hi = data.draw(st.sampled_from([(0, 0), (-1, 1), (0.1, 2.3), (-3, 0.5), (1, 1)]))
  same(T(x).histc(bins, lo, hi), P(x).histc(bins, lo, hi))

def test_histc_edges():
  same(T(np.float32([0.1, 0.2, 0.3, 0.7, 1.0, 0.0])).histc(10, 0, 1),
       P(np.float32([0.1, 0.2, 0.3, 0.7, 1.0, 0.0])).histc(10, 0, 1))
  same(T(np.float32([2, 2])).histc(4), P(np.float32([2, 2])).histc(4))
  same(T(np.float32([1, np.nan, 5])).histc(4, 0, 4), P(np.float32([1, np.nan, 5])).histc(4, 0, 4))
  x = rand(3, 4)
  same(T(x).T.histc(5), P(x).T.histc(5))
  same(T(np.zeros(0, np.float32)).histc(4), P(np.zeros(0, np.float32)).histc(4))
  out = T(x, requires_grad=True).histc(3)
  assert not out.requires_grad
  raises_both(lambda: T(x).histc(0), lambda: P(x).histc(0), RuntimeError, "bins must be > 0")
  raises_both(lambda: T(x).histc(4, 3, 1), lambda: P(x).histc(4, 3, 1), RuntimeError, "max must be larger than min")
  raises_both(lambda: T(x).histc(4, float("-inf"), 3), lambda: P(x).histc(4, float("-inf"), 3), RuntimeError,
              "not finite")
  raises_both(lambda: T([1, 2]).histc(4), lambda: P([1, 2]).histc(4), NotImplementedError, "not implemented")
  if READS:
    raises_both(lambda: T(np.float32([1, np.inf])).histc(4), lambda: P(np.float32([1, np.inf])).histc(4),
                RuntimeError, "not finite")

# ------------------------------------------------------------------ tensor_split / hsplit / vsplit / dsplit

def _same_pieces(got, want):
  assert len(got) == len(want), f"{len(got)} pieces vs torch's {len(want)}"
  for g, w in zip(got, want): same(g, w)

@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
@FAST
def test_tensor_split_hypothesis(shape, data):
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  dim = data.draw(st.integers(-len(shape), len(shape) - 1))
  if data.draw(st.booleans()):
    arg = data.draw(st.integers(1, 7))
  else:
    arg = data.draw(st.lists(st.integers(-8, 8), max_size=4))
  _same_pieces(T(x).tensor_split(arg, dim), P(x).tensor_split(arg, dim))
  _same_pieces(T(x).transpose(0, -1).tensor_split(arg, dim), P(x).transpose(0, -1).tensor_split(arg, dim))

def test_tensor_split_forms_and_views():
  x = np.arange(10, dtype=np.float32)
  _same_pieces(T(x).tensor_split(sections=3), P(x).tensor_split(sections=3))
  _same_pieces(T(x).tensor_split(indices=[1, 4]), P(x).tensor_split(indices=[1, 4]))
  if not is_null():
    _same_pieces(T(x).tensor_split(T([2, 5])), P(x).tensor_split(P([2, 5])))
    _same_pieces(T(x).tensor_split(T(3)), P(x).tensor_split(P(3)))
  # pieces are views: a write into one reaches the tensor
  a = T(x).contiguous().realize()
  a.tensor_split(3)[1].assign(T(np.zeros(3, np.float32)))
  pa = P(x)
  pa.tensor_split(3)[1].copy_(torch.zeros(3))
  same(a, pa)
  y = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
  for fn in ("hsplit", "vsplit", "dsplit"):
    for arg in ([1, 3], [0], 1):
      _same_pieces(getattr(T(y), fn)(arg), getattr(P(y), fn)(arg))
  _same_pieces(T(y).hsplit(2), P(y).hsplit(2))
  _same_pieces(T(x).hsplit(5), P(x).hsplit(5))

def test_split_errors():
  x, px = T(np.arange(10)), P(np.arange(10))
  y, py = T(np.zeros((2, 4, 3))), torch.zeros(2, 4, 3)
  raises_both(lambda: x.tensor_split(0), lambda: px.tensor_split(0), RuntimeError, "larger than 0")
  raises_both(lambda: T(np.float32(1)).tensor_split(2), lambda: P(np.float32(1)).tensor_split(2), RuntimeError,
              "at least a 1-dimensional")
  raises_both(lambda: x.tensor_split((2,), dim=1), lambda: px.tensor_split((2,), dim=1), IndexError, "out of range")
  raises_both(lambda: x.tensor_split(T([[2]])), lambda: px.tensor_split(P([[2]])), RuntimeError, "one-dimensional")
  raises_both(lambda: x.tensor_split(T(np.float32([2]))), lambda: px.tensor_split(P(np.float32([2]))), RuntimeError,
              "dtype of long")
  raises_both(lambda: x.tensor_split(2.0), lambda: px.tensor_split(2.0), TypeError, "int")
  raises_both(lambda: y.hsplit(3), lambda: py.hsplit(3), RuntimeError, "not divisible by the split_size 3")
  raises_both(lambda: y.hsplit(0), lambda: py.hsplit(0), RuntimeError, "not divisible")
  raises_both(lambda: x.vsplit(2), lambda: px.vsplit(2), RuntimeError, "at least 2 dimension")
  raises_both(lambda: x.dsplit(2), lambda: px.dsplit(2), RuntimeError, "at least 3 dimension")
  raises_both(lambda: T(np.float32(1)).hsplit(1), lambda: P(np.float32(1)).hsplit(1), RuntimeError,
              "at least 1 dimension")

# ------------------------------------------------------------------ diag_embed

@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), offset=st.integers(-3, 3), data=st.data())
@FAST
def test_diag_embed_hypothesis(shape, offset, data):
  nd = len(shape) + 1
  d1 = data.draw(st.integers(-nd, nd - 1))
  d2 = data.draw(st.integers(-nd, nd - 1).filter(lambda v: v % nd != d1 % nd))
  x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
  same(T(x).diag_embed(offset, d1, d2), P(x).diag_embed(offset, d1, d2))

def test_diag_embed_grad_dtypes_errors():
  grads(lambda a: a.diag_embed(1, 0, 2), lambda a: a.diag_embed(1, 0, 2), [rand(2, 3)], wrt=(0,))
  grads(lambda a: a.T.diag_embed(-2), lambda a: a.T.diag_embed(-2), [rand(2, 3)], wrt=(0,))
  for dt in (np.int32, np.bool_, np.float16):
    x = (np.arange(6).reshape(2, 3) % 3).astype(dt)
    same(T(x).diag_embed(), P(x).diag_embed())
  raises_both(lambda: T(rand(2, 3)).diag_embed(0, 1, 1), lambda: P(rand(2, 3)).diag_embed(0, 1, 1), RuntimeError,
              "cannot be identical")
  raises_both(lambda: T(rand(2, 3)).diag_embed(0, 1, 3), lambda: P(rand(2, 3)).diag_embed(0, 1, 3), IndexError,
              "out of range")
  raises_both(lambda: T(np.float32(3)).diag_embed(), lambda: P(np.float32(3)).diag_embed(), IndexError, "out of range")

def test_methods_exist():
  for name in ("index_add", "index_copy", "index_fill", "index_put", "take", "put", "masked_scatter", "index_add_",
               "index_copy_", "index_fill_", "index_put_", "put_", "masked_fill_", "masked_scatter_", "scatter_",
               "scatter_add_", "scatter_reduce_", "kthvalue", "mode", "msort", "argwhere", "isin", "searchsorted",
               "bucketize", "bincount", "histc", "tensor_split", "hsplit", "vsplit", "dsplit", "diag_embed"):
    assert hasattr(Tensor, name), name
