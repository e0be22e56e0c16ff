"""Numerics that used to come out silently wrong, checked against torch (CPU) and numpy: NaN-aware argmax/argmin and
max/min, the gradient of prod/cumprod with zeros, float16/bfloat16 reductions accumulated in float32, float % and //
with Python's sign rule (through fmod), integer % and // incl. zero divisors, the dtype of large Python ints, and
kernels whose output has no elements."""
import math
import numpy as np
import pytest
import torch
from teeny import Tensor, dtypes
from helpers import needs_values

pytestmark = needs_values
NAN, INF = math.nan, math.inf

def _t(a, dtype=None) -> Tensor: return Tensor(np.asarray(a), dtype=dtype)

# ---------------------------------------------------------------- argmax / argmin / max / min with NaN

def _nan_array(rng, shape, frac=0.2, dtype=np.float32):
  a = rng.standard_normal(shape).astype(dtype)
  a[rng.random(shape) < frac] = np.nan
  return a

class TestArgNaN:
  def test_repro(self):
    assert Tensor([1., NAN, 3.]).argmax().item() == 1
    assert Tensor([1., NAN, 3.]).argmin().item() == 1
    assert Tensor([NAN, 2., NAN]).argmax().item() == 0

  @pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 6), (1, 9), (9, 1)])
  @pytest.mark.parametrize("frac", [0.0, 0.3, 1.0])
  def test_against_torch(self, shape, frac):
    rng = np.random.default_rng(hash((shape, frac)) % 2**32)
    a = _nan_array(rng, shape, frac)
    ta, tt = _t(a), torch.tensor(a)
    for axis in [None] + list(range(-len(shape), len(shape))):
      for keepdim in (False, True):
        for name in ("argmax", "argmin"):
          kw = {} if axis is None else {"dim": axis}
          ref = getattr(tt, name)(**kw, keepdim=keepdim).numpy()
          out = getattr(ta, name)(axis, keepdim=keepdim)
          assert out.shape == ref.shape, (name, axis, keepdim)
          np.testing.assert_array_equal(out.numpy(), ref, err_msg=f"{name} axis={axis} keepdim={keepdim}")
        if axis is not None:
          np.testing.assert_array_equal(ta.max(axis, keepdim=keepdim).numpy(), tt.amax(axis, keepdim=keepdim).numpy())
          np.testing.assert_array_equal(ta.min(axis, keepdim=keepdim).numpy(), tt.amin(axis, keepdim=keepdim).numpy())

  @pytest.mark.parametrize("n", [1 << 16, (1 << 15) * 3 + 5])
  def test_big_reduce(self, n):
    # large reductions are split in two kernels: NaN must survive both
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    for pos in (0, n // 3, n - 1):
      b = a.copy()
      b[pos] = np.nan
      b[min(pos + 7, n - 1)] = np.nan
      t, tt = _t(b), torch.tensor(b)
      assert t.argmax().item() == tt.argmax().item() == pos
      assert t.argmin().item() == tt.argmin().item() == pos
      assert math.isnan(t.max().item()) and math.isnan(t.min().item())

  def test_ties_first_index(self):
    a = np.array([[3., 1., 3., NAN, NAN], [0., 0., -1., -1., 5.]], np.float32)
    for name in ("argmax", "argmin"):
      np.testing.assert_array_equal(getattr(_t(a), name)(1).numpy(), getattr(torch.tensor(a), name)(1).numpy())

  @pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8, np.int8, np.float64, np.float16])
  def test_other_dtypes(self, dt):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, size=(6, 7)).astype(dt)  # many ties
    if np.dtype(dt).kind == "f": a[1, 2] = np.nan
    for axis in (None, 0, 1):
      for name in ("argmax", "argmin"):
        kw = {} if axis is None else {"dim": axis}
        np.testing.assert_array_equal(getattr(_t(a), name)(axis).numpy(), getattr(torch.tensor(a), name)(**kw).numpy())

  def test_bool_argmax(self):
    a = np.array([[False, True, True], [False, False, False]])
    np.testing.assert_array_equal(_t(a).argmax(1).numpy(), torch.tensor(a).int().argmax(1).numpy())

  def test_maximum_minimum_nan(self):
    a = np.array([1., NAN, 3., NAN], np.float32)
    b = np.array([NAN, 2., 1., NAN], np.float32)
    np.testing.assert_array_equal(_t(a).maximum(_t(b)).numpy(), torch.maximum(torch.tensor(a), torch.tensor(b)).numpy())
    np.testing.assert_array_equal(_t(a).minimum(_t(b)).numpy(), torch.minimum(torch.tensor(a), torch.tensor(b)).numpy())
    # on constants (folded before any kernel runs) too
    assert math.isnan(Tensor(1.0).maximum(NAN).item()) and math.isnan(Tensor(NAN).minimum(1.0).item())

