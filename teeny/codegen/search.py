"""BEAM search: choose a kernel's Opt list by trying them. `BEAM=n` keeps the n fastest lists at each step, extends each
by one more Opt (the actions that fit the kernel, `actions`), and stops when no extension is faster.

Each candidate is compiled (in parallel: a thread pool over the device's compiler, which runs as a subprocess on the
CPU) and run on the kernel's device with fresh buffers: random values of each parameter's dtype (integers in 1..15, so
no division by zero), or copies of the real inputs when the kernel reads an index from memory (a gather/scatter:
random indices would read and write out of bounds; with no real inputs at hand such a kernel is not searched). Every
candidate's output is compared with the unoptimised kernel's on the same inputs (floats within a tolerance, the rest
exactly); a mismatch discards the candidate and is counted in the DEBUG line. The search is bounded by BEAM_TIMEOUT
(seconds, default 60) and BEAM_MAX_CANDIDATES (default 400); the heuristics' list is always a candidate, so BEAM never
picks a list slower than the heuristics' on its own measurements.

The chosen list is cached on disk (the compile cache's directory, under its rules: a digest checked on every read, a
file written whole and renamed into place, a hit refreshing the entry for the LRU cap), keyed by the kernel, the
device, the renderer, the compiler's key (tool, version, flags incl. -march) and n, so a second process pays nothing.

This module runs programs but imports no device: the caller (engine/realize.py) hands it the device object (allocator,
compiler, program class, renderer) and, when it has them, the kernel's real buffers."""
from __future__ import annotations
import contextlib, hashlib, json, os, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import CACHELEVEL, DEBUG, TF32, cache_dir, getenv, prod
from teeny.uop.ops import AxisType, Ops, UOp, written_slots
from teeny.codegen.kernel import ProgramSpec, get_program, launch_work, normalized
from teeny.codegen.opt import KernelOptError, Opt, OptOps, apply_opts, const_size, hand_coded_opts, ranges_of
from teeny.codegen.tc import SMEM_CONFIGS, TC_CONFIGS, tc_match

BEAM_MAGIC = b"TEENYBEAM1\n"
_TMP_PREFIX = ".tmp_"         # the compile cache's prefix for half-written files (evicted when an hour old)
MAX_UPCAST = 128              # most accumulator/register elements (UPCAST x UNROLL sizes) a candidate may have, unless
                              # the renderer names its register file (register_elems)
REF_MAX_ITERS = 1 << 26       # an unoptimised kernel running its innermost body more often is too slow to be the
                              # reference
# the last search's figures (benchmarks and tests read them): kernel name, candidates tried, wrong outputs, seconds,
# whether the list came from the disk cache
last: dict[str, Any] = {}
log: list[dict[str, Any]] = []      # every search's figures, oldest first (the last 100)

def _record(**kw):
  last.clear()
  last.update(kw)
  log.append(dict(kw))
  del log[:-100]
UPCASTS, UNROLLS, LOCALS, GROUPS, LOOPS = ((2, 3, 4, 8, 16, 32), (2, 4, 8, 16), (2, 4, 8, 16, 32),
                                          (16, 32, 64, 128, 256), (4, 8))

# ---- which kernels, and which actions

def _reads_index_from_memory(ast: UOp) -> bool:
  """Does an address or mask of the kernel depend on a loaded value (a gather or scatter through an index buffer)?"""
  return any(u.op is Ops.INDEX and any(x.op is Ops.LOAD for s in u.src[1:] for x in s.toposort) for u in ast.toposort)

def searchable(ast: UOp, have_real_inputs: bool) -> str | None:
  """None when BEAM may search this kernel, else why not."""
  topo = list(ast.toposort)
  if any(u.op is Ops.DEFINE_VAR for u in topo): return "symbolic sizes (DEFINE_VAR)"
  if any(u.op in (Ops.CUSTOM, Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.BARRIER, Ops.SPECIAL) for u in topo):
    return "hand-written code"
  if not any(u.op is Ops.RANGE for u in topo): return "no loops"
  if _reads_index_from_memory(ast) and not have_real_inputs: return "reads indices from memory and no real inputs given"
  return None

