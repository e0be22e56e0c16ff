"""Atomics (UOp.atomic / UOp.atomic_cas) run on the default device (on the CPU: C, across two threads), each kind with a
negative control; plus the CUDA, HIP and OpenCL spellings, rendered (and compiled where the toolchain is here)."""
from __future__ import annotations
import shutil
import numpy as np
import pytest
from helpers import missing, needs_values, toolchain
from teeny import Device, Tensor, dtypes
from teeny.dtype import DType
from teeny.helpers import Context
from teeny.uop.ops import AxisType, KernelInfo, MemScope, MemSem, Ops, UOp
from teeny.codegen.render.atomics import INT_DTYPES, FLOAT_DTYPES, render_atomic, supports

NPROG, L = 64, 20000   # 64 programs split over 2 threads, each doing L read-modify-writes of ONE hot address
# the negative controls run longer: the race needs both threads truly running at once, and on a busy machine (CI runs
# two test workers) a short kernel can have its halves run one after the other
L_NEG = 200000
RECORD_BITS, NOISE_BIT = NPROG // 4, 30

# a plain (racy) read-modify-write returning the old value, in C: what the atomic replaces in the negative control
_PLAIN_C = {"add": "_o + {1}", "max": "(_o > {1} ? _o : {1})", "min": "(_o < {1} ? _o : {1})", "and": "_o & {1}",
            "or": "_o | {1}", "xor": "_o ^ {1}", "xchg": "{1}"}
_C_T = {dtypes.int32: "int", dtypes.uint32: "unsigned int", dtypes.int64: "long long",
        dtypes.uint64: "unsigned long long", dtypes.float32: "float", dtypes.float64: "double"}

def _plain(dt: DType, update: str) -> dict[str, str]:
  """A racy read-modify-write returning the old value, per language (a statement expression in C/OpenCL, a lambda in
  CUDA/HIP); {0} is the address."""
  t = _C_T[dt]
  cl_t = {"unsigned int": "uint", "long long": "long", "unsigned long long": "ulong"}.get(t, t)
  lam = "[&]() {{ " + t + " _o = *{0}; " + update + " return _o; }}()"
  return {"C": "({{ " + t + " _o = *{0}; " + update + " _o; }})",
          "CL": "({{ " + cl_t + " _o = *{0}; " + update + " _o; }})",
          "CUDA": lam, "HIP": lam}

def _c(dt: DType, v) -> UOp: return UOp.const(dt, v)

