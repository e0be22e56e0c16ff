"""torch.nn.Module's tree API (parameters, state_dict, train/eval, to...) for every layer: nn.Module subclasses and
teeny's own layers (Linear, Conv2d, Sequential...), which are plain classes that get_state_dict walks by attribute.
A Module keeps its bookkeeping in a record (`_rec`, see nn.Module); a plain layer's children and tensors are its
attributes."""
from __future__ import annotations
import types
from collections import OrderedDict
from typing import Iterator
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import DType, dtypes, to_dtype
from teeny.nn.state import get_state_dict, load_state_dict as _load_state_dict
from teeny.nn.params import _is_param

def _record(obj):
  """A Module's record of its parameters, buffers and children (None for a plain layer or any other object)."""
  return vars(obj).get("_rec") if isinstance(obj, _Tree) and hasattr(obj, "__dict__") else None

def _is_child(v) -> bool:
  """A submodule: a Module, or a plain layer object (teeny's classes: Linear, Sequential, ...; any callable object)."""
  if isinstance(v, _Tree): return True
  if isinstance(v, (Tensor, type, list, tuple, dict, set, str, bytes)) or not hasattr(v, "__dict__"): return False
  mod = type(v).__module__
  if mod.startswith(("teeny.nn.optim", "teeny.nn.state", "teeny.nn.datasets")): return False
  return mod.startswith("teeny.nn") or (callable(v) and not isinstance(v, (types.FunctionType, types.MethodType,
                                                                             types.BuiltinFunctionType)))

def _plain_children(obj, prefix: str = "") -> Iterator[tuple[str, object]]:
  """The submodules of a plain layer object: its attributes that are layers, and layers in its lists/tuples/dicts
  (named as get_state_dict names them: "layers.0")."""
  items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, (list, tuple)) else \
    vars(obj).items() if hasattr(obj, "__dict__") else ()
  for k, v in items:
    if _is_child(v): yield f"{prefix}{k}", v
    elif isinstance(v, (list, tuple, dict)): yield from _plain_children(v, f"{prefix}{k}.")

def _children_of(obj) -> Iterator[tuple[str, object]]:
  if (rec := _record(obj)) is not None:
    for k in rec.children:
      if (v := vars(obj).get(k)) is not None: yield k, v
  else: yield from _plain_children(obj)

def _own_tensors(obj, kind: str) -> Iterator[tuple[str, Tensor]]:
  """A Module's own parameters ("p") or buffers ("b"); a plain layer's every tensor (its whole subtree, as
  get_state_dict walks it: parameters are the tensors made as parameters or that require grad)."""
  if (rec := _record(obj)) is not None:
    d = vars(obj)
    for k in (rec.params if kind == "p" else rec.buffers):
      v = d[k] if k in d else rec.hidden.get(k)
      if v is not None: yield k, v
    return
  subs = tuple(f"{c}." for c, _ in _plain_children(obj))
  for k, t in get_state_dict(obj).items():
    if subs and k.startswith(subs): continue
    if (_is_param(t) or bool(t.requires_grad)) == (kind == "p"): yield k, t

def _repr_of(v) -> str:
  """repr(v); for an object in a layer tree that has none of its own, Name() (torch's text for a module without
  extra_repr)."""
  return repr(v) if type(v).__repr__ is not object.__repr__ else f"{type(v).__name__}()"

class _IncompatibleKeys(tuple):
  """torch's load_state_dict result: (missing_keys, unexpected_keys)."""
  def __new__(cls, missing: list[str], unexpected: list[str]): return super().__new__(cls, (missing, unexpected))
  @property
  def missing_keys(self) -> list[str]: return self[0]
  @property
  def unexpected_keys(self) -> list[str]: return self[1]
  def __repr__(self) -> str:
    return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})" if self[0] or self[1] else \
      "<All keys matched successfully>"