# ---------------------------------------------------------------- gradient of prod and cumprod with zeros

def _grad_pair(a: np.ndarray, fn_teeny, fn_torch):
  x = Tensor(a, requires_grad=True)
  fn_teeny(x).backward()
  xt = torch.tensor(a, requires_grad=True)
  fn_torch(xt).backward()
  return x.grad.numpy(), xt.grad.numpy()

class TestProdGrad:
  @pytest.mark.parametrize("vals", [[2., 0., 3.], [2., 0., 0., 3.], [0., 0., 0.], [0.], [5.], [1.5, -2., 3.],
                                    [0., 4., -1.5, 2.]])
  def test_full(self, vals):
    a = np.array(vals, np.float32)
    g, gt = _grad_pair(a, lambda x: x.prod(), lambda x: x.prod())
    np.testing.assert_allclose(g, gt, rtol=1e-6)

  @pytest.mark.parametrize("axis", [0, 1, -1])
  def test_axis(self, axis):
    a = np.array([[2., 0., 3., 1.], [0., 0., 1., 2.], [1., 2., 3., 4.], [0.5, -1., 0., 2.]], np.float32)
    w = np.arange(4, dtype=np.float32) + 1  # a weight per output, so each output's gradient differs
    g, gt = _grad_pair(a, lambda x: (x.prod(axis) * Tensor(w)).sum(), lambda x: (x.prod(axis) * torch.tensor(w)).sum())
    np.testing.assert_allclose(g, gt, rtol=1e-6)

  def test_several_axes_keepdim(self):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    a[0, 1, 2] = 0
    a[1, 0, 0] = a[1, 2, 0] = 0
    g, gt = _grad_pair(a, lambda x: x.prod((0, 2), keepdim=True).sum(),
                       lambda x: x.prod(0, keepdim=True).prod(2, keepdim=True).sum())
    np.testing.assert_allclose(g, gt, rtol=1e-5)

  @pytest.mark.parametrize("zeros", [0, 1, 2])
  def test_big(self, zeros):
    # a reduce large enough to be split in two kernels: the rule composes through both
    n = 1 << 16
    a = np.ones(n, np.float32)
    a[::4096] = 1.0001
    for i in range(zeros): a[1000 + 30000 * i] = 0
    g, gt = _grad_pair(a, lambda x: x.prod(), lambda x: x.prod())
    np.testing.assert_allclose(g, gt, rtol=1e-5)

  def test_float64(self):
    a = np.array([[3., 0., 2.], [1., 2., 3.]])
    g, gt = _grad_pair(a, lambda x: x.prod(1).sum(), lambda x: x.prod(1).sum())
    np.testing.assert_allclose(g, gt)

  @pytest.mark.parametrize("n", [6, 40, 300])
  @pytest.mark.parametrize("axis", [0, 1])
  def test_cumprod(self, n, axis):
    rng = np.random.default_rng(n)
    a = rng.uniform(0.8, 1.2, (3, n)).astype(np.float32)
    a[0, 1] = 0
    a[1, 2] = a[1, n - 2] = 0
    a = a if axis == 1 else np.ascontiguousarray(a.T)
    w = rng.uniform(-1, 1, a.shape).astype(np.float32)
    g, gt = _grad_pair(a, lambda x: (x.cumprod(axis) * Tensor(w)).sum(),
                       lambda x: (x.cumprod(axis) * torch.tensor(w)).sum())
    assert not np.isnan(g).any()
    np.testing.assert_allclose(g, gt, rtol=2e-4, atol=1e-5)

