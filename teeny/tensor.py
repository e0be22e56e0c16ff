"""Tensor: a thin, lazy handle on a UOp. Every op adds nodes to the graph; nothing runs until a value is needed."""
from __future__ import annotations
import contextvars, dataclasses, functools, math, sys, weakref
from typing import Any, Callable, Literal, Sequence, TypeVar, cast, overload
import numpy as np
from teeny.dtype import DType, dtypes, least_upper_dtype, to_dtype, float32_to_bf16_bits, bf16_bits_to_float32
from teeny.dtype import is_dtype_name
from teeny.dtype import can_cast, check_scalar_fits, result_type
from teeny.helpers import is_int, prod, DEBUG, TF32
from teeny.helpers import broadcast_shape as _broadcast_shape, broadcasts_to as _broadcasts_to
from teeny.device import Device
from teeny.uop.ops import (GroupOp, KernelInfo, Ops, UOp, call_of, implicit_loads, in_memory as _in_memory,
                           written_slots)
# (at module level: the realize path runs these on every call, and a function-local import costs a lookup each time)
# (create_schedule through its module, where tests may wrap it)
from teeny.engine import schedule as _schedule
from teeny.engine.schedule import new_buffer_uop, _as_shaped, _done_writes, _ran_custom, _reapply_views
from teeny.engine.realize import buffer_for, check_version, run_schedule
from teeny.uop.symbolic import VARIABLES_MADE as _VARS
from teeny.tensor_nn import KERNEL_ROUTES, NNMixin, dot_uop, widen
from teeny.tensor_select import SelectMixin
from teeny.tensor_loss import LossMixin
from teeny.tensor_math import MathMixin
from teeny.indexing import reshape_keeps_strides, view_offset, view_strides

# Side tables keyed weakly by graph node (an entry lives as long as some graph still holds the node), so finding what a
# realize or a backward needs costs what its own graph costs, never what the whole process holds:
# every node a leaf (requires_grad set by the user) has stood for -> the leaf
_leaf_of: weakref.WeakKeyDictionary[UOp, weakref.ref] = weakref.WeakKeyDictionary()
# the node a realized tensor that requires grad became -> the graph that computed it (realize never cuts autograd)
_ad_of: weakref.WeakKeyDictionary[UOp, UOp] = weakref.WeakKeyDictionary()
# the non-leaf tensors retain_grad() was called on (by id; a dead one is dropped at the next backward)
_retained: dict[int, weakref.ref] = {}
# the lazy node a tensor had -> the buffer version it was realized into: a graph still holding the node (built from the
# tensor before it was realized) reads that buffer instead of computing the node again. Kept in the node's own
# __dict__ under _REALIZED_AS: the entry lives exactly as long as the node (as a weak-keyed table's would), and every
# realize looks up each node of its graph, for a dict lookup each instead of a weak-keyed table's Python-level one
# (the buffer node weakly too: _ad_of maps it back to the same lazy node, and two strong values would keep both alive)
_REALIZED_AS = "_realized_as"
# a pending write (ASSIGN, or a custom kernel writing its operands) -> the tensors it writes into
_write_origin: weakref.WeakKeyDictionary[UOp, tuple] = weakref.WeakKeyDictionary()
# a pending write rebuilt over versions that earlier writes made -> the writes it was rebuilt from (weakly)
_write_alias: weakref.WeakKeyDictionary[UOp, list] = weakref.WeakKeyDictionary()
_USERS_PRUNE = 64

def _root(t: Tensor) -> Tensor: return t if t._base is None else t._base
def _lazy(u: UOp) -> bool:
  b = u.base
  if b.op is Ops.MULTI: return any(_lazy(s) for s in b.src)   # several devices: realized when every shard is
  return b.op not in (Ops.BUFFER, Ops.CONST)
def _plain(u: UOp) -> bool:
  """A realized buffer, or reshapes of one (a reshape of contiguous memory is contiguous: no copy)."""
  while u.op is Ops.RESHAPE: u = u.src[0]
  return u.op is Ops.BUFFER

HALF = (dtypes.float16, dtypes.bfloat16)  # reductions over these accumulate in float32
_F = TypeVar("_F", bound=Callable)  # a function a mode decorates

def _axis(axis: int | np.integer, ndim: int, name: str = "dim") -> int:
  """The one check behind every dim argument: an int in [-ndim, ndim) (a 0-d tensor takes 0 and -1, as in torch), else
  IndexError naming the argument and the allowed range (torch's "Dimension out of range")."""
  n = max(ndim, 1)
  if not is_int(axis):
    raise TypeError(f"{name} must be an int, got {axis!r}")
  if not -n <= axis < n:
    raise IndexError(f"{name} {axis} is out of range for a tensor with {ndim} dimensions (expected to be in range of "
                     f"[{-n}, {n - 1}])")
  return int(axis) % n

def _dims(dims, ndim: int, name: str = "dim") -> tuple[int, ...]:
  """A sequence of dims checked by _axis, in the given order; a dim named twice is a RuntimeError, as in torch."""
  out = tuple(_axis(d, ndim, name) for d in dims)
  if len(set(out)) != len(out):
    dup = next(d for d in out if out.count(d) > 1)
    raise RuntimeError(f"{name} {dup} appears multiple times in the list of dims {tuple(dims)}")
  return out

class ShapeError(RuntimeError, ValueError):
  """Shapes that do not fit (reshape, expand, cat, stack, permute): a RuntimeError as torch raises, and a ValueError as
  tinygrad and numpy raise, so code written against either catches it."""

# grad mode and training mode belong to the calling thread (context variables: a new thread starts with the defaults,
# grad on and training off, and each asyncio task sees its own copy), so a no_grad block in one thread never changes
# what another thread's ops record. Tensor.training / Tensor._no_grad read and write them through _TensorMeta.
_training_var: contextvars.ContextVar[bool] = contextvars.ContextVar("teeny_training", default=False)
_no_grad_var: contextvars.ContextVar[bool] = contextvars.ContextVar("teeny_no_grad", default=False)

class _ModeCtx:
  """Sets a mode for a `with` block (the previous value comes back on exit, also when an exception passes through) or,
  used as a decorator, for each call of the function. One object may be entered again inside its own block."""
  var: contextvars.ContextVar[bool]
  def __init__(self, value: bool): self.value, self._prev = bool(value), list[bool]()
  def __enter__(self):
    self._prev.append(self.var.get())
    self.var.set(self.value)
    return self
  def __exit__(self, *exc) -> Literal[False]:
    self.var.set(self._prev.pop())
    return False
  def __call__(self, fn: Callable) -> Callable:
    if not callable(fn): raise TypeError(f"{type(self).__name__} decorates a function, not {type(fn).__name__}")
    @functools.wraps(fn)
    def wrapped(*a, **k):
      with type(self)(self.value): return fn(*a, **k)
    return wrapped

class _TrainCtx(_ModeCtx):
  var = _training_var

class _NoGradCtx(_ModeCtx):
  """value=True: no graph for gradients is recorded (Tensor.no_grad); value=False: it is (Tensor.enable_grad)."""
  var = _no_grad_var
  def __init__(self, value: bool = True): super().__init__(value)

class _SetGradCtx(_NoGradCtx):
  """Tensor.set_grad_enabled(mode): sets grad mode at once (a plain call); as a `with` block or decorator it also
  restores the value from before the call on exit."""
  def __init__(self, mode: bool):
    if not isinstance(mode, (bool, int)): raise TypeError(f"set_grad_enabled takes a bool, not {type(mode).__name__}")
    super().__init__(not mode)
    self._prev = [_no_grad_var.get()]
    _no_grad_var.set(self.value)
  def __enter__(self): return self
  def __call__(self, fn: Callable) -> Callable:
    _no_grad_var.set(self._prev[0])  # decorating must not change the mode now, only during each call
    return _NoGradCtx(self.value)(fn)

class _TensorMeta(type):
  """Makes the class attributes Tensor.training and Tensor._no_grad read and assign the calling thread's mode."""
  @property
  def training(cls) -> bool: return _training_var.get()
  @training.setter
  def training(cls, v: bool): _training_var.set(bool(v))
  @property
  def _no_grad(cls) -> bool: return _no_grad_var.get()
  @_no_grad.setter
  def _no_grad(cls, v: bool): _no_grad_var.set(bool(v))
  @property
  def allow_tf32(cls) -> bool:
    """Whether float32 matmuls may run on TF32 tensor cores (CUDA: inputs rounded to a 10-bit mantissa, sums in
    float32). Off by default, so float32 is exact; the same switch as TF32=1 (PyTorch's is
    torch.backends.cuda.matmul.allow_tf32)."""
    return bool(TF32.value)
  @allow_tf32.setter
  def allow_tf32(cls, v: bool): TF32.value = int(bool(v))

