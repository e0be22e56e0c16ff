"""nn.Linear and nn.LayerNorm, with torch's factory arguments (device=, dtype=): in a module of their own so that the
layer modules nn/__init__.py re-exports (transformer.py) build theirs from the same classes."""
from __future__ import annotations
from teeny.tensor import Tensor
from teeny.nn.tree import _Tree
from teeny.dtype import DType
from teeny.nn.params import _bound, _param, _uniform

class Linear(_Tree):
  """y = x @ W.T + b, W of shape (out_features, in_features), both uniform in ±1/sqrt(in_features) as torch's."""
  def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype: DType | None = None):
    bound = _bound(in_features)  # in_features=0: output is the bias, broadcast
    self.weight = _uniform((out_features, in_features), bound, dtype, device)
    self.bias = _uniform((out_features,), bound, dtype, device) if bias else None
  def extra_repr(self) -> str:
    return f"in_features={self.weight.shape[1]}, out_features={self.weight.shape[0]}, bias={self.bias is not None}"
  def __call__(self, x: Tensor) -> Tensor:
    y = x.matmul(self.weight.transpose(0, 1))
    return y + self.bias if self.bias is not None else y

class LayerNorm(_Tree):
  """Normalise over the trailing `normalized_shape` dims, then scale and shift elementwise (F.layer_norm); weight ones,
  bias zeros."""
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
               device=None, dtype: DType | None = None):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    affine = elementwise_affine
    self.weight = _param(Tensor.ones(*self.normalized_shape, dtype=dtype, device=device)) if affine else None
    self.bias = _param(Tensor.zeros(*self.normalized_shape, dtype=dtype, device=device)) if affine and bias else None
  def extra_repr(self) -> str:
    return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}, "
            f"bias={self.bias is not None}")
  def __call__(self, x: Tensor) -> Tensor:
    if tuple(x.shape[-len(self.normalized_shape):]) != self.normalized_shape:
      raise ValueError(f"LayerNorm{self.normalized_shape} got input of shape {tuple(x.shape)}")
    # F.layer_norm: the input's dtype comes back (float16 in, float16 out, as torch's)
    return x.layer_norm(self.normalized_shape, self.weight, self.bias, self.eps)
