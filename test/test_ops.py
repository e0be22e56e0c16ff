"""Forward ops against numpy: creation, elementwise, reduce, movement, indexing, matmul, einsum, dtypes."""
import math
import numpy as np
import pytest
from teeny import Tensor, dtypes, Device
from helpers import helper_test_op, is_null, needs_values, bf16_round

def _np(t: Tensor) -> np.ndarray: return t.numpy()

# ---------------------------------------------------------------- creation

class TestCreation:
  @pytest.mark.parametrize("data,dtype,shape", [
    ([1, 2, 3], dtypes.int32, (3,)), ([1.0, 2, 3], dtypes.float32, (3,)), ([True, False], dtypes.bool, (2,)),
    ((1, 2), dtypes.int32, (2,)), ([[1, 2], [3, 4], [5, 6]], dtypes.int32, (3, 2)), (3.5, dtypes.float32, ()),
    (7, dtypes.int32, ()), (True, dtypes.bool, ()), ([], dtypes.float32, (0,)), ([[1.5], [2]], dtypes.float32, (2, 1)),
  ])
  def test_from_python(self, data, dtype, shape):
    t = Tensor(data)
    assert t.dtype == dtype and t.shape == shape and t.ndim == len(shape)
    if is_null(): t.realize()
    else: np.testing.assert_equal(t.numpy(), np.array(data, dtype=dtype.np).reshape(shape))

  @pytest.mark.parametrize("npdt", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                    np.uint64, np.float16, np.float32, np.float64])
  def test_from_numpy_keeps_dtype(self, npdt):
    a = (np.arange(6).reshape(2, 3) % 3).astype(npdt)
    t = Tensor(a)
    assert t.dtype == dtypes.from_np(np.dtype(npdt)) and t.shape == (2, 3)
    if is_null(): t.realize()
    else:
      out = t.numpy()
      assert out.dtype == np.dtype(npdt)
      np.testing.assert_equal(out, a)

  @needs_values
  def test_from_numpy_noncontiguous(self):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (a.T, a[::2, 1::2], a[::-1], a[:, ::-1][1:3]):
      np.testing.assert_equal(Tensor(view).numpy(), view)

  @pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.int8, dtypes.uint8, dtypes.float64, dtypes.int64, "float16",
                                     "int16"])
  def test_dtype_arg(self, dtype):
    t = Tensor([1, 2, 3], dtype=dtype)
    want = dtype if not isinstance(dtype, str) else getattr(dtypes, dtype)
    assert t.dtype == want
    if is_null(): t.realize()
    else: np.testing.assert_equal(t.numpy(), np.array([1, 2, 3], dtype=want.np))

  def test_device_arg(self):
    t = Tensor([1.0, 2.0], device=Device.DEFAULT)
    assert t.device == Device.DEFAULT
    assert Tensor([1.0]).device == Device.DEFAULT

  @needs_values
  def test_to_device(self):
    t = Tensor([1.0, 2.0, 3.0]).to(Device.DEFAULT)
    assert t.device == Device.DEFAULT
    np.testing.assert_equal(t.numpy(), [1, 2, 3])

  @pytest.mark.parametrize("shape", [(2, 3), (0, 3), (4,), ()])
  def test_empty(self, shape):
    t = Tensor.empty(*shape)
    assert t.shape == shape and t.dtype == dtypes.float32
    t.realize()
    t2 = Tensor.empty(shape, dtype=dtypes.int32)
    assert t2.shape == shape and t2.dtype == dtypes.int32

  @pytest.mark.parametrize("shape", [(2, 3), (0, 3), (5,), (), (1, 1, 4)])
  @pytest.mark.parametrize("fn", ["zeros", "ones"])
  def test_zeros_ones(self, fn, shape):
    for t in (getattr(Tensor, fn)(*shape), getattr(Tensor, fn)(shape)):
      assert t.shape == shape and t.dtype == dtypes.float32
      if is_null(): t.realize()
      else: np.testing.assert_equal(t.numpy(), getattr(np, fn)(shape, np.float32))
    if shape != (2, 3): return
    ti = getattr(Tensor, fn)(*shape, dtype=dtypes.int8)
    assert ti.dtype == dtypes.int8
    if is_null(): ti.realize()
    else: np.testing.assert_equal(ti.numpy(), getattr(np, fn)(shape, np.int8))

  @pytest.mark.parametrize("fill,dtype", [(2.5, dtypes.float32), (7, dtypes.int32), (True, dtypes.bool),
                                          (-3, dtypes.int32)])
  def test_full(self, fill, dtype):
    t = Tensor.full((2, 3), fill)
    assert t.shape == (2, 3) and t.dtype == dtype
    if is_null(): t.realize()
    else: np.testing.assert_equal(t.numpy(), np.full((2, 3), fill, dtype.np))
    t16 = Tensor.full((4,), 1.5, dtype=dtypes.float16)
    assert t16.dtype == dtypes.float16
    if is_null(): t16.realize()
    else: np.testing.assert_equal(t16.numpy(), np.full((4,), 1.5, np.float16))

  @pytest.mark.parametrize("args", [(5,), (0,), (2, 10), (2, 10, 3), (10, 2, -2), (-3, 4), (5, 2), (0, 1, 0.25),
                                    (-3.5, 2), (1.0, 2.0, 0.125), (0.5, -1.5, -0.5)])
  def test_arange(self, args):
    t, ref = Tensor.arange(*args), np.arange(*args)
    assert t.shape == ref.shape
    assert t.dtype == (dtypes.float32 if any(isinstance(a, float) for a in args) else dtypes.int32)
    if is_null(): t.realize()
    else: np.testing.assert_allclose(t.numpy(), ref, atol=1e-6)

  @pytest.mark.parametrize("args", [(0, 1, 5), (-2, 3, 7), (1, 1, 1), (5, -5, 11), (0, 10, 2), (3, 4, 0)])
  def test_linspace(self, args):
    t, ref = Tensor.linspace(*args), np.linspace(*args, dtype=np.float32)
    assert t.shape == ref.shape and t.dtype == dtypes.float32
    if is_null(): t.realize()
    else: np.testing.assert_allclose(t.numpy(), ref, atol=1e-6)

  @pytest.mark.parametrize("args", [(3,), (1,), (2, 4), (4, 2), (0,)])
  def test_eye(self, args):
    t, ref = Tensor.eye(*args), np.eye(*args, dtype=np.float32)
    assert t.shape == ref.shape and t.dtype == dtypes.float32
    if is_null(): t.realize()
    else: np.testing.assert_equal(t.numpy(), ref)

  @pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.float16, dtypes.bool])
  def test_like(self, dtype):
    src = Tensor.ones(2, 3, dtype=dtype)
    for t, ref in ((src.zeros_like(), np.zeros((2, 3))), (Tensor.zeros_like(src), np.zeros((2, 3))),
                   (src.ones_like(), np.ones((2, 3))), (src.full_like(1), np.ones((2, 3)))):
      assert t.shape == (2, 3) and t.dtype == dtype
      if is_null(): t.realize()
      else: np.testing.assert_equal(t.numpy(), ref.astype(dtype.np))
    t = src.zeros_like(dtype=dtypes.int8)
    assert t.dtype == dtypes.int8

  def test_rand_like(self):
    src = Tensor.ones(3, 4)
    t = src.rand_like()
    assert t.shape == (3, 4) and t.dtype == dtypes.float32
    t16 = Tensor.ones(5, dtype=dtypes.float16).rand_like()
    assert t16.shape == (5,) and t16.dtype == dtypes.float16
    if is_null():
      t.realize()
      t16.realize()
    else:
      v = t.numpy()
      assert ((v >= 0) & (v < 1)).all() and len(np.unique(v)) > 1
      v16 = t16.numpy().astype(np.float32)
      assert ((v16 >= 0) & (v16 <= 1)).all()

class TestRandom:
  @pytest.mark.parametrize("fn", ["rand", "randn"])
  def test_manual_seed_repeats(self, fn):
    Tensor.manual_seed(1337)
    a = getattr(Tensor, fn)(64)
    b = getattr(Tensor, fn)(64)
    Tensor.manual_seed(1337)
    c = getattr(Tensor, fn)(64)
    assert a.shape == (64,) and a.dtype == dtypes.float32
    if is_null():
      for t in (a, b, c): t.realize()
      return
    av, bv, cv = a.numpy(), b.numpy(), c.numpy()
    np.testing.assert_equal(av, cv)
    assert not np.array_equal(av, bv), "two draws after one seed must differ"
    Tensor.manual_seed(7)
    assert not np.array_equal(getattr(Tensor, fn)(64).numpy(), av), "different seeds must give different numbers"

  @pytest.mark.parametrize("shape", [(3, 4), (0,), (2, 3, 4), ()])
  def test_shapes(self, shape):
    Tensor.manual_seed(0)
    for t in (Tensor.rand(*shape), Tensor.randn(*shape), Tensor.uniform(*shape), Tensor.normal(*shape)):
      assert t.shape == shape and t.dtype == dtypes.float32
      t.realize()
    r = Tensor.randint(0, 5, shape)
    assert r.shape == shape and r.dtype == dtypes.int32
    r.realize()

  @needs_values
  def test_rand_range(self):
    Tensor.manual_seed(0)
    v = Tensor.rand(10000).numpy()
    assert v.min() >= 0.0 and v.max() < 1.0
    assert abs(v.mean() - 0.5) < 0.02 and len(np.unique(v)) > 9000

  @needs_values
  def test_rand_tuple_shape(self):
    Tensor.manual_seed(0)
    assert Tensor.rand((3, 4)).shape == (3, 4)
    assert Tensor.rand((3, 4)).numpy().shape == (3, 4)

  @needs_values
  def test_randn_moments(self):
    Tensor.manual_seed(0)
    v = Tensor.randn(10000).numpy()
    assert np.isfinite(v).all()
    assert abs(v.mean()) < 0.05 and abs(v.std() - 1.0) < 0.05

  @needs_values
  def test_randint(self):
    Tensor.manual_seed(0)
    v = Tensor.randint(-3, 5, (1000,)).numpy()
    assert v.min() >= -3 and v.max() < 5
    assert set(np.unique(v).tolist()) == set(range(-3, 5))

  @needs_values
  def test_uniform(self):
    Tensor.manual_seed(0)
    v = Tensor.uniform(10000, low=-3.0, high=5.0).numpy()
    assert v.min() >= -3.0 and v.max() < 5.0 and abs(v.mean() - 1.0) < 0.15

  @needs_values
  def test_normal(self):
    Tensor.manual_seed(0)
    v = Tensor.normal(10000, mean=3.0, std=0.5).numpy()
    assert abs(v.mean() - 3.0) < 0.03 and abs(v.std() - 0.5) < 0.03

class TestAccessors:
  @needs_values
  def test_tolist(self):
    assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert Tensor([1.5, -2.5]).tolist() == [1.5, -2.5]
    assert Tensor([True, False]).tolist() == [True, False]
    assert Tensor(3).tolist() == 3

  @needs_values
  def test_item(self):
    x = Tensor(3.5).item()
    assert x == 3.5 and isinstance(x, float)
    i = Tensor(7).item()
    assert i == 7 and isinstance(i, int)
    b = Tensor(True).item()
    assert b is True or (b == True and isinstance(b, (bool, np.bool_)))  # noqa: E712
    assert Tensor([[2.0]]).item() == 2.0
    assert Tensor([1.0, 5.0, 3.0]).max().item() == 5.0
    assert (Tensor([1, 2, 3]).sum()).item() == 6

  @needs_values
  def test_numpy(self):
    out = (Tensor([1.0, 2, 3]) * 2 + 1).relu().numpy()
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_equal(out, [3, 5, 7])
    assert Tensor(2.0).numpy().shape == ()

  @pytest.mark.parametrize("shape", [(2, 3, 4), (0, 3), (), (5,)])
  def test_shape_ndim_numel(self, shape):
    t = Tensor.ones(*shape)
    assert t.shape == shape and isinstance(t.shape, tuple)
    assert t.ndim == len(shape)
    assert t.numel() == math.prod(shape)
    assert t.dtype == dtypes.float32 and t.device == Device.DEFAULT

  def test_realize_returns_self(self):
    t = Tensor([1.0, 2.0]) + 1
    assert t.realize() is t

  @needs_values
  def test_contiguous(self):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_equal(Tensor(a).permute(1, 0).contiguous().numpy(), a.T)
    np.testing.assert_equal(Tensor(a).flip(0).contiguous().reshape(12).numpy(), a[::-1].reshape(12))

  @needs_values
  def test_cast(self):
    t = Tensor([1.7, -2.2, 3.9])
    assert t.cast(dtypes.int32).dtype == dtypes.int32
    np.testing.assert_equal(t.cast(dtypes.int32).numpy(), [1, -2, 3])
    np.testing.assert_equal(t.cast("float16").numpy(), np.array([1.7, -2.2, 3.9], np.float16))
    np.testing.assert_equal(Tensor([0, 3, -1]).cast(dtypes.bool).numpy(), [False, True, True])
    np.testing.assert_equal(Tensor([True, False]).cast(dtypes.float32).numpy(), [1.0, 0.0])

  @needs_values
  def test_realize_twice_and_reuse(self):
    a = Tensor([1.0, 2.0, 3.0]).realize()
    b = (a * 2).realize()
    np.testing.assert_equal((a + b).numpy(), [3, 6, 9])
    np.testing.assert_equal(a.numpy(), [1, 2, 3])

