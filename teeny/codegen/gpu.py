"""GPU kernel shaping, shared by the CUDA, HIP and OpenCL renderers: which ranges become grid and thread indices, the
launch dims that follow from them, the grouped reduce (one block per output, lanes combined in shared memory), and
register tiling for matmul-like kernels."""
from __future__ import annotations
from dataclasses import dataclass
from teeny.dtype import dtypes
from teeny.helpers import ceildiv, getenv, prod
from teeny.uop.ops import AxisType, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic

LOCAL_SIZE = getenv("GPU_LOCAL", 256)      # threads per block of elementwise kernels, lanes of a grouped reduce
MAX_GRID = (2**31 - 1, 65535, 65535)      # CUDA/HIP limits on blocks per grid dimension
GROUP_MIN_REDUCE = 256                     # a reduce at least this long may be spread over a block's lanes
LANE = UOp(Ops.SPECIAL, dtypes.index, (), ("lidx0", LOCAL_SIZE))

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
  dim = 0
  # the innermost (highest axis id, usually contiguous) range is x, so neighbouring threads touch neighbouring memory
  for r in sorted(glob, key=lambda r: -r.arg[0]):
    size = _const_size(r)
    if size is None or dim > 2 or size > MAX_GRID[dim]: out[r] = AxisMap("loop", -1, size or 0)
    elif dim == 0 and not grouped: out[r] = AxisMap("thread", 0, size, min(LOCAL_SIZE, size))
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
  if any(u.op is Ops.RANGE and u.arg[1] is AxisType.GROUP for u in uops): local[0] = LOCAL_SIZE
  return grid, local

# ---- kernel shaping before linearize

def _ranges(ast: UOp, t: AxisType) -> list[UOp]:
  return sorted([u for u in ast.toposort if u.op is Ops.RANGE and u.arg[1] is t], key=lambda r: r.arg[0])

def flatten_ranges(ast: UOp, rngs: list[UOp], axis_type: AxisType) -> tuple[UOp, UOp | None]:
  """Replace ranges (outermost first) by one range over their product; their values come back by div/mod."""
  if not rngs: return ast, None
  sizes = [r.src[0].arg for r in rngs]
  new = UOp.range(prod(sizes), rngs[0].arg[0], axis_type)
  mapping, stride = {}, 1
  for r, s in zip(reversed(rngs), reversed(sizes)):
    q = new if stride == 1 else new // stride
    mapping[r] = q % s if stride * s < prod(sizes) else q
    stride *= s
  return graph_rewrite(ast.substitute(mapping), symbolic), new

def _loads(u: UOp) -> list[UOp]: return [x.src[0] for x in u.toposort if x.op is Ops.LOAD]

def _contiguous_in(loads: list[UOp], r: UOp) -> bool:
  from teeny.codegen.opt import coefficient
  return any(coefficient(ld.src[1], r) == 1 for ld in loads)

def _groupable(ast: UOp) -> bool:
  """A reduce long enough to share between lanes, with outputs too few to fill the GPU or laid out so that one thread per
  output would read memory with a large stride."""
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  if not reds or any(r is not s and s in r.src[0].toposort for r in reds for s in reds): return False
  if any(_const_size(r) is None for red in reds for r in red.src[1:]): return False
  if any(u.op is Ops.RANGE and u.arg[1] not in (AxisType.GLOBAL, AxisType.REDUCE) for u in ast.toposort): return False
  rsize = min(prod(r.src[0].arg for r in red.src[1:]) for red in reds)
  glob = _ranges(ast, AxisType.GLOBAL)
  nout = prod(_const_size(g) or 1 for g in glob)
  if rsize < GROUP_MIN_REDUCE: return False
  loads = _loads(ast)
  contig_reduce = any(_contiguous_in(loads, r) for red in reds for r in red.src[1:])
  contig_out = bool(glob) and _contiguous_in(loads, glob[-1])
  return nout <= 8192 or (contig_reduce and not contig_out)

