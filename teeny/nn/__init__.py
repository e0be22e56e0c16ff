"""Layers with `__call__`; parameters are Tensors with requires_grad=True, initialised like PyTorch. The older layers
are plain classes; nn.Module is torch's base class for subclassing (it takes plain layers as children), and the newer
layers (padding, Bilinear, EmbeddingBag, Fold/Unfold...) subclass it."""
from __future__ import annotations
import types
import warnings
from collections import OrderedDict
from typing import Iterator
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes
from teeny.helpers import prod
from teeny.tensor_nn import _resolve_pads, _tuple
from teeny.nn import optim, state, datasets, functional, utils, init as _init  # noqa: F401  (sets nn.init too)
from teeny.nn import functional as _F   # the layers' math: each forward calls its F function
from teeny.nn.params import _bound, _is_param, _mark_param, _param, _uniform
from teeny.nn.tree import (_DTYPE_NAMES, _IncompatibleKeys, _Tree, _apply_plain, _as_tensor, _children_of, _repr_of,  # noqa: F401
                           _is_child, _move, _named_modules, _own_tensors, _plain_children)
from teeny.nn.layers import Linear, LayerNorm   # noqa: F401  (nn.Linear, nn.LayerNorm)


# ***** Module, Parameter *****
# A torch-style base class. What it registers lives where teeny's one state mechanism (nn.state.get_state_dict, which
# walks an object's attributes) finds exactly torch's state_dict() keys: parameters, then persistent buffers, then
# children, in the instance __dict__ in that order; everything else a Module holds that could hold tensors (plain
# tensors, non-persistent buffers, lists, optimizers...) is kept in a slotted record the walk does not enter.

class _ParameterMeta(type):
  def __instancecheck__(cls, obj) -> bool: return isinstance(obj, Tensor) and _is_param(obj)

class Parameter(metaclass=_ParameterMeta):
  """torch.nn.Parameter(data=None, requires_grad=True): a trainable teeny Tensor (a realized copy of `data`, or an
  empty (0,) float tensor), registered as a parameter when assigned to a Module attribute. It returns a plain Tensor;
  isinstance(t, nn.Parameter) is True for it (and for the parameters teeny's layers make). Unlike torch's, it copies
  data rather than sharing its storage."""
  def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:  # type: ignore[misc]
    if data is None: data = Tensor.empty(0)
    if not isinstance(data, Tensor):
      raise TypeError(f"Parameter: data must be a teeny Tensor, got {type(data).__name__}; wrap it, e.g. "
                      "nn.Parameter(Tensor(array))")
    t = data.detach().clone().realize()
    t.requires_grad = bool(requires_grad)   # (RuntimeError for an integer tensor that would require grad, as torch)
    return _mark_param(t)

_SAFE = (str, bytes, int, float, bool, complex, type(None), type, types.ModuleType, types.FunctionType,
         types.MethodType, types.BuiltinFunctionType)

class _Record:
  """A Module's bookkeeping, invisible to get_state_dict (slots, no __dict__): which attribute names are parameters,
  buffers (and which of those are not persistent) and children, and the attributes kept out of the state dict."""
  __slots__ = ("params", "buffers", "nonpersistent", "children", "hidden")
  def __init__(self):
    self.params: list[str] = []
    self.buffers: list[str] = []
    self.nonpersistent: set[str] = set()
    self.children: list[str] = []
    self.hidden: dict = {}

def _inplace(m, sep: str = ", ") -> str: return f"{sep}inplace=True" if m.inplace else ""

class Module(_Tree):
  """torch.nn.Module: subclass it, call super().__init__() first, assign parameters (nn.Parameter, or any leaf tensor
  that requires grad), buffers (register_buffer) and submodules (Modules or teeny's plain layers) as attributes, and
  define forward; calling the module runs forward. parameters()/named_parameters()/state_dict() give torch's names and
  order. A plain tensor attribute (neither parameter nor registered buffer) is not in the state dict, as torch's.

  Training mode: teeny's is one flag per thread, Tensor.training, read by every layer (Dropout, BatchNorm...).
  module.train(mode)/eval() set that flag (so they switch every layer of the thread, not only this module's), and
  module.training reads it. A new Module does not switch training on (torch's modules start in training mode: call
  net.train() before training)."""
  def __init__(self, *args, **kwargs):
    if args or kwargs:
      raise TypeError(f"{type(self).__name__}.__init__() takes no arguments beyond self, got {args} {kwargs}")
    object.__setattr__(self, "_rec", _Record())
  @property
  def _r(self) -> _Record:
    rec = vars(self).get("_rec")
    if rec is None:
      raise AttributeError(f"{type(self).__name__}: call super().__init__() at the start of __init__ (Module's "
                           "bookkeeping is missing)")
    return rec

  # ---- attributes
  def __setattr__(self, name: str, value) -> None:
    d = vars(self)
    rec = d.get("_rec")
    if rec is None:
      if _is_child(value) or _is_param(value):
        raise AttributeError(f"cannot assign {'module' if _is_child(value) else 'parameter'} before "
                             "Module.__init__() call: call super().__init__() first")
      object.__setattr__(self, name, value)
      return
    if isinstance(getattr(type(self), name, None), property):
      object.__setattr__(self, name, value)   # (training and other properties)
      return
    param = isinstance(value, Tensor) and (_is_param(value) or (bool(value.requires_grad) and value.is_leaf))
    if name in rec.params:
      if value is not None and not param:
        raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' (nn.Parameter, a leaf tensor "
                        "that requires grad, or None expected)")
      d[name] = value
    elif name in rec.buffers:
      if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
      if name in rec.nonpersistent: rec.hidden[name] = value
      else: d[name] = value
    elif name in rec.children:
      if value is not None and not _is_child(value):
        raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' (a module or None "
                        "expected)")
      d[name] = value
    else:
      d.pop(name, None)
      rec.hidden.pop(name, None)
      if param: self.register_parameter(name, value)
      elif _is_child(value): self.add_module(name, value)
      elif isinstance(value, _SAFE): d[name] = value
      else: rec.hidden[name] = value   # (kept out of the state dict: a plain tensor, a list, an optimizer...)
      return
  def __getattr__(self, name: str):
    rec = vars(self).get("_rec")
    if rec is not None and name in rec.hidden: return rec.hidden[name]
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
  def __delattr__(self, name: str) -> None:
    rec, d = self._r, vars(self)
    for lst in (rec.params, rec.buffers, rec.children):
      if name in lst: lst.remove(name)
    rec.nonpersistent.discard(name)
    if name in rec.hidden: del rec.hidden[name]
    elif name in d: del d[name]
    else: object.__delattr__(self, name)
  def _check_name(self, name, what: str) -> None:
    if not isinstance(name, str): raise TypeError(f"{what} name should be a string, got {type(name).__name__}")
    if not name: raise KeyError(f"{what} name can't be empty string \"\"")
    if "." in name: raise KeyError(f"{what} name can't contain \".\", got {name!r}")
  def _order(self) -> None:
    """Keep the __dict__ in torch's state_dict order: parameters, persistent buffers, then children."""
    rec, d = self._r, vars(self)
    for k in [*[b for b in rec.buffers if b not in rec.nonpersistent], *rec.children]:
      if k in d: d[k] = d.pop(k)
  def register_parameter(self, name: str, param: Tensor | None) -> None:
    """Add a parameter (a Tensor: marked as a Parameter, or None) under `name`, as torch's."""
    rec = self._r
    self._check_name(name, "parameter")
    if (hasattr(self, name) or name in rec.hidden) and name not in rec.params:
      raise KeyError(f"attribute '{name}' already exists")
    if param is not None and not isinstance(param, Tensor):
      raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' (Tensor or None "
                      "required)")
    if param is not None: _mark_param(param)
    if name not in rec.params: rec.params.append(name)
    vars(self)[name] = param
    self._order()
  def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
    """Add a buffer (state that is not trained: running statistics) under `name`; persistent=False keeps it out of
    the state dict (still in buffers()), as torch's."""
    rec = self._r
    self._check_name(name, "buffer")
    if (hasattr(self, name) or name in rec.hidden) and name not in rec.buffers:
      raise KeyError(f"attribute '{name}' already exists")
    if tensor is not None and not isinstance(tensor, Tensor):
      raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (Tensor or None required)")
    if name not in rec.buffers: rec.buffers.append(name)
    vars(self).pop(name, None)
    rec.hidden.pop(name, None)
    if persistent:
      rec.nonpersistent.discard(name)
      vars(self)[name] = tensor
    else:
      rec.nonpersistent.add(name)
      rec.hidden[name] = tensor
    self._order()
  def add_module(self, name: str, module) -> None:
    """Add a submodule (a Module, a teeny layer, or None) under `name`, as torch's."""
    rec = self._r
    self._check_name(name, "module")
    if module is not None and not _is_child(module):
      raise TypeError(f"{type(module).__name__} is not a Module subclass")
    if (hasattr(self, name) or name in rec.hidden) and name not in rec.children:
      raise KeyError(f"attribute '{name}' already exists")
    if name not in rec.children: rec.children.append(name)
    vars(self)[name] = module
  register_module = add_module
  def get_submodule(self, target: str):
    """The submodule at a dotted path ("" is self)."""
    m: object = self
    for part in target.split(".") if target else []:
      sub = dict(_children_of(m)).get(part)
      if sub is None: raise AttributeError(f"{type(m).__name__} has no submodule `{part}` (looking up {target!r})")
      m = sub
    return m

  # ---- calling
  def forward(self, *args, **kwargs):
    raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")
  def __call__(self, *args, **kwargs): return self.forward(*args, **kwargs)


  def __dir__(self):
    return sorted(set(super().__dir__()) | set(self._r.hidden))

