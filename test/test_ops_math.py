"""Elementwise and reduction math of issue 10 against torch: inverse trig and hyperbolic functions (wide ranges, edges,
float16/bfloat16/float64), copysign, logaddexp, logcumsumexp, softmin, isclose/allclose, normalize, fmod, dot, shifts,
dtype= of reductions, div rounding modes, isinf flags, linspace edges; gradients at the edges (pow, abs, clip, sigmoid,
prod with zeros, comparisons, max/min ties); errors of torch's kind for bad dims and shapes.

Under DEV=NULL every graph (forward and backward) is still built, scheduled and rendered; values are not compared."""
import math
import numpy as np
import pytest
from teeny import Tensor, Device, dtypes
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
F = torch.nn.functional

def _realize(*ts):
  Tensor.realize_all(*[t for t in ts if isinstance(t, Tensor)])

def compare(torch_fn, teeny_fn, vals, atol=1e-6, rtol=1e-6, grad=False, grad_atol=None, grad_rtol=None,
            dtype=np.float32, seed=0):
  """teeny_fn and torch_fn on the same inputs: outputs (nan == nan), and with grad=True the gradient of every input for
  a
  fixed random upstream gradient. Under NULL: build, schedule and render the forward and backward graphs only."""
  xs = [np.asarray(v, dtype=dtype) for v in vals]
  tt = [Tensor(x, requires_grad=True) if grad else Tensor(x) for x in xs]
  out = teeny_fn(*tt)
  outs = list(out) if isinstance(out, (list, tuple)) else [out]
  ups = [np.random.default_rng(seed).standard_normal(o.shape).astype(np.float32) for o in outs]
  if grad:
    loss = None
    for o, u in zip(outs, ups):
      term = (o * Tensor(u)).sum()
      loss = term if loss is None else loss + term
    loss.backward()
  if is_null():
    _realize(*outs, *[t.grad for t in tt if t.grad is not None])
    return
  pt = [torch.tensor(x, requires_grad=grad) for x in xs]
  ref = torch_fn(*pt)
  refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
  for i, (o, r) in enumerate(zip(outs, refs)):
    assert tuple(o.shape) == tuple(r.shape), f"output {i}: shape {o.shape} vs torch {tuple(r.shape)}"
    got, want = o.numpy(), r.detach().numpy()
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer): np.testing.assert_array_equal(got, want)
    else: np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=atol, rtol=rtol,
                                     equal_nan=True, err_msg=f"output {i}")
  if grad:
    sum(((r * torch.tensor(u)).sum() for r, u in zip(refs, ups)), torch.zeros(())).backward()
    for i, (t, p) in enumerate(zip(tt, pt)):
      if p.grad is None:
        assert t.grad is None or not np.any(t.grad.numpy()), f"input {i}: torch has no grad, teeny a non-zero one"
        continue
      if t.grad is None:   # teeny leaves an input the graph cannot differentiate without a gradient; torch gives zeros
        assert not p.grad.any(), f"input {i}: torch has a non-zero gradient, teeny none"
        continue
      np.testing.assert_allclose(t.grad.numpy().astype(np.float64), p.grad.numpy().astype(np.float64), equal_nan=True,
                                 atol=atol if grad_atol is None else grad_atol,
                                 rtol=rtol if grad_rtol is None else grad_rtol, err_msg=f"grad of input {i}")

# ---------------------------------------------------------------- inverse trig and hyperbolic functions

UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log1p", "expm1", "sigmoid"]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-8, -1e-8, 1e-30, 1e20, -1e20, 2.0, -2.0, 0.5, -0.5, 1 - 2 ** -24, 1 + 2 ** -23,
           88.0, -88.0, 100.0, -100.0, 1e38, math.inf, -math.inf, math.nan]

def _wide(dtype) -> np.ndarray:
  """Magnitudes 1e-10..1e25 both signs, a dense [-1, 1] sweep and the special values, in dtype. (|x| in (88.5, 90) is
  left
  out: torch's vectorized float32 sinh/cosh give inf there where the result still fits; see
  test_sinh_cosh_no_overflow.)"""
  rng = np.random.default_rng(1)
  mag = 10.0 ** rng.uniform(-10, 25, 3000)
  mag = mag[(mag < 88.5) | (mag > 90)]
  return np.concatenate([mag, -mag, rng.uniform(-1, 1, 1000), rng.uniform(0.9, 1.1, 500), SPECIAL]).astype(dtype)

@pytest.mark.parametrize("name", UNARY)
def test_unary_float32_wide(name):
  # max relative error measured against torch: 3.4e-7 (asin, atan), under 2.5e-7 for the rest; denormal results aside
  x = _wide(np.float32)
  if name == "sigmoid": x = x[np.abs(x) < 87]   # e**-x past that is denormal; torch flushes to 0 in its vector path
  compare(getattr(torch, name), lambda t: getattr(t, name)(), [x], atol=1e-37, rtol=1e-6)