def actions(ast: UOp, renderer) -> list[Opt]:
  """Every single Opt worth trying on the (normalised) kernel; those that do not fit a candidate are skipped later."""
  gpu = getattr(renderer, "is_gpu", False)
  out: list[Opt] = []
  rngs = [r for r in ranges_of(ast) if r.arg[1] in (AxisType.GLOBAL, AxisType.LOOP, AxisType.REDUCE) and const_size(r)]
  for r in rngs:
    a, size = r.arg[0], const_size(r)
    assert size is not None
    if r.arg[1] is AxisType.REDUCE:
      # C: an unrolled reduce is expanded with the output tile's loops outside it (one reduce loop per unrolled value,
      # each over the whole tile): measured 8 s instead of 80 ms on a 1024^3 matmul, so only GPUs try it
      if gpu: out += [Opt(OptOps.UNROLL, a, n) for n in UNROLLS if size % n == 0]
      out += [Opt(OptOps.UPCAST, a, n) for n in (4, 8, 16) if size % n == 0 and size > n]
      if gpu: out += [Opt(OptOps.GROUP, a, n) for n in GROUPS if size >= n]
    else:
      out += [Opt(OptOps.UPCAST, a, n) for n in upcast_amounts(renderer) if size % n == 0]
      if gpu: out += [Opt(OptOps.LOCAL, a, n) for n in LOCALS if size % n == 0]
      # LOOP (cache blocking with a SWAP) only when BEAM_LOOP=1: on the 2-core machines it measured no faster on a
      # 1024^3 matmul, and it doubles the candidates of each step
      elif getenv("BEAM_LOOP", 0): out += [Opt(OptOps.LOOP, a, n) for n in LOOPS if size % n == 0 and size > n]
  out += [Opt(OptOps.SWAP, a.arg[0], b.arg[0]) for i, a in enumerate(rngs) for b in rngs[i + 1:]
          if a.arg[1] is b.arg[1]]
  if gpu: out.append(Opt(OptOps.NOLOCALS))
  # tensor cores: every block tile (codegen/tc.py), for a 16-bit matmul (float32 under TF32) on a renderer with them
  if getattr(renderer, "tensor_cores", ()):
    if not isinstance(tc_match(ast), str): out += [Opt(OptOps.TC, None, name) for name in TC_CONFIGS]
  # C: pack a reduce's load into a kernel-private array (a matmul's B panel: one contiguous stream instead of a row per
  # step; 1024^3 float32 on a Zen 3 core: 28 -> 66 GFLOP/s with the heuristics' 4x16 tile)
  elif getattr(renderer, "lang", "") == "C":
    reads = {u.src[0].src[0].arg[0] for red in ast.toposort if red.op is Ops.REDUCE for u in red.src[0].toposort
             if u.op is Ops.LOAD and u.src[0].op is Ops.INDEX and u.src[0].src[0].op is Ops.DEFINE_GLOBAL}
    out += [Opt(OptOps.STAGE, None, slot) for slot in sorted(reads)]
  # shared-memory float32 tiles: every block tile, for a float32 matmul on a renderer with them
  if getattr(renderer, "smem_tiles", False) and not isinstance(tc_match(ast, fma=True), str):
    out += [Opt(OptOps.SMEM, None, name) for name in SMEM_CONFIGS]
  return out

def extend(opts: tuple[Opt, ...], a: Opt) -> tuple[Opt, ...]:
  """The list with one more Opt: at the end, or before a STAGE there (STAGE must stay last: its copy is laid out for the
  ranges as they end up; the heuristics' list for a matmul with far-apart B rows ends with one)."""
  if opts and opts[-1].op is OptOps.STAGE and a.op is not OptOps.STAGE: return opts[:-1] + (a,) + opts[-1:]
  return opts + (a,)

def neighbours(opts: tuple[Opt, ...], upcasts: tuple[int, ...] = UPCASTS) -> list[tuple[Opt, ...]]:
  """The list with one Opt's amount changed to the next smaller or larger (UPCAST 0 4 -> UPCAST 0 3 or 8), and without
  its trailing STAGE: steps that extending a list cannot make."""
  amounts = {OptOps.UPCAST: upcasts, OptOps.UNROLL: UNROLLS, OptOps.LOCAL: LOCALS, OptOps.GROUP: GROUPS,
             OptOps.LOOP: (2, 4, 8, 16)}
  out = []
  for i, o in enumerate(opts):
    if o.op not in amounts or o.arg not in amounts[o.op]: continue
    k = amounts[o.op].index(o.arg)
    out += [opts[:i] + (Opt(o.op, o.axis, n),) + opts[i + 1:] for n in amounts[o.op][max(k - 1, 0):k + 2] if n != o.arg]
  if opts and opts[-1].op is OptOps.STAGE: out.append(opts[:-1])
  return out

