"""Several devices. A tensor on a tuple of devices is `MULTI(shard per device, arg=axis)`: one buffer per device, split
evenly along `axis`, or each holding all of it when `axis` is None (replicated). The front end builds ordinary graphs
over MULTI nodes (shapes are the whole tensor's), so every op, autograd included, works unchanged; before scheduling,
`lower_multi` turns such a graph into one graph per device:

- elementwise ops, casts, contiguous: the same op on each device's shards (so the same kernel, compiled once);
  a replicated operand meeting a sharded one is cut to the device's part (an expand along the sharded axis is
  narrowed instead, so the kernel stays the same on every device);
- movement ops: per device when they keep the sharded axis whole (its new position after a permute or reshape),
  else the shards are gathered first (copies to every device) and the op runs on the whole tensor, replicated;
- a reduce over the sharded axis: a reduce per device, then ALLREDUCE (a collective: host memory on CPU/NULL, NCCL
  on CUDA) leaves every device with the result, replicated;
- a copy of a multi-device tensor to one device gathers its shards there; an op mixing a single-device tensor with a
  multi-device one, or two different device tuples, raises naming them.
"""
from __future__ import annotations
import weakref
from typing import MutableMapping
from teeny.helpers import DEBUG, prod
from teeny.uop.ops import GroupOp, Ops, UOp, toposort_many

# set when the first MULTI node is made (Tensor.shard): until then scheduling pays nothing for this module
MULTI_MADE = [False]

class Sharded:
  """A multi-device node lowered: its per-device nodes and the axis they split (None: replicated)."""
  __slots__ = ("shards", "axis", "devices")
  def __init__(self, shards: tuple[UOp, ...], axis: int | None):
    self.shards, self.axis = shards, axis
    self.devices: tuple = tuple(s.device for s in shards)

def shard_bounds(size: int, n: int, what: str = "") -> list[tuple[int, int]]:
  """Even [lo, hi) bounds of n shards of an axis of `size`."""
  if size % n != 0:
    raise ValueError(f"cannot shard{what} an axis of size {size} evenly over {n} devices; pad it to a multiple of {n} "
                     "or shard another axis")
  s = size // n
  return [(i * s, (i + 1) * s) for i in range(n)]

def _shrink_axis(u: UOp, axis: int, lo: int, hi: int) -> UOp:
  """Device part [lo, hi) of a replicated node along axis; an expand of a size-1 axis is narrowed (same on every
  device) instead of cut at a device-dependent offset."""
  if u.op is Ops.EXPAND and u.src[0].shape[axis] == 1:
    return UOp(Ops.EXPAND, u.dtype, (u.src[0],), u.arg[:axis] + (hi - lo,) + u.arg[axis + 1:])
  if u.op is Ops.CONST: return u
  return u.shrink(tuple((lo, hi) if i == axis else (0, s) for i, s in enumerate(u.shape)))

def _gather_to(x: Sharded, dev) -> UOp:
  """The whole tensor on device `dev` (copies of the shards, placed by padding and summed: exact, one kernel)."""
  def on(u: UOp) -> UOp:
    return u if u.device == dev else UOp(Ops.COPY, u.dtype, (UOp(Ops.CONTIGUOUS, u.dtype, (u,)),), dev)
  if x.axis is None:
    here = [s for s in x.shards if s.device == dev]
    return UOp(Ops.CONTIGUOUS, here[0].dtype, (here[0],)) if here else on(x.shards[0])
  ax, full = x.axis, sum(s.shape[x.axis] for s in x.shards)
  out, lo = None, 0
  for s in x.shards:
    n = s.shape[ax]
    p = on(s).pad(tuple((lo, full - lo - n) if i == ax else (0, 0) for i in range(len(s.shape))))
    out = p if out is None else out.alu(Ops.OR if s.dtype.name == "bool" else Ops.ADD, p)
    lo += n
  assert out is not None
  return UOp(Ops.CONTIGUOUS, out.dtype, (out,))

