"""Python and numpy protocols on Tensor, as torch's (found by the fifth fuzz pass): float()/int()/operator.index/
format, `in`, np.asarray, copy.deepcopy, pickle, Tensor(list of tensors), Tensor(range), where(cond); and edge cases of
scatter/gather and dtype promotion."""
import copy, math, operator, pickle
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor, dtypes, nn

pytestmark = needs_values

def test_scalar_conversions():
  t = Tensor(2.5)
  assert float(t) == 2.5 and int(t) == 2 and complex(t) == 2.5 and math.floor(t) == 2
  assert f"{t:.2f}" == "2.50" and f"{Tensor([1.0, 2.0])}" == str(Tensor([1.0, 2.0]))
  assert float(Tensor([[3.0]])) == 3.0
  i = Tensor(2, dtype=dtypes.int32)
  assert operator.index(i) == 2 and [10, 20, 30][i] == 30 and list(range(i)) == [0, 1]
  with pytest.raises(TypeError, match="only integer tensors"): operator.index(t)
  with pytest.raises(TypeError, match="exactly one element"): float(Tensor([1.0, 2.0]))
  with pytest.raises(TypeError, match="format"): f"{Tensor([1.0, 2.0]):.2f}"

def test_contains():
  t = Tensor([[1, 2], [3, 4]])
  assert 2 in t and 5 not in t and Tensor([1, 2]) in t and 4.0 in t
  with pytest.raises(RuntimeError, match="only supports a Tensor or a number"): "a" in t

def test_numpy_protocol():
  t = Tensor([[1.0, 2.0], [3.0, 4.0]])
  a = np.asarray(t)
  assert isinstance(a, np.ndarray) and a.dtype == np.float32
  np.testing.assert_array_equal(np.array(t, dtype=np.int64), [[1, 2], [3, 4]])
  np.testing.assert_allclose(np.exp(t), np.exp(a))
  out = np.ones(2, np.float32) + Tensor([1.0, 2.0])   # numpy defers to the Tensor (__array_priority__)
  assert isinstance(out, Tensor) and out.tolist() == [2.0, 3.0]

def test_tensor_from_tensors_and_range():
  assert Tensor([Tensor(1.0), Tensor(2.0)]).tolist() == [1.0, 2.0]
  assert Tensor([1, Tensor(2.5)]).tolist() == [1.0, 2.5]
  assert Tensor([Tensor([1, 2]), Tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]
  r = Tensor(range(2, 8, 2))
  assert r.tolist() == [2, 4, 6] and r.dtype == dtypes.int32

def test_where_one_argument():
  rows, cols = Tensor([[0, 1], [1, 1]]).where()
  assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 1]
  with pytest.raises(TypeError, match="needs both x and y"): Tensor([True]).where(1.0)

def test_deepcopy_has_own_memory():
  a = Tensor([1.0, 2.0]).contiguous().realize()
  b = copy.deepcopy(a)
  a.assign(Tensor([5.0, 6.0])).realize()
  assert b.tolist() == [1.0, 2.0] and a.tolist() == [5.0, 6.0]
  w = Tensor([1.0, 2.0], requires_grad=True)
  (w * 3).sum().backward()
  w2 = copy.deepcopy(w)
  assert w2.requires_grad and w2.grad is not w.grad and w2.grad.tolist() == [3.0, 3.0]
  # an EMA copy of a model: its weights move apart from the model's
  m = nn.Linear(3, 2)
  ema = copy.deepcopy(m)
  before = ema.weight.numpy().copy()
  m.weight.assign(m.weight * 0).realize()
  np.testing.assert_array_equal(ema.weight.numpy(), before)
  # tied tensors stay tied
  pair = copy.deepcopy([a, a])
  assert pair[0] is pair[1]

@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int64", "uint8", "bool"])
def test_pickle_roundtrip(dt):
  t = Tensor(np.arange(6).reshape(2, 3) % 3).cast(dt)
  u = pickle.loads(pickle.dumps(t))
  assert u.dtype == t.dtype and u.shape == t.shape
  np.testing.assert_array_equal(u.cast(dtypes.float32).numpy(), t.cast(dtypes.float32).numpy())

def test_pickle_keeps_requires_grad_and_modules():
  w = Tensor([1.0, 2.0], requires_grad=True)
  assert pickle.loads(pickle.dumps(w)).requires_grad
  m = nn.Linear(2, 3)
  m2 = pickle.loads(pickle.dumps(m))
  x = Tensor([[1.0, -1.0]])
  np.testing.assert_allclose(m2(x).numpy(), m(x).numpy())

def test_uint64_with_signed_ints_raises():
  with pytest.raises(TypeError, match="no integer dtype holds both"):
    Tensor([1], dtype=dtypes.uint64) + Tensor([1], dtype=dtypes.int64)
  with pytest.raises(TypeError, match="no integer dtype holds both"):
    Tensor([1], dtype=dtypes.int8) < Tensor([1], dtype=dtypes.uint64)
  assert (Tensor([1], dtype=dtypes.uint32) + Tensor([1], dtype=dtypes.int32)).dtype == dtypes.int64
  assert (Tensor([2**63 + 5], dtype=dtypes.uint64) + 1).tolist() == [2**63 + 6]

def test_scatter_with_an_empty_index_returns_self():
  x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
  idx = Tensor(np.zeros((2, 0), np.int64))
  assert x.scatter(1, idx, 1.0).tolist() == x.tolist()
  assert x.scatter_reduce(1, idx, Tensor.zeros(2, 0), "amax", include_self=False).tolist() == x.tolist()
  assert Tensor([0.0, 1.0, 2.0]).scatter(0, Tensor(np.zeros(0, np.int64)), Tensor.zeros(0)).tolist() == [0, 1, 2]

def test_gather_and_scatter_of_0d():
  i = Tensor(0, dtype=dtypes.int64)
  assert Tensor(5.0).gather(0, i).item() == 5.0 and Tensor(5.0).gather(-1, i).shape == ()
  assert Tensor(5.0).scatter(0, i, 1.0).item() == 1.0
  assert Tensor(5.0).scatter_reduce(0, i, Tensor(7.0), "amax").item() == 7.0
  with pytest.raises(IndexError, match="out of range for a 0-d tensor"): Tensor(5.0).gather(1, i)

@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_times_a_scalar_past_its_range(dt):
  """torch computes a 16-bit tensor op a Python number in float32 and rounds once: x * 1e5 is finite for small x and
  0 * 1e10 is 0 (the number made float16 was inf, giving inf and nan)."""
  torch = pytest.importorskip("torch")
  x = [0.001, 0.0, -2e-4, 3.0]
  for f in (lambda t: t * 100000, lambda t: 100000 * t, lambda t: t * 1e10, lambda t: t / 1e-9 if dt == "float16"
            else t / 1e-40, lambda t: t * 2**17 + 1, lambda t: t.div(1e-6, rounding_mode="floor")):
    ref = f(torch.tensor(x, dtype=getattr(torch, dt))).float().numpy()
    got = f(Tensor(x, dtype=dt))
    assert got.dtype == getattr(dtypes, dt)
    np.testing.assert_array_equal(got.cast(dtypes.float32).numpy(), ref)