@pytest.mark.parametrize("name", UNARY)
def test_unary_float64_wide(name):
  rng = np.random.default_rng(2)
  x = np.concatenate([_wide(np.float64), 10.0 ** rng.uniform(-300, 300, 500), [700.0, 709.5, -709.5]])
  if name == "sigmoid": x = x[np.abs(x) < 700]
  compare(getattr(torch, name), lambda t: getattr(t, name)(), [x], atol=1e-300, rtol=2e-14, dtype=np.float64)

@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_unary_half(name, dt):
  x = np.random.default_rng(3).uniform(-3, 3, 200).astype(np.float32)
  x = np.concatenate([x, [0.0, 1.0, -1.0, 1e-3, 10.0, 11.5, -11.5]]).astype(np.float32)
  tdt = getattr(torch, dt)
  out = getattr(Tensor(x).cast(dt), name)()
  assert out.dtype == getattr(dtypes, dt)
  if is_null():
    out.realize()
    return
  want = getattr(torch.tensor(x).to(tdt), name)().float().numpy()
  got = out.cast("float32").numpy()
  np.testing.assert_allclose(got, want, rtol=1e-2 if dt == "bfloat16" else 2e-3, atol=1e-3, equal_nan=True)

@pytest.mark.parametrize("name,lo,hi", [("asin", -0.99, 0.99), ("acos", -0.99, 0.99), ("atan", -5, 5), ("sinh", -5, 5),
                                        ("cosh", -5, 5), ("asinh", -50, 50), ("acosh", 1.01, 50),
                                        ("atanh", -0.99, 0.99),
                                        ("log1p", -0.99, 5), ("expm1", -5, 5), ("sigmoid", -20, 20)])
def test_unary_grad(name, lo, hi):
  x = np.random.default_rng(4).uniform(lo, hi, (4, 25)).astype(np.float32)
  compare(getattr(torch, name), lambda t: getattr(t, name)(), [x], atol=1e-6, rtol=2e-5, grad=True)

@pytest.mark.parametrize("name,vals", [("asin", [0.0, 1.0, -1.0, 1e-8, 2.0]), ("acos", [0.0, 1.0, -1.0, 1e-8, -2.0]),
                                       ("atan", [0.0, 1e-8, 1e20, -1e20, math.inf]),
                                       ("sinh", [0.0, 1e-8, -1e-8, 1.0, -1.0]), ("cosh", [0.0, 1e-8, 1.0, -1.0, 100.0]),
                                       ("asinh", [0.0, 1e-8, -1e20, 1e4, -1.0]),
                                       ("acosh", [1.0, 1 + 1e-6, 1e20, 0.5, 2.0]),
                                       ("atanh", [0.0, 1e-8, 1.0, -1.0, 2.0]), ("log1p", [0.0, 1e-8, -1.0, -0.5, -2.0]),
                                       ("expm1", [0.0, 1e-8, -1e-8, 100.0, -100.0])])
def test_unary_grad_edges(name, vals):
  # gradients at 0, at the ends of the domain (+-inf there, as torch) and outside it (nan)
  compare(getattr(torch, name), lambda t: getattr(t, name)(), [vals], atol=1e-6, rtol=1e-5, grad=True)

@needs_values
def test_sinh_cosh_no_overflow():
  # e**x overflows float32 past 88.72, sinh/cosh only past 89.42: the result is finite in between (math.sinh agrees)
  x = np.array([88.8, 89.0, 89.4, -89.4, 89.5, -89.5], np.float32)
  for name in ("sinh", "cosh"):
    want = np.array([getattr(math, name)(float(v)) for v in x])
    with np.errstate(over="ignore"): want = want.astype(np.float32)
    np.testing.assert_allclose(getattr(Tensor(x), name)().numpy(), want, rtol=1e-6)

@needs_values
def test_small_and_large_exact():
  # the places a naive formula loses everything: 1e-8 (log(1 + x) rounds to 0) and 1e20 (x * x overflows)
  np.testing.assert_allclose(Tensor([1e-8, -1e-8]).asinh().numpy(), [1e-8, -1e-8], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e-8, -1e-8]).atanh().numpy(), [1e-8, -1e-8], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e-8]).log1p().numpy(), [1e-8], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e-8]).expm1().numpy(), [1e-8], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e20, -1e20]).asinh().numpy(), [math.asinh(1e20), -math.asinh(1e20)], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e20]).acosh().numpy(), [math.acosh(1e20)], rtol=1e-7)
  np.testing.assert_allclose(Tensor([1e20]).atan().numpy(), [math.pi / 2], rtol=1e-7)

# ---------------------------------------------------------------- binary math

