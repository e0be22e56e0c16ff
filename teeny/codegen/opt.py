"""Optimisations as data. An `Opt(op, axis, arg)` names one change to a kernel's ranges; `apply_opts` applies a list of
them to a kernel AST, and the heuristics (`hand_coded_opts`) only *choose* a list. Heuristics, BEAM and hand-written
kernels (`KernelInfo(opts_to_apply=[...])`) therefore speak one language, and the list a kernel ran with is recorded
(`ProgramSpec.opts`, the SINK's `KernelInfo.opts_to_apply`, `DEBUG=3`).

`axis` is a range's axis id (`RANGE.arg[0]`), the number its loop variable is named after (`g1`, `r3`...). The ops:

  UPCAST  axis, n   the axis's inner n values become an accumulator / register dimension looped inside the reduce (on a
                    GLOBAL axis: a register tile of outputs; on a REDUCE axis: n independent partial results, combined
                    at the end); the new range's id is 100 + axis
  UNROLL  axis, n   the same, the dimension written out straight-line (one copy per value) instead of looped
  LOCAL   axis, n   GPU: the axis's inner n values become thread indices of one block (id 200 + axis)
  GROUP   axis, n   GPU: the reduce over `axis` (with all its ranges) is shared by n lanes of a block and combined in
                    shared memory; only lane 0 stores
  PADTO   axis, n   the axis is padded up to a multiple of n; the extra iterations are masked
  SWAP    axis, b   axes `axis` and `b` (same kind) trade places in the loop nest / grid
  NOLOCALS          GPU: no threads per block for the grid's x axis (one block per index)
  LOOP    axis, n   the axis's inner n values become a plain loop (id 300 + axis) inside the GLOBAL loops: with a SWAP
                    that moves the outer part out, cache blocking (a block of B's columns stays in L2 while every row
                    block of A streams past it)
  STAGE   -, slot   C: the reduce's load of buffer `slot` reads a copy packed into a kernel-private array: the
                    GLOBAL ranges its address does not depend on become plain loops (LOOP) inside the ones it does, and
                    once per iteration of those, the slice it reads is copied in the order the reduce reads it (a B
                    panel of a matmul-like reduce, read at a stride of a row per step, becomes one contiguous stream)
  TC      -, tile   GPU: tensor cores (codegen/tc.py). A matmul of float16/bfloat16 inputs (float32 under TF32)
                    summed in float32 is rebuilt as block tiles staged through shared memory (`stages` deep) and warp
                    instructions on fragments (Ops.WMMA); `tile` names a TC_CONFIGS entry (e.g. "128x128x64w2x4s3") or
                    None for the heuristics' pick. Only on renderers with tensor cores (CUDA, AMD gfx11/CDNA), only as
                    the kernel's one Opt
  SMEM    -, tile   GPU (CUDA): a float32 matmul (TF32 off) on CUDA cores, staged like TC (the same builder: cp.async
                    copies into `stages` shared-memory tiles), each thread a register tile of multiply-adds; `tile`
                    names a SMEM_CONFIGS entry (e.g. "128x128x16t8x8s3") or None for the heuristics' pick. The
                    kernel's one Opt

An Opt that does not fit the kernel raises `KernelOptError` (a ValueError) naming the axis and its size; BEAM skips
it."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any, cast
from teeny.dtype import dtypes
from teeny.helpers import FastEnum, auto, getenv, prod
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic
from teeny.codegen.tc import (SMEM_MIN_WORK, apply_smem, apply_tc, pick_config, pick_smem_config, smem_refusal,
                              tc_match, tc_refusal)
from teeny.codegen.ranges import (KernelOptError, coefficient, const_size, flatten_ranges, gate, global_ranges,
                                  ranges_of, replace_range)

class OptOps(FastEnum):
  UPCAST = auto(); UNROLL = auto(); LOCAL = auto(); GROUP = auto(); PADTO = auto(); SWAP = auto()
  NOLOCALS = auto(); TC = auto(); LOOP = auto(); STAGE = auto(); SMEM = auto()
  def __repr__(self): return f"OptOps.{self.name}"

@dataclass(frozen=True)
class Opt:
  op: OptOps
  axis: int | None = None
  arg: Any = None
  def __repr__(self): return f"Opt({self.op!r}, {self.axis}, {self.arg})"

GPU_LOCAL = getenv("GPU_LOCAL", 256)        # threads per block of elementwise kernels, lanes of a grouped reduce
GROUP_MIN_REDUCE = 256                     # a reduce at least this long may be spread over a block's lanes
GPU_UPCAST = tuple(int(x) for x in getenv("GPU_UPCAST", "4,8").split(","))   # GPU register tile: contiguous, other axis
# the id of the range an UPCAST/UNROLL (LOCAL, LOOP) splits off axis a: 100+a...
UPCAST_ID, LOCAL_ID, LOOP_ID, STAGE_ID = 100, 200, 300, 400
_SPLITTABLE = (AxisType.GLOBAL, AxisType.LOOP, AxisType.REDUCE)

def lane_special(lanes: int) -> UOp:
  """The lane index of a grouped reduce (thread x of its block); its arg carries the lane count to the renderer."""
  return UOp(Ops.SPECIAL, dtypes.index, (), ("lidx0", lanes))

# ---- ranges (their helpers live in codegen/ranges.py)

def _has_divmod_of(ast: UOp, r: UOp) -> int:
  return sum(1 for u in ast.toposort if u.op in (Ops.IDIV, Ops.MOD) and r in u.src[0].toposort)

def merge_globals(ast: UOp) -> UOp:
  """Fuse adjacent parallel loops into one when every address stays free of div/mod: fewer, longer loops split
  better across cores and vectorise. (A normalisation that runs before the heuristics choose, not an Opt.)"""
  changed = True
  while changed:
    changed = False
    rngs = global_ranges(ast)
    for a, b in zip(rngs, rngs[1:]):
      sa, sb = a.src[0].arg, b.src[0].arg
      merged = UOp.range(sa * sb, a.arg[0], AxisType.GLOBAL)
      cand = graph_rewrite(ast.substitute({a: merged // sb, b: merged % sb}), symbolic)
      if _has_divmod_of(cand, merged) <= _has_divmod_of(ast, a) + _has_divmod_of(ast, b):
        ast, changed = cand, True
        break
  return ast

def merge_reduces(ast: UOp) -> UOp:
  """Fuse two ranges of one reduction into one where every address stays free of div/mod: a sum over (batch, time)
  of a contiguous tensor is one sum over batch*time. The heuristics split and tile one reduce axis; with two (the
  weight gradient of a Linear applied to (B, T, D)), a 256x256x(32*128) float32 matmul took 2.4 ms on the H200.
  (A normalisation that runs before the heuristics choose, not an Opt.)"""
  changed = True
  while changed:
    changed = False
    reds = [u for u in ast.toposort if u.op is Ops.REDUCE and len(u.src) > 2]
    for red in reds:
      sizes = {r: n for r in red.src[1:] if r.op is Ops.RANGE and (n := const_size(r)) is not None}
      for a, b in ((a, b) for a in sizes for b in sizes if a is not b):
        sa, sb = sizes[a], sizes[b]
        merged = UOp.range(sa * sb, a.arg[0], AxisType.REDUCE)
        outer, inner = merged // sb, merged % sb
        cand = ast.substitute({a: outer, b: inner})
        # each reduce over both now reduces over the merged range (and stays a reduce over ranges)
        fix = {u: u.replace(src=(u.src[0],) + tuple(dict.fromkeys(merged if s in (outer, inner) else s
                                                              for s in u.src[1:])))
               for u in cand.toposort if u.op is Ops.REDUCE and outer in u.src[1:] and inner in u.src[1:]}
        if any(u.op is Ops.REDUCE and (outer in u.src[1:]) != (inner in u.src[1:]) for u in cand.toposort): continue
        cand = graph_rewrite(cand.substitute(fix), symbolic)
        if _has_divmod_of(cand, merged) == 0:
          ast, changed = cand, True
          break
      if changed: break
  return ast

# ---- applying one Opt

def _describe(ast: UOp) -> str:
  return ", ".join(f"{r.arg[0]} ({r.arg[1].name}, {const_size(r) or r.src[0]})" for r in ranges_of(ast)) or "none"

def _axis(ast: UOp, opt: Opt, kinds: tuple[AxisType, ...]) -> tuple[UOp, int]:
  """The range `opt.axis` names, checked to be of one of `kinds` with a constant size; (range, size)."""
  found = [r for r in ranges_of(ast) if r.arg[0] == opt.axis]
  if not found:
    raise KernelOptError(f"{opt.op.name}: the kernel has no axis {opt.axis}; its axes (id, kind, size) are "
                         f"{_describe(ast)}")
  r = found[0]
  if r.arg[1] not in kinds:
    raise KernelOptError(f"{opt.op.name} axis {opt.axis} (size {r.src[0].arg}) is a {r.arg[1].name} range; "
                         f"{opt.op.name} applies to {'/'.join(k.name for k in kinds)} ranges")
  if (size := const_size(r)) is None:
    raise KernelOptError(f"{opt.op.name} axis {opt.axis} has a symbolic size ({r.src[0]}); it needs a constant")
  return r, size

def _amount(opt: Opt, size: int, divides: bool = True) -> int:
  n = opt.arg
  if not isinstance(n, int) or isinstance(n, bool) or n < 2:
    raise KernelOptError(f"{opt.op.name} axis {opt.axis} (size {size}): the amount must be an int >= 2, got {n!r}")
  if divides and size % n != 0:
    raise KernelOptError(f"{opt.op.name} axis {opt.axis} (size {size}) by {n}: {size} is not a multiple of {n} "
                         "(PADTO it first)")
  return n

def _fresh_id(ast: UOp, want: int) -> int:
  used = {r.arg[0] for r in ranges_of(ast)}
  while want in used: want += 1
  return want

def _need_gpu(opt: Opt, renderer):
  if not getattr(renderer, "is_gpu", False):
    raise KernelOptError(f"{opt.op.name} needs a GPU renderer (threads in blocks); {type(renderer).__name__} has none")

def _reduces_over(ast: UOp, r: UOp) -> list[UOp]:
  return [u for u in ast.toposort if u.op is Ops.REDUCE and r in u.src[1:]]

def _split_off(ast: UOp, opt: Opt, kind: AxisType) -> UOp:
  """UPCAST/UNROLL (and LOCAL): r -> r_outer*n + inner, inner a new range of `kind`. On a REDUCE axis the reduce is
  split in two, REDUCE(REDUCE(x[r_outer*n + lane], r_outer), lane): n partial results combined at the end."""
  r, size = _axis(ast, opt, {AxisType.LOCAL: (AxisType.GLOBAL,),
                             AxisType.LOOP: (AxisType.GLOBAL, AxisType.LOOP)}.get(kind, _SPLITTABLE))
  n = _amount(opt, size)
  outer = UOp.range(size // n, r.arg[0], r.arg[1])
  inner = UOp.range(n, _fresh_id(ast, {AxisType.LOCAL: LOCAL_ID, AxisType.LOOP: LOOP_ID}.get(kind, UPCAST_ID)
                                 + r.arg[0]), kind)
  if r.arg[1] is not AxisType.REDUCE:
    return graph_rewrite(replace_range(ast, r, outer * n + inner, (outer, inner)), symbolic)
  mapping = {}
  for red in _reduces_over(ast, r):
    rest = tuple(outer if x is r else x for x in red.src[1:])
    part = UOp(Ops.REDUCE, red.dtype, (red.src[0].substitute({r: outer * n + inner}),) + rest, red.arg)
    mapping[red] = UOp(Ops.REDUCE, red.dtype, (part, inner), red.arg)
  return graph_rewrite(ast.substitute(mapping), symbolic)

def _identity(red: UOp) -> UOp:
  v = {Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dtypes.min(red.dtype), Ops.MIN: dtypes.max(red.dtype)}[red.arg]
  return UOp.const(red.dtype, v)

def _gate_loads(u: UOp, new: UOp, valid: UOp) -> UOp:
  """u with every load whose address depends on `new` masked by `valid` (a masked load reads 0, never out of bounds)."""
  idxs = {x.src[0] for x in u.toposort if x.op is Ops.LOAD and new in x.src[0].toposort}
  return u.substitute({i: gate(i, valid) for i in idxs})

def _padto(ast: UOp, opt: Opt) -> UOp:
  r, size = _axis(ast, opt, _SPLITTABLE)
  n = _amount(opt, size, divides=False)
  if size % n == 0: raise KernelOptError(f"PADTO axis {opt.axis} (size {size}) to {n}: already a multiple of {n}")
  topo = list(ast.toposort)
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER) for u in topo):
    raise KernelOptError(f"PADTO axis {opt.axis} (size {size}): the kernel has atomics or custom code that cannot be "
                         "masked")
  if any(u.op in (Ops.IDIV, Ops.MOD) and u.dtype.kind in "iu" and u.src[1].op is not Ops.CONST for u in topo):
    raise KernelOptError(f"PADTO axis {opt.axis} (size {size}): an integer division by a loaded value would divide by "
                         "the masked loads' 0")
  new = UOp.range(-(-size // n) * n, r.arg[0], r.arg[1])
  valid = new < size
  if r.arg[1] is AxisType.REDUCE:
    mapping = {}
    for red in _reduces_over(ast, r):
      val = _gate_loads(red.src[0].substitute({r: new}), new, valid)
      mapping[red] = UOp(Ops.REDUCE, red.dtype,
                         (valid.where(val, _identity(red)),) + tuple(new if x is r else x for x in red.src[1:]),
                         red.arg)
    return graph_rewrite(ast.substitute(mapping), symbolic)
  ast = _gate_loads(replace_range(ast, r, new, (new,)), new, valid)
  targets = {u.src[0] for u in ast.toposort if u.op is Ops.STORE and new in u.src[0].toposort}
  return graph_rewrite(ast.substitute({i: gate(i, valid) for i in targets}), symbolic)

def _swap(ast: UOp, opt: Opt) -> UOp:
  a, _ = _axis(ast, opt, (AxisType.GLOBAL, AxisType.LOOP, AxisType.REDUCE))
  b, _ = _axis(ast, Opt(opt.op, opt.arg), (a.arg[1],))
  if a is b: raise KernelOptError(f"SWAP axis {opt.axis} with itself")
  na, nb = UOp.range(a.src[0], b.arg[0], a.arg[1]), UOp.range(b.src[0], a.arg[0], b.arg[1])
  return ast.substitute({a: na, b: nb})   # simultaneous: na may be b itself (equal sizes)

def _group(ast: UOp, opt: Opt) -> UOp:
  r, size = _axis(ast, opt, (AxisType.REDUCE,))
  n = opt.arg
  if not isinstance(n, int) or n < 2 or n > 1024 or n & (n - 1):
    raise KernelOptError(f"GROUP axis {opt.axis} (size {size}): the lane count must be a power of two in 2..1024, "
                         f"got {n!r}")
  topo = list(ast.toposort)
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER) for u in topo) or \
     any(u.op is Ops.RANGE and u.arg[1] in (AxisType.LOCAL, AxisType.UPCAST, AxisType.UNROLL, AxisType.LOOP)
         for u in topo):
    raise KernelOptError(f"GROUP axis {opt.axis} (size {size}): only a kernel of GLOBAL and REDUCE ranges "
                         "(no LOCAL, UPCAST, "
                         "UNROLL or LOOP ranges, atomics or custom code) can group a reduce; apply GROUP first")
  if (other := next((u for u in topo if u.op is Ops.SPECIAL and u.arg[0] == "lidx0"),
                    None)) is not None and other.arg[1] != n:
    raise KernelOptError(f"GROUP axis {opt.axis} (size {size}) by {n}: the kernel's reduces are grouped by "
                         f"{other.arg[1]} lanes already")
  reds = _reduces_over(ast, r)
  allreds = [u for u in topo if u.op is Ops.REDUCE]
  if any(a is not b and (a in b.src[0].toposort or b in a.src[0].toposort) for a in reds for b in allreds):
    raise KernelOptError(f"GROUP axis {opt.axis} (size {size}): the reduce is nested in (or holds) another reduce")
  if any(const_size(x) is None for red in reds for x in red.src[1:]):
    raise KernelOptError(f"GROUP axis {opt.axis} (size {size}): every range of the reduce needs a constant size")
  mapping = {}
  for red in reds:
    val, grp = flatten_ranges(red.src[0], list(red.src[1:]), AxisType.GROUP)
    mapping[red] = UOp(Ops.REDUCE, red.dtype, (val, grp), red.arg)  # type: ignore[arg-type]  # a reduce has ranges: grp is set
  ast = ast.substitute(mapping)
  lane0 = lane_special(n).eq(0)
  stores = {st: st.replace(src=(gate(st.src[0], lane0),) + st.src[1:]) for st in ast.toposort
            if st.op is Ops.STORE and lane0 not in st.src[0].toposort}
  return graph_rewrite(ast.substitute(stores), symbolic)

def _nolocals(ast: UOp, opt: Opt) -> UOp:
  if any(u.op is Ops.RANGE and u.arg[1] in (AxisType.LOCAL, AxisType.GROUP) for u in ast.toposort):
    raise KernelOptError("NOLOCALS: the kernel already has LOCAL or GROUP ranges (threads in blocks)")
  return ast

def _stage(ast: UOp, opt: Opt, renderer) -> UOp:
  """STAGE: see the module docstring. Refused on GPUs, for a buffer with no single unmasked load inside a reduce, when
  the load depends on no GLOBAL range or on every one (nothing to reuse the copy), and when the copy would not fit half
  of the target's L2."""
  if getattr(renderer, "is_gpu", False) or getattr(renderer, "lang", "C") != "C":
    raise KernelOptError("STAGE packs a load into a kernel-private array of the C renderer; this renderer has none")
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER, Ops.SPECIAL) for u in ast.toposort):
    raise KernelOptError(f"STAGE {opt.arg}: the kernel has atomics or custom code")
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  loads = {u for red in reds for u in red.src[0].toposort if u.op is Ops.LOAD and u.src[0].op is Ops.INDEX and
           u.src[0].src[0].op is Ops.DEFINE_GLOBAL and u.src[0].src[0].arg[0] == opt.arg}
  if len(loads) != 1 or len((ld := next(iter(loads))).src[0].src) != 2:
    raise KernelOptError(f"STAGE {opt.arg}: the kernel's reduces read buffer {opt.arg} through {len(loads)} loads; "
                         "STAGE "
                         "needs exactly one, unmasked")
  idx = ld.src[0]
  rngs = [x for x in idx.src[1].toposort if x.op is Ops.RANGE]
  inner = [x for x in rngs if x.arg[1] is not AxisType.GLOBAL]
  glob = global_ranges(ast)
  free = [g for g in glob if g not in rngs]
  if not any(x.arg[1] is AxisType.REDUCE for x in inner) or not free or len(free) == len(glob):
    raise KernelOptError(f"STAGE {opt.arg}: the load must move along a reduce and depend on some GLOBAL ranges but "
                         "not all "
                         f"(it depends on {[x.arg[0] for x in rngs]}; the kernel's axes are {_describe(ast)})")
  if any(const_size(x) is None for x in inner + free):
    raise KernelOptError(f"STAGE {opt.arg}: a range of the staged slice has a symbolic size")
  # the slice in the order the reduce reads it: reduce (and plain) loops outside, register-tile ranges inside
  inner.sort(key=lambda x: (x.arg[1] in (AxisType.UPCAST, AxisType.UNROLL), x.arg[0]))
  sizes = {x: cast(int, const_size(x)) for x in inner}   # (all constant: checked above)
  size = prod(sizes.values())
  if size * ld.dtype.itemsize * 2 > getattr(renderer, "cache_bytes", {}).get("L2", 512 << 10):
    raise KernelOptError(f"STAGE {opt.arg}: the slice of {size} values does not fit half of L2")
  local = UOp(Ops.DEFINE_LOCAL, ld.dtype.ptr(), (), (_fresh_id(ast, STAGE_ID), size))
  copy = [UOp.range(sizes[x], _fresh_id(ast, STAGE_ID + i), AxisType.LOOP) for i, x in enumerate(inner)]
  def linear(rs: list[UOp]) -> UOp:
    out: UOp | None = None
    stride = 1
    for r, x in zip(reversed(rs), reversed(inner)):
      term = r * stride if stride != 1 else r
      out = term if out is None else out + term
      stride *= sizes[x]
    assert out is not None, "a staged slice has at least one range"
    return out
  src = UOp(Ops.INDEX, idx.dtype, (idx.src[0], idx.src[1].substitute(dict(zip(inner, copy)))))
  fill = UOp(Ops.INDEX, local.dtype, (local, linear(copy))).store(src.load(ld.dtype)).end(*copy)
  ast = ast.substitute({ld: UOp(Ops.INDEX, local.dtype, (local, linear(inner))).load(ld.dtype)})
  for g in free: ast = replace_range(ast, g, loop := UOp.range(g.src[0], g.arg[0], AxisType.LOOP), (loop,))
  # the copy is the SINK's first effect: the linearizer writes it inside the GLOBAL loops, before the loops it serves
  return graph_rewrite(ast.replace(src=(fill,) + ast.src), symbolic)

