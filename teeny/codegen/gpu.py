"""GPU kernel shaping, shared by the CUDA, HIP and OpenCL renderers: which ranges become grid and thread indices and the
launch dims that follow from them (grid_map, launch_dims), the grid-mapping pass (map_to_grid), and the C-family base of
the GPU languages. The choices (grouped reduces, register tiles, LOCAL splits) are Opts (codegen/opt.py)."""
from __future__ import annotations
from dataclasses import dataclass
from teeny.dtype import dtypes
from teeny.helpers import ceildiv, prod
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
    self._threads, self._lanes = prod(local), group_lanes(uops)
    self._shared: list[str] = []
    # a CUSTOM op that declares shared memory (custom kernels) belongs at kernel scope: OpenCL allows __local nowhere else
    decls = [u for u in uops if u.op is Ops.CUSTOM and not u.src and self._custom_fmt(u).lstrip().startswith(self.shared_prefix)]
    for u in decls: self._shared.append(self._custom_fmt(u).strip().rstrip(";") + ";")
    uops = [u for u in uops if u not in decls]
    grouped = [u for u in uops if u.op is Ops.REDUCE and any(r.arg[1] is AxisType.GROUP for r in u.src[1:])]
    for k, red in enumerate(grouped):
      sm = f"smem{k}"
      self._shared.append(f"{self.shared_prefix}{self.render_dtype(red.dtype)} {sm}[{self._lanes}];")
      end = uops.index(UOp(Ops.END, src=(red.src[1],)))
      uops.insert(end + 1, UOp(Ops.CUSTOM, dtypes.void, (red,), self.render_tree_reduce(red, sm)))
    self._lane = bool(grouped) or any(u.op is Ops.SPECIAL and u.arg[0] == "lidx0" for u in uops)
    return super().render(name, uops)

  def _custom_fmt(self, u: UOp) -> str:
    return (dict(u.arg).get(self.lang, dict(u.arg).get("C")) if isinstance(u.arg, tuple) else u.arg) or ""

  def render_tree_reduce(self, red: UOp, sm: str) -> str:
    """Lanes' partial results combined in shared memory; afterwards every lane holds the total (CUSTOM format, {0} = acc)."""
    a, b = f"{sm}[lidx0]", f"{sm}[lidx0+s]"
    comb = self.render_max(a, b, red.dtype, red.arg is Ops.MAX) if red.arg in (Ops.MAX, Ops.MIN) else \
      self.render_alu(red.arg, [a, b], red.dtype, red.dtype)
    code = (f"{a} = @ACC@;\n{self.barrier};\nfor (int s = {self._lanes // 2}; s > 0; s >>= 1) {{\n"
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
    if r.arg[1] is AxisType.GROUP: return f"for (int {name} = lidx0; {name} < {size}; {name} += {self._lanes}) {{"
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
