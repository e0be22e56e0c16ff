"""Run a schedule: allocate buffers, compile through the caches, launch, and report at DEBUG>=2."""
from __future__ import annotations
import operator, sys, time, weakref
from typing import Any
from teeny.device import Buffer, Device
from teeny.helpers import BEAM, DEBUG, NOOPT, TF32, GlobalCounters, colored
from teeny.uop.ops import KernelInfo, Ops, UOp
from teeny.engine.schedule import ScheduleItem
from teeny.codegen.kernel import get_program

# the device memory behind each BUFFER node. Every version node of one memory maps to the same Buffer, which holds the
# version its memory contains now; the memory is freed when the last node naming it is dropped.
# (memory id -> a weak reference to its Buffer: a plain dict, its dead entries dropped whenever it has doubled, because
# a WeakValueDictionary's get and set run Python code, on every realize's fresh output)
_by_id: dict[int, weakref.ref] = {}
_prune_at = [1024]

def buffer_for(u: UOp) -> Buffer:
  # the node's own __dict__ holds its Buffer (bind_buffer): it lives as long as the node, found with one dict lookup
  if (b := u.__dict__.get("_buffer")) is not None: return b
  assert u.op is Ops.BUFFER, u.op
  mid = u.arg[0]
  if (r := _by_id.get(mid)) is None or (b := r()) is None:
    b = Buffer(u.arg[1], u.arg[2], u.dtype)
    b.version = u.arg[3]
    _by_id[mid] = weakref.ref(b)
    if len(_by_id) >= _prune_at[0]:
      for k in [k for k, r in _by_id.items() if r() is None]: del _by_id[k]
      _prune_at[0] = max(1024, 2 * len(_by_id))
  bind_buffer(u, b)
  return b

def live_buffers() -> list[Buffer]:
  """Every Buffer some BUFFER node has looked up and that is still alive (for tests and leak checks)."""
  return [b for r in list(_by_id.values()) if (b := r()) is not None]

def bind_buffer(u: UOp, b: Buffer):
  """Version node u (new: no Buffer yet) names memory b."""
  u.__dict__["_buffer"] = b

def check_version(u: UOp, what: str = "a kernel") -> Buffer:
  """The Buffer of version node u, refusing to read it when its memory has since been overwritten in place."""
  b = buffer_for(u)
  if b.version != u.arg[3]:
    if b.version == JIT_OWNED:
      raise RuntimeError(f"{what} reads a tensor computed inside a TinyJit capture ({u.dtype}, {u.arg[2]} elements on "
                         f"{u.arg[1]}) whose memory the JIT reuses on every replay; return it from the jitted function "
                         "to get a fresh tensor per call")
    raise RuntimeError(f"{what} needs the contents a tensor had before it was modified in place ({u.dtype}, {u.arg[2]} "
                       f"elements on {u.arg[1]}), and that memory has been overwritten since. Realize or .clone() the "
                       "tensors that read it before writing into it (as torch says: a variable needed here was "
                       "modified by an inplace operation)")
  return b

# set by TinyJit (engine/jit.py) while it runs a function it will capture: it sees every schedule and item run
recorder: Any = None
# the version a TinyJit gives the memories it owns (a capture's intermediates) once it replays: a tensor left over from
# the capture that still names one reads memory every replay overwrites
JIT_OWNED = -1

_program_cache: dict[tuple, Any] = {}
# (renderer, compiler key, ast, opts key) -> (spec, binary, key of the device that compiled it)
_compiled_cache: dict[tuple, Any] = {}

