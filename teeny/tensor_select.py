"""Sorting, selection and structure ops with torch's names and semantics, built only from other Tensor ops.

`class Tensor(SelectMixin, NNMixin)` inherits these, so `self` is always a Tensor; they reach the Tensor class as
`type(self)` (tensor.py imports this module, so this module never imports tensor.py). Everything stays lazy and
differentiable, except `masked_select`, `nonzero`/`argwhere`, `unique`, `unique_consecutive`, `bincount`, `index_put`
with a bool index and `tensor_split` given a tensor, whose output shape depends on the values: they realize and read
what decides it (unique's outputs are not differentiable, as in torch).

The index ops (`index_add`, `index_copy`, `index_fill`, `index_put`, `put`, `take`, `masked_scatter`) are built from
one-hot comparisons between positions and indices, gathers and wheres; their in-place forms (`index_add_`...,
`scatter_`, `masked_fill_`) compute the result out of place and write it with `assign`, which writes through views and
records the write for autograd.

Sorting (`sort`, `argsort`, `topk`) is a bitonic sorting network over the sorted dim padded to a power of two: each of
its log2(n)*(log2(n)+1)/2 stages is one elementwise kernel in which every element meets its partner (the same view
flipped) and keeps the one that comes first or last. Elements are compared by an integer key (the value's order, NaN
largest) with the original index as the tie-break, so the result is always stable, which torch allows for any
`stable`. Keys of up to 32 bits travel packed with the index in one int64. The values are then read at the sorted
indices (a gather), which is also the gradient's path back to the picked positions.
"""
from __future__ import annotations
import builtins, functools, itertools, math
from collections import namedtuple
from typing import TYPE_CHECKING, Any, Callable
import numpy as np
from teeny.dtype import DType, dtypes, least_upper_dtype, to_dtype
from teeny.helpers import broadcast_shape, broadcasts_to, is_int
from teeny.indexing import check_index_range
from teeny.uop.ops import Ops

if TYPE_CHECKING:
  from teeny.tensor import Tensor

# torch.return_types.sort / topk / cummax / cummin: a tuple that also has .values and .indices
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])
# torch.return_types.aminmax and .histogram
MinMax = namedtuple("MinMax", ["min", "max"])
HistEdges = namedtuple("HistEdges", ["hist", "bin_edges"])

def _dim(d, ndim: int, name: str = "dim") -> int:
  """d normalised into [0, ndim) (a 0-d tensor takes -1 and 0), else IndexError naming the allowed range."""
  if not is_int(d): raise TypeError(f"{name} must be an int, got {d!r}")
  n = max(ndim, 1)
  if not -n <= d < n:
    raise IndexError(f"{name} {d} is out of range for a tensor with {ndim} dimensions (expected to be in range of "
                     f"[{-n}, {n - 1}])")
  return int(d) % n

def _int_arg(v, name: str) -> int:
  if not is_int(v): raise TypeError(f"{name} must be an int, got {v!r}")
  return int(v)

# ---------------------------------------------------------------- sorting network helpers

_I64_MAX = (1 << 63) - 1

def _order_key(x: Tensor, descending: bool) -> tuple[Tensor, bool]:
  """An integer key per element whose ascending order is the wanted order (NaN largest, -0.0 equal to 0.0), and
  whether it fits in 32 bits (then it is returned in int64, ready to be packed with an index)."""
  dt = x.dtype
  if dt.kind == "f":
    wide = dt.itemsize == 8
    s = x.bitcast(dtypes.int64) if wide else x.cast(dtypes.float32).bitcast(dtypes.int32)
    # IEEE sign-magnitude -> two's complement order: negative floats count down from -0 (== +0)
    key = (s < 0).where(-(s & ((1 << (63 if wide else 31)) - 1)), s)
    key = x.isnan().where(0x7FF8 << 48 if wide else 0x7FC00000, key)  # every NaN the same, above +inf
    if not wide: key = key.cast(dtypes.int64)
  elif dt.itemsize == 8: key, wide = x, True                        # int64 / uint64: compared as they are
  else:
    # uint32 does not fit int32's range: it takes the unpacked path (shifting it down before packing made the index
    # math overflow once the rewrites distributed the product)
    key, wide = x.cast(dtypes.int64), dt == dtypes.uint32
  if descending: key = ~key   # reverses the order of signed and unsigned ints alike, without overflow
  return key, not wide

def _exchange(keys: list[Tensor], shape: tuple[int, ...], axis: int, first: Tensor, before: Callable) -> list[Tensor]:
  """One compare-exchange stage: seen as `shape`, every element meets its partner (the same view flipped on `axis`);
  where `first` the element keeps whichever of the two comes first, elsewhere the one that comes last. Each stage is
  its own kernel (contiguous): fused, every stage would compute the one before it twice."""
  flat = keys[0].shape
  views = [t.reshape(shape) for t in keys]
  partners = [v.flip(axis) for v in views]
  take = before(partners, views) == first   # take the partner's element
  return [take.where(p, v).reshape(flat).contiguous() for p, v in zip(partners, views)]

def _first_mask(like: Tensor, n: int, half: int, after: int) -> Tensor:
  """(n, 1, ... 1) with `after` trailing ones on `like`'s device: True for the first `half` positions."""
  return (type(like).arange(n, device=like.device) < half).reshape(n, *([1] * after))

def _merge_stages(keys: list[Tensor], before: Callable, B: int, N: int, size: int, mirror: bool = True) -> list[Tensor]:
  """Sort every bitonic (or, with `mirror`, every two sorted halves of a) block of `size` ascending."""
  if mirror:   # compare i with its mirror image in the block: two ascending halves become a bitonic split
    keys = _exchange(keys, (B, N // size, size), 2, _first_mask(keys[0], size, size // 2, 0), before)
  h = size // 2 if not mirror else size // 4
  first = _first_mask(keys[0], 2, 1, 1)
  while h >= 1:   # half-cleaners: compare i with i ^ h
    keys = _exchange(keys, (B, N // (2 * h), 2, h), 2, first, before)
    h //= 2
  return keys

def _select(x: Tensor, dim: int, k: int, descending: bool, full: bool) -> tuple[Tensor, Tensor]:
  """The first k elements along dim in the wanted order (all of them, sorted, with `full`): (values, int64 indices)."""
  Tensor = type(x)
  n = x.shape[dim]
  moved = x.transpose(dim, -1) if dim != x.ndim - 1 else x
  lead = moved.shape[:-1]
  B = int(np.prod(lead, dtype=np.int64)) if lead else 1
  if x.numel() == 0 or k == 0:
    shape = lead + (k,)
    vals = moved.reshape(B, n).shrink(((0, B), (0, k))).contiguous().reshape(shape)
    idx = Tensor.zeros(*shape, dtype=dtypes.int64, device=x.device)
    return (vals, idx) if dim == x.ndim - 1 else (vals.transpose(dim, -1), idx.transpose(dim, -1))
  flat = moved.reshape(B, n)
  N = 1 << max(n - 1, 0).bit_length()
  key, packed = _order_key(flat, descending)
  pos = Tensor.arange(n, device=x.device).cast(dtypes.int64).reshape(1, n)
  if packed:
    keys = [(key * (1 << 32) + pos).pad(((0, 0), (0, N - n)), value=_I64_MAX)]
    def before(p, v): return p[0] < v[0]
  else:
    pad_key = dtypes.max(key.dtype)
    keys = [key.pad(((0, 0), (0, N - n)), value=pad_key), pos.expand(B, n).pad(((0, 0), (0, N - n)), value=n)]
    def before(p, v): return (p[0] < v[0]) | ((p[0] == v[0]) & (p[1] < v[1]))
  size = 2
  K = N if full else max(1 << max(k - 1, 0).bit_length(), 1)
  if 2 * K >= N: K = N
  while size <= K:   # sort blocks of K
    keys = _merge_stages(keys, before, B, N, size)
    size *= 2
  L = N
  while L > K:   # top-k: keep the better half of each pair of sorted blocks (a bitonic sequence), then sort it
    shape = (B, L // (2 * K), 2, K)
    views = [t.reshape(shape) for t in keys]
    a = [v.shrink((None, None, (0, 1), None)) for v in views]
    b = [v.shrink((None, None, (1, 2), None)).flip(3) for v in views]
    take = before(b, a)
    L //= 2
    merged = [take.where(bb, aa).reshape(B, L).contiguous() for aa, bb in zip(a, b)]
    keys = _merge_stages(merged, before, B, L, K, mirror=False)
  keys = [t.shrink(((0, B), (0, k))) for t in keys]
  idx = (keys[0] & 0xFFFFFFFF) if packed else keys[1]
  # the values are read by index: exact, and differentiable (the gradient goes back to the picked positions; its
  # backward compares every output with every input position of its row, O(n*k))
  vals = flat._gather(1, idx)
  vals, idx = vals.reshape(*lead, k), idx.reshape(*lead, k)
  return (vals, idx) if dim == x.ndim - 1 else (vals.transpose(dim, -1), idx.transpose(dim, -1))

class _static_or_bound(staticmethod):
  """A function of tensors that is static on the class (Tensor.block_diag(x, y)) and, reached through a tensor, takes
  that tensor as its first operand (x.block_diag(y))."""
  def __get__(self, obj, cls=None):
    return self.__func__ if obj is None else functools.partial(self.__func__, obj)

def meshgrid(*tensors: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
  """torch.meshgrid: N 1-D (or 0-d) tensors -> N tensors of their sizes' grid; indexing "ij" (matrix) or "xy"
  (Cartesian: the first two dims swapped)."""
  if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)): tensors = tuple(tensors[0])
  if indexing not in ("ij", "xy"): raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
  if not tensors: raise RuntimeError("meshgrid expects a non-empty list of tensors")
  for t in tensors:
    if t.ndim > 1: raise RuntimeError(f"meshgrid expects 0-d or 1-d tensors, got one of shape {tuple(t.shape)}")
    if t.dtype != tensors[0].dtype or t.device != tensors[0].device:
      raise RuntimeError(f"meshgrid expects all tensors to have the same dtype and device, got {tensors[0].dtype} on "
                         f"{tensors[0].device} and {t.dtype} on {t.device}")
  flat = [t.reshape(-1) for t in tensors]
  swap = indexing == "xy" and len(flat) >= 2
  if swap: flat[0], flat[1] = flat[1], flat[0]
  shape = tuple(t.shape[0] for t in flat)
  out = [t.reshape(*[shape[i] if i == j else 1 for i in range(len(flat))]).expand(*shape) for j, t in enumerate(flat)]
  if swap: out[0], out[1] = out[1], out[0]
  return tuple(out)

def cartesian_prod(*tensors: Tensor) -> Tensor:
  """torch.cartesian_prod: every combination of the elements of N 1-D tensors of one dtype, (prod of sizes, N) in
  row-major order (one tensor: itself)."""
  if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)): tensors = tuple(tensors[0])
  for t in tensors:
    if t.ndim != 1: raise RuntimeError(f"cartesian_prod: expected 1-D tensors, but got one of shape {tuple(t.shape)}")
  if len(tensors) == 1: return tensors[0]
  return type(tensors[0]).stack(*[g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], dim=1)

def block_diag(*tensors: Tensor) -> Tensor:
  """torch.block_diag: the tensors (0-d as (1, 1), 1-D as one row, 2-D as they are) as blocks on the diagonal of a
  new matrix, zeros elsewhere; dtypes promote as in cat. Differentiable."""
  if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)): tensors = tuple(tensors[0])
  if not tensors: raise RuntimeError("block_diag: expected at least one tensor")
  mats = []
  for i, t in enumerate(tensors):
    if not hasattr(t, "uop"): raise TypeError(f"block_diag: expected Tensors, got {type(t).__name__} at position {i}")
    if t.ndim > 2:
      raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} "
                         "dimensions")
    mats.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
  dt = least_upper_dtype(*[m.dtype for m in mats])
  cols = sum(m.shape[1] for m in mats)
  rows, off = [], 0
  for m in mats:
    rows.append(m.cast(dt).pad(((0, 0), (off, cols - off - m.shape[1]))))
    off += m.shape[1]
  return rows[0].cat(*rows[1:], dim=0) if len(rows) > 1 else rows[0].contiguous()