class Tensor(SelectMixin, NNMixin, LossMixin, MathMixin, metaclass=_TensorMeta):
  """A lazy n-dimensional array. `Tensor(data, device=, dtype=, requires_grad=)`."""
  # the calling thread's modes, also read on an instance (t.training); assign them on the class (Tensor.training = True)
  training = property(lambda self: _training_var.get(),
                      doc="whether this thread is in training mode (Dropout, BatchNorm)")
  _no_grad = property(lambda self: _no_grad_var.get())
  _seed: int = 0
  _rng_counter: int = 0
  __array_priority__ = 1000  # numpy defers to Tensor for `ndarray op Tensor`
  # copy-on-write: the result of an op torch copies (pad, flip, repeat, a reshape that no strides express...) reads its
  # source lazily, fused into its readers, without aliasing it: a write into it first gives it memory of its own, and a
  # write into its source first copies it (`_give_memory`, `_pending_readers`). Set on the instance by `_copy_result`.
  _cow = False
  _jit: str | None = None   # the TinyJit whose replay returned this tensor (set on the instance: backward's error)

  def __init__(self, data: Any, device: str | None = None, dtype: DType | str | None = None,
               requires_grad: bool | None = None):
    dt = to_dtype(dtype) if dtype is not None else None
    self.grad: Tensor | None = None
    self._requires_grad: bool | None = None
    self._leaf = False
    self._ref = weakref.ref(self)
    # aliasing: a view (movement ops, detach, basic indexing) shares its base's storage; its UOp is a chain of movement
    # ops over the base's current UOp, rebuilt when a write moves the base to a new version
    self._base: Tensor | None = None
    self._seen: UOp | None = None
    # the tensors this one was computed from, and weak links to the tensors computed from it (with the UOp they read):
    # how a write finds the lazy tensors that still read the contents it overwrites
    self._srcs: tuple = ()
    self._users: list | None = None
    self._hub = False
    if isinstance(data, UOp):
      self._uop = data if dt is None or data.dtype == dt else data.cast(dt)
    elif isinstance(data, Tensor):
      if dt is None or dt == data.dtype:
        self._uop = data.uop
        self._link((data,))
        self._alias(data)
      else:
        self._uop = data.uop.cast(dt)
        self._link((data,))
    elif isinstance(data, (bool, int, float, np.bool_, np.integer, np.floating)) and not isinstance(data, np.ndarray):
      dev = Device.canonicalize(device)
      if dt is not None and not isinstance(data, (np.integer, np.floating)): check_scalar_fits(data, dt)
      dt = dt or (dtypes.from_np(np.asarray(data).dtype) if isinstance(data, (np.integer, np.floating))
                  else dtypes.from_py(data))
      self._uop = UOp.const(dt, data, dev)
    else:
      self._uop = _from_host(data, Device.canonicalize(device), dt)
      if self._uop.dtype.kind in "iu" and isinstance(data, (list, tuple, np.ndarray)) and self.numel():
        # integer values known on the host (token ids, labels): range checks need no device read
        arr = np.asarray(data)
        if arr.dtype.kind in "fO" and isinstance(data, (list, tuple)):   # (exact past 2**53)
          arr = _exact_ints(data, arr.shape, self._uop.dtype)
        self._host_range = (self._uop, int(arr.min()), int(arr.max()))
    if requires_grad is not None: self.requires_grad = requires_grad

  # ---- the UOp, aliasing and links
  @property
  def uop(self) -> UOp:
    b = self._base
    if b is None or self._seen is b._uop: return self._uop
    self._uop, self._seen = _reapply_views(self._uop, cast(UOp, self._seen), b._uop), b._uop  # _seen is set with _base
    return self._uop
  @uop.setter
  def uop(self, u: UOp):
    self._base = self._seen = None   # given a UOp of its own, a view stops aliasing its base
    self._set_uop(u)
  def _set_uop(self, u: UOp):
    self._uop = u
    if self._leaf: _leaf_of[u] = self._ref
  def _link(self, srcs: tuple):
    """Record that self was computed from srcs (strong, while it may be needed) and register self with each of them."""
    self._srcs = self._srcs + srcs if self._srcs else srcs
    for s in srcs: s._add_user(self, s.uop)
  def _alias(self, src: Tensor):
    """Make self (whose UOp is a chain of movement ops over src's) a view of src's storage: registered with the base
    too, so a write into the base finds what was computed from the view."""
    b = _root(src)
    self._base, self._seen = b, b._uop
    if b is not src: b._add_user(self, b._uop)
  def _add_user(self, t: Tensor, read: UOp):
    """Register t as computed from self, with what it read: a memory version (kept: no sources, no graph), a weak
    reference to a pending write (the write's graph must not outlive it), or None for a lazy value."""
    b = read.base
    tag = b if b.op is Ops.BUFFER else weakref.ref(b) if b.op is Ops.ASSIGN else None
    if self._users is None: self._users = []
    us = self._users
    us.append((t._ref, tag))
    if len(us) >= _USERS_PRUNE and len(us) & (len(us) - 1) == 0: us[:] = [e for e in us if e[0]() is not None]

  # ---- basic properties
  # (a tensor that is not a view needs no re-derived UOp: read its own directly, these are hot)
  @property
  def shape(self) -> tuple[int, ...]: return (self._uop if self._base is None else self.uop).shape
  @property
  def dtype(self) -> DType: return (self._uop if self._base is None else self.uop).dtype
  @property
  def device(self) -> str: return (self._uop if self._base is None else self.uop).device
  @property
  def ndim(self) -> int: return len(self.shape)
  def numel(self) -> int:
    n = prod(s := self.shape)
    if isinstance(n, UOp):
      from teeny.uop.symbolic import sprod
      return sprod(s)
    return n
  def size(self, dim: int | None = None): return self.shape if dim is None else self.shape[_axis(dim, self.ndim)]
  def element_size(self) -> int: return self.dtype.itemsize
  def stride(self, dim: int | None = None):
    """torch's strides in elements (of dim, or a tuple of all): a view (slicing, permute, transpose, expand, a reshape
    that strides express) has the strides of its base's memory, 0 along expanded dims; any other tensor is laid out
    row-major, contiguous. A dim of size 1 reports the stride a contiguous layout gives it (torch keeps the stride of
    the dim it was sliced from; no address is ever computed with it), and so does every dim of an empty view."""
    shape = self.shape
    if _has_sym(shape): raise RuntimeError("stride() of a tensor with symbolic (Variable) sizes is not known")
    st = view_strides(self.uop, self._base._uop) if self._base is not None and not self._cow and self.numel() else None
    out = list(st) if st is not None else [0] * len(shape)
    for d in range(len(shape) - 1, -1, -1):
      if st is None or shape[d] <= 1: out[d] = out[d + 1] * max(shape[d + 1], 1) if d + 1 < len(shape) else 1
    return tuple(out) if dim is None else out[_axis(dim, len(shape))]
  def storage_offset(self) -> int:
    """torch's storage_offset: where a view's first element lies in its base's memory, in elements (0 for a tensor
    that is not a view)."""
    if self._base is None or self._cow or _has_sym(self.shape): return 0
    off = view_offset(self.uop, self._base._uop)
    return off if off is not None else 0
  def is_contiguous(self, memory_format=None) -> bool:
    """torch's is_contiguous: the elements lie row-major, one after the other, in memory (dims of size 1 ignored; a
    tensor with no elements is contiguous). Only the default memory format exists in teeny."""
    if memory_format is not None and getattr(memory_format, "__name__", str(memory_format)).split(".")[-1] not in (
        "contiguous_format", "preserve_format"):
      raise NotImplementedError(f"is_contiguous(memory_format={memory_format}): teeny lays tensors out row-major only")
    if self.numel() == 0: return True
    expect = 1
    for s, st in zip(reversed(self.shape), reversed(self.stride())):
      if s != 1 and st != expect: return False
      expect *= s
    return True
  def __len__(self) -> int:
    if not self.shape: raise TypeError("len() of a 0-d tensor")
    return self.shape[0]
  def __repr__(self) -> str:
    return f"<Tensor {self.shape} {self.dtype} on {self.device}{' requires_grad' if self.requires_grad else ''}>"
  def __hash__(self): return id(self)
  def __bool__(self):
    if self.numel() != 1:
      raise RuntimeError(f"the truth value of a tensor with {self.numel()} elements is ambiguous; use .any() or .all()")
    return bool(self.item())
  def _one(self, what: str) -> Any:
    if self.numel() != 1:
      raise TypeError(f"{what}() of a tensor needs exactly one element, this one has shape {self.shape}; use .item() "
                      "on one element or .tolist()")
    return self.item()
  def __float__(self) -> float: return float(self._one("float"))
  def __int__(self) -> int: return int(self._one("int"))
  def __index__(self) -> int:
    """operator.index, as torch: one element of an integer (or bool) dtype (`lst[t]`, `range(t)`)."""
    if self.dtype.kind not in "iub":
      raise TypeError(f"only integer tensors of a single element can be converted to an index, not {self.dtype}")
    return int(self._one("index"))
  def __format__(self, spec: str) -> str:
    """f"{t:.2f}" formats a 0-d tensor's value (torch's rule); with no spec, str(t)."""
    if self.ndim == 0 and spec: return format(self.item(), spec)
    if spec: raise TypeError(f"unsupported format string {spec!r} for a {self.ndim}-d tensor; format its .item()")
    return str(self)
  def __contains__(self, x) -> bool:
    """`x in t`: whether any element equals x (torch's rule), for a number or a tensor that broadcasts to t."""
    if not isinstance(x, (Tensor, bool, int, float, np.generic)):
      raise RuntimeError(f"Tensor.__contains__ only supports a Tensor or a number, got {type(x).__name__}")
    return bool((self == x).any().item())
  __array_priority__ = 1000   # numpy defers `ndarray op tensor` to the Tensor (torch's value)
  def __array__(self, dtype=None, copy=None) -> np.ndarray:
    """np.asarray(t), np.array(t, dtype=...), and numpy functions of tensors (np.exp(t) returns an ndarray, as for a
    torch CPU tensor). Realizes the tensor and reads it."""
    a = self.detach().numpy()
    return a.astype(dtype, copy=False) if dtype is not None else a
  def __deepcopy__(self, memo: dict) -> Tensor:
    """copy.deepcopy: a tensor with memory of its own (a lazy copy, made before any later write to this one), the same
    requires_grad, and a deep copy of .grad (torch's semantics; an EMA model `copy.deepcopy(model)` needs it)."""
    import copy
    out = self.detach().clone()
    if self._requires_grad: out.requires_grad = True
    memo[id(self)] = out
    if self.grad is not None: out.grad = copy.deepcopy(self.grad, memo)
    return out
  def __reduce__(self):
    """pickle (and copy.copy): the values, dtype, device and requires_grad; .grad is not kept (torch's pickling)."""
    if isinstance(self.device, tuple):
      raise TypeError(f"cannot pickle a tensor on several devices {self.device}; gather it first (.to('CPU'))")
    a = self.detach()
    raw = a.bitcast(dtypes.uint16).numpy() if a.dtype == dtypes.bfloat16 else a.numpy()
    return (_unpickle_tensor, (np.ascontiguousarray(raw), self.dtype.name, self.device, self._requires_grad))
  def host_range(self) -> tuple[int, int] | None:
    """(min, max) of an integer tensor made from host data and not changed since, else None (free: no device read)."""
    hr = getattr(self, "_host_range", None)
    return (hr[1], hr[2]) if hr is not None and hr[0] is self.uop else None
  @property
  def requires_grad(self) -> bool:
    """Whether autograd records ops on this tensor (torch's bool; the setter also takes tinygrad's None, "not set",
    which an optimizer given the tensor turns into True and `_requires_grad` keeps)."""
    if self._requires_grad is None and (b := self._base) is not None and b._requires_grad and _views_grad(self):
      # a view of memory that a gradient-carrying write reached after the view was taken (torch rebases its grad_fn)
      self._requires_grad = True
    return bool(self._requires_grad)
  @requires_grad.setter
  def requires_grad(self, v: bool | None):
    if v and not (self.dtype.kind == "f"):
      raise RuntimeError(f"only floating point tensors can require gradients, not {self.dtype}")
    self._requires_grad = v
    # set by the user: this tensor is a leaf, whatever graph (rand, arange...) made its value
    self._leaf = bool(v)
    if v: _leaf_of[self.uop] = self._ref

  def requires_grad_(self, v: bool = True) -> Tensor:
    self.requires_grad = v
    return self
  @property
  def is_leaf(self) -> bool:
    """torch's is_leaf: a tensor that does not require grad, or one whose requires_grad the user set (not an op's
    result): backward() fills `.grad` of these."""
    return not self._requires_grad or self._leaf
  def retain_grad(self) -> None:
    """Make backward() fill `.grad` of this non-leaf tensor too (torch's retain_grad); no effect on a leaf."""
    if not self._requires_grad:
      raise RuntimeError("retain_grad(): this tensor does not require grad; it has no gradient to keep")
    if not self._leaf: _retained[id(self)] = self._ref
  @property
  def retains_grad(self) -> bool: return not self._leaf and id(self) in _retained and _retained[id(self)]() is self
  def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Callable[[], None]:
    """torch's register_hook on a leaf: backward() calls hook(grad) with this leaf's gradient before adding it to
    `.grad`; a tensor it returns replaces the gradient. Returns a handle-like function that removes the hook. Hooks on
    non-leaf tensors (which change the gradient flowing further back) are not supported."""
    if not self._requires_grad:
      raise RuntimeError("register_hook: cannot register a hook on a tensor that does not require grad")
    if not self._leaf:
      raise NotImplementedError("register_hook: teeny supports hooks on leaves (tensors you set requires_grad on) "
                                "only; to see a non-leaf's gradient use retain_grad() or Tensor.gradient()")
    hooks = self.__dict__.setdefault("_hooks", [])
    hooks.append(hook)
    class _Handle:
      def remove(_) -> None:
        if hook in hooks: hooks.remove(hook)
      __call__ = remove
    return _Handle()

  # ---- modes (per thread; each works as a `with` block or a decorator: the overloads give mypy both)
  @overload
  @staticmethod
  def train(mode: bool = True) -> _TrainCtx: ...
  @overload
  @staticmethod
  def train(mode: _F) -> _F: ...
  @staticmethod
  def train(mode: bool | Callable = True) -> _TrainCtx | Callable:
    """Training mode on (or `mode`) for a block: Dropout drops, BatchNorm uses and updates batch statistics."""
    return _TrainCtx(True)(mode) if callable(mode) else _TrainCtx(mode)
  @overload
  @staticmethod
  def test(fn: None = None) -> _TrainCtx: ...
  @overload
  @staticmethod
  def test(fn: _F) -> _F: ...
  @staticmethod
  def test(fn: Callable | None = None) -> _TrainCtx | Callable:
    """Training mode off for a block."""
    return _TrainCtx(False)(fn) if fn is not None else _TrainCtx(False)
  @overload
  @staticmethod
  def no_grad(fn: None = None) -> _NoGradCtx: ...
  @overload
  @staticmethod
  def no_grad(fn: _F) -> _F: ...
  @staticmethod
  def no_grad(fn: Callable | None = None) -> _NoGradCtx | Callable:
    """Ops in the block record no graph for gradients: their results do not require grad (torch.no_grad)."""
    return _NoGradCtx(True)(fn) if fn is not None else _NoGradCtx(True)
  @overload
  @staticmethod
  def enable_grad(fn: None = None) -> _NoGradCtx: ...
  @overload
  @staticmethod
  def enable_grad(fn: _F) -> _F: ...
  @staticmethod
  def enable_grad(fn: Callable | None = None) -> _NoGradCtx | Callable:
    """Gradients recorded again inside a no_grad block (torch.enable_grad)."""
    return _NoGradCtx(False)(fn) if fn is not None else _NoGradCtx(False)
  @staticmethod
  def set_grad_enabled(mode: bool) -> _SetGradCtx:
    """Turn gradient recording on or off for this thread now; as a `with` block or decorator, restored on exit."""
    return _SetGradCtx(mode)
  @staticmethod
  def is_grad_enabled() -> bool: return not _no_grad_var.get()

  # ---- realizing
  def _wrap(self, u: UOp, *srcs: Tensor, view: bool = False, rg: bool | None = None) -> Tensor:
    """A new tensor for `u`, made from self and srcs (gradient tracking follows its sources; `rg`: whether any of
    them requires grad, where the caller knows)."""
    for s in srcs: self._same_device(s)   # (raised at the op, as torch, not at realize)
    if not view and u.base.op in (Ops.BUFFER, Ops.ASSIGN) and (u.op in GroupOp.Movement
                                                               or u.op in (Ops.BUFFER, Ops.ASSIGN)):
      # an op that changed nothing (a sum over size-1 axes) still makes a new tensor, not a second owner of the memory
      u = UOp(Ops.CONTIGUOUS, u.dtype, (u,))
    if rg is None: rg = any(s.requires_grad for s in (self,) + srcs)
    if rg and Tensor._no_grad: u, rg = UOp(Ops.DETACH, u.dtype, (u,)), False
    t = Tensor(u)
    if rg: t._requires_grad = True
    t._link((self,) + srcs)
    return t
  def _same_device(self, x: Tensor) -> None:
    if x.device != self.device:
      raise RuntimeError(f"operands are on different devices: {self.device} and {x.device}; "
                         f"move one with .to(), e.g. x.to({self.device!r})")
  def _view(self, u: UOp) -> Tensor:
    """A new tensor for `u`, a chain of movement ops over self's UOp, that shares self's storage: a write through
    either is seen by both (PyTorch's views)."""
    t = self._wrap(u, view=True)
    t._alias(self)
    return t
  @staticmethod
  def realize_all(*tensors: Tensor) -> None:
    """Realize tensors in one schedule. A view realizes its base. Lazy tensors that read memory a write in this schedule
    overwrites are realized in it too, before the write."""
    todo = [_root(tensors[0])] if len(tensors) == 1 else list({id(b): b for b in map(_root, tensors)}.values())
    todo = [t for t in todo if _lazy(t._uop)]
    if not todo: return
    walked: _schedule.Walk | None
    walked, changed = _resolve_executed(todo)
    if changed:   # (a graph changed, maybe to a write that already ran)
      for t in todo:
        if not _lazy(t._uop):
          todo, walked = [t for t in todo if _lazy(t._uop)], None
          break
      if not todo: return
      if walked is None: walked = _schedule.walk([t._uop for t in todo])
    while _write_origin and (more := _pending_readers(todo, walked.nodes)):
      # the readers found may hold pending writes of their own, with readers of their own: until none is left
      _resolve_executed(more)
      todo += more
      walked = _schedule.walk([t._uop for t in todo])
    if DEBUG.value >= 5:
      for t in todo: print(t._uop)
    roots = [todo[0]._uop] if len(todo) == 1 else list(dict.fromkeys([t._uop for t in todo]))
    # (the walk's key names its roots in order: it serves only when no tensor repeated another's graph)
    items, becomes = _schedule.create_schedule(roots, walked=walked if len(roots) == len(todo) else None)
    run_schedule(items)
    if _write_origin:
      for n in [n for n in _write_origin if n.op is Ops.CUSTOM_KERNEL and n in _ran_custom]: del _write_origin[n]
    for n, v in becomes.items():
      if n.op is not Ops.ASSIGN: continue
      _done_writes[n] = v
      for a in _write_alias.pop(n, ()):
        if (o := a()) is not None: _done_writes[o] = v
      for r in _write_origin.pop(n, ()):
        if (o := r()) is not None and o._uop.base is n:
          new = _reapply_views(o._uop, n, v)
          if o._requires_grad and not o._leaf: _ad_of[new] = o._uop
          o._set_uop(new)
    seen: set[UOp] = set()
    for t in todo:
      old = t._uop
      if not _lazy(old):   # moved to the version a write made, above
        _drop_links(t)
        continue
      new = becomes[old]
      if old in seen and new.base.op is Ops.BUFFER:
        # two tensors built from the same graph still own separate memory (one may be written in place later)
        new = Tensor(UOp(Ops.CONTIGUOUS, new.dtype, (new,))).realize().uop
      seen.add(old)
      if t._requires_grad and not t._leaf and new is not old: _ad_of[new] = old
      if new.base.op is Ops.BUFFER: old.__dict__[_REALIZED_AS] = weakref.ref(new)
      t._set_uop(new)
      _drop_links(t)
  def realize(self, *more: Tensor) -> Tensor:
    """Run the kernels that compute this tensor (and `more`), in one schedule."""
    Tensor.realize_all(self, *more)
    return self
  def schedule(self, *more: Tensor) -> list:
    """The ScheduleItems that would realize these tensors, for inspection: nothing runs, and nothing is recorded as
    run (building a schedule notes each custom kernel's outputs as written, for the realize that runs it; kept, that
    note made a later realize skip the kernel and read its output unwritten)."""
    before = dict(_ran_custom)
    try: return _schedule.create_schedule([t.uop for t in (self, *more)])[0]
    finally:
      for k in [k for k in _ran_custom if k not in before]: del _ran_custom[k]
      _ran_custom.update(before)
  def contiguous(self) -> Tensor:
    if _in_memory(u := self.uop) or (u.op is Ops.MULTI and all(_plain(s) for s in u.src)): return self
    return self._wrap(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)))
  def contiguous_backward(self) -> Tensor:
    """The same values; in backward() the gradient that reaches this tensor gets its own buffer (it is made
    contiguous) instead of being recomputed inside each kernel that reads it (tinygrad's name; a mixed-precision matmul
    uses it so its backward matmuls load a stored bfloat16 gradient)."""
    return self._wrap(UOp(Ops.CONTIGUOUS_BACKWARD, self.dtype, (self.uop,)))
  def _buffer(self):
    """The realized, contiguous buffer holding this tensor's values (realizing, or copying a view, when needed)."""
    u = self.uop
    if (u.base.op is Ops.ASSIGN or (self._base is None and _lazy(u))
        or (self._base is not None and _lazy(self._base._uop) and u.base.op is not Ops.CONST)):
      self.realize()
      u = self.uop
    if _plain(u): return check_version(u.base, "reading this tensor")
    return buffer_for(Tensor(UOp(Ops.CONTIGUOUS, self.dtype, (u,))).realize().uop.base)
  def numpy(self) -> np.ndarray:
    """The values as a numpy array (bfloat16 comes back as float32)."""
    from teeny.engine import realize
    if realize.recorder is not None: realize.recorder.host_read(self)   # TinyJit: no host reads in a captured step
    if isinstance(self.device, tuple): return self.realize().to(self.device[0]).numpy()   # several devices: gather
    if self.numel() == 0:
      return np.zeros(self.shape, dtype=np.float32 if self.dtype == dtypes.bfloat16 else self.dtype.np)
    if Device[self.device].runs_nothing:
      raise RuntimeError(f"the {self.device} device runs nothing and holds no data; "
                         "use DEV=CPU (or .to('CPU')) to read values")
    # a symbolic tensor's buffer is sized for the variables' largest values: read the bound part
    if _VARS[0] and _has_sym(self.shape):
      from teeny.uop.symbolic import sym_val
      shape = tuple(sym_val(s) for s in self.shape)
      return self._buffer().numpy()[:prod(shape)].reshape(shape)
    return self._buffer().numpy().reshape(self.shape)
  def data(self) -> memoryview: return self.numpy().data
  def item(self) -> Any:
    if self.numel() != 1:
      raise ValueError(f"item() needs a tensor with exactly one element, this one has shape {self.shape}")
    return self.numpy().reshape(()).item()
  def tolist(self) -> Any: return self.numpy().tolist()
  def to(self, *args, **kwargs) -> Tensor:
    """torch's forms: to(device), to(dtype), to(device, dtype), to(other) (other's device and dtype), with keywords
    device=, dtype=, copy= (a new tensor even when nothing changes) and non_blocking= (no effect). A list or tuple of
    devices replicates the tensor over them (shard). Nothing to change: self itself, as torch's."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    if kwargs: raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
      if isinstance(a, Tensor): device, dtype = a.device, a.dtype
      elif isinstance(a, DType) or is_dtype_name(a) or a in (bool, int, float): dtype = a
      elif isinstance(a, (str, tuple, list)) or a is None: device = a if a is not None else device
      elif isinstance(a, bool): continue   # (torch's positional non_blocking / copy)
      else: raise TypeError(f"to(): expected a device, a dtype or a Tensor, got {a!r}")
    out = self.cast(to_dtype(dtype)) if dtype is not None else self
    if device is not None:
      if not isinstance(device, str): return out.shard(device)   # several: replicate
      if (dev := Device.canonicalize(device)) != out.device:
        out = out._wrap(UOp(Ops.COPY, out.dtype, (out.contiguous().uop,), dev))
    return out.clone() if copy and out is self else out
  def select(self, dim: int, index: int) -> Tensor:
    """torch.select: the view self[..., index, ...] at dim (the dim removed); negative index from the end."""
    d = _axis(dim, self.ndim)
    return self[(slice(None),) * d + (index,)]
  def cpu(self) -> Tensor: return self.to("CPU")
  def clone(self) -> Tensor: return self._wrap(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)))
  def _fresh(self, out: Tensor) -> Tensor:
    """out, the result of an op that torch copies, as a tensor of its own: where the op had nothing to do and out is
    self or a view of self's storage (cumsum over a size-1 dim, abs of unsigned ints, pixel_shuffle(1)...), a
    copy-on-write result (no kernel), so a write into it never reaches self."""
    if out is self or (out._base is not None and _root(out) is _root(self)): return _copy_result(self, out)
    return out
  def detach(self) -> Tensor:
    """The same storage without autograd history (writes through either are seen by both, as in PyTorch)."""
    t = Tensor(UOp(Ops.DETACH, self.dtype, (self.uop,)))
    t._link((self,))
    t._alias(self)
    return t
  def assign(self, x: Any) -> Tensor:
    """Write x into this tensor in place (lazily). The write goes to the storage this tensor views, at the view's
    addresses, ordered after every read issued before it: views of the storage see it, lazy tensors computed earlier
    keep the values they read. Writing a leaf that requires grad (an optimizer step, `w -= lr * w.grad`) updates its
    data and is not recorded for autograd; a write into any other tensor is (torch's in-place semantics)."""
    if not isinstance(x, Tensor): x = Tensor(x, device=self.device, dtype=self.dtype)
    if x.device != self.device:
      raise RuntimeError(f"assign: value is on {x.device}, target on {self.device}; move it with .to()")
    if x.shape != self.shape:
      if not _broadcasts_to(x.shape, self.shape):
        raise RuntimeError(f"assign: the value's shape {x.shape} cannot be broadcast "
                           f"to the target's shape {self.shape}")
      x = x.expand(self.shape)
    return self._write(x)
  def _write(self, x: Tensor, index: Tensor | None = None) -> Tensor:
    """The one way teeny writes in place: ASSIGN(view, value) -> the storage's next version. With `index` (flat
    positions in this tensor, one per value element) the write is a scatter: value[i] goes to position index[i]."""
    if x.dtype != self.dtype: x = x.cast(self.dtype)
    if (n := self.numel()) == 0 and isinstance(n, int): return self   # (nothing to write: torch's no-op)
    base = _root(self)
    old = base._uop
    # a write under no_grad, or through a detach()ed view, is not recorded, and leaves the autograd graph of a tensor
    # that has one as it was (torch's: the tensor keeps its grad_fn; the gradient passes as if nothing were written)
    detached = self is not base and _through_detach(self.uop, old)
    invisible = not base._leaf and bool(base._requires_grad) and (Tensor._no_grad or detached)
    record = not base._leaf and not Tensor._no_grad and not detached and (x.requires_grad or base.requires_grad)
    value = x.uop if record or not x.requires_grad else UOp(Ops.DETACH, x.dtype, (x.uop,))
    target = self.uop
    prev = target.base
    if base._cow or prev.op not in (Ops.BUFFER, Ops.ASSIGN):
      # (a recorded write that drops the old value entirely still connects it to autograd, with zero gradient; an
      # invisible one needs a node of its own to map back to the old graph)
      if self is base and index is None and not invisible and not (record and base._uop not in value.toposort):
        # the whole of a tensor that has no memory (or reads another's, copy-on-write): its value simply becomes x
        # (views of it follow)
        base._set_uop(value)
        base._cow = False
        if record: base._requires_grad = True
        return self
      # a part of one: give its current value memory of its own to be written into
      _give_memory(base)
      target = self.uop
      prev = target.base
    _check_writable(target, prev)
    if index is None: a = UOp(Ops.ASSIGN, self.dtype, (target, value))
    else: a = UOp(Ops.ASSIGN, self.dtype, (target.reshape((self.numel(),)), value, index.cast(dtypes.int32).uop))
    base._set_uop(_reapply_views(base._uop, prev, a))
    if invisible: _ad_of[base._uop] = old
    _write_origin[a] = (base._ref,)
    base._link((x,) if index is None else (x, index))
    if record: base._requires_grad = True
    return self
  def replace(self, x: Tensor) -> Tensor:
    if x.shape != self.shape: raise ValueError(f"replace: shape {x.shape} does not match {self.shape}")
    self.uop = x.uop
    return self

  # ---- creation
  @staticmethod
  def empty(*shape, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    shape = _shape_arg(_factory_kw("empty", shape, kw))
    dt = to_dtype(dtype) if dtype else dtypes.default_float
    if _VARS[0] and _has_sym(shape): return _sym_empty(shape, dt, device, kw)
    if isinstance(dev := Device.canonicalize(device), tuple):   # several devices: memory of its own on each
      t = Tensor.from_shards([Tensor.empty(*shape, dtype=dt, device=d) for d in dev], None)
      if kw.get("requires_grad") is not None: t.requires_grad = kw["requires_grad"]
      return t
    return Tensor(new_buffer_uop(dev, prod(shape), dt).reshape(shape), **kw)
  @staticmethod
  def full(shape=None, fill_value: Any = None, dtype: DType | str | None = None, device: str | None = None,
           **kw) -> Tensor:
    if "size" in kw:
      if shape is not None: raise TypeError("full: pass the shape either positionally or as size=, not both")
      shape = kw.pop("size")
    _factory_kw("full", None, kw)
    if shape is None: raise TypeError("full: missing the shape (full(shape, fill_value), or size=shape)")
    if fill_value is None: raise TypeError("full: missing fill_value (full(shape, fill_value))")
    shape = _shape_arg((shape,) if is_int(shape) else tuple(shape))
    dt = to_dtype(dtype) if dtype else dtypes.from_py(fill_value)
    check_scalar_fits(fill_value, dt)   # (full((2,), 2**31 + 5, dtype=int32) raises, as in torch: no silent wrap)
    c = UOp.const(dt, fill_value, Device.canonicalize(device))
    return Tensor(c.reshape((1,) * len(shape)).expand(shape) if shape else c, **kw)
  @staticmethod
  def zeros(*shape, **kw) -> Tensor:
    return Tensor.full(_shape_arg(_factory_kw("zeros", shape, kw, _FACTORY_KW)), 0.0,
                       **{"dtype": dtypes.default_float, **kw})
  @staticmethod
  def ones(*shape, **kw) -> Tensor:
    return Tensor.full(_shape_arg(_factory_kw("ones", shape, kw, _FACTORY_KW)), 1.0,
                       **{"dtype": dtypes.default_float, **kw})
  def full_like(self, fill_value: Any, **kw) -> Tensor:
    return Tensor.full(self.shape, fill_value, **{"dtype": self.dtype, "device": self.device, **kw})
  def zeros_like(self, **kw) -> Tensor: return self.full_like(0, **kw)
  def ones_like(self, **kw) -> Tensor: return self.full_like(1, **kw)
  def empty_like(self, **kw) -> Tensor:
    return Tensor.empty(*self.shape, **{"dtype": self.dtype, "device": self.device, **kw})
  @staticmethod
  def arange(start, stop=None, step=1, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    _factory_kw("arange", None, kw)
    if _VARS[0] and _has_sym(start, stop, step): return _sym_arange(start, stop, step, dtype, device, kw)
    if stop is None: start, stop = 0, start
    if step == 0: raise ValueError("arange: step must not be zero")
    if dtype and to_dtype(dtype).kind in "iu" and any(isinstance(x, float) for x in (start, stop, step)):
      return _arange_int_of_floats(start, stop, step, to_dtype(dtype), device, kw)
    n = max(0, math.ceil((stop - start) / step))
    if dtype: dt = to_dtype(dtype)
    elif any(isinstance(x, float) for x in (start, stop, step)): dt = dtypes.default_float
    else:  # ints past int32 (arange(2**31, 2**31 + 4)) make an int64 range, as for Tensor(2**31)
      last = start + (n - 1) * step if n else start
      dt = dtypes.int_for_range(min(start, last), max(start, last))
    dev = Device.canonicalize(device)
    idx = Tensor(UOp(Ops.ARANGE, dt, (), (n, dev)))
    out = idx * step + start if (step != 1 or start != 0) else idx
    out = out.cast(dt)
    out.requires_grad = kw.get("requires_grad")
    return out
  @staticmethod
  def linspace(start, stop, steps: int, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """`steps` values from start to stop, both included (torch.linspace): the first half counted up from start and the
    second down from stop, so the last value is exactly stop; an int dtype truncates toward zero. steps=0 is empty,
    steps=1 is [start]."""
    _factory_kw("linspace", None, kw)
    if not is_int(steps):
      raise TypeError(f"linspace: steps must be an int, got {steps!r}")
    if steps < 0: raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    dt = to_dtype(dtype) if dtype else dtypes.default_float
    if steps <= 1:
      out = Tensor.full((steps,), start, dtype=dt, device=device) if dt.kind == "f" else \
        Tensor.full((steps,), math.trunc(start), dtype=dt, device=device)
    else:
      ct = dtypes.float64 if dt in (dtypes.float64, dtypes.int64, dtypes.uint64) else dtypes.float32
      step = (stop - start) / (steps - 1)
      i = Tensor.arange(steps, device=device, dtype=ct)
      out = (i < steps // 2).where(i * step + start, stop - (steps - 1 - i) * step)
      out = out.trunc().cast(dt) if dt.kind != "f" else out.cast(dt)
    out.requires_grad = kw.get("requires_grad")
    return out
  @staticmethod
  def eye(n: int, m: int | None = None, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """torch.eye: an (n, m) matrix (m defaults to n) with ones on the diagonal; n and m must be ints >= 0."""
    _factory_kw("eye", None, kw)
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
      if not is_int(v):
        raise TypeError(f"eye: {name} must be an int, got {v!r}")
      if v < 0: raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {v}")
    n, m = int(n), int(m)
    r = Tensor.arange(n, device=device).reshape(n, 1)
    c = Tensor.arange(m, device=device).reshape(1, m)
    out = (r == c).cast(to_dtype(dtype) if dtype else dtypes.default_float)
    out.requires_grad = kw.get("requires_grad")
    return out

  # ---- random numbers: a counter-based hash computed in kernels, so the same seed gives the same numbers everywhere
  @staticmethod
  def manual_seed(seed: int = 0):
    Tensor._seed, Tensor._rng_counter = int(seed), 0
  @staticmethod
  def _random_bits(numel: int, device: str | None) -> Tensor:
    base = Tensor._rng_counter
    Tensor._rng_counter += numel
    key = _hash32_py((Tensor._seed * 0x9E3779B1 + 0x7F4A7C15) & 0xFFFFFFFF)
    # the counter is data (a one-element buffer), not a constant in the source, so every call reuses one kernel
    dev = Device.canonicalize(device)
    ctr = (Tensor(np.array([(base + key) & 0xFFFFFFFF], dtype=np.uint32), device=dev) if not Device[dev].runs_nothing
           else Tensor.empty(1, dtype=dtypes.uint32, device=dev))
    from teeny.engine import realize
    if realize.recorder is not None: realize.recorder.rng_counter(ctr.uop.base, base)   # TinyJit replays advance it
    i = Tensor.arange(numel, device=device, dtype=dtypes.uint32) + ctr.reshape((1,)).expand(numel)
    h = _hash32(_hash32(i) ^ key)
    return h
  @staticmethod
  def rand(*shape, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """Uniform in [0, 1), as torch makes it: k / 2**m for a random int k of m bits, m the dtype's mantissa width plus
    one (24 for float32, 53 for float64 from two 32-bit draws, 11 for float16, 8 for bfloat16), so 1.0 never comes."""
    shape = _shape_arg(shape)
    shape = _shape_arg(_factory_kw("rand", shape, kw))
    dt = _random_float_dtype("rand", dtype)
    n = prod(shape)
    if dt == dtypes.float64:
      bits = Tensor._random_bits(2 * n, device)
      hi, lo = bits.shrink(((0, n),)), bits.shrink(((n, 2 * n),))
      out = ((hi >> 5).cast(dtypes.float64) * float(1 << 26) + (lo >> 6).cast(dtypes.float64)) * (0.5 ** 53)
    else:
      m = {dtypes.float16: 11, dtypes.bfloat16: 8}.get(dt, 24)
      out = ((Tensor._random_bits(n, device) >> (32 - m)).cast(dtypes.float32) * (0.5 ** m)).cast(dt)
    out = out.reshape(shape)
    out.requires_grad = kw.get("requires_grad")
    return out
  def rand_like(self, **kw) -> Tensor:
    return Tensor.rand(*self.shape, **{"dtype": self.dtype, "device": self.device, **kw})
  @staticmethod
  def randn(*shape, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """Standard normal, by Box-Muller."""
    shape = _shape_arg(_factory_kw("randn", shape, kw))
    dt = _random_float_dtype("randn", dtype)
    u = Tensor.rand(2, *shape, device=device)
    z = (1 - u[0]).log().mul(-2).sqrt() * (u[1] * (2 * math.pi)).cos()
    out = z.cast(dt)
    out.requires_grad = kw.get("requires_grad")
    return out
  def randn_like(self, **kw) -> Tensor:
    return Tensor.randn(*self.shape, **{"dtype": self.dtype, "device": self.device, **kw})
  @staticmethod
  def randint(*args, low: int | None = None, high: int | None = None, shape=None, dtype=None,
              device: str | None = None, **kw) -> Tensor:
    """randint(low, high, shape), randint(high, shape) or randint(*shape, low=0, high=10) (two ints alone: low, high
    and shape (1,)): integers in [low, high), every one equally likely (torch.randint). Built from integer random bits:
    one 32-bit draw when the range has at most 2**16 values, else 64 bits from two draws, taken modulo the range (so a
    value's share is off by at most range / 2**32, resp. range / 2**64). The dtype defaults to the default int, or
    int64 when low or high - 1 does not fit it. `size=` is torch's name for the shape."""
    if "size" in kw:
      if shape is not None: raise TypeError("randint: pass the shape as shape= or size=, not both")
      shape = kw.pop("size")
    _factory_kw("randint", None, kw)
    ints = all(isinstance(a, int) for a in args[:2])
    if low is None and high is None and len(args) == 1 and shape is not None and is_int(args[0]):
      high, args = args[0], ()   # randint(high, size=shape), as torch
    if low is None and high is None and ints and (len(args) == 3 and shape is None or len(args) == 2):
      low, high = args[0], args[1]
      shape = args[2] if len(args) == 3 else (1,) if shape is None else shape
    elif low is None and high is None and len(args) == 2 and isinstance(args[0], int) and \
        isinstance(args[1], (tuple, list)):
      high, shape = args
    elif shape is None: shape = args
    low, high = 0 if low is None else low, 10 if high is None else high
    shape = _shape_arg(tuple(shape) if not isinstance(shape, int) else (shape,))
    for name, v in (("low", low), ("high", high)):
      if not is_int(v):
        raise TypeError(f"randint: {name} must be an int, got {v!r}")
    low, high = int(low), int(high)
    if high <= low: raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    dt = to_dtype(dtype) if dtype else dtypes.int_for_range(low, high - 1)
    if dt.kind in "iu":
      for name, v in (("low", low), ("high - 1", high - 1)):
        if not dtypes.min(dt) <= v <= dtypes.max(dt):
          raise RuntimeError(f"randint: {name} = {v} is out of bounds for {dt.name} (range {dtypes.min(dt)}.."
                             f"{dtypes.max(dt)}); pass a wider dtype")
    if high - low > 1 << 64: raise RuntimeError(f"randint: the range [{low}, {high}) is wider than 2**64")
    n, r = prod(shape), high - low
    if r <= 1 << 16: k = (Tensor._random_bits(n, device) % r).cast(dtypes.uint64)
    else:
      bits = Tensor._random_bits(2 * n, device).cast(dtypes.uint64)
      k = (bits.shrink(((0, n),)) << 32) | bits.shrink(((n, 2 * n),))
      if r < 1 << 64: k = k % r
    # low + k in wrapping 64-bit math: exact for every result in [low, high)
    out = (k + (low & ((1 << 64) - 1))).bitcast(dtypes.int64).cast(dt).reshape(shape)
    out.requires_grad = kw.get("requires_grad")
    return out
  @staticmethod
  def uniform(*shape, low: float = 0.0, high: float = 1.0, dtype=None, device=None, **kw) -> Tensor:
    """Uniform in [low, high): low + (high - low) * rand, in float32 for 16-bit dtypes; a value that rounds up to
    high becomes low, as torch does."""
    shape = _factory_kw("uniform", shape, kw)
    dt = _random_float_dtype("uniform", dtype)
    ct = dtypes.float32 if dt in HALF else dt
    out = (Tensor.rand(*shape, device=device, dtype=dt).cast(ct) * (high - low) + low).cast(dt)
    out = (out >= high).where(out._const(low), out) if high > low else out
    out.requires_grad = kw.get("requires_grad")
    return out
  @staticmethod
  def normal(*shape, mean: float = 0.0, std: float = 1.0, dtype=None, device=None, **kw) -> Tensor:
    shape = _factory_kw("normal", shape, kw)
    _random_float_dtype("normal", dtype)
    out = Tensor.randn(*shape, device=device, dtype=dtype) * std + mean
    out.requires_grad = kw.get("requires_grad")
    return out
  @staticmethod
  def scaled_uniform(*shape, **kw) -> Tensor:
    return Tensor.uniform(*shape, low=-1.0, high=1.0, **kw).mul(prod(_shape_arg(shape)) ** -0.5)
  @staticmethod
  def glorot_uniform(*shape, **kw) -> Tensor:
    s = _shape_arg(shape)
    bound = math.sqrt(6 / (s[0] + prod(s[1:])))
    return Tensor.uniform(*s, low=-bound, high=bound, **kw)
  @staticmethod
  def kaiming_uniform(*shape, a: float = 0.01, **kw) -> Tensor:
    s = _shape_arg(shape)
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(s[1:]))
    return Tensor.uniform(*s, low=-bound, high=bound, **kw)
  @staticmethod
  def kaiming_normal(*shape, a: float = 0.01, **kw) -> Tensor:
    s = _shape_arg(shape)
    std = math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(s[1:]))
    return Tensor.normal(*s, mean=0.0, std=std, **kw)
  @staticmethod
  def randperm(n: int, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """A random permutation of 0..n-1 (torch.randperm): an argsort of random 32-bit keys (ties, rare, keep index
    order). The dtype defaults to int64 as in torch, like teeny's other index results (sort, topk)."""
    _factory_kw("randperm", None, kw)
    if not is_int(n):
      raise TypeError(f"randperm: n must be an int, got {n!r}")
    if n < 0: raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    dt = to_dtype(dtype) if dtype is not None else dtypes.int64
    if dt.kind not in "iuf" or dt in HALF:
      raise RuntimeError(f"randperm: dtype must be an int, float32 or float64 dtype, not {dt}")
    if n > 0 and n - 1 > dtypes.max(dt):
      raise RuntimeError(f"randperm: n = {n} is too large for {dt.name} (largest value {dtypes.max(dt)}); pass a "
                         "wider dtype")
    if n == 0: out = Tensor.empty(0, dtype=dt, device=device)
    else:
      key = Tensor._random_bits(int(n), device).cast(dtypes.int64)
      out = key.argsort().cast(dt)
    out.requires_grad = kw.get("requires_grad")
    return out
  def bernoulli(self, p: float | None = None) -> Tensor:
    """torch.bernoulli / Tensor.bernoulli: 1 where a uniform draw falls below the probability (each element of self,
    or the float p for every element), else 0, in self's dtype (float32 draws; float64 for a float64 self). Not
    differentiable; probabilities outside [0, 1] are not checked (that would read the data): they act as clamped."""
    if p is not None and (not isinstance(p, (int, float)) or not 0 <= p <= 1):
      raise RuntimeError(f"bernoulli: p must be a number in [0, 1], got {p!r}")
    dt = self.dtype
    u = Tensor.rand(*self.shape, device=self.device, dtype=dtypes.float64 if self.dtype == dtypes.float64 else None)
    prob = self.detach() if p is None else p
    return (u < prob).cast(dt)
  def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Tensor:
    """Sample int32 indices from (unnormalised) probabilities along the last axis: by inverse CDF with replacement;
    without it, the num_samples largest of log(w) + Gumbel noise (Gumbel top-k: a draw without replacement), in
    draw order. Reads the weights once to check them (as torch does)."""
    if self.ndim not in (1, 2): raise ValueError(f"multinomial needs a 1-D or 2-D tensor, got shape {self.shape}")
    if not isinstance(num_samples, int) or num_samples <= 0:
      raise ValueError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    if num_samples > self.shape[-1] and not replacement:
      raise RuntimeError(f"multinomial: cannot sample num_samples={num_samples} > {self.shape[-1]} categories without "
                         "replacement; pass replacement=True or fewer samples")
    if self.shape[-1] == 0: raise ValueError(f"multinomial: the weights of shape {self.shape} have no categories")
    w = self.reshape(1, -1) if self.ndim == 1 else self
    if not Device[self.device].runs_nothing:
      # as torch does, check the weights (one small read): negative, inf or nan weights, or a row summing to zero, have
      # no distribution, and the inverse CDF silently returned some index for them
      bad = (w < 0) | w.isinf() | w.isnan() if w.dtype.kind == "f" else (w < 0)
      flags = bad.any().cast(dtypes.int32) + (w.sum(-1) <= 0).any().cast(dtypes.int32) * 2
      f = int(flags.item())
      if f & 1: raise RuntimeError("multinomial: the probability tensor contains inf, nan or an element < 0")
      if f & 2:
        raise RuntimeError("multinomial: invalid distribution, a row of weights sums to 0 (sum of probabilities <= 0)")
    if num_samples > 1 and not replacement:
      # Gumbel top-k: u in (0, 1), so the noise is finite; a zero weight is -inf and never beats a positive one (when
      # a row has fewer positive weights than num_samples, zero-weight categories fill the rest, as in torch)
      u = Tensor.rand(*w.shape, device=self.device) + 0.5 ** 25
      keys = w.detach().float().log() - (-u.log()).log()
      idx = keys.topk(num_samples, dim=-1).indices.cast(dtypes.int32)
      return idx.reshape(num_samples) if self.ndim == 1 else idx
    cdf = w.cumsum(1)
    cdf = cdf / cdf[:, -1:]
    u = Tensor.rand(w.shape[0], num_samples, 1, device=self.device)
    idx = (u >= cdf.unsqueeze(1)).sum(2).clip(0, w.shape[1] - 1).cast(dtypes.int32)
    return idx.reshape(num_samples) if self.ndim == 1 else idx

  # ---- elementwise
  def _const(self, v: Any, dtype: DType | None = None) -> Tensor:
    return Tensor(UOp.const(dtype or self.dtype, v, self.device))
  def _binop(self, x: Any, reverse: bool = False, to_float: bool = False) -> tuple[Tensor, Tensor]:
    """Broadcast and promote two operands as torch.result_type does: Python scalars take the tensor's dtype unless
    they need a higher category, and so do 0-dim tensors next to a tensor with dims (float16 tensor + Tensor(1.0) is
    float16). to_float: the op computes in floats (true division, copysign): an int result dtype becomes the default
    float, and a Python scalar is made a float directly, never wrapped into the int dtype first (int8 tensor / 200)."""
    if isinstance(x, Tensor):
      self._same_device(x)   # (before the casts and broadcasts: _wrap checks it again for every op)
      if self.dtype == x.dtype: dt = self.dtype
      elif (self.ndim == 0) == (x.ndim == 0): dt = least_upper_dtype(self.dtype, x.dtype)
      else: dt = result_type(*(([self.dtype], [x.dtype]) if x.ndim == 0 else ([x.dtype], [self.dtype])))
      if to_float and dt.kind != "f": dt = dtypes.default_float
      a, b = self, x
    else:
      if isinstance(x, (list, tuple, np.ndarray)): return self._binop(Tensor(x, device=self.device), reverse, to_float)
      rank = {"b": 0, "i": 1, "u": 1, "f": 2}
      xk = ("b" if isinstance(x, (bool, np.bool_)) else "i" if isinstance(x, (int, np.integer))
            else dtypes.from_py(x).kind)
      # a scalar of a lower or equal category takes the tensor's dtype (a float tensor times 2**70 is fine)
      dt = self.dtype if rank[self.dtype.kind] >= rank[xk] else dtypes.from_py(x)
      if to_float and dt.kind != "f": dt = dtypes.default_float
      # the scalar is built already broadcast: one internal tensor, not a const plus a reshape view and an expand view
      c = UOp.const(dt, x, self.device)
      shape = self.shape
      a, b = self, Tensor(c.reshape((1,) * len(shape)).expand(shape) if shape else c)
    if a.dtype != dt: a = a.cast(dt)
    if b.dtype != dt: b = b.cast(dt)
    if a.shape != b.shape:
      out = _broadcast_shape(a.shape, b.shape)
      a, b = a._broadcast_to(out), b._broadcast_to(out)
    return (b, a) if reverse else (a, b)
  def _broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
    if self.shape == shape: return self
    x = self.reshape((1,) * (len(shape) - self.ndim) + self.shape) if self.ndim < len(shape) else self
    return x._view(x.uop.expand(shape)) if x.shape != shape else x
  def _alu(self, op: Ops, *srcs: Tensor, dtype: DType | None = None) -> Tensor:
    t = self._wrap(self.uop.alu(op, *[s.uop for s in srcs], dtype=dtype), *srcs)
    if t.dtype.kind != "f": t._requires_grad = None  # comparisons and int results have no gradient (torch)
    return t
  def _float(self) -> Tensor: return self if self.dtype.kind == "f" else self.cast(dtypes.default_float)

  def add(self, x, reverse=False, *, alpha=1) -> Tensor:
    """self + alpha * x (torch.add; alpha is keyword-only, as torch's)."""
    if alpha != 1: x = x * alpha
    a, b = self._binop(x, reverse)
    return a._alu(Ops.ADD, b)
  def sub(self, x, reverse=False, *, alpha=1) -> Tensor:
    """self - alpha * x (torch.sub; alpha is keyword-only, as torch's)."""
    if alpha != 1: x = x * alpha
    if (self.dtype == dtypes.bool or isinstance(x, (bool, np.bool_))
        or (isinstance(x, Tensor) and x.dtype == dtypes.bool)):
      raise TypeError("subtraction with a bool tensor is not supported (as in torch); "
                      "use ^ or logical_not(), or cast first")
    a, b = self._binop(x, reverse)
    return a._alu(Ops.SUB, b)
  def mul(self, x, reverse=False) -> Tensor:
    if self._scalar_past_half(x): return self.float().mul(x, reverse).cast(self.dtype)
    a, b = self._binop(x, reverse)
    return a._alu(Ops.MUL, b)
  def _scalar_past_half(self, x) -> bool:
    """A 16-bit float tensor and a Python number the 16-bit dtype does not hold exactly: torch multiplies and divides
    with the number in float32 and rounds the result once (x_f16 * 1e5 is 100.06 for x = 0.001, 0 * 1e10 is 0, and
    x_bf16 * 0.1 is x * 0.1f rounded), where the number made 16-bit would be inf, 0 or a rounded factor. (Its + and -
    round the number to the tensor's dtype first, as teeny's _binop does.)"""
    if self.dtype not in HALF or not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
      return False
    if abs(x) > dtypes.finfo_max(self.dtype): return True
    f = np.float32(x)
    if self.dtype == dtypes.float16: return float(np.float16(f)) != x
    return float(f) != x or int(f.view(np.uint32)) & 0xFFFF != 0
  def div(self, x, reverse=False, rounding_mode: str | None = None) -> Tensor:
    """self / x (true division: ints give floats). rounding_mode "trunc" or "floor" rounds the quotient and keeps an int
    dtype. Float division by 0 gives inf or nan as IEEE does; integer division by 0 in "trunc"/"floor" mode raises
    ZeroDivisionError when the divisor is known on the host to be 0 (a Python 0, or host data holding only zeros; torch
    raises on the CPU) and otherwise gives 0 (what a device divisor holds is not read: that would realize it)."""
    if rounding_mode not in (None, "trunc", "floor"):
      raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found {rounding_mode!r}")
    if self._scalar_past_half(x): return self.float().div(x, reverse, rounding_mode).cast(self.dtype)
    a, b = self._binop(x, reverse, to_float=rounding_mode is None)
    if rounding_mode is not None and a.dtype.kind in "iu" and _host_zero(x if not reverse else self):
      raise ZeroDivisionError(f"integer division by zero in div(rounding_mode={rounding_mode!r}) "
                              "(torch raises on the CPU too)")
    if rounding_mode == "floor": return a._floordiv(b)
    if rounding_mode == "trunc":
      return a._idiv_safe(b) if a.dtype.kind in "iub" else (a._float()._alu(Ops.FDIV, b._float())).trunc()
    return a._alu(Ops.FDIV, b)   # (floats already: _binop's to_float)
  def _idiv_safe(self, b: Tensor) -> Tensor:
    """C division with the zero divisor guarded (gives 0, like numpy, instead of crashing), and for signed ints the
    divisor -1 too: INT_MIN / -1 traps on x86 (SIGFPE killed the process); it is a negation, wrapping to INT_MIN as in
    torch."""
    zero = b == 0
    neg1 = b == -1 if self.dtype.kind == "i" else None
    q = self._alu(Ops.IDIV, (zero if neg1 is None else zero | neg1).where(b._const(1), b))
    return zero.where(self._const(0), q if neg1 is None else neg1.where(-q, q))
  def _floordiv(self, b: Tensor) -> Tensor:
    if self.dtype.kind == "f":
      # Python's (and torch's) float floor division, consistent with % : (a - fmod(a, b)) / b is exact up to one
      # rounding, stepped down when fmod's sign differs from b's; floor(a / b) is wrong when a / b rounds up to an
      # integer (1e10 // 3) and at the infinities (-5.5 // inf is -1)
      m = self._alu(Ops.MOD, b)
      div = (self - m)._alu(Ops.FDIV, b)
      div = ((m != 0) & ((m < 0) != (b < 0))).where(div - 1, div)
      fl = div.floor()
      fl = (div - fl > 0.5).where(fl + 1, fl)
      q = self._alu(Ops.FDIV, b)
      # a zero quotient keeps the sign of a / b; a zero divisor gives a / b (inf or nan), as in IEEE division
      return (b == 0).where(q, (div == 0).where(q * 0, fl))
    if self.dtype.kind == "b": raise TypeError("floor division of bool tensors is not supported")
    q = self._idiv_safe(b)
    if self.dtype.kind == "u": return q
    # C truncates toward zero; Python floors: step down when the signs differ and there is a remainder
    r = self - q * b
    fix = (r != 0) & ((r < 0) != (b < 0)) & (b != 0)
    return fix.where(q - 1, q)
  def floordiv(self, x, reverse=False) -> Tensor:
    a, b = self._binop(x, reverse)
    return a._floordiv(b)
  floor_divide = floordiv
  def mod(self, x, reverse=False) -> Tensor:
    """Python's % (torch.remainder): the result has the divisor's sign. Integer division by zero gives 0."""
    a, b = self._binop(x, reverse)
    if a.dtype.kind == "f":
      # fmod is exact (a - floor(a / b) * b is not: 1e10 % 3 came out 256); move it into b's sign
      r = a._alu(Ops.MOD, b)
      return ((r != 0) & ((r < 0) != (b < 0))).where(r + b, r)
    return (b == 0).where(a._const(0), a - a._floordiv(b) * b)
  remainder = mod
  def fmod(self, x, reverse=False) -> Tensor:
    """C's fmod (torch.fmod): the result has the dividend's sign. Integer division by zero gives 0."""
    a, b = self._binop(x, reverse)
    if a.dtype.kind == "f": return a._alu(Ops.MOD, b)
    if a.dtype.kind == "b": raise TypeError("fmod of bool tensors is not supported")
    return (b == 0).where(a._const(0), a - a._idiv_safe(b) * b)
  def pow(self, x, reverse=False) -> Tensor:
    """self ** x. Integer ** integer is exact and wraps on overflow as in torch (no float64 detour: 3 ** 39 in int64
    keeps every bit); a negative Python int exponent of an int tensor raises (torch), a negative tensor exponent gives
    1 for base 1, +-1 for base -1 and 0 otherwise (torch). A float exponent makes an int tensor's result float."""
    if not reverse and isinstance(x, (int, float)) and not isinstance(x, bool) and self.dtype.kind != "b":
      # (x ** 2.0 is not x * x for ints: a float exponent gives a float result, as in torch)
      if x == 2 and (type(x) is int or self.dtype.kind == "f"): return self * self
      if x == 1 and (type(x) is int or self.dtype.kind == "f"): return self + 0
      if x == 0.5 and self.dtype.kind == "f": return self.sqrt()
      if x == -1 and self.dtype.kind == "f": return self.reciprocal()
    if not reverse and self.dtype.kind == "b" and isinstance(x, (bool, np.bool_)): return self | (not x)  # bool (torch)
    a, b = self._binop(x, reverse)
    if a.dtype.kind not in "iub": return a._alu(Ops.POW, b)
    if a.dtype.kind == "b": a, b = a.cast(dtypes.default_int), b.cast(dtypes.default_int)   # (torch refuses bool**bool)
    if not reverse and is_int(x):
      if x < 0: raise RuntimeError(f"Integers to negative integer powers are not allowed (torch): {self.dtype.name} ** "
                                   f"{x}; use a float, e.g. x.float() ** {x}")
      return a._ipow_const(int(x))
    e = self if reverse else x
    if isinstance(e, Tensor):
      hr = e.host_range()   # (exponents known on the host, Tensor([2]): only their bits are looped over)
      lo, hi = (int(v) for v in (hr if hr is not None else (dtypes.min(e.dtype), dtypes.max(e.dtype))))
      if not dtypes.min(b.dtype) <= lo <= hi <= dtypes.max(b.dtype): lo, hi = dtypes.min(b.dtype), dtypes.max(b.dtype)
    else: lo = hi = int(e)   # a Python int exponent with a Python int base (reverse)
    return a._ipow(b, max(hi, 0).bit_length(), lo < 0)
  def _ipow_const(self, e: int) -> Tensor:
    """self ** e for an int tensor and a Python int e >= 0: square-and-multiply unrolled over e's bits, wrapping."""
    k = self.dtype.bits - 2
    # powers of an odd number mod 2**bits repeat with a period dividing 2**(bits-2); an even base to a power >= bits
    # is 0 mod 2**bits
    big, e = e >> k != 0, e & ((1 << k) - 1) if e >> k else e
    out, sq = None, self
    while e:
      if e & 1: out = sq if out is None else out * sq
      e >>= 1
      if e: sq = sq * sq
    if out is None: out = self._const(1)._broadcast_to(self.shape)
    elif out is self: out = self + 0   # (a new tensor, as every op gives)
    return ((self & 1) == 0).where(self._const(0), out) if big else out
  def _ipow(self, e: Tensor, ebits: int, signed: bool) -> Tensor:
    """self ** e, both ints of one dtype, e a tensor: square-and-multiply over e's low bits with where-selects (one
    fused kernel). ebits: how many bits e's non-negative values can use (from its dtype or its host data)."""
    k = self.dtype.bits - 2
    n = min(ebits, k)
    out, sq = self._const(1)._broadcast_to(self.shape), self
    for i in range(n):
      out = ((e & (1 << i)) != 0).where(out * sq, out)
      if i < n - 1: sq = sq * sq
    if ebits > k:   # (see _ipow_const: the loop used e mod 2**k, exact for odd bases; an even base gives 0)
      out = ((e >= (1 << k)) & ((self & 1) == 0)).where(self._const(0), out)
    if signed:   # torch's negative exponents: 1 ** e = 1, (-1) ** e = +-1, else 0
      neg = (self == -1).where(((e & 1) != 0).where(self._const(-1), self._const(1)), (self == 1).cast(self.dtype))
      out = (e < 0).where(neg, out)
    return out
  def maximum(self, x) -> Tensor:
    a, b = self._binop(x)
    return a._alu(Ops.MAX, b)
  def minimum(self, x) -> Tensor:
    a, b = self._binop(x)
    return a._alu(Ops.MIN, b)
  def where(self, x=None, y=None) -> Tensor:   # (annotated for the 3-argument form, which is every internal use)
    """self ? x : y (self is the condition). With neither x nor y: torch.where(cond), the indices of the true elements,
    one tensor per dim (nonzero(as_tuple=True): realizes, the count depends on the values)."""
    if x is None and y is None: return self.nonzero(as_tuple=True)  # type: ignore[return-value]
    if x is None or y is None: raise TypeError("where(cond, x, y) needs both x and y (or neither, for the indices)")
    cond = self if self.dtype == dtypes.bool else self.cast(dtypes.bool)
    if isinstance(x, Tensor) and isinstance(y, Tensor): xx, yy = x._binop(y)
    elif isinstance(x, Tensor): xx, yy = x._binop(y)
    elif isinstance(y, Tensor): yy, xx = y._binop(x)
    else:
      dt = least_upper_dtype(dtypes.from_py(x), dtypes.from_py(y))
      xx, yy = Tensor(UOp.const(dt, x, self.device)), Tensor(UOp.const(dt, y, self.device))
    shape = _broadcast_shape(cond.shape, xx.shape, yy.shape)
    cond, xx, yy = cond._broadcast_to(shape), xx._broadcast_to(shape), yy._broadcast_to(shape)
    return cond._wrap(UOp(Ops.WHERE, xx.dtype, (cond.uop, xx.uop, yy.uop)), xx, yy)
  def clip(self, min_=None, max_=None, *, min=None, max=None) -> Tensor:  # (torch.clamp's keywords)
    """min(max(x, min_), max_) (torch.clamp, whose keywords min= and max= work too): the gradient passes where
    min_ <= x <= max_, bounds included, and goes to a tensor bound where it clips; nan stays nan (with a 0 gradient);
    min_ > max_ gives max_ everywhere."""
    if min is not None:
      if min_ is not None: raise TypeError("clip: give the lower bound once, as min_ or min=")
      min_ = min
    if max is not None:
      if max_ is not None: raise TypeError("clip: give the upper bound once, as max_ or max=")
      max_ = max
    if min_ is None and max_ is None: raise ValueError("clip needs at least one of min_ or max_")
    for bound in (min_, max_):   # (an int bound out of an int tensor's range wrapped when cast to its dtype)
      if isinstance(bound, (int, np.integer)): check_scalar_fits(bound, self.dtype)
    out = self
    if min_ is not None: out = (out < min_).where(min_, out)
    if max_ is not None: out = (out > max_).where(max_, out)
    return self.isnan().where(self.detach(), out) if self.dtype.kind == "f" and self.requires_grad else out
  clamp = clip
  def cmplt(self, x, reverse=False) -> Tensor:
    a, b = self._binop(x, reverse)
    return a._alu(Ops.CMPLT, b)
  def __lt__(self, x) -> Tensor: return self.cmplt(x)
  def __gt__(self, x) -> Tensor: return self.cmplt(x, reverse=True)
  def __le__(self, x) -> Tensor:
    a, b = self._binop(x)
    return a._alu(Ops.CMPLE, b)
  def __ge__(self, x) -> Tensor:
    a, b = self._binop(x)
    return b._alu(Ops.CMPLE, a)
  def __eq__(self, x) -> Tensor:  # type: ignore[override]  # elementwise, as in torch: not object's bool
    a, b = self._binop(x)
    return a._alu(Ops.CMPEQ, b)
  def __ne__(self, x) -> Tensor:  # type: ignore[override]  # elementwise, as in torch: not object's bool
    a, b = self._binop(x)
    return a._alu(Ops.CMPNE, b)
  eq, ne = __eq__, __ne__
  def lt(self, x): return self < x
  def gt(self, x): return self > x
  def le(self, x): return self <= x
  def ge(self, x): return self >= x

  def _bitop(self, op: Ops, x, reverse=False) -> Tensor:
    a, b = self._binop(x, reverse)
    if a.dtype.kind not in "iub": raise TypeError(f"bitwise ops need int or bool tensors, not {a.dtype}")
    return a._alu(op, b)
  def bitwise_and(self, x, reverse=False): return self._bitop(Ops.AND, x, reverse)
  def bitwise_or(self, x, reverse=False): return self._bitop(Ops.OR, x, reverse)
  def bitwise_xor(self, x, reverse=False): return self._bitop(Ops.XOR, x, reverse)
  def bitwise_not(self) -> Tensor:
    if self.dtype.kind not in "iub": raise TypeError(f"~ needs an int or bool tensor, not {self.dtype}")
    return self.logical_not() if self.dtype == dtypes.bool else self._alu(
      Ops.XOR, self._const(dtypes.max(self.dtype) if self.dtype.kind == "u" else -1)._broadcast_to(self.shape))
  def _shift(self, x, reverse: bool, left: bool) -> Tensor:
    for v in (self, x):   # (a bool operand promotes like any integer's, as in torch)
      if (v.dtype if isinstance(v, Tensor) else dtypes.from_py(v)).kind not in "iub":
        raise TypeError(f"{'<<' if left else '>>'} needs integer operands (torch), not "
                        f"{v.dtype if isinstance(v, Tensor) else v!r}")
    a, b = self._binop(x, reverse)
    if a.dtype == dtypes.bool:
      raise TypeError(f"{'<<' if left else '>>'} of two bool operands is not defined (torch neither): cast one to an "
                      "integer dtype, e.g. x.int()")
    # torch's rule for shift counts C leaves undefined: a count < 0 or >= the bit width shifts everything out, giving 0
    # (or -1, the sign, for >> of a negative value)
    bits = a.dtype.itemsize * 8
    if not reverse and isinstance(x, (int, np.integer)) and 0 <= x < bits:
      return a._alu(Ops.SHL if left else Ops.SHR, b)
    ok = (b >= 0) & (b < bits)
    out = a._alu(Ops.SHL if left else Ops.SHR, ok.where(b, 0))
    return ok.where(out, 0 if left or a.dtype.kind == "u" else (a < 0).where(-1, 0).cast(a.dtype))
  def lshift(self, x, reverse=False):
    """self << x for integer tensors (torch): a count < 0 or >= the bit width gives 0."""
    return self._shift(x, reverse, True)
  def rshift(self, x, reverse=False):
    """self >> x for integer tensors, arithmetic for signed ones (torch): a count < 0 or >= the bit width gives 0, or
    -1 for a negative value."""
    return self._shift(x, reverse, False)
  def logical_not(self) -> Tensor:
    return self.cast(dtypes.bool)._alu(Ops.CMPEQ, self._const(False, dtypes.bool)._broadcast_to(self.shape))
  def logical_and(self, x) -> Tensor:
    return self.cast(dtypes.bool) & (x.cast(dtypes.bool) if isinstance(x, Tensor) else bool(x))
  def logical_or(self, x) -> Tensor:
    return self.cast(dtypes.bool) | (x.cast(dtypes.bool) if isinstance(x, Tensor) else bool(x))

  # unary math
  def _unary(self, op: Ops) -> Tensor: return self._float()._alu(op)
  def neg(self) -> Tensor:
    if self.dtype == dtypes.bool: raise TypeError("negation of a bool tensor is not supported; use logical_not() or ~")
    return self._alu(Ops.NEG)
  def exp(self): return self._unary(Ops.EXP)
  def log(self): return self._unary(Ops.LOG)
  def exp2(self): return self._unary(Ops.EXP2)
  def log2(self): return self._unary(Ops.LOG2)
  def log10(self): return self.log2() * (1 / math.log2(10))
  def log1p(self) -> Tensor:
    """log(1 + x), accurate for small |x| (a series in s = x / (2 + x) there, log(1 + x) elsewhere)."""
    def f(x: Tensor) -> Tensor:
      small = (x > -0.4) & (x < 0.6)
      # the branch not taken gets a harmless input, so its gradient (0 * its derivative) is never 0 * inf = nan
      s = (xs := small.where(x, 0.0)) / (xs + 2)
      n = 14 if x.dtype == dtypes.float64 else 7
      series = _poly(s * s, [2 / (2 * k + 1) for k in range(n)]) * s
      return small.where(series, (small.where(1.0, x) + 1).log())
    return _f32(self, f)
  def expm1(self) -> Tensor:
    """exp(x) - 1, accurate for small |x| (its Taylor series there)."""
    def f(x: Tensor) -> Tensor:
      small = (x > -0.7) & (x < 0.7)
      n = 17 if x.dtype == dtypes.float64 else 10
      series = _poly(small.where(x, 0.0), [0.0] + [1 / math.factorial(k) for k in range(1, n + 1)])
      return small.where(series, x.exp() - 1)
    return _f32(self, f)
  def sqrt(self): return self._unary(Ops.SQRT)
  def rsqrt(self): return self.sqrt().reciprocal()
  def sin(self): return self._unary(Ops.SIN)
  def cos(self): return self._unary(Ops.COS)
  def tan(self): return self._unary(Ops.TAN)
  def tanh(self): return self._unary(Ops.TANH)
  def erf(self): return self._unary(Ops.ERF)
  def reciprocal(self): return self._unary(Ops.RECIP)
  def square(self): return self * self
  def _rounding(self, op: Ops) -> Tensor: return self._fresh(self) if self.dtype.kind in "iub" else self._alu(op)
  def trunc(self): return self._rounding(Ops.TRUNC)
  def floor(self): return self._rounding(Ops.FLOOR)
  def ceil(self): return self._rounding(Ops.CEIL)
  def round(self, decimals: int = 0) -> Tensor:
    """Round half to even; decimals=d rounds to d places (negative: to tens, hundreds...) as torch: x * 10**d rounded,
    divided back (so its results carry that division's rounding, as torch's)."""
    if decimals == 0: return self._rounding(Ops.RINT)
    if self.dtype.kind in "iub":
      raise TypeError(f"round(decimals={decimals}) needs a float tensor, got {self.dtype} (torch: not implemented for "
                      "integers); cast first, e.g. x.float().round(decimals)")
    if decimals > 0: return (self * 10.0 ** decimals).round() / 10.0 ** decimals
    return (self / 10.0 ** -decimals).round() * 10.0 ** -decimals
  def abs(self) -> Tensor:
    """|x|; abs(-0.0) is 0.0, and the gradient is 0 at 0 and at nan (torch)."""
    if self.dtype.kind in "ub": return self._fresh(self)
    if self.dtype.kind != "f": return (self < 0).where(-self, self)
    return (self > 0).where(self, (self < 0).where(-self, self - self))   # x - x: +0.0 for +-0.0, nan for nan
  def sign(self) -> Tensor:
    """-1, 0 or 1; sign(nan) and sign(-0.0) are 0 (torch), and the gradient is 0."""
    if self.dtype == dtypes.bool: return self._fresh(self)
    zero = self * 0 if self.dtype.kind != "f" else (self == self).where(self - self, 0.0)   # (+0.0 for -0.0 and nan)
    return (self > 0).where(self._const(1), (self < 0).where(self._const(-1), zero))
  def isnan(self) -> Tensor: return self != self if self.dtype.kind == "f" else self.full_like(False, dtype=dtypes.bool)
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    """True at +inf (detect_positive) and -inf (detect_negative)."""
    if self.dtype.kind != "f" or not (detect_positive or detect_negative):
      return self.full_like(False, dtype=dtypes.bool)
    if not detect_negative: return self == math.inf
    if not detect_positive: return self == -math.inf
    return (self == math.inf) | (self == -math.inf)
  def isfinite(self) -> Tensor: return (self.isnan() | self.isinf()).logical_not()
  def relu(self) -> Tensor: return (self <= 0).where(0, self)
  def sigmoid(self) -> Tensor:
    """1 / (1 + exp(-x)), from exp(-|x|) <= 1 so nothing overflows: no nan in the value or the gradient at any |x|."""
    x = self._float()
    neg = x < 0
    e = neg.where(x, -x).exp()
    return neg.where(e / (e + 1), (e + 1).reciprocal())
  def logsigmoid(self) -> Tensor: return -(-self).softplus()
  def gelu(self, approximate: str = "none") -> Tensor:
    """x * Phi(x) (torch's F.gelu; approximate='tanh' its tanh form). 16-bit floats are computed in float32 and
    rounded once, as torch's: in their own precision 1 + erf(x) cancelled and the negative tail became 0."""
    if self.dtype in (dtypes.float16, dtypes.bfloat16): return self.float().gelu(approximate).cast(self.dtype)
    x = self._float()
    if approximate == "tanh": return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)).tanh())
    return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
  def quick_gelu(self) -> Tensor: return self * (self * 1.702).sigmoid()
  def silu(self) -> Tensor: return self * self.sigmoid()
  swish = silu
  def softplus(self, beta: float = 1.0) -> Tensor:
    x = self._float() * beta
    return (x.maximum(0) + (-x.abs()).exp().log1p()) * (1 / beta)
  def mish(self) -> Tensor: return self * self.softplus().tanh()
  def softsign(self): return self / (1 + self.abs())
  def lerp(self, end: Tensor, weight) -> Tensor: return self + (end - self) * weight

  # ---- inverse trigonometric and hyperbolic functions: nan outside the domain (torch), accurate near 0 and at large
  # |x| (no x*x that overflows, no exp that does where the result fits); float16/bfloat16 are computed in float32
  def atan(self) -> Tensor:
    """Arctangent, in (-pi/2, pi/2)."""
    def f(x: Tensor) -> Tensor:
      s, ax = _sign_trick(x)
      return _atan2_pos(ax, x.full_like(1.0)) * s
    return _f32(self, f)
  def asin(self) -> Tensor:
    """Arcsine, in [-pi/2, pi/2]; nan outside [-1, 1]."""
    def f(x: Tensor) -> Tensor:
      s, ax = _sign_trick(x)
      return _atan2_pos(ax, _sqrt_1mx2(ax)) * s
    return _f32(self, f)
  def acos(self) -> Tensor:
    """Arccosine, in [0, pi]; nan outside [-1, 1]."""
    def f(x: Tensor) -> Tensor:
      _, ax = _sign_trick(x)
      a = _atan2_pos(_sqrt_1mx2(ax), ax)
      return (x < 0).where(math.pi - a, a)
    return _f32(self, f)
  def sinh(self) -> Tensor:
    """Hyperbolic sine; finite wherever the result fits the dtype."""
    def f(x: Tensor) -> Tensor:
      top = 709.0 if x.dtype == dtypes.float64 else 88.0    # exp(top) still fits
      small = (x > -1) & (x < 1)
      em = small.where(x, 0.0).expm1()
      near0 = (em + em / (em + 1)) * 0.5                    # (e**x - e**-x) / 2 without the cancellation
      s, ax = _sign_trick(x)
      mid = ax <= top
      e = (small | ~mid).where(1.0, ax).exp()
      h = mid.where(0.0, ax * 0.5).exp()                    # past top: e**x / 2 = h * (h / 2), h = e**(x/2)
      return small.where(near0, s * mid.where((e - e.reciprocal()) * 0.5, h * (h * 0.5)))
    return _f32(self, f)
  def cosh(self) -> Tensor:
    """Hyperbolic cosine; finite wherever the result fits the dtype."""
    def f(x: Tensor) -> Tensor:
      top = 709.0 if x.dtype == dtypes.float64 else 88.0
      _, ax = _sign_trick(x)
      mid = ax <= top
      e = mid.where(ax, 0.0).exp()
      h = mid.where(0.0, ax * 0.5).exp()
      return mid.where((e + e.reciprocal()) * 0.5, h * (h * 0.5))
    return _f32(self, f)
  def asinh(self) -> Tensor:
    """Inverse hyperbolic sine."""
    def f(x: Tensor) -> Tensor:
      s, ax = _sign_trick(x)
      big = ax > 1e8                                         # asinh(x) = log(2x) + O(1 / x**2) there
      xm = big.where(0.0, ax)
      mid = (xm + xm * xm / ((xm * xm + 1).sqrt() + 1)).log1p()   # log(x + sqrt(x*x + 1)), accurate near 0
      return s * big.where(big.where(ax, 1.0).log() + math.log(2), mid)
    return _f32(self, f)
  def acosh(self) -> Tensor:
    """Inverse hyperbolic cosine; nan below 1."""
    def f(x: Tensor) -> Tensor:
      big = x > 1e8
      d = big.where(2.0, x) - 1
      mid = (d + d.sqrt() * (d + 2).sqrt()).log1p()          # log(x + sqrt(x*x - 1)), accurate near 1
      return big.where(big.where(x, 1.0).log() + math.log(2), mid)
    return _f32(self, f)
  def atanh(self) -> Tensor:
    """Inverse hyperbolic tangent; +-inf at +-1, nan outside [-1, 1]."""
    def f(x: Tensor) -> Tensor:
      s, ax = _sign_trick(x)
      return s * (ax.log1p() - (-ax).log1p()) * 0.5
    return _f32(self, f)

  # ---- more elementwise and reduction math in torch's names
  def softmin(self, axis: int = -1, dim=None) -> Tensor:
    """softmax(-x) along `axis` (torch.nn.functional.softmin)."""
    return (-self._float()).softmax(dim if dim is not None else axis)
  def copysign(self, other) -> Tensor:
    """|self| with the sign of other (torch.copysign), sign bit included: -0.0 and -nan count as negative. Ints give
    floats. The gradient is +-1 for self (0 where self is 0) and 0 for other."""
    a, b = self._binop(other, to_float=True)
    sb = b.detach().cast(dtypes.float32) if b.dtype in HALF else b.detach()   # (OpenCL cannot bitcast a half)
    neg = sb.bitcast(dtypes.int64 if sb.dtype == dtypes.float64 else dtypes.int32) < 0
    mag = a.abs()
    return neg.where(-mag, mag)
  def logaddexp(self, other) -> Tensor:
    """log(exp(self) + exp(other)) without overflow or underflow (torch.logaddexp); ties split the gradient evenly."""
    a, b = self._binop(other, to_float=True)
    d = (a == b).where(0.0, a - b)    # two equal infinities: no inf - inf
    return a.maximum(b) + (-d.abs()).exp().log1p()
  def logcumsumexp(self, axis: int = 0, dim=None) -> Tensor:
    """log(cumsum(exp(x))) along `axis`, stable at any magnitude: each output is a logsumexp of its prefix."""
    axis = dim if dim is not None else axis
    ax = _axis(axis, self.ndim)
    x = self._float()
    if x.ndim == 0: return x
    if x.dtype in HALF: return x.cast(dtypes.float32).logcumsumexp(ax).cast(x.dtype)
    x = x.transpose(ax, -1) if ax != x.ndim - 1 else x
    out = x._logcumsumexp_last()
    return out.transpose(ax, -1) if ax != self.ndim - 1 else out
  def _logcumsumexp_last(self) -> Tensor:
    n = self.shape[-1]
    if n <= 1: return self._fresh(self)
    if n > 256:   # blocks of 64, then the running totals of the blocks, combined with logaddexp (as _cum_last does)
      b = 64
      nb = -(-n // b)
      x = self.pad(((0, 0),) * (self.ndim - 1) + ((0, nb * b - n),), value=-math.inf).reshape(*self.shape[:-1], nb, b)
      inner = x._logcumsumexp_last()
      carry = inner[..., -1]._logcumsumexp_last()
      carry = carry.pad(((0, 0),) * (carry.ndim - 1) + ((1, 0),), value=-math.inf)[..., :-1]
      return inner.logaddexp(carry.unsqueeze(-1)).reshape(*self.shape[:-1], nb * b)[..., :n]
    xe = self.unsqueeze(-2).expand(*self.shape[:-1], n, n)
    tri = Tensor.arange(n, device=self.device).reshape(n, 1) >= Tensor.arange(n, device=self.device).reshape(1, n)
    return tri.where(xe, -math.inf).logsumexp(-1)
  def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|self - other| <= atol + rtol * |other| elementwise (torch.isclose); infinities are close only to themselves,
    nan to nan only with equal_nan."""
    if rtol < 0: raise RuntimeError(f"isclose: rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0: raise RuntimeError(f"isclose: atol must be greater than or equal to zero, but got {atol}")
    if isinstance(other, Tensor) and other.dtype != self.dtype:
      raise RuntimeError("isclose: both tensors must have the same dtype, "
                         f"got {self.dtype} and {other.dtype}; cast one")
    a, b = self._binop(other)
    eq = a == b
    if a.dtype.kind == "b": return eq
    fa, fb = a._float(), b._float()
    close = eq | (fa.isfinite() & fb.isfinite() & ((fa - fb).abs() <= atol + rtol * fb.abs()))
    return close | (fa.isnan() & fb.isnan()) if equal_nan else close
  def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element isclose (torch.allclose); reads the result, so it realizes."""
    return bool(self.isclose(other, rtol, atol, equal_nan).all().item())
  def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p along dim, eps) (torch.nn.functional.normalize). A zero vector stays zero, with a finite
    gradient (1 / eps, as in torch)."""
    x = self._float()
    ax = _axis(dim, x.ndim)
    return x / x._pnorm(p, ax).maximum(eps)
  def _pnorm(self, p: float, axes: int | tuple[int, ...], keepdim: bool = True) -> Tensor:
    """||x||_p over axes (the one computation behind norm, normalize and the distance losses). Its gradient is 0 (not
    nan) where the norm is 0, as torch's; p = 0 counts the nonzeros (gradient 0); p < 0 of a slice of infs is inf.
    16-bit inputs are summed in float32 and the norm rounded once (torch's too: a float16 sum of squares overflows at
    norms near 256)."""
    if self.dtype in HALF: return self.float()._pnorm(p, axes, keepdim).cast(self.dtype)
    axes = (axes,) if isinstance(axes, int) else axes
    def red(t: Tensor, fn: str) -> Tensor: return getattr(t, fn)(axes, keepdim) if axes else t
    ab = self.abs()
    if p == math.inf: return red(ab, "amax")
    if p == -math.inf: return red(ab, "amin")
    if p == 1: return red(ab, "sum")
    if p == 0: return red((self != 0).where(1.0, self * 0), "sum")   # (x * 0 where x == 0: in the graph, gradient 0)
    s = red(ab * ab if p == 2 else ab.pow(p), "sum")
    pos = s > 0
    safe = pos.where(s, 1.0)
    return pos.where(safe.sqrt() if p == 2 else safe.pow(1 / p), math.inf if p < 0 else 0.0)

  def cast(self, dtype: DType | str) -> Tensor:
    dt = to_dtype(dtype)
    if dt == self.dtype: return self
    t = self._wrap(self.uop.cast(dt))
    if dt.kind != "f": t._requires_grad = None   # an int or bool result has no gradient
    return t
  def bitcast(self, dtype: DType | str) -> Tensor:
    dt = to_dtype(dtype)
    if dt.itemsize != self.dtype.itemsize: raise ValueError(f"bitcast needs dtypes of equal size: {self.dtype} -> {dt}")
    t = self._wrap(self.uop.bitcast(dt))
    t._requires_grad = None
    return t

  __add__ = add
  def __radd__(self, x): return self.add(x, True)
  __sub__ = sub
  def __rsub__(self, x): return self.sub(x, True)
  __mul__ = mul
  def __rmul__(self, x): return self.mul(x, True)
  __truediv__ = div
  def __rtruediv__(self, x): return self.div(x, True)
  __floordiv__ = floordiv
  def __rfloordiv__(self, x): return self.floordiv(x, True)
  __mod__ = mod
  def __rmod__(self, x): return self.mod(x, True)
  __pow__ = pow
  def __rpow__(self, x): return self.pow(x, True)
  def __neg__(self): return self.neg()
  def __abs__(self): return self.abs()
  __and__ = bitwise_and
  def __rand__(self, x): return self.bitwise_and(x, True)
  __or__ = bitwise_or
  def __ror__(self, x): return self.bitwise_or(x, True)
  __xor__ = bitwise_xor
  def __rxor__(self, x): return self.bitwise_xor(x, True)
  def __invert__(self): return self.bitwise_not()
  __lshift__ = lshift
  def __rlshift__(self, x): return self.lshift(x, True)
  __rshift__ = rshift
  def __rrshift__(self, x): return self.rshift(x, True)
  def __matmul__(self, x): return self.matmul(x)
  def __rmatmul__(self, x): return Tensor(x, device=self.device).matmul(self)
  # torch's in-place methods, which the operators +=, -=, *= and /= are (returning self)
  def add_(self, x, alpha=1) -> Tensor: return self._inplace(self + (x * alpha if alpha != 1 else x), "+")
  def sub_(self, x, alpha=1) -> Tensor: return self._inplace(self - (x * alpha if alpha != 1 else x), "-")
  def mul_(self, x) -> Tensor: return self._inplace(self * x, "*")
  def div_(self, x) -> Tensor: return self._inplace(self / x, "/")
  def __iadd__(self, x): return self.add_(x)  # type: ignore[misc]  # += never passes reverse=
  def __isub__(self, x): return self.sub_(x)  # type: ignore[misc]  # -= never passes reverse=
  def __imul__(self, x): return self.mul_(x)  # type: ignore[misc]  # *= never passes reverse=
  def __itruediv__(self, x): return self.div_(x)  # type: ignore[misc]  # /= never passes reverse=
  # (without these Python fell back to x = x // y: a new tensor, so a view's base was not written)
  def __ifloordiv__(self, x): return self._inplace(self // x, "//")  # type: ignore[misc]
  def __imod__(self, x): return self._inplace(self % x, "%")  # type: ignore[misc]
  def __ipow__(self, x): return self._inplace(self ** x, "**")  # type: ignore[misc]
  def __iand__(self, x): return self._inplace(self & x, "&")  # type: ignore[misc]
  def __ior__(self, x): return self._inplace(self | x, "|")  # type: ignore[misc]
  def __ixor__(self, x): return self._inplace(self ^ x, "^")  # type: ignore[misc]
  def __ilshift__(self, x): return self._inplace(self << x, "<<")  # type: ignore[misc]
  def __irshift__(self, x): return self._inplace(self >> x, ">>")  # type: ignore[misc]
  def clamp_(self, min=None, max=None) -> Tensor: return self._inplace(self.clamp(min, max), "clamp_")
  def zero_(self) -> Tensor: return self.assign(self.zeros_like())
  def fill_(self, value) -> Tensor: return self.assign(self.full_like(value))
  def _inplace(self, out: Tensor, op: str) -> Tensor:
    """x op= y, or the in-place method `op` (exp_, clamp_...): the result is written into x, cast to x's dtype where
    torch allows that cast (float32 into float16, int64 into int8), an error where it does not (a float into an int, a
    non-bool into a bool), as in torch."""
    if can_cast(out.dtype, self.dtype): return self.assign(out)
    if op.isidentifier():   # a method
      raise RuntimeError(f"{op}: result type {out.dtype.name} can't be cast to the desired output type "
                         f"{self.dtype.name} (self's dtype; torch refuses it too): use the out-of-place op for a new "
                         f"{out.dtype.name} tensor, or x.copy_(result) to cast it into x")
    alt = "x.div(y, rounding_mode='floor')" if op == "/" else f"(x {op} y).cast(x.dtype)"
    raise RuntimeError(f"result type {out.dtype.name} of x {op}= y can't be cast to the desired output type "
                       f"{self.dtype.name} (x's dtype; torch refuses it too): write x = x {op} y for a new "
                       f"{out.dtype.name} tensor, or x.assign({alt}) to keep {self.dtype.name}")

  # ---- reductions
  def _axes(self, axis) -> tuple[int, ...]:
    """The dims a reduction's axis/dim argument names, sorted (None, or an empty tuple as in torch: all); each checked
    by _axis, none twice."""
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0): return tuple(range(self.ndim))
    axes = _dims((axis,) if isinstance(axis, (int, np.integer)) else tuple(axis), self.ndim)
    return tuple(sorted(axes)) if self.ndim else ()
  def _reduce(self, op: Ops, axis=None, keepdim: bool = False) -> Tensor:
    axes = self._axes(axis)
    out_shape = tuple(s for i, s in enumerate(self.shape) if i not in axes or keepdim) if not keepdim else \
      tuple(1 if i in axes else s for i, s in enumerate(self.shape))
    if self.numel() == 0 or any(self.shape[a] == 0 for a in axes):
      if op in (Ops.MAX, Ops.MIN) and any(self.shape[a] == 0 for a in axes) and self.dtype != dtypes.bool:
        raise ValueError(f"max/min over an empty axis of a tensor with shape {self.shape} has no identity")
    x = self._split_big_reduce(op, axes)
    if x is not None: return x if keepdim else x.reshape(out_shape)
    ret = self._wrap(self.uop.r(op, axes))
    return ret if keepdim else ret.reshape(out_shape)
  def _split_big_reduce(self, op: Ops, axes: tuple[int, ...]) -> Tensor | None:
    """A huge reduce to a few outputs becomes two kernels (many partial results, then their reduce), so both run in
    parallel and stay vectorised."""
    if _VARS[0] and _has_sym(self.shape): return None
    rsize = prod(self.shape[a] for a in axes)
    osize = self.numel() // max(rsize, 1)
    if rsize < 1 << 15 or osize > 16: return None
    # GPUs need many more partial results than CPU cores to fill their SMs (issue 4)
    gpu = getattr(Device[self.device].renderer, "is_gpu", False)
    split = next((s for s in ((4096, 2048, 1024, 512, 256) if gpu else (256, 128, 64, 32, 16))
                  if rsize % s == 0 and rsize // s >= 1024), None)
    if split is None: return None
    keep = [i for i in range(self.ndim) if i not in axes]
    # built on UOps directly (one Tensor at the end): this sits on the hot path of every big sum
    n = len(keep) + 2
    u = self.uop.permute(tuple(keep) + tuple(axes)).reshape(tuple(self.shape[i] for i in keep)
                                                            + (split, rsize // split))
    part = UOp(Ops.CONTIGUOUS, self.dtype, (u.r(op, (n - 1,)),))
    shape = tuple(1 if i in axes else s for i, s in enumerate(self.shape))
    return self._wrap(part.r(op, (n - 2,)).reshape(shape))
  def sum(self, axis=None, keepdim: bool = False, dtype: DType | str | None = None, dim=None) -> Tensor:
    axis = dim if dim is not None else axis
    # bools and ints sum in int64, as in torch (an int32 sum of 2**31 - 1 and 1 wrapped); dtype= casts the input first
    acc = to_dtype(dtype) if dtype else dtypes.int64 if self.dtype.kind in "biu" else self.dtype
    x = self.cast(acc)
    if acc in HALF: return x.cast(dtypes.float32)._reduce(Ops.ADD, axis, keepdim).cast(acc)
    return x._reduce(Ops.ADD, axis, keepdim)
  def prod(self, axis=None, keepdim: bool = False, dtype=None, dim=None) -> Tensor:
    axis = dim if dim is not None else axis
    acc = to_dtype(dtype) if dtype else (dtypes.int64 if self.dtype.kind in "biu" else self.dtype)
    if acc in HALF: return self.cast(dtypes.float32)._reduce(Ops.MUL, axis, keepdim).cast(acc)
    return self.cast(acc)._reduce(Ops.MUL, axis, keepdim)
  def max(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """The largest value over `axis` (None: all). Returns the values only; argmax gives the indices. Gradient as in
    torch: over one int dim it goes whole to the first maximal element (torch's max(dim)); over all dims or a tuple of
    dims it is split evenly among ties (torch's max() and amax)."""
    return self._extreme(Ops.MAX, dim if dim is not None else axis, keepdim)
  def min(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """The smallest value over `axis`; the gradient follows max's rules (first minimal element for one int dim)."""
    return self._extreme(Ops.MIN, dim if dim is not None else axis, keepdim)
  def amax(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """The largest value over `axis` (int or tuple); the gradient is split evenly among ties (torch.amax)."""
    return self._reduce(Ops.MAX, dim if dim is not None else axis, keepdim)
  def amin(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """The smallest value over `axis` (int or tuple); the gradient is split evenly among ties (torch.amin)."""
    return self._reduce(Ops.MIN, dim if dim is not None else axis, keepdim)
  def _extreme(self, op: Ops, axis, keepdim: bool) -> Tensor:
    if not (isinstance(axis, (int, np.integer)) and self.requires_grad and not Tensor._no_grad and self.ndim):
      return self._reduce(op, axis, keepdim)
    ax = _axis(axis, self.ndim)
    if self.shape[ax] == 0: return self._reduce(op, axis, keepdim)
    # a sum of the first extreme element of each slice and zeros: the value, and the whole gradient to that element
    # (also when every element ties, -inf included); only the sign of a -0.0 maximum is lost
    first = self._first_hit(self._extreme_hits(op, ax), ax).detach()
    return first.where(self, 0.0).sum(ax, keepdim)
  def _extreme_hits(self, op: Ops, ax: int) -> Tensor:
    """True where an element equals its slice's max (op MAX) or min; a nan is the extreme (max and min propagate it)."""
    m = self == self._reduce(op, ax, keepdim=True)
    return m | self.isnan() if self.dtype.kind == "f" else m
  def _first_hit(self, m: Tensor, ax: int, keepdim: bool = True, index: bool = False) -> Tensor:
    """The first True of bool `m` along ax: its index (index=True), or a mask with only that True left."""
    n = self.shape[ax]
    rev = Tensor.arange(n, 0, -1, device=self.device).reshape(*[n if i == ax else 1 for i in range(self.ndim)])
    idx = n - (m * rev)._reduce(Ops.MAX, ax, keepdim=keepdim or not index)
    if index: return idx
    return Tensor.arange(n, device=self.device).reshape(*[n if i == ax else 1 for i in range(self.ndim)]) == idx
  def any(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """Whether any element over `axis` is nonzero; an empty tuple reduces nothing (torch's any/all, unlike its sum)."""
    axis = dim if dim is not None else axis
    if isinstance(axis, (tuple, list)) and len(axis) == 0: return self.cast(dtypes.bool)
    return self.cast(dtypes.bool)._reduce(Ops.MAX, axis, keepdim)
  def all(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    """Whether every element over `axis` is nonzero; an empty tuple reduces nothing, as for any."""
    axis = dim if dim is not None else axis
    if isinstance(axis, (tuple, list)) and len(axis) == 0: return self.cast(dtypes.bool)
    return self.cast(dtypes.bool)._reduce(Ops.MIN, axis, keepdim)
  def mean(self, axis=None, keepdim: bool = False, dim=None, dtype: DType | str | None = None) -> Tensor:
    """The mean over `axis`; dtype= casts the input first and must be a float dtype (as in torch). An int tensor's mean
    is a float (tinygrad; torch refuses it)."""
    axis = dim if dim is not None else axis
    if dtype is not None:
      dt = to_dtype(dtype)
      if dt.kind != "f": raise RuntimeError(f"mean(): dtype must be a floating point dtype, got {dt}")
      return self.cast(dt).mean(axis, keepdim)
    x = self._float()
    # float16/bfloat16 statistics are computed in float32 and rounded once at the end (as torch does): a float16 sum
    # of 1000 x 100.0 is inf before the division
    if x.dtype in HALF: return x.cast(dtypes.float32).mean(axis, keepdim).cast(x.dtype)
    n = prod(self.shape[a] for a in self._axes(axis))
    s = x.sum(axis, keepdim)
    return s / n if n else s * math.nan
  def nansum(self, axis=None, keepdim: bool = False, dtype: DType | str | None = None, dim=None) -> Tensor:
    """sum with NaN counted as 0 (torch.nansum); dtypes as sum's."""
    x = (self != self).where(0.0, self) if self.dtype.kind == "f" else self
    return x.sum(dim if dim is not None else axis, keepdim, dtype=dtype)
  def nanmean(self, axis=None, keepdim: bool = False, dim=None, dtype: DType | str | None = None) -> Tensor:
    """The mean of the non-NaN elements over axis (torch.nanmean): NaN where a slice has none. The input must be a
    float tensor, as in torch (dtype= casts it first)."""
    axis = dim if dim is not None else axis
    if self.dtype.kind != "f":
      raise RuntimeError(f"nanmean(): expected a floating point input, got {self.dtype}; cast it first")
    x = self.cast(to_dtype(dtype)) if dtype is not None else self
    if x.dtype in HALF: return x.cast(dtypes.float32).nanmean(axis, keepdim).cast(x.dtype)
    n = (x == x).sum(axis, keepdim).cast(x.dtype)
    return x.nansum(axis, keepdim) / n
  def count_nonzero(self, dim=None) -> Tensor:
    """The number of nonzero elements over dim (None: all; an int or a tuple), int64 (torch.count_nonzero)."""
    return (self != 0).sum(dim)
  def norm(self, p: float | str | None = "fro", dim=None, keepdim: bool = False,
           dtype: DType | str | None = None) -> Tensor:
    """torch.Tensor.norm: the vector p-norm over dim (None: all elements; an int or a tuple), torch.linalg.vector_norm
    semantics: p = 2 or 'fro' (sqrt of the sum of squares), 1, inf (max |x|), -inf (min |x|), 0 (the number of
    nonzeros) or any float ((sum |x|**p)**(1/p)). A float input is needed; 16-bit inputs are computed in float32.
    The gradient is 0 where the norm is 0 (p >= 1), as in torch; inf norms split it evenly among ties."""
    if p is None: p = "fro"
    if isinstance(p, str):
      if p == "nuc": raise NotImplementedError("norm: p='nuc' (the nuclear norm) needs an SVD, which teeny lacks")
      if p != "fro": raise ValueError(f"norm: p must be a number, 'fro' or 'nuc', got {p!r}")
      p = 2.0
    if not isinstance(p, (int, float)) or isinstance(p, bool): raise TypeError(f"norm: p must be a number, got {p!r}")
    x = self.cast(to_dtype(dtype)) if dtype is not None else self
    if x.dtype.kind != "f":
      raise RuntimeError(f"norm: expected a floating point input, got {x.dtype}; cast it first (x.float().norm())")
    axes = x._axes(dim)
    if x.numel() == 0 and p < 0 or (p == -math.inf and any(x.shape[a] == 0 for a in axes)):
      raise RuntimeError(f"norm: the {p}-norm of an empty slice (shape {x.shape}) is undefined; reduce a non-empty dim")
    return x._pnorm(float(p), axes, keepdim)
  def var(self, axis=None, keepdim: bool = False, correction: int = 1, dim=None,
          unbiased: bool | None = None) -> Tensor:
    axis = dim if dim is not None else axis
    if unbiased is not None: correction = int(unbiased)
    x = self._float()
    if x.dtype in HALF: return x.cast(dtypes.float32).var(axis, keepdim, correction).cast(x.dtype)
    n = prod(self.shape[a] for a in self._axes(axis))
    sq = (x - x.mean(axis, keepdim=True)).square().sum(axis, keepdim)
    # as torch: divided by max(n - correction, 0), so correction >= n gives inf (0/0 = nan for a constant slice)
    return sq / max(n - correction, 0)
  def std(self, axis=None, keepdim: bool = False, correction: int = 1, dim=None,
          unbiased: bool | None = None) -> Tensor:
    if self.dtype in HALF:
      return self.cast(dtypes.float32).std(axis, keepdim, correction, dim, unbiased).cast(self.dtype)
    v = self.var(axis, keepdim, correction, dim, unbiased)
    if not self.requires_grad: return v.sqrt()
    # zero variance: sqrt's gradient there is 1/0, and 0 * inf made the gradient nan; torch gives 0 (the sqrt of a
    # stand-in 1 there keeps its gradient finite, and the where sends none of it back)
    zero = v == 0
    return zero.where(0.0, zero.where(1.0, v).sqrt())
  def var_mean(self, axis=None, keepdim=False, correction=1):
    return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
  def std_mean(self, axis=None, keepdim=False, correction=1):
    return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
  def _arg(self, fn: Ops, axis, keepdim: bool) -> Tensor:
    if axis is None:
      return (self.flatten()._arg(fn, 0, False).reshape(()) if not keepdim
              else self.flatten()._arg(fn, 0, True).reshape((1,) * self.ndim))
    ax = _axis(axis, self.ndim)
    if self.ndim == 0: return Tensor.zeros((), dtype=dtypes.int32, device=self.device)
    if self.shape[ax] == 0: raise ValueError(f"argmax/argmin of an empty axis (shape {self.shape})")
    # max and min propagate nan, so a nan extreme matches no element by ==: then the nans are the hits (torch: nan is
    # the max for argmax and the min for argmin; without this the index came out as n, one past the end)
    return self._first_hit(self._extreme_hits(fn, ax), ax, keepdim, index=True).cast(dtypes.int32)
  def argmax(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    return self._arg(Ops.MAX, dim if dim is not None else axis, keepdim)
  def argmin(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    return self._arg(Ops.MIN, dim if dim is not None else axis, keepdim)
  def logsumexp(self, axis=None, keepdim: bool = False, dim=None) -> Tensor:
    axis = dim if dim is not None else axis
    x = self._float()
    if any(x.shape[a] == 0 for a in x._axes(axis)):   # (an empty sum: log 0, as torch)
      return x.sum(axis, keepdim=keepdim).cast(x.dtype).full_like(-math.inf)
    if x.dtype in HALF: return x.cast(dtypes.float32).logsumexp(axis, keepdim).cast(x.dtype)
    m = x.amax(axis, keepdim=True)
    m = m.isinf().where(0, m).detach()
    out = (x - m).exp().sum(axis, keepdim=True).log() + m
    return out if keepdim else out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in self._axes(axis)))
  def softmax(self, axis: int = -1, dim=None, dtype: DType | str | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along axis; dtype= casts the input first (torch)."""
    axis = dim if dim is not None else axis
    x = (self.cast(dtype) if dtype is not None else self)._float()
    if 0 in [x.shape[a] for a in x._axes(axis)]: return x   # (no values along axis: nothing to normalise, as torch)
    if x.dtype in HALF: return x.cast(dtypes.float32).softmax(axis).cast(x.dtype)
    # GPUs: one kernel, the row read once (kernels/softmax.py, registered by teeny.kernels)
    if (route := KERNEL_ROUTES.get("softmax")) is not None and (out := route(x, axis)) is not None: return out
    e = (x - x.amax(axis, keepdim=True).detach()).exp()
    return e / e.sum(axis, keepdim=True)
  def log_softmax(self, axis: int = -1, dim=None, dtype: DType | str | None = None) -> Tensor:
    """x - logsumexp(x) along axis; dtype= casts the input first (torch)."""
    axis = dim if dim is not None else axis
    x = (self.cast(dtype) if dtype is not None else self)._float()
    if 0 in [x.shape[a] for a in x._axes(axis)]: return x
    if x.dtype in HALF: return x.cast(dtypes.float32).log_softmax(axis).cast(x.dtype)
    m = x - x.amax(axis, keepdim=True).detach()
    return m - m.exp().sum(axis, keepdim=True).log()
  def cumsum(self, axis: int = 0, dim=None, dtype: DType | str | None = None) -> Tensor:
    """Running sums along `axis`; dtype= casts the input first and the sums are in it (torch). Bools and ints
    accumulate in int64 (torch)."""
    return self._cum_input(dtype)._cumulative(Ops.ADD, dim if dim is not None else axis)
  def cumprod(self, axis: int = 0, dim=None, dtype: DType | str | None = None) -> Tensor:
    """Running products along `axis`; dtype= casts the input first and the products are in it (torch). Bools and
    ints accumulate in int64 (torch: int8 10 * 10 * 10 is 1000, not -24)."""
    return self._cum_input(dtype)._cumulative(Ops.MUL, dim if dim is not None else axis)
  def _cum_input(self, dtype: DType | str | None) -> Tensor:
    if dtype is not None: return self.cast(dtype)
    return self.cast(dtypes.int64) if self.dtype.kind in "biu" else self
  def _cumulative(self, op: Ops, axis: int) -> Tensor:
    ax = _axis(axis, self.ndim)
    if self.ndim == 0: return self._fresh(self)
    x = self.transpose(ax, -1) if ax != self.ndim - 1 else self
    if op in (Ops.ADD, Ops.MUL) and x.dtype in HALF:  # running sums and products of float16 accumulate in float32
      return self.cast(dtypes.float32)._cumulative(op, axis).cast(self.dtype)
    out = x._cum_last(op)
    return out.transpose(ax, -1) if ax != self.ndim - 1 else out
  def _cum_last(self, op: Ops) -> Tensor:
    n = self.shape[-1]
    if n <= 1: return self._fresh(self)
    ident = {Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dtypes.min(self.dtype)}[op]
    if n > 256:
      # two levels: within blocks of b, then the running totals of the blocks
      b = 64
      nb = -(-n // b)
      x = self.pad(((0, 0),) * (self.ndim - 1) + ((0, nb * b - n),), value=ident).reshape(*self.shape[:-1], nb, b)
      inner = x._cum_last(op)
      tot = inner[..., -1]
      carry = tot._cum_last(op)
      carry = carry.pad(((0, 0),) * (carry.ndim - 1) + ((1, 0),), value=ident)[..., :-1]
      comb = {Ops.ADD: lambda a, c: a + c, Ops.MUL: lambda a, c: a * c, Ops.MAX: lambda a, c: a.maximum(c)}[op]
      out = comb(inner, carry.unsqueeze(-1))
      return out.reshape(*self.shape[:-1], nb * b)[..., :n]
    # out[..., i] = reduce over j <= i: a triangular mask over an expanded (n, n) view, fused into one kernel
    xe = self.unsqueeze(-2).expand(*self.shape[:-1], n, n)
    tri = Tensor.arange(n, device=self.device).reshape(n, 1) >= Tensor.arange(n, device=self.device).reshape(1, n)
    masked = tri.where(xe, self._const(ident))
    return masked._reduce(op, -1)

  # ---- movement
  def reshape(self, *shape) -> Tensor:
    shape = _shape_arg(shape, allow_neg=True)
    if _VARS[0] and _has_sym(shape, self.shape): return _sym_reshape(self, shape)
    if shape.count(-1) > 1: raise ShapeError(f"reshape: only one dimension can be -1, got {shape}")
    if -1 in shape:
      known = prod(s for s in shape if s != -1)
      if known == 0 or self.numel() % known:
        raise ShapeError(f"cannot reshape tensor of shape {self.shape} ({self.numel()} elements) into {shape}")
      shape = tuple(self.numel() // known if s == -1 else s for s in shape)
    if prod(shape) != self.numel() or any(s < 0 for s in shape):
      raise ShapeError(f"cannot reshape tensor of shape {self.shape} ({self.numel()} elements) into {shape}")
    if shape == self.shape: return self
    v = self._view(self.uop.reshape(shape))
    # (as torch's: a view where strides express it, else a new tensor, copy-on-write)
    return v if self._base is None or _reshape_is_view(self, shape) else _copy_result(self, v)
  def view(self, *shape) -> Tensor:
    """torch's view: reshape that always shares memory with self. Where self's strides cannot express the new shape
    (`x.T.view(-1)`), it raises as torch does, instead of copying as reshape does (a write into the copy would not
    reach self)."""
    if len(shape) == 1 and isinstance(shape[0], (DType, str)):
      raise TypeError(f"view({shape[0]!r}): teeny does not reinterpret memory in place; x.bitcast(dtype) gives the "
                      "same bits as a new tensor (equal element sizes)")
    out = self.reshape(*shape)
    if out._cow and self._base is not None:
      raise RuntimeError(f"view: shape {tuple(out.shape)} is not compatible with the size and stride of this "
                         f"{tuple(self.shape)} view (at least one dimension spans across two contiguous subspaces); "
                         "use .reshape(...) instead, which copies")
    return out
  def t(self) -> Tensor:
    """torch.t: a 2-d tensor transposed; 0-d and 1-d tensors come back as they are."""
    if self.ndim > 2: raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}-d; use "
                                         ".transpose(dim0, dim1) or .mT")
    return self.transpose(0, 1) if self.ndim == 2 else self
  def expand(self, *shape) -> Tensor:
    shape = _shape_arg(shape, allow_neg=True)
    if len(shape) < self.ndim:
      raise ShapeError(f"expand: target {shape} has fewer dims than the tensor's shape {self.shape}")
    x = self.reshape((1,) * (len(shape) - self.ndim) + self.shape) if len(shape) > self.ndim else self
    new = tuple(s if n == -1 else n for s, n in zip(x.shape, shape))
    for s, n in zip(x.shape, new):
      if s != n and s != 1: raise ShapeError(f"expand: cannot expand shape {self.shape} to {shape}")
    return x if new == x.shape else x._view(x.uop.expand(new))
  def broadcast_to(self, *shape): return self.expand(*shape)
  def expand_as(self, other: Tensor): return self.expand(other.shape)
  def permute(self, *order) -> Tensor:
    if len(order) == 1 and isinstance(order[0], (tuple, list)): order = tuple(order[0])
    if len(order) != self.ndim:
      raise ShapeError(f"permute: dims {tuple(order)} name {len(order)} dims; "
                       f"the tensor of shape {self.shape} has {self.ndim}")
    order = _dims(order, self.ndim)
    return self._view(self.uop.permute(order))
  def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
    order = list(range(self.ndim))
    a, b = _axis(dim0, self.ndim), _axis(dim1, self.ndim)
    order[a], order[b] = order[b], order[a]
    return self.permute(*order)
  @property
  def T(self) -> Tensor:
    """All dims reversed (numpy's and torch's .T; for a matrix, its transpose)."""
    return self.permute(*reversed(range(self.ndim))) if self.ndim >= 2 else self
  @property
  def mT(self) -> Tensor: return self.transpose(-2, -1)
  def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0: return self.reshape(1)
    s, e = _axis(start_dim, self.ndim), _axis(end_dim, self.ndim)
    if s > e:
      raise RuntimeError(f"flatten() has invalid args: start_dim cannot come after end_dim (start_dim={start_dim}, "
                         f"end_dim={end_dim} for {self.ndim} dims); pass start_dim <= end_dim")
    return self.reshape(*self.shape[:s], prod(self.shape[s:e + 1]), *self.shape[e + 1:])
  def unflatten(self, dim: int, sizes) -> Tensor:
    """torch.unflatten: dim split into `sizes` (non-empty; one entry may be -1, inferred), a view where reshape is."""
    if self.ndim == 0: raise IndexError(f"unflatten: dim {dim} is out of range: the tensor has no dimensions")
    d = _axis(dim, self.ndim)
    if not isinstance(sizes, (list, tuple)) or \
       any(not is_int(s) for s in sizes):
      raise TypeError(f"unflatten: sizes must be a sequence of ints, got {sizes!r}")
    sizes = tuple(int(s) for s in sizes)
    if not sizes: raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1: raise RuntimeError(f"unflatten: only one dimension can be inferred (-1), got {sizes}")
    if any(s < -1 for s in sizes): raise RuntimeError(f"unflatten: invalid size {min(sizes)} in {sizes}")
    n, known = self.shape[d], prod(s for s in sizes if s != -1)
    if -1 in sizes:
      if known == 0 or n % known:
        raise RuntimeError(f"unflatten: cannot infer the -1 in sizes {sizes} for dim {d} of size {n}")
      sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
      raise RuntimeError(f"unflatten: provided sizes {list(sizes)} don't multiply up to the size of dim {d} ({n}) "
                         "in the input tensor")
    return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1:])
  def movedim(self, source, destination) -> Tensor:
    """torch.movedim: the dims in `source` (an int or a sequence) moved to the positions in `destination`, the other
    dims keeping their order; a view."""
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
      raise RuntimeError(f"movedim: source {list(src)} and destination {list(dst)} must name the same number of dims")
    s_, d_ = tuple(_axis(v, self.ndim) for v in src), tuple(_axis(v, self.ndim) for v in dst)
    for what, given, vs in (("source", src, s_), ("destination", dst, d_)):
      if len(set(vs)) != len(vs): raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(given)})")
    if self.ndim == 0: return self._view(self.uop)
    rest = iter(i for i in range(self.ndim) if i not in s_)
    at = dict(zip(d_, s_))
    return self.permute(*[at[i] if i in at else next(rest) for i in range(self.ndim)])
  moveaxis = movedim
  def swapdims(self, dim0: int, dim1: int) -> Tensor:
    """torch.swapdims (transpose): dims dim0 and dim1 swapped; a view."""
    return self.transpose(dim0, dim1)
  def swapaxes(self, axis0: int, axis1: int) -> Tensor:
    """torch.swapaxes (transpose): dims axis0 and axis1 swapped; a view."""
    return self.transpose(axis0, axis1)
  def narrow(self, dim: int, start: int, length: int) -> Tensor:
    """torch.narrow: `length` elements of dim from `start` (negative counts from the end); a view."""
    if self.ndim == 0: raise RuntimeError("narrow() cannot be applied to a 0-dim tensor")
    d = _axis(dim, self.ndim)
    for name, v in (("start", start), ("length", length)):
      if not is_int(v):
        raise TypeError(f"narrow: {name} must be an int, got {v!r}")
    n = self.shape[d]
    if not -n <= start <= n:
      raise IndexError(f"narrow: start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if length < 0: raise RuntimeError(f"narrow: length must be non-negative, got {length}")
    s0 = int(start) + n if start < 0 else int(start)
    if s0 + length > n:
      raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}) of dim {d}")
    return self.shrink(tuple((s0, s0 + int(length)) if i == d else None for i in range(self.ndim)))
  def squeeze(self, dim=None) -> Tensor:
    if dim is None: return self.reshape(*[s for s in self.shape if s != 1])
    ds = set(_dims((dim,) if isinstance(dim, (int, np.integer)) else dim, self.ndim))
    return self.reshape(*[s for i, s in enumerate(self.shape) if not (i in ds and s == 1)])
  def unsqueeze(self, dim: int) -> Tensor:
    d = _axis(dim, self.ndim + 1)
    return self.reshape(*self.shape[:d], 1, *self.shape[d:])
  def pad(self, padding, value: float | None = None, mode: str = "constant") -> Tensor:
    """torch's F.pad: `padding` flat, last dim first ((left, right, top, bottom, ...)), or a (before, after) pair per
    dim (None for none). mode 'constant' fills with `value` (default 0); 'reflect' mirrors without repeating the edge
    (each amount < the dim's size), 'replicate' repeats the edge, 'circular' wraps around (each amount <= the size).
    Negative amounts crop. Unlike torch, the non-constant modes pad any number of dims."""
    modes = ("constant", "reflect", "replicate", "circular")
    if mode not in modes: raise NotImplementedError(f"pad: unrecognised padding mode {mode!r}; use one of {modes}")
    if mode != "constant" and value is not None:
      raise RuntimeError(f"pad: padding mode {mode!r} doesn't take a value argument (only 'constant' does)")
    padding = tuple(padding)
    if _VARS[0] and _has_sym(padding, self.shape) and mode == "constant": return _sym_pad(self, padding, value)
    if all(isinstance(p, (int, np.integer)) for p in padding):
      if len(padding) % 2: raise RuntimeError(f"pad: flat padding length must be divisible by 2, got {padding}")
      if len(padding) // 2 > self.ndim:
        raise RuntimeError(f"pad: flat padding length ({len(padding)}) must be at most two times the input's dims "
                           f"({self.ndim}), got {padding}")
      pairs = [(0, 0)] * self.ndim
      for i in range(len(padding) // 2): pairs[self.ndim - 1 - i] = (int(padding[2 * i]), int(padding[2 * i + 1]))
    else:
      if len(padding) != self.ndim:
        raise ValueError(f"padding {padding} needs one (before, after) pair per dim ({self.ndim})")
      pairs = [(0, 0) if p is None else (int(p[0]), int(p[1])) for p in padding]
    if mode != "constant": return _copy_result(self, self._pad_mode(pairs, mode))
    for d, ((b, e), s) in enumerate(zip(pairs, self.shape)):
      if s + min(b, 0) + min(e, 0) < 0:
        raise RuntimeError(f"pad: padding {(b, e)} crops more than the {s} elements of dim {d} (shape {self.shape})")
    x = self
    # negative padding crops
    if any(b < 0 or e < 0 for b, e in pairs):
      x = x.shrink(tuple((-min(b, 0), s + min(e, 0)) for (b, e), s in zip(pairs, x.shape)))
      pairs = [(max(b, 0), max(e, 0)) for b, e in pairs]
    # (a new tensor, as torch's: copy-on-write, so writes into the padding are kept and never reach self)
    if all(b == 0 and e == 0 for b, e in pairs): return _copy_result(self, x)
    out = x._view(x.uop.pad(tuple(pairs)))
    if value is None or value == 0: return _copy_result(self, out)
    mask = Tensor(UOp.const(dtypes.bool, True, self.device)).reshape((1,) * x.ndim).expand(x.shape)
    mask = Tensor(mask.uop.pad(tuple(pairs)))
    return mask.where(out, out._const(value)._broadcast_to(out.shape))
  def _pad_mode(self, pairs: list[tuple[int, int]], mode: str) -> Tensor:
    """pad's reflect/replicate/circular, one dim at a time (so corners pad the padded edges, as torch's do). As in
    torch, reflect and replicate take the positive amounts from the whole input and then crop; circular crops, then
    wraps."""
    def cut(t: Tensor, d: int, lo: int, hi: int) -> Tensor:
      return t.shrink(tuple((lo, hi) if i == d else None for i in range(t.ndim)))
    x = self
    for d, ((b, e), s) in enumerate(zip(pairs, self.shape)):
      if b == 0 and e == 0: continue
      if s + b + e < 0:
        raise RuntimeError(f"pad: padding {(b, e)} crops more than the {s} elements of dim {d} (shape {self.shape})")
      pb, pe = max(b, 0), max(e, 0)
      if mode == "circular" and (b < 0 or e < 0):  # torch's circular crops first, then wraps what is left
        x, s = cut(x, d, -min(b, 0), s + min(e, 0)), s + min(b, 0) + min(e, 0)
      if mode == "reflect" and (b >= s or e >= s):
        raise RuntimeError(f"pad: reflect padding {(b, e)} must be less than the size {s} of dim {d} "
                           f"(shape {self.shape})")
      if mode == "circular" and (pb > s or pe > s):
        raise RuntimeError(f"pad: circular padding {(b, e)} wraps around more than once: it must be at most the size "
                           f"{s} of dim {d} after cropping (shape {self.shape})")
      if mode == "replicate" and s == 0:
        raise RuntimeError(f"pad: replicate padding of dim {d} needs a non-empty dim (shape {self.shape})")
      if mode == "reflect": left, right = cut(x, d, 1, pb + 1).flip(d), cut(x, d, s - 1 - pe, s - 1).flip(d)
      elif mode == "circular": left, right = cut(x, d, s - pb, s), cut(x, d, 0, pe)
      else:
        left = cut(x, d, 0, 1).expand(*[pb if i == d else n for i, n in enumerate(x.shape)])
        right = cut(x, d, s - 1, s).expand(*[pe if i == d else n for i, n in enumerate(x.shape)])
      x = Tensor.cat(*[t for t in (left, x, right) if t.shape[d]], dim=d)
      if mode != "circular" and (b < 0 or e < 0): x = cut(x, d, -min(b, 0), x.shape[d] + min(e, 0))
    return x
  def shrink(self, arg) -> Tensor:
    if _VARS[0] and _has_sym(arg, self.shape): return _sym_shrink(self, arg)
    arg = tuple((0, s) if a is None else (int(a[0]), int(a[1])) for a, s in zip(arg, self.shape))
    for (b, e), s in zip(arg, self.shape):
      if not 0 <= b <= e <= s: raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}")
    return self._view(self.uop.shrink(arg))
  def flip(self, *axis, dims=None) -> Tensor:
    ax = dims if dims is not None else (axis[0] if len(axis) == 1 else (axis if axis else None))
    axes = (tuple(range(self.ndim)) if ax is None
            else _dims((ax,) if isinstance(ax, (int, np.integer)) else ax, self.ndim))
    # (a new tensor, as torch's: copy-on-write. Basic indexing's negative steps flip a view instead, as numpy's)
    return _copy_result(self, self._view(self.uop.flip(axes)) if self.ndim else self)
  def _window(self, k_: Sequence[int], s_: Sequence[int], d_: Sequence[int]) -> Tensor:
    """Sliding windows over the last len(k_) dims, (..., *in) -> (..., *out, *k_): a view, no copy."""
    n = len(k_)
    if any(d * (k - 1) + 1 > i for k, d, i in zip(k_, d_, self.shape[-n:])):
      raise ValueError(f"window {tuple(k_)} (dilation {tuple(d_)}) "
                       f"is larger than the input's last dims {self.shape[-n:]}")
    # (a view of self's storage, as torch's unfold: wrapped as a new tensor, windows straight over a buffer became a
    # copy k*k times its size, which a convolution or a pool then read instead of the input; writes through it are
    # refused, since windows overlap)
    return self._view(self.uop.window(tuple(k_), tuple(s_), tuple(d_)))
  def repeat(self, *repeats) -> Tensor:
    reps = _shape_arg(repeats)
    if len(reps) < self.ndim: raise ValueError(f"repeat needs at least {self.ndim} repeat counts, got {reps}")
    base = (1,) * (len(reps) - self.ndim) + self.shape
    x = self.reshape(*base)
    inter = [d for s in base for d in (1, s)]
    x = x.reshape(*inter).expand(*[d for r, s in zip(reps, base) for d in (r, s)])
    # (a new tensor, as torch's: copy-on-write, so it can be written, unlike the expanded view it reads)
    return _copy_result(self, x._view(x.uop.reshape(tuple(r * s for r, s in zip(reps, base)))))
  def tile(self, *reps, dims=None) -> Tensor:
    """torch.tile: the tensor repeated dims[i] times along each dim (x.tile(2, 3), x.tile((2, 3)) or
    x.tile(dims=(2, 3))); fewer dims than the tensor's are padded with 1s in front (more add leading dims, as repeat).
    A new tensor."""
    if dims is not None: reps = (dims,)
    reps = tuple(reps[0]) if len(reps) == 1 and isinstance(reps[0], (list, tuple)) else reps
    if any(not is_int(r) for r in reps):
      raise TypeError(f"tile: dims must be ints, got {reps!r}")
    if any(r < 0 for r in reps): raise RuntimeError(f"tile: dims must be non-negative, got {tuple(reps)}")
    return self.repeat(*((1,) * (self.ndim - len(reps)) + tuple(reps))) if self.ndim or reps else self.clone()
  def repeat_interleave(self, repeats: int, dim: int | None = None) -> Tensor:
    x = self.flatten() if dim is None else self
    d = 0 if dim is None else _axis(dim, self.ndim)
    x = x.unsqueeze(d + 1)
    x = x.expand(*x.shape[:d + 1], repeats, *x.shape[d + 2:])
    return _copy_result(self, x._view(x.uop.reshape(x.shape[:d] + (x.shape[d] * repeats,) + x.shape[d + 2:])))
  def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
    """torch.cat: Tensor.cat(a, b, dim=), a.cat(b, dim=) or Tensor.cat([a, b]); dtypes promote as torch.result_type
    does. As in torch, a 1-D tensor of size 0 is skipped beside tensors of other ranks (the legacy rule) and 0-d
    tensors are refused."""
    tensors = list(self) if isinstance(self, (list, tuple)) else [self]
    tensors += list(others[0]) if len(others) == 1 and isinstance(others[0], (list, tuple)) else list(others)
    if not tensors: raise ShapeError("cat: expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
      if not isinstance(t, Tensor): raise TypeError(f"cat: expected Tensors, got {type(t).__name__} at position {i}")
      if t.ndim == 0:
        raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated; unsqueeze it")
    dt = least_upper_dtype(*[t.dtype for t in tensors])
    # (only beside tensors of other ranks is an empty 1-D tensor skipped: among 1-D tensors it joins, and its gradient
    # is an empty tensor, not None)
    legacy = any(t.ndim != 1 for t in tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if not (legacy and t.ndim == 1 and t.shape[0] == 0)]
    ref = kept[0][1]
    # (tensors all of shape (0,): torch checks no dim)
    d = 0 if all(t.shape == (0,) for t in tensors) and isinstance(dim, int) else _axis(dim, ref.ndim)
    for i, t in kept:
      if t.ndim != ref.ndim:
        raise ShapeError(f"cat: tensors must have the same number of dimensions: got {ref.ndim} and {t.ndim} "
                         f"(tensor {i}); only a 1-D tensor of size 0 may differ")
      if any(a != b for j, (a, b) in enumerate(zip(t.shape, ref.shape)) if j != d):
        raise ShapeError(f"cat: shapes {[tuple(x.shape) for x in tensors]} must match except in dim {d}: tensor {i} "
                         f"has shape {t.shape}")
    parts = [t.cast(dt) for _, t in kept]
    total = sum(t.shape[d] for t in parts)
    out, off = None, 0
    for t in parts:
      p = t.pad(tuple((off, total - off - t.shape[d]) if i == d else None for i in range(ref.ndim)))
      out = p if out is None else out + p
      off += t.shape[d]
    return out  # type: ignore[return-value]  # parts is not empty: out is set
  def stack(self, *others, dim: int = 0) -> Tensor:
    """torch.stack: Tensor.stack(a, b, dim=), a.stack(b, dim=) or Tensor.stack([a, b]): tensors of one shape joined
    along a new dim; dtypes promote as in cat."""
    tensors = (self, *others) if isinstance(self, Tensor) else tuple(self) + others
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)): tensors = tuple(tensors[0])
    if not tensors: raise ShapeError("stack: expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
      if not isinstance(t, Tensor): raise TypeError(f"stack: expected Tensors, got {type(t).__name__} at position {i}")
      if t.shape != tensors[0].shape:
        raise ShapeError(f"stack expects each tensor to be equal size, but got {tensors[0].shape} at entry 0 and "
                         f"{t.shape} at entry {i}")
    d = _axis(dim, tensors[0].ndim + 1)
    return tensors[0].unsqueeze(d).cat(*[t.unsqueeze(d) for t in tensors[1:]], dim=d)
  def split(self, sizes, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split: pieces of `sizes` (an int: that size each, the last one smaller; a list: those sizes, which add up
    to the dim's size) along dim; each a view."""
    if self.ndim == 0: raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _axis(dim, self.ndim)
    n = self.shape[d]
    if is_int(sizes):
      if sizes < 0: raise RuntimeError(f"split expects split_size be non-negative, but got split_size={sizes}")
      if sizes == 0 and n != 0:
        raise RuntimeError(f"split: split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
      sizes = [min(sizes, n - i) for i in range(0, n, sizes)] if n else [0]
    else:
      if not isinstance(sizes, (list, tuple)) or \
         any(not is_int(s) for s in sizes):
        raise TypeError(f"split: sizes must be an int or a sequence of ints, got {sizes!r}")
      sizes = [int(s) for s in sizes]
      if any(s < 0 for s in sizes):
        raise RuntimeError(f"split: split_sizes must be non-negative, got {sizes}")
      if sum(sizes) != n:
        raise ShapeError(f"split: split_sizes {sizes} must sum exactly to {n} (dim {d} of shape {self.shape})")
    out, off = [], 0
    for s in sizes:
      out.append(self.shrink(tuple((off, off + s) if i == d else None for i in range(self.ndim))))
      off += s
    return tuple(out)
  def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.chunk: pieces of ceil(size / chunks) along dim (so possibly fewer than `chunks`); a dim of size 0 gives
    `chunks` empty pieces. Each a view."""
    if not is_int(chunks):
      raise TypeError(f"chunk: chunks must be an int, got {chunks!r}")
    if chunks <= 0: raise RuntimeError(f"chunk: chunks must be greater than 0, got {chunks}")
    if self.ndim == 0: raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = self.shape[_axis(dim, self.ndim)]
    return self.split([0] * int(chunks) if n == 0 else -(-n // chunks), dim)
  def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
    return tuple(t.squeeze(dim) for t in self.split(1, dim))

  # ---- indexing
  def __getitem__(self, indices) -> Tensor:
    if _VARS[0] and (any(isinstance(i, slice) and _has_sym((i.start, i.stop, i.step)) or isinstance(i, UOp)
                         for i in (indices if isinstance(indices, tuple) else (indices,))) or _has_sym(self.shape)):
      return _sym_getitem(self, indices)
    from teeny.indexing import getitem
    return getitem(self, indices)
  def __setitem__(self, indices, value) -> None:
    from teeny.indexing import setitem
    setitem(self, indices, value)
  def _gather(self, dim: int, index: Tensor) -> Tensor:
    """out[..i..] = self[..index[..i..]..] along dim; index has self's rank, other dims equal (torch.gather)."""
    d = _axis(dim, self.ndim)
    if index.ndim != self.ndim:
      raise ValueError(f"gather: index rank {index.ndim} must match the input's ({self.ndim})")
    if index.dtype.kind not in "iu": raise TypeError(f"gather: index must be an integer tensor, not {index.dtype}")
    for i, (a, b) in enumerate(zip(index.shape, self.shape)):
      if i != d and a > b:
        raise ValueError(f"gather: index shape {index.shape} exceeds input shape {self.shape} at dim {i}")
    src = self.shrink(tuple((0, index.shape[i]) if i != d else None for i in range(self.ndim)))
    return src._wrap(UOp(Ops.GATHER, self.dtype, (src.uop, index.uop), d), index)

  # ---- linear algebra
  def dot(self, w: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one size (torch.dot); other ranks are matmul (tinygrad's dot)."""
    if isinstance(w, Tensor) and self.ndim == 1 and w.ndim == 1 and self.shape != w.shape:
      raise ShapeError(f"dot: 1-D tensors of different sizes, {self.shape[0]} and {w.shape[0]}")
    return self.matmul(w)
  def matmul(self, w: Tensor) -> Tensor:
    if not isinstance(w, Tensor): w = Tensor(w, device=self.device)
    x = self
    xsh, wsh = x.shape, w.shape   # (read once: small matmuls are host-bound)
    if not xsh or not wsh:
      raise ValueError(f"matmul needs tensors of at least 1 dim, got {xsh} and {wsh}")
    if xsh[-1] != (wk := wsh[-2] if len(wsh) >= 2 else wsh[0]):
      raise ValueError(f"matmul shape mismatch: {xsh} @ {wsh} (inner dims {xsh[-1]} and {wk} differ)")
    if len(xsh) >= 2 and len(wsh) >= 2:
      xa, wa = _tile_aligned(x, w)
      if (out := _matmul_body(xa, wa)) is not None: return out
    dt = least_upper_dtype(x.dtype, w.dtype)
    xs = x.unsqueeze(0) if len(xsh) == 1 else x
    ws = w.unsqueeze(-1) if len(wsh) == 1 else w
    xs, ws = xs.cast(dt), ws.cast(dt)
    # 16-bit inputs are multiplied in float32 (each product exact), summed there and rounded once, as torch does (in
    # their own dtype each product would be rounded: 16-bit results round at every op). Widened before the broadcast,
    # so the backward's sums stay float32 too. _matmul_body builds the same graph
    if dt in HALF: xs, ws = xs.float(), ws.float()
    batch = _broadcast_shape(xs.shape[:-2], ws.shape[:-2])
    n, k, m = xs.shape[-2], xs.shape[-1], ws.shape[-1]
    a = xs.reshape(*xs.shape[:-1], 1, k)._broadcast_to((*batch, n, m, k))
    b = ws.transpose(-1, -2).reshape(*ws.shape[:-2], 1, m, k)._broadcast_to((*batch, n, m, k))
    out = (a * b).sum(-1).cast(dt) if dt in HALF else (a * b).sum(-1, dtype=dt)
    if x.ndim == 1: out = out.squeeze(-2)
    if w.ndim == 1: out = out.squeeze(-1)
    return out
  def linear(self, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight + bias, with weight shaped (in, out) as in tinygrad (a 1-D weight scales elementwise)."""
    x = self * weight if weight.ndim == 1 else self.matmul(weight)
    return x + bias if bias is not None else x
  def outer(self, vec2: Tensor) -> Tensor:
    """torch.outer: the (n, m) products of two 1-D tensors, dtypes promoted."""
    for name, v in (("self", self), ("vec2", vec2)):
      if not isinstance(v, Tensor): raise TypeError(f"outer: {name} must be a Tensor, got {type(v).__name__}")
      if v.ndim != 1: raise RuntimeError(f"outer: expected a 1-D argument {name}, but got a {v.ndim}-D one")
    return self.reshape(-1, 1) * vec2.reshape(1, -1)
  ger = outer
  def tensordot(self, other: Tensor, dims=2) -> Tensor:
    """torch.tensordot: contract self's last `dims` dims with other's first `dims` (an int), or the dims listed in a
    pair (dims_self, dims_other); the free dims of self then of other remain. Both must have one dtype. As in torch, a
    contracted dim of size 1 on one side broadcasts (the other side is summed over it). Unlike torch, an entry of the
    pair may be a plain int (numpy's axes=(1, 0))."""
    if not isinstance(other, Tensor): raise TypeError(f"tensordot: other must be a Tensor, got {type(other).__name__}")
    if self.dtype != other.dtype:
      raise RuntimeError(f"tensordot: both inputs should have the same dtype, got {self.dtype} and {other.dtype}")
    da: list[Any]
    db: list[Any]
    if is_int(dims):
      if dims < 0: raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
      if dims > self.ndim or dims > other.ndim:
        raise RuntimeError(f"tensordot: dims={dims} is more than the dims of self ({self.ndim}) or other "
                           f"({other.ndim})")
      da, db = list(range(self.ndim - int(dims), self.ndim)), list(range(int(dims)))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
      da, db = [[v] if isinstance(v, (int, np.integer)) else list(v) for v in dims]
      if len(da) != len(db):
        raise RuntimeError(f"tensordot: both dimension lists should have the same length, got {da} and {db}")
    else:
      raise RuntimeError(f"tensordot expects dims to be an int or a pair of lists of ints, got dims={dims!r}")
    da, db = list(_dims(da, self.ndim)), list(_dims(db, other.ndim))
    a, b = self, other
    for i, j in zip(da, db):
      sa, sb = a.shape[i], b.shape[j]
      if sb == 1 and sa != 1: a = a.sum(i, keepdim=True, dtype=a.dtype)   # broadcast: summed right away
      elif sa == 1 and sb != 1: b = b.sum(j, keepdim=True, dtype=b.dtype)
      elif sa != sb:
        raise RuntimeError(f"tensordot: contracted dimensions need to match, but self has size {sa} in dim {i} and "
                           f"other has size {sb} in dim {j}")
    fa, fb = [i for i in range(a.ndim) if i not in da], [j for j in range(b.ndim) if j not in db]
    k = prod(a.shape[i] for i in da)
    am = a.permute(*fa, *da).reshape(prod(a.shape[i] for i in fa), k)
    bm = b.permute(*db, *fb).reshape(k, prod(b.shape[j] for j in fb))
    return am.matmul(bm).reshape(*[a.shape[i] for i in fa], *[b.shape[j] for j in fb])
  def trace(self) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (ints sum to int64, as torch's)."""
    if self.ndim != 2: raise RuntimeError(f"trace: expected a matrix, but got a tensor with {self.ndim} dims")
    if self.dtype == dtypes.bool: raise NotImplementedError("trace is not implemented for bool tensors (as in torch)")
    return self.diagonal().sum()
  def kron(self, other: Tensor) -> Tensor:
    """torch.kron: the Kronecker product; the shorter shape is padded with leading 1s, and dim i of the result has
    size self.shape[i] * other.shape[i]. Dtypes promote."""
    if not isinstance(other, Tensor): raise TypeError(f"kron: other must be a Tensor, got {type(other).__name__}")
    nd = max(self.ndim, other.ndim)
    sa, sb = (1,) * (nd - self.ndim) + self.shape, (1,) * (nd - other.ndim) + other.shape
    a = self.reshape(*[v for s in sa for v in (s, 1)])
    b = other.reshape(*[v for s in sb for v in (1, s)])
    return (a * b).reshape(*[x * y for x, y in zip(sa, sb)])
  def cross(self, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross (Tensor.cross): the 3-vector cross product along dim, the other dims broadcast; both tensors must
    have the same number of dims and one dtype. dim=None picks self's first dim of size 3, as torch's (which warns
    that this default will become -1, torch.linalg.cross's)."""
    if not isinstance(other, Tensor): raise TypeError(f"cross: other must be a Tensor, got {type(other).__name__}")
    if self.ndim != other.ndim:
      raise RuntimeError(f"cross: inputs must have the same number of dimensions, got shapes {self.shape} and "
                         f"{other.shape}")
    if dim is None:
      dim = next((i for i, s in enumerate(self.shape) if s == 3), None)
      if dim is None: raise RuntimeError(f"cross: no dimension of size 3 in input of shape {self.shape}; pass dim=")
    d = _axis(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
      raise RuntimeError(f"cross: inputs dimension {d} must have length 3. Got {self.shape[d]} and {other.shape[d]}")
    if self.dtype != other.dtype:
      raise RuntimeError(f"cross: both inputs should have the same dtype, got {self.dtype} and {other.dtype}")
    if self.dtype == dtypes.bool: raise NotImplementedError("cross is not implemented for bool tensors (as in torch)")
    try: shape = _broadcast_shape(self.shape, other.shape)
    except ValueError:
      raise RuntimeError(f"cross: the shapes {self.shape} and {other.shape} do not broadcast") from None
    a, b = self.expand(shape), other.expand(shape)
    a0, a1, a2 = a.split(1, d)
    b0, b1, b2 = b.split(1, d)
    return Tensor.cat(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0, dim=d)
  @staticmethod
  def einsum(formula: str, *operands: Tensor) -> Tensor:
    """torch.einsum: one subscript letter per dim and operand, '...' for broadcast leading/middle dims, and a letter
    repeated within one operand takes that diagonal ('ii->i'; 'ii->' is the trace). Without '->' the output is '...'
    then the letters used once, sorted."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)): operands = tuple(operands[0])
    f = formula.replace(" ", "")
    lhs, rhs = f.split("->", 1) if "->" in f else (f, None)
    ins = lhs.split(",")
    if len(ins) != len(operands):
      raise ValueError(f"einsum: {formula!r} names {len(ins)} operands, got {len(operands)}")
    for i, c in enumerate(f.replace("->", "  ")):
      if not (c.isascii() and c.isalpha()) and c not in ", .":
        raise ValueError(f"einsum: invalid subscript {c!r} at index {i} of {formula!r}; subscripts must be in [a-zA-Z]")
    def labels(spec: str, ndim: int | None, what: str) -> list[str]:
      """Subscripts -> one label per dim; the dims under '...' get '.k', counted from the right (so they broadcast)."""
      if spec.count("...") > 1 or spec.replace("...", "").count("."):
        raise ValueError(f"einsum: {what} {spec!r} has a '.' that is not part of a single '...'")
      if "..." not in spec:
        if ndim is not None and len(spec) != ndim:
          raise ValueError(f"einsum: {what} {spec!r} has {len(spec)} subscripts for {ndim} dims")
        return list(spec)
      a, b = spec.split("...")
      k = (ndim - len(a) - len(b)) if ndim is not None else n_ell
      if k < 0: raise ValueError(f"einsum: {what} {spec!r} has more subscripts than its {ndim} dims")
      return list(a) + [f".{k - j}" for j in range(k)] + list(b)
    n_ell = 0
    specs = [labels(s, t.ndim, f"operand {i}") for i, (s, t) in enumerate(zip(ins, operands))]
    n_ell = max([int(lb[1:]) for sp in specs for lb in sp if lb[0] == "."], default=0)
    counts: dict[str, int] = {}
    for sp in specs:
      for lb in sp: counts[lb] = counts.get(lb, 0) + 1
    if rhs is None: out_labels = [f".{n_ell - j}" for j in range(n_ell)] + sorted(c for c, n in counts.items()
                                                                                  if n == 1 and c[0] != ".")
    else: out_labels = labels(rhs, None, "output")
    for c in out_labels:
      if c not in counts:
        raise ValueError(f"einsum: output subscript {c!r} in {formula!r} does not appear in the inputs {lhs!r}")
      if out_labels.count(c) > 1:
        raise ValueError(f"einsum: output subscript {c!r} appears more than once in {formula!r}")
    sizes: dict[str, int] = {}
    ts: list[tuple[list[str], Tensor]] = []
    for i, (sp, t) in enumerate(zip(specs, operands)):
      while len(set(sp)) != len(sp):  # a repeated label: keep the diagonal of its first two dims
        c = next(c for c in sp if sp.count(c) > 1)
        p, q = sp.index(c), sp.index(c, sp.index(c) + 1)
        t = Tensor._einsum_diagonal(t, p, q, f"einsum: subscript {c!r} of operand {i}")
        sp = [x for j, x in enumerate(sp) if j not in (p, q)] + [c]
      for c, s in zip(sp, t.shape):
        if sizes.setdefault(c, s) != s and s != 1 and sizes[c] != 1:
          raise ValueError(f"einsum: subscript {c!r} has sizes {sizes[c]} and {s}" if c[0] != "." else
                           f"einsum: the dims under '...' do not broadcast: sizes {sizes[c]} and {s}")
        sizes[c] = max(sizes[c], s)
      ts.append((sp, t))
    letters = list(out_labels) + sorted(set(sizes) - set(out_labels))
    out = None
    red = tuple(range(len(out_labels), len(letters)))
    for sp, t in ts:
      order = [sp.index(c) for c in letters if c in sp]
      x = t.permute(*order) if order else t
      if red and x.dtype in HALF: x = x.float()   # (a contraction of 16-bit operands: exact products, as matmul)
      x = x.reshape(*[sizes[c] if c in sp and t.shape[sp.index(c)] != 1 else 1 for c in letters])
      out = x if out is None else out * x
    out = out.expand(*[sizes[c] for c in letters])  # type: ignore[union-attr]  # ts is not empty: out is set
    if not red: return out
    dt = least_upper_dtype(*[t.dtype for _, t in ts])
    if dt in HALF: return out.sum(red).cast(dt)
    # an int contraction keeps the operands' dtype (torch: its bmm); one operand summed is a sum (int64, as torch)
    return out.sum(red, dtype=dt if len(ts) > 1 and dt.kind in "iu" else None)
  def _einsum_diagonal(self, p: int, q: int, what: str) -> Tensor:
    """The diagonal of dims p < q, as a new last dim: flatten them, pad each row of n by one, keep column 0."""
    n = self.shape[p]
    if self.shape[q] != n: raise ValueError(f"{what} is repeated but its sizes differ: {n} != {self.shape[q]}")
    rest = [i for i in range(self.ndim) if i not in (p, q)]
    x = self.permute(*rest, p, q).reshape(*[self.shape[i] for i in rest], n * n)
    x = x.pad(tuple((0, 0) for _ in rest) + ((0, n),)).reshape(*[self.shape[i] for i in rest], n, n + 1)
    return x.shrink(tuple(None for _ in rest) + (None, (0, 1))).reshape(*[self.shape[i] for i in rest], n)

  # ---- custom kernels
  def custom_kernel(self, *inputs: Tensor, fxn: Callable[..., UOp], grad_fxn: Callable | None = None) -> list[Tensor]:
    """Run a hand-written kernel. `fxn` gets one placeholder UOp per tensor (self, the output buffer, first) and returns
    a SINK; the result is one Tensor per placeholder: that buffer's value after the kernel ran."""
    tensors = [self, *inputs]
    dev = self.device
    for i, t in enumerate(tensors):
      if not isinstance(t, Tensor): raise TypeError(f"custom_kernel: argument {i} is {type(t).__name__}, not a Tensor")
      if t.device != dev:
        raise RuntimeError(f"custom_kernel: argument {i} is on {t.device}, the output on {dev}")
    multi = isinstance(dev, tuple)   # several devices: fxn sees each device's shard; one kernel per device
    su = self.uop
    if multi and not (su.op is Ops.MULTI and all(_plain(s) for s in su.src)):
      raise ValueError("custom_kernel on several devices must be called on a realized output with a buffer on each, "
                       "e.g. Tensor.from_shards([Tensor.zeros(...).contiguous().realize() per device], axis)")
    if not multi and (su.op not in (Ops.BUFFER, Ops.RESHAPE) or su.base.op is not Ops.BUFFER):
      raise ValueError("custom_kernel must be called on a realized, contiguous output tensor, e.g. "
                       "Tensor.zeros(...).contiguous().realize()")
    holders = [UOp.placeholder(i, t.dtype, t.local_shape if multi else t.shape) for i, t in enumerate(tensors)]
    sink = fxn(*holders)
    if not isinstance(sink, UOp) or sink.op is not Ops.SINK:
      raise TypeError("custom_kernel: fxn must return a SINK UOp (x.sink(arg=KernelInfo(...)))")
    sink = implicit_loads(sink)   # `p[i]` used as a value reads the element (tinygrad's dialect)
    written = written_slots(sink)
    # an input is its value before the kernel: one whose memory the kernel also writes through another parameter
    # (x.custom_kernel(x), x.custom_kernel(x.detach())) is copied first, or its reads would see the kernel's writes.
    # Other inputs in memory are read there, through reshapes and detach() too (a 1 GB copy of cross_entropy's logits
    # took longer than its kernel; softmax's backward copied its input to recompute it); the rest are made contiguous.
    wbufs = {tensors[k].uop.base for k in written if k < len(tensors)}
    def arg(i: int, t: Tensor) -> Tensor:
      if i + 1 in written: return t.contiguous()
      if t.uop.base in wbufs: return t.clone()
      return t if _in_memory(t.uop, (Ops.RESHAPE, Ops.DETACH)) else t.contiguous()
    conts = [self] + [arg(i, t) for i, t in enumerate(inputs)]
    srcs = [t.uop for t in conts]
    if not isinstance(sink.arg, KernelInfo): sink = sink.replace(arg=KernelInfo(name="custom", opts_to_apply=()))
    ck = UOp(Ops.CUSTOM_KERNEL, dtypes.void, tuple(srcs),
             (sink, _TensorGradFxn(grad_fxn) if grad_fxn is not None else None))
    rg = any(t.requires_grad for t in inputs)
    outs, origins = [], []
    for i, t in enumerate(conts):
      ko = UOp(Ops.KERNEL_OUT, t.dtype, (ck,), i)
      if i in written and _plain(t.uop):
        # the kernel writes this tensor's memory in place: the tensor (and its views) now name the kernel's result
        b = _root(t)
        b._set_uop(_reapply_views(b._uop, b._uop.base, ko.reshape(b._uop.base.shape)))
        origins.append(b._ref)
        o = Tensor(t)
      else: o = Tensor(ko)
      o._link(tuple(conts))
      if rg and i == 0 and not Tensor._no_grad: o._requires_grad = _root(o)._requires_grad = True
      outs.append(o)
    if origins: _write_origin[ck] = tuple(origins)
    return outs

  # ---- several devices (engine/multi.py): a tensor on a tuple of devices holds one buffer per device
  def shard(self, devices: Sequence[str], axis: int | None = None) -> Tensor:
    """This tensor on several devices: split evenly along `axis` (device i holds part i), or, with axis=None, a whole
    copy on each (replicated). Ops on the result run on every device with the same kernels; `.numpy()` gathers."""
    from teeny.engine.multi import MULTI_MADE, shard_bounds
    devs = Device.canonicalize(tuple(devices) if not isinstance(devices, str) else (devices,))
    ax = None if axis is None else _axis(axis, self.ndim)
    if isinstance(self.device, tuple):
      u = self.uop
      if self.device == devs and u.op is Ops.MULTI and u.arg == ax: return self
      return self.to(self.device[0]).shard(devs, ax)   # reshard through one device
    MULTI_MADE[0] = True
    bounds = shard_bounds(self.shape[ax], len(devs), f" {tuple(self.shape)} on axis {ax}") if ax is not None else None
    parts = []
    for i, d in enumerate(devs):
      x = self if bounds is None else self.shrink(tuple(bounds[i] if k == ax else None for k in range(self.ndim)))
      u = UOp(Ops.CONTIGUOUS, x.dtype, (x.uop,))   # each device's part in memory of its own
      parts.append(u if d == self.device else UOp(Ops.COPY, x.dtype, (u,), d))
    return self._wrap(UOp(Ops.MULTI, self.dtype, tuple(parts), ax))
  def shard_(self, devices: Sequence[str], axis: int | None = None) -> Tensor:
    """In place (for parameters): this tensor now lives on `devices` (see shard), realized; a leaf stays a leaf."""
    with Tensor.no_grad(): m = self.shard(devices, axis).realize()
    self.uop = m.uop
    if self.grad is not None: self.grad = self.grad.shard(devices, axis)
    return self
  @staticmethod
  def from_shards(shards: Sequence[Tensor], axis: int | None = None) -> Tensor:
    """One multi-device tensor made of single-device tensors (one per device, in device order; equal shapes), split
    along `axis` (None: they are copies of one value)."""
    from teeny.engine.multi import MULTI_MADE
    if len({t.shape for t in shards}) != 1 or len({t.dtype for t in shards}) != 1:
      raise ValueError("from_shards: shards must share one shape and dtype, "
                       f"got {[(t.shape, t.dtype) for t in shards]}")
    if any(isinstance(t.device, tuple) for t in shards):
      raise ValueError("from_shards: each shard must be on one device")
    Device.canonicalize(tuple(t.device for t in shards))   # distinct devices
    MULTI_MADE[0] = True
    t = Tensor(UOp(Ops.MULTI, shards[0].dtype, tuple(t.uop for t in shards),
                   None if axis is None else _axis(axis, shards[0].ndim)))
    if any(s.requires_grad for s in shards): t._requires_grad = True
    t._link(tuple(shards))
    return t
  @property
  def local_shape(self) -> tuple:
    """The shape each device holds: the whole shape, divided along the sharded axis."""
    if not isinstance(self.device, tuple) or (ax := self.sharded_axis) is None: return self.shape
    return self.shape[:ax] + (self.shape[ax] // len(self.device),) + self.shape[ax + 1:]
  @property
  def sharded_axis(self) -> int | None:
    """The axis a multi-device tensor is split along (None: replicated, or a single-device tensor)."""
    u = self.uop
    return u.arg if u.op is Ops.MULTI else _multi_axis(u)

  # ---- autograd
  def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
               create_graph: bool = False) -> Tensor:
    """Accumulate d(self)/d(leaf) into `.grad` of every leaf that requires grad. retain_graph is accepted and has no
    effect (teeny keeps the graph: backward may run again). create_graph=True makes each new `.grad` differentiable
    (requires_grad, built from the leaves) for second derivatives, as torch (reading or realizing it keeps its graph).
    Tensor.gradient gives the same without touching `.grad`."""
    from teeny.gradient import compute_gradient
    if not self.requires_grad:
      if self._jit: raise RuntimeError(f"backward(): this tensor was returned by a replay of TinyJit {self._jit}, "
                                       "which runs captured kernels and records no gradient graph; call backward() "
                                       "inside the jitted function (a training step) and return what you need")
      raise RuntimeError("backward(): this tensor does not require grad (it was built from tensors that do not, or "
                         "under no_grad()); create leaves with requires_grad=True and compute it with grad enabled")
    if gradient is None:
      if self.numel() != 1:
        raise RuntimeError(f"backward() on a non-scalar tensor of shape {self.shape} "
                           "needs gradient= (a tensor of the same shape)")
      gradient = Tensor.ones(*self.shape, device=self.device, dtype=self.dtype)
    if gradient.shape != self.shape:
      raise ValueError(f"backward: gradient shape {gradient.shape} must match {self.shape}")
    root = _differentiable(self.uop)
    leaves: dict[UOp, Tensor] = {}
    written: list[tuple[UOp, Tensor]] = []   # pending writes whose version the graph reads, and their tensors
    for u in root.toposort:
      if (r := _leaf_of.get(u)) is not None and (t := r()) is not None and t.requires_grad: leaves[u] = t
      if u.op is Ops.ASSIGN and (rs := _write_origin.get(u)):
        written.extend((u, t) for r in rs if (t := r()) is not None)
    if not leaves:
      raise RuntimeError("backward(): nothing in this graph requires grad (create leaves with requires_grad=True)")
    for i in [i for i, r in _retained.items() if r() is None]: del _retained[i]
    if _retained:   # retain_grad() tensors in this graph get their .grad too
      topo = root.toposort   # (membership is a dict lookup)
      for r in _retained.values():   # (a realized one is found as the graph that computed it, as root has it)
        if (t := r()) is not None and (u := _differentiable(t.uop)) in topo and u not in leaves: leaves[u] = t
    grads = compute_gradient(root, gradient.cast(self.dtype).uop, set(leaves))
    # the gradients read the contents of every tensor this graph read: link them through one hub to the leaves, so a
    # write into any of them (another optimizer's step) first realizes the gradients that still need the old values
    hub = Tensor(root)
    hub._hub = True
    hub._link(tuple({id(t): t for t in leaves.values()}.values()))
    # ... and to the tensors written in place whose earlier version it reads (h[0] = 0; h.relu_(): relu's gradient
    # reads h between the writes), so running a later write (reading the loss) first realizes these gradients
    for u, t in written: t._add_user(hub, u)
    per: dict[int, tuple[Tensor, UOp]] = {}
    for u, t in leaves.items():
      if u not in grads: continue
      g = grads[u].reshape(t.shape) if grads[u].shape != t.shape else grads[u]
      per[id(t)] = (t, g if id(t) not in per else per[id(t)][1] + g)
    for t, g in per.values():
      gt = Tensor(g)
      gt._link((hub,))
      if create_graph and not Tensor._no_grad: gt._requires_grad = True
      for hook in t.__dict__.get("_hooks", ()):
        if (r := hook(gt)) is not None:
          if not isinstance(r, Tensor) or r.shape != t.shape:
            raise RuntimeError(f"register_hook: the hook must return None or a tensor of shape {t.shape}, got {r!r}")
          gt = r
      t.grad = gt if t.grad is None else t.grad + gt
    return self
  def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
    """d(self)/d(target) for each target, without touching `.grad`."""
    from teeny.gradient import compute_gradient
    if gradient is None:
      if self.numel() != 1: raise RuntimeError(f"gradient() on a non-scalar of shape {self.shape} needs gradient=")
      gradient = Tensor.ones(*self.shape, device=self.device, dtype=self.dtype)
    root = _differentiable(self.uop)
    topo = root.toposort
    ids = {id(t) for t in targets}
    nodes: dict[int, list[UOp]] = {id(t): [t.uop] if t.uop in topo else [] for t in targets}
    for u in topo:
      if (r := _leaf_of.get(u)) is not None and (t := r()) is not None and id(t) in ids and u not in nodes[id(t)]:
        nodes[id(t)].append(u)
    grads = compute_gradient(root, gradient.cast(self.dtype).uop, {u for us in nodes.values() for u in us})
    out = []
    for t in targets:
      parts = [grads[u] for u in nodes[id(t)] if u in grads]
      if not parts: out.append(t.zeros_like())
      else:
        g = parts[0]
        for p in parts[1:]: g = g + p
        out.append(Tensor(g.reshape(t.shape) if g.shape != t.shape else g))
    return out

  # last in the class: below these, `float`, `int` and `bool` in annotations would name the methods (mypy)
  def float(self): return self.cast(dtypes.float32)
  def half(self): return self.cast(dtypes.float16)
  def double(self): return self.cast(dtypes.float64)
  def int(self): return self.cast(dtypes.int32)
  def long(self): return self.cast(dtypes.int64)
  def bool(self): return self.cast(dtypes.bool)

def _multi_axis(u: UOp) -> int | None:
  """The sharded axis of a lazy multi-device graph (engine/multi.py's lowering decides it)."""
  if not isinstance(u.device, tuple): return None
  from teeny.engine.multi import lower_multi, Sharded
  x = lower_multi([u])[u]
  return x.axis if isinstance(x, Sharded) else None

def _views_grad(t: Tensor) -> bool:
  """Whether view t's chain of movement ops over its base passes gradients (no DETACH: not a detach() or a view
  taken under no_grad)."""
  u, base = t.uop, t._seen
  while u is not base and u.src:
    if u.op is Ops.DETACH: return False
    u = u.src[0]
  return True

def _drop_links(t: Tensor):
  """A realized tensor needs no path to its sources: tensors built from its lazy graph read its buffer
  (_realized_as)."""
  t._srcs = ()

def _differentiable(root: UOp) -> UOp:
  """root's graph with every realized tensor that required grad swapped back for the graph that computed it (and so on
  below), so gradients flow through realize(): realizing never cuts autograd. One walk; leaves stay leaves."""
  if not _ad_of: return root
  memo: dict[UOp, UOp] = {}
  stack: list[tuple[UOp, bool]] = [(root, False)]
  while stack:
    n, ready = stack.pop()
    if n in memo: continue
    f = _ad_of.get(n) if n not in _leaf_of else None
    if f is not None:
      if f in memo: memo[n] = memo[f]
      else: stack.extend(((n, True), (f, False)))
      continue
    if not ready:
      stack.append((n, True))
      stack.extend((x, False) for x in n.src if x not in memo)
      continue
    new_src = tuple(memo[x] for x in n.src)
    memo[n] = n if all(a is b for a, b in zip(new_src, n.src)) else n.replace(src=new_src)
  return memo[root]

def _give_memory(t: Tensor) -> None:
  """Give t (not a view: a lazy value, or a copy-on-write result still reading its source) memory of its own that
  holds its current value, for a write into part of it: a write of that value into a fresh buffer. The buffer makes
  the memory t's alone: two tensors whose values are one hash-consed node (`r0 = b * 2; r1 = b * 2`, two clones of one
  tensor) are written in separate memories, as a node of their own (CONTIGUOUS(value)) would not be."""
  u = t._uop
  if isinstance(u.device, tuple) or not all(isinstance(s, int) for s in u.shape) or prod(u.shape) == 0:
    # (several devices, symbolic sizes: a node of its own, as before; no elements: nothing to share, and a write of
    # nothing keeps its memory's version, which would then stand for the write that made it)
    t._set_uop(UOp(Ops.CONTIGUOUS, u.dtype, (u,)))
  else:
    if u.op is Ops.CONTIGUOUS: u = u.src[0]   # (a clone: the write into the buffer is its copy)
    buf = _as_shaped(new_buffer_uop(u.device, prod(u.shape), u.dtype), u.shape)
    t._set_uop(_as_shaped(UOp(Ops.ASSIGN, u.dtype, (buf, u)), u.shape))
  t._cow = False

def _reshape_is_view(t: Tensor, shape: tuple) -> bool:
  """Does torch's reshape of the view t give a view: do t's elements, at their strides in its base's storage, have
  strides in the new shape too? (Else torch copies: `x.T.reshape(-1)`, `x[:, 1:].reshape(-1)`.)"""
  root = cast(Tensor, t._base)._uop
  n = u = t.uop
  while n is not root and (n.op is Ops.RESHAPE or n.op is Ops.DETACH): n = n.src[0]
  if n is root: return True   # the whole base, reshaped: contiguous
  st = view_strides(u, root)
  if st is None: return _has_sym(t.shape)   # (symbolic sizes: a view, as before; an element in padding: no strides)
  return reshape_keeps_strides(t.shape, st, shape)

def _through_detach(u: UOp, root: UOp) -> bool:
  """Is the view u (movement ops and DETACHes over root) seen through a detach()?"""
  while u is not root and u.src:
    if u.op is Ops.DETACH: return True
    u = u.src[0]
  return False

def _copy_result(src: Tensor, t: Tensor) -> Tensor:
  """t, a view of src's storage that an op torch copies made (pad, flip, repeat...), as a new tensor: still the same
  lazy graph (no copy kernel: fused into whatever reads it) but copy-on-write (Tensor._cow), never an alias of src."""
  if t is src: t = src._view(src.uop)
  if t._base is None: return t   # (a computation already)
  t.uop   # (brought up to date with its base before it stops following it)
  t._base = t._seen = None
  t._cow = True
  return t

def _check_writable(target: UOp, prev: UOp):
  """A write through a view must give every element its own memory location (torch refuses the same)."""
  n = target
  while n is not prev:
    if n.op is Ops.EXPAND and any(a == 1 and b != 1 for a, b in zip(n.src[0].shape, n.arg)):
      raise RuntimeError(f"cannot write through an expanded view (shape {n.src[0].shape} expanded to {n.arg}): "
                         "several elements would share one memory location; "
                         "write into a .clone() or .contiguous() copy instead")
    if n.op is Ops.WINDOW:
      raise RuntimeError("cannot write through a sliding-window view: windows overlap in memory; write into a .clone()")
    n = n.src[0]

_RESOLVE_OPS = frozenset((Ops.ASSIGN, Ops.KERNEL_OUT))

def _resolve_executed(ts: list[Tensor]) -> tuple[_schedule.Walk, bool]:
  """Swap writes that already ran (ASSIGNs, custom-kernel outputs) in the tensors' graphs for the versions they made,
  and nodes realized before for their memory, in one walk shared by all of them; returns the walk of the (resolved)
  graphs (their nodes, sources first, and what the scheduler's cache needs) and whether any tensor's graph changed."""
  roots = [t._uop for t in ts]
  w = _schedule.walk(roots, _RESOLVE_OPS, _REALIZED_AS)
  if not w.flagged: return w, False
  def ran_as(u: UOp) -> UOp | None:
    """The version a write that already ran made (an ASSIGN, or an output of a custom kernel that ran)."""
    if u.op is Ops.ASSIGN: return _done_writes.get(u)
    if u.op is Ops.KERNEL_OUT and u.src[0] in _ran_custom: return _as_shaped(_ran_custom[u.src[0]][u.arg], u.shape)
    return None
  mapping: dict[UOp, UOp] = {}
  rootset: set[UOp] | None = None
  for n in w.flagged:
    if (n.op is Ops.ASSIGN or n.op is Ops.KERNEL_OUT) and (v := ran_as(n)) is not None: mapping[n] = v
    elif (r := n.__dict__.get(_REALIZED_AS)) is not None and (v := r()) is not None:
      if rootset is None: rootset = set(roots)
      # (a root gets memory of its own; a buffer overwritten since is not the node's value any more)
      if n not in rootset and buffer_for(v.base).version == v.base.arg[3]: mapping[n] = v
  if not mapping: return w, False
  memo: dict[UOp, UOp] = {}
  for n in w.nodes:
    if n in mapping:
      memo[n] = mapping[n]
      continue
    new_src = tuple(memo[x] for x in n.src)
    memo[n] = u = n if all(a is b for a, b in zip(new_src, n.src)) else n.replace(src=new_src)
    if u is n: continue
    # rebuilt over the versions, a later write may be one that already ran in another graph (a realize that resolved
    # it first): that one is its version too, never a second run
    if (v := ran_as(u)) is not None:
      memo[n] = v
      continue
    if u.op is Ops.ASSIGN:
      # when the rebuilt write runs, the original is done too: other graphs (a lazy reader's) still hold it
      _write_alias[u] = _write_alias.get(u, []) + [weakref.ref(n)] + _write_alias.get(n, [])
    if n in _write_origin:
      # a pending write whose graph changed keeps its origin: the tensors it writes are how a realize finds the lazy
      # readers of the contents it overwrites (_pending_readers)
      # (by identity, the live ones: hashing a weakref whose tensor is gone raises "weak object has gone away")
      _write_origin[u] = tuple({id(r): r for r in _write_origin.get(u, ()) + _write_origin[n] if r() is not None}
                               .values())
  changed = False
  for t in ts:
    if (u := memo[t._uop]) is not t._uop:
      t._set_uop(u)
      changed = True
  return _schedule.walk([t._uop for t in ts]), changed

def _pending_readers(todo: list[Tensor], nodes: list[UOp]) -> list[Tensor]:
  """Lazy tensors outside `todo` that read contents a write in this realize overwrites: they are realized in the same
  schedule, before the write, so they keep the values they were built from. Found by walking the links from the
  written tensors to the tensors computed from them (costs what those graphs cost, not what the process holds)."""
  prevs: set[UOp] = set()
  origins: list[Tensor] = []
  for n in nodes:
    if n.op is Ops.ASSIGN and n in _write_origin: prevs.add(n.src[0].base)
    elif n.op is Ops.CUSTOM_KERNEL and n in _write_origin: prevs.update(n.src[k].base for k in written_slots(n.arg[0]))
    else: continue
    origins.extend(o for r in _write_origin[n] if (o := r()) is not None)
  if not origins: return []
  if _write_alias:   # a rebuilt pending write stands for the writes it was rebuilt from (lazy readers hold those)
    for p in list(prevs):
      prevs.update(o for a in _write_alias.get(p, ()) if (o := a()) is not None)
  mine = {id(t) for t in todo}
  out: list[Tensor] = []
  seen = {id(o) for o in origins}
  mine.update(seen)   # a written tensor reads what its write makes, not what it overwrites
  stack = list(origins)
  while stack:
    s = stack.pop()
    for r, tag in (s._users or ()):
      # follow what was built from the overwritten contents, from a lazy value (which may read them below), and every
      # view (an alias: what was built from it read whichever version its base had then)
      if (t := r()) is None or id(t) in seen: continue
      if isinstance(tag, weakref.ref):   # a pending write then: the version it made if it ran; gone: follow
        tag = None if (a := tag()) is None else (d.base if (d := _done_writes.get(a)) is not None else a)
      if not (tag is None or tag in prevs or t._base is not None): continue
      seen.add(id(t))
      stack.append(t)
      del t
      if not _held_outside(r): continue
      tb = _root(stack[-1])
      if id(tb) not in mine and (_lazy(tb._uop) or tb._cow) and not tb._hub:
        if tb._cow:
          # a copy-on-write result still reads the memory this write overwrites: its copy is due now (realized as it
          # is, it would stay a view of that memory)
          tb._set_uop(UOp(Ops.CONTIGUOUS, tb.dtype, (tb._uop,)))
          tb._cow = False
        mine.add(id(tb))
        out.append(tb)
  return out

def _held_outside(r: weakref.ref) -> bool:
  """Is t referenced by anything but the links of other tensors (their _srcs, a view's _base)? A lazy intermediate
  that only later tensors hold (the product inside a matmul) is never read on its own: realizing it would only cost a
  kernel, and the tensors that hold it are found and realized themselves."""
  t = cast(Tensor, r())  # the caller holds it
  inner, counted = 0, set()
  for ur, _ in (t._users or ()):
    # (a user registered twice, `b[...] = r; b[...] = r`, holds t only as often as its _srcs name it: count it once)
    if (u := ur()) is not None and id(u) not in counted:
      counted.add(id(u))
      inner += sum(1 for x in u._srcs if x is t) + (u._base is t)
  # not counted as outside: this frame's `t`, getrefcount's argument, and the caller's walk stack
  return sys.getrefcount(t) - 3 > inner

def _host_zero(v) -> bool:
  """Is divisor v known on the host, without reading any device, to hold a zero: a Python 0 or a constant-0 tensor?"""
  if isinstance(v, Tensor):
    u = v.uop
    while u.op in GroupOp.Movement: u = u.src[0]
    return u.op is Ops.CONST and u.arg == 0 and v.numel() > 0
  return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) and v == 0

def _poly(x: Tensor, coeffs: Sequence[float]) -> Tensor:
  """c0 + c1*x + c2*x**2 + ... by Horner's rule."""
  out = x * coeffs[-1] + coeffs[-2]
  for c in reversed(coeffs[:-2]): out = out * x + c
  return out

def _sign_trick(x: Tensor) -> tuple[Tensor, Tensor]:
  """(s, x * s) with s = -1 where x < 0, else 1: |x| whose derivative is s, 1 at 0 (abs has 0 there), so an odd function
  built as s * f(|x|) differentiates right at 0."""
  s = (x < 0).where(-1.0, 1.0).cast(x.dtype)
  return s, x * s

def _f32(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
  """fn on a float tensor; float16/bfloat16 go through float32 (as torch computes them) and are rounded once at the
  end."""
  x = x._float()
  return fn(x.cast(dtypes.float32)).cast(x.dtype) if x.dtype in HALF else fn(x)

def _sqrt_1mx2(x: Tensor) -> Tensor:
  """sqrt(1 - x*x) for x >= 0 as sqrt(1 - x) * sqrt(1 + x): exact 1 - x near 1, and a gradient of -inf (not nan)
  at 1."""
  return (1 - x).sqrt() * (1 + x).sqrt()

def _atan_unit(r: Tensor) -> Tensor:
  """atan(r) for r in [0, 1]: two halvings t -> t / (1 + sqrt(1 + t*t)) (atan(r) = 4 atan(t)) bring t below
  tan(pi/16) ~ 0.2, where the odd Taylor series t - t**3/3 + t**5/5 - ... reaches float32 (5 terms) or float64 (12)."""
  t = r
  for _ in range(2): t = t / ((t * t + 1).sqrt() + 1)
  n = 12 if r.dtype == dtypes.float64 else 5
  return (_poly(t * t, [(-1) ** k / (2 * k + 1) for k in range(n)]) * t) * 4

def _atan2_pos(num: Tensor, den: Tensor) -> Tensor:
  """atan2(num, den) for num, den >= 0: atan of the ratio no larger than 1, reflected about pi/4 (no division
  overflows; atan2(0, 0) = 0; nan stays nan)."""
  swap = num > den
  lo, hi = swap.where(den, num), swap.where(num, den)
  a = _atan_unit(lo / (hi == 0).where(1.0, hi))
  return swap.where(math.pi / 2 - a, a)

_FACTORY_KW = ("requires_grad", "dtype", "device")
def _factory_kw(fn: str, shape: tuple | None, kw: dict, allowed: tuple[str, ...] = ("requires_grad",)) -> tuple:
  """The keywords a creation function takes besides its named ones: `requires_grad`, and where it takes a shape
  (shape not None) torch's `size=` for it (popped from kw and returned as the shape). Any other keyword is a TypeError
  naming it: never silently ignored."""
  if shape is not None and "size" in kw:
    if shape: raise TypeError(f"{fn}: pass the shape either positionally or as size=, not both")
    size = kw.pop("size")
    shape = (size,) if is_int(size) else tuple(size)
  if bad := sorted(set(kw) - set(allowed)):
    takes = (("size",) if shape is not None else ()) + allowed
    raise TypeError(f"{fn}: unexpected keyword argument{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))} "
                    f"(besides its own it takes {', '.join(takes)})")
  return shape or ()

def _shape_arg(shape: tuple, allow_neg: bool = False) -> tuple[int, ...]:
  if len(shape) == 1 and isinstance(shape[0], (tuple, list)): shape = tuple(shape[0])
  out: list[Any] = []  # ints, and UOps for symbolic dims
  for s in shape:
    if isinstance(s, UOp):
      out.append(_sym_dim(s))
      continue
    if not is_int(s):
      raise TypeError(f"shape entries must be ints, got {shape}")
    if s < 0 and not (allow_neg and s == -1): raise ShapeError(f"negative dimension {s} in shape {shape}")
    out.append(int(s))
  return tuple(out)

def _arange_int_of_floats(start, stop, step, dt: DType, device, kw) -> Tensor:
  """arange with float arguments and an int dtype, as torch makes it: start and step truncate toward zero; the length
  is ceil((stop - start) / step) of the float arguments, except for 64-bit ints, where torch truncates stop as well
  and a step truncated to 0 is an error (for the others it repeats start)."""
  for name, v in (("start", start), ("end", stop), ("step", step)):
    if not math.isfinite(v): raise ValueError(f"arange: {name} must be finite, got {v}")
  s0, st = math.trunc(start), math.trunc(step)
  if dt.itemsize == 8:
    if st == 0: raise ValueError(f"arange: step {step} truncates to 0 for {dt.name}; pass an integer step")
    n = max(0, -(-(math.trunc(stop) - s0) // st))
  else: n = max(0, math.ceil((stop - start) / step))
  out = (Tensor.arange(n, device=device, dtype=dtypes.int64) * st + s0).cast(dt)
  out.requires_grad = kw.get("requires_grad")
  return out

def _random_float_dtype(fn: str, dtype) -> DType:
  dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
  if dt.kind != "f":
    raise RuntimeError(f"{fn} makes floating point numbers, not {dt}; pass a float dtype (or use randint for integers)")
  return dt

def _hash32_py(x: int) -> int:
  x &= 0xFFFFFFFF
  x ^= x >> 16
  x = (x * 0x7FEB352D) & 0xFFFFFFFF
  x ^= x >> 15
  x = (x * 0x846CA68B) & 0xFFFFFFFF
  x ^= x >> 16
  return x

def _hash32(x: Tensor) -> Tensor:
  """lowbias32 integer hash on uint32 tensors (the same mixing as _hash32_py)."""
  x = x ^ (x >> 16)
  x = x * 0x7FEB352D
  x = x ^ (x >> 15)
  x = x * 0x846CA68B
  return x ^ (x >> 16)

def _nested_shape(data) -> tuple[int, ...]:
  if isinstance(data, (list, tuple)):
    if len(data) == 0: return (0,)
    shapes = [_nested_shape(d) for d in data]
    if any(s != shapes[0] for s in shapes):
      raise ValueError(f"ragged nested sequence: sub-shapes {sorted(set(shapes))} differ")
    return (len(data),) + shapes[0]
  return ()

def _exact_ints(data, shape: tuple, dtype: DType) -> np.ndarray:
  """A nested list for an int dtype that numpy made floats or objects of (ints past 2**53 or 2**63, or ints mixed with
  floats): each element converted on its own, as torch does: ints exactly, floats truncated toward zero, each checked
  to fit dtype."""
  vals = []
  for v in np.array(data, dtype=object).ravel():
    if isinstance(v, (float, np.floating)):
      if not math.isfinite(v): raise ValueError("cannot convert non-finite floats to an integer tensor")
      v = math.trunc(float(v))
    check_scalar_fits(int(v), dtype)
    vals.append(int(v) & ((1 << 8 * dtype.itemsize) - 1) if dtype.kind == "u" else int(v))
  return np.array(vals, dtype=dtype.np).reshape(shape)

def _unpickle_tensor(arr: np.ndarray, dtype: str, device: str, requires_grad: bool | None) -> Tensor:
  dt = to_dtype(dtype)
  t = Tensor(arr, device=device).bitcast(dt) if dt == dtypes.bfloat16 else Tensor(arr, device=device, dtype=dt)
  if requires_grad: t.requires_grad = True
  return t

def _from_host(data: Any, device: str, dtype: DType | None) -> UOp:
  if isinstance(device, tuple): return Tensor(data, device[0], dtype).shard(device).uop   # several devices: replicated
  if isinstance(data, range): data = list(data)
  if isinstance(data, (list, tuple)):
    _nested_shape(data)
    arr = np.array(data)
    if dtype is None:
      if arr.dtype == np.bool_: dtype = dtypes.bool
      elif arr.dtype.kind in "iu":  # the default int, or int64 for values it cannot hold (as numpy and torch do)
        dtype = dtypes.int_for_range(int(arr.min()), int(arr.max())) if arr.size else dtypes.default_int
      elif arr.dtype.kind == "f":
        # numpy turns ints it has no one dtype for ([2**63, -1]) into float64: an error, as in torch
        if arr.size and np.abs(arr).max() >= 2.0 ** 63:
          objs = np.array(data, dtype=object).ravel()
          if all(isinstance(v, (int, np.integer)) for v in objs):
            raise OverflowError(f"integers in [{min(objs)}, {max(objs)}] fit no single integer dtype (int64 or "
                                "uint64); pass dtype=dtypes.uint64 for values in 0..2**64-1")
        dtype = dtypes.default_float
      elif arr.size == 0: dtype = dtypes.default_float
      elif arr.dtype == object and all(isinstance(v, (int, np.integer)) for v in arr.reshape(-1)):
        dtypes.int_for_range(int(arr.min()), int(arr.max()))  # ints beyond int64: numpy made objects; raises
        raise OverflowError(f"integers in [{arr.min()}, {arr.max()}] fit no single integer dtype")
      else: raise TypeError(f"cannot make a tensor from a sequence of {arr.dtype}")
    elif dtype.kind in "iu" and arr.dtype.kind in "iu" and arr.size:   # Tensor([300], dtype=int8) raises, as in torch
      for v in (arr.min(), arr.max()): check_scalar_fits(int(v), dtype)
    elif dtype.kind in "iu" and arr.dtype.kind in "fO" and arr.size: arr = _exact_ints(data, arr.shape, dtype)
  elif isinstance(data, np.ndarray):
    arr = data
    if dtype is None: dtype = dtypes.from_np(arr.dtype)
  elif isinstance(data, (bytes, bytearray, memoryview)):
    arr = np.frombuffer(bytes(data), dtype=np.uint8)
    dtype = dtype or dtypes.uint8
  else:
    try: import torch
    except ImportError: torch = None  # type: ignore[assignment]  # torch is optional
    if torch is not None and isinstance(data, torch.Tensor):
      t = data.detach().cpu()
      if t.dtype == torch.bfloat16:   # numpy has no bfloat16: its bits, widened exactly to float32
        bits = t.contiguous().view(torch.int16).numpy().view(np.uint16)
        return _from_host(bf16_bits_to_float32(bits), device, dtype or dtypes.bfloat16)
      return _from_host(t.numpy(), device, dtype)
    raise TypeError(f"cannot make a Tensor from {type(data).__name__}; pass a list, tuple, numpy array or scalar")
  shape = arr.shape
  if dtype == dtypes.bfloat16: host = float32_to_bf16_bits(arr.astype(np.float32))
  else:
    if arr.dtype.kind == "f" and dtype.kind in "iu" and arr.size and not np.all(np.isfinite(arr)):
      raise ValueError("cannot convert non-finite floats to an integer tensor")
    host = np.ascontiguousarray(arr.astype(dtype.np, copy=False))
  buf = new_buffer_uop(device, int(np.prod(shape, dtype=np.int64)), dtype)
  if host.size: buffer_for(buf).copyin(host.reshape(-1).data.cast("B"))
  from teeny.engine import realize
  if realize.recorder is not None: realize.recorder.host_copy(buf, host)   # TinyJit: data made on the host in a step
  return buf.reshape(shape) if len(shape) != 1 else buf

# ---- symbolic shapes: a dimension may be a bound Variable (uop/symbolic.py) or an index expression over them. These
# paths run only when a shape or an argument holds one; every other op keeps its int-only checks.
def _matmul_body(x: Tensor, w: Tensor) -> Tensor | None:
  """x @ w for x and w of 2 or more dims and one dtype, built on UOps and wrapped in one Tensor: the same graph
  Tensor.matmul's Tensor ops build (reshapes, broadcasts, transpose, multiply, sum; a test holds that they are the
  same node), for a fraction of the host time; without gradients, one CALL node of that graph (its body built once per
  shapes and dtype). None where that graph would differ (mixed dtypes, several devices, symbolic sizes, no-grad mode
  on a tensor that wants gradients, a tiny output that sum splits in two)."""
  xu, wu = x.uop, w.uop
  if type(xu.device) is not str or type(wu.device) is not str: return None
  rg = x.requires_grad or w.requires_grad
  if rg and Tensor._no_grad: return None
  u = _matmul_graph(xu, wu) if rg else call_of("matmul", (xu.shape, wu.shape, xu.dtype, wu.dtype), (xu, wu),
                                                _matmul_graph, xu, wu)
  if u is None: return None
  t = x._wrap(u, w, rg=rg)
  if t.dtype.kind != "f": t._requires_grad = None
  return t

def _matmul_graph(xu: UOp, wu: UOp) -> UOp | None:
  """_matmul_body's graph on UOps (None where it has none)."""
  if xu.dtype is not wu.dtype: return None
  dt = xu.dtype
  xsh, wsh = xu.shape, wu.shape
  if UOp in map(type, xsh + wsh): return None   # (a symbolic size)
  batch = _broadcast_shape(xsh[:-2], wsh[:-2]) if len(xsh) > 2 or len(wsh) > 2 else ()
  n, k, m = xsh[-2], xsh[-1], wsh[-1]
  if k >= 1 << 15 and prod(batch) * n * m <= 16: return None
  full = (*batch, n, m, k)
  def bcast(u: UOp) -> UOp:
    if u.shape == full: return u
    if len(u.shape) < len(full): u = u.reshape((1,) * (len(full) - len(u.shape)) + u.shape)
    return u.expand(full) if u.shape != full else u
  nd = len(wsh)
  order = tuple(range(nd - 2)) + (nd - 1, nd - 2)
  a = bcast(widen(xu).reshape((*xsh[:-1], 1, k)))
  b = bcast(widen(wu).permute(order).reshape((*wsh[:-2], 1, m, k)))
  return dot_uop(a, b, (len(full) - 1,), dt, dt)

TILE_ALIGN_MIN_WORK = 1 << 24   # multiply-adds from which an unaligned matmul's operands are copied aligned

def _tile_aligned(x: Tensor, w: Tensor, tiles: bool | None = None) -> tuple[Tensor, Tensor]:
  """x @ w's operands as the GPU's block tiles want them. Those tiles (codegen/tc.py: tensor cores, float32 SMEM)
  copy rows of 16 bytes into shared memory asynchronously; a row that may start unaligned (k, or B's n, not a
  multiple of 16 bytes: 4095^3) is copied with element loads instead, at a fraction of the speed. There (and for
  matmuls of at least TILE_ALIGN_MIN_WORK multiply-adds) A is copied padded with zeros along k to a multiple of 16
  bytes, and B transposed to [n][k] and padded the same: the sum gains only zeros, and the kernel's copies are the
  fast ones. Elsewhere the operands are returned as they are. (tiles: whether the device has such tiles, asked of its
  renderer unless given.)"""
  xu, wu = x.uop, w.uop
  dt, xsh, wsh = xu.dtype, xu.shape, wu.shape
  k, n = xsh[-1], wsh[-1]
  vec = 16 // dt.itemsize
  if type(k) is int and type(n) is int and k % vec == 0 and n % vec == 0: return x, w   # (aligned: the usual case)
  if wu.dtype != dt or not isinstance(xu.device, str) or xu.device != wu.device: return x, w
  if any(not isinstance(v, int) for v in xsh + wsh): return x, w
  if k % vec == 0 and n % vec == 0: return x, w
  if prod(_broadcast_shape(x.shape[:-2], w.shape[:-2])) * x.shape[-2] * n * k < TILE_ALIGN_MIN_WORK: return x, w
  if tiles is None:
    from teeny.codegen.tc import tiles_for
    tiles = tiles_for(Device[x.device].renderer, dt)
  if not tiles: return x, w
  pad = (-k) % vec
  if pad: x = x.pad(((0, 0),) * (x.ndim - 1) + ((0, pad),)).contiguous()
  wt = w.transpose(-1, -2)
  w = (wt.pad(((0, 0),) * (w.ndim - 1) + ((0, pad),)) if pad else wt).contiguous().transpose(-1, -2)
  return x, w

def _has_sym(*xs) -> bool:
  for x in xs:
    if isinstance(x, UOp): return True
    if isinstance(x, (tuple, list)) and _has_sym(*x): return True
  return False

def _sym_dim(s: UOp) -> UOp:
  if s.dtype != dtypes.index or s.op not in (Ops.DEFINE_VAR, Ops.BIND) and s.op not in GroupOp.ALU:
    raise TypeError("a symbolic dimension must be a Variable (bound with .bind(value)) "
                    f"or an expression of them, not {s.op}")
  from teeny.uop.symbolic import ssimplify
  return ssimplify(s)

def _sym_equal(a, b) -> bool:
  """Are two sints equal for every value of their variables (as far as simplification can tell)?"""
  from teeny.uop.symbolic import ssimplify
  if a is b: return True
  if not isinstance(a, UOp) and not isinstance(b, UOp): return a == b
  ua = a if isinstance(a, UOp) else UOp.const(dtypes.index, a)
  return ssimplify(ua - b) == 0 if not isinstance(ssimplify(ua - b), UOp) else False

def _sym_reshape(t: Tensor, shape: tuple) -> Tensor:
  from teeny.uop.symbolic import sprod, sstr
  if -1 in shape:
    raise ShapeError(f"reshape to {tuple(sstr(s) for s in shape)}: "
                     "-1 with a symbolic dimension is not supported; give every size")
  if not _sym_equal(sprod(shape), t.numel()):
    raise ShapeError(f"cannot reshape tensor of shape {tuple(sstr(s) for s in t.shape)} into "
                     f"{tuple(sstr(s) for s in shape)}")
  return t if shape == t.shape else t._view(t.uop.reshape(shape))

def _sym_check_range(what: str, lo, hi, size, dim: int):
  """lo <= hi <= size at the bound values, and for every value the variables may take (a kernel compiled for the
  variable runs with every later value: it must never address past the buffer)."""
  from teeny.uop.symbolic import sym_val, sym_max, sstr
  try: b, e, s = sym_val(lo), sym_val(hi), sym_val(size)
  except RuntimeError: b, e, s = sym_max(lo), sym_max(hi), sym_max(size)  # unbound: checked at the widest range
  if not 0 <= b <= e <= s:
    raise ValueError(f"{what} ({sstr(lo)}, {sstr(hi)}) is out of bounds for dim {dim} of size {sstr(size)} "
                     f"(values {b}, {e}, {s})")
  if isinstance(size, int) and sym_max(hi) > size:
    raise ValueError(f"{what} ({sstr(lo)}, {sstr(hi)}) of dim {dim} (size {size}) can reach {sym_max(hi)} for the "
                     f"variables' ranges; make the Variable's upper bound small enough that it stays inside the dim")

def _sym_shrink(t: Tensor, arg) -> Tensor:
  arg = tuple((0, s) if a is None else tuple(_sym_dim(x) if isinstance(x, UOp) else int(x) for x in a)
              for a, s in zip(arg, t.shape))
  for d, ((b, e), s) in enumerate(zip(arg, t.shape)): _sym_check_range("shrink", b, e, s, d)
  return t._view(t.uop.shrink(arg))

def _sym_pad(t: Tensor, padding, value) -> Tensor:
  padding = tuple(padding)
  if len(padding) == 2 * t.ndim and not any(isinstance(p, (tuple, list)) or p is None for p in padding):
    pairs: list[tuple] = [(padding[2 * (t.ndim - 1 - d)], padding[2 * (t.ndim - 1 - d) + 1]) for d in range(t.ndim)]
  elif len(padding) == t.ndim: pairs = [(0, 0) if p is None else (p[0], p[1]) for p in padding]
  else: raise ValueError("pad with a symbolic amount needs the flat form for every dim or one (before, after) pair "
                         f"per dim ({t.ndim})")
  pairs = [tuple(_sym_dim(x) if isinstance(x, UOp) else int(x) for x in p) for p in pairs]
  if any(not isinstance(x, UOp) and x < 0 for p in pairs for x in p):
    raise ValueError("pad with a symbolic dimension does not support negative (cropping) amounts; shrink first")
  out = t._view(t.uop.pad(tuple(pairs)))
  if value is None or value == 0: return out
  mask = Tensor(UOp.const(dtypes.bool, True, t.device)).reshape((1,) * t.ndim).expand(t.shape)
  return Tensor(mask.uop.pad(tuple(pairs))).where(out, out._const(value)._broadcast_to(out.shape))

def _sym_arange(start, stop, step, dtype, device, kw) -> Tensor:
  if stop is None: start, stop = 0, start
  if step != 1 or isinstance(step, UOp): raise ValueError("arange with a symbolic bound needs step 1")
  from teeny.uop.symbolic import ssimplify, sym_max
  start = _sym_dim(start) if isinstance(start, UOp) else int(start)
  stop = _sym_dim(stop) if isinstance(stop, UOp) else int(stop)
  n = ssimplify((stop if isinstance(stop, UOp) else UOp.const(dtypes.index, stop)) - start)
  dt = to_dtype(dtype) if dtype else dtypes.int_for_range(0, max(sym_max(stop), 1))
  idx = Tensor(UOp(Ops.ARANGE, dt, (), (n, Device.canonicalize(device))))
  out = idx + start if isinstance(start, UOp) or start != 0 else idx
  out = out.cast(dt)
  out.requires_grad = kw.get("requires_grad")
  return out

def _sym_empty(shape, dt, device, kw) -> Tensor:
  """A buffer for a symbolic shape holds the largest size its variables allow (so a kernel compiled once is correct
  for every value), viewed at the bound size."""
  from teeny.uop.symbolic import sprod, sym_max
  n = sprod(shape)
  buf = new_buffer_uop(Device.canonicalize(device), sym_max(n), dt)
  return Tensor(buf.shrink(((0, n),)).reshape(shape), **kw)

def _sym_getitem(t: Tensor, indices) -> Tensor:
  """Basic slicing where a bound is symbolic (`x[:, :n]`, `cache[:, p:p+1]`): ints, full slices and step-1 slices."""
  idx = indices if isinstance(indices, tuple) else (indices,)
  if Ellipsis in idx:
    k = idx.index(Ellipsis)
    idx = idx[:k] + (slice(None),) * (t.ndim - len(idx) + 1) + idx[k + 1:]
  if len(idx) > t.ndim: raise IndexError(f"too many indices for a tensor of dimension {t.ndim}")
  shrink, drop = [], []
  for d, (i, s) in enumerate(zip(idx + (slice(None),) * (t.ndim - len(idx)), t.shape)):
    if isinstance(i, slice):
      if i.step not in (None, 1): raise IndexError("slicing with a symbolic bound supports step 1 only")
      b = 0 if i.start is None else i.start
      e = s if i.stop is None else i.stop
      if any(not isinstance(x, UOp) and x < 0 for x in (b, e)):
        raise IndexError("slicing with a symbolic bound does not support negative positions; write them from the start")
      shrink.append((b, e))
    elif isinstance(i, (int, UOp)):
      if not isinstance(i, UOp) and i < 0: raise IndexError("an index beside a symbolic slice must not be negative")
      shrink.append((i, i + 1))
      drop.append(d)
    else: raise IndexError(f"indexing with {type(i).__name__} beside a symbolic slice, or into a tensor of symbolic "
                           "shape, is not supported (ints and step-1 slices are); "
                           "index a tensor of concrete shape first")
  x = t.shrink(tuple(shrink))
  return x.reshape(tuple(sz for d, sz in enumerate(x.shape) if d not in drop)) if drop else x

@dataclasses.dataclass(frozen=True)
class _TensorGradFxn:
  """A custom kernel's grad_fxn as gradient.py calls it (with UOps), giving the user's function Tensors. Frozen, so two
  kernels with the same grad_fxn compare equal and a repeated step's graph (and schedule) stays the same."""
  fxn: Callable
  def __call__(self, g: UOp, *inputs: UOp): return self.fxn(Tensor(g), *[Tensor(u) for u in inputs])
