"""CPU: rendered C compiled by clang (or gcc) into a shared object, loaded with ctypes, run across a small thread pool.

The code is compiled for one target, TEENY_CPU_ARCH (a -march value: x86-64-v3 for AVX2, x86-64-v4 for AVX-512, a CPU
name such as znver3; default `native`, the machine itself). Its facts, read once (`cpu_target`), size the heuristics'
tiles: the vector width from the macros the compiler defines for that target, the cache sizes from sysfs."""
from __future__ import annotations
import ctypes, functools, hashlib, os, re, shutil, subprocess, time
from dataclasses import dataclass
from typing import Any
import numpy as np
from teeny.device import Allocator, Compiled, ToolCompiler, load_library
from teeny.helpers import CPU_THREADS, DEBUG
from teeny.runtime.cpu_pool import MAX_ARGS, CPUPool

class CPUAllocator(Allocator):
  """Host memory held as numpy byte arrays (64-byte aligned), so copies are plain memmoves."""
  def _alloc(self, nbytes: int) -> Any:
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + nbytes]
  def copyin(self, dest: Any, src: memoryview): dest[:len(src)] = np.frombuffer(src, dtype=np.uint8)
  def copyout(self, dest: memoryview, src: Any): np.frombuffer(dest, dtype=np.uint8)[:] = src[:len(dest)]

def find_cc() -> str:
  for cc in (os.environ.get("CC"), "clang", "gcc", "cc"):
    if cc and shutil.which(cc): return cc
  raise RuntimeError("no C compiler found: the CPU device needs clang or gcc "
                     "(apt-get install clang, or set CC=/path/to/cc)")

def vector_math_flags(cc: str) -> tuple[list[str], list[str]]:
  """(compile flags, link flags) that let clang vectorise loops calling expf/logf/sinf… through glibc's libmvec (SIMD
  versions of the libm functions, within 4 ulp): a softmax or cross-entropy pass over 262M floats spent most of its
  time in scalar expf. gcc only does this under -ffast-math, which teeny does not use; without libmvec, nothing."""
  import ctypes.util
  if "clang" not in os.path.basename(cc) or os.environ.get("TEENY_VECMATH", "1") == "0": return [], []
  if (lib := ctypes.util.find_library("mvec")) is None: return [], []
  # link the runtime library by file name: the unversioned libmvec.so comes only with the development package
  return ["-fveclib=libmvec"], [f"-l:{lib}"]

@dataclass(frozen=True)
class CPUTarget:
  arch: str                       # the -march value
  vector_bytes: int               # widest SIMD register the target has: 64 (AVX-512), 32 (AVX/AVX2), 16 (SSE, NEON)
  cache_bytes: dict[str, int]     # L1d, L2, L3 of this machine (per core for L1d/L2)
  macros: str                     # a digest of the compiler's predefined macros for the target (the compile cache key)
  vector_registers: int = 16      # SIMD registers the compiler may allocate: 32 (AVX-512, AArch64), 16 (x86 without it)

def _cache_sizes() -> dict[str, int]:
  """L1d/L2/L3 from sysfs (cpu0), with common sizes where the machine does not say."""
  out = {"L1d": 32 << 10, "L2": 512 << 10, "L3": 8 << 20}
  base = "/sys/devices/system/cpu/cpu0/cache"
  try: dirs = sorted(d for d in os.listdir(base) if d.startswith("index"))
  except OSError: return out
  for d in dirs:
    try:
      rd = lambda f: open(os.path.join(base, d, f)).read().strip()
      level, kind, size = rd("level"), rd("type"), rd("size")
    except OSError: continue
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
    try: nbytes = int(size.rstrip("KMG")) * mult
    except ValueError: continue
    if level == "1" and kind == "Data": out["L1d"] = nbytes
    elif level in ("2", "3") and kind in ("Unified", "Data"): out[f"L{level}"] = nbytes
  return out

def cpu_target(cc: str | None = None, arch: str | None = None) -> CPUTarget:
  """The target `arch` (default: TEENY_CPU_ARCH, else native) and its facts; an arch the compiler does not know is an
  error naming TEENY_CPU_ARCH. Read once per (compiler, arch)."""
  return _cpu_target(cc or find_cc(), arch or os.environ.get("TEENY_CPU_ARCH", "").strip() or "native")