class ParameterList(Module):
  """torch.nn.ParameterList: parameters named "0", "1", ...; a plain tensor added is made a Parameter (a copy)."""
  def __init__(self, values=None):
    super().__init__()
    if values is not None: self.extend(values)
  def _wrap(self, v) -> Tensor:
    if not isinstance(v, Tensor):
      raise TypeError(f"ParameterList holds tensors (teeny's parameters), got {type(v).__name__}")
    return v if _is_param(v) else Parameter(v, requires_grad=bool(v.requires_grad) or dtypes.is_float(v.dtype))
  def __len__(self) -> int: return len(self._r.params)
  def _key(self, idx: int) -> str:
    if not isinstance(idx, int): raise TypeError(f"ParameterList indices must be integers, got {type(idx).__name__}")
    n = len(self)
    if not -n <= idx < n: raise IndexError(f"ParameterList: index {idx} is out of range for length {n}")
    return str(idx % n)
  def __getitem__(self, idx):
    if isinstance(idx, slice): return ParameterList([self[i] for i in range(len(self))[idx]])
    return vars(self)[self._key(idx)]
  def __setitem__(self, idx: int, value) -> None: self.register_parameter(self._key(idx), self._wrap(value))
  def __iter__(self): return iter([self[i] for i in range(len(self))])
  def append(self, value):
    self.register_parameter(str(len(self)), self._wrap(value))
    return self
  def extend(self, values):
    for v in list(values): self.append(v)
    return self
  def __iadd__(self, values): return self.extend(values)
  def extra_repr(self) -> str:
    return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size {'x'.join(str(s) for s in p.shape)}]"
                     for i, p in enumerate(self))

class ParameterDict(Module):
  """torch.nn.ParameterDict: parameters by string key, in insertion order (a plain dict given at once is added in
  sorted key order, as torch's); a plain tensor added is made a Parameter (a copy)."""
  def __init__(self, parameters=None):
    super().__init__()
    if parameters is not None: self.update(parameters)
  def __getitem__(self, key: str):
    if key not in self._r.params: raise KeyError(key)
    return vars(self)[key]
  def __setitem__(self, key: str, value) -> None:
    if not isinstance(key, str): raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
    if value is not None and not isinstance(value, Tensor):
      raise TypeError(f"ParameterDict: values must be tensors, got {type(value).__name__}")
    if isinstance(value, Tensor) and not _is_param(value):
      value = Parameter(value, requires_grad=bool(value.requires_grad) or dtypes.is_float(value.dtype))
    self.register_parameter(key, value)
  def __delitem__(self, key: str) -> None: delattr(self, key)
  def __contains__(self, key) -> bool: return key in self._r.params
  def __len__(self) -> int: return len(self._r.params)
  def __iter__(self): return iter(list(self._r.params))
  def keys(self): return list(self._r.params)
  def values(self): return [vars(self)[k] for k in self._r.params]
  def items(self): return [(k, vars(self)[k]) for k in self._r.params]
  def get(self, key: str, default=None): return self[key] if key in self else default
  def pop(self, key: str):
    v = self[key]
    del self[key]
    return v
  def clear(self) -> None:
    for k in list(self._r.params): del self[k]
  def update(self, parameters) -> None:
    """Add (key, tensor) pairs: from a plain dict in sorted key order, from an OrderedDict, a ParameterDict or pairs
    in their order (as torch's)."""
    if isinstance(parameters, (OrderedDict, ParameterDict)): items = list(parameters.items())
    elif isinstance(parameters, dict): items = sorted(parameters.items())
    else: items = list(parameters)
    for k, v in items: self[k] = v
  def extra_repr(self) -> str:
    return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {'x'.join(str(s) for s in p.shape)}]"
                     for k, p in self.items())

class _ConvNd(_Tree):
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
  def extra_repr(self) -> str:
    t = lambda x: x if isinstance(x, str) else _tuple(x, self.n, "")
    s = f"{self.weight.shape[1] * self.groups}, {self.weight.shape[0]}, kernel_size={self.kernel_size}, " \
      f"stride={t(self.stride)}"
    if isinstance(self.padding, str) or any(t(self.padding)): s += f", padding={t(self.padding)}"
    if any(d != 1 for d in t(self.dilation)): s += f", dilation={t(self.dilation)}"
    if self.groups != 1: s += f", groups={self.groups}"
    if self.bias is None: s += ", bias=False"
    return s + (f", padding_mode={self.padding_mode}" if self.padding_mode != "zeros" else "")
  def __call__(self, x: Tensor) -> Tensor:
    """F.conv1d/2d/3d (conv2d: the hand-written backward kernels of teeny/kernels/conv.py where they apply)."""
    conv, padding = getattr(_F, f"conv{self.n}d"), self.padding
    if self.padding_mode != "zeros":  # pad by the mode first, then convolve without padding (as torch does)
      pads = _resolve_pads(self.padding, self.kernel_size, _tuple(self.dilation, self.n, "dilation"), self.stride)
      x, padding = _F.pad(x, tuple(v for b, a in reversed(pads) for v in (b, a)), self.padding_mode), 0
    return conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)