def _replicate(x: Sharded, why: str) -> Sharded:
  if x.axis is None: return x
  if DEBUG >= 2: print(f"teeny: multi: gathering a tensor sharded on axis {x.axis} to every device ({why})")
  return Sharded(tuple(_gather_to(x, d) for d in x.devices), None)

def _align(xs: list, axis: int | None, devs: tuple) -> list[tuple[UOp, ...]]:
  """Each operand as per-device nodes split on `axis` (replicated ones cut to each device's part; a node of no device,
  a Variable, is the same on each)."""
  out = []
  for x in xs:
    if not isinstance(x, Sharded): out.append((x,) * len(devs))
    elif x.axis == axis: out.append(x.shards)
    else:
      x = _replicate(x, f"an operand sharded on another axis than {axis}")
      if axis is None: out.append(x.shards)
      else:
        b = shard_bounds(x.shards[0].shape[axis], len(devs))
        out.append(tuple(_shrink_axis(s, axis, lo, hi) for s, (lo, hi) in zip(x.shards, b)))
  return out

def _reshape_axis(old: tuple, new: tuple, axis: int, n: int) -> int | None:
  """Where the sharded axis lands in a reshape that keeps each shard one contiguous block, else None."""
  before, acc = prod(old[:axis]), 1
  for i, s in enumerate(new):
    if acc == before and s != 1:
      return i if s % n == 0 and (s // n) * prod(new[i + 1:]) == (old[axis] // n) * prod(old[axis + 1:]) else None
    acc *= s
    if acc > before: return None
  return None

def _movement(n: UOp, x: Sharded) -> Sharded:
  op, arg, ax, nd = n.op, n.arg, x.axis, len(x.devices)
  if ax is None: return Sharded(tuple(UOp(op, s.dtype, (s,), arg) for s in x.shards), None)
  shard = x.shards[0].shape[ax]
  def per(new_arg, new_ax): return Sharded(tuple(UOp(op, s.dtype, (s,), new_arg) for s in x.shards), new_ax)
  if op is Ops.PERMUTE: return per(arg, arg.index(ax))
  if op is Ops.EXPAND: return per(arg[:ax] + (shard,) + arg[ax + 1:], ax)
  if op is Ops.RESHAPE:
    b = _reshape_axis(n.src[0].shape, arg, ax, nd)
    if b is not None: return per(arg[:b] + (arg[b] // nd,) + arg[b + 1:], b)
  if op is Ops.SHRINK and arg[ax] == (0, n.src[0].shape[ax]): return per(arg[:ax] + ((0, shard),) + arg[ax + 1:], ax)
  if op is Ops.PAD and arg[ax] == (0, 0): return per(arg, ax)
  if op is Ops.FLIP and ax not in arg: return per(arg, ax)
  if op is Ops.WINDOW and ax < len(n.src[0].shape) - len(arg[0]): return per(arg, ax)
  x = _replicate(x, f"{op.name.lower()} crosses the shards of axis {ax}")
  return Sharded(tuple(UOp(op, s.dtype, (s,), arg) for s in x.shards), None)

def _mixed(n: UOp, devs) -> RuntimeError:
  return RuntimeError(f"an op ({n.op.name.lower()}) mixes tensors on {' and '.join(map(str, devs))}; move them to the "
                      "same device(s) first: .to(device) for one device, .to(devices) or .shard(devices, axis) for "
                      "several")

def _lower_node(n: UOp, memo: dict) -> Sharded | UOp:
  op = n.op
  if op is Ops.MULTI:
    return Sharded(tuple(memo[s] for s in n.src), n.arg)
  devs = n.device
  srcs = [memo[s] for s in n.src]
  multi = [s for s in srcs if isinstance(s, Sharded)]
  if not isinstance(devs, tuple):
    if not multi: return n if all(a is b for a, b in zip(srcs, n.src)) else n.replace(src=tuple(srcs))
    if op is Ops.COPY: return _gather_to(multi[0], n.arg)
    raise _mixed(n, (devs, multi[0].devices))
  if op is Ops.CONST: return Sharded(tuple(UOp.const(n.dtype, n.arg, d) for d in devs), None)
  if op is Ops.ARANGE:
    return Sharded(tuple(UOp(Ops.ARANGE, n.dtype, (), (n.arg[0], d) + n.arg[2:]) for d in devs), None)
  if op is Ops.COPY:
    if n.arg == multi[0].devices: return multi[0]
    raise RuntimeError(f"cannot copy a tensor on {multi[0].devices} to {n.arg} directly; gather it to one device first "
                       "(.to(device)) and shard that")
  if any(not isinstance(s, Sharded) and s.device not in ("?",) for s in srcs) or len({s.devices for s in multi}) > 1:
    raise _mixed(n, tuple(dict.fromkeys(s.devices if isinstance(s, Sharded) else s.device for s in srcs)))
  x = multi[0]
  nd = len(x.devices)
  if op in GroupOp.Movement: return _movement(n, x)
  if op is Ops.REDUCE_AXIS:
    rop, axes = n.arg
    if x.axis is None or x.axis not in axes:
      return Sharded(tuple(UOp(op, s.dtype, (s,), n.arg) for s in x.shards), x.axis)
    parts = tuple(UOp(Ops.CONTIGUOUS, n.dtype, (UOp(op, n.dtype, (s,), n.arg),)) for s in x.shards)
    if DEBUG >= 2: print(f"teeny: multi: reduce over sharded axis {x.axis}: {rop.name.lower()} all-reduce on {nd}")
    return Sharded(tuple(UOp(Ops.ALLREDUCE, n.dtype, parts, (rop, i)) for i in range(nd)), None)
  if op is Ops.CUSTOM_KERNEL:
    # each device's kernel gets that device's shard of every operand, as they are (its placeholders have their shapes);
    # the lowered node's axis is the tuple of its operands' axes, for KERNEL_OUT
    sh = [s.shards if isinstance(s, Sharded) else (s,) * nd for s in srcs]
    return Sharded(tuple(UOp(op, n.dtype, tuple(a[i] for a in sh), _per_device_arg(n.arg, i, nd)) for i in range(nd)),
                   tuple(s.axis if isinstance(s, Sharded) else None for s in srcs))   # type: ignore[arg-type]
  if op is Ops.KERNEL_OUT:
    return Sharded(tuple(UOp(op, n.dtype, (k,), n.arg) for k in x.shards), x.axis[n.arg])   # type: ignore[index]
  if op is Ops.ASSIGN:
    tgt = srcs[0]
    assert isinstance(tgt, Sharded)
    if len(srcs) > 2:
      raise NotImplementedError("a scatter write (index tensor) into a multi-device tensor is not supported yet")
    al = _align(srcs, tgt.axis, x.devices)
    return Sharded(tuple(UOp(op, n.dtype, tuple(a[i] for a in al)) for i in range(nd)), tgt.axis)
  if op is Ops.GATHER:
    axis = next((s.axis for s in multi if s.axis is not None and s.axis != n.arg), None)
    al = _align(srcs, axis, x.devices)
    return Sharded(tuple(UOp(op, n.dtype, tuple(a[i] for a in al), n.arg) for i in range(nd)), axis)
  if op in GroupOp.Elementwise or op in (Ops.CONTIGUOUS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD):
    axis = next((s.axis for s in multi if s.axis is not None), None)
    al = _align(srcs, axis, x.devices)
    return Sharded(tuple(UOp(op, n.dtype, tuple(a[i] for a in al), n.arg) for i in range(nd)), axis)
  raise NotImplementedError(f"{op.name} is not supported on multi-device tensors yet")

def _per_device_arg(arg: tuple, i: int, nd: int) -> tuple:
  """A custom kernel's arg on device i: its SINK's `_device_num` variable (if any) bound to i (engine/schedule.py passes
  the binding as the item's var_vals), so one compiled kernel serves every device."""
  sink = arg[0]
  dv = next((u for u in sink.toposort if u.op is Ops.DEFINE_VAR and u.arg[0] == "_device_num"), None)
  if dv is None: return arg
  return arg[:2] + (((dv, i),),)

def _shaped(buf: UOp, shape: tuple) -> UOp: return buf if buf.shape == shape else buf.reshape(shape)

# a node's lowered form, kept while the node lives: nodes are hash-consed and lowering is a function of the node, so a
# step's graph (its parameters', its `sharded_axis` questions') is lowered once (never a node that lowers to itself: the
# value would keep its weak key alive)
_lowered: weakref.WeakKeyDictionary[UOp, Sharded | UOp] = weakref.WeakKeyDictionary()

def _lower_all(nodes) -> dict[UOp, Sharded | UOp]:
  """Every node (sources first) -> its per-device form (Sharded), or itself/its gathered form for one device."""
  memo: dict[UOp, Sharded | UOp] = {}
  for n in nodes:
    if (v := _lowered.get(n)) is not None: memo[n] = v
    elif n.op in (Ops.BUFFER, Ops.DEFINE_VAR, Ops.NOOP) or (n.op is Ops.CONST and not isinstance(n.device, tuple)):
      memo[n] = n
    else:
      memo[n] = v = _lower_node(n, memo)
      if v is not n: _lowered[n] = v
  return memo

def lower_multi(roots: list[UOp]) -> dict[UOp, Sharded | UOp]:
  """Each root -> its per-device form (Sharded) or, for a single-device root, the node with multi inputs gathered."""
  memo = _lower_all(toposort_many(roots))
  return {r: memo[r] for r in roots}

def schedule_multi(roots: list[UOp], create_schedule, ran_custom: MutableMapping) -> tuple[list, dict[UOp, UOp]]:
  """create_schedule for roots that involve multi-device nodes: lower, schedule the per-device graphs together, and map
  each original root (and each write) to what it became (a MULTI of per-device results). A multi-device custom kernel
  whose per-device kernels were scheduled is recorded in `ran_custom` (schedule.py's) as a MULTI per operand, so the
  front end swaps its outputs for those (tensor.py: _resolve_executed) and it runs once."""
  nodes = list(toposort_many(roots))
  memo = _lower_all(nodes)
  flat: list[UOp] = []
  for r in roots:
    v = memo[r]
    flat.extend(v.shards if isinstance(v, Sharded) else (v,))
  items, becomes = create_schedule(list(dict.fromkeys(flat)))
  for it in items: it.multi = True   # (engine/realize.py: TinyJit does not capture these yet)
  out: dict[UOp, UOp] = {}
  for r in roots:
    v = memo[r]
    if isinstance(v, Sharded): out[r] = UOp(Ops.MULTI, r.dtype, tuple(becomes.get(s, s) for s in v.shards), v.axis)
    else: out[r] = becomes.get(v, v)
  for n in nodes:
    if n.op not in (Ops.ASSIGN, Ops.CUSTOM_KERNEL) or not isinstance(v := memo[n], Sharded): continue
    if n.op is Ops.ASSIGN and all(s in becomes for s in v.shards):   # a write that ran: what its memory became
      out[n] = UOp(Ops.MULTI, n.dtype, tuple(becomes[s] for s in v.shards), v.axis)
    if n.op is Ops.CUSTOM_KERNEL and all(s in ran_custom for s in v.shards):
      ran_custom[n] = tuple(UOp(Ops.MULTI, src.dtype, tuple(_shaped(ran_custom[s][k], s.src[k].shape)
                                                            for s in v.shards), v.axis[k])   # type: ignore[index]
                            for k, src in enumerate(n.src))
  return items, out
