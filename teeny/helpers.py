"""Small shared utilities: env switches, contexts, counters, cache dir. Imports nothing of teeny."""
from __future__ import annotations
import contextlib, math, os
from typing import TYPE_CHECKING, Any, Iterable, TypeVar
import numpy as np

T = TypeVar("T")

def getenv(key: str, default: Any = 0) -> Any:
  """Read an env var, converted to the type of `default`."""
  val = os.environ.get(key)
  if val is None or (val.strip() == "" and not isinstance(default, str)): return default
  if isinstance(default, bool): return val not in ("", "0", "false", "False")
  try: return type(default)(val)
  except ValueError:
    kind = "an int" if isinstance(default, int) else f"a {type(default).__name__}"
    raise ValueError(f"environment variable {key}={val!r} must be {kind} (unset it for the default, "
                     f"{default!r})") from None

class _Auto:
  """A member to be: `NAME = auto()` in a FastEnum body."""

class _FastEnumType(type):
  """The metaclass of FastEnum: turns each `NAME = auto()` of the class body into a member (an instance of the class
  with .name and .value, its own repr, picklable by name); `Cls[name]`, `for m in Cls`, `len(Cls)`, `m in Cls` work as
  with enum.Enum. Members are plain class attributes: Python 3.11's EnumType defines __getattr__, which puts every
  `Ops.ADD` read through a slow lookup hook (about 6% of a small training step's interpreter time)."""
  _members_: dict[str, Any]
  def __new__(mcs, name: str, bases: tuple, ns: dict):
    names = [k for k, v in ns.items() if isinstance(v, _Auto)]
    for k in names: del ns[k]
    cls = super().__new__(mcs, name, bases, ns)
    members: dict[str, Any] = {}
    for i, k in enumerate(names, 1):
      m: Any = object.__new__(cls)  # type: ignore[arg-type]  # cls is a class of this metaclass
      m.name, m.value = k, i
      members[k] = m
      type.__setattr__(cls, k, m)
    cls._members_ = members
    return cls
  def __setattr__(cls, k, v):
    if k in cls.__dict__.get("_members_", {}): raise AttributeError(f"cannot reassign member {cls.__name__}.{k}")
    super().__setattr__(k, v)
  def __iter__(cls): return iter(cls._members_.values())
  def __len__(cls) -> int: return len(cls._members_)
  def __contains__(cls, m) -> bool: return isinstance(m, cls)
  def __getitem__(cls, name: str):
    try: return cls._members_[name]
    except KeyError: raise KeyError(f"{cls.__name__} has no member {name!r}") from None

class _FastEnumBase(metaclass=_FastEnumType):
  __slots__ = ("name", "value")
  name: str
  value: int
  def __repr__(self) -> str: return f"{type(self).__name__}.{self.name}"
  __str__ = __repr__
  def __reduce__(self): return getattr, (type(self), self.name)
  def __copy__(self): return self
  def __deepcopy__(self, memo): return self

if TYPE_CHECKING:   # type checkers know enum.Enum's members; at run time the fast class above stands in for it
  from enum import Enum as FastEnum, auto
else:
  FastEnum = _FastEnumBase
  def auto() -> Any: return _Auto()

def prod(xs: Iterable[Any], start: Any = 1) -> Any:
  return math.prod(xs, start=start)   # (left to right with `*`, as a reduce would: sints multiply as UOps)

