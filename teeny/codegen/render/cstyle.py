"""The C-family renderer. Languages differ by tables (types, builtins, thread indices, atomics), not by copies."""
from __future__ import annotations
import math
from typing import Callable
from teeny.dtype import DType, dtypes
from teeny.helpers import prod
from teeny.uop.ops import AxisType, GroupOp, Ops, UOp
from teeny.codegen.linearize import deps
from teeny.codegen.render.atomics import render_atomic

def _contiguous_tile_load(idx: UOp, core_loop: UOp, tile: set[UOp]) -> bool:
  """Does the address depend on the cores' loop and add one of the output tile's UPCAST ranges with stride 1 (a vector
  load along the tile)? (Lanes of a reduce are not output ranges: those kernels keep the narrowed bounds.)"""
  if idx.op is not Ops.INDEX or len(idx.src) < 2: return False
  topo = idx.src[1].toposort
  return core_loop in topo and any(s in tile for a in topo if a.op is Ops.ADD for s in a.src)

def _may_wrap(u: UOp) -> bool:
  """Can this int ADD/SUB/MUL leave its dtype's range? Not where its operands' bounds (vmin_vmax, sound for wrapped
  values too) keep the exact result inside: such math (an arange's `i*-1`, a masked index) needs no unsigned detour."""
  (a0, a1), (b0, b1) = (s.vmin_vmax for s in u.src)
  if u.op is Ops.ADD: lo, hi = a0 + b0, a1 + b1
  elif u.op is Ops.SUB: lo, hi = a0 - b1, a1 - b0
  else: lo, hi = min(c := (a0 * b0, a0 * b1, a1 * b0, a1 * b1)), max(c)
  return lo < dtypes.min(u.dtype) or hi > dtypes.max(u.dtype)

def _balanced(x: str) -> bool:
  """Is x one expression as far as brackets go (never closing more than it opened)?"""
  depth = 0
  for c in x:
    depth += (c == "(") - (c == ")")
    if depth < 0: return False
  return depth == 0

def _f(fn32: str, fn64: str | None = None) -> Callable:
  return lambda x, dt: f"{fn64 if dt == dtypes.float64 and fn64 else fn32}({x})"

