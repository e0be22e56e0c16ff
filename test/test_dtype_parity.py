"""dtype parity with torch for what fuzzing found (notes of 2026-12-03): float ops with Python scalars an int dtype
cannot hold, exact integer pow, int64 sums and running sums/products and their dtype=, torch.result_type with 0-dim
tensors, var/std with correction >= n, in-place ops and scalar writes torch refuses. torch is the reference throughout.
Tests that read values are marked needs_values (skipped under DEV=NULL); dtype and error checks run everywhere."""
import warnings
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers import needs_values
from teeny import Tensor, dtypes

torch = pytest.importorskip("torch")

INTS = ["int8", "uint8", "int16", "int32", "int64"]
NUMERIC = ["bool", *INTS, "float16", "bfloat16", "float32", "float64"]

def tt(a, dt: str) -> Tensor: return Tensor(np.asarray(a)).cast(dt) if dt == "bfloat16" else Tensor(np.asarray(a, dt))
def th(a, dt: str): return torch.tensor(np.asarray(a, "float32" if dt == "bfloat16" else dt)).to(getattr(torch, dt))
def tonp(x) -> np.ndarray:
  if isinstance(x, Tensor): return (x.float() if x.dtype == dtypes.bfloat16 else x).numpy()
  return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
def tname(x) -> str: return str(x.dtype).removeprefix("torch.")

def same(got: Tensor, want, rtol: float = 0.0) -> None:
  assert got.dtype.name == tname(want), f"dtype: teeny {got.dtype.name}, torch {tname(want)}"
  if rtol: np.testing.assert_allclose(tonp(got), tonp(want), rtol=rtol)
  else: np.testing.assert_array_equal(tonp(got), tonp(want))

def int_values(draw, dt: str, n: int, lo=None, hi=None) -> np.ndarray:
  info = np.iinfo(dt)
  lo, hi = info.min if lo is None else max(lo, info.min), info.max if hi is None else min(hi, info.max)
  return np.array(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype=dt)

# ---------------------------------------------------------------- 1. float results of int tensors and Python scalars

@needs_values
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_float_ops_with_out_of_range_scalars(data):
  # the scalar is a float from the start (int8 tensor / 200 is 0.5), never wrapped into the int dtype (-1.79)
  dt = data.draw(st.sampled_from(["bool", *INTS]), label="dtype")
  a = np.array(data.draw(st.lists(st.booleans(), min_size=4, max_size=4))) if dt == "bool" else \
    int_values(data.draw, dt, 4, -1000, 1000)
  s = data.draw(st.one_of(st.integers(-2**40, 2**40), st.sampled_from([200, -1, 256, 2**31 + 5, -129, 300]),
                          st.floats(-1e6, 1e6, allow_nan=False)), label="scalar")
  if s == 0: s = 7
  same(tt(a, dt) / s, th(a, dt) / s)
  same(s / tt(a, dt), s / th(a, dt), rtol=1e-6)   # (torch's s / t is t.reciprocal() * s: 7 / 3 is 1 ulp off)
  same(tt(a, dt).div(s), th(a, dt).div(s))
  if dt != "bool": same(tt(a, dt).copysign(s), torch.copysign(th(a, dt), s))

@needs_values
def test_float_ops_with_scalars_repro():
  np.testing.assert_allclose((Tensor([100], dtype="int8") / 200).numpy(), [0.5])
  np.testing.assert_array_equal((Tensor([170], dtype="uint8") / -1).numpy(), [-170.0])
  np.testing.assert_allclose((Tensor([5]) / 2**40).numpy(), [5 / 2**40], rtol=1e-6)
  np.testing.assert_array_equal(Tensor([8], dtype="uint8").copysign(-1).numpy(), [-8.0])
  np.testing.assert_array_equal(Tensor([100], dtype="int8").copysign(200).numpy(), [100.0])

@needs_values
@settings(max_examples=25, deadline=None)
@given(st.data())
def test_int_ops_and_comparisons_with_scalars_match_torch(data):
  # an int result or a comparison: torch casts the scalar into the tensor's dtype (int8 < 200 is False, 200 wraps to
  # -56; int8 + 200 wraps); a float scalar compares in floats (int8 == 100.5 is False)
  dt = data.draw(st.sampled_from(INTS), label="dtype")
  a = int_values(data.draw, dt, 4, -300, 300)
  s = data.draw(st.one_of(st.sampled_from([200, -200, 356, 100, -1, 255, 256, 2**31 + 5]), st.integers(-2**20, 2**20),
                          st.sampled_from([100.5, -0.5, 2.5])), label="scalar")
  if dt == "uint8" and isinstance(s, int) and not -255 <= s <= 255: s = 200
  x, y = tt(a, dt), th(a, dt)
  for f in (lambda p: p < s, lambda p: p > s, lambda p: p == s, lambda p: p != s, lambda p: p <= s, lambda p: p >= s,
            lambda p: p + s, lambda p: p * s, lambda p: p - s):
    same(f(x), f(y))

