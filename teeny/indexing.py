"""__getitem__ / __setitem__: ints, slices (any step), None, ..., and integer tensors (numpy's advanced indexing)."""
from __future__ import annotations
from typing import Any, Callable
import numpy as np
from teeny.device import Device
from teeny.dtype import dtypes
from teeny.helpers import CHECK_INDICES, broadcast_shape, broadcasts_to, prod
from teeny.uop.ops import Ops, UOp

def _address(u: UOp, root: UOp, idx: list[int]) -> int | None:
  """The row-major position in `root` that element `idx` of the view `u` (movement ops over root) reads; None for a
  position a PAD made (it has no address)."""
  while u is not root:
    op, arg, ins = u.op, u.arg, u.src[0].shape
    if op is Ops.RESHAPE:
      flat = 0
      for i, s in zip(idx, u.shape): flat = flat * s + i
      idx = [0] * len(ins)
      for k in range(len(ins) - 1, -1, -1): flat, idx[k] = divmod(flat, ins[k])
    elif op is Ops.PERMUTE:
      out = [0] * len(arg)
      for k, a in enumerate(arg): out[a] = idx[k]
      idx = out
    elif op is Ops.EXPAND: idx = [0 if s == 1 else i for i, s in zip(idx, ins)]
    elif op is Ops.SHRINK: idx = [i + b for i, (b, _) in zip(idx, arg)]
    elif op is Ops.FLIP: idx = [s - 1 - i if k in arg else i for k, (i, s) in enumerate(zip(idx, ins))]
    elif op is Ops.PAD:
      idx = [i - b for i, (b, _) in zip(idx, arg)]
      if any(not 0 <= i < s for i, s in zip(idx, ins)): return None
    elif op is Ops.WINDOW:
      k_, s_, d_ = arg
      n, lead = len(k_), len(ins) - len(k_)
      idx = idx[:lead] + [idx[lead + w] * s_[w] + idx[lead + n + w] * d_[w] for w in range(n)]
    elif op is not Ops.DETACH: return None   # (not a view of root)
    u = u.src[0]
  flat = 0
  for i, s in zip(idx, root.shape): flat = flat * s + i
  return flat

def view_strides(u: UOp, root: UOp) -> tuple[int, ...] | None:
  """The strides (in elements of root, row-major) of the view `u` (movement ops and DETACHes over root) if every
  element has an address, else None. Every view a tensor holds is strided (torch's layout: basic indexing, permute,
  expand, a reshape that strides express...), so the steps from element 0 along each dim are its strides."""
  shape = u.shape
  if not all(isinstance(s, int) for s in shape) or not all(isinstance(s, int) for s in root.shape): return None
  zero = [0] * len(shape)
  if 0 in shape: return tuple(zero)   # (no elements: any strides)
  if (a0 := _address(u, root, zero)) is None: return None
  out = []
  for d, s in enumerate(shape):
    if s <= 1:
      out.append(0)
      continue
    step = list(zero)
    step[d] = 1
    if (a := _address(u, root, step)) is None: return None
    out.append(a - a0)
  return tuple(out)

def view_offset(u: UOp, root: UOp) -> int | None:
  """The row-major position in `root` of the view `u`'s first element (torch's storage_offset), None where it has
  none (padding, symbolic sizes)."""
  if not all(isinstance(s, int) for s in u.shape) or not all(isinstance(s, int) for s in root.shape): return None
  return _address(u, root, [0] * len(u.shape))