def _value(kind: str, dt: DType, i: UOp, k: UOp, L: int) -> UOp:
  """The operand of op (program i, iteration k)."""
  if kind == "add": return _c(dt, _step(dt))
  if kind in ("max", "min", "xchg"):
    # program-unique increasing values: i*L + k + 1 (min: counting down from a big number)
    up = (i * L + k + 1).cast(dt)
    return up if kind != "min" else _c(dt, _big(dt)) - up
  # bitwise: every fourth program applies one record bit halfway through its run; all other ops hammer the address
  # with a noise bit (not the identity: a compiler may drop a store of the value just loaded, and with it the race)
  one = _c(dt, 1).alu(Ops.SHL, (i // 4).cast(dt))
  rec = k.eq(L // 2).alu(Ops.AND, (i % 4).eq(0))
  if kind == "and": return rec.where(one.alu(Ops.XOR, _c(dt, _ones(dt))), _c(dt, _ones(dt) ^ (1 << NOISE_BIT)))
  return rec.where(one, _c(dt, 1 << NOISE_BIT))

def _step(dt: DType): return (1 << 33) + 1 if dt.itemsize == 8 and dt.kind in "iu" else 1
def _big(dt: DType): return (1 << 40) if dt.itemsize == 8 else 1 << 24 if dt.kind == "f" else 1 << 30
def _ones(dt: DType): return (1 << dt.bits) - 1 if dt.kind == "u" else -1
def _init(kind: str, dt: DType):
  return {"and": _ones(dt), "min": _big(dt) + 1, "cas": 0}.get(kind, 0)

def _kernel(kind: str, dt: DType, plain: bool, sem: MemSem = MemSem.Relaxed, scope: MemScope = MemScope.Gpu,
            L: int = L):
  """out[0] is the hot address; log[i*L+k] gets what op (i, k) returned (for cas: 1 if it succeeded)."""
  def fxn(out: UOp, log: UOp, slot: UOp) -> UOp:
    i, k = UOp.range(NPROG, 0, AxisType.GLOBAL), UOp.range(L, 1, AxisType.LOOP)
    # the address comes from data (slot[k] is 0), so the compiler cannot keep the hot value in a register
    a = out.index(slot.index(k).load())
    if kind == "cas":
      old = a.load()
      new = old + _c(dt, 1)
      prev = UOp.custom(_plain(dt, "if (_o == {1}) *{0} = {2};"), a, old, new, dtype=dt) if plain \
        else a.atomic_cas(old, new, sem=sem, scope=scope)
      ret = prev.eq(old).cast(dt)
    else:
      v = _value(kind, dt, i, k, L)
      ret = UOp.custom(_plain(dt, "*{0} = " + _PLAIN_C[kind] + ";"), a, v, dtype=dt) if plain \
        else a.atomic(kind, v, sem=sem, scope=scope)
    return log.index(i * L + k).store(ret).end(i, k).sink(
      arg=KernelInfo(name=f"{kind}_{dt.name}_{'plain' if plain else 'atomic'}_{sem.name}_{scope.name}_{L}",
                     opts_to_apply=()))
  return fxn

def run_kernel(kind: str, dt: DType, plain: bool = False, sem: MemSem = MemSem.Relaxed, scope: MemScope = MemScope.Gpu,
               L: int = L):
  with Context(CPU_THREADS=2):
    out = Tensor(np.array([_init(kind, dt)], dtype=dt.np)).contiguous().realize()
    log = Tensor.zeros(NPROG * L, dtype=dt).contiguous().realize()
    slot = Tensor(np.zeros(L, np.int32))
    res, lg, _ = out.custom_kernel(log, slot, fxn=_kernel(kind, dt, plain, sem, scope, L))
    return res.numpy()[0], lg.numpy().reshape(NPROG, L)

def check(kind: str, dt: DType, final, log, L: int = L) -> list[str]:
  """What is wrong with the result (empty when right). Each kind's check is sensitive to a single lost update."""
  errs: list[str] = []
  npdt = dt.np
  if kind == "add":
    step = _step(dt)
    total = NPROG * L * step
    if final != npdt.type(total): errs.append(f"final {final} != {total}")
    # every op got a distinct previous value: together exactly 0, step, 2*step, ...
    got = np.sort(log.astype(np.float64 if dt.kind == "f" else np.int64).ravel()) // step
    if not np.array_equal(got, np.arange(NPROG * L)): errs.append("returned values are not a permutation")
  elif kind in ("max", "min"):
    want = NPROG * L if kind == "max" else _big(dt) - NPROG * L
    if final != npdt.type(want): errs.append(f"final {final} != {want}")
    # the hot value only ever moves one way, so each program's returned values must be monotonic
    d = np.diff(log.astype(np.float64 if dt.kind == "f" else np.int64), axis=1)
    bad = (d < 0) if kind == "max" else (d > 0)
    if bad.any(): errs.append(f"{int(np.sum(bad))} returned values went the wrong way")
  elif kind in ("and", "or", "xor"):
    mask, noise = sum(1 << b for b in range(RECORD_BITS)), 1 << NOISE_BIT
    want = {"and": _ones(dt) & ~mask & ~noise, "or": mask | noise,
            "xor": mask ^ (noise * ((NPROG * L - RECORD_BITS) % 2))}[kind]
    if int(final) & ((1 << dt.bits) - 1) != want & ((1 << dt.bits) - 1):
      errs.append(f"final {int(final):#x} != {want:#x}")
  elif kind == "xchg":
    # each value written is read back exactly once (by the next exchange, or it is the final value)
    vals = np.concatenate([log.ravel().astype(np.float64 if dt.kind == "f" else np.int64), [final]])
    if not np.array_equal(np.sort(vals), np.arange(NPROG * L + 1)): errs.append("exchanged values lost or duplicated")
  elif kind == "cas":
    wins = int(log.astype(np.int64).sum())
    if int(final) != wins: errs.append(f"{wins} successful compare-and-swaps but the counter is {final}")
  return errs

KINDS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas")
CASES = [(k, dt) for k in KINDS for dt in INT_DTYPES + FLOAT_DTYPES if supports("C", k, dt)]

@needs_values
@pytest.mark.parametrize("kind,dt", CASES, ids=[f"{k}-{dt.name}" for k, dt in CASES])
def test_atomic(kind, dt):
  final, log = run_kernel(kind, dt)
  assert check(kind, dt, final, log) == []

@needs_values
@pytest.mark.parametrize("kind", KINDS)
def test_negative_control(kind):
  """The same kernel with a plain load+store: two threads hammering one address lose updates, so the check fails."""
  if Device.DEFAULT.startswith("CL"):
    pytest.skip("PoCL runs the racy kernel without ever losing an update (its one-work-item groups do not overlap on "
                "one address here), so the race cannot be shown on CL; it is shown on the CPU device")
  dt = dtypes.float32 if kind in ("add", "max", "min", "xchg", "cas") else dtypes.int32
  # the race is a matter of timing: alone, each try almost always shows it; under the README's test command (two test
  # workers on two cores, each busy with threads of its own) the kernel's two threads can run one after the other for
  # several tries in a row (and and xor, whose checks see only some lost updates, missed 5 of 5 once): up to 30 tries,
  # stopping at the first that shows it (20-90 ms each)
  for _ in range(30):
    if check(kind, dt, *run_kernel(kind, dt, plain=True, L=L_NEG), L=L_NEG): return
  pytest.fail(f"plain read-modify-write for {kind} never lost an update: the race this test relies on is not real")

@needs_values
@pytest.mark.parametrize("sem", list(MemSem))
@pytest.mark.parametrize("kind", ["add", "max", "cas"])
def test_semantics_and_scopes(kind, sem):
  lang = getattr(Device[Device.DEFAULT].renderer, "lang", "C")
  for scope in MemScope:
    if not supports(lang, kind, dtypes.float32 if kind != "cas" else dtypes.int64, scope): continue
    final, log = run_kernel(kind, dtypes.float32 if kind != "cas" else dtypes.int64, sem=sem, scope=scope)
    assert check(kind, dtypes.float32 if kind != "cas" else dtypes.int64, final, log) == []

@needs_values
@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.int32])
def test_masked_atomic(dt):
  """Masked-off lanes never touch memory (their address is out of bounds here) and return 0."""
  n, bins = 50000, 8
  def fxn(out, ret, ids):
    i = UOp.range(n, 0, AxisType.GLOBAL)
    b = ids.index(i).load()
    ok = (b < bins).alu(Ops.AND, (b < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)))
    return ret.index(i).store(out.index(b).atomic("add", UOp.const(dt, 1), mask=ok, sem=MemSem.Relaxed)).end(i).sink(
      arg=KernelInfo(name=f"masked_hist_{dt.name}", opts_to_apply=()))
  rng = np.random.default_rng(0)
  ids = rng.integers(-1_000_000, 1_000_000, n).astype(np.int32)
  ids[::3] = rng.integers(0, bins, len(ids[::3]))
  with Context(CPU_THREADS=2):
    out = Tensor.zeros(bins, dtype=dt).contiguous().realize()
    ret = Tensor.full((n,), 7, dtype=dt).contiguous().realize()
    res, rv, _ = out.custom_kernel(ret, Tensor(ids), fxn=fxn)
    hist, rv = res.numpy(), rv.numpy()
  ok = (ids >= 0) & (ids < bins)
  np.testing.assert_allclose(hist, np.bincount(ids[ok], minlength=bins))
  assert (rv[~ok] == 0).all()