# ---------------------------------------------------------------- 2. integer pow: exact, wrapping

@needs_values
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_int_pow_tensor_exponent_matches_torch(data):
  da, de = data.draw(st.sampled_from(INTS), label="base"), data.draw(st.sampled_from(INTS), label="exponent")
  a = int_values(data.draw, da, 6)
  e = int_values(data.draw, de, 6, *data.draw(st.sampled_from([(0, 70), (-5, 5), (None, None)]), label="range"))
  same(tt(a, da) ** tt(e, de), th(a, da) ** th(e, de))
  same(tt(a, da) ** tt(e, de).realize(), th(a, da) ** th(e, de))   # (exponent on the device: every bit is looped)

@needs_values
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_int_pow_python_exponent_matches_torch(data):
  dt = data.draw(st.sampled_from(INTS), label="dtype")
  a = int_values(data.draw, dt, 6)
  e = data.draw(st.one_of(st.integers(0, 70), st.integers(0, int(np.iinfo(dt).max))), label="exponent")
  same(tt(a, dt) ** e, th(a, dt) ** e)
  b = data.draw(st.integers(-3, 3) if dt != "uint8" else st.integers(0, 3), label="base")
  ex = np.abs(a.astype(np.int64) % 80).astype(dt)
  same(b ** tt(ex, dt), b ** th(ex, dt))

@needs_values
def test_int_pow_repro():
  assert (Tensor([3], dtype="int64") ** 39).numpy()[0] == 3**39
  i32 = torch.int32
  same(Tensor([100000]) ** Tensor([2]), torch.tensor([100000], dtype=i32) ** torch.tensor([2], dtype=i32))
  # negative tensor exponents, as torch: 1 for base 1, +-1 for base -1, else 0
  b, e = [1, -1, -1, 2, 0, -3], [-5, -3, -2, -1, -1, -7]
  same(Tensor(b, dtype="int64") ** Tensor(e, dtype="int64"), torch.tensor(b) ** torch.tensor(e))
  np.testing.assert_array_equal((Tensor([True, False]) ** 3).numpy(), (torch.tensor([True, False]) ** 3).numpy())
  assert (Tensor([True]) ** 3).dtype == dtypes.int32   # (teeny's Python int is int32; torch's int64)

def test_int_pow_negative_python_exponent_raises():
  with pytest.raises(RuntimeError, match="negative integer powers"): torch.tensor([2]) ** -1
  with pytest.raises(RuntimeError, match="negative integer powers"): Tensor([2]) ** -1
  assert (Tensor([2]) ** 2.0).dtype == dtypes.float32 and (Tensor([2]) ** -1.0).dtype == dtypes.float32

def test_int_pow_stays_one_kernel_sized():
  # a Python exponent is unrolled over its bits; a tensor exponent from host data loops over the bits its values use
  assert len((Tensor([3], dtype="int64") ** 39).uop.toposort) < 40
  assert len((Tensor([3], dtype="int64") ** Tensor([5], dtype="int64")).uop.toposort) < 40

# ---------------------------------------------------------------- 3. sums, products, running sums: int64 and dtype=

@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod"])
def test_reduce_result_dtype_matches_torch(dt, op):
  a = np.array([1, 0, 1])
  args = () if op in ("sum", "prod") else (0,)
  assert getattr(tt(a, dt), op)(*args).dtype.name == tname(getattr(th(a, dt), op)(*args))
  assert getattr(tt(a, dt).reshape(3, 1)[0, 0], op)(*args).dtype.name == tname(getattr(th(a, dt)[0], op)(*args))