class _Tree:
  """The module-tree methods torch's nn.Module has, for nn.Module and teeny's plain layers alike: walking the
  submodules, parameters and buffers (torch's names and order), the state dict, the training mode, gradients and
  moving or casting the tensors in place."""
  # ---- torch's printing: Name(extra_repr()) with no children, else the extra_repr and each child "(name): repr" on
  # lines of their own, indented
  def extra_repr(self) -> str: return ""
  def __repr__(self) -> str:
    lines = [f"({k}): " + _repr_of(m).replace("\n", "\n  ") for k, m in _children_of(self)]
    extra = self.extra_repr()
    if not lines: return f"{type(self).__name__}({extra})"
    head = [extra] if extra else []
    return f"{type(self).__name__}(\n  " + "\n  ".join(head + lines) + "\n)"

  # ---- walking the tree
  def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
    """(name, module) for self ("") and every submodule, depth first in registration order; a module reachable
    twice is given once unless remove_duplicate=False."""
    yield from _named_modules(self, memo if memo is not None else set(), prefix, remove_duplicate)
  def modules(self):
    for _, m in self.named_modules(): yield m
  def named_children(self):
    seen: set[int] = set()
    for k, m in _children_of(self):
      if id(m) not in seen:
        seen.add(id(m))
        yield k, m
  def children(self):
    for _, m in self.named_children(): yield m
  def _named_tensors(self, kind: str, prefix: str, recurse: bool, remove_duplicate: bool):
    seen: set[int] = set()
    mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
    for mp, m in mods:
      for k, t in _own_tensors(m, kind):
        if remove_duplicate and id(t) in seen: continue
        seen.add(id(t))
        yield (f"{mp}.{k}" if mp else k), t
  def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
    """(name, parameter) in torch's order (each module's own in assignment order, then its children's); a tensor
    shared under two names is given once unless remove_duplicate=False."""
    yield from self._named_tensors("p", prefix, recurse, remove_duplicate)
  def parameters(self, recurse: bool = True):
    for _, p in self.named_parameters(recurse=recurse): yield p
  def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
    """(name, buffer), non-persistent ones included, in torch's order."""
    yield from self._named_tensors("b", prefix, recurse, remove_duplicate)
  def buffers(self, recurse: bool = True):
    for _, b in self.named_buffers(recurse=recurse): yield b

  # ---- state
  def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
    """torch's keys in torch's order (parameters and persistent buffers), through nn.state.get_state_dict. The values
    are the module's own tensors (not detached copies)."""
    if args: raise TypeError("state_dict: pass destination, prefix and keep_vars by keyword")
    out = destination if destination is not None else OrderedDict()
    for k, t in get_state_dict(self).items(): out[prefix + k] = t
    return out
  def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
    """Copy a state dict into the module's tensors (nn.state.load_state_dict: all is checked before anything is
    written). Values may be teeny Tensors, numpy arrays or torch tensors (read through .numpy()). strict=True raises
    RuntimeError listing missing and unexpected keys, as torch's; returns (missing_keys, unexpected_keys)."""
    if not hasattr(state_dict, "items"):
      raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
    sd = {k: _as_tensor(v, k) for k, v in state_dict.items()}
    own = get_state_dict(self)
    missing, unexpected = [k for k in own if k not in sd], [k for k in sd if k not in own]
    if strict and (missing or unexpected):
      msg = f"Error(s) in loading state_dict for {type(self).__name__}:"
      if unexpected: msg += "\n\tUnexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". "
      if missing: msg += "\n\tMissing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
      raise RuntimeError(msg)
    _load_state_dict(self, {k: v for k, v in sd.items() if k in own}, strict=False)
    return _IncompatibleKeys(missing, unexpected)

  # ---- modes and gradients
  @property
  def training(self) -> bool:
    """Tensor.training: teeny's training flag is one per thread, shared by every layer."""
    return bool(Tensor.training)
  @training.setter
  def training(self, mode: bool) -> None: Tensor.training = bool(mode)
  def train(self, mode: bool = True):
    """Set Tensor.training = mode (teeny's one per-thread flag: every layer follows it, not only this module's);
    returns self."""
    if not isinstance(mode, bool): raise ValueError("training mode is expected to be boolean")
    Tensor.training = mode
    return self
  def eval(self):
    """train(False): Tensor.training = False for the thread; returns self."""
    return self.train(False)
  def zero_grad(self, set_to_none: bool = True) -> None:
    """Drop every parameter's gradient (set_to_none=True) or make it zeros."""
    for p in self.parameters():
      if p.grad is None: continue
      p.grad = None if set_to_none else Tensor.zeros(*p.grad.shape, dtype=p.grad.dtype, device=p.grad.device)
  def requires_grad_(self, requires_grad: bool = True):
    """Set requires_grad on every parameter (freezing them with False); returns self."""
    for p in self.parameters(): p.requires_grad = requires_grad
    return self
  def apply(self, fn):
    """fn(module) on every submodule, children first, then self (as torch's); returns self."""
    for m in self.children():
      if isinstance(m, _Tree): m.apply(fn)
      else: _apply_plain(m, fn)
    fn(self)
    return self
  def to(self, *args, **kwargs):
    """Move (device) and/or cast (a float dtype) every parameter and buffer in place; integer buffers keep their
    dtype, as torch's. Returns self."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if kwargs: raise TypeError(f"to: unexpected arguments {list(kwargs)}")
    for a in args:
      if isinstance(a, DType) or (isinstance(a, str) and a in _DTYPE_NAMES): dtype = a
      elif isinstance(a, (str, tuple, list)): device = a
      else: raise TypeError(f"to: expected a device string or a dtype, got {a!r}")
    if dtype is not None:
      dtype = to_dtype(dtype) if isinstance(dtype, str) else dtype
      if not dtypes.is_float(dtype): raise TypeError(f"nn.Module.to only accepts floating point dtypes, got {dtype}")
    seen: set[int] = set()
    for _, t in [*self.named_parameters(remove_duplicate=False), *self.named_buffers(remove_duplicate=False)]:
      if id(t) in seen: continue
      seen.add(id(t))
      _move(t, device, dtype)
    return self
  def cpu(self): return self.to("CPU")
  def float(self): return self.to(dtypes.float32)
  def half(self): return self.to(dtypes.float16)
  def double(self): return self.to(dtypes.float64)
  def bfloat16(self): return self.to(dtypes.bfloat16)

_DTYPE_NAMES = {"float16", "half", "float32", "float", "float64", "double", "bfloat16"}

def _named_modules(m, memo: set, prefix: str, remove_duplicate: bool):
  if remove_duplicate:
    if id(m) in memo: return
    memo.add(id(m))
  yield prefix, m
  for k, c in _children_of(m):
    yield from _named_modules(c, memo, f"{prefix}.{k}" if prefix else k, remove_duplicate)

def _apply_plain(m, fn) -> None:
  for _, c in _plain_children(m):
    if isinstance(c, _Tree): c.apply(fn)
    else: _apply_plain(c, fn)
  fn(m)

def _move(t: Tensor, device, dtype) -> None:
  """t (and its gradient) to device / a float dtype, in place: the same Tensor object holds the new value."""
  new = t.detach()
  if device is not None: new = new.to(device)
  if dtype is not None and dtypes.is_float(t.dtype) and t.dtype != dtype: new = new.cast(dtype)
  if new.device == t.device and new.dtype == t.dtype: return
  new = new.contiguous().realize()
  t.uop = new.uop   # (the same object: the optimizer and the state dict keep holding it)
  if t.grad is not None:
    g = t.grad
    if device is not None: g = g.to(device)
    if g.dtype != t.dtype: g = g.cast(t.dtype)
    t.grad = g

def _as_tensor(v, key: str) -> Tensor:
  if isinstance(v, Tensor): return v
  if hasattr(v, "detach") and hasattr(v, "numpy"):   # a torch tensor
    v = v.detach().cpu()
    if str(v.dtype) == "torch.bfloat16": return Tensor(v.float().numpy(), dtype=dtypes.bfloat16)
    return Tensor(v.numpy())
  if isinstance(v, np.ndarray): return Tensor(v)
  raise TypeError(f"load_state_dict: the value for {key!r} is a {type(v).__name__}, not a tensor")

