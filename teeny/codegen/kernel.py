"""From a kernel AST to a ProgramSpec: a named list of passes (PASSES), then linearize and render; plus the cost
estimates DEBUG=2 prints."""
from __future__ import annotations
import copy, functools
from dataclasses import dataclass, field
from typing import Callable
from teeny.dtype import DType, dtypes
from teeny.helpers import DEBUG, NOOPT, prod
from teeny.uop.ops import AxisType, GroupOp, KernelInfo, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic
from teeny.codegen.linearize import linearize, deps
from teeny.codegen.opt import apply_opts, gpu_plain, hand_coded_opts, merge_globals, merge_reduces
from teeny.codegen.expand import expand_unrolls
from teeny.codegen.gpu import insert_tree_reduces, map_to_grid
from teeny.codegen.render.cstyle import RenderState

@dataclass
class ProgramSpec:
  name: str
  src: str
  uops: list[UOp]
  params: list[tuple[int, DType, tuple]]     # (slot, dtype, shape) of each buffer argument
  global_size: list[int]
  local_size: list[int] | None
  ops: int = 0
  mem: int = 0
  iters: int = 0      # how often the innermost loop body runs: the CPU splits kernels with enough of it over threads
  vars: list[UOp] = field(default_factory=list)
  opts: tuple = ()    # the Opts applied (codegen/opt.py), in order
  beam: bool = False  # the Opts came from a BEAM search (codegen/search.py); DEBUG=2 marks the kernel
  smem: int = 0       # bytes of dynamic shared memory the launch provides (CUDA: the kernel's DEFINE_LOCAL array)
  # tensor-map parameters, after the buffers and variables: (buffer slot, element dtype, dims, strides, box, offset)
  tmaps: list[tuple] = field(default_factory=list)
  # what every launch checks and passes, computed on the first (codegen never changes a spec it handed out)
  @functools.cached_property
  def param_dtypes(self) -> tuple[DType, ...]: return tuple(dt for _, dt, _ in self.params)
  @functools.cached_property
  def work(self) -> int: return launch_work(self)

def launch_work(spec: ProgramSpec) -> int:
  """How much work a launch is, for the CPU's choice of threads: the most times any op runs, or the grid size."""
  return max(prod(spec.global_size), spec.ops, spec.iters)

def estimate(uops: list[UOp]) -> tuple[int, int, int]:
  """FLOPs (each float ALU op or atomic times the trip count of the loops around it), bytes touched (each buffer once),
  and the largest trip count of any op (the work a kernel does even with no float math, e.g. integer or atomic code)."""
  flops = iters = 0
  size = lambda r: r.src[0].arg if r.src[0].op is Ops.CONST else 1
  opened: list[UOp] = []
  par = frozenset(u for u in uops if u.op is Ops.RANGE and u.arg[1] in (AxisType.GLOBAL, AxisType.LOCAL))
  for u in uops:
    if u.op is Ops.RANGE: opened.append(u)
    elif u.op is Ops.END: opened.pop()
    elif u.op is Ops.WMMA:   # an effect on register arrays: it runs as often as the loops around it, each lane its
      flops += prod([size(r) for r in opened]) * u.arg.flops_per_lane   # share of the warp's 2*m*n*k
    if u.op not in GroupOp.ALU and u.op not in (Ops.ASSIGN, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.STORE, Ops.LOAD): continue
    # (every thread of the grid runs the ops inside it, whether or not their value depends on its index)
    trips = prod([size(r) for r in deps(u) | par])
    iters = max(iters, trips)
    if u.op is not Ops.STORE and u.op is not Ops.LOAD and u.dtype.kind == "f": flops += trips
  mem = sum(prod(u.arg[1]) * u.dtype.base.itemsize for u in uops if u.op is Ops.DEFINE_GLOBAL)
  return flops, mem, iters

def _writes_nothing(ast: UOp) -> bool:
  """Does every store of this kernel go to a buffer with no elements (and nothing else have an effect)?"""
  topo = list(ast.toposort)
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM) for u in topo): return False
  stores = [u for u in topo if u.op is Ops.STORE]
  return bool(stores) and all(st.src[0].op is Ops.INDEX and st.src[0].src[0].op is Ops.DEFINE_GLOBAL and
                              prod(st.src[0].src[0].arg[1]) == 0 for st in stores)

