"""torch.nn.functional for teeny (`import teeny.nn.functional as F`): torch 2.13's names, argument order, keywords and
defaults, each a thin wrapper over a Tensor method (or a few Tensor ops where no method has the torch argument), so
everything stays lazy and differentiable.

Conventions, as torch's: losses take `reduction` ('none', 'mean', 'sum'; the deprecated size_average/reduce still
work, with torch's warning); `inplace=True` writes the result into the input (teeny's in-place machinery) and returns
it; dropouts take `training` explicitly (default True for dropout/dropout1d/2d/3d, False for alpha_dropout and
feature_alpha_dropout), independent of Tensor.training. F.linear/F.bilinear take torch's (out_features, in_features)
weights (Tensor.linear is tinygrad's (in, out)). This module imports nothing from teeny.nn (teeny.nn imports it)."""
from __future__ import annotations
import math
import warnings
from typing import Callable, Sequence
import numpy as np
from teeny.tensor import Tensor, ShapeError
from teeny.dtype import dtypes, to_dtype
from teeny.tensor_nn import _tuple
from teeny.tensor_loss import _clamp_min0

_REDUCTIONS = ("none", "mean", "sum")

# ***** shared checks *****

def _reduction(fn: str, size_average, reduce, reduction: str, extra: tuple[str, ...] = ()) -> str:
  """torch's reduction argument (legacy size_average/reduce override it, with torch's deprecation warning)."""
  if size_average is not None or reduce is not None:
    red, avg = reduce in (None, True), size_average in (None, True)
    r = "mean" if red and avg else "sum" if red else "none"
    warnings.warn(f"{fn}: size_average and reduce args will be deprecated, please use reduction='{r}' instead.",
                  UserWarning, stacklevel=3)
    return r
  if reduction not in _REDUCTIONS + extra:
    raise ValueError(f"{fn}: {reduction!r} is not a valid value for reduction; reduction must be one of "
                     f"{_REDUCTIONS + extra}, got {reduction!r}")
  return reduction

def _reduce(x: Tensor, reduction: str) -> Tensor:
  return x if reduction == "none" else x.sum() if reduction == "sum" else x.mean()

def _inplace(fn: str, input: Tensor, out: Tensor, inplace: bool) -> Tensor:
  """out, or (inplace=True) out written into input, which is returned (torch's refusal for a leaf that requires grad
  while grad mode is on)."""
  if not inplace: return out
  if input.is_leaf and input.requires_grad and Tensor.is_grad_enabled():
    raise RuntimeError(f"{fn}: a leaf Variable that requires grad is being used in an in-place operation "
                       "(inplace=True); call it with inplace=False or under Tensor.no_grad()")
  return input._inplace_as(out, fn + "_")

def _check_p(fn: str, p) -> float:
  if isinstance(p, bool) or not isinstance(p, (int, float)):
    raise TypeError(f"{fn}: dropout probability must be a float, got {type(p).__name__}")
  if not 0.0 <= p <= 1.0: raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
  return float(p)

def _softmax_dim(fn: str, ndim: int, dim: int | None) -> int:
  if dim is not None: return dim
  warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call to include dim=X as an "
                "argument.", UserWarning, stacklevel=3)
  return 0 if ndim in (0, 1, 3) else 1   # torch's legacy choice

def _dim(fn: str, dim: int, ndim: int) -> int:
  if not -max(ndim, 1) <= dim < max(ndim, 1):
    raise IndexError(f"{fn}: dim {dim} is out of range for a {ndim}-d input (expected to be in range of "
                     f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}])")
  return dim % max(ndim, 1)

# ***** activations *****

def relu(input: Tensor, inplace: bool = False) -> Tensor:
  """max(x, 0) (torch's F.relu)."""
  return _inplace("relu", input, input.relu(), inplace)

def relu_(input: Tensor) -> Tensor:
  """F.relu(input, inplace=True)."""
  return relu(input, True)

def relu6(input: Tensor, inplace: bool = False) -> Tensor:
  """min(max(x, 0), 6)."""
  return _inplace("relu6", input, input.relu6(), inplace)

def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
  """x for x > 0, else alpha * (exp(x) - 1)."""
  return _inplace("elu", input, input.elu(alpha), inplace)

def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
  """F.elu(input, alpha, inplace=True)."""
  return elu(input, alpha, True)

def selu(input: Tensor, inplace: bool = False) -> Tensor:
  """scale * elu(x, alpha) with torch's constants."""
  return _inplace("selu", input, input.selu(), inplace)

def selu_(input: Tensor) -> Tensor:
  """F.selu(input, inplace=True)."""
  return selu(input, True)

def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
  """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha 0 raises, as torch's."""
  if alpha == 0: raise ValueError("celu: alpha cannot be 0 (it divides x); use elu or relu")
  return _inplace("celu", input, input.celu(alpha), inplace)

def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
  """F.celu(input, alpha, inplace=True)."""
  return celu(input, alpha, True)

def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
  """x * Phi(x); approximate='tanh' uses the tanh approximation."""
  if approximate not in ("none", "tanh"):
    raise ValueError(f"gelu: approximate argument must be either 'none' or 'tanh', got {approximate!r}")
  return input.gelu(approximate)

def silu(input: Tensor, inplace: bool = False) -> Tensor:
  """x * sigmoid(x)."""
  return _inplace("silu", input, input.silu(), inplace)

def mish(input: Tensor, inplace: bool = False) -> Tensor:
  """x * tanh(softplus(x))."""
  return _inplace("mish", input, input.mish(), inplace)

def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
  """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (torch's switch to the linear part)."""
  y = input.softplus(beta)
  return (input * beta > threshold).where(input.cast(y.dtype), y)

def softsign(input: Tensor) -> Tensor:
  """x / (1 + |x|)."""
  return input.softsign()

def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
  """x - lambd above lambd, x + lambd below -lambd, else 0 (lambd >= 0, as torch's)."""
  if lambd < 0: raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
  return (input > lambd).where(input - lambd, (input < -lambd).where(input + lambd, 0))

def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
  """x where |x| > lambd, else 0."""
  return ((input > lambd) | (input < -lambd)).where(input, 0)

def tanhshrink(input: Tensor) -> Tensor:
  """x - tanh(x)."""
  return input - input.tanh()

def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
  """x where x > threshold, else value."""
  return _inplace("threshold", input, (input > threshold).where(input, value), inplace)

_threshold = threshold

def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
  """F.threshold(..., inplace=True)."""
  return _threshold(input, threshold, value, True)

