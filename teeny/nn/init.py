"""torch.nn.init for teeny: torch 2.13's initialisers with its names, arguments, defaults, fan computation and errors.

Each writes the tensor in place through teeny's in-place machinery (uniform_, normal_, fill_, assign: lazy, the
values appear at the next realize) with no gradient recorded (a Parameter stays a leaf that requires grad), and returns
it. The random ones draw from teeny's generator (Tensor.manual_seed), so the values differ from torch's for the same
seed; the distributions are torch's. `generator=` is accepted only as None (teeny has no generator objects)."""
from __future__ import annotations
import math
import warnings
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")

def calculate_gain(nonlinearity: str, param=None) -> float:
  """torch's recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 tanh, sqrt(2) relu,
  sqrt(2 / (1 + negative_slope^2)) leaky_relu (param: the slope, default 0.01), 3/4 selu."""
  if nonlinearity in _LINEAR: return 1
  if nonlinearity == "tanh": return 5.0 / 3
  if nonlinearity == "relu": return math.sqrt(2.0)
  if nonlinearity == "leaky_relu":
    if param is None: slope = 0.01
    elif not isinstance(param, bool) and isinstance(param, (int, float)): slope = param
    else: raise ValueError(f"calculate_gain: negative_slope {param} not a valid number (pass an int or a float)")
    return math.sqrt(2.0 / (1 + slope ** 2))
  if nonlinearity == "selu": return 3.0 / 4
  raise ValueError(f"calculate_gain: Unsupported nonlinearity {nonlinearity}; use one of linear, conv*d, "
                   "conv_transpose*d, sigmoid, tanh, relu, leaky_relu, selu")

def _check(fn: str, tensor, generator) -> None:
  if not isinstance(tensor, Tensor): raise TypeError(f"{fn}: expected a teeny Tensor, got {type(tensor).__name__}")
  if generator is not None:
    raise NotImplementedError(f"{fn}: generator= is not supported by teeny (it has one generator: seed it with "
                              "Tensor.manual_seed); pass generator=None")

def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
  """torch's fans: fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (the product of dims 2+)."""
  if tensor.ndim < 2:
    raise ValueError(f"Fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got shape "
                     f"{tuple(tensor.shape)})")
  rf = math.prod(tensor.shape[2:])
  return tensor.shape[1] * rf, tensor.shape[0] * rf

def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
  mode = mode.lower()
  if mode not in ("fan_in", "fan_out"):
    raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
  fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
  return fan_in if mode == "fan_in" else fan_out

def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
  """Fill with draws from U(a, b)."""
  _check("uniform_", tensor, generator)
  with Tensor.no_grad(): return tensor.uniform_(a, b)

def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
  """Fill with draws from N(mean, std^2)."""
  _check("normal_", tensor, generator)
  with Tensor.no_grad(): return tensor.normal_(mean, std)

def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
  """Fill with draws from N(mean, std^2) truncated to [a, b] (torch's inverse-CDF method: uniform between the CDF
  values of a and b, through erfinv, clamped to [a, b]). Warns, as torch's, when mean is more than 2 std outside."""
  _check("trunc_normal_", tensor, generator)
  if mean < a - 2 * std or mean > b + 2 * std:
    warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may be "
                  "incorrect.", stacklevel=2)
  def cdf(x: float) -> float: return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
  lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
  with Tensor.no_grad():
    u = Tensor.uniform(*tensor.shape, low=2 * lo - 1, high=2 * hi - 1, device=tensor.device)
    u = u.clamp(-1 + 1e-7, 1 - 1e-7)
    return tensor.assign((u.erfinv() * (std * math.sqrt(2.0)) + mean).clamp(a, b).cast(tensor.dtype))

def constant_(tensor: Tensor, val: float) -> Tensor:
  """Fill with val."""
  _check("constant_", tensor, None)
  with Tensor.no_grad(): return tensor.fill_(val)

def ones_(tensor: Tensor) -> Tensor:
  """Fill with ones."""
  return constant_(tensor, 1.0)

def zeros_(tensor: Tensor) -> Tensor:
  """Fill with zeros."""
  return constant_(tensor, 0.0)