# ---------------------------------------------------------------- elementwise

BINARY = {"add": (np.add, lambda a, b: a + b), "sub": (np.subtract, lambda a, b: a - b),
          "mul": (np.multiply, lambda a, b: a * b), "div": (np.divide, lambda a, b: a / b),
          "maximum": (np.maximum, lambda a, b: a.maximum(b)), "minimum": (np.minimum, lambda a, b: a.minimum(b))}

def _operands(sa, sb) -> list:
  """float32 operands; the second stays away from zero so it can divide."""
  rng = np.random.default_rng(0)
  a = rng.uniform(-2, 2, sa).astype(np.float32)
  b = (rng.choice([-1, 1], sb) * rng.uniform(0.5, 2, sb)).astype(np.float32)
  return [np.asarray(a), np.asarray(b)]

def _rounded(*shapes) -> list:
  """small whole-number float32 operands, so equality comparisons are exercised."""
  rng = np.random.default_rng(0)
  return [np.asarray(np.round(rng.uniform(-2, 2, sh))).astype(np.float32) for sh in shapes]

BCAST = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((1,), (3, 4)), ((), (3, 4)),
         ((3, 4), ()), ((0, 3), (1, 3)), ((0, 3), (3,)), ((2, 0, 1), (1, 5))]

COMPARE = {"lt": (np.less, lambda a, b: a < b), "le": (np.less_equal, lambda a, b: a <= b),
           "gt": (np.greater, lambda a, b: a > b), "ge": (np.greater_equal, lambda a, b: a >= b),
           "eq": (np.equal, lambda a, b: a == b), "ne": (np.not_equal, lambda a, b: a != b)}

class TestBinary:
  @pytest.mark.parametrize("op", list(BINARY))
  def test_float(self, op):
    helper_test_op(None, BINARY[op][0], BINARY[op][1], vals=_operands((3, 4), (4,)), atol=1e-5)

  @pytest.mark.parametrize("shapes", BCAST, ids=str)
  def test_float_broadcast(self, shapes):
    # all ops stacked so one kernel covers a broadcast pattern; a mismatch at [k] points at list(BINARY)[k]
    helper_test_op(None, lambda a, b: np.stack([f[0](a, b) for f in BINARY.values()]),
                   lambda a, b: Tensor.stack(*[f[1](a, b) for f in BINARY.values()]), vals=_operands(*shapes),
                   atol=1e-5)

  @pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
  def test_method_forms(self, op):
    np_ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power}
    helper_test_op([(3, 4), (3, 4)], np_ops[op], lambda a, b: getattr(a, op)(b), atol=1e-5, low=0.5, high=2)

  @pytest.mark.parametrize("fn", [
    (lambda x: x + 2, lambda x: x + 2), (lambda x: 2 + x, lambda x: 2 + x), (lambda x: x - 1.5, lambda x: x - 1.5),
    (lambda x: 1.5 - x, lambda x: 1.5 - x), (lambda x: x * 3, lambda x: x * 3),
    (lambda x: -0.5 * x, lambda x: -0.5 * x),
    (lambda x: x / 4, lambda x: x / 4), (lambda x: 3 / x, lambda x: 3 / x), (lambda x: x ** 2, lambda x: x ** 2),
    (lambda x: 2 ** x, lambda x: 2 ** x), (lambda x: np.maximum(x, 1.0), lambda x: x.maximum(1.0)),
    (lambda x: np.minimum(x, 1), lambda x: x.minimum(1)), (lambda x: x + True, lambda x: x + True),
  ])
  def test_float_scalar(self, fn):
    helper_test_op([(3, 5)], fn[0], fn[1], atol=1e-5, low=0.5, high=2)

  @pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                     np.float16, np.float32, np.float64])
  def test_dtypes(self, dtype):
    # [add, sub, mul] stacked into one kernel; unsigned subtraction wraps like numpy
    tol = 1e-2 if dtype == np.float16 else 1e-6
    helper_test_op([(4, 5), (5,)], lambda a, b: np.stack([a + b, a - b, a * b]),
                   lambda a, b: Tensor.stack(a + b, a - b, a * b), dtype=dtype, low=-10, high=10, atol=tol, rtol=tol)

  @pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64, np.float16, np.float64])
  def test_dtypes_maximum_minimum(self, dtype):
    helper_test_op([(4, 5), (5,)], lambda a, b: np.stack([np.maximum(a, b), np.minimum(a, b)]),
                   lambda a, b: Tensor.stack(a.maximum(b), a.minimum(b)), dtype=dtype, low=-10, high=10)

  @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32])
  def test_dtypes_scalar(self, dtype):
    tol = 1e-2 if dtype == np.float16 else 1e-6
    helper_test_op([(6,)], lambda x: x * 3 + 2, lambda x: x * 3 + 2, dtype=dtype, low=0, high=20, atol=tol, rtol=tol)
    helper_test_op([(6,)], lambda x: 2 + x * 3, lambda x: 2 + x * 3, dtype=dtype, low=0, high=20, atol=tol, rtol=tol)

  def test_bool_add_mul(self):
    helper_test_op([(3, 4), (3, 4)], np.add, lambda a, b: a + b, dtype=np.bool_, out_dtype=dtypes.bool)
    helper_test_op([(3, 4), (3, 4)], np.multiply, lambda a, b: a * b, dtype=np.bool_, out_dtype=dtypes.bool)
    helper_test_op([(3, 4), (4,)], np.maximum, lambda a, b: a.maximum(b), dtype=np.bool_, out_dtype=dtypes.bool)

  @pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (5,))])
  def test_int_true_div(self, shapes):
    helper_test_op(list(shapes), lambda a, b: a / b, lambda a, b: a / b, dtype=np.int32, low=1, high=9, atol=1e-6,
                   out_dtype=dtypes.float32)
    helper_test_op([shapes[0]], lambda a: a / 2, lambda a: a / 2, dtype=np.int32, low=-9, high=9,
                   out_dtype=dtypes.float32)
    helper_test_op([shapes[0]], lambda a: 7 / a, lambda a: 7 / a, dtype=np.int32, low=1, high=9,
                   out_dtype=dtypes.float32)

  @pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
  def test_int_floordiv_mod(self, dtype):
    signed = np.issubdtype(dtype, np.signedinteger)
    a = np.array([7, -7, 7, -7, 0, 5, -5, 6, -6, 1, 9, -9, 3, 0] if signed else [7, 0, 5, 6, 1, 9, 3, 100, 127, 4],
                 dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, 0, 0, 3, -3, -1, 4, 4, -4, 0] if signed else [2, 3, 0, 4, 1, 2, 5, 7, 3, 0],
                 dtype=dtype)
    with np.errstate(all="ignore"): ref = np.stack([a // b, a % b])  # numpy gives 0 for integer x//0 and x%0
    helper_test_op(None, lambda x, y: ref, lambda x, y: Tensor.stack(x // y, x % y), vals=[a, b])

  @needs_values
  @pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
  def test_int_min_div_minus_one(self, dtype):
    # INT_MIN / -1 traps on x86 (SIGFPE killed the process): torch gives INT_MIN for //, trunc division, and 0 for %,
    # fmod and remainder; the divisor a tensor (a Python -1 folds away)
    m = np.iinfo(dtype).min
    a, b = np.array([m, m, 7, -7], dtype), np.array([-1, 1, -1, -1], dtype)
    x, y = Tensor(a), Tensor(b)
    want_q = np.array([m, m, -7, 7], dtype)
    for got in (x // y, x.div(y, rounding_mode="trunc"), x.div(y, rounding_mode="floor")):
      np.testing.assert_array_equal(got.numpy(), want_q)
    for got in (x % y, x.fmod(y), x.remainder(y)): np.testing.assert_array_equal(got.numpy(), np.zeros(4, dtype))

  @pytest.mark.parametrize("k", [3, -3, 1, 0])
  def test_int_floordiv_mod_scalar(self, k):
    a = np.arange(-10, 11, dtype=np.int32)
    helper_test_op(None, lambda x: x // k, lambda x: x // k, vals=[a])
    helper_test_op(None, lambda x: x % k, lambda x: x % k, vals=[a])
    helper_test_op(None, lambda x: 7 // x, lambda x: 7 // x, vals=[a])
    helper_test_op(None, lambda x: -7 % x, lambda x: -7 % x, vals=[a])

  def test_int_floordiv_mod_broadcast(self):
    helper_test_op([(3, 1), (1, 4)], np.floor_divide, lambda x, y: x // y, dtype=np.int32, low=-20, high=20)
    helper_test_op([(3, 1), (1, 4)], np.mod, lambda x, y: x % y, dtype=np.int32, low=-20, high=20)

  def test_float_floordiv_mod(self):
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, 3.25, -3.25, 5.0], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.5, 1.5, 2.5], np.float32)
    helper_test_op(None, np.floor_divide, lambda x, y: x // y, vals=[a, b], atol=1e-5)
    helper_test_op(None, np.mod, lambda x, y: x % y, vals=[a, b], atol=1e-5)
    helper_test_op(None, lambda x: x % 2.5, lambda x: x % 2.5, vals=[a], atol=1e-5)
    helper_test_op(None, lambda x: x // -2, lambda x: x // -2, vals=[a], atol=1e-5)

  def test_pow(self):
    helper_test_op([(3, 4)], lambda x: x ** 0.5, lambda x: x ** 0.5, low=0.1, high=3, atol=1e-5)
    helper_test_op([(3, 4)], lambda x: x ** -1.5, lambda x: x ** -1.5, low=0.5, high=3, atol=1e-5)
    helper_test_op([(3, 4)], lambda x: x ** 0, lambda x: x ** 0, low=-2, high=2)
    helper_test_op([(3, 4)], lambda x: x ** 1, lambda x: x ** 1, low=-2, high=2)
    helper_test_op([(3, 4)], lambda x: x ** 3, lambda x: x ** 3, low=-2, high=2, atol=1e-5)
    helper_test_op(None, lambda x: x ** 2, lambda x: x ** 2, vals=[[-3.0, -0.5, 0.0, 0.5, 2.0]], atol=1e-6)
    helper_test_op([(3, 4), (3, 4)], np.power, lambda x, y: x ** y, low=0.5, high=2, atol=1e-5)
    helper_test_op([(4,), (3, 1)], np.power, lambda x, y: x.pow(y), low=0.5, high=2, atol=1e-5)
    helper_test_op([(3, 4)], lambda x: 0.5 ** x, lambda x: 0.5 ** x, low=-2, high=2, atol=1e-5)

  def test_pow_negative_base_int_exponent(self):
    helper_test_op(None, np.power, lambda x, y: x ** y,
                   vals=[[-2.0, -3.0, -1.5, 2.0, -2.0], [2.0, 3.0, 2.0, -1.0, -1.0]], atol=1e-5)

  @pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64])
  def test_pow_int(self, dtype):
    helper_test_op([(3, 4)], lambda x: x ** 2, lambda x: x ** 2, dtype=dtype, low=-5 if dtype != np.uint8 else 0,
                   high=6)
    helper_test_op([(3, 4), (3, 4)], np.power, lambda x, y: x ** y, dtype=dtype, low=0, high=4)
    helper_test_op([(5,)], lambda x: 2 ** x, lambda x: 2 ** x, dtype=dtype, low=0, high=6)

  @pytest.mark.parametrize("op", list(COMPARE))
  def test_compare(self, op):
    # rounded floats so equality actually happens
    npf, tf = COMPARE[op]
    helper_test_op([(3, 4), (3, 4)], lambda a, b: npf(np.round(a), np.round(b)), lambda a, b: tf(a.round(), b.round()),
                   out_dtype=dtypes.bool)

  @pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), ()), ((0, 2), (2,))], ids=str)
  @pytest.mark.parametrize("dtype", [np.float32, np.int32])
  def test_compare_broadcast(self, shapes, dtype):
    # all six comparisons stacked into one kernel, in the order of COMPARE
    helper_test_op(list(shapes), lambda a, b: np.stack([f[0](a, b) for f in COMPARE.values()]),
                   lambda a, b: Tensor.stack(*[f[1](a, b) for f in COMPARE.values()]), dtype=dtype, low=-3, high=3,
                   vals=None if dtype == np.int32 else _rounded(*shapes), out_dtype=dtypes.bool)

  @pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int64, np.float16])
  def test_compare_dtypes(self, dtype):
    helper_test_op([(3, 4), (4,)], lambda a, b: np.stack([f[0](a, b) for f in COMPARE.values()]),
                   lambda a, b: Tensor.stack(*[f[1](a, b) for f in COMPARE.values()]), dtype=dtype, low=0, high=3,
                   out_dtype=dtypes.bool)

  def test_compare_scalar(self):
    x = [[-1.0, 0.0, 1.0, 2.0]]
    for npf, tf in ((lambda a: a < 1, lambda a: a < 1), (lambda a: 1 < a, lambda a: 1 < a),
                    (lambda a: a >= 0, lambda a: a >= 0),
                    (lambda a: 0 >= a, lambda a: 0 >= a), (lambda a: a == 1.0, lambda a: a == 1.0),
                    (lambda a: a != 2, lambda a: a != 2), (lambda a: a > 0.5, lambda a: a > 0.5),
                    (lambda a: a <= -1, lambda a: a <= -1)):
      helper_test_op(None, npf, tf, vals=x, out_dtype=dtypes.bool)

  @pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((4,), (3, 1), ()),
                                      ((0, 2), (2,), (1,))])
  def test_where(self, shapes):
    rng = np.random.default_rng(1)
    c = rng.random(shapes[0]) < 0.5
    helper_test_op(list(shapes[1:]), lambda a, b: np.where(c, a, b), lambda a, b: Tensor(c).where(a, b))
    helper_test_op(list(shapes[1:]), lambda a, b: np.where(c, a, b), lambda a, b: Tensor.where(Tensor(c), a, b))

  def test_where_scalars_and_dtypes(self):
    c = np.array([[True, False, True], [False, False, True]])
    helper_test_op([(2, 3)], lambda a: np.where(c, a, 0.0), lambda a: Tensor(c).where(a, 0.0))
    helper_test_op([(2, 3)], lambda a: np.where(c, 1.5, a), lambda a: Tensor(c).where(1.5, a))
    helper_test_op([(2, 3)], lambda a: np.where(a > 0, a, -a), lambda a: (a > 0).where(a, -a))
    helper_test_op([(2, 3), (3,)], lambda a, b: np.where(c, a, b), lambda a, b: Tensor(c).where(a, b), dtype=np.int32,
                   low=-5, high=5)
    helper_test_op([(2, 3), (2, 3)], lambda a, b: np.where(c, a, b), lambda a, b: Tensor(c).where(a, b), dtype=np.bool_)
    helper_test_op(None, lambda a: np.where(a != 0, 2, 3), lambda a: (a != 0).where(2, 3), vals=[[0, 1, -2]],
                   dtype=np.int32)

  @pytest.mark.parametrize("lo,hi", [(-1, 1), (-0.5, None), (None, 0.5), (0, 0), (1.5, 3)])
  def test_clip(self, lo, hi):
    helper_test_op([(4, 5)], lambda x: np.clip(x, lo, hi), lambda x: x.clip(lo, hi))

  @pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.float16])
  def test_clip_dtypes(self, dtype):
    helper_test_op([(4, 5)], lambda x: np.clip(x, 2, 6), lambda x: x.clip(2, 6), dtype=dtype, low=0, high=10, atol=1e-3)

  @pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64])
  def test_neg_abs(self, dtype):
    tol = 1e-3 if dtype == np.float16 else 1e-6
    helper_test_op([(3, 4)], lambda x: np.stack([-x, np.negative(x), np.abs(x)]),
                   lambda x: Tensor.stack(-x, x.neg(), x.abs()), dtype=dtype, low=-9, high=9, atol=tol)

  def test_abs_uint(self):
    helper_test_op([(3, 4)], np.abs, lambda x: x.abs(), dtype=np.uint8, low=0, high=255)