def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
  """x clipped to [min_val, max_val], gradient 0 at the bounds (integral bounds keep an integer input's dtype)."""
  lo, hi = min_val, max_val
  if not dtypes.is_float(input.dtype) and float(lo).is_integer() and float(hi).is_integer(): lo, hi = int(lo), int(hi)
  return _inplace("hardtanh", input, input.hardtanh(lo, hi), inplace)

def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
  """F.hardtanh(..., inplace=True)."""
  return hardtanh(input, min_val, max_val, True)

def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
  """relu6(x + 3) / 6."""
  return _inplace("hardsigmoid", input, input.hardsigmoid(), inplace)

def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
  """x * relu6(x + 3) / 6."""
  return _inplace("hardswish", input, input.hardswish(), inplace)

def sigmoid(input: Tensor) -> Tensor:
  """1 / (1 + exp(-x))."""
  return input.sigmoid()

def tanh(input: Tensor) -> Tensor:
  """tanh(x)."""
  return input.tanh()

def logsigmoid(input: Tensor) -> Tensor:
  """log(sigmoid(x)), computed stably."""
  return input.logsigmoid()

def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
  """x for x > 0, else negative_slope * x."""
  return _inplace("leaky_relu", input, input.leaky_relu(negative_slope), inplace)

def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
  """F.leaky_relu(..., inplace=True)."""
  return leaky_relu(input, negative_slope, True)

def prelu(input: Tensor, weight: Tensor) -> Tensor:
  """x for x > 0, else weight * x; weight has one element or one per channel (dim 1, or dim 0 of a 1-d input)."""
  if weight.numel() != 1:
    cdim = 1 if input.ndim >= 2 else 0
    if weight.ndim != 1 or input.ndim == 0 or input.shape[cdim] != weight.shape[0]:
      raise ShapeError(f"prelu: mismatch of parameter numbers and input channel size: a weight of shape "
                       f"{tuple(weight.shape)} needs {weight.numel()} channels on dim {cdim}, got an input of shape "
                       f"{tuple(input.shape)}; use one weight or one per channel")
    weight = weight.reshape(-1, *[1] * (input.ndim - cdim - 1))
  else: weight = weight.reshape(())
  return (input > 0).where(input, weight.cast(input.dtype) * input)

def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
  """Randomized leaky ReLU: training draws each negative element's slope from U[lower, upper), else uses their mean."""
  return _inplace("rrelu", input, input.rrelu(lower, upper, training), inplace)

def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
  """F.rrelu(..., inplace=True)."""
  return rrelu(input, lower, upper, training, True)

def glu(input: Tensor, dim: int = -1) -> Tensor:
  """a * sigmoid(b) for the two halves a, b of dim `dim` (its size must be even)."""
  if input.ndim == 0: raise RuntimeError("glu: does not support scalars because halving size must be even")
  d = _dim("glu", dim, input.ndim)
  if input.shape[d] % 2:
    raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size {input.shape[d]}")
  a, b = input.chunk(2, d)
  return a * b.sigmoid()

def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
  """exp(x) / sum(exp(x)) along dim (input cast to dtype first; dim=None: torch's deprecated legacy choice)."""
  return input.softmax(_softmax_dim("softmax", input.ndim, dim), dtype=dtype)

def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
  """log(softmax(x)) along dim, computed stably."""
  return input.log_softmax(_softmax_dim("log_softmax", input.ndim, dim), dtype=dtype)

def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
  """softmax(-x) along dim."""
  d = _softmax_dim("softmin", input.ndim, dim)
  return (input.cast(to_dtype(dtype)) if dtype is not None else input).softmin(d)

def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
  """softmax((logits + g) / tau) with g Gumbel(0, 1) noise; hard=True returns the one-hot of its argmax with the soft
  sample's gradient (straight-through), as torch's."""
  g = -Tensor.empty(*logits.shape, device=logits.device, dtype=logits.dtype).exponential_().log()
  y = ((logits + g) / tau).softmax(dim)
  if not hard: return y
  d = dim % max(logits.ndim, 1)
  idx = y.argmax(d, keepdim=True)
  pos = Tensor.arange(y.shape[d], device=y.device).reshape(*[-1 if i == d else 1 for i in range(y.ndim)])
  y_hard = (pos == idx).cast(y.dtype)
  return y_hard - y.detach() + y

# ***** linear and convolution *****

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
  """input @ weight.T + bias, weight (out_features, in_features) or 1-d (in_features,) as torch's."""
  y = input.matmul(weight if weight.ndim == 1 else weight.transpose(-1, -2))
  return y + bias if bias is not None else y

def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
  """y[..., o] = input1 A_o input2 + b_o for weight (out, in1, in2); inputs (*, in1) and (*, in2) with equal leading
  dims."""
  if weight.ndim != 3:
    raise RuntimeError(f"bilinear: weight must be 3-d (out_features, in1_features, in2_features), got shape "
                       f"{tuple(weight.shape)}")
  o, i1, i2 = weight.shape
  for k, (x, want, name) in enumerate(((input1, i1, "in1_features"), (input2, i2, "in2_features"))):
    if x.ndim == 0 or x.shape[-1] != want:
      raise RuntimeError(f"bilinear: input{k + 1} size does not match weight size: got "
                         f"{x.shape[-1] if x.ndim else 'a 0-d input'} but expected {want} ({name} of the weight "
                         f"{tuple(weight.shape)})")
  if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
    raise RuntimeError(f"bilinear: input batch dimensions do not match: input1 and input2 must have the same leading "
                       f"dims, got {tuple(input1.shape)} and {tuple(input2.shape)}")
  lead = tuple(input1.shape[:-1])
  a, b = input1.reshape(-1, i1), input2.reshape(-1, i2)
  t = a.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
  y = (t * b.unsqueeze(1)).sum(-1)
  if bias is not None: y = y + bias
  return y.reshape(*lead, o)

def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
  """1-d convolution (cross-correlation) over (N, C, L) or (C, L); padding an int, a tuple, 'same' or 'valid'."""
  return input.conv1d(weight, bias, stride, padding, dilation, groups)

def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
  """2-d convolution over (N, C, H, W) or (C, H, W), with nn.Conv2d's hand-written backward kernels where they
  apply."""
  if not isinstance(padding, str) and not isinstance(input.device, tuple) and input.ndim == 4:
    from teeny.kernels import conv2d as _conv2d
    return _conv2d(input, weight, bias, stride, padding, dilation, groups)
  return input.conv2d(weight, bias, stride, padding, dilation, groups)

def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
  """3-d convolution over (N, C, D, H, W) or (C, D, H, W)."""
  return input.conv3d(weight, bias, stride, padding, dilation, groups)

def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
  """Transposed 1-d convolution; weight (in_channels, out_channels/groups, k)."""
  return input.conv_transpose1d(weight, bias, stride, padding, output_padding, groups, dilation)