class Conv1d(_ConvNd):
  """1-d convolution over (N, C, L)."""
  n = 1

class Conv2d(_ConvNd):
  """2-d convolution over (N, C, H, W); padding may be an int, a tuple, 'same' or 'valid'."""
  n = 2

class Conv3d(_ConvNd):
  """3-d convolution over (N, C, D, H, W); padding may be an int, a tuple, 'same' or 'valid'."""
  n = 3

class _ConvTransposeNd(_Tree):
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
  def extra_repr(self) -> str:
    t = lambda x: _tuple(x, self.n, "")
    s = f"{self.weight.shape[0]}, {self.weight.shape[1] * self.groups}, kernel_size={self.kernel_size}, " \
      f"stride={t(self.stride)}"
    if any(t(self.padding)): s += f", padding={t(self.padding)}"
    if any(d != 1 for d in t(self.dilation)): s += f", dilation={t(self.dilation)}"
    if any(t(self.output_padding)): s += f", output_padding={t(self.output_padding)}"
    if self.groups != 1: s += f", groups={self.groups}"
    return s + (", bias=False" if self.bias is None else "")
  def __call__(self, x: Tensor, output_size=None) -> Tensor:
    op = getattr(_F, f"conv_transpose{self.n}d")
    return op(x, self.weight, self.bias, self.stride, self.padding, self._output_padding(x, output_size), self.groups,
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

class BatchNorm(_Tree):
  """Batch norm over dim 1 of (N, C, ...) inputs; running statistics are updated (lazily, via assign) while training.
  momentum=None keeps a cumulative average (each batch weighted 1/num_batches_tracked), as torch's."""
  def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
               track_running_stats: bool = True):
    if momentum is not None and not isinstance(momentum, (int, float)):
      raise TypeError(f"BatchNorm momentum must be a float or None, got {type(momentum).__name__}")
    self.num_features, self.eps, self.momentum = num_features, eps, momentum
    self.track_running_stats = track_running_stats
    self.weight = _param(Tensor.ones(num_features)) if affine else None
    self.bias = _param(Tensor.zeros(num_features)) if affine else None
    if track_running_stats:
      # buffers of their own, from host memory (identical lazy constants realized together would share one)
      self.running_mean = Tensor(np.zeros(num_features, np.float32))
      self.running_var = Tensor(np.ones(num_features, np.float32))
      self.num_batches_tracked = Tensor(np.zeros((), np.int64))  # 0-d int64, as torch's
      self.running_mean.requires_grad = self.running_var.requires_grad = False  # statistics, not parameters
  def extra_repr(self) -> str:
    return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.weight is not None}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")
  def __call__(self, x: Tensor) -> Tensor:
    """F.batch_norm with the batch's statistics while Tensor.training (or without running statistics), updating
    them and num_batches_tracked; else with the running statistics."""
    momentum: float | Tensor = self.momentum if self.momentum is not None else 0.0
    track = self.track_running_stats and Tensor.training
    if track:
      nbt = self.num_batches_tracked + 1
      if self.momentum is None: momentum = 1 / nbt.cast(dtypes.float32)   # the cumulative average
    use_running = self.track_running_stats and not Tensor.training
    rm, rv = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
    out = _F.batch_norm(x, rm if track or use_running else None, rv if track or use_running else None, self.weight,
                        self.bias, not use_running, momentum, self.eps)
    if track: self.num_batches_tracked.assign(nbt)
    return out

class BatchNorm1d(BatchNorm):
  """BatchNorm over (N, C) or (N, C, L) inputs (2-d or 3-d only, as torch's)."""
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim not in (2, 3):
      raise ValueError(f"BatchNorm1d: expected 2D or 3D input (got {x.ndim}D input of shape {tuple(x.shape)})")
    return super().__call__(x)

class BatchNorm2d(BatchNorm):
  """BatchNorm over (N, C, H, W) inputs (4-d only, as torch's)."""
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim != 4: raise ValueError(f"BatchNorm2d: expected 4D input (got {x.ndim}D input of shape {tuple(x.shape)})")
    return super().__call__(x)

class RMSNorm(_Tree):
  """F.rms_norm: x / sqrt(mean(x^2) + eps) * weight over the trailing dims (eps=None: the machine epsilon of the dtype
  computed in, as torch's)."""
  def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.eps = eps
    self.weight = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
  def extra_repr(self) -> str:
    return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"
  def __call__(self, x: Tensor) -> Tensor: return _F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

