"""From a kernel AST to a ProgramSpec: optimise, linearize, render; plus the cost estimates DEBUG=2 prints."""
from __future__ import annotations
from dataclasses import dataclass, field
from teeny.dtype import DType
from teeny.helpers import DEBUG, NOOPT, prod
from teeny.uop.ops import AxisType, GroupOp, KernelInfo, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic
from teeny.codegen.linearize import linearize, deps

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

def estimate(uops: list[UOp]) -> tuple[int, int, int]:
  """FLOPs (each float ALU op or atomic times the trip count of the loops around it), bytes touched (each buffer once),
  and the largest trip count of any op (the work a kernel does even with no float math, e.g. integer or atomic code)."""
  flops = iters = 0
  for u in uops:
    if u.op not in GroupOp.ALU and u.op not in (Ops.ASSIGN, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.STORE, Ops.LOAD): continue
    trips = prod([r.src[0].arg if r.src[0].op is Ops.CONST else 1 for r in deps(u)])
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

def get_program(ast: UOp, renderer) -> ProgramSpec:
  from teeny.codegen.opt import optimize
  info: KernelInfo = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  if _writes_nothing(ast):
    # every store targets a buffer with no elements (a zero-size output): the kernel computes nothing. Its index math
    # has the empty dims as constant 0, so rendered as is it wrote the other dims' elements past the end of the
    # 0-byte buffer (heap corruption) and took `% 0`; an empty body over the same parameters matches the launch
    params = sorted((u for u in ast.toposort if u.op is Ops.DEFINE_GLOBAL), key=lambda u: u.arg[0])
    ast = UOp(Ops.SINK, ast.dtype, tuple(params), ast.arg)
  ast = graph_rewrite(ast, symbolic)
  if not NOOPT and info.opts_to_apply is None and ast.src and any(u.op is not Ops.DEFINE_GLOBAL for u in ast.src):
    ast = optimize(ast, renderer)
  if DEBUG >= 5: print(ast)
  uops = linearize(ast)
  name = info.name
  src = renderer.render(name, uops)
  params = [(u.arg[0], u.dtype.base, u.arg[1]) for u in uops if u.op is Ops.DEFINE_GLOBAL]
  gl = [r.src[0].arg for r in uops if r.op is Ops.RANGE and r.arg[1] is AxisType.GLOBAL and r.src[0].op is Ops.CONST]
  # GPU renderers place ranges on the grid themselves (teeny/codegen/gpu.py): blocks per grid dim, threads per block
  ll = None
  if hasattr(renderer, "launch_dims"): gl, ll = renderer.launch_dims(uops)
  flops, mem, iters = estimate(uops)
  return ProgramSpec(name, src, uops, params, gl or [1], ll, flops, mem, iters, [u for u in uops if u.op is Ops.DEFINE_VAR])
