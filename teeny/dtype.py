"""DTypes, PyTorch-style promotion, numpy interop. float32 is the default float, int32 the default int."""
from __future__ import annotations
from dataclasses import dataclass
import builtins, math
import numpy as np

@dataclass(frozen=True, eq=True)
class DType:
  """A dtype is interned: making one with the fields of an existing one returns that object (pickling and copying
  too), so equal dtypes are one object and compare and hash by identity, at C speed (every UOp's hash-cons key holds
  one: a Python-level __hash__ ran several times per node made)."""
  name: str
  itemsize: int
  kind: str          # 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'v' void
  np_name: str | None
  def __new__(cls, *args, **kwargs):
    names = list(cls.__dataclass_fields__)
    vals = args + tuple(kwargs[f] if f in kwargs else cls.__dataclass_fields__[f].default for f in names[len(args):])
    if len(vals) != len(names) or any(k not in names for k in kwargs):
      raise TypeError(f"{cls.__name__} takes the fields {names}, got {args} {kwargs}")
    if (d := _INTERNED.get(key := (cls, vals))) is None: d = _INTERNED[key] = object.__new__(cls)
    return d   # (the dataclass __init__ then sets the same field values again)
  # identity, exact because of the interning above (explicit: the dataclass keeps them)
  __eq__ = object.__eq__
  __hash__ = object.__hash__
  def __reduce__(self): return type(self), tuple(getattr(self, f) for f in self.__dataclass_fields__)
  def __repr__(self): return f"dtypes.{self.name}"
  def ptr(self) -> PtrDType:
    # kept on the dtype (placeholders and kernels ask for it on every custom kernel call)
    try: return self.__dict__["_ptr"]
    except KeyError:
      p = PtrDType(self.name, self.itemsize, self.kind, self.np_name, self)
      object.__setattr__(self, "_ptr", p)
      return p
  @property
  def np(self):
    if self.np_name is None: raise TypeError(f"{self} has no numpy equivalent")
    return np.dtype(self.np_name)
  @property
  def bits(self) -> int: return self.itemsize * 8
  @property
  def base(self) -> DType:
    """The element dtype of a pointer (PtrDType's field); a scalar dtype has none: reading it raises, as always."""
    raise AttributeError(f"{self} is not a pointer dtype: it has no base")

@dataclass(frozen=True, eq=False)   # (eq=False: DType's identity __eq__ and __hash__ stay)
class PtrDType(DType):
  base: DType = None  # type: ignore[assignment]  # a dataclass default; ptr() always passes a base
  def __repr__(self): return f"{self.base!r}.ptr()"

_INTERNED: dict[tuple, DType] = {}

