"""Layers as plain classes with `__call__`; parameters are Tensors with requires_grad=True, initialised like PyTorch."""
from __future__ import annotations
import math
import warnings
from collections import OrderedDict
from typing import Iterator, Sequence
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes
from teeny.helpers import prod
from teeny.tensor_nn import _check_reduction, _reduce, _resolve_pads, _tuple
from teeny.tensor_loss import _clamp_min0
from teeny.nn import optim, state, datasets  # noqa: F401

def _param(t: Tensor) -> Tensor:
  """A trainable leaf: realized now, so it is a buffer that backward() can reach and the optimizer can assign into."""
  t = t.contiguous().realize()
  t.requires_grad = True
  return t

def _uniform(shape: Sequence[int], bound: float) -> Tensor:
  return _param(Tensor.uniform(*shape, low=-bound, high=bound))

def _bound(fan_in: int) -> float:
  """torch's init bound 1/sqrt(fan_in) (kaiming_uniform(a=sqrt(5)) and the bias); 0 for fan_in 0 (an empty weight,
  zeros for the bias, as torch's)."""
  return 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0

class Linear:
  """y = x @ W.T + b, W of shape (out_features, in_features)."""
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = _bound(in_features)  # in_features=0: output is the bias, broadcast
    self.weight = _uniform((out_features, in_features), bound)
    self.bias = _uniform((out_features,), bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    y = x.matmul(self.weight.transpose(0, 1))
    return y + self.bias if self.bias is not None else y

class _ConvNd:
  n = 2
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
               bias: bool = True, padding_mode: str = "zeros"):
    if in_channels % groups or out_channels % groups:
      raise ValueError(f"in_channels {in_channels} and out_channels {out_channels} must divide by groups {groups}")
    if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
      raise ValueError(f"padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', got {padding_mode!r}")
    self.kernel_size = _tuple(kernel_size, self.n, "kernel_size")
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    self.padding_mode = padding_mode
    bound = _bound(in_channels // groups * prod(self.kernel_size))
    self.weight = _uniform((out_channels, in_channels // groups, *self.kernel_size), bound)
    self.bias = _uniform((out_channels,), bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    if self.padding_mode != "zeros":  # pad by the mode first, then convolve without padding (as torch does)
      pads = _resolve_pads(self.padding, self.kernel_size, _tuple(self.dilation, self.n, "dilation"), self.stride)
      x = x.pad(tuple(v for b, a in reversed(pads) for v in (b, a)), mode=self.padding_mode)
      return x.conv2d(self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
    if self.n == 2 and not isinstance(self.padding, str) and not isinstance(x.device, tuple):
      # the hand-written backward kernels (teeny/kernels/conv.py); TEENY_CUSTOM_KERNELS=0 gives the plain graph
      from teeny.kernels import conv2d
      return conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
    return x.conv2d(self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

class Conv1d(_ConvNd):
  """1-d convolution over (N, C, L)."""
  n = 1

class Conv2d(_ConvNd):
  """2-d convolution over (N, C, H, W); padding may be an int, a tuple, 'same' or 'valid'."""
  n = 2

class Conv3d(_ConvNd):
  """3-d convolution over (N, C, D, H, W); padding may be an int, a tuple, 'same' or 'valid'."""
  n = 3

class _ConvTransposeNd:
  """Transposed convolution over the last n dims; weight (in_channels, out_channels/groups, *kernel_size) and torch's
  init (fan_in = weight.shape[1] * prod(kernel_size)). Calling with output_size= picks output_padding as torch does."""
  n = 2
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
               groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros"):
    name = type(self).__name__
    if groups <= 0 or in_channels % groups or out_channels % groups:
      raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible by "
                       f"groups ({groups})")
    if padding_mode != "zeros":
      raise ValueError(f"{name}: only padding_mode 'zeros' is supported (as torch), got {padding_mode!r}")
    self.kernel_size = _tuple(kernel_size, self.n, "kernel_size")
    self.stride, self.padding, self.output_padding = stride, padding, output_padding
    self.groups, self.dilation = groups, dilation
    bound = _bound(out_channels // groups * prod(self.kernel_size))  # torch's fan_in: weight.shape[1] * prod(k)
    self.weight = _uniform((in_channels, out_channels // groups, *self.kernel_size), bound)
    self.bias = _uniform((out_channels,), bound) if bias else None
  def _output_padding(self, x: Tensor, output_size) -> tuple[int, ...] | int:
    """torch's: output_size (spatial, or with the leading dims) -> the output_padding that gives it."""
    if output_size is None: return self.output_padding
    n, name = self.n, type(self).__name__
    lead = x.ndim - n
    size = [int(v) for v in output_size]
    if len(size) == lead + n: size = size[lead:]
    if len(size) != n:
      raise ValueError(f"{name}: for a {x.ndim}-d input, output_size must have {n} or {lead + n} elements, got "
                       f"{tuple(output_size)}")
    s_, p_, d_ = (_tuple(v, n, nm) for v, nm in ((self.stride, "stride"), (self.padding, "padding"),
                                                 (self.dilation, "dilation")))
    lo = [(int(i) - 1) * s - 2 * p + d * (k - 1) + 1
          for i, s, p, d, k in zip(x.shape[-n:], s_, p_, d_, self.kernel_size)]
    hi = [m + s - 1 for m, s in zip(lo, s_)]
    if any(not a <= o <= b for o, a, b in zip(size, lo, hi)):
      raise ValueError(f"{name}: requested an output size of {tuple(size)}, but valid sizes range from {tuple(lo)} to "
                       f"{tuple(hi)} (for an input of {tuple(x.shape[-n:])})")
    return tuple(o - m for o, m in zip(size, lo))
  def __call__(self, x: Tensor, output_size=None) -> Tensor:
    op = getattr(x, f"conv_transpose{self.n}d")
    return op(self.weight, self.bias, self.stride, self.padding, self._output_padding(x, output_size), self.groups,
              self.dilation)

class ConvTranspose1d(_ConvTransposeNd):
  """Transposed 1-d convolution over (N, C, L); weight (in_channels, out_channels/groups, k) like torch."""
  n = 1

class ConvTranspose2d(_ConvTransposeNd):
  """Transposed 2-d convolution; weight (in_channels, out_channels/groups, kh, kw) like torch."""
  n = 2

class ConvTranspose3d(_ConvTransposeNd):
  """Transposed 3-d convolution over (N, C, D, H, W); weight (in_channels, out_channels/groups, kd, kh, kw)."""
  n = 3

class BatchNorm:
  """Batch norm over dim 1 of (N, C, ...) inputs; running statistics are updated (lazily, via assign) while training.
  momentum=None keeps a cumulative average (each batch weighted 1/num_batches_tracked), as torch's."""
  def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
               track_running_stats: bool = True):
    if momentum is not None and not isinstance(momentum, (int, float)):
      raise TypeError(f"BatchNorm momentum must be a float or None, got {type(momentum).__name__}")
    self.eps, self.momentum, self.track_running_stats = eps, momentum, track_running_stats
    self.weight = _param(Tensor.ones(num_features)) if affine else None
    self.bias = _param(Tensor.zeros(num_features)) if affine else None
    if track_running_stats:
      # buffers of their own, from host memory (identical lazy constants realized together would share one)
      self.running_mean = Tensor(np.zeros(num_features, np.float32))
      self.running_var = Tensor(np.ones(num_features, np.float32))
      self.num_batches_tracked = Tensor(np.zeros((), np.int64))  # 0-d int64, as torch's
      self.running_mean.requires_grad = self.running_var.requires_grad = False  # statistics, not parameters
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2: raise ValueError(f"BatchNorm wants (N, C, ...) inputs, got shape {tuple(x.shape)}")
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if Tensor.training or not self.track_running_stats:
      n = x.numel() // x.shape[1] if isinstance(x.shape[1], int) and x.shape[1] > 0 else 0
      if isinstance(n, int) and n == 1:  # torch's check: the batch variance of one value is 0 (and its unbiased nan)
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(x.shape)}")
      axes = tuple(a for a in range(x.ndim) if a != 1)
      # float16/bfloat16 batches: statistics in float32 ((x - mean)**2 overflows float16 from 256 on)
      xs = x.cast(dtypes.float32) if x.dtype in (dtypes.float16, dtypes.bfloat16) else x
      mean = xs.mean(axes)
      y = xs - mean.detach().reshape(shape)  # d(var)/d(mean) is 0, so detaching keeps the graph smaller
      var = (y * y).mean(axes)
      if self.track_running_stats and Tensor.training:
        nbt = self.num_batches_tracked + 1
        # momentum=None: the cumulative average, weight 1/(batches seen) for this one
        m = self.momentum if self.momentum is not None else 1 / nbt.cast(dtypes.float32)
        self.running_mean.assign((1 - m) * self.running_mean + m * mean.detach())
        self.running_var.assign((1 - m) * self.running_var + m * (n / max(n - 1, 1)) * var.detach())
        self.num_batches_tracked.assign(nbt)
    else:
      mean, var = self.running_mean, self.running_var
    return x.batchnorm(self.weight, self.bias, mean, var.add(self.eps).rsqrt())

BatchNorm1d = BatchNorm2d = BatchNorm

class LayerNorm:
  """Normalise over the trailing `normalized_shape` dims, then scale and shift elementwise (F.layer_norm)."""
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    self.weight = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
    self.bias = _param(Tensor.zeros(*self.normalized_shape)) if elementwise_affine and bias else None
  def __call__(self, x: Tensor) -> Tensor:
    if tuple(x.shape[-len(self.normalized_shape):]) != self.normalized_shape:
      raise ValueError(f"LayerNorm{self.normalized_shape} got input of shape {tuple(x.shape)}")
    # F.layer_norm: the input's dtype comes back (float16 in, float16 out, as torch's)
    return x.layer_norm(self.normalized_shape, self.weight, self.bias, self.eps)

class RMSNorm:
  """x / sqrt(mean(x^2) + eps) * weight over the trailing dims (eps=None uses float32's machine epsilon, like torch)."""
  def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis = tuple(-1 - i for i in range(len(self.normalized_shape)))
    self.eps = eps if eps is not None else 1.1920928955078125e-07
    self.weight = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    xs = x.cast(dtypes.float32) if x.dtype in (dtypes.float16, dtypes.bfloat16) else x  # x*x overflows float16
    x = (xs * (xs * xs).mean(self.axis, keepdim=True).add(self.eps).rsqrt()).cast(x.dtype)
    return x * self.weight if self.weight is not None else x

class GroupNorm:
  """Normalise (N, C, ...) over groups of C/num_groups channels, then a per-channel affine (F.group_norm)."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    if num_channels % num_groups: raise ValueError(f"num_channels {num_channels} must divide by groups {num_groups}")
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = _param(Tensor.ones(num_channels)) if affine else None
    self.bias = _param(Tensor.zeros(num_channels)) if affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2 or x.shape[1] != self.num_channels:
      raise ValueError(f"GroupNorm({self.num_groups}, {self.num_channels}) got input of shape {tuple(x.shape)}")
    return x.group_norm(self.num_groups, self.weight, self.bias, self.eps)

class Embedding:
  """A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised N(0, 1) like torch. With
  `shard=devices` the table is split by rows over the devices (vocab-sharded: each holds num_embeddings / len(devices)
  rows); a lookup gathers each token from the device that owns it and gives every device the result, and the backward
  adds each device's own tokens into its own rows (teeny/kernels/embedding_sharded.py).

  padding_idx (torch's): that row starts as zeros and gets no gradient (its lookups still read it); negative counts
  from the end."""
  def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
               shard: tuple | list | None = None):
    if padding_idx is not None:
      if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"Embedding: padding_idx {padding_idx} must be within num_embeddings ({num_embeddings})")
      padding_idx %= num_embeddings
    self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
    w = Tensor.randn(num_embeddings, embedding_dim)
    if padding_idx is not None: w = (Tensor.arange(num_embeddings).reshape(-1, 1) == padding_idx).where(0.0, w)
    self.weight = _param(w)
    self.shard = None if shard is None else tuple(shard)
    if self.shard is not None: self.weight.shard_(self.shard, 0)
  def __call__(self, idx: Tensor) -> Tensor:
    if not isinstance(idx, Tensor): idx = Tensor(idx, dtype=dtypes.int32)
    if self.shard is not None or isinstance(self.weight.device, tuple):
      from teeny.kernels.embedding_sharded import sharded_embedding
      out = sharded_embedding(self.weight, idx)
    else:
      if not dtypes.is_int(idx.dtype): raise TypeError(f"Embedding ids must be an integer tensor, got {idx.dtype}")
      # gather forward, atomic scatter-add backward (plain graph when disabled); ids out of range raise IndexError there
      from teeny.kernels import embedding
      out = embedding(self.weight, idx)
    if self.padding_idx is None: return out
    # the padding row's lookups pass no gradient back: it gets only zeros
    keep = (idx != self.padding_idx).unsqueeze(-1)
    if keep.device != out.device: keep = keep.to(out.device)
    return keep.where(out, out.detach())

# ***** containers *****

class _Children:
  """Children live in the instance __dict__ under their names ("0", "1", ... or given ones), so get_state_dict walks
  them with torch's keys ("0.weight") and a named child is also an attribute (seq.conv), as torch's."""
  def _set(self, name, layer) -> None:
    name = str(name)
    if not name or "." in name:
      raise KeyError(f"{type(self).__name__}: child name {name!r} must be a non-empty string without '.'")
    if hasattr(type(self), name): raise KeyError(f"{type(self).__name__}: attribute {name!r} already exists")
    vars(self)[name] = layer
  def __len__(self) -> int: return len(vars(self))
  def __repr__(self) -> str:
    body = "".join(f"\n  ({k}): " + repr(m).replace("\n", "\n  ") for k, m in vars(self).items())
    return f"{type(self).__name__}({body}\n)" if body else f"{type(self).__name__}()"

class _Container(_Children):
  """A list of children named by position (Sequential and ModuleList)."""
  def _renumber(self, layers: list) -> None:
    vars(self).clear()
    for i, m in enumerate(layers): vars(self)[str(i)] = m
  def _index(self, idx: int) -> str:
    keys = list(vars(self))
    if not isinstance(idx, int): raise TypeError(f"{type(self).__name__} indices must be integers or slices, got "
                                                 f"{type(idx).__name__}")
    if not -len(keys) <= idx < len(keys): raise IndexError(f"index {idx} is out of range for {type(self).__name__} "
                                                            f"of length {len(keys)}")
    return keys[idx]
  def __iter__(self) -> Iterator: return iter(list(vars(self).values()))
  def __getitem__(self, idx):
    if isinstance(idx, slice): return type(self)(OrderedDict(list(vars(self).items())[idx]))
    return vars(self)[self._index(idx)]
  def __setitem__(self, idx: int, layer) -> None: vars(self)[self._index(idx)] = layer
  def __delitem__(self, idx) -> None:
    keys = list(vars(self))[idx] if isinstance(idx, slice) else [self._index(idx)]
    for k in keys: del vars(self)[k]
    self._renumber(list(vars(self).values()))  # torch renumbers what is left
  def append(self, layer):
    """Add `layer` at the end (named by its position); returns self."""
    self._set(str(len(self)), layer)
    return self
  def extend(self, layers):
    for m in list(layers): self.append(m)
    return self
  def insert(self, index: int, layer) -> None:
    layers = list(self)
    layers.insert(index, layer)
    self._renumber(layers)

class Sequential(_Container):
  """torch.nn.Sequential: calls its layers in order. Layers may be given as arguments (named "0", "1", ...) or as one
  OrderedDict of names to layers; any callable is a layer (a module, Tensor.relu, a lambda). Indexing, len, iteration,
  append/extend/insert and del as torch's; a slice is a Sequential keeping the layers' names."""
  def __init__(self, *layers):
    if len(layers) == 1 and isinstance(layers[0], dict):
      for name, m in layers[0].items(): self._add(name, m)
    else:
      for i, m in enumerate(layers): self._add(str(i), m)
  def _add(self, name, layer) -> None:
    if not callable(layer):
      raise TypeError(f"Sequential: layer {name!r} must be callable (a module or a function), got "
                      f"{type(layer).__name__}")
    self._set(name, layer)
  def append(self, layer):
    self._add(str(len(self)), layer)
    return self
  def __call__(self, x):
    for m in self: x = m(x)
    return x

class ModuleList(_Container):
  """torch.nn.ModuleList: a list of layers named "0", "1", ... (so get_state_dict gives "0.weight"); not callable."""
  def __init__(self, modules=None):
    if isinstance(modules, dict): modules = modules.values()  # (slicing builds one from an OrderedDict)
    if modules is not None: self.extend(modules)
  def __iadd__(self, modules): return self.extend(modules)
  def __add__(self, other) -> ModuleList: return ModuleList(list(self) + list(other))

class ModuleDict(_Children):
  """torch.nn.ModuleDict: layers by name (get_state_dict gives "name.weight"), in insertion order."""
  def __init__(self, modules=None):
    if modules is not None: self.update(modules)
  def __getitem__(self, key: str): return vars(self)[key]
  def __setitem__(self, key: str, layer) -> None:
    if key in vars(self): vars(self)[key] = layer
    else: self._set(key, layer)
  def __delitem__(self, key: str) -> None: del vars(self)[key]
  def __iter__(self) -> Iterator: return iter(list(vars(self)))
  def __contains__(self, key) -> bool: return key in vars(self)
  def keys(self): return list(vars(self).keys())
  def values(self): return list(vars(self).values())
  def items(self): return list(vars(self).items())
  def pop(self, key: str): return vars(self).pop(key)
  def clear(self) -> None: vars(self).clear()
  def update(self, modules) -> None:
    for k, m in (modules.items() if isinstance(modules, dict) else modules): self[k] = m

class Identity:
  """Returns its input; any constructor arguments are ignored (as torch's)."""
  def __init__(self, *args, **kwargs): pass
  def __call__(self, x: Tensor) -> Tensor: return x

class Flatten:
  """x.flatten(start_dim, end_dim), torch's defaults start_dim=1 (keeps the batch dim), end_dim=-1."""
  def __init__(self, start_dim: int = 1, end_dim: int = -1): self.start_dim, self.end_dim = start_dim, end_dim
  def __call__(self, x: Tensor) -> Tensor: return x.flatten(self.start_dim, self.end_dim)   # (which checks the dims)

class Unflatten:
  """x.unflatten(dim, unflattened_size): dim `dim` becomes the dims `unflattened_size` (one may be -1)."""
  def __init__(self, dim: int, unflattened_size):
    if not isinstance(unflattened_size, (list, tuple)) or not all(isinstance(v, int) for v in unflattened_size):
      raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
    self.dim, self.unflattened_size = dim, tuple(unflattened_size)
  def __call__(self, x: Tensor) -> Tensor: return x.unflatten(self.dim, self.unflattened_size)

# ***** dropout *****

def _check_p(p, name: str) -> float:
  if isinstance(p, bool) or not isinstance(p, (int, float)):
    raise TypeError(f"{name}: dropout probability must be a float, got {type(p).__name__}")
  if not 0.0 <= p <= 1.0: raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")
  return float(p)

class Dropout:
  """Zeroes each element with probability p and scales the rest by 1/(1-p) while Tensor.training (`with
  Tensor.train():`), else returns x. inplace is accepted for torch's signature; the result is a new tensor."""
  def __init__(self, p: float = 0.5, inplace: bool = False): self.p, self.inplace = _check_p(p, "Dropout"), inplace
  def __call__(self, x: Tensor) -> Tensor: return x.dropout(self.p)

class _DropoutNd:
  """Channel-wise dropout: whole channels (dim 1 of (N, C, *spatial), dim 0 of unbatched (C, *spatial)) are zeroed
  with probability p, the rest scaled by 1/(1-p), while Tensor.training."""
  n = 1
  def __init__(self, p: float = 0.5, inplace: bool = False):
    self.p, self.inplace = _check_p(p, type(self).__name__), inplace
  def __call__(self, x: Tensor) -> Tensor:
    n, name = self.n, type(self).__name__
    if n == 1 and x.ndim not in (2, 3):
      raise RuntimeError(f"Dropout1d: expected a 2-d (C, L) or 3-d (N, C, L) input, got a {x.ndim}-d input of shape "
                         f"{tuple(x.shape)}")
    if x.ndim < 2: raise RuntimeError(f"{name}: expected a (N, C, *spatial) input, got shape {tuple(x.shape)}")
    if n > 1 and x.ndim not in (n + 1, n + 2):
      warnings.warn(f"{name}: got a {x.ndim}-d input; channel-wise dropout wants {n + 1}-d or {n + 2}-d input "
                    "(torch deprecates other ranks)", stacklevel=2)
    if n == 2 and x.ndim == 3:
      warnings.warn("Dropout2d: got a 3-d input; as torch, it is taken as (N, C, L) (1-d channel-wise dropout); use "
                    "Dropout1d for that", stacklevel=2)
    batched = x.ndim != n + 1 or n == 2  # torch's Dropout2d treats every input as batched
    if not Tensor.training or self.p == 0: return x
    if self.p == 1: return x * 0
    lead = 2 if batched else 1
    keep = Tensor.rand(*x.shape[:lead], *[1] * (x.ndim - lead), device=x.device) >= self.p
    return keep.where(x, 0) * (1.0 / (1.0 - self.p))

class Dropout1d(_DropoutNd):
  """Channel-wise dropout over (N, C, L) or (C, L)."""
  n = 1

class Dropout2d(_DropoutNd):
  """Channel-wise dropout over (N, C, H, W) (a 3-d input is (N, C, L), as torch's)."""
  n = 2

class Dropout3d(_DropoutNd):
  """Channel-wise dropout over (N, C, D, H, W) or (C, D, H, W)."""
  n = 3

# ***** activations *****
# `inplace` is accepted where torch has it (ReLU(inplace=True) in model code); the result is always a new tensor.

class ReLU:
  """max(x, 0)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.relu()

class ReLU6:
  """min(max(x, 0), 6)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.relu6()

class LeakyReLU:
  """x for x > 0, else negative_slope * x."""
  def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
    self.negative_slope, self.inplace = negative_slope, inplace
  def __call__(self, x: Tensor) -> Tensor: return x.leaky_relu(self.negative_slope)

def rrelu(x: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
  """torch's F.rrelu as a function (Tensor.rrelu)."""
  return x.rrelu(lower, upper, training, inplace)

class RReLU:
  """Randomized leaky ReLU (F.rrelu): while Tensor.training (`with Tensor.train():`) each non-positive element is
  multiplied by its own slope drawn uniformly from [lower, upper); else by (lower + upper) / 2."""
  def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
    self.lower, self.upper, self.inplace = lower, upper, inplace   # (bounds checked at the call, as torch)
  def __call__(self, x: Tensor) -> Tensor: return rrelu(x, self.lower, self.upper, Tensor.training, self.inplace)

class PReLU:
  """x for x > 0, else weight * x, with a learnt weight: one shared value (num_parameters=1) or one per channel (dim 1,
  or dim 0 of a 1-d input), initialised to `init`."""
  def __init__(self, num_parameters: int = 1, init: float = 0.25):
    self.num_parameters = num_parameters
    self.weight = _param(Tensor(np.full(num_parameters, init, np.float32)))
  def __call__(self, x: Tensor) -> Tensor:
    w = self.weight
    if self.num_parameters > 1:
      cdim = 1 if x.ndim >= 2 else 0
      if x.ndim == 0 or x.shape[cdim] != self.num_parameters:
        raise ValueError(f"PReLU({self.num_parameters}): input of shape {tuple(x.shape)} needs {self.num_parameters} "
                         f"channels on dim {cdim}")
      w = w.reshape(-1, *[1] * (x.ndim - cdim - 1))
    return (x > 0).where(x, w.cast(x.dtype) * x)

class GELU:
  """x * Phi(x); approximate="tanh" uses the tanh approximation, as torch's."""
  def __init__(self, approximate: str = "none"):
    if approximate not in ("none", "tanh"):
      raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
    self.approximate = approximate
  def __call__(self, x: Tensor) -> Tensor: return x.gelu(self.approximate)

class SiLU:
  """x * sigmoid(x)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.silu()

class Mish:
  """x * tanh(softplus(x))."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.mish()

class Sigmoid:
  """1 / (1 + exp(-x))."""
  def __call__(self, x: Tensor) -> Tensor: return x.sigmoid()

class Tanh:
  """tanh(x)."""
  def __call__(self, x: Tensor) -> Tensor: return x.tanh()

class LogSigmoid:
  """log(sigmoid(x))."""
  def __call__(self, x: Tensor) -> Tensor: return x.logsigmoid()

class Softsign:
  """x / (1 + |x|)."""
  def __call__(self, x: Tensor) -> Tensor: return x.softsign()

class Tanhshrink:
  """x - tanh(x)."""
  def __call__(self, x: Tensor) -> Tensor: return x - x.tanh()

class Softplus:
  """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (torch's switch to the linear part)."""
  def __init__(self, beta: float = 1.0, threshold: float = 20.0): self.beta, self.threshold = beta, threshold
  def __call__(self, x: Tensor) -> Tensor:
    y = x.softplus(self.beta)
    return (x * self.beta > self.threshold).where(x.cast(y.dtype), y)

class ELU:
  """x for x > 0, else alpha * (exp(x) - 1)."""
  def __init__(self, alpha: float = 1.0, inplace: bool = False): self.alpha, self.inplace = alpha, inplace
  def __call__(self, x: Tensor) -> Tensor: return x.elu(self.alpha)

class CELU:
  """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha 0 raises, as torch's."""
  def __init__(self, alpha: float = 1.0, inplace: bool = False):
    if alpha == 0: raise ValueError("CELU: alpha cannot be 0 (it divides x)")
    self.alpha, self.inplace = alpha, inplace
  def __call__(self, x: Tensor) -> Tensor: return x.celu(self.alpha)

class SELU:
  """scale * elu(x, alpha) with torch's fixed constants."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.selu()

class Hardtanh:
  """x clipped to [min_val, max_val] (gradient 0 at the bounds, as torch's)."""
  def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    if min_val > max_val: raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
  def __call__(self, x: Tensor) -> Tensor:
    lo, hi = self.min_val, self.max_val
    if not dtypes.is_float(x.dtype) and float(lo).is_integer() and float(hi).is_integer(): lo, hi = int(lo), int(hi)
    return x.hardtanh(lo, hi)  # (integral bounds on an integer input keep its dtype, as torch's)

class Hardsigmoid:
  """relu6(x + 3) / 6."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.hardsigmoid()

class Hardswish:
  """x * relu6(x + 3) / 6."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return x.hardswish()

class Threshold:
  """x where x > threshold, else value."""
  def __init__(self, threshold: float, value: float, inplace: bool = False):
    self.threshold, self.value, self.inplace = threshold, value, inplace
  def __call__(self, x: Tensor) -> Tensor: return (x > self.threshold).where(x, self.value)

class Hardshrink:
  """x where |x| > lambd, else 0."""
  def __init__(self, lambd: float = 0.5): self.lambd = lambd
  def __call__(self, x: Tensor) -> Tensor: return ((x > self.lambd) | (x < -self.lambd)).where(x, 0)

class Softshrink:
  """x - lambd above lambd, x + lambd below -lambd, else 0; lambd must be >= 0 (as torch's)."""
  def __init__(self, lambd: float = 0.5):
    if lambd < 0: raise ValueError(f"Softshrink: lambd must be greater or equal to 0, got {lambd}")
    self.lambd = lambd
  def __call__(self, x: Tensor) -> Tensor:
    return (x > self.lambd).where(x - self.lambd, (x < -self.lambd).where(x + self.lambd, 0))

class GLU:
  """a * sigmoid(b) for the two halves a, b of dim `dim` (its size must be even)."""
  def __init__(self, dim: int = -1): self.dim = dim
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim == 0: raise RuntimeError("GLU: does not support a 0-d input")
    d = self.dim + x.ndim if self.dim < 0 else self.dim
    if not 0 <= d < x.ndim: raise IndexError(f"GLU: dim {self.dim} is out of range for a {x.ndim}-d input")
    if x.shape[d] % 2:
      raise RuntimeError(f"GLU: halving dimension must be even, but dimension {self.dim} is size {x.shape[d]}")
    h = x.shape[d] // 2
    a, b = x.shrink(tuple((0, h) if i == d else None for i in range(x.ndim))), \
      x.shrink(tuple((h, 2 * h) if i == d else None for i in range(x.ndim)))
    return a * b.sigmoid()

def _softmax_dim(ndim: int, dim: int | None, name: str) -> int:
  if dim is not None: return dim
  warnings.warn(f"{name}: implicit dimension choice is deprecated (as in torch); pass dim", stacklevel=3)
  return 0 if ndim in (0, 1, 3) else 1  # torch's legacy choice

class Softmax:
  """exp(x) / sum(exp(x)) along dim (dim=None: torch's legacy choice, 0 for 0-, 1- and 3-d inputs, else 1)."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def __call__(self, x: Tensor) -> Tensor: return x.softmax(_softmax_dim(x.ndim, self.dim, "Softmax"))

class LogSoftmax:
  """log(softmax(x)) along dim, computed stably."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def __call__(self, x: Tensor) -> Tensor: return x.log_softmax(_softmax_dim(x.ndim, self.dim, "LogSoftmax"))

class Softmin:
  """softmax(-x) along dim."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def __call__(self, x: Tensor) -> Tensor: return x.softmin(_softmax_dim(x.ndim, self.dim, "Softmin"))

# ***** pooling *****

class _MaxPoolNd:
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
               ceil_mode: bool = False):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.dilation, self.return_indices, self.ceil_mode = padding, dilation, return_indices, ceil_mode
  def __call__(self, x: Tensor):
    return getattr(x, f"max_pool{self.n}d")(self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                                            self.return_indices)

class MaxPool1d(_MaxPoolNd):
  """Max over sliding windows of the last dim (return_indices: also the int64 argmax positions)."""
  n = 1

class MaxPool2d(_MaxPoolNd):
  """Max over sliding windows of the last two dims (return_indices: also int64 positions flat over H*W)."""
  n = 2

class MaxPool3d(_MaxPoolNd):
  """Max over sliding windows of the last three dims (return_indices: also int64 positions flat over D*H*W)."""
  n = 3

class _MaxUnpoolNd:
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding = padding
  def __call__(self, x: Tensor, indices: Tensor, output_size=None) -> Tensor:
    return getattr(x, f"max_unpool{self.n}d")(indices, self.kernel_size, self.stride, self.padding, output_size)

class MaxUnpool1d(_MaxUnpoolNd):
  """Inverse of MaxPool1d(return_indices=True): zeros with the values written at their indices."""
  n = 1

class MaxUnpool2d(_MaxUnpoolNd):
  """Inverse of MaxPool2d(return_indices=True): zeros with the values written at their indices."""
  n = 2

class MaxUnpool3d(_MaxUnpoolNd):
  """Inverse of MaxPool3d(return_indices=True): zeros with the values written at their indices."""
  n = 3

class AvgPool1d:
  """Mean over sliding windows of the last dim."""
  def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
  def __call__(self, x: Tensor) -> Tensor:
    return x.avg_pool1d(self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

class _AvgPoolNd:
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
    self.divisor_override = divisor_override
  def __call__(self, x: Tensor) -> Tensor:
    return getattr(x, f"avg_pool{self.n}d")(self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                            self.count_include_pad, self.divisor_override)

class AvgPool2d(_AvgPoolNd):
  """Mean over sliding windows of the last two dims (divisor_override: divide every window sum by it instead)."""
  n = 2

class AvgPool3d(_AvgPoolNd):
  """Mean over sliding windows of the last three dims (divisor_override: divide every window sum by it instead)."""
  n = 3

class _AdaptivePoolNd:
  n, kind = 2, "avg"
  def __init__(self, output_size, return_indices: bool = False):
    self.output_size, self.return_indices = output_size, return_indices
  def __call__(self, x: Tensor):
    fn = getattr(x, f"adaptive_{self.kind}_pool{self.n}d")
    return fn(self.output_size, self.return_indices) if self.kind == "max" else fn(self.output_size)

class AdaptiveAvgPool1d(_AdaptivePoolNd):
  """Mean pooling of the last dim to output_size bins (torch's bin edges)."""
  n, kind = 1, "avg"
  def __init__(self, output_size): super().__init__(output_size)

class AdaptiveAvgPool2d(_AdaptivePoolNd):
  """Mean pooling of the last two dims to output_size (an int, or a pair whose None entries keep the input's size)."""
  n, kind = 2, "avg"
  def __init__(self, output_size): super().__init__(output_size)

class AdaptiveAvgPool3d(_AdaptivePoolNd):
  """Mean pooling of the last three dims to output_size (None entries keep the input's size)."""
  n, kind = 3, "avg"
  def __init__(self, output_size): super().__init__(output_size)

class AdaptiveMaxPool1d(_AdaptivePoolNd):
  """Max pooling of the last dim to output_size bins (return_indices: also the int64 argmax positions)."""
  n, kind = 1, "max"

class AdaptiveMaxPool2d(_AdaptivePoolNd):
  """Max pooling of the last two dims to output_size (return_indices: also int64 positions flat over H*W)."""
  n, kind = 2, "max"

class AdaptiveMaxPool3d(_AdaptivePoolNd):
  """Max pooling of the last three dims to output_size (return_indices: also int64 positions flat over D*H*W)."""
  n, kind = 3, "max"

# ***** instance norm *****

class _InstanceNorm:
  """Normalise each (sample, channel) of (N, C, *spatial) (or unbatched (C, *spatial)) over its spatial dims; affine:
  a learnt per-channel weight and bias; track_running_stats: running mean/var buffers (updated while training, used in
  eval mode), as torch's."""
  n = 2
  def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
               track_running_stats: bool = False):
    self.num_features, self.eps, self.momentum = num_features, eps, momentum
    self.affine, self.track_running_stats = affine, track_running_stats
    self.weight = _param(Tensor.ones(num_features)) if affine else None
    self.bias = _param(Tensor.zeros(num_features)) if affine else None
    if track_running_stats:
      self.running_mean = Tensor(np.zeros(num_features, np.float32))
      self.running_var = Tensor(np.ones(num_features, np.float32))
      self.num_batches_tracked = Tensor(np.zeros((), np.int64))  # torch's 0-d buffer (instance norm never counts)
  def __call__(self, x: Tensor) -> Tensor:
    n, name = self.n, type(self).__name__
    if x.ndim not in (n + 1, n + 2):
      raise ValueError(f"{name}: expected a {n + 1}-d (unbatched) or {n + 2}-d input, got a {x.ndim}-d input of shape "
                       f"{tuple(x.shape)}")
    fdim = x.ndim - n - 1
    if x.shape[fdim] != self.num_features:
      if self.affine or self.track_running_stats:
        raise ValueError(f"{name}: expected input's size at dim={fdim} to match num_features ({self.num_features}), "
                         f"but got: {x.shape[fdim]}.")
      warnings.warn(f"{name}: input's size at dim={fdim} does not match num_features ({self.num_features}); "
                    "num_features is not used because affine=False", stacklevel=2)
    unbatched = x.ndim == n + 1
    if unbatched: x = x.unsqueeze(0)
    rm, rv = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
    use_input_stats = Tensor.training or not self.track_running_stats
    y = x.instance_norm(rm, rv, self.weight, self.bias, use_input_stats,
                        self.momentum if self.momentum is not None else 0.0, self.eps)
    return y.squeeze(0) if unbatched else y

class InstanceNorm1d(_InstanceNorm):
  """Instance norm over (N, C, L) or (C, L)."""
  n = 1

class InstanceNorm2d(_InstanceNorm):
  """Instance norm over (N, C, H, W) or (C, H, W)."""
  n = 2

class InstanceNorm3d(_InstanceNorm):
  """Instance norm over (N, C, D, H, W) or (C, D, H, W)."""
  n = 3

# ***** resampling *****

class Upsample:
  """x.interpolate(size, scale_factor, mode, align_corners) over the spatial dims; recompute_scale_factor=True turns
  scale_factor into the output size first (floor(in * scale)) and interpolates to that size, as torch's."""
  def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
               recompute_scale_factor: bool | None = None):
    self.size, self.mode, self.align_corners = size, mode, align_corners
    self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else \
      tuple(float(f) for f in scale_factor) if scale_factor is not None else None
    self.recompute_scale_factor = recompute_scale_factor
  def __call__(self, x: Tensor) -> Tensor:
    size, scale = self.size, self.scale_factor
    if self.recompute_scale_factor and scale is not None and size is None:
      fs = (scale,) * (x.ndim - 2) if isinstance(scale, float) else scale
      size, scale = tuple(int(math.floor(float(i) * f)) for i, f in zip(x.shape[2:], fs)), None
    return x.interpolate(size, scale, self.mode, self.align_corners)

class UpsamplingNearest2d(Upsample):
  """Upsample(mode='nearest') for (N, C, H, W)."""
  def __init__(self, size=None, scale_factor=None): super().__init__(size, scale_factor, "nearest")

class UpsamplingBilinear2d(Upsample):
  """Upsample(mode='bilinear', align_corners=True) for (N, C, H, W), as torch's."""
  def __init__(self, size=None, scale_factor=None): super().__init__(size, scale_factor, "bilinear", True)

class PixelShuffle:
  """(N, C*r*r, H, W) -> (N, C, H*r, W*r)."""
  def __init__(self, upscale_factor: int): self.upscale_factor = upscale_factor
  def __call__(self, x: Tensor) -> Tensor: return x.pixel_shuffle(self.upscale_factor)

class PixelUnshuffle:
  """(N, C, H*r, W*r) -> (N, C*r*r, H, W), the inverse of PixelShuffle."""
  def __init__(self, downscale_factor: int): self.downscale_factor = downscale_factor
  def __call__(self, x: Tensor) -> Tensor: return x.pixel_unshuffle(self.downscale_factor)

# ***** losses *****
# Called as loss(input, target); `weight` / `pos_weight` tensors are kept as attributes (torch's buffers, so they are
# in get_state_dict under the same names).

class CrossEntropyLoss:
  """F.cross_entropy on logits: class-index or probability targets, per-class weight, ignore_index, label smoothing."""
  def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
               label_smoothing: float = 0.0):
    self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
    self.label_smoothing = label_smoothing
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.cross_entropy(target, reduction=self.reduction, label_smoothing=self.label_smoothing,
                               ignore_index=self.ignore_index, weight=self.weight)

class NLLLoss:
  """F.nll_loss on log-probabilities (classes on dim 1, or dim 0 of a 1-d input)."""
  def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"):
    self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.nll_loss(target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)

class MSELoss:
  """Mean (or sum, or none) of (input - target)**2."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor: return input.mse_loss(target, self.reduction)

class L1Loss:
  """Mean (or sum, or none) of |input - target|."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor: return input.l1_loss(target, self.reduction)

class SmoothL1Loss:
  """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
  def __init__(self, reduction: str = "mean", beta: float = 1.0): self.reduction, self.beta = reduction, beta
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.smooth_l1_loss(target, self.reduction, self.beta)

class HuberLoss:
  """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)."""
  def __init__(self, reduction: str = "mean", delta: float = 1.0): self.reduction, self.delta = reduction, delta
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.huber_loss(target, self.reduction, self.delta)

class KLDivLoss:
  """F.kl_div: input holds log-probabilities; target probabilities (log-probabilities with log_target=True)."""
  def __init__(self, reduction: str = "mean", log_target: bool = False):
    self.reduction, self.log_target = reduction, log_target
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.kl_div(target, self.reduction, self.log_target)

class BCELoss:
  """F.binary_cross_entropy on probabilities, optionally weighted per element (weight broadcasts to the input)."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean"):
    self.weight, self.reduction = weight, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.binary_cross_entropy(target, self.weight, self.reduction)

class BCEWithLogitsLoss:
  """F.binary_cross_entropy_with_logits: sigmoid and BCE in one stable expression; pos_weight scales the positive
  term (one per class, broadcast along the last dim)."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean", pos_weight: Tensor | None = None):
    self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.binary_cross_entropy_with_logits(target, self.weight, self.reduction, self.pos_weight)

class SoftMarginLoss:
  """F.soft_margin_loss: log(1 + exp(-target * input)), in the input's dtype."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor: return input.soft_margin_loss(target, self.reduction)

class HingeEmbeddingLoss:
  """F.hinge_embedding_loss: input where target == 1, max(0, margin - input) where target == -1."""
  def __init__(self, margin: float = 1.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.hinge_embedding_loss(target, self.margin, self.reduction)

class PoissonNLLLoss:
  """F.poisson_nll_loss: exp(input) - target * input (log_input), else input - target * log(input + eps); full adds
  Stirling's term where target > 1."""
  def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-8, reduction: str = "mean"):
    self.log_input, self.full, self.eps, self.reduction = log_input, full, eps, reduction
  def __call__(self, log_input: Tensor, target: Tensor) -> Tensor:
    return log_input.poisson_nll_loss(target, self.log_input, self.full, self.eps, self.reduction)

class GaussianNLLLoss:
  """F.gaussian_nll_loss: 0.5 (log(var) + (input - target)**2 / var), var clamped below at eps (in value only); called
  as loss(input, target, var). Keyword-only arguments, as torch's."""
  def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    self.full, self.eps, self.reduction = full, eps, reduction
  def __call__(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
    return input.gaussian_nll_loss(target, var, self.full, self.eps, self.reduction)

class MultiLabelSoftMarginLoss:
  """F.multilabel_soft_margin_loss: the per-class logistic loss, times weight (one per class, broadcast along the last
  dim), averaged over the classes."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean"):
    self.weight, self.reduction = weight, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return input.multilabel_soft_margin_loss(target, self.weight, self.reduction)

class MarginRankingLoss:
  """F.margin_ranking_loss: max(0, -target * (input1 - input2) + margin); called as loss(input1, input2, target)."""
  def __init__(self, margin: float = 0.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
    return input1.margin_ranking_loss(input2, target, self.margin, self.reduction)

class CosineEmbeddingLoss:
  """F.cosine_embedding_loss: 1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1;
  called as loss(input1, input2, target)."""
  def __init__(self, margin: float = 0.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
    return input1.cosine_embedding_loss(input2, target, self.margin, self.reduction)

def _check_margin(margin: float, name: str) -> float:
  if not margin > 0: raise ValueError(f"{name}: expected margin to be greater than 0, got {margin} instead")
  return margin

class TripletMarginLoss:
  """F.triplet_margin_loss: max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-norm distance;
  swap takes min(d(anchor, negative), d(positive, negative)). margin must be > 0 (checked here, as torch's)."""
  def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
               reduction: str = "mean"):
    self.margin, self.p, self.eps = _check_margin(margin, "TripletMarginLoss"), p, eps
    self.swap, self.reduction = swap, reduction
  def __call__(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
    return anchor.triplet_margin_loss(positive, negative, self.margin, self.p, self.eps, self.swap, self.reduction)

class TripletMarginWithDistanceLoss:
  """F.triplet_margin_with_distance_loss: TripletMarginLoss with any distance_function(x1, x2) -> Tensor (default
  pairwise_distance); keyword-only arguments and margin > 0, as torch's."""
  def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
    if distance_function is not None and not callable(distance_function):
      raise TypeError(f"TripletMarginWithDistanceLoss: distance_function must be callable (x1, x2) -> Tensor, got "
                      f"{type(distance_function).__name__}")
    self.distance_function = distance_function
    self.margin, self.swap = _check_margin(margin, "TripletMarginWithDistanceLoss"), swap
    self.reduction = reduction
  def __call__(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
    name = "TripletMarginWithDistanceLoss"
    _check_reduction(self.reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
      raise RuntimeError(f"{name}: the anchor, positive, and negative tensors are expected to have the same number of "
                         f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                         f"{negative.ndim}D inputs; reshape them to match")
    dist = self.distance_function if self.distance_function is not None else Tensor.pairwise_distance
    dpos, dneg = dist(anchor, positive), dist(anchor, negative)
    if self.swap: dneg = dneg.minimum(dist(positive, negative))
    return _reduce(_clamp_min0(self.margin + dpos - dneg), self.reduction)  # (torch's clamp_min gradient)

class CosineSimilarity:
  """x1 . x2 / max(|x1| |x2|, eps) along dim."""
  def __init__(self, dim: int = 1, eps: float = 1e-8): self.dim, self.eps = dim, eps
  def __call__(self, x1: Tensor, x2: Tensor) -> Tensor: return x1.cosine_similarity(x2, self.dim, self.eps)

class PairwiseDistance:
  """|x1 - x2 + eps|_p along the last dim."""
  def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    self.norm, self.eps, self.keepdim = p, eps, keepdim
  def __call__(self, x1: Tensor, x2: Tensor) -> Tensor:
    return x1.pairwise_distance(x2, self.norm, self.eps, self.keepdim)
