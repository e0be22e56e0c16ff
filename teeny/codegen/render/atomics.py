"""Atomic read-modify-write ops (Ops.ATOMIC, Ops.ATOMIC_CAS) spelled for every C-family language: C, CUDA, HIP, OpenCL.

Each returns the value the memory held before the op. What every language supports:
  add max min xchg cas   on int32 uint32 int64 uint64 float32 float64
  and or xor             on int32 uint32 int64 uint64
  (CUDA also: add on float16 (sm_70+) and bfloat16 (sm_90+), through PTX atom)
Anything else raises TypeError (a dtype the op has no spelling for) or NotImplementedError (a language or scope).

Semantics (MemSem) and scope (MemScope), per language:
  C      the __atomic builtins take the order directly; scope does not matter on the CPU (one coherent memory, and the
         CPU device is the host). gcc's __atomic_fetch_add rejects float*, so float add/max/min/xchg/cas are
         compare-and-swap loops on the bit pattern, in `static inline` helpers (teeny_atomic_<kind>_<f32|f64>_<sem>)
         that the C renderer's prelude includes by name: correct with gcc and clang alike. Integer max/min/cas are
         helpers too (gcc has no __atomic_fetch_max).
  CUDA   the atomicAdd/atomicMax/... builtins (relaxed), with _block/_system suffixes for the Cta/Sys scopes;
         acquire/release are __threadfence_block()/__threadfence()/__threadfence_system() after/before the op (in an
         immediately called lambda where the value must be kept across the fence). float/double max/min are atomicCAS
         loops on the bit pattern. Nothing needs a header (NVRTC declares these builtins).
  HIP    __hip_atomic_* builtins, which take the order and a scope macro that clang predefines
         (__HIP_MEMORY_SCOPE_WORKGROUP / _AGENT / _SYSTEM; their values are never written here).
  CL     OpenCL 1.2 atomic_* on 32-bit ints, atom_* on 64-bit ints (cl_khr_int64_base/extended_atomics), atomic_cmpxchg
         loops for float/double; these are relaxed and device-wide, so acquire/release add mem_fence() and Sys scope
         is refused (it would need OpenCL 2.0 SVM atomics).
Min/max that leave the value unchanged only load it (with acquire ordering when the semantics ask for it).

Masks: a masked atomic (mask=..., or an INDEX with a validity gate) touches memory only where the mask is true (the
address may be out of bounds elsewhere); where it is false the op returns 0.
"""
from __future__ import annotations
from typing import Any
from teeny.dtype import DType, dtypes
from teeny.uop.ops import MemScope, MemSem, Ops, UOp

INT_DTYPES = (dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64)
FLOAT_DTYPES = (dtypes.float32, dtypes.float64)
ARITH_KINDS = ("add", "max", "min", "xchg", "cas")
BIT_KINDS = ("and", "or", "xor")
LANGS = ("C", "CUDA", "HIP", "CL")
SUPPORTED = ("add/max/min/xchg/cas on int32, uint32, int64, uint64, float32, float64; "
             "and/or/xor on int32, uint32, int64, "
             "uint64; CUDA also add on float16 (sm_70+) and bfloat16 (sm_90+)")

def supports(lang: str, kind: str, dt: DType, scope: MemScope = MemScope.Gpu) -> bool:
  """Whether `lang` has a spelling for this atomic."""
  if lang not in LANGS: return False
  if lang == "CL" and scope is MemScope.Sys: return False
  if dt in INT_DTYPES: return kind in ARITH_KINDS + BIT_KINDS
  if dt in FLOAT_DTYPES: return kind in ARITH_KINDS
  return lang == "CUDA" and kind == "add" and dt in (dtypes.float16, dtypes.bfloat16)

def _check(lang: str, kind: str, dt: DType, scope: MemScope):
  if lang not in LANGS:
    raise NotImplementedError(f"no atomics for the {lang} renderer; teeny has them for {', '.join(LANGS)}")
  if lang == "CL" and scope is MemScope.Sys:
    raise NotImplementedError("OpenCL 1.2 atomics are device-wide: MemScope.Sys needs SVM atomics; "
                              "use MemScope.Gpu or Cta")
  if not supports(lang, kind, dt, scope):
    raise TypeError(f"{lang} has no atomic {kind} on {dt} (scope {scope.name}); supported: {SUPPORTED}")