class GroupNorm(_Tree):
  """Normalise (N, C, ...) over groups of C/num_groups channels, then a per-channel affine (F.group_norm)."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    if num_channels % num_groups: raise ValueError(f"num_channels {num_channels} must divide by groups {num_groups}")
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = _param(Tensor.ones(num_channels)) if affine else None
    self.bias = _param(Tensor.zeros(num_channels)) if affine else None
  def extra_repr(self) -> str:
    return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.weight is not None}, "
            f"bias={self.bias is not None}")
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2 or x.shape[1] != self.num_channels:
      raise ValueError(f"GroupNorm({self.num_groups}, {self.num_channels}) got input of shape {tuple(x.shape)}")
    return _F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

class Embedding(_Tree):
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
  def extra_repr(self) -> str:
    return f"{self.num_embeddings}, {self.embedding_dim}" + \
      (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
  def __call__(self, idx: Tensor) -> Tensor:
    if not isinstance(idx, Tensor): idx = Tensor(idx, dtype=dtypes.int32)
    return _F.embedding(idx, self.weight, self.padding_idx)
  @classmethod
  def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                      max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                      sparse: bool = False) -> Embedding:
    """torch's Embedding.from_pretrained: an Embedding whose weight is a copy of the 2-D `embeddings` (rows are the
    vectors); freeze=True (the default) makes it not require grad. padding_idx is kept as given (its row is not
    zeroed, as torch). max_norm and scale_grad_by_freq are not supported; sparse=True gives a dense gradient."""
    if not isinstance(embeddings, Tensor):
      raise TypeError(f"Embedding.from_pretrained: embeddings must be a Tensor, got {type(embeddings).__name__}")
    if embeddings.ndim != 2:
      raise ValueError(f"Embedding.from_pretrained: embeddings parameter is expected to be 2-dimensional, got shape "
                       f"{tuple(embeddings.shape)}")
    if max_norm is not None or scale_grad_by_freq:
      raise NotImplementedError("Embedding.from_pretrained: max_norm and scale_grad_by_freq are not supported by teeny")
    n, d = embeddings.shape
    emb = cls(n, d, padding_idx=padding_idx)   # (its fields and checks; the weight is replaced)
    emb.weight = _param(embeddings.detach().clone())
    if freeze: emb.weight.requires_grad = False
    return emb

# ***** containers *****

class _Children(_Tree):
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
    body = "".join(f"\n  ({k}): " + _repr_of(m).replace("\n", "\n  ") for k, m in vars(self).items())
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

class Identity(_Tree):
  """Returns its input; any constructor arguments are ignored (as torch's)."""
  def __init__(self, *args, **kwargs): pass
  def __call__(self, x: Tensor) -> Tensor: return x

class Flatten(_Tree):
  """x.flatten(start_dim, end_dim), torch's defaults start_dim=1 (keeps the batch dim), end_dim=-1."""
  def __init__(self, start_dim: int = 1, end_dim: int = -1): self.start_dim, self.end_dim = start_dim, end_dim
  def extra_repr(self) -> str: return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
  def __call__(self, x: Tensor) -> Tensor: return x.flatten(self.start_dim, self.end_dim)   # (which checks the dims)

class Unflatten(_Tree):
  """x.unflatten(dim, unflattened_size): dim `dim` becomes the dims `unflattened_size` (one may be -1)."""
  def __init__(self, dim: int, unflattened_size):
    if not isinstance(unflattened_size, (list, tuple)) or not all(isinstance(v, int) for v in unflattened_size):
      raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
    self.dim, self.unflattened_size = dim, tuple(unflattened_size)
  def extra_repr(self) -> str: return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
  def __call__(self, x: Tensor) -> Tensor: return x.unflatten(self.dim, self.unflattened_size)

# ***** dropout *****

# Modules follow teeny's Tensor.training flag (`with Tensor.train():`); `inplace` is kept for torch's signature and
# repr, and the result is always a new tensor.

class Dropout(_Tree):
  """F.dropout: zeroes each element with probability p and scales the rest by 1/(1-p) while Tensor.training, else
  returns x."""
  def __init__(self, p: float = 0.5, inplace: bool = False): self.p, self.inplace = _F._check_p("Dropout", p), inplace
  def extra_repr(self) -> str: return f"p={self.p}, inplace={self.inplace}"
  def __call__(self, x: Tensor) -> Tensor: return _F.dropout(x, self.p, Tensor.training)

class _DropoutNd(_Tree):
  """Channel-wise dropout (F.dropout1d/2d/3d): whole channels (dim 1 of (N, C, *spatial), dim 0 of unbatched
  (C, *spatial)) are zeroed with probability p, the rest scaled by 1/(1-p), while Tensor.training."""
  n = 1
  def __init__(self, p: float = 0.5, inplace: bool = False):
    self.p, self.inplace = _F._check_p(type(self).__name__, p), inplace
  def extra_repr(self) -> str: return f"p={self.p}, inplace={self.inplace}"
  def __call__(self, x: Tensor) -> Tensor: return getattr(_F, f"dropout{self.n}d")(x, self.p, Tensor.training)

class Dropout1d(_DropoutNd):
  """Channel-wise dropout over (N, C, L) or (C, L)."""
  n = 1

class Dropout2d(_DropoutNd):
  """Channel-wise dropout over (N, C, H, W) (a 3-d input is (N, C, L), as torch's)."""
  n = 2

class Dropout3d(_DropoutNd):
  """Channel-wise dropout over (N, C, D, H, W) or (C, D, H, W)."""
  n = 3

class FeatureAlphaDropout(_Tree):
  """F.feature_alpha_dropout: alpha dropout (SELU-preserving) of whole channels (dim 1 of (N, C, *)) while
  Tensor.training, else returns x."""
  def __init__(self, p: float = 0.5, inplace: bool = False):
    self.p, self.inplace = _F._check_p("FeatureAlphaDropout", p), inplace
  def extra_repr(self) -> str: return f"p={self.p}, inplace={self.inplace}"
  def __call__(self, x: Tensor) -> Tensor: return _F.feature_alpha_dropout(x, self.p, Tensor.training)

# ***** activations *****
# Each calls its F function; `inplace` is accepted where torch has it (ReLU(inplace=True) in model code) and kept for
# the repr, but the result is always a new tensor (F's inplace=True writes into the input).

class ReLU(_Tree):
  """max(x, 0)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def extra_repr(self) -> str: return _inplace(self, "")
  def __call__(self, x: Tensor) -> Tensor: return _F.relu(x)

class ReLU6(_Tree):
  """min(max(x, 0), 6)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def extra_repr(self) -> str: return _inplace(self, "")
  def __call__(self, x: Tensor) -> Tensor: return _F.relu6(x)

class LeakyReLU(_Tree):
  """x for x > 0, else negative_slope * x."""
  def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
    self.negative_slope, self.inplace = negative_slope, inplace
  def extra_repr(self) -> str: return f"negative_slope={self.negative_slope}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.leaky_relu(x, self.negative_slope)

rrelu = _F.rrelu   # (teeny's older spelling, nn.rrelu: torch's F.rrelu)

class RReLU(_Tree):
  """Randomized leaky ReLU (F.rrelu): while Tensor.training (`with Tensor.train():`) each non-positive element is
  multiplied by its own slope drawn uniformly from [lower, upper); else by (lower + upper) / 2."""
  def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
    self.lower, self.upper, self.inplace = lower, upper, inplace   # (bounds checked at the call, as torch)
  def extra_repr(self) -> str: return f"lower={self.lower}, upper={self.upper}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.rrelu(x, self.lower, self.upper, Tensor.training)

class PReLU(_Tree):
  """F.prelu: x for x > 0, else weight * x, with a learnt weight: one shared value (num_parameters=1) or one per
  channel (dim 1, or dim 0 of a 1-d input), initialised to `init`."""
  def __init__(self, num_parameters: int = 1, init: float = 0.25):
    self.num_parameters = num_parameters
    self.weight = _param(Tensor(np.full(num_parameters, init, np.float32)))
  def extra_repr(self) -> str: return f"num_parameters={self.num_parameters}"
  def __call__(self, x: Tensor) -> Tensor: return _F.prelu(x, self.weight)

class GELU(_Tree):
  """x * Phi(x); approximate="tanh" uses the tanh approximation, as torch's."""
  def __init__(self, approximate: str = "none"):
    if approximate not in ("none", "tanh"):
      raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
    self.approximate = approximate
  def extra_repr(self) -> str: return f"approximate={self.approximate!r}"
  def __call__(self, x: Tensor) -> Tensor: return _F.gelu(x, approximate=self.approximate)

class SiLU(_Tree):
  """x * sigmoid(x)."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def extra_repr(self) -> str: return _inplace(self, "")
  def __call__(self, x: Tensor) -> Tensor: return _F.silu(x)

class Mish(_Tree):
  """x * tanh(softplus(x))."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def extra_repr(self) -> str: return _inplace(self, "")
  def __call__(self, x: Tensor) -> Tensor: return _F.mish(x)

class Sigmoid(_Tree):
  """1 / (1 + exp(-x))."""
  def __call__(self, x: Tensor) -> Tensor: return _F.sigmoid(x)

class Tanh(_Tree):
  """tanh(x)."""
  def __call__(self, x: Tensor) -> Tensor: return _F.tanh(x)

class LogSigmoid(_Tree):
  """log(sigmoid(x))."""
  def __call__(self, x: Tensor) -> Tensor: return _F.logsigmoid(x)

class Softsign(_Tree):
  """x / (1 + |x|)."""
  def __call__(self, x: Tensor) -> Tensor: return _F.softsign(x)

class Tanhshrink(_Tree):
  """x - tanh(x)."""
  def __call__(self, x: Tensor) -> Tensor: return _F.tanhshrink(x)

class Softplus(_Tree):
  """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (torch's switch to the linear part)."""
  def __init__(self, beta: float = 1.0, threshold: float = 20.0): self.beta, self.threshold = beta, threshold
  def extra_repr(self) -> str: return f"beta={self.beta}, threshold={self.threshold}"
  def __call__(self, x: Tensor) -> Tensor: return _F.softplus(x, self.beta, self.threshold)

class ELU(_Tree):
  """x for x > 0, else alpha * (exp(x) - 1)."""
  def __init__(self, alpha: float = 1.0, inplace: bool = False): self.alpha, self.inplace = alpha, inplace
  def extra_repr(self) -> str: return f"alpha={self.alpha}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.elu(x, self.alpha)

class CELU(_Tree):
  """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha 0 raises (here at construction, F.celu at the call)."""
  def __init__(self, alpha: float = 1.0, inplace: bool = False):
    if alpha == 0: raise ValueError("CELU: alpha cannot be 0 (it divides x)")
    self.alpha, self.inplace = alpha, inplace
  def extra_repr(self) -> str: return f"alpha={self.alpha}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.celu(x, self.alpha)

class SELU(_Tree):
  """scale * elu(x, alpha) with torch's fixed constants."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def extra_repr(self) -> str: return _inplace(self, "")
  def __call__(self, x: Tensor) -> Tensor: return _F.selu(x)

class Hardtanh(_Tree):
  """x clipped to [min_val, max_val] (gradient 0 at the bounds, and integral bounds keep an integer input's dtype, as
  torch's)."""
  def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    if min_val > max_val: raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
  def extra_repr(self) -> str: return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.hardtanh(x, self.min_val, self.max_val)

class Hardsigmoid(_Tree):
  """relu6(x + 3) / 6."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return _F.hardsigmoid(x)

class Hardswish(_Tree):
  """x * relu6(x + 3) / 6."""
  def __init__(self, inplace: bool = False): self.inplace = inplace
  def __call__(self, x: Tensor) -> Tensor: return _F.hardswish(x)

class Threshold(_Tree):
  """x where x > threshold, else value."""
  def __init__(self, threshold: float, value: float, inplace: bool = False):
    self.threshold, self.value, self.inplace = threshold, value, inplace
  def extra_repr(self) -> str: return f"threshold={self.threshold}, value={self.value}" + _inplace(self)
  def __call__(self, x: Tensor) -> Tensor: return _F.threshold(x, self.threshold, self.value)

class Hardshrink(_Tree):
  """x where |x| > lambd, else 0."""
  def __init__(self, lambd: float = 0.5): self.lambd = lambd
  def extra_repr(self) -> str: return f"{self.lambd}"
  def __call__(self, x: Tensor) -> Tensor: return _F.hardshrink(x, self.lambd)

class Softshrink(_Tree):
  """x - lambd above lambd, x + lambd below -lambd, else 0; lambd must be >= 0 (checked here at construction, by
  F.softshrink at the call)."""
  def __init__(self, lambd: float = 0.5):
    if lambd < 0: raise ValueError(f"Softshrink: lambd must be greater or equal to 0, got {lambd}")
    self.lambd = lambd
  def extra_repr(self) -> str: return f"{self.lambd}"
  def __call__(self, x: Tensor) -> Tensor: return _F.softshrink(x, self.lambd)

class GLU(_Tree):
  """a * sigmoid(b) for the two halves a, b of dim `dim` (its size must be even)."""
  def __init__(self, dim: int = -1): self.dim = dim
  def extra_repr(self) -> str: return f"dim={self.dim}"
  def __call__(self, x: Tensor) -> Tensor: return _F.glu(x, self.dim)

class Softmax(_Tree):
  """exp(x) / sum(exp(x)) along dim (dim=None: torch's deprecated legacy choice, 0 for 0-, 1- and 3-d inputs, else
  1)."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def extra_repr(self) -> str: return f"dim={self.dim}"
  def __call__(self, x: Tensor) -> Tensor: return _F.softmax(x, self.dim)

class LogSoftmax(_Tree):
  """log(softmax(x)) along dim, computed stably."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def extra_repr(self) -> str: return f"dim={self.dim}"
  def __call__(self, x: Tensor) -> Tensor: return _F.log_softmax(x, self.dim)

class Softmin(_Tree):
  """softmax(-x) along dim."""
  def __init__(self, dim: int | None = None): self.dim = dim
  def extra_repr(self) -> str: return f"dim={self.dim}"
  def __call__(self, x: Tensor) -> Tensor: return _F.softmin(x, self.dim)

# ***** pooling *****

class _MaxPoolNd(_Tree):
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
               ceil_mode: bool = False):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.dilation, self.return_indices, self.ceil_mode = padding, dilation, return_indices, ceil_mode
  def extra_repr(self) -> str:
    return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"ceil_mode={self.ceil_mode}")
  def __call__(self, x: Tensor):
    return getattr(_F, f"max_pool{self.n}d")(x, self.kernel_size, self.stride, self.padding, self.dilation,
                                             self.ceil_mode, self.return_indices)

class MaxPool1d(_MaxPoolNd):
  """Max over sliding windows of the last dim (return_indices: also the int64 argmax positions)."""
  n = 1

class MaxPool2d(_MaxPoolNd):
  """Max over sliding windows of the last two dims (return_indices: also int64 positions flat over H*W)."""
  n = 2

class MaxPool3d(_MaxPoolNd):
  """Max over sliding windows of the last three dims (return_indices: also int64 positions flat over D*H*W)."""
  n = 3

class _MaxUnpoolNd(_Tree):
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding = padding
  def extra_repr(self) -> str:
    t = lambda x: _tuple(x, self.n, "")
    return f"kernel_size={t(self.kernel_size)}, stride={t(self.stride)}, padding={t(self.padding)}"
  def __call__(self, x: Tensor, indices: Tensor, output_size=None) -> Tensor:
    return getattr(_F, f"max_unpool{self.n}d")(x, indices, self.kernel_size, self.stride, self.padding, output_size)

class MaxUnpool1d(_MaxUnpoolNd):
  """Inverse of MaxPool1d(return_indices=True): zeros with the values written at their indices."""
  n = 1

class MaxUnpool2d(_MaxUnpoolNd):
  """Inverse of MaxPool2d(return_indices=True): zeros with the values written at their indices."""
  n = 2

class MaxUnpool3d(_MaxUnpoolNd):
  """Inverse of MaxPool3d(return_indices=True): zeros with the values written at their indices."""
  n = 3

class AvgPool1d(_Tree):
  """Mean over sliding windows of the last dim."""
  def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
  def extra_repr(self) -> str:
    t = lambda x: _tuple(x, 1, "")
    return f"kernel_size={t(self.kernel_size)}, stride={t(self.stride)}, padding={t(self.padding)}"
  def __call__(self, x: Tensor) -> Tensor:
    return _F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

class _AvgPoolNd(_Tree):
  n = 2
  def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None):
    self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
    self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
    self.divisor_override = divisor_override
  def extra_repr(self) -> str: return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
  def __call__(self, x: Tensor) -> Tensor:
    return getattr(_F, f"avg_pool{self.n}d")(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                             self.count_include_pad, self.divisor_override)

class AvgPool2d(_AvgPoolNd):
  """Mean over sliding windows of the last two dims (divisor_override: divide every window sum by it instead)."""
  n = 2

class AvgPool3d(_AvgPoolNd):
  """Mean over sliding windows of the last three dims (divisor_override: divide every window sum by it instead)."""
  n = 3

class _LPPoolNd(_Tree):
  n = 2
  def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode
  def extra_repr(self) -> str:
    return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}")
  def __call__(self, x: Tensor) -> Tensor:
    return getattr(_F, f"lp_pool{self.n}d")(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

class LPPool1d(_LPPoolNd):
  """Power-average pooling over the last dim: (sum of x^p over each window)^(1/p) (F.lp_pool1d)."""
  n = 1

class LPPool2d(_LPPoolNd):
  """Power-average pooling over the last two dims (F.lp_pool2d)."""
  n = 2

class LPPool3d(_LPPoolNd):
  """Power-average pooling over the last three dims (F.lp_pool3d)."""
  n = 3

class _AdaptivePoolNd(_Tree):
  n, kind = 2, "avg"
  def __init__(self, output_size, return_indices: bool = False):
    self.output_size, self.return_indices = output_size, return_indices
  def extra_repr(self) -> str: return f"output_size={self.output_size}"
  def __call__(self, x: Tensor):
    fn = getattr(_F, f"adaptive_{self.kind}_pool{self.n}d")
    return fn(x, self.output_size, self.return_indices) if self.kind == "max" else fn(x, self.output_size)

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

class _InstanceNorm(_Tree):
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
  def extra_repr(self) -> str:
    return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")
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
    y = _F.instance_norm(x, rm, rv, self.weight, self.bias, use_input_stats,
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

class Upsample(_Tree):
  """x.interpolate(size, scale_factor, mode, align_corners) over the spatial dims; recompute_scale_factor=True turns
  scale_factor into the output size first (floor(in * scale)) and interpolates to that size, as torch's."""
  def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
               recompute_scale_factor: bool | None = None):
    self.size, self.mode, self.align_corners = size, mode, align_corners
    self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else \
      tuple(float(f) for f in scale_factor) if scale_factor is not None else None
    self.recompute_scale_factor = recompute_scale_factor
  def extra_repr(self) -> str:
    what = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
    return f"{what}, mode={self.mode!r}"
  def __call__(self, x: Tensor) -> Tensor:
    return _F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor)