@dataclass
class Compile:
  """What the passes share: the renderer, whether the heuristics choose (opts_to_apply None, NOOPT off), whether the
  kernel is a plain scheduled one a GPU may reshape, and the Opts chosen."""
  renderer: object
  heuristic: bool
  gpu_plain: bool = False
  opts: tuple = ()
  chosen: tuple | None = None   # an Opt list chosen outside the heuristics (BEAM), used in their place

def pass_empty_outputs(ast: UOp, ctx: Compile) -> UOp:
  """Every store targets a buffer with no elements (a zero-size output): the kernel computes nothing. Its index math
  has the empty dims as constant 0, so rendered as is it wrote the other dims' elements past the end of the 0-byte
  buffer (heap corruption) and took `% 0`; an empty body over the same parameters matches the launch."""
  if not _writes_nothing(ast): return ast
  params = sorted((u for u in ast.toposort if u.op is Ops.DEFINE_GLOBAL), key=lambda u: u.arg[0])
  return UOp(Ops.SINK, ast.dtype, tuple(params), ast.arg)

def pass_symbolic(ast: UOp, ctx: Compile) -> UOp:
  """Index math simplified (uop/symbolic.py's matcher)."""
  return graph_rewrite(ast, symbolic)

def pass_normalize(ast: UOp, ctx: Compile) -> UOp:
  """Before the heuristics choose: the ranges of one reduction merged, and adjacent parallel loops merged, where no
  address needs div/mod (opt.merge_reduces, opt.merge_globals). A kernel with its own Opt list keeps its ranges as
  written, so the list's axis ids mean what its author meant."""
  if ctx.heuristic: ast = merge_reduces(ast)
  ctx.gpu_plain = getattr(ctx.renderer, "is_gpu", False) and gpu_plain(ast)
  if not ctx.heuristic or (getattr(ctx.renderer, "is_gpu", False) and not ctx.gpu_plain): return ast
  return merge_globals(ast)

def pass_choose_opts(ast: UOp, ctx: Compile) -> UOp:
  """The Opt list: the kernel's own (KernelInfo.opts_to_apply), none under NOOPT, else the heuristics' choice."""
  info = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  if info.opts_to_apply is not None: ctx.opts = tuple(info.opts_to_apply)
  elif ctx.chosen is not None: ctx.opts = ctx.chosen
  else: ctx.opts = tuple(hand_coded_opts(ast, ctx.renderer)) if ctx.heuristic else ()
  return ast

def pass_apply_opts(ast: UOp, ctx: Compile) -> UOp:
  """The chosen Opts applied in order (opt.apply_opts); the SINK's KernelInfo records them."""
  return apply_opts(ast, ctx.opts, ctx.renderer)

def pass_expand(ast: UOp, ctx: Compile) -> UOp:
  """UNROLL ranges written out: one copy of the code per value (codegen/expand.py)."""
  return ast if (out := expand_unrolls(ast)) is ast else graph_rewrite(out, symbolic)

def pass_grid(ast: UOp, ctx: Compile) -> UOp:
  """GPU: a plain scheduled kernel's GLOBAL ranges flattened into one, which grid_map spreads over blocks and
  threads."""
  return map_to_grid(ast) if ctx.heuristic and ctx.gpu_plain else ast

PASSES: list[tuple[str, Callable[[UOp, Compile], UOp]]] = [
  ("empty outputs", pass_empty_outputs), ("symbolic", pass_symbolic), ("normalize", pass_normalize),
  ("choose opts", pass_choose_opts), ("apply opts", pass_apply_opts), ("expand", pass_expand),
  ("grid", pass_grid)]

def normalized(ast: UOp, renderer) -> UOp:
  """The kernel as the heuristics (and BEAM) see it when they choose: the passes before "choose opts" (axis ids of an
  Opt list chosen for a kernel refer to this AST's ranges)."""
  ctx = Compile(renderer, True)
  for name, fn in PASSES:
    if name == "choose opts": break
    ast = fn(ast, ctx)
  return ast

