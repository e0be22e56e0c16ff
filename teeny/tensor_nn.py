"""nn.functional-style Tensor methods (convolutions, pooling, losses, attention), built only from other Tensor ops.

`class Tensor(NNMixin)` inherits these, so `self` is always a Tensor and everything stays lazy and differentiable.
They reach the Tensor class as `type(self)`: tensor.py imports this module, so this module never imports tensor.py.
"""
from __future__ import annotations
import functools, itertools, math
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence
from teeny.device import Device
from teeny.dtype import dtypes, least_upper_dtype, sum_acc_dtype
from teeny.codegen.tc import tiles_for
from teeny.indexing import check_index_range
from teeny.helpers import broadcast_shape
from teeny.uop.ops import Ops, UOp, call_of, in_memory

if TYPE_CHECKING:
  from teeny.tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")

# hand-written kernels that may stand in for a method here: name -> fxn(self, *args) giving a Tensor, or None for the
# plain graph. teeny.kernels, a higher layer, fills it when teeny is imported, so that choice is made there
KERNEL_ROUTES: dict[str, Callable] = {}

def _tuple(x: int | Sequence[int], n: int, name: str = "argument") -> tuple[int, ...]:
  if isinstance(x, int): return (x,) * n
  x = tuple(int(v) for v in x)
  if len(x) == 1: return x * n
  if len(x) != n: raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {x}")
  return x