# ---------------------------------------------------------------- unary math

def _erf(x): return np.vectorize(math.erf, otypes=[np.float64])(x)
def _softplus(x, beta=1.0): return np.logaddexp(0, beta * x.astype(np.float64)) / beta
def _sigmoid(x): return 1 / (1 + np.exp(-x.astype(np.float64)))

def _torch64(fn):
  """The reference: torch's op computed in float64 on the same inputs (numpy array in, float64 numpy array out)."""
  import torch
  return lambda x: fn(torch.from_numpy(np.asarray(x, dtype=np.float64))).numpy()

def _F():
  import torch.nn.functional as F
  return F

# name: (reference, teeny op, low, high, atol, rtol). The float32 tolerances sit just above what teeny achieves against
# torch in float64 (measured over 70k points of each range on the CPU and on PoCL): every op is within 3e-7 relative
# (1-2 ulp) with atol 1e-7, so rtol 1e-6 leaves ~3x margin. mish needs rtol 5e-6 (measured 2e-6): x*tanh(softplus(x))
# near x=-4 is a small value (-0.07) carrying the absolute error of softplus' log1p(exp(-|x|)). Exact ops are compared
# at 0.
TIGHT = (1e-7, 1e-6)
UNARY = {
  "exp": (_torch64(lambda t: t.exp()), lambda t: t.exp(), -3, 3, *TIGHT),
  "log": (_torch64(lambda t: t.log()), lambda t: t.log(), 0.05, 5, *TIGHT),
  "exp2": (_torch64(lambda t: t.exp2()), lambda t: t.exp2(), -3, 3, *TIGHT),
  "log2": (_torch64(lambda t: t.log2()), lambda t: t.log2(), 0.05, 5, *TIGHT),
  "sqrt": (_torch64(lambda t: t.sqrt()), lambda t: t.sqrt(), 0, 5, *TIGHT),
  "rsqrt": (_torch64(lambda t: t.rsqrt()), lambda t: t.rsqrt(), 0.1, 5, *TIGHT),
  "sin": (_torch64(lambda t: t.sin()), lambda t: t.sin(), -6, 6, *TIGHT),
  "cos": (_torch64(lambda t: t.cos()), lambda t: t.cos(), -6, 6, *TIGHT),
  "tan": (_torch64(lambda t: t.tan()), lambda t: t.tan(), -1.3, 1.3, *TIGHT),
  "sigmoid": (_torch64(lambda t: t.sigmoid()), lambda t: t.sigmoid(), -8, 8, *TIGHT),
  "tanh": (_torch64(lambda t: t.tanh()), lambda t: t.tanh(), -4, 4, *TIGHT),
  "relu": (_torch64(lambda t: t.relu()), lambda t: t.relu(), -2, 2, 0, 0),
  "leaky_relu": (_torch64(lambda t: _F().leaky_relu(t)), lambda t: t.leaky_relu(), -2, 2, *TIGHT),
  "leaky_relu_0.2": (_torch64(lambda t: _F().leaky_relu(t, 0.2)), lambda t: t.leaky_relu(0.2), -2, 2, *TIGHT),
  "elu": (_torch64(lambda t: _F().elu(t)), lambda t: t.elu(), -3, 3, *TIGHT),
  "elu_0.5": (_torch64(lambda t: _F().elu(t, 0.5)), lambda t: t.elu(0.5), -3, 3, *TIGHT),
  # teeny's default gelu is the exact erf form (torch's approximate="none"); the tanh form is asked for by name
  "gelu": (_torch64(lambda t: _F().gelu(t)), lambda t: t.gelu(), -3, 3, *TIGHT),
  "gelu_tanh": (_torch64(lambda t: _F().gelu(t, approximate="tanh")), lambda t: t.gelu(approximate="tanh"), -3, 3,
                *TIGHT),
  "silu": (_torch64(lambda t: _F().silu(t)), lambda t: t.silu(), -4, 4, *TIGHT),
  "softplus": (_torch64(lambda t: _F().softplus(t)), lambda t: t.softplus(), -6, 6, *TIGHT),
  "softplus_beta2": (_torch64(lambda t: _F().softplus(t, 2.0)), lambda t: t.softplus(2.0), -3, 3, *TIGHT),
  "mish": (_torch64(lambda t: _F().mish(t)), lambda t: t.mish(), -4, 4, 1e-7, 5e-6),
  "erf": (_torch64(lambda t: t.erf()), lambda t: t.erf(), -3, 3, *TIGHT),
  "sign": (_torch64(lambda t: t.sign()), lambda t: t.sign(), -2, 2, 0, 0),
  "reciprocal": (_torch64(lambda t: t.reciprocal()), lambda t: t.reciprocal(), 0.2, 3, *TIGHT),
  "floor": (_torch64(lambda t: t.floor()), lambda t: t.floor(), -4, 4, 0, 0),
  "ceil": (_torch64(lambda t: t.ceil()), lambda t: t.ceil(), -4, 4, 0, 0),
  "trunc": (_torch64(lambda t: t.trunc()), lambda t: t.trunc(), -4, 4, 0, 0),
  "round": (_torch64(lambda t: t.round()), lambda t: t.round(), -4, 4, 0, 0),
}