@functools.cache
def _cpu_target(cc: str, arch: str) -> CPUTarget:
  try: proc = subprocess.run([cc, f"-march={arch}", "-dM", "-E", "-x", "c", "-"], input="", capture_output=True,
                             text=True, timeout=60)
  except (OSError, subprocess.TimeoutExpired) as e:
    raise RuntimeError(f"could not ask {cc} about its target: {e}") from None
  if proc.returncode != 0:
    err = next((ln for ln in proc.stderr.splitlines() if "error" in ln.lower()), proc.stderr.strip()[:200])
    raise ValueError(f"TEENY_CPU_ARCH={arch!r} is not a target {os.path.basename(cc)} knows ({err.strip()}); set it to "
                     "a -march value such as x86-64-v3 (AVX2), x86-64-v4 (AVX-512) or native, or unset it")
  defs = set(ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("#define "))
  vec = (64 if "__AVX512F__" in defs else 32 if "__AVX__" in defs
         else 16 if defs & {"__SSE2__", "__ARM_NEON", "__ARM_NEON__"} else 8)
  regs = 32 if defs & {"__AVX512F__", "__aarch64__"} else 16
  return CPUTarget(arch, vec, _cache_sizes(), hashlib.sha256(proc.stdout.encode()).hexdigest()[:16], regs)

class CCompiler(ToolCompiler):
  what = "C compile"
  def __init__(self):
    cc = find_cc()
    vflags, vlink = vector_math_flags(cc)
    self.target = cpu_target(cc)
    # clang and gcc vectorise with 256-bit registers on AVX-512 targets unless told otherwise; the heuristics' tiles are
    # sized in the target's full vectors (cpu_lanes), and a 1024^3 matmul tile of 8x32 floats ran at 66-72 GFLOP/s
    # on one core as 32 ymm accumulators (spilled) and 96-157 as 16 zmm ones (Sapphire Rapids)
    wide = ["-mprefer-vector-width=512"] if self.target.vector_bytes == 64 else []
    super().__init__(cc, ["-O2", f"-march={self.target.arch}", *wide, "-fPIC", "-shared", "-fwrapv", "-fno-math-errno",
                          "-fopenmp-simd", "-ffp-contract=fast", *vflags, "-Wno-unused-variable",
                          "-Wno-unused-function", "-x", "c"],
                     ["-lm", *vlink])
    # float16 kernels: see flags_for. clang before 19 (14.0.6 seen) miscompiles a strided float16 load vectorised
    # with 512-bit registers (x[:, 0].sum() of a (64, 3) float16 tensor summed the wrong elements; 256-bit ones and
    # clang 19 are right): there float16 kernels keep 256-bit vectors
    old_clang = (m := re.search(r"clang version (\d+)", self.version)) is not None and int(m.group(1)) < 19
    self.f16_flags = ["-ffp-contract=off"] + (["-mprefer-vector-width=256"] if wide and old_clang else [])
    # "native" names a different target on each machine: the key holds what the compiler made of it
    self.cache_key += f" target={self.target.macros} f16={' '.join(self.f16_flags)}"
  @property
  def cc(self) -> str: return self.tool
  def flags_for(self, src: str) -> list[str]:
    # float16 through the compiler's half type (render/c.py C_F16): where the target computes float16 natively
    # (AVX512-FP16: Sapphire Rapids), gcc narrows a float op between two float16 roundings to a float16 op, and
    # contraction then fuses a*b+c into one float16 FMA, skipping the product's rounding that every op must keep
    # (render_round16): 1 ulp off torch in 20 of 64 values on an H200 host. Such kernels are compiled uncontracted
    return self.flags + self.f16_flags if "TEENY_F16" in src else self.flags
  def error(self, err: str, src: str) -> str:
    msg = super().error(err, src)
    if "__atomic_fetch_" in err and "incompatible" in err:   # gcc: "operand type 'float *' is incompatible with ..."
      msg += ("\n(gcc has no atomic read-modify-write on floats, which this kernel's Ops.CUSTOM code calls: build the "
              "scatter with UOp.atomic('add', ...) instead, which compiles as a compare-and-swap loop on any C "
              "compiler, or install clang (apt-get install clang), which teeny's CPU device prefers)")
    return msg

_CORES = os.cpu_count() or 1
_ENV_ZERO = os.environ.get("CPU_THREADS", "").strip() == "0"  # read once, as the switch itself is

def n_threads() -> int:
  """Threads for CPU kernels: CPU_THREADS, or every core when it is unset (0 internally). -1 ran each kernel as core 0
  of -1 and computed a fraction of the output (ones(100000).sum() was 15.3)."""
  v = CPU_THREADS.value
  if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (v == 0 and _ENV_ZERO):
    raise ValueError(f"CPU_THREADS must be a positive int (threads for the CPU device), got {v!r}; unset it to use all "
                     f"{_CORES} cores")
  return v or _CORES

def threads_for(work: int) -> int:
  """Threads a launch of `work` (codegen.kernel.launch_work) runs on: small kernels stay on the calling thread unless
  CPU_THREADS forces a split."""
  nt = n_threads()   # (checks CPU_THREADS for every launch, small ones too)
  return nt if CPU_THREADS.value or work >= 1 << 16 else 1

