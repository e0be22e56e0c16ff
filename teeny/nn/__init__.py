"""Layers as plain classes with `__call__`; parameters are Tensors with requires_grad=True, initialised like PyTorch."""
from __future__ import annotations
import math
from typing import Sequence, cast
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes
from teeny.helpers import prod
from teeny.tensor_nn import _resolve_pads, _tuple
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

class ConvTranspose2d:
  """Transposed 2-d convolution; weight (in_channels, out_channels/groups, kh, kw) like torch."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
               groups: int = 1, bias: bool = True, dilation=1):
    self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
    self.stride, self.padding, self.output_padding = stride, padding, output_padding
    self.groups, self.dilation = groups, dilation
    bound = _bound(out_channels // groups * prod(self.kernel_size))  # torch's fan_in: weight.shape[1] * prod(k)
    self.weight = _uniform((in_channels, out_channels // groups, *self.kernel_size), bound)
    self.bias = _uniform((out_channels,), bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups,
                              self.dilation)

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
      self.num_batches_tracked = Tensor(np.zeros(1, np.int64))
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
  """Normalise over the trailing `normalized_shape` dims, then scale and shift elementwise."""
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    self.weight = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
    self.bias = _param(Tensor.zeros(*self.normalized_shape)) if elementwise_affine and bias else None
  def __call__(self, x: Tensor) -> Tensor:
    if tuple(x.shape[-len(self.normalized_shape):]) != self.normalized_shape:
      raise ValueError(f"LayerNorm{self.normalized_shape} got input of shape {tuple(x.shape)}")
    x = x.layernorm(self.axis, self.eps)
    if self.weight is not None: x = x * self.weight
    return x + self.bias if self.bias is not None else x

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
  """Normalise (N, C, ...) over groups of C/num_groups channels, then a per-channel affine."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    if num_channels % num_groups: raise ValueError(f"num_channels {num_channels} must divide by groups {num_groups}")
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = _param(Tensor.ones(num_channels)) if affine else None
    self.bias = _param(Tensor.zeros(num_channels)) if affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2 or x.shape[1] != self.num_channels:
      raise ValueError(f"GroupNorm({self.num_groups}, {self.num_channels}) got input of shape {tuple(x.shape)}")
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(-1, self.eps).reshape(x.shape)
    if self.weight is None: return x
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return x * self.weight.reshape(shape) + cast(Tensor, self.bias).reshape(shape)  # affine: bias is set with weight

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
