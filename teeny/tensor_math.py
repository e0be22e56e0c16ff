"""torch-named Tensor methods built from other Tensor ops: elementwise math in torch's spellings, the matrix products
with beta/alpha (addmm, baddbmm...), casts and `new_*` constructors, metadata queries, and the in-place `op_` variants.

`class Tensor(MathMixin)` inherits these, so `self` is always a Tensor. Like tensor_nn.py, this module never imports
tensor.py: it reaches the class as `type(self)`.
"""
from __future__ import annotations
import math
from collections import namedtuple
from typing import TYPE_CHECKING, Any, Callable
from teeny.dtype import DType, dtypes, least_upper_dtype, to_dtype
from teeny.helpers import broadcast_shape, broadcasts_to
from teeny.indexing import check_index_range
from teeny.uop.ops import Ops, UOp

if TYPE_CHECKING:
  from teeny.tensor import Tensor

HALF = (dtypes.float16, dtypes.bfloat16)

def _via_f32(x: Tensor, fn: Callable[..., Tensor], *others: Tensor) -> Tensor:
  """fn computed in float32 for float16/bfloat16 operands (torch's opmath), the result rounded back to their dtype."""
  if x.dtype not in HALF: return fn(x, *others)
  return fn(x.cast(dtypes.float32), *[o.cast(dtypes.float32) for o in others]).cast(x.dtype)

def _float_only(fn: str, dt: DType):
  """torch's NotImplementedError for a float-only op given an integer or bool tensor."""
  if dt.kind != "f":
    raise NotImplementedError(f"{fn}: not implemented for {dt.name} tensors (torch neither); it needs a floating-point "
                              "tensor: cast first, e.g. x.float()")

def _signbit(x: Tensor) -> Tensor:
  """True where the sign bit is set: negative values, -0.0 and -nan for floats; x < 0 for ints; False for bools."""
  if x.dtype.kind == "f":
    xs = x.detach().cast(dtypes.float32) if x.dtype in HALF else x.detach()   # (OpenCL cannot bitcast a half)
    return xs.bitcast(dtypes.int64 if xs.dtype == dtypes.float64 else dtypes.int32) < 0
  if x.dtype.kind == "i": return x.detach() < 0
  return x.full_like(False, dtype=dtypes.bool)

def _atan2(y: Tensor, x: Tensor) -> Tensor:
  """atan2 of floats as C's: the quadrant from both signs (signed zeros included), atan of the ratio no larger than 1
  (no division overflows), atan2(+-inf, +-inf) = +-pi/4 or +-3pi/4, nan in gives nan. |y| and |x| are taken with a
  where on the sign bit, so the gradient is y's and x's true one (also at y = 0)."""
  ys, xs = _signbit(y), _signbit(x)
  ay, ax = ys.where(-y, y), xs.where(-x, x)
  swap = ay > ax
  lo, hi = swap.where(ax, ay), swap.where(ay, ax)
  both_inf = (ay == math.inf) & (ax == math.inf)
  a = both_inf.where(1.0, lo / (hi == 0).where(1.0, hi)).atan()
  a = swap.where(math.pi / 2 - a, a)
  a = xs.where(math.pi - a, a)
  return ys.where(-a, a)

def _hypot(a: Tensor, b: Tensor) -> Tensor:
  """sqrt(a*a + b*b) without overflow or underflow: max * sqrt(1 + (min/max)**2); inf if either is inf (even with a
  nan), else nan if either is nan."""
  aa, ab = a.abs(), b.abs()
  m, n = aa.maximum(ab), aa.minimum(ab)
  r = n / (m == 0).where(1.0, m)
  out = m * (r * r + 1).sqrt()
  out = (a.isnan() | b.isnan()).where(math.nan, out)
  return (aa.isinf() | ab.isinf()).where(math.inf, out)

def _check_bcast(fn: str, what: str, t: Tensor, shape: tuple) -> None:
  if not broadcasts_to(tuple(t.shape), tuple(shape)):
    raise RuntimeError(f"{fn}: {what} of shape {tuple(t.shape)} cannot be broadcast to the result's shape "
                       f"{tuple(shape)}; give it that shape or one that broadcasts to it")

def _check_matrices(fn: str, names: tuple[str, ...], ranks: tuple[int, ...], *ts: Tensor) -> None:
  """Each operand has the rank torch wants, the same dtype (torch's matrix products do not promote) and not bool."""
  for n, r, t in zip(names, ranks, ts):
    if t.ndim != r:
      what = {1: "a vector (1-D)", 2: "a matrix (2-D)", 3: "a 3-D tensor"}[r]
      raise RuntimeError(f"{fn}: {n} must be {what}, got shape {tuple(t.shape)}; reshape it, or use matmul for "
                         "broadcasting products")
  if len({t.dtype for t in ts}) > 1:
    raise RuntimeError(f"{fn}: expected {' and '.join(names)} to have the same dtype, but got "
                       f"{', '.join(t.dtype.name for t in ts)} (torch does not promote here); cast one first")
  if ts[0].dtype == dtypes.bool:
    raise NotImplementedError(f"{fn}: not implemented for bool tensors (torch neither); cast them first, e.g. "
                              "x.float()")

def _scalar_for(fn: str, name: str, v: Any, dt: DType, strict: bool = False) -> Any:
  """A beta/alpha/value scalar for a result of dtype dt: torch truncates a float one to an int for an integer result
  (strict: raises instead, as torch's addr)."""
  if dt.kind in "iub" and isinstance(v, float):
    if strict:
      raise RuntimeError(f"{fn}: for integral input tensors, argument {name} must not be a floating point number "
                         f"(got {v}), as torch; pass an int or cast the tensors to float")
    return int(v)
  return v

def _scaled(x: Tensor, s: Any) -> Tensor: return x if s == 1 else x * s

def _add_scaled(fn: str, inp: Tensor, prod: Tensor, beta: Any, alpha: Any, strict: bool = False) -> Tensor:
  """beta * inp + alpha * prod (torch's add* family): inp broadcast to prod's shape; beta = 0 ignores inp entirely
  (nan and inf in it do not propagate), as torch."""
  _check_bcast(fn, "input", inp, tuple(prod.shape))
  beta, alpha = _scalar_for(fn, "beta", beta, prod.dtype, strict), _scalar_for(fn, "alpha", alpha, prod.dtype, strict)
  out = _scaled(prod, alpha)
  # (beta = 0: inp still gets its gradient, zeros, as torch's, through an empty slice of it: its values are never read)
  if beta == 0: return out + inp.reshape(-1)[:0].sum().cast(out.dtype)
  return _scaled(inp, beta) + out

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "uint16": "UInt16",
               "uint32": "UInt32", "uint64": "UInt64"}

# ---- special functions: series and asymptotic expansions from Tensor ops (float32 inside for float16/bfloat16)

_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)

def _safe_where(cond: Tensor, x: Tensor, fill: float) -> Tensor:
  """x where cond, else a harmless constant: the branch a where does not pick then gets no inf/nan into a gradient."""
  return cond.where(x, fill)

def _lgamma(x: Tensor) -> Tensor:
  """log|Gamma(x)|: for z >= 8 Stirling's series, below it the recurrence Gamma(z) = Gamma(z + 8) / (z (z+1) ... (z+7)),
  and for x < 0.5 the reflection log(pi / |sin(pi x)|) - lgamma(1 - x) (x - round(x) keeps sin's argument exact)."""
  neg = x < 0.5
  z = neg.where(1 - x, x)
  small = z < 8
  zs = _safe_where(small, z, 8.0)
  p = zs
  for i in range(1, 8): p = p * (zs + i)
  w = small.where(z + 8, z)
  r = w.reciprocal()
  r2 = r * r
  series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * (-1 / 1680 + r2 * (1 / 1188 + r2 * (-691 / 360360))))))
  lg = (w - 0.5) * w.log() - w + _LOG_2PI_HALF + series - small.where(p.log(), 0.0)
  frac = x - x.round()
  s = _safe_where(neg, (frac * math.pi).sin().abs(), 1.0)
  out = neg.where(math.log(math.pi) - s.log() - lg, lg)
  return x.isinf().where(math.inf, out)

def _digamma(x: Tensor) -> Tensor:
  """d/dx log Gamma(x): for z >= 8 its asymptotic series, below it the recurrence psi(z) = psi(z + 8) - sum 1/(z + i),
  and for x < 0.5 the reflection psi(1 - x) - pi / tan(pi x). As torch: -inf at +0, +inf at -0, nan at negative
  integers and -inf."""
  neg = x < 0.5
  z = neg.where(1 - x, x)
  small = z < 8
  zs = _safe_where(small, z, 8.0)
  shift = zs.reciprocal()
  for i in range(1, 8): shift = shift + (zs + i).reciprocal()
  w = small.where(z + 8, z)
  r = w.reciprocal()
  r2 = r * r
  series = r2 * (-1 / 12 + r2 * (1 / 120 + r2 * (-1 / 252 + r2 * (1 / 240 + r2 * (-1 / 132 + r2 * (691 / 32760))))))
  psi = w.log() - 0.5 * r + series - small.where(shift, 0.0)
  integral = x == x.round()
  frac = integral.where(x * 0, x - x.round())   # (x * 0 keeps the sign of a zero: psi(-0.0) is +inf)
  t = _safe_where(neg, (frac * math.pi).tan(), 1.0)
  out = neg.where(psi - math.pi / t, psi)
  return (integral & (x < 0)).where(math.nan, out)