def test_copysign():
  a = [1.0, -1.0, 0.0, 2.0, -5.5, 3.0, math.inf, math.nan, -0.0]
  b = [-0.0, 0.0, -1.0, math.nan, 2.0, -math.inf, -1.0, -1.0, 1.0]
  compare(torch.copysign, lambda x, y: x.copysign(y), [a, b])
  compare(torch.copysign, lambda x, y: x.copysign(y), [[1.0, -2.0, 0.0, 3.0], [-1.0, 2.0, 5.0, -0.5]], grad=True)

@needs_values
def test_copysign_sign_bit_and_ints():
  # -0.0 is negative, and an int copysign gives floats (torch)
  out = Tensor([2.0, 2.0]).copysign(Tensor([-0.0, 0.0])).numpy()
  np.testing.assert_array_equal(out, [-2.0, 2.0])
  o = Tensor([1, 2, 3]).copysign(Tensor([-1, 1, -1]))
  assert o.dtype == dtypes.float32
  np.testing.assert_array_equal(o.numpy(), torch.copysign(torch.tensor([1, 2, 3]), torch.tensor([-1, 1, -1])).numpy())
  np.testing.assert_array_equal(Tensor([1.0, -1.0]).copysign(-3).numpy(), [-1.0, -1.0])
  h = Tensor([1.0, -1.0]).cast("float16").copysign(Tensor([-0.0, 2.0]).cast("float16"))
  np.testing.assert_array_equal(h.numpy(), np.array([-1.0, 1.0], np.float16))

def test_logaddexp():
  rng = np.random.default_rng(5)
  a, b = rng.uniform(-5, 5, 50), rng.uniform(-5, 5, 50)
  compare(torch.logaddexp, lambda x, y: x.logaddexp(y), [a, b], grad=True, atol=1e-6, rtol=1e-5)
  # huge, tiny, equal and infinite operands
  a = [1000.0, -1000.0, 1.0, 1.0, -math.inf, math.inf, -math.inf, 0.0, 88.0, 1e-10]
  b = [999.0, -1001.0, 1.0, -math.inf, -math.inf, math.inf, 3.0, -100.0, 88.0, -100.0]
  compare(torch.logaddexp, lambda x, y: x.logaddexp(y), [a, b], atol=1e-43, rtol=1e-6)   # 1e-43: a denormal result
  compare(torch.logaddexp, lambda x, y: x.logaddexp(y), [a[:4] + a[7:], b[:4] + b[7:]], grad=True, rtol=1e-5)

@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 9), 1), ((3, 9), 0), ((2, 3, 5), -2), ((2, 300), 1),
                                       ((1000,), 0)])
def test_logcumsumexp(shape, dim):
  x = np.random.default_rng(6).uniform(-3, 3, shape).astype(np.float32)
  compare(lambda t: torch.logcumsumexp(t, dim), lambda t: t.logcumsumexp(dim), [x], atol=1e-5, rtol=1e-5, grad=True)

def test_logcumsumexp_large_values():
  # a naive log(cumsum(exp(x))) overflows at 100 and underflows before a much larger later value
  x = np.array([[1000.0, -1000.0, 5.0, 1001.0], [-1000.0, -999.0, -1e4, 0.0], [-math.inf, 1.0, -math.inf, 2.0]],
               np.float32)
  compare(lambda t: torch.logcumsumexp(t, 1), lambda t: t.logcumsumexp(1), [x], atol=0, rtol=1e-6)
  # the gradient in float64: torch's float32 backward for these magnitudes is itself off by ~1e-4
  compare(lambda t: torch.logcumsumexp(t, 1), lambda t: t.logcumsumexp(dim=1), [x[:2]], atol=1e-12, rtol=1e-9,
          grad=True, dtype=np.float64)
  big = np.random.default_rng(7).uniform(-2000, 2000, (2, 700)).astype(np.float32)
  compare(lambda t: torch.logcumsumexp(t, 1), lambda t: t.logcumsumexp(1), [big], atol=0, rtol=1e-6)

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmin(dim):
  x = np.random.default_rng(8).uniform(-4, 4, (3, 5)).astype(np.float32)
  compare(lambda t: F.softmin(t, dim), lambda t: t.softmin(dim), [x], grad=True, atol=1e-6, rtol=1e-5)

def test_fmod_remainder():
  a = [5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 7.0, 1e10, -1e10, 3.0]
  b = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, math.inf, 3.0, 3.0, 0.0]
  compare(torch.fmod, lambda x, y: x.fmod(y), [a, b])
  compare(torch.remainder, lambda x, y: x % y, [a[:-1], b[:-1]])
  compare(torch.fmod, lambda x, y: x.fmod(y), [a[:4] + [7.5], b[:4] + [2.5]], grad=True)
  compare(torch.remainder, lambda x, y: x.remainder(y), [a[:4] + [7.5], b[:4] + [2.5]], grad=True)
  ia, ib = [5, -5, 5, -5, 0, 7, -7], [3, 3, -3, -3, 5, 1, 2]
  compare(torch.fmod, lambda x, y: x.fmod(y), [ia, ib], dtype=np.int32)
  compare(torch.fmod, lambda x, y: x.fmod(y), [ia, ib], dtype=np.int64)
  compare(lambda x: torch.fmod(x, -3), lambda x: x.fmod(-3), [ia], dtype=np.int32)