@needs_values
def test_gated_index_atomic():
  """An INDEX with a validity gate masks the atomic like an explicit mask."""
  n = 4096
  def fxn(out, ids):
    i = UOp.range(n, 0, AxisType.GLOBAL)
    b = ids.index(i).load()
    gate = b < 16
    return out.index(b, valid=gate).atomic("add", 1.0, sem=MemSem.Relaxed).end(i).sink(
      arg=KernelInfo(name="gated", opts_to_apply=()))
  ids = (np.arange(n) * 7919 % 100).astype(np.int32)
  with Context(CPU_THREADS=2):
    res = Tensor.zeros(16).contiguous().realize().custom_kernel(Tensor(ids), fxn=fxn)[0].numpy()
  np.testing.assert_allclose(res, np.bincount(ids[ids < 16], minlength=16))

@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_atomics_compile_with_gcc():
  """gcc rejects __atomic_fetch_add on float*: the CAS-loop helpers must compile (and work) with it too."""
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  from teeny.runtime.ops_cpu import CCompiler
  import os
  srcs = []
  for kind, dt in CASES:
    for sem in MemSem:
      ph = [UOp.placeholder(j, d, s) for j, (d, s) in enumerate([(dt, (1,)), (dt, (NPROG * L,)), (dtypes.int32, (L,))])]
      srcs.append(get_program(_kernel(kind, dt, False, sem)(*ph), CRenderer()).src)
  old = os.environ.get("CC")
  os.environ["CC"] = "gcc"
  try:
    cc = CCompiler()
    assert cc.cc == "gcc"
    for src in srcs: assert cc.compile(src)[:4] == b"\x7fELF"
  finally:
    if old is None: del os.environ["CC"]
    else: os.environ["CC"] = old