def reshape_keeps_strides(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> bool:
  """Can elements at `strides` be seen in `new_shape` (row-major order) with strides too, as torch's reshape needs to
  return a view? Each run of dims that is contiguous with the next (stride = next stride * next size) may be split
  or merged freely; a new dim must not span two runs."""
  if prod(shape) == 0: return True
  dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
  runs: list[int] = []   # the total size of each run of dims that merge
  for k, (s, st) in enumerate(dims):
    if k and dims[k - 1][1] == st * s: runs[-1] *= s
    else: runs.append(s)
  left = 1   # what is left of the current run for the next new dims
  r = 0
  for n in new_shape:
    if n == 1: continue
    if left == 1:
      if r == len(runs): return False
      left, r = runs[r], r + 1
    if left % n: return False
    left //= n
  return left == 1 and r == len(runs)

def _reads_allowed(device: str) -> bool:
  """May an index check read the index's values from `device`? The CPU yes (its memory is the host's) unless
  TEENY_CHECK_INDICES=0; GPUs only with TEENY_CHECK_INDICES=1 (the read is a sync); NULL never (it holds no data)."""
  mode = int(CHECK_INDICES)
  dev = Device[device]
  if mode == 0 or dev.runs_nothing: return False
  if mode > 0: return True
  r = dev.renderer
  return not (getattr(r, "is_gpu", False) or getattr(r, "lang", "C") != "C")

def check_index_range(index, size: int, what: str | Callable[[int], str] = "index", err: type[Exception] = IndexError,
                      *, dim: int = 0, negative: bool = False, ignore: int | None = None, hint: str = "") -> None:
  """Raise `err` if an integer tensor `index` holds a value outside [0, size) ([-size, size) with negative=True); values
  equal to `ignore` (a loss's ignore_index) are allowed.

  The message is `what(value)`, or for a string "{what} {value} is out of bounds for dimension {dim} with size {size}",
  then `hint` in parentheses. Free when the values' range is known on the host (Tensor.host_range: ids and labels made
  from host data); otherwise the index is realized and read, where _reads_allowed says so (the CPU, by default). Where
  nothing is checked, kernels mask out-of-range indices: reads give 0, nothing is read or written outside a buffer."""
  if index.numel() == 0 or CHECK_INDICES == 0: return
  lo, hi = (-size if negative else 0), size - 1
  def bad(mn: int, mx: int) -> int | None:
    """The offending value if min/max prove one, else None."""
    if mx > hi and mx != ignore: return mx
    if mn < lo and mn != ignore: return mn
    return None
  hr = index.host_range()
  if hr is not None:
    if lo <= hr[0] and hr[1] <= hi: return
    v = bad(*hr)
  if hr is None or v is None:  # unknown, or only ignore_index lies outside: read the values
    if not _reads_allowed(index.device): return
    vals = index.realize().numpy().reshape(-1)
    if ignore is not None: vals = vals[vals != ignore]
    if vals.size == 0: return
    v = bad(int(vals.min()), int(vals.max()))
    if v is None: return
  msg = what(v) if callable(what) else f"{what} {v} is out of bounds for dimension {dim} with size {size}"
  raise err(f"{msg} ({hint})" if hint else msg)

def _normalize(t, indices) -> list:
  Tensor = type(t)
  if not isinstance(indices, tuple): indices = (indices,)
  out = []
  for i in indices:
    if isinstance(i, (list, np.ndarray)) and not isinstance(i, bool): i = Tensor(np.asarray(i), device=t.device)
    if isinstance(i, Tensor) and i.dtype == dtypes.bool:
      raise NotImplementedError(
        "a boolean mask is supported alone (t[mask], t[mask] = value), not combined with other indices; index with "
        "mask.nonzero(as_tuple=True) instead, or use mask.where(a, b) / t.masked_fill(mask, value)")
    if isinstance(i, Tensor) and i.dtype.kind not in "iu":
      raise IndexError(f"tensors used as indices must be integer, got {i.dtype}")
    if not (i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice, Tensor))) or isinstance(i, bool):
      raise IndexError(f"unsupported index {i!r}: use ints, slices, None, ... or integer tensors")
    out.append(int(i) if isinstance(i, np.integer) else i)
  n_ell = sum(1 for i in out if i is Ellipsis)
  if n_ell > 1: raise IndexError("an index can only have a single ellipsis ('...')")
  consumed = sum(1 for i in out if i is not None and i is not Ellipsis)
  if consumed > t.ndim: raise IndexError(f"too many indices for tensor of dimension {t.ndim} (shape {t.shape})")
  if n_ell:
    k = next(j for j, i in enumerate(out) if i is Ellipsis)
    out = out[:k] + [slice(None)] * (t.ndim - consumed) + out[k + 1:]
  else: out = out + [slice(None)] * (t.ndim - consumed)
  return out