class UpsamplingNearest2d(Upsample):
  """Upsample(mode='nearest') for (N, C, H, W)."""
  def __init__(self, size=None, scale_factor=None): super().__init__(size, scale_factor, "nearest")

class UpsamplingBilinear2d(Upsample):
  """Upsample(mode='bilinear', align_corners=True) for (N, C, H, W), as torch's."""
  def __init__(self, size=None, scale_factor=None): super().__init__(size, scale_factor, "bilinear", True)

class PixelShuffle(_Tree):
  """(N, C*r*r, H, W) -> (N, C, H*r, W*r)."""
  def __init__(self, upscale_factor: int): self.upscale_factor = upscale_factor
  def extra_repr(self) -> str: return f"upscale_factor={self.upscale_factor}"
  def __call__(self, x: Tensor) -> Tensor: return _F.pixel_shuffle(x, self.upscale_factor)

class PixelUnshuffle(_Tree):
  """(N, C, H*r, W*r) -> (N, C*r*r, H, W), the inverse of PixelShuffle."""
  def __init__(self, downscale_factor: int): self.downscale_factor = downscale_factor
  def extra_repr(self) -> str: return f"downscale_factor={self.downscale_factor}"
  def __call__(self, x: Tensor) -> Tensor: return _F.pixel_unshuffle(x, self.downscale_factor)