def test_dot():
  rng = np.random.default_rng(9)
  compare(torch.dot, lambda a, b: a.dot(b), [rng.standard_normal(7), rng.standard_normal(7)], grad=True, atol=1e-5,
          rtol=1e-5)
  compare(torch.dot, lambda a, b: a.dot(b), [[1, 2, 3], [4, -5, 6]], dtype=np.int32)
  with pytest.raises(RuntimeError) as e: Tensor([1.0, 2.0]).dot(Tensor([1.0, 2.0, 3.0]))
  assert "2" in str(e.value) and "3" in str(e.value)

@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_shifts(dt):
  bits = np.dtype(dt).itemsize * 8
  a = np.array([1, 3, 5, 7, 100, 1, 3, 9], dt)
  if np.issubdtype(dt, np.signedinteger): a[1::2] = -a[1::2]
  n = np.array([0, 1, 2, bits - 1, bits, bits + 3, 5, 3], dt)
  if np.issubdtype(dt, np.signedinteger): n[6] = -1
  compare(lambda x, y: x << y, lambda x, y: x << y, [a, n], dtype=dt)
  compare(lambda x, y: x >> y, lambda x, y: x >> y, [a, n], dtype=dt)
  compare(lambda x: x << 2, lambda x: x << 2, [a], dtype=dt)
  compare(lambda x: x >> 1, lambda x: x.rshift(1), [a], dtype=dt)
  compare(lambda x: 3 << x, lambda x: 3 << x, [np.array([0, 1, 2], dt)], dtype=dt)

def test_shift_errors():
  # (a bool operand promotes, as in torch: test_fuzz_found.test_shift_with_a_bool_operand_promotes_like_torch)
  for bad in (lambda: Tensor([1.0]) << 1, lambda: Tensor([1]) << 1.5, lambda: Tensor([1.0]) >> 2):
    with pytest.raises(TypeError) as e: bad()
    assert "integer" in str(e.value)

@pytest.mark.parametrize("fn,tfn", [
  (lambda t: t.sum(dtype=torch.float64), lambda t: t.sum(dtype="float64")),
  (lambda t: t.sum(1, dtype=torch.int32), lambda t: t.sum(1, dtype="int32")),
  (lambda t: t.sum(0, dtype=torch.float16), lambda t: t.sum(0, dtype="float16")),
  (lambda t: t.prod(1, dtype=torch.float64), lambda t: t.prod(1, dtype="float64")),
  (lambda t: t.prod(dtype=torch.int64), lambda t: t.prod(dtype="int64")),
  (lambda t: t.mean(dtype=torch.float64), lambda t: t.mean(dtype="float64")),
  (lambda t: t.mean(1, dtype=torch.float16), lambda t: t.mean(1, dtype="float16")),
  (lambda t: t.cumsum(1, dtype=torch.int32), lambda t: t.cumsum(1, dtype="int32")),
  (lambda t: t.cumsum(0, dtype=torch.float64), lambda t: t.cumsum(0, dtype="float64")),
])
def test_reduce_dtype(fn, tfn):
  x = np.random.default_rng(10).uniform(-3, 3, (3, 4)).astype(np.float32)
  with torch.no_grad(): want_dt = fn(torch.tensor(x)).dtype
  out = tfn(Tensor(x))
  assert str(out.dtype).replace("dtypes.", "") == str(want_dt).replace("torch.", ""), f"{out.dtype} vs {want_dt}"
  compare(fn, tfn, [x], atol=1e-3, rtol=1e-3)

def test_reduce_dtype_int_input():
  compare(lambda t: t.mean(dtype=torch.float32), lambda t: t.mean(dtype="float32"), [[[1, 2], [3, 8]]], dtype=np.int32)
  compare(lambda t: t.sum(dtype=torch.int8), lambda t: t.sum(dtype="int8"), [[100, 100, 100]], dtype=np.int32)
  with pytest.raises(RuntimeError) as e: Tensor([1, 2]).mean(dtype="int64")
  assert "dtype" in str(e.value)

DIV_A = [7.0, -7.0, 7.5, -7.5, 0.0, 1.0, -1.0, 0.0, 1e10]
DIV_B = [2.0, 2.0, -2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 3.0]

@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_mode(mode):
  compare(lambda a, b: torch.div(a, b, rounding_mode=mode), lambda a, b: a.div(b, rounding_mode=mode), [DIV_A, DIV_B])
  ia, ib = [7, -7, 7, -7, 0, 9, -9], [2, 2, -2, -2, 3, 1, 4]
  compare(lambda a, b: torch.div(a, b, rounding_mode=mode), lambda a, b: a.div(b, rounding_mode=mode), [ia, ib],
          dtype=np.int32)
  compare(lambda a: torch.div(a, 3, rounding_mode=mode), lambda a: a.div(3, rounding_mode=mode), [ia], dtype=np.int64)
  compare(lambda a, b: torch.div(a, b, rounding_mode=mode), lambda a, b: a.div(b, rounding_mode=mode),
          [[7.5, -7.5], [2.0, 2.0]], grad=True)