def _parts(u: UOp, srcs: list[str]) -> tuple[str, MemSem, MemScope, list[str], str | None]:
  """(kind, sem, scope, operand strings, mask string or None) of an ATOMIC or ATOMIC_CAS."""
  if u.op is Ops.ATOMIC_CAS:
    sem, scope = u.arg
    return "cas", sem, scope, srcs[:2], srcs[2] if len(srcs) > 2 else None
  if u.op is not Ops.ATOMIC: raise ValueError(f"render_atomic wants an ATOMIC or ATOMIC_CAS, got {u.op}")
  kind, sem, scope = u.arg
  return kind, sem, scope, srcs[:1], srcs[1] if len(srcs) > 1 else None

def render_atomic(lang: str, u: UOp, ptr: str, srcs: list[str], renderer: Any = None) -> str:
  """An expression doing the atomic `u` at address `ptr` (e.g. "(data0+i)") and giving the previous value.

  srcs are the rendered sources after the INDEX: (value[, mask]) for ATOMIC, (compare, value[, mask]) for ATOMIC_CAS;
  the renderer folds an INDEX validity gate into the mask."""
  kind, sem, scope, ops, mask = _parts(u, srcs)
  dt = u.dtype
  _check(lang, kind, dt, scope)
  expr = {"C": _c, "CUDA": _cuda, "HIP": _hip, "CL": _cl}[lang](kind, dt, sem, scope, ptr, ops)
  return f"({mask}?{expr}:{_zero(lang, dt)})" if mask is not None else expr

def _zero(lang: str, dt: DType) -> str:
  return {dtypes.float32: "0.0f", dtypes.float64: "0.0", dtypes.float16: "0.0f", dtypes.bfloat16: "0.0f"}.get(dt, "0")

_SFX = {dtypes.int32: "i32", dtypes.uint32: "u32", dtypes.int64: "i64", dtypes.uint64: "u64", dtypes.float32: "f32",
        dtypes.float64: "f64"}

# ---------------------------------------------------------------------------------------------------------------- C
_C_TYPE = {dtypes.int32: "int", dtypes.uint32: "unsigned int", dtypes.int64: "long long",
           dtypes.uint64: "unsigned long long",
           dtypes.float32: "float", dtypes.float64: "double"}
_C_BITS = {dtypes.float32: "unsigned int", dtypes.float64: "unsigned long long"}
_C_ORDER = {MemSem.Relaxed: "__ATOMIC_RELAXED", MemSem.Acquire: "__ATOMIC_ACQUIRE", MemSem.Release: "__ATOMIC_RELEASE",
            MemSem.AcqRel: "__ATOMIC_ACQ_REL"}
# a failed compare-exchange only loads: it may not be release, nor stronger than the success order
_C_FAIL = {MemSem.Relaxed: "__ATOMIC_RELAXED", MemSem.Acquire: "__ATOMIC_ACQUIRE", MemSem.Release: "__ATOMIC_RELAXED",
           MemSem.AcqRel: "__ATOMIC_ACQUIRE"}
_C_BUILTIN = {"add": "__atomic_fetch_add", "and": "__atomic_fetch_and", "or": "__atomic_fetch_or",
              "xor": "__atomic_fetch_xor",
              "xchg": "__atomic_exchange_n"}

def c_helper_name(kind: str, dt: DType, sem: MemSem) -> str: return f"teeny_atomic_{kind}_{_SFX[dt]}_{sem.name.lower()}"

def _c(kind: str, dt: DType, sem: MemSem, scope: MemScope, ptr: str, ops: list[str]) -> str:
  if dt in INT_DTYPES and kind in _C_BUILTIN: return f"{_C_BUILTIN[kind]}({ptr}, {ops[0]}, {_C_ORDER[sem]})"
  return f"{c_helper_name(kind, dt, sem)}({ptr}, {', '.join(ops)})"

