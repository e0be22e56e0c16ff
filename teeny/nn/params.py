"""Parameters as teeny.nn's layers make them (every layer module imports these: nn/__init__.py, rnn.py,
transformer.py): a trainable, realized leaf, registered so that isinstance(t, nn.Parameter) holds, and torch's uniform
init."""
from __future__ import annotations
import math, weakref
from typing import Sequence
from teeny.tensor import Tensor
from teeny.dtype import DType

# id -> the tensor made by Parameter() or a layer's init (what isinstance(t, Parameter) checks)
_PARAMS: dict[int, weakref.ref] = {}

def _mark_param(t: Tensor) -> Tensor:
  i = id(t)
  def gone(_, i: int = i) -> None: _PARAMS.pop(i, None)
  _PARAMS[i] = weakref.ref(t, gone)
  return t

def _is_param(t) -> bool:
  r = _PARAMS.get(id(t))
  return r is not None and r() is t

def _param(t: Tensor) -> Tensor:
  """A trainable leaf: realized now, so it is a buffer that backward() can reach and the optimizer can assign into."""
  t = t.contiguous().realize()
  t.requires_grad = True
  return _mark_param(t)

def _uniform(shape: Sequence[int], bound: float, dtype: DType | None = None, device=None) -> Tensor:
  """A parameter drawn uniformly from [-bound, bound) (the default float dtype unless dtype is given)."""
  return _param(Tensor.uniform(*shape, low=-bound, high=bound, dtype=dtype, device=device))

def _bound(fan_in: int) -> float:
  """torch's init bound 1/sqrt(fan_in) (kaiming_uniform(a=sqrt(5)) and the bias); 0 for fan_in 0 (an empty weight,
  zeros for the bias, as torch's)."""
  return 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
