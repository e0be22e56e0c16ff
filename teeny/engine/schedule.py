"""Tensor graph -> ordered ScheduleItems. Decides where to cut (realize) and builds each kernel's AST, turning
movement ops into index expressions so elementwise chains, reduce prologues and epilogues fuse."""
from __future__ import annotations
import itertools, weakref
from dataclasses import dataclass, field
from typing import Any
from teeny.dtype import dtypes
from teeny.helpers import DEBUG, prod
from teeny.uop.ops import AxisType, GroupOp, KernelInfo, Ops, UOp, toposort_many
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic
from teeny.uop.view import linear_index, movement_index, and_valid

_buffer_ids = itertools.count()

def new_buffer_uop(device: str, size: int, dtype) -> UOp:
  """A fresh BUFFER node: arg = (unique id, device, number of elements)."""
  return UOp(Ops.BUFFER, dtype, (), (next(_buffer_ids), device, size))

@dataclass
class ScheduleItem:
  kind: str                 # "kernel" | "copy" | "custom"
  ast: UOp | None
  bufs: list[UOp]           # BUFFER uops, in parameter order (output first)
  meta: Any = None
  old_reads: set = field(default_factory=set)   # buffers read as they were before this schedule ran

def _is_realized(u: UOp) -> bool: return u.base.op is Ops.BUFFER

def _expands(u: UOp) -> bool: return u.op is Ops.EXPAND and any(a != b for a, b in zip(u.src[0].shape, u.arg))

# a reduce feeding another reduce in the same kernel gets its own kernel when it has at least this many outputs: fused,
# the outer reduce's few outputs would run every inner iteration on one thread (cross-entropy's mean over 8192 rows of
# 32000 classes took 2.9 s on one H200 thread; split, the row sums run in parallel)
NESTED_REDUCE_MIN = 1024

def find_realizes(roots: list[UOp]) -> set[UOp]:
  """Which tensor nodes get their own buffer: the outputs, contiguous/copy/assign/custom nodes, reduces that are
  consumed through an expand or by more than one kernel (recomputing them would cost more than a store), and reduces
  with many outputs that feed another reduce (NESTED_REDUCE_MIN)."""
  realize: set[UOp] = set()
  for r in roots:
    if r.base.op not in (Ops.BUFFER, Ops.CONST): realize.add(r.base)
  every: dict[UOp, None] = {}
  for r in roots:
    for n in r.toposort:
      if n.op is Ops.BUFFER: continue
      every[n] = None
      if n.op in (Ops.CONTIGUOUS, Ops.COPY, Ops.ASSIGN, Ops.CUSTOM_KERNEL, Ops.KERNEL_OUT): realize.add(n)
  while True:
    reach: dict[UOp, set[UOp]] = {}
    new: set[UOp] = set()
    for root in list(realize):
      seen: set[tuple[UOp, bool, bool]] = set()
      stack = [(s, False, root.op is Ops.REDUCE_AXIS) for s in root.src]
      while stack:
        n, expanded, under = stack.pop()
        if (n, expanded, under) in seen or n.op is Ops.BUFFER: continue
        seen.add((n, expanded, under))
        if n in realize and n is not root: continue
        if n.op is Ops.REDUCE_AXIS:
          reach.setdefault(n, set()).add(root)
          if expanded or (under and prod(n.shape) >= NESTED_REDUCE_MIN): new.add(n)
        stack.extend((s, expanded or _expands(n), under or n.op is Ops.REDUCE_AXIS) for s in n.src)
    new |= {n for n, rs in reach.items() if len(rs) > 1}
    new -= realize
    if not new: return realize
    realize |= new