@needs_values
@pytest.mark.parametrize("src", ["bool", "uint8", "int32", "float32"])
@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "int64", "float16", "float64"])
@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod", "mean"])
def test_reduce_dtype_argument_matches_torch(src, dt, op):
  # dtype= casts the input first, and the op runs in that dtype (cumsum(dtype=uint8) of 300, 300 is 44, 88)
  a = np.array([300, 300, 7, 1]) if src in ("int32", "float32") else np.array([3, 200, 1, 1]) if src == "uint8" \
    else np.array([1, 0, 1, 1]) if src == "bool" else np.array([100, -3, 2, 1])
  x, y = tt(a, src), th(a, src)
  args = () if op in ("sum", "prod", "mean") else (0,)
  try: want = getattr(y, op)(*args, dtype=getattr(torch, dt))
  except RuntimeError:
    with pytest.raises(RuntimeError): getattr(x, op)(*args, dtype=dt)
    return
  got = getattr(x, op)(*args, dtype=dt)
  assert got.dtype.name == tname(want)
  np.testing.assert_allclose(tonp(got), tonp(want), rtol=1e-3 if dt == "float16" else 1e-6)

@needs_values
def test_int_sums_do_not_wrap():
  same(Tensor([2**31 - 1, 1]).sum(), torch.tensor([2**31 - 1, 1]).sum())
  same(Tensor([10, 10, 10], dtype="int8").cumprod(0), torch.tensor([10, 10, 10], dtype=torch.int8).cumprod(0))
  same(Tensor([200, 100], dtype="uint8").cumsum(0), torch.tensor([200, 100], dtype=torch.uint8).cumsum(0))
  same(Tensor([200, 100], dtype="uint8").cumsum(0, dtype="uint8"),
       torch.tensor([200, 100], dtype=torch.uint8).cumsum(0, dtype=torch.uint8))
  a = np.arange(600) % 7 - 3
  same(Tensor(a, dtype="int8").cumsum(0), torch.tensor(a, dtype=torch.int8).cumsum(0))   # (the blocked path, n > 256)

# ---------------------------------------------------------------- 4. torch.result_type: dims, 0-dim, Python scalars

PROMO = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
PY = ("bool", "int32", "float32")

def _operand(dt: str, kind: str):
  """(teeny operand, torch operand) of dtype dt: a tensor with dims, a 0-dim tensor, or a Python scalar."""
  if kind == "py":
    v = {"b": True, "f": 2.5}.get(getattr(dtypes, dt).kind, 2)
    return v, v
  shape = (2,) if kind == "dim" else ()
  return Tensor.ones(*shape, dtype=dt), torch.ones(shape, dtype=getattr(torch, dt))

def _expected(tx, ty, kx: str, ky: str) -> str:
  want = str(torch.result_type(tx, ty)).removeprefix("torch.")
  # teeny's Python int is int32 (its default int), torch's int64: the one place their Python scalars differ
  if want == "int64" and "int64" not in {tname(t) for t in (tx, ty) if isinstance(t, torch.Tensor)} and \
     any(k == "py" and type(t) is int for t, k in ((tx, kx), (ty, ky))): want = "int32"
  return want

@pytest.mark.parametrize("kx,ky", [("dim", "dim"), ("dim", "zero"), ("zero", "dim"), ("zero", "zero"), ("dim", "py"),
                                   ("py", "dim"), ("zero", "py"), ("py", "zero")])
def test_result_type_matches_torch(kx, ky):
  bad = []
  for dx in PROMO:
    for dy in PROMO:
      if (kx == "py" and dx not in PY) or (ky == "py" and dy not in PY): continue   # (one Python scalar a category)
      (x, tx), (y, ty) = _operand(dx, kx), _operand(dy, ky)
      want = _expected(tx, ty, kx, ky)
      assert tname(torch.where(torch.tensor([True, False]), tx, ty)) == str(torch.result_type(tx, ty)).removeprefix(
        "torch.")
      ops = {"*": lambda: x * y, "where": lambda: Tensor([True, False]).where(x, y)}
      if isinstance(x, Tensor) and isinstance(y, Tensor): ops["maximum"] = lambda: x.maximum(y)
      for name, f in ops.items():
        got = f().dtype.name
        if got != want: bad.append(f"{dx} ({kx}) {name} {dy} ({ky}): teeny {got}, torch {want}")
  assert not bad, "\n".join(bad[:20])

@needs_values
def test_zero_dim_promotion_values():
  T, tt_ = Tensor, torch.tensor
  same(T([1.5, 2.0], dtype="float16") + T(1.0), tt_([1.5, 2.0], dtype=torch.float16) + tt_(1.0))
  same(T([100], dtype="int8") + T(100), tt_([100], dtype=torch.int8) + tt_(100, dtype=torch.int32))
  same(T([3], dtype="int32") / T(2.0, dtype="float64"), tt_([3], dtype=torch.int32) / tt_(2.0, dtype=torch.float64))
  x = Tensor([1.0, 2.0], dtype="float16")
  x += Tensor(1.0)   # (float16 result: the in-place write keeps its dtype without a cast)
  np.testing.assert_array_equal(x.numpy(), [2.0, 3.0])