def test_div_errors():
  with pytest.raises(RuntimeError) as e: Tensor([1.0]).div(2, rounding_mode="round")
  assert "rounding_mode" in str(e.value)
  for mode in ("trunc", "floor"):
    with pytest.raises(ZeroDivisionError): Tensor([1, 2]).div(0, rounding_mode=mode)
    with pytest.raises(ZeroDivisionError): Tensor([1, 2]).div(Tensor.zeros(2, dtype="int32"), rounding_mode=mode)
  Tensor([1.0, 2.0]).div(0, rounding_mode="floor").realize()   # floats divide by zero as IEEE does (inf)

@pytest.mark.parametrize("pos,neg", [(True, True), (True, False), (False, True), (False, False)])
def test_isinf_flags(pos, neg):
  x = [1.0, math.inf, -math.inf, math.nan, 0.0]
  compare(lambda t: torch.isinf(t) & ((t > 0) if not neg else True) & ((t < 0) if not pos else True),
          lambda t: t.isinf(detect_positive=pos, detect_negative=neg), [x])
  compare(lambda t: torch.isinf(t) & False, lambda t: t.isinf(pos, neg), [[1, 2]], dtype=np.int32)

@pytest.mark.parametrize("start,end,steps,dt", [
  (0, 1, 0, None), (3, 1, 1, None), (3, 3, 4, None), (0, 1, 7, None), (10, 0, 5, None), (-2.5, 2.5, 11, None),
  (0, 10, 4, "int64"), (-10, 0, 4, "int64"), (10, 0, 4, "int32"), (-1.5, 2.5, 5, "int32"), (0, 100, 7, "uint8"),
  (0, 2 ** 40, 5, "int64"), (0, 1, 5, "float64"), (1, 0, 9, "float16"), (5, 5, 1, "int32"), (0, 1e6, 1001, None),
])
def test_linspace(start, end, steps, dt):
  out = Tensor.linspace(start, end, steps, dtype=dt)
  want = torch.linspace(start, end, steps, dtype=getattr(torch, dt) if dt else None)
  assert (tuple(out.shape) == tuple(want.shape)
          and str(out.dtype).replace("dtypes.", "") == str(want.dtype).replace("torch.", ""))
  if is_null():
    out.realize()
    return
  got, w = out.numpy(), want.numpy()
  if dt is not None and dt[0] in "iu": np.testing.assert_array_equal(got, w)
  else: np.testing.assert_allclose(got, w, rtol=1e-6 if dt != "float16" else 1e-3, atol=1e-6)
  if steps > 1 and (dt is None or dt[0] == "f"): assert got[-1] == w[-1] and got[0] == w[0]  # the ends are exact

def test_linspace_errors():
  with pytest.raises(RuntimeError) as e: Tensor.linspace(0, 1, -1)
  assert "steps" in str(e.value)

# ---------------------------------------------------------------- isclose, allclose, normalize

def test_isclose():
  a = [1.0, 1.0, math.inf, math.inf, -math.inf, math.nan, math.nan, 0.0, 1e-9, 100.0, 100.0]
  b = [1.0, 1.00001, math.inf, -math.inf, math.inf, math.nan, 1.0, 1e-9, 0.0, 100.001, 100.01]
  compare(torch.isclose, lambda x, y: x.isclose(y), [a, b])
  compare(lambda x, y: torch.isclose(x, y, equal_nan=True), lambda x, y: x.isclose(y, equal_nan=True), [a, b])
  compare(lambda x, y: torch.isclose(x, y, rtol=0.1, atol=0.5), lambda x, y: x.isclose(y, rtol=0.1, atol=0.5), [a, b])
  compare(lambda x, y: torch.isclose(x, y, atol=1), lambda x, y: x.isclose(y, atol=1), [[10, 10, 10], [11, 12, 9]],
          dtype=np.int32)

@needs_values
def test_allclose():
  a = Tensor([1.0, 2.0, 3.0])
  assert a.allclose(Tensor([1.0, 2.0, 3.000001])) is True
  assert a.allclose(Tensor([1.0, 2.0, 3.1])) is False
  assert a.allclose(Tensor([1.0, 2.0, 3.1]), atol=0.2) is True
  assert Tensor([math.nan]).allclose(Tensor([math.nan])) is False
  assert Tensor([math.nan]).allclose(Tensor([math.nan]), equal_nan=True) is True