def _ceildiv(a: int, b: int) -> int: return -(-a // b)

def _check_reduction(reduction: str):
  if reduction not in REDUCTIONS: raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")

def _reduce(x: Tensor, reduction: str) -> Tensor:
  _check_reduction(reduction)
  return x if reduction == "none" else x.sum() if reduction == "sum" else x.mean()

def _pad_or_shrink(x: Tensor, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
  """Pad the last len(pads) dims by (before, after); negative amounts cut instead."""
  lead = [(0, 0)] * (x.ndim - len(pads))
  if any(b < 0 or a < 0 for b, a in pads):
    x = x.shrink(tuple((0, s) for s in x.shape[:len(lead)]) +
                 tuple((-min(b, 0), s + min(a, 0)) for s, (b, a) in zip(x.shape[len(lead):], pads)))
    pads = [(max(b, 0), max(a, 0)) for b, a in pads]
  if not any(b or a for b, a in pads): return x
  return x.pad(tuple(lead) + tuple(pads), value=value) if value != 0 else x.pad(tuple(lead) + tuple(pads))

def _resolve_pads(padding, k: Sequence[int], dilation: Sequence[int],
                  stride: Sequence[int] | int = 1) -> list[tuple[int, int]]:
  """padding as an int, ints per dim, (before, after) pairs per dim, 'valid' or 'same' -> a pair per spatial dim."""
  n = len(k)
  if isinstance(padding, str):
    if padding == "valid": return [(0, 0)] * n
    if padding != "same":
      raise RuntimeError(f"Invalid padding string {padding!r}: use an int, a tuple, 'same' or 'valid'")
    if any(s != 1 for s in _tuple(stride, n)):
      raise RuntimeError(f"padding='same' is not supported for strided convolutions (stride={stride}); pad explicitly")
    return [(d * (kk - 1) // 2, d * (kk - 1) - d * (kk - 1) // 2) for kk, d in zip(k, dilation)]
  if isinstance(padding, int): return [(padding, padding)] * n
  padding = tuple(padding)
  if len(padding) == n and all(isinstance(p, int) for p in padding): return [(p, p) for p in padding]
  if len(padding) == n and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in padding):
    return [(int(b), int(a)) for b, a in padding]
  raise ValueError(f"padding {padding!r} does not fit {n} spatial dims")

def _positive(name: str, vals: Sequence[int], what: str = "must be positive"):
  if any(v <= 0 for v in vals): raise ValueError(f"{name} {what}, got {tuple(vals) if len(vals) != 1 else vals[0]}")

def check_conv_args(fn: str, x_shape, w_shape, stride, padding, dilation, groups) -> None:
  """The argument checks F.conv* does: stride, dilation, groups and kernel sizes positive. Negative padding crops the
  input (tinygrad's meaning; torch refuses it). Shapes are (N, C, *spatial)."""
  n = len(w_shape) - 2
  _positive(f"{fn}: stride", _tuple(stride, n, "stride"), "must be positive (non-positive stride is not supported)")
  _positive(f"{fn}: dilation", _tuple(dilation, n, "dilation"))
  if not isinstance(groups, int) or groups <= 0:
    raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
  _positive(f"{fn}: kernel size", tuple(w_shape[2:]), f"must be positive (weight shape {tuple(w_shape)})")

def _conv_args(x_shape: tuple, w_shape: tuple, stride, padding, dilation, groups) -> tuple:
  """Tensor.conv2d's checks of its shapes and arguments, and the arguments in full: (kernel sizes, strides,
  dilations, (before, after) pads per spatial dim)."""
  if len(x_shape) != len(w_shape) or len(x_shape) < 3:
    raise ValueError(f"conv input {x_shape} and weight {w_shape} need the same ndim (>= 3)")
  check_conv_args("conv", x_shape, w_shape, stride, padding, dilation, groups)
  hw, n, cin_, (cout, cin) = tuple(w_shape[2:]), len(w_shape) - 2, x_shape[1], w_shape[:2]
  if groups * cin != cin_ or cout % groups != 0:
    raise ValueError(f"conv input {x_shape} has {cin_} channels but weight {w_shape} with groups={groups} expects "
                     f"{groups * cin}")
  s_, d_ = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
  return hw, s_, d_, tuple(_resolve_pads(padding, hw, d_, s_))

# (the same for hashable arguments, cached: a step convolves the same shapes with the same arguments every time)
_conv_args_cached = functools.lru_cache(maxsize=1024)(_conv_args)

def _check_pool_args(fn: str, k_, s_, d_, padding) -> None:
  _positive(f"{fn}: kernel_size", k_)
  _positive(f"{fn}: stride", s_)
  _positive(f"{fn}: dilation", d_)
  if isinstance(padding, str): raise ValueError(f"{fn}: padding must be an int or a tuple, got {padding!r}")
  flat = [padding] if isinstance(padding, int) else [v for p in padding for v in ((p,) if isinstance(p, int) else p)]
  if any(p < 0 for p in flat): raise ValueError(f"{fn}: padding must be non-negative, got {padding!r}")

def _ceil_mode_pads(shape: Sequence[int], pads: list[tuple[int, int]], k, s, d) -> list[tuple[int, int]]:
  """Extra trailing padding so the last partial window is kept (PyTorch's ceil_mode), never starting in the padding."""
  out = []
  for i, (pb, pa), kk, ss, dd in zip(shape, pads, k, s, d):
    o = _ceildiv(i + pb + pa - (dd * (kk - 1) + 1), ss) + 1
    if ss * (o - 1) >= i + pb: o -= 1  # the last window would start in the right padding
    out.append((pb, max(pa, ss * (o - 1) + dd * (kk - 1) + 1 - i - pb)))
  return out

def sum_uop(u: UOp, axes: tuple[int, ...], acc) -> UOp:
  """The graph Tensor.sum(axes, dtype=acc) builds, on a UOp: cast to acc, 16-bit floats summed in float32 and cast
  back, the summed axes dropped."""
  if acc != u.dtype: u = u.cast(acc)
  half = acc in (dtypes.float16, dtypes.bfloat16)
  red = (u.cast(dtypes.float32) if half else u).r(Ops.ADD, axes)
  red = red.reshape(tuple(v for i, v in enumerate(u.shape) if i not in axes))
  return red.cast(acc) if half else red

def widen(u: UOp) -> UOp:
  """A 16-bit float operand of a sum of products (matmul, convolution) as float32: its products are then exact and
  summed in float32, the sum rounded once, as torch does (16-bit Tensor results round at every op, so products in
  their own dtype would each be rounded). Widened before the broadcast, so the backward's sums stay float32 too."""
  return u.cast(dtypes.float32) if u.dtype in (dtypes.float16, dtypes.bfloat16) else u

def dot_uop(a: UOp, b: UOp, axes: tuple[int, ...], dt, acc) -> UOp:
  """The sum over `axes` of a*b for operands of dtype dt (widened by `widen` where 16-bit): 16-bit sums in float32
  rounded to dt, others in acc (matmul: dt itself, as torch's integer matmul; the convolutions: sum_acc_dtype)."""
  if dt in (dtypes.float16, dtypes.bfloat16): return sum_uop(a.alu(Ops.MUL, b), axes, dtypes.float32).cast(dt)
  return sum_uop(a.alu(Ops.MUL, b), axes, acc)

def _im2col(u: UOp) -> UOp:
  """A convolution's windows `u`, copied first (im2col) where they lie straight over memory (an unpadded input) on the
  CPU, as they always were: its kernels ran faster on the copy (2 cores, 16x32x30x30 -> 32 3x3: 31 ms against 40
  reading the windows; a 1x1 8x64x28x28 -> 128: 1.5 against 3.4). GPUs read the windows where they are: the tiled
  GEMMs take them as they take a padded input's, and the copy, k*k times the input's size, lost those to plain
  kernels."""
  if u.op is Ops.WINDOW and u.base.op in (Ops.BUFFER, Ops.ASSIGN) and isinstance(u.device, str) and \
     getattr(Device[u.device].renderer, "lang", "C") == "C": return UOp(Ops.CONTIGUOUS, u.dtype, (u,))
  return u

def padded_input(xu: UOp, pads: Sequence[tuple[int, int]], in_place: bool = False) -> UOp:
  """A convolution's input (N, C, *in) padded by `pads` (>= 0) on its spatial dims, for windows to read: a copy of the
  padded input (its plain kernels ran several times faster reading a plain buffer than recomputing the input's
  producer and the padding masks for every one of the k*k taps), or with in_place, the input in memory read through a
  padded view (the GPU tiles copy its chunks by masks: pads_in_place)."""
  padded = any(b or a for b, a in pads)
  if (in_place or not padded) and not in_memory(xu): xu = UOp(Ops.CONTIGUOUS, xu.dtype, (xu,))
  if not padded: return xu
  xp = xu.pad(((0, 0),) * (len(xu.shape) - len(pads)) + tuple(pads))
  return xp if in_place else UOp(Ops.CONTIGUOUS, xp.dtype, (xp,))

def gemm_shaped(renderer, dtype, w: int, ow: int, hw: tuple[int, ...], s_: tuple[int, ...], d_: tuple[int, ...],
                groups: int) -> bool:
  """Whether a convolution takes the tiled GEMMs' implicit-GEMM form (codegen/tc.py: SMEM for float32, TC for 16-bit)
  on this renderer: 2-d, unit stride and dilation, no groups, rows in (w) and out (ow) a multiple of 8 wide, so that a
  run of 16 bytes along a row never crosses into the next (the Opts' contiguity rule)."""
  return len(hw) == 2 and groups == 1 and all(v == 1 for v in (*s_, *d_)) and w % 8 == 0 and ow % 8 == 0 and \
    tiles_for(renderer, dtype)

def pads_in_place(xu: UOp, pads: Sequence[tuple[int, int]], hw: tuple[int, ...], s_: tuple[int, ...],
                  d_: tuple[int, ...], groups: int) -> bool:
  """Whether a padded convolution's kernel will be a tiled GEMM that reads the padding in place (CUDA's SMEM and TC
  tiles copy masked 16-byte chunks: gemm_shaped, on CUDA). H200, 32x64x56x56 3x3: the padded copy was a kernel of its
  own (0.04 ms and its launch)."""
  return _pads_in_place(tuple(xu.shape), xu.dtype, xu.device, pads, hw, s_, d_, groups)

def _pads_in_place(shape: tuple, dtype, device: str, pads: Sequence[tuple[int, int]], hw: tuple[int, ...],
                   s_: tuple[int, ...], d_: tuple[int, ...], groups: int) -> bool:
  if not any(b or a for b, a in pads): return False
  r = Device[device].renderer
  ow = shape[-1] + pads[-1][0] + pads[-1][1] - hw[-1] + 1
  return getattr(r, "lang", "") == "CUDA" and gemm_shaped(r, dtype, shape[-1], ow, hw, s_, d_, groups)

class ConvPlan(NamedTuple):
  """What conv_graph builds for one input shape, weight shape, dtype, device and set of arguments, as the sizes of its
  movement ops (see conv_plan)."""
  in_place: bool                 # the padding read in place (pads_in_place), not from a padded copy
  cols: tuple[int, ...]          # the windows reshaped to (bs, groups, cin, 1, *oyx, *hw)
  full: tuple[int, ...] | None   # ... expanded over the output channels (None: one per group)
  perm: tuple[int, ...]          # ... to (bs, groups, rcout, *oyx, cin, *hw)
  wcols: tuple[int, ...]         # the weight reshaped to (1, groups, rcout, *1s, cin, *hw)
  axes: tuple[int, ...]          # the summed axes (cin, *hw)
  out: tuple[int, ...]           # (bs, cout, *oyx)

@functools.lru_cache(maxsize=1024)
def conv_plan(xshape: tuple, wshape: tuple, dtype, device: str, pads: tuple[tuple[int, int], ...], hw: tuple[int, ...],
              s_: tuple[int, ...], d_: tuple[int, ...], groups: int) -> ConvPlan | None:
  """conv_graph's decisions and sizes: a function of shapes and arguments alone, cached (a training step convolves the
  same shapes every step, and an H200 host spent more time deciding them than building the nodes). None where
  conv_graph has no graph: symbolic sizes, cropping pads, windows that tile the input, a tiny output that sum splits
  in two, a window larger than the input."""
  n, bs, (cout, cin) = len(hw), xshape[0], wshape[:2]
  if any(not isinstance(v, int) for v in xshape + wshape): return None
  if any(b < 0 or a < 0 for b, a in pads): return None
  i_ = tuple(v + b + a for v, (b, a) in zip(xshape[-n:], pads))
  if any(d * (k - 1) + 1 > i for k, d, i in zip(hw, d_, i_)): return None
  if hw == s_ and all(d == 1 for d in d_) and all(i % k == 0 for i, k in zip(i_, hw)): return None
  rcout = cout // groups
  oyx = tuple((i - d * (k - 1) - 1) // s + 1 for i, k, s, d in zip(i_, hw, s_, d_))
  if bs * cout * math.prod(oyx) <= 16: return None
  cols = (bs, groups, cin, 1, *oyx, *hw)
  full = (bs, groups, cin, rcout, *oyx, *hw)
  perm = (0, 1, 3, *[4 + i for i in range(n)], 2, *[4 + n + i for i in range(n)])
  return ConvPlan(_pads_in_place(xshape, dtype, device, pads, hw, s_, d_, groups), cols,
                  None if full == cols else full, perm, (1, groups, rcout, *[1] * n, cin, *hw),
                  tuple(range(len(full) - 1 - n, len(full))), (bs, cout, *oyx))

def conv_graph(xu: UOp, wu: UOp, pads: Sequence[tuple[int, int]], hw: tuple[int, ...], s_: tuple[int, ...],
               d_: tuple[int, ...], groups: int) -> UOp | None:
  """A convolution's graph on UOps: input xu (N, C, *in), weight wu (O, C/groups, *hw), padding `pads` (before, after)
  per spatial dim. The same nodes Tensor.conv2d's Tensor ops build (a copy of the padded input, windows, reshape,
  expand, permute, the weight's reshape and expand, multiply, sum, reshape; a test holds that they are the same node),
  at a fraction of the host time (each Tensor op costs its bookkeeping: an H200 host spent 0.7 ms building and
  launching a convolution whose kernels take 0.3). None where the Tensor ops' graph would differ (mixed dtypes,
  several devices, symbolic sizes, cropping pads, windows that tile the input, a tiny output that sum splits in two, a
  window larger than the input): they handle those."""
  if xu.dtype != wu.dtype or not isinstance(xu.device, str): return None
  p = conv_plan(tuple(xu.shape), tuple(wu.shape), xu.dtype, xu.device, tuple(tuple(b) for b in pads), tuple(hw),
                tuple(s_), tuple(d_), groups)
  if p is None: return None
  u = widen(_im2col(padded_input(xu, pads, in_place=p.in_place).window(tuple(hw), s_, d_))).reshape(p.cols)
  if p.full is not None: u = u.expand(p.full)
  u = u.permute(p.perm)
  w = widen(wu).reshape(p.wcols)
  if w.shape != u.shape: w = w.expand(u.shape)
  return dot_uop(u, w, p.axes, xu.dtype, sum_acc_dtype(xu.dtype)).reshape(p.out)

def _conv_body(x: Tensor, weight: Tensor, pads: Sequence[tuple[int, int]], hw: tuple[int, ...], s_: tuple[int, ...],
               d_: tuple[int, ...], groups: int) -> Tensor | None:
  """conv2d without its bias as one Tensor over conv_graph (None where that has none, or in no-grad mode on a tensor
  that wants gradients)."""
  if type(x)._no_grad and (x.requires_grad or weight.requires_grad): return None
  xu, wu = x.uop, weight.uop
  if (rg := x.requires_grad or weight.requires_grad): u = conv_graph(xu, wu, pads, hw, s_, d_, groups)
  else:   # one CALL node (its body built once per key): a fraction of the host time to build and walk
    # (the key: what conv_graph's decisions read, shapes and arguments, dtypes and device, and whether the input is in
    # memory and whose memory it views: padded_input and _im2col look)
    key = (xu.shape, wu.shape, xu.dtype, wu.dtype, xu.device, tuple(map(tuple, pads)), tuple(hw), tuple(s_), tuple(d_),
           groups, in_memory(xu), xu.base.op)
    u = call_of("conv", key, (xu, wu), conv_graph, xu, wu, pads, hw, s_, d_, groups)
  if u is None: return None
  t = x._wrap(u, weight, rg=rg)
  if t.dtype.kind != "f": t._requires_grad = None
  return t

class NNMixin:
  """Mixed into Tensor: nn.functional-style methods."""

  # ***** piecewise activations *****
  # Each picks its branch by comparisons written so that the gradient at a kink (and at nan) is torch's: where(c, a, b)
  # sends the gradient to the branch taken only, so `<=` against `<` decides which side a boundary point belongs to.

  def leaky_relu(self: Tensor, neg_slope: float = 0.01) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """x for x > 0, else neg_slope * x; the gradient at 0 (and nan) is neg_slope, as torch's."""
    return (self > 0).where(self, self * neg_slope)

  def rrelu(self: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # type: ignore[misc]  # mixin
            training: bool = False, inplace: bool = False) -> Tensor:
    """torch's F.rrelu: x where x > 0, else x * slope. training=True: slope drawn per element uniformly from [lower,
    upper) (a constant, so a non-positive element's gradient is its slope; nan passes with gradient 1, as torch's);
    otherwise slope = (lower + upper) / 2 (leaky_relu). inplace is accepted for torch's signature; the result is a new
    tensor. Float inputs only (torch: not implemented for integers; float16 works here, torch's CPU refuses it)."""
    if lower > upper:
      raise RuntimeError(f"rrelu: lower bound ({lower}) should be less than or equal to the upper bound ({upper}); "
                         "swap them")
    if not dtypes.is_float(self.dtype):
      raise TypeError(f"rrelu: input must be a floating-point tensor, got {self.dtype} (torch: not implemented for "
                      "integers); cast it first, e.g. x.float()")
    if not training: return self.leaky_relu((lower + upper) / 2)
    slope = type(self).uniform(*self.shape, low=lower, high=upper, dtype=self.dtype, device=self.device)
    return (self <= 0).where(self * slope, self)

  def hardtanh(self: Tensor, min_val=-1.0, max_val=1.0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """x clipped to [min_val, max_val]. Unlike clip (torch.clamp), the gradient is 0 at the bounds themselves, as
    torch's hardtanh: it passes only strictly inside (and at nan, which stays nan)."""
    if isinstance(min_val, (int, float)) and isinstance(max_val, (int, float)) and min_val > max_val:
      raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return (self <= min_val).where(min_val, (self >= max_val).where(max_val, self))

  def relu6(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """min(max(x, 0), 6): hardtanh(0, 6), gradient 0 at 0 and at 6 as torch's."""
    return self.hardtanh(0, 6)  # (int bounds: an int tensor stays int)

  def hardsigmoid(self: Tensor, alpha: float = 1 / 6,  # type: ignore[misc]  # mixin: self is a Tensor
                  beta: float = 0.5) -> Tensor:
    """min(max(alpha * x + beta, 0), 1) (torch's is alpha=1/6, beta=0.5: 0 from x <= -3, 1 from x >= 3); the gradient is
    alpha strictly between the kinks and 0 at them and outside (nan: nan, gradient 0), as torch's."""
    default = alpha == 1 / 6 and beta == 0.5
    u = (self + 3) / 6 if default else alpha * self + beta  # (x + 3) / 6 rounds as torch's
    if alpha > 0:  # the kinks in x, so a boundary point is judged on x itself (x = 3 gives exactly 1, not 1 - ulp)
      lo, hi = (-3.0, 3.0) if default else (-beta / alpha, (1 - beta) / alpha)
      inside, below, above = (self > lo) & (self < hi), self <= lo, self >= hi
    else: inside, below, above = (u > 0) & (u < 1), u <= 0, u >= 1
    return inside.where(u, below.where(0.0, above.where(1.0, u.detach())))

  def hardswish(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """x * relu6(x + 3) / 6: 0 from x <= -3, x from x >= 3; the gradient is (2x + 3) / 6 strictly between, 0 at -3 and 1
    at 3 (and at nan), as torch's."""
    return (self <= -3).where(0.0, (self < 3).where(self * (self + 3) / 6, self))

  def elu(self: Tensor, alpha: float = 1.0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """x for x > 0, else alpha * (exp(x) - 1) (by expm1: accurate near 0); the gradient at 0 is alpha, as torch's."""
    x = self._float()
    neg = x <= 0
    # the branch not taken reads 0, so its gradient is never 0 * inf = nan (exp(100) overflows float32)
    return neg.where(alpha * neg.where(x, 0.0).expm1(), x)

  def celu(self: Tensor, alpha: float = 1.0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); the gradient at 0 is 1, as torch's."""
    x = self._float()
    neg = x <= 0
    return neg.where(alpha * (neg.where(x, 0.0) / alpha).expm1(), x)

  def selu(self: Tensor, alpha: float = 1.6732632423543772,  # type: ignore[misc]  # mixin: self is a Tensor
           gamma: float = 1.0507009873554805) -> Tensor:
    """gamma * elu(x, alpha) with torch's constants; the gradient at 0 is gamma * alpha (the negative side's), as
    torch's."""
    return gamma * self.elu(alpha)

  # ***** windows *****

  def _pool(self: Tensor, k_: Sequence[int],  # type: ignore[misc]  # mixin: self is a Tensor
            stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1) -> Tensor:
    """Sliding windows over the last len(k_) dims: (..., *in) -> (..., *out, *k_), a view (the core's WINDOW op)."""
    n = len(k_)
    s_, d_ = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    i_ = tuple(self.shape[-n:])
    if any(d * (k - 1) + 1 > i for k, d, i in zip(k_, d_, i_)):
      raise ValueError(f"kernel {tuple(k_)} (dilation {d_}) is larger than the padded input {i_}")
    if tuple(k_) == s_ and all(d == 1 for d in d_) and all(i % k == 0 for i, k in zip(i_, k_)):
      # windows that tile the input exactly: a reshape, whose gradient is a reshape too
      lead = tuple(self.shape[:-n])
      x = self.reshape(*lead, *[v for i, k in zip(i_, k_) for v in (i // k, k)])
      nl = len(lead)
      return x.permute(*range(nl), *[nl + 2 * j for j in range(n)], *[nl + 2 * j + 1 for j in range(n)])
    return self._window(tuple(k_), s_, d_)

  # ***** convolutions *****

  def conv2d(self: Tensor, weight: Tensor, bias: Tensor | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
             stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """PyTorch's F.conv2d (also 1d/3d: the number of spatial dims comes from the weight); an unbatched input (C, H, W)
    gives an unbatched output, as torch."""
    if self.ndim == weight.ndim - 1 and self.ndim >= 2:
      return self.unsqueeze(0).conv2d(weight, bias, stride, padding, dilation, groups).squeeze(0)
    args = (tuple(self.shape), tuple(weight.shape), stride, padding, dilation, groups)
    try: hash(args)
    except TypeError: hw, s_, d_, pads = _conv_args(*args)   # (lists among the arguments: not cached)
    else: hw, s_, d_, pads = _conv_args_cached(*args)
    bs, (cout, cin) = self.shape[0], weight.shape[:2]
    if bias is not None and tuple(bias.shape) != (cout,):
      raise ValueError(f"conv bias shape {tuple(bias.shape)} must be ({cout},) for weight {tuple(weight.shape)}")
    n = len(hw)
    if (ret := _conv_body(self, weight, pads, hw, s_, d_, groups)) is not None:
      return ret if bias is None else ret + bias.reshape(1, -1, *[1] * n)
    x = _pad_or_shrink(self, pads).contiguous()   # (as conv_graph: windows over a materialised padded input)
    x = x._pool(hw, s_, d_)  # (bs, groups*cin, *oyx, *hw)
    if (cols := _im2col(x.uop)) is not x.uop: x = x._wrap(cols)
    dt, w = x.dtype, weight
    half = dt in (dtypes.float16, dtypes.bfloat16) and w.dtype == dt   # (exact products, as conv_graph's widen)
    if half: x, w = x.float(), w.float()
    rcout, oyx = cout // groups, tuple(x.shape[2:2 + n])
    x = x.reshape(bs, groups, cin, 1, *oyx, *hw).expand(bs, groups, cin, rcout, *oyx, *hw)
    # to (bs, groups, rcout, *oyx, cin, *hw)
    x = x.permute(0, 1, 3, *[4 + i for i in range(n)], 2, *[4 + n + i for i in range(n)])
    w = w.reshape(1, groups, rcout, *[1] * n, cin, *hw)
    xw = x * w
    ret = xw.sum(tuple(range(-1 - n, 0)), dtype=None if half else sum_acc_dtype(xw.dtype))
    ret = (ret.cast(dt) if half else ret).reshape(bs, cout, *oyx)
    return ret if bias is None else ret + bias.reshape(1, -1, *[1] * n)

  def conv1d(self: Tensor, weight: Tensor, bias: Tensor | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
             stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """PyTorch's F.conv1d: input (N, C, L), weight (O, C/groups, K)."""
    if self.ndim not in (2, 3) or weight.ndim != 3:
      raise ValueError(f"conv1d wants a 3-d (or unbatched 2-d) input and a 3-d weight, got {tuple(self.shape)} and "
                       f"{tuple(weight.shape)}")
    return self.conv2d(weight, bias, stride, padding, dilation, groups)

  def conv3d(self: Tensor, weight: Tensor, bias: Tensor | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
             stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """PyTorch's F.conv3d: input (N, C, D, H, W), weight (O, C/groups, kD, kH, kW); padding also 'same' or 'valid'."""
    if self.ndim not in (4, 5) or weight.ndim != 5:
      raise ValueError(f"conv3d wants a 5-d (or unbatched 4-d) input and a 5-d weight, got {tuple(self.shape)} and "
                       f"{tuple(weight.shape)}")
    return self.conv2d(weight, bias, stride, padding, dilation, groups)

  def conv_transpose2d(self: Tensor, weight: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                       bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                       groups: int = 1, dilation=1) -> Tensor:
    """PyTorch's F.conv_transpose2d: weight (C_in, C_out/groups, *k); argument order as in torch. Also 1d/3d (the number
    of spatial dims comes from the weight); an unbatched input (C_in, *spatial) gives an unbatched output, and an output
    size of 0 an empty tensor, as torch's."""
    Tensor = type(self)
    if self.ndim == weight.ndim - 1 and self.ndim >= 2:
      return self.unsqueeze(0).conv_transpose2d(weight, bias, stride, padding, output_padding, groups,
                                                dilation).squeeze(0)
    hw = tuple(weight.shape[2:])
    n = len(hw)
    if self.ndim != weight.ndim or self.ndim < 3:
      raise ValueError(f"conv_transpose input {tuple(self.shape)} and weight {tuple(weight.shape)} need the same ndim "
                       "(>= 3)")
    check_conv_args("conv_transpose", self.shape, weight.shape, stride, padding, dilation, groups)
    flat_pads = [] if isinstance(padding, str) else [padding] if isinstance(padding, int) else \
      [v for p in padding for v in ((p,) if isinstance(p, int) else p)]
    if any(p < 0 for p in flat_pads):
      raise RuntimeError(f"conv_transpose: negative padding is not supported, got padding={padding!r}")
    if self.shape[1] != weight.shape[0] or weight.shape[0] % groups != 0:
      raise ValueError(f"conv_transpose input {tuple(self.shape)} does not match weight {tuple(weight.shape)} "
                       f"(groups={groups})")
    if isinstance(padding, str): raise TypeError(f"conv_transpose: padding must be an int or a tuple, got {padding!r}")
    s_, d_ = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    op_ = _tuple(output_padding, n, "output_padding")
    if any(o < 0 or (o >= s and o >= d) for o, s, d in zip(op_, s_, d_)):
      raise ValueError(f"conv_transpose: output_padding {op_} must be non-negative and smaller than either stride {s_} "
                       f"or dilation {d_}")
    pads = _resolve_pads(padding, hw, d_)
    outs = tuple((i - 1) * s - pb - pa + d * (k - 1) + o + 1
                 for i, s, (pb, pa), d, k, o in zip(self.shape[2:], s_, pads, d_, hw, op_))
    if any(o < 0 for o in outs) and all(i > 0 for i in self.shape[2:]):
      raise RuntimeError(f"conv_transpose: input {tuple(self.shape)} with weight {tuple(weight.shape)}, stride {s_}, "
                         f"padding {padding}, dilation {d_} gives output size {outs}, which is too small (negative); "
                         "use less padding")
    if any(o == 0 for o in outs):   # an empty result, still connected to the inputs (their gradients are zeros)
      dt = least_upper_dtype(self.dtype, weight.dtype)
      link = self.sum() * 0 + weight.sum() * 0 + (bias.sum() * 0 if bias is not None else 0)
      return Tensor.zeros(self.shape[0], weight.shape[1] * groups, *[max(o, 0) for o in outs], dtype=dt,
                          device=self.device) + link.cast(dt)
    cin, rcout = weight.shape[0], weight.shape[1]
    w = weight.reshape(groups, cin // groups, rcout, *hw).permute(0, 2, 1, *range(3, 3 + n))
    w = w.flip(tuple(range(3, 3 + n))).reshape(groups * rcout, cin // groups, *hw)
    x = self
    if any(s > 1 for s in s_):
      # insert s-1 zeros between input elements: (k) -> (k,1) -> pad -> (k,s) -> (k*s) -> cut the trailing zeros
      x = x.reshape(*x.shape[:2], *[v for k in x.shape[2:] for v in (k, 1)])
      x = x.pad(((0, 0), (0, 0)) + tuple(p for s in s_ for p in ((0, 0), (0, s - 1))))
      x = x.reshape(*x.shape[:2], *[k * s for k, s in zip(x.shape[2::2], s_)])
      x = x.shrink(((0, x.shape[0]), (0, x.shape[1])) + tuple((0, k - (s - 1)) for k, s in zip(x.shape[2:], s_)))
    conv_pads = [((k - 1) * d - pb, (k - 1) * d - pa + o) for k, d, (pb, pa), o in zip(hw, d_, pads, op_)]
    return _pad_or_shrink(x, conv_pads).conv2d(w, bias, dilation=d_, groups=groups)

  def conv_transpose1d(self: Tensor, weight: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                       bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                       groups: int = 1, dilation=1) -> Tensor:
    """PyTorch's F.conv_transpose1d: input (N, C_in, L) or unbatched (C_in, L), weight (C_in, C_out/groups, K)."""
    if self.ndim not in (2, 3) or weight.ndim != 3:
      raise RuntimeError(f"conv_transpose1d wants a 3-d (or unbatched 2-d) input and a 3-d weight, got "
                         f"{tuple(self.shape)} and {tuple(weight.shape)}")
    return self.conv_transpose2d(weight, bias, stride, padding, output_padding, groups, dilation)

  def conv_transpose3d(self: Tensor, weight: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                       bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                       groups: int = 1, dilation=1) -> Tensor:
    """PyTorch's F.conv_transpose3d: input (N, C_in, D, H, W) or unbatched (C_in, D, H, W), weight
    (C_in, C_out/groups, kD, kH, kW)."""
    if self.ndim not in (4, 5) or weight.ndim != 5:
      raise RuntimeError(f"conv_transpose3d wants a 5-d (or unbatched 4-d) input and a 5-d weight, got "
                         f"{tuple(self.shape)} and {tuple(weight.shape)}")
    return self.conv_transpose2d(weight, bias, stride, padding, output_padding, groups, dilation)

  # ***** pooling *****

  def _max_pool(self: Tensor, n: int, fn: str, kernel_size, stride,  # type: ignore[misc]  # mixin: self is a Tensor
                padding, dilation, ceil_mode: bool, return_indices: bool):
    """Max pooling over the last n dims, each window scanned as torch's CPU kernel scans it: in row-major order an
    element replaces the running maximum when it is greater or nan, starting from the window's first element inside the
    input. So ties go to the first maximum, nans to the last nan, and padding never wins. The values, the int64 indices
    (return_indices: flat over each input plane) and the gradient (all of it to that one element) follow that pick."""
    tcls = type(self)
    k_ = _tuple(kernel_size, n, "kernel_size")
    s_, d_ = _tuple(stride if stride is not None else k_, n, "stride"), _tuple(dilation, n, "dilation")
    _check_pool_args(fn, k_, s_, d_, padding)
    if self.ndim < n + 1:
      raise ValueError(f"{fn} wants ({n + 1} or {n + 2})-d input (C, *spatial) or (N, C, *spatial), got "
                       f"{tuple(self.shape)}")
    if self.dtype == dtypes.bool: raise NotImplementedError(f"{fn} is not implemented for bool; cast to int or float")
    pads = _resolve_pads(padding, k_, d_)
    if any(2 * max(p) > k for p, k in zip(pads, k_)):
      raise ValueError(f"{fn}: padding {padding} must be at most half of kernel {k_}")
    sp = tuple(self.shape[-n:])
    if ceil_mode: pads = _ceil_mode_pads(sp, pads, k_, s_, d_)
    if any(d * (k - 1) + 1 > i + pb + pa for k, d, i, (pb, pa) in zip(k_, d_, sp, pads)):
      raise ValueError(f"{fn}: kernel {k_} (dilation {d_}) is larger than the padded input "
                       f"{tuple(i + pb + pa for i, (pb, pa) in zip(sp, pads))}: the output would be empty")
    outs = tuple((i + pb + pa - d * (k - 1) - 1) // s + 1 for i, (pb, pa), k, s, d in zip(sp, pads, k_, s_, d_))
    # the padded input split by phase: (..., q, r) for position q*s + r, so kernel tap j (at offset j*d) of output o
    # reads (o + j*d // s, j*d % s), a plain shrink. No windows: their gradient's index math was the cost of a pool.
    qs = tuple(o + d * (k - 1) // s for o, k, s, d in zip(outs, k_, s_, d_))
    fill = -math.inf if dtypes.is_float(self.dtype) else dtypes.min(self.dtype)
    def taps(x: Tensor, fill) -> list[Tensor]:
      lead = tuple(x.shape[:-n])
      x = _pad_or_shrink(x, [(pb, q * s - i - pb) for i, (pb, _), q, s in zip(sp, pads, qs, s_)], value=fill)
      x = x.reshape(*lead, *[v for q, s in zip(qs, s_) for v in (q, s)])
      out = []
      for j in itertools.product(*[range(k) for k in k_]):
        arg = [(0, v) for v in lead]
        for jj, o, s, d in zip(j, outs, s_, d_): arg += [(jj * d // s, jj * d // s + o), (jj * d % s, jj * d % s + 1)]
        out.append(x.shrink(tuple(arg)).reshape(*lead, *outs))
      return out
    is_float = dtypes.is_float(self.dtype)
    ws = taps(self.detach() if self.requires_grad else self, fill)
    grad = bool(self.requires_grad) and not tcls._no_grad
    if not grad and not return_indices:
      # the value alone: torch's scan (greater or nan replaces), which keeps the first of tied zeros' signs too
      m = ws[0]
      for w in ws[1:]: m = ((w > m) | w.isnan() if is_float else w > m).where(w, m)
      return self._fresh(m)
    # which element torch picks: the scan without nans (greater replaces: ties keep the first) ...
    m, sel = ws[0], tcls.full(outs, 0, dtype=dtypes.int32, device=self.device)
    for t in range(1, len(ws)):
      c = ws[t] > m
      m, sel = c.where(ws[t], m), c.where(t, sel)
    if any(pb for pb, _ in pads):
      # ... where a window holds only the padding's value (-inf, or the dtype's minimum), its first element inside the
      # input (tap fv_d = ceil((pb - o*s) / d) along each dim; the padding itself never wins) ...
      first: Tensor | int = 0
      for ax, (o, s, d, (pb, _)) in enumerate(zip(outs, s_, d_, pads)):
        if pb == 0: continue
        fv = ((tcls.arange(o, device=self.device) * -s + (pb + d - 1)) // d).maximum(0)
        first = first + fv.reshape(*[o if a == ax else 1 for a in range(n)]) * math.prod(k_[ax + 1:])
      sel = (m == fill).where(first, sel)
    if is_float:   # ... and the last nan, where there is one
      nan = ws[0].isnan().where(0, -1)
      for t in range(1, len(ws)): nan = ws[t].isnan().where(t, nan)
      sel, m = (nan >= 0).where(nan, sel), (nan >= 0).where(math.nan, m)
    if grad:
      # each output through its picked element alone, so all of its gradient goes there; -0.0 elsewhere changes no
      # value, not even a zero's sign
      sel = sel.contiguous()
      if all(k == s and i % k == 0 and pb == pa == 0 and d == 1 for k, s, i, (pb, pa), d in zip(k_, s_, sp, pads, d_)):
        # windows that tile the input: its reshape (..., *out, K), so each element's gradient is one select
        win = self._pool(k_, s_, d_)
        lead = tuple((0, v) for v in win.shape[:-n])
        picked = [(sel == t).where(win.shrink(lead + tuple((jj, jj + 1) for jj in j)).reshape(*win.shape[:-n]), -0.0)
                  for t, j in enumerate(itertools.product(*[range(k) for k in k_]))]
      else: picked = [(sel == t).where(w, -0.0) for t, w in enumerate(taps(self, fill))]
      m = picked[0]   # (a sum of elementwise adds: a sum reduce would start from +0.0 and lose -0.0's sign)
      for v in picked[1:]: m = m + v
    if not return_indices: return m
    # the index: the picked element's position in its input plane, o*s - pb + tap*d along each dim (where a window has
    # no element inside the input, torch's index is that formula's at the first tap past the left padding: so is this)
    idx: Tensor | int = 0
    for ax, (o, s, d, (pb, _)) in enumerate(zip(outs, s_, d_, pads)):
      tap = sel if ax == n - 1 else sel // math.prod(k_[ax + 1:])
      if ax: tap = tap % k_[ax]
      p = tcls.arange(-pb, o * s - pb, s, device=self.device).reshape(*[o if a == ax else 1 for a in range(n)])
      idx = idx + (p + tap * d) * math.prod(sp[ax + 1:])
    assert isinstance(idx, tcls)
    return m, idx.cast(dtypes.int64)

  def max_pool1d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """PyTorch's F.max_pool1d over the last dim (return_indices: also the int64 argmax positions)."""
    return self._max_pool(1, "max_pool1d", kernel_size, stride, padding, dilation, ceil_mode, return_indices)

  def max_pool2d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """PyTorch's F.max_pool2d over the last two dims; return_indices=True gives (values, int64 indices flat over H*W).
    Ties and nans pick as torch's scan (first maximum, last nan); the whole gradient goes to that element either way."""
    return self._max_pool(2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode, return_indices)

  def max_pool3d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """PyTorch's F.max_pool3d over the last three dims (return_indices: int64 indices flat over D*H*W)."""
    return self._max_pool(3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode, return_indices)

  def _max_unpool(self: Tensor, n: int, fn: str, indices: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                  kernel_size, stride, padding, output_size) -> Tensor:
    """Inverse of max pooling over the last n dims: zeros, with self's values written at the flat `indices`."""
    Tensor = type(self)
    k_ = _tuple(kernel_size, n, "kernel_size")
    s_, p_ = _tuple(stride if stride is not None else k_, n, "stride"), _tuple(padding, n, "padding")
    _check_pool_args(fn, k_, s_, (1,) * n, p_)
    if tuple(indices.shape) != tuple(self.shape):
      raise ValueError(f"{fn}: indices shape {tuple(indices.shape)} must match the input's {tuple(self.shape)}")
    if not dtypes.is_int(indices.dtype):
      raise TypeError(f"{fn}: indices must be an integer tensor, got {indices.dtype}")
    if self.ndim < n + 1:
      raise ValueError(f"{fn} wants (C, *spatial) or (N, C, *spatial) input, got {tuple(self.shape)}")
    ins = tuple(self.shape[-n:])
    default = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(ins, s_, p_, k_))
    if output_size is None: outs = default
    else:
      outs = tuple(int(o) for o in output_size)
      if len(outs) == n + 2 or (len(outs) == n + 1 and self.ndim == n + 1): outs = outs[-n:]
      if len(outs) != n: raise ValueError(f"{fn}: output_size must have {n} or {n + 2} elements, got {output_size}")
      for d, (o, m, s) in enumerate(zip(outs, default, s_)):
        if not m - s < o < m + s:
          raise ValueError(f"{fn}: invalid output_size {tuple(outs)} (dim {d} must be between {m - s} and {m + s}, "
                           "exclusive)")
    lead, flat = tuple(self.shape[:-n]), math.prod(outs)
    idx = indices.reshape(*lead, -1)
    check_index_range(idx, flat, lambda v: f"{fn}: found an invalid max index {v} (output volumes are of size "
                      f"{'x'.join(map(str, outs))})", RuntimeError)
    out = Tensor.zeros(*lead, flat, dtype=self.dtype, device=self.device)
    src = self.reshape(*lead, -1)
    ret = out.scatter(-1, idx, src)
    if self.requires_grad and dtypes.is_float(self.dtype):
      # overlapping windows can pick one element twice: the write keeps one, but as in torch each input's gradient is
      # the output gradient at its index, so where several write, the gradient flows through their sum (forward + 0)
      _, srcs, mask = out._scatter_parts(fn, -1, idx, src)
      added = mask.where(srcs, 0).sum(-1)
      several = (mask.sum(-1) > 1) & ~added.isinf() & ~added.isnan()
      ret = several.where(ret.detach() + (added - added.detach()), ret)
    return ret.reshape(*lead, *outs)

  def max_unpool1d(self: Tensor, indices: Tensor, kernel_size,  # type: ignore[misc]  # mixin: self is a Tensor
                   stride=None, padding=0, output_size=None) -> Tensor:
    """PyTorch's F.max_unpool1d: self and indices as max_pool1d(return_indices=True) gave them."""
    return self._max_unpool(1, "max_unpool1d", indices, kernel_size, stride, padding, output_size)

  def max_unpool2d(self: Tensor, indices: Tensor, kernel_size,  # type: ignore[misc]  # mixin: self is a Tensor
                   stride=None, padding=0, output_size=None) -> Tensor:
    """PyTorch's F.max_unpool2d: self and indices as max_pool2d(return_indices=True) gave them; zeros elsewhere."""
    return self._max_unpool(2, "max_unpool2d", indices, kernel_size, stride, padding, output_size)

  def max_unpool3d(self: Tensor, indices: Tensor, kernel_size,  # type: ignore[misc]  # mixin: self is a Tensor
                   stride=None, padding=0, output_size=None) -> Tensor:
    """PyTorch's F.max_unpool3d: self and indices as max_pool3d(return_indices=True) gave them."""
    return self._max_unpool(3, "max_unpool3d", indices, kernel_size, stride, padding, output_size)

  def _avg_pool(self: Tensor, n: int, fn: str, kernel_size, stride,  # type: ignore[misc]  # mixin: self is a Tensor
                padding, ceil_mode: bool, count_include_pad: bool, divisor_override: int | None = None) -> Tensor:
    """Average pooling over the last n dims. An integer input gives its own dtype, the window's sum divided by the count
    (or divisor_override) rounded toward zero, as torch's int64 avg_pool (torch refuses other integer dtypes; here they
    follow the same rule). bool is refused, as in torch."""
    Tensor = type(self)
    if self.dtype == dtypes.bool: raise NotImplementedError(f"{fn} is not implemented for bool; cast to int or float")
    k_ = _tuple(kernel_size, n, "kernel_size")
    s_ = _tuple(stride if stride is not None else k_, n, "stride")
    _check_pool_args(fn, k_, s_, (1,) * n, padding)
    if self.ndim < n + 1:
      raise ValueError(f"{fn} wants ({n + 1} or {n + 2})-d input (C, *spatial) or (N, C, *spatial), got "
                       f"{tuple(self.shape)}")
    if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override == 0):
      raise RuntimeError(f"{fn}: divisor_override must be a non-zero int, got {divisor_override!r}")
    reg = _resolve_pads(padding, k_, (1,) * n)
    if any(2 * max(p) > k for p, k in zip(reg, k_)):
      raise ValueError(f"{fn}: padding {padding} must be at most half of kernel {k_}")
    pads = _ceil_mode_pads(self.shape[-n:], reg, k_, s_, (1,) * n) if ceil_mode else reg
    axes = tuple(range(-n, 0))
    total = _pad_or_shrink(self, pads)._pool(k_, s_).sum(axes)
    if not dtypes.is_float(self.dtype):
      total = total.cast(dtypes.int64)   # (the division is done in int64, then cast back: torch's int64 kernel)
      if divisor_override is not None: return total.div(divisor_override, rounding_mode="trunc").cast(self.dtype)
    elif divisor_override is not None: return total / divisor_override
    # the divisor: the window size, less what falls outside the (explicitly padded, if count_include_pad) input
    ones = Tensor.ones(*self.shape[-n:], device=self.device)
    if count_include_pad: ones = _pad_or_shrink(ones, reg, value=1.0)
    extra = [(pb - rb, pa - ra) for (pb, pa), (rb, ra) in zip(pads, reg)] if count_include_pad else pads
    count = _pad_or_shrink(ones, extra)._pool(k_, s_).sum(axes)
    if not dtypes.is_float(self.dtype):
      return total.div(count.cast(dtypes.int64), rounding_mode="trunc").cast(self.dtype)
    return total / count.cast(total.dtype)

  def avg_pool1d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """PyTorch's F.avg_pool1d over the last dim."""
    return self._avg_pool(1, "avg_pool1d", kernel_size, stride, padding, ceil_mode, count_include_pad)

  def avg_pool2d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """PyTorch's F.avg_pool2d over the last two dims."""
    return self._avg_pool(2, "avg_pool2d", kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

  def avg_pool3d(self: Tensor, kernel_size=2, stride=None, padding=0,  # type: ignore[misc]  # mixin: self is a Tensor
                 ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """PyTorch's F.avg_pool3d over the last three dims."""
    return self._avg_pool(3, "avg_pool3d", kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

  def _adaptive_pool(self: Tensor, n: int, fn: str, output_size,  # type: ignore[misc]  # mixin: self is a Tensor
                     is_max: bool, return_indices: bool = False):
    """Adaptive pooling over the last n dims, torch's bins: output i of a dim of size L covers [floor(i*L/out),
    ceil((i+1)*L/out)). Bins are products of per-dim ranges, so one dim is pooled at a time, the last first: each dim's
    bins become windows (..., out, K) (a reshape where out divides L, else a gather of the bins' positions, the shorter
    bins' extra taps repeating their last element or masked) and are reduced. Max picks as torch's scan does (the first
    maximum in row-major order, or the last nan), and its gradient goes to that element alone."""
    tcls = type(self)
    import numpy as np
    if self.ndim not in (n + 1, n + 2):
      raise RuntimeError(f"{fn}: expected a {n + 1}-d (unbatched) or {n + 2}-d (batched) input, got "
                         f"{list(self.shape)}")
    sizes = (output_size,) * n if output_size is None or isinstance(output_size, int) else tuple(output_size)
    if len(sizes) == 1 and n > 1: sizes = sizes * n
    if len(sizes) != n:
      raise ValueError(f"{fn}: output_size must be an int or a tuple of {n} (ints or None), got {output_size!r}")
    sp = tuple(self.shape[-n:])
    outs = tuple(int(o) if o is not None else i for o, i in zip(sizes, sp))
    if any(o < 0 for o in outs):
      raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0, got {outs}")
    if any(i == 0 for i in sp):
      raise RuntimeError(f"{fn}: expected an input with non-zero sizes in the pooled dims, got {list(self.shape)}")
    if self.dtype == dtypes.bool or (not is_max and not dtypes.is_float(self.dtype)):
      raise NotImplementedError(f"{fn} is not implemented for {self.dtype}; cast the input to a float dtype")
    x, lead = self, tuple(self.shape[:-n])
    idx: Tensor | None = None   # (max with indices) each output's flat position over the dims pooled so far
    for ax in reversed(range(n)):
      L, o = sp[ax], outs[ax]
      # this dim last: (..., L) -> windows (..., o, K)
      perm = tuple(i for i in range(x.ndim) if i != len(lead) + ax) + (len(lead) + ax,)
      x = x.permute(*perm)
      if idx is not None: idx = idx.permute(*perm)
      starts = [(i * L) // o for i in range(o)]
      ends = [-(-((i + 1) * L) // o) for i in range(o)]
      K = max([e - s for s, e in zip(starts, ends)], default=1)
      if o and L % o == 0:
        def win(t: Tensor) -> Tensor: return t.reshape(*t.shape[:-1], o, K)
        valid = None
      else:
        pos = np.array([[min(s + j, e - 1) for j in range(K)] for s, e in zip(starts, ends)], np.int32).reshape(o, K)
        ptab = tcls(pos.reshape(-1), device=self.device)
        valid = None if is_max else tcls(np.array([[s + j < e for j in range(K)] for s, e in zip(starts, ends)])
                                           .reshape(o, K), device=self.device)
        def win(t: Tensor) -> Tensor:
          ix = ptab.reshape(*[1] * (t.ndim - 1), o * K).expand(*t.shape[:-1], o * K)
          return t.gather(-1, ix).reshape(*t.shape[:-1], o, K)
      w = win(x)
      if not is_max:
        if valid is None: x = w.mean(-1)
        else:
          cnt = tcls(np.array([e - s for s, e in zip(starts, ends)], np.float32), device=self.device)
          x = valid.where(w, 0).sum(-1) / cnt.cast(w.dtype)
      elif o == 0:
        x = w.sum(-1)
        if return_indices: idx = x.cast(dtypes.int64)   # (empty)
      else:
        # torch's pick: the last nan if any, else the first maximum; the value through it alone
        j = tcls.arange(K, device=self.device)
        wd = w.detach()
        m = wd.max(-1, keepdim=True)
        key = (wd == m).where(K - 1 - j, -1)
        if dtypes.is_float(self.dtype): key = wd.isnan().where(K + j, key)
        best = key.max(-1, keepdim=True)
        sel = (best >= K).where(best - K, K - 1 - best) == j
        x = sel.where(w, -0.0 if dtypes.is_float(self.dtype) else 0).sum(-1).cast(self.dtype)
        if return_indices:
          p = tcls(np.array(pos if o and L % o else [[i * K + jj for jj in range(K)] for i in range(o)], np.int32)
                     .reshape(o, K), device=self.device).cast(dtypes.int64) * math.prod(sp[ax + 1:])
          here = p if idx is None else win(idx) + p
          idx = sel.where(here, 0).sum(-1)
      inv = [0] * x.ndim
      for i, pi in enumerate(perm): inv[pi] = i
      x = x.permute(*inv)
      if idx is not None: idx = idx.permute(*inv)
    if not return_indices: return x
    assert idx is not None
    return x, idx.cast(dtypes.int64)

  def adaptive_avg_pool1d(self: Tensor, output_size) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's F.adaptive_avg_pool1d over the last dim of (C, L) or (N, C, L)."""
    return self._adaptive_pool(1, "adaptive_avg_pool1d", output_size, False)

  def adaptive_avg_pool2d(self: Tensor, output_size) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's F.adaptive_avg_pool2d over the last two dims; output_size an int, or a pair whose None keeps a dim."""
    return self._adaptive_pool(2, "adaptive_avg_pool2d", output_size, False)

  def adaptive_avg_pool3d(self: Tensor, output_size) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's F.adaptive_avg_pool3d over the last three dims."""
    return self._adaptive_pool(3, "adaptive_avg_pool3d", output_size, False)

  def adaptive_max_pool1d(self: Tensor, output_size,  # type: ignore[misc]  # mixin: self is a Tensor
                          return_indices: bool = False):
    """torch's F.adaptive_max_pool1d; return_indices: also the int64 argmax positions."""
    return self._adaptive_pool(1, "adaptive_max_pool1d", output_size, True, return_indices)

  def adaptive_max_pool2d(self: Tensor, output_size,  # type: ignore[misc]  # mixin: self is a Tensor
                          return_indices: bool = False):
    """torch's F.adaptive_max_pool2d; return_indices: also the int64 argmax positions, flat over H*W."""
    return self._adaptive_pool(2, "adaptive_max_pool2d", output_size, True, return_indices)

  def adaptive_max_pool3d(self: Tensor, output_size,  # type: ignore[misc]  # mixin: self is a Tensor
                          return_indices: bool = False):
    """torch's F.adaptive_max_pool3d; return_indices: also the int64 argmax positions, flat over D*H*W."""
    return self._adaptive_pool(3, "adaptive_max_pool3d", output_size, True, return_indices)

  # ***** resampling *****

  def interpolate(self: Tensor, size=None, scale_factor=None,  # type: ignore[misc]  # mixin: self is a Tensor
                  mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """PyTorch's F.interpolate over the spatial dims (all but the first two): nearest, nearest-exact, linear (3-d
    input), bilinear (4-d), bicubic (4-d: torch's cubic convolution, A = -0.75, taps clamped at the border), trilinear
    (5-d), area (adaptive_avg_pool to the output size). uint8 inputs work for nearest, nearest-exact, bilinear and
    bicubic (rounded as torch does); other integer dtypes raise NotImplementedError, as in torch."""
    Tensor = type(self)
    import numpy as np
    modes = {"nearest": None, "nearest-exact": None, "linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5,
             "area": None}
    n = self.ndim - 2
    if mode not in modes or not 1 <= n <= 3:
      raise NotImplementedError(f"interpolate: only 3-d, 4-d and 5-d inputs and the modes {tuple(modes)} are "
                                f"supported, got a {self.ndim}-d input and mode {mode!r}")
    if modes[mode] is not None and modes[mode] != self.ndim:
      raise NotImplementedError(f"interpolate: got a {self.ndim}-d input, but {mode} mode needs a {modes[mode]}-d "
                                "input")
    if modes[mode] is None and align_corners is not None:
      raise ValueError("interpolate: align_corners can only be set with the interpolating modes linear, bilinear, "
                       "bicubic and trilinear")
    if (size is None) == (scale_factor is None):
      raise ValueError("interpolate: give exactly one of size and scale_factor")
    if not dtypes.is_float(self.dtype) and not (self.dtype == dtypes.uint8 and mode in ("nearest", "nearest-exact",
                                                                                         "bilinear", "bicubic")):
      raise NotImplementedError(f"interpolate: mode {mode!r} does not support {self.dtype} input (teeny supports "
                                "float, and uint8 for nearest, nearest-exact, bilinear and bicubic); cast it to float "
                                "first")
    ins = self.shape[2:]
    scales: Sequence[float | None]
    if size is not None:
      outs, scales = _tuple(size, n, "size"), [None] * n
    else:
      fs = [float(s) for s in ((scale_factor,) * n if isinstance(scale_factor, (int, float)) else scale_factor)]
      scales = fs
      if len(scales) != n: raise ValueError(f"interpolate: scale_factor {scale_factor} must have {n} elements")
      outs = tuple(int(math.floor(i * s)) for i, s in zip(ins, fs))
    if any(o <= 0 for o in outs): raise ValueError(f"interpolate: output size {tuple(outs)} must be positive")
    x = self
    if mode == "area": return self.adaptive_avg_pool2d(outs) if n == 2 else \
      self.adaptive_avg_pool1d(outs) if n == 1 else self.adaptive_avg_pool3d(outs)
    if mode in ("nearest", "nearest-exact"):
      # each output element copies one input element: a gather along each dim, with torch's float32 index math
      for dim in range(n):
        i, o, sc = ins[dim], outs[dim], scales[dim]
        ratio = np.float32(1.0 / sc) if sc is not None and sc > 0 else np.float32(i) / np.float32(o)
        dst = np.arange(o, dtype=np.float32) + (np.float32(0.5) if mode == "nearest-exact" else np.float32(0))
        src = np.minimum(np.floor(dst * ratio).astype(np.int64), i - 1).astype(np.int32)
        if o == i and (sc is None or sc == 1.0): continue
        shape = [1] * x.ndim
        shape[2 + dim] = o
        idx = Tensor(src, device=self.device).reshape(shape)
        idx = idx.expand(*[o if d == 2 + dim else s for d, s in enumerate(x.shape)])
        x = x.gather(2 + dim, idx)
      return self._fresh(x)
    if self.dtype == dtypes.uint8: return self._interpolate_uint8(outs, scales, bool(align_corners), mode == "bicubic")
    for dim in range(n):
      i, o, sc = ins[dim], outs[dim], scales[dim]
      # a constant (in, out) matrix of interpolation weights, applied as a matmul along this dim
      dst = np.arange(o, dtype=np.float64)
      ratio = (1.0 / sc) if sc is not None else (i / o)
      w = np.zeros((i, o), dtype=np.float32)
      if mode == "bicubic":
        # torch's cubic convolution (A = -0.75) over the taps floor(src) - 1 .. + 2, clamped to the border; the
        # source index is not clamped at 0 here
        if align_corners: src = dst * ((i - 1) / (o - 1) if o > 1 else 0.0)
        else: src = (dst + 0.5) * ratio - 0.5
        fl = np.floor(src)
        t, A = src - fl, -0.75
        cc = [((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A, ((A + 2) * t - (A + 3)) * t * t + 1,
              ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1]
        cc.append(1 - cc[0] - cc[1] - cc[2])
        for tap, c in zip(range(-1, 3), cc):
          np.add.at(w, (np.clip(fl.astype(np.int64) + tap, 0, i - 1), np.arange(o)), c.astype(np.float32))
      elif align_corners: src = dst * ((i - 1) / (o - 1) if o > 1 else 0.0)
      else: src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
      if mode != "bicubic":
        lo = np.minimum(np.floor(src).astype(np.int64), i - 1)
        hi, frac = np.minimum(lo + 1, i - 1), (src - lo).astype(np.float32)
        np.add.at(w, (lo, np.arange(o)), 1.0 - frac)
        np.add.at(w, (hi, np.arange(o)), frac)
      axis = 2 + dim
      xt = x.transpose(axis, -1) if axis != x.ndim - 1 else x
      xt = xt.matmul(Tensor(w, device=self.device).cast(x.dtype))
      x = xt.transpose(axis, -1) if axis != x.ndim - 1 else xt
    return self._fresh(x)

  def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's F.pixel_shuffle: (*, C*r*r, H, W) -> (*, C, H*r, W*r), out[c, h*r + i, w*r + j] = in[c*r*r + i*r + j, h,
    w]."""
    r = upscale_factor
    if not isinstance(r, int) or r <= 0:
      raise RuntimeError(f"pixel_shuffle: upscale_factor must be a positive int, got {r!r}")
    if self.ndim < 3:
      raise RuntimeError(f"pixel_shuffle: expected an input of at least 3 dims (*, C, H, W), got {list(self.shape)}")
    *lead, c, h, w = self.shape
    if c % (r * r):
      raise RuntimeError(f"pixel_shuffle: the channel dim (size {c}, dim -3) must be divisible by upscale_factor**2 = "
                         f"{r * r}")
    x = self.reshape(*lead, c // (r * r), r, r, h, w)
    nl = len(lead)
    x = x.permute(*range(nl), nl, nl + 3, nl + 1, nl + 4, nl + 2)
    return self._fresh(x.reshape(*lead, c // (r * r), h * r, w * r))

  def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch's F.pixel_unshuffle, pixel_shuffle's inverse: (*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    r = downscale_factor
    if not isinstance(r, int) or r <= 0:
      raise RuntimeError(f"pixel_unshuffle: downscale_factor must be a positive int, got {r!r}")
    if self.ndim < 3:
      raise RuntimeError(f"pixel_unshuffle: expected an input of at least 3 dims (*, C, H, W), got {list(self.shape)}")
    *lead, c, h, w = self.shape
    if h % r or w % r:
      raise RuntimeError(f"pixel_unshuffle: height {h} and width {w} (dims -2, -1) must be divisible by "
                         f"downscale_factor {r}")
    x = self.reshape(*lead, c, h // r, r, w // r, r)
    nl = len(lead)
    x = x.permute(*range(nl), nl, nl + 2, nl + 4, nl + 1, nl + 3)
    return self._fresh(x.reshape(*lead, c * r * r, h // r, w // r))

  def _interpolate_uint8(self: Tensor, outs: Sequence[int],  # type: ignore[misc]  # mixin: self is a Tensor
                         scales: Sequence[float | None], align_corners: bool, bicubic: bool = False) -> Tensor:
    """torch's uint8 bilinear and bicubic: one dim at a time (the last first, then the others backwards, skipping dims
    whose size stays), each a weighted sum with int16 fixed-point weights, rounded and clamped back to uint8 before the
    next. Bilinear's two taps are normalised to sum to 1; bicubic's four (A = -0.75) are clamped at the border, as in
    the float path."""
    Tensor = type(self)
    import numpy as np
    x, n = self, len(outs)
    for dim in reversed(range(n)):
      axis, i, o, sc = 2 + dim, self.shape[2 + dim], outs[dim], scales[dim]
      if i == o: continue
      if align_corners: scale = (i - 1) / (o - 1) if o > 1 else 0.0
      else: scale = 1.0 / sc if sc is not None and sc > 0 else i / o
      delta = 0.5 if align_corners else 0.0
      w = np.zeros((i, o), dtype=np.float64)
      if bicubic:
        src = scale * (np.arange(o) + 0.5 - delta) - 0.5 + delta
        fl = np.floor(src)
        for tap in range(-1, 3):
          d = np.abs(src - fl - tap)
          c = np.where(d < 1, (1.25 * d - 2.25) * d * d + 1, (((d - 5) * d + 8) * d - 4) * -0.75)
          np.add.at(w, (np.clip(fl.astype(np.int64) + tap, 0, i - 1), np.arange(o)), c)
      for j in range(o if not bicubic else 0):  # the linear filter's taps for output j, normalised to sum to 1
        center = scale * (j + 0.5 - delta)
        lo = max(int(center - 1 + 0.5 + delta), 0)
        size = min(max(min(int(center + 1 + 0.5 + delta), i) - lo, 0), 2)
        taps = np.maximum(1 - np.abs(np.arange(lo, lo + size) - center + 0.5 - delta), 0.0)
        if taps.sum() != 0: w[lo:lo + size, j] = taps / taps.sum()
      prec = 0
      while prec < 22 and int(0.5 + w.max() * (1 << (prec + 1))) < (1 << 15): prec += 1
      wi = np.where(w < 0, w * (1 << prec) - 0.5, w * (1 << prec) + 0.5).astype(np.int32)  # round half away from zero
      xt = x.transpose(axis, -1) if axis != x.ndim - 1 else x
      acc = xt.cast(dtypes.int32).matmul(Tensor(wi, device=self.device)) + (1 << (prec - 1))
      xt = (acc // (1 << prec)).clip(0, 255).cast(dtypes.uint8)
      x = xt.transpose(axis, -1) if axis != x.ndim - 1 else xt
    return self._fresh(x)

  # ***** normalisation, regularisation *****

  def dropout(self: Tensor, p: float = 0.5) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Zero each element with probability p and scale the rest by 1/(1-p), only while Tensor.training."""
    Tensor = type(self)
    if not 0.0 <= p <= 1.0: raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not Tensor.training or p == 0: return self
    if p == 1: return self * 0
    keep = Tensor.rand(*self.shape, device=self.device) >= p
    return keep.where(self, 0) * (1.0 / (1.0 - p))

  def layernorm(self: Tensor, axis=-1, eps: float = 1e-5) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Normalise to zero mean, unit variance over `axis` (no affine)."""
    if self.dtype in (dtypes.float16, dtypes.bfloat16):  # in float32: (x - mean)**2 overflows float16 from 256 on
      return self.cast(dtypes.float32).layernorm(axis, eps).cast(self.dtype)
    y = self - self.mean(axis, keepdim=True)
    return y * (y * y).mean(axis, keepdim=True).add(eps).rsqrt()

  def _norm_affine(self: Tensor, fn: str, x: Tensor, weight: Tensor | None,  # type: ignore[misc]  # mixin
                   bias: Tensor | None, shape: tuple[int, ...], bshape: tuple[int, ...]) -> Tensor:
    """x (self normalised, in float32 for a 16-bit self) * weight + bias, each of `shape` seen as `bshape`, cast back
    to self's dtype once. weight/bias: self's dtype, or float32 for a 16-bit self (torch's CPU rule; others raise)."""
    ok = (self.dtype, dtypes.float32) if self.dtype in (dtypes.float16, dtypes.bfloat16) else (self.dtype,)
    for name, p in (("weight", weight), ("bias", bias)):
      if p is None: continue
      if tuple(p.shape) != shape:
        raise RuntimeError(f"{fn}: {name} must have shape {shape}, got {tuple(p.shape)}")
      if p.dtype not in ok:
        raise RuntimeError(f"{fn}: mixed dtypes: input is {self.dtype}, {name} is {p.dtype}; give the {name} "
                           f"as {' or '.join(map(str, ok))}")
    if weight is not None: x = x * weight.cast(x.dtype).reshape(bshape)
    if bias is not None: x = x + bias.cast(x.dtype).reshape(bshape)
    return x.cast(self.dtype)

  def _norm_input(self: Tensor, fn: str) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    if not dtypes.is_float(self.dtype):
      raise NotImplementedError(f"{fn} is not implemented for {self.dtype}; cast the input to a float dtype")
    # 16-bit inputs in float32: (x - mean)**2 overflows float16 from 256 on (torch's CPU kernels accumulate in float32)
    return self.cast(dtypes.float32) if self.dtype in (dtypes.float16, dtypes.bfloat16) else self

  def layer_norm(self: Tensor, normalized_shape, weight: Tensor | None = None,  # type: ignore[misc]  # mixin
                 bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """torch's F.layer_norm: normalise over the trailing `normalized_shape` dims (biased variance), then
    * weight + bias (both of normalized_shape). The result has the input's dtype; 16-bit inputs are computed in
    float32 and take float32 or same-dtype weight/bias."""
    ns = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(v) for v in normalized_shape)
    if not ns or self.ndim < len(ns) or tuple(self.shape[self.ndim - len(ns):]) != ns:
      raise RuntimeError(f"layer_norm: normalized_shape={list(ns)} expects an input of shape [*, "
                         f"{', '.join(map(str, ns))}], got {list(self.shape)}")
    x, axes = self._norm_input("layer_norm"), tuple(range(-len(ns), 0))
    y = x - x.mean(axes, keepdim=True)
    y = y * (y * y).mean(axes, keepdim=True).add(eps).rsqrt()
    return self._norm_affine("layer_norm", y, weight, bias, ns, ns)

  def group_norm(self: Tensor, num_groups: int, weight: Tensor | None = None,  # type: ignore[misc]  # mixin
                 bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """torch's F.group_norm: (N, C, *) normalised over each group of C/num_groups channels and all other dims (biased
    variance), then a per-channel weight and bias (shape (C,)). Input dtype kept, as layer_norm."""
    if self.ndim < 2:
      raise RuntimeError(f"group_norm: expected an input of at least 2 dims (N, C, *), got {list(self.shape)}")
    c = self.shape[1]
    if not isinstance(num_groups, int) or num_groups <= 0 or c % num_groups:
      raise RuntimeError(f"group_norm: expected the number of channels in input to be divisible by num_groups, but "
                         f"got input of shape {list(self.shape)} and num_groups={num_groups}")
    x = self._norm_input("group_norm").reshape(self.shape[0], num_groups, c // num_groups * math.prod(self.shape[2:]))
    y = x - x.mean(-1, keepdim=True)
    y = (y * (y * y).mean(-1, keepdim=True).add(eps).rsqrt()).reshape(self.shape)
    return self._norm_affine("group_norm", y, weight, bias, (c,), (1, c) + (1,) * (self.ndim - 2))

  def instance_norm(self: Tensor, running_mean: Tensor | None = None,  # type: ignore[misc]  # mixin
                    running_var: Tensor | None = None, weight: Tensor | None = None, bias: Tensor | None = None,
                    use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """torch's F.instance_norm: (N, C, *spatial), each (n, c) normalised over its spatial dims (biased variance), then
    a per-channel weight and bias. With use_input_stats and running stats given, those are updated in place (assign) as
    torch does: running = (1 - momentum) * running + momentum * (the batch's mean over N of each instance's mean, or
    of its unbiased variance). use_input_stats=False normalises by running_mean/running_var instead."""
    if self.ndim < 3:
      raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, *spatial), got {list(self.shape)}; "
                       "unsqueeze an unbatched (C, *spatial) input to (1, C, *spatial)")
    c, axes = self.shape[1], tuple(range(2, self.ndim))
    bshape = (1, c) + (1,) * (self.ndim - 2)
    for name, r in (("running_mean", running_mean), ("running_var", running_var)):
      if r is not None and tuple(r.shape) != (c,):
        raise RuntimeError(f"instance_norm: {name} must have shape ({c},), got {tuple(r.shape)}")
    x = self._norm_input("instance_norm")
    if not use_input_stats:
      if running_mean is None or running_var is None:
        raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
      y = (x - running_mean.cast(x.dtype).reshape(bshape)) * running_var.cast(x.dtype).reshape(bshape).add(eps).rsqrt()
      return self._norm_affine("instance_norm", y, weight, bias, (c,), bshape)
    L = math.prod(self.shape[2:])
    if L <= 1:
      raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input size "
                       f"{list(self.shape)}")
    mean = x.mean(axes, keepdim=True)
    y = x - mean
    var = (y * y).mean(axes, keepdim=True)
    if running_mean is not None:
      bm = mean.detach().reshape(self.shape[0], c).mean(0)
      running_mean.assign((1 - momentum) * running_mean + (momentum * bm).cast(running_mean.dtype))
    if running_var is not None:
      bv = var.detach().reshape(self.shape[0], c).mean(0) * (L / (L - 1))
      running_var.assign((1 - momentum) * running_var + (momentum * bv).cast(running_var.dtype))
    return self._norm_affine("instance_norm", y * var.add(eps).rsqrt(), weight, bias, (c,), bshape)

  def batchnorm(self: Tensor, weight: Tensor | None,  # type: ignore[misc]  # mixin: self is a Tensor
                bias: Tensor | None, mean: Tensor, invstd: Tensor, axis=1) -> Tensor:
    """(x - mean) * invstd * weight + bias, with the per-channel tensors broadcast along `axis`."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % self.ndim for a in axes)
    shape = tuple(s if ax in axes else 1 for ax, s in enumerate(self.shape))
    x = self - mean.reshape(shape)
    if weight is not None: x = x * weight.reshape(shape)
    ret = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
    return ret + bias.reshape(shape) if bias is not None else ret

  # ***** indexing helpers *****

  def _one_hot_along_dim(self: Tensor, num_classes: int,  # type: ignore[misc]  # mixin: self is a Tensor
                         dim: int = -1) -> Tensor:
    Tensor = type(self)
    offset = self.ndim - (dim % self.ndim) - 1
    return self == Tensor.arange(num_classes, device=self.device).reshape(num_classes, *[1] * offset)

  def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Integer class ids -> a trailing one-hot axis (int32 zeros and ones)."""
    if not dtypes.is_int(self.dtype): raise TypeError(f"one_hot wants an integer tensor, got {self.dtype}")
    if num_classes == -1: num_classes = int(self.max().item()) + 1
    check_index_range(self, num_classes, lambda v: f"one_hot: class values must be non-negative, got {v}" if v < 0 else
                      f"one_hot: class values must be smaller than num_classes ({num_classes}), got {v}; raise "
                      "num_classes or fix the labels", RuntimeError)
    return self.unsqueeze(-1)._one_hot_along_dim(num_classes).where(1, 0)

  def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.gather: out[i][j] = self[index[i][j]][j] for dim=0 (index no larger than self off `dim`)."""
    if index.ndim != self.ndim:
      raise ValueError(f"gather index {tuple(index.shape)} must have as many dims as self {tuple(self.shape)}")
    if not dtypes.is_int(index.dtype): raise TypeError(f"gather index must be an integer tensor, got {index.dtype}")
    if self.ndim == 0:   # (torch: a 0-d tensor gathers along dim 0 or -1, as a 1-element one)
      if dim not in (0, -1): raise IndexError(f"gather: dim {dim} is out of range for a 0-d tensor (0 or -1)")
      return self.reshape(1).gather(0, index.reshape(1)).reshape(())
    dim = dim % self.ndim
    if any(i > s for d, (s, i) in enumerate(zip(self.shape, index.shape)) if d != dim):
      raise ValueError(f"gather index {tuple(index.shape)} is larger than self {tuple(self.shape)} outside dim {dim}")
    check_index_range(index, self.shape[dim], "gather: index", RuntimeError, dim=dim,
                      hint=f"gather indices must be in [0, {self.shape[dim]}); negative ones are not wrapped")
    if hasattr(self, "_gather"): return self._gather(dim, index)
    x = self.shrink(tuple((0, i) if d != dim else (0, s) for d, (s, i) in enumerate(zip(self.shape, index.shape))))
    x = x.unsqueeze(-1).transpose(-1, dim)
    return index.unsqueeze(-1)._one_hot_along_dim(self.shape[dim]).where(x, 0).sum(-1).cast(self.dtype)

  def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.index_select: the entries of self at the 1-D integer `index` along dim (in [0, size); not wrapped)."""
    Tensor = type(self)
    if not isinstance(index, Tensor) or not dtypes.is_int(index.dtype) or index.ndim > 1:
      what = f"{index.ndim}-D {index.dtype}" if isinstance(index, Tensor) else type(index).__name__
      raise TypeError(f"index_select: index must be a 0-D or 1-D integer tensor, got {what}")
    if self.ndim == 0:
      if index.numel() != 1:
        raise RuntimeError(f"index_select: a 0-D tensor takes exactly one index, got {index.numel()}")
      return self.reshape(1).index_select(0, index.reshape(1)).reshape(())
    d = dim % self.ndim if -self.ndim <= dim < self.ndim else None
    if d is None: raise IndexError(f"index_select: dim {dim} out of range for a {self.ndim}-D tensor")
    n = index.numel()
    shape = tuple(n if i == d else s for i, s in enumerate(self.shape))
    # (checked before the broadcast: indices made from host data are then checked for free on every device)
    check_index_range(index, self.shape[d], "index_select: index", IndexError, dim=d,
                      hint=f"indices must be in [0, {self.shape[d]}); negative ones are not wrapped")
    idx = index.reshape(*[n if i == d else 1 for i in range(self.ndim)]).expand(*shape)
    return self._gather(d, idx)

  def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # type: ignore[misc]
    """torch.take_along_dim: gather along dim with self and indices broadcast over the other dims (dim=None: over
    the flattened tensor)."""
    Tensor = type(self)
    if not isinstance(indices, Tensor) or not dtypes.is_int(indices.dtype):
      raise TypeError(f"take_along_dim: indices must be an integer tensor, got "
                      f"{getattr(indices, 'dtype', type(indices).__name__)}")
    if dim is None: return self.reshape(-1).gather(0, indices.reshape(-1))   # (negative: an error, as torch's)
    if indices.ndim != self.ndim:
      raise RuntimeError(f"take_along_dim: indices ({indices.ndim}-D) must have as many dims as self ({self.ndim}-D)")
    d = dim % self.ndim
    # negative indices count from the end, as torch's along a dim (torch reads outside [-n, n) silently: here an error)
    check_index_range(indices, self.shape[d], "take_along_dim: index", RuntimeError, dim=d, negative=True,
                      hint=f"indices must be in [-{self.shape[d]}, {self.shape[d]})")
    indices = (indices < 0).where(indices + self.shape[d], indices)
    try:
      rest = broadcast_shape(tuple(1 if i == d else s for i, s in enumerate(self.shape)),
                             tuple(1 if i == d else s for i, s in enumerate(indices.shape)))
    except ValueError:
      raise RuntimeError(f"take_along_dim: self {tuple(self.shape)} and indices {tuple(indices.shape)} do not "
                         f"broadcast outside dim {d}") from None
    x = self.expand(*[self.shape[d] if i == d else s for i, s in enumerate(rest)])
    return x.gather(d, indices.expand(*[indices.shape[d] if i == d else s for i, s in enumerate(rest)]))

  def _scatter_parts(self: Tensor, fn: str, dim: int, index: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                     src) -> tuple[int, Tensor, Tensor]:
    """Checks, then (dim, src, mask), both self.shape + (index.shape[dim],): src[..., r] is the value that index's r-th
    entry along dim sends to that position and mask[..., r] whether it goes there (a one-hot over self.shape[dim])."""
    Tensor = type(self)
    if not isinstance(index, Tensor) or not dtypes.is_int(index.dtype):
      raise TypeError(f"{fn}: index must be an integer tensor, got {getattr(index, 'dtype', type(index).__name__)}")
    if not isinstance(src, Tensor): src = Tensor.full(tuple(index.shape), src, dtype=self.dtype, device=self.device)
    if not index.ndim == self.ndim == src.ndim:
      raise RuntimeError(f"{fn}: self {tuple(self.shape)}, index {tuple(index.shape)} and src {tuple(src.shape)} "
                         "need the same number of dims")
    if not -max(self.ndim, 1) <= dim < max(self.ndim, 1):
      raise IndexError(f"{fn}: dim {dim} is out of range for a {self.ndim}-d tensor (expected to be in range of "
                       f"[{-max(self.ndim, 1)}, {max(self.ndim, 1) - 1}])")
    dim = dim % self.ndim
    if not all((d == dim or s >= i) and c >= i for d, (s, i, c) in enumerate(zip(self.shape, index.shape, src.shape))):
      raise RuntimeError(f"{fn}: index {tuple(index.shape)} must fit in src {tuple(src.shape)} and, off dim {dim}, "
                         f"self {tuple(self.shape)}")
    check_index_range(index, self.shape[dim], f"{fn}: index", RuntimeError, dim=dim,
                      hint=f"indices must be in [0, {self.shape[dim]}); negative ones are not wrapped")
    src = src.cast(self.dtype).shrink(tuple((0, s) for s in index.shape))
    # put index's `dim` on a new trailing axis r and a one-hot over self.shape[dim] in its place
    src = src.unsqueeze(-1).expand(*src.shape, self.shape[dim]).transpose(-1, dim)
    mask = index.unsqueeze(-1)._one_hot_along_dim(self.shape[dim]).transpose(-1, dim)
    fill = tuple((0, self.shape[d] - src.shape[d]) if d != dim else (0, 0) for d in range(self.ndim)) + ((0, 0),)
    return dim, src.pad(fill), mask.pad(fill)

  def scatter(self: Tensor, dim: int, index: Tensor, src,  # type: ignore[misc]  # mixin: self is a Tensor
              reduce: str | None = None) -> Tensor:
    """torch.scatter, out of place: reduce=None writes (on duplicates the last write wins), 'add' adds (scatter_add),
    'multiply' multiplies. src may be a scalar."""
    Tensor = type(self)
    if reduce not in (None, "add", "multiply"):
      raise RuntimeError(f"scatter: reduce argument must be either add or multiply (or None), got {reduce!r}")
    if self.ndim == 0 and isinstance(index, Tensor) and index.ndim == 0 and dim in (0, -1):   # (as a 1-element one)
      return self.reshape(1).scatter(0, index.reshape(1), src.reshape(1) if isinstance(src, Tensor) else src,
                                     reduce).reshape(())
    dim, src, mask = self._scatter_parts("scatter", dim, index, src)
    if index.numel() == 0: return self.clone()   # (nothing written: the reductions below have an empty axis)
    if reduce == "add": return self + mask.where(src, 0).sum(-1).cast(self.dtype)
    if reduce == "multiply": return self * mask.where(src, 1).prod(-1).cast(self.dtype)
    # the last r that writes each position wins
    pos = Tensor.arange(1, mask.shape[-1] + 1, device=self.device)
    last = mask.where(pos, 0).max(-1, keepdim=True)
    sel = mask & (pos == last)
    return (last.squeeze(-1) > 0).where(sel.where(src, 0).sum(-1).cast(self.dtype), self)

  def scatter_add(self: Tensor, dim: int, index: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                  src: Tensor) -> Tensor:
    """torch.scatter_add, out of place: self with src's values added at index along dim."""
    return self.scatter(dim, index, src, reduce="add")

  def scatter_reduce(self: Tensor, dim: int, index: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                     src: Tensor, reduce: str, include_self: bool = True) -> Tensor:
    """torch.scatter_reduce, out of place: reduce 'sum', 'prod', 'mean' (floored for integers), 'amax' or 'amin' over
    the src values index sends to each position, and self's value there unless include_self=False (untouched
    positions keep self). Gradients as torch's: amax/amin split evenly among tied maxima."""
    Tensor = type(self)
    if not isinstance(src, Tensor): raise TypeError(f"scatter_reduce: src must be a Tensor, got {type(src).__name__}")
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
      raise RuntimeError("scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got "
                         f"{reduce!r}")
    if self.ndim == 0 and isinstance(index, Tensor) and index.ndim == 0 and dim in (0, -1):   # (as a 1-element one)
      return self.reshape(1).scatter_reduce(0, index.reshape(1), src.reshape(1), reduce, include_self).reshape(())
    dim, src, mask = self._scatter_parts("scatter_reduce", dim, index, src)
    if index.numel() == 0: return self.clone()   # (nothing reduced into self)
    touched = mask.any(-1)
    if reduce in ("sum", "mean"):
      total = mask.where(src, 0).sum(-1).cast(self.dtype) + (self if include_self else touched.where(0, self))
      if reduce == "sum": return total
      count = mask.sum(-1) + (1 if include_self else 0)
      count = count.maximum(1).cast(self.dtype)  # untouched positions (include_self=False) keep self: no 0/0 there
      mean = total / count if dtypes.is_float(self.dtype) else total // count
      return touched.where(mean, self)
    if reduce == "prod":
      return mask.where(src, 1).prod(-1).cast(self.dtype) * (self if include_self else touched.where(1, self))
    big = math.inf if dtypes.is_float(self.dtype) else dtypes.max(self.dtype)
    fill = (-big if dtypes.is_float(self.dtype) else dtypes.min(self.dtype)) if reduce == "amax" else big
    vals = mask.where(src, fill)
    # self joins the reduction as one more candidate, so a tie between self and src splits the gradient as torch's
    if include_self: vals = self.unsqueeze(-1).cat(vals, dim=-1)
    red = vals.amax(-1) if reduce == "amax" else vals.amin(-1)
    if not include_self and dtypes.is_float(self.dtype):
      # torch's quirk, followed: where self equals the result, self still takes a share in splitting the gradient (and
      # gets none of it), so each of n tied src values gets 1/(n+1): scale red's gradient by n/(n+1) there
      tie = touched & (self == red) & ~red.isinf()
      n = (mask & (vals == red.unsqueeze(-1))).sum(-1).cast(self.dtype)
      red = tie.where(self.detach() + (red - red.detach()) * (n / (n + 1)), red)
    return touched.where(red, self)

  # ***** attention *****

  def scaled_dot_product_attention(self: Tensor, key: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                   value: Tensor, attn_mask: Tensor | None = None,
                                   dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                   enable_gqa: bool = False) -> Tensor:
    """PyTorch's F.scaled_dot_product_attention; self is the query (..., Hq, L, E), key (..., H, S, E), value (..., H,
    S, Ev).

    attn_mask broadcasts to (..., L, S): bool (False = masked out) or float (added to the scores). is_causal masks with
    tril(ones(L, S)), top-left aligned when L != S. enable_gqa: H divides Hq and each key/value head serves Hq/H query
    heads. A row whose scores are all masked gives zeros (as torch). As in torch, dropout_p applies whenever it is > 0,
    training or not (pass 0.0 in eval)."""
    Tensor = type(self)
    if self.ndim < 2 or key.ndim < 2 or value.ndim < 2:
      raise RuntimeError(f"scaled_dot_product_attention: query, key and value need at least 2 dims, got "
                         f"{tuple(self.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if self.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
      raise RuntimeError(f"scaled_dot_product_attention: shapes don't fit: query {tuple(self.shape)} and key "
                         f"{tuple(key.shape)} need the same last dim, key and value {tuple(value.shape)} the same "
                         "sequence length (dim -2)")
    if is_causal and attn_mask is not None:
      raise RuntimeError("scaled_dot_product_attention: an explicit attn_mask should not be set when is_causal=True")
    if not 0.0 <= dropout_p <= 1.0: raise ValueError(f"dropout_p must be in [0, 1], got {dropout_p}")
    if enable_gqa and self.ndim >= 3:
      hq, hk, hv = self.shape[-3], key.shape[-3], value.shape[-3]
      if hq % hk or hq % hv:
        raise RuntimeError(f"scaled_dot_product_attention: the number of heads in key ({hk}) and value ({hv}) must "
                           f"divide the number of heads in query ({hq}) with enable_gqa=True")
      key, value = key.repeat_interleave(hq // hk, dim=-3), value.repeat_interleave(hq // hv, dim=-3)
    elif self.ndim >= 3 and key.ndim >= 3 and key.shape[-3] not in (1, self.shape[-3]):
      raise RuntimeError(f"scaled_dot_product_attention: query has {self.shape[-3]} heads (dim -3) and key "
                         f"{key.shape[-3]}; pass enable_gqa=True for grouped-query attention")
    acc = least_upper_dtype(self.dtype, key.dtype, dtypes.float32)
    scale = scale if scale is not None else 1 / math.sqrt(self.shape[-1])
    qk = self.cast(acc).matmul(key.cast(acc).transpose(-2, -1)) * scale
    L, S = qk.shape[-2], qk.shape[-1]
    if is_causal:
      causal = Tensor.arange(L, device=self.device).reshape(L, 1) >= Tensor.arange(S, device=self.device)
      qk = causal.where(qk, -math.inf)
    if attn_mask is not None:
      qk = attn_mask.where(qk, -math.inf) if attn_mask.dtype == dtypes.bool else qk + attn_mask.cast(acc)
      # rows with every score -inf: zeros out and no gradient (softmax would give nan), as torch's
      dead = (qk == -math.inf).all(-1, keepdim=True)
      w = dead.where(0.0, dead.where(0.0, qk).softmax(-1))
    else:
      w = qk.softmax(-1)
    if dropout_p > 0:
      if dropout_p == 1: w = w * 0
      else: w = (Tensor.rand(*w.shape, device=self.device) >= dropout_p).where(w, 0) / (1 - dropout_p)
    return w.cast(self.dtype).matmul(value)