def apply_opt(ast: UOp, opt: Opt, renderer) -> UOp:
  """The kernel with one Opt applied (KernelOptError if it does not fit)."""
  if not isinstance(opt, Opt): raise KernelOptError(f"expected an Opt, got {opt!r}")
  if opt.op is OptOps.TC:
    if any(u.op is Ops.WMMA for u in ast.toposort):
      raise KernelOptError("TC: the kernel uses tensor cores already")
    return apply_tc(ast, opt.arg, renderer)
  if opt.op is OptOps.SMEM:
    if any(u.op in (Ops.WMMA, Ops.DEFINE_LOCAL) for u in ast.toposort):
      raise KernelOptError("SMEM: the kernel is tiled already")
    return apply_smem(ast, opt.arg, renderer)
  if any(u.op is Ops.DEFINE_LOCAL for u in ast.toposort):
    raise KernelOptError(f"{opt.op.name} after STAGE: STAGE must be the last Opt (its copy is laid out for the "
                         "ranges as "
                         "they are when it applies)")
  if opt.op in (OptOps.LOCAL, OptOps.GROUP, OptOps.NOLOCALS): _need_gpu(opt, renderer)
  if opt.op is OptOps.UPCAST: return _split_off(ast, opt, AxisType.UPCAST)
  if opt.op is OptOps.UNROLL: return _split_off(ast, opt, AxisType.UNROLL)
  if opt.op is OptOps.LOOP: return _split_off(ast, opt, AxisType.LOOP)
  if opt.op is OptOps.LOCAL:
    if ranges_of(ast, AxisType.GROUP): raise KernelOptError(f"LOCAL axis {opt.axis}: the kernel has a grouped reduce")
    out = _split_off(ast, opt, AxisType.LOCAL)
    if len(global_ranges(out)) > 3 or len(ranges_of(out, AxisType.LOCAL)) > 3:
      raise KernelOptError(f"LOCAL axis {opt.axis}: a GPU kernel with LOCAL ranges has at most 3 GLOBAL and 3 LOCAL "
                           "ranges")
    return out
  if opt.op is OptOps.GROUP: return _group(ast, opt)
  if opt.op is OptOps.PADTO: return _padto(ast, opt)
  if opt.op is OptOps.SWAP: return _swap(ast, opt)
  if opt.op is OptOps.NOLOCALS: return _nolocals(ast, opt)
  if opt.op is OptOps.STAGE: return _stage(ast, opt, renderer)
  raise KernelOptError(f"unknown Opt {opt!r}")