class TestUnary:
  @pytest.mark.parametrize("name", list(UNARY))
  @pytest.mark.parametrize("shape", [(3, 5), (0, 4)])
  def test_unary(self, name, shape):
    npf, tf, lo, hi, atol, rtol = UNARY[name]
    helper_test_op([shape], lambda x: npf(x).astype(np.float32), tf, low=lo, high=hi, atol=atol, rtol=rtol,
                   out_dtype=dtypes.float32)

  @pytest.mark.parametrize("name", ["exp", "sin", "relu", "gelu", "round"])
  def test_unary_scalar(self, name):
    npf, tf, lo, hi, atol, rtol = UNARY[name]
    helper_test_op([()], lambda x: npf(x).astype(np.float32), tf, low=lo, high=hi, atol=atol, rtol=rtol,
                   out_dtype=dtypes.float32)

  @pytest.mark.parametrize("name,dtype", [(n, np.float16) for n in ("exp", "log", "sqrt", "sin", "sigmoid", "tanh",
                                                                    "relu", "gelu", "floor", "round", "erf")] +
                                         [(n, np.float64) for n in ("exp", "log", "sin", "erf", "gelu")])
  def test_unary_dtypes(self, name, dtype):
    npf, tf, lo, hi, atol, rtol = UNARY[name]
    # float16: half an ulp is 2^-11; float64 at least as good as float32
    tol = 2e-3 if dtype == np.float16 else max(atol, 1e-7)
    helper_test_op([(4, 6)], lambda x: npf(x).astype(dtype), tf, low=lo, high=hi, dtype=dtype, atol=tol, rtol=tol,
                   out_dtype=dtypes.from_np(np.dtype(dtype)))

  @needs_values
  @pytest.mark.parametrize("name", ["exp", "sin", "gelu", "mish"])
  def test_unary_tolerance_rejects_perturbed_result(self, name):
    """Negative control: the comparison each unary test makes fails on a result off by 2% or by 1e-5 relative (10x the
    per-op rtol), so the per-op tolerances are what is applied, not a looser helper default."""
    npf, tf, lo, hi, atol, rtol = UNARY[name]
    # unperturbed passes
    helper_test_op([(3, 5)], lambda x: npf(x).astype(np.float32), tf, low=lo, high=hi, atol=atol, rtol=rtol)
    for scale in (1.02, 1 + 10 * max(rtol, 1e-6)):
      with pytest.raises(AssertionError, match="Not equal to tolerance"):
        helper_test_op([(3, 5)], lambda x: (npf(x) * scale).astype(np.float32), tf, low=lo, high=hi, atol=atol,
                       rtol=rtol)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):  # the helper's own defaults are as strict
      helper_test_op([(3, 5)], lambda x: (npf(x) * 1.02).astype(np.float32), tf, low=lo, high=hi)

  @needs_values
  def test_gelu_forms_match_their_torch_form(self):
    """teeny's gelu() is torch's approximate="none" (erf), gelu(approximate="tanh") is torch's tanh form; the tolerance
    is tight enough to tell the two forms apart, so each form fails against the other's reference."""
    F = _F()
    import torch
    x = np.linspace(-3, 3, 601, dtype=np.float32)
    ref = {a: F.gelu(torch.from_numpy(x.astype(np.float64)), approximate=a).numpy() for a in ("none", "tanh")}
    atol, rtol = UNARY["gelu"][4:]
    assert UNARY["gelu_tanh"][4:] == (atol, rtol)
    apart = np.abs(ref["none"] - ref["tanh"]) > 10 * (atol + rtol * np.abs(ref["none"]))
    assert apart.sum() > 100, "the erf and tanh forms must differ by much more than the tolerance"
    for a, fn in (("none", lambda t: t.gelu()), ("tanh", lambda t: t.gelu(approximate="tanh"))):
      other = "tanh" if a == "none" else "none"
      helper_test_op(None, lambda v: ref[a].astype(np.float32), fn, vals=[x], atol=atol, rtol=rtol)
      with pytest.raises(AssertionError, match="Not equal to tolerance"):
        helper_test_op(None, lambda v: ref[other].astype(np.float32), fn, vals=[x], atol=atol, rtol=rtol)

  @pytest.mark.parametrize("name", ["negative", "reciprocal", "sign", "sigmoid"])
  def test_unary_negative_inputs(self, name):
    npf = {"negative": np.negative, "reciprocal": np.reciprocal, "sign": np.sign, "sigmoid": _sigmoid}[name]
    helper_test_op([(3, 4)], lambda x: npf(x).astype(np.float32),
                   lambda t: getattr(t, "neg" if name == "negative" else name)(), low=-3, high=-0.2, atol=1e-6)

  def test_round_half_even(self):
    v = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.4, 0.6, -0.6, 1.49, 2.51, 0.0]
    helper_test_op(None, np.round, lambda x: x.round(), vals=[v])
    helper_test_op(None, np.floor, lambda x: x.floor(), vals=[v])
    helper_test_op(None, np.ceil, lambda x: x.ceil(), vals=[v])
    helper_test_op(None, np.trunc, lambda x: x.trunc(), vals=[v])

  def test_sign_zero(self):
    helper_test_op(None, np.sign, lambda x: x.sign(), vals=[[-2.0, -0.0, 0.0, 3.0]])
    helper_test_op(None, np.sign, lambda x: x.sign(), vals=[[-2, 0, 5]], dtype=np.int32)

  def test_extremes_stable(self):
    v = [[-100.0, -30.0, -1.0, 0.0, 1.0, 30.0, 100.0]]
    helper_test_op(None, lambda x: _sigmoid(x).astype(np.float32), lambda x: x.sigmoid(), vals=v, atol=1e-6)
    helper_test_op(None, np.tanh, lambda x: x.tanh(), vals=v, atol=1e-6)
    helper_test_op(None, lambda x: np.maximum(x, 0), lambda x: x.relu(), vals=v)
    helper_test_op(None, lambda x: (x * _sigmoid(x)).astype(np.float32), lambda x: x.silu(), vals=v, atol=1e-5)

  def test_sqrt_log_edge(self):
    helper_test_op(None, np.sqrt, lambda x: x.sqrt(), vals=[[0.0, 1.0, 4.0, 1e-8]])
    helper_test_op(None, np.log, lambda x: x.log(), vals=[[0.0, 1.0, math.e]], atol=1e-6)
    helper_test_op(None, np.exp, lambda x: x.exp(), vals=[[0.0, 1.0, -100.0]], atol=1e-6)

  def test_isnan_isinf(self):
    v = [[np.nan, np.inf, -np.inf, 0.0, 1.0, -2.5]]
    helper_test_op(None, np.isnan, lambda x: x.isnan(), vals=v, out_dtype=dtypes.bool)
    helper_test_op(None, np.isinf, lambda x: x.isinf(), vals=v, out_dtype=dtypes.bool)
    helper_test_op(None, np.isnan, lambda x: x.isnan(), vals=v, dtype=np.float16, out_dtype=dtypes.bool)
    helper_test_op(None, np.isinf, lambda x: x.isinf(), vals=v, dtype=np.float64, out_dtype=dtypes.bool)
    helper_test_op(None, lambda x: np.isnan(np.log(x)), lambda x: x.log().isnan(), vals=[[-1.0, 1.0, 0.0]],
                   out_dtype=dtypes.bool)

  @pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "relu", "sigmoid"])
  def test_unary_int_input_gives_float(self, name):
    npf, tf, *_ = UNARY[name]
    helper_test_op([(3, 4)], lambda x: npf(x.astype(np.float32)), tf, dtype=np.int32, low=0, high=4, atol=1e-5,
                   out_dtype=dtypes.float32 if name != "relu" else dtypes.int32)

# ---------------------------------------------------------------- bitwise / logical

BIT_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32]

class TestBitwise:
  @pytest.mark.parametrize("dtype", BIT_DTYPES)
  def test_binary(self, dtype):
    # [&, |, ^] stacked into one kernel
    npf = lambda a, b: np.stack([a & b, a | b, a ^ b])
    tf = lambda a, b: Tensor.stack(a & b, a | b, a ^ b)
    helper_test_op([(3, 4), (4,)], npf, tf, dtype=dtype, low=-50, high=100)
    if dtype in (np.bool_, np.int32): helper_test_op([(3, 1), (1, 4)], npf, tf, dtype=dtype, low=0, high=100)

  @pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
  def test_scalar(self, dtype):
    helper_test_op([(8,)], lambda a: np.stack([a & 6, 6 | a, a ^ 5, 3 & a]),
                   lambda a: Tensor.stack(a & 6, 6 | a, a ^ 5, 3 & a), dtype=dtype, low=0, high=100)

  def test_bool_scalar(self):
    helper_test_op([(8,)], lambda a: a & True, lambda a: a & True, dtype=np.bool_)
    helper_test_op([(8,)], lambda a: a | False, lambda a: a | False, dtype=np.bool_)
    helper_test_op([(8,)], lambda a: a ^ True, lambda a: a ^ True, dtype=np.bool_)

  @pytest.mark.parametrize("dtype", BIT_DTYPES)
  def test_invert(self, dtype):
    helper_test_op([(3, 4)], np.invert, lambda a: ~a, dtype=dtype, low=-50, high=100)

  @pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
  @pytest.mark.parametrize("n", [1, 3])
  def test_shifts(self, dtype, n):
    helper_test_op([(3, 4)], lambda a: np.stack([a << n, a >> n]), lambda a: Tensor.stack(a << n, a >> n), dtype=dtype,
                   low=0, high=15)
    helper_test_op([(3, 4)], lambda a: a >> n, lambda a: a >> n, dtype=dtype, low=0, high=120)

  @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
  def test_shifts_negative(self, dtype):
    v = [[-1, -2, -7, -8, -64, 5, 0]]
    helper_test_op(None, lambda a: a >> 1, lambda a: a >> 1, vals=v, dtype=dtype)
    helper_test_op(None, lambda a: a >> 2, lambda a: a >> 2, vals=v, dtype=dtype)
    helper_test_op(None, lambda a: a << 1, lambda a: a << 1, vals=v, dtype=dtype)

  def test_uint_shift_wraps(self):
    helper_test_op(None, lambda a: a << 1, lambda a: a << 1, vals=[[200, 128, 127, 1]], dtype=np.uint8)

  @pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.uint8])
  def test_logical_not(self, dtype):
    helper_test_op(None, np.logical_not, lambda a: a.logical_not(), vals=[[0, 1, 2, 0, 1]], dtype=dtype,
                   out_dtype=dtypes.bool)

# ---------------------------------------------------------------- reduce

AXES = [None, 0, 1, -1, (0, 2), (-1, -3), (1, 2), (0, 1, 2)]

def _var(x, axis, keepdims, ddof=1): return np.var(x.astype(np.float64), axis=axis, keepdims=keepdims, ddof=ddof)
def _std(x, axis, keepdims, ddof=1): return np.std(x.astype(np.float64), axis=axis, keepdims=keepdims, ddof=ddof)
def _lse(x, axis, keepdims):
  x = x.astype(np.float64)
  m = np.max(x, axis=axis, keepdims=True)
  out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
  return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())

REDUCE = {
  "sum": (np.sum, -2, 2, 1e-5), "prod": (np.prod, 0.6, 1.4, 1e-5), "max": (np.max, -2, 2, 0), "min": (np.min, -2, 2, 0),
  "mean": (np.mean, -2, 2, 1e-6), "var": (_var, -2, 2, 1e-5), "std": (_std, -2, 2, 1e-5),
  "logsumexp": (_lse, -2, 2, 1e-5),
}

REDUCE_CASES = [(n, a) for n in ("sum", "max", "mean") for a in AXES] + \
               [(n, a) for n in ("prod", "min", "var", "std", "logsumexp") for a in (None, 1, -1, (-1, -3))]

