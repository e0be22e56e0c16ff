"""Loss functions as Tensor methods (torch.nn.functional's names), built only from other Tensor ops.

`class Tensor(LossMixin)` inherits these, so `self` is always a Tensor (the prediction or input) and every loss stays
lazy and differentiable. Like tensor_nn.py, this module never imports tensor.py: it reaches the class as `type(self)`.
"""
from __future__ import annotations
import math, warnings
from typing import TYPE_CHECKING
from teeny.dtype import DType, dtypes, least_upper_dtype
from teeny.helpers import broadcast_shape
from teeny.indexing import check_index_range
from teeny.tensor_nn import KERNEL_ROUTES, _check_reduction, _reduce

if TYPE_CHECKING:
  from teeny.tensor import Tensor

def _shape(t: Tensor) -> tuple[int, ...]: return tuple(t.shape)

def _bshape(fn: str, *ts: Tensor) -> tuple[int, ...]:
  """The shape the tensors broadcast to, else RuntimeError (torch's type) naming fn and the shapes."""
  try: return broadcast_shape(*[_shape(t) for t in ts])
  except ValueError:
    raise RuntimeError(f"{fn}: shapes {', '.join(str(_shape(t)) for t in ts)} cannot be broadcast together "
                       "(each dim must match or be 1); reshape or expand them to matching shapes") from None

def _need_float(fn: str, what: str, dt: DType):
  if not dtypes.is_float(dt):
    raise TypeError(f"{fn}: {what} must be a floating-point tensor, got {dt} (torch: not implemented for "
                    "integers); cast it first, e.g. x.float()")

def _float_result(fn: str, *ts: Tensor) -> DType:
  """torch's promoted dtype of the operands, which must be a float one (an int or bool result raises TypeError)."""
  dt = least_upper_dtype(*[t.dtype for t in ts])
  if not dtypes.is_float(dt):
    raise TypeError(f"{fn}: needs a floating-point input or target, got {', '.join(str(t.dtype) for t in ts)} "
                    "(torch: not implemented for integers); cast one to float first, e.g. x.float()")
  return dt

def _no_bool_minus(fn: str, *ts: Tensor):
  """torch refuses subtraction with a bool tensor (where its loss subtracts one): TypeError here."""
  if any(t.dtype == dtypes.bool for t in ts):
    raise TypeError(f"{fn}: subtraction with a bool tensor is not supported (as torch); cast it first, e.g. t.float()")

def _size_warning(fn: str, inp: Tensor, target: Tensor):
  """torch's UserWarning when a pointwise regression loss broadcasts a target of another size."""
  if _shape(inp) != _shape(target):
    warnings.warn(f"{fn}: using a target size {_shape(target)} that is different to the input size {_shape(inp)}; "
                  "they are broadcast together, which is likely not what you want. Make them the same size.",
                  UserWarning, stacklevel=3)

def _clamp_min0(x: Tensor) -> Tensor:
  """max(x, 0) with torch's clamp_min gradient: 1 where x >= 0 (the kink included), 0 below; nan stays nan."""
  return (x < 0).where(0, x)

def _clamp_value_min(x: Tensor, lo: float) -> Tensor:
  """x clamped below at lo in value while the gradient passes as if unclamped (torch's clamp_ under no_grad)."""
  return x + (x.maximum(lo) - x).detach()

def _check_dims_equal(fn: str, names: tuple[str, ...], *ts: Tensor):
  if len({t.ndim for t in ts}) > 1:
    got = ", ".join(f"{n}: {_shape(t)}" for n, t in zip(names, ts))
    raise RuntimeError(f"{fn}: all input tensors must have the same number of dimensions, got {got}; "
                       "unsqueeze or reshape them so their ranks match")