# ---------------------------------------------------------------- float16 / bfloat16 reductions in float32

HALFS = [(dtypes.float16, torch.float16), (dtypes.bfloat16, torch.bfloat16)]

def _half_ref(fn, a: np.ndarray, tdt) -> np.ndarray:
  """torch computed in float32 on the half-rounded input, rounded to the half dtype once at the end."""
  x = torch.tensor(a).to(tdt).float()
  return fn(x).to(tdt).float().numpy()

def _half_tensor(a: np.ndarray, dt) -> Tensor: return Tensor(a.astype(np.float32)).cast(dt)

class TestHalfReductions:
  def test_repro(self):
    x = Tensor.full((1000,), 100.0, dtype=dtypes.float16)
    assert x.mean().item() == 100.0 and x.mean().dtype == dtypes.float16
    assert x.var().item() == 0.0 and x.std().item() == 0.0
    ln = Tensor.arange(2000).cast(dtypes.float16).layernorm()
    assert not np.isnan(ln.numpy()).any()

  @pytest.mark.parametrize("dt,tdt", HALFS)
  @pytest.mark.parametrize("name", ["mean", "var", "std", "logsumexp", "softmax", "log_softmax", "sum", "cumsum",
                                    "prod"])
  def test_big_values(self, dt, tdt, name):
    rng = np.random.default_rng(1)
    a = rng.uniform(100, 300, (4, 3000)).astype(np.float32)  # sums and squares overflow float16
    if name == "prod": a = rng.uniform(0.5, 2.0, (4, 3000)).astype(np.float32)
    if name in ("logsumexp", "softmax", "log_softmax"): a = rng.uniform(-2, 2, (4, 70000)).astype(np.float32)
    fns = {"mean": (lambda x: x.mean(1), lambda x: x.mean(1)), "var": (lambda x: x.var(1), lambda x: x.var(1)),
           "std": (lambda x: x.std(1), lambda x: x.std(1)),
           "logsumexp": (lambda x: x.logsumexp(1), lambda x: x.logsumexp(1)),
           "softmax": (lambda x: x.softmax(1), lambda x: x.softmax(1)),
           "log_softmax": (lambda x: x.log_softmax(1), lambda x: x.log_softmax(1)),
           "sum": (lambda x: x[:, :200].sum(1), lambda x: x[:, :200].sum(1)),
           "cumsum": (lambda x: x[:, :100].cumsum(1), lambda x: x[:, :100].cumsum(1)),
           "prod": (lambda x: x[:, :20].prod(1), lambda x: x[:, :20].prod(1))}
    ft, fr = fns[name]
    out = ft(_half_tensor(a, dt))
    assert out.dtype == dt, f"{name} of {dt} returned {out.dtype}"
    ref = _half_ref(fr, a, tdt)
    tol = 2e-3 if dt == dtypes.float16 else 1.6e-2
    np.testing.assert_allclose(out.numpy().astype(np.float32), ref, rtol=tol,
                               atol=tol * (1e-3 if name == "softmax" else 1))

  @pytest.mark.parametrize("dt,tdt", HALFS)
  def test_var_mean_std_mean(self, dt, tdt):
    a = np.linspace(0, 2000, 1000).astype(np.float32).reshape(10, 100)
    x = _half_tensor(a, dt)
    tol = 2e-3 if dt == dtypes.float16 else 1.6e-2
    v, m = x.var_mean(1)
    s, m2 = x.std_mean(1)
    for o, f in ((v, lambda t: t.var(1)), (m, lambda t: t.mean(1)), (s, lambda t: t.std(1)), (m2, lambda t: t.mean(1))):
      assert o.dtype == dt
      ref = _half_ref(f, a, tdt)
      # var of values to 2000 is past float16's range
      if dt == dtypes.float16 and f is not None and np.isinf(ref).any():
        np.testing.assert_array_equal(np.isinf(o.numpy()), np.isinf(ref))
        continue
      np.testing.assert_allclose(o.numpy().astype(np.float32), ref, rtol=tol)

  @pytest.mark.parametrize("dt,tdt", HALFS)
  def test_layernorm(self, dt, tdt):
    a = np.arange(2000, dtype=np.float32).reshape(2, 1000) * 3
    out = _half_tensor(a, dt).layernorm(-1)
    assert out.dtype == dt
    ref = _half_ref(lambda t: torch.nn.functional.layer_norm(t, (1000,)), a, tdt)
    np.testing.assert_allclose(out.numpy().astype(np.float32), ref, atol=2e-2)

  def test_nn_norms_half(self):
    from teeny import nn
    a = np.arange(2 * 4 * 300, dtype=np.float32).reshape(2, 4, 300)
    x = Tensor(a).cast(dtypes.float16)
    ln = nn.LayerNorm(300)(x)
    assert not np.isnan(ln.numpy()).any()
    rms = nn.RMSNorm(300)(x).numpy()
    ref = torch.nn.functional.rms_norm(torch.tensor(a).half().float(), (300,), eps=1.1920928955078125e-07).numpy()
    np.testing.assert_allclose(rms.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    with Tensor.train():
      bn = nn.BatchNorm(4)(x).numpy()
    ref = torch.nn.functional.batch_norm(torch.tensor(a).half().float(), None, None, training=True).numpy()
    np.testing.assert_allclose(bn.astype(np.float32), ref, rtol=1e-2, atol=1e-2)

# ---------------------------------------------------------------- float % and // (Python / torch semantics)

SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 5.5, -5.5, 0.1, -0.1, 1e10, -1e10, 1e30, -1e30, 1e-30, -1e-30, INF, -INF,
           NAN, 7.0, 2.0 ** 24 + 1, -(2.0 ** 24) - 3]

