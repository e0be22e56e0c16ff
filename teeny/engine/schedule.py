"""Tensor graph -> ordered ScheduleItems. Decides where to cut (realize) and builds each kernel's AST, turning
movement ops into index expressions so elementwise chains, reduce prologues and epilogues fuse."""
from __future__ import annotations
import itertools, math, weakref
from dataclasses import dataclass
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple
from teeny.dtype import dtypes
from teeny.helpers import DEBUG, prod
from teeny.uop.ops import (AxisType, GroupOp, KernelInfo, Ops, UOp, _with_shape, inline_calls, toposort_many,
                           written_slots)
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic, sprod, sstr, sym_max, unbind_sint, bind_sint, VARIABLES_MADE
from teeny.uop.view import linear_index, movement_index, and_valid
from teeny.engine.multi import MULTI_MADE, schedule_multi

_buffer_ids = itertools.count()
_version_ids = itertools.count(1)

def new_buffer_uop(device: str, size: int, dtype) -> UOp:
  """A fresh BUFFER node: arg = (memory id, device, number of elements, version). A BUFFER node names one *version* of
  a memory's contents: version 0 is the memory as made; an in-place write makes a new node (`next_version`) for the
  same memory, so a graph built before the write still names the contents it read (see docs/architecture.md)."""
  return UOp(Ops.BUFFER, dtype, (), (next(_buffer_ids), device, size, 0))

def next_version(b: UOp) -> UOp:
  """The node for b's memory after one more in-place write: the same memory id, a new (globally unique) version."""
  return UOp(Ops.BUFFER, b.dtype, (), b.arg[:3] + (next(_version_ids),))