@functools.cache
def _pool() -> CPUPool: return CPUPool(find_cc())   # one per process (find_cc searches PATH: once, not per launch)

class CPUProgram:
  """One compiled kernel. Run on one core by a direct call, on several through the C worker pool
  (runtime/cpu_pool.py) and the kernel's `teeny_entry`; ctypes releases the GIL during either."""
  def __init__(self, name: str, lib: bytes, spec: Any = None):
    self.name, self.spec = name, spec
    self.lib = load_library(lib, f"compiled kernel {name}")
    self.fxn = self.lib[name]
    self.fxn.restype = None
    try: entry = ctypes.cast(self.lib["teeny_entry"], ctypes.c_void_p).value
    except AttributeError: entry = None
    if not entry:
      raise RuntimeError(f"compiled kernel {name} has no teeny_entry: it was not rendered by this version's C renderer "
                         "(clear the cache: TEENY_CACHE_DIR)")
    self.entry: int = entry
  def __call__(self, *bufs: Any, global_size: Any = None, local_size: Any = None, vals: tuple = (), wait: bool = False,
               work: int = 0) -> float:
    nt = threads_for(work)
    st = time.perf_counter()
    if nt == 1:
      self.fxn(*[ctypes.c_void_p(b.ctypes.data) for b in bufs], *[ctypes.c_int(int(v)) for v in vals],
               ctypes.c_int(0), ctypes.c_int(1))
    else:
      args = (ctypes.c_void_p * (len(bufs) + len(vals)))(*[b.ctypes.data for b in bufs], *[int(v) for v in vals])
      _pool().run(self.entry, args, nt)
    return time.perf_counter() - st

class CPUGraph:
  """A TinyJit capture replayed on the CPU: one C call (`teeny_graph_run`, runtime/cpu_pool.py) runs every launch,
  with the argument lists built once. A buffer's address lives in one slot of a table every launch reads, so
  rebinding a buffer is one store.
  `launches`: ("kernel", program, spec, slots, vals, work) or ("copy", dst slot, src slot, nbytes)."""
  def __init__(self, launches: list[tuple], bufs: list[Any]):
    self.pool = _pool()
    fns: list[int | None] = []
    nts: list[int] = []
    offs: list[int] = [0]
    codes: list[int] = []
    vals: list[int] = []
    def val(v: int) -> int:
      vals.append(int(v))
      return -len(vals)
    for ln in launches:
      if ln[0] == "copy":
        fns.append(None)
        nts.append(1)
        codes.extend([ln[1], ln[2], val(ln[3])])
      else:
        _, prg, _spec, slots, kvals, work = ln
        if len(slots) + len(kvals) > MAX_ARGS:
          raise NotImplementedError(f"kernel {prg.name} has more than {MAX_ARGS} arguments")
        fns.append(prg.entry)
        nts.append(threads_for(work))
        codes.extend(list(slots) + [val(v) for v in kvals])
      offs.append(len(codes))
    self.n = len(launches)
    self.fns = (ctypes.c_void_p * max(self.n, 1))(*fns)
    self.nts = (ctypes.c_int * max(self.n, 1))(*nts)
    self.offs = (ctypes.c_int * len(offs))(*offs)
    self.codes = (ctypes.c_int * max(len(codes), 1))(*codes)
    self.vals = (ctypes.c_int64 * max(len(vals), 1))(*vals)
    self.slots = (ctypes.c_void_p * max(len(bufs), 1))(*[b.ensure_allocated()._opaque.ctypes.data for b in bufs])
  def bind(self, slot: int, buf: Any): self.slots[slot] = buf.ensure_allocated()._opaque.ctypes.data
  def __call__(self) -> float:
    st = time.perf_counter()
    self.pool.check(self.pool.graph_c(self.n, self.fns, self.nts, self.offs, self.codes, self.slots, self.vals),
                    "TinyJit replay")
    return time.perf_counter() - st

def open_device(name: str) -> Compiled:
  from teeny.codegen.render.c import CRenderer
  comp = CCompiler()
  t = comp.target
  if DEBUG >= 1:
    print(f"teeny: opened {name} with {find_cc()}, {n_threads()} threads, -march={t.arch} ({t.vector_registers} "
          f"{t.vector_bytes}-byte vector registers, "
          f"L1d {t.cache_bytes['L1d'] >> 10} KB, L2 {t.cache_bytes['L2'] >> 10} KB, L3 {t.cache_bytes['L3'] >> 20} MB)")
  dev = Compiled(name, CPUAllocator(),
                 CRenderer(t.vector_bytes, dict(t.cache_bytes), t.vector_registers), comp, CPUProgram)
  dev.graph = CPUGraph
  return dev