class TestReduce:
  @pytest.mark.parametrize("keepdim", [False, True])
  @pytest.mark.parametrize("name,axis", REDUCE_CASES, ids=str)
  def test_reduce(self, name, axis, keepdim):
    npf, lo, hi, atol = REDUCE[name]
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=axis, keepdims=keepdim).astype(np.float32),
                   lambda x: getattr(x, name)(axis=axis, keepdim=keepdim), low=lo, high=hi, atol=atol, rtol=1e-4,
                   out_dtype=dtypes.float32)

  @pytest.mark.parametrize("name", list(REDUCE))
  def test_reduce_positional_and_default(self, name):
    npf, lo, hi, atol = REDUCE[name]
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=1, keepdims=False), lambda x: getattr(x, name)(1), low=lo,
                   high=hi, atol=atol, rtol=1e-4)
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=None, keepdims=False), lambda x: getattr(x, name)(), low=lo,
                   high=hi, atol=atol, rtol=1e-4)

  @pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "std", "var", "logsumexp", "prod"])
  def test_reduce_dim_alias(self, name):
    npf, lo, hi, atol = REDUCE[name]
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=1, keepdims=True),
                   lambda x: getattr(x, name)(dim=1, keepdim=True), low=lo, high=hi, atol=atol, rtol=1e-4)
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=-1, keepdims=False), lambda x: getattr(x, name)(dim=-1), low=lo,
                   high=hi, atol=atol, rtol=1e-4)

  def test_max_returns_values_only(self):
    t = Tensor([[1.0, 5.0], [3.0, 2.0]])
    for out in (t.max(axis=1), t.max(dim=1), t.max(1), t.min(axis=0)):
      assert isinstance(out, Tensor) and out.shape == (2,)

  @pytest.mark.parametrize("correction", [0, 1, 2])
  def test_var_std_correction(self, correction):
    helper_test_op([(4, 6)], lambda x: _var(x, 1, False, correction), lambda x: x.var(axis=1, correction=correction),
                   atol=1e-5)
    helper_test_op([(4, 6)], lambda x: _std(x, None, False, correction), lambda x: x.std(correction=correction),
                   atol=1e-5)

  @pytest.mark.parametrize("name", ["sum", "max", "prod"])
  @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float16, np.float64])
  def test_reduce_dtypes(self, name, dtype):
    npf = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[name]
    lo, hi = (1, 3) if name == "prod" else (-20, 20)
    tol = 1e-2 if dtype == np.float16 else 1e-6
    helper_test_op([(3, 5)], lambda x: npf(x, axis=1), lambda x: getattr(x, name)(axis=1), dtype=dtype, low=lo, high=hi,
                   atol=tol, rtol=tol)
    if name == "sum": helper_test_op([(3, 5)], npf, lambda x: x.sum(), dtype=dtype, low=lo, high=hi, atol=tol, rtol=tol)

  # bools and ints sum in int64, as in torch (test_dtype_parity.py checks them against torch)
  @pytest.mark.parametrize("dtype,want", [(np.bool_, dtypes.int64), (np.int8, dtypes.int64), (np.int16, dtypes.int64),
                                          (np.int32, dtypes.int64), (np.int64, dtypes.int64),
                                          (np.float16, dtypes.float16),
                                          (np.float32, dtypes.float32), (np.float64, dtypes.float64)])
  def test_sum_dtype(self, dtype, want):
    helper_test_op([(4, 40)], lambda x: np.sum(x.astype(np.float64), axis=1), lambda x: x.sum(axis=1), dtype=dtype,
                   low=-100, high=100, out_dtype=want, atol=1e-2 if dtype == np.float16 else 1e-5,
                   rtol=1e-2 if dtype == np.float16 else 1e-5)

  def test_sum_int8_no_overflow(self):
    helper_test_op(None, lambda x: np.sum(x, dtype=np.int64), lambda x: x.sum(), vals=[[100] * 10], dtype=np.int8,
                   out_dtype=dtypes.int64)
    helper_test_op(None, lambda x: np.sum(x, dtype=np.int64), lambda x: x.sum(), vals=[[True] * 300], dtype=np.bool_,
                   out_dtype=dtypes.int64)

  @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.bool_])
  def test_mean_int_is_float(self, dtype):
    helper_test_op([(3, 6)], lambda x: np.mean(x, axis=1), lambda x: x.mean(axis=1), dtype=dtype, low=0, high=50,
                   out_dtype=dtypes.float32, atol=1e-5)
    helper_test_op([(3, 6)], lambda x: np.mean(x), lambda x: x.mean(), dtype=dtype, low=0, high=50,
                   out_dtype=dtypes.float32, atol=1e-5)

  @pytest.mark.parametrize("name", ["argmax", "argmin"])
  @pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2])
  def test_argmax_argmin(self, name, axis):
    npf = getattr(np, name)
    helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=axis), lambda x: getattr(x, name)(axis=axis))
    if axis is not None:
      helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=axis, keepdims=True),
                     lambda x: getattr(x, name)(axis=axis, keepdim=True))
      helper_test_op([(3, 4, 5)], lambda x: npf(x, axis=axis), lambda x: getattr(x, name)(dim=axis))

  @pytest.mark.parametrize("name", ["argmax", "argmin"])
  def test_argmax_ties_first(self, name):
    v = [[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, 4, -5]]
    helper_test_op(None, lambda x: getattr(np, name)(x, axis=1), lambda x: getattr(x, name)(axis=1), vals=[v],
                   dtype=np.int32)
    helper_test_op(None, lambda x: getattr(np, name)(x, axis=0), lambda x: getattr(x, name)(axis=0), vals=[v],
                   dtype=np.float32)
    helper_test_op(None, lambda x: getattr(np, name)(x), lambda x: getattr(x, name)(), vals=[v], dtype=np.int8)

  def test_argmax_dtype_is_int(self):
    out = Tensor([[1.0, 2.0], [3.0, 0.0]]).argmax(axis=1)
    assert dtypes.is_int(out.dtype)

  @pytest.mark.parametrize("name", ["any", "all"])
  @pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)], ids=str)
  @pytest.mark.parametrize("keepdim", [False, True])
  def test_any_all(self, name, axis, keepdim):
    v = np.array([[True, False, False], [True, True, True], [False, False, False], [True, False, True]])
    npf = getattr(np, name)
    helper_test_op(None, lambda x: npf(x, axis=axis, keepdims=keepdim),
                   lambda x: getattr(x, name)(axis=axis, keepdim=keepdim), vals=[v], out_dtype=dtypes.bool)
    if axis in (None, 1):
      helper_test_op(None, lambda x: npf(x, axis=axis, keepdims=keepdim),
                     lambda x: getattr(x, name)(axis=axis, keepdim=keepdim),
                     vals=[v.astype(np.int32) * 3], out_dtype=dtypes.bool)
      helper_test_op(None, lambda x: npf(x, axis=axis, keepdims=keepdim),
                     lambda x: getattr(x, name)(axis=axis, keepdim=keepdim),
                     vals=[v.astype(np.float32) * -0.5], out_dtype=dtypes.bool)

  @pytest.mark.parametrize("name", ["softmax", "log_softmax"])
  @pytest.mark.parametrize("axis", [0, 1, -1, 2, -3])
  def test_softmax(self, name, axis):
    def ref(x):
      e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
      s = e / e.sum(axis=axis, keepdims=True)
      return (s if name == "softmax" else np.log(s)).astype(np.float32)
    helper_test_op([(3, 4, 5)], ref, lambda x: getattr(x, name)(axis), atol=1e-6, rtol=1e-4)
    helper_test_op([(3, 4, 5)], ref, lambda x: getattr(x, name)(axis=axis), atol=1e-6, rtol=1e-4)
    helper_test_op([(3, 4, 5)], ref, lambda x: getattr(x, name)(dim=axis), atol=1e-6, rtol=1e-4)

  def test_softmax_default_axis_is_last(self):
    def ref(x):
      e = np.exp(x - x.max(axis=-1, keepdims=True))
      return e / e.sum(axis=-1, keepdims=True)
    helper_test_op([(3, 4)], ref, lambda x: x.softmax(), atol=1e-6)
    helper_test_op([(3, 4)], lambda x: np.log(ref(x)), lambda x: x.log_softmax(), atol=1e-5)

  def test_softmax_logsumexp_stable(self):
    v = [[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -999.0], [0.0, 80.0, -80.0]]
    def sm(x):
      e = np.exp(x - x.max(axis=1, keepdims=True))
      return e / e.sum(axis=1, keepdims=True)
    helper_test_op(None, sm, lambda x: x.softmax(1), vals=[v], atol=1e-6)
    helper_test_op(None, lambda x: np.log(sm(x.astype(np.float64))), lambda x: x.log_softmax(1), vals=[v], atol=1e-5)
    helper_test_op(None, lambda x: _lse(x, 1, False), lambda x: x.logsumexp(1), vals=[v], atol=1e-4)

  @pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
  def test_cumsum(self, axis):
    helper_test_op([(3, 4, 5)], lambda x: np.cumsum(x, axis=axis), lambda x: x.cumsum(axis), atol=1e-5)
    helper_test_op([(3, 4, 5)], lambda x: np.cumsum(x, axis=axis), lambda x: x.cumsum(axis=axis), atol=1e-5)

  def test_cumsum_1d_and_dtypes(self):
    helper_test_op([(1,)], lambda x: np.cumsum(x), lambda x: x.cumsum(0))
    helper_test_op([(100,)], lambda x: np.cumsum(x), lambda x: x.cumsum(), atol=1e-4)
    helper_test_op([(0,)], lambda x: np.cumsum(x), lambda x: x.cumsum())
    helper_test_op([(4, 6)], lambda x: np.cumsum(x, axis=1), lambda x: x.cumsum(dim=1), dtype=np.int32, low=-9, high=9)
    helper_test_op([(4, 6)], lambda x: np.cumsum(x, axis=1), lambda x: x.cumsum(1), dtype=np.float16, atol=1e-2,
                   rtol=1e-2)

  @pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
  def test_zero_size(self, name):
    npf = getattr(np, name)
    helper_test_op([(0, 3)], lambda x: npf(x, axis=1), lambda x: getattr(x, name)(axis=1))
    if name not in ("max", "min"):
      helper_test_op([(0, 3)], lambda x: npf(x, axis=0), lambda x: getattr(x, name)(axis=0))
      helper_test_op([(0, 3)], lambda x: npf(x), lambda x: getattr(x, name)())
      helper_test_op([(2, 0, 3)], lambda x: npf(x, axis=(0, 1), keepdims=True),
                     lambda x: getattr(x, name)(axis=(0, 1), keepdim=True))

  def test_reduce_scalar_tensor(self):
    helper_test_op([()], lambda x: np.sum(x), lambda x: x.sum())
    helper_test_op([()], lambda x: np.max(x), lambda x: x.max())
    helper_test_op([()], lambda x: np.mean(x), lambda x: x.mean())

  def test_reduce_big_axis(self):
    helper_test_op([(3, 1000)], lambda x: np.sum(x, axis=1), lambda x: x.sum(axis=1), atol=1e-3)
    helper_test_op([(2000,)], lambda x: np.max(x), lambda x: x.max())
    helper_test_op([(1000, 3)], lambda x: np.mean(x, axis=0), lambda x: x.mean(axis=0), atol=1e-5)

# ---------------------------------------------------------------- movement