# ***** losses *****
# Called as loss(input, target); `weight` / `pos_weight` tensors are kept as attributes (torch's buffers, so they are
# in get_state_dict under the same names).

class CrossEntropyLoss(_Tree):
  """F.cross_entropy on logits: class-index or probability targets, per-class weight, ignore_index, label smoothing."""
  def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
               label_smoothing: float = 0.0):
    self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
    self.label_smoothing = label_smoothing
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction,
                            label_smoothing=self.label_smoothing)

class NLLLoss(_Tree):
  """F.nll_loss on log-probabilities (classes on dim 1, or dim 0 of a 1-d input)."""
  def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"):
    self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)

class MSELoss(_Tree):
  """Mean (or sum, or none) of (input - target)**2."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.mse_loss(input, target, reduction=self.reduction)

class L1Loss(_Tree):
  """Mean (or sum, or none) of |input - target|."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.l1_loss(input, target, reduction=self.reduction)

class SmoothL1Loss(_Tree):
  """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
  def __init__(self, reduction: str = "mean", beta: float = 1.0): self.reduction, self.beta = reduction, beta
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)

class HuberLoss(_Tree):
  """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)."""
  def __init__(self, reduction: str = "mean", delta: float = 1.0): self.reduction, self.delta = reduction, delta
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.huber_loss(input, target, self.reduction, self.delta)

class KLDivLoss(_Tree):
  """F.kl_div: input holds log-probabilities; target probabilities (log-probabilities with log_target=True)."""
  def __init__(self, reduction: str = "mean", log_target: bool = False):
    self.reduction, self.log_target = reduction, log_target
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)

class BCELoss(_Tree):
  """F.binary_cross_entropy on probabilities, optionally weighted per element (weight broadcasts to the input)."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean"):
    self.weight, self.reduction = weight, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)

class BCEWithLogitsLoss(_Tree):
  """F.binary_cross_entropy_with_logits: sigmoid and BCE in one stable expression; pos_weight scales the positive
  term (one per class, broadcast along the last dim)."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean", pos_weight: Tensor | None = None):
    self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                               pos_weight=self.pos_weight)

class SoftMarginLoss(_Tree):
  """F.soft_margin_loss: log(1 + exp(-target * input)), in the input's dtype."""
  def __init__(self, reduction: str = "mean"): self.reduction = reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.soft_margin_loss(input, target, reduction=self.reduction)

class HingeEmbeddingLoss(_Tree):
  """F.hinge_embedding_loss: input where target == 1, max(0, margin - input) where target == -1."""
  def __init__(self, margin: float = 1.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)

class PoissonNLLLoss(_Tree):
  """F.poisson_nll_loss: exp(input) - target * input (log_input), else input - target * log(input + eps); full adds
  Stirling's term where target > 1."""
  def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-8, reduction: str = "mean"):
    self.log_input, self.full, self.eps, self.reduction = log_input, full, eps, reduction
  def __call__(self, log_input: Tensor, target: Tensor) -> Tensor:
    return _F.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction)

class GaussianNLLLoss(_Tree):
  """F.gaussian_nll_loss: 0.5 (log(var) + (input - target)**2 / var), var clamped below at eps (in value only); called
  as loss(input, target, var). Keyword-only arguments, as torch's."""
  def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    self.full, self.eps, self.reduction = full, eps, reduction
  def __call__(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
    return _F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)

class MultiLabelSoftMarginLoss(_Tree):
  """F.multilabel_soft_margin_loss: the per-class logistic loss, times weight (one per class, broadcast along the last
  dim), averaged over the classes."""
  def __init__(self, weight: Tensor | None = None, reduction: str = "mean"):
    self.weight, self.reduction = weight, reduction
  def __call__(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)

class MarginRankingLoss(_Tree):
  """F.margin_ranking_loss: max(0, -target * (input1 - input2) + margin); called as loss(input1, input2, target)."""
  def __init__(self, margin: float = 0.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
    return _F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)

class CosineEmbeddingLoss(_Tree):
  """F.cosine_embedding_loss: 1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1;
  called as loss(input1, input2, target)."""
  def __init__(self, margin: float = 0.0, reduction: str = "mean"): self.margin, self.reduction = margin, reduction
  def __call__(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
    return _F.cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)

def _check_margin(margin: float, name: str) -> float:
  if not margin > 0: raise ValueError(f"{name}: expected margin to be greater than 0, got {margin} instead")
  return margin

class TripletMarginLoss(_Tree):
  """F.triplet_margin_loss: max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-norm distance;
  swap takes min(d(anchor, negative), d(positive, negative)). margin must be > 0 (checked here, as torch's)."""
  def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
               reduction: str = "mean"):
    self.margin, self.p, self.eps = _check_margin(margin, "TripletMarginLoss"), p, eps
    self.swap, self.reduction = swap, reduction
  def __call__(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
    return _F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                  reduction=self.reduction)