def _address_overflow(name: str, uops: list[UOp], wide: set[UOp] | frozenset[UOp] = frozenset()) -> str | None:
  """Why a buffer address of this kernel leaves int32 (None: none does): an add or multiply inside an address, not among
  `wide` (values rendered 64-bit), whose operands' bounds are known and whose result leaves int32 would wrap, a read or
  write at a wrong place (a reshape of an expanded view of more than 2^31 elements is indexed through its flat
  position). Operands whose bounds are unknown (at the type's limits) are not judged."""
  lo_i, hi_i = dtypes.min(dtypes.index), dtypes.max(dtypes.index)
  seen: set[UOp] = set()
  for ix in uops:
    if ix.op is not Ops.INDEX or ix.src[0].op is not Ops.DEFINE_GLOBAL: continue
    for u in ix.src[1].toposort:
      if u in seen or u in wide or u.dtype != dtypes.index or u.op not in (Ops.ADD, Ops.MUL) or len(u.src) != 2:
        continue
      seen.add(u)
      (a0, a1), (b0, b1) = u.src[0].vmin_vmax, u.src[1].vmin_vmax
      if any(v in (lo_i, hi_i) for v in (a0, a1, b0, b1)): continue
      vals = [a0 + b0, a1 + b1] if u.op is Ops.ADD else [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
      if min(vals) < lo_i or max(vals) > hi_i:
        return (f"kernel {name}: an address reaches {max(vals) if max(vals) > hi_i else min(vals)}, past 32-bit ints "
                f"({u.op.name} of values in [{a0}, {a1}] and [{b0}, {b1}]), and a value it is computed from is also "
                "used as data. Split the computation into smaller tensors, or materialise (.contiguous()) a large "
                "expanded view before reshaping it")
  return None

def _wide_addresses(name: str, uops: list[UOp], renderer):
  """The renderer to render these uops with: itself, or where a GPU kernel's 32-bit address math would overflow, a copy
  that declares the address-only values (loop counters included) with its 64-bit type (`wide_type`; C always does);
  RuntimeError if an overflowing value is also data (it keeps its dtype's wrap-around)."""
  if getattr(renderer, "wide_index", None) is not None or _address_overflow(name, uops) is None: return renderer
  wide_t = getattr(renderer, "wide_type", None)
  if wide_t is None or (why := _address_overflow(name, uops, RenderState._address_math(uops))) is not None:
    raise RuntimeError(why or f"kernel {name}: its addresses pass 32-bit ints and {type(renderer).__name__} has no "
                       "64-bit index type; split the computation into smaller tensors")
  wide = copy.copy(renderer)
  wide.wide_index = wide_t
  return wide

def get_program(ast: UOp, renderer, opts: tuple | list | None = None) -> ProgramSpec:
  """A kernel AST through PASSES, then linearized and rendered. DEBUG>=5 prints the kernel after each pass. `opts`, for
  a kernel without its own list, replaces the heuristics' choice (BEAM's result; axis ids as in `normalized(ast)`)."""
  info: KernelInfo = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  # symbolic shapes: a range whose size is a variable keeps its plain loop (the heuristics and merges assume constant
  # sizes); the kernel is correct for every value of the variable and compiles once
  sym = any(u.op is Ops.RANGE and u.src[0].op is not Ops.CONST for u in ast.toposort)
  ctx = Compile(renderer, info.opts_to_apply is None and (not NOOPT or opts is not None) and not sym,
                chosen=tuple(opts) if opts is not None and info.opts_to_apply is None and not sym else None)
  for name, fn in PASSES:
    ast = fn(ast, ctx)
    if DEBUG >= 5: print(f"--- {info.name} after {name}{f': {list(ctx.opts)}' if name == 'choose opts' else ''}\n{ast}")
  uops = linearize(ast)
  renderer = _wide_addresses(info.name, uops, renderer)
  if getattr(renderer, "is_gpu", False): uops = insert_tree_reduces(uops)
  if DEBUG >= 5: print(f"--- {info.name} linearized\n" +
                       "\n".join(f"{i:4d} {u.op.name:12s} {u.dtype} {u.arg}" for i, u in enumerate(uops)))
  src = renderer.render(info.name, uops)
  params = [(u.arg[0], u.dtype.base, u.arg[1]) for u in uops if u.op is Ops.DEFINE_GLOBAL]
  gl = [r.src[0].arg for r in uops if r.op is Ops.RANGE and r.arg[1] is AxisType.GLOBAL and r.src[0].op is Ops.CONST]
  # GPU renderers place ranges on the grid themselves (teeny/codegen/gpu.py): blocks per grid dim, threads per block
  ll = None
  if hasattr(renderer, "launch_dims"): gl, ll = renderer.launch_dims(uops)
  flops, mem, iters = estimate(uops)
  smem = getattr(renderer, "dynamic_shared", lambda _: 0)(uops)
  return ProgramSpec(info.name, src, uops, params, gl or [1], ll, flops, mem, iters,
                     [u for u in uops if u.op is Ops.DEFINE_VAR], ctx.opts, ctx.chosen is not None, smem,
                     [(u.src[0].arg[0], u.src[0].dtype.base, *u.arg[1:]) for u in uops if u.op is Ops.TENSOR_MAP])