class dtypes:
  void = DType("void", 0, "v", None)
  bool = DType("bool", 1, "b", "bool")
  int8, int16, int32, int64 = (DType(f"int{b}", b // 8, "i", f"int{b}") for b in (8, 16, 32, 64))
  uint8, uint16, uint32, uint64 = (DType(f"uint{b}", b // 8, "u", f"uint{b}") for b in (8, 16, 32, 64))
  float16 = DType("float16", 2, "f", "float16")
  bfloat16 = DType("bfloat16", 2, "f", None)     # stored as uint16 bits on the host
  float32 = DType("float32", 4, "f", "float32")
  float64 = DType("float64", 8, "f", "float64")
  half, float, double, int, long, uchar = float16, float32, float64, int32, int64, uint8
  default_float: DType = float32
  default_int: DType = int32
  index = int32  # dtype of index arithmetic inside kernels
  weakint = int32  # the same, by tinygrad's name (custom kernels written in its dialect)

  @staticmethod
  def is_float(d: DType) -> builtins.bool: return d.kind == "f"
  @staticmethod
  def is_int(d: DType) -> builtins.bool: return d.kind in "iu"
  @staticmethod
  def is_unsigned(d: DType) -> builtins.bool: return d.kind == "u"
  @staticmethod
  def is_bool(d: DType) -> builtins.bool: return d.kind == "b"
  @staticmethod
  def all() -> list[DType]: return list(ALL_DTYPES)
  @staticmethod
  def from_py(x) -> DType:
    if isinstance(x, (bool, np.bool_)): return dtypes.bool
    if isinstance(x, np.integer): return dtypes.default_int
    if isinstance(x, int): return dtypes.int_for_range(x, x)
    if isinstance(x, (float, np.floating)): return dtypes.default_float
    raise TypeError(f"cannot infer a dtype from {type(x).__name__} value {x!r}")
  @staticmethod
  def int_for_range(lo: builtins.int, hi: builtins.int) -> DType:
    """The dtype of Python ints in [lo, hi] (as numpy and torch pick it): the default int, else int64 when they do
    not fit it; beyond int64 is an error rather than a silent wrap."""
    if dtypes.min(dtypes.default_int) <= lo and hi <= dtypes.max(dtypes.default_int): return dtypes.default_int
    if -(1 << 63) <= lo and hi < (1 << 63): return dtypes.int64
    bad = hi if hi >= (1 << 63) else lo
    raise OverflowError(f"Python int {bad} does not fit int64, the widest signed integer dtype "
                        "(range -2**63..2**63-1); pass dtype=dtypes.uint64 for values up to 2**64-1, or use a float")
  @staticmethod
  def from_np(d) -> DType:
    d = np.dtype(d)
    for t in ALL_DTYPES:
      if t.np_name == d.name: return t
    raise TypeError(f"numpy dtype {d} is not supported; supported: {[t.name for t in ALL_DTYPES]}")
  @staticmethod
  def min(d: DType):
    if d.kind == "b": return False
    if d.kind == "f": return -math.inf
    return 0 if d.kind == "u" else -(1 << (d.bits - 1))
  @staticmethod
  def max(d: DType):
    if d.kind == "b": return True
    if d.kind == "f": return math.inf
    return (1 << d.bits) - 1 if d.kind == "u" else (1 << (d.bits - 1)) - 1
  @staticmethod
  def finfo_max(d: DType) -> builtins.float:
    big = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
    return big.get(d.name, 1.7976931348623157e308)

ALL_DTYPES = (dtypes.bool, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
              dtypes.uint32, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES} | {"half": dtypes.float16, "float": dtypes.float32, "double": dtypes.float64,
                                              "int": dtypes.int32, "long": dtypes.int64, "uchar": dtypes.uint8}

def is_dtype_name(x) -> bool:
  """Is x a dtype's name ('float16', 'int32', ...)?"""
  return isinstance(x, str) and x in _BY_NAME

def to_dtype(x) -> DType:
  """Accept a DType, a name ('float32'), a numpy dtype or a Python type."""
  if isinstance(x, DType): return x
  if isinstance(x, str):
    if x in _BY_NAME: return _BY_NAME[x]
    raise TypeError(f"unknown dtype {x!r}; supported: {[d.name for d in ALL_DTYPES]}")
  if x is bool: return dtypes.bool
  if x is int: return dtypes.default_int
  if x is float: return dtypes.default_float
  try: return dtypes.from_np(x)
  except TypeError: raise
  except Exception: raise TypeError(f"unknown dtype {x!r}; supported: {[d.name for d in ALL_DTYPES]}") from None

def _promote2(a: DType, b: DType) -> DType:
  if a == b: return a
  rank = {"b": 0, "u": 1, "i": 1, "f": 2}
  if rank[a.kind] != rank[b.kind]: return a if rank[a.kind] > rank[b.kind] else b
  if a.kind == "f":
    if {a, b} == {dtypes.float16, dtypes.bfloat16}: return dtypes.float32
    return a if a.itemsize > b.itemsize else b
  if a.kind == b.kind: return a if a.itemsize > b.itemsize else b
  s, u = (a, b) if a.kind == "i" else (b, a)
  if s.itemsize > u.itemsize: return s
  if u.itemsize == 8:   # (int64 would wrap uint64's upper half negative; torch refuses the mix too)
    raise TypeError(f"no integer dtype holds both {u} and {s}: cast one first (e.g. to float64, or to int64 when "
                    "the uint64 values are below 2**63)")
  return {1: dtypes.int16, 2: dtypes.int32, 4: dtypes.int64}[u.itemsize]

def least_upper_dtype(*ds: DType) -> DType:
  """PyTorch's promotion of tensor dtypes: bool < ints < floats; within a category the wider; int+uint the next
  signed."""
  out = ds[0]
  for d in ds[1:]: out = _promote2(out, d)
  return out

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}

def result_type(dimensioned: tuple[DType, ...] | list[DType], zero_dim: tuple[DType, ...] | list[DType] = (),
                scalars: tuple[DType, ...] | list[DType] = ()) -> DType:
  """torch.result_type's rule over three tiers of operands: tensors with dims, 0-dim tensors, then Python scalars.
  Each tier promotes within itself (least_upper_dtype); a lower tier only counts when its category (bool < int <
  float) is higher than the higher tier's: float16 tensor + 0-dim float32 -> float16, int8 tensor + 0-dim int64 ->
  int8, int32 tensor + 0-dim float64 -> float64."""
  out: DType | None = None
  for tier in (scalars, zero_dim, dimensioned):   # lowest priority first; each higher tier wins within its category
    if not tier: continue
    d = least_upper_dtype(*tier)
    out = d if out is None or _CATEGORY[out.kind] <= _CATEGORY[d.kind] else _promote2(d, out)
  if out is None: raise ValueError("result_type needs at least one operand")
  return out

def can_cast(frm: DType, to: DType) -> bool:
  """Whether a result of dtype frm may be written into a tensor of dtype to (torch.can_cast): never float to an int or
  bool, never a non-bool to bool."""
  return not ((frm.kind == "f" and to.kind != "f") or (frm.kind != "b" and to.kind == "b"))

def check_scalar_fits(x, d: DType) -> None:
  """Raise OverflowError when the Python number x cannot be stored in integer dtype d without overflow (torch's check
  when a scalar is written into a tensor: setitem, full, fill). As in torch a negative int may wrap into an unsigned
  dtype when its magnitude fits (-1 -> 255 for uint8); a float must be finite and in range."""
  if d.kind not in "iu" or isinstance(x, (bool, np.bool_)): return
  if isinstance(x, (int, np.integer)):
    v = int(x)
    lo = -dtypes.max(d) if d.kind == "u" else dtypes.min(d)
    if lo <= v <= dtypes.max(d): return
  elif isinstance(x, (float, np.floating)):
    if math.isfinite(x) and dtypes.min(d) <= x <= dtypes.max(d): return
  else: return
  raise OverflowError(f"value {x!r} cannot be converted to {d.name} without overflow (its range is "
                      f"{dtypes.min(d)}..{dtypes.max(d)}; torch raises too); use a wider dtype, or wrap it yourself, "
                      f"e.g. Tensor({x!r}).cast(dtypes.{d.name})")

def sum_acc_dtype(d: DType) -> DType:
  """The dtype `sum` returns: bools and small ints sum as the default int (int64 stays), floats keep theirs."""
  if d.kind in "bi": return dtypes.int64 if d == dtypes.int64 else dtypes.default_int
  if d.kind == "u":
    return dtypes.uint64 if d == dtypes.uint64 else (dtypes.uint32 if d == dtypes.uint32 else dtypes.default_int)
  return d

_OVERFLOW = {dtypes.float32: 3.4028235677973366e38, dtypes.float16: 65520.0}

def truncate_value(x, d: DType):
  """The Python value a constant of dtype `d` holds (wrapping ints, rounding floats)."""
  if d.kind == "b": return bool(x)
  if d.kind in "iu":
    if isinstance(x, float) and not math.isfinite(x): return 0
    v = int(x) & ((1 << d.bits) - 1)
    return v - (1 << d.bits) if d.kind == "i" and v >= (1 << (d.bits - 1)) else v
  if d.kind == "f":
    x = float(x)
    # past the largest finite value (plus half an ulp) rounds to inf: said here, numpy warns about the overflow
    if d in _OVERFLOW and abs(x) >= _OVERFLOW[d] and x == x: return math.copysign(math.inf, x)
    if d == dtypes.float32: return float(np.float32(x))
    if d == dtypes.float16: return float(np.float16(x))
    if d == dtypes.bfloat16: return float(np_to_bf16_float(np.array([x], np.float32))[0])
    return x
  return x

def float32_to_bf16_bits(a: np.ndarray) -> np.ndarray:
  """Round-to-nearest-even float32 -> bfloat16 bit patterns (uint16); NaN stays NaN."""
  u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
  rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
  nan = np.isnan(np.asarray(a, dtype=np.float32))
  return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)

def bf16_bits_to_float32(b: np.ndarray) -> np.ndarray:
  return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)

def np_to_bf16_float(a: np.ndarray) -> np.ndarray: return bf16_bits_to_float32(float32_to_bf16_bits(a))