class TestMovement:
  @pytest.mark.parametrize("src,dst", [((2, 3, 4), (6, 4)), ((2, 3, 4), (24,)), ((2, 3, 4), (4, -1)),
                                       ((2, 3, 4), (-1,)), ((2, 3, 4), (2, 1, 12, 1)), ((6,), (2, 3)), ((), (1, 1)),
                                       ((1,), ()), ((0, 3), (3, 0)), ((0, 3), (-1, 3)), ((2, 3, 4), (3, -1, 2))])
  def test_reshape(self, src, dst):
    helper_test_op([src], lambda x: x.reshape(dst), lambda x: x.reshape(dst))
    if dst: helper_test_op([src], lambda x: x.reshape(dst), lambda x: x.reshape(*dst))
    helper_test_op([src], lambda x: x.reshape(dst), lambda x: x.view(dst))
    if dst: helper_test_op([src], lambda x: x.reshape(dst), lambda x: x.view(*dst))

  @pytest.mark.parametrize("src,dst", [((3, 1), (3, 4)), ((1,), (5,)), ((1, 4), (3, 4)), ((3, 1), (2, 3, 4)),
                                       ((), (2, 2)), ((2, 1, 3), (2, 5, 3)), ((3, 1), (-1, 4)), ((1, 3), (0, 3))])
  def test_expand(self, src, dst):
    full = tuple(s if d == -1 else d for s, d in zip((1,) * (len(dst) - len(src)) + src, dst))
    helper_test_op([src], lambda x: np.broadcast_to(x, full), lambda x: x.expand(dst))
    helper_test_op([src], lambda x: np.broadcast_to(x, full), lambda x: x.expand(*dst))

  @pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0), (-1, 0, 1), (0, -1, -2)])
  def test_permute(self, order):
    helper_test_op([(2, 3, 4)], lambda x: np.transpose(x, order), lambda x: x.permute(order))
    helper_test_op([(2, 3, 4)], lambda x: np.transpose(x, order), lambda x: x.permute(*order))

  def test_permute_zero_size(self):
    helper_test_op([(0, 3, 2)], lambda x: np.transpose(x, (2, 0, 1)), lambda x: x.permute(2, 0, 1))

  @pytest.mark.parametrize("d0,d1", [(0, 1), (1, 0), (0, 2), (-1, -2), (1, 1), (-3, 2)])
  def test_transpose(self, d0, d1):
    helper_test_op([(2, 3, 4)], lambda x: np.swapaxes(x, d0, d1), lambda x: x.transpose(d0, d1))

  def test_T(self):
    helper_test_op([(3, 5)], lambda x: x.T, lambda x: x.T)
    helper_test_op([(3, 5)], lambda x: x.T.T, lambda x: x.T.T)
    helper_test_op([(0, 5)], lambda x: x.T, lambda x: x.T)

  @pytest.mark.parametrize("start,end", [(0, -1), (1, -1), (0, 1), (1, 2), (2, 3), (-2, -1), (0, 0), (3, 3)])
  def test_flatten(self, start, end):
    def ref(x):
      s, e = start % x.ndim, end % x.ndim
      return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])
    helper_test_op([(2, 3, 4, 5)], ref, lambda x: x.flatten(start, end))
    helper_test_op([(2, 3, 4, 5)], ref, lambda x: x.flatten(start_dim=start, end_dim=end))

  def test_flatten_default(self):
    helper_test_op([(2, 3, 4)], lambda x: x.reshape(-1), lambda x: x.flatten())
    helper_test_op([()], lambda x: x.reshape(1), lambda x: x.flatten())
    helper_test_op([(0, 4)], lambda x: x.reshape(-1), lambda x: x.flatten())

  @pytest.mark.parametrize("dim,sizes,shape", [(1, (3, 4), (2, 3, 4, 5)), (0, (1, 2), (1, 2, 12, 5)),
                                               (-1, (5, 1), (2, 12, 5, 1)),
                                               (1, (2, -1), (2, 2, 6, 5)), (-2, (12,), (2, 12, 5))])
  def test_unflatten(self, dim, sizes, shape):
    helper_test_op([(2, 12, 5)], lambda x: x.reshape(shape), lambda x: x.unflatten(dim, sizes))

  @pytest.mark.parametrize("dim", [0, 2, -1, -3, 1])
  def test_squeeze(self, dim):
    ref = (lambda x: x.squeeze(dim)) if (1, 3, 1, 4, 1)[dim] == 1 else (lambda x: x)
    helper_test_op([(1, 3, 1, 4, 1)], ref, lambda x: x.squeeze(dim))
    helper_test_op([(1, 3, 1, 4, 1)], ref, lambda x: x.squeeze(dim=dim))

  def test_squeeze_all(self):
    helper_test_op([(1, 3, 1, 4, 1)], lambda x: x.squeeze(), lambda x: x.squeeze())
    helper_test_op([(1, 1)], lambda x: x.squeeze(), lambda x: x.squeeze())
    helper_test_op([(3, 4)], lambda x: x.squeeze(), lambda x: x.squeeze())
    helper_test_op([()], lambda x: x.squeeze(), lambda x: x.squeeze())

  @pytest.mark.parametrize("dim", [0, 1, 2, 3, -1, -2, -4])
  def test_unsqueeze(self, dim):
    helper_test_op([(2, 3, 4)], lambda x: np.expand_dims(x, dim), lambda x: x.unsqueeze(dim))

  def test_unsqueeze_scalar(self):
    helper_test_op([()], lambda x: np.expand_dims(x, 0), lambda x: x.unsqueeze(0))
    helper_test_op([()], lambda x: np.expand_dims(x, -1), lambda x: x.unsqueeze(-1))

  @pytest.mark.parametrize("pads", [((1, 2), (0, 3)), ((0, 0), (0, 0)), ((2, 0), (0, 1)), ((0, 0), (4, 4))])
  def test_pad_pairs(self, pads):
    helper_test_op([(3, 4)], lambda x: np.pad(x, pads), lambda x: x.pad(pads))
    helper_test_op([(3, 4)], lambda x: np.pad(x, pads, constant_values=-1.5), lambda x: x.pad(pads, value=-1.5))

  @pytest.mark.parametrize("flat,pads", [((1, 2), ((0, 0), (0, 0), (1, 2))), ((1, 2, 3, 4), ((0, 0), (3, 4), (1, 2))),
                                         ((0, 1, 1, 0, 2, 2), ((2, 2), (1, 0), (0, 1)))])
  def test_pad_flat_torch_order(self, flat, pads):
    helper_test_op([(2, 3, 4)], lambda x: np.pad(x, pads), lambda x: x.pad(flat))
    helper_test_op([(2, 3, 4)], lambda x: np.pad(x, pads, constant_values=2), lambda x: x.pad(flat, value=2))

  @pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.uint8])
  def test_pad_dtypes(self, dtype):
    helper_test_op([(3, 4)], lambda x: np.pad(x, ((1, 1), (2, 0))), lambda x: x.pad(((1, 1), (2, 0))), dtype=dtype,
                   low=0, high=9)
    helper_test_op([(3, 4)], lambda x: np.pad(x, ((1, 1), (2, 0)), constant_values=1),
                   lambda x: x.pad(((1, 1), (2, 0)), value=1), dtype=dtype, low=0, high=9)

  def test_pad_zero_size(self):
    helper_test_op([(0, 3)], lambda x: np.pad(x, ((1, 1), (0, 0))), lambda x: x.pad(((1, 1), (0, 0))))
    helper_test_op([(0, 3)], lambda x: np.pad(x, ((0, 0), (1, 1))), lambda x: x.pad(((0, 0), (1, 1))))

  @pytest.mark.parametrize("arg", [((1, 3), (0, 2)), ((0, 4), (0, 5)), ((2, 2), (1, 4)), ((3, 4), (4, 5))])
  def test_shrink(self, arg):
    helper_test_op([(4, 5)], lambda x: x[arg[0][0]:arg[0][1], arg[1][0]:arg[1][1]], lambda x: x.shrink(arg))

  @pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 1), (0, 2), (-1, -2, -3)], ids=str)
  def test_flip(self, axis):
    helper_test_op([(2, 3, 4)], lambda x: np.flip(x, axis), lambda x: x.flip(axis))

  def test_flip_variants(self):
    helper_test_op([(2, 3, 4)], lambda x: np.flip(x, (0, 2)), lambda x: x.flip(0, 2))
    helper_test_op([(2, 3, 4)], lambda x: x, lambda x: x.flip(1).flip(1))
    helper_test_op([(0, 3)], lambda x: np.flip(x, 1), lambda x: x.flip(1))
    helper_test_op([(5,)], lambda x: x[::-1], lambda x: x.flip(0), dtype=np.int32, low=-9, high=9)

  @pytest.mark.parametrize("reps", [(1, 1), (2, 3), (1, 2), (3, 1), (2, 1, 3), (2, 2, 2, 1), (0, 2)])
  def test_repeat(self, reps):
    helper_test_op([(2, 3)], lambda x: np.tile(x, reps), lambda x: x.repeat(*reps))
    helper_test_op([(2, 3)], lambda x: np.tile(x, reps), lambda x: x.repeat(reps))

  @pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
  def test_cat(self, dim):
    shapes = [tuple(k if i == dim % 3 else s for i, s in enumerate((2, 3, 4))) for k in (1, 2, 3)]
    helper_test_op(shapes, lambda a, b, c: np.concatenate([a, b, c], axis=dim),
                   lambda a, b, c: Tensor.cat(a, b, c, dim=dim))
    helper_test_op(shapes, lambda a, b, c: np.concatenate([a, b, c], axis=dim), lambda a, b, c: a.cat(b, c, dim=dim))
    helper_test_op(shapes[:2], lambda a, b: np.concatenate([a, b], axis=dim), lambda a, b: a.cat(b, dim=dim))

  def test_cat_edge(self):
    helper_test_op([(2, 3), (0, 3)], lambda a, b: np.concatenate([a, b]), lambda a, b: Tensor.cat(a, b))
    helper_test_op([(0, 3), (0, 3)], lambda a, b: np.concatenate([a, b]), lambda a, b: Tensor.cat(a, b, dim=0))
    helper_test_op([(2, 3)], lambda a: np.concatenate([a]), lambda a: Tensor.cat(a))
    helper_test_op([(2, 3)], lambda a: np.concatenate([a, a], 1), lambda a: a.cat(a, dim=1))
    helper_test_op([(4,), (2,)], lambda a, b: np.concatenate([a, b]), lambda a, b: a.cat(b), dtype=np.int32,
                   low=-9, high=9)
    helper_test_op([(2,), (2,)], lambda a, b: np.concatenate([a, b]), lambda a, b: a.cat(b), dtype=np.bool_)

  @pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
  def test_stack(self, dim):
    helper_test_op([(3, 4), (3, 4), (3, 4)], lambda a, b, c: np.stack([a, b, c], axis=dim),
                   lambda a, b, c: Tensor.stack(a, b, c, dim=dim))
    helper_test_op([(3, 4), (3, 4)], lambda a, b: np.stack([a, b], axis=dim), lambda a, b: a.stack(b, dim=dim))

  def test_stack_edge(self):
    helper_test_op([(3,)], lambda a: np.stack([a]), lambda a: Tensor.stack(a))
    helper_test_op([(), ()], lambda a, b: np.stack([a, b]), lambda a, b: Tensor.stack(a, b))
    helper_test_op([(0, 2), (0, 2)], lambda a, b: np.stack([a, b], 1), lambda a, b: Tensor.stack(a, b, dim=1))

  @staticmethod
  def _np_split(x, sizes, dim):
    if isinstance(sizes, int): sizes = [min(sizes, x.shape[dim] - i) for i in range(0, x.shape[dim], sizes)]
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim))

  @pytest.mark.parametrize("sizes,dim", [(2, 0), (3, 0), (1, 1), (4, 1), (5, 1), ([1, 2, 3], 0), ([2, 2], -1), ([4], 1),
                                         ([0, 6], 0), (2, -2)])
  def test_split(self, sizes, dim):
    helper_test_op([(6, 4)], lambda x: self._np_split(x, sizes, dim), lambda x: tuple(x.split(sizes, dim)))
    helper_test_op([(6, 4)], lambda x: self._np_split(x, sizes, dim), lambda x: tuple(x.split(sizes, dim=dim)))

  @pytest.mark.parametrize("n,dim", [(2, 0), (3, 0), (4, 0), (6, 0), (1, 1), (2, 1), (3, -1), (7, 0)])
  def test_chunk(self, n, dim):
    def ref(x):
      size = -(-x.shape[dim] // n)
      return self._np_split(x, size, dim)
    helper_test_op([(7, 4)], ref, lambda x: tuple(x.chunk(n, dim)))
    helper_test_op([(7, 4)], ref, lambda x: tuple(x.chunk(n, dim=dim)))

  def test_chunk_even(self):
    helper_test_op([(6, 4)], lambda x: tuple(np.split(x, 3)), lambda x: tuple(x.chunk(3)))
    helper_test_op([(6, 4)], lambda x: tuple(np.split(x, 2, axis=1)), lambda x: tuple(x.chunk(2, 1)))

# ---------------------------------------------------------------- indexing

IDX = np.array([0, 2, 3])

class TestGetitem:
  @pytest.mark.parametrize("idx", [
    1, -1, (1, 2), (1, -2, 3), (-4, 0, -6), slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    slice(-3, None), slice(2, 100), slice(10, None), slice(-100, 2), (slice(None), slice(1, 4, 2)), (Ellipsis, 1),
    None, (slice(None), None, 2), (Ellipsis, None), (1, Ellipsis, slice(None, None, -1)), (None, 1, None, slice(1, 3)),
    (slice(None, None, -2), slice(None, None, -3), slice(4, 0, -1)), (slice(1, 2), 3, slice(None)), Ellipsis,
    (slice(None, None, -1), Ellipsis, 0), (slice(3, 1), ), (slice(0, 0), 1),
  ], ids=str)
  def test_basic(self, idx):
    helper_test_op([(4, 5, 6)], lambda x: x[idx], lambda x: x[idx])

  def test_scalar_result_and_dtypes(self):
    helper_test_op([(3, 4)], lambda x: x[1, 2], lambda x: x[1, 2])
    helper_test_op([(3, 4)], lambda x: x[-1][-1], lambda x: x[-1][-1])
    helper_test_op([(3, 4)], lambda x: x[1:, ::-1], lambda x: x[1:, ::-1], dtype=np.int32, low=-9, high=9)
    helper_test_op([(3, 4)], lambda x: x[::2, 1], lambda x: x[::2, 1], dtype=np.bool_)

  @pytest.mark.parametrize("case", ["rows", "cols", "2d", "pair", "pair_bcast", "split_adv", "neg", "last", "repeat",
                                    "int_and_tensor", "slice_then_tensor", "scalar_tensor"])
  def test_tensor_index(self, case):
    i2 = np.array([[0, 1], [2, 3]])
    ia, ib = np.array([0, 1, 3]), np.array([2, 4, 0])
    col, row = np.array([[0], [3]]), np.array([1, 2, 5])
    refs = {
      "rows": (lambda x: x[IDX], lambda x: x[Tensor(IDX)]),
      "cols": (lambda x: x[:, IDX], lambda x: x[:, Tensor(IDX)]),
      "2d": (lambda x: x[i2], lambda x: x[Tensor(i2)]),
      "pair": (lambda x: x[ia, ib], lambda x: x[Tensor(ia), Tensor(ib)]),
      "pair_bcast": (lambda x: x[col, row[:2]], lambda x: x[Tensor(col), Tensor(row[:2])]),
      "split_adv": (lambda x: x[col, :, row], lambda x: x[Tensor(col), :, Tensor(row)]),
      "neg": (lambda x: x[np.array([-1, 0, -4])], lambda x: x[Tensor([-1, 0, -4])]),
      "last": (lambda x: x[..., np.array([5, 0])], lambda x: x[..., Tensor([5, 0])]),
      "repeat": (lambda x: x[np.array([1, 1, 1])], lambda x: x[Tensor([1, 1, 1])]),
      "int_and_tensor": (lambda x: x[1, np.array([0, 4])], lambda x: x[1, Tensor([0, 4])]),
      "slice_then_tensor": (lambda x: x[1:3, IDX], lambda x: x[1:3, Tensor(IDX)]),
      "scalar_tensor": (lambda x: x[np.array(2)], lambda x: x[Tensor(2)]),
    }
    helper_test_op([(4, 5, 6)], *refs[case])

  def test_tensor_index_dtypes(self):
    helper_test_op([(4, 5)], lambda x: x[IDX], lambda x: x[Tensor(IDX)], dtype=np.int32, low=-9, high=9)
    helper_test_op([(4, 5)], lambda x: x[:, IDX], lambda x: x[:, Tensor(IDX)], dtype=np.float16)
    helper_test_op([(4, 5)], lambda x: x[IDX], lambda x: x[Tensor(IDX.astype(np.int64))])
    helper_test_op([(4, 5)], lambda x: x[IDX], lambda x: x[Tensor(IDX.astype(np.int8))])

  def test_index_1d(self):
    helper_test_op([(10,)], lambda x: x[np.array([9, 0, 3, 3])], lambda x: x[Tensor([9, 0, 3, 3])])
    helper_test_op([(10,)], lambda x: x[np.array([[1, 2], [3, 4]])], lambda x: x[Tensor([[1, 2], [3, 4]])])
    helper_test_op([(10,)], lambda x: x[np.zeros(0, np.int32)], lambda x: x[Tensor(np.zeros(0, np.int32))])

# ---------------------------------------------------------------- non-contiguous inputs

VIEWS = {
  "permute": (lambda x: x.transpose(1, 0, 2), lambda t: t.permute(1, 0, 2)),
  "flip": (lambda x: x[:, ::-1], lambda t: t.flip(1)),
  "pad": (lambda x: np.pad(x, ((1, 0), (0, 2), (0, 0))), lambda t: t.pad(((1, 0), (0, 2), (0, 0)))),
  "shrink": (lambda x: x[1:3, :, 1:4], lambda t: t.shrink(((1, 3), (0, 4), (1, 4)))),
  "expand": (lambda x: np.broadcast_to(x[:, :1], (3, 4, 5)), lambda t: t[:, :1].expand(3, 4, 5)),
  "step": (lambda x: x[::2, ::-2], lambda t: t[::2, ::-2]),
  "reshape_permute": (lambda x: x.reshape(4, 3, 5).transpose(2, 1, 0), lambda t: t.reshape(4, 3, 5).permute(2, 1, 0)),
}

class TestViews:
  @pytest.mark.parametrize("view", list(VIEWS))
  def test_unary_and_binary(self, view):
    nv, tv = VIEWS[view]
    helper_test_op([(3, 4, 5)], lambda x: np.exp(nv(x)), lambda x: tv(x).exp(), atol=1e-5)
    helper_test_op([(3, 4, 5)], lambda x: nv(x) * 2 + nv(x), lambda x: tv(x) * 2 + tv(x), atol=1e-6)
    if view in ("permute", "flip", "pad"):
      helper_test_op([(3, 4, 5)], lambda x: nv(x) + nv(x)[:1], lambda x: tv(x) + tv(x)[:1], atol=1e-6)

  @pytest.mark.parametrize("view", list(VIEWS))
  def test_reduce(self, view):
    nv, tv = VIEWS[view]
    helper_test_op([(3, 4, 5)], lambda x: nv(x).sum(axis=1), lambda x: tv(x).sum(axis=1), atol=1e-5)
    helper_test_op([(3, 4, 5)], lambda x: np.argmax(nv(x), axis=-1), lambda x: tv(x).argmax(axis=-1))
    if view in ("permute", "flip", "pad"):
      helper_test_op([(3, 4, 5)], lambda x: nv(x).max(axis=(0, 2)), lambda x: tv(x).max(axis=(0, 2)))
      helper_test_op([(3, 4, 5)], lambda x: np.cumsum(nv(x), axis=0), lambda x: tv(x).cumsum(0), atol=1e-5)

  @pytest.mark.parametrize("view", list(VIEWS))
  def test_movement_after_view(self, view):
    nv, tv = VIEWS[view]
    helper_test_op([(3, 4, 5)], lambda x: nv(x).reshape(-1), lambda x: tv(x).reshape(-1))
    helper_test_op([(3, 4, 5)], lambda x: nv(x)[np.array([1, 0])], lambda x: tv(x)[Tensor([1, 0])])
    if view in ("permute", "flip", "pad", "step"):
      helper_test_op([(3, 4, 5)], lambda x: nv(x)[1, ::-1], lambda x: tv(x)[1, ::-1])
      helper_test_op([(3, 4, 5)], lambda x: np.concatenate([nv(x), nv(x)], -1), lambda x: tv(x).cat(tv(x), dim=-1))

  @pytest.mark.parametrize("view", list(VIEWS))
  def test_matmul(self, view):
    nv, tv = VIEWS[view]
    helper_test_op([(3, 4, 5)], lambda x: nv(x) @ np.swapaxes(nv(x), -1, -2), lambda x: tv(x) @ tv(x).transpose(-1, -2),
                   atol=1e-4)

  def test_views_int(self):
    for nv, tv in VIEWS.values():
      helper_test_op([(3, 4, 5)], lambda x: nv(x) // 2 + nv(x), lambda x: tv(x) // 2 + tv(x), dtype=np.int32,
                     low=-9, high=9)

  def test_view_of_realized(self):
    helper_test_op([(4, 6)], lambda x: (x + 1).T[::-1], lambda x: (x + 1).realize().T[::-1])
    helper_test_op([(4, 6)], lambda x: ((x + 1).T[::-1] * 2).sum(0), lambda x: ((x + 1).realize().T[::-1] * 2).sum(0),
                   atol=1e-5)

# ---------------------------------------------------------------- matmul / einsum

MATMUL = [((3,), (3,)), ((3,), (3, 4)), ((4, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
          ((2, 3), (5, 3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 1), (1, 1)), ((0, 3), (3, 4)), ((2, 0), (0, 3)),
          ((3, 4), (4, 0)), ((3,), (2, 3, 4)), ((2, 4, 3), (3,)), ((17, 33), (33, 9))]

class TestMatmul:
  @pytest.mark.parametrize("shapes", MATMUL, ids=str)
  def test_matmul(self, shapes):
    helper_test_op(list(shapes), np.matmul, lambda a, b: a @ b, atol=1e-5, rtol=1e-4)
    helper_test_op(list(shapes), np.matmul, lambda a, b: a.matmul(b), atol=1e-5, rtol=1e-4)

  @pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3, 4)), ((4, 3), (3,)), ((2, 2, 3), (3, 4))], ids=str)
  def test_dot(self, shapes):
    helper_test_op(list(shapes), np.matmul, lambda a, b: a.dot(b), atol=1e-5)

  @pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64, np.float16, np.float64])
  def test_matmul_dtypes(self, dtype):
    tol = 2e-2 if dtype == np.float16 else 1e-6
    helper_test_op([(3, 5), (5, 4)], np.matmul, lambda a, b: a @ b, dtype=dtype, low=-4, high=4, atol=tol, rtol=tol)

  def test_matmul_transposed(self):
    helper_test_op([(5, 3), (4, 5)], lambda a, b: a.T @ b.T, lambda a, b: a.T @ b.T, atol=1e-5)
    helper_test_op([(2, 5, 3), (5, 4)], lambda a, b: np.swapaxes(a, 1, 2) @ b[::-1],
                   lambda a, b: a.transpose(1, 2) @ b.flip(0), atol=1e-5)

  def test_matmul_epilogue(self):
    helper_test_op([(4, 8), (8, 6), (6,)], lambda a, b, c: np.maximum(a @ b + c, 0), lambda a, b, c: (a @ b + c).relu(),
                   atol=1e-5)

  @pytest.mark.parametrize("shapes", [((4, 3), (3, 5), (5,)), ((2, 4, 3), (3, 5), (5,)), ((3,), (3, 5), (5,)),
                                      ((4, 3), (3, 5), None), ((4, 3), (3,), (3,))], ids=str)
  def test_linear(self, shapes):
    # tinygrad semantics: weight is (in, out) and x.linear(w, b) == x @ w + b; a 1-D weight multiplies elementwise
    xs, ws, bs = shapes
    def ref(x, w, b=None):
      y = x * w if w.ndim == 1 else x @ w
      return y if b is None else y + b
    if bs is None: helper_test_op([xs, ws], ref, lambda x, w: x.linear(w), atol=1e-5)
    else:
      helper_test_op([xs, ws, bs], ref, lambda x, w, b: x.linear(w, b), atol=1e-5)
      helper_test_op([xs, ws, bs], ref, lambda x, w, b: x.linear(weight=w, bias=b), atol=1e-5)

  @pytest.mark.parametrize("formula,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->ji", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("ij, jk -> ik", [(2, 3), (3, 4)]),
  ])
  def test_einsum(self, formula, shapes):
    helper_test_op(shapes, lambda *xs: np.einsum(formula.replace(" ", ""), *xs),
                   lambda *xs: Tensor.einsum(formula, *xs), atol=1e-5)

  def test_einsum_list_operands(self):
    helper_test_op([(2, 3), (3, 4)], lambda a, b: np.einsum("ij,jk->ik", a, b),
                   lambda a, b: Tensor.einsum("ij,jk->ik", [a, b]), atol=1e-5)

  def test_einsum_implicit_output(self):
    helper_test_op([(2, 3), (3, 4)], lambda a, b: np.einsum("ij,jk", a, b), lambda a, b: Tensor.einsum("ij,jk", a, b),
                   atol=1e-5)