def apply_opts(ast: UOp, opts, renderer) -> UOp:
  """The kernel with `opts` applied in order; its SINK's KernelInfo records the list (opts_to_apply = what was
  applied)."""
  opts = tuple(opts)
  for o in opts: ast = apply_opt(ast, o, renderer)
  info = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  return ast.replace(arg=KernelInfo(info.name, opts))

def has_opt(ast_or_info, op: OptOps) -> bool:
  info = ast_or_info.arg if isinstance(ast_or_info, UOp) else ast_or_info
  return isinstance(info, KernelInfo) and any(o.op is op for o in info.opts_to_apply or ())

# ---- heuristics: each returns a list of Opts, applying nothing

def _streaming_loads(red: UOp) -> list[UOp]:
  """The INDEXes of the loads of a reduce's value that move along its reduce ranges."""
  rr = set(red.src[1:])
  return [u.src[0] for u in red.src[0].toposort if u.op is Ops.LOAD and any(r in rr for r in u.src[0].toposort)]

def _tile_opts(ast: UOp, loads: list[UOp], first: tuple[int, ...], second: int, min_mult: int) -> list[Opt]:
  """Register tiling for a matmul-like reduce: `first` outputs along an axis some load reads contiguously (vector
  loads), `second` along an axis one of those loads does not depend on (each load reused)."""
  glob = [g for g in global_ranges(ast) if const_size(g) is not None]
  # the innermost output axis some load reads contiguously, by the largest amount that fits it (amount-major, a
  # 128x784 weight gradient on AVX-512 took 32 along its 128-axis instead of 16 along the contiguous 784: 673 us
  # instead of 261)
  for g1 in reversed(glob):
    if not any(coefficient(ld.src[1], g1) == 1 for ld in loads): continue
    if (amount := next((a for a in first if g1.src[0].arg % a == 0 and g1.src[0].arg >= a * min_mult), 0)): break
  else: return []
  opts = [Opt(OptOps.UPCAST, g1.arg[0], amount)]
  reused = [ld for ld in loads if coefficient(ld.src[1], g1) == 1]
  others = [g for g in glob if g is not g1 and g.src[0].arg % second == 0 and g.src[0].arg >= second * min_mult]
  others = [g for g in others if any(g not in ld.toposort for ld in reused)]
  return opts + ([Opt(OptOps.UPCAST, others[0].arg[0], second)] if others else [])

