"""Order a kernel's UOps into a list ready to render: loops opened and closed (RANGE ... END), reduce accumulators
declared before their loops (REDUCE) and updated inside them (ASSIGN), every value emitted after its sources and in a
scope where its users can see it."""
from __future__ import annotations
from teeny.uop.ops import AxisType, Ops, UOp, bottom_up

EFFECTS = (Ops.STORE, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER, Ops.WMMA)
_AXIS_ORDER = {AxisType.GLOBAL: 0, AxisType.LOCAL: 1, AxisType.GROUP: 2, AxisType.LOOP: 3, AxisType.UPCAST: 4,
               AxisType.UNROLL: 4, AxisType.REDUCE: 5}

# ranges that become accumulator dimensions, looped inside the reduce loop (UNROLL ranges are gone: codegen/expand.py)
_INNER = (AxisType.UPCAST,)

def range_key(r: UOp) -> tuple: return (_AXIS_ORDER[r.arg[1]], r.arg[0])

_NO_RANGES: frozenset[UOp] = frozenset()

def _deps(u: UOp) -> frozenset[UOp]:
  if u.op is Ops.RANGE: return frozenset([u])
  if not u.src: return _NO_RANGES
  d = [s.__dict__["_deps"] for s in u.src]
  out = d[0] if len(d) == 1 else frozenset().union(*d)
  if u.op is Ops.REDUCE: out = out - frozenset(u.src[1:])
  return out

def deps(u: UOp) -> frozenset[UOp]:
  """The open loop ranges a value depends on (ranges a REDUCE closes are not open outside it); cached on the node and
  computed bottom-up without recursion (a value thousands of ops deep is fine)."""
  return bottom_up(u, "_deps", _deps, lambda n: n.op is not Ops.RANGE)

class Linearizer:
  def __init__(self) -> None:
    self.out: list[UOp] = []
    self.scopes: list[set[UOp]] = [set()]
    self.open: list[UOp] = []
    self.by_ranges: dict[tuple[UOp, ...], list[UOp]] = {}   # the kernel's reduces by their reduce ranges
  def visible(self, u: UOp) -> bool: return any(u in s for s in self.scopes)
  def open_range(self, r: UOp):
    self.emit(r.src[0])
    self.out.append(r)
    self.open.append(r)
    self.scopes.append({r})
  def close_range(self):
    r = self.open.pop()
    self.scopes.pop()
    self.out.append(UOp(Ops.END, src=(r,)))
  def ensure_open(self, need: frozenset[UOp]):
    for r in sorted(need, key=range_key):
      if r not in self.open: self.open_range(r)
  def emit(self, root: UOp):
    """Emit a value after its sources (depth first, in source order), with an explicit stack instead of recursion."""
    stack: list[tuple[UOp, bool]] = [(root, False)]
    while stack:
      u, ready = stack.pop()
      if ready:
        self.out.append(u)
        self.scopes[-1].add(u)
        continue
      if u.op in (Ops.CONST, Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.TENSOR_MAP, Ops.DEFINE_LOCAL, Ops.DEFINE_REG,
                  Ops.NOOP) or \
         self.visible(u): continue
      if u.op is Ops.RANGE: self.open_range(u)
      elif u.op is Ops.REDUCE: self.emit_reduce(u)
      elif u.op is Ops.END: self.emit_effect(u)
      else:
        stack.append((u, True))
        stack.extend((s, False) for s in reversed(u.src))
  def acc_dims(self, red: UOp) -> list[UOp]:
    """UPCAST ranges the value depends on become dimensions of the accumulator: loops over them run inside the reduce
    loop (where the compiler unrolls and vectorises them), not around it."""
    return sorted([r for r in deps(red) if r.arg[1] in _INNER and r not in self.open], key=range_key)
  def siblings(self, red: UOp, upcast: list[UOp]) -> list[UOp]:
    """Reduces that can share red's loop: the same reduce ranges, accumulator dimensions and open ranges, neither
    reading the other (a register tile written out by UNROLL, codegen/expand.py: one accumulator per output)."""
    group = [red]
    for s in self.by_ranges.get(red.src[1:], ()):
      if s is red or self.visible(s) or deps(s) != deps(red) or self.acc_dims(s) != upcast: continue
      if all(g not in s.toposort and s not in g.toposort for g in group): group.append(s)
    return group
  def emit_reduce(self, red: UOp):
    rngs = red.src[1:]
    upcast = self.acc_dims(red)
    self.ensure_open(deps(red) - frozenset(self.open) - frozenset(upcast))
    group = self.siblings(red, upcast)
    for g in group:
      # hoist what the loops do not change
      for n in g.src[0].toposort:
        if n.op in (Ops.RANGE, Ops.REDUCE) or n.op in EFFECTS or self.visible(n): continue
        if deps(n) <= frozenset(self.open): self.emit(n)
      # a reduce over an UPCAST range (lanes combined at the end) first runs the reduces inside it that depend on that
      # range, with the range (and the UPCAST ranges of this reduce's value: a tile of outputs, each a vector of
      # lanes) as accumulator dimensions, outside its loop
      if lanes := frozenset(r for r in rngs if r.arg[1] in _INNER):
        tile = lanes | frozenset(upcast)
        for n in g.src[0].toposort:
          if n.op is Ops.REDUCE and not self.visible(n) and deps(n) - tile <= frozenset(self.open): self.emit_reduce(n)
    for g in group:
      self.out.append(g)
      self.scopes[-1].add(g)
    depth = len(self.open)
    for r in rngs: self.open_range(r)
    for r in upcast: self.open_range(r)
    for g in group:
      self.emit(g.src[0])
      self.out.append(UOp(Ops.ASSIGN, g.dtype, (g, g.src[0])))
    while len(self.open) > depth: self.close_range()
  def emit_effect(self, e: UOp):
    body, closes = (e.src[0], e.src[1:]) if e.op is Ops.END else (e, ())
    need = deps(body) | frozenset(closes)
    upcast = frozenset(r for r in need if r.arg[1] in _INNER)
    # reduces first, outside the UPCAST loops (their accumulators span those loops)
    self.ensure_open(need - upcast)
    if upcast:
      for n in body.toposort:
        if n.op is Ops.REDUCE and not self.visible(n) and deps(n) - upcast <= frozenset(self.open): self.emit_reduce(n)
    self.ensure_open(need)
    if body.op is Ops.END: self.emit_effect(body)
    else:
      for s in body.src: self.emit(s)
      if not self.visible(body):
        self.out.append(body)
        self.scopes[-1].add(body)
    for r in closes:
      if r in self.open:
        while r in self.open: self.close_range()

