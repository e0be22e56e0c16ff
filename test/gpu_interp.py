"""A numpy interpreter for linearized GPU kernels (the tensor-core kernels of teeny/codegen/tc.py), so CI checks what
their index math, pipelines and fragment layouts compute without a GPU.

A block's threads run in lockstep, each value an array over the threads; the grid's blocks run one after another.
Shared memory is one array per block, register arrays (DEFINE_REG) one row per thread. The CUDA statements the TC
kernels use are played by name: `teeny_cp_async16` copies land only when a `cp.async.wait_group` lets their commit
group complete (so a pipeline that reads a stage too early reads stale data here too), `teeny_copy16` lands at once,
`teeny_ldsm_x4[_trans]` and WMMA are warp-wide (ldmatrix's lane-to-row rule; WMMA through the layout maps of
codegen/tc.py). Lockstep execution cannot show a missing barrier; everything else a kernel computes is computed.

Warp-specialised kernels (a loop whose trip count differs between a block's threads: the TMA tiles' producer warp and
consumer warpgroups) run as one lockstep executor per warpgroup (the last one the remainder), driven in turn until
each blocks: on an mbarrier wait whose phase has not completed, or at a block (or named) barrier until every
executor reached it; all blocked is a deadlock, raised. mbarriers count arrivals and transaction bytes per phase, as
PTX's do; a TMA copy (`teeny_tma3`, through the kernel's TENSOR_MAP parameters) reads its box of the tensor (zeros
outside it) and writes it 128-byte swizzled, then completes its bytes on its barrier. After each arrival the other
executors run, so the producer copies as far ahead as the barriers let it, and wgmma groups run at their wait: a stage
copied over while a group still reads it shows."""
from __future__ import annotations
import re
import numpy as np
from teeny.dtype import dtypes
from teeny.uop.ops import AxisType, GroupOp, Ops, UOp
from teeny.codegen.tc import LAYOUTS, wgmma_c, wgmma_n
from teeny.helpers import ceildiv as ceil_div

def to_float(bits: np.ndarray, dt) -> np.ndarray:
  bits = bits.astype(np.uint16)
  if dt == dtypes.float16: return bits.view(np.float16).astype(np.float32)
  return (bits.astype(np.uint32) << 16).view(np.float32)

def to_bits(x: np.ndarray, dt) -> np.ndarray:
  x = np.asarray(x, np.float32)
  if dt == dtypes.float16: return x.astype(np.float16).view(np.uint16)
  u = x.view(np.uint32).astype(np.uint64)
  return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)

def _round(x: np.ndarray, dt) -> np.ndarray: return to_float(to_bits(x, dt), dt)

def to_tf32(x: np.ndarray) -> np.ndarray:
  """float32 rounded to TF32 (10 mantissa bits) to nearest, ties away from zero (PTX cvt.rna.tf32.f32)."""
  u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
  r = ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
  return np.where(np.isfinite(x), r, x).astype(np.float32)

def _cdiv(a, b): return np.trunc(np.divide(a, b)).astype(np.int64)

def _inbounds(idx: np.ndarray, size: int):
  """A read a GPU would make outside its buffer (it may not fault there: here it does)."""
  if idx.size and (idx.min() < 0 or idx.max() >= size):
    raise IndexError(f"gpu_interp: a read at {int(idx.min())}..{int(idx.max())} of a buffer of {size} values")

ALU = {Ops.ADD: np.add, Ops.SUB: np.subtract, Ops.MUL: np.multiply, Ops.MAX: np.maximum, Ops.MIN: np.minimum,
       Ops.CMPLT: np.less, Ops.CMPLE: np.less_equal, Ops.CMPNE: np.not_equal, Ops.CMPEQ: np.equal,
       Ops.IDIV: _cdiv, Ops.MOD: lambda a, b: a - b * _cdiv(a, b), Ops.FDIV: np.divide,
       Ops.AND: lambda a, b: np.logical_and(a, b) if np.asarray(a).dtype == bool else np.bitwise_and(a, b),
       Ops.OR: lambda a, b: np.logical_or(a, b) if np.asarray(a).dtype == bool else np.bitwise_or(a, b),
       Ops.SHR: lambda a, b: np.right_shift(np.asarray(a, np.uint32), np.asarray(b, np.uint32)),
       Ops.SHL: lambda a, b: np.left_shift(np.asarray(a, np.uint32), np.asarray(b, np.uint32)),
       Ops.XOR: np.bitwise_xor, Ops.NEG: np.negative, Ops.RECIP: lambda a: 1 / a, Ops.EXP2: np.exp2, Ops.EXP: np.exp,
       Ops.LOG2: np.log2, Ops.LOG: np.log, Ops.SQRT: np.sqrt}