class KernelBuilder:
  """Builds one kernel: a STORE of the node's value at every index of its shape, loads from realized buffers."""
  def __init__(self, node: UOp, out_buf: UOp, buffer_of: dict[UOp, UOp]):
    self.node, self.out_buf, self.buffer_of = node, out_buf, buffer_of
    self.slots: dict[UOp, UOp] = {out_buf: UOp.placeholder(0, out_buf.dtype, (out_buf.arg[2],))}
    self.bufs: list[UOp] = [out_buf]
    self.memo: dict[tuple, UOp] = {}
    self.axis = itertools.count(len(node.shape))
    self.has_reduce = False
    self.old_reads: set[UOp] = set()
  def slot(self, buf: UOp) -> UOp:
    if buf not in self.slots:
      self.slots[buf] = UOp.placeholder(len(self.bufs), buf.dtype, (buf.arg[2],))
      self.bufs.append(buf)
    return self.slots[buf]
  def load(self, buf: UOp, shape: tuple[int, ...], idx: list[UOp], gate: UOp | None) -> UOp:
    ptr = self.slot(buf)
    addr = linear_index(idx, shape)
    return UOp(Ops.INDEX, ptr.dtype, (ptr, addr) + ((gate,) if gate is not None else ())).load()
  def lower(self, n: UOp, idx: list[UOp], gate: UOp | None) -> UOp:
    key = (n, tuple(idx), gate)
    if (ret := self.memo.get(key)) is not None: return ret
    ret = self._lower(n, idx, gate)
    self.memo[key] = ret
    return ret
  def _lower(self, n: UOp, idx: list[UOp], gate: UOp | None) -> UOp:
    if n is not self.node and n in self.buffer_of: return self.load(self.buffer_of[n], n.shape, idx, gate)
    op = n.op
    if op is Ops.BUFFER:
      self.old_reads.add(n)
      return self.load(n, n.shape, idx, gate)
    if op is Ops.CONST: return UOp.const(n.dtype, n.arg)
    if op is Ops.ARANGE: return idx[0].cast(n.dtype)
    if op in GroupOp.Movement:
      new_idx, valid = movement_index(n, idx)
      if valid is None: return self.lower(n.src[0], new_idx, gate)
      valid = graph_rewrite(valid, symbolic)
      if valid.op is Ops.CONST: return self.lower(n.src[0], new_idx, gate) if valid.arg else UOp.const(n.dtype, 0)
      inner = self.lower(n.src[0], new_idx, and_valid(gate, valid))
      return valid.where(inner, UOp.const(n.dtype, 0))
    if op in GroupOp.Elementwise: return n.replace(src=tuple(self.lower(s, idx, gate) for s in n.src))
    if op in (Ops.DETACH, Ops.CONTIGUOUS): return self.lower(n.src[0], idx, gate)
    if op is Ops.REDUCE_AXIS:
      self.has_reduce = True
      alu, axes = n.arg
      in_shape = n.src[0].shape
      new_idx, rngs = list(idx), []
      for ax in axes:
        if in_shape[ax] == 1: new_idx[ax] = UOp.const(dtypes.index, 0)
        else:
          r = UOp.range(in_shape[ax], next(self.axis), AxisType.REDUCE)
          new_idx[ax] = r
          rngs.append(r)
      val = self.lower(n.src[0], new_idx, gate)
      return UOp(Ops.REDUCE, n.dtype, (val, *rngs), alu) if rngs else val
    if op is Ops.GATHER:
      src, index, axis = n.src[0], n.src[1], n.arg
      i = self.lower(index, idx, gate).cast(dtypes.index)
      valid = (i < src.shape[axis]).alu(Ops.AND, (i < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)))
      new_idx = list(idx)
      new_idx[axis] = i
      return valid.where(self.lower(src, new_idx, and_valid(gate, valid)), UOp.const(n.dtype, 0))
    raise NotImplementedError(f"cannot lower {op} into a kernel")
  def build(self, value_node: UOp, out_shape: tuple[int, ...]) -> UOp:
    idx = [UOp.range(s, i, AxisType.GLOBAL) if s > 1 else UOp.const(dtypes.index, 0) for i, s in enumerate(out_shape)]
    val = self.lower(value_node, idx, None)
    if val.dtype != self.out_buf.dtype: val = val.cast(self.out_buf.dtype)
    store = UOp(Ops.INDEX, self.slots[self.out_buf].dtype, (self.slots[self.out_buf], linear_index(idx, out_shape))).store(val)
    name = ("r_" if self.has_reduce else "E_") + "_".join(str(s) for s in out_shape if s > 1) if prod(out_shape) > 1 else \
      ("r_1" if self.has_reduce else "E_1")
    reds = [u.src[0].arg for u in store.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE]
    if reds: name += "_" + "_".join(str(s) for s in reds)
    ast = graph_rewrite(store.sink(arg=KernelInfo(name=name)), symbolic)
    # simplification can drop every read of an input (x % 1): launch only the buffers the kernel still declares
    used = {u.arg[0] for u in ast.toposort if u.op is Ops.DEFINE_GLOBAL}
    self.bufs = [b for i, b in enumerate(self.bufs) if i in used]
    return ast