def _grid(dt):
  a, b = np.meshgrid(np.array(SPECIAL, dt), np.array(SPECIAL, dt), indexing="ij")
  return a.ravel(), b.ravel()

def _assert_same(out: np.ndarray, ref: np.ndarray, a, b, what: str, rtol=0.0):
  out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
  with np.errstate(all="ignore"):
    bad = ~((np.isnan(out) & np.isnan(ref)) | (out == ref) | (np.abs(out - ref) <= rtol * np.abs(ref)))
  bad |= (out == 0) & (ref == 0) & (np.signbit(out) != np.signbit(ref))
  if bad.any():
    i = np.nonzero(bad)[0][:8]
    raise AssertionError(f"{what}: {bad.sum()} mismatches, e.g. " +
                         ", ".join(f"({a[j]!r}, {b[j]!r}) -> {out[j]!r} vs {ref[j]!r}" for j in i))

def _mod_refs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """torch.remainder, torch.floor_divide and torch.fmod of a and b. torch's vectorised float32 fmod gives nan where a /
  b
  overflows (1e10 fmod 1e-30); numpy's (and C's) fmod is exact there: those cells come from numpy, with torch's sign of
  zero (the dividend's, where numpy's remainder takes the divisor's)."""
  ta, tb = torch.tensor(a), torch.tensor(b)
  with np.errstate(all="ignore"):
    overflow = np.isfinite(a) & np.isfinite(b) & (b != 0) & np.isinf(a / b)
    def fix(t, n): return np.where(overflow & np.isnan(t), np.where(n == 0, np.copysign(0, a), n), t)
    return (fix(torch.remainder(ta, tb).numpy(), np.remainder(a, b)), torch.floor_divide(ta, tb).numpy(),
            fix(torch.fmod(ta, tb).numpy(), np.fmod(a, b)))