def b8_ptr() -> UOp: return UOp.placeholder(0, dtypes.uint8, (4,)).index(0)

def test_unsupported_atomics_raise():
  ptr = UOp.placeholder(0, dtypes.float32, (4,)).index(0)
  with pytest.raises(TypeError, match="supported"): render_atomic("C", ptr.atomic("xor", 1.0), "p", ["v"])
  hptr = UOp.placeholder(0, dtypes.float16, (4,)).index(0)
  for lang in ("C", "HIP", "CL"):
    with pytest.raises(TypeError, match="supported"): render_atomic(lang, hptr.atomic("add", 1.0), "p", ["v"])
  with pytest.raises(TypeError, match="supported"): render_atomic("CUDA", hptr.atomic("max", 1.0), "p", ["v"])
  with pytest.raises(TypeError, match="supported"): render_atomic("CUDA", b8_ptr().atomic("add", 1), "p", ["v"])
  iptr = UOp.placeholder(0, dtypes.int32, (4,)).index(0)
  with pytest.raises(NotImplementedError, match="SVM"):
    render_atomic("CL", iptr.atomic("add", 1, scope=MemScope.Sys), "p", ["v"])
  with pytest.raises(NotImplementedError, match="C, CUDA"): render_atomic("METAL", iptr.atomic("add", 1), "p", ["v"])
  with pytest.raises(ValueError, match="unknown atomic"): iptr.atomic("sub", 1)
  b8 = UOp.placeholder(0, dtypes.int8, (4,)).index(0)
  with pytest.raises(TypeError, match="int32, uint32, int64"): render_atomic("C", b8.atomic("add", 1), "p", ["v"])

# ---- the GPU spellings: rendered here, compiled where a compiler for them is installed

def _all_atomics(lang: str) -> list[tuple[str, DType, MemSem, MemScope, str]]:
  out = []
  for kind in KINDS:
    for dt in INT_DTYPES + FLOAT_DTYPES + (dtypes.float16, dtypes.bfloat16):
      for sem in MemSem:
        for scope in MemScope:
          if not supports(lang, kind, dt, scope): continue
          ptr = UOp.placeholder(0, dt, (4,)).index(UOp.const(dtypes.int32, 1))
          u = ptr.atomic_cas(1, 2, sem=sem, scope=scope) if kind == "cas" else ptr.atomic(kind, 1, sem=sem, scope=scope)
          out.append((kind, dt, sem, scope, render_atomic(lang, u, "(p+i)", ["c", "v"] if kind == "cas" else ["v"])))
  return out

