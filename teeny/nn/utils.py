"""torch.nn.utils for teeny: gradient clipping and parameter <-> vector conversion, with torch 2.13's signatures.

`parameters` may be a single Tensor, a list or a generator (model.parameters()); parameters whose .grad is None are
skipped. Gradients are scaled in place (their Tensors keep their identity, as torch's mul_), lazily: nothing runs until
the next realize (an optimizer step), except with error_if_nonfinite=True, which must read the norm."""
from __future__ import annotations
import math
from typing import Iterable
from teeny.tensor import Tensor
from teeny.dtype import dtypes, least_upper_dtype

def _tensors(fn: str, parameters) -> list[Tensor]:
  ps = [parameters] if isinstance(parameters, Tensor) else list(parameters)
  for i, p in enumerate(ps):
    if not isinstance(p, Tensor): raise TypeError(f"{fn}: parameter {i} is a {type(p).__name__}, not a teeny Tensor")
  once: dict[int, Tensor] = {}
  for p in ps: once.setdefault(id(p), p)   # (each parameter once, in order)
  return list(once.values())

def _norm_type(fn: str, norm_type) -> float:
  try: return float(norm_type)
  except (TypeError, ValueError):
    raise ValueError(f"{fn}: norm_type must be a number or 'inf', got {norm_type!r}") from None

def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
  """The norm_type-norm of all the tensors together, as the norm of their norms (inf: the largest |value|). Computed
  in float32 (float64 for float64 tensors), returned in the tensors' promoted dtype; 0 for no tensors."""
  fn = "get_total_norm"
  ts = _tensors(fn, tensors)
  p = _norm_type(fn, norm_type)
  if not ts: return Tensor(0.0)
  dt = ts[0].dtype
  for t in ts[1:]: dt = least_upper_dtype(dt, t.dtype)
  acc = dtypes.float64 if dt == dtypes.float64 else dtypes.float32
  dev = ts[0].device
  norms = [t.cast(acc).reshape(-1).norm(p).to(dev) if t.numel() else Tensor(0.0, dtype=acc, device=dev) for t in ts]
  total = Tensor.stack(*norms).norm(p)
  if error_if_nonfinite and not math.isfinite(float(total.item())):
    raise RuntimeError(f"The total norm of order {p} for gradients from `parameters` is non-finite, so it cannot be "
                       "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                       "`error_if_nonfinite=False`")
  return total.cast(dt) if dtypes.is_float(dt) else total

def _scale(grads: list[Tensor], max_norm: float, total_norm: Tensor, eps: float) -> None:
  coef = (max_norm / (total_norm.float() + eps)).minimum(1.0)
  with Tensor.no_grad():
    for g in grads: g.assign(g * coef.to(g.device).cast(g.dtype))

def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
  """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)), in place."""
  grads = [p.grad for p in _tensors("clip_grads_with_norm_", parameters) if p.grad is not None]
  if grads: _scale(grads, max_norm, total_norm, 1e-6)

def _clip_grad_norm(ps: list[Tensor], max_norm: float, norm_type, error_if_nonfinite: bool, eps: float) -> Tensor:
  """clip_grad_norm_'s work on the (deduplicated) parameters ps; optim.clip_grad_norm_ calls it too, with its eps."""
  grads = [g for p in ps if (g := p.grad) is not None]
  if not grads: return Tensor(0.0)
  total = get_total_norm(grads, norm_type, error_if_nonfinite)
  _scale(grads, max_norm, total, eps)
  return total

def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
  """Scale the gradients in place so that their total norm_type-norm is at most max_norm (clip coefficient
  max_norm / (total_norm + 1e-6), clamped to 1); returns the total norm before clipping (a Tensor, as torch's).
  foreach is accepted and ignored. A parameter listed twice counts once."""
  return _clip_grad_norm(_tensors("clip_grad_norm_", parameters), max_norm, norm_type, error_if_nonfinite, 1e-6)

def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
  """Clamp every gradient to [-clip_value, clip_value], in place."""
  v = float(clip_value)
  with Tensor.no_grad():
    for p in _tensors("clip_grad_value_", parameters):
      if p.grad is not None: p.grad.assign(p.grad.clamp(-v, v))

def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
  """All parameters flattened and concatenated into one 1-d tensor (differentiable, like torch's)."""
  ps = [parameters] if isinstance(parameters, Tensor) else list(parameters)
  if not ps: raise RuntimeError("parameters_to_vector: expected a non-empty list of Tensors")
  for p in ps[1:]:
    if p.device != ps[0].device:
      raise TypeError(f"parameters_to_vector: found two parameters on different devices, {ps[0].device} and "
                      f"{p.device}; move them to one device first")
  flat = [p.reshape(-1) for p in ps]
  return flat[0].cat(*flat[1:]) if len(flat) > 1 else flat[0]

def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
  """Write consecutive slices of the 1-d vec into the parameters, in place (not recorded for autograd, as torch's
  param.data = ...)."""
  if not isinstance(vec, Tensor): raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
  ps = [parameters] if isinstance(parameters, Tensor) else list(parameters)
  need = sum(p.numel() for p in ps)
  if vec.ndim != 1 or vec.shape[0] != need:
    raise RuntimeError(f"vector_to_parameters: vec must be 1-d with {need} elements (the parameters' total), got "
                       f"shape {tuple(vec.shape)}")
  off = 0
  with Tensor.no_grad():
    for p in ps:
      n = p.numel()
      p.assign(vec[off:off + n].detach().reshape(p.shape).to(p.device).cast(p.dtype))
      off += n