class LossMixin:
  """Mixed into Tensor: the losses. `reduction` is one of "mean", "sum", "none", as torch's."""

  def _check_class_target(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                          fn: str) -> int:
    """Validate class-index targets for an input with classes on dim 1 (or 0 when 1-d); return the class dim."""
    cdim = 1 if self.ndim >= 2 else 0
    want = tuple(s for d, s in enumerate(self.shape) if d != cdim)
    if tuple(target.shape) != want:
      raise ValueError(f"{fn}: target shape {tuple(target.shape)} does not match input shape {tuple(self.shape)} "
                       f"(class indices need shape {want}, probabilities shape {tuple(self.shape)})")
    if not dtypes.is_int(target.dtype):
      raise TypeError(f"{fn}: class-index targets must be an integer tensor, got {target.dtype}")
    return cdim

  def _check_targets(self: Tensor, target: Tensor, nc: int,  # type: ignore[misc]  # mixin: self is a Tensor
                     ignore_index: int, fn: str):
    """IndexError (torch's "Target 7 is out of bounds.") for a class id outside [0, nc) that is not ignore_index."""
    check_index_range(target, nc, lambda v: f"Target {v} is out of bounds.", ignore=ignore_index,
                      hint=f"{fn} over {nc} classes: targets must be in [0, {nc}) or equal ignore_index={ignore_index}")

  def cross_entropy(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                    reduction: str = "mean", label_smoothing: float = 0.0, ignore_index: int = -100,
                    weight: Tensor | None = None) -> Tensor:
    """PyTorch's F.cross_entropy on logits; target holds class indices (int) or probabilities (float, input's shape).

    weight (one per class) scales each class's terms as torch's: with class indices, reduction='mean' divides by the
    sum of the weights of the (not ignored) targets; with probabilities, by the number of samples."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0: raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    # a hand-written backward where teeny.kernels says it pays (kernels/nll.py: route_cross_entropy)
    route = KERNEL_ROUTES.get("cross_entropy")
    if weight is None and route is not None and \
       (out := route(self, target, reduction, label_smoothing, ignore_index)) is not None:
      return out
    cdim = 1 if self.ndim >= 2 else 0
    nc = self.shape[cdim]
    logp = self.log_softmax(cdim)
    if weight is not None:
      if tuple(weight.shape) != (nc,):
        raise ValueError(f"cross_entropy: weight shape {tuple(weight.shape)} must be ({nc},), one per class")
      # logp * w: every term below takes its class's weight (for class-index targets a constant: torch has no
      # gradient for it there; its probability-target path differentiates it)
      w = weight if tuple(target.shape) == tuple(self.shape) else weight.detach()
      wt = w.cast(logp.dtype).reshape(*[nc if d == cdim else 1 for d in range(self.ndim)])
      logp = logp * wt
    if tuple(target.shape) == tuple(self.shape):
      if not dtypes.is_float(target.dtype):
        raise TypeError(f"cross_entropy: probability targets (shape {tuple(target.shape)}) must be float, "
                        f"got {target.dtype}")
      tgt = target.cast(logp.dtype)
      if label_smoothing: tgt = tgt * (1 - label_smoothing) + label_smoothing / nc
      return _reduce(-(logp * tgt).sum(cdim), reduction)
    self._check_class_target(target, "cross_entropy")
    self._check_targets(target, nc, ignore_index, "cross_entropy")
    valid = target != ignore_index
    onehot = target.unsqueeze(cdim)._one_hot_along_dim(nc, cdim) & valid.unsqueeze(cdim)
    nll = -onehot.where(logp, 0).sum(cdim)
    if label_smoothing: nll = nll * (1 - label_smoothing) - valid.where(logp.sum(cdim), 0) * (label_smoothing / nc)
    if reduction == "none": return nll
    if reduction == "sum": return nll.sum()
    if weight is None: return nll.sum() / valid.sum().cast(nll.dtype)
    return nll.sum() / onehot.where(wt, 0).sum()

  def nll_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
               weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """PyTorch's F.nll_loss; self holds log-probabilities with classes on dim 1 (or 0 when 1-d)."""
    _check_reduction(reduction)
    if not dtypes.is_int(target.dtype):
      want = tuple(s for d, s in enumerate(self.shape) if d != (1 if self.ndim >= 2 else 0))
      raise TypeError(f"nll_loss expects class indices (an integer tensor of shape {want}), got a {target.dtype} "
                      f"target of shape {_shape(target)}; for class probabilities use cross_entropy on the logits with "
                      f"a float target of the input's shape {_shape(self)}")
    cdim = self._check_class_target(target, "nll_loss")
    nc = self.shape[cdim]
    self._check_targets(target, nc, ignore_index, "nll_loss")
    valid = target != ignore_index
    onehot = target.unsqueeze(cdim)._one_hot_along_dim(nc, cdim) & valid.unsqueeze(cdim)
    if weight is not None:
      if tuple(weight.shape) != (nc,): raise ValueError(f"nll_loss: weight shape {tuple(weight.shape)} must be ({nc},)")
      wshape = [1] * self.ndim
      wshape[cdim] = nc
      w = onehot.where(weight.reshape(*wshape).cast(self.dtype), 0).sum(cdim)
    else:
      w = onehot.where(1.0, 0.0).sum(cdim).cast(self.dtype)
    loss = -onehot.where(self, 0).sum(cdim) * (w if weight is not None else 1)
    if reduction == "none": return loss
    if reduction == "sum": return loss.sum()
    return loss.sum() / w.sum()

  def sparse_categorical_crossentropy(self: Tensor, Y: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                      ignore_index: int = -1, label_smoothing: float = 0.0,
                                      reduction: str = "mean") -> Tensor:
    """tinygrad's loss: logits with classes last, integer labels Y; entries equal to ignore_index are left out."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0: raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    if tuple(Y.shape) != tuple(self.shape[:-1]):
      raise ValueError(f"sparse_categorical_crossentropy: labels shape {tuple(Y.shape)} does not match logits "
                       f"{tuple(self.shape)}")
    if not dtypes.is_int(Y.dtype):
      raise TypeError(f"sparse_categorical_crossentropy: labels must be integers, got {Y.dtype}")
    self._check_targets(Y, self.shape[-1], ignore_index, "sparse_categorical_crossentropy")
    log_probs = self.log_softmax(-1)
    loss_mask = Y != ignore_index
    y = Y.unsqueeze(-1)._one_hot_along_dim(self.shape[-1]) & loss_mask.unsqueeze(-1)
    smoothing = label_smoothing * loss_mask.where(log_probs.mean(-1), 0)
    unreduced = -((1 - label_smoothing) * y.where(log_probs, 0).sum(-1) + smoothing)
    if reduction == "none": return unreduced
    if reduction == "sum": return unreduced.sum()
    return unreduced.sum() / loss_mask.sum().cast(unreduced.dtype)

  # ---- binary cross-entropy (torch's names; the tinygrad names share the code)

  def _bce(self: Tensor, y: Tensor, weight: Tensor | None,  # type: ignore[misc]  # mixin: self is a Tensor
           reduction: str, fn: str) -> Tensor:
    _check_reduction(reduction)
    if weight is not None and _bshape(fn, self, weight) != _shape(self):
      raise RuntimeError(f"{fn}: weight of shape {_shape(weight)} must broadcast to the input's shape {_shape(self)} "
                         "(torch: output with shape ... doesn't match the broadcast shape)")
    # the closed-form input gradient (p - y) / max(p (1 - p), 1e-12) is taken in at least float32: in float16 1e-12 is 0
    cdt = least_upper_dtype(self.dtype, dtypes.float32)
    p = self.detach()
    loss = -(y * p.log().maximum(-100) + (1 - y) * (1 - p).log().maximum(-100))
    p32, x32 = p.cast(cdt), self.cast(cdt)
    # plus a term of value 0 (self - p is exactly 0 for every p in [0, 1]) whose gradient to self is dloss/dp
    loss = loss + ((x32 - p32) * ((p32 - y.detach().cast(cdt)) / (p32 * (1 - p32)).maximum(1e-12))).cast(loss.dtype)
    if weight is not None: loss = loss * weight.detach().cast(loss.dtype)  # torch: no gradient for weight
    return _reduce(loss, reduction)

  def binary_cross_entropy(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                           weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    """torch's F.binary_cross_entropy on probabilities, logs clamped at -100 like torch; input and target must have the
    same shape and the same float dtype (as torch); weight broadcasts to the input's shape and gets no gradient.

    The input's gradient is torch's closed form (p - y) / max(p * (1 - p), 1e-12), finite at p = 0 and p = 1. The
    target's gradient is the difference of the clamped logs (torch's is unclamped: +-inf at p = 0 or 1). Inputs outside
    [0, 1] are not checked (torch reads the data to raise; a lazy op cannot): they give nan."""
    if _shape(target) != _shape(self):
      raise ValueError(f"binary_cross_entropy: using a target size {_shape(target)} that is different to the input "
                       f"size {_shape(self)} is not supported; make them the same size")
    _need_float("binary_cross_entropy", "input", self.dtype)
    if target.dtype != self.dtype:
      raise TypeError(f"binary_cross_entropy: target dtype {target.dtype} must equal the input's {self.dtype} (as "
                      f"torch); cast it, e.g. target.cast(input.dtype)")
    return self._bce(target, weight, reduction, "binary_cross_entropy")

  def binary_crossentropy(self: Tensor, y: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                          reduction: str = "mean") -> Tensor:
    """tinygrad's name for binary_cross_entropy; y of any dtype is cast to the input's."""
    if _shape(y) != _shape(self):
      raise ValueError(f"binary_crossentropy: target {_shape(y)} != input {_shape(self)}; make them the same size")
    _need_float("binary_crossentropy", "input", self.dtype)
    return self._bce(y.cast(self.dtype), None, reduction, "binary_crossentropy")

  def _bce_logits(self: Tensor, y: Tensor, weight: Tensor | None,  # type: ignore[misc]  # mixin: self is a Tensor
                  pos_weight: Tensor | None, reduction: str, fn: str) -> Tensor:
    _check_reduction(reduction)
    if _shape(y) != _shape(self):
      raise ValueError(f"{fn}: target size {_shape(y)} must be the same as input size {_shape(self)}")
    _need_float(fn, "input (logits)", self.dtype)
    for name, w in (("weight", weight), ("pos_weight", pos_weight)):
      if w is not None and _bshape(fn, self, w) != _shape(self):
        raise RuntimeError(f"{fn}: {name} of shape {_shape(w)} must broadcast to the input's shape {_shape(self)}")
    sp = (-self).softplus()   # -logsigmoid(x) = log(1 + exp(-x)), computed without overflow
    # weight and pos_weight are constants, as torch's (which refuses them requiring grad)
    if pos_weight is not None: sp = sp * (1 + (pos_weight.detach() - 1) * y)
    loss = (1 - y) * self + sp
    return loss if weight is None else loss * weight.detach()

  def binary_cross_entropy_with_logits(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                       weight: Tensor | None = None, reduction: str = "mean",
                                       pos_weight: Tensor | None = None) -> Tensor:
    """torch's F.binary_cross_entropy_with_logits: (1 - y) x + (1 + (pos_weight - 1) y) log(1 + exp(-x)), times weight,
    computed stably. Shapes must match; weight and pos_weight broadcast to the input's shape (and get no gradient, as
    torch's). The result has the target's dtype, as torch's (which must then be float)."""
    fn = "binary_cross_entropy_with_logits"
    _need_float(fn, "target", target.dtype)
    loss = self._bce_logits(target, weight, pos_weight, reduction, fn).cast(target.dtype)
    return _reduce(loss, reduction)

  def binary_crossentropy_logits(self: Tensor, y: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                 reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """tinygrad's name for binary_cross_entropy_with_logits; y of any dtype is cast to the input's."""
    return _reduce(self._bce_logits(y.cast(self.dtype), None, pos_weight, reduction, "binary_crossentropy_logits"),
                   reduction)

  # ---- pointwise regression losses

  def _pointwise(self: Tensor, target: Tensor, fn: str,  # type: ignore[misc]  # mixin: self is a Tensor
                 reduction: str, keep_input_dtype: bool = False) -> tuple[Tensor, Tensor]:
    """Check a pointwise loss's arguments; return (input, target) in the dtype the loss is computed and returned in:
    the promoted float one, or the input's (keep_input_dtype: torch's huber/soft_margin/hinge_embedding write into a
    tensor of the input's dtype)."""
    _check_reduction(reduction)
    if keep_input_dtype:
      _need_float(fn, "input", self.dtype)
      dt = self.dtype
    else: dt = _float_result(fn, self, target)
    _bshape(fn, self, target)
    return self.cast(dt), target.cast(dt)

  def mse_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
               reduction: str = "mean") -> Tensor:
    """torch's F.mse_loss: (input - target)^2; differing shapes broadcast with torch's UserWarning."""
    x, t = self._pointwise(target, "mse_loss", reduction)
    _size_warning("mse_loss", self, target)
    d = x - t
    return _reduce(d * d, reduction)

  def l1_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
              reduction: str = "mean") -> Tensor:
    """torch's F.l1_loss: |input - target| (gradient 0 where they are equal); shapes broadcast with a UserWarning."""
    _no_bool_minus("l1_loss", self, target)
    x, t = self._pointwise(target, "l1_loss", reduction)
    _size_warning("l1_loss", self, target)
    return _reduce((x - t).abs(), reduction)

  def smooth_l1_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                     reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """torch's F.smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0
    is l1_loss. Shapes broadcast with a UserWarning."""
    if beta < 0:
      raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got {beta}; use beta >= 0")
    x, t = self._pointwise(target, "smooth_l1_loss", reduction)
    _size_warning("smooth_l1_loss", self, target)
    d = x - t
    if beta == 0: return _reduce(d.abs(), reduction)
    z = d.abs()
    return _reduce((z < beta).where(d * d * (0.5 / beta), z - 0.5 * beta), reduction)

  def huber_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                 reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """torch's F.huber_loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); in the input's dtype (as torch,
    whatever the target's). Shapes broadcast with a UserWarning."""
    if not delta > 0:
      raise RuntimeError(f"huber_loss does not support non-positive values for delta, got {delta}; use delta > 0")
    x, t = self._pointwise(target, "huber_loss", reduction, keep_input_dtype=True)
    _size_warning("huber_loss", self, target)
    d = x - t
    z = d.abs()
    return _reduce((z < delta).where(d * d * 0.5, (z - 0.5 * delta) * delta), reduction)

  def soft_margin_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                       reduction: str = "mean") -> Tensor:
    """torch's F.soft_margin_loss: log(1 + exp(-target * input)), in the input's dtype; the target broadcasts to the
    input's shape (not the other way, as torch). Computed stably: finite where torch's overflows to inf (and its
    gradient to nan) for -target * input > ~88."""
    fn = "soft_margin_loss"
    x, t = self._pointwise(target, fn, reduction, keep_input_dtype=True)
    if _bshape(fn, self, target) != _shape(self):
      raise RuntimeError(f"{fn}: target of shape {_shape(target)} must broadcast to the input's shape {_shape(self)}")
    return _reduce((-(t * x)).softplus(), reduction)

  def hinge_embedding_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                           margin: float = 1.0, reduction: str = "mean") -> Tensor:
    """torch's F.hinge_embedding_loss: x where target == 1, max(0, margin - x) where target == -1 (other targets give
    both terms, as torch's); in the input's dtype. An integer input raises TypeError (torch returns integers for
    'none' and 'sum' and raises for 'mean')."""
    x, t = self._pointwise(target, "hinge_embedding_loss", reduction, keep_input_dtype=True)
    loss = (t != 1).where(_clamp_min0(margin - x), 0) + (t != -1).where(x, 0)
    return _reduce(loss, reduction)

  def kl_div(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
             reduction: str = "mean", log_target: bool = False) -> Tensor:
    """torch's F.kl_div with self holding log-probabilities: target (log target - self), where a target of 0 adds 0
    (torch's xlogy); with log_target, exp(target) (target - self). reduction 'batchmean' divides the sum by the
    input's first dim (torch's KL divergence); 'mean' divides by the number of elements, as torch's."""
    fn = "kl_div"
    if reduction not in ("mean", "batchmean", "sum", "none"):
      raise ValueError(f"{fn}: reduction must be one of 'mean', 'batchmean', 'sum', 'none', got {reduction!r}")
    for what, t in (("input", self), ("target", target)):
      if not dtypes.is_float(t.dtype):
        raise TypeError(f"{fn}: integral inputs are not supported ({what} is {t.dtype}); cast it to float first")
    dt = least_upper_dtype(self.dtype, target.dtype)
    x, t = self.cast(dt), target.cast(dt)
    _bshape(fn, x, t)
    if log_target: loss = t.exp() * (t - x)
    else: loss = (t == 0).where(0, t * t.log()) - t * x
    if reduction == "batchmean":
      return loss.sum() / (self.shape[0] if self.ndim else 1)
    return _reduce(loss, reduction)

  def poisson_nll_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                       log_input: bool = True, full: bool = False, eps: float = 1e-8,
                       reduction: str = "mean") -> Tensor:
    """torch's F.poisson_nll_loss: exp(input) - target * input (log_input), else input - target * log(input + eps);
    full adds Stirling's target log target - target + 0.5 log(2 pi target) where target > 1. Integers promote to
    float, as torch's."""
    fn = "poisson_nll_loss"
    _check_reduction(reduction)
    _bshape(fn, self, target)
    # torch subtracts the input (log_input=False), the target (full) or a bool product (both bool): those refuse bools
    _no_bool_minus(fn, *((self,) if not log_input else (self,) if target.dtype == dtypes.bool else ()),
                   *((target,) if full else ()))
    x, t = self, target
    if not dtypes.is_float(least_upper_dtype(x.dtype, t.dtype)): x = x.cast(dtypes.default_float)
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
      tf = t if dtypes.is_float(t.dtype) else t.cast(loss.dtype)
      loss = loss + (tf <= 1).where(0, tf * tf.log() - tf + 0.5 * (2 * math.pi * tf).log())
    return _reduce(loss, reduction)

  def gaussian_nll_loss(self: Tensor, target: Tensor, var: Tensor | float,  # type: ignore[misc]  # mixin: self is a Tensor
                        full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """torch's F.gaussian_nll_loss: 0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) if full), var clamped
    below at eps in value only (its gradient passes, as torch's no_grad clamp). var has the input's shape, or one
    dim of size 1 (or the last dim missing) for a shared variance, or is a float. A negative var entry is not checked
    (torch reads the data to raise ValueError; a lazy op cannot): it is clamped to eps like the others."""
    fn = "gaussian_nll_loss"
    if isinstance(var, (int, float)):
      if var < 0: raise ValueError(f"{fn}: var has negative entry/entries ({var}); variances must be >= 0")
      var = self.full_like(float(var), dtype=least_upper_dtype(self.dtype, dtypes.default_float))
    if _shape(var) != _shape(self):
      if _shape(var) == _shape(self)[:-1]: var = var.unsqueeze(-1)
      elif not (var.ndim == self.ndim and sum(v for s, v in zip(self.shape, var.shape) if s != v) == 1):
        raise ValueError(f"{fn}: var is of incorrect size {_shape(var)} for input {_shape(self)}: give the input's "
                         "shape, the input's shape without its last dim, or the input's shape with one dim of size 1")
    _check_reduction(reduction)
    _need_float(fn, "var", var.dtype)
    _bshape(fn, self, target, var)
    v = _clamp_value_min(var, eps)
    d = self - target
    loss = 0.5 * (v.log() + d * d / v)
    if full: loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)

  def multilabel_soft_margin_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                  weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    """torch's F.multilabel_soft_margin_loss: -(y logsigmoid(x) + (1 - y) logsigmoid(-x)) times weight, averaged over
    the last (class) dim of the input, then reduced over the rest."""
    fn = "multilabel_soft_margin_loss"
    _check_reduction(reduction)
    if self.ndim == 0:
      raise IndexError(f"{fn}: the input needs a class dim (the last), got a 0-d tensor; reshape it, e.g. x.reshape(1)")
    _need_float(fn, "input", self.dtype)
    _bshape(fn, self, target) if weight is None else _bshape(fn, self, target, weight)
    loss = -(target * self.logsigmoid() + (1 - target) * (-self).logsigmoid())
    if weight is not None: loss = loss * weight
    # the sum runs over the input's last dim counted in the broadcast shape from the front, as torch's (dim ndim - 1)
    return _reduce(loss.sum(self.ndim - 1) / self.shape[-1], reduction)

  def _margin_shapes(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                     fn: str) -> tuple[Tensor, bool]:
    """(input as (N, C), whether it was a 1-d (C,) one); torch's checks on the input's rank."""
    if self.ndim not in (1, 2) or (self.ndim == 1 and self.shape[0] == 0) or (self.ndim == 2 and self.shape[1] == 0):
      raise RuntimeError(f"{fn}: expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                         f"{list(self.shape)}; reshape the input to (N, C) or (C,)")
    _need_float(fn, "input", self.dtype)
    if not dtypes.is_int(target.dtype): raise TypeError(f"{fn}: target must be an integer tensor, got {target.dtype}")
    return (self.reshape(1, -1), True) if self.ndim == 1 else (self, False)

  def multi_margin_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                        p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                        reduction: str = "mean") -> Tensor:
    """torch's F.multi_margin_loss (multi-class hinge): for input (N, C) (or (C,)) and class ids target (N,) (or
    ()), sum over i != y of max(0, margin - x[y] + x[i])^p, times weight[y] (after the power, as torch's kernel), over
    C. p is 1 or 2. A target outside [0, C) raises RuntimeError."""
    fn = "multi_margin_loss"
    _check_reduction(reduction)
    if p not in (1, 2): raise ValueError(f"{fn}: only p == 1 and p == 2 supported, got p={p}")
    x, vec = self._margin_shapes(target, fn)
    n, c = x.shape
    if (vec and target.numel() != 1) or (not vec and (target.ndim != 1 or target.shape[0] != n)):
      raise RuntimeError(f"{fn}: target tensor should be 1-D with size equal to the number of input samples (batch "
                         f"size). Expected target size [{n}], but got {list(target.shape)}. Input has shape "
                         f"{list(self.shape)}.")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
      raise RuntimeError(f"{fn}: weight must be a 1-D tensor of {c} elements (one per class), got shape "
                         f"{tuple(weight.shape)}")
    check_index_range(target, c, lambda v: f"{fn}: target out of range (got {v})", RuntimeError,
                      hint=f"class ids must be in [0, {c})")
    y = target.reshape(n, 1).cast(dtypes.int64)
    xy = x.gather(1, y)   # (N, 1)
    z = _clamp_min0(margin - xy + x)
    if p == 2: z = z * z
    if weight is not None: z = z * weight.cast(z.dtype)[y.reshape(n)].reshape(n, 1)
    is_y = type(self).arange(c, device=x.device).reshape(1, c) == y
    loss = is_y.where(0.0, z).sum(1) / c
    return _reduce(loss.reshape(()) if vec else loss, reduction)

  def multilabel_margin_loss(self: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                             reduction: str = "mean") -> Tensor:
    """torch's F.multilabel_margin_loss: input (N, C) (or (C,)), target of the same shape listing each sample's
    class ids, ended by the first -1; per sample, sum over its target classes j and non-target classes i of
    max(0, 1 - (x[j] - x[i])), over C. A listed id outside [0, C) raises RuntimeError."""
    fn = "multilabel_margin_loss"
    _check_reduction(reduction)
    x, vec = self._margin_shapes(target, fn)
    n, c = x.shape
    if tuple(target.shape) != tuple(self.shape):
      raise RuntimeError(f"{fn}: inconsistent target size: {list(target.shape)} for input of size: "
                         f"{list(self.shape)}; the target must have the input's shape")
    t = target.reshape(n, c).cast(dtypes.int64)
    valid = (t == -1).cast(dtypes.int32).cumsum(1) == 0   # (N, C): the entries before the first -1
    tv = valid.where(t, 0)
    check_index_range(tv, c, lambda v: f"{fn}: argument #2 'target' is out of range (got {v})", RuntimeError,
                      hint=f"class ids must be in [0, {c}) or -1 (the end of the list)")
    cls = type(self).arange(c, device=x.device).reshape(1, 1, c)
    is_target = (valid.unsqueeze(-1) & (tv.unsqueeze(-1) == cls)).any(1)   # (N, C): class i is one of the targets
    xj = x.gather(1, tv)   # (N, C): x at each listed target
    z = _clamp_min0(1 - xj.unsqueeze(-1) + x.unsqueeze(1))   # (N, j, i)
    keep = valid.unsqueeze(-1) & is_target.logical_not().unsqueeze(1)
    loss = keep.where(z, 0.0).sum((1, 2)) / c
    return _reduce(loss.reshape(()) if vec else loss, reduction)

  # ---- distances and the losses built on them

  def cosine_similarity(self: Tensor, x2: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                        dim: int = 1, eps: float = 1e-8) -> Tensor:
    """torch's F.cosine_similarity: sum over dim of (x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps)), the inputs
    broadcast together; the norms' clamp changes values only (torch clamps them under no_grad)."""
    fn = "cosine_similarity"
    shape = _bshape(fn, self, x2)
    dt = least_upper_dtype(self.dtype, x2.dtype)
    if not dtypes.is_float(dt):
      raise TypeError(f"{fn}: expected a floating-point common dtype, got {self.dtype} and {x2.dtype}; cast to float")
    nd = max(len(shape), 1)
    if not -nd <= dim < nd:
      raise IndexError(f"{fn}: dim {dim} out of range for {len(shape)}-d inputs (expected in [{-nd}, {nd - 1}])")
    a, b = self.cast(dt)._broadcast_to(shape), x2.cast(dt)._broadcast_to(shape)
    if not shape: a, b = a.reshape(1), b.reshape(1)
    ax = dim % nd
    na, nb = _clamp_value_min(a._pnorm(2, ax), eps), _clamp_value_min(b._pnorm(2, ax), eps)
    out = ((a / na) * (b / nb)).sum(ax)
    return out

  def pairwise_distance(self: Tensor, x2: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                        p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """torch's F.pairwise_distance: the p-norm of x1 - x2 + eps over the last dim of their broadcast shape (integers
    promote to float); gradient 0 where the difference is 0, as torch's norm."""
    shape = _bshape("pairwise_distance", self, x2)
    d = self - x2 + eps
    if not shape: return d.reshape(1)._pnorm(p, 0).reshape(())
    out = d._pnorm(p, len(shape) - 1)
    return out if keepdim else out.squeeze(-1)

  def margin_ranking_loss(self: Tensor, x2: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                          margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """torch's F.margin_ranking_loss: max(0, -target * (x1 - x2) + margin); the three must have the same number of
    dims and broadcast. Integers promote to float (margin is a float), as torch's."""
    fn = "margin_ranking_loss"
    _check_reduction(reduction)
    _check_dims_equal(fn, ("input1", "input2", "target"), self, x2, target)
    _bshape(fn, self, x2, target)
    loss = _clamp_min0(-target * (self - x2) + float(margin))
    return _reduce(loss, reduction)

  def cosine_embedding_loss(self: Tensor, x2: Tensor, target: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                            margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """torch's F.cosine_embedding_loss: 1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1,
    0 elsewhere; cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)) over the last dim. x1, x2 are (N, D) with
    target (N,), or (D,) with a 0-d target."""
    fn = "cosine_embedding_loss"
    _check_reduction(reduction)
    if target.ndim > 1:
      raise RuntimeError(f"{fn}: 0D or 1D target tensor expected, multi-target not supported (got target of shape "
                         f"{_shape(target)})")
    want = target.ndim + 1
    if self.ndim != want or x2.ndim != want:
      raise RuntimeError(f"{fn}: {target.ndim}D target tensor expects {want}D input tensors, but found inputs with "
                         f"sizes {_shape(self)} and {_shape(x2)}")
    _bshape(fn, self, x2)
    ax = self.ndim - 1
    a, b = self, x2
    if not dtypes.is_float(least_upper_dtype(a.dtype, b.dtype)): a = a.cast(dtypes.default_float)
    cos = (a * b).sum(ax) / (((a * a).sum(ax) + 1e-12) * ((b * b).sum(ax) + 1e-12)).sqrt()
    _bshape(fn, cos, target)
    loss = (target == 1).where(1 - cos, 0) + (target == -1).where(_clamp_min0(cos - margin), 0)
    return _reduce(loss, reduction)

  def triplet_margin_loss(self: Tensor, positive: Tensor, negative: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                          margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                          reduction: str = "mean") -> Tensor:
    """torch's F.triplet_margin_loss: max(0, margin + d(a, p) - d(a, n)) with d pairwise_distance (p, eps) over the
    last dim; swap uses min(d(a, n), d(p, n)) as the negative distance. The three must have the same number of dims."""
    fn = "triplet_margin_loss"
    if not margin > 0: raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")
    _check_reduction(reduction)
    if not self.ndim == positive.ndim == negative.ndim:
      raise RuntimeError(f"{fn}: the anchor, positive, and negative tensors are expected to have the same number of "
                         f"dimensions, but got: anchor {self.ndim}D, positive {positive.ndim}D, and negative "
                         f"{negative.ndim}D inputs")
    dpos = self.pairwise_distance(positive, p, eps)
    dneg = self.pairwise_distance(negative, p, eps)
    if swap: dneg = dneg.minimum(positive.pairwise_distance(negative, p, eps))
    return _reduce(_clamp_min0(margin + dpos - dneg), reduction)