def test_render_spellings():
  cu = {(k, dt, sem, sc): s for k, dt, sem, sc, s in _all_atomics("CUDA")}
  assert cu[("add", dtypes.float32, MemSem.Relaxed, MemScope.Gpu)] == "atomicAdd((float*)(p+i), (float)(v))"
  assert "atomicAdd_block(" in cu[("add", dtypes.int32, MemSem.Relaxed, MemScope.Cta)]
  assert "atomicMax_system(" in cu[("max", dtypes.uint32, MemSem.Relaxed, MemScope.Sys)]
  assert "__threadfence();" in cu[("add", dtypes.int32, MemSem.Acquire, MemScope.Gpu)]
  assert "atomicCAS(" in cu[("max", dtypes.float32, MemSem.Relaxed, MemScope.Gpu)]  # float max is a CAS loop
  assert "atom.relaxed.gpu.add.noftz.f16" in cu[("add", dtypes.float16, MemSem.Relaxed, MemScope.Gpu)]
  assert "atom.acq_rel.sys.add.noftz.bf16" in cu[("add", dtypes.bfloat16, MemSem.AcqRel, MemScope.Sys)]
  hip = {(k, dt, sem, sc): s for k, dt, sem, sc, s in _all_atomics("HIP")}
  assert hip[("add", dtypes.float32, MemSem.Relaxed, MemScope.Gpu)] == \
    "__hip_atomic_fetch_add((float*)(p+i), (float)(v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)"
  assert "__HIP_MEMORY_SCOPE_WORKGROUP" in hip[("or", dtypes.int64, MemSem.AcqRel, MemScope.Cta)]
  assert "__hip_atomic_compare_exchange_strong" in hip[("cas", dtypes.float64, MemSem.Release, MemScope.Sys)]
  cl = {(k, dt, sem, sc): s for k, dt, sem, sc, s in _all_atomics("CL")}
  assert (cl[("add", dtypes.int32, MemSem.Relaxed, MemScope.Gpu)]
          == "atomic_add((volatile __global int*)(p+i), (int)(v))")
  assert "atom_add(" in cl[("add", dtypes.int64, MemSem.Relaxed, MemScope.Gpu)]
  assert "atomic_cmpxchg(" in cl[("add", dtypes.float32, MemSem.Relaxed, MemScope.Gpu)]
  assert "mem_fence(" in cl[("xor", dtypes.uint32, MemSem.AcqRel, MemScope.Gpu)]
  c = {(k, dt, sem, sc): s for k, dt, sem, sc, s in _all_atomics("C")}
  assert c[("add", dtypes.int32, MemSem.Relaxed, MemScope.Gpu)] == "__atomic_fetch_add((p+i), v, __ATOMIC_RELAXED)"
  assert c[("add", dtypes.float32, MemSem.AcqRel, MemScope.Gpu)] == "teeny_atomic_add_f32_acqrel((p+i), v)"
  assert len(cu) > len(hip) == len(c) > len(cl)   # CUDA adds 16-bit float add; CL refuses Sys scope

_GPU_TYPES = {"CUDA": {dtypes.int32: "int", dtypes.uint32: "unsigned int", dtypes.int64: "long long",
                       dtypes.uint64: "unsigned long long", dtypes.float32: "float", dtypes.float64: "double",
                       dtypes.float16: "unsigned short", dtypes.bfloat16: "unsigned short"},
              "CL": {dtypes.int32: "int", dtypes.uint32: "uint", dtypes.int64: "long", dtypes.uint64: "ulong",
                     dtypes.float32: "float", dtypes.float64: "double"}}
_GPU_TYPES["HIP"] = _GPU_TYPES["CUDA"]

def _gpu_source(lang: str) -> str:
  """One kernel per (kind, dtype) holding every semantics and scope, each result stored so nothing is dead code. Like
  the
  renderers' output, it includes no header (16-bit floats are unsigned shorts computed in float through the renderer's
  conversion helpers)."""
  groups: dict[tuple, list[str]] = {}
  for kind, dt, _, _, s in _all_atomics(lang): groups.setdefault((kind, dt), []).append(s)
  out = []
  for n, ((kind, dt), exprs) in enumerate(groups.items()):
    t = _GPU_TYPES[lang][dt]
    vt = "float" if dt in (dtypes.float16, dtypes.bfloat16) else t   # the type values are computed in
    body = "\n".join(f"  r[{j}] = {e};" for j, e in enumerate(exprs))
    if lang == "CL":
      out.append(f"__kernel void k{n}(__global {t}* p, __global {vt}* r, {vt} v, {vt} c) "
                 f"{{\n  int i = get_global_id(0);\n{body}\n}}")
    else:
      out.append(f'extern "C" __global__ void k{n}({t}* p, {vt}* r, {vt} v, {vt} c) '
                 f'{{\n  int i = threadIdx.x;\n{body}\n}}')
  src = "\n".join(out)
  if lang == "CUDA":
    from teeny.codegen.render.cuda import CUDA_HELPERS
    return "".join(h for name, h in CUDA_HELPERS.items() if name in src) + src
  if lang == "CL":
    from teeny.codegen.render.atomics import CL_INT64_PRAGMAS
    return CL_INT64_PRAGMAS + "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + src
  return src