def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
  """Transposed 2-d convolution; weight (in_channels, out_channels/groups, kh, kw)."""
  return input.conv_transpose2d(weight, bias, stride, padding, output_padding, groups, dilation)

def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
  """Transposed 3-d convolution; weight (in_channels, out_channels/groups, kd, kh, kw)."""
  return input.conv_transpose3d(weight, bias, stride, padding, output_padding, groups, dilation)

# ***** pooling *****

def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
  """Max over windows of the last dim (return_indices: also the int64 argmax positions)."""
  return input.max_pool1d(kernel_size, stride, padding, dilation, ceil_mode, return_indices)

def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
  """Max over windows of the last two dims (return_indices: also int64 positions flat over H*W)."""
  return input.max_pool2d(kernel_size, stride, padding, dilation, ceil_mode, return_indices)

def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
  """Max over windows of the last three dims (return_indices: also int64 positions flat over D*H*W)."""
  return input.max_pool3d(kernel_size, stride, padding, dilation, ceil_mode, return_indices)

def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
  """max_pool1d returning (values, indices) always."""
  return input.max_pool1d(kernel_size, stride, padding, dilation, ceil_mode, True)

def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
  """max_pool2d returning (values, indices) always."""
  return input.max_pool2d(kernel_size, stride, padding, dilation, ceil_mode, True)

def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
  """max_pool3d returning (values, indices) always."""
  return input.max_pool3d(kernel_size, stride, padding, dilation, ceil_mode, True)

def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
  """adaptive_max_pool1d returning (values, indices) always."""
  return input.adaptive_max_pool1d(output_size, True)

def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
  """adaptive_max_pool2d returning (values, indices) always."""
  return input.adaptive_max_pool2d(output_size, True)

def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
  """adaptive_max_pool3d returning (values, indices) always."""
  return input.adaptive_max_pool3d(output_size, True)

def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
  """Inverse of max_pool1d(return_indices=True): zeros with the values written at their indices."""
  return input.max_unpool1d(indices, kernel_size, stride, padding, output_size)

def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
  """Inverse of max_pool2d(return_indices=True)."""
  return input.max_unpool2d(indices, kernel_size, stride, padding, output_size)

def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
  """Inverse of max_pool3d(return_indices=True)."""
  return input.max_unpool3d(indices, kernel_size, stride, padding, output_size)

def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
  """Mean over windows of the last dim."""
  return input.avg_pool1d(kernel_size, stride, padding, ceil_mode, count_include_pad)

def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
  """Mean over windows of the last two dims (divisor_override: every window sum divided by it instead)."""
  return input.avg_pool2d(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
  """Mean over windows of the last three dims."""
  return input.avg_pool3d(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

def _lp_pool(n: int, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool) -> Tensor:
  k = _tuple(kernel_size, n, "kernel_size")
  pool = getattr(input.pow(norm_type), f"avg_pool{n}d")
  out = pool(k, stride if stride is not None else k, 0, ceil_mode)
  # torch's: the window mean times the window size, sign(s) * relu(|s|) (so a negative sum gives 0), to the 1/p
  return (out.sign() * out.abs().relu() * math.prod(k)).pow(1.0 / norm_type)

def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
  """(sum of x^p over each window)^(1/p) over the last dim (torch's power-average pooling)."""
  return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)

def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
  """lp_pool1d over the last two dims."""
  return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)

def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
  """lp_pool1d over the last three dims."""
  return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)

def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
  """Mean pooling of the last dim to output_size bins (torch's bin edges)."""
  return input.adaptive_avg_pool1d(output_size)

def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
  """Mean pooling of the last two dims to output_size (None entries keep the input's size)."""
  return input.adaptive_avg_pool2d(output_size)

def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
  """Mean pooling of the last three dims to output_size."""
  return input.adaptive_avg_pool3d(output_size)

def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
  """Max pooling of the last dim to output_size bins."""
  return input.adaptive_max_pool1d(output_size, return_indices)

def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
  """Max pooling of the last two dims to output_size."""
  return input.adaptive_max_pool2d(output_size, return_indices)

def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
  """Max pooling of the last three dims to output_size."""
  return input.adaptive_max_pool3d(output_size, return_indices)

# ***** dropout *****

def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
  """Zero each element with probability p and scale the rest by 1/(1-p) when `training` (the argument, not
  Tensor.training); the input itself otherwise."""
  p = _check_p("dropout", p)
  if not training: return input
  with Tensor.train(True): out = input.dropout(p)
  return _inplace("dropout", input, out, inplace)

def _channel_dropout(fn: str, n: int, input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
  p = _check_p(fn, p)
  if n == 1 and input.ndim not in (2, 3):
    raise RuntimeError(f"{fn}: Expected 2D or 3D input, but received a {input.ndim}D input of shape "
                       f"{tuple(input.shape)}; dropout1d wants (N, C, L) or (C, L)")
  if n > 1 and input.ndim not in (n + 1, n + 2):
    warnings.warn(f"{fn}: Received a {input.ndim}-D input to {fn}, which is deprecated; it wants {n + 1}-D "
                  f"(unbatched) or {n + 2}-D (batched) input", UserWarning, stacklevel=3)
  if n == 2 and input.ndim == 3:
    warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                  "desired - input is interpreted as shape (N, C, L)", UserWarning, stacklevel=3)
  if input.ndim < 2: raise RuntimeError(f"{fn}: expected a (N, C, *spatial) input, got shape {tuple(input.shape)}")
  if not training or p == 0: return input
  batched = input.ndim != n + 1 or n == 2   # (torch's dropout2d takes every input as batched)
  lead = 2 if batched else 1
  if p == 1: out = input * 0
  else:
    keep = Tensor.rand(*input.shape[:lead], *[1] * (input.ndim - lead), device=input.device) >= p
    out = keep.where(input, 0) * (1.0 / (1.0 - p))
  return _inplace(fn, input, out, inplace)

def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
  """Channel-wise dropout of (N, C, L) or (C, L): whole channels zeroed with probability p, the rest scaled."""
  return _channel_dropout("dropout1d", 1, input, p, training, inplace)

def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
  """Channel-wise dropout of (N, C, H, W) (a 3-d input is (N, C, L), as torch's)."""
  return _channel_dropout("dropout2d", 2, input, p, training, inplace)

def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
  """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W)."""
  return _channel_dropout("dropout3d", 3, input, p, training, inplace)

_SELU_NEG = 1.7580993408473766  # -SELU(-inf) = alpha * scale: where a dropped unit sits