def argsort(xs: list) -> list[int]: return sorted(range(len(xs)), key=xs.__getitem__)
def flatten(xss: Iterable[Iterable[T]]) -> list[T]: return [x for xs in xss for x in xs]
def ceildiv(a: int, b: int) -> int: return -(-a // b)
def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  """The shape that `shapes` broadcast to (numpy's rules), else ValueError naming them."""
  nd = max(len(s) for s in shapes)
  padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
  out = []
  for dims in zip(*padded):
    non1 = {d for d in dims if d != 1}
    if len(non1) > 1:
      raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together")
    out.append(non1.pop() if non1 else 1)
  return tuple(out)

def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
  """Can a value of `shape` be broadcast to exactly `target` (what an in-place write needs)?"""
  try: return broadcast_shape(shape, target) == tuple(target)
  except ValueError: return False

def colored(s: str, color: str | None = None) -> str:
  codes = {"red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36, "white": 37}
  return f"\033[{codes[color]}m{s}\033[0m" if color and os.isatty(1) else s

class ContextVar:
  """A global switch read from the environment once, overridable with `Context(NAME=value)`."""
  _cache: dict[str, ContextVar] = {}
  def __init__(self, key: str, default: int):
    self.key, self.value = key, getenv(key, default)
    ContextVar._cache[key] = self
  def __bool__(self) -> bool: return bool(self.value)
  def __ge__(self, x: int) -> bool: return self.value >= x
  def __gt__(self, x: int) -> bool: return self.value > x
  def __lt__(self, x: int) -> bool: return self.value < x
  def __le__(self, x: int) -> bool: return self.value <= x
  def __eq__(self, x: object) -> bool: return self.value == x
  def __hash__(self) -> int: return hash(self.key)
  def __int__(self) -> int: return int(self.value)
  def __repr__(self) -> str: return f"ContextVar({self.key}={self.value})"

class Context(contextlib.ContextDecorator):
  """`with Context(DEBUG=4): ...` sets switches for a block and restores them after."""
  def __init__(self, **kwargs: int): self.kwargs, self.old = kwargs, dict[str, int]()
  def __enter__(self):
    for k, v in self.kwargs.items():
      if k not in ContextVar._cache: raise KeyError(f"unknown switch {k!r}; known: {sorted(ContextVar._cache)}")
      self.old[k], ContextVar._cache[k].value = ContextVar._cache[k].value, v
    return self
  def __exit__(self, *exc):
    for k, v in self.old.items(): ContextVar._cache[k].value = v

DEBUG, CACHELEVEL = ContextVar("DEBUG", 0), ContextVar("CACHELEVEL", 2)
NOOPT, BEAM = ContextVar("NOOPT", 0), ContextVar("BEAM", 0)
JIT, CPU_THREADS = ContextVar("JIT", 1), ContextVar("CPU_THREADS", 0)
CUSTOM_KERNELS = ContextVar("TEENY_CUSTOM_KERNELS", 1)
# float32 matmuls on TF32 tensor cores (a 10-bit mantissa, float32 range and sum), off by default: exact float32.
# Tensor.allow_tf32 = True (PyTorch's switch is torch.backends.cuda.matmul.allow_tf32) or TF32=1
TF32 = ContextVar("TF32", 0)
# range checks of tensor indices that need a device read: -1 (default) on the CPU only, 1 on every device, 0 off
CHECK_INDICES = ContextVar("TEENY_CHECK_INDICES", -1)

class GlobalCounters:
  """Totals since the last reset(): kernels launched, flops, bytes moved, kernel seconds, programs compiled (misses of
  the in-memory program cache: a kernel over a symbolic size compiles once for all its values)."""
  kernel_count: int = 0
  compile_count: int = 0
  global_ops: int = 0
  global_mem: int = 0
  time_sum_s: float = 0.0
  @staticmethod
  def reset():
    GlobalCounters.kernel_count, GlobalCounters.global_ops = 0, 0
    GlobalCounters.global_mem, GlobalCounters.time_sum_s = 0, 0.0
    GlobalCounters.compile_count = 0

def cache_dir() -> str:
  d = os.environ.get("TEENY_CACHE_DIR") or \
    os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "teeny")
  os.makedirs(d, exist_ok=True)
  return d


def is_int(v) -> bool:
  """A Python or numpy integer, not a bool: what an int argument (a dim, a size, a count) may be."""
  return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