def group_reduces(ast: UOp) -> UOp:
  """Each REDUCE's ranges become one GROUP range that the block's lanes stride through; lane 0 stores."""
  mapping = {}
  for red in [u for u in ast.toposort if u.op is Ops.REDUCE]:
    val, grp = flatten_ranges(red.src[0], list(red.src[1:]), AxisType.GROUP)
    mapping[red] = UOp(Ops.REDUCE, red.dtype, (val, grp), red.arg)
  ast = ast.substitute(mapping)
  stores = []
  for st in ast.src:
    if st.op is not Ops.STORE:
      stores.append(st)
      continue
    idx = st.src[0]
    gate = LANE.eq(0) if len(idx.src) < 3 else idx.src[2].alu(Ops.AND, LANE.eq(0))
    stores.append(st.replace(src=(idx.replace(src=idx.src[:2] + (gate,)),) + st.src[1:]))
  return graph_rewrite(ast.replace(src=tuple(stores)), symbolic)

UPCAST = tuple(int(x) for x in getenv("GPU_UPCAST", "4,8").split(","))   # outputs per thread: contiguous axis, other axis

def upcast_gpu(ast: UOp) -> UOp:
  """Register tiling for matmul-like reduces: each thread computes a block of outputs (UPCAST[0] along an axis some input
  reads contiguously, UPCAST[1] along an axis that input does not depend on, so each load is reused)."""
  from teeny.codegen.opt import coefficient, split_upcast
  reds = [u for u in ast.toposort if u.op is Ops.REDUCE]
  if len(reds) != 1: return ast
  loads = _loads(reds[0].src[0])
  glob = _ranges(ast, AxisType.GLOBAL)
  ux, uy = UPCAST
  cands = [g for g in reversed(glob) if g.src[0].arg % ux == 0 and g.src[0].arg >= 16 * ux and _contiguous_in(loads, g)]
  if not cands: return ast
  g1 = cands[0]
  reused = [ld for ld in loads if coefficient(ld.src[1], g1) == 1]
  ast = split_upcast(ast, g1, ux)
  others = [g for g in _ranges(ast, AxisType.GLOBAL) if g.arg[0] != g1.arg[0] and g.src[0].arg % uy == 0 and g.src[0].arg >= 16 * uy]
  others = [g for g in others if any(g not in ld.toposort for ld in reused)]
  if others: ast = split_upcast(ast, others[0], uy)
  return ast

def optimize_gpu(ast: UOp) -> UOp:
  """Shape a scheduled kernel for a GPU. Hand-written kernels (LOCAL ranges, barriers, atomics) are left as written."""
  from teeny.codegen.opt import merge_globals
  if any(u.op in (Ops.SPECIAL, Ops.BARRIER, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM) or
         (u.op is Ops.RANGE and u.arg[1] not in (AxisType.GLOBAL, AxisType.REDUCE)) for u in ast.toposort): return ast
  if any(_const_size(r) is None for r in _ranges(ast, AxisType.GLOBAL)): return ast
  ast = merge_globals(ast)
  if _groupable(ast): ast = group_reduces(ast)
  else: ast = upcast_gpu(ast)
  ast, _ = flatten_ranges(ast, _ranges(ast, AxisType.GLOBAL), AxisType.GLOBAL)
  return ast

# ---- the C-family base of the GPU languages

from teeny.codegen.render.cstyle import CStyleLanguage  # noqa: E402