def register_elems(renderer) -> int:
  """How many register elements (UPCAST x UNROLL sizes) a candidate may have: on a C target the 4-byte values its vector
  registers hold (AVX2: 16 x 8 = 128, AVX-512: 32 x 16 = 512, SSE: 16 x 4 = 64; a tile may fill the whole file, as a
  matmul's 8x16 tile does on AVX2 with a few spills, because every B line it loads feeds twice the multiply-adds of a
  4x16 tile); elsewhere MAX_UPCAST."""
  regs, vb = getattr(renderer, "vector_registers", None), getattr(renderer, "vector_bytes", None)
  return regs * max(vb // 4, 1) if regs and vb else MAX_UPCAST

def upcast_amounts(renderer) -> tuple[int, ...]:
  """UPCAST amounts to try: UPCASTS, and on a C target with wider vectors 4 of them (AVX-512: 64)."""
  vb = getattr(renderer, "vector_bytes", None)
  return UPCASTS + tuple(n for n in (64, 128) if vb and n <= vb) if vb else UPCASTS

def _register_elems(ast: UOp) -> int:
  return prod(const_size(r) or 1 for r in ranges_of(ast) if r.arg[1] in (AxisType.UPCAST, AxisType.UNROLL))

# ---- buffers

def _random_bytes(dt: DType, n: int, rng: np.random.Generator) -> np.ndarray:
  """n random values of dt as raw bytes: floats in [-1, 1), integers in 1..15 (never a zero divisor), bools 0/1."""
  if dt == dtypes.bool: vals = rng.integers(0, 2, n).astype(np.bool_)
  elif dt.kind in "iu": vals = rng.integers(1, 16, n).astype(dt.np)
  elif dt == dtypes.bfloat16: vals = (rng.uniform(-1, 1, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
  else: vals = rng.uniform(-1, 1, n).astype(dt.np)
  return np.ascontiguousarray(vals).view(np.uint8).reshape(-1)

class Inputs:
  """One device buffer per kernel parameter and the bytes each starts from. Only the buffers the kernel writes are
  reset before a checked run and read back after it: the others never change (a 1 GB elementwise kernel's search spent
  38 s of 45 re-uploading its three 1 GB inputs for each candidate)."""
  def __init__(self, dev: Any, params: list[tuple[int, DType, tuple]], real: list[Any] | None, seed: int = 0,
               written: set[int] | None = None):
    self.dev, rng = dev, np.random.default_rng(seed)
    self.out = [i for i, (slot, _, _) in enumerate(params) if written is None or slot in written]
    self.dtypes = [params[i][1] for i in self.out]
    self.start: list[np.ndarray] = []
    for i, (_, dt, shape) in enumerate(params):
      n = prod(shape)
      if real is not None and real[i] is not None and real[i]._opaque is not None:
        got = np.empty(real[i].nbytes, np.uint8)
        if got.size: real[i].allocator.copyout(got.data, real[i]._opaque)
        raw = np.zeros(n * dt.itemsize, np.uint8)
        raw[:min(raw.size, got.size)] = got[:raw.size]
      else: raw = _random_bytes(dt, n, rng)
      self.start.append(raw)
    self.opaque = [dev.allocator.alloc(max(r.size, 1)) for r in self.start]
    for o, r in zip(self.opaque, self.start):
      if r.size: self.dev.allocator.copyin(o, r.data)
  def reset(self):
    for i in self.out:
      if self.start[i].size: self.dev.allocator.copyin(self.opaque[i], self.start[i].data)
  def read(self) -> list[np.ndarray]:
    """The written buffers' bytes (in the order of `dtypes`)."""
    out = []
    for i in self.out:
      raw = np.empty(self.start[i].size, np.uint8)
      if raw.size: self.dev.allocator.copyout(raw.data, self.opaque[i])
      out.append(raw)
    return out
  def free(self):
    for o, r in zip(self.opaque, self.start): self.dev.allocator.free(o, max(r.size, 1))

def _as_values(raw: np.ndarray, dt: DType) -> np.ndarray:
  if dt == dtypes.bfloat16: return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
  return raw.view(np.bool_ if dt == dtypes.bool else dt.np)

def same_output(got: list[np.ndarray], want: list[np.ndarray], dts: list[DType]) -> bool:
  """Every buffer equal: floats within a tolerance scaled to the values (reassociated sums), NaN matching NaN."""
  for g, w, dt in zip(got, want, dts):
    if dt.kind != "f":
      if not np.array_equal(g, w): return False
      continue
    gv, wv = _as_values(g, dt).astype(np.float64), _as_values(w, dt).astype(np.float64)
    tol = 1e-2 if dt.itemsize <= 2 else 1e-3
    finite = np.isfinite(wv)
    scale = float(np.abs(wv[finite]).max()) if finite.any() else 1.0
    if not np.allclose(gv, wv, rtol=tol, atol=tol * max(scale, 1.0), equal_nan=True): return False
  return True

# ---- the on-disk cache of chosen lists

def _ast_text(ast: UOp) -> str:
  seen: dict[UOp, int] = {}
  lines = []
  for i, n in enumerate(ast.toposort):
    seen[n] = i
    lines.append(f"{n.op.name} {n.dtype!r} {[seen[s] for s in n.src]} {n.arg!r}")
  return "\n".join(lines)

def cache_path(ast: UOp, dev: Any, amt: int) -> str:
  comp = getattr(dev.compiler, "cache_key", type(dev.compiler).__name__)
  key = f"beam1\n{amt}\n{dev.name}\n{type(dev.renderer).__name__}\n{comp}\n{_ast_text(ast)}"
  if TF32: key += "\ntf32"   # (float32 matmuls may then take the TC Opt)
  return os.path.join(cache_dir(), f"BEAM_{hashlib.sha256(key.encode()).hexdigest()[:32]}")

def _opts_to_json(opts: tuple[Opt, ...]) -> bytes:
  return json.dumps([[o.op.name, o.axis, o.arg] for o in opts]).encode()
def _opts_from_json(data: bytes) -> tuple[Opt, ...]:
  return tuple(Opt(OptOps[op], axis, arg) for op, axis, arg in json.loads(data.decode()))

def read_cached(path: str) -> tuple[Opt, ...] | None:
  """The list stored at path, or None (missing, cut short, modified, or not a list of Opts: searched again)."""
  try:
    with open(path, "rb") as f: data = f.read()
  except OSError: return None
  head = len(BEAM_MAGIC) + 32
  body = data[head:]
  if not data.startswith(BEAM_MAGIC) or hashlib.sha256(body).digest() != data[len(BEAM_MAGIC):head]:
    if DEBUG >= 2: print(f"teeny: BEAM cache entry {path} is bad, searching again")
    return None
  try: opts = _opts_from_json(body)
  except (ValueError, KeyError, TypeError): return None
  with contextlib.suppress(OSError): os.utime(path)     # recently used: last to be evicted
  return opts

def write_cached(path: str, opts: tuple[Opt, ...]):
  body = _opts_to_json(opts)
  d = os.path.dirname(path)
  os.makedirs(d, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=d, prefix=_TMP_PREFIX)
  try:
    with os.fdopen(fd, "wb") as f: f.write(BEAM_MAGIC + hashlib.sha256(body).digest() + body)
    os.replace(tmp, path)
  except BaseException:
    with contextlib.suppress(OSError): os.unlink(tmp)
    raise

# ---- the search

class _Progress:
  """tqdm when installed, else a plain line per step at DEBUG>=1."""
  def __init__(self, name: str, total: int):
    self.name, self.bar = name, None
    if DEBUG >= 1 or getenv("BEAM_PROGRESS", 0):
      try:
        from tqdm import tqdm
        self.bar = tqdm(total=total, desc=f"BEAM {name}", leave=False, file=sys.stderr)
      except ImportError: pass
  def update(self, n: int, text: str):
    if self.bar is not None:
      self.bar.update(n)
      self.bar.set_postfix_str(text)
    elif DEBUG >= 1: print(f"BEAM {self.name}: {text}")
  def close(self):
    if self.bar is not None: self.bar.close()

class Search:
  """One kernel's search state: the buffers, the unoptimised output, the measured lists."""
  def __init__(self, ast: UOp, dev: Any, real: list[Any] | None):
    self.ast, self.dev = ast, dev
    self.norm = normalized(ast, dev.renderer)
    self.tried = self.mismatches = self.failed = 0
    self.compile_s = self.run_s = 0.0
    self.times: dict[tuple[Opt, ...], float] = {}
    self.seen_src: set[str] = set()
    self.seen_ast: set[tuple] = set()
    base = get_program(ast, dev.renderer, opts=())
    self.inputs = Inputs(dev, base.params, real, written=written_slots(ast))
    self.want: list[np.ndarray] = []
    self.want_ok = False
    self.ref = "unoptimised"

  def render(self, opts: tuple[Opt, ...]) -> ProgramSpec:
    """One candidate's program (on the calling thread: building UOps is not thread-safe, hash-consing looks up and then
    inserts)."""
    return get_program(self.ast, self.dev.renderer, opts=opts)

  def compile(self, spec: ProgramSpec) -> bytes:
    """Compile one candidate (thread-safe: a subprocess; through the compile cache, so the chosen one is a hit when it
    is built for good and a second search of the same kernel compiles nothing)."""
    return self.dev.compiler.compile_cached(spec.src)

  def fits(self, opts: tuple[Opt, ...], cap: int | None = None) -> bool:
    """Does the list apply to the kernel (and make a kernel not seen yet, with at most `cap` register elements)?"""
    try: out = apply_opts(self.norm, opts, self.dev.renderer)
    except KernelOptError: return False
    except Exception: return False    # an Opt combination the rewrites cannot take: not a candidate
    key = out.src
    cap = register_elems(self.dev.renderer) if cap is None else cap
    if key in self.seen_ast or _register_elems(out) > cap: return False
    self.seen_ast.add(key)
    return True

  def run(self, spec: ProgramSpec, lib: bytes, best: float, repeat: bool = True) -> float | None:
    """Seconds (best of up to 3 runs) of a compiled candidate checked against the reference output; None if wrong.
    The first program run is the reference."""
    prg = self.dev.program(spec.name, lib, spec)
    kw = dict(global_size=spec.global_size, local_size=spec.local_size, wait=True, work=launch_work(spec))
    self.inputs.reset()
    st = time.perf_counter()
    times = [prg(*self.inputs.opaque, **kw)]
    if not self.want_ok:
      self.want, self.want_ok = self.inputs.read(), True
    elif not same_output(self.inputs.read(), self.want, self.inputs.dtypes):
      self.mismatches += 1
      self.run_s += time.perf_counter() - st
      if DEBUG >= 3: print(f"BEAM   {list(spec.opts)}: WRONG OUTPUT, discarded")
      return None
    # best of 3 for a candidate near the best so far; one run for one far behind (a loaded machine's noise is within
    # 1.5x)
    while repeat and len(times) < 3 and min(times) < 1.5 * best: times.append(prg(*self.inputs.opaque, **kw))
    self.run_s += time.perf_counter() - st
    if DEBUG >= 3: print(f"BEAM   {list(spec.opts)}: {min(times)*1e6:.0f} us")
    return min(times)

  def measure(self, cands: list[tuple[Opt, ...]], bar: _Progress, best: float,
              deadline: float = float("inf")) -> dict[tuple[Opt, ...], float]:
    """Render the candidates, compile them in parallel, then run each alone; {list: seconds} of those that compiled and
    matched. Past `deadline` (perf_counter) the rest are not run: one step of a 4096^3 GPU matmul's search, a hundred
    candidates of up to a second each, ran for minutes past BEAM_TIMEOUT when the limit was checked between steps."""
    st = time.perf_counter()
    specs = [self._try(self.render, c) for c in cands]
    workers = max(1, min(len(cands), os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
      libs = list(pool.map(lambda sp: None if sp is None else self._try(self.compile, sp), specs))
    built = [None if sp is None or lib is None else (sp, lib) for sp, lib in zip(specs, libs)]
    self.compile_s += time.perf_counter() - st
    out = {}
    for opts, b in zip(cands, built):
      if time.perf_counter() > deadline: break
      self.tried += 1
      if b is None or b[0].src in self.seen_src:
        self.failed += b is None
        continue
      self.seen_src.add(b[0].src)
      try: t = self.run(b[0], b[1], best)
      except Exception: t = None; self.failed += 1
      if t is not None:
        out[opts] = self.times[opts] = t
        best = min(best, t)
      bar.update(1, f"{self.tried} tried, compile {self.compile_s:.1f}s, run {self.run_s:.1f}s, best {best*1e6:.0f} us")
    return out

  @staticmethod
  def _try(fn, x):
    try: return fn(x)
    except Exception: return None     # a render or compile error is a candidate that does not exist

def beam_search(ast: UOp, dev: Any, amt: int, real: list[Any] | None = None) -> tuple[Opt, ...] | None:
  """The fastest Opt list found for the kernel (axis ids as in `normalized(ast)`), or None when it is not searched.
  Cached on disk: a second process reads the list back."""
  if (why := searchable(ast, real is not None)) is not None:
    if DEBUG >= 2: print(f"teeny: BEAM skips {getattr(ast.arg, 'name', '?')}: {why}")
    return None
  st = time.perf_counter()
  path = cache_path(ast, dev, amt)
  if CACHELEVEL and (hit := read_cached(path)) is not None:
    _record(name=getattr(ast.arg, "name", "?"), tried=0, mismatches=0, seconds=time.perf_counter() - st, cached=True,
            opts=hit)
    return hit
  timeout, max_cands = float(getenv("BEAM_TIMEOUT", 60)), int(getenv("BEAM_MAX_CANDIDATES", 400))
  s = Search(ast, dev, real)
  name = getattr(ast.arg, "name", "?")
  bar = _Progress(name, max_cands)
  try:
    heur = tuple(hand_coded_opts(s.norm, dev.renderer))
    s.fits(())
    if heur and not s.fits(heur, cap=1 << 30): heur = ()
    # the heuristics' list first (compiled through the cache: it is what runs when nothing beats it); a kernel this fast
    # with it (BEAM_MIN_US, default 20) is not worth more compiles
    s.measure([heur], bar, float("inf"))
    if heur not in s.times: return None    # the kernel does not run as the heuristics build it: leave it to them
    acts = [] if s.times[heur] < getenv("BEAM_MIN_US", 20.0) * 1e-6 else actions(s.norm, dev.renderer)
    # the reference output: the unoptimised kernel's, unless it is too slow to run (a 1024^3 matmul: 7 s), then the
    # heuristics' (the program that runs without BEAM)
    base = get_program(ast, dev.renderer, opts=())
    s.ref = "unoptimised" if base.iters <= REF_MAX_ITERS or not heur else "heuristics"
    if acts and heur and s.ref == "unoptimised":
      heur_out, s.want_ok = s.want, False
      s.measure([()], bar, s.times[heur])
      if () not in s.times: return None
      if not same_output(heur_out, s.want, s.inputs.dtypes):
        s.mismatches += 1
        del s.times[heur]
    beam = sorted(s.times, key=lambda o: s.times[o])[:amt]
    while acts and time.perf_counter() - st < timeout and s.tried < max_cands:
      best = s.times[beam[0]]
      steps = [c for b in beam for c in [extend(b, a) for a in acts] + neighbours(b, upcast_amounts(dev.renderer))]
      cands = [c for c in steps if s.fits(c)][:max_cands - s.tried]
      if not cands: break
      got = s.measure(cands, bar, best, deadline=st + timeout)
      beam = sorted(set(beam) | set(got), key=lambda o: s.times[o])[:amt]
      if s.times[beam[0]] >= best: break    # no extension is faster: done
  finally:
    bar.close()
    s.inputs.free()
  chosen = beam[0]
  _record(name=name, tried=s.tried, mismatches=s.mismatches, failed=s.failed, seconds=time.perf_counter() - st,
              cached=False, opts=chosen, reference=s.ref, heuristics=heur)
  if DEBUG >= 1:
    print(f"BEAM {name}: {s.tried} candidates ({s.mismatches} wrong output, {s.failed} failed) in "
          f"{time.perf_counter() - st:.2f}s (compile {s.compile_s:.2f}s, run {s.run_s:.2f}s): {list(chosen)} "
          f"{s.times[chosen]*1e6:.0f} us, heuristics {s.times.get(heur, float('nan'))*1e6:.0f} us, reference: {s.ref}")
  if CACHELEVEL: write_cached(path, chosen)
  return chosen