def test_cuda_atomics_compile():
  """Every CUDA atomic spelling compiles for sm_90 through NVRTC (cuda-python + nvidia-cuda-nvrtc, what CI installs)."""
  c = toolchain("sm_90")
  assert c.valid_binary(c.compile(_gpu_source("CUDA")))

@pytest.mark.parametrize("arch", ["gfx1100", "gfx90a"])
def test_hip_atomics_compile(arch):
  """Every HIP atomic spelling compiles through clang-19 + lld-19 for RDNA3 and CDNA2."""
  c = toolchain(arch)
  prefix = "#define __global__ __attribute__((global))\n#define threadIdx_x __builtin_amdgcn_workitem_id_x()\n"
  assert c.valid_binary(c.compile(prefix + _gpu_source("HIP").replace("threadIdx.x", "threadIdx_x")))

def _cl_context():
  try:
    import pyopencl as cl
    for p in cl.get_platforms():
      for d in p.get_devices():
        if "cl_khr_int64_base_atomics" in d.extensions and "cl_khr_fp64" in d.extensions: return cl.Context([d])
  except Exception: return None
  return None

def cl_context():
  """An OpenCL context on a device with 64-bit atomics and doubles (PoCL has both), or skip/fail as a missing
  toolchain."""
  if (ctx := _cl_context()) is None:
    missing("an OpenCL device with 64-bit atomics and fp64", "pyopencl + PoCL not found")
  return ctx

def test_opencl_atomics_compile():
  ctx = cl_context()
  import pyopencl as cl
  cl.Program(ctx, _gpu_source("CL")).build()

@pytest.mark.parametrize("kind,dt", [("add", dtypes.float32), ("max", dtypes.float64), ("add", dtypes.int64),
                                     ("min", dtypes.int32), ("xchg", dtypes.float64), ("add", dtypes.float64)])
def test_opencl_atomics_run(kind, dt):
  """Through pyopencl directly (teeny's CL runtime is another issue): many work-items on one address."""
  ctx = cl_context()
  import pyopencl as cl
  q = cl.CommandQueue(ctx)
  ptr = UOp.placeholder(0, dt, (1,)).index(UOp.const(dtypes.int32, 0))
  expr = render_atomic("CL", ptr.atomic(kind, 1, sem=MemSem.AcqRel), "(p+0)", ["v"])
  t = {"float32": "float", "float64": "double", "int32": "int", "int64": "long"}[dt.name]
  from teeny.codegen.render.atomics import CL_INT64_PRAGMAS
  src = (CL_INT64_PRAGMAS + "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
         f"__kernel void k(__global {t}* p, __global {t}* r) {{ "
         f"int i = get_global_id(0); {t} v = ({t})(i % 100); r[i] = {expr}; }}")
  prg = cl.Program(ctx, src).build()
  n = 100000
  init = np.array([0 if kind != "min" else 10**6], dtype=dt.np)  # sums stay below 2**24: exact in float32
  mf = cl.mem_flags
  p = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=init)
  r = cl.Buffer(ctx, mf.READ_WRITE, size=n * dt.itemsize)
  prg.k(q, (n,), None, p, r)
  out, ret = np.empty(1, dt.np), np.empty(n, dt.np)
  cl.enqueue_copy(q, out, p)
  cl.enqueue_copy(q, ret, r)
  v = np.arange(n) % 100
  want = {"add": v.sum(), "max": v.max(), "min": 0, "xchg": None}[kind]
  if kind == "xchg": assert np.array_equal(np.sort(np.concatenate([ret, out])), np.sort(np.concatenate([v, init])))
  else: np.testing.assert_allclose(out[0], want, rtol=1e-6)
