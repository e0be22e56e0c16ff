"""TinyJit: call a step function; kernels are compiled once and cached by AST, so repeated steps reuse them."""
from __future__ import annotations
from typing import Any, Callable
from teeny.helpers import JIT

class TinyJit:
  """Wraps a function that returns realized tensors. Compiled kernels are reused across calls through the program cache;
  JIT=0 only disables the wrapper's realize of outputs."""
  def __init__(self, fxn: Callable):
    self.fxn = fxn
    self.cnt = 0
  def __call__(self, *args: Any, **kwargs: Any) -> Any:
    from teeny.tensor import Tensor
    ret = self.fxn(*args, **kwargs)
    self.cnt += 1
    if JIT:
      outs = [r for r in (ret if isinstance(ret, (tuple, list)) else (ret,)) if isinstance(r, Tensor)]
      if outs: Tensor.realize_all(*outs)
    return ret