class GPULanguage(CStyleLanguage):
  """What CUDA, HIP and OpenCL share: GLOBAL/LOCAL ranges become block and thread indices (see grid_map), a grouped
  reduce combines its lanes in shared memory, no (core, ncores) parameters. Subclasses fill in the spellings."""
  lang = "GPU"
  is_gpu = True
  kernel_prefix = "__global__ void"
  restrict = "__restrict__"
  block_idx = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
  thread_idx = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
  shared_prefix = "__shared__ "
  barrier = "__syncthreads()"
  unroll_pragma = "#pragma unroll"
  type_map = {**CStyleLanguage.type_map, dtypes.bool: "bool"}
  helpers: dict[str, str] = {}   # name -> definition, included when the kernel uses the name

  def launch_dims(self, uops: list[UOp]) -> tuple[list[int], list[int]]: return launch_dims(uops)
  def render_global_idx(self, m: AxisMap) -> str:
    return f"({self.block_idx[m.dim]}*{m.local}+{self.thread_idx[m.dim]})" if m.local > 1 else self.block_idx[m.dim]
  def render_kernel_prefix(self, threads: int) -> str: return self.kernel_prefix

  def render(self, name: str, uops: list[UOp]) -> str:
    self._map, (_, local) = grid_map(uops), launch_dims(uops)
    self._threads = prod(local)
    self._shared: list[str] = []
    # a CUSTOM op that declares shared memory (custom kernels) belongs at kernel scope: OpenCL allows __local nowhere else
    decls = [u for u in uops if u.op is Ops.CUSTOM and not u.src and self._custom_fmt(u).lstrip().startswith(self.shared_prefix)]
    for u in decls: self._shared.append(self._custom_fmt(u).strip().rstrip(";") + ";")
    uops = [u for u in uops if u not in decls]
    grouped = [u for u in uops if u.op is Ops.REDUCE and any(r.arg[1] is AxisType.GROUP for r in u.src[1:])]
    for k, red in enumerate(grouped):
      sm = f"smem{k}"
      self._shared.append(f"{self.shared_prefix}{self.render_dtype(red.dtype)} {sm}[{LOCAL_SIZE}];")
      end = uops.index(UOp(Ops.END, src=(red.src[1],)))
      uops.insert(end + 1, UOp(Ops.CUSTOM, dtypes.void, (red,), self.render_tree_reduce(red, sm)))
    self._lane = bool(grouped) or LANE in uops
    return super().render(name, uops)

  def _custom_fmt(self, u: UOp) -> str:
    return (dict(u.arg).get(self.lang, dict(u.arg).get("C")) if isinstance(u.arg, tuple) else u.arg) or ""

  def render_tree_reduce(self, red: UOp, sm: str) -> str:
    """Lanes' partial results combined in shared memory; afterwards every lane holds the total (CUSTOM format, {0} = acc)."""
    a, b = f"{sm}[lidx0]", f"{sm}[lidx0+s]"
    comb = self.render_max(a, b, red.dtype, red.arg is Ops.MAX) if red.arg in (Ops.MAX, Ops.MIN) else \
      self.render_alu(red.arg, [a, b], red.dtype, red.dtype)
    code = (f"{a} = @ACC@;\n{self.barrier};\nfor (int s = {LOCAL_SIZE // 2}; s > 0; s >>= 1) {{\n"
            f"  if (lidx0 < s) {a} = {comb};\n  {self.barrier};\n}}\n@ACC@ = {sm}[0];")
    return code.replace("{", "{{").replace("}", "}}").replace("@ACC@", "{0}")

  def render_kernel_header(self, name: str, params: list[str], has_global: bool) -> list[str]:
    lines = [f"{self.render_kernel_prefix(self._threads)} {name}({', '.join(params)}) {{"]
    lines += [f"  {s}" for s in self._shared]
    if self._lane: lines.append(f"  int lidx0 = {self.thread_idx[0]};")
    return lines
  def render_buffer_param(self, slot: int, dt, written: bool) -> str:
    return f"{self.buffer_prefix}{'' if written else 'const '}{self.render_storage(dt)}* {self.restrict} data{slot}"
  def render_range_open(self, r: UOp, name: str, size: str, first_global: bool, const_bounds: bool = False) -> str:
    if r.arg[1] is AxisType.GROUP: return f"for (int {name} = lidx0; {name} < {size}; {name} += {LOCAL_SIZE}) {{"
    m = self._map.get(r)
    if m is None or m.kind == "loop":
      loop = f"for (int {name} = 0; {name} < {size}; {name}++) {{"
      return f"{self.unroll_pragma}\n{loop}" if r.arg[1] is AxisType.UPCAST else loop
    if m.kind == "thread": idx = self.render_global_idx(m)
    else: idx = (self.block_idx if m.kind == "block" else self.thread_idx)[m.dim]
    check = m.kind == "thread" and m.size % m.local != 0
    return f"int {name} = {idx};\n" + (f"if ({name} < {size}) {{" if check else "{")
  def render_special(self, u: UOp) -> str: return u.arg[0]
  def render_prelude(self, body: str) -> str:
    return "".join(code for n, code in self.helpers.items() if n in body)