def get_runner(device: str, ast: UOp, bufs: list[Buffer] | None = None) -> tuple[Any, Any]:
  """(program, spec) for an AST on a device. The in-memory cache is keyed by the hash-consed AST itself (whose
  KernelInfo holds a kernel's own Opt list) and by what picks the Opts otherwise (NOOPT, BEAM), so the key fixes the
  Opts the program was built with. Under BEAM=n a kernel without its own list (and NOOPT off) gets the list a beam
  search finds (codegen/search.py, cached on disk); `bufs`, the kernel's real buffers, let it search a kernel that
  reads indices from memory (their contents are copied, never written)."""
  pinned = isinstance(ast.arg, KernelInfo) and ast.arg.opts_to_apply is not None
  key = (device, ast, None if pinned else (NOOPT.value, BEAM.value, TF32.value))   # (TF32 picks the TC Opt too)
  if (hit := _program_cache.get(key)) is not None: return hit
  dev = Device[device]
  # devices of one kind (CPU and CPU:1, CUDA:0 and CUDA:1 of one arch) share the compiled program: a multi-device
  # tensor's kernels compile once and load on each device
  fkey = (type(dev.renderer).__name__, getattr(dev.compiler, "cache_key", None), key[1:])
  if (shared := _compiled_cache.get(fkey)) is not None and shared[2] in _program_cache:   # (cleared with it)
    spec, lib, _ = shared
    prg = dev.program(spec.name, lib, spec)
    _program_cache[key] = (prg, spec)
    return prg, spec
  opts = None
  if BEAM.value >= 1 and not pinned and not NOOPT and not dev.runs_nothing and dev.compiler is not None:
    from teeny.codegen.search import beam_search
    try: opts = beam_search(ast, dev, int(BEAM.value), bufs)
    except Exception as e:   # a search that fails (e.g. no memory for its buffers) leaves the kernel to the heuristics
      print(f"teeny: BEAM search failed for {getattr(ast.arg, 'name', 'a kernel')} ({type(e).__name__}: {e}); "
            "using the heuristics' Opts", file=sys.stderr)
  spec = get_program(ast, dev.renderer, opts=opts)
  if DEBUG >= 3: print(f"{ast}\n{spec.name} opts: {list(spec.opts)}")
  if DEBUG >= 4: print(spec.src)
  GlobalCounters.compile_count += 1
  lib = dev.compiler.compile_cached(spec.src) if dev.compiler is not None else b""
  if DEBUG >= 6 and (c := dev.compiler) is not None and hasattr(c, "disassemble"): c.disassemble(lib)
  try: prg = dev.program(spec.name, lib, spec)
  except RuntimeError:
    if dev.compiler is None: raise
    # a cache entry that does not load is never trusted: compile again and replace it
    lib = dev.compiler.compile_cached(spec.src, force=True)
    prg = dev.program(spec.name, lib, spec)
  _program_cache[key] = (prg, spec)
  _compiled_cache[fkey] = (spec, lib, key)
  return prg, spec

_dtype_of = operator.attrgetter("dtype")

def _check_args(spec, bufs: list[Buffer], name: str):
  if len(spec.params) != len(bufs):
    raise RuntimeError(f"kernel {name} declares {len(spec.params)} buffer parameters but was launched with {len(bufs)}")
  for (slot, dt, shape), b in zip(spec.params, bufs):
    if dt != b.dtype:
      raise TypeError(f"kernel {name}: parameter data{slot} is {dt}, but the buffer passed is {b.dtype}")

def run_schedule(items: list[ScheduleItem]):
  if recorder is not None and any(it.multi for it in items):
    raise NotImplementedError("TinyJit does not capture multi-device tensors yet (their per-device buffers and "
                              "collectives); run the step without TinyJit (JIT=0, or call the function directly)")
  if recorder is not None: recorder.schedule(items)
  compiled = GlobalCounters.compile_count
  for it in items:
    if it.kind == "kernel":   # (it checks the versions it reads as it looks up their memory)
      _run_kernel(it)
      if it.bumps: _bump(it)
      continue
    for u in it.consumed(): check_version(u)
    if it.kind == "allreduce":
      _run_allreduce(it)
      continue
    if it.kind == "copy":
      dst, src = buffer_for(it.bufs[0]), buffer_for(it.bufs[1])
      copy_buffer(dst, src)
      if recorder is not None: recorder.copy(it, dst, src)
      continue
    _run_kernel(it)
    _bump(it)
  if DEBUG.value >= 1 and GlobalCounters.compile_count != compiled:
    print(f"teeny: compiled {GlobalCounters.compile_count - compiled} programs ({GlobalCounters.compile_count} since "
          "the counters' reset)")