def test_isclose_errors():
  with pytest.raises(RuntimeError) as e: Tensor([1.0]).isclose(Tensor([1.0]), rtol=-1)
  assert "rtol" in str(e.value)
  with pytest.raises(RuntimeError) as e: Tensor([1.0]).isclose(Tensor([1.0]), atol=-1)
  assert "atol" in str(e.value)
  with pytest.raises(RuntimeError) as e: Tensor([1]).isclose(Tensor([1.0]))
  assert "dtype" in str(e.value)

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("dim", [1, 0, -1])
def test_normalize(p, dim):
  x = np.random.default_rng(11).uniform(-2, 2, (3, 4)).astype(np.float32)
  compare(lambda t: F.normalize(t, p=p, dim=dim), lambda t: t.normalize(p=p, dim=dim), [x], grad=True, atol=1e-6,
          rtol=1e-5)

def test_normalize_zero_rows():
  # a zero vector stays zero and its gradient is 1/eps, finite, as in torch
  x = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]], np.float32)
  compare(lambda t: F.normalize(t, dim=1), lambda t: t.normalize(dim=1), [x], grad=True, rtol=1e-5)
  compare(lambda t: F.normalize(t, dim=1, eps=1e-3), lambda t: t.normalize(dim=1, eps=1e-3), [x * 1e-4], grad=True,
          rtol=1e-5)

# ---------------------------------------------------------------- gradients at the edges

def test_pow_edges():
  a = [0.0, 0.0, 0.0, 0.0, 2.0, -2.0, 2.0, 0.5]
  b = [0.0, 2.0, -1.0, 0.5, 0.0, 3.0, -1.5, 2.5]
  compare(torch.pow, lambda x, y: x ** y, [a, b], grad=True, rtol=1e-5)
  for e in (0, 0.0, 1, 2, 3, 0.5, -1, -2, 1.5, -0.5):
    compare(lambda x: x ** e, lambda x: x ** e, [[0.0, 2.0, 0.5, 3.0]], grad=True, rtol=1e-5)
  for base in (0, 0.0, 2, 0.5):
    compare(lambda x: base ** x, lambda x: base ** x, [[0.0, 2.0, -1.0, 0.5]], grad=True, rtol=1e-5)

def test_abs_at_zero():
  compare(torch.abs, lambda x: x.abs(), [[0.0, -0.0, 1.0, -1.0, math.nan]], grad=True)
  if not is_null(): assert not np.signbit(Tensor([-0.0]).abs().numpy()[0])   # abs(-0.0) is +0.0

def test_clip_bounds():
  x = [0.0, 1.0, 0.5, -1.0, 2.0, math.nan]
  compare(lambda t: t.clamp(0, 1), lambda t: t.clip(0, 1), [x], grad=True)
  compare(lambda t: t.clamp(min=0), lambda t: t.clamp(0), [x], grad=True)
  compare(lambda t: t.clamp(max=1), lambda t: t.clip(None, 1), [x], grad=True)
  compare(lambda t, lo, hi: t.clamp(lo, hi), lambda t, lo, hi: t.clip(lo, hi),
          [[0.0, 1.0, 0.5, -1.0, 2.0, 3.0], [0.0] * 6, [1.0, 1.0, 1.0, 1.0, 1.0, -1.0]], grad=True)
  compare(lambda t: t.clamp(2, 1), lambda t: t.clip(2, 1), [[0.0, 1.5, 3.0]])   # min > max: max everywhere

def test_clip_int_promotes():
  compare(lambda t: t.clamp(0.5, 2.5), lambda t: t.clip(0.5, 2.5), [[0, 1, 2, 3]], dtype=np.int32)
  compare(lambda t: t.clamp(0, 2), lambda t: t.clip(0, 2), [[-1, 1, 2, 3]], dtype=np.int32)

def test_sigmoid_large():
  x = [-1000.0, -100.0, -89.0, -80.0, 0.0, 80.0, 100.0, 1000.0, math.inf, -math.inf]
  compare(torch.sigmoid, lambda t: t.sigmoid(), [x], grad=True, atol=1e-30)
  if not is_null():
    t = Tensor(x, requires_grad=True)
    t.sigmoid().sum().backward()
    assert not np.isnan(t.grad.numpy()).any()

@pytest.mark.parametrize("vals,dim", [([0.0, 2.0, 3.0], None), ([0.0, 2.0, 0.0], None),
                                      ([[0.0, 2.0, 3.0], [1.0, 2.0, 3.0]], 1),
                                      ([[0.0, 2.0, 0.0], [0.0, 5.0, 3.0]], 0), ([[0.0, 0.0, 0.0], [1.0, 0.0, 3.0]], 1),
                                      ([[1.0, 2.0], [3.0, 4.0]], None)])
def test_prod_zeros(vals, dim):
  compare(lambda t: t.prod() if dim is None else t.prod(dim), lambda t: t.prod(dim), [vals], grad=True)