def _c_helper(kind: str, dt: DType, sem: MemSem) -> str:
  """The definition of one C helper: a compare-and-swap loop (or a single CAS) with the orders of `sem` baked in."""
  name, t, order, fail = c_helper_name(kind, dt, sem), _C_TYPE[dt], _C_ORDER[sem], _C_FAIL[sem]
  load = "__ATOMIC_ACQUIRE" if sem in (MemSem.Acquire, MemSem.AcqRel) else "__ATOMIC_RELAXED"
  if dt in INT_DTYPES:
    if kind == "cas":
      return (f"static inline {t} {name}({t}* p, {t} c, {t} v) {{\n"
              f"  __atomic_compare_exchange_n(p, &c, v, 0, {order}, {fail}); return c;\n}}\n")
    cmp = "<" if kind == "max" else ">"
    return (f"static inline {t} {name}({t}* p, {t} v) {{\n  {t} old = __atomic_load_n(p, {load});\n"
            f"  while (old {cmp} v && !__atomic_compare_exchange_n(p, &old, v, 1, {order}, {fail})) {{}}\n"
            f"  return old;\n}}\n")
  # floats through their bit pattern; may_alias keeps the punning legal next to plain float accesses
  head = f"  typedef {_C_BITS[dt]} __attribute__((may_alias)) teeny_bits;\n  teeny_bits* q = (teeny_bits*)p;\n"
  if kind == "cas":
    return (f"static inline {t} {name}({t}* p, {t} c, {t} v) {{\n{head}"
            f"  teeny_bits cb, vb; {t} o; __builtin_memcpy(&cb, &c, sizeof(c)); __builtin_memcpy(&vb, &v, sizeof(v));\n"
            f"  __atomic_compare_exchange_n(q, &cb, vb, 0, {order}, {fail});\n"
            f"  __builtin_memcpy(&o, &cb, sizeof(o)); return o;\n}}\n")
  if kind == "xchg":
    return (f"static inline {t} {name}({t}* p, {t} v) {{\n{head}"
            f"  teeny_bits vb, ob; {t} o; __builtin_memcpy(&vb, &v, sizeof(v));\n"
            f"  ob = __atomic_exchange_n(q, vb, {order});\n"
            f"  __builtin_memcpy(&o, &ob, sizeof(o)); return o;\n}}\n")
  new = {"add": "o + v", "max": "(o > v || o != o) ? o : v", "min": "(o < v || o != o) ? o : v"}[kind]
  same = "" if kind == "add" else "    if (nb == old) break;\n"
  return (f"static inline {t} {name}({t}* p, {t} v) {{\n{head}"
          f"  teeny_bits old = __atomic_load_n(q, {load}), nb;\n  {t} o, n;\n  do {{\n"
          f"    __builtin_memcpy(&o, &old, sizeof(o)); n = {new}; __builtin_memcpy(&nb, &n, sizeof(n));\n{same}"
          f"  }} while (!__atomic_compare_exchange_n(q, &old, nb, 1, {order}, {fail}));\n  return o;\n}}\n")

C_ATOMIC_HELPERS: dict[str, str] = {
  c_helper_name(k, dt, s): _c_helper(k, dt, s) for s in MemSem for dt in INT_DTYPES + FLOAT_DTYPES for k in ARITH_KINDS
  if not (dt in INT_DTYPES and k in _C_BUILTIN)}

# ------------------------------------------------------------------------------------------------------------- CUDA
_CU_TYPE = _C_TYPE
_CU_FN = {"add": "atomicAdd", "max": "atomicMax", "min": "atomicMin", "and": "atomicAnd", "or": "atomicOr",
          "xor": "atomicXor",
          "xchg": "atomicExch", "cas": "atomicCAS"}
_CU_SCOPE = {MemScope.Cta: "_block", MemScope.Gpu: "", MemScope.Sys: "_system"}
_CU_FENCE = {MemScope.Cta: "__threadfence_block()", MemScope.Gpu: "__threadfence()",
             MemScope.Sys: "__threadfence_system()"}