@dataclass
class ScheduleItem:
  kind: str                 # "kernel" | "copy" | "custom" | "allreduce" (bufs: outputs, then inputs; meta: the op)
  ast: UOp | None
  bufs: list[UOp]           # BUFFER uops (memory versions), in parameter order (output first)
  meta: Any = None
  bumps: tuple = ()         # (slot, new version node): after the item runs, bufs[slot]'s memory holds that version
  var_vals: dict | None = None  # symbolic shapes: each DEFINE_VAR in the kernel -> its value for this launch
  multi: bool = False       # part of a multi-device schedule (engine/multi.py)

  def produced(self) -> list[UOp]:
    """The memory versions this item makes."""
    if self.bumps: return [new for _, new in self.bumps]
    if self.kind == "allreduce": return self.bufs[:len(self.bufs) // 2]
    return [] if self.kind == "custom" else self.bufs[:1]
  def consumed(self) -> list[UOp]:
    """The memory versions this item reads (an in-place write reads the version it overwrites)."""
    if self.kind == "custom": return list(self.bufs)
    if self.kind == "allreduce": return self.bufs[len(self.bufs) // 2:]
    return list(self.bufs) if self.bumps else self.bufs[1:]

def _expands(u: UOp) -> bool: return u.op is Ops.EXPAND and any(a != b for a, b in zip(u.src[0].shape, u.arg))

# a reduce feeding another reduce in the same kernel gets its own kernel when it has at least this many outputs: fused,
# the outer reduce's few outputs would run every inner iteration on one thread (cross-entropy's mean over 8192 rows of
# 32000 classes took 2.9 s on one H200 thread; split, the row sums run in parallel)
NESTED_REDUCE_MIN = 1024

# an elementwise value read through an expand is recomputed for every element it is expanded to (the gradient of a
# GELU inside the matmul that takes its weight gradient: erf per multiply-add made tiny_gpt's step 30x slower). One
# that costs at least RECOMPUTE_COST (a transcendental op counts 8, a division or square root 4, any other ALU op 1)
# and is expanded at least RECOMPUTE_MIN_FACTOR times gets its own buffer: one store and a load instead. So does a
# cheaper one whose work times its expansion reaches RECOMPUTE_WORK: a ReLU's gradient mask (add, compare, select)
# in the matmul that takes the weight gradient was recomputed for each of 784 columns, a 128x784x128 kernel at
# 17 GFLOP/s.
RECOMPUTE_COST, RECOMPUTE_MIN_FACTOR, RECOMPUTE_WORK = 8, 4, 512
_OP_COST = {**{o: 8 for o in (Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.TAN, Ops.TANH, Ops.ERF,
                               Ops.POW)},
            **{o: 4 for o in (Ops.SQRT, Ops.FDIV, Ops.RECIP, Ops.IDIV, Ops.MOD)}}

def _expand_factor(u: UOp) -> int:
  if u.op is not Ops.EXPAND: return 1
  return max(1, sym_max(sprod(u.arg)) // max(1, sym_max(sprod(u.src[0].shape))))

# an elementwise value that more than one kernel reads is recomputed in each. Where it costs at least SHARED_COST it
# gets its own buffer instead: a recurrence written as a loop (an LSTM's cell state c_t = f*c_{t-1} + i*g, read by the
# step's output and by the next step) otherwise inlined every earlier step into each step's kernels, kernels that grew
# with t (O(T^2) work, and no two steps alike to share a compiled program).
SHARED_COST = 32

def _elementwise_cost(n: UOp, realize: set[UOp], memo: dict[UOp, int], cap: int = RECOMPUTE_COST) -> int:
  """ALU work to compute n inside a kernel, down to buffers, reduces and nodes with their own buffer (capped: only
  the comparison with `cap`, RECOMPUTE_COST or SHARED_COST, matters; memo is for one cap)."""
  total, stack, seen = 0, [n], set()
  while stack and total < cap:
    x = stack.pop()
    if x in seen or x.op in (Ops.BUFFER, Ops.REDUCE_AXIS) or (x in realize and x is not n): continue
    seen.add(x)
    if (c := memo.get(x)) is not None:
      total += c
      continue
    if x.op in GroupOp.ALU: total += _OP_COST.get(x.op, 1)
    stack.extend(x.src)
  memo[n] = min(total, cap)
  return total

def find_realizes(roots: list[UOp]) -> set[UOp]:
  """Which tensor nodes get their own buffer: the outputs, contiguous/copy/assign/custom nodes, reduces that are
  consumed through an expand or by more than one kernel (recomputing them would cost more than a store), reduces
  with many outputs that feed another reduce (NESTED_REDUCE_MIN), costly elementwise values read through a large
  expand (RECOMPUTE_COST), and the computed input of a max/min that more than one kernel reads."""
  realize: set[UOp] = set()
  for r in roots:
    if r.base.op not in (Ops.BUFFER, Ops.CONST): realize.add(r.base)
  # the value a max/min reduces, computed (two ops or more): its gradient compares it with the max for equality, so
  # every kernel must see the same bits; recomputed in several kernels it may not be (a loop clang vectorises calls
  # libmvec's expf, another calls the scalar one: no element equalled the max and max's gradient came out 0 or nan)
  maxed: set[UOp] = set()
  for r in roots:
    for n in r.toposort:
      if n.op is Ops.BUFFER: continue
      if n.op in (Ops.CONTIGUOUS, Ops.COPY, Ops.ASSIGN, Ops.CUSTOM_KERNEL, Ops.KERNEL_OUT, Ops.ALLREDUCE):
        realize.add(n)
      # a write into a tensor that has no memory yet first gives its old value a buffer, then writes into that
      if n.op is Ops.ASSIGN and (prev := n.src[0].base).op is not Ops.BUFFER: realize.add(prev)
      if n.op is Ops.REDUCE_AXIS and n.arg[0] in (Ops.MAX, Ops.MIN) and (b := n.src[0].base).op in GroupOp.ALU and \
         not any(isinstance(d, UOp) for d in b.shape): maxed.add(b)
  cost_memo: dict[UOp, int] = {}
  maxed = {b for b in maxed if _elementwise_cost(b, realize, cost_memo) >= 2}
  while True:
    reach: dict[UOp, set[UOp]] = {}
    shared: dict[UOp, set[UOp]] = {}   # elementwise node -> the kernels (roots) that compute it
    new: set[UOp] = set()
    for root in list(realize):
      seen: set[tuple[UOp, bool, int, bool]] = set()
      stack = [(s, False, 1, root.op is Ops.REDUCE_AXIS) for s in root.src]
      while stack:
        # expanded: an expand above n; factor: how many times each element of n is recomputed (expands above it)
        key = (n, expanded, factor, under) = stack.pop()
        if key in seen or n.op is Ops.BUFFER: continue
        seen.add(key)
        if n in realize and n is not root: continue
        if n in maxed: reach.setdefault(n, set()).add(root)
        if n.op is Ops.REDUCE_AXIS:
          reach.setdefault(n, set()).add(root)
          if expanded or (under and sym_max(sprod(n.shape)) >= NESTED_REDUCE_MIN): new.add(n)
        elif factor >= RECOMPUTE_MIN_FACTOR and n.op in GroupOp.ALU and \
            not any(isinstance(d, UOp) for d in n.shape) and \
            ((c := _elementwise_cost(n, realize, cost_memo)) >= RECOMPUTE_COST or c * factor >= RECOMPUTE_WORK):
          new.add(n)
          continue
        if n.op in GroupOp.ALU: shared.setdefault(n, set()).add(root)
        # (below a reduce, each input element is computed once per reduce: a reduce read through an expand has its own
        # kernel anyway)
        f = 1 if n.op is Ops.REDUCE_AXIS else factor * _expand_factor(n)
        stack.extend((s, expanded or _expands(n), f, under or n.op is Ops.REDUCE_AXIS) for s in n.src)
    new |= {n for n, rs in reach.items() if len(rs) > 1}
    new -= realize
    if not new:   # (only once the other rules are settled: a reduce they give a buffer stops the walks that shared)
      shared_memo: dict[UOp, int] = {}
      new = {n for n, rs in shared.items() if len(rs) > 1 and not any(isinstance(d, UOp) for d in n.shape) and
             _elementwise_cost(n, realize, shared_memo, SHARED_COST) >= SHARED_COST}
    if not new: return realize
    realize |= new

def _name_part(s) -> str:
  """A dimension in a kernel name: 37, or a symbolic size spelled with C identifier characters (n, n_p1 for n+1)."""
  if not isinstance(s, UOp): return str(s)
  if s.op is Ops.CONST: return str(s.arg)
  return "".join(c if c.isalnum() or c == "_" else {"+": "p", "*": "m", "-": "s", "/": "d", "%": "r"}.get(c, "")
                 for c in sstr(s))

def _alloc_size(shape) -> int:
  """Elements to allocate for a node's shape: a symbolic shape gets the largest size its variables allow, so one
  compiled kernel (and a TinyJit capture's buffers) is correct for every value."""
  n = prod(shape)
  return sym_max(sprod(shape)) if isinstance(n, UOp) else n

class KernelBuilder:
  """Builds one kernel: a STORE of the node's value at every index of its shape, loads from realized buffers."""
  def __init__(self, node: UOp, out_buf: UOp, buffer_of: dict[UOp, UOp]):
    self.node, self.out_buf, self.buffer_of = node, out_buf, buffer_of
    self.slots: dict[UOp, UOp] = {out_buf: UOp.placeholder(0, out_buf.dtype, (out_buf.arg[2],))}
    self.bufs: list[UOp] = [out_buf]
    self.memo: dict[tuple, UOp] = {}
    self.axis = itertools.count(len(node.shape))
    self.has_reduce = False
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
    """The kernel-level value of tensor node n at index idx. Iterative (each `_lower` is a generator that yields the
    sub-values it needs), so a graph thousands of ops deep never meets Python's recursion limit."""
    key = (n, tuple(idx), gate)
    if (ret := self.memo.get(key)) is not None: return ret
    stack = [(key, self._lower(n, idx, gate))]
    result: UOp | None = None
    while stack:
      k, gen = stack[-1]
      try: req = gen.send(result)
      except StopIteration as stop:
        stack.pop()
        self.memo[k] = result = stop.value
        continue
      rkey = (req[0], tuple(req[1]), req[2])
      if (hit := self.memo.get(rkey)) is not None: result = hit
      else:
        stack.append((rkey, self._lower(*req)))
        result = None
    return self.memo[key]
  def _lower(self, n: UOp, idx: list[UOp], gate: UOp | None):
    if n is not self.node and n in self.buffer_of: return self.load(self.buffer_of[n], n.shape, idx, gate)
    op = n.op
    if op is Ops.BUFFER: return self.load(n, n.shape, idx, gate)
    if op is Ops.CONST: return UOp.const(n.dtype, n.arg)
    if op is Ops.ARANGE: return idx[0].cast(n.dtype)
    if op in GroupOp.Movement:
      new_idx, valid = movement_index(n, idx)
      if valid is None: return (yield (n.src[0], new_idx, gate))
      valid = graph_rewrite(valid, symbolic)
      if valid.op is Ops.CONST: return (yield (n.src[0], new_idx, gate)) if valid.arg else UOp.const(n.dtype, 0)
      inner = yield (n.src[0], new_idx, and_valid(gate, valid))
      return valid.where(inner, UOp.const(n.dtype, 0))
    if op in GroupOp.Elementwise:
      srcs = []
      for s in n.src: srcs.append((yield (s, idx, gate)))
      return n.replace(src=tuple(srcs))
    if op in (Ops.DETACH, Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD): return (yield (n.src[0], idx, gate))
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
      val = yield (n.src[0], new_idx, gate)
      return UOp(Ops.REDUCE, n.dtype, (val, *rngs), alu) if rngs else val
    if op is Ops.GATHER:
      src, index, axis = n.src[0], n.src[1], n.arg
      i = (yield (index, idx, gate)).cast(dtypes.index)
      valid = (i < src.shape[axis]).alu(Ops.AND, (i < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)))
      new_idx = list(idx)
      new_idx[axis] = i
      return valid.where((yield (src, new_idx, and_valid(gate, valid))), UOp.const(n.dtype, 0))
    if op is Ops.ASSIGN: raise RuntimeError("internal: a pending write was not scheduled before a kernel that reads it")
    raise NotImplementedError(f"cannot lower {op} into a kernel")
  def _finish(self, store: UOp, out_shape: tuple[int, ...], prefix: str | None = None) -> UOp:
    dims = [_name_part(s) for s in out_shape if isinstance(s, UOp) or s > 1]
    name = ("r_" if self.has_reduce else "E_") + ("_".join(dims) if dims and sprod(out_shape) != 0 else "1")
    reds = [_name_part(u.src[0]) for u in store.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE]
    if reds: name += "_" + "_".join(reds)
    ast = graph_rewrite(store.sink(arg=KernelInfo(name=name)), symbolic)
    # simplification can drop every read of an input (x % 1): launch only the buffers the kernel still declares
    used = {u.arg[0] for u in ast.toposort if u.op is Ops.DEFINE_GLOBAL}
    self.bufs = [b for i, b in enumerate(self.bufs) if i in used]
    return ast
  def build(self, value_node: UOp, out_shape: tuple[int, ...]) -> UOp:
    idx = [UOp.range(s, i, AxisType.GLOBAL) if s != 1 else UOp.const(dtypes.index, 0) for i, s in enumerate(out_shape)]
    val = self.lower(value_node, idx, None)
    if val.dtype != self.out_buf.dtype: val = val.cast(self.out_buf.dtype)
    store = UOp(Ops.INDEX, self.slots[self.out_buf].dtype,
                (self.slots[self.out_buf], linear_index(idx, out_shape))).store(val)
    return self._finish(store, out_shape)
  def build_write(self, target: UOp, prev: UOp, value: UOp, index: UOp | None = None) -> UOp:
    """An in-place write: for every index of the view `target` (movement ops over `prev`, whose memory is slot 0),
    store `value` at the address the view maps it to. Positions a PAD invented have no address: nothing is stored.
    With `index` (a scatter), value element i goes to position index[i] of the flat view `target`."""
    shape = value.shape if index is not None else target.shape
    idx = [UOp.range(s, i, AxisType.GLOBAL) if s != 1 else UOp.const(dtypes.index, 0) for i, s in enumerate(shape)]
    cidx, valid = idx, None
    if index is not None:
      pos = self.lower(index, idx, None).cast(dtypes.index)
      cidx, valid = [pos], (pos < target.shape[0]).alu(Ops.AND, (pos < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)))
    cur = target
    while cur is not prev:
      if cur.op is not Ops.DETACH:
        cidx, v = movement_index(cur, cidx)
        valid = and_valid(valid, v)
      cur = cur.src[0]
    val = self.lower(value, idx, None)
    if val.dtype != self.out_buf.dtype: val = val.cast(self.out_buf.dtype)
    if valid is not None:
      valid = graph_rewrite(valid, symbolic)
      if valid.op is Ops.CONST: valid = None if valid.arg else valid
    ptr = self.slots[self.out_buf]
    store = UOp(Ops.INDEX, ptr.dtype,
                (ptr, linear_index(cidx, prev.shape)) + ((valid,) if valid is not None else ())).store(val)
    return self._finish(store, shape)

# writes that already ran: a custom kernel's node -> the memory version of each of its slots after it ran, and an ASSIGN
# node -> the version node it became. Running either again would apply it twice; a graph that still names one reads the
# version instead (weak: an entry lives as long as some graph still holds the node).
_ran_custom: weakref.WeakKeyDictionary[UOp, tuple[UOp, ...]] = weakref.WeakKeyDictionary()
_done_writes: weakref.WeakKeyDictionary[UOp, UOp] = weakref.WeakKeyDictionary()

def _reads_at_other_index(ast: UOp) -> bool:
  """Does the kernel read its output buffer (slot 0) at an address other than the one it writes?"""
  store = ast.src[0]
  waddr = store.src[0].src[1]
  return any(u.op is Ops.INDEX and u.src[0].arg[0] == 0 and u.src[1] is not waddr
             for u in ast.toposort if u is not store.src[0])

# schedules by graph structure: a training step builds the same graph every time, only its buffers differ
_schedule_cache: dict[tuple, tuple] = {}

class Walk(NamedTuple):
  """One walk of some roots' graphs (`walk`): what realizing them needs to know before scheduling."""
  nodes: list[UOp]      # every node, each after its sources
  key: tuple            # the schedule cache's key: the graph with every BUFFER replaced by its first-seen
                        # position (equal for graphs that differ only in which buffers they read)
  bufs: list[UOp]       # the distinct BUFFER nodes, in first-seen order
  flagged: list[UOp]    # the non-BUFFER nodes whose op is in `ops`, or whose __dict__ holds `attr`

def walk(roots: list[UOp], ops: frozenset = frozenset(), attr: str = "") -> Walk:
  """The nodes in toposort_many's order, the schedule cache's structure key and the flagged nodes, in one pass over the
  graph (a small graph's realize is host-bound: these were three walks, each about as costly as the other two)."""
  index: dict[UOp, int] = {}
  pos = index.__getitem__
  parts: list[tuple] = []
  bufs: list[UOp] = []
  flagged: list[UOp] = []
  for root in roots:
    if root in index: continue
    stack = [(root, iter(root.src))]
    while stack:
      n, it = stack[-1]
      for s in it:   # the next source not yet walked is walked first; with none left, n is done
        if s not in index:
          stack.append((s, iter(s.src)))
          break
      else:
        stack.pop()
        if (op := n.op) is Ops.BUFFER:
          parts.append((op, n.dtype, n.arg[1], n.arg[2], len(bufs)))
          bufs.append(n)
        else:
          src = n.src
          arg = n.arg
          # (-0.0 == 0.0 in a tuple's comparison: the sign is part of the key, else x/-0.0 replays x/0.0's schedule)
          if op is Ops.CONST and arg == 0 and type(arg) is float and math.copysign(1.0, arg) < 0: arg = (arg, "-0")
          parts.append((op, n.dtype, arg, (index[src[0]],) if len(src) == 1 else tuple(map(pos, src))))
          if op in ops or attr in n.__dict__: flagged.append(n)
        index[n] = len(parts) - 1
  return Walk(list(index), (tuple(parts), tuple(map(pos, roots))), bufs, flagged)

def create_schedule(roots: list[UOp], walked: Walk | None = None) -> tuple[list[ScheduleItem], Mapping[UOp, UOp]]:
  """The kernels that realize `roots`, in a valid order, and for each root (and each ASSIGN the schedule runs) the UOp
  (a view of a BUFFER version) it becomes. Graphs seen before (up to which buffers they read) reuse their schedule:
  only new output buffers and version nodes are made. A graph with symbolic shapes is scheduled with its variables
  unbound (so its kernels, and its cached schedule, serve every value) and each item carries the values to launch
  with. `walked`: walk(roots), when the caller has it."""
  if walked is None: walked = walk(roots)
  nodes = walked.nodes
  if MULTI_MADE[0] and any(n.op is Ops.MULTI for n in nodes): return schedule_multi(roots, create_schedule, _ran_custom)
  if VARIABLES_MADE[0]:   # (a process that never made a Variable pays nothing here)
    for n in nodes:
      if n.op in _SYM_OPS and _arg_has_sym(n.op, n.arg): return _create_symbolic(roots, nodes)
  return _create_plain(roots, walked)

# the ops whose arg may hold a symbolic size
_SYM_OPS = frozenset((Ops.RESHAPE, Ops.EXPAND, Ops.SHRINK, Ops.PAD, Ops.ARANGE))

def _arg_has_sym(op: Ops, arg) -> bool:
  if op is Ops.ARANGE: return type(arg[0]) is UOp
  if op is Ops.SHRINK or op is Ops.PAD: return UOp in map(type, (x for p in arg for x in p))
  return UOp in map(type, arg)

def _map_sym_arg(op: Ops, arg, fn):
  if op is Ops.ARANGE: return (fn(arg[0]),) + tuple(arg[1:])
  if op is Ops.SHRINK or op is Ops.PAD: return tuple((fn(b), fn(e)) for b, e in arg)
  return tuple(fn(s) for s in arg)

def rebind_view(u: UOp, var_vals: dict) -> UOp:
  """A scheduled result (movement ops over a BUFFER) with its variables bound again, as the tensor front end holds
  it."""
  memo: dict[UOp, UOp] = {}
  for n in u.toposort:   # bottom-up: a rebound node is built over its rebound sources
    arg = (_map_sym_arg(n.op, n.arg, lambda x: bind_sint(x, var_vals)) if n.op in _SYM_OPS and _arg_has_sym(n.op, n.arg)
           else n.arg)
    src = tuple(memo[s] for s in n.src)
    memo[n] = n if arg is n.arg and all(a is b for a, b in zip(src, n.src)) else UOp(n.op, n.dtype, src, arg)
  return memo[u]

def _unbind_nodes(nodes, var_vals: dict) -> dict[UOp, UOp]:
  """Each node (sources first) -> the same node with every bound variable in its sizes replaced by the variable; the
  values go to var_vals."""
  def unbind(x):
    return unbind_sint(x, var_vals)[0]
  memo: dict[UOp, UOp] = {}
  for n in nodes:
    arg = _map_sym_arg(n.op, n.arg, unbind) if n.op in _SYM_OPS and _arg_has_sym(n.op, n.arg) else n.arg
    src = tuple(memo[s] for s in n.src)
    memo[n] = n if arg is n.arg and all(a is b for a, b in zip(src, n.src)) else UOp(n.op, n.dtype, src, arg)
  return memo

def unbind_view(u: UOp, var_vals: dict | None = None) -> tuple[UOp, dict]:
  """u with its variables unbound, and their values (TinyJit keys captures by the unbound form)."""
  var_vals = {} if var_vals is None else var_vals
  return _unbind_nodes(list(u.toposort), var_vals)[u], var_vals

def _create_symbolic(roots: list[UOp], nodes: list[UOp]) -> tuple[list[ScheduleItem], Mapping[UOp, UOp]]:
  var_vals: dict[UOp, int] = {}
  memo = _unbind_nodes(nodes, var_vals)
  for n in nodes:
    for x in _sym_leaves(n):
      if isinstance(x, UOp) and (free := next((u for u in x.toposort if u.op is Ops.DEFINE_VAR and u not in var_vals),
                                              None)) is not None:
        raise RuntimeError(f"Variable {free.arg[0]} is used as a dimension "
                           f"({n.op.name.lower()}) without a value: bind it "
                           f"({free.arg[0]}.bind(value)) before realizing")
  back = {memo[n]: n for n in nodes}
  uroots = [memo[r] for r in roots]
  items, becomes = _create_plain(uroots, walk(uroots))
  for it in items: it.var_vals = {**it.var_vals, **var_vals} if it.var_vals else var_vals
  return items, {back.get(k, k): rebind_view(v, var_vals) for k, v in becomes.items()}

def _sym_leaves(n: UOp) -> tuple:
  if n.op not in _SYM_OPS: return ()
  if n.op is Ops.ARANGE: return (n.arg[0],)
  if n.op is Ops.SHRINK or n.op is Ops.PAD: return tuple(x for p in n.arg for x in p)
  return tuple(n.arg)

def _create_plain(roots: list[UOp], walked: Walk) -> tuple[list[ScheduleItem], Mapping[UOp, UOp]]:
  key, bufs, nodes = walked.key, walked.bufs, walked.nodes
  if (tpl := _schedule_cache.get(key)) is not None: return _instantiate(tpl, roots, bufs, nodes)
  if any(n.op is Ops.CALL for n in nodes): items, becomes = _create_inlined(roots, nodes)
  else: items, becomes = _create_schedule(roots, nodes)
  _schedule_cache[key] = _template(items, becomes, roots, bufs, nodes)
  return items, becomes

def _create_inlined(roots: list[UOp], nodes: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  """_create_schedule of the graph with its CALLs inlined (only a schedule cache miss inlines: a hit keys on the CALL
  nodes). What it returns is keyed by the nodes given: the roots, and the writes (ASSIGN, custom kernels) it runs."""
  memo = inline_calls(nodes)
  iroots = [memo[r] for r in roots]
  items, ibecomes = _create_schedule(iroots, list(toposort_many(iroots)))
  becomes = {r: ibecomes[memo[r]] for r in roots}
  for n in nodes:
    if n.op is Ops.ASSIGN and (i := memo[n]) in ibecomes: becomes[n] = ibecomes[i]
    elif n.op is Ops.CUSTOM_KERNEL and (i := memo[n]) is not n and i in _ran_custom: _ran_custom[n] = _ran_custom[i]
  return items, becomes

def _template(items: list[ScheduleItem], becomes: dict[UOp, UOp], roots: list[UOp], bufs: list[UOp],
              nodes: list[UOp]) -> tuple:
  """The schedule with every buffer version named by a slot: the graph's buffers first (in `bufs` order), then one
  slot per version the schedule makes, each with how to make it (a fresh memory, or the next version of a slot
  before it)."""
  slot: dict[UOp, int] = {b: i for i, b in enumerate(bufs)}
  make: list[tuple] = []
  def ref(b: UOp) -> int:
    if b not in slot:
      slot[b] = len(bufs) + len(make)
      make.append(("new", b.arg[1], b.arg[2], b.dtype))
    return slot[b]
  titems = []
  for it in items:
    for k, new in it.bumps:
      src = ref(it.bufs[k])
      slot[new] = len(bufs) + len(make)
      make.append(("ver", src))
    titems.append((it.kind, it.ast, tuple(ref(b) for b in it.bufs), it.meta,
                   tuple((k, ref(new)) for k, new in it.bumps),
                   it.var_vals))
  node_pos = {n: i for i, n in enumerate(nodes)}
  # each result as (its node's position, the slot of its memory, the views over that memory, bottom up, that make it)
  tbecomes = tuple((node_pos[n], ref(v.base), _view_chain(v)) for n, v in becomes.items() if v.base.op is Ops.BUFFER)
  customs = tuple((node_pos[n], tuple(ref(b) for b in v)) for n, v in _ran_custom.items() if n in node_pos)
  return titems, tbecomes, customs, tuple(make)

def _instantiate(tpl: tuple, roots: list[UOp], bufs: list[UOp],
                 nodes: list[UOp]) -> tuple[list[ScheduleItem], Mapping[UOp, UOp]]:
  titems, tbecomes, customs, make = tpl
  v = list(bufs)   # slot -> this instance's buffer version (a version's source slot comes before it)
  for m in make: v.append(new_buffer_uop(m[1], m[2], m[3]) if m[0] == "new" else next_version(v[m[1]]))
  items = [ScheduleItem(kind, ast, [v[i] for i in tb], meta=meta,
                        bumps=tuple([(k, v[i]) for k, i in tv]) if tv else (), var_vals=vv)
           for kind, ast, tb, meta, tv, vv in titems]
  for p, tb in customs: _ran_custom[nodes[p]] = tuple([v[i] for i in tb])
  if DEBUG.value >= 1:
    print(f"teeny: scheduled {sum(1 for i in items if i.kind != 'copy')} kernels, {len(items)} items (cached)")
  def becomes() -> dict[UOp, UOp]:
    out: dict[UOp, UOp] = {r: r for r in roots}
    for p, i, chain in tbecomes:
      u = v[i]
      for op, dt, arg, shape in chain: u = _with_shape(UOp(op, dt, (u,), arg), shape)
      out[nodes[p]] = u
    return out
  return items, Becomes(becomes)

class Becomes(Mapping):
  """A cached schedule's `becomes`, made when first read: realize reads it once the kernels are launched, so building
  the result views does not delay the launch (a small kernel's end-to-end time is mostly host time before it)."""
  __slots__ = ("_make", "_d")
  def __init__(self, make: Callable[[], dict[UOp, UOp]]):
    self._make: Callable[[], dict[UOp, UOp]] | None = make
    self._d: dict[UOp, UOp] | None = None
  def _dict(self) -> dict[UOp, UOp]:
    if self._d is None:
      assert self._make is not None
      self._d, self._make = self._make(), None
    return self._d
  def __getitem__(self, k): return (self._d if self._d is not None else self._dict())[k]
  def __iter__(self): return iter(self._dict())
  def __len__(self) -> int: return len(self._dict())
  def items(self): return self._dict().items()   # (the dict's own views: Mapping's go through __getitem__ per key)
  def get(self, k, default=None): return self._dict().get(k, default)

def _memory_of(n: UOp, buffer_of: dict[UOp, UOp]) -> UOp:
  return n if n.op is Ops.BUFFER else buffer_of[n]

def _create_schedule(roots: list[UOp], nodes: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  realize = find_realizes(roots)
  order = [n for n in nodes if n in realize]
  buffer_of: dict[UOp, UOp] = {}
  items: list[ScheduleItem] = []
  for n in order:
    if n.op is Ops.COPY:
      src = n.src[0]
      sbuf = _memory_of(src.base, buffer_of)
      out = new_buffer_uop(n.arg, _alloc_size(n.shape), n.dtype)
      buffer_of[n] = out
      items.append(ScheduleItem("copy", None, [out, sbuf]))
      continue
    if n.op is Ops.KERNEL_OUT:
      buffer_of[n] = _ran_custom[n.src[0]][n.arg]
      continue
    if n.op is Ops.ALLREDUCE:
      # one item for every device's node of the collective: outputs (fresh buffers), then the partials it reads
      if n not in buffer_of:
        group = [UOp(Ops.ALLREDUCE, n.dtype, n.src, (n.arg[0], i)) for i in range(len(n.src))]
        outs = [new_buffer_uop(g.device, _alloc_size(g.shape), g.dtype) for g in group]
        buffer_of.update(zip(group, outs))
        items.append(ScheduleItem("allreduce", None, outs + [_memory_of(s.base, buffer_of) for s in n.src],
                                  meta=n.arg[0]))
      continue
    if n.op is Ops.CUSTOM_KERNEL:
      bufs = [_memory_of(s.base, buffer_of) for s in n.src]
      bumps = tuple((k, next_version(bufs[k])) for k in sorted(written_slots(n.arg[0])))
      items.append(ScheduleItem("custom", n.arg[0], bufs, meta=n.arg, bumps=bumps,
                                var_vals=dict(n.arg[2]) if len(n.arg) > 2 else None))   # (engine/multi.py: _device_num)
      after = list(bufs)
      for k, new in bumps: after[k] = new
      _ran_custom[n] = tuple(after)
      continue
    if n.op is Ops.ASSIGN:
      target, value, index = n.src[0], n.src[1], (n.src[2] if len(n.src) > 2 else None)
      prev = target.base
      pbuf = _memory_of(prev, buffer_of)
      if sprod(value.shape) == 0:   # writes nothing: the memory keeps its version
        buffer_of[n] = pbuf
        continue
      kb = KernelBuilder(n, pbuf, buffer_of)
      ast = kb.build_write(target, prev, value, index)
      if _reads_at_other_index(ast):
        # the value (or scatter index) reads the memory it overwrites at other addresses: compute it first, into
        # memory of its own. A value that is only a view of other memory is read where it is; a view of this memory
        # (t[1:] = t[:-1], t.assign(t.flip(0))) is copied like any other value: read in place, the kernel would read
        # elements it had already overwritten
        copied = buffer_of
        for v in (value, index):
          if v is None or (v.base.op is Ops.BUFFER and v.base.arg[0] != pbuf.arg[0]): continue
          tmp = new_buffer_uop(target.device, _alloc_size(v.shape), v.dtype)
          # (built as a plain copy: a value that has memory already, an earlier write into this memory
          # `a[0] = 5; a[::-1] = a`, is loaded from it, never lowered as a write of its own)
          kb2 = KernelBuilder(n, tmp, buffer_of)
          items.append(ScheduleItem("kernel", kb2.build(v, v.shape), kb2.bufs))
          # a value with memory keeps it for everything else (the version an earlier write made): only this write
          # reads the copy
          if v in buffer_of: copied = {**copied, v: tmp}
          else: buffer_of[v] = tmp
        kb = KernelBuilder(n, pbuf, copied)
        ast = kb.build_write(target, prev, value, index)
      new = next_version(pbuf)
      buffer_of[n] = new
      items.append(ScheduleItem("kernel", ast, kb.bufs, meta="assign", bumps=((0, new),)))
      continue
    out = new_buffer_uop(n.device, _alloc_size(n.shape), n.dtype)
    buffer_of[n] = out
    if sprod(n.shape) == 0: continue   # nothing to compute
    kb = KernelBuilder(n, out, buffer_of)
    items.append(ScheduleItem("kernel", kb.build(n, n.shape), kb.bufs))
  items = order_items(items)
  becomes: dict[UOp, UOp] = {}
  for r in roots:
    base = r.base
    becomes[r] = (r if base.op in (Ops.BUFFER, Ops.CONST)
                  else _reapply_views(r, base, _as_shaped(buffer_of[base], base.shape)))
  for n in order:
    if n.op is Ops.ASSIGN: becomes[n] = _as_shaped(buffer_of[n], n.shape)
  if DEBUG >= 1: print(f"teeny: scheduled {sum(1 for i in items if i.kind != 'copy')} kernels, {len(items)} items")
  return items, becomes

def _as_shaped(buf: UOp, shape: tuple[int, ...]) -> UOp:
  if shape == buf.shape: return buf
  if isinstance(n := sprod(shape), UOp):   # a buffer allocated for the largest size, viewed at the symbolic one
    buf = UOp(Ops.SHRINK, buf.dtype, (buf,), ((0, n),))
    if (n,) == tuple(shape): return buf
  return UOp(Ops.RESHAPE, buf.dtype, (buf,), tuple(shape))

def _view_chain(v: UOp) -> tuple:
  """The movement ops (and DETACHes) from v's base up to v, as (op, dtype, arg, shape), bottom up."""
  chain = []
  while v.op is not Ops.BUFFER:
    chain.append((v.op, v.dtype, v.arg, v.shape))
    v = v.src[0]
  return tuple(reversed(chain))

def _reapply_views(r: UOp, base: UOp, new_base: UOp) -> UOp:
  """r is a chain of movement ops (and DETACHes) over `base`: the same chain over `new_base`."""
  chain = []
  while r is not base:
    chain.append(r)
    r = r.src[0]
  out = new_base
  for n in reversed(chain): out = n.replace(src=(out,))
  return out

def order_items(items: list[ScheduleItem]) -> list[ScheduleItem]:
  """Order items so each runs after the items that make the versions it reads (read after write), and every item that
  reads a version runs before the in-place write that overwrites it (write after read). When an item needs both the
  old contents and (through other items) the new ones, it reads a copy of the old version taken before the write."""
  producer: dict[UOp, int] = {}
  for p, it in enumerate(items):
    for b in it.produced(): producer[b] = p
  deps: list[set[int]] = [{producer[b] for b in it.consumed() if b in producer and producer[b] != j}
                          for j, it in enumerate(items)]
  overwriter = {it.bufs[slot]: i for i, it in enumerate(items) for slot, _ in it.bumps}
  if overwriter:
    snapshots: dict[UOp, int] = {}
    for j in range(len(items)):
      for b in items[j].consumed():
        i = overwriter.get(b)
        if i is None or i == j: continue
        if i not in _ancestors(deps, j):
          deps[i].add(j)
          continue
        # j needs the write's result and the contents it overwrites: give j a copy of the old version
        if b not in snapshots:
          snap = new_buffer_uop(b.arg[1], b.arg[2], b.dtype)
          snapshots[b] = len(items)
          items.append(ScheduleItem("copy", None, [snap, b]))
          deps.append({producer[b]} if b in producer else set())
          deps[i].add(snapshots[b])
        k = snapshots[b]
        snap = items[k].bufs[0]
        items[j].bufs = [snap if x is b else x for x in items[j].bufs]
        deps[j].add(k)
  # depth-first, dependencies first (iterative: a recursive closure would be a reference cycle holding the items'
  # buffers)
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
      if k in onstack:
        raise RuntimeError("internal: the schedule has a cycle between in-place writes and their readers")
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