def _dot_shape(ast: UOp, red: UOp) -> tuple[list[UOp], list[UOp]] | None:
  """For a reduce shaped like x @ w.T (one reduce range; two or more loads moving along it, each contiguously, and none
  contiguous along an output axis): the constant-size output axes, and those of them some load does not depend on
  (that load's value is reused along them, the axes a tile may take). None for any other reduce."""
  loads = _streaming_loads(red)
  if len(red.src) != 2 or len(loads) < 2: return None
  if not all(coefficient(ld.src[1], red.src[1]) == 1 for ld in loads): return None
  glob = [g for g in global_ranges(ast) if const_size(g) is not None]
  if any(coefficient(ld.src[1], g) == 1 for ld in loads for g in glob): return None
  return glob, [g for g in glob if any(g not in ld.toposort for ld in loads)]

def _dot_tile_opts(ast: UOp, red: UOp, lanes: int, regs: int) -> list[Opt]:
  """Register tiling for a reduce whose loads all run contiguously along its reduce axis and along no output axis
  (x @ w.T, a Linear's forward): A x B outputs, each a vector of `lanes` partial sums along the reduce axis (UPCAST on
  it, combined once at the end), so each step loads A + B vectors for A*B multiply-adds, A*B + A + B registers. Without
  it each output was a dot product of its own (a 128x128x784 matmul on 2 cores: 15-25 GFLOP/s, with the tile 60-73)."""
  if (shape := _dot_shape(ast, red)) is None: return []
  r, axes = red.src[1], shape[1]
  if (n := const_size(r)) is None or n % lanes or n < 2 * lanes: return []
  a, b = (4, 4) if regs >= 32 else (4, 2)
  picked: list[Opt] = []
  for g, k in zip(reversed(axes), (a, b)):
    if g.src[0].arg % k == 0 and g.src[0].arg >= 2 * k: picked.append(Opt(OptOps.UPCAST, g.arg[0], k))
  return [Opt(OptOps.UPCAST, r.arg[0], lanes)] + picked if picked else []