class CStyleLanguage:
  lang = "C"
  kernel_prefix = "void"
  buffer_prefix = ""
  arg_int_prefix = "const int"
  global_max: tuple[int, ...] | None = None
  half_native = False           # float16 values computed natively (GPU) or held as float with conversions (C)
  type_map: dict[DType, str] = {
    dtypes.bool: "_Bool", dtypes.int8: "signed char", dtypes.int16: "short", dtypes.int32: "int",
    dtypes.int64: "long long",
    dtypes.uint8: "unsigned char", dtypes.uint16: "unsigned short", dtypes.uint32: "unsigned int",
    dtypes.uint64: "unsigned long long", dtypes.float16: "float", dtypes.bfloat16: "float", dtypes.float32: "float",
    dtypes.float64: "double", dtypes.void: "void"}
  storage_map: dict[DType, str] = {dtypes.float16: "unsigned short", dtypes.bfloat16: "unsigned short"}
  unary: dict[Ops, Callable] = {
    Ops.SQRT: _f("sqrtf", "sqrt"), Ops.EXP: _f("expf", "exp"), Ops.LOG: _f("logf", "log"),
    Ops.EXP2: _f("exp2f", "exp2"),
    Ops.LOG2: _f("log2f", "log2"), Ops.SIN: _f("sinf", "sin"), Ops.COS: _f("cosf", "cos"), Ops.TAN: _f("tanf", "tan"),
    Ops.TANH: _f("tanhf", "tanh"), Ops.ERF: _f("erff", "erf"), Ops.TRUNC: _f("truncf", "trunc"),
    Ops.FLOOR: _f("floorf", "floor"),
    Ops.CEIL: _f("ceilf", "ceil"), Ops.RINT: _f("rintf", "rint")}
  infix = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FDIV: "/", Ops.IDIV: "/", Ops.MOD: "%", Ops.CMPLT: "<",
           Ops.CMPLE: "<=", Ops.CMPNE: "!=",
           Ops.CMPEQ: "==", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^", Ops.SHL: "<<", Ops.SHR: ">>"}
  prelude = ""
  # an expression nested this deep gets a name (a local variable) instead of being written inside its user: a
  # long chain of elementwise ops (129 steps of x*a+b) otherwise nests past clang's limit of 256 brackets
  max_nest = 32
  simd_reduce: dict[Ops, str] = {}   # C: '#pragma omp simd reduction(op:acc)' on innermost reduce loops
  no_vectorize = ""                  # C: a pragma that keeps the loop vectorizer off a loop around a register tile
  # the type of address math (loop counters and index values that only compute addresses and their masks), None: their
  # dtype's. C: 64-bit, so `int` index math under -fwrapv does not cost a sign extension per load (see RenderState.wide)
  wide_index: str | None = None
  # does the compiler wrap signed int overflow (C: -fwrapv)? Where it does not (NVRTC, HIP's clang, OpenCL: undefined,
  # and NVRTC folded int32 (x*4)//2 to x*2), int32/int64 +, -, * on values are rendered through their unsigned type
  wraps_signed = False

  # ---- small tables a language overrides
  def render_dtype(self, dt: DType) -> str: return self.type_map[dt]
  def render_storage(self, dt: DType) -> str: return self.storage_map.get(dt, self.render_dtype(dt))
  def render_const(self, v, dt: DType) -> str:
    if dt.kind == "b": return "1" if v else "0"
    if dt.kind == "f":
      if math.isnan(v): return "NAN" if dt != dtypes.float64 else "((double)NAN)"
      if math.isinf(v): return ("-" if v < 0 else "") + ("INFINITY" if dt != dtypes.float64 else "((double)INFINITY)")
      s = repr(float(v))
      if "e" not in s and "." not in s: s += ".0"
      return s if dt == dtypes.float64 else s + "f"
    if dt == dtypes.int64: return f"{v}ll" if v != -(1 << 63) else "(-9223372036854775807ll-1)"
    if dt == dtypes.uint64: return f"{v}ull"
    if dt == dtypes.uint32: return f"{v}u"
    if dt == dtypes.int32 and v == -(1 << 31): return "(-2147483647-1)"
    return str(v) if dt in (dtypes.int32, dtypes.index) else f"(({self.render_dtype(dt)}){v})"
  def render_load(self, buf: str, idx: str, dt: DType) -> str:
    if dt == dtypes.float16 and not self.half_native: return f"teeny_h2f({buf}[{idx}])"
    if dt == dtypes.bfloat16 and not self.half_native: return f"teeny_bf2f({buf}[{idx}])"
    return f"{buf}[{idx}]"
  def render_store_value(self, v: str, dt: DType) -> str:
    if dt not in (dtypes.float16, dtypes.bfloat16) or self.half_native: return v
    to, back = ("teeny_f2h", "teeny_h2f") if dt == dtypes.float16 else ("teeny_f2bf", "teeny_bf2f")
    # a value rounded to the dtype (render_round16) is stored as its rounding's 16 bits, not converted back and forth
    head = f"{back}({to}("
    if v.startswith(head) and v.endswith("))") and _balanced(v[len(head):-2]): return v[len(back) + 1:-1]
    return f"{to}({v})"
  def render_round16(self, x: str, dt: DType) -> str:
    """A float value rounded to float16/bfloat16 and held as float again (16-bit floats are computed in float)."""
    return f"teeny_h2f(teeny_f2h({x}))" if dt == dtypes.float16 else f"teeny_bf2f(teeny_f2bf({x}))"
  def render_cast(self, x: str, src: DType, dst: DType) -> str:
    if dst == dtypes.bool: return f"({x}!=0)"
    if dst in (dtypes.float16, dtypes.bfloat16) and not self.half_native:
      return self.render_round16(x if src.kind == "f" else f"(float)({x})", dst)
    if src.kind == "f" and dst.kind in "iu" and dst.itemsize <= 4 and not (dst.kind == "i" and dst.itemsize == 4):
      # a float out of a small integer's range: C leaves the cast undefined, and a vectorised loop saturated where the
      # scalar one wrapped (-1.0 -> uint8: 0 or 255 by the tensor's size). Through int32 (int64 for uint32) it wraps,
      # as numpy and torch on the CPU do
      wide = dtypes.int64 if dst == dtypes.uint32 else dtypes.int32
      return f"(({self.render_dtype(dst)})(({self.render_dtype(wide)})({x})))"
    return f"(({self.render_dtype(dst)})({x}))"
  def render_bitcast(self, x: str, src: DType, dst: DType) -> str:
    # 16-bit floats are held as float values (every language here): go through their 16-bit patterns
    half = {dtypes.float16: ("teeny_f2h", "teeny_h2f"), dtypes.bfloat16: ("teeny_f2bf", "teeny_bf2f")}
    if not self.half_native and src in half and dst in half: return f"{half[dst][1]}({half[src][0]}({x}))"
    if not self.half_native and src in half: return f"(({self.render_dtype(dst)})({half[src][0]}({x})))"
    if not self.half_native and dst in half: return f"{half[dst][1]}((unsigned short)({x}))"
    return self.render_bitcast_bits(x, src, dst)
  def render_bitcast_bits(self, x: str, src: DType, dst: DType) -> str:
    """The same bits as another type of the same size (not a 16-bit float: render_bitcast handles those)."""
    return (f"({{ {self.render_dtype(src)} _s = {x}; {self.render_dtype(dst)} _d; "
            f"__builtin_memcpy(&_d, &_s, sizeof(_d)); _d; }})")
  def render_max(self, a: str, b: str, dt: DType, is_max: bool) -> str:
    if dt.kind == "f": return f"teeny_f{'max' if is_max else 'min'}{'64' if dt == dtypes.float64 else ''}({a},{b})"
    return f"(({a}{'>' if is_max else '<'}{b})?{a}:{b})"
  def render_fmod(self, a: str, b: str, dt: DType) -> str:
    """Float MOD is C's fmod: exact, with the dividend's sign (the floor-style % is built on it in Tensor.mod)."""
    return f"fmod{'f' if dt != dtypes.float64 else ''}({a},{b})"
  def render_alu(self, op: Ops, srcs: list[str], dt: DType, src_dt: DType) -> str:
    if op in self.unary: return self.unary[op](srcs[0], dt)
    if op is Ops.NEG: return f"(!{srcs[0]})" if dt == dtypes.bool else f"(-{srcs[0]})"
    if op is Ops.RECIP: return f"(1.0/{srcs[0]})" if dt == dtypes.float64 else f"(1.0f/{srcs[0]})"
    if op in (Ops.MAX, Ops.MIN): return self.render_max(srcs[0], srcs[1], dt, op is Ops.MAX)
    if op is Ops.POW: return f"pow{'f' if dt != dtypes.float64 else ''}({srcs[0]},{srcs[1]})"
    if op is Ops.MOD and dt.kind == "f": return self.render_fmod(srcs[0], srcs[1], dt)
    if op is Ops.WHERE: return f"({srcs[0]}?{srcs[1]}:{srcs[2]})"
    if op in self.infix:
      # x+-3 reads better as x-3
      if op is Ops.ADD and dt.kind == "i" and srcs[1].startswith("-") and srcs[1][1:].isdigit():
        return f"({srcs[0]}{srcs[1]})"
      # a negative literal on the right needs parentheses: x - -1.0f would lex as x -- 1.0f
      rhs = f"({srcs[1]})" if op is Ops.SUB and srcs[1].startswith("-") else srcs[1]
      out = f"({srcs[0]}{self.infix[op]}{rhs})"
      # C promotes small ints to int: wrap back to the narrow type so overflow behaves like the dtype
      if dt.kind in "iu" and dt.itemsize < 4 and op not in GroupOp.Comparison: out = f"(({self.render_dtype(dt)}){out})"
      return out
    raise NotImplementedError(f"{self.lang} renderer has no rule for {op}")

  # ---- kernel structure, overridden by GPU languages
  def render_kernel_header(self, name: str, params: list[str], has_global: bool) -> list[str]:
    return [f"{self.kernel_prefix} {name}({', '.join(params + ['int core', 'int ncores'])}) {{"]
  def render_kernel_footer(self, name: str, params: list[str]) -> list[str]:
    """Lines after the kernel: C adds the entry point its runtime calls every kernel through."""
    return []
  def render_buffer_param(self, slot: int, dt: DType, written: bool) -> str:
    return f"{'' if written else 'const '}{self.render_storage(dt)}* restrict data{slot}"
  def render_range_open(self, r: UOp, name: str, size: str, first_global: bool, const_bounds: bool = False,
                        ty: str = "int") -> str:
    if first_global:
      split = (f"int {name}_per = ({size} + ncores - 1) / ncores, {name}_lo = core * {name}_per, "
               f"{name}_hi = {name}_lo + {name}_per < {size} ? {name}_lo + {name}_per : {size};\n")
      # const_bounds (a tile of accumulators written out): the loop keeps its constant bounds and this core skips the
      # others' share; with a bound it cannot see, clang stops vectorising unrolled accumulators (measured 4.8 vs 62
      # GFLOP/s on a conv kernel), while plain loops (elementwise, looped UPCAST) measured faster with narrowed bounds
      if const_bounds:
        return split + (f"for ({ty} {name} = 0; {name} < {size}; {name}++) {{\n"
                        f"  if ({name} < {name}_lo || {name} >= {name}_hi) continue;")
      return split + f"for ({ty} {name} = {name}_lo; {name} < {name}_hi; {name}++) {{"
    return f"for ({ty} {name} = 0; {name} < {size}; {name}++) {{"
  def render_store(self, buf: str, idx: str, v: str, stream: bool) -> str: return f"{buf}[{idx}] = {v};"
  def streams(self, store: UOp) -> bool:
    """Whether a store should bypass the caches (a language that can say so overrides this; see CRenderer)."""
    return False
  def render_atomic(self, u: UOp, ptr: str, srcs: list[str]) -> str:
    return render_atomic(self.lang, u, ptr, srcs, self)

  def render(self, name: str, uops: list[UOp]) -> str:
    """Source for one kernel from its linearized UOps: each spelled by its handler, in order."""
    st = RenderState(self, uops)
    for st.pos, u in enumerate(uops):
      if u.op is Ops.RANGE and u.arg[1] is AxisType.UNROLL:
        raise ValueError("an UNROLL range reached the renderer: codegen/expand.py writes them out before linearizing")
      if (handler := self.handlers.get(u.op)) is None:
        raise NotImplementedError(f"{self.lang} renderer cannot render {u.op}")
      getattr(self, handler)(st, u)
    head = self.render_kernel_header(name, st.params, st.first_global is not None)
    body = "\n".join(head + st.lines + ["}"] + self.render_kernel_footer(name, st.params)) + "\n"
    return self.render_prelude(body) + body

  # ---- one method per op: each spells its UOp with the tables above
  def _r_param(self, st: RenderState, u: UOp):
    if u.op is Ops.DEFINE_GLOBAL:
      st.params.append(self.render_buffer_param(u.arg[0], u.dtype.base, u in st.written))
      st.r[u] = f"data{u.arg[0]}"
    elif u.op is Ops.TENSOR_MAP:
      st.params.append(self.render_tensor_map_param(u.arg[0]))
      st.r[u] = f"tmap{u.arg[0]}"
    else:
      st.params.append(f"{self.arg_int_prefix} {u.arg[0]}")
      st.r[u] = u.arg[0]
  def render_tensor_map_param(self, idx: int) -> str:
    raise NotImplementedError(f"the {self.lang} renderer has no tensor maps (CUDA's tensor memory accelerator)")
  def _r_local(self, st: RenderState, u: UOp):
    st.r[u] = f"local{u.arg[0]}"
    st.emit(f"{self.render_storage(u.dtype.base)} local{u.arg[0]}[{u.arg[1]}] __attribute__((aligned(64)));")
  def _r_reg(self, st: RenderState, u: UOp):
    st.r[u] = f"reg{u.arg[0]}"
    st.emit(f"{self.render_dtype(u.dtype.base)} reg{u.arg[0]}[{u.arg[1]}];")
  def _r_wmma(self, st: RenderState, u: UOp):
    """A warp's matrix instruction on three register arrays (codegen/tc.py): a language with tensor cores spells
    it (render_wmma); the others have no tensor cores, and the TC Opt is refused for them before this point."""
    ptrs = [st.ptr(s) for s in u.src[:3]]   # (a fourth source: wgmma's accumulate flag, a value)
    st.emit(self.render_wmma(u.arg, *ptrs, *[st.val(s) for s in u.src[3:]]) + ";")
  def render_wmma(self, arg, acc: str, a: str, b: str) -> str:
    raise NotImplementedError(f"the {self.lang} renderer has no tensor-core instruction for {arg}")
  def _r_range(self, st: RenderState, u: UOp):
    nm = f"{ {AxisType.GLOBAL: 'g', AxisType.REDUCE: 'r', AxisType.UPCAST: 'u'}.get(u.arg[1], 'i')}{u.arg[0]}"
    st.r[u] = nm
    # not for float max/min: OpenMP starts each lane's copy at -FLT_MAX (+FLT_MAX), so a row of -inf came out as
    # -3.4e38 (float max/min vectorise through lane_split_opts in codegen/opt.py instead)
    # only for a loop that updates one accumulator: a tile of them written out (UNROLL) is vectorised across the tile
    # by the compiler's SLP pass, which a simd loop along the reduce would turn into strided loads
    if len(reds := st.loop_reduces.get(st.pos, [])) == 1 and (red := reds[0]) in st.r and red.arg in self.simd_reduce \
       and (red.dtype.kind in "iu" or (red.dtype.kind == "f" and red.arg not in (Ops.MAX, Ops.MIN))):
      st.emit(f"#pragma omp simd reduction({self.simd_reduce[red.arg]}:{st.val(red)})")
    if st.pos in st.tile_outer and self.no_vectorize: st.emit(self.no_vectorize)
    wide = {"ty": st.var_type(u)} if self.wide_index else {}   # (GPU languages keep their loop counters' types)
    st.emit(self.render_range_open(u, nm, st.val(u.src[0]), u is st.first_global, st.const_bounds, **wide))
    st.depth += 1
  def _r_end(self, st: RenderState, u: UOp):
    st.depth -= 1
    st.emit("}")
  def _r_index(self, st: RenderState, u: UOp):
    st.r[u] = st.val(u.src[1])
    st.nest[u] = max(st.nest.get(s, 0) for s in u.src[1:])
  def _r_load(self, st: RenderState, u: UOp):
    idx = u.src[0]
    ld = self.render_load(st.val(idx.src[0]), st.val(idx), u.dtype)
    if len(idx.src) > 2: ld = f"({st.val(idx.src[2])}?{ld}:{self.render_const(0, u.dtype)})"
    st.define(u, ld)
  def _r_store(self, st: RenderState, u: UOp):
    idx, v = u.src
    code = self.render_store(st.val(idx.src[0]), st.val(idx), self.render_store_value(st.val(v), v.dtype),
                             u in st.streamed)
    st.emit(f"if ({st.val(idx.src[2])}) {code}" if len(idx.src) > 2 else code)
  def _r_reduce(self, st: RenderState, u: UOp):
    nm = st.fresh("acc")
    init = self.render_const({Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dtypes.min(u.dtype),
                              Ops.MIN: dtypes.max(u.dtype)}[u.arg], u.dtype)
    if ups := st.acc_dims.get(u, []):
      n = prod([x.src[0].arg for x in ups])
      st.emit(f"{self.render_dtype(u.dtype)} {nm}[{n}];")
      st.emit(f"for (int {nm}_i = 0; {nm}_i < {n}; {nm}_i++) {nm}[{nm}_i] = {init};")
      st.acc_arrays[u] = (nm, ups)
    else:
      st.emit(f"{self.render_dtype(u.dtype)} {nm} = {init};")
      st.r[u] = nm
  def _r_assign(self, st: RenderState, u: UOp):
    red, v = u.src
    a = st.val(red)
    if red.arg in (Ops.MAX, Ops.MIN): st.emit(f"{a} = {self.render_max(a, st.val(v), red.dtype, red.arg is Ops.MAX)};")
    else: st.emit(f"{a} = {self.render_alu(red.arg, [a, st.val(v)], red.dtype, red.dtype)};")
  def _r_alu(self, st: RenderState, u: UOp):
    srcs = [st.val(s) for s in u.src]
    if not self.wraps_signed and u.dtype.kind == "i" and u.dtype.itemsize >= 4 and u.op in (Ops.ADD, Ops.SUB, Ops.MUL) \
       and u not in st.addr and _may_wrap(u):   # (address math never wraps: it keeps its type and compiler freedom)
      udt = dtypes.uint32 if u.dtype.itemsize == 4 else dtypes.uint64
      us = [self.render_const(s.arg % (1 << 8 * udt.itemsize), udt) if s.op is Ops.CONST else
            f"(({self.render_dtype(udt)})({x}))" for s, x in zip(u.src, srcs)]
      out = self.render_alu(u.op, us, udt, udt)
      return st.define(u, f"(({self.render_dtype(u.dtype)}){out})")
    out = self.render_alu(u.op, srcs, u.dtype, u.src[-1].dtype)
    # a 16-bit float result is rounded to its dtype at every op, as if each op wrote it to memory: a fused chain gives
    # the values it gives unfused (and torch's). Selecting ops (where, max, min, negation) return an operand unchanged.
    # A reduce's accumulator (_r_assign) is not rounded: it keeps float, as torch's 16-bit sums do
    if u.dtype in (dtypes.float16, dtypes.bfloat16) and not self.half_native and \
       u.op not in (Ops.WHERE, Ops.MAX, Ops.MIN, Ops.NEG):
      out = self.render_round16(out, u.dtype)
    st.define(u, out)
  def _r_cast(self, st: RenderState, u: UOp):
    conv = self.render_cast if u.op is Ops.CAST else self.render_bitcast
    st.define(u, conv(st.val(u.src[0]), u.src[0].dtype, u.dtype))
  def _r_custom(self, st: RenderState, u: UOp):
    fmt = dict(u.arg).get(self.lang, dict(u.arg).get("C")) if isinstance(u.arg, tuple) else u.arg
    if fmt is None: raise NotImplementedError(f"custom op has no {self.lang} spelling: {u.arg}")
    code = fmt.format(*[st.ptr(s) if s.op is Ops.INDEX else st.val(s) for s in u.src])
    if u.dtype == dtypes.void: st.emit(code if code.rstrip().endswith(("}", ";")) else code + ";")
    else: st.define(u, code)
  def _r_atomic(self, st: RenderState, u: UOp):
    idx = u.src[0]
    srcs = [st.val(s) for s in u.src[1:]]
    if len(idx.src) > 2:  # a gated INDEX masks the atomic: the address may be out of bounds where the gate is false
      has_mask = u.op is Ops.ATOMIC and len(u.src) > 2
      srcs = srcs[:-1] + [f"({st.val(idx.src[2])}&&{srcs[-1]})"] if has_mask else srcs + [st.val(idx.src[2])]
    code = self.render_atomic(u, st.ptr(idx), srcs)
    if st.uses.get(u, 0) == 0: st.emit(code + ";")
    else: st.define(u, code)
  def _r_barrier(self, st: RenderState, u: UOp): st.emit(self.barrier + ";")
  def _r_special(self, st: RenderState, u: UOp): st.r[u] = self.render_special(u)
  def _r_nothing(self, st: RenderState, u: UOp): pass
  # op -> the method that spells it (by name, so a language overrides one method without copying the table)
  handlers: dict[Ops, str] = {
    Ops.DEFINE_GLOBAL: "_r_param", Ops.DEFINE_VAR: "_r_param", Ops.TENSOR_MAP: "_r_param", Ops.RANGE: "_r_range",
    Ops.END: "_r_end",
    Ops.INDEX: "_r_index",
    Ops.LOAD: "_r_load", Ops.STORE: "_r_store", Ops.REDUCE: "_r_reduce", Ops.ASSIGN: "_r_assign",
    **dict.fromkeys(GroupOp.ALU, "_r_alu"),
    Ops.CAST: "_r_cast", Ops.BITCAST: "_r_cast", Ops.CUSTOM: "_r_custom", Ops.ATOMIC: "_r_atomic",
    Ops.ATOMIC_CAS: "_r_atomic",
    Ops.BARRIER: "_r_barrier", Ops.SPECIAL: "_r_special", Ops.NOOP: "_r_nothing", Ops.SINK: "_r_nothing",
    Ops.DEFINE_LOCAL: "_r_local", Ops.DEFINE_REG: "_r_reg", Ops.WMMA: "_r_wmma"}
  def render_prelude(self, body: str) -> str:
    """The helper definitions this kernel's body uses (each helper is a block starting with its name)."""
    return self.prelude
  barrier = "__syncthreads()"
  def render_special(self, u: UOp) -> str: raise NotImplementedError