class TripletMarginWithDistanceLoss(_Tree):
  """F.triplet_margin_with_distance_loss: TripletMarginLoss with any distance_function(x1, x2) -> Tensor (default
  pairwise_distance); keyword-only arguments and margin > 0, as torch's."""
  def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
    if distance_function is not None and not callable(distance_function):
      raise TypeError(f"TripletMarginWithDistanceLoss: distance_function must be callable (x1, x2) -> Tensor, got "
                      f"{type(distance_function).__name__}")
    self.distance_function = distance_function
    self.margin, self.swap = _check_margin(margin, "TripletMarginWithDistanceLoss"), swap
    self.reduction = reduction
  def __repr__(self) -> str:   # torch's default distance_function is a PairwiseDistance() child
    if self.distance_function is None: return f"{type(self).__name__}(\n  (distance_function): PairwiseDistance()\n)"
    return super().__repr__()
  def __call__(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
    return _F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                margin=self.margin, swap=self.swap, reduction=self.reduction)

class CosineSimilarity(_Tree):
  """x1 . x2 / max(|x1| |x2|, eps) along dim."""
  def __init__(self, dim: int = 1, eps: float = 1e-8): self.dim, self.eps = dim, eps
  def __call__(self, x1: Tensor, x2: Tensor) -> Tensor: return _F.cosine_similarity(x1, x2, self.dim, self.eps)

class PairwiseDistance(_Tree):
  """|x1 - x2 + eps|_p along the last dim."""
  def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    self.norm, self.eps, self.keepdim = p, eps, keepdim
  def __call__(self, x1: Tensor, x2: Tensor) -> Tensor:
    return _F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

# ***** padding *****

class _PadNd(Module):
  """torch's padding modules: padding is an int (every side) or a tuple of 2n amounts, last dim first (left, right,
  top, bottom, front, back); negative amounts crop. Constant pads take inputs of any rank >= n; the other modes
  want (C, *spatial) or (N, C, *spatial) inputs, as torch's."""
  n, mode = 1, "constant"
  def __init__(self, padding, value: float = 0.0):
    super().__init__()
    name = type(self).__name__
    if isinstance(padding, bool) or not isinstance(padding, (int, tuple, list)):
      raise TypeError(f"{name}: padding must be an int or a tuple of {2 * self.n} ints, got {padding!r}")
    pads = (padding,) * (2 * self.n) if isinstance(padding, int) else tuple(padding)
    if len(pads) != 2 * self.n or not all(isinstance(p, int) and not isinstance(p, bool) for p in pads):
      raise ValueError(f"{name}: padding must be an int or a tuple of {2 * self.n} ints (left, right, ... per dim, "
                       f"last dim first), got {padding!r}")
    self.padding, self.value = pads, float(value)
    self._value_given = value   # (torch's repr prints the value as given: 0, not 0.0)
  def forward(self, x: Tensor) -> Tensor:
    n, name = self.n, type(self).__name__
    if self.mode == "constant":
      if x.ndim < n: raise ValueError(f"{name}: expected an input of at least {n} dims, got shape {tuple(x.shape)}")
      return _F.pad(x, self.padding, value=self.value)
    if x.ndim not in (n + 1, n + 2):
      raise ValueError(f"{name}: expected {n + 1}D (unbatched) or {n + 2}D (batched) input (got {x.ndim}D input of "
                       f"shape {tuple(x.shape)})")
    if self.mode == "reflect":
      for i in range(n):
        size, (lo, hi) = x.shape[-1 - i], self.padding[2 * i:2 * i + 2]
        if lo >= size or hi >= size:
          raise RuntimeError(f"{name}: padding size should be less than the corresponding input dimension, but got "
                             f"padding ({lo}, {hi}) at dimension {x.ndim - 1 - i} of input {tuple(x.shape)}")
    return _F.pad(x, self.padding, self.mode)
  def extra_repr(self) -> str:
    return f"padding={self.padding}, value={self._value_given}" if type(self).__name__.startswith("Constant") else \
      f"{self.padding}"

class ConstantPad1d(_PadNd):
  """Pads the last dim with `value` (F.pad mode 'constant')."""
  n = 1
  def __init__(self, padding, value: float): super().__init__(padding, value)

class ConstantPad2d(_PadNd):
  """Pads the last two dims with `value`."""
  n = 2
  def __init__(self, padding, value: float): super().__init__(padding, value)

class ConstantPad3d(_PadNd):
  """Pads the last three dims with `value`."""
  n = 3
  def __init__(self, padding, value: float): super().__init__(padding, value)

class ZeroPad1d(_PadNd):
  """Pads the last dim with zeros."""
  n = 1
  def __init__(self, padding): super().__init__(padding, 0.0)

class ZeroPad2d(_PadNd):
  """Pads the last two dims with zeros."""
  n = 2
  def __init__(self, padding): super().__init__(padding, 0.0)

class ZeroPad3d(_PadNd):
  """Pads the last three dims with zeros."""
  n = 3
  def __init__(self, padding): super().__init__(padding, 0.0)

class ReflectionPad1d(_PadNd):
  """Mirrors the last dim without repeating the edge (each pad must be smaller than the dim)."""
  n, mode = 1, "reflect"

class ReflectionPad2d(_PadNd):
  """Mirrors the last two dims without repeating the edge."""
  n, mode = 2, "reflect"

class ReflectionPad3d(_PadNd):
  """Mirrors the last three dims without repeating the edge."""
  n, mode = 3, "reflect"

class ReplicationPad1d(_PadNd):
  """Repeats the edge values of the last dim."""
  n, mode = 1, "replicate"

class ReplicationPad2d(_PadNd):
  """Repeats the edge values of the last two dims."""
  n, mode = 2, "replicate"

class ReplicationPad3d(_PadNd):
  """Repeats the edge values of the last three dims."""
  n, mode = 3, "replicate"

class CircularPad1d(_PadNd):
  """Wraps the last dim around (its far end pads the near side)."""
  n, mode = 1, "circular"

class CircularPad2d(_PadNd):
  """Wraps the last two dims around."""
  n, mode = 2, "circular"

class CircularPad3d(_PadNd):
  """Wraps the last three dims around."""
  n, mode = 3, "circular"

# ***** more layers *****

class BatchNorm3d(BatchNorm):
  """BatchNorm over (N, C, D, H, W) inputs (5-d only, as torch's)."""
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim != 5: raise ValueError(f"BatchNorm3d: expected 5D input (got {x.ndim}D input of shape {tuple(x.shape)})")
    return super().__call__(x)

class Bilinear(Module):
  """y = x1^T A x2 + b per output feature: weight (out_features, in1_features, in2_features), inputs (*, in1) and
  (*, in2) with the same leading dims; torch's init, uniform(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias."""
  def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True):
    super().__init__()
    self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
    bound = _bound(in1_features)
    self.weight = _uniform((out_features, in1_features, in2_features), bound)
    self.bias = _uniform((out_features,), bound) if bias else None
  def forward(self, x1: Tensor, x2: Tensor) -> Tensor: return _F.bilinear(x1, x2, self.weight, self.bias)
  def extra_repr(self) -> str:
    return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}")

