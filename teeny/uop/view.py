"""Movement ops as views: each maps an output index (a list of index UOps) to its source's index and a validity mask.
Nothing is copied; the kernel builder turns the result into load addresses."""
from __future__ import annotations
from teeny.dtype import dtypes
from teeny.uop.ops import Ops, UOp

def _c(v) -> UOp: return v if isinstance(v, UOp) else UOp.const(dtypes.index, v)

def _maybe_less(a, b) -> bool:
  """Can a < b hold (sizes that may be symbolic: then for some value of their variables)?"""
  if not isinstance(a, UOp) and not isinstance(b, UOp): return a < b
  from teeny.uop.symbolic import ssimplify
  d = ssimplify(_c(a) - b)
  return d < 0 if not isinstance(d, UOp) else d.vmin < 0

def _nonzero(x) -> bool: return isinstance(x, UOp) or x != 0

def strides_for(shape: tuple[int, ...]) -> tuple[int, ...]:
  out, acc = [], 1
  for s in reversed(shape):
    out.append(acc if s != 1 else 0)
    acc *= s
  return tuple(reversed(out))

def linear_index(idx: list[UOp], shape: tuple[int, ...]) -> UOp:
  """Row-major address of `idx` in a contiguous buffer of `shape`."""
  out = _c(0)
  for i, st in zip(idx, strides_for(shape)):
    if st != 0: out = out + (i * st if st != 1 else i)
  return out

def and_valid(a: UOp | None, b: UOp | None) -> UOp | None:
  if a is None: return b
  if b is None: return a
  return a.alu(Ops.AND, b)

def reshape_index(idx: list[UOp], out_shape: tuple[int, ...], in_shape: tuple[int, ...]) -> list[UOp]:
  """Map an index of the reshaped view back to the source's index (through the flat position)."""
  flat = linear_index(idx, out_shape)
  ret, acc = [], 1
  for s in reversed(in_shape):
    if s == 1: ret.append(_c(0))
    else:
      q = flat // acc if acc != 1 else flat
      total = _prod(out_shape)
      ret.append(q % s if _maybe_less(acc * s, total if isinstance(total, UOp) else max(1, total)) else q)
    acc *= s
  return list(reversed(ret))

def _prod(xs) -> int:
  out = 1
  for x in xs: out *= x
  return out

def movement_index(node: UOp, idx: list[UOp]) -> tuple[list[UOp], UOp | None]:
  """For a movement-op node and an index into its output, the index into its source and the validity (pads only)."""
  op, arg, in_shape = node.op, node.arg, node.src[0].shape
  if op is Ops.RESHAPE: return reshape_index(idx, arg, in_shape), None
  if op is Ops.PERMUTE:
    out = [_c(0)] * len(arg)
    for k, a in enumerate(arg): out[a] = idx[k]
    return out, None
  if op is Ops.EXPAND: return [_c(0) if s == 1 and o != 1 else i for i, s, o in zip(idx, in_shape, arg)], None
  if op is Ops.SHRINK: return [i + b if _nonzero(b) else i for i, (b, _) in zip(idx, arg)], None
  if op is Ops.FLIP: return [(_c(s - 1) - i) if ax in arg else i for ax, (i, s) in enumerate(zip(idx, in_shape))], None
  if op is Ops.WINDOW:
    k_, s_, d_ = arg
    n, lead = len(k_), len(in_shape) - len(k_)
    out = list(idx[:lead])
    for w in range(n):
      o, kk = idx[lead + w], idx[lead + n + w]
      out.append((o * s_[w] if s_[w] != 1 else o) + (kk * d_[w] if d_[w] != 1 else kk))
    return out, None
  if op is Ops.PAD:
    out, valid = [], None
    for i, s, (b, e) in zip(idx, in_shape, arg):
      if b == 0 and e == 0:
        out.append(i)
        continue
      j = i - b if _nonzero(b) else i
      cond = None
      if _nonzero(b): cond = _c(b).alu(Ops.CMPLE, i)
      if _nonzero(e): cond = and_valid(cond, j < s)
      valid = and_valid(valid, cond)
      out.append(j)
    return out, valid
  raise ValueError(f"{op} is not a movement op")