def eye_(tensor: Tensor) -> Tensor:
  """A 2-d tensor set to the identity (ones on the main diagonal, zeros elsewhere)."""
  _check("eye_", tensor, None)
  if tensor.ndim != 2: raise ValueError(f"eye_: Only tensors with 2 dimensions are supported, got shape "
                                        f"{tuple(tensor.shape)}")
  with Tensor.no_grad():
    return tensor.assign(Tensor.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype, device=tensor.device))

def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
  """A 3-, 4- or 5-d conv weight set to the Dirac delta (the identity convolution, keeping as many channels as
  possible), per group of out_channels // groups output channels."""
  _check("dirac_", tensor, None)
  if tensor.ndim not in (3, 4, 5):
    raise ValueError(f"dirac_: Only tensors with 3, 4, or 5 dimensions are supported, got shape {tuple(tensor.shape)}")
  if groups <= 0 or tensor.shape[0] % groups:
    raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups ({groups})")
  shp = tuple(tensor.shape)
  per = shp[0] // groups
  w = np.zeros(shp, np.float32)
  centre = tuple(s // 2 for s in shp[2:])
  for g in range(groups):
    for d in range(min(per, shp[1])): w[(g * per + d, d) + centre] = 1
  with Tensor.no_grad(): return tensor.assign(Tensor(w, device=tensor.device).cast(tensor.dtype))

def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
  """Glorot: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
  _check("xavier_uniform_", tensor, generator)
  fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
  a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
  return uniform_(tensor, -a, a)

def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
  """Glorot: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
  _check("xavier_normal_", tensor, generator)
  fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
  return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))

def _kaiming_std(fn: str, tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
  if 0 in tuple(tensor.shape):
    warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
    return None
  return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))

def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
  """He: U(-bound, bound) with bound = gain(nonlinearity, a) * sqrt(3 / fan) (fan of `mode`)."""
  _check("kaiming_uniform_", tensor, generator)
  std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
  if std is None: return tensor
  return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std)

def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
  """He: N(0, std^2) with std = gain(nonlinearity, a) / sqrt(fan)."""
  _check("kaiming_normal_", tensor, generator)
  std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
  if std is None: return tensor
  return normal_(tensor, 0.0, std)

def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
  """A (semi-)orthogonal matrix (dims after the first flattened), times gain: the Q of a QR decomposition of a normal
  matrix, signs fixed by R's diagonal (torch's). The QR runs on the host (numpy): this realizes the random draw once."""
  _check("orthogonal_", tensor, generator)
  if tensor.ndim < 2:
    raise ValueError(f"orthogonal_: Only tensors with 2 or more dimensions are supported, got shape "
                     f"{tuple(tensor.shape)}")
  if tensor.numel() == 0: return tensor
  rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
  flat = Tensor.randn(rows, cols, dtype=dtypes.float32).numpy().astype(np.float64)
  if rows < cols: flat = flat.T
  q, r = np.linalg.qr(flat)
  q = q * np.sign(np.diag(r))
  if rows < cols: q = q.T
  with Tensor.no_grad():
    return tensor.assign(Tensor((q * gain).astype(np.float32).reshape(tensor.shape), device=tensor.device)
                         .cast(tensor.dtype))

def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
  """A 2-d tensor drawn from N(0, std^2) with ceil(sparsity * rows) entries of each column set to zero (rows chosen
  at random per column: the permutations are drawn on the host, which realizes one random draw)."""
  _check("sparse_", tensor, generator)
  if tensor.ndim != 2: raise ValueError(f"sparse_: Only tensors with 2 dimensions are supported, got shape "
                                        f"{tuple(tensor.shape)}")
  rows, cols = tensor.shape
  nz = int(math.ceil(sparsity * rows))
  rank = Tensor.rand(rows, cols).numpy().argsort(0).argsort(0)   # a random permutation of the rows, per column
  with Tensor.no_grad():
    vals = Tensor.normal(rows, cols, mean=0.0, std=std, device=tensor.device)
    keep = Tensor(rank >= nz, device=tensor.device)
    return tensor.assign(keep.where(vals, 0.0).cast(tensor.dtype))