# custom kernels that already ran: their outputs are plain buffers now (running one twice would apply it twice)
_ran_custom: weakref.WeakKeyDictionary[UOp, tuple[UOp, ...]] = weakref.WeakKeyDictionary()

def resolve_ran_custom(u: UOp) -> UOp:
  """Replace outputs of custom kernels that already ran with views of their buffers."""
  if not _ran_custom: return u
  mapping = {n: _as_shaped(_ran_custom[n.src[0]][n.arg], n.shape) for n in u.toposort
             if n.op is Ops.KERNEL_OUT and n.src[0] in _ran_custom}
  return u.substitute(mapping) if mapping else u

def _reads_at_other_index(ast: UOp) -> bool:
  """Does the kernel read its output buffer (slot 0) at an address other than the one it writes?"""
  store = ast.src[0]
  waddr = store.src[0].src[1]
  return any(u.op is Ops.INDEX and u.src[0].arg[0] == 0 and u.src[1] is not waddr for u in ast.toposort if u is not store.src[0])

# schedules by graph structure: a training step builds the same graph every time, only its buffers differ
_schedule_cache: dict[tuple, tuple] = {}

def _structure(roots: list[UOp]) -> tuple[tuple, list[UOp], list[UOp]]:
  """A key equal for graphs that differ only in which buffers they read, the distinct buffers in first-seen order, and
  the nodes in walk order."""
  index: dict[UOp, int] = {}
  parts: list[tuple] = []
  bufs: list[UOp] = []
  nodes = list(toposort_many(roots))
  for n in nodes:
    if n.op is Ops.BUFFER:
      parts.append((Ops.BUFFER, n.dtype, n.arg[1], n.arg[2], len(bufs)))
      bufs.append(n)
    else: parts.append((n.op, n.dtype, n.arg, tuple(index[s] for s in n.src)))
    index[n] = len(parts) - 1
  return (tuple(parts), tuple(index[r] for r in roots)), bufs, nodes