def _alpha_dropout(fn: str, input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
  p = _check_p(fn, p)
  if not training or p == 0: return input
  if not dtypes.is_float(input.dtype): raise TypeError(f"{fn}: needs a floating-point input, got {input.dtype}")
  if p == 1: return _inplace(fn, input, input * 0, inplace)
  a = 1.0 / math.sqrt((_SELU_NEG * _SELU_NEG * p + 1) * (1 - p))
  shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
  keep = Tensor.rand(*shape, device=input.device) >= p
  out = keep.where(input * a, -_SELU_NEG * a) + _SELU_NEG * a * p
  return _inplace(fn, input, out.cast(input.dtype), inplace)

def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
  """Dropout that keeps SELU's mean and variance: a dropped element becomes -alpha', then all are scaled by
  ((1 - p)(1 + p alpha'^2))^-1/2 and shifted (torch's; training defaults to False, as there)."""
  return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)

def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
  """alpha_dropout of whole channels (dim 1 of (N, C, *))."""
  if input.ndim < 2: raise RuntimeError(f"feature_alpha_dropout: expected a (N, C, *) input, got {tuple(input.shape)}")
  return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)

# ***** normalisation *****

def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float | Tensor = 0.1,
               eps: float = 1e-5) -> Tensor:
  """Normalise dim 1 of (N, C, *): training=True uses the batch's statistics (biased variance) and updates
  running_mean / running_var in place (lazily) with momentum and the unbiased variance, as torch's; training=False
  uses the running statistics. momentum may also be a 0-d Tensor (nn.BatchNorm's cumulative average, momentum=None,
  passes 1 / num_batches_tracked)."""
  fn = "batch_norm"
  if input.ndim < 2: raise ValueError(f"{fn}: expected an (N, C, *) input, got shape {tuple(input.shape)}")
  if training and eps <= 0: raise ValueError(f"{fn}: eps must be positive during training, but got {eps}")
  if eps < 0: raise ValueError(f"{fn}: eps must be non-negative, but got {eps}")
  c = input.shape[1]
  for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
    if t is not None and tuple(t.shape) != (c,):
      raise RuntimeError(f"{fn}: {name} should contain {c} elements (one per channel), not {t.numel()}")
  shape = (1, -1) + (1,) * (input.ndim - 2)
  if training:
    n = input.numel() // c if c else 0
    if n == 1:
      raise ValueError(f"{fn}: Expected more than 1 value per channel when training, got input size "
                       f"{tuple(input.shape)}")
    axes = tuple(a for a in range(input.ndim) if a != 1)
    xs = input.cast(dtypes.float32) if input.dtype in (dtypes.float16, dtypes.bfloat16) else input
    mean = xs.mean(axes)
    y = xs - mean.detach().reshape(shape)   # d(var)/d(mean) is 0: detaching keeps the graph smaller
    var = (y * y).mean(axes)
    with Tensor.no_grad():
      if running_mean is not None:
        running_mean.assign((1 - momentum) * running_mean + momentum * mean.detach().cast(running_mean.dtype))
      if running_var is not None:
        unbiased = var.detach() * (n / max(n - 1, 1))
        running_var.assign((1 - momentum) * running_var + momentum * unbiased.cast(running_var.dtype))
  else:
    if running_mean is None or running_var is None:
      raise RuntimeError(f"{fn}: running_mean and running_var must be given when training=False (evaluation mode)")
    mean, var = running_mean, running_var
  out = input.batchnorm(weight, bias, mean, var.add(eps).rsqrt())
  return out.cast(input.dtype) if dtypes.is_float(input.dtype) and out.dtype != input.dtype else out

def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
  """Each (sample, channel) of (N, C, *spatial) normalised over its spatial dims, then a per-channel affine."""
  return input.instance_norm(running_mean, running_var, weight, bias, use_input_stats, momentum, eps)

def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
  """Normalise over the trailing normalized_shape dims (biased variance), then * weight + bias."""
  return input.layer_norm(normalized_shape, weight, bias, eps)

def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
  """Normalise (N, C, *) over groups of C/num_groups channels, then a per-channel affine."""
  return input.group_norm(num_groups, weight, bias, eps)

_EPS = {"float64": 2.220446049250313e-16, "float32": 1.1920928955078125e-07}   # torch.finfo(dtype).eps

def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
  """x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape dims (eps=None: the machine epsilon of
  the dtype computed in, as torch's: float64's for float64, else float32's); 16-bit inputs computed in float32 (the
  weight multiplied there too) and the result given in the input's dtype, whatever the weight's, as torch's."""
  shp = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
  if tuple(input.shape[input.ndim - len(shp):]) != shp or len(shp) > input.ndim:
    raise RuntimeError(f"rms_norm: given normalized_shape={list(shp)}, expected input with shape [*, "
                       f"{', '.join(str(s) for s in shp)}], but got input of size {list(input.shape)}")
  if weight is not None and tuple(weight.shape) != shp:
    raise RuntimeError(f"rms_norm: weight must have shape {shp}, got {tuple(weight.shape)}")
  if eps is None: eps = _EPS["float64" if input.dtype == dtypes.float64 else "float32"]
  xs = input.cast(dtypes.float32) if input.dtype in (dtypes.float16, dtypes.bfloat16) else input
  axes = tuple(range(input.ndim - len(shp), input.ndim))
  y = xs * (xs * xs).mean(axes, keepdim=True).add(eps).rsqrt()
  if weight is not None: y = y * weight
  return y.cast(input.dtype) if dtypes.is_float(input.dtype) else y   # (the input's dtype, as torch's type_as)