def linearize(sink: UOp) -> list[UOp]:
  """The kernel SINK as an ordered instruction list (loops balanced), ending with the SINK itself."""
  lin = Linearizer()
  for u in sink.toposort:
    if u.op is Ops.REDUCE: lin.by_ranges.setdefault(u.src[1:], []).append(u)
  for g in sorted([u for u in sink.toposort if u.op is Ops.DEFINE_GLOBAL], key=lambda u: u.arg[0]): lin.out.append(g)
  for v in sorted([u for u in sink.toposort if u.op is Ops.DEFINE_VAR], key=lambda u: u.arg[0]): lin.out.append(v)
  # (parameters in this order: buffers, variables, tensor maps; the runtime passes them so)
  for v in sorted([u for u in sink.toposort if u.op is Ops.TENSOR_MAP], key=lambda u: u.arg[0]): lin.out.append(v)
  # kernel-private arrays (Opt STAGE, shared memory, register arrays) are declared once, before any loop
  for op in (Ops.DEFINE_LOCAL, Ops.DEFINE_REG):
    for v in sorted([u for u in sink.toposort if u.op is op], key=lambda u: u.arg[0]): lin.out.append(v)
  # parallel (GLOBAL) ranges are outermost and shared by every effect
  glob = sorted([u for u in sink.toposort if u.op is Ops.RANGE and u.arg[1] in (AxisType.GLOBAL, AxisType.LOCAL)],
                key=range_key)
  for r in glob: lin.open_range(r)
  # a SINK may list placeholders it never touches (a custom kernel's parameters then still match its call)
  for e in sink.src:
    if e.op is not Ops.DEFINE_GLOBAL: lin.emit_effect(e)
  while lin.open: lin.close_range()
  # the SINK ends the list: its KernelInfo (name, applied Opts) is there for the renderer and the launch dims
  return lin.out + [sink]
