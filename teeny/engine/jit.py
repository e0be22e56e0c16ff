"""TinyJit: capture the kernels a step function runs once, then replay them without running its Python.

    @TinyJit
    def step(x, y):
      opt.zero_grad()
      loss = model(x).cross_entropy(y)
      loss.backward()
      opt.step()
      return loss

    for x, y in batches: print(step(x, y).item())

The first call (per key, below) runs the function as it is, the warm-up; the second runs it again and captures every
kernel and copy it launches, with the buffers, launch sizes and arguments; later calls skip the function body: they
bind the buffers of the new Tensor arguments in place of the captured ones and launch the captured kernels (on the CPU
one C call per kernel with ctypes arguments built once, on CUDA one CUDA graph). `JIT=0` makes every call a plain call.
`DEBUG=1` says when a function is captured and how many kernels each replay launches.

What a replay does, and what it cannot see:
- Inputs are the Tensors among the arguments, also inside lists, tuples and dicts, and in kwargs. They are realized
  before the call. The key of a capture is every input's shape, dtype, device and view (a slice of a bigger tensor is
  part of the key), which inputs share memory (the same tensor passed twice), Tensor.manual_seed's seed, and the
  training and grad modes. A call whose key differs is not an error: it warms up and captures under its new key (a
  last, smaller batch costs two plain calls, then replays too).
- A bound Variable (`Variable("n", lo, hi).bind(v)`, symbolic shapes) passed as an argument, or in an input's shape, is
  not a constant: the capture is keyed by the variable, and each replay launches the captured kernels with the call's
  value (buffers sized by a variable hold its largest value, so every value fits).
- Non-Tensor arguments are constants of the captured kernels: a replay compares them with the captured call's and
  raises ValueError naming the argument when one differs (a Python float learning rate: hold it in a Tensor, as the
  optimizers do). Other objects (a model) must be the very same object.
- Outputs are the returned Tensors (also inside lists, tuples and dicts). Each replay returns fresh Tensors in fresh
  memory, as an eager call does: a loss returned by one call keeps its value after the next. A returned argument is
  returned as that argument; a returned tensor that lives in model or optimizer state is returned as that tensor.
  Returned tensors do not require grad. Non-Tensor return values are frozen at the captured call's; the capture raises
  when they differ between the warm-up and the captured call.
- In-place writes (optimizer updates, BatchNorm statistics, assign into an argument) are replayed into the same
  memory, and the written tensors move to a new version after each replay, as an eager write does: later reads, lazy
  graphs and non-JIT code see the new values, and a lazy tensor built before a replay from a tensor the replay writes is
  realized first (it keeps the values it was built from). State must be updated in place (`assign`, `+=`, optimizers);
  rebinding an attribute to a new tensor inside the step is not seen by replays.
- Tensors made inside the step and not returned (`.grad`, a cached activation) are the capture's: their memory is reused
  by every replay, and reading one after a replay raises RuntimeError. Return what you need.
- A Tensor made inside the step from host data (numpy, lists) is captured as a constant when its data is the same in the
  warm-up and the captured call; when it differs, the capture raises RuntimeError: pass such data as an argument.
- Random numbers: each replay draws new ones (it advances Tensor's counter exactly as the eager call would). A
  Tensor.manual_seed call inside the step is not replayed: seed outside it.
- `.numpy()`, `.item()`, `.tolist()` and `bool()` inside the step raise RuntimeError during the capture: a replay
  never runs Python, so a value read there would be frozen. Read the returned tensors after the call.
- Index range checks run in the uncaptured calls only; in replays, kernels mask out-of-range indices (reads give 0).
- Capturing is not thread-safe: another thread's kernels run during a capture would be captured too.
"""
from __future__ import annotations
import functools, math, weakref
from typing import Any, Callable
import numpy as np
from teeny.helpers import CHECK_INDICES, DEBUG, JIT, Context, GlobalCounters
from teeny.device import Buffer, Device
from teeny.uop.ops import Ops, UOp
from teeny.engine import realize
from teeny.codegen.kernel import launch_work
from teeny.engine.realize import buffer_for, check_version, copy_buffer, launch_vals
from teeny.engine.schedule import new_buffer_uop, next_version, _as_shaped, _buffer_ids, _done_writes, _reapply_views, \
  _version_ids, rebind_view, unbind_view, walk