# ---------------------------------------------------------------- dtypes

ALL_NP = [(dtypes.bool, np.bool_), (dtypes.int8, np.int8), (dtypes.int16, np.int16), (dtypes.int32, np.int32),
          (dtypes.int64, np.int64), (dtypes.uint8, np.uint8), (dtypes.uint16, np.uint16), (dtypes.uint32, np.uint32),
          (dtypes.uint64, np.uint64), (dtypes.float16, np.float16), (dtypes.float32, np.float32),
          (dtypes.float64, np.float64)]

def _extremes(npdt) -> np.ndarray:
  if npdt == np.bool_: return np.array([True, False, True, True])
  if np.issubdtype(npdt, np.integer):
    i = np.iinfo(npdt)
    return np.array([i.min, i.max, 0, 1, i.max - 1, i.min + 1 if i.min else 7], dtype=npdt)
  f = np.finfo(npdt)
  return np.array([f.min, f.max, 0.0, -0.0, 1.5, f.tiny, -f.eps, np.inf, -np.inf], dtype=npdt)

class TestDTypes:
  @pytest.mark.parametrize("dt,npdt", ALL_NP, ids=lambda x: getattr(x, "name", ""))
  def test_numpy_roundtrip(self, dt, npdt):
    a = _extremes(npdt)
    t = Tensor(a)
    assert t.dtype == dt
    if is_null():
      t.realize()
      return
    out = t.numpy()
    assert out.dtype == np.dtype(npdt)
    np.testing.assert_equal(out, a)
    out2 = t.flip(0).numpy()  # through a kernel
    assert out2.dtype == np.dtype(npdt)
    np.testing.assert_equal(out2, a[::-1])

  @pytest.mark.parametrize("dt,npdt", ALL_NP, ids=lambda x: getattr(x, "name", ""))
  def test_list_with_dtype(self, dt, npdt):
    vals = [0, 1, 2, 3] if dt != dtypes.bool else [True, False, True, False]
    t = Tensor(vals, dtype=dt)
    assert t.dtype == dt
    if is_null():
      t.realize()
      return
    np.testing.assert_equal(t.numpy(), np.array(vals, npdt))
    assert t.tolist() == vals

  @needs_values
  def test_bfloat16_numpy_is_float32(self):
    vals = [1.5, -2.25, 3.0, 0.0, 256.0, -0.0078125]
    t = Tensor(vals, dtype=dtypes.bfloat16)
    assert t.dtype == dtypes.bfloat16
    out = t.numpy()
    assert out.dtype == np.float32
    np.testing.assert_equal(out, np.array(vals, np.float32))
    c = Tensor(np.array(vals, np.float32)).cast(dtypes.bfloat16)
    assert c.dtype == dtypes.bfloat16 and c.numpy().dtype == np.float32
    np.testing.assert_equal(c.numpy(), np.array(vals, np.float32))
    np.testing.assert_equal(c.cast(dtypes.float32).numpy(), np.array(vals, np.float32))

  @needs_values
  def test_bfloat16_rounding(self):
    """float32 -> bfloat16 rounds to nearest, ties to even, bit for bit as torch converts: exact ties (1 + 2^-8 goes
    down
    to the even 1, 1 + 3*2^-8 up to the even 1 + 2^-6), one float32 ulp either side of a tie, negatives, subnormals
    (and a subnormal tie), the largest float32 (rounds to inf), inf and nan. Truncation fails the ties that go up and
    the
    near-ties above; round-half-up fails the ties that go down."""
    import torch
    tie, ulp = 2.0 ** -8, 2.0 ** -23
    vals = [1 + tie, 1 + 3 * tie, 1 + tie + ulp, 1 + tie - ulp, 1 + 3 * tie - ulp, 1 + 3 * tie + ulp, 2 + 2 * tie,
            2 + 6 * tie, 3.14159265, 1234.567, 1e-3, 65504.0, 1e30, 0.0, 1.0, 256.5, 257.0, 0.1, 1 / 3]
    vals += [-v for v in vals]
    bits = np.array([0x00008000, 0x00018000, 0x00008001, 0x00007FFF, 0x00000001, 0x007FFFFF, 0x00808000, 0x00818000,
                     0x7F7FFFFF, 0x7F7F7FFF, 0x7F800000, 0x7FC00000], np.uint32)
    x = np.concatenate([np.array(vals, np.float32), bits.view(np.float32), (bits | 0x80000000).view(np.float32)])
    want = torch.from_numpy(x.copy()).to(torch.bfloat16).to(torch.float32).numpy()
    assert want[0] == 1.0 and want[1] == 1 + 2 ** -6, "torch reference: ties to even"
    for how, t in (("device cast", Tensor(x).cast(dtypes.bfloat16)),
                   ("host conversion", Tensor(x.tolist(), dtype=dtypes.bfloat16))):
      got = t.numpy()
      assert got.dtype == np.float32
      nan = np.isnan(want)
      assert np.array_equal(np.isnan(got), nan), f"{how}: nan mismatch"
      bad = np.nonzero(got.view(np.uint32)[~nan] != want.view(np.uint32)[~nan])[0]
      assert len(bad) == 0, f"{how}: " + ", ".join(f"{x[~nan][i]!r} ({x[~nan].view(np.uint32)[i]:#010x}) -> "
                                                   f"{got[~nan].view(np.uint32)[i]:#010x}, torch "
                                                   f"{want[~nan].view(np.uint32)[i]:#010x}"
                                                   for i in bad[:8])

  @needs_values
  @pytest.mark.parametrize("op", ["add", "mul", "exp", "sum", "matmul", "div", "max", "relu"])
  def test_bfloat16_arith(self, op):
    rng = np.random.default_rng(0)
    a, b = (bf16_round(rng.uniform(-2, 2, (4, 8)).astype(np.float32)),
            bf16_round(rng.uniform(0.5, 2, (4, 8)).astype(np.float32)))
    ta, tb = Tensor(a).cast(dtypes.bfloat16), Tensor(b).cast(dtypes.bfloat16)
    fx = {"add": (lambda x, y: x + y, lambda x, y: x + y), "mul": (lambda x, y: x * y, lambda x, y: x * y),
          "exp": (lambda x, y: np.exp(x), lambda x, y: x.exp()), "sum": (lambda x, y: x.sum(1), lambda x, y: x.sum(1)),
          "matmul": (lambda x, y: x @ y.T, lambda x, y: x @ y.T), "div": (lambda x, y: x / y, lambda x, y: x / y),
          "max": (lambda x, y: x.max(0), lambda x, y: x.max(0)),
          "relu": (lambda x, y: np.maximum(x, 0), lambda x, y: x.relu())}[op]
    out = fx[1](ta, tb)
    assert out.dtype == dtypes.bfloat16
    got = out.numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, fx[0](a, b), rtol=2e-2, atol=5e-2)

  @pytest.mark.parametrize("op", ["add", "mul", "exp", "sum", "matmul", "div", "sqrt", "sigmoid"])
  def test_float16_arith(self, op):
    fx = {"add": (np.add, lambda x, y: x + y), "mul": (np.multiply, lambda x, y: x * y),
          "exp": (lambda x, y: np.exp(x), lambda x, y: x.exp()), "sum": (lambda x, y: x.sum(1), lambda x, y: x.sum(1)),
          "matmul": (lambda x, y: x @ y.T, lambda x, y: x @ y.T), "div": (np.divide, lambda x, y: x / y),
          "sqrt": (lambda x, y: np.sqrt(y), lambda x, y: y.sqrt()),
          "sigmoid": (lambda x, y: (1 / (1 + np.exp(-x.astype(np.float32)))).astype(np.float16),
                      lambda x, y: x.sigmoid())}[op]
    helper_test_op(None, fx[0], fx[1], atol=2e-2, rtol=1e-2,
                   vals=[np.random.default_rng(0).uniform(-2, 2, (4, 8)).astype(np.float16),
                         np.random.default_rng(1).uniform(0.5, 2, (4, 8)).astype(np.float16)])

  @needs_values
  def test_float16_overflow_inf(self):
    out = (Tensor([60000.0], dtype=dtypes.float16) * 2).numpy()
    assert out.dtype == np.float16 and np.isinf(out[0])

  @needs_values
  def test_float64_precision(self):
    a = np.array([1.0 + 1e-12, 1e-300, 123456789.123456789], np.float64)
    np.testing.assert_equal((Tensor(a) * 1.0).numpy(), a)
    np.testing.assert_allclose((Tensor(a) + Tensor(a)).numpy(), a + a, rtol=1e-15)

  @needs_values
  def test_int64_large(self):
    a = np.array([2 ** 40, -(2 ** 40) + 3, 2 ** 62], np.int64)
    np.testing.assert_equal((Tensor(a) + 1).numpy(), a + 1)
    np.testing.assert_equal((Tensor(a) // 4).numpy(), a // 4)
    np.testing.assert_equal(Tensor(a).sum().numpy(), a.sum())

  @needs_values
  def test_uint_wrap(self):
    np.testing.assert_equal((Tensor(np.array([250, 5], np.uint8)) + 10).numpy(), np.array([4, 15], np.uint8))
    np.testing.assert_equal((Tensor(np.array([0, 5], np.uint8)) - 1).numpy(), np.array([255, 4], np.uint8))
    np.testing.assert_equal((Tensor(np.array([2 ** 32 - 1], np.uint32)) + 1).numpy(), np.array([0], np.uint32))
    big = np.array([2 ** 64 - 1, 2 ** 63], np.uint64)
    np.testing.assert_equal(Tensor(big).numpy(), big)
    np.testing.assert_equal((Tensor(big) // 2).numpy(), big // 2)

# long row reductions: the CPU splits max/min into vector lanes and vectorises exp/log through libmvec (clang)
@needs_values
@pytest.mark.parametrize("n", [64, 1000, 4096, 32000, 31999])
def test_long_row_max_min_with_nan_and_inf(n):
  rng = np.random.default_rng(n)
  x = rng.standard_normal((6, n)).astype(np.float32)
  x[1, n // 3] = np.nan
  x[2, -1] = np.inf
  x[3, 0] = -np.inf
  x[4, :] = -np.inf
  x[5, n // 2] = np.nan
  x[5, n // 2 + 1] = np.inf
  for op in ("max", "min"):
    got = getattr(Tensor(x), op)(axis=1).numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(x, axis=1))
  np.testing.assert_array_equal(Tensor(x[[0, 2, 3]]).argmax(axis=1).numpy(), np.argmax(x[[0, 2, 3]], axis=1))

@needs_values
def test_vector_math_accuracy_on_long_rows():
  x = np.linspace(-80, 80, 40000, dtype=np.float32).reshape(4, 10000)
  np.testing.assert_allclose(Tensor(x).exp().numpy(), np.exp(x), rtol=2e-6)
  p = np.linspace(1e-30, 1e30, 40000, dtype=np.float32).reshape(4, 10000)
  np.testing.assert_allclose(Tensor(p).log().numpy(), np.log(p), rtol=2e-6, atol=1e-6)
  t = np.linspace(-100, 100, 40000, dtype=np.float32).reshape(4, 10000)
  np.testing.assert_allclose(Tensor(t).sin().numpy(), np.sin(t), atol=2e-6)
  np.testing.assert_allclose(Tensor(x).softmax(axis=1).numpy().sum(1), np.ones(4), rtol=1e-5)

def test_matmul_body_on_uops_is_the_tensor_ops_graph(monkeypatch):
  """Tensor.matmul builds x @ w (2+ dims each) on UOps (tensor._matmul_body) for host time: the graph must be the very
  node its Tensor ops build (hash-consed: `is`), with the same gradient flag, over batch broadcasts, dtypes,
  requires_grad and no-grad mode; what it leaves to the Tensor ops (a tiny output of a huge sum) comes out the same."""
  import teeny.tensor as TT
  from teeny.uop.ops import Ops, inline_calls
  orig = TT._matmul_body
  used = 0
  for xs, ws in [((4, 5), (5, 6)), ((3, 4, 5), (5, 6)), ((4, 5), (2, 5, 6)), ((2, 1, 4, 5), (3, 5, 6)),
                 ((1, 5), (5, 1)), ((2, 3, 4, 5), (2, 3, 5, 7)), ((4, 40000), (40000, 2))]:
    for dt in (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32):
      for rg in ((False, True) if dt.kind == "f" else (False,)):
        for grad_on in (True, False):
          x, w = Tensor.empty(*xs, dtype=dt), Tensor.empty(*ws, dtype=dt)
          if rg: x.requires_grad_(True), w.requires_grad_(True)
          with Tensor.set_grad_enabled(grad_on):
            calls = []
            monkeypatch.setattr(TT, "_matmul_body", lambda *a: calls.append(r := orig(*a)) or r)
            fast = x @ w
            monkeypatch.setattr(TT, "_matmul_body", lambda *a: None)
            slow = x @ w
          used += calls[0] is not None
          # (without gradients it is one CALL node, whose body inlined is that graph)
          fu = inline_calls(list(fast.uop.toposort))[fast.uop]
          assert fu is slow.uop and fast.requires_grad == slow.requires_grad, (xs, ws, dt, rg, grad_on)
          assert (fast.uop.op is Ops.CALL) == (calls[0] is not None and not rg), (xs, ws, dt, rg, grad_on)
  assert used >= 60