def _tri_indices(cls: type, row: int, col: int, offset: int, dtype, device, lower: bool) -> Tensor:
  fn = "tril_indices" if lower else "triu_indices"
  row, col, offset = _int_arg(row, "row"), _int_arg(col, "col"), _int_arg(offset, "offset")
  if row < 0: raise RuntimeError(f"{fn}: row must be non-negative, got {row}")
  if col < 0: raise RuntimeError(f"{fn}: col must be non-negative, got {col}")
  dt = to_dtype(dtype) if dtype is not None else dtypes.int64
  if dt.kind not in "iu":
    raise NotImplementedError(f"{fn}: not implemented for {dt.name} (torch neither); use an integer dtype")
  r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
  return cls(np.stack([r, c]).astype(dt.np).reshape(2, -1), device=device)

def tril_indices(cls: type, row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
  """torch.tril_indices: the (2, count) row and column indices of the lower triangle (column - row <= offset) of a
  row x col matrix, row-major; int64 unless dtype says otherwise."""
  return _tri_indices(cls, row, col, offset, dtype, device, True)

def triu_indices(cls: type, row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
  """torch.triu_indices: the (2, count) row and column indices of the upper triangle (column - row >= offset) of a
  row x col matrix, row-major; int64 unless dtype says otherwise."""
  return _tri_indices(cls, row, col, offset, dtype, device, False)

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")

def _quantile(x: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
  T = type(x)
  fn = "nanquantile" if ignore_nan else "quantile"
  if x.dtype not in (dtypes.float32, dtypes.float64):
    raise RuntimeError(f"{fn}() input tensor must be either float or double dtype, got {x.dtype.name}; cast it, e.g. "
                       "x.float()")
  if interpolation not in _INTERPOLATIONS:
    raise RuntimeError(f"{fn}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got "
                       f"{interpolation!r}")
  if isinstance(q, T):
    if q.ndim > 1: raise RuntimeError(f"{fn}() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
    if q.dtype != x.dtype:
      raise RuntimeError(f"{fn}() q tensor must be same dtype as the input tensor, got {q.dtype.name} and "
                         f"{x.dtype.name}")
    qd = q.detach()
    check_index_range(((qd < 0) | (qd > 1) | qd.isnan()).any().cast(dtypes.int32).reshape(1), 1,
                      lambda _: f"{fn}() q values must be in the range [0, 1]", RuntimeError)
    qv, scalar = q.reshape(-1), q.ndim == 0   # (q keeps its gradient, through the interpolation weights)
  else:
    if isinstance(q, bool) or not isinstance(q, (int, float)):
      raise TypeError(f"{fn}() q must be a float or a tensor, got {type(q).__name__}")
    if not 0 <= q <= 1: raise RuntimeError(f"{fn}() q must be in the range [0, 1] but got {q}")
    qv, scalar = T([float(q)], dtype=x.dtype, device=x.device), True
  if x.numel() == 0: raise RuntimeError(f"{fn}() input tensor must be non-empty")
  if dim is None: d, src = None, x.reshape(-1)
  else:
    d = _dim(dim, x.ndim)
    src = x.reshape(1) if x.ndim == 0 else (x.transpose(d, -1) if d != x.ndim - 1 else x)
  s = src.sort(-1).values
  n, lead, Q = s.shape[-1], tuple(s.shape[:-1]), qv.shape[0]
  qb = qv.reshape(*([1] * len(lead)), Q)
  if ignore_nan:
    k = s.isnan().logical_not().sum(-1, keepdim=True).cast(x.dtype)
    ranks = (qb * (k - 1)).maximum(0)
  else:
    ranks = s.narrow(-1, n - 1, 1).isnan().where(float(n - 1), qb * (n - 1))   # (NaN sorts last)
  ranks = ranks._broadcast_to(lead + (Q,))
  def at(r: Tensor) -> Tensor: return s._gather(len(lead), r.cast(dtypes.int64))
  if interpolation in ("lower", "higher", "nearest"):
    pick = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}[interpolation]
    out = at(pick())
  else:
    below, above = at(ranks.floor()), at(ranks.ceil())
    w = ranks - ranks.floor() if interpolation == "linear" else ranks.full_like(0.5)
    # torch's lerp: from the nearer end
    out = (w < 0.5).where(below + w * (above - below), above - (above - below) * (1 - w))
  if d is None: out = out.reshape(Q, *([1] * x.ndim)) if keepdim else out.reshape(Q)
  elif x.ndim:   # (out is src's layout with Q in place of the sorted dim: back to x's, then Q first, 1 at d)
    if d != x.ndim - 1: out = out.transpose(d, -1)
    out = out.unsqueeze(0).transpose(0, d + 1)
    if not keepdim: out = out.squeeze(d + 1)
  return out.squeeze(0) if scalar else out

def _unique_groups(rows: np.ndarray, consecutive: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Groups of equal rows of a 2-D array (NaN equals nothing, -0.0 equals 0.0): sorted lexicographically (NaN last)
  unless `consecutive`. Returns each group's first row (in group order), each row's group and each group's size."""
  n = rows.shape[0]
  order = np.arange(n) if consecutive or rows.shape[1] == 0 else np.lexsort(rows.T[::-1])
  s = rows[order]
  new = np.ones(n, dtype=bool)
  if n > 1: new[1:] = np.any(s[1:] != s[:-1], axis=1)
  starts = np.flatnonzero(new)
  inverse = np.empty(n, dtype=np.int64)
  inverse[order] = np.cumsum(new) - 1
  return order[starts].astype(np.int64), inverse, np.diff(np.append(starts, n)).astype(np.int64)

def _unique(x: Tensor, dim, consecutive: bool, return_inverse: bool, return_counts: bool):
  """unique / unique_consecutive: realizes x and reads it (the number of groups depends on the values); the values
  are then read from x at each group's first element (a gather, detached: torch has no derivative here either)."""
  Tensor = type(x)
  name = "unique_consecutive" if consecutive else "unique"
  if dim is None:
    flat = x.detach().reshape(-1)
    first, inverse, counts = _unique_groups(flat.numpy().reshape(-1, 1), consecutive)
    vals = flat._gather(0, Tensor(first, device=x.device)) if first.size else flat.shrink(((0, 0),)).contiguous()
    inv_shape = x.shape
  else:
    if x.ndim == 0: raise IndexError(f"{name}: dim {dim} is out of range: the tensor has no dimensions")
    d = _dim(dim, x.ndim)
    if x.numel() == 0 and any(s == 0 for i, s in enumerate(x.shape) if i != d):
      raise RuntimeError(f"{name}: there are 0-sized dimensions other than dim {d} in shape {tuple(x.shape)}, so "
                         "unique cannot be applied along it")
    moved = x.detach().transpose(0, d) if d else x.detach()
    rows = moved.numpy().reshape(moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.int64)))
    first, inverse, counts = _unique_groups(rows, consecutive)
    if first.size: vals = x.detach().index_select(d, Tensor(first, device=x.device))
    else: vals = x.detach().narrow(d, 0, 0).contiguous()
    inv_shape = (x.shape[d],)
  out = [vals]
  if return_inverse: out.append(Tensor(inverse.reshape(inv_shape), device=x.device))
  if return_counts: out.append(Tensor(counts, device=x.device))
  return out[0] if len(out) == 1 else tuple(out)

class SelectMixin:
  """Mixed into Tensor: sorting, selection and structure-picking methods."""

  # ***** triangles and diagonals *****

  def _tri(self: Tensor, diagonal: int, lower: bool,  # type: ignore[misc]  # mixin: self is a Tensor
           name: str) -> Tensor:
    Tensor = type(self)
    if self.ndim < 2:
      raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions, got shape {tuple(self.shape)}")
    d = _int_arg(diagonal, "diagonal")
    r, c = self.shape[-2:]
    off = Tensor.arange(c, device=self.device).reshape(1, c) - Tensor.arange(r, device=self.device).reshape(r, 1)
    keep = (off <= d) if lower else (off >= d)
    return keep.where(self, self.zeros_like())
  def tril(self: Tensor, diagonal: int = 0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """The lower triangle of the last two dims (column - row <= diagonal); the rest zero."""
    return self._tri(diagonal, True, "tril")
  def triu(self: Tensor, diagonal: int = 0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """The upper triangle of the last two dims (column - row >= diagonal); the rest zero."""
    return self._tri(diagonal, False, "triu")

  def diagonal(self: Tensor, offset: int = 0, dim1: int = 0,  # type: ignore[misc]  # mixin: self is a Tensor
               dim2: int = 1) -> Tensor:
    """The diagonal of dims dim1 and dim2 (offset above it if > 0, below if < 0) as a new last dim; a view."""
    offset = _int_arg(offset, "offset")
    d1, d2 = _dim(dim1, self.ndim, "dim1"), _dim(dim2, self.ndim, "dim2")
    if d1 == d2: raise RuntimeError(f"diagonal dimensions cannot be identical: dim1={dim1}, dim2={dim2}")
    rest = [i for i in range(self.ndim) if i not in (d1, d2)]
    x = self.permute(*rest, d1, d2)
    lead, (a, b) = x.shape[:-2], x.shape[-2:]
    r0, c0 = (0, min(offset, b)) if offset >= 0 else (min(-offset, a), 0)
    m = max(min(a - r0, b - c0), 0)
    x = x.shrink(tuple((0, s) for s in lead) + ((r0, r0 + m), (c0, c0 + m)))
    # (a view throughout, built on the UOps: Tensor.pad makes a new tensor, and the flattening reshape is no view in
    # torch's sense, though the diagonal is)
    if m <= 1: return x._view(x.uop.reshape((*lead, m)))
    # the m diagonal elements sit m + 1 apart in the flattened (m, m) block: pad it to (m, m + 1) rows, take column 0
    u = x.uop.reshape((*lead, m * m)).pad(tuple((0, 0) for _ in lead) + ((0, m),)).reshape((*lead, m, m + 1))
    return x._view(u.shrink(tuple((0, s) for s in lead) + ((0, m), (0, 1))).reshape((*lead, m)))

  def diag(self: Tensor, diagonal: int = 0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.diag: a 1-D tensor -> the square matrix with it on diagonal `diagonal`; a 2-D tensor -> that diagonal."""
    d = _int_arg(diagonal, "diagonal")
    if self.ndim == 2: return self.diagonal(d)
    if self.ndim != 1:
      raise RuntimeError(f"diag supports 1-D or 2-D tensors, got a {self.ndim}-D one; use diagonal() or diag_embed")
    n = self.shape[0]
    # (n,) -> (n, n+1) with n zeros after each element -> flattened, cut to n*n: the elements land on the diagonal
    x = self.reshape(n, 1).pad(((0, 0), (0, n))).reshape(n * (n + 1)).shrink(((0, n * n),)).reshape(n, n)
    a = abs(d)
    x = x.pad(((0, a), (a, 0))) if d >= 0 else x.pad(((a, 0), (0, a)))
    return x.contiguous()   # a new tensor, as in torch (not a view of self)

  # ***** sorting *****

  def sort(self: Tensor, dim: int = -1, descending: bool = False, *,  # type: ignore[misc]  # mixin: self is a Tensor
           stable: bool = False) -> ValuesIndices:
    """(values, int64 indices) sorted along dim; NaN counts as the largest; always stable (ties keep their order)."""
    d = _dim(dim, self.ndim)
    if self.ndim == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    n = self.shape[d]
    return ValuesIndices(*_select(self, d, n, bool(descending), True))
  def argsort(self: Tensor, dim: int = -1, descending: bool = False,  # type: ignore[misc]  # mixin: self is a Tensor
              stable: bool = False) -> Tensor:
    """The int64 indices that sort the tensor along dim (stable; NaN counts as the largest)."""
    return self.sort(dim, descending, stable=stable).indices
  def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True,  # type: ignore[misc]  # mixin: self is a Tensor
           sorted: bool = True) -> ValuesIndices:
    """The k largest (or smallest) elements along dim and their int64 indices, best first; NaN counts as the largest;
    ties go to the lower index. With sorted=False the order is still best first (torch leaves it unspecified)."""
    k = _int_arg(k, "k")
    d = _dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 0 <= k <= n:
      raise RuntimeError(f"topk: selected index k={k} out of range for dim {d} of size {n} (need 0 <= k <= {n})")
    if self.ndim == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    return ValuesIndices(*_select(self, d, k, bool(largest), False))

  def median(self: Tensor, dim: int | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
             keepdim: bool = False) -> Tensor | ValuesIndices:
    """torch.median: the lower of the two middle values (no averaging). dim=None: the median of all elements, a 0-d
    tensor (nan for an empty input); with dim: (values, int64 indices) along dim. A slice holding NaN has median NaN
    (its index is a NaN's). The gradient goes to the picked element (dim=None: split among the elements equal to the
    median, as torch)."""
    return _median(self, dim, keepdim, ignore_nan=False)
  def nanmedian(self: Tensor, dim: int | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
                keepdim: bool = False) -> Tensor | ValuesIndices:
    """torch.nanmedian: median's lower middle value of the non-NaN elements; NaN only where a slice is all NaN."""
    return _median(self, dim, keepdim, ignore_nan=True)

  # ***** running extremes *****

  def _cum_extreme(self: Tensor, dim: int,  # type: ignore[misc]  # mixin: self is a Tensor
                   is_max: bool) -> ValuesIndices:
    Tensor = type(self)
    d = _dim(dim, self.ndim)
    if self.ndim == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    n = self.shape[d]
    if n == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    x = self.detach()
    # a key whose running max is the running max (or min) of self, for every dtype without overflow
    key = x.cast(dtypes.int32) if x.dtype == dtypes.bool else x
    if not is_max: key = -key if key.dtype.kind == "f" else ~key
    run = key._cumulative(Ops.MAX, d)
    # a position where the element equals the running extreme (or is NaN) sets the index: torch's (the last tie)
    rec = (key == run) | key.isnan()
    pos = Tensor.arange(n, device=self.device).reshape(*[n if i == d else 1 for i in range(self.ndim)])
    idx = rec.where(pos, -1)._cumulative(Ops.MAX, d).cast(dtypes.int64)
    return ValuesIndices(self._gather(d, idx), idx)
  def cummax(self: Tensor, dim: int = 0) -> ValuesIndices:  # type: ignore[misc]  # mixin: self is a Tensor
    """(values, int64 indices) of the running maximum along dim; a tie (or a NaN) takes the latest index, as torch."""
    return self._cum_extreme(dim, True)
  def cummin(self: Tensor, dim: int = 0) -> ValuesIndices:  # type: ignore[misc]  # mixin: self is a Tensor
    """(values, int64 indices) of the running minimum along dim; a tie (or a NaN) takes the latest index, as torch."""
    return self._cum_extreme(dim, False)

  # ***** masks *****

  def masked_fill(self: Tensor, mask: Tensor, value) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """self with value (a scalar or a 0-d tensor) where the bool mask (broadcast with self) is True."""
    Tensor = type(self)
    if not isinstance(mask, Tensor) or mask.dtype != dtypes.bool:
      got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
      raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with dtype {got}; use mask.bool()")
    if isinstance(value, Tensor):
      if value.ndim != 0:
        raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                           "dimension(s); use where() to fill from a tensor")
      v = value.cast(self.dtype)
    else: v = Tensor(_scalar_for(value, self.dtype), device=self.device, dtype=self.dtype)
    try: broadcast_shape(self.shape, mask.shape)
    except ValueError:
      raise RuntimeError(f"masked_fill: the mask's shape {tuple(mask.shape)} does not broadcast with the tensor's "
                         f"shape {tuple(self.shape)}") from None
    return mask.where(v, self)

  def masked_select(self: Tensor, mask: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """The elements of self (broadcast with the bool mask) where mask is True, as a 1-D tensor. Its length depends on
    the mask's values: this realizes the mask and reads it (not possible on DEV=NULL); the gather stays lazy."""
    Tensor = type(self)
    if not isinstance(mask, Tensor) or mask.dtype != dtypes.bool:
      got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
      raise RuntimeError(f"masked_select: expected a bool tensor for mask, got {got}; use mask.bool()")
    shape = broadcast_shape(self.shape, mask.shape)
    where = np.flatnonzero(mask.expand(*shape).numpy())
    x = self.expand(*shape).reshape(-1)
    if where.size == 0: return x.shrink(((0, 0),)).contiguous()
    return x._gather(0, Tensor(where.astype(np.int64), device=self.device))

  def nonzero(self: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
              as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The int64 indices of the non-zero elements, (count, ndim) (one 1-D tensor per dim with as_tuple=True). The
    count depends on the values: this realizes the tensor and reads it (not possible on DEV=NULL)."""
    Tensor = type(self)
    if as_tuple and self.ndim == 0: return self.reshape(1).nonzero(as_tuple=True)
    where = np.argwhere(self.numpy() != 0).astype(np.int64)
    if as_tuple: return tuple(Tensor(np.ascontiguousarray(where[:, i]), device=self.device) for i in range(self.ndim))
    return Tensor(where.reshape(where.shape[0], self.ndim), device=self.device)

  # ***** movement-like *****

  def roll(self: Tensor, shifts, dims=None) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """Shift elements along dims (the flattened tensor when dims is None), wrapping around; a new tensor."""
    sh = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    sh = tuple(_int_arg(s, "shifts") for s in sh)
    if dims is None:
      if len(sh) != 1:
        raise RuntimeError(f"roll: shifts and dims must align: with dims=None, shifts must be one int, got {shifts!r}")
      return self.reshape(-1).roll(sh, 0).reshape(self.shape)
    ds = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(sh) != len(ds) or not sh:
      raise RuntimeError(f"roll: shifts and dims must align, got {len(sh)} shift(s) and {len(ds)} dim(s)")
    x = self
    for s, dd in zip(sh, ds):
      d = _dim(dd, self.ndim, "dims")
      n = x.shape[d] if x.ndim else 1
      if x.ndim == 0 or n == 0 or s % n == 0: continue
      s %= n
      span = [(0, v) for v in x.shape]
      tail, head = list(span), list(span)
      tail[d], head[d] = (n - s, n), (0, n - s)
      x = x.shrink(tuple(tail)).cat(x.shrink(tuple(head)), dim=d)
    return x if x is not self else self.clone()

  def rot90(self: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.rot90: rotated k times by 90 degrees in the plane of `dims`, from dims[0] toward dims[1] (k < 0 turns
    the other way); a new tensor."""
    k = _int_arg(k, "k")
    ds = tuple(dims)
    if len(ds) != 2: raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(ds)}")
    if self.ndim < 2: raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {self.ndim}")
    d0, d1 = _dim(ds[0], self.ndim, "dims"), _dim(ds[1], self.ndim, "dims")
    if d0 == d1: raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {ds[0]} and "
                                    f"dim1 = {ds[1]}")
    k %= 4
    if k == 1: return self.flip(d1).transpose(d0, d1)
    if k == 2: return self.flip((d0, d1))
    if k == 3: return self.flip(d0).transpose(d0, d1)
    return self.clone()

  def diff(self: Tensor, n: int = 1, dim: int = -1,  # type: ignore[misc]  # mixin: self is a Tensor
           prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """torch.diff: the n-th forward difference along dim (bool tensors: logical xor), after `prepend` and `append`
    (tensors of self's dims, matching off `dim`) are concatenated on either side; n=0 returns a copy of self (and
    ignores them, as torch). Dtypes promote as in cat; ints wrap as in torch's subtraction."""
    Tensor = type(self)
    n = _int_arg(n, "n")
    if n < 0: raise RuntimeError(f"diff: order must be non-negative but got {n}")
    if self.ndim == 0: raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _dim(dim, self.ndim)
    if n == 0: return self.clone()
    parts = []
    for name, t in (("prepend", prepend), ("self", self), ("append", append)):
      if t is None: continue
      if not isinstance(t, Tensor): raise TypeError(f"diff: {name} must be a Tensor, got {type(t).__name__}")
      if t.ndim != self.ndim:
        raise RuntimeError(f"diff expects prepend or append to be the same dimension as input ({self.ndim}), got "
                           f"{name} of shape {tuple(t.shape)}")
      if any(a != b for i, (a, b) in enumerate(zip(t.shape, self.shape)) if i != d):
        raise RuntimeError(f"diff expects the shape of {name} {tuple(t.shape)} to match the input's "
                           f"{tuple(self.shape)} except along the differencing dim {d}")
      parts.append(t)
    x = parts[0].cat(*parts[1:], dim=d) if len(parts) > 1 else self
    for _ in range(min(n, x.shape[d])):
      m = x.shape[d]
      hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
      x = (hi != lo) if x.dtype == dtypes.bool else hi - lo
    return x if x is not self else self.clone()

  def unfold(self: Tensor, dimension: int, size: int,  # type: ignore[misc]  # mixin: self is a Tensor
             step: int) -> Tensor:
    """torch's Tensor.unfold: every slice of `size` along `dimension`, `step` apart, in a new last dim."""
    Tensor = type(self)
    size, step = _int_arg(size, "size"), _int_arg(step, "step")
    d = _dim(dimension, self.ndim, "dimension")
    if self.ndim == 0: return self.reshape(1).unfold(0, size, step).reshape(size)
    n = self.shape[d]
    if size < 0: raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if size > n: raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0: raise RuntimeError(f"unfold: step is {step} but must be > 0")
    out = (n - size) // step + 1
    shape = tuple(out if i == d else s for i, s in enumerate(self.shape)) + (size,)
    if size == 0 or self.numel() == 0: return Tensor.zeros(*shape, dtype=self.dtype, device=self.device)
    rest = [i for i in range(self.ndim) if i != d]
    w = self.permute(*rest, d)._window((size,), (step,), (1,))   # (*rest, out, size)
    nd = self.ndim
    return w.permute(*range(d), nd - 1, *range(d, nd - 1), nd)

  def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False,  # type: ignore[misc]  # mixin
             return_counts: bool = False, dim: int | None = None):
    """torch.unique: the distinct elements, ascending (torch's CPU order, whatever `sorted`), and with the flags the
    int64 index of each input element's value in them (self's shape) and each value's count. With `dim`, the
    distinct slices along dim, in lexicographic order (inverse and counts then index dim). NaN equals nothing (each
    NaN is its own value, after the numbers); -0.0 equals 0.0 (the first met is kept). The output's length depends
    on the values: this realizes the tensor and reads it (not possible on DEV=NULL). Not differentiable (detached;
    torch's backward raises)."""
    return _unique(self, dim, False, return_inverse, return_counts)

  def unique_consecutive(self: Tensor, return_inverse: bool = False,  # type: ignore[misc]  # mixin: self is a Tensor
                         return_counts: bool = False, dim: int | None = None):
    """torch.unique_consecutive: runs of equal consecutive elements (or slices along dim) collapsed to one, with the
    flags each element's run index (int64, self's shape; (size of dim,) with dim) and the runs' lengths. NaN equals
    nothing. Realizes the tensor and reads it, like unique (not possible on DEV=NULL); not differentiable."""
    return _unique(self, dim, True, return_inverse, return_counts)

  # ***** index_add / index_copy / index_fill / index_put / take / put / masked_scatter (out of place) *****

  def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, *,  # type: ignore[misc]  # mixin
                alpha=1) -> Tensor:
    """torch.index_add: self with alpha * source's slices added along dim at the positions `index` (1-D, or 0-d: one
    position) names; duplicates add up. source has self's dtype and shape except len(index) at dim. alpha is
    converted to self's dtype (2.5 adds 2 to an int tensor, as torch). Every output element sums over the indices
    (O(numel * len(index)) work, lazily; no atomics). Any integer index dtype (torch: int32/int64)."""
    x, d, idx, src = _index_parts(self, "index_add", dim, index, source, RuntimeError)
    out = _index_add(x, d, idx, src, alpha)
    return out.reshape(()) if self.ndim == 0 else out

  def index_copy(self: Tensor, dim: int, index: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                 source: Tensor) -> Tensor:
    """torch.index_copy: self with source's slices written along dim at the positions `index` names. A position
    named twice takes the LAST of its slices (torch leaves it undefined), and only that slice gets its gradient
    (torch gives every duplicate the gradient). Any integer index dtype (torch: int64 only)."""
    x, d, idx, src = _index_parts(self, "index_copy", dim, index, source, IndexError)
    out = _index_copy(x, d, idx, src)
    return out.reshape(()) if self.ndim == 0 else out

  def index_fill(self: Tensor, dim: int, index: Tensor, value) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.index_fill: self with every slice along dim that `index` names (1-D or 0-d; negative indices count from
    the end) set to value (a scalar, converted as torch converts it, or a 0-d tensor, which gets the gradient)."""
    x = self.reshape(1) if self.ndim == 0 else self
    d = _dim(dim, self.ndim)
    idx = _index_vector(index, "index_fill", x.shape[d], d, negative=True)
    v = _fill_value(self, value, "index_fill")
    if idx.shape[0] == 0: return self.clone()
    hit = _hits(idx, x.shape[d]).any(1)
    out = hit.reshape(*[x.shape[d] if i == d else 1 for i in range(x.ndim)]).where(v, x)
    return out.reshape(()) if self.ndim == 0 else out

  def index_put(self: Tensor, indices, values: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                accumulate: bool = False) -> Tensor:
    """torch.index_put: self with self[indices] = values (accumulate=True: += , duplicates summed). `indices` is a
    tuple of index tensors for self's leading dims (numpy's advanced indexing, broadcast together; negative indices
    count from the end); a bool tensor selects where it is True (that reads it: its count depends on the values).
    values has self's dtype and broadcasts to the indexed shape. Without accumulate a position named twice takes
    the LAST value (torch: undefined), as index_copy."""
    Tensor = type(self)
    if isinstance(indices, Tensor) or not isinstance(indices, (tuple, list)):
      raise TypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    if not isinstance(values, Tensor):
      raise TypeError(f"index_put: values must be a Tensor, got {type(values).__name__}")
    if values.dtype != self.dtype:
      raise RuntimeError(f"Index put requires the source and destination dtypes match, got {self.dtype} for the "
                         f"destination and {values.dtype} for the source; cast values with .cast({self.dtype})")
    lin, bshape, m = _flat_positions(self, tuple(indices), "index_put")
    rest = tuple(self.shape[m:])
    region = bshape + rest
    if not broadcasts_to(tuple(values.shape), region):
      raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing "
                         f"result of shape {list(region)}")
    k = int(np.prod(bshape, dtype=np.int64)) if bshape else 1
    if k == 0: return self.clone()
    P = int(np.prod(self.shape[:m], dtype=np.int64))
    v = values._broadcast_to(region).reshape(k, *rest)
    base = self.reshape(P, *rest)
    out = _index_add(base, 0, lin.reshape(k), v, 1) if accumulate else _index_copy(base, 0, lin.reshape(k), v)
    return out.reshape(self.shape)

  def take(self: Tensor, index: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.take: the elements of self, seen flattened (row-major), at `index` (any shape: the output's; negative
    indices count from the end)."""
    n = self.numel()
    idx = _flat_index(self, index, "take")
    if idx.numel() == 0: return self.reshape(-1).shrink(((0, 0),)).reshape(idx.shape).contiguous()
    return self.reshape(-1)._gather(0, idx.reshape(-1)).reshape(idx.shape) if n else self.reshape(idx.shape)

  def put(self: Tensor, index: Tensor, source: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
          accumulate: bool = False) -> Tensor:
    """torch.put: self (seen flattened) with source's elements written at `index` (negative counts from the end;
    index and source hold as many elements, in any shapes); accumulate=True adds them, duplicates summed. Without
    accumulate a position named twice takes the LAST value (torch: undefined)."""
    Tensor = type(self)
    if not isinstance(source, Tensor): raise TypeError(f"put: source must be a Tensor, got {type(source).__name__}")
    if source.dtype != self.dtype:
      raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = {self.dtype} "
                         f"and source.dtype = {source.dtype}")
    idx = _flat_index(self, index, "put_")
    if idx.numel() != source.numel():
      raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                       f"source.numel() = {source.numel()}, index.numel() = {idx.numel()}")
    if idx.numel() == 0: return self.clone()
    flat, src, i = self.reshape(-1), source.reshape(-1), idx.reshape(-1)
    out = _index_add(flat, 0, i, src, 1) if accumulate else _index_copy(flat, 0, i, src)
    return out.reshape(self.shape)

  def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.masked_scatter: self (broadcast with the bool mask) with the elements where mask is True replaced by
    source's first elements, in row-major order (source is read flattened and needs at least as many elements as
    the mask has Trues: checked where index checks read values, the CPU by default). Lazy: each position finds its
    source element by a running count of the mask. Gradients: self where mask is False, source at the used
    elements."""
    Tensor = type(self)
    if not isinstance(mask, Tensor) or mask.dtype != dtypes.bool:
      got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
      raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {got}; use mask.bool()")
    if not isinstance(source, Tensor):
      raise TypeError(f"masked_scatter: source must be a Tensor, got {type(source).__name__}")
    if source.dtype != self.dtype:
      raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got {self.dtype} and "
                         f"{source.dtype}")
    try: shape = broadcast_shape(self.shape, mask.shape)
    except ValueError:
      raise RuntimeError(f"masked_scatter: the mask's shape {tuple(mask.shape)} does not broadcast with the tensor's "
                         f"shape {tuple(self.shape)}") from None
    x, m = self.expand(*shape), mask.expand(*shape).reshape(-1)
    if m.shape[0] == 0: return x.contiguous()
    pos = m.where(m.cumsum(0) - 1, 0)   # the source element each selected position takes
    ns = source.numel()
    check_index_range(m.where(pos, -1), ns, lambda v: f"masked_scatter: source has {ns} elements, fewer than the "
                      "mask's number of Trues; pass a source with at least as many elements", RuntimeError, ignore=-1)
    if ns == 0: return m.reshape(shape).where(x.zeros_like(), x)
    return m.reshape(shape).where(source.reshape(-1)._gather(0, pos).reshape(shape), x)

  # ***** their in-place forms: computed out of place, then written through assign (views and autograd follow) *****

  def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,  # type: ignore[misc]  # mixin
                 alpha=1) -> Tensor:
    """In-place index_add (written through views; recorded for autograd as assign is)."""
    return self.assign(self.index_add(dim, index, source, alpha=alpha))
  def index_copy_(self: Tensor, dim: int, index: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                  source: Tensor) -> Tensor:
    """In-place index_copy (duplicates: the last slice wins)."""
    return self.assign(self.index_copy(dim, index, source))
  def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:  # type: ignore[misc]  # mixin
    """In-place index_fill."""
    return self.assign(self.index_fill(dim, index, value))
  def index_put_(self: Tensor, indices, values: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
                 accumulate: bool = False) -> Tensor:
    """In-place index_put (self[indices] = values, or += with accumulate=True)."""
    return self.assign(self.index_put(indices, values, accumulate))
  def put_(self: Tensor, index: Tensor, source: Tensor,  # type: ignore[misc]  # mixin: self is a Tensor
           accumulate: bool = False) -> Tensor:
    """In-place put."""
    return self.assign(self.put(index, source, accumulate))
  def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """In-place masked_fill; the mask must broadcast to self's shape (self cannot grow)."""
    _mask_fits(self, mask, "masked_fill_")
    return self.assign(self.masked_fill(mask, value))
  def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # type: ignore[misc]  # mixin
    """In-place masked_scatter; the mask must broadcast to self's shape (self cannot grow)."""
    _mask_fits(self, mask, "masked_scatter_")
    return self.assign(self.masked_scatter(mask, source))
  def scatter_(self: Tensor, dim: int, index: Tensor, src,  # type: ignore[misc]  # mixin: self is a Tensor
               reduce: str | None = None) -> Tensor:
    """In-place scatter (src a tensor of self's dtype, or a scalar; reduce None, 'add' or 'multiply')."""
    _same_dtype(self, src, "scatter_")
    return self.assign(self.scatter(dim, index, src, reduce=reduce))
  def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # type: ignore[misc]  # mixin
    """In-place scatter_add."""
    _same_dtype(self, src, "scatter_add_")
    return self.assign(self.scatter_add(dim, index, src))
  def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor,  # type: ignore[misc]  # mixin
                      reduce: str, include_self: bool = True) -> Tensor:
    """In-place scatter_reduce."""
    _same_dtype(self, src, "scatter_reduce_")
    return self.assign(self.scatter_reduce(dim, index, src, reduce, include_self=include_self))

  # ***** order statistics and searching *****

  def kthvalue(self: Tensor, k: int, dim: int = -1,  # type: ignore[misc]  # mixin: self is a Tensor
               keepdim: bool = False) -> ValuesIndices:
    """torch.kthvalue: (values, int64 indices) of the k-th smallest element along dim (k counts from 1; NaN is the
    largest). Among equal values the index is the stable sort's (torch's quickselect may name another equal one).
    The gradient goes to the picked element."""
    k = _int_arg(k, "k")
    if self.dtype == dtypes.bool: raise NotImplementedError("kthvalue: not implemented for bool (as in torch)")
    d = _dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if self.ndim and n == 0 and self.numel() == 0 and not any(s == 0 for i, s in enumerate(self.shape) if i != d):
      raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size")
    if not 1 <= k <= n:
      raise RuntimeError(f"kthvalue(): selected number k={k} out of range for dimension {d} of size {n} (need 1 <= "
                         f"k <= {n})")
    if self.ndim == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    idx = self.topk(k, d, largest=False).indices.narrow(d, k - 1, 1)
    vals = self._gather(d, idx)
    return ValuesIndices(vals, idx) if keepdim else ValuesIndices(vals.squeeze(d), idx.squeeze(d))

  def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # type: ignore[misc]  # mixin
    """torch.mode: (values, int64 indices) of the most frequent value along dim, the smallest on ties; the index is
    the value's last occurrence (torch's, whose CPU sort is stable for up to 16 elements). A slice holding NaN gives
    NaN at its first NaN (as torch for [nan, 1, 0]; torch's own answer with NaN depends on where its sort leaves them,
    e.g. 1 for [nan, 1, 1, 0]). Lazy: a sort, then run lengths by a running max. The gradient goes to the picked
    element."""
    Tensor = type(self)
    d = _dim(dim, self.ndim)
    if self.ndim == 0: return ValuesIndices(self.clone(), self.zeros_like(dtype=dtypes.int64))
    n = self.shape[d]
    out_shape = tuple(1 if i == d else s for i, s in enumerate(self.shape))
    if n == 0: raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size (shape {tuple(self.shape)})")
    if self.numel() == 0:
      vals, idx = self.sum(d, keepdim=True).cast(self.dtype), Tensor.zeros(*out_shape, dtype=dtypes.int64,
                                                                         device=self.device)
    else:
      x = self.transpose(d, -1) if d != self.ndim - 1 else self
      last = x.ndim - 1
      s = x.detach().sort(-1).values
      def eq(a, b): return ((a == b) | (a.isnan() & b.isnan())) if a.dtype.kind == "f" else a == b
      ar = Tensor.arange(n, device=self.device)
      new = s.narrow(last, 0, 1).full_like(True, dtype=dtypes.bool).cat(
        eq(s.narrow(last, 1, n - 1), s.narrow(last, 0, n - 1)).logical_not(), dim=last)
      start = new.where(ar, 0)._cumulative(Ops.MAX, last)
      best = (ar - start).argmax(last, keepdim=True)   # the first longest run: the smallest most frequent value
      mv = s._gather(last, best)
      idx = eq(x.detach(), mv).where(ar, -1).max(last, keepdim=True).cast(dtypes.int64)
      if x.dtype.kind == "f":   # a slice holding NaN: NaN, at its first NaN (torch's answer for [nan, 1, 0])
        isn = x.detach().isnan()
        idx = isn.any(last, keepdim=True).where(isn.where(ar, n).min(last, keepdim=True).cast(dtypes.int64), idx)
      vals = x._gather(last, idx)
      if d != self.ndim - 1: vals, idx = vals.transpose(d, -1), idx.transpose(d, -1)
    return ValuesIndices(vals, idx) if keepdim else ValuesIndices(vals.squeeze(d), idx.squeeze(d))

  def msort(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.msort: the values sorted along dim 0 (sort(0).values)."""
    return self.sort(0).values

  def argwhere(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.argwhere: nonzero(), the (count, ndim) int64 indices of the non-zero elements (reads the values)."""
    return self.nonzero()  # type: ignore[return-value]  # as_tuple=False gives one Tensor

  def isin(elements: Any, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """torch.isin (also as elements.isin(test_elements)): whether each element of `elements` (a tensor or a scalar)
    equals some element of test_elements (a tensor or a scalar), compared in their promoted dtype (NaN is in
    nothing; -0.0 is 0.0); invert=True negates. Lazy: every element meets every test element (O(n * m))."""
    T = type(elements) if not isinstance(elements, (bool, int, float)) else type(test_elements)
    for t in (elements, test_elements):
      if isinstance(t, T) and t.dtype == dtypes.bool or isinstance(t, bool):
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
      if not isinstance(t, (T, int, float)):
        raise TypeError(f"isin: expected tensors or numbers, got {type(t).__name__}")
    if not isinstance(elements, T) and not isinstance(test_elements, T):
      raise TypeError("isin: at least one of elements and test_elements must be a Tensor")
    if isinstance(test_elements, T):
      e = elements if isinstance(elements, T) else T(elements, device=test_elements.device)
      t = test_elements.reshape(-1)
      out = (e.reshape(*e.shape, 1) == t).any(-1) if t.shape[0] else e.full_like(False, dtype=dtypes.bool)
    else: out = elements == test_elements
    return out.logical_not() if invert else out

  def searchsorted(self: Tensor, values, *, out_int32: bool = False,  # type: ignore[misc]  # mixin
                   right: bool = False, side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """torch.searchsorted with self the sorted sequence (1-D, or N-D with values matching its leading dims): for
    each value the index where it would be inserted to keep the order (right/side='right': after equal elements).
    sorter (int64, self's shape) orders an unsorted self. Exactly torch's binary search (its NaN behaviour too),
    done lazily: log2(n) + 1 steps, each a gather for every value. int64 result (int32 with out_int32)."""
    Tensor = type(self)
    if side is not None:
      if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
      if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
      right = side == "right"
    if self.ndim == 0:
      raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    scalar = not isinstance(values, Tensor)
    v = Tensor(values, device=self.device) if scalar else values
    if self.dtype == dtypes.bool or v.dtype == dtypes.bool:
      raise NotImplementedError("searchsorted: not implemented for bool tensors (as in torch)")
    if self.ndim > 1 and (scalar or v.shape[:-1] != self.shape[:-1]):
      raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                         "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                         f"{list(self.shape)} and input value tensor {list(v.shape)}")
    seq = self
    if sorter is not None:
      if not isinstance(sorter, Tensor) or sorter.dtype.kind not in "iu":
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{getattr(sorter, 'dtype', type(sorter).__name__)}")
      if sorter.shape != self.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(self.shape)} and got sorter tensor {list(sorter.shape)}")
      check_index_range(sorter, self.shape[-1], lambda _: "torch.searchsorted(): sorter index out of range",
                        RuntimeError)
      seq = self._gather(self.ndim - 1, sorter)
    odt = dtypes.int32 if out_int32 else dtypes.int64
    n = seq.shape[-1]
    dt = least_upper_dtype(seq.dtype, v.dtype)
    seq, v = seq.detach().cast(dt), v.detach().cast(dt)
    if n == 0 or v.numel() == 0: return v.zeros_like(dtype=odt)
    vs = v.reshape(-1) if seq.ndim == 1 else v
    lo, hi = vs.zeros_like(dtype=dtypes.int32), vs.full_like(n, dtype=dtypes.int32)
    for _ in range(n.bit_length()):
      active = lo < hi
      mid = (lo + hi) // 2
      mv = seq._gather(seq.ndim - 1, mid.minimum(n - 1))
      go_right = (mv > vs).logical_not() if right else (mv >= vs).logical_not()
      lo = (active & go_right).where(mid + 1, lo)
      hi = (active & go_right.logical_not()).where(mid, hi)
    return lo.reshape(v.shape).cast(odt)

  def bucketize(self: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False):
    """torch.bucketize: for each element of self (a tensor or a number) the index of its bucket in the 1-D sorted
    `boundaries`: boundaries[i-1] < x <= boundaries[i] (right=True: boundaries[i-1] <= x < boundaries[i]); that is
    searchsorted(boundaries, self, right=right), a lazy binary search."""
    if not hasattr(boundaries, "ndim") or boundaries.ndim != 1:
      raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({getattr(boundaries, 'ndim', '?')})")
    return boundaries.searchsorted(self, out_int32=out_int32, right=right)

  # ***** counting *****

  def bincount(self: Tensor, weights: Tensor | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
               minlength: int = 0) -> Tensor:
    """torch.bincount: how often each value 0..max occurs in the 1-D non-negative integer self (at least minlength
    bins), int64; with weights, their sums per value (float32 for float32 weights, else float64, as torch). The
    number of bins depends on the values: this realizes self and reads its min and max (not possible on DEV=NULL);
    the counting stays lazy (every element meets every bin)."""
    Tensor = type(self)
    minlength = _int_arg(minlength, "minlength")
    if minlength < 0: raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    if self.dtype.kind not in "iu":
      if self.dtype.kind == "f": raise NotImplementedError(f"bincount: not implemented for {self.dtype} (as in torch)"
                                                           "; cast to an integer dtype")
      raise NotImplementedError(f"bincount: not implemented for {self.dtype} (as in torch); use .int()")
    if self.ndim != 1: raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (not isinstance(weights, Tensor) or weights.shape != self.shape):
      raise RuntimeError("weights should be 1-d and have the same length as input")
    n = self.shape[0]
    if n:
      a = self.numpy()
      if a.min() < 0: raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (found {a.min()})")
      L = max(int(a.max()) + 1, minlength)
    else: L = minlength
    odt = dtypes.int64 if weights is None else dtypes.float32 if weights.dtype == dtypes.float32 else dtypes.float64
    if n == 0 or L == 0: return Tensor.zeros(L, dtype=odt, device=self.device)
    hit = self.reshape(n, 1) == Tensor.arange(L, device=self.device).reshape(1, L)
    if weights is None: return hit.sum(0).cast(odt)
    return hit.where(weights.cast(odt).reshape(n, 1), 0).sum(0)

  def histc(self: Tensor, bins: int = 100, min=0, max=0) -> Tensor:  # type: ignore[misc]  # mixin
    """torch.histc: counts of the elements in `bins` equal-width bins over [min, max] (self's dtype; elements outside,
    and NaN, are ignored; the last bin includes max). min == max (the default): the data's min and max, widened by 1
    either side if equal (lazy: no read, except the check that they are finite, made where index checks read
    values: the CPU by default). Bins are picked as torch's CPU does, trunc((x - min) * bins / (max - min)) in
    self's dtype. Float16 counts are summed in float32 (torch's saturate at 2048 per bin). Not differentiable."""
    Tensor = type(self)
    bins = _int_arg(bins, "bins")
    if self.dtype.kind != "f": raise NotImplementedError(f"histc: not implemented for {self.dtype} (as in torch); "
                                                         "cast to a float dtype")
    if bins <= 0: raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins}")
    lo_s, hi_s = float(min), float(max)
    x = self.detach().reshape(-1)
    N = x.shape[0]
    if lo_s == hi_s and N:
      lo, hi = x.min(), x.max()
      check_index_range((lo.isfinite() & hi.isfinite()).logical_not().cast(dtypes.int32).reshape(1), 1,
                        lambda _: "torch.histc: range of the data is not finite (it holds inf or NaN); pass finite "
                        "min= and max=", RuntimeError)
      same = lo == hi
      lo, hi = same.where(lo.cast(dtypes.float64) - 1, lo.cast(dtypes.float64)).cast(self.dtype), \
        same.where(hi.cast(dtypes.float64) + 1, hi.cast(dtypes.float64)).cast(self.dtype)
    else:
      if lo_s == hi_s: lo_s, hi_s = lo_s - 1, hi_s + 1
      if not (math.isfinite(lo_s) and math.isfinite(hi_s)):
        raise RuntimeError(f"torch.histc: range of [{lo_s}, {hi_s}] is not finite")
      if lo_s > hi_s: raise RuntimeError(f"torch.histc: max must be larger than min, got min={min} and max={max}")
      lo = Tensor(lo_s, device=self.device, dtype=self.dtype)
      hi = Tensor(hi_s, device=self.device, dtype=self.dtype)
    if N == 0: return Tensor.zeros(bins, dtype=self.dtype, device=self.device)
    if self.dtype.itemsize <= 2:   # torch's half arithmetic: each op in float32, rounded back to the dtype
      def r(t): return t.cast(self.dtype).cast(dtypes.float32)
      lo32, hi32, x32 = lo.cast(dtypes.float32), hi.cast(dtypes.float32), x.cast(dtypes.float32)
      q = r(r(r(x32 - lo32) * r(Tensor(float(bins), device=self.device))) / r(hi32 - lo32))
    else: q = (x - lo) * bins / (hi - lo)
    pos = q.cast(dtypes.int32)
    pos = (pos == bins).where(bins - 1, pos)
    ok = (x >= lo) & (x <= hi)
    hit = ok.reshape(N, 1) & (pos.reshape(N, 1) == Tensor.arange(bins, device=self.device).reshape(1, bins))
    return hit.sum(0).cast(self.dtype)

  # ***** splitting *****

  def tensor_split(self: Tensor, indices_or_sections=None, dim: int = 0, *,  # type: ignore[misc]  # mixin
                   sections=None, indices=None) -> tuple[Tensor, ...]:
    """torch.tensor_split: views along dim. An int n: n pieces, the first size % n one longer; a list of indices:
    pieces between them (clamped to the dim; out of order gives empty pieces). A 0-d int tensor is a section count,
    a 1-D one a list of indices (read from it)."""
    Tensor = type(self)
    given = [a for a in (indices_or_sections, sections, indices) if a is not None]
    if len(given) != 1:
      raise TypeError("tensor_split: pass exactly one of indices_or_sections, sections= or indices=")
    arg = given[0]
    if self.ndim == 0:
      raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _dim(dim, self.ndim)
    if isinstance(arg, Tensor):
      if arg.dtype.kind not in "iu":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{arg.dtype}")
      if arg.ndim > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {arg.ndim} dims")
      arg = int(arg.item()) if arg.ndim == 0 else [int(v) for v in arg.numpy().reshape(-1)]
    n = self.shape[d]
    if is_int(arg) and not isinstance(arg, bool):
      s = int(arg)
      if s <= 0: raise RuntimeError(f"number of sections must be larger than 0, got {s}")
      q, r = divmod(n, s)
      bounds, off = [], 0
      for i in range(s):
        size = q + (1 if i < r else 0)
        bounds.append((off, off + size))
        off += size
    elif isinstance(arg, (list, tuple)) and all(is_int(v) and not isinstance(v, bool) for v in arg):
      cuts = [int(v) for v in arg]
      starts = [0] + cuts
      ends = cuts + [n]
      def clamp(v: int) -> int: return min(max(v + n if v < 0 else v, 0), n)
      bounds = [(clamp(a), max(clamp(a), clamp(b))) for a, b in zip(starts, ends)]
    else:
      raise TypeError(f"tensor_split: indices_or_sections must be an int, a list of ints or an integer tensor, got "
                      f"{arg!r}")
    return tuple(self.shrink(tuple((a, b) if i == d else None for i in range(self.ndim))) for a, b in bounds)

  def _nsplit(self: Tensor, arg, dim: int, need: int, name: str) -> tuple[Tensor, ...]:  # type: ignore[misc]
    if self.ndim < need:
      raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                         f"{self.ndim} dimensions!")
    if is_int(arg) and not isinstance(arg, bool):
      n = self.shape[dim]
      if arg == 0 or n % arg:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{n} is not divisible by the split_size {arg}!")
    return self.tensor_split(arg, dim)
  def hsplit(self: Tensor, indices_or_sections) -> tuple[Tensor, ...]:  # type: ignore[misc]  # mixin
    """torch.hsplit: tensor_split along dim 1 (dim 0 for a 1-D tensor); an int must divide the dim's size."""
    return self._nsplit(indices_or_sections, 1 if self.ndim >= 2 else 0, 1, "hsplit")
  def vsplit(self: Tensor, indices_or_sections) -> tuple[Tensor, ...]:  # type: ignore[misc]  # mixin
    """torch.vsplit: tensor_split along dim 0 of a tensor of at least 2 dims; an int must divide the dim's size."""
    return self._nsplit(indices_or_sections, 0, 2, "vsplit")
  def dsplit(self: Tensor, indices_or_sections) -> tuple[Tensor, ...]:  # type: ignore[misc]  # mixin
    """torch.dsplit: tensor_split along dim 2 of a tensor of at least 3 dims; an int must divide the dim's size."""
    return self._nsplit(indices_or_sections, 2, 3, "dsplit")

  def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2,  # type: ignore[misc]  # mixin: self is a Tensor
                 dim2: int = -1) -> Tensor:
    """torch.diag_embed: a tensor of one more dim whose diagonal (offset above it if > 0, below if < 0) in the plane
    of dim1 and dim2 (of the output) holds self's last dim; zeros elsewhere. A new tensor."""
    offset = _int_arg(offset, "offset")
    nd = self.ndim + 1
    d1, d2 = _dim(dim1, nd, "dim1"), _dim(dim2, nd, "dim2")
    if d1 == d2: raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    lead, n = self.shape[:-1], self.shape[-1]
    z = tuple((0, 0) for _ in lead)
    # (..., n) -> (..., n, n + 1) with n zeros after each element -> flattened, cut to n * n: a diagonal matrix
    x = self.reshape(*lead, n, 1).pad(z + ((0, 0), (0, n))).reshape(*lead, n * (n + 1))
    x = x.shrink(tuple(None for _ in lead) + ((0, n * n),)).reshape(*lead, n, n)
    a = abs(offset)
    x = x.pad(z + (((0, a), (a, 0)) if offset >= 0 else ((a, 0), (0, a))))
    rest = iter(range(len(lead)))
    order = [len(lead) if i == d1 else len(lead) + 1 if i == d2 else next(rest) for i in range(nd)]
    return x.permute(*order).contiguous()

  # ***** quantiles, extremes, histograms and structure in torch's names *****

  def quantile(self: Tensor, q, dim: int | None = None, keepdim: bool = False, *,  # type: ignore[misc]  # mixin
               interpolation: str = "linear") -> Tensor:
    """torch.quantile: the q-th quantiles (q a float or a 0-d/1-D tensor of self's dtype, in [0, 1]) along dim (all
    elements when None), from a sort: rank q * (n - 1) read by `interpolation` (linear, lower, higher, midpoint or
    nearest, which rounds half to even as torch). A 1-D q adds a leading dim of its length. A slice holding NaN gives
    NaN. float32/float64 only, as torch. Differentiable through the sort's gather, and for a tensor q through the
    interpolation weights, as torch; a tensor q's range is checked where index checks read values (the CPU by
    default)."""
    return _quantile(self, q, dim, keepdim, interpolation, False)
  def nanquantile(self: Tensor, q, dim: int | None = None, keepdim: bool = False, *,  # type: ignore[misc]  # mixin
                  interpolation: str = "linear") -> Tensor:
    """torch.nanquantile: quantile ignoring NaN (the rank is q * (count of non-NaN - 1)); an all-NaN slice gives
    NaN."""
    return _quantile(self, q, dim, keepdim, interpolation, True)

  def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:  # type: ignore[misc]  # mixin
    """torch.aminmax: (min, max), amin and amax over dim (every element when None); NaN propagates; the gradient is
    split evenly among ties, as amin/amax. An empty reduction raises, as torch."""
    if dim is None:
      if self.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           f"identity; the input has shape {tuple(self.shape)}")
      mn, mx = self.amin(), self.amax()
      if keepdim: mn, mx = mn.reshape((1,) * self.ndim), mx.reshape((1,) * self.ndim)
      return MinMax(mn, mx)
    d = _dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 0:
      raise IndexError(f"aminmax(): expected reduction dim {d} to have non-zero size (shape {tuple(self.shape)}): the "
                       "operation has no identity")
    if self.ndim == 0: return MinMax(self.clone(), self.clone())
    return MinMax(self.amin(d, keepdim=keepdim), self.amax(d, keepdim=keepdim))

  def histogram(self: Tensor, bins=100, *, range=None, weight: Tensor | None = None,  # type: ignore[misc]  # mixin
                density: bool = False) -> HistEdges:
    """torch.histogram: (hist, bin_edges) of self's elements. bins is a count (equal-width bins over `range`, or the
    data's min and max, widened by 0.5 either side when equal: lazy, no read except the finiteness check, made where
    index checks read values) or a 1-D tensor of edges. Bins are half-open but the last includes its right edge;
    elements outside (and NaN) are dropped. `weight` (self's shape) sums weights instead of counting; density divides
    by the total and the bin widths. float32/float64 only, as torch. Not differentiable."""
    T = type(self)
    if self.dtype not in (dtypes.float32, dtypes.float64):
      raise NotImplementedError(f"histogram: not implemented for {self.dtype.name} (torch neither): use a float32 or "
                                "float64 tensor")
    x = self.detach().reshape(-1)
    if isinstance(bins, T):
      if bins.ndim != 1 or bins.shape[0] < 1:
        raise RuntimeError(f"torch.histogram(): bins must be a 1-D tensor of at least one edge, got shape "
                           f"{tuple(bins.shape)}")
      if bins.dtype != self.dtype:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensor should have the same dtype, got "
                           f"{self.dtype.name} and {bins.dtype.name}")
      edges = bins.detach()
    else:
      nb = _int_arg(bins, "bins")
      if nb <= 0: raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nb}")
      if range is not None:
        lo_s, hi_s = (float(v) for v in range)
        if not (math.isfinite(lo_s) and math.isfinite(hi_s)):
          raise RuntimeError(f"torch.histogram: range of [{lo_s}, {hi_s}] is not finite")
        if lo_s > hi_s: raise RuntimeError(f"torch.histogram: min should not exceed max, but got min {lo_s} max {hi_s}")
        lo, hi = T(lo_s, device=self.device, dtype=self.dtype), T(hi_s, device=self.device, dtype=self.dtype)
      elif x.shape[0] == 0:
        lo, hi = T(0.0, device=self.device, dtype=self.dtype), T(1.0, device=self.device, dtype=self.dtype)
      else:
        lo, hi = x.min(), x.max()
        check_index_range((lo.isfinite() & hi.isfinite()).logical_not().cast(dtypes.int32).reshape(1), 1,
                          lambda _: "torch.histogram: the range of the data is not finite (it holds inf or NaN); "
                          "pass a finite range=", RuntimeError)
      same = lo == hi
      lo, hi = same.where(lo - 0.5, lo), same.where(hi + 0.5, hi)
      # torch's linspace: the first half counted up from lo, the second down from hi (the last edge is exactly hi)
      i = T.arange(nb + 1, device=self.device).cast(self.dtype)
      step = (hi - lo) / nb
      edges = (i < (nb + 1) // 2).where(lo + i * step, hi - (nb - i) * step)
    nb = edges.shape[0] - 1
    if weight is not None:
      if not isinstance(weight, T) or tuple(weight.shape) != tuple(self.shape) or weight.dtype != self.dtype:
        raise RuntimeError("torch.histogram: weight must be a tensor of the input's shape and dtype, got "
                           f"{getattr(weight, 'shape', type(weight).__name__)}")
    if nb == 0 or x.shape[0] == 0:
      return HistEdges(T.zeros(nb, dtype=self.dtype, device=self.device), edges)
    n = x.shape[0]
    xs = x.reshape(n, 1)
    left, right = edges[:-1].reshape(1, nb), edges[1:].reshape(1, nb)
    last = T.arange(nb, device=self.device).reshape(1, nb) == nb - 1
    hit = (xs >= left) & ((xs < right) | (last & (xs == right)))
    hist = hit.where(weight.detach().reshape(n, 1), 0.0).sum(0) if weight is not None else \
      hit.sum(0).cast(self.dtype)
    if density: hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return HistEdges(hist, edges)

  def combinations(self: Tensor, r: int = 2,  # type: ignore[misc]  # mixin: self is a Tensor
                   with_replacement: bool = False) -> Tensor:
    """torch.combinations (also Tensor.combinations(t)): every length-r combination of the elements of a 1-D tensor,
    (count, r) in lexicographic order of positions (with_replacement: itertools' combinations_with_replacement);
    r = 0 gives an empty 1-D tensor. A gather of self: differentiable."""
    r = _int_arg(r, "r")
    if self.ndim != 1: raise RuntimeError(f"combinations: expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0: raise RuntimeError(f"combinations: expect a non-negative number for r, but got {r}")
    if r == 0: return self[:0].contiguous()
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(builtins.range(self.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.shape[0] == 0: return self[:0].reshape(0, 1).expand(0, r).contiguous()
    it = type(self)(idx.reshape(-1), device=self.device)
    return self._gather(0, it).reshape(idx.shape[0], r)

  def vander(self: Tensor, N: int | None = None,  # type: ignore[misc]  # mixin: self is a Tensor
             increasing: bool = False) -> Tensor:
    """torch.vander: the Vandermonde matrix of a 1-D tensor, (n, N) with columns x**(N-1) ... x**0 (increasing: the
    other way); N defaults to n. Integer and bool inputs give int64 (wrapping on overflow), as torch. Powers by
    running products."""
    if self.ndim != 1: raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(self.shape)}")
    n = self.shape[0]
    N = n if N is None else _int_arg(N, "N")
    if N < 0: raise RuntimeError(f"vander: N must be non-negative, got {N}")
    x = self if self.dtype.kind == "f" else self.cast(dtypes.int64)
    if N == 0: return x.reshape(n, 1)[:, :0].contiguous()
    cols = [x.ones_like().reshape(n, 1)]
    for _ in builtins.range(N - 1): cols.append(cols[-1] * x.reshape(n, 1))
    out = cols[0].cat(*cols[1:], dim=1) if N > 1 else cols[0]
    return out if increasing else out.flip(1)

  def diagflat(self: Tensor, offset: int = 0) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.diagflat: self flattened, on diagonal `offset` of a new square matrix."""
    return self.reshape(-1).diag(_int_arg(offset, "offset"))
  def fliplr(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.fliplr: flip(1), for tensors of at least 2 dims (a new tensor)."""
    if self.ndim < 2: raise RuntimeError(f"fliplr: input must be >= 2-d, got shape {tuple(self.shape)}")
    return self.flip(1)
  def flipud(self: Tensor) -> Tensor:  # type: ignore[misc]  # mixin: self is a Tensor
    """torch.flipud: flip(0), for tensors of at least 1 dim (a new tensor)."""
    if self.ndim < 1: raise RuntimeError("flipud: input must be >= 1-d, got a 0-d tensor")
    return self.flip(0)

  # (torch has these as functions only; reached through a tensor, x.block_diag(y), the tensor is the first operand:
  # a plain staticmethod dropped it silently)
  meshgrid = _static_or_bound(meshgrid)
  cartesian_prod = _static_or_bound(cartesian_prod)
  block_diag = _static_or_bound(block_diag)
  tril_indices: Any = classmethod(tril_indices)   # (classmethods: Tensor.tril_indices(3, 3) reaches the Tensor class)
  triu_indices: Any = classmethod(triu_indices)

def _median(x: Tensor, dim, keepdim: bool, ignore_nan: bool) -> Tensor | ValuesIndices:
  name = "nanmedian" if ignore_nan else "median"
  if x.dtype == dtypes.bool: raise RuntimeError(f"{name}: not implemented for bool input (as in torch); cast it first")
  if dim is None:
    flat = x.reshape(-1)
    if flat.shape[0] == 0: return x.sum().cast(x.dtype if x.dtype.kind == "f" else dtypes.float32) * float("nan")
    m = _median(flat, 0, False, ignore_nan).values  # type: ignore[union-attr]  # an int dim gives ValuesIndices
    if x.dtype.kind != "f": return m
    # torch splits the gradient evenly among the elements equal to the median (a NaN median: among the NaNs): m + the
    # mean of (x - m) over them is m
    hit = (flat == m.detach()) | (flat.isnan() & m.detach().isnan())
    return m.detach() + hit.where(flat - m.detach(), 0.0).sum() / hit.sum().maximum(1).cast(x.dtype)
  d = _dim(dim, x.ndim)
  if x.ndim == 0: return ValuesIndices(x.clone(), x.zeros_like(dtype=dtypes.int64))
  n = x.shape[d]
  if n == 0:
    raise IndexError(f"{name}(): expected reduction dim {d} to have non-zero size (shape {x.shape}); pass a non-empty "
                     "dim or dim=None")
  idx = x.sort(d).indices   # NaN sorts last
  # the number of non-NaN values in each slice: the position of the first NaN in the sorted order
  cnt = x.isnan().logical_not().sum(d, keepdim=True) if x.dtype.kind == "f" else None
  if cnt is None: pos: Tensor | int = (n - 1) // 2
  elif ignore_nan: pos = (cnt > 0).where((cnt - 1) // 2, (n - 1) // 2)   # an all-NaN slice: torch's middle index
  else: pos = (cnt < n).where(cnt, (n - 1) // 2)
  shape = tuple(1 if i == d else s for i, s in enumerate(x.shape))
  p = pos if isinstance(pos, type(x)) else type(x).full(shape, pos, dtype=dtypes.int64, device=x.device)
  i = idx._gather(d, p.cast(dtypes.int64))
  v = x._gather(d, i)
  return ValuesIndices(v, i) if keepdim else ValuesIndices(v.squeeze(d), i.squeeze(d))

def _scalar_for(value, dtype: DType):
  """A Python scalar converted as torch converts a fill value for a tensor of dtype (floats truncate into ints)."""
  if isinstance(value, np.generic): value = value.item()
  if not isinstance(value, (bool, int, float)):
    raise TypeError(f"fill value must be a number or a 0-d tensor, got {value!r}")
  if dtype == dtypes.bool: return bool(value)
  if dtype.kind in "iu": return int(value)
  return float(value)

# ---------------------------------------------------------------- index_* helpers

def _index_vector(index, fn: str, size: int, dim: int, negative: bool = False,
                  err: type[Exception] = IndexError) -> Tensor:
  """index as a 1-D integer tensor (a 0-d one is one position), its values checked against [0, size) ([-size, size)
  and wrapped, with negative=True)."""
  if not hasattr(index, "dtype") or not hasattr(index, "uop"):
    raise TypeError(f"{fn}: index must be an integer tensor, got {type(index).__name__}")
  if index.dtype.kind not in "iu":
    raise RuntimeError(f"{fn}(): Expected an integer dtype (int32/int64) for index but got: {index.dtype}")
  if index.ndim > 1:
    raise IndexError(f"{fn}(): Index is supposed to be a vector, but got dim: {index.ndim} with shape "
                     f"{list(index.shape)}; flatten it or index one dim at a time")
  idx = index.reshape(-1)
  lo = -size if negative else 0
  check_index_range(idx, size, f"{fn}(): index", err, dim=dim, negative=negative,
                    hint=f"indices must be in [{lo}, {size})" + ("" if negative else "; negative ones are not wrapped"))
  return (idx < 0).where(idx + size, idx) if negative else idx

def _index_parts(self: Tensor, fn: str, dim, index, source, err: type[Exception]) -> tuple[Tensor, int, Tensor, Tensor]:
  """index_add/index_copy's checks (torch's, with its exception types): (self as >= 1-D, dim, 1-D index, source)."""
  Tensor = type(self)
  x = self.reshape(1) if self.ndim == 0 else self
  d = _dim(dim, self.ndim)
  if not isinstance(source, Tensor): raise TypeError(f"{fn}: source must be a Tensor, got {type(source).__name__}")
  idx = _index_vector(index, fn, x.shape[d], d, err=err)
  if source.dtype != self.dtype:
    raise RuntimeError(f"{fn}_(): self ({self.dtype}) and source ({source.dtype}) must have the same scalar type; cast "
                       f"source with .cast({self.dtype})")
  src = source.reshape(1) if source.ndim == 0 and x.ndim == 1 else source
  k = idx.shape[0]
  if src.ndim != x.ndim:
    raise IndexError(f"{fn}_(): source ({list(source.shape)}) and self ({list(self.shape)}) must have the same number "
                     "of dimensions (or both be scalars)")
  if src.shape[d] != k:
    raise err(f"{fn}_(): Number of indices ({k}) should be equal to source.size(dim) ({src.shape[d]}), for dim: {d}")
  if any(a != b for i, (a, b) in enumerate(zip(src.shape, x.shape)) if i != d):
    raise RuntimeError(f"{fn}_(): source tensor shape must match self tensor shape, excluding the specified dimension. "
                       f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
  return x, d, idx, src

def _hits(idx: Tensor, n: int) -> Tensor:
  """(n, k) bool: hit[j, r] is whether index r names position j."""
  k = idx.shape[0]
  return idx.reshape(1, k) == type(idx).arange(n, device=idx.device).reshape(n, 1)

def _at(t: Tensor, d: int, ndim: int, extra: int = 0) -> Tensor:
  """t (its dims first) reshaped to sit at dim d of an ndim-dim tensor, ones elsewhere (t has 1 + extra dims)."""
  return t.reshape(*[1] * d, *t.shape, *[1] * (ndim - d - 1 - extra))

def _untouched(x: Tensor, src: Tensor) -> Tensor:
  """x unchanged by an empty index, as a new tensor that still depends on src (empty: its sum is 0, and x - 0 keeps
  every value, -0.0 included), so the result requires grad and src gets its (empty) gradient, as torch."""
  if src.requires_grad and x.dtype.kind == "f": return x - src.sum().cast(x.dtype)
  return x.clone()

def _index_add(x: Tensor, d: int, idx: Tensor, src: Tensor, alpha) -> Tensor:
  """x + alpha * (src's slices along d summed into the positions idx names); every output element sums over idx."""
  k = idx.shape[0]
  if k == 0: return _untouched(x, src)
  hit = _at(_hits(idx, x.shape[d]), d, x.ndim + 1, 1)
  total = hit.where(src.unsqueeze(d), 0).sum(d + 1)
  if x.dtype == dtypes.bool: return x | (total != 0)
  a = _scalar_for(alpha, x.dtype)
  add = total.cast(x.dtype)
  return (x + (add * a if a != 1 else add)).cast(x.dtype)

def _index_copy(x: Tensor, d: int, idx: Tensor, src: Tensor) -> Tensor:
  """x with src's slices along d at the positions idx names; the last of duplicates wins (found per position, then
  read by a gather: exact, and its gradient goes to the winning slice)."""
  k, n = idx.shape[0], x.shape[d]
  if k == 0: return _untouched(x, src)
  last = _hits(idx, n).where(type(x).arange(1, k + 1, device=x.device).reshape(1, k), 0).max(1)
  win = _at((last - 1).maximum(0), d, x.ndim).expand(*x.shape)
  return _at(last > 0, d, x.ndim).where(src._gather(d, win), x)

def _flat_positions(self: Tensor, indices: tuple, fn: str) -> tuple[Tensor, tuple[int, ...], int]:
  """index_put's index tensors (bool ones expanded by nonzero) -> (the row-major position of each indexed element
  within self's first m dims, shaped as the indices broadcast together; that shape; m)."""
  T = type(self)
  ts: list[Tensor] = []
  for i, t in enumerate(indices):
    if not isinstance(t, T):
      raise TypeError(f"{fn}: expected Tensor as element {i} in indices, but got {type(t).__name__} (None and slices "
                      "are not index_put indices; use t[...] = v)")
    if t.dtype == dtypes.bool:
      j = len(ts)
      if t.ndim == 0 or tuple(t.shape) != tuple(self.shape[j:j + t.ndim]):
        raise IndexError(f"{fn}: the shape of the mask {list(t.shape)} at index {i} does not match the shape of the "
                         f"indexed tensor {list(self.shape)} at dim {j}")
      ts.extend(t.nonzero(as_tuple=True))  # type: ignore[arg-type]  # as_tuple=True gives a tuple
    elif t.dtype.kind in "iu": ts.append(t)
    else: raise IndexError(f"{fn}: tensors used as indices must be long, int, byte or bool tensors, got {t.dtype}")
  m = len(ts)
  if m == 0: raise RuntimeError(f"{fn}: indices must hold at least one index tensor")
  if m > self.ndim: raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {m})")
  try: bshape = broadcast_shape(*[tuple(t.shape) for t in ts])
  except ValueError:
    raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                     + ", ".join(str(list(t.shape)) for t in ts)) from None
  P = int(np.prod(self.shape[:m], dtype=np.int64))
  idt = dtypes.int64 if P >= 1 << 31 else dtypes.int32
  lin: Tensor | None = None
  stride = P
  for j, t in enumerate(ts):
    s = self.shape[j]
    stride //= max(s, 1)
    check_index_range(t, s, "index", IndexError, dim=j, negative=True, hint=f"indices must be in [{-s}, {s})")
    t = t.cast(idt)
    term = (t < 0).where(t + s, t) * stride
    lin = term if lin is None else lin + term
  assert lin is not None
  return lin._broadcast_to(bshape), bshape, m

def _flat_index(self: Tensor, index, fn: str) -> Tensor:
  """take/put's index: any shape, positions in self seen flattened, checked and wrapped (negative from the end)."""
  Tensor = type(self)
  if not isinstance(index, Tensor):
    raise TypeError(f"{fn}: index must be an integer tensor, got {type(index).__name__}")
  if index.dtype.kind not in "iu": raise RuntimeError(f"{fn}(): Expected an integer tensor for index, but got "
                                                      f"{index.dtype}")
  n = self.numel()
  if n == 0 and index.numel():
    raise IndexError(f"{fn}(): tried to take from an empty tensor (index has {index.numel()} elements)")
  check_index_range(index, n, lambda v: f"{fn}(): out of range: tried to access index {v} on a tensor of {n} "
                    "elements.", IndexError, negative=True)
  return (index < 0).where(index + n, index)

def _fill_value(self: Tensor, value, fn: str) -> Tensor:
  Tensor = type(self)
  if isinstance(value, Tensor):
    if value.ndim != 0:
      raise RuntimeError(f"{fn}_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                         "dimension(s)")
    return value.cast(self.dtype)
  return Tensor(_scalar_for(value, self.dtype), device=self.device, dtype=self.dtype)

def _mask_fits(self: Tensor, mask, fn: str) -> None:
  if isinstance(mask, type(self)) and not broadcasts_to(tuple(mask.shape), tuple(self.shape)):
    raise RuntimeError(f"{fn}: the mask's shape {list(mask.shape)} does not broadcast to the tensor's shape "
                       f"{list(self.shape)} (an in-place op cannot change self's shape); use {fn[:-1]}, out of place")

def _same_dtype(self: Tensor, src, fn: str) -> None:
  if isinstance(src, type(self)) and src.dtype != self.dtype:
    raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype, got {self.dtype} and {src.dtype}; cast "
                       f"src with .cast({self.dtype})")