def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
  """x / (k + alpha/size * sum of x^2 over `size` neighbouring channels)^beta; the window over dim 1 runs from
  c - size//2 to c + (size-1)//2, zero outside (torch's)."""
  if input.ndim < 3:
    raise ValueError(f"local_response_norm: Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
  if input.numel() == 0: return input
  pads = [(0, 0)] * input.ndim
  pads[1] = (size // 2, (size - 1) // 2)
  win = (input * input).pad(tuple(pads)).unfold(1, size, 1).sum(-1)
  return input / (win * (alpha / size) + k).pow(beta)

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
  """x / max(||x||_p along dim, eps)."""
  if out is not None: raise NotImplementedError("normalize: out= is not supported by teeny; use the return value")
  return input.normalize(p, dim, eps)

# ***** embedding, one-hot *****

def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
  """Rows of weight (num_embeddings, dim) at the integer ids in input. padding_idx: those lookups pass no gradient
  back. max_norm: the looked-up rows whose norm_type-norm exceeds it are first rescaled in weight itself (in place,
  not recorded, as torch's). sparse=True gives a dense gradient. A weight sharded by rows over several devices
  (nn.Embedding(..., shard=devs)) gathers each id from the device that owns it (kernels/embedding_sharded.py)."""
  fn = "embedding"
  if scale_grad_by_freq:
    raise NotImplementedError(f"{fn}: scale_grad_by_freq=True is not supported by teeny; scale the gradient yourself")
  if not isinstance(input, Tensor): input = Tensor(input, dtype=dtypes.int64)
  if not dtypes.is_int(input.dtype):
    raise TypeError(f"{fn}: Expected tensor for argument #1 'indices' to have an integer dtype, got {input.dtype}")
  if weight.ndim != 2: raise ValueError(f"{fn}: weight must be 2-d (num_embeddings, embedding_dim), got "
                                       f"{tuple(weight.shape)}")
  if padding_idx is not None:
    if not -weight.shape[0] <= padding_idx < weight.shape[0]:
      raise ValueError(f"{fn}: padding_idx ({padding_idx}) must be within num_embeddings ({weight.shape[0]})")
    padding_idx %= weight.shape[0]
  if max_norm is not None:
    if isinstance(weight.device, tuple):
      raise NotImplementedError(f"{fn}: max_norm is not supported for a sharded weight; renormalise it yourself")
    with Tensor.no_grad():
      ids = input.reshape(-1, 1).cast(dtypes.int64)
      used = (ids == Tensor.arange(weight.shape[0], device=weight.device).cast(dtypes.int64).reshape(1, -1)).any(0)
      norms = weight.detach().float().norm(norm_type, dim=1)
      scale = (used & (norms > max_norm)).where(max_norm / (norms + 1e-7), 1.0)
      weight.assign((weight.detach() * scale.reshape(-1, 1).cast(weight.dtype)).contiguous())
  if isinstance(weight.device, tuple):
    from teeny.kernels.embedding_sharded import sharded_embedding
    out = sharded_embedding(weight, input)
  else:   # gather forward, atomic scatter-add backward (the plain graph when disabled); ids out of range: IndexError
    from teeny.kernels import embedding as _embedding
    out = _embedding(weight, input)
  if padding_idx is None: return out
  keep = (input != padding_idx).unsqueeze(-1)   # the padding row's lookups pass no gradient back
  if keep.device != out.device: keep = keep.to(out.device)
  return keep.where(out, out.detach())

def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
  """Sums, means or maxes bags of rows of weight (num_embeddings, dim) without the (bag, item, dim) lookups (torch's).
  input (B, N) is B bags of N ids; a 1-d input is split into bags starting at `offsets` (include_last_offset=True:
  offsets has B+1 entries, the last the end). per_sample_weights (input's shape) scale each row (mode 'sum' only).
  Ids equal to padding_idx are left out of their bag (and count nothing for 'mean'); an empty bag gives zeros.
  Output (B, dim). max_norm and scale_grad_by_freq raise NotImplementedError; sparse=True gives a dense gradient."""
  fn = "embedding_bag"
  if mode not in ("sum", "mean", "max"): raise ValueError(f"{fn}: mode has to be one of sum, mean or max, got {mode!r}")
  if max_norm is not None or scale_grad_by_freq:
    raise NotImplementedError(f"{fn}: max_norm and scale_grad_by_freq are not supported by teeny; leave them at their "
                              "defaults (renormalise the weight yourself if needed)")
  if weight.ndim != 2:
    raise ValueError(f"{fn}: weight has to be a 2D Tensor (num_embeddings, embedding_dim), but got Tensor of dimension "
                     f"{weight.ndim}")
  if padding_idx is not None:
    if not -weight.shape[0] <= padding_idx < weight.shape[0]:
      raise ValueError(f"{fn}: padding_idx ({padding_idx}) must be within num_embeddings ({weight.shape[0]})")
    padding_idx %= weight.shape[0]
  if not isinstance(input, Tensor): input = Tensor(input, dtype=dtypes.int64)
  if not dtypes.is_int(input.dtype): raise TypeError(f"{fn}: input must be an integer tensor of ids, got {input.dtype}")
  if per_sample_weights is not None:
    if mode != "sum":
      raise NotImplementedError(f"{fn}: per_sample_weights was not None. per_sample_weights is only supported for "
                                f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    if tuple(per_sample_weights.shape) != tuple(input.shape):
      raise ValueError(f"{fn}: per_sample_weights must have the input's shape {tuple(input.shape)}, got "
                       f"{tuple(per_sample_weights.shape)}")
  if input.ndim == 2:
    if offsets is not None:
      raise ValueError(f"{fn}: if input is 2D, then offsets has to be None, as input is treated as a mini-batch of "
                       "fixed length sequences. However, found offsets of type Tensor")
    nb, n = input.shape
    ids = input.reshape(-1)
    psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    pos = Tensor.arange(nb * n, device=input.device).reshape(1, -1)
    start = (Tensor.arange(nb, device=input.device) * n).reshape(-1, 1)
    member = (pos >= start) & (pos < start + n)   # (B, N*B)
  elif input.ndim == 1:
    if offsets is None: raise ValueError(f"{fn}: offsets has to be a 1D Tensor but got None")
    if not isinstance(offsets, Tensor): offsets = Tensor(offsets, dtype=dtypes.int64)
    if offsets.ndim != 1: raise ValueError(f"{fn}: offsets has to be a 1D Tensor, got shape {tuple(offsets.shape)}")
    if not dtypes.is_int(offsets.dtype):
      raise TypeError(f"{fn}: offsets must be an integer tensor, got {offsets.dtype}")
    ids, psw, n = input, per_sample_weights, input.shape[0]
    offs = offsets.cast(dtypes.int64)
    from teeny.indexing import _reads_allowed
    if offs.shape[0] and _reads_allowed(offs.device) and (first := int(offs[0].item())) != 0:
      # (bags start at the offsets: ids before a first offset > 0 would belong to no bag, silently dropped)
      raise RuntimeError(f"{fn}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                       f"position 0. However, got {first}")
    if include_last_offset:
      if offs.shape[0] < 1: raise ValueError(f"{fn}: include_last_offset needs at least one offset")
      starts, ends = offs[:-1], offs[1:]
    else:
      starts = offs
      ends = offs[1:].cat(Tensor([n], dtype=dtypes.int64, device=offs.device)) if offs.shape[0] else offs
    pos = Tensor.arange(n, device=input.device).cast(dtypes.int64).reshape(1, -1)
    member = (pos >= starts.reshape(-1, 1)) & (pos < ends.reshape(-1, 1))   # (B, N)
  else:
    raise ValueError(f"{fn}: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
  if padding_idx is not None: member = member & (ids != padding_idx).reshape(1, -1)
  emb = weight[ids.cast(dtypes.int64)] if ids.shape[0] else weight[:0]   # (still a graph over weight)
  if psw is not None: emb = emb * psw.reshape(-1, 1).cast(emb.dtype)
  if mode == "max":
    big = member.unsqueeze(-1).where(emb.unsqueeze(0), -math.inf)
    if member.shape[1]: return member.any(1, keepdim=True).where(big.max(1), 0.0)
    # no ids at all: every bag is empty (zeros), still a graph over the weight (whose gradient is zeros)
    return emb.sum(0, keepdim=True).expand(member.shape[0], weight.shape[1])
  out = member.cast(emb.dtype).matmul(emb)
  return out / member.sum(1, keepdim=True).maximum(1).cast(emb.dtype) if mode == "mean" else out

def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
  """Integer class ids -> a trailing one-hot axis, int64 as torch's (num_classes=-1 reads max + 1 from the data)."""
  return tensor.one_hot(num_classes).cast(dtypes.int64)

# ***** shape and resampling *****

def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
  """Pad (or crop, for negative amounts) the last len(pad)//2 dims, last dim first; modes constant, reflect,
  replicate, circular."""
  if len(pad) % 2: raise RuntimeError(f"pad: Padding length must be divisible by 2, got {len(pad)} ({tuple(pad)})")
  if len(pad) // 2 > input.ndim:
    raise RuntimeError(f"pad: Padding length should be less than or equal to two times the input dimension but got "
                     f"padding length {len(pad)} and input of dimension {input.ndim}")
  if mode != "constant" and value not in (None, 0, 0.0):
    raise RuntimeError(f"pad: padding mode {mode!r} doesn't take in value argument")
  return input.pad(tuple(pad), value, mode)

def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
  """Resize the spatial dims (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area);
  recompute_scale_factor=True turns scale_factor into the output size (floor(in * scale)) first, as torch's.
  antialias=True is not supported."""
  if antialias:
    raise NotImplementedError("interpolate: antialias=True is not supported by teeny; pass antialias=False")
  if recompute_scale_factor and scale_factor is not None and size is None:
    fs = (float(scale_factor),) * (input.ndim - 2) if isinstance(scale_factor, (int, float)) else scale_factor
    size, scale_factor = tuple(int(math.floor(float(i) * float(f))) for i, f in zip(input.shape[2:], fs)), None
  return input.interpolate(size, scale_factor, mode, align_corners)

def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
  """Deprecated torch spelling of interpolate (with its warning)."""
  warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
  return interpolate(input, size, scale_factor, mode, align_corners)

def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
  """Deprecated: interpolate(mode='nearest')."""
  warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                stacklevel=2)
  return interpolate(input, size, scale_factor, "nearest")

def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
  """Deprecated: interpolate(mode='bilinear', align_corners=True)."""
  warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                stacklevel=2)
  return interpolate(input, size, scale_factor, "bilinear", True)

def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
  """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
  return input.pixel_shuffle(upscale_factor)

def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
  """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
  return input.pixel_unshuffle(downscale_factor)

def channel_shuffle(input: Tensor, groups: int) -> Tensor:
  """(N, C, *) with C split into `groups` groups, interleaved (torch's)."""
  if isinstance(groups, bool) or not isinstance(groups, int):
    raise TypeError(f"channel_shuffle: groups must be an int, got {type(groups).__name__}")
  if groups <= 0:
    raise RuntimeError(f"channel_shuffle: Number of groups to divide channels in must be positive. Value of groups:"
                       f"{groups}")
  if input.ndim < 3:
    raise RuntimeError(f"channel_shuffle: expects input to have at least 3 dimensions, but got input with sizes "
                       f"{list(input.shape)}")
  c = input.shape[1]
  if c % groups:
    raise RuntimeError(f"channel_shuffle: Number of channels must be divisible by groups. Got {c} channels and "
                       f"{groups} groups.")
  n, rest = input.shape[0], tuple(input.shape[2:])
  return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)

native_channel_shuffle = channel_shuffle

def _pair(fn: str, name: str, v) -> tuple[int, int]:
  t = (v, v) if isinstance(v, int) and not isinstance(v, bool) else tuple(v)
  if len(t) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in t):
    raise ValueError(f"{fn}: {name} must be an int or a pair of ints, got {v!r}")
  return (t[0], t[1])

def _fold_args(fn: str, kernel_size, dilation, padding, stride):
  """unfold's and fold's (and nn.Unfold's, nn.Fold's) block arguments as pairs, checked."""
  k, d, p, s = (_pair(fn, nm, v) for v, nm in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                               (padding, "padding"), (stride, "stride")))
  if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
    raise ValueError(f"{fn}: kernel_size, dilation and stride must be positive and padding non-negative, got "
                     f"kernel_size={k}, dilation={d}, padding={p}, stride={s}")
  return k, d, p, s