def getitem(t, indices):
  if (mask := _bool_mask(t, indices)) is not None:
    # (torch's t[mask]: the selected elements, or sub-tensors for a mask of fewer dims, in row-major order. How many
    # there are depends on the mask's values: it is realized and read, as masked_select does; the gather stays lazy)
    _check_mask(t, mask)
    return getitem(t, mask.nonzero(as_tuple=True))
  idx = _normalize(t, indices)
  x = t
  # basic indexing: one pass over dims, keeping track of which output dim each tensor index lands on
  dim = 0
  shrink, flips, steps, final_shape = [], [], [], []
  for i in idx:
    if i is None:
      final_shape.append(("new",))
      continue
    s = t.shape[dim]
    if isinstance(i, int):
      j = i + s if i < 0 else i
      if not 0 <= j < s: raise IndexError(f"index {i} is out of bounds for dim {dim} with size {s}")
      shrink.append((j, j + 1)); flips.append(False); steps.append(1); final_shape.append(("drop",))
    elif isinstance(i, slice):
      start, stop, step = i.indices(s)
      if step > 0: n = max(0, -(-(stop - start) // step)); b, e = start, start + (n - 1) * step + 1 if n else start
      else: n = max(0, -(-(start - stop) // -step)); b, e = (start + (n - 1) * step, start + 1) if n else (0, 0)
      shrink.append((b, e)); flips.append(step < 0); steps.append(abs(step)); final_shape.append(("keep", n))
    else:
      check_index_range(i, s, dim=dim, negative=True, hint=f"tensor indices must be in [{-s}, {s})")
      shrink.append((0, s)); flips.append(False); steps.append(1); final_shape.append(("tensor", i))
    dim += 1
  # (views throughout, built on the UOps: Tensor.flip and Tensor.pad make new tensors, as torch's do, and a strided
  # slice's intermediate reshapes are no views in torch's sense, though the slice is)
  x = x.shrink(tuple(shrink)) if shrink else x
  if any(flips): x = x._view(x.uop.flip(tuple(d for d, f in enumerate(flips) if f)))
  if any(s != 1 for s in steps):
    # strided slices: pad each dim to a multiple of its step, split it, keep the first of each group
    pads = tuple((0, (-x.shape[d]) % st) for d, st in enumerate(steps))
    x = x._view(x.uop.pad(pads))
    x = x._view(x.uop.reshape(tuple(v for d, st in enumerate(steps) for v in (x.shape[d] // st, st))))
    x = x.shrink(tuple(r for d in range(len(steps)) for r in ((0, x.shape[2 * d]), (0, 1))))
    x = x._view(x.uop.reshape(tuple(x.shape[2 * d] for d in range(len(steps)))))
  # now x has one dim per consumed index; build the view shape, then apply tensor indices
  shape, tdims, d = [], [], 0
  for f in final_shape:
    if f[0] == "new": shape.append(1)
    elif f[0] == "drop": d += 1
    elif f[0] == "keep": shape.append(x.shape[d]); d += 1
    else: tdims.append((len(shape), f[1])); shape.append(x.shape[d]); d += 1
  if tuple(shape) != x.shape: x = x._view(x.uop.reshape(tuple(shape)))   # (adds and drops size-1 dims only)
  if tdims: x = _advanced(x, tdims)
  return x

def _advanced(x, tdims: list):
  """numpy advanced indexing of x at dims `tdims` [(dim, index tensor)]: broadcast the index tensors together;
  results go where the indexed dims were if they are adjacent, else to the front."""
  dims = [d for d, _ in tdims]
  bshape = broadcast_shape(*[i.shape for _, i in tdims])
  adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
  order = (list(range(dims[0])) + dims + [d for d in range(dims[0], x.ndim) if d not in dims]) if adjacent else \
    (dims + [d for d in range(x.ndim) if d not in dims])
  x = x.permute(*order)
  at = dims[0] if adjacent else 0
  sizes = [x.shape[at + k] for k in range(len(dims))]
  # one flat index into the merged indexed dims (negative indices wrap)
  lin: Any = None  # a Tensor after the loop (tdims is never empty)
  for k, (d, i) in enumerate(tdims):
    i = i.cast(dtypes.int32) if i.dtype != dtypes.int32 else i
    i = (i < 0).where(i + sizes[k], i)
    stride = prod(sizes[k + 1:])
    term = i * stride if stride != 1 else i
    lin = term if lin is None else lin + term
  lin = lin._broadcast_to(bshape)
  merged = x.reshape(*x.shape[:at], prod(sizes), *x.shape[at + len(dims):])
  pre, post = merged.shape[:at], merged.shape[at + 1:]
  nb = len(bshape)
  # gather along dim `at` with an index shaped pre + bshape + post
  src = merged.reshape(*pre, prod(sizes), *([1] * (nb - 1)), *post) if nb >= 1 else merged
  src = src.expand(*pre, prod(sizes), *bshape[1:], *post) if nb >= 1 else src
  index = lin.reshape(*([1] * len(pre)), *bshape, *([1] * len(post))).expand(*pre, *bshape, *post)
  if nb == 0:
    index = index.reshape(*pre, 1, *post)
    return src._gather(at, index).reshape(*pre, *post)
  return src._gather(at, index)

def setitem(t, indices, value: Any) -> None:
  """t[indices] = value, in place. Ints, slices (any step), None and ... select a view of t's storage, written through
  assign; integer tensors select positions that are written with one scatter (for a position given twice, one of
  its values is stored, as in numpy and torch)."""
  Tensor = type(t)
  if not isinstance(value, Tensor): value = Tensor(value, device=t.device, dtype=t.dtype)
  if value.device != t.device:
    raise RuntimeError(f"setitem: value is on {value.device}, the tensor on {t.device}; move it with .to()")
  if (mask := _bool_mask(t, indices)) is not None:
    _setitem_masked(t, mask, value)
    return
  idx = _normalize(t, indices)
  advanced = any(isinstance(i, Tensor) for i in idx)
  region = t[indices] if not advanced else Tensor.arange(t.numel(), device=t.device).reshape(t.shape)[indices]
  if not broadcasts_to(value.shape, region.shape):
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
                       f"result of shape {list(region.shape)}")
  value = value.cast(t.dtype)._broadcast_to(region.shape)
  if not advanced:
    region._write(value)
    return
  if region.numel() == 0: return
  t._write(value.reshape(region.numel()), index=region.reshape(region.numel()))

def _bool_mask(t, indices):
  """The boolean mask of t[mask] (a bool tensor, numpy array or list, alone in the index), else None."""
  i = indices[0] if isinstance(indices, tuple) and len(indices) == 1 else indices
  if isinstance(i, (list, np.ndarray)) and (a := np.asarray(i)).dtype == np.bool_ and a.ndim:
    i = type(t)(a, device=t.device)
  return i if isinstance(i, type(t)) and i.dtype == dtypes.bool and i.ndim else None

def _check_mask(t, mask) -> None:
  if mask.device != t.device:
    raise RuntimeError(f"indexing: the mask is on {mask.device}, the tensor on {t.device}; move it with .to()")
  if mask.ndim > t.ndim or tuple(mask.shape) != tuple(t.shape[:mask.ndim]):
    raise IndexError(f"the shape of the mask {list(mask.shape)} does not match the shape of the indexed tensor "
                     f"{list(t.shape)} (a mask covers the tensor's leading dims, with their sizes)")

def _setitem_masked(t, mask, value) -> None:
  """t[mask] = value (torch's masked assignment): the mask covers t's leading dims; every selected element (or
  sub-tensor, for a mask of fewer dims) gets value, broadcast to t.shape[mask.ndim:], lazily (a where over t). A value
  with one entry per selected element (shape (k, ...)) is scattered to the positions the mask selects, which reads
  the mask."""
  _check_mask(t, mask)
  rest = tuple(t.shape[mask.ndim:])
  vs = tuple(value.shape)
  if len(vs) == len(rest) + 1:
    if vs[0] != 1:
      # one value per selected element (t[mask] = t[mask] * 2, t[mask] += 1): their number depends on the mask's
      # values, so the mask is read and the write is a scatter to those positions
      setitem(t, mask.nonzero(as_tuple=True), value)
      return
    vs = vs[1:]
  if not broadcasts_to(vs, rest):
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                       f"{list(rest)}, the shape of each element the mask selects")
  v = value.reshape(*((1,) * (t.ndim - len(vs))), *vs).cast(t.dtype)
  m = mask.reshape(*mask.shape, *((1,) * len(rest)))
  setitem(t, Ellipsis, m.where(v, t))