# ---------------------------------------------------------------- 5. var/std with correction >= n

@needs_values
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 4), st.integers(0, 6), st.booleans(), st.sampled_from(["var", "std"]))
def test_var_std_large_correction_matches_torch(n, correction, constant, op):
  a = np.full((2, n), 1.5, np.float32) if constant else np.arange(2 * n, dtype=np.float32).reshape(2, n)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = getattr(torch.tensor(a), op)(1, correction=correction).numpy()
    want_all = getattr(torch.tensor(a), op)(correction=correction).numpy()
  np.testing.assert_allclose(getattr(Tensor(a), op)(1, correction=correction).numpy(), want, rtol=1e-6)
  np.testing.assert_allclose(getattr(Tensor(a), op)(correction=correction).numpy(), want_all, rtol=1e-6)

# ---------------------------------------------------------------- 6. what torch refuses

@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int32", "int64", "float16", "float32"])
@pytest.mark.parametrize("other", [2, 2.5, True, "int64", "float32", "float64", "bool"])
@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_inplace_cast_rule_matches_torch(dt, other, op):
  def apply(x, y):
    if op == "+=": x += y
    elif op == "-=": x -= y
    elif op == "*=": x *= y
    else: x /= y
    return x
  x, tx = Tensor.ones(3, dtype=dt), torch.ones(3, dtype=getattr(torch, dt))
  y, ty = (Tensor.ones(3, dtype=other), torch.ones(3, dtype=getattr(torch, other))) if isinstance(other, str) \
    else (other, other)
  try: want = apply(tx, ty)
  except (RuntimeError, TypeError):   # (torch refuses bool subtraction with a TypeError-like RuntimeError too)
    with pytest.raises((RuntimeError, TypeError)): apply(x, y)
    return
  got = apply(x, y)
  assert got.dtype.name == tname(want)

def test_inplace_refusal_names_dtypes_and_fix():
  x = Tensor([1, 2, 3])
  with pytest.raises(RuntimeError, match=r"float32 .* can't be cast to .* int32.*x = x \* y"): x *= 2.5
  with pytest.raises(RuntimeError, match="int32"): x /= 2

@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32", "int64", "bool", "float32"])
@pytest.mark.parametrize("v", [2**31 + 5, 2**31 - 1, -2**31 - 1, -1, 255, 256, -255, -256, 127, -129, 2**63 - 1, 300,
                               2.5e10, float("inf"), float("nan"), -0.5, -1.5, 2.5, True])
def test_scalar_writes_that_overflow_raise(dt, v):
  # torch raises "value cannot be converted to type ... without overflow" for t[0] = v, full and tensor(); a negative
  # int may wrap into an unsigned dtype when its magnitude fits (uint8: -255..255)
  tdt = getattr(torch, dt)
  def torch_raises(f) -> bool:
    try: f()
    except (RuntimeError, ValueError): return True
    return False
  def put(t):
    t[0] = v
    return t
  cases = [(lambda: put(Tensor.zeros(3, dtype=dt)), lambda: put(torch.zeros(3, dtype=tdt))),
           (lambda: Tensor.full((2,), v, dtype=dt), lambda: torch.full((2,), v, dtype=tdt)),
           (lambda: Tensor(v, dtype=dt), lambda: torch.tensor(v, dtype=tdt))]
  if isinstance(v, int) and not isinstance(v, bool): cases.append((lambda: Tensor([v, 0], dtype=dt),
                                                                 lambda: torch.tensor([v, 0], dtype=tdt)))
  for ours, theirs in cases:
    if dt.startswith("float") or dt == "bool" or isinstance(v, bool): continue   # (only integer dtypes are checked)
    if torch_raises(theirs):
      with pytest.raises(OverflowError, match=f"{v!r}.*{dt}"): ours()
    else: ours()

@needs_values
def test_scalar_writes_in_range_keep_torchs_values():
  t = Tensor.zeros(3, dtype="uint8")
  t[0] = -1
  t[1] = -200
  np.testing.assert_array_equal(t.numpy(), [255, 56, 0])
  t32 = Tensor.zeros(2, dtype="int32")
  t32[0] = 2**31 - 1
  np.testing.assert_array_equal(t32.numpy(), [2**31 - 1, 0])
  with pytest.raises(OverflowError, match="int32"): t32[1] = 2**31 + 5