def _erfinv_guess(x: Tensor) -> Tensor:
  """erfinv to about float32 precision (M. Giles, "Approximating the erfinv function", GPU Computing Gems, 2011)."""
  w = -((1 - x) * (1 + x)).log()
  central = w < 5
  a = _safe_where(central, w, 5.0) - 2.5
  pa = a * 2.81022636e-08 + 3.43273939e-07
  for c in (-3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
    pa = pa * a + c
  b = _safe_where(central.logical_not(), w, 9.0).sqrt() - 3
  pb = b * -0.000200214257 + 0.000100950558
  for c in (0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
    pb = pb * b + c
  return central.where(pa, pb) * x

def _erfinv(x: Tensor) -> Tensor:
  """erfinv: Giles' approximation, refined by two Newton steps on erf for float64. The value is computed detached and
  the gradient is torch's, sqrt(pi)/2 * exp(erfinv(x)**2), added as (x - x.detach()) * that. +-1 give +-inf, |x| > 1
  nan."""
  xd = x.detach()
  ax = xd.abs()
  inside = ax < 1
  xs = _safe_where(inside, xd, 0.0)
  y = _erfinv_guess(xs)
  half_sqrt_pi = math.sqrt(math.pi) / 2
  if x.dtype == dtypes.float64:
    for _ in range(2): y = y - (y.erf() - xs) * (y * y).exp() * half_sqrt_pi
  y = y + (x - xd) * ((y * y).exp() * half_sqrt_pi)
  return inside.where(y, (ax == 1).where((xd > 0).where(math.inf, -math.inf), math.nan))

def _bessel_i(x: Tensor, order: int) -> Tensor:
  """The modified Bessel function I0 or I1 of x >= 0: its power series (x/2)^order sum (x^2/4)^k / (k! (k+order)!)
  up to x = 20, and beyond it the asymptotic expansion e^x / sqrt(2 pi x) * sum b_k / x^k, b_k = b_{k-1} ((2k-1)^2 -
  4 order^2) / (8k) (overflowing where exp does, as torch's)."""
  small = x <= 20
  t = _safe_where(small, x, 0.0)
  t = t * t * 0.25
  coeffs = [1.0]
  for k in range(1, 41): coeffs.append(coeffs[-1] / (k * (k + order)))
  series = t * coeffs[-1] + coeffs[-2]
  for c in reversed(coeffs[:-2]): series = series * t + c
  if order: series = series * (_safe_where(small, x, 0.0) * 0.5)
  big = _safe_where(small.logical_not(), x, 21.0)
  r = big.reciprocal()
  acoef = [1.0]
  for k in range(1, 25): acoef.append(acoef[-1] * ((2 * k - 1) ** 2 - 4 * order * order) / (8 * k))
  asym = r * acoef[-1] + acoef[-2]
  for c in reversed(acoef[:-2]): asym = asym * r + c
  return small.where(series, big.exp() * (big * (2 * math.pi)).rsqrt() * asym)

def _i0(x: Tensor) -> Tensor:
  """The modified Bessel function I0 (_bessel_i), computed detached; its gradient I1(x) is added as (x - x.detach())
  * I1 (through the series itself, the terms' adjoints overflowed float32 where the coefficients underflowed:
  NaN gradients for 7 <= |x| <= 20)."""
  xd = x.detach()
  ax = xd.abs()
  v, g = _bessel_i(ax, 0), _bessel_i(ax, 1) * xd.sign()
  return g.isinf().where(v, v + (x - xd) * g)   # (where I1 overflows, 0 * inf would make the value nan)

def _pow2(e: Tensor, dt: DType) -> Tensor:
  """2**e exactly, for int32 e within dt's normal exponents (built from the bits, not exp2)."""
  if dt == dtypes.float64: return ((e.cast(dtypes.int64) + 1023) << 52).bitcast(dtypes.float64)
  return ((e + 127) << 23).bitcast(dtypes.float32)

def _frexp(x: Tensor) -> tuple[Tensor, Tensor]:
  """(mantissa, int32 exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1 (0, inf and nan: themselves
  and exponent 0, as torch). The exponent is read from the bits (subnormals scaled up first); the mantissa is x times
  two exact powers of two, so its gradient is 2**-exponent (torch's)."""
  wide = x.dtype == dtypes.float64
  ib, mant, bias, emask = (dtypes.int64, 52, 1022, 0x7FF) if wide else (dtypes.int32, 23, 126, 0xFF)
  xd = x.detach()
  sub = (xd != 0) & (xd.abs() < (2.2250738585072014e-308 if wide else 1.1754943508222875e-38))
  scaled = sub.where(xd * float(2 ** (mant + 2)), xd)
  biased = (scaled.bitcast(ib) >> mant) & emask
  e = (biased - bias - sub.where(mant + 2, 0)).cast(dtypes.int32)
  e = ((xd == 0) | xd.isinf() | xd.isnan()).where(0, e)
  e1 = e // 2
  return x * _pow2(-e1, x.dtype) * _pow2(e1 - e, x.dtype), e

def _euclid_steps(dt: DType) -> int:
  """Euclid's algorithm needs at most this many remainder steps for values of dt: by Lame's theorem k steps need a
  divisor of at least Fibonacci(k + 1), so count the Fibonacci numbers up to the largest magnitude, plus one for a
  first step that swaps the operands."""
  top = 1 << (dt.bits - (1 if dt.kind == "i" else 0))
  f, n = [1, 1], 1
  while f[-1] <= top: f, n = [f[1], f[0] + f[1]], n + 1
  return n + 1

def _gcd(a: Tensor, b: Tensor) -> Tensor:
  """gcd of two int tensors of one dtype, as torch computes it: |a| and |b| (|INT_MIN| wraps to INT_MIN), then Euclid's
  algorithm (divisor, dividend) -> (dividend % divisor, divisor) until the divisor is 0, unrolled to a fixed number of
  lazy remainder steps enough for the dtype (one fused elementwise kernel). gcd(INT_MIN, 6) is -2, as torch's."""
  d, r = a.abs(), b.abs()
  for _ in range(_euclid_steps(a.dtype)):
    zero = d == 0
    # (a divisor of 0 or -1 is replaced by 1: x % 1 is 0 like x % -1, and nothing traps on INT_MIN % -1)
    safe = (zero | (d == -1)).where(1, d) if a.dtype.kind == "i" else zero.where(1, d)
    d, r = r._alu(Ops.MOD, safe), zero.where(r, d)
  return r

# torch.return_types.frexp: a tuple that also has .mantissa and .exponent
_MantissaExponent = namedtuple("_MantissaExponent", ["mantissa", "exponent"])

def _norm_dim(d, ndim: int, fn: str) -> int:
  """d normalised into [0, ndim) (a 0-d tensor takes -1 and 0), else IndexError naming fn and the allowed range."""
  if not isinstance(d, int) or isinstance(d, bool): raise TypeError(f"{fn}: dim must be an int, got {d!r}")
  n = max(ndim, 1)
  if not -n <= d < n:
    raise IndexError(f"{fn}: dim {d} is out of range for a tensor with {ndim} dimensions (expected to be in range of "
                     f"[{-n}, {n - 1}])")
  return d % n

def _tensor_list(first: Any, others: tuple, fn: str) -> list:
  """The tensors of a torch-style variadic call: f(a, b), a.f(b) or f([a, b])."""
  ts = list(first) if isinstance(first, (list, tuple)) else [first]
  ts += list(others[0]) if len(others) == 1 and isinstance(others[0], (list, tuple)) else list(others)
  if not ts: raise RuntimeError(f"{fn}: expected at least one tensor")
  for i, t in enumerate(ts):
    if not hasattr(t, "uop"): raise TypeError(f"{fn}: expected Tensors, got {type(t).__name__} at position {i}")
  return ts

def _atleast(first: Any, others: tuple, n: int) -> Any:
  ts = _tensor_list(first, others, f"atleast_{n}d")
  out = []
  for t in ts:
    if t.ndim >= n: out.append(t)
    elif n == 1 or t.ndim == 0: out.append(t.reshape((1,) * n))
    elif n == 2: out.append(t.reshape(1, t.shape[0]))
    elif t.ndim == 2: out.append(t.reshape(*t.shape, 1))
    else: out.append(t.reshape(1, t.shape[0], 1))
  single = not isinstance(first, (list, tuple)) and not others
  return out[0] if single else tuple(out)

class MathMixin:
  # ---- elementwise math in torch's names
  def atan2(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.atan2(self, other): the angle of (other, self) in [-pi, pi], quadrant and signed zeros as C's atan2;
    ints promote to the default float, float16/bfloat16 compute in float32."""
    y, x = self._binop(other, to_float=True)
    return _via_f32(y, _atan2, x)
  arctan2 = atan2
  def hypot(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.hypot: sqrt(self**2 + other**2) without overflow; float tensors only (torch: not implemented for ints)."""
    a, b = self._binop(other)
    _float_only("hypot", a.dtype)
    return _via_f32(a, _hypot, b)
  def heaviside(self: Tensor, values) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.heaviside: 0 where self < 0, `values` where self == 0, 1 where self > 0 (nan gives 0, as torch).
    Both must have the same dtype (torch); not differentiable (torch has no derivative for it)."""
    T = type(self)
    if not isinstance(values, T): values = T(values, device=self.device, dtype=self.dtype)
    if values.dtype != self.dtype:
      raise RuntimeError(f"heaviside: self ({self.dtype.name}) and values ({values.dtype.name}) must have the same "
                         "dtype (torch: not implemented for different dtypes); cast values first")
    x = self.detach()
    return (x == 0).where(values.detach(), (x > 0).cast(self.dtype) if self.dtype != dtypes.bool else x)
  def deg2rad(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Degrees to radians (torch.deg2rad); ints give the default float."""
    return self._float() * (math.pi / 180)
  def rad2deg(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Radians to degrees (torch.rad2deg); ints give the default float."""
    return self._float() * (180 / math.pi)
  def ldexp(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self * 2**other (torch.ldexp): the promoted dtype of both, ints giving the default float."""
    a, b = self._binop(other, to_float=True)
    return a * b.exp2()
  def frac(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """x - trunc(x), with x's sign (torch.frac); float tensors only, as torch."""
    _float_only("frac", self.dtype)
    return self - self.trunc()
  def sgn(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.sgn: sign() for real tensors."""
    return self.sign()
  def signbit(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """True where the sign bit is set (torch.signbit): -0.0 and -nan included; False for unsigned and bool."""
    return _signbit(self)
  def positive(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self itself (torch.positive); a bool tensor raises as torch's unary + does."""
    if self.dtype == dtypes.bool:
      raise RuntimeError("positive: the `+` operator on a bool tensor is not supported (torch neither); "
                         "cast it first, e.g. x.int()")
    return self
  def absolute(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.absolute: abs()."""
    return self.abs()
  def negative(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.negative: neg()."""
    return self.neg()
  def fix(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.fix: trunc() (round toward zero)."""
    return self.trunc()
  def arcsin(self: Tensor) -> Tensor: return self.asin()  # type: ignore[misc]  # mixin: self is a Tensor
  def arccos(self: Tensor) -> Tensor: return self.acos()  # type: ignore[misc]  # mixin: self is a Tensor
  def arctan(self: Tensor) -> Tensor: return self.atan()  # type: ignore[misc]  # mixin: self is a Tensor
  def arcsinh(self: Tensor) -> Tensor: return self.asinh()  # type: ignore[misc]  # mixin: self is a Tensor
  def arccosh(self: Tensor) -> Tensor: return self.acosh()  # type: ignore[misc]  # mixin: self is a Tensor
  def arctanh(self: Tensor) -> Tensor: return self.atanh()  # type: ignore[misc]  # mixin: self is a Tensor
  def true_divide(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.true_divide: div() without rounding (ints give floats)."""
    return self.div(other)
  def divide(self: Tensor, other, rounding_mode: str | None = None) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.divide: div(other, rounding_mode=)."""
    return self.div(other, rounding_mode=rounding_mode)
  def multiply(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.multiply: mul()."""
    return self.mul(other)
  def subtract(self: Tensor, other, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.subtract: self - alpha * other."""
    return self.sub(other if alpha == 1 else other * alpha)
  def float_power(self: Tensor, exponent) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.float_power: self ** exponent computed and returned in float64, whatever the inputs' dtypes."""
    T = type(self)
    e = exponent.cast(dtypes.float64) if isinstance(exponent, T) else float(exponent)
    return self.cast(dtypes.float64).pow(e)
  def xlogy(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self * log(other), 0 where self == 0 unless other is nan (torch.xlogy); ints promote to the default float. The
    gradient is log(other) for self (0 where self == 0 and other <= 0) and self / other for other, as torch's."""
    x, y = self._binop(other, to_float=True)
    # where self == 0 and log(other) is not finite, log(1) stands in: the value is 0 and no nan reaches a gradient
    bad = (x == 0) & ((y > 0) & (y < math.inf)).logical_not() & y.isnan().logical_not()
    return x * bad.where(1.0, y).log()
  def sinc(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """sin(pi x) / (pi x), 1 at 0 (torch.sinc, gradient 0 there); ints give the default float."""
    def f(x: Tensor) -> Tensor:
      z = x == 0
      px = z.where(1.0, x * math.pi)
      return z.where(1.0, px.sin() / px)
    return _via_f32(self._float(), f)
  def nan_to_num(self: Tensor, nan: float = 0.0, posinf: float | None = None,  # type: ignore[misc]  # mixin
                 neginf: float | None = None) -> Tensor:
    """nan, +inf and -inf replaced (torch.nan_to_num): by 0 and the dtype's largest and smallest finite values unless
    given; the gradient passes where the value is kept. Integer and bool tensors come back unchanged (a copy)."""
    if self.dtype.kind != "f": return self.clone()
    big = dtypes.finfo_max(self.dtype)
    hi, lo = big if posinf is None else posinf, -big if neginf is None else neginf
    return self.isnan().where(nan, (self == math.inf).where(hi, (self == -math.inf).where(lo, self)))
  def logit(self: Tensor, eps: float | None = None) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """log(x / (1 - x)) (torch.logit), x clamped to [eps, 1 - eps] first when eps is given (gradient 0 outside)."""
    def f(x: Tensor) -> Tensor:
      # (below eps first, then above 1 - eps: torch's order, which matters for eps > 0.5)
      if eps is not None: x = (x < eps).where(eps, (x > 1 - eps).where(1 - eps, x))
      return (x / (1 - x)).log()
    return _via_f32(self._float(), f)
  def clamp_min(self: Tensor, min) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.clamp_min: clamp(min=min)."""
    return self.clamp(min=min)
  def clamp_max(self: Tensor, max) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.clamp_max: clamp(max=max)."""
    return self.clamp(max=max)

  def fmax(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Elementwise maximum ignoring nan (torch.fmax): nan only where both are nan; ties and the gradient go to self."""
    a, b = self._binop(other)
    return ((a >= b) | b.isnan()).where(a, b)
  def fmin(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Elementwise minimum ignoring nan (torch.fmin): nan only where both are nan; ties and the gradient go to self."""
    a, b = self._binop(other)
    return ((a <= b) | b.isnan()).where(a, b)
  def logaddexp2(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """log2(2**self + 2**other) without overflow (torch.logaddexp2); ints promote to the default float."""
    a, b = self._binop(other, to_float=True)
    return (a * math.log(2)).logaddexp(b * math.log(2)) * (1 / math.log(2))
  def logical_xor(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """True where exactly one of self and other is nonzero (torch.logical_xor)."""
    T = type(self)
    o = other.cast(dtypes.bool) if isinstance(other, T) else bool(other)
    return self.cast(dtypes.bool) != o
  def greater(self: Tensor, other) -> Tensor: return self > other  # type: ignore[misc]  # mixin: torch.greater
  def greater_equal(self: Tensor, other) -> Tensor: return self >= other  # type: ignore[misc]  # mixin
  def less(self: Tensor, other) -> Tensor: return self < other  # type: ignore[misc]  # mixin: torch.less
  def less_equal(self: Tensor, other) -> Tensor: return self <= other  # type: ignore[misc]  # mixin
  def not_equal(self: Tensor, other) -> Tensor: return self != other  # type: ignore[misc]  # mixin: torch.not_equal
  def bitwise_left_shift(self: Tensor, other) -> Tensor: return self.lshift(other)  # type: ignore[misc]  # mixin
  def bitwise_right_shift(self: Tensor, other) -> Tensor: return self.rshift(other)  # type: ignore[misc]  # mixin
  def isposinf(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """True at +inf (torch.isposinf); False everywhere for integer and bool tensors."""
    return self.isinf(detect_negative=False)
  def isneginf(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """True at -inf (torch.isneginf); False everywhere for integer and bool tensors."""
    return self.isinf(detect_positive=False)
  @property
  def itemsize(self: Tensor) -> int: return self.dtype.itemsize  # type: ignore[misc]  # mixin: torch's property
  @property
  def nbytes(self: Tensor) -> int: return self.numel() * self.dtype.itemsize  # type: ignore[misc]  # mixin

  # ---- matrix products in torch's names (no broadcasting of the products; the same dtype for every operand)
  def mm(self: Tensor, mat2: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Matrix product of two 2-D tensors (torch.mm): no broadcasting, both of one dtype."""
    _check_matrices("mm", ("mat1", "mat2"), (2, 2), self, mat2)
    if self.shape[1] != mat2.shape[0]:
      raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                         f"{mat2.shape[0]}x{mat2.shape[1]}): mat1's columns must equal mat2's rows")
    return self.matmul(mat2)
  def bmm(self: Tensor, mat2: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Batched matrix product of (b, n, m) and (b, m, p) tensors (torch.bmm): the batch sizes must be equal (torch
    does not broadcast them), both of one dtype."""
    _check_matrices("bmm", ("batch1", "batch2"), (3, 3), self, mat2)
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
      raise RuntimeError(f"bmm: batch1 of shape {tuple(self.shape)} and batch2 of shape {tuple(mat2.shape)} do not "
                         f"fit: batch2 must be ({self.shape[0]}, {self.shape[2]}, p) (equal batch sizes, no "
                         "broadcasting); use matmul to broadcast")
    return self.matmul(mat2)
  def mv(self: Tensor, vec: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Matrix-vector product of a 2-D and a 1-D tensor (torch.mv), both of one dtype."""
    _check_matrices("mv", ("mat", "vec"), (2, 1), self, vec)
    if self.shape[1] != vec.shape[0]:
      raise RuntimeError(f"mv: size mismatch, mat of shape {tuple(self.shape)} and vec of shape {tuple(vec.shape)}: "
                         "vec's length must equal mat's columns")
    return self.matmul(vec)
  def _add_product(self: Tensor, fn: str, prod: Tensor, beta, alpha) -> Tensor:  # type: ignore[misc]  # mixin
    if self.dtype != prod.dtype:
      raise RuntimeError(f"{fn}: expected input and the matrices to have the same dtype, but got {self.dtype.name} and "
                         f"{prod.dtype.name} (torch does not promote here); cast one first")
    return _add_scaled(fn, self, prod, beta, alpha)
  def inner(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Sum over the last dims of both (torch.inner): shape self.shape[:-1] + other.shape[:-1]; a 0-d operand
    multiplies. Both of one dtype, as torch."""
    if self.dtype != other.dtype:
      raise RuntimeError(f"inner: both inputs should have the same dtype, got {self.dtype.name} and "
                         f"{other.dtype.name}; cast one first")
    if self.ndim == 0 or other.ndim == 0: return self * other
    if self.shape[-1] != other.shape[-1]:
      raise RuntimeError(f"inner: the last dims of self {tuple(self.shape)} and other {tuple(other.shape)} must match")
    k = self.shape[-1]
    out = self.reshape(-1, k).matmul(other.reshape(-1, k).transpose(0, 1))
    return out.reshape(tuple(self.shape[:-1]) + tuple(other.shape[:-1]))
  def vdot(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Dot product of two 1-D tensors of one dtype (torch.vdot; teeny has no complex dtypes to conjugate)."""
    _check_matrices("vdot", ("self", "other"), (1, 1), self, other)
    if self.shape[0] != other.shape[0]:
      raise RuntimeError(f"vdot: inconsistent sizes, self {tuple(self.shape)} and other {tuple(other.shape)}")
    return (self * other).sum()
  def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin
    """beta * self + alpha * (mat1 @ mat2) (torch.addmm): self broadcast to (n, p); beta = 0 ignores self (its nan and
    inf too); int tensors truncate float beta/alpha as torch."""
    return self._add_product("addmm", mat1.mm(mat2), beta, alpha)
  def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin
    """beta * self + alpha * (mat @ vec) (torch.addmv), as addmm."""
    return self._add_product("addmv", mat.mv(vec), beta, alpha)
  def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin
    """beta * self + alpha * bmm(batch1, batch2) (torch.baddbmm): self broadcast to (b, n, p), as addmm."""
    return self._add_product("baddbmm", batch1.bmm(batch2), beta, alpha)
  def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin
    """beta * self + alpha * sum over the batch of bmm(batch1, batch2) (torch.addbmm): self broadcast to (n, p)."""
    return self._add_product("addbmm", batch1.bmm(batch2).sum(0), beta, alpha)
  def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:  # type: ignore[misc]  # mixin
    """beta * self + alpha * outer(vec1, vec2) (torch.addr): 1-D vectors, dtypes promoted as torch; for int results a
    float beta or alpha raises (torch)."""
    for n, v in (("vec1", vec1), ("vec2", vec2)):
      if v.ndim != 1: raise RuntimeError(f"addr: {n} must be a vector (1-D), got shape {tuple(v.shape)}")
    dt = least_upper_dtype(self.dtype, vec1.dtype, vec2.dtype)
    outer = vec1.cast(dt).reshape(-1, 1) * vec2.cast(dt).reshape(1, -1)
    return _add_scaled("addr", self.cast(dt), outer, beta, alpha, strict=dt.kind in "iu")
  def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:  # type: ignore[misc]  # mixin
    """self + value * tensor1 * tensor2 (torch.addcmul), all three broadcast and promoted; an int result truncates a
    float value as torch."""
    dt = least_upper_dtype(self.dtype, tensor1.dtype, tensor2.dtype)
    v = _scalar_for("addcmul", "value", value, dt)
    return self.cast(dt) + _scaled(tensor1.cast(dt) * tensor2.cast(dt), v)
  def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:  # type: ignore[misc]  # mixin
    """self + value * tensor1 / tensor2 (torch.addcdiv), all three broadcast and promoted; integer tensor1 and tensor2
    raise (torch no longer supports integer division here)."""
    if least_upper_dtype(tensor1.dtype, tensor2.dtype).kind in "iub":
      raise RuntimeError("addcdiv: integer division with addcdiv is not supported (torch neither): tensor1 and tensor2 "
                         f"are {tensor1.dtype.name} and {tensor2.dtype.name}; use self + value * "
                         "tensor1.div(tensor2, rounding_mode='trunc') or cast one to float")
    dt = least_upper_dtype(self.dtype, tensor1.dtype, tensor2.dtype)
    return self.cast(dt) + _scaled(tensor1.cast(dt) / tensor2.cast(dt), value)

  # ---- casts, constructors and metadata in torch's names
  def bfloat16(self: Tensor) -> Tensor: return self.cast(dtypes.bfloat16)  # type: ignore[misc]  # mixin
  def byte(self: Tensor) -> Tensor: return self.cast(dtypes.uint8)  # type: ignore[misc]  # mixin
  def char(self: Tensor) -> Tensor: return self.cast(dtypes.int8)  # type: ignore[misc]  # mixin
  def short(self: Tensor) -> Tensor: return self.cast(dtypes.int16)  # type: ignore[misc]  # mixin
  def type_as(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self cast to other's dtype (torch.Tensor.type_as)."""
    return self.cast(other.dtype)
  def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,  # type: ignore[misc]  # mixin
               requires_grad: bool = False) -> Tensor:
    """A new tensor of `size` filled with fill_value, of self's dtype and device unless given (torch's new_full)."""
    T = type(self)
    size = (size,) if isinstance(size, int) else tuple(size)
    return T.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad or None)
  def new_zeros(self: Tensor, *size, dtype=None, device=None,  # type: ignore[misc]  # mixin: self is a Tensor
                requires_grad: bool = False) -> Tensor:
    """Zeros of `size`, of self's dtype and device unless given (torch's new_zeros)."""
    return self.new_full(_size(size), 0, dtype=dtype, device=device, requires_grad=requires_grad)
  def new_ones(self: Tensor, *size, dtype=None, device=None,  # type: ignore[misc]  # mixin: self is a Tensor
               requires_grad: bool = False) -> Tensor:
    """Ones of `size`, of self's dtype and device unless given (torch's new_ones)."""
    return self.new_full(_size(size), 1, dtype=dtype, device=device, requires_grad=requires_grad)
  def new_empty(self: Tensor, *size, dtype=None, device=None,  # type: ignore[misc]  # mixin: self is a Tensor
                requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of `size`, of self's dtype and device unless given (torch's new_empty)."""
    T = type(self)
    return T.empty(*_size(size), dtype=dtype or self.dtype, device=device or self.device,
                   requires_grad=requires_grad or None)
  def new_tensor(self: Tensor, data, *, dtype=None, device=None,  # type: ignore[misc]  # mixin: self is a Tensor
                 requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of data, of self's dtype and device unless given (torch's new_tensor); a Tensor's
    data is copied and detached."""
    T = type(self)
    dt, dev = to_dtype(dtype) if dtype is not None else self.dtype, device or self.device
    if isinstance(data, T): out = data.detach().to(dev).cast(dt).clone()
    else: out = T(data, device=dev, dtype=dt)
    if requires_grad: out.requires_grad = True
    return out
  def view_as(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self.view(other.shape) (torch.Tensor.view_as)."""
    return self.view(tuple(other.shape))
  def reshape_as(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self.reshape(other.shape) (torch.Tensor.reshape_as)."""
    return self.reshape(tuple(other.shape))
  def dim(self: Tensor) -> int: return self.ndim  # type: ignore[misc]  # mixin: self is a Tensor
  def ndimension(self: Tensor) -> int: return self.ndim  # type: ignore[misc]  # mixin: self is a Tensor
  def nelement(self: Tensor) -> int: return self.numel()  # type: ignore[misc]  # mixin: self is a Tensor
  def ravel(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """The elements as one dim (torch.ravel)."""
    return self.reshape(-1)
  def is_floating_point(self: Tensor) -> bool: return self.dtype.kind == "f"  # type: ignore[misc]  # mixin
  def is_complex(self: Tensor) -> bool: return False  # type: ignore[misc]  # mixin: teeny has no complex dtypes
  def is_signed(self: Tensor) -> bool: return self.dtype.kind in "if"  # type: ignore[misc]  # mixin

  # ---- in-place variants (torch's op_): each computes the op and writes the result into self through _inplace_as
  def _inplace_as(self: Tensor, out: Tensor, name: str) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Write out into self (in place, through assign: views write through to their base) under torch's rules for an
    in-place op: out's shape must broadcast to self's, and its dtype cast to self's where torch allows that (a float
    result into an int tensor raises: Tensor._inplace's check)."""
    if not broadcasts_to(tuple(out.shape), tuple(self.shape)):
      raise RuntimeError(f"{name}: output with shape {tuple(self.shape)} doesn't match the broadcast shape "
                         f"{tuple(out.shape)} (an in-place op cannot grow self); use the out-of-place op")
    return self._inplace(out, name)
  def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:  # type: ignore[misc]  # mixin
    """src written into self (torch's copy_): broadcast to self's shape, cast to self's dtype (any cast, as torch:
    floats into ints truncate), moved to self's device. Gradients flow to src."""
    T = type(self)
    if not isinstance(src, T): raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    if not broadcasts_to(tuple(src.shape), tuple(self.shape)):
      raise RuntimeError(f"copy_: src of shape {tuple(src.shape)} cannot be broadcast to self's shape "
                         f"{tuple(self.shape)}")
    return self.assign(src.to(self.device).cast(self.dtype))
  def float_power_(self: Tensor, exponent) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """In-place float_power: self must be float64 (the result's dtype), as torch."""
    if self.dtype != dtypes.float64:
      raise RuntimeError(f"float_power_: the base has dtype {self.dtype.name} but the result requires float64 (torch "
                         "refuses it too); use x = x.float_power(e) or cast x to float64 first")
    return self._inplace_as(self.float_power(exponent), "float_power_")
  def _random_float(self: Tensor, fn: str) -> None:  # type: ignore[misc]  # mixin: self is a Tensor
    if self.dtype.kind != "f":
      raise NotImplementedError(f"{fn}: not implemented for {self.dtype.name} tensors (torch neither): random floats "
                                "need a floating-point tensor; cast it first, e.g. x = x.float()")
  def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, **kw) -> Tensor:  # type: ignore[misc]  # mixin
    """self filled with draws from uniform [a, b) (torch's uniform_; `from`/`to` keywords too); float tensors only."""
    a, b = kw.pop("from", a), kw.pop("to", b)
    if kw: raise TypeError(f"uniform_: unexpected keyword arguments {sorted(kw)}")
    self._random_float("uniform_")
    return self.assign(type(self).uniform(*self.shape, low=a, high=b, dtype=self.dtype, device=self.device))
  def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:  # type: ignore[misc]  # mixin
    """self filled with normal draws (torch's normal_); float tensors only."""
    self._random_float("normal_")
    if std < 0: raise RuntimeError(f"normal_: std must be >= 0, got {std}")
    return self.assign(type(self).normal(*self.shape, mean=mean, std=std, dtype=self.dtype, device=self.device))
  def exponential_(self: Tensor, lambd: float = 1.0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self filled with exponential draws of rate lambd, -log(1 - u) / lambd (torch's exponential_); floats only."""
    if self.dtype.kind != "f":
      raise RuntimeError(f"exponential_: the exponential distribution is continuous: self must be a floating-point "
                         f"tensor, not {self.dtype.name} (torch refuses it too); cast it first")
    if not lambd > 0: raise RuntimeError(f"exponential_: lambd must be positive, got {lambd}")
    u = type(self).rand(*self.shape, device=self.device, dtype=dtypes.float64 if self.dtype == dtypes.float64 else None)
    return self.assign((-(1 - u).log() / lambd).cast(self.dtype))
  def bernoulli_(self: Tensor, p=0.5) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self filled with 1 with probability p (a float or a tensor broadcast to self), else 0 (torch's bernoulli_)."""
    T = type(self)
    if isinstance(p, T):
      _check_bcast("bernoulli_", "p", p, tuple(self.shape))
      u = T.rand(*self.shape, device=self.device, dtype=dtypes.float64 if p.dtype == dtypes.float64 else None)
      return self.assign((u < p.detach()).cast(self.dtype))
    return self.assign(self.detach().bernoulli(float(p)))
  def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:  # type: ignore[misc]  # mixin
    """The main diagonal set to fill_value, cast to self's dtype (torch's fill_diagonal_): a 2-D tensor, or one whose
    dims are all equal; wrap=True continues a tall matrix's diagonal every (columns + 1) rows, as torch."""
    T = type(self)
    if self.ndim < 2: raise RuntimeError(f"fill_diagonal_: self must have at least 2 dims, got shape {self.shape}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
      raise RuntimeError(f"fill_diagonal_: all dims of self must be of equal length when it has more than 2, got "
                         f"shape {tuple(self.shape)}")
    n = min(self.shape)
    step = sum(math.prod(self.shape[i + 1:]) for i in range(self.ndim))   # (columns + 1 for a matrix)
    limit = self.numel() if wrap and self.ndim == 2 and self.shape[0] > self.shape[1] else (n - 1) * step + 1
    idx = T.arange(self.numel(), device=self.device)
    mask = ((idx % step == 0) & (idx < limit)).reshape(self.shape)
    # (the value is cast to self's dtype first, as torch's fill: 1.7 into an int tensor is 1)
    val = (fill_value if isinstance(fill_value, T) else T(fill_value, device=self.device)).cast(self.dtype)
    return self.assign(mask.where(val.detach(), self))
  def type(self: Tensor, dtype=None) -> Any:  # type: ignore[misc]  # mixin: self is a Tensor
    """With no dtype, a name like torch's ('teeny.FloatTensor'); with one, self cast to it (torch.Tensor.type)."""
    if dtype is None: return f"teeny.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}Tensor"
    return self.cast(dtype)

  # ---- special functions, integer math and more of torch's functions
  def _special(self: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:  # type: ignore[misc]  # mixin
    return _via_f32(self._float(), fn)
  def lgamma(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """log|Gamma(x)| (torch.lgamma); ints and bools give the default float, float16/bfloat16 compute in float32.
    Stirling's series with an 8-step recurrence and reflection for x < 0.5: within 3e-6 of torch in float32 and 1e-14 in
    float64 (absolute, relative above 1) over [-30, 1e30] away from the poles; +inf at 0, the negative integers and
    +-inf. The gradient is the formula's, which is digamma(x) (torch's) to the same accuracy."""
    return self._special(_lgamma)
  def digamma(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """d/dx lgamma(x) (torch.digamma): asymptotic series with an 8-step recurrence and reflection for x < 0.5: within
    1e-6 of torch in float32 and 1e-14 in float64 (absolute, relative above 1) over [-30, 1e30] away from the poles;
    -inf at +0, +inf at -0, nan at the negative integers, as torch. Ints and bools give the default float."""
    return self._special(_digamma)
  def erfinv(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Inverse of erf on (-1, 1) (torch.erfinv): +-inf at +-1, nan outside. Giles' float32 approximation (plus two
    Newton steps on erf for float64); the gradient is torch's sqrt(pi)/2 * exp(erfinv(x)**2). Ints and bools
    give the default float."""
    return self._special(_erfinv)
  def i0(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """The modified Bessel function of the first kind, order 0 (torch.i0): power series up to |x| = 20, asymptotic
    expansion beyond (inf where exp overflows, as torch's). Ints and bools give the default float."""
    return self._special(_i0)
  def frexp(self: Tensor) -> tuple[Tensor, Tensor]:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.frexp: (mantissa, int32 exponent), self = mantissa * 2**exponent, 0.5 <= |mantissa| < 1; 0, inf and nan
    give themselves and exponent 0. Float tensors only (torch). The mantissa's gradient is 2**-exponent."""
    if self.dtype.kind != "f":
      raise RuntimeError(f"frexp: only supports floating-point dtypes, got {self.dtype.name} (torch neither); cast "
                         "first, e.g. x.float()")
    if self.dtype in HALF:
      m, e = _frexp(self.cast(dtypes.float32))
      return _MantissaExponent(m.cast(self.dtype), e)
    return _MantissaExponent(*_frexp(self))
  def _int_pair(self: Tensor, other, fn: str) -> tuple[Tensor, Tensor]:  # type: ignore[misc]  # mixin
    a, b = self._binop(other)
    if a.dtype.kind not in "iu":
      raise NotImplementedError(f"{fn}: not implemented for {a.dtype.name} tensors (torch neither): it needs integer "
                                "tensors; cast first, e.g. x.long()")
    return a, b
  def gcd(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Greatest common divisor, elementwise, of integer tensors (torch.gcd): non-negative, gcd(0, 0) = 0, and as
    torch's for INT_MIN (whose absolute value wraps: gcd(INT_MIN, 0) is INT_MIN, gcd(INT_MIN, 6) is -2). Euclid's
    algorithm unrolled to a fixed number of lazy remainder steps, enough for
    any values of the dtype (94 for int64, 48 for int32): one elementwise kernel."""
    a, b = self._int_pair(other, "gcd")
    return _gcd(a, b)
  def lcm(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Least common multiple of integer tensors (torch.lcm): |a / gcd(a, b) * b|, 0 if either is 0; wraps on overflow
    as torch's (8- and 16-bit products are formed in int32 and truncated, as C's promotion does in torch)."""
    a, b = self._int_pair(other, "lcm")
    g = _gcd(a, b)
    zero = g == 0
    q = a._alu(Ops.IDIV, zero.where(1, g))
    # (C's integer promotion: torch multiplies 8- and 16-bit values as int, takes abs there, then truncates)
    if a.dtype.itemsize < 4: return zero.where(0, (q.cast(dtypes.int32) * b.cast(dtypes.int32)).abs().cast(a.dtype))
    return zero.where(0, (q * b).abs())

  def cov(self: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # type: ignore[misc]  # mixin
          aweights: Tensor | None = None) -> Tensor:
    """torch.cov: the covariance matrix of the rows (variables) of a 1-D or 2-D tensor whose columns are observations,
    squeezed (one variable gives a 0-d tensor). fweights (integer) and aweights (float) weight the observations;
    the divisor is sum(w) - correction (with aweights: sum(w) - correction * sum(w * aweights) / sum(w)), clamped at
    0 as torch (which warns): the result is then inf or nan. Ints give the default float."""
    T = type(self)
    if self.ndim > 2:
      raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {self.ndim} "
                       "dimensions; reshape it to (variables, observations)")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    n = x.shape[1]
    w: Tensor | None = None
    norm: Any
    for name, wt, kinds in (("fweights", fweights, "iu"), ("aweights", aweights, "f")):
      if wt is None: continue
      if not isinstance(wt, T): raise TypeError(f"cov(): {name} must be a Tensor, got {type(wt).__name__}")
      if wt.ndim > 1: raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {wt.ndim}")
      if wt.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input but "
                         f"got {wt.numel()} != {n}")
      if wt.dtype.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have " + ("integral" if kinds == "iu" else "floating point") +
                         f" dtype but got {wt.dtype.name}")
      msg = f"cov(): {name} cannot be negative; pass weights >= 0"
      check_index_range((wt < 0).any().cast(dtypes.int32).reshape(1), 1, lambda _: msg, RuntimeError)
      w = wt.reshape(-1) if w is None else w * wt.reshape(-1)
    dt = least_upper_dtype(x.dtype, aweights.dtype) if aweights is not None else x.dtype
    x = x.cast(dt if dt.kind == "f" else dtypes.default_float)
    if w is None:
      xm = x - x.mean(1, keepdim=True)
      c, norm = xm.matmul(xm.transpose(0, 1)), max(n - correction, 0)
    else:
      w = w.cast(x.dtype)
      wsum = w.sum()
      avg = (x * w).sum(1, keepdim=True) / wsum
      if aweights is None or correction == 0: norm = wsum - correction
      else: norm = wsum - correction * (w * aweights.reshape(-1).cast(x.dtype)).sum() / wsum
      norm = norm.maximum(0)
      xm = x - avg
      c = (xm * w).matmul(xm.transpose(0, 1))
    return (c / norm).reshape(()) if c.shape == (1, 1) else c / norm
  def corrcoef(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.corrcoef: Pearson correlation coefficients of the rows (cov divided by the outer product of the standard
    deviations, clipped to [-1, 1]); one variable gives a 0-d 1 (nan if it is constant)."""
    if self.ndim > 2:
      raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                       f"{self.ndim} dimensions")
    c = self.cov()
    if c.ndim == 0: return c / c
    d = c.diagonal()
    s = d.sqrt()
    return (c / s.reshape(-1, 1) / s.reshape(1, -1)).clip(-1, 1)

  def cdist(self: Tensor, x2: Tensor, p: float = 2.0,  # type: ignore[misc]  # mixin: self is a Tensor
            compute_mode: str | None = None) -> Tensor:
    """torch.cdist: p-norm distances between the rows of self (*B, P, M) and x2 (*B, R, M), (*B, P, R), the batch dims
    broadcast. p = 0 counts differing coordinates, p = inf takes the largest. Computed from the differences
    (compute_mode, torch's choice of a matmul for p = 2, is ignored). Gradients as torch's: 0 where a distance (or,
    for p < 1, a coordinate difference) is 0, and for p = inf every coordinate that reaches the max gets the full
    gradient."""
    T = type(self)
    if not isinstance(x2, T): raise TypeError(f"cdist: x2 must be a Tensor, got {type(x2).__name__}")
    for nm, t in (("X1", self), ("X2", x2)):
      if t.ndim < 2: raise RuntimeError(f"cdist only supports at least 2D tensors, {nm} got: {t.ndim}D")
      if t.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, {nm} got: {t.dtype.name}; cast it first")
    if self.shape[-1] != x2.shape[-1]:
      raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: {self.shape[-1]} X2: "
                         f"{x2.shape[-1]}")
    p = float(p)
    if p < 0 or math.isnan(p): raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if self.dtype != x2.dtype:
      raise RuntimeError(f"cdist: X1 and X2 must have the same dtype, got {self.dtype.name} and {x2.dtype.name}")
    try: batch = broadcast_shape(tuple(self.shape[:-2]), tuple(x2.shape[:-2]))
    except ValueError:
      raise RuntimeError(f"cdist: the batch dims of X1 {tuple(self.shape)} and X2 {tuple(x2.shape)} do not "
                         "broadcast") from None
    P, R, M = self.shape[-2], x2.shape[-2], self.shape[-1]
    a = self._broadcast_to(batch + (P, M)).unsqueeze(-2)
    b = x2._broadcast_to(batch + (R, M)).unsqueeze(-3)
    if M == 0: return T.zeros(*batch, P, R, dtype=self.dtype, device=self.device) + (a.sum() + b.sum()) * 0
    def dist(a: Tensor, b: Tensor) -> Tensor:
      d = a - b
      if p == 0: return (d != 0).cast(d.dtype).sum(-1) + (d * 0).sum(-1)
      if p == 2:
        s = (d * d).sum(-1)
        zero = s == 0
        return zero.where(0.0, _safe_where(zero.logical_not(), s, 1.0).sqrt())
      ad = d.abs()
      if p == 1: return ad.sum(-1)
      if p == math.inf:
        m = ad.max(-1, keepdim=True).detach()
        hit = ad == m
        return (hit.where(ad, 0.0).sum(-1, keepdim=True) - (hit.sum(-1, keepdim=True) - 1).cast(d.dtype) * m) \
          .squeeze(-1)
      nz = ad != 0
      s = nz.where(_safe_where(nz, ad, 1.0) ** p, 0.0).sum(-1)
      zero = s == 0
      return zero.where(0.0, _safe_where(zero.logical_not(), s, 1.0) ** (1 / p))
    return _via_f32(a, dist, b)

  def trapezoid(self: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.trapezoid: the trapezoidal rule along dim, over samples spaced dx apart (default 1) or at the points x
    (a tensor: 1-D of the dim's length, or broadcasting with self). An empty dim gives 0. Ints give the default
    float."""
    y, d, step = self._trapezoid_parts(x, dx, dim, "trapezoid")
    n = y.shape[d]
    if step is None: return y.sum(d) * 0
    if isinstance(step, type(self)): return (step * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) * 0.5
    return (y.sum(d) - (y.narrow(d, 0, 1) + y.narrow(d, n - 1, 1)).squeeze(d) * 0.5) * step
  def cumulative_trapezoid(self: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.cumulative_trapezoid: the running trapezoidal rule along dim (one element fewer there than self), spaced
    dx apart (default 1) or at the points x, as trapezoid."""
    y, d, step = self._trapezoid_parts(x, dx, dim, "cumulative_trapezoid")
    n = y.shape[d]
    if step is None: return y.narrow(d, 0, max(n - 1, 0)) * 0
    return (step * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5).cumsum(d)
  def _trapezoid_parts(self: Tensor, x, dx, dim: int, fn: str):  # type: ignore[misc]  # mixin: self is a Tensor
    """(y in the result's float dtype, the dim, the spacing: a number, a tensor of differences along dim, or None for
    a dim of size 0 or 1, whose integral is 0)."""
    T = type(self)
    if x is not None and dx is not None: raise TypeError(f"{fn}: pass x or dx, not both")
    if self.ndim == 0: raise IndexError(f"{fn}: the input must have at least one dimension, got a 0-d tensor")
    d = _norm_dim(dim, self.ndim, fn)
    n = self.shape[d]
    if isinstance(x, T):
      if x.ndim == 1:
        if x.shape[0] != n:
          raise RuntimeError(f"{fn}: there must be one `x` value for each sample point along dim {d}: x has "
                             f"{x.shape[0]}, y has {n}")
        x = x.reshape(*[n if i == d else 1 for i in range(self.ndim)])
      elif not broadcasts_to(tuple(x.shape), tuple(self.shape)) and not broadcasts_to(tuple(self.shape),
                                                                                        tuple(x.shape)):
        raise RuntimeError(f"{fn}: x of shape {tuple(x.shape)} does not broadcast with y of shape "
                           f"{tuple(self.shape)}")
      dt = least_upper_dtype(self.dtype, x.dtype)
      y = self.cast(dt if dt.kind == "f" else dtypes.default_float)
      if n <= 1: return y, d, None
      xs = x.cast(y.dtype)
      m = xs.shape[d] if xs.ndim == self.ndim else n
      return y, d, xs.narrow(d, 1, m - 1) - xs.narrow(d, 0, m - 1)
    if x is not None: dx = x
    step = 1 if dx is None else dx
    if not isinstance(step, (int, float)) or isinstance(step, bool):
      raise TypeError(f"{fn}: dx must be a number, got {step!r}")
    return self._float(), d, (step if n > 1 else None)

  def renorm(self: Tensor, p, dim: int, maxnorm) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.renorm: every slice along dim (a sub-tensor self.select(dim, i)) whose p-norm exceeds maxnorm scaled by
    maxnorm / (norm + 1e-7); the others unchanged. Float tensors only; float16/bfloat16 compute in float32."""
    _float_only("renorm", self.dtype)
    p, maxnorm = float(p), float(maxnorm)
    if not p > 0: raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    if maxnorm < 0: raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.ndim <= 1:
      raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    d = _norm_dim(dim, self.ndim, "renorm")
    axes = tuple(i for i in range(self.ndim) if i != d)
    def f(x: Tensor) -> Tensor:
      ax = x.abs()
      if p == math.inf: norm = ax.amax(axes, keepdim=True)
      elif p == 1: norm = ax.sum(axes, keepdim=True)
      else:
        nz = ax != 0
        s = ((x * x) if p == 2 else nz.where(_safe_where(nz, ax, 1.0) ** p, 0.0)).sum(axes, keepdim=True)
        zero = s == 0
        norm = zero.where(0.0, _safe_where(zero.logical_not(), s, 1.0) ** (1 / p))
      return x * (norm > maxnorm).where(maxnorm / (norm + 1e-7), 1.0)
    return _via_f32(self, f)

  def matrix_power(self: Tensor, n: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.matrix_power: the n-th power of square matrices (..., m, m) by repeated squaring (matmuls); n = 0 gives
    identities of self's dtype; a negative n is the power -n of the inverse (teeny.linalg.inv, which raises
    teeny.linalg.LinAlgError for a singular matrix where teeny reads data)."""
    T = type(self)
    if not isinstance(n, int) or isinstance(n, bool): raise TypeError(f"matrix_power: n must be an int, got {n!r}")
    if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
      raise RuntimeError(f"matrix_power: expected a tensor of square matrices (..., m, m), got shape "
                         f"{tuple(self.shape)}")
    if n < 0: return self._la().inv(self).matrix_power(-n)
    m = self.shape[-1]
    if n == 0:
      eye = T.eye(m, dtype=self.dtype, device=self.device)._broadcast_to(tuple(self.shape)).contiguous()
      # (a tensor that requires grad gets zeros, as torch: a term that is 0 in value, inf and nan entries included)
      return eye + (self * 0).nan_to_num(0.0, 0.0, 0.0) if self.requires_grad else eye
    out: Tensor | None = None
    sq = self
    while n:
      if n & 1: out = sq if out is None else out.matmul(sq)
      n >>= 1
      if n: sq = sq.matmul(sq)
    assert out is not None
    return out if out is not self else self.clone()

  def equal(self: Tensor, other: Tensor) -> bool:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.equal: True if other has self's shape and every element is equal (compared in the promoted dtype; nan
    equals nothing). A Python bool: realizes both and reads the answer."""
    T = type(self)
    if not isinstance(other, T): raise TypeError(f"equal: other must be a Tensor, got {type(other).__name__}")
    if tuple(self.shape) != tuple(other.shape): return False
    if self.numel() == 0: return True
    return bool((self == other).all().item())
  def detach_(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's detach_: self cut from the graph that computed it, in place (it no longer requires grad). A view that
    requires grad cannot be detached in place (torch neither): use detach()."""
    if not self.requires_grad: return self
    if self._base is not None:
      raise RuntimeError("detach_: can't detach views in-place (torch neither); use x = x.detach() instead")
    u = self.uop
    self.requires_grad_(False)
    if u.op not in (Ops.BUFFER, Ops.CONST): self._set_uop(UOp(Ops.DETACH, u.dtype, (u,)))
    return self
  @property
  def is_cuda(self: Tensor) -> bool:  # type: ignore[misc]  # mixin: torch's property
    """Whether the tensor is on a CUDA device (every device, for a tensor on several)."""
    devs = self.device if isinstance(self.device, tuple) else (self.device,)
    return all(str(d).upper().split(":")[0] == "CUDA" for d in devs)

  def broadcast_tensors(self: Any, *others: Tensor) -> tuple[Tensor, ...]:
    """torch.broadcast_tensors (Tensor.broadcast_tensors(a, b), a.broadcast_tensors(b) or with a list): each tensor
    expanded to the shape they broadcast to (views)."""
    ts = _tensor_list(self, others, "broadcast_tensors")
    try: shape = broadcast_shape(*[tuple(t.shape) for t in ts])
    except ValueError:
      raise RuntimeError("broadcast_tensors: shapes " + ", ".join(str(tuple(t.shape)) for t in ts) + " cannot be "
                         "broadcast together (each dim must match or be 1)") from None
    return tuple(t._broadcast_to(shape) for t in ts)
  def atleast_1d(self: Any, *others: Tensor) -> Any:
    """torch.atleast_1d: a 0-d tensor as shape (1,), others as they are (views); several tensors give a tuple."""
    return _atleast(self, others, 1)
  def atleast_2d(self: Any, *others: Tensor) -> Any:
    """torch.atleast_2d: 0-d -> (1, 1), (n,) -> (1, n), others as they are (views); several tensors give a tuple."""
    return _atleast(self, others, 2)
  def atleast_3d(self: Any, *others: Tensor) -> Any:
    """torch.atleast_3d: 0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1), others as they are (views);
    several tensors give a tuple."""
    return _atleast(self, others, 3)

  # ---- linear algebra: the methods torch.Tensor has for torch.linalg's functions. The algorithms live in
  # teeny/linalg.py, a higher layer, which registers itself as MathMixin._linalg when teeny is imported
  def _la(self: Tensor) -> Any:  # type: ignore[misc]  # mixin: self is a Tensor
    return getattr(MathMixin, "_linalg")
  def det(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.det: determinants of square matrices (..., n, n) (teeny.linalg.det)."""
    return self._la().det(self)
  def logdet(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.logdet: log(det) of (..., n, n): nan where det < 0, -inf where it is 0 (from teeny.linalg.slogdet)."""
    s, la = self._la().slogdet(self)
    return (s < 0).where(math.nan, la)
  def slogdet(self: Tensor) -> tuple[Tensor, Tensor]:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.slogdet: (sign, log|det|) of (..., n, n) (teeny.linalg.slogdet)."""
    return self._la().slogdet(self)
  def inverse(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.inverse: inverses of (..., n, n) (teeny.linalg.inv; a singular matrix raises teeny.linalg.LinAlgError
    where teeny reads data)."""
    return self._la().inv(self)
  def cholesky(self: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.cholesky: the Cholesky factor of symmetric positive-definite (..., n, n), lower (or upper=True: L^T)
    (teeny.linalg.cholesky)."""
    return self._la().cholesky(self, upper=upper)
  def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.cholesky_solve: X with A X = self, A given by its Cholesky factor input2 (lower, or upper=True)."""
    return self._la().cholesky_solve(self, input2, upper)
  def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.cholesky_inverse: A^-1 from A's Cholesky factor self (lower, or upper=True)."""
    n = self.shape[-1] if self.ndim >= 2 else 0
    eye = type(self).eye(n, dtype=self.dtype, device=self.device)._broadcast_to(tuple(self.shape))
    return self._la().cholesky_solve(eye, self, upper)
  def triangular_solve(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # type: ignore[misc]
                       unitriangular: bool = False) -> tuple[Tensor, Tensor]:
    """torch.triangular_solve (self is b): (X, A's copy) with A X = b (A^T X = b with transpose); A upper or lower
    triangular (teeny.linalg.solve_triangular)."""
    T = A.transpose(-1, -2) if transpose else A
    X = self._la().solve_triangular(T, self, upper=upper != transpose, unitriangular=unitriangular)
    return X, A.clone()
  def qr(self: Tensor, some: bool = True) -> tuple[Tensor, Tensor]:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.qr: (Q, R) of (..., m, n), reduced (some=True) or complete (teeny.linalg.qr)."""
    return self._la().qr(self, "reduced" if some else "complete")
  def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> tuple[Tensor, Tensor, Tensor]:  # type: ignore[misc]
    """torch.svd: (U, S, V) (V, not Vh) of (..., m, n), reduced (some=True) or, for square matrices, full;
    compute_uv=False gives zero U and V, as torch (teeny.linalg.svd)."""
    la = self._la()
    if not compute_uv:   # (torch: U and V are zeros of (m, m) and (n, n))
      m, n = self.shape[-2], self.shape[-1]
      z = type(self).zeros
      return (z(*self.shape[:-2], m, m, dtype=self.dtype, device=self.device), la.svdvals(self),
              z(*self.shape[:-2], n, n, dtype=self.dtype, device=self.device))
    U, S, Vh = la.svd(self, full_matrices=not some)
    return U, S, Vh.transpose(-1, -2)
  def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.pinverse: the pseudo-inverse, singular values <= rcond * the largest dropped (teeny.linalg.pinv)."""
    return self._la().pinv(self, rtol=rcond)

  # ---- more of torch.Tensor's methods: special functions, shrink/prelu, splitting and reducing to a size, metadata
  # queries, the adjoint, the *_scatter ops that write into a copy, nextafter, matrix_exp, mvlgamma
  def erfc(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """1 - erf(x) (torch.erfc), accurate in the tail where that difference cancels: exp(-x^2) times a fitted
    polynomial (float32) or a continued fraction (float64) above x = 0.5. Ints and bools give the default float,
    float16/bfloat16 compute in float32."""
    return self._special(_erfc)
  def polygamma(self: Tensor, n: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.polygamma(n, self): the n-th derivative of digamma (n = 0 is digamma). For n >= 1 a 12-term sum plus an
    asymptotic tail at x + 12: as accurate as torch's for x > -4 (worse further left); (-1)^(n+1) inf at 0 and the
    negative integers. Ints give the default float."""
    if not isinstance(n, int) or isinstance(n, bool): raise TypeError(f"polygamma: n must be an int, got {n!r}")
    if n < 0: raise RuntimeError(f"polygamma(n, x) does not support negative n, got n={n}")
    if n == 0: return self.digamma()
    def f(x: Tensor) -> Tensor:
      pole = (x <= 0) & (x == x.floor())
      return pole.where(math.inf if n % 2 == 1 else -math.inf, _polygamma(pole.where(0.5, x), n))
    return self._special(f)
  def mvlgamma(self: Tensor, p: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.mvlgamma: the log of the multivariate gamma function of dimension p, p(p-1)/4 log(pi) +
    sum_{i<p} lgamma(x - i/2). Float tensors only are differentiable; ints give the default float. torch raises when
    an element is <= (p-1)/2; teeny does not read the data and gives lgamma's value (inf or a finite value) there."""
    if not isinstance(p, int) or isinstance(p, bool): raise TypeError(f"mvlgamma: p must be an int, got {p!r}")
    if p < 1: raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    def f(x: Tensor) -> Tensor:
      out = _lgamma(x)
      for i in range(1, p): out = out + _lgamma(x - i / 2)
      return out + p * (p - 1) / 4 * math.log(math.pi)
    return self._special(f)
  def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.dist: the p-norm of self - other (broadcast) over all elements, a 0-d tensor; p = 0 counts the non-zero
    differences, inf and -inf give the largest and smallest |difference|. Float tensors only (torch)."""
    T = type(self)
    if not isinstance(other, T): raise TypeError(f"dist: other must be a Tensor, got {type(other).__name__}")
    try: broadcast_shape(tuple(self.shape), tuple(other.shape))
    except ValueError:
      raise RuntimeError(f"dist: the shapes {tuple(self.shape)} and {tuple(other.shape)} cannot be broadcast together "
                         "(each dim must match or be 1)") from None
    a, b = self._binop(other)
    if a.dtype.kind != "f":
      raise RuntimeError(f"dist: input dtype should be floating point, got {a.dtype.name} (torch neither); cast "
                         "first, e.g. x.float()")
    return (a - b).norm(p)
  def hardshrink(self: Tensor, lambd: float = 0.5) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.Tensor.hardshrink: 0 where -lambd <= x <= lambd, else x (nan stays nan). Float tensors only (torch)."""
    if self.dtype.kind != "f":
      raise NotImplementedError(f"hardshrink: not implemented for {self.dtype.name} tensors (torch neither); cast "
                                "first, e.g. x.float()")
    return ((self >= -lambd) & (self <= lambd)).where(0.0, self)
  def prelu(self: Tensor, weight: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.prelu: x where x > 0, else weight * x; weight has one element or one per channel (dim 1 of self, dim 0
    if self is 1-D), and self's float dtype (torch does not promote here)."""
    T = type(self)
    if not isinstance(weight, T): raise TypeError(f"prelu: weight must be a Tensor, got {type(weight).__name__}")
    if self.dtype != weight.dtype or self.dtype.kind != "f":
      raise RuntimeError(f"prelu: expected self and weight to be floating-point tensors of the same dtype (torch does "
                         f"not promote), got {self.dtype.name} and {weight.dtype.name}")
    if weight.ndim > 1: raise RuntimeError(f"prelu: weight must be 0-D or 1-D, got shape {tuple(weight.shape)}")
    if weight.numel() != 1:
      cdim = 1 if self.ndim >= 2 else 0
      if self.ndim == 0 or self.shape[cdim] != weight.numel():
        channels = self.shape[cdim] if self.ndim else 1
        raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}")
      w = weight.reshape(-1, *[1] * (self.ndim - cdim - 1))
    else: w = weight.reshape(())
    return (self > 0).where(self, w * self)
  def split_with_sizes(self: Tensor, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:  # type: ignore[misc]  # mixin
    """torch.split_with_sizes: views of self along dim of the given sizes, which must add up to the dim's size."""
    if not isinstance(split_sizes, (list, tuple)):
      raise TypeError(f"split_with_sizes: split_sizes must be a list or tuple of ints, got {split_sizes!r}")
    if self.ndim == 0: raise RuntimeError("split_with_sizes expects at least a 1-dimensional tensor")
    d = _norm_dim(dim, self.ndim, "split_with_sizes")
    if sum(int(s) for s in split_sizes) != self.shape[d] or any(int(s) < 0 for s in split_sizes):
      raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's size "
                         f"at dimension {d}), but got split_sizes={list(split_sizes)}")
    return self.split(list(split_sizes), d)
  def sum_to_size(self: Tensor, *size) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.Tensor.sum_to_size: self summed down to `size` (which must broadcast to self's shape), in sum's dtype
    (ints and bools give int64, as torch); self itself when it already has that shape."""
    size = tuple(_size(size))
    if not broadcasts_to(size, tuple(self.shape)):
      raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(self.shape)}")
    if size == tuple(self.shape): return self
    lead = self.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1)
    return self.sum(axes, keepdim=True).reshape(size)
  def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.narrow_copy: narrow(dim, start, length) as a new tensor (not a view)."""
    return self.narrow(dim, start, length).clone()
  def is_nonzero(self: Tensor) -> bool:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.is_nonzero: whether the single element of a one-element tensor is not zero (a Python bool: reads it)."""
    if self.numel() == 0: raise RuntimeError("is_nonzero: Boolean value of Tensor with no values is ambiguous")
    if self.numel() > 1:
      raise RuntimeError("is_nonzero: Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item() != 0)
  def is_same_size(self: Tensor, other: Tensor) -> bool:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.is_same_size: whether other has self's shape."""
    if not isinstance(other, type(self)):
      raise TypeError(f"is_same_size: other must be a Tensor, got {type(other).__name__}")
    return tuple(self.shape) == tuple(other.shape)
  def isreal(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.isreal: True everywhere (teeny has no complex dtypes), a bool tensor of self's shape."""
    return self.full_like(True, dtype=dtypes.bool)
  def adjoint(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.adjoint: the conjugate transpose of the last two dims; for real tensors their transpose (a view)."""
    if self.ndim < 2:
      raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                         f"{self.ndim}-D tensor.")
    return self.transpose(-2, -1)
  @property
  def mH(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: torch's property
    """The conjugate transpose of the last two dims (torch's .mH); for real tensors .mT (a view)."""
    if self.ndim < 2:
      raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return self.transpose(-2, -1)
  @property
  def H(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: torch's property
    """The conjugate transpose of a matrix (torch's .H); a 0-D tensor gives itself. For real tensors .T (a view)."""
    if self.ndim not in (0, 2):
      hint = ". For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
      raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor{hint}")
    return self.transpose(0, 1) if self.ndim == 2 else self
  def _scatter_src(self: Tensor, fn: str, src: Tensor, want: tuple) -> Tensor:  # type: ignore[misc]  # mixin
    if not isinstance(src, type(self)): raise TypeError(f"{fn}: src must be a Tensor, got {type(src).__name__}")
    if tuple(src.shape) != tuple(want):
      raise RuntimeError(f"{fn}: expected src to have a size equal to the slice of self. src size = "
                         f"{list(src.shape)}, slice size = {list(want)}")
    return src.cast(self.dtype)   # (torch writes src's values in self's dtype)
  def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # type: ignore[misc]  # mixin
                       dim2: int = 1) -> Tensor:
    """torch.diagonal_scatter: a copy of self with self.diagonal(offset, dim1, dim2) replaced by src (whose shape is
    that diagonal's). Differentiable in self and src."""
    T = type(self)
    diag = self.diagonal(offset, dim1, dim2)
    src = self._scatter_src("diagonal_scatter", src, tuple(diag.shape))
    d1, d2 = _norm_dim(dim1, self.ndim, "diagonal_scatter"), _norm_dim(dim2, self.ndim, "diagonal_scatter")
    rest = [i for i in range(self.ndim) if i not in (d1, d2)]
    perm = [*rest, d1, d2]
    a, b = self.shape[d1], self.shape[d2]
    m = diag.shape[-1]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    if m == 0: return self.clone()
    ar = T.arange(m, device=self.device)
    eye = ar.reshape(m, 1) == ar.reshape(1, m)
    blk = eye.where(src.unsqueeze(-1).expand(*src.shape, m), T.zeros((), dtype=self.dtype, device=self.device))
    lead = tuple((0, 0) for _ in rest)
    full = blk.pad(lead + ((r0, a - r0 - m), (c0, b - c0 - m)))
    ra, rb = T.arange(a, device=self.device).reshape(a, 1), T.arange(b, device=self.device).reshape(1, b)
    mask = (rb - ra) == offset
    inv = [perm.index(i) for i in range(self.ndim)]
    return mask.where(full, self.permute(*perm)).permute(*inv).contiguous()
  def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.select_scatter: a copy of self with self.select(dim, index) replaced by src (self's shape without dim).
    Differentiable in self and src."""
    T = type(self)
    if self.ndim == 0: raise IndexError("select_scatter: select() cannot be applied to a 0-dim tensor")
    d = _norm_dim(dim, self.ndim, "select_scatter")
    n = self.shape[d]
    if not isinstance(index, int) or isinstance(index, bool):
      raise TypeError(f"select_scatter: index must be an int, got {index!r}")
    if not -n <= index < n:
      raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}")
    want = tuple(s for i, s in enumerate(self.shape) if i != d)
    src = self._scatter_src("select_scatter", src, want)
    pos = T.arange(n, device=self.device).reshape(n, *[1] * (self.ndim - d - 1))
    return (pos == index % n).where(src.unsqueeze(d), self).contiguous()
  def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # type: ignore[misc]  # mixin
                    end: int | None = None, step: int = 1) -> Tensor:
    """torch.slice_scatter: a copy of self with self[..., start:end:step, ...] (on dim) replaced by src (that slice's
    shape). step must be positive. Differentiable in self and src."""
    T = type(self)
    if self.ndim == 0: raise RuntimeError("slice_scatter: slice() cannot be applied to a 0-dim tensor")
    d = _norm_dim(dim, self.ndim, "slice_scatter")
    if not isinstance(step, int) or isinstance(step, bool):
      raise TypeError(f"slice_scatter: step must be an int, got {step!r}")
    if step <= 0: raise RuntimeError(f"slice_scatter: slice step must be positive, got {step}")
    n = self.shape[d]
    s0, s1, _ = slice(start, end, step).indices(n)
    k = len(range(s0, s1, step))
    want = tuple(k if i == d else s for i, s in enumerate(self.shape))
    src = self._scatter_src("slice_scatter", src, want)
    if k == 0:   # (nothing written; a src that requires grad still gets its empty gradient)
      return self.clone() if not src.requires_grad else self + src.sum() * 0
    nil = tuple((0, 0) for _ in range(self.ndim))
    # each src element followed by step - 1 zeros along dim, then shifted to start and cut or padded to n
    x = src.unsqueeze(d + 1).pad(nil[:d + 1] + ((0, step - 1),) + nil[d + 1:]).reshape(
      *self.shape[:d], k * step, *self.shape[d + 1:])
    ln = min(k * step, n - s0)
    x = x.shrink(tuple((0, ln) if i == d else None for i in range(self.ndim)))
    x = x.pad(nil[:d] + ((s0, n - s0 - ln),) + nil[d + 1:])
    pos = T.arange(n, device=self.device).reshape(n, *[1] * (self.ndim - d - 1))
    last = s0 + (k - 1) * step
    mask = (pos >= s0) & (pos <= last) & ((pos - s0) % step == 0)
    return mask.where(x, self).contiguous()
  def nextafter(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.nextafter: the next floating-point value after self toward other (in the promoted float dtype), by
    stepping the bits; other itself where they are equal, nan if either is nan. Float tensors only (torch); not
    differentiable (torch neither): the result does not require grad."""
    a, b = self._binop(other)
    if a.dtype.kind != "f":
      raise NotImplementedError(f"nextafter: not implemented for {a.dtype.name} tensors (torch neither); cast first, "
                                "e.g. x.float()")
    return _nextafter(a.detach(), b.detach())
  def erfc_(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """erfc written into self in place (torch's Tensor.erfc_; a float tensor: an int one raises, as torch)."""
    return self._inplace_as(self.erfc(), "erfc_")
  def polygamma_(self: Tensor, n: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """polygamma(n) written into self in place (torch's Tensor.polygamma_)."""
    return self._inplace_as(self.polygamma(n), "polygamma_")
  def mvlgamma_(self: Tensor, p: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """mvlgamma(p) written into self in place (torch's Tensor.mvlgamma_)."""
    return self._inplace_as(self.mvlgamma(p), "mvlgamma_")
  def nextafter_(self: Tensor, other) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """nextafter(other) written into self in place (torch's Tensor.nextafter_)."""
    return self._inplace_as(self.nextafter(other), "nextafter_")
  def matrix_exp(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.matrix_exp: exp of square matrices (..., n, n) by scaling and squaring: A / 2^s (s read from the data:
    the smallest that makes the largest absolute row sum of the batch at most 1/2; the one data read), a Taylor
    polynomial of degree 8 (float32) or 12 (float64) by Horner's rule (matmuls only), squared s times. Float tensors
    only; differentiable through the matmuls."""
    T = type(self)
    if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
      raise RuntimeError(f"matrix_exp: expected a tensor of square matrices (..., n, n), got shape {tuple(self.shape)}")
    if self.dtype.kind != "f":
      raise RuntimeError(f"matrix_exp: expected a floating-point tensor, got {self.dtype.name}; cast first")
    def f(A: Tensor) -> Tensor:
      n = A.shape[-1]
      if A.numel() == 0: return A.clone()
      nrm = float(A.detach().abs().sum(-1).max().item())
      s = max(0, math.ceil(math.log2(nrm)) + 1) if nrm > 0 and math.isfinite(nrm) else 0
      X = A / (2 ** s) if s else A
      eye = T.eye(n, dtype=A.dtype, device=A.device)
      deg = 12 if A.dtype == dtypes.float64 else 8   # (the remainder ||X||^(deg+1)/(deg+1)! is below the dtype's eps)
      E = eye + X / deg
      for k in range(deg - 1, 0, -1):
        # (1/k from a one-element buffer, not a constant: every step is then the same kernel, compiled once)
        E = eye + X.matmul(E) * T([1 / k], dtype=A.dtype, device=A.device)
      for _ in range(s): E = E.matmul(E)
      return E
    return _via_f32(self, f)

def _erfc_tail(x: Tensor) -> Tensor:
  """erfc for x >= 0.5 with no cancellation: float32 by exp(-x^2) times a Chebyshev-fitted polynomial in
  t = 1/(1 + x/2) (relative error < 1.2e-7); float64 by 1 - erf(x) up to 2 (relative error below 1e-13 there) and
  Laplace's continued fraction erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) beyond,
  60 terms, evaluated from the tail back."""
  if x.dtype != dtypes.float64:
    x = x.minimum(12.0)   # (erfc underflows to 0 from x = 10.06: no inf - inf below)
    t = 1 / (1 + 0.5 * x)
    poly: Any = 0.17087277
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196, 1.00002368,
              -1.26551223):
      poly = t * poly + c
    # (x^2 split as xh^2 + (x - xh)(x + xh) with xh = x cut to 8 fraction bits, so xh^2 is exact in float32: the
    # rounding of x^2 would otherwise cost up to 2e-6 relative at x = 6)
    xh = (x * 256).floor() / 256
    return t * (-xh * xh).exp() * (poly - (x - xh) * (x + xh)).exp()
  far = x > 2
  xf = far.where(x.minimum(30.0), 2.0)   # (erfc underflows to 0 from x = 27.3)
  f = xf
  for k in range(60, 0, -1): f = xf + (k / 2) / f
  cf = (-xf * xf).exp() / (math.sqrt(math.pi) * f)
  return far.where(cf, 1 - x.erf())

def _erfc(x: Tensor) -> Tensor:
  near = x < 0.5
  return near.where(1 - x.erf(), _erfc_tail(near.where(0.5, x)))

def _ipow(x: Tensor, k: int) -> Tensor:
  """x**k for a positive int k by multiplications (any sign of x)."""
  out = x
  for _ in range(k - 1): out = out * x
  return out

def _polygamma(x: Tensor, n: int) -> Tensor:
  """polygamma(n, x) for n >= 1 and x > -4 off the poles: (-1)^(n+1) n! sum_k 1/(x+k)^(n+1), the first 12 terms
  summed and the rest by the Euler-Maclaurin asymptotic series at z = x + 12."""
  N = 12
  s = 1 / _ipow(x, n + 1)
  for k in range(1, N): s = s + 1 / _ipow(x + k, n + 1)
  z = x + N
  # sum_{k>=0} (z+k)^-(n+1) ~ z^-n/n + z^-(n+1)/2 + sum_j B_2j (n+2j-1)!/((2j)! n!) z^-(n+2j)
  tail = z.pow(-n) / n + z.pow(-(n + 1)) / 2
  for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6), 1):
    c = b * math.factorial(n + 2 * j - 1) / (math.factorial(2 * j) * math.factorial(n))
    tail = tail + c * z.pow(-(n + 2 * j))
  return (1.0 if n % 2 == 1 else -1.0) * math.factorial(n) * (s + tail)

def _nextafter(x: Tensor, y: Tensor) -> Tensor:
  """The next representable value after x toward y, by stepping x's bits (IEEE floats are ordered like sign-magnitude
  integers): +1 away from zero, -1 toward it; 0 steps to the smallest subnormal with y's sign."""
  idt = {dtypes.float64: dtypes.int64, dtypes.float32: dtypes.int32, dtypes.float16: dtypes.int16,
         dtypes.bfloat16: dtypes.int16}[x.dtype]
  xb = x.bitcast(idt)
  away = (y > x) == (x > 0)
  step = xb + away.where(1, -1).cast(idt)
  neg_tiny = -(1 << (idt.itemsize * 8 - 1)) + 1   # (the sign bit and a 1 in the lowest place, as a signed int)
  tiny = (y > 0).where(1, neg_tiny).cast(idt)
  out = (x == 0).where(tiny, step).bitcast(x.dtype)
  out = (x == y).where(y, out)
  return (x.isnan() | y.isnan()).where(math.nan, out)

def _size(size: tuple) -> tuple:
  return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size

def _inplace_method(name: str) -> Callable:
  def f(self: Tensor, *args, **kw) -> Tensor: return self._inplace_as(getattr(self, name)(*args, **kw), name + "_")
  f.__name__ = f.__qualname__ = name + "_"
  f.__doc__ = (f"{name}(...) written into self in place (torch's Tensor.{name}_): views write through to their base; "
               "the result must broadcast to self's shape and cast to self's dtype (a float result into an int tensor "
               "raises, as torch). Returns self.")
  return f

# the ops whose result is written in place by `op_` (torch has each of these names); tensor.py's own add_, sub_,
# mul_, div_, clamp_, zero_, fill_ stay as they are, and tensor_select.py has the indexing ones (masked_fill_,
# scatter_, index_add_...)
INPLACE = ("abs absolute neg negative exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid tanh relu floor "
           "ceil round trunc fix frac sin cos tan asin acos atan sinh cosh asinh acosh atanh arcsin arccos "
           "arctan arcsinh arccosh arctanh reciprocal square sign sgn erf deg2rad rad2deg sinc logit nan_to_num "
           "clamp_min clamp_max clip pow fmod remainder lerp addcmul addcdiv atan2 arctan2 hypot xlogy ldexp "
           "copysign heaviside floor_divide true_divide multiply subtract divide bitwise_and bitwise_or "
           "bitwise_xor bitwise_not logical_and logical_or logical_not lt gt le ge eq ne addmm addmv addbmm "
           "baddbmm addr tril triu logical_xor greater greater_equal less less_equal not_equal bitwise_left_shift "
           "bitwise_right_shift cumsum cumprod lgamma digamma erfinv i0 gcd lcm renorm").split()
for _name in INPLACE: setattr(MathMixin, _name + "_", _inplace_method(_name))