def create_schedule(roots: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  """The kernels that realize `roots`, in a valid order, and for each root the UOp (a view of a BUFFER) it becomes.
  Graphs seen before (up to which buffers they read) reuse their schedule: only new output buffers are made."""
  key, bufs, nodes = _structure(roots)
  if (tpl := _schedule_cache.get(key)) is not None: return _instantiate(tpl, roots, bufs, nodes)
  items, becomes = _create_schedule(roots, nodes)
  _schedule_cache[key] = _template(items, becomes, roots, bufs, nodes)
  return items, becomes

def _template(items: list[ScheduleItem], becomes: dict[UOp, UOp], roots: list[UOp], bufs: list[UOp], nodes: list[UOp]) -> tuple:
  pos = {b: ("in", i) for i, b in enumerate(bufs)}
  def ref(b: UOp):
    if b not in pos: pos[b] = ("new", b.arg[1], b.arg[2], b.dtype, len(pos))
    return pos[b]
  titems = [(it.kind, it.ast, tuple(ref(b) for b in it.bufs), it.meta, tuple(ref(b) for b in it.old_reads)) for it in items]
  troots = tuple(ref(becomes[r].base) if becomes[r].base.op is Ops.BUFFER else None for r in roots)
  node_pos = {n: i for i, n in enumerate(nodes)}
  customs = tuple((node_pos[n], tuple(ref(b) for b in v)) for n, v in _ran_custom.items() if n in node_pos)
  return titems, troots, customs

def _instantiate(tpl: tuple, roots: list[UOp], bufs: list[UOp], nodes: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  titems, troots, customs = tpl
  made: dict[tuple, UOp] = {}
  def get(r: tuple) -> UOp:
    if r[0] == "in": return bufs[r[1]]
    if r not in made: made[r] = new_buffer_uop(r[1], r[2], r[3])
    return made[r]
  items = [ScheduleItem(kind, ast, [get(b) for b in tb], meta=meta, old_reads={get(b) for b in tr}) for kind, ast, tb, meta, tr in titems]
  becomes: dict[UOp, UOp] = {}
  for r, tr in zip(roots, troots):
    becomes[r] = r if tr is None else _reapply_views(r, r.base, _as_shaped(get(tr), r.base.shape))
  for p, tb in customs: _ran_custom[nodes[p]] = tuple(get(b) for b in tb)
  if DEBUG >= 1: print(f"teeny: scheduled {sum(1 for i in items if i.kind != 'copy')} kernels, {len(items)} items (cached)")
  return items, becomes

def _create_schedule(roots: list[UOp], nodes: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  realize = find_realizes(roots)
  order = [n for n in nodes if n in realize]
  buffer_of: dict[UOp, UOp] = {}
  items: list[ScheduleItem] = []
  for n in order:
    if n.op is Ops.COPY:
      src = n.src[0]
      sbuf = src.base if src.base.op is Ops.BUFFER else buffer_of[src.base]
      out = new_buffer_uop(n.arg, prod(n.shape), n.dtype)
      buffer_of[n] = out
      items.append(ScheduleItem("copy", None, [out, sbuf]))
      continue
    if n.op is Ops.KERNEL_OUT:
      s = n.src[0].src[n.arg]
      buffer_of[n] = s.base if s.base.op is Ops.BUFFER else buffer_of[s.base]
      continue
    if n.op is Ops.CUSTOM_KERNEL:
      bufs = [s.base if s.base.op is Ops.BUFFER else buffer_of[s.base] for s in n.src]
      # buffers it only reads, that were realized before this schedule: an assign to one of them must wait for it
      ro = {b for slot, (s, b) in enumerate(zip(n.src, bufs)) if slot not in custom_written(n.arg[0]) and s.base.op is Ops.BUFFER}
      items.append(ScheduleItem("custom", n.arg[0], bufs, meta=n.arg, old_reads=ro))
      _ran_custom[n] = tuple(bufs)
      continue
    if n.op is Ops.ASSIGN:
      target, value = n.src
      tbuf = target.base
      if tbuf.op is not Ops.BUFFER: raise RuntimeError("assign target must be a realized tensor")
      kb = KernelBuilder(n, tbuf, buffer_of)
      ast = kb.build(value, target.shape)
      if _reads_at_other_index(ast):
        # the value reads the target where it does not write: compute into a temporary first
        tmp = new_buffer_uop(target.device, prod(value.shape), value.dtype)
        kb2 = KernelBuilder(value, tmp, buffer_of)
        items.append(ScheduleItem("kernel", kb2.build(value, value.shape), kb2.bufs, old_reads=kb2.old_reads))
        buffer_of[value] = tmp
        kb = KernelBuilder(n, tbuf, buffer_of)
        ast = kb.build(value, target.shape)
      buffer_of[n] = tbuf
      items.append(ScheduleItem("kernel", ast, kb.bufs, meta="assign", old_reads=kb.old_reads - {tbuf}))
      continue
    out = new_buffer_uop(n.device, prod(n.shape), n.dtype)
    buffer_of[n] = out
    kb = KernelBuilder(n, out, buffer_of)
    items.append(ScheduleItem("kernel", kb.build(n, n.shape), kb.bufs, old_reads=kb.old_reads))
  items = _order_writes_after_reads(items)
  becomes: dict[UOp, UOp] = {}
  for r in roots:
    base = r.base
    if base.op in (Ops.BUFFER, Ops.CONST): becomes[r] = r
    else: becomes[r] = _reapply_views(r, base, _as_shaped(buffer_of[base], base.shape))
  if DEBUG >= 1: print(f"teeny: scheduled {sum(1 for i in items if i.kind != 'copy')} kernels, {len(items)} items")
  return items, becomes

def custom_written(sink: UOp) -> set[int]:
  """The parameter slots a custom kernel writes (stores, atomics, or buffers handed to inline CUSTOM code)."""
  out = set()
  for u in sink.toposort:
    if u.op in (Ops.STORE, Ops.ATOMIC, Ops.ATOMIC_CAS) and u.src[0].op is Ops.INDEX: out.add(u.src[0].src[0].arg[0])
    if u.op is Ops.CUSTOM: out |= {s.src[0].arg[0] for s in u.src if s.op is Ops.INDEX}
  return out

def _as_shaped(buf: UOp, shape: tuple[int, ...]) -> UOp:
  return buf if shape == buf.shape else UOp(Ops.RESHAPE, buf.dtype, (buf,), tuple(shape))

def _reapply_views(r: UOp, base: UOp, new_base: UOp) -> UOp:
  if r is base: return new_base
  return r.replace(src=(_reapply_views(r.src[0], base, new_base),))

def _order_writes_after_reads(items: list[ScheduleItem]) -> list[ScheduleItem]:
  """Order items so each runs after the items whose outputs it reads, and an in-place write (assign) runs after every
  item that reads the old contents of that buffer."""
  def writes(it: ScheduleItem) -> list[UOp]:
    return [it.bufs[k] for k in sorted(custom_written(it.ast))] if it.kind == "custom" else it.bufs[:1]
  producer: dict[UOp, int] = {}
  for i, it in enumerate(items):
    for b in writes(it): producer[b] = i
  deps: list[set[int]] = [set() for _ in items]
  for j, it in enumerate(items):
    for b in it.bufs[1:] if it.kind != "custom" else it.bufs:
      if b in it.old_reads: continue
      i = producer.get(b)
      if i is not None and i != j: deps[j].add(i)
  for i, it in enumerate(items):
    if it.meta != "assign" and it.kind != "custom": continue
    for target in writes(it):
      for j, other in enumerate(items):
        if j != i and target in other.old_reads and i not in _ancestors(deps, j): deps[i].add(j)
  # depth-first, dependencies first (iterative: a recursive closure would be a reference cycle holding the items' buffers)
  out, done, onstack = [], set(), set()
  for root in range(len(items)):
    stack = [(root, False)]
    while stack:
      k, finished = stack.pop()
      if finished:
        onstack.discard(k)
        done.add(k)
        out.append(items[k])
        continue
      if k in done: continue
      if k in onstack: raise RuntimeError("schedule has a cycle: a buffer is both read before and written by the same step")
      onstack.add(k)
      stack.append((k, True))
      stack.extend((d, False) for d in sorted(deps[k], reverse=True) if d not in done)
  return out

def _ancestors(deps: list[set[int]], j: int) -> set[int]:
  seen, stack = set(), list(deps[j])
  while stack:
    k = stack.pop()
    if k in seen: continue
    seen.add(k)
    stack.extend(deps[k])
  return seen