def _bump(it: ScheduleItem):
  """After an item that writes in place ran: each written memory holds its new version."""
  for slot, new in it.bumps:
    b = buffer_for(it.bufs[slot])
    bind_buffer(new, b)
    b.version = new.arg[3]

def _run_allreduce(it: ScheduleItem):
  """Every device's output gets the elementwise reduction of every device's partial (runtime/collectives.py)."""
  from teeny.runtime.collectives import all_reduce
  n = len(it.bufs) // 2
  outs, ins = [buffer_for(b) for b in it.bufs[:n]], [buffer_for(b) for b in it.bufs[n:]]
  st = time.perf_counter()
  all_reduce(outs, ins, it.meta)
  if DEBUG >= 2:
    for o in outs: Device[o.device].synchronize()
    t = time.perf_counter() - st
    print(f"{colored('*** ' + ','.join(b.device for b in outs), 'yellow')} all-reduce {it.meta.name.lower()} of "
          f"{ins[0].size} x {ins[0].dtype} over {n} devices {t*1e3:9.3f} ms "
          f"{ins[0].nbytes / max(t, 1e-9) * 1e-9:8.2f} GB/s")

def copy_buffer(dst: Buffer, src: Buffer):
  if Device[dst.device].runs_nothing or Device[src.device].runs_nothing: dst.ensure_allocated()
  else: dst.copyin(src.raw().data)   # (bytes as they are: numpy() widens bfloat16 to float32)

def launch_vals(spec, var_vals: dict | None) -> tuple[int, ...]:
  """The value of each of a kernel's variables (symbolic shapes), in its parameter order."""
  if not spec.vars: return ()
  missing = [v.arg[0] for v in spec.vars if var_vals is None or v not in var_vals]
  if missing or var_vals is None:  # (var_vals is None only with something missing)
    raise RuntimeError(f"kernel {spec.name} takes the variables {missing} but no value was bound to them")
  return tuple(var_vals[v] for v in spec.vars)


def _run_kernel(it: ScheduleItem):
  ubufs = it.bufs
  device = ubufs[0].arg[1]
  # each version's memory (the node's own, one dict lookup, once it has been looked up before), refusing a version
  # that an in-place write has overwritten since: the versions read are every slot but the output (all of them for an
  # in-place write, whose output slot is read too)
  bufs = []
  for i, u in enumerate(ubufs):
    if (b := u.__dict__.get("_buffer")) is None: b = buffer_for(u)
    if b.version != u.arg[3] and (i or it.bumps): check_version(u)
    bufs.append(b)
  ast = it.ast
  assert ast is not None   # a kernel item always has its AST
  prg, spec = get_runner(device, ast, bufs)
  opaque = []
  for b in bufs:
    if b.device != device:
      raise RuntimeError(f"kernel {spec.name} runs on {device} but a buffer lives on {b.device}; "
                         f"move it with .to({device!r})")
    opaque.append(b._opaque if b._allocated else b.ensure_allocated()._opaque)
  if tuple(map(_dtype_of, bufs)) != spec.param_dtypes: _check_args(spec, bufs, spec.name)   # (it says what differs)
  vals = launch_vals(spec, it.var_vals) if spec.vars else ()
  wait = DEBUG.value >= 2
  t = prg(*opaque, global_size=spec.global_size, local_size=spec.local_size, vals=vals, wait=wait, work=spec.work)
  if recorder is not None: recorder.kernel(it, prg, spec, bufs)
  GlobalCounters.kernel_count += 1
  GlobalCounters.global_ops += spec.ops
  GlobalCounters.global_mem += spec.mem
  GlobalCounters.time_sum_s += t
  if wait:
    gflops = spec.ops / t * 1e-9 if t > 0 else 0
    gbs = spec.mem / t * 1e-9 if t > 0 else 0
    name = spec.name + (" (BEAM)" if spec.beam else "")
    print(f"{colored('*** ' + device, 'green')} {GlobalCounters.kernel_count:4d} {name:32s} global "
          f"{str(spec.global_size):20s} {t*1e3:9.3f} ms {gflops:8.2f} GFLOP/s {gbs:8.2f} GB/s")