class LocalResponseNorm(Module):
  """x / (k + alpha/size * sum of x^2 over `size` neighbouring channels)^beta (F.local_response_norm): the window
  over dim 1 runs from c - size//2 to c + (size-1)//2, zero outside; inputs of 3 or more dims."""
  def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    super().__init__()
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
      raise ValueError(f"LocalResponseNorm: size must be a positive int, got {size!r}")
    self.size, self.alpha, self.beta, self.k = size, alpha, beta, k
  def forward(self, x: Tensor) -> Tensor: return _F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)
  def extra_repr(self) -> str: return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

class ChannelShuffle(Module):
  """(N, C, *) -> channels regrouped: split C into `groups` groups and interleave them (F.channel_shuffle)."""
  def __init__(self, groups: int):
    super().__init__()
    if isinstance(groups, bool) or not isinstance(groups, int):
      raise TypeError(f"ChannelShuffle: groups must be an int, got {type(groups).__name__}")
    self.groups = groups
  def forward(self, x: Tensor) -> Tensor: return _F.channel_shuffle(x, self.groups)
  def extra_repr(self) -> str: return f"groups={self.groups}"

class Softmax2d(Module):
  """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) inputs."""
  def forward(self, x: Tensor) -> Tensor:
    if x.ndim not in (3, 4): raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.ndim}D instead")
    return _F.softmax(x, -3)

class AlphaDropout(Module):
  """Dropout that keeps SELU's self-normalising mean and variance (torch's): while Tensor.training each element is
  kept with probability 1-p, a dropped one set to -alpha' (alpha' = 1.7581...), then everything is scaled by
  a = ((1 - p)(1 + p alpha'^2))^-1/2 and shifted by a alpha' p. Identity in eval mode; p = 1 gives zeros."""
  def __init__(self, p: float = 0.5, inplace: bool = False):
    super().__init__()
    self.p, self.inplace = _F._check_p("AlphaDropout", p), inplace
  def forward(self, x: Tensor) -> Tensor: return _F.alpha_dropout(x, self.p, Tensor.training)
  def extra_repr(self) -> str: return f"p={self.p}, inplace={self.inplace}"

class EmbeddingBag(Module):
  """F.embedding_bag: sums, means or maxes bags of embeddings without the (bag, item, dim) lookups (torch's).
  forward(input, offsets=None, per_sample_weights=None): input (B, N) is B bags of N ids; a 1-d input is split into
  bags starting at `offsets` (include_last_offset=True: offsets has B+1 entries, the last the end). per_sample_weights
  (same shape as input) scale each embedding (mode 'sum' only). Ids equal to padding_idx are left out of their bag
  (and count nothing for 'mean'); an empty bag gives zeros. Output (B, embedding_dim). Weight N(0, 1), the padding
  row zeros. max_norm and scale_grad_by_freq are not supported; sparse=True gives a dense gradient."""
  def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None, norm_type: float = 2.0,
               scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
               _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None):
    super().__init__()
    if mode not in ("sum", "mean", "max"):
      raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
    if max_norm is not None or scale_grad_by_freq:
      raise NotImplementedError("EmbeddingBag: max_norm and scale_grad_by_freq are not supported by teeny; leave them "
                                "at their defaults (renormalise the weight yourself if needed)")
    if padding_idx is not None:
      if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"EmbeddingBag: padding_idx ({padding_idx}) must be within num_embeddings "
                         f"({num_embeddings})")
      padding_idx %= num_embeddings
    self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
    self.max_norm, self.norm_type, self.sparse = max_norm, norm_type, sparse
    self.scale_grad_by_freq = scale_grad_by_freq
    self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
    if _weight is not None:
      if tuple(_weight.shape) != (num_embeddings, embedding_dim):
        raise ValueError(f"EmbeddingBag: _weight must have shape ({num_embeddings}, {embedding_dim}), got "
                         f"{tuple(_weight.shape)}")
      self.weight = Parameter(_weight)
    else:
      w = Tensor.randn(num_embeddings, embedding_dim)
      if padding_idx is not None: w = (Tensor.arange(num_embeddings).reshape(-1, 1) == padding_idx).where(0.0, w)
      self.weight = _param(w)
  @classmethod
  def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                      norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                      sparse: bool = False, include_last_offset: bool = False, padding_idx: int | None = None):
    """An EmbeddingBag whose weight is a copy of the 2-d `embeddings` (frozen unless freeze=False)."""
    if embeddings.ndim != 2: raise ValueError("EmbeddingBag.from_pretrained: embeddings must be 2-dimensional")
    bag = cls(embeddings.shape[0], embeddings.shape[1], max_norm, norm_type, scale_grad_by_freq, mode, sparse,
              embeddings, include_last_offset, padding_idx)
    bag.weight.requires_grad = not freeze
    return bag
  def forward(self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None) -> Tensor:
    return _F.embedding_bag(input, self.weight, offsets, mode=self.mode, sparse=self.sparse,
                            per_sample_weights=per_sample_weights, include_last_offset=self.include_last_offset,
                            padding_idx=self.padding_idx)
  def extra_repr(self) -> str:
    s = f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
    return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")

unfold, fold = _F.unfold, _F.fold   # (teeny's older spellings, nn.unfold/nn.fold: torch's F.unfold/F.fold)

class Unfold(Module):
  """torch.nn.Unfold: unfold(x, kernel_size, dilation, padding, stride) (im2col)."""
  def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
    super().__init__()
    self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride
    _F._fold_args("Unfold", kernel_size, dilation, padding, stride)
  def forward(self, x: Tensor) -> Tensor:
    return _F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)
  def extra_repr(self) -> str:
    return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"

class Fold(Module):
  """torch.nn.Fold: fold(x, output_size, kernel_size, dilation, padding, stride) (col2im, overlaps summed)."""
  def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
    super().__init__()
    self.output_size, self.kernel_size = output_size, kernel_size
    self.dilation, self.padding, self.stride = dilation, padding, stride
    _F._fold_args("Fold", kernel_size, dilation, padding, stride)
  def forward(self, x: Tensor) -> Tensor:
    return _F.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
  def extra_repr(self) -> str:
    return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}")

class MultiMarginLoss(Module):
  """F.multi_margin_loss: the multi-class hinge loss, sum over i != y of max(0, margin - x[y] + x[i])^p (p 1 or 2),
  times weight[y], over the C classes; weight is kept as a buffer (as torch's)."""
  def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, reduction: str = "mean"):
    super().__init__()
    if p not in (1, 2): raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got {p}")
    if weight is not None and weight.ndim != 1:
      raise ValueError(f"MultiMarginLoss: weight must be 1-d (one per class), got shape {tuple(weight.shape)}")
    self.p, self.margin, self.reduction = p, margin, reduction
    self.register_buffer("weight", weight)
  def forward(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.multi_margin_loss(input, target, self.p, self.margin, self.weight, reduction=self.reduction)

class MultiLabelMarginLoss(Module):
  """F.multilabel_margin_loss: per sample, sum over its target classes j and its non-target classes i of
  max(0, 1 - (x[j] - x[i])), over the C classes; the target lists class ids, ended by the first -1."""
  def __init__(self, reduction: str = "mean"):
    super().__init__()
    self.reduction = reduction
  def forward(self, input: Tensor, target: Tensor) -> Tensor:
    return _F.multilabel_margin_loss(input, target, reduction=self.reduction)

from teeny.nn.rnn import RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU  # noqa: E402, F401  (re-exported)
from teeny.nn.transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer,  # noqa: E402, F401
                                  TransformerEncoder, TransformerDecoder, Transformer)