class Env(dict):
  """Each UOp's value; constants are not in the linearized list and read as themselves."""
  def __missing__(self, u: UOp):
    if u.op is Ops.CONST: return u.arg
    raise KeyError(u)
  def get(self, u, default=None): return self[u] if u in self or u.op is Ops.CONST else default

# cp.async copies land when a wait lets them (a read of a stage before its copy is done reads stale data), or with
# EARLY_COPIES at once (a copy into a stage that wgmma, run at its wait, still reads then shows)
EARLY_COPIES = False

class _Return(Exception):
  """An executor's threads leave the kernel (a `return;` statement)."""

class CTA:
  """What a block's threads share: shared memory, register arrays (a row per thread), mbarriers (word -> [arrivals a
  phase, arrivals left, bytes left, phase]) and barrier counts."""
  def __init__(self, T: int):
    self.T = T
    self.shared: np.ndarray | None = None
    self.regs: dict[UOp, np.ndarray] = {}
    self.mbar: dict[int, list[int]] = {}
    self.executors = 1
    self.named: dict[int, list[int]] = {}   # named barriers: id -> [arrived, generation]
    self.bar = [0, 0]   # (arrived, generation) of the block barrier
  def complete(self, w: int):
    c = self.mbar[w]
    if c[1] == 0 and c[2] == 0: c[1], c[3] = c[0], c[3] + 1
  def arrive(self, w: int, n: int = 1):
    if w not in self.mbar: raise AssertionError(f"gpu_interp: an arrival on mbarrier word {w}, never initialised")
    self.mbar[w][1] -= n
    if self.mbar[w][1] < 0: raise AssertionError(f"gpu_interp: more arrivals on mbarrier word {w} than it counts")
    self.complete(w)

