"""GPU kernel shaping, shared by the CUDA, HIP and OpenCL renderers: which ranges become grid and thread indices and the
launch dims that follow from them (grid_map, launch_dims), the grid-mapping pass (map_to_grid) and the pass that
combines a grouped reduce's lanes (insert_tree_reduces). The choices (grouped reduces, register tiles, LOCAL splits)
are Opts (codegen/opt.py); the GPU languages' C-family base is codegen/render/gpu.py."""
from __future__ import annotations
from dataclasses import dataclass
from teeny.dtype import dtypes
from teeny.helpers import ceildiv
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp
from teeny.codegen.opt import GPU_LOCAL, OptOps, flatten_ranges, global_ranges, has_opt

LOCAL_SIZE = GPU_LOCAL                     # threads per block of elementwise kernels
MAX_GRID = (2**31 - 1, 65535, 65535)      # CUDA/HIP limits on blocks per grid dimension

@dataclass(frozen=True)
class AxisMap:
  """How one range runs on a GPU. kind: 'thread' (block*local+thread along dim), 'block' (block index), 'local' (thread
  index) or 'loop' (an ordinary loop in every thread)."""
  kind: str
  dim: int
  size: int
  local: int = 1

def _const_size(r: UOp) -> int | None: return r.src[0].arg if r.src[0].op is Ops.CONST else None

def grid_map(uops: list[UOp]) -> dict[UOp, AxisMap]:
  """The GPU placement of every GLOBAL and LOCAL range of a linearized kernel (renderer and launch use the same map)."""
  rngs = list(dict.fromkeys(u for u in uops if u.op is Ops.RANGE))
  glob = [r for r in rngs if r.arg[1] is AxisType.GLOBAL]
  local = sorted([r for r in rngs if r.arg[1] is AxisType.LOCAL], key=lambda r: r.arg[0])
  out: dict[UOp, AxisMap] = {}
  if local:
    # custom kernels: the i-th GLOBAL range (by axis id) is block index i, the i-th LOCAL range thread index i
    glob = sorted(glob, key=lambda r: r.arg[0])
    if len(glob) > 3 or len(local) > 3: raise ValueError("a GPU kernel has at most 3 GLOBAL and 3 LOCAL ranges")
    for i, r in enumerate(glob): out[r] = AxisMap("block", i, _need_const(r))
    for i, r in enumerate(local): out[r] = AxisMap("local", i, _need_const(r), _need_const(r))
    return out
  grouped = any(r.arg[1] is AxisType.GROUP for r in rngs)
  nolocals = bool(uops) and uops[-1].op is Ops.SINK and has_opt(uops[-1], OptOps.NOLOCALS)
  dim = 0
  # the innermost (highest axis id, usually contiguous) range is x, so neighbouring threads touch neighbouring memory
  for r in sorted(glob, key=lambda r: -r.arg[0]):
    size = _const_size(r)
    if size is None or dim > 2 or size > MAX_GRID[dim]: out[r] = AxisMap("loop", -1, size or 0)
    elif dim == 0 and not grouped and not nolocals: out[r] = AxisMap("thread", 0, size, min(LOCAL_SIZE, size))
    else: out[r] = AxisMap("block", dim, size)
    if out[r].kind != "loop": dim += 1
  return out

def _need_const(r: UOp) -> int:
  if (s := _const_size(r)) is None: raise ValueError(f"GPU grid ranges need a constant size, got {r.src[0]}")
  return s

def launch_dims(uops: list[UOp]) -> tuple[list[int], list[int]]:
  """(blocks per grid dim, threads per block dim) for a linearized kernel."""
  grid, local = [1, 1, 1], [1, 1, 1]
  for m in grid_map(uops).values():
    if m.kind == "thread": grid[m.dim], local[m.dim] = ceildiv(m.size, m.local), m.local
    elif m.kind == "block": grid[m.dim] = m.size
    elif m.kind == "local": local[m.dim] = m.size
  if (lanes := group_lanes(uops)): local[0] = lanes
  return grid, local

def group_lanes(uops: list[UOp]) -> int:
  """The lanes of a grouped reduce (the lane index SPECIAL carries the count), 0 if the kernel has none."""
  if not any(u.op is Ops.RANGE and u.arg[1] is AxisType.GROUP for u in uops): return 0
  return next(u.arg[1] for u in uops if u.op is Ops.SPECIAL and u.arg[0] == "lidx0")

# ---- the grid-mapping pass

def map_to_grid(ast: UOp) -> UOp:
  """A scheduled kernel's GLOBAL ranges become one (grid_map then spreads it over blocks and threads); kernels with
  LOCAL ranges keep theirs, one per grid dimension."""
  if any(u.op is Ops.RANGE and u.arg[1] is AxisType.LOCAL for u in ast.toposort): return ast
  info = ast.arg
  ast, _ = flatten_ranges(ast, global_ranges(ast), AxisType.GLOBAL)
  return ast.replace(arg=info) if isinstance(info, KernelInfo) else ast

# ---- the grouped-reduce pass, after linearize

@dataclass(frozen=True)
class TreeReduce:
  """The arg of the CUSTOM op that combines a grouped reduce's lanes in shared memory (buffer `smem{slot}` of `lanes`
  values); afterwards every lane holds the total. Renderers spell it (GPULanguage.render_tree_reduce)."""
  slot: int
  lanes: int

def insert_tree_reduces(uops: list[UOp]) -> list[UOp]:
  """After the loop of each grouped reduce (a REDUCE over a GROUP range) its lanes are combined: a CUSTOM(TreeReduce) op
  right after the GROUP range's END."""
  grouped = [u for u in uops if u.op is Ops.REDUCE and any(r.arg[1] is AxisType.GROUP for r in u.src[1:])]
  if not grouped: return uops
  lanes, out = group_lanes(uops), list(uops)
  for k, red in enumerate(grouped):
    end = next(i for i, u in enumerate(out) if u.op is Ops.END and u.src[0] is red.src[1])
    out.insert(end + 1, UOp(Ops.CUSTOM, dtypes.void, (red,), TreeReduce(k, lanes)))
  return out