def test_comparisons_zero_grad():
  a, b = [1.5, -2.0, 0.0, 3.0], [1.5, 1.0, -1.0, 4.0]
  compare(lambda x, y: x * (x > y) + y * (x <= y) + (x == y) * 2.0,
          lambda x, y: x * (x > y) + y * (x <= y) + (x == y) * 2.0, [a, b], grad=True)
  compare(lambda x: x.sign() + x.floor() + x.round() + x.trunc() + x.ceil(),
          lambda x: x.sign() + x.floor() + x.round() + x.trunc() + x.ceil(), [[1.5, -2.3, 0.0, 2.5]], grad=True)
  x = Tensor([1.0, 2.0], requires_grad=True)
  for c in (x > 0, x < 1, x == 1, x != 1, x >= 1, x <= 1, x.isnan(), x.isinf(), x.isclose(Tensor([1.0, 1.0]))):
    assert not c.requires_grad, "a comparison has no gradient (torch)"
  with pytest.raises(RuntimeError): (x > 0).float().sum().backward()   # torch: does not require grad

TIES = np.array([[[1, 3, 3, 0], [2, 2, -1, 2], [0, 0, 0, 0]], [[3, 1, 3, 3], [-1, -1, 5, -1], [4, 4, 4, 4]]],
                np.float32)

@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (2, False), (-1, True)])
def test_max_min_dim_ties(op, dim, keepdim):
  # torch.max(dim) gives the whole gradient to one (the first) extreme element; amax splits it among the ties
  compare(lambda t: getattr(t, op)(dim, keepdim=keepdim).values, lambda t: getattr(t, op)(dim, keepdim=keepdim), [TIES],
          grad=True)
  compare(lambda t: getattr(t, op)(dim=dim, keepdim=keepdim).values, lambda t: getattr(t, op)(dim=dim, keepdim=keepdim),
          [TIES], grad=True)
  compare(lambda t: getattr(torch, "a" + op)(t, dim, keepdim=keepdim),
          lambda t: getattr(t, "a" + op)(dim, keepdim=keepdim), [TIES], grad=True, rtol=1e-5)

@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_all_ties(op):
  compare(lambda t: getattr(t, op)(), lambda t: getattr(t, op)(), [TIES], grad=True, rtol=1e-5)
  compare(lambda t: getattr(torch, "a" + op)(t, (0, 2)), lambda t: getattr(t, "a" + op)((0, 2)), [TIES], grad=True,
          rtol=1e-5)
  compare(lambda t: getattr(t, op)(), lambda t: getattr(t, op)(), [[math.nan, 1.0, math.nan]], grad=True)

def test_max_dim_nan_and_inf():
  x = [[1.0, math.nan, 3.0, math.nan], [-math.inf, -math.inf, -math.inf, -math.inf], [2.0, math.inf, math.inf, 1.0]]
  compare(lambda t: t.max(1).values, lambda t: t.max(1), [x], grad=True)
  compare(lambda t: t.min(1).values, lambda t: t.min(1), [[[math.inf, math.inf], [math.nan, -1.0]]], grad=True)
  compare(lambda t: t.argmax(1), lambda t: t.argmax(1), [x])

def test_max_dim_no_grad_same_value():
  # without requires_grad max(dim) is a plain reduce; the values agree either way
  x = TIES
  compare(lambda t: t.max(1).values, lambda t: t.max(1), [x])
  with Tensor.no_grad(): out = Tensor(x, requires_grad=True).max(1)
  assert not out.requires_grad

# ---------------------------------------------------------------- errors of torch's kind

OUT_OF_RANGE = [
  ("sum(3)", lambda x: x.sum(3)), ("sum(dim=-3)", lambda x: x.sum(dim=-3)), ("squeeze(5)", lambda x: x.squeeze(5)),
  ("cumsum(-3)", lambda x: x.cumsum(-3)), ("softmax(2)", lambda x: x.softmax(2)), ("argmax(4)", lambda x: x.argmax(4)),
  ("unsqueeze(9)", lambda x: x.unsqueeze(9)), ("transpose(0, 2)", lambda x: x.transpose(0, 2)),
  ("flatten(0, 2)", lambda x: x.flatten(0, 2)), ("cat(dim=2)", lambda x: x.cat(x, dim=2)),
  ("stack(dim=3)", lambda x: Tensor.stack(x, x, dim=3)), ("max(2)", lambda x: x.max(2)),
  ("amin(-3)", lambda x: x.amin(-3)),
  ("mean((0, 2))", lambda x: x.mean((0, 2))), ("logsumexp(2)", lambda x: x.logsumexp(2)),
  ("flip(2)", lambda x: x.flip(2)),
  ("permute(0, 2)", lambda x: x.permute(0, 2)), ("cumprod(2)", lambda x: x.cumprod(2)), ("var(2)", lambda x: x.var(2)),
  ("log_softmax(-3)", lambda x: x.log_softmax(-3)), ("split(1, 2)", lambda x: x.split(1, 2)),
  ("chunk(2, 3)", lambda x: x.chunk(2, 3)),
  ("unbind(2)", lambda x: x.unbind(2)), ("unflatten(2)", lambda x: x.unflatten(2, (1, 3))),
  ("size(2)", lambda x: x.size(2)),
  ("softmin(2)", lambda x: x.softmin(2)), ("logcumsumexp(2)", lambda x: x.logcumsumexp(2)),
  ("normalize(dim=2)", lambda x: x.normalize(dim=2)), ("repeat_interleave(2, 2)", lambda x: x.repeat_interleave(2, 2)),
  ("min(dim=5) with grad", lambda x: x.requires_grad_().min(dim=5)), ("argmin(-3)", lambda x: x.argmin(-3)),
  ("any(2)", lambda x: x.any(2)), ("std(2)", lambda x: x.std(2)),
]