class RenderState:
  """What rendering one kernel tracks: each UOp's C expression or name, the lines so far, the loop depth, and facts read
  off the linearized list once (use counts, loop nesting, accumulator dimensions). It spells nothing itself."""
  def __init__(self, lang: CStyleLanguage, uops: list[UOp]):
    self.lang, self.uops = lang, uops
    self.r: dict[UOp, str] = {}
    self.nest: dict[UOp, int] = {}       # how deep each value written inline nests (0 for names and constants)
    self.lines: list[str] = []
    self.params: list[str] = []
    self.depth, self.counter, self.pos = 1, 0, 0   # pos: the index in uops being rendered
    self.uses: dict[UOp, int] = {}
    for u in uops:   # the SINK that ends the list lists the effects: not a use
      for s in (u.src if u.op is not Ops.SINK else ()): self.uses[s] = self.uses.get(s, 0) + 1
    self.written = {u.src[0].src[0] for u in uops
                    if u.op in (Ops.STORE, Ops.ATOMIC, Ops.ATOMIC_CAS) and u.src[0].op is Ops.INDEX}
    self.written |= {s.src[0] for u in uops if u.op is Ops.CUSTOM for s in u.src if s.op is Ops.INDEX}
    self.streamed = {u for u in uops if u.op is Ops.STORE and lang.streams(u)}
    # accumulators indexed by the UPCAST ranges their value depends on; the reduce whose innermost loop each range is
    self.acc_dims = {u: sorted([x for x in deps(u) if x.arg[1] is AxisType.UPCAST],
                               key=lambda x: x.arg[0])
                     for u in uops if u.op is Ops.REDUCE}
    self.acc_arrays: dict[UOp, tuple[str, list[UOp]]] = {}
    # one pass over the loop nesting: each value's depth, and the loops (positions: a range may open two loops, update
    # and combine) around a register tile's update when its innermost loop is one of the tile's UPCAST ranges: that
    # loop alone is the vectorizer's (tile_outer). Left to choose, clang 14 on AVX-512 targets vectorised an outer
    # 4-trip loop of a 4x16 tile with gathers from the accumulator array (a conv weight gradient: 5.8 ms instead of
    # 0.6 ms, the AVX2 build of the same source).
    self.level: dict[UOp, int] = {}
    self.tile_outer: set[int] = set()
    self.loop_reduces: dict[int, list[UOp]] = {}
    opened: list[int] = []
    for i, u in enumerate(uops):
      if u.op is Ops.RANGE: opened.append(i)
      elif u.op is Ops.END: opened.pop()
      else:
        self.level[u] = len(opened)
        # the plain accumulators (no array) each loop updates directly, keyed by the loop's position
        if u.op is Ops.ASSIGN and opened and not self.acc_dims[u.src[0]] and u.src[0].src[-1] is uops[opened[-1]]:
          self.loop_reduces.setdefault(opened[-1], []).append(u.src[0])
        if u.op is Ops.ASSIGN and opened and (dims := self.acc_dims.get(u.src[0])) and \
           uops[opened[-1]] in dims:
          mine = set(u.src[0].src[1:]) | set(dims)
          self.tile_outer |= {k for k in opened[:-1] if uops[k] in mine}
    # a value the linearizer hoisted out of a loop gets a variable: written inline it would be computed inside the loop
    # again (a logf of a row's sum inside cross-entropy's loop over 32000 classes cost 0.7 s)
    self.used_deeper = {s for u in uops if u in self.level for s in u.src if s in self.level
                        and self.level[s] < self.level[u]
                        and s.op not in (Ops.CONST, Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.INDEX)}
    self.first_global = next((u for u in uops if u.op is Ops.RANGE and u.arg[1] is AxisType.GLOBAL), None)
    # constant bounds on the cores' loop (see render_range_open) with a tile of accumulators written out (several
    # reduces sharing one loop: UNROLL ranges, codegen/expand.py), and when a register tile's loads run along an UPCAST
    # range at addresses that also depend on that loop (a tile whose columns the cores split: with a bound clang cannot
    # see, int index math may wrap and it gathers the tile's loads lane by lane, 24 vinsertps and 16 instead of 64 FMAs
    # in a 1024^3 matmul blocked by LOOP + SWAP)
    loops = [u.src[1:] for u in uops if u.op is Ops.REDUCE]
    self.const_bounds = len(set(loops)) < len(loops)
    if not self.const_bounds and (fg := self.first_global) is not None and (tile := self._tile(uops)):
      self.const_bounds = any(_contiguous_tile_load(u.src[0], fg, tile) for u in uops if u.op is Ops.LOAD)
    self.addr = self._address_math(uops)
    self.wide = self.addr if lang.wide_index else set()

  @staticmethod
  def _address_math(uops: list[UOp]) -> set[UOp]:
    """The integer values (loop counters included) used only to compute addresses: an INDEX's offset, or a comparison
    that only masks INDEXes. The C renderer declares them 64-bit: `int` math under -fwrapv may wrap, so clang kept
    each address in 32 bits and sign-extended it at every load (a lea + movslq per broadcast in a matmul's inner loop)
    and could not step pointers. Offsets of a buffer fit in 64 bits, so no address changes; values that reach
    anything else (a store, a cast, arithmetic on data) keep their dtype and its wrap-around."""
    users: dict[UOp, list[tuple[UOp, int]]] = {}
    for u in uops:
      if u.op in (Ops.END, Ops.SINK): continue
      for i, s in enumerate(u.src if u.op is not Ops.REDUCE else u.src[:1]): users.setdefault(s, []).append((u, i))
    wide: set[UOp] = set()
    gates: set[UOp] = set()
    for u in reversed(uops):
      us = users.get(u, [])
      if u.dtype == dtypes.bool and u.op in GroupOp.ALU:
        if us and all((v.op is Ops.INDEX and i == 2) or (v.op is Ops.AND and v in gates) for v, i in us): gates.add(u)
      elif u.dtype == dtypes.int32 and (u.op is Ops.RANGE or u.op in GroupOp.ALU) and us and \
           all((v.op is Ops.INDEX and i == 1) or v in wide or (v.op in GroupOp.Comparison and v in gates)
               for v, i in us):
        wide.add(u)
    return wide
  def var_type(self, u: UOp) -> str:
    """The C type a named value (or loop counter) is declared with."""
    return self.lang.wide_index if u in self.wide and self.lang.wide_index else self.lang.render_dtype(u.dtype)

  @staticmethod
  def _tile(uops: list[UOp]) -> set[UOp]:
    """The UPCAST ranges output addresses depend on (a register tile of outputs)."""
    return {x for u in uops if u.op is Ops.STORE for x in u.src[0].toposort
            if x.op is Ops.RANGE and x.arg[1] is AxisType.UPCAST}

  def fresh(self, prefix: str) -> str:
    self.counter += 1
    return f"{prefix}{self.counter}"
  def emit(self, line: str):
    for ln in line.split("\n"): self.lines.append("  " * self.depth + ln)
  def val(self, u: UOp) -> str:
    if u.op is Ops.CONST: return self.lang.render_const(u.arg, u.dtype)
    if u in self.acc_arrays:   # an accumulator array, indexed by the current values of its UPCAST ranges
      nm, ups = self.acc_arrays[u]
      stride, parts = 1, []
      for x in reversed(ups):
        nm_x = self.r.get(x, f"u{x.arg[0]}")
        parts.append(f"{nm_x}*{stride}" if stride != 1 else nm_x)
        stride *= x.src[0].arg
      return f"{nm}[{'+'.join(reversed(parts))}]"
    return self.r[u]
  def ptr(self, idx: UOp) -> str:
    """An INDEX as a pointer (what atomics, CUSTOM code and WMMA take): the buffer plus the offset."""
    return f"({self.val(idx.src[0])}+{self.val(idx)})"
  def define(self, u: UOp, expr: str, prefix: str = "val"):
    """A value: written inline where it is used, or as a named variable when it is used twice, used in a deeper loop,
    has an effect, or nests too deep."""
    n = 1 + max((self.nest.get(s, 0) for s in u.src), default=0)
    if self.uses.get(u, 0) > 1 or u in self.used_deeper or u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS) or \
       (u.op is Ops.CUSTOM and u.dtype != dtypes.void) or n >= self.lang.max_nest:
      nm = self.fresh(prefix)
      self.emit(f"{self.var_type(u)} {nm} = {expr};")
      self.r[u], self.nest[u] = nm, 0
    else: self.r[u], self.nest[u] = expr, n