import teeny.tensor as tensor
from teeny.tensor import Tensor, _hash32_py, _root

# ---- arguments and return values: Tensors found inside lists, tuples and dicts

_SIMPLE = (int, float, complex, str, bytes, bool, type(None))

def _walk(obj: Any, path: str, tensors: list, others: list, sig: list):
  if isinstance(obj, UOp) and obj.op is Ops.BIND:
    # a bound Variable: part of the key as the variable; its value goes to the kernels' vals on every replay
    sig.append(("var", obj.src[0]))
    others.append((path, _VarArg(obj)))
  elif isinstance(obj, Tensor):
    tensors.append((path, obj))
    sig.append(0)
  elif isinstance(obj, (list, tuple)):
    sig.append((type(obj), len(obj)))
    for i, x in enumerate(obj): _walk(x, f"{path}[{i}]", tensors, others, sig)
  elif isinstance(obj, dict):
    sig.append((type(obj), tuple(obj)))
    for k, x in obj.items(): _walk(x, f"{path}[{k!r}]", tensors, others, sig)
  else:
    others.append((path, obj.copy() if isinstance(obj, np.ndarray) else obj))
    sig.append(1)

def _flatten(args: tuple, kwargs: dict) -> tuple[list, list, tuple]:
  """(tensors as (path, Tensor), other values as (path, value), the containers' structure)."""
  tensors: list = []
  others: list = []
  sig: list = []
  for i, a in enumerate(args): _walk(a, f"args[{i}]", tensors, others, sig)
  for k, a in kwargs.items(): _walk(a, f"{k}=", tensors, others, sig)
  return tensors, others, (tuple(sig), tuple(kwargs))