def _blocks(size, k, d, p, s) -> tuple[int, int]:
  h, w = ((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))
  return h, w

def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
  """im2col: (N, C, H, W) (or (C, H, W)) -> (N, C*kh*kw, L), one column per sliding block in row-major order, rows
  ordered channel, kernel row, kernel column."""
  fn = "unfold"
  k, d, p, s = _fold_args(fn, kernel_size, dilation, padding, stride)
  if input.ndim not in (3, 4):
    raise ValueError(f"{fn}: Input Error: Only 3D (unbatched) or 4D (batched) input Tensors are supported (got "
                     f"{input.ndim}D)")
  x = input if input.ndim == 4 else input.unsqueeze(0)
  n, c = x.shape[0], x.shape[1]
  oh, ow = _blocks(x.shape[2:], k, d, p, s)
  if oh <= 0 or ow <= 0:
    raise RuntimeError(f"{fn}: the input of spatial size {tuple(x.shape[2:])} with padding {p} is too small for "
                       f"kernel_size {k} and dilation {d} ({oh} x {ow} blocks); use a smaller kernel or more padding")
  if any(p): x = x.pad(((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
  out = x._window(k, s, d).permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow)
  return out if input.ndim == 4 else out.squeeze(0)

def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
  """col2im, the adjoint of unfold: (N, C*kh*kw, L) (or (C*kh*kw, L)) -> (N, C, *output_size), overlapping block
  values summed."""
  fn = "fold"
  k, d, p, s = _fold_args(fn, kernel_size, dilation, padding, stride)
  osz = _pair(fn, "output_size", output_size)
  if input.ndim not in (2, 3):
    raise ValueError(f"{fn}: Input Error: Only 2D (unbatched) or 3D (batched) input Tensors are supported (got "
                     f"{input.ndim}D)")
  x = input if input.ndim == 3 else input.unsqueeze(0)
  n, ckk, nblk = x.shape
  kk = k[0] * k[1]
  if ckk % kk:
    raise RuntimeError(f"{fn}: expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                       f"got input.size(1)={ckk} and kernel_size={k}")
  oh, ow = _blocks(osz, k, d, p, s)
  if oh <= 0 or ow <= 0 or oh * ow != nblk:
    raise RuntimeError(f"{fn}: given output_size={osz}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                       f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                       f"{oh} * {ow} = {oh * ow}, but got input.size(2)={nblk}.")
  c, hp, wp = ckk // kk, osz[0] + 2 * p[0], osz[1] + 2 * p[1]
  cols = x.reshape(n, c, k[0], k[1], oh, ow)
  total: Tensor | None = None
  for i in range(k[0]):
    for j in range(k[1]):
      blk = cols[:, :, i, j]   # what kernel position (i, j) read, spread back `stride` apart and shifted into place
      if s != (1, 1):
        blk = blk.reshape(n, c, oh, 1, ow, 1).pad(((0, 0),) * 3 + ((0, s[0] - 1), (0, 0), (0, s[1] - 1)))
        blk = blk.reshape(n, c, oh * s[0], ow * s[1])
      top, left = i * d[0], j * d[1]
      hh, ww = blk.shape[2], blk.shape[3]
      placed = blk.pad(((0, 0), (0, 0), (top, max(hp - top - hh, 0)), (left, max(wp - left - ww, 0))))
      placed = placed[:, :, :hp, :wp]
      total = placed if total is None else total + placed
  assert total is not None
  out = total[:, :, p[0]:p[0] + osz[0], p[1]:p[1] + osz[1]]
  return out if input.ndim == 3 else out.squeeze(0)

# ***** distances, attention *****

def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
  """x1 . x2 / max(|x1| |x2|, eps) along dim (inputs broadcast)."""
  return x1.cosine_similarity(x2, dim, eps)

def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
  """||x1 - x2 + eps||_p along the last dim."""
  return x1.pairwise_distance(x2, p, eps, keepdim)

def pdist(input: Tensor, p: float = 2.0) -> Tensor:
  """The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major pair order
  (N*(N-1)/2 values)."""
  if input.ndim != 2: raise RuntimeError(f"pdist: only supports 2D tensors, got: {input.ndim}D")
  if p < 0: raise RuntimeError(f"pdist: only supports non-negative p values, got {p}")
  n = input.shape[0]
  i, j = np.triu_indices(n, 1)   # (shape-only index constants, made on the host)
  if len(i) == 0: return input.sum(1)[:0]
  diff = input[Tensor(i.astype(np.int32), device=input.device)] - input[Tensor(j.astype(np.int32), device=input.device)]
  return diff.norm(p, dim=1)

def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
  """softmax(q k^T * scale + mask) v (torch's argument set; dropout_p applies as given, as torch's)."""
  return query.scaled_dot_product_attention(key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)

def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
  """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3) (or (N, 3, 4)) over the
  normalised [-1, 1] coordinates of an output of `size` (torch's; align_corners=None means False)."""
  ac = bool(align_corners)
  size = tuple(int(v) for v in size)
  nd = len(size) - 2
  if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1):
    raise ValueError(f"affine_grid: expected a 4-d or 5-d size and theta of shape (N, {nd}, {nd + 1}) matching it, got "
                     f"size {size} and theta {tuple(theta.shape)}")
  if not dtypes.is_float(theta.dtype): raise ValueError(f"affine_grid: theta must be floating point, got {theta.dtype}")
  def base(steps: int) -> np.ndarray:
    v = np.linspace(-1, 1, steps) if steps > 1 else np.zeros(1)
    return v if ac else v * (steps - 1) / steps
  axes = [base(s) for s in size[2:]]   # D, H, W (the grid's last coordinate is x, i.e. W)
  mesh = np.meshgrid(*axes, indexing="ij")
  coords = np.stack([m for m in reversed(mesh)] + [np.ones_like(mesh[0])], -1).reshape(-1, nd + 1)
  g = Tensor(coords.astype(np.float32), device=theta.device).cast(theta.dtype)
  out = g.unsqueeze(0).matmul(theta.transpose(1, 2))   # (N, prod(spatial), nd)
  return out.reshape(size[0], *size[2:], nd)

def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
  """Sample (N, C, H, W) at the normalised [-1, 1] (x, y) positions of grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo), as
  torch's for 4-d inputs: mode 'bilinear' or 'nearest' (round half to even), padding_mode 'zeros' (outside reads 0)
  or 'border' (positions clamped to the edge); align_corners=None means False. Differentiable in input and grid
  (bilinear; nearest gives grid no gradient where torch gives zeros). 5-d inputs, mode 'bicubic' and padding_mode
  'reflection' raise NotImplementedError."""
  fn = "grid_sample"
  if mode not in ("bilinear", "nearest", "bicubic"):
    raise ValueError(f"{fn}: mode must be 'bilinear', 'nearest' or 'bicubic', but got {mode!r}")
  if padding_mode not in ("zeros", "border", "reflection"):
    raise ValueError(f"{fn}: padding_mode must be 'zeros', 'border' or 'reflection', but got {padding_mode!r}")
  if mode == "bicubic" or padding_mode == "reflection" or input.ndim == 5:
    raise NotImplementedError(f"{fn}: teeny supports 4-d inputs with mode 'bilinear'/'nearest' and padding_mode "
                              f"'zeros'/'border' (got a {input.ndim}-d input, mode {mode!r}, padding_mode "
                              f"{padding_mode!r})")
  if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
    raise RuntimeError(f"{fn}: expected a 4-d input (N, C, H, W) and grid (N, Ho, Wo, 2) with the same N, got input "
                       f"{tuple(input.shape)} and grid {tuple(grid.shape)}")
  n, c, h, w = input.shape
  ho, wo = grid.shape[1], grid.shape[2]
  g = grid.cast(input.dtype) if grid.dtype != input.dtype else grid
  def unnormalise(v: Tensor, size: int) -> Tensor:
    p = (v + 1) * ((size - 1) / 2) if align_corners else ((v + 1) * size - 1) / 2
    return p.hardtanh(0, size - 1) if padding_mode == "border" else p   # (no gradient at the edges, as torch's)
  ix, iy = unnormalise(g[..., 0], w), unnormalise(g[..., 1], h)   # (N, Ho, Wo)
  flat = input.reshape(n, c, h * w)
  def tap(x: Tensor, y: Tensor) -> Tensor:
    """input at integer positions (x, y) (float tensors), 0 outside: (N, C, Ho, Wo)."""
    inside = (x >= 0) & (x <= w - 1) & (y >= 0) & (y <= h - 1)
    idx = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).cast(dtypes.int32).reshape(n, 1, ho * wo).expand(n, c, ho * wo)
    return inside.reshape(n, 1, ho, wo).where(flat.gather(2, idx).reshape(n, c, ho, wo), 0)
  if mode == "nearest": return tap(ix.detach().round(), iy.detach().round())   # (grid gets no gradient)
  x0, y0 = ix.detach().floor(), iy.detach().floor()
  wx1, wy1 = (ix - x0).unsqueeze(1), (iy - y0).unsqueeze(1)
  wx0, wy0 = 1 - wx1, 1 - wy1
  return (tap(x0, y0) * (wx0 * wy0) + tap(x0 + 1, y0) * (wx1 * wy0) + tap(x0, y0 + 1) * (wx0 * wy1) +
          tap(x0 + 1, y0 + 1) * (wx1 * wy1))

# ***** losses *****

def _weighted(fn: str, loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
  if tuple(weight.shape) != tuple(input.shape): raise ValueError(f"{fn}: Weights and input must have the same size.")
  w = loss * weight
  if reduction == "none": return w
  if reduction == "sum": return w.sum()
  return w.sum() / weight.sum() if mean_by_weight else w.mean()

def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
  """(input - target)^2, reduced; weight (input's shape) scales each term and 'mean' divides by its sum (torch's)."""
  r = _reduction("mse_loss", size_average, reduce, reduction)
  if weight is None: return input.mse_loss(target, r)
  return _weighted("mse_loss", input.mse_loss(target, "none"), weight, input, r, True)

def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
  """|input - target|, reduced; weight as mse_loss's."""
  r = _reduction("l1_loss", size_average, reduce, reduction)
  if weight is None: return input.l1_loss(target, r)
  return _weighted("l1_loss", input.l1_loss(target, "none"), weight, input, r, True)

def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
  """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
  return input.smooth_l1_loss(target, _reduction("smooth_l1_loss", size_average, reduce, reduction), beta)

def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
  """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); weight scales each term ('mean' is then the plain mean
  of the weighted terms, as torch's)."""
  r = _reduction("huber_loss", None, None, reduction)
  if weight is None: return input.huber_loss(target, r, delta)
  return _weighted("huber_loss", input.huber_loss(target, "none", delta), weight, input, r, False)

def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
  """Cross entropy of logits (classes on dim 1, or dim 0 unbatched) against class ids or class probabilities."""
  r = _reduction("cross_entropy", size_average, reduce, reduction)
  return input.cross_entropy(target, reduction=r, label_smoothing=label_smoothing, ignore_index=ignore_index,
                             weight=weight)

def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:
  """Negative log-likelihood of log-probabilities at the target class ids."""
  r = _reduction("nll_loss", size_average, reduce, reduction)
  return input.nll_loss(target, weight=weight, ignore_index=ignore_index, reduction=r)

def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
  """-(t log p + (1 - t) log(1 - p)) on probabilities (logs clamped at -100, as torch's)."""
  r = _reduction("binary_cross_entropy", size_average, reduce, reduction)
  return input.binary_cross_entropy(target, weight, r)

def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
  """sigmoid + binary cross entropy in one stable expression; pos_weight scales the positive term."""
  r = _reduction("binary_cross_entropy_with_logits", size_average, reduce, reduction)
  return input.binary_cross_entropy_with_logits(target, weight, r, pos_weight)

def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
  """KL divergence with input holding log-probabilities ('batchmean' divides the sum by the batch size)."""
  r = _reduction("kl_div", size_average, reduce, reduction, ("batchmean",))
  return input.kl_div(target, r, log_target)

def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
  """exp(input) - target * input (log_input), else input - target * log(input + eps); full adds Stirling's term."""
  r = _reduction("poisson_nll_loss", size_average, reduce, reduction)
  return input.poisson_nll_loss(target, log_input, full, eps, r)

def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
  """0.5 (log(var) + (input - target)^2 / var), var clamped below at eps."""
  return input.gaussian_nll_loss(target, var, full, eps, _reduction("gaussian_nll_loss", None, None, reduction))

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
  """max(0, -target * (input1 - input2) + margin)."""
  r = _reduction("margin_ranking_loss", size_average, reduce, reduction)
  return input1.margin_ranking_loss(input2, target, margin, r)

def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
  """input where target == 1, max(0, margin - input) where target == -1."""
  r = _reduction("hinge_embedding_loss", size_average, reduce, reduction)
  return input.hinge_embedding_loss(target, margin, r)

def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
  """log(1 + exp(-target * input))."""
  return input.soft_margin_loss(target, _reduction("soft_margin_loss", size_average, reduce, reduction))

def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
  """Per sample, sum over target classes j and the other classes i of max(0, 1 - (x[j] - x[i])) / C."""
  return input.multilabel_margin_loss(target, _reduction("multilabel_margin_loss", size_average, reduce, reduction))

def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
  """The per-class logistic loss times weight, averaged over the classes."""
  r = _reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
  return input.multilabel_soft_margin_loss(target, weight, r)

def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
  """The multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p times weight[y], over C."""
  r = _reduction("multi_margin_loss", size_average, reduce, reduction)
  return input.multi_margin_loss(target, p, margin, weight, r)

def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
  """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
  r = _reduction("cosine_embedding_loss", size_average, reduce, reduction)
  return input1.cosine_embedding_loss(input2, target, margin, r)

def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
  """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-norm distance."""
  r = _reduction("triplet_margin_loss", size_average, reduce, reduction)
  return anchor.triplet_margin_loss(positive, negative, margin, p, eps, swap, r)

def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
  """triplet_margin_loss with any distance_function(x1, x2) (default pairwise_distance); margin must be > 0."""
  fn = "triplet_margin_with_distance_loss"
  r = _reduction(fn, None, None, reduction)
  if not margin > 0: raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")
  if not anchor.ndim == positive.ndim == negative.ndim:
    raise RuntimeError(f"{fn}: The anchor, positive, and negative tensors are expected to have the same number of "
                       f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                       f"{negative.ndim}D inputs")
  dist = distance_function if distance_function is not None else pairwise_distance
  dpos, dneg = dist(anchor, positive), dist(anchor, negative)
  if swap: dneg = dneg.minimum(dist(positive, negative))
  return _reduce(_clamp_min0(margin + dpos - dneg), r)

# `from teeny.nn.functional import *` gives the functions only (not the modules and names imported above)
__all__ = [n for n, v in list(globals().items()) if not n.startswith("_") and callable(v) and
           getattr(v, "__module__", None) == __name__]