@pytest.mark.parametrize("name,fn", OUT_OF_RANGE, ids=[n for n, _ in OUT_OF_RANGE])
def test_dim_out_of_range(name, fn):
  # one mechanism (_axis): IndexError naming the dim and the allowed range, as torch's "Dimension out of range"
  with pytest.raises(IndexError) as e: fn(Tensor.ones(2, 3))
  msg = str(e.value)
  assert "dim" in msg and "range" in msg, msg
  if "stack" in name: assert "[-3, 2]" in msg, msg
  elif "unsqueeze" in name: assert "[-3, 2]" in msg, msg
  else: assert "[-2, 1]" in msg, msg

def test_dim_zero_d():
  # a 0-d tensor takes dim 0 and -1 (torch) and nothing else
  x = Tensor(3.0)
  for d in (0, -1):
    _realize(x.sum(d), x.squeeze(d), x.cumsum(d), x.softmax(d), x.argmax(d), x.unsqueeze(d))
  for fn in (lambda: x.sum(1), lambda: x.squeeze(1), lambda: x.cumsum(-2), lambda: x.unsqueeze(2), lambda: x.argmax(1)):
    with pytest.raises(IndexError): fn()

def test_dim_repeated():
  for fn in (lambda x: x.sum((0, 0)), lambda x: x.sum((1, -1)), lambda x: x.permute(0, 0), lambda x: x.flip((0, -2)),
             lambda x: x.amax((1, 1)), lambda x: x.squeeze((0, 0))):
    with pytest.raises(RuntimeError) as e: fn(Tensor.ones(2, 3))
    assert "multiple times" in str(e.value)

def test_dim_type():
  with pytest.raises(TypeError): Tensor.ones(2, 3).sum(1.0)
  with pytest.raises(TypeError): Tensor.ones(2, 3).unsqueeze("0")

def test_shape_errors_torch_kind():
  x = Tensor.ones(2, 3)
  cases = [
    (lambda: x.cat(Tensor.ones(2, 4)), ("(2, 3)", "(2, 4)")),
    (lambda: x.cat(Tensor.ones(2, 3, 1)), ("2", "3")),
    (lambda: Tensor.cat(Tensor(1.0), Tensor(2.0)), ("zero-dimensional",)),
    (lambda: Tensor.stack(x, Tensor.ones(3, 2)), ("(2, 3)", "(3, 2)")),
    (lambda: x.reshape(4, 2), ("(2, 3)", "(4, 2)")),
    (lambda: x.reshape(-1, -1), ("-1",)),
    (lambda: x.reshape(-2, 3), ("-2",)),
    (lambda: x.permute(0,), ("(0,)",)),
    (lambda: x.permute(0, 1, 2), ("3",)),
    (lambda: x.expand(4, 3), ("(2, 3)", "(4, 3)")),
    (lambda: x.split([1, 1], 0) and x.split([1, 1], 1), ("[1, 1]",)),
  ]
  for fn, parts in cases:
    with pytest.raises(RuntimeError) as e: fn()
    for p in parts: assert p in str(e.value), f"{p!r} not in {e.value}"
    assert isinstance(e.value, ValueError)   # also a ValueError, for code written against tinygrad or numpy

def test_cat_list_and_promotion():
  compare(lambda a, b: torch.cat([a, b], 1), lambda a, b: Tensor.cat([a, b], dim=1),
          [np.ones((2, 3)), np.zeros((2, 1))], grad=True)

def test_one_hot_negative():
  with pytest.raises(RuntimeError) as e: Tensor([0, -1, 2]).one_hot(3)
  assert "-1" in str(e.value)
  with pytest.raises(RuntimeError): Tensor([0, 3]).one_hot(3)

@pytest.mark.skipif(not str(Device.DEFAULT).upper().startswith("CPU"),
                    reason="a lazy index is read for the check on the CPU only (TEENY_CHECK_INDICES=1 elsewhere)")
def test_one_hot_negative_lazy():
  with pytest.raises(RuntimeError) as e: (Tensor([0, 1, 2]) - 1).one_hot(3)
  assert "-1" in str(e.value)