def _cuda(kind: str, dt: DType, sem: MemSem, scope: MemScope, ptr: str, ops: list[str]) -> str:
  if dt in (dtypes.float16, dtypes.bfloat16): return _cuda_16bit_add(dt, sem, scope, ptr, ops[0])
  fn, t = _CU_FN[kind] + _CU_SCOPE[scope], _CU_TYPE[dt]
  if dt in (dtypes.float32, dtypes.float64) and kind in ("max", "min"):
    bits, to_b, from_b = ("unsigned int", "__float_as_uint", "__uint_as_float") if dt == dtypes.float32 else \
      ("unsigned long long", "(unsigned long long)__double_as_longlong", "__longlong_as_double")
    cmp = ">" if kind == "max" else "<"
    op = (f"([&]() -> {t} {{ {bits}* _tq = ({bits}*){ptr}; {t} _tv = ({ops[0]}); "
          f"{bits} _ta, _told = *(volatile {bits}*)_tq; "
          f"do {{ _ta = _told; {t} _to = {from_b}(_ta); {t} _tn = (_to {cmp} _tv || _to != _to) ? _to : _tv; "
          f"if ({to_b}(_tn) == _ta) break; _told = {_CU_FN['cas'] + _CU_SCOPE[scope]}(_tq, _ta, {to_b}(_tn)); }} "
          f"while (_told != _ta); return {from_b}(_ta); }})()")
  elif dt == dtypes.float64 and kind in ("xchg", "cas"):
    args = ", ".join(f"(unsigned long long)__double_as_longlong({o})" for o in ops)
    op = f"__longlong_as_double((long long){fn}((unsigned long long*){ptr}, {args}))"
  elif dt == dtypes.float32 and kind == "cas":
    op = f"__uint_as_float({fn}((unsigned int*){ptr}, {', '.join(f'__float_as_uint({o})' for o in ops)}))"
  elif dt == dtypes.int64 and kind not in ("max", "min"):
    # the 64-bit builtins are on unsigned long long (two's complement makes add/and/or/xor/xchg/cas the same)
    op = f"(long long){fn}((unsigned long long*){ptr}, {', '.join(f'(unsigned long long)({o})' for o in ops)})"
  else: op = f"{fn}(({t}*){ptr}, {', '.join(f'({t})({o})' for o in ops)})"
  return _fenced(op, t, sem, _CU_FENCE[scope])

_PTX_SEM = {MemSem.Relaxed: "relaxed", MemSem.Acquire: "acquire", MemSem.Release: "release", MemSem.AcqRel: "acq_rel"}
_PTX_SCOPE = {MemScope.Cta: "cta", MemScope.Gpu: "gpu", MemScope.Sys: "sys"}

def _cuda_16bit_add(dt: DType, sem: MemSem, scope: MemScope, ptr: str, v: str) -> str:
  """float16 (sm_70+) / bfloat16 (sm_90+) add through PTX atom, header-free: the renderer stores these types as 16-bit
  unsigned shorts and computes in float, converting with its teeny_f2h/teeny_h2f (teeny_f2bf/teeny_bf2f) helpers."""
  ty, to_b, from_b = ("f16", "teeny_f2h", "teeny_h2f") if dt == dtypes.float16 else ("bf16", "teeny_f2bf", "teeny_bf2f")
  asm = f"atom.{_PTX_SEM[sem]}.{_PTX_SCOPE[scope]}.add.noftz.{ty} %0, [%1], %2;"
  return (f'{from_b}(([&]() -> unsigned short {{ unsigned short _to; asm volatile("{asm}" : "=h"(_to) : "l"({ptr}), '
          f'"h"({to_b}({v})) : "memory"); return _to; }})())')

def _fenced(op: str, t: str, sem: MemSem, fence: str) -> str:
  """Relaxed `op` with fences: before it for release, after it for acquire (keeping its value in a lambda)."""
  if sem is MemSem.Relaxed: return op
  if sem is MemSem.Release: return f"({fence}, {op})"
  before = f"{fence}; " if sem is MemSem.AcqRel else ""
  return f"([&]() -> {t} {{ {before}{t} _tr = {op}; {fence}; return _tr; }})()"