def _same(a: Any, b: Any) -> bool:
  if a is b: return True
  if type(a) is not type(b): return False
  if isinstance(a, _VarArg): return a.var is b.var
  if isinstance(a, np.ndarray):
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")) \
      and (a.dtype.kind != "f" or bool(np.array_equal(np.signbit(a), np.signbit(b))))
  if isinstance(a, (float, np.floating)):   # nan is the same as nan; -0.0 is not 0.0 (x / s gives -inf, not inf)
    return bool(a != a and b != b) or bool(a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
  if isinstance(a, _SIMPLE + (np.generic,)): return bool(a == b)
  return False   # any other object must be the captured one itself

class _VarArg:
  """A bound Variable among the arguments: its value may change between calls (it is not a constant of the capture)."""
  def __init__(self, b: UOp): self.var, self.val = b.src[0], b.src[1].arg

def _call_vars(others: list, var_vals: dict) -> dict:
  for _, v in others:
    if isinstance(v, _VarArg):
      if var_vals.setdefault(v.var, v.val) != v.val:
        raise ValueError(f"TinyJit: Variable {v.var.arg[0]} is bound to {var_vals[v.var]} and {v.val} in one call; "
                         "bind it once")
  return var_vals

class _Slot:
  """Where a returned Tensor was, in a capture's template of the return value (which holds no tensors)."""

def _rebuild(obj: Any, new: Any) -> Any:
  """obj with each Tensor (or _Slot) in it replaced by next(new); other values kept."""
  if isinstance(obj, (Tensor, _Slot)): return next(new)
  if isinstance(obj, (list, tuple)):
    items = [_rebuild(x, new) for x in obj]
    if isinstance(obj, list): return items
    return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
  if isinstance(obj, dict): return type(obj)((k, _rebuild(x, new)) for k, x in obj.items())
  return obj

def _input_key(t, var_vals: dict) -> tuple:
  """What a capture depends on in an input: its shape, dtype, device and the view it is of its memory (with symbolic
  shapes, the variables and not their values: those go to var_vals)."""
  u = t.uop
  if tensor._has_sym(u.shape): u, _ = unbind_view(u, var_vals)
  b = u.base
  if b.op is Ops.BUFFER and (u is b or (u.op is Ops.RESHAPE and u.src[0] is b)): return (u.shape, u.dtype, b.arg[1])
  return (u.shape, u.dtype, u.device, walk([u]).key)

def _lazy(t) -> bool: return tensor._lazy(_root(t)._uop)

def _flush_pending_writes():
  """Run every pending in-place write: a capture must start from, and a replay must read, memory that holds it."""
  if not tensor._write_origin: return
  ts = [t for refs in list(tensor._write_origin.values()) for r in refs if (t := r()) is not None and _lazy(t)]
  if ts: tensor.Tensor.realize_all(*ts)

def _realize_readers(written: list):
  """Realize the lazy tensors computed from tensors a replay is about to overwrite, so they keep the values they read
  (a realized one is then read from its own buffer by anything built from it)."""
  lazy = {}
  for w in written:
    cur = w._uop.base
    for r, tag in (w._users or ()):
      # only what read the current contents: a reader of an older version cannot be realized any more (it raises)
      if isinstance(tag, weakref.ref):
        tag = None if (a := tag()) is None else (d.base if (d := _done_writes.get(a)) is not None else a)
      if tag is cur and (t := r()) is not None and _lazy(t): lazy[id(_root(t))] = _root(t)
  if lazy: Tensor.realize_all(*lazy.values())

# ---- recording a call

class _Recorder:
  """Installed as realize.recorder while TinyJit runs a function: records the host data Tensors are made from and, when
  capturing, every item run_schedule runs (with its Buffers) and every tensor written in place."""
  def __init__(self, capture: bool):
    self.capture = capture
    self.start = next(_buffer_ids)   # memories numbered from here on were made during the call
    self.rng_start = Tensor._rng_counter
    self.launches: list[tuple] = []  # (kind, program, spec, memory ids, memory ids written)
    self.mem: dict[int, Buffer] = {}
    self.host: list[tuple[int, np.ndarray]] = []
    self.rng: dict[int, int] = {}    # memory id of a random-number counter -> its offset from the call's first
    self.origins: dict[int, weakref.ref] = {}
  def schedule(self, items: list):
    if not self.capture: return
    for refs in tensor._write_origin.values():
      for r in refs:
        if r() is not None: self.origins[id(r())] = r
  def kernel(self, it, prg, spec, bufs: list[Buffer]):
    if not self.capture: return
    mids = [b.arg[0] for b in it.bufs]
    self.mem.update(zip(mids, bufs))
    written = [mids[k] for k, _ in it.bumps] if it.bumps else [] if it.kind == "custom" else [mids[0]]
    self.launches.append(("kernel", prg, spec, mids, written, launch_vals(spec, it.var_vals)))
  def copy(self, it, dst: Buffer, src: Buffer):
    if not self.capture: return
    mids = [b.arg[0] for b in it.bufs]
    self.mem.update(zip(mids, (dst, src)))
    self.launches.append(("copy", None, None, mids, mids[:1], ()))
  def host_copy(self, node: UOp, host: np.ndarray): self.host.append((node.arg[0], host.copy()))
  def rng_counter(self, node: UOp, base: int): self.rng[node.arg[0]] = base - self.rng_start
  def host_read(self, t):
    if self.capture:
      raise RuntimeError("a TinyJit function read a tensor's values on the host (.numpy(), .item(), .tolist() or "
                         f"bool() of a {t.dtype} tensor of shape {t.shape}) while it was being captured: replays run "
                         "only the captured kernels, so the value would be frozen. Return the tensor and read it after "
                         "the call (or call the function without TinyJit, JIT=0)")

def _own_memory(ts) -> None:
  """Copy-on-write results (pad, flip, repeat of a tensor: copies in torch, lazily still reading their source) among a
  call's inputs or outputs get memory of their own, as a write of their value: a capture would take them for views of
  the source, so an input would change under the step's writes to that source, and an output would be one tensor
  that every replay returns and the next write invalidates."""
  for t in ts:
    if t._cow: tensor._give_memory(t)

def _run_recorded(rec: _Recorder, fxn: Callable, args: tuple, kwargs: dict) -> Any:
  if realize.recorder is not None: raise RuntimeError("internal: a TinyJit recorder is already installed")
  realize.recorder = rec
  try:
    # index checks that read a device would be host reads in the step: they run in the warm-up call only
    with Context(TEENY_CHECK_INDICES=0) if rec.capture and int(CHECK_INDICES) < 0 else Context():
      ret = fxn(*args, **kwargs)
    outs, _, _ = _flatten((ret,), {})
    _own_memory(t for _, t in outs)
    pending = [t for refs in list(tensor._write_origin.values()) for r in refs if (t := r()) is not None and _lazy(t)]
    Tensor.realize_all(*[t for _, t in outs], *pending)
  finally: realize.recorder = None
  return ret

# ---- a capture, and its replay

class _LaunchLoop:
  """Replays launches one by one through each program's own call: devices without a graph, and mixed captures."""
  def __init__(self, launches: list[tuple], bufs: list[Buffer]): self.launches, self.bufs = launches, list(bufs)
  def bind(self, slot: int, buf: Buffer): self.bufs[slot] = buf
  def __call__(self) -> float:
    t = 0.0
    for ln in self.launches:
      if ln[0] == "copy":
        copy_buffer(self.bufs[ln[1]], self.bufs[ln[2]])
        continue
      _, prg, spec, slots, vals, work = ln
      t += prg(*[self.bufs[s]._opaque for s in slots], global_size=spec.global_size,
               local_size=spec.local_size, vals=vals, work=work)
    return t

def _host_mismatch(name: str, warm: tuple, rec: _Recorder, used: set[int]) -> str | None:
  """Why the host data the captured call made Tensors from cannot be frozen (it differs from the warm-up's), or None.
  Copies are matched by dtype, size and order among copies of that dtype and size."""
  def groups(copies: list, rng: set[int]) -> dict:
    out: dict = {}
    for m, a in copies:
      if m not in rng: out.setdefault((a.dtype.str, a.size), []).append((m, a))
    return out
  before, now = groups(warm[0], warm[1]), groups(rec.host, set(rec.rng))
  for k, lst in now.items():
    for i, (m, a) in enumerate(lst):
      if m not in used: continue
      old = before.get(k, [])
      if i >= len(old) or not np.array_equal(old[i][1], a, equal_nan=True):
        return (f"{name} makes a Tensor from host data (numpy or a list: {a.dtype}, {a.size} elements) that differs "
                "between its calls; a replay would reuse the captured call's data. "
                "Pass the data in as a Tensor argument")
  return None

class _Capture:
  def __init__(self, name: str, rec: _Recorder, inputs: list, others: list, ret: Any, warm: tuple, var_vals: dict):
    self.name, self.others = name, others
    mem_input: dict[int, int] = {}
    self.in_mem: list[int | None] = []
    for k, (_, t) in enumerate(inputs):
      b = t.uop.base
      m = b.arg[0] if b.op is Ops.BUFFER else None
      self.in_mem.append(m)
      if m is not None: mem_input.setdefault(m, k)
    produced = {m for ln in rec.launches for m in ln[4]}
    used = {m for ln in rec.launches for m in ln[3]}
    if (why := _host_mismatch(name, warm, rec, used)) is not None: raise RuntimeError(why)
    host_data = dict(rec.host)
    # one slot per memory the launches use; returned memories made in the call get fresh memory every replay
    order = list(dict.fromkeys(m for ln in rec.launches for m in ln[3]))
    slot = {m: i for i, m in enumerate(order)}
    self.bufs: list[Buffer] = [rec.mem[m] for m in order]
    out_leaves, _, _ = _flatten((ret,), {})
    self.outs: list[tuple] = []
    out_mem: set[int] = set()
    for _, t in out_leaves:
      u = t.uop
      b = u.base
      m = b.arg[0] if b.op is Ops.BUFFER else None
      if m is None: self.outs.append(("const", u))
      elif m in mem_input:
        k = mem_input[m]
        self.outs.append(("arg", k) if t is inputs[k][1] else ("argview", k, *_detached(u, b)))
      elif m < rec.start: self.outs.append(("same", t))
      elif m in produced and m in slot:
        # a symbolic output's shape follows each replay's values
        self.outs.append(("new", slot[m], *_detached(unbind_view(u)[0] if tensor._has_sym(u.shape) else u, b)))
        out_mem.add(m)
      else: self.outs.append(("copy", u))   # host data or an untouched empty buffer: a copy, never the JIT's own
    self.ret = _rebuild(ret, iter([_Slot() for _ in out_leaves]))   # the captured call's tensors are not kept
    self.in_slot = [slot.get(m) if m is not None else None for m in self.in_mem]
    self.fresh = [(slot[m], (b.device, b.size, b.dtype)) for m in out_mem for b in (self.bufs[slot[m]],)]
    self.rng = [(slot[m], off) for m, off in rec.rng.items() if m in slot and m not in produced]
    self.rng_advance = Tensor._rng_counter - rec.rng_start
    self.reinit = [(slot[m], host_data[m]) for m in produced if m in host_data and m in slot and m not in rec.rng]
    self.owned = [self.bufs[slot[m]] for m in order if m >= rec.start and m in produced and m not in out_mem
                  and m not in mem_input]
    # in-place writes: into arguments (their tensors move to a new version per replay) and into state that lived before
    written = {m for m in produced if m in slot}
    self.written_args = sorted({mem_input[m] for m in written if m in mem_input})
    state = {m for m in written if m < rec.start and m not in mem_input}
    self.state: list[tuple[weakref.ref, int]] = []
    found: set[int] = set()
    for r in rec.origins.values():
      if (t := r()) is not None and (b := _root(t)._uop.base).op is Ops.BUFFER and b.arg[0] in state:
        self.state.append((weakref.ref(_root(t)), b.arg[0]))
        found.add(b.arg[0])
        if t._users: t._users[:] = [e for e in t._users if e[0]() is not None]
    self.state_orphans = [self.bufs[slot[m]] for m in state - found]
    self.launches: list[tuple] = []
    for kind, prg, spec, mids, _, vals in rec.launches:
      if kind == "copy": self.launches.append(("copy", slot[mids[0]], slot[mids[1]], self.bufs[slot[mids[0]]].nbytes))
      else: self.launches.append(("kernel", prg, spec, [slot[m] for m in mids], vals, launch_work(spec)))
    # symbolic shapes: the variables' values at the capture (those not passed in keep them) and the ones in the graph
    self.var_vals = {v: val for ln in self.launches if ln[0] == "kernel" for v, val in zip(ln[2].vars, ln[4])}
    self.var_vals.update(var_vals)
    self.graph_vals = dict(self.var_vals)
    self.n_kernels = sum(1 for ln in self.launches if ln[0] == "kernel")
    self.ops = sum(ln[2].ops for ln in self.launches if ln[0] == "kernel")
    self.mem = sum(ln[2].mem for ln in self.launches if ln[0] == "kernel")
    self.graph = self._make_graph()
    self.owned_marked = False
    if DEBUG >= 1:
      print(f"teeny: TinyJit captured {name}: {self.n_kernels} kernels, {len(self.launches) - self.n_kernels} copies, "
            f"{sum(1 for s in self.in_slot if s is not None)} input buffers, {len(self.fresh)} output buffers, "
            f"replayed by {type(self.graph).__name__}")

  def _make_graph(self) -> Any:
    devices = {b.device for b in self.bufs}
    graph: Any = None
    if len(devices) == 1 and (gcls := getattr(Device[devices.pop()], "graph", None)) is not None:
      try: graph = gcls(self.launches, self.bufs)
      except NotImplementedError: graph = None
    return graph if graph is not None else _LaunchLoop(self.launches, self.bufs)

  def _set_vars(self, var_vals: dict):
    """New values of the variables: each launch's vals follow, and the graph is rebuilt with them (its launch
    arguments are built once per graph)."""
    vals = {**self.var_vals, **var_vals}
    if vals == self.graph_vals: return
    self.launches = [ln if ln[0] != "kernel" or not ln[2].vars
                     else ln[:4] + (tuple(vals[v] for v in ln[2].vars),) + ln[5:]
                     for ln in self.launches]
    self.graph = self._make_graph()
    self.graph_vals = vals

  def replay(self, inputs: list, others: list, var_vals: dict) -> Any:
    for (path, v), (_, cv) in zip(others, self.others):
      if not _same(v, cv):
        if type(v) is type(cv) and not isinstance(v, _SIMPLE + (np.generic, np.ndarray, _VarArg)):
          raise ValueError(f"TinyJit: argument {path} of {self.name} is another {type(v).__name__} object than the one "
                           "it was captured with; objects other than Tensors are constants of the capture (its "
                           "kernels read the captured object's tensors), so pass the same object each call, or its "
                           "tensors as arguments, or use a TinyJit per object")
        raise ValueError(f"TinyJit: argument {path} of {self.name} is {_short(v)} but was {_short(cv)} when the "
                         "function was captured; replays run the captured kernels, in which it is a constant. Pass a "
                         "value that changes as a Tensor (an optimizer's lr already is one), or use a new TinyJit")
    if var_vals: self._set_vars(var_vals)
    graph = self.graph
    # bind this call's arguments
    for (_, t), s in zip(inputs, self.in_slot):
      if s is None: continue
      b = check_version(t.uop.base, f"TinyJit input of {self.name}")
      if self.bufs[s] is not b:
        self.bufs[s] = b
        graph.bind(s, b)
    # what this replay overwrites: lazy tensors still reading it are realized first; tensors must hold what they name
    state = []
    for r, m in self.state:
      if (t := r()) is None: continue
      if (b := t._uop.base).op is not Ops.BUFFER or b.arg[0] != m:
        raise RuntimeError(f"TinyJit: a tensor {self.name} writes in place ({t.dtype}, shape {t.shape}) was given "
                           "other memory since the capture (replaced, not assigned), and replays write its old memory; "
                           "update it with assign(), or call reset() on the TinyJit to capture again")
      check_version(b, f"TinyJit state of {self.name}")
      state.append(t)
    written_args = [_root(inputs[k][1]) for k in self.written_args]
    if any(t._users for t in state) or any(t._users for t in written_args): _realize_readers(state + written_args)
    if self.rng:
      c0 = Tensor._rng_counter
      key = _hash32_py((Tensor._seed * 0x9E3779B1 + 0x7F4A7C15) & 0xFFFFFFFF)
      for s, off in self.rng: self.bufs[s].copyin(np.array([(c0 + off + key) & 0xFFFFFFFF], np.uint32).data.cast("B"))
      Tensor._rng_counter = c0 + self.rng_advance
    for s, data in self.reinit: self.bufs[s].copyin(data.reshape(-1).data.cast("B"))
    new_nodes: dict[int, UOp] = {}
    for s, (device, size, dtype) in self.fresh:
      node = new_buffer_uop(device, size, dtype)
      b = buffer_for(node).ensure_allocated()
      self.bufs[s] = b
      graph.bind(s, b)
      new_nodes[s] = node
    t = graph()
    GlobalCounters.kernel_count += self.n_kernels
    GlobalCounters.global_ops += self.ops
    GlobalCounters.global_mem += self.mem
    GlobalCounters.time_sum_s += t
    if DEBUG >= 1: print(f"teeny: TinyJit replay of {self.name}: {self.n_kernels} kernels")
    # the written memories hold new versions now; the tensors that hold them follow
    for w in state + written_args: _bump(w)
    for b in self.state_orphans: b.version = next(_version_ids)
    if not self.owned_marked:
      for b in self.owned: b.version = realize.JIT_OWNED
      self.owned_marked = True
    outs = []
    for o in self.outs:
      kind = o[0]
      if kind == "new":
        _, s, u, base = o
        out = _reapply_views(u, base, _as_shaped(new_nodes[s], base.shape))
        outs.append(Tensor(rebind_view(out, self.graph_vals) if self.graph_vals else out))
        outs[-1]._jit = self.name   # (backward's error names the replay)
      elif kind == "arg": outs.append(inputs[o[1]][1])
      elif kind == "argview":
        _, k, u, base = o
        outs.append(Tensor(_reapply_views(u, base, _root(inputs[k][1])._uop.base)))
      elif kind == "same": outs.append(o[1])
      elif kind == "const": outs.append(Tensor(o[1]))
      else: outs.append(Tensor(UOp(Ops.CONTIGUOUS, o[1].dtype, (o[1],))))
    return _rebuild(self.ret, iter(outs))

def _detached(u: UOp, base: UOp) -> tuple[UOp, UOp]:
  """u, a view of BUFFER node `base`, as the same view of a stand-in node that maps to no memory (a capture that kept
  `base` would keep the captured call's buffer alive)."""
  stand_in = UOp(Ops.BUFFER, base.dtype, (), (-1,) + base.arg[1:3] + (0,))
  return _reapply_views(u, base, stand_in), stand_in

def _bump(t):
  """t (a base tensor) names its memory's next version: the memory was just written by a replay."""
  old = t._uop.base
  new = next_version(old)
  b = buffer_for(old)
  realize.bind_buffer(new, b)
  b.version = new.arg[3]
  t._set_uop(_reapply_views(t._uop, old, new))

def _short(v: Any) -> str:
  s = repr(v) if isinstance(v, _SIMPLE + (np.generic,)) else f"a {type(v).__name__}"
  return s if len(s) <= 60 else s[:57] + "..."

class TinyJit:
  """Capture a step function's kernels on its second call and replay them on later calls (see this module's docstring
  for what a replay does and what it cannot see). Use as `@TinyJit` or `TinyJit(fn)`; `JIT=0` turns capturing off."""
  def __init__(self, fxn: Callable):
    self.fxn = fxn
    self.cnt = 0    # calls made, of any kind
    self.captures: dict[tuple, _Capture] = {}
    # key -> (host copies, random-number counters, non-Tensor outputs) of its warm-up
    self._warm: dict[tuple, tuple] = {}
    self.name = getattr(fxn, "__qualname__", None) or type(fxn).__name__
    functools.update_wrapper(self, fxn, updated=())
  def __get__(self, obj: Any, objtype: Any = None) -> Any:
    return self if obj is None else functools.partial(self.__call__, obj)
  def reset(self):
    """Forget every capture: the next calls warm up and capture again."""
    self.captures.clear()
    self._warm.clear()
  def __call__(self, *args: Any, **kwargs: Any) -> Any:
    self.cnt += 1
    if not JIT or realize.recorder is not None: return self.fxn(*args, **kwargs)   # JIT=0, or inside another capture
    inputs, others, sig = _flatten(args, kwargs)
    _flush_pending_writes()
    _own_memory(t for _, t in inputs)
    if lazy := [t for _, t in inputs if _lazy(t)]: Tensor.realize_all(*lazy)
    mems: dict[int, int] = {}
    parts = []
    var_vals = _call_vars(others, {})
    for k, (_, t) in enumerate(inputs):
      b = t.uop.base
      parts.append((_input_key(t, var_vals), mems.setdefault(b.arg[0], k) if b.op is Ops.BUFFER else -1))
    key = (tuple(parts), sig, Tensor._seed, Tensor.training, Tensor.is_grad_enabled())
    if (cap := self.captures.get(key)) is not None: return cap.replay(inputs, others, var_vals)
    if key not in self._warm:
      rec = _Recorder(capture=False)
      ret = _run_recorded(rec, self.fxn, args, kwargs)
      self._warm[key] = (rec.host, set(rec.rng), _flatten((ret,), {})[1])
      return ret
    if DEBUG >= 1: print(f"teeny: TinyJit capturing {self.name}")
    rec = _Recorder(capture=True)
    ret = _run_recorded(rec, self.fxn, args, kwargs)
    warm = self._warm.pop(key)
    for (path, a), (_, b) in zip(_flatten((ret,), {})[1], warm[2]):
      if not _same(a, b):
        raise RuntimeError(f"TinyJit: {self.name} returned {_short(a)} at {path.replace('args[0]', 'return value', 1)} "
                           f"but {_short(b)} on the call before; replays would return the captured value. Return a "
                           "Tensor for values that change")
    self.captures[key] = _Capture(self.name, rec, inputs, others, ret, warm, var_vals)
    return ret