def cpu_lanes(renderer) -> int:
  """float32 values per SIMD register of the C target, the heuristics' unit: 4 on SSE/NEON, 8 on AVX2, 16 on AVX-512
  (whose kernels compile with -mprefer-vector-width=512, runtime/ops_cpu.py)."""
  return min(max(getattr(renderer, "vector_bytes", 32) // 4, 4), 16)

def cpu_tile_rows(renderer) -> int:
  """Rows of a register tile (values broadcast, each against the tile's vectors): 8 on targets with 32 vector
  registers (16 accumulators), 4 on those with 16."""
  return 8 if getattr(renderer, "vector_registers", 16) >= 32 else 4

def cpu_opts(ast: UOp, renderer=None) -> list[Opt]:
  """The C heuristics: register tiles for a reduce (two or one vectors of outputs along a contiguous axis, 4 along a
  second; matmul), and lanes for a float max/min (see lane_split_opts). The vector is the target's (cpu_lanes): 16 or 8
  outputs on AVX2 and AVX-512, 8 or 4 on SSE/NEON; the wider choice only when the strip of the reduce it streams fits
  in L2."""
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  lanes = cpu_lanes(renderer)
  first: tuple[int, ...] = (2 * lanes, lanes)
  if len(reds) == 1 and prod(const_size(r) or 1 for r in reds[0].src[1:]) * 2 * lanes * 4 > \
     getattr(renderer, "cache_bytes", {}).get("L2", 1 << 62):
    first = (lanes,)
  # only the loads that stream along the reduce count: a per-output value read next to them (a row's max in softmax,
  # its label in cross-entropy) is contiguous in every output axis, and tiling for it turned row reductions into
  # 16 rows read at a stride (r_8192_32000 with an epilogue: 410 ms instead of about 40)
  second = cpu_tile_rows(renderer)
  opts = _tile_opts(ast, _streaming_loads(reds[0]), first, second, 2) if len(reds) == 1 else []
  if len(reds) == 1 and not opts:
    opts = _dot_tile_opts(ast, reds[0], lanes, getattr(renderer, "vector_registers", 16))
  tiled = apply_opts(ast, opts, None) if opts else ast
  return opts + lane_split_opts(tiled, lanes) + _stage_opts(ast, tiled, reds, opts, renderer)

# a reduce's vector load that steps through memory at least this many bytes per reduce iteration is packed (STAGE)
STAGE_STRIDE_BYTES = 2048

def _stage_opts(ast: UOp, tiled: UOp, reds: list[UOp], opts: list[Opt], renderer) -> list[Opt]:
  """STAGE for a 2-D register tile whose vector load (B's row of a matmul) moves STAGE_STRIDE_BYTES or more per reduce
  step: rows 4 KB apart all fall in the same L1 set (a 1024x1024x1024 matmul ran at 55 GFLOP/s on 2 cores, 122 with B
  packed; 2048^3: 51 and 146; 512^3 +12%; 256^3, whose rows are 1 KB apart, the same either way)."""
  if renderer is None or len(reds) != 1 or len(opts) != 2 or any(o.op is not OptOps.UPCAST for o in opts): return []
  red = reds[0]
  if len(red.src) != 2: return []
  col = next((g for g in global_ranges(ast) if g.arg[0] == opts[0].axis), None)
  if col is None: return []
  vec = [ld for ld in _streaming_loads(red) if coefficient(ld.src[1], col) == 1]
  if len(vec) != 1 or vec[0].src[0].op is not Ops.DEFINE_GLOBAL: return []
  step = coefficient(vec[0].src[1], red.src[1])
  if step is None or step * vec[0].src[0].dtype.base.itemsize < STAGE_STRIDE_BYTES: return []
  stage = Opt(OptOps.STAGE, None, vec[0].src[0].arg[0])
  try: apply_opt(tiled, stage, renderer)
  except KernelOptError: return []
  return [stage]

def lane_split_opts(ast: UOp, lanes: int = 8) -> list[Opt]:
  """A max/min reduce along a contiguous run becomes L independent lanes, combined at the end (UPCAST on the reduce
  axis: an accumulator array the compiler keeps in a vector). Without it the NaN-propagating max cannot be vectorised
  (the order of a float max with NaNs matters to a compiler); per lane it can, and max is exact in any order. A row max
  over 32000 floats: 1.8 -> 8.5 GB/s."""
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  if len(reds) != 1 or reds[0].arg not in (Ops.MAX, Ops.MIN) or len(reds[0].src) != 2: return []
  red, r = reds[0], reds[0].src[1]
  if (n := const_size(r)) is None: return []
  if not any(coefficient(ld.src[1], r) == 1 for ld in (u.src[0] for u in red.src[0].toposort if u.op is Ops.LOAD)):
    return []
  k = next((k for k in (2 * lanes, lanes) if n % k == 0 and n >= 4 * k), None)
  return [Opt(OptOps.UPCAST, r.arg[0], k)] if k is not None else []

def gpu_plain(ast: UOp) -> bool:
  """A scheduled kernel the GPU heuristics may reshape: GLOBAL and REDUCE ranges of constant size, nothing hand-written
  (LOCAL ranges, thread indices, barriers, atomics, custom code)."""
  return not any(u.op in (Ops.SPECIAL, Ops.BARRIER, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM) or
                 (u.op is Ops.RANGE and u.arg[1] not in (AxisType.GLOBAL, AxisType.REDUCE)) for u in ast.toposort) and \
    all(const_size(r) is not None for r in global_ranges(ast))

def _contiguous_in(loads: list[UOp], r: UOp) -> bool: return any(coefficient(ld.src[1], r) == 1 for ld in loads)

def _groupable(ast: UOp) -> bool:
  """A reduce long enough to share between lanes, with outputs too few to fill the GPU or laid out so that one thread
  per output would read memory with a large stride."""
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  if not reds or any(r is not s and s in r.src[0].toposort for r in reds for s in reds): return False
  if any(const_size(r) is None for red in reds for r in red.src[1:]): return False
  rsize = min(prod(r.src[0].arg for r in red.src[1:]) for red in reds)
  glob = global_ranges(ast)
  nout = prod(const_size(g) or 1 for g in glob)
  if rsize < GROUP_MIN_REDUCE: return False
  loads = [x.src[0] for x in ast.toposort if x.op is Ops.LOAD]
  contig_reduce = any(_contiguous_in(loads, r) for red in reds for r in red.src[1:])
  contig_out = bool(glob) and _contiguous_in(loads, glob[-1])
  return nout <= 8192 or (contig_reduce and not contig_out)

TC = getenv("TC", 1)   # TC=0: the GPU heuristics never choose tensor cores

def tc_opts(ast: UOp, renderer) -> list[Opt]:
  """Tensor cores (codegen/tc.py) for a matmul of 16-bit floats (or float32 under TF32) when the renderer has them
  and the heuristics' tile fits: [Opt(TC, None, tile)], else []."""
  if not TC or not getattr(renderer, "tensor_cores", ()): return []
  if isinstance(mt := tc_match(ast), str): return []
  cfg = pick_config(mt, renderer)   # (the renderer's shared memory bounds the tile)
  return [] if tc_refusal(mt, cfg, renderer) is not None else [Opt(OptOps.TC, None, cfg.name)]

SMEM = getenv("SMEM", 1)   # SMEM=0: the GPU heuristics never choose shared-memory float32 tiles

def smem_opts(ast: UOp, renderer) -> list[Opt]:
  """Shared-memory block tiles (codegen/tc.py, the SMEM Opt) for a float32 matmul of at least SMEM_MIN_WORK
  multiply-adds on a renderer that has them: [Opt(SMEM, None, tile)], else []."""
  if not SMEM or not getattr(renderer, "smem_tiles", False): return []
  if isinstance(mt := tc_match(ast, fma=True), str): return []
  if mt.M * mt.N * mt.K * prod(const_size(r) or 1 for r in mt.batch) < SMEM_MIN_WORK: return []
  cfg = pick_smem_config(mt)
  return [] if smem_refusal(mt, cfg, renderer) is not None else [Opt(OptOps.SMEM, None, cfg.name)]

def gpu_opts(ast: UOp, renderer=None) -> list[Opt]:
  """The GPU heuristics: tensor cores for a 16-bit matmul (tc_opts), a grouped reduce (one block per output, GPU_LOCAL
  lanes) for long reductions, else register tiles for a matmul-like reduce (GPU_UPCAST outputs per thread)."""
  if not gpu_plain(ast): return []
  if tc := tc_opts(ast, renderer): return tc
  if sm := smem_opts(ast, renderer): return sm
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  if len(reds) == 1 and (dot := _gpu_dot_tile_opts(ast, reds[0])): return dot
  if _groupable(ast):
    return list(dict.fromkeys(Opt(OptOps.GROUP, red.src[1].arg[0], GPU_LOCAL) for red in reds))
  if len(reds) != 1: return []
  loads = [x.src[0] for x in reds[0].src[0].toposort if x.op is Ops.LOAD]
  return _tile_opts(ast, loads, GPU_UPCAST[:1], GPU_UPCAST[1], 16)

GPU_DOT_MIN_OUTPUTS = 65536

def _gpu_dot_tile_opts(ast: UOp, red: UOp) -> list[Opt]:
  """x @ w.T with many outputs on a GPU (a Linear's forward: both loads run along the reduce axis only, no output axis
  reads either contiguously): a 4x4 register tile on two output axes, each loaded value feeding 4 multiply-adds. The
  grouped reduce such a kernel got before spent a 256-lane block and a shared-memory tree on each 256-long dot product:
  4096x768x256 on an H200 took 3.34 ms grouped, 0.87 ms with this tile (torch, with shared-memory tiles: 0.05)."""
  if (shape := _dot_shape(ast, red)) is None: return []
  glob, reused = shape
  if prod(const_size(g) or 1 for g in glob) < GPU_DOT_MIN_OUTPUTS: return []
  axes = [g for g in reused if g.src[0].arg % 4 == 0 and g.src[0].arg >= 16]
  if len(axes) < 2: return []
  return [Opt(OptOps.UPCAST, axes[-1].arg[0], 4), Opt(OptOps.UPCAST, axes[-2].arg[0], 4)]

def hand_coded_opts(ast: UOp, renderer) -> list[Opt]:
  """The heuristics' choice for a kernel (normalised by merge_globals first), as a list of Opts."""
  if not ast.src or all(u.op is Ops.DEFINE_GLOBAL for u in ast.src): return []
  if getattr(renderer, "is_gpu", False): return gpu_opts(ast, renderer)
  return cpu_opts(ast, renderer) if getattr(renderer, "lang", "") == "C" else []