# -------------------------------------------------------------------------------------------------------------- HIP
_HIP_SCOPE = {MemScope.Cta: "__HIP_MEMORY_SCOPE_WORKGROUP", MemScope.Gpu: "__HIP_MEMORY_SCOPE_AGENT",
              MemScope.Sys: "__HIP_MEMORY_SCOPE_SYSTEM"}
_HIP_FN = {"add": "__hip_atomic_fetch_add", "max": "__hip_atomic_fetch_max", "min": "__hip_atomic_fetch_min",
           "and": "__hip_atomic_fetch_and", "or": "__hip_atomic_fetch_or", "xor": "__hip_atomic_fetch_xor",
           "xchg": "__hip_atomic_exchange"}

def _hip(kind: str, dt: DType, sem: MemSem, scope: MemScope, ptr: str, ops: list[str]) -> str:
  t, order, fail, sc = _C_TYPE[dt], _C_ORDER[sem], _C_FAIL[sem], _HIP_SCOPE[scope]
  if kind == "cas":
    return (f"([&]() -> {t} {{ {t} _te = ({ops[0]}); "
            f"__hip_atomic_compare_exchange_strong(({t}*){ptr}, &_te, ({t})({ops[1]}), {order}, {fail}, {sc}); "
            f"return _te; }})()")
  return f"{_HIP_FN[kind]}(({t}*){ptr}, ({t})({ops[0]}), {order}, {sc})"

# --------------------------------------------------------------------------------------------------------------- CL
_CL_TYPE = {dtypes.int32: "int", dtypes.uint32: "uint", dtypes.int64: "long", dtypes.uint64: "ulong",
            dtypes.float32: "float",
            dtypes.float64: "double"}
_CL_FN = {"add": "add", "max": "max", "min": "min", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg",
          "cas": "cmpxchg"}
_CL_FENCE = "mem_fence(CLK_GLOBAL_MEM_FENCE)"
CL_INT64_PRAGMAS = ("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
                    "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n")

def _cl(kind: str, dt: DType, sem: MemSem, scope: MemScope, ptr: str, ops: list[str]) -> str:
  t = _CL_TYPE[dt]
  pre = "atom_" if dt.itemsize == 8 else "atomic_"
  if dt in INT_DTYPES or (dt == dtypes.float32 and kind == "xchg"):
    op = f"{pre}{_CL_FN[kind]}((volatile __global {t}*){ptr}, {', '.join(f'({t})({o})' for o in ops)})"
  else:
    bits, as_b, as_t = ("uint", "as_uint", "as_float") if dt == dtypes.float32 else ("ulong", "as_ulong", "as_double")
    cas = f"{pre}cmpxchg"
    q = f"(volatile __global {bits}*){ptr}"
    if kind == "xchg": op = f"{as_t}(atom_xchg({q}, {as_b}(({t})({ops[0]}))))"
    elif kind == "cas": op = f"{as_t}({cas}({q}, {as_b}(({t})({ops[0]})), {as_b}(({t})({ops[1]}))))"
    else:
      new = {"add": "_to + _tv", "max": "(_to > _tv || _to != _to) ? _to : _tv",
             "min": "(_to < _tv || _to != _to) ? _to : _tv"}[kind]
      same = "" if kind == "add" else f"if ({as_b}(_tn) == _ta) break; "
      op = (f"({{ volatile __global {bits}* _tq = {q}; {t} _tv = ({ops[0]}); {bits} _ta, _told = *_tq; "
            f"do {{ _ta = _told; {t} _to = {as_t}(_ta), _tn = {new}; {same}_told = {cas}(_tq, _ta, {as_b}(_tn)); }} "
            f"while (_told != _ta); {as_t}(_ta); }})")
  if sem is MemSem.Relaxed: return op
  if sem is MemSem.Release: return f"({_CL_FENCE}, {op})"
  before = f"{_CL_FENCE}; " if sem is MemSem.AcqRel else ""
  return f"({{ {before}{t} _tr = {op}; {_CL_FENCE}; _tr; }})"
