"""Sorting, selection and structure ops with torch's names and semantics, built only from other Tensor ops.

`class Tensor(SelectMixin, NNMixin)` inherits these, so `self` is always a Tensor; they reach the Tensor class as
`type(self)` (tensor.py imports this module, so this module never imports tensor.py). Everything stays lazy and
differentiable, except `masked_select`, `nonzero`, `unique` and `unique_consecutive`, whose output shape depends on the
values: they realize and read what decides it (unique's outputs are not differentiable, as in torch).

Sorting (`sort`, `argsort`, `topk`) is a bitonic sorting network over the sorted dim padded to a power of two: each of
its log2(n)*(log2(n)+1)/2 stages is one elementwise kernel in which every element meets its partner (the same view
flipped) and keeps the one that comes first or last. Elements are compared by an integer key (the value's order, NaN
largest) with the original index as the tie-break, so the result is always stable, which torch allows for any
`stable`. Keys of up to 32 bits travel packed with the index in one int64. The values are then read at the sorted
indices (a gather), which is also the gradient's path back to the picked positions.
"""
from __future__ import annotations
from collections import namedtuple
from typing import TYPE_CHECKING, Callable
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import broadcast_shape, is_int
from teeny.uop.ops import Ops

if TYPE_CHECKING:
  from teeny.tensor import Tensor

# torch.return_types.sort / topk / cummax / cummin: a tuple that also has .values and .indices
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])

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

  meshgrid = staticmethod(meshgrid)
  cartesian_prod = staticmethod(cartesian_prod)

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
