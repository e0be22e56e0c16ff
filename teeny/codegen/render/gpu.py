"""The C-family base of the GPU languages (CUDA, HIP, OpenCL): GLOBAL/LOCAL ranges spelled as block and thread indices
(placed by codegen/gpu.py's grid_map), a grouped reduce's lanes combined in shared memory (the CUSTOM(TreeReduce) op
codegen/gpu.py inserts), no (core, ncores) parameters. Subclasses fill in the spellings."""
from __future__ import annotations
from teeny.dtype import dtypes
from teeny.helpers import prod
from teeny.uop.ops import AxisType, Ops, UOp
from teeny.codegen.gpu import AxisMap, TreeReduce, grid_map, group_lanes, launch_dims
from teeny.codegen.render.cstyle import CStyleLanguage, RenderState

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
    # a CUSTOM op that declares shared memory (custom kernels) belongs at kernel scope: OpenCL allows __local nowhere
    # else
    decls = [u for u in uops
             if u.op is Ops.CUSTOM and not u.src and self._custom_fmt(u).lstrip().startswith(self.shared_prefix)]
    self._shared = [self._custom_fmt(u).strip().rstrip(";") + ";" for u in decls]
    trees = [u for u in uops if u.op is Ops.CUSTOM and isinstance(u.arg, TreeReduce)]
    self._shared += [f"{self.shared_prefix}{self.render_dtype(u.src[0].dtype)} smem{u.arg.slot}[{u.arg.lanes}];"
                     for u in trees]
    self._lane = bool(trees) or any(u.op is Ops.SPECIAL and u.arg[0] == "lidx0" for u in uops)
    return super().render(name, [u for u in uops if u not in decls])

  def _custom_fmt(self, u: UOp) -> str:
    if isinstance(u.arg, TreeReduce): return ""
    return (dict(u.arg).get(self.lang, dict(u.arg).get("C")) if isinstance(u.arg, tuple) else u.arg) or ""

  def _r_custom(self, st: RenderState, u: UOp):
    if isinstance(u.arg, TreeReduce):
      st.emit(self.render_tree_reduce(u.src[0], f"smem{u.arg.slot}", u.arg.lanes, st.val(u.src[0])))
    else: super()._r_custom(st, u)

  def render_tree_reduce(self, red: UOp, sm: str, lanes: int, acc: str) -> str:
    """Lanes' partial results combined in shared memory; afterwards every lane holds the total in `acc`."""
    a, b = f"{sm}[lidx0]", f"{sm}[lidx0+s]"
    comb = self.render_max(a, b, red.dtype, red.arg is Ops.MAX) if red.arg in (Ops.MAX, Ops.MIN) else \
      self.render_alu(red.arg, [a, b], red.dtype, red.dtype)
    return (f"{a} = {acc};\n{self.barrier};\nfor (int s = {lanes // 2}; s > 0; s >>= 1) {{\n"
            f"  if (lidx0 < s) {a} = {comb};\n  {self.barrier};\n}}\n{acc} = {sm}[0];")

  def _r_local(self, st: RenderState, u: UOp):
    # a block's shared memory (tensor-core tiles, codegen/tc.py); 16-byte aligned for 16-byte asynchronous copies
    st.r[u] = f"local{u.arg[0]}"
    st.emit(f"{self.shared_prefix}{self.shared_align}{self.render_storage(u.dtype.base)} local{u.arg[0]}[{u.arg[1]}];")
  shared_align = "__attribute__((aligned(16))) "

  def render_kernel_header(self, name: str, params: list[str], has_global: bool) -> list[str]:
    lines = [f"{self.render_kernel_prefix(self._threads)} {name}({', '.join(params)}) {{"]
    lines += [f"  {s}" for s in self._shared]
    if self._lane: lines.append(f"  int lidx0 = {self.thread_idx[0]};")
    return lines
  def render_buffer_param(self, slot: int, dt, written: bool) -> str:
    return f"{self.buffer_prefix}{'' if written else 'const '}{self.render_storage(dt)}* {self.restrict} data{slot}"
  def render_range_open(self, r: UOp, name: str, size: str, first_global: bool, const_bounds: bool = False,
                        ty: str = "int") -> str:   # (int, or 64-bit where the kernel's addresses need it)
    if r.arg[1] is AxisType.GROUP: return f"for ({ty} {name} = lidx0; {name} < {size}; {name} += {self._lanes}) {{"
    m = self._map.get(r)
    if m is None or m.kind == "loop":
      loop = f"for ({ty} {name} = 0; {name} < {size}; {name}++) {{"
      return f"{self.unroll_pragma}\n{loop}" if r.arg[1] is AxisType.UPCAST else loop
    if m.kind == "thread": idx = self.render_global_idx(m)
    else: idx = (self.block_idx if m.kind == "block" else self.thread_idx)[m.dim]
    check = m.kind == "thread" and m.size % m.local != 0
    return f"{ty} {name} = {idx};\n" + (f"if ({name} < {size}) {{" if check else "{")
  def render_special(self, u: UOp) -> str: return u.arg[0]
  def render_prelude(self, body: str) -> str:
    """The helpers the body names, and the helpers those name (in the table's order: a helper's helpers first)."""
    used = {n for n in self.helpers if n in body}
    while (more := {n for n in self.helpers for u in used if n != u and n in self.helpers[u]} - used): used |= more
    return "".join(code for n, code in self.helpers.items() if n in used)
