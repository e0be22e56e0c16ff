"""Loss functions as Tensor methods (torch.nn.functional's names), built only from other Tensor ops.

`class Tensor(LossMixin)` inherits these, so `self` is always a Tensor (the prediction or input) and every loss stays
lazy and differentiable. Like tensor_nn.py, this module never imports tensor.py: it reaches the class as `type(self)`.
"""
from __future__ import annotations
from typing import TYPE_CHECKING
from teeny.dtype import dtypes
from teeny.indexing import check_index_range
from teeny.tensor_nn import KERNEL_ROUTES, _check_reduction, _reduce

if TYPE_CHECKING:
  from teeny.tensor import Tensor

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
      # logp * w: every term below takes its class's weight (a constant: torch has no gradient for it either)
      wt = weight.detach().cast(logp.dtype).reshape(*[nc if d == cdim else 1 for d in range(self.ndim)])
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

  def binary_crossentropy(self: Tensor, y: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                          reduction: str = "mean") -> Tensor:
    """PyTorch's F.binary_cross_entropy on probabilities (logs clamped at -100 like torch).

    The gradient to the input is torch's closed form (p - y) / max(p * (1 - p), 1e-12), finite at p = 0 and p = 1
    (differentiating the clamped logs there gives 0 * inf = nan). The target's gradient is the difference of the clamped
    logs (torch's is unclamped: +-inf at p = 0 or 1)."""
    if tuple(y.shape) != tuple(self.shape):
      raise ValueError(f"binary_crossentropy: target {tuple(y.shape)} != input {tuple(self.shape)}")
    y = y.cast(self.dtype)
    p = self.detach()
    loss = -(y * p.log().maximum(-100) + (1 - y) * (1 - p).log().maximum(-100))
    # plus a term of value 0 (self - p is exactly 0 for every p in [0, 1]) whose gradient to self is dloss/dp
    loss = loss + (self - p) * ((p - y.detach()) / (p * (1 - p)).maximum(1e-12))
    return _reduce(loss, reduction)

  def binary_crossentropy_logits(self: Tensor, y: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                                 reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """PyTorch's F.binary_cross_entropy_with_logits, computed stably as max(x,0) - x*y + log(1 + exp(-|x|))."""
    if tuple(y.shape) != tuple(self.shape):
      raise ValueError(f"binary_crossentropy_logits: target {tuple(y.shape)} != input {tuple(self.shape)}")
    y = y.cast(self.dtype)
    softplus_neg = self.maximum(0) - self + (1 + (-self.abs()).exp()).log()  # log(1 + exp(-x)) = -log(sigmoid(x))
    if pos_weight is None: return _reduce(softplus_neg + (1 - y) * self, reduction)
    return _reduce((1 - y) * self + (1 + (pos_weight - 1) * y) * softplus_neg, reduction)