class Block:
  """An executor: `lanes` of a CTA's threads in lockstep (all of them, unless the kernel is warp-specialised)."""
  def __init__(self, uops: list[UOp], threads: int, bufs: dict[int, np.ndarray], cta: CTA | None = None,
               lanes: np.ndarray | None = None):
    self.uops, self.T, self.bufs = uops, threads, bufs
    self.cta = cta if cta is not None else CTA(threads)
    self.lanes = np.ones(threads, bool) if lanes is None else lanes
    self.shared: np.ndarray = np.zeros(0, np.uint32)
    self.regs: dict[UOp, np.ndarray] = self.cta.regs
    self.pending: list[list] = [[]]   # cp.async commit groups, the open one last
    self.wg_groups: list[list] = [[]]   # wgmma commit groups (deferred calls), the open one last
    self.steps = 0   # uops run (the driver's progress check)
    self._groups: list = [None]   # (the executors of its block, set by run_kernel: 128 threads each when several)

  # ---- memory
  def _read(self, ref, idx, gate, dt):
    kind, obj = ref
    idx = np.broadcast_to(np.asarray(idx, np.int64), (self.T,))
    gate = np.ones(self.T, bool) if gate is None else np.broadcast_to(gate, (self.T,))
    safe = np.where(gate, idx, 0)
    if kind == "g":
      _inbounds(safe, self.bufs[obj].size)
      raw = self.bufs[obj][safe]
      vals = to_float(raw, dt) if dt in (dtypes.float16, dtypes.bfloat16) else raw
    elif kind == "s": vals = self.shared[safe]
    else: vals = self.regs[obj][np.arange(self.T), safe]
    return np.where(gate, vals, 0)
  def _write(self, ref, idx, gate, val, dt):
    kind, obj = ref
    idx = np.broadcast_to(np.asarray(idx, np.int64), (self.T,))
    m = self.lanes & (np.ones(self.T, bool) if gate is None else np.broadcast_to(gate, (self.T,)))
    val = np.broadcast_to(np.asarray(val), (self.T,))
    if kind == "g":
      _inbounds(idx[m], self.bufs[obj].size)
      data = to_bits(val, dt) if dt in (dtypes.float16, dtypes.bfloat16) else val.astype(self.bufs[obj].dtype)
      self.bufs[obj][idx[m]] = data[m]
    elif kind == "s": self.shared[idx[m]] = val[m]
    else: self.regs[obj][np.arange(self.T)[m], idx[m]] = val[m]

  # ---- the CUDA statements of the TC kernels
  def custom(self, u: UOp, env: dict):
    """A statement (a generator: it yields while it blocks)."""
    fmt = next(v for k, v in u.arg if k != "tag")   # (the statement in its one language)
    vals = [env.get(s) for s in u.src]
    mask = self.lanes.copy()
    if (m := re.match(r"if \(\{(\d+)\}\) \{\{ return; \}\}", fmt)):   # (a warp leaving)
      leave = self.lanes & np.broadcast_to(vals[int(m.group(1))], (self.T,))
      if leave.any() and not (leave == self.lanes).all():
        raise AssertionError("gpu_interp: some of an executor's threads return, not all")
      if leave.any(): raise _Return
      return
    if (m := re.match(r"if \(\{(\d+)\}\) ", fmt)):
      mask &= np.broadcast_to(vals[int(m.group(1))], (self.T,))
      fmt = fmt[m.end():]
    if "teeny_mbar" in fmt or "teeny_tma3" in fmt:
      yield from self.tma_statement(fmt, vals, mask)
      return
    if (m := re.search(r"bar\.sync (\d+), (\d+);", fmt)):   # a named barrier of the first n threads
      bar = self.cta.named.setdefault(int(m.group(1)), [0, 0])
      yield from self._barrier(bar, ceil_div(int(m.group(2)), len(self.lanes) if len(self._groups) == 1 else 128))
      return
    if (m := re.match(r"teeny_sts_(f16|bf16|f32)\(\{0\}, \{1\}, \{2\}\);", fmt)):   # a value into shared memory
      dt = u.src[2].dtype
      byte = np.broadcast_to(np.asarray(vals[1], np.int64), (self.T,))[mask]
      v = np.broadcast_to(np.asarray(vals[2], np.float32), (self.T,))[mask]
      if dt == dtypes.float32: self.shared[byte // 4] = v.view(np.uint32)
      else:
        bits = to_bits(v, dt).astype(np.uint32)
        for half in (0, 1):
          sel = (byte // 2) % 2 == half
          wd = byte[sel] // 4
          self.shared[wd] = (self.shared[wd] & ~np.uint32(0xFFFF << 16 * half)) | (bits[sel] << 16 * half)
      return
    if fmt.startswith("teeny_copy_out16("):   # 16 bytes of shared memory to global memory
      (kind, slot), idx, _ = vals[0]
      byte = np.broadcast_to(np.asarray(vals[2], np.int64), (self.T,))[mask]
      idx = np.broadcast_to(np.asarray(idx, np.int64), (self.T,))[mask]
      words = np.stack([self.shared[byte // 4 + i] for i in range(4)], -1).astype(np.uint32)
      out = self.bufs[slot]
      if out.dtype.itemsize == 2:
        vals16 = np.stack([words & 0xFFFF, words >> 16], -1).reshape(-1, 8)
        at = idx[:, None] + np.arange(8)
        _inbounds(at, out.size)
        out[at] = vals16.astype(out.dtype)
      else:
        at = idx[:, None] + np.arange(4)
        _inbounds(at, out.size)
        out[at] = words.view(np.float32)
      return
    # wgmma runs when a wait lets its group complete (reading shared memory as late as it may: a stage copied over
    # while its group is in flight is read overwritten here too)
    if "fence.proxy.async" in fmt or fmt.startswith("teeny_wgmma_fence"): return
    if (m := re.match(r"teeny_wgmma_wait(\d)_", fmt)):
      self.wg_groups.append([])   # (the wait commits the open group first)
      while len(self.wg_groups) - 1 > int(m.group(1)):
        for call in self.wg_groups.pop(0): call()
      return
    if "cp.async.commit_group" in fmt:
      self.pending.append([])
      return
    if (m := re.search(r"cp.async.wait_group (\d+)", fmt)):
      done = self.pending[:-1][:max(len(self.pending) - 1 - int(m.group(1)), 0)]
      for grp in done:
        for w, words, mk in grp: self._put(w, words, mk)
      self.pending = self.pending[len(done):]
      return
    name, args = re.match(r"(\w+)\((.*)\);", fmt).groups()
    arg = [vals[int(a[1:-1])] if a.startswith("{") else int(a) for a in (x.strip() for x in args.split(","))]
    if name in ("teeny_cp_async16", "teeny_copy16", "teeny_copy16_f32", "teeny_copy16m", "teeny_copy16m_f32"):
      _, w, src, n = arg
      (kind, slot), idx, gate = src
      size = self.bufs[slot].dtype.itemsize   # 16-bit values held as their bits, or float32 (TF32 kernels)
      e = np.arange(16 // size)
      if name.startswith("teeny_copy16m"):   # (n: a bit mask of the values read)
        ok = ((np.broadcast_to(np.asarray(n, np.int64), (self.T,))[:, None] >> e) & 1).astype(bool) & mask[:, None]
      else:
        nvals = np.broadcast_to(np.asarray(n) // size, (self.T,))
        ok = (e[None, :] < nvals[:, None]) & mask[:, None]   # (a masked thread reads nothing)
      at = np.where(ok, np.asarray(idx, np.int64).reshape(-1, 1) + e, 0)
      _inbounds(at, self.bufs[slot].size)
      if size == 4: words = np.where(ok, self.bufs[slot][at].astype(np.float32).view(np.uint32), 0).astype(np.uint32)
      else:
        halves = np.where(ok, self.bufs[slot][at].astype(np.uint32), 0)
        words = halves[:, 0::2] | (halves[:, 1::2] << 16)
      w = np.broadcast_to(np.asarray(w, np.int64), (self.T,))
      if name != "teeny_cp_async16" or EARLY_COPIES: self._put(w, words, mask)
      else: self.pending[-1].append((w, words, mask))
      return
    if name == "teeny_lds128":   # 4 float32 words of shared memory into 4 registers
      (_, reg), off, _ = arg[0]
      w = np.broadcast_to(np.asarray(arg[2], np.int64), (self.T,))
      off = np.broadcast_to(np.asarray(off, np.int64), (self.T,))
      for e in range(4):
        self.regs[reg][np.arange(self.T), off + e] = self.shared[w + e].astype(np.uint32).view(np.float32)
      return
    if name.startswith("teeny_ldsm_x4"):
      (_, reg), off, _ = arg[0]
      w = np.broadcast_to(np.asarray(arg[2], np.int64), (self.T,)).reshape(-1, 32)
      lane = np.arange(32)
      g, t = lane // 4, lane % 4
      out = np.zeros((w.shape[0], 32, 4), np.uint32)
      for j in range(4):
        if name.endswith("_trans"):   # (row 2t, col g) low, (row 2t+1, col g) high, of matrix j
          lo = self.shared[w[:, 8 * j + 2 * t] + g // 2] >> (16 * (g % 2)) & 0xFFFF
          hi = self.shared[w[:, 8 * j + 2 * t + 1] + g // 2] >> (16 * (g % 2)) & 0xFFFF
          out[:, :, j] = lo | (hi << 16)
        else: out[:, :, j] = self.shared[w[:, 8 * j + g] + t]   # row g, values 2t and 2t+1 of matrix j
      off = int(np.broadcast_to(off, (self.T,))[0])
      self.regs[reg][:, off:off + 4] = out.reshape(self.T, 4)
      return
    raise NotImplementedError(f"gpu_interp: no rule for {fmt!r}")
  def tma_statement(self, fmt: str, vals: list, mask: np.ndarray):
    """The TMA tiles' statements: mbarrier init/arrive/expect/wait and TMA copies; each call's last argument a
    predicate (the inits': the statement's own `if ({n} == 0)`)."""
    cta = self.cta
    if (m := re.match(r"if \(\{(\d+)\} == 0\) \{", fmt)):
      mask = mask & (np.broadcast_to(vals[int(m.group(1))], (self.T,)) == 0)
    def ev(a: str):
      terms = [(vals[int(t.strip()[1:-1])] if t.strip().startswith("{") else int(t))
               for t in a.strip().lstrip("&").split("+")]
      return terms[0] if len(terms) == 1 else sum(terms)
    def one(x, who: np.ndarray, what: str) -> int:
      xs = np.broadcast_to(np.asarray(x), (self.T,))[who]
      if len(set(xs.tolist())) != 1: raise AssertionError(f"gpu_interp: the threads of {what} disagree: {set(xs)}")
      return int(xs[0])
    for name, args in re.findall(r"(teeny_\w+)\(([^;]*?)\);", fmt):
      a = [x for x in args.split(",")] if args else []
      if name == "teeny_mbar_init":
        if mask.any(): cta.mbar[int(ev(a[1]))] = [int(ev(a[2]))] * 2 + [0, 0]
        continue
      who = mask & np.broadcast_to(np.asarray(ev(a[-1])) != 0, (self.T,))
      if not who.any(): continue
      w = one(ev(a[1]), who, name)
      if name == "teeny_mbar_wait":
        parity = one(ev(a[2]), who, name)
        if w not in cta.mbar: raise AssertionError(f"gpu_interp: a wait on mbarrier word {w}, never initialised")
        while cta.mbar[w][3] % 2 == parity: yield "wait"   # (phase `parity` not yet completed)
      elif name == "teeny_mbar_arrive":   # (then the others run: a waiting producer copies before this goes on)
        cta.arrive(w, int(who.sum()))
        yield "switch"
      elif name == "teeny_mbar_expect":
        for _ in range(int(who.sum())):
          cta.mbar[w][2] += int(ev(a[2]))
          cta.arrive(w)
      elif name == "teeny_tma3":
        tm, coords, bar = ev(a[2]), [one(ev(x), who, name) for x in a[3:6]], one(ev(a[6]), who, name)
        if int(who.sum()) != 1: raise AssertionError(f"gpu_interp: {int(who.sum())} threads issue one TMA copy")
        self._tma_copy(cta, w, tm, coords, bar)
      else: raise NotImplementedError(f"gpu_interp: no rule for {name}")

  def _barrier(self, bar: list, n: int):
    """Arrive at a barrier of n executors and wait until all have (bar: [arrived, generation])."""
    gen = bar[1]
    bar[0] += 1
    if bar[0] == n: bar[0], bar[1] = 0, bar[1] + 1
    while bar[1] == gen: yield "wait"

  def _tma_copy(self, cta: CTA, w: int, tm: tuple, coords: list, bar: int):
    """A box of a tensor map into cta's shared memory at word w, 128-byte swizzled by address (PTX ISA, "tensor
    copy": zeros outside the tensor), its bytes completing on the mbarrier at word bar."""
    _, slot, dims, strides, box, off = tm
    data = self.bufs[slot]
    size = data.dtype.itemsize
    i2, i1, i0 = np.meshgrid(*(np.arange(b) for b in reversed(box)), indexing="ij")
    c0, c1, c2 = coords[0] + i0, coords[1] + i1, coords[2] + i2
    inb = (c0 >= 0) & (c0 < dims[0]) & (c1 >= 0) & (c1 < dims[1]) & (c2 >= 0) & (c2 < dims[2])
    at = np.where(inb, off + c0 + c1 * (strides[0] // size) + c2 * (strides[1] // size), 0)
    _inbounds(at[inb], data.size)
    v = np.where(inb, data[at].astype(np.uint32), 0)
    addr = 4 * w + (i2 * box[1] + i1) * box[0] * size + size * i0
    addr ^= ((addr >> 7) & 7) << 4
    assert cta.shared is not None, "shared memory is declared before a copy into it"
    for half in (0, 1):   # (16-bit values: two to a word)
      sel = (addr // 2) % 2 == half
      wd = addr[sel] // 4
      cta.shared[wd] = (cta.shared[wd] & ~np.uint32(0xFFFF << 16 * half)) | (v[sel] << 16 * half)
    cta.mbar[bar][2] -= int(np.prod(box)) * size
    cta.complete(bar)

  def _put(self, w, words, mask):
    for i in range(words.shape[1]): self.shared[w[mask] + i] = words[mask, i]

  def _wgmma_operand(self, word: int, major: str, lbo: int, rows: int, cols: int, a: bool, dt) -> np.ndarray:
    """A (64 x 16, rows m) or B (16 x N, cols n) of one wgmma as the hardware reads it through its descriptor (PTX ISA,
    "shared memory matrix layout", 128-byte swizzle): element (mn, k) of a K-major operand at byte
    start + (mn//8)*SBO + (mn%8)*128 + 2k, of an MN-major one at start + (mn//64)*LBO + (k//8)*SBO + (k%8)*128 +
    2(mn%64), SBO = 1024; then address bits 4-6 XOR bits 7-9."""
    out = np.zeros((rows, cols), np.float64)
    for r in range(rows):
      for c in range(cols):
        mn, k = (r, c) if a else (c, r)
        off = (mn // 8) * 1024 + (mn % 8) * 128 + 2 * k if major == "k" else \
          (mn // 64) * lbo + (k // 8) * 1024 + (k % 8) * 128 + 2 * (mn % 64)
        addr = 4 * word + off
        addr ^= ((addr >> 7) & 7) << 4
        half = (int(self.shared[addr // 4]) >> (16 * ((addr // 2) % 2))) & 0xFFFF
        out[r, c] = to_float(np.array([half], np.uint16), dt)[0]
    return out

  def wgmma(self, u: UOp, env: dict):
    """A warpgroup's m64nNk16 from its two start words in shared memory: each warpgroup of the block's threads at
    once."""
    n = wgmma_n(u.arg.layout)
    assert n is not None, u.arg.layout
    (_, creg), coff, _ = env[u.src[0]]
    aw, bw = (np.broadcast_to(np.asarray(env[s][1], np.int64), (self.T,)) for s in u.src[1:3])
    (ma, la), (mb, lb) = u.arg.smem
    co = int(np.broadcast_to(coff, (self.T,))[0])
    lane = np.arange(128)
    acc = None if len(u.src) < 4 else np.broadcast_to(np.asarray(env[u.src[3]]), (self.T,))
    for g in range(self.T // 128):
      th = g * 128 + lane
      if not self.lanes[th].all(): continue   # (another executor's warpgroup)
      if len(set(aw[th])) != 1 or len(set(bw[th])) != 1:
        raise AssertionError("gpu_interp: a warpgroup's threads disagree on a wgmma operand's start")
      A = self._wgmma_operand(int(aw[th[0]]), ma, la, 64, 16, True, u.arg.dtype_in)
      B = self._wgmma_operand(int(bw[th[0]]), mb, lb, 16, n, False, u.arg.dtype_in)
      C = np.zeros((64, n))
      if acc is not None and len(set(acc[th].tolist())) != 1:
        raise AssertionError("gpu_interp: a warpgroup's threads disagree on wgmma's accumulate flag")
      if acc is None or acc[th[0]]:   # (0: D = A @ B)
        for i in range(n // 2): C[wgmma_c(lane, i)] = self.regs[creg][th, co + i]
      D = (A @ B + C).astype(np.float32)
      for i in range(n // 2): self.regs[creg][th, co + i] = D[wgmma_c(lane, i)]

  def wmma(self, u: UOp, env: dict):
    if u.arg.smem is not None:
      e = {s: env[s] for s in u.src}
      self.wg_groups[-1].append(lambda: self.wgmma(u, e))
      return
    t = LAYOUTS[u.arg.layout]
    (_, creg), coff, _ = env[u.src[0]]
    (_, areg), aoff, _ = env[u.src[1]]
    (_, breg), boff, _ = env[u.src[2]]
    co, ao, bo = (int(np.broadcast_to(x, (self.T,))[0]) for x in (coff, aoff, boff))
    W = self.T // t.lanes
    def halves(reg, off, n):   # (W, lanes, n) values from n/2 words per lane (TF32: n words, rounded)
      if u.arg.dtype_in == dtypes.float32:
        return to_tf32(self.regs[reg][:, off:off + n].astype(np.uint32).view(np.float32).reshape(W, t.lanes, n))
      words = self.regs[reg][:, off:off + n // 2].astype(np.uint32).reshape(W, t.lanes, n // 2)
      h = np.stack([words & 0xFFFF, words >> 16], -1).reshape(W, t.lanes, n)
      return to_float(h, u.arg.dtype_in)
    def place(vals, fmap, shape, n):
      out, seen = np.zeros((W,) + shape, np.float64), np.zeros(shape, bool)
      for lane in range(t.lanes):
        for i in range(n):
          at = (slice(None),) + fmap(lane, i)
          # lanes that hold an element twice (RDNA3's A and B in lanes 16-31) must hold the same value
          if seen[fmap(lane, i)] and not np.array_equal(out[at], vals[:, lane, i]):
            raise AssertionError(f"gpu_interp: lanes disagree on element {fmap(lane, i)} of a {u.arg.layout} operand")
          out[at], seen[fmap(lane, i)] = vals[:, lane, i], True
      return out
    A = place(halves(areg, ao, t.elems[0]), t.a, (t.m, t.k), t.elems[0])
    B = place(halves(breg, bo, t.elems[1]), t.b, (t.k, t.n), t.elems[1])
    C = place(self.regs[creg][:, co:co + t.elems[2]].reshape(W, t.lanes, t.elems[2]), t.c, (t.m, t.n), t.elems[2])
    D = (A @ B + C).astype(np.float32)
    for lane in range(t.lanes):
      for i in range(t.elems[2]):
        self.regs[creg][np.arange(W) * t.lanes + lane, co + i] = D[(slice(None),) + t.c(lane, i)]

  def run(self, block_idx: dict[UOp, int]):
    """Run the kernel's uops for this executor's lanes (a generator: it yields while blocked)."""
    env = Env()
    loops: list = []
    pos = 0
    uops = self.uops
    ends = {u.src[0]: i for i, u in enumerate(uops) if u.op is Ops.END}
    cta = self.cta
    while pos < len(uops):
      u = uops[pos]
      op = u.op
      self.steps += 1
      if op is Ops.DEFINE_GLOBAL: env[u] = ("g", u.arg[0])
      elif op is Ops.TENSOR_MAP: env[u] = ("tmap", env[u.src[0]][1]) + tuple(u.arg[1:])
      elif op is Ops.DEFINE_LOCAL:   # (once a block: its executors share it)
        if cta.shared is None:
          cta.shared = np.zeros(u.arg[1], np.float32 if u.dtype.base == dtypes.float32 else np.uint32)
        self.shared = cta.shared
        env[u] = ("s", None)
      elif op is Ops.DEFINE_REG:
        if u not in self.regs:
          self.regs[u] = np.zeros((self.T, u.arg[1]), np.float32 if u.dtype.base == dtypes.float32 else np.uint32)
        env[u] = ("r", u)
      elif op is Ops.CONST: env[u] = u.arg
      elif op is Ops.RANGE:
        if u.arg[1] is AxisType.GLOBAL: env[u] = block_idx[u]
        elif u.arg[1] is AxisType.LOCAL: env[u] = np.arange(self.T)
        else:   # (a trip count may differ between threads: the same for this executor's)
          n = np.broadcast_to(np.asarray(env[u.src[0]]), (self.T,))[self.lanes]
          if len(set(n.tolist())) != 1:
            raise AssertionError("gpu_interp: an executor's threads disagree on a trip count")
          if n[0] <= 0:
            pos = ends[u] + 1
            continue
          env[u] = 0
          loops.append((pos, u, int(n[0])))
      elif op is Ops.END:
        r = u.src[0]
        if r.arg[1] not in (AxisType.GLOBAL, AxisType.LOCAL):
          env[r] += 1
          if env[r] < loops[-1][2]:
            pos = loops[-1][0] + 1
            continue
          loops.pop()
      elif op is Ops.INDEX: env[u] = (env[u.src[0]], env[u.src[1]], env[u.src[2]] if len(u.src) > 2 else None)
      elif op is Ops.LOAD:
        ref, idx, gate = env[u.src[0]]
        env[u] = self._read(ref, idx, gate, u.dtype)
      elif op is Ops.STORE:
        ref, idx, gate = env[u.src[0]]
        self._write(ref, idx, gate, env[u.src[1]], u.src[1].dtype)
      elif op is Ops.WHERE: env[u] = np.where(env[u.src[0]], env[u.src[1]], env[u.src[2]])
      elif op in ALU: env[u] = ALU[op](*[env[s] for s in u.src])
      elif op is Ops.CAST:
        x = env[u.src[0]]
        if u.dtype in (dtypes.float16, dtypes.bfloat16): env[u] = _round(x, u.dtype)
        elif u.dtype.kind == "f": env[u] = np.asarray(x, np.float32)
        elif u.dtype == dtypes.bool: env[u] = np.asarray(x) != 0
        else: env[u] = np.asarray(x).astype(np.int64)
      elif op is Ops.BITCAST:
        x = np.asarray(env[u.src[0]])
        env[u] = x.astype(np.uint32).view(np.float32) if u.dtype == dtypes.float32 else \
          x.astype(np.float32).view(np.uint32)
      elif op is Ops.CUSTOM:
        try: yield from self.custom(u, env)
        except _Return: return
      elif op is Ops.WMMA: self.wmma(u, env)
      elif op is Ops.BARRIER: yield from self._barrier(cta.bar, cta.executors)
      elif op in (Ops.SINK, Ops.NOOP): pass
      elif op in GroupOp.ALU: raise NotImplementedError(f"gpu_interp: no rule for {op}")
      else: raise NotImplementedError(f"gpu_interp: no rule for {op}")
      pos += 1

def _drive(execs: list[tuple[Block, dict]]):
  """Run executors in turn, each until it blocks, until all are done; none able to move on is a deadlock."""
  live = [(b, b.run(idx)) for b, idx in execs]
  while live:
    before = sum(b.steps for b, _ in live)
    nxt = []
    for b, g in live:
      try:
        next(g)
        nxt.append((b, g))
      except StopIteration: pass
    if len(nxt) == len(live) and sum(b.steps for b, _ in nxt) == before:
      raise AssertionError("gpu_interp: deadlock: every thread waits (an mbarrier phase or a barrier never completes)")
    live = nxt

def run_kernel(uops: list[UOp], bufs: dict[int, np.ndarray], threads: int):
  """Run a linearized kernel over its whole grid; `bufs` (slot -> raw 1-D array: 16-bit floats as uint16 bits) are
  updated in place."""
  glob = sorted({u for u in uops if u.op is Ops.RANGE and u.arg[1] is AxisType.GLOBAL}, key=lambda r: r.arg[0])
  sizes = [r.src[0].arg for r in glob]
  # warp-specialised: an executor per warpgroup
  split = any(u.op is Ops.RANGE and u.arg[1] is AxisType.LOOP and u.src[0].op is not Ops.CONST for u in uops)
  groups = [np.arange(threads)] if not split else [np.arange(i, min(i + 128, threads)) for i in range(0, threads, 128)]
  for flat in range(int(np.prod(sizes)) if sizes else 1):
    idx, rest = {}, flat
    for r, s in zip(reversed(glob), reversed(sizes)):
      idx[r], rest = rest % s, rest // s
    cta = CTA(threads)
    cta.executors = len(groups)
    execs = []
    for g in groups:
      lanes = np.zeros(threads, bool)
      lanes[g] = True
      execs.append((b := Block(uops, threads, bufs, cta, lanes), idx))
      b._groups = groups
    _drive(execs)