class TestFloatModFloorDiv:
  def test_repro(self):
    assert (Tensor(1e10) % 3.0).item() == 1.0
    assert (Tensor(1e17, dtype=dtypes.float64) % 3).item() == 1.0
    assert (Tensor(1.0) % INF).item() == 1.0
    assert (Tensor(-5.5) // INF).item() == -1.0
    assert (Tensor([1e10]) % 3.0).item() == 1.0 and (Tensor([1e17], dtype=dtypes.float64) % 3).item() == 1.0

  @pytest.mark.parametrize("dt", [np.float32, np.float64])
  def test_grid_against_torch(self, dt):
    a, b = _grid(dt)
    rmod, rdiv, rfmod = _mod_refs(a, b)
    _assert_same((_t(a) % _t(b)).numpy(), rmod, a, b, f"{dt.__name__} %")
    _assert_same((_t(a) // _t(b)).numpy(), rdiv, a, b, f"{dt.__name__} //")
    _assert_same(_t(a).fmod(_t(b)).numpy(), rfmod, a, b, f"{dt.__name__} fmod")
    _assert_same(_t(a).div(_t(b), rounding_mode="floor").numpy(), rdiv, a, b, "div floor")

  @pytest.mark.parametrize("dt", [np.float32, np.float64])
  def test_grid_constants(self, dt):
    # both operands constants: the values are folded on the host (math.fmod), not computed by a kernel
    a, b = _grid(dt)
    rmod, rdiv, _ = _mod_refs(a, b)
    tdt = dtypes.from_np(np.dtype(dt))
    for i in range(0, len(a), 7):
      x, y = Tensor(float(a[i]), dtype=tdt), float(b[i])
      _assert_same(np.array([(x % y).item()]), rmod[i:i + 1], a[i:i + 1], b[i:i + 1], "const %")
      _assert_same(np.array([(x // y).item()]), rdiv[i:i + 1], a[i:i + 1], b[i:i + 1], "const //")

  def test_python_semantics(self):
    # Python's float % and // on finite values (torch agrees; Python raises for a zero divisor)
    vals = [v for v in SPECIAL if v == v and v != 0]
    for x in vals:
      for y in vals:
        if math.isinf(x): continue
        assert (Tensor([x], dtype=dtypes.float64) % y).item() == pytest.approx(x % y, nan_ok=True, rel=1e-12), (x, y)
        assert (Tensor([x], dtype=dtypes.float64) // y).item() == pytest.approx(x // y, nan_ok=True, rel=1e-12), (x, y)

  def test_scalar_left(self):
    b = np.array([3., -3., 0.5, INF, -INF, 7.], np.float32)
    np.testing.assert_array_equal((10.0 % _t(b)).numpy(), torch.remainder(torch.tensor(10.0), torch.tensor(b)).numpy())
    np.testing.assert_array_equal((-10.0 // _t(b)).numpy(),
                                  torch.floor_divide(torch.tensor(-10.0), torch.tensor(b)).numpy())

  def test_float16(self):
    rng = np.random.default_rng(0)
    a = rng.uniform(-100, 100, 500).astype(np.float16)
    b = rng.uniform(-10, 10, 500).astype(np.float16)
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_allclose((_t(a) % _t(b)).numpy().astype(np.float32), torch.remainder(ta, tb).float().numpy(),
                               atol=2e-2)
    np.testing.assert_allclose((_t(a) // _t(b)).numpy().astype(np.float32), torch.floor_divide(ta, tb).float().numpy())

  def test_int_and_float_mixed(self):
    a = np.array([7, -7, 1 << 20], np.int32)
    np.testing.assert_array_equal((_t(a) % 2.5).numpy(), torch.remainder(torch.tensor(a), 2.5).numpy())
    np.testing.assert_array_equal((_t(a) // -2.5).numpy(), torch.floor_divide(torch.tensor(a), -2.5).numpy())

class TestIntModFloorDiv:
  @pytest.mark.parametrize("dt", [np.int32, np.int64, np.int8, np.int16])
  def test_against_torch(self, dt):
    info = np.iinfo(dt)
    vals = np.array(sorted({0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, info.max, info.min + 1, info.max // 3}), dt)
    a, b = (x.ravel() for x in np.meshgrid(vals, vals, indexing="ij"))
    nz = b != 0
    ta, tb = torch.tensor(a[nz]), torch.tensor(b[nz])
    out_mod, out_div, out_fmod = (_t(a) % _t(b)).numpy(), (_t(a) // _t(b)).numpy(), _t(a).fmod(_t(b)).numpy()
    np.testing.assert_array_equal(out_mod[nz], torch.remainder(ta, tb).numpy())
    np.testing.assert_array_equal(out_div[nz], torch.floor_divide(ta, tb).numpy())
    np.testing.assert_array_equal(out_fmod[nz], torch.fmod(ta, tb).numpy())
    # teeny's documented rule for integer division by zero: 0 (torch raises)
    assert (out_mod[~nz] == 0).all() and (out_div[~nz] == 0).all() and (out_fmod[~nz] == 0).all()

  def test_python_scalars(self):
    a = np.array([-7, -1, 0, 1, 7, 100], np.int64)
    for y in (3, -3, 1, -1, 7):
      np.testing.assert_array_equal((_t(a) % y).numpy(), a % y)
      np.testing.assert_array_equal((_t(a) // y).numpy(), a // y)
      np.testing.assert_array_equal((y % _t(a[a != 0])).numpy(), y % a[a != 0])

  def test_uint(self):
    a = np.array([0, 1, 7, 250], np.uint8)
    b = np.array([3, 2, 7, 9], np.uint8)
    np.testing.assert_array_equal((_t(a) % _t(b)).numpy(), torch.remainder(torch.tensor(a), torch.tensor(b)).numpy())
    np.testing.assert_array_equal((_t(a) // _t(b)).numpy(),
                                  torch.floor_divide(torch.tensor(a), torch.tensor(b)).numpy())

# ---------------------------------------------------------------- Python ints that do not fit int32

class TestIntInference:
  @pytest.mark.parametrize("v", [2 ** 40, 2 ** 31, -(2 ** 31) - 1, 3000000000, 2 ** 63 - 1, -(2 ** 63)])
  def test_scalar(self, v):
    t = Tensor(v)
    assert t.dtype == dtypes.int64 and t.item() == v
    assert torch.tensor(v).item() == v

  @pytest.mark.parametrize("v", [0, 1, -1, 2 ** 31 - 1, -(2 ** 31)])
  def test_scalar_fits_int32(self, v):
    t = Tensor(v)
    assert t.dtype == dtypes.int32 and t.item() == v

  @pytest.mark.parametrize("data", [[3000000000], [1, 2, 2 ** 40], [[1, 2], [3, -(2 ** 35)]], [[2 ** 62], [0]]])
  def test_lists(self, data):
    t = Tensor(data)
    assert t.dtype == dtypes.int64
    np.testing.assert_array_equal(t.numpy(), np.array(data, np.int64))
    np.testing.assert_array_equal(t.numpy(), torch.tensor(data).numpy())

  def test_small_lists_stay_int32(self):
    assert Tensor([1, 2, 3]).dtype == dtypes.int32 and Tensor([[2 ** 31 - 1], [-(2 ** 31)]]).dtype == dtypes.int32

  def test_full_and_ops(self):
    t = Tensor.full((3,), 2 ** 40)
    assert t.dtype == dtypes.int64 and t.tolist() == [2 ** 40] * 3
    assert (Tensor([True]) + 2 ** 40).tolist() == [2 ** 40 + 1]
    np.testing.assert_allclose((Tensor([1.0]) * 2 ** 70).numpy(), [2.0 ** 70], rtol=1e-6)  # a float tensor takes it
    assert (Tensor([2 ** 40]) + 1).tolist() == [2 ** 40 + 1]

  @pytest.mark.parametrize("v", [2 ** 63, -(2 ** 63) - 1, 2 ** 100, [2 ** 64], [1, 2 ** 63], [2 ** 63, -1]])
  def test_too_big(self, v):
    with pytest.raises((OverflowError, ValueError)) as e: Tensor(v)
    assert "int64" in str(e.value) or "integer dtype" in str(e.value)

  @pytest.mark.parametrize("args", [(2 ** 31, 2 ** 31 + 5), (-(2 ** 31) - 3, -(2 ** 31) + 2),
                                    (2 ** 40, 2 ** 40 + 20, 7), (0, 10), (5, 0, -2)])
  def test_arange(self, args):
    t, r = Tensor.arange(*args), torch.arange(*args)
    assert t.dtype == (dtypes.int32 if max(abs(v) for v in args) < 2 ** 31 else dtypes.int64)
    np.testing.assert_array_equal(t.numpy(), r.numpy())

  def test_uint64_explicit(self):
    assert Tensor([2 ** 63 + 5], dtype=dtypes.uint64).tolist() == [2 ** 63 + 5]

# ---------------------------------------------------------------- tensors with no elements

class TestZeroSize:
  def test_elementwise_writes_nothing(self):
    # a kernel for an empty output used to loop over its other dims and write past the end of the 0-byte buffer
    for shape in [(0, 300), (300, 0), (5, 0, 7), (0,)]:
      assert (Tensor.rand(*shape) + 1).realize().shape == shape
      assert Tensor.ones(*shape).pad(tuple((1, 1) if s else None for s in shape)).contiguous().numpy().size == 0
    big = Tensor.rand(1000) * 0 + 2
    np.testing.assert_array_equal(big.numpy(), np.full(1000, 2.0, np.float32))

  @pytest.mark.parametrize("xs,ws,kw", [((0, 2, 5, 5), (3, 2, 3, 3), {}),
                                        ((0, 4, 6, 6), (4, 2, 3, 3), dict(groups=2, padding=1)),
                                        ((0, 2, 7, 7), (3, 2, 3, 3), dict(stride=2, dilation=2))])
  def test_conv2d_batch0(self, xs, ws, kw):
    w = np.random.default_rng(0).standard_normal(ws).astype(np.float32)
    out = Tensor.ones(*xs).conv2d(Tensor(w), Tensor.ones(ws[0]), **kw)
    ref = torch.nn.functional.conv2d(torch.ones(xs), torch.tensor(w), torch.ones(ws[0]), **kw)
    assert out.shape == tuple(ref.shape) and out.numpy().shape == tuple(ref.shape)

  @pytest.mark.parametrize("xs,ws,kw", [((0, 2, 3, 3), (2, 3, 3, 3), {}),
                                        ((0, 2, 3, 3), (2, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
                                        ((0, 4, 3, 3), (4, 3, 3, 3), dict(groups=2)),
                                        ((0, 2, 4), (2, 3, 3), dict(stride=3))])
  def test_conv_transpose_batch0(self, xs, ws, kw):
    out = Tensor.ones(*xs).conv_transpose2d(Tensor.ones(*ws), Tensor.ones(ws[1] * kw.get("groups", 1)), **kw)
    f = torch.nn.functional.conv_transpose2d if len(xs) == 4 else torch.nn.functional.conv_transpose1d
    ref = f(torch.ones(xs), torch.ones(ws), torch.ones(ws[1] * kw.get("groups", 1)), **kw)
    assert out.shape == tuple(ref.shape) and out.numpy().shape == tuple(ref.shape)

  def test_conv_batch0_grad(self):
    x = Tensor.ones(0, 2, 5, 5, requires_grad=True)
    w = Tensor(np.ones((3, 2, 3, 3), np.float32), requires_grad=True)
    x.conv2d(w).sum().backward()
    assert x.grad.shape == (0, 2, 5, 5)
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2, 3, 3), np.float32))

  def test_reduce_empty_axis(self):
    a = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(_t(a).sum(0).numpy(), torch.tensor(a).sum(0).numpy())
    np.testing.assert_array_equal(_t(a).prod(0).numpy(), torch.tensor(a).prod(0).numpy())
    assert _t(a).sum(1).shape == (0,)

class TestMultinomial:
  def test_valid_weights_sample_their_distribution(self):
    # the argument checks must leave valid weights alone: frequencies follow them, zero weights are never drawn
    Tensor.manual_seed(7)
    w = np.array([[0.0, 1.0, 3.0, 0.0, 4.0], [5.0, 0.0, 0.0, 5.0, 0.0]], np.float32)
    idx = Tensor(w).multinomial(20000, replacement=True).numpy()
    for row, wr in zip(idx, w):
      freq = np.bincount(row, minlength=len(wr)) / len(row)
      np.testing.assert_allclose(freq, wr / wr.sum(), atol=0.02)
      assert (freq[wr == 0] == 0).all()
