"""Cross-entropy and NLL losses whose backward is one kernel: a masked store for each row, then one atomic at the target
column (the only address that comes from data), honouring ignore_index.

  cross_entropy:  dlogits[r, c] = g_r * softmax(logits)[r, c]  (stored for the whole row), then dlogits[r, t_r] -= g_r
  nll_loss:       dlogp[r, c]   = 0                             (stored for the whole row), then dlogp[r, t_r]   -= g_r

g_r is the upstream gradient of row r's loss (divided by the number of valid rows, or the summed class weights, for
reduction='mean'); rows whose target is ignore_index (or outside [0, C)) get an all-zero gradient. One program per row
on the CPU (the columns a serial loop, the atomic after it). On GPUs one block per row writes every element once,
subtracting g_r at the target column itself (no atomic), and cross_entropy's forward is one kernel too (ce_rows: each
row's loss, logsumexp and validity, the logits read once).
"""
from __future__ import annotations
import functools
from dataclasses import dataclass
from typing import cast
from teeny.dtype import dtypes
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp
from teeny.kernels.common import Barriers, acc_dtype, at, block_threads, block_tree, in_range, is_gpu, read, \
  use_custom_kernels, with_grad

UNROLL = 4   # elements per thread and step in the GPU row kernels

def _row_grad(g: UOp, scale: UOp | None, r: UOp, n: int, valid: UOp, dt) -> UOp:
  """Row r's upstream gradient: g (one per row, or one for all) times scale (1 / the valid rows for 'mean'), 0 on
  ignored rows."""
  gv = g.index(r if g.arg[1][0] == n else 0).load().cast(dt)
  if scale is not None: gv = gv * scale.index(0).load().cast(dt)
  return valid.where(gv, UOp.const(dt, 0.0))

@functools.lru_cache(maxsize=64)
def _nll_bwd_kernel(dx: UOp, g: UOp, target: UOp, logits: UOp | None, lse: UOp | None, scale: UOp | None,
                    ignore_index: int, gpu: bool) -> UOp:
  """(Cached: equal placeholders give the same SINK without building it again, about 0.3 ms a call.)"""
  (n, nc) = dx.arg[1]
  name = f"{'ce' if logits is not None else 'nll'}_bwd_{n}_{nc}"
  if gpu: return _bwd_rows(dx, g, target, logits, lse, scale, ignore_index, name)
  r = UOp.range(n, 0, AxisType.GLOBAL)
  c = UOp.range(nc, 1, AxisType.LOOP)
  t = target.index(r).load()
  valid = _target_ok(t, nc, ignore_index)
  gr = _row_grad(g, scale, r, n, valid, dx.dtype.base)
  zero = UOp.const(dx.dtype.base, 0.0)
  if logits is not None:
    # the mask is on the row's scalar, not on each element: exp under a condition does not vectorise (416 vs 150 ms
    # for 8192x32000); ignored rows still store 0 (their p is finite: p * 0)
    lse = cast(UOp, lse)  # given with the logits
    p = (logits.index(r * nc + c).load().cast(dx.dtype.base) - lse.index(r).load().cast(dx.dtype.base)).alu(Ops.EXP)
    row = p * gr
  else: row = zero
  store = dx.index(r * nc + c).store(row)
  col = valid.where(t, UOp.const(t.dtype, 0)).cast(dtypes.index)
  atomic = dx.index(r * nc + col).atomic("add", -gr, mask=valid, sem=MemSem.Relaxed)
  return UOp.sink(store.end(c), atomic, arg=KernelInfo(name=name, opts_to_apply=()))

def _target_ok(t: UOp, nc: int, ignore_index: int | None) -> UOp:
  return in_range(t, nc).alu(Ops.AND, t.ne(ignore_index)) if ignore_index is not None else in_range(t, nc)

def _bwd_rows(dx: UOp, g: UOp, target: UOp, logits: UOp | None, lse: UOp | None, scale: UOp | None,
              ignore_index: int, name: str) -> UOp:
  """GPUs: one block per row (consecutive blocks read consecutive memory); each thread walks the row in block-sized
  steps and stores p * g_r, minus g_r at the target column: every element written once, no atomic."""
  (n, nc) = dx.arg[1]
  dt = dx.dtype.base
  T = block_threads(nc)
  r, tid = UOp.range(n, 0, AxisType.GLOBAL), UOp.range(T, 1, AxisType.LOCAL)
  t = read(at(target, r))
  valid = _target_ok(t, nc, ignore_index)
  gr = _row_grad(g, scale, r, n, valid, dt)
  j = UOp.range(-(-nc // (T * UNROLL)), 2, AxisType.LOOP)
  zero = UOp.const(dt, 0.0)
  stores = []
  for u in range(UNROLL):   # UNROLL elements a step, at the block's stride: their loads in flight together
    i = (j * UNROLL + u) * T + tid
    ok = i < nc
    hit = i.cast(t.dtype).eq(t).where(gr, zero)
    if logits is not None:
      p = (read(at(logits, r * nc + i, ok)).cast(dt) - read(at(cast(UOp, lse), r)).cast(dt)).alu(Ops.EXP)
      d = p * gr - hit
    else: d = -hit
    stores.append(at(dx, r * nc + i, ok).store(d))
  return UOp.sink(*stores[:-1], stores[-1].end(j), arg=KernelInfo(name=name, opts_to_apply=()))

def _ref(m: UOp) -> UOp:
  """The point a row's exponentials are taken from: its max, or 0 where the max is infinite (as Tensor.logsumexp)."""
  inf = UOp.const(m.dtype, float("inf"))
  return m.eq(inf).alu(Ops.OR, m.eq(-inf)).where(UOp.const(m.dtype, 0.0), m)

def _rescale(s: UOp, m_from: UOp, ref_to: UOp) -> UOp:
  """A partial sum of exp(x - _ref(m_from)) as a sum of exp(x - ref_to); an empty one (0) stays 0 (no 0 * inf)."""
  zero = UOp.const(s.dtype, 0.0)
  return s.eq(zero).where(zero, s * (_ref(m_from) - ref_to).alu(Ops.EXP))

@functools.lru_cache(maxsize=64)
def _fwd_rows(out: UOp, lse_out: UOp, x: UOp, target: UOp, ignore_index: int) -> UOp:
  """GPUs: (2, n) = each row's loss and whether its target counts, and (n,) its logsumexp, one block per row reading
  the row once. Each thread keeps a running max m and sum s of exp(x - m) over its elements (rescaled when m grows),
  then the block combines the pairs as a tree. (Cached: equal placeholders give the same SINK without building it
  again.)"""
  (n, nc) = x.arg[1]
  f32 = dtypes.float32
  T = block_threads(nc)
  r, tid = UOp.range(n, 0, AxisType.GLOBAL), UOp.range(T, 1, AxisType.LOCAL)
  smem = UOp(Ops.DEFINE_LOCAL, f32.ptr(), (), (0, 2 * T))
  reg = UOp(Ops.DEFINE_REG, f32.ptr(), (), (1, 2))   # this thread's m and s
  eff: list[UOp] = [at(reg, 0).store(UOp.const(f32, float("-inf"))), at(reg, 1).store(UOp.const(f32, 0.0))]
  # UNROLL elements a step at a block's stride: their loads are in flight together (one at a time, the loop waited on
  # each: 1.7 TB/s on the H200)
  j = UOp.range(-(-nc // (T * UNROLL)), 2, AxisType.LOOP)
  idx = [(j * UNROLL + u) * T + tid for u in range(UNROLL)]
  oks = [i < nc for i in idx]
  vs = [read(at(x, r * nc + i, ok)).cast(f32) for i, ok in zip(idx, oks)]
  m_old, s_old = read(at(reg, 0)), read(at(reg, 1))
  ninf, zero = UOp.const(f32, float("-inf")), UOp.const(f32, 0.0)
  m_new = m_old
  for v, ok in zip(vs, oks): m_new = m_new.alu(Ops.MAX, ok.where(v, ninf))
  s_new = _rescale(s_old, m_old, _ref(m_new))
  for v, ok in zip(vs, oks): s_new = s_new + ok.where((v - _ref(m_new)).alu(Ops.EXP), zero)
  eff += [at(reg, 0).store(m_new), at(reg, 1).store(s_new).end(j)]
  def combine(a: list[UOp], b: list[UOp]) -> list[UOp]:
    m = a[0].alu(Ops.MAX, b[0])
    return [m, _rescale(a[1], a[0], _ref(m)) + _rescale(b[1], b[0], _ref(m))]
  barrier = Barriers()
  done = barrier()   # the registers read after the loop are new reads (not the loop's, which hash-consing would reuse)
  eff.append(done)
  red, (m, s) = block_tree(smem, (0, T), tid, T, [read(at(reg, 0), done), read(at(reg, 1), done)], combine, barrier)
  lse = s.alu(Ops.LOG) + _ref(m)
  t = read(at(target, r))
  valid = _target_ok(t, nc, ignore_index)
  picked = read(at(x, r * nc + valid.where(t, UOp.const(t.dtype, 0)).cast(dtypes.index), valid)).cast(f32)
  zero = UOp.const(f32, 0.0)
  first = tid.eq(0)
  eff += red + [at(out, r, first).store(valid.where(lse - picked, zero)), at(lse_out, r, first).store(lse),
                at(out, n + r, first).store(valid.where(UOp.const(f32, 1.0), zero))]
  return UOp(Ops.SINK, dtypes.void, tuple(eff), KernelInfo(name=f"ce_fwd_{n}_{nc}", opts_to_apply=()))

def ce_rows(logits: Tensor, target: Tensor, ignore_index: int = -100) -> tuple[Tensor, Tensor]:
  """For (N, C) logits on a GPU, one kernel reading the logits once: (2, N) float32 of each row's loss (0 where the
  target is ignore_index or out of range) and 1.0 where its target counts (else 0.0), and (N,) its logsumexp."""
  n, _ = logits.shape
  out, lse = Tensor.empty(2 * n, dtype=dtypes.float32, device=logits.device), \
    Tensor.empty(n, dtype=dtypes.float32, device=logits.device)
  res = out.custom_kernel(lse, logits, target, fxn=lambda o, ls, x, t: _fwd_rows(o, ls, x, t, ignore_index))
  return res[0].reshape(2, n), res[1]

def _row_grads(g: Tensor, valid: Tensor, reduction: str, weight_rows: Tensor | None) -> Tensor:
  """The upstream gradient of each row's loss: (N,), zero on ignored rows."""
  n = valid.shape[0]
  w = valid.where(weight_rows if weight_rows is not None else 1.0, 0.0).cast(g.dtype)
  if reduction == "none": return g * w
  if reduction == "sum": return g.reshape(1).expand(n) * w
  return g.reshape(1).expand(n) * w / w.sum()

def cross_entropy_bwd(logits: Tensor, target: Tensor, lse: Tensor, grad_rows: Tensor,
                      ignore_index: int = -100, scale: Tensor | None = None) -> Tensor:
  """d(loss)/d(logits) for per-row losses lse[r] - logits[r, target[r]] with upstream gradients grad_rows ((N,), or
  one value for every row), times scale (one value) where given."""
  n, nc = logits.shape
  dt = acc_dtype(logits.dtype)
  dx = Tensor.empty(n, nc, dtype=dt, device=logits.device)
  gpu = is_gpu(logits.device)
  ins = (grad_rows.reshape(-1).cast(dt), target, logits, lse.reshape(n).cast(dt))
  if scale is None:
    return dx.custom_kernel(*ins, fxn=lambda o, gr, t, lg, ls: _nll_bwd_kernel(o, gr, t, lg, ls, None, ignore_index,
                                                                             gpu))[0]
  return dx.custom_kernel(*ins, scale.reshape(1).cast(dt), fxn=lambda o, gr, t, lg, ls, sc: _nll_bwd_kernel(
    o, gr, t, lg, ls, sc, ignore_index, gpu))[0]

def nll_bwd(grad_rows: Tensor, target: Tensor, num_classes: int, ignore_index: int = -100,
            dtype=dtypes.float32) -> Tensor:
  """d(loss)/d(logp) for per-row losses -logp[r, target[r]] with upstream gradients grad_rows (N,)."""
  n = target.shape[0]
  dx = Tensor.empty(n, num_classes, dtype=dtype, device=target.device)
  gpu = is_gpu(target.device)
  return dx.custom_kernel(grad_rows.cast(dtype), target,
                          fxn=lambda o, gr, t: _nll_bwd_kernel(o, gr, t, None, None, None, ignore_index, gpu))[0]

def _covered(x: Tensor, target: Tensor) -> bool:
  """Whether the kernel covers this call: (N, C) input, (N,) integer class targets."""
  return x.ndim == 2 and target.ndim == 1 and target.shape[0] == x.shape[0] and dtypes.is_int(target.dtype)

def covers_cross_entropy(logits: Tensor, target: Tensor, reduction: str = "mean", label_smoothing: float = 0.0) -> bool:
  """Whether cross_entropy runs the hand-written backward for this call (else it is Tensor.cross_entropy): route
  Tensor.cross_entropy here only when this is true, since the fallback calls it."""
  return use_custom_kernels() and not label_smoothing and _covered(logits, target) and \
    reduction in ("mean", "sum", "none")

def covers_nll_loss(logp: Tensor, target: Tensor, reduction: str = "mean") -> bool:
  """Whether nll_loss runs the hand-written backward for this call (else it is Tensor.nll_loss)."""
  return use_custom_kernels() and _covered(logp, target) and reduction in ("mean", "sum", "none")

@dataclass(frozen=True)
class CrossEntropyGrad:
  """grad_fxn of cross_entropy: (grad of the loss, logits, target, lse[, 1 / valid rows]) -> gradients (frozen: equal
  across steps). The kernel masks ignored rows and scales by the upstream gradient itself: no row-gradient graph."""
  reduction: str
  ignore_index: int
  def __call__(self, g: Tensor, logits: Tensor, target: Tensor, lse: Tensor, *scale: Tensor) -> tuple:
    d = cross_entropy_bwd(logits, target, lse, g, self.ignore_index, scale[0] if scale else None)
    return (d.cast(logits.dtype), None, None) + ((None,) if scale else ())

@dataclass(frozen=True)
class NLLGrad:
  """grad_fxn of nll_loss: (grad of the loss, logp, target[, class weights]) -> gradients (frozen: equal across
  steps)."""
  reduction: str
  ignore_index: int
  def __call__(self, g: Tensor, logp: Tensor, target: Tensor, *weight: Tensor) -> tuple:
    nc = logp.shape[1]
    valid = _valid(target, nc, self.ignore_index)
    wr = weight[0]._gather(0, valid.where(target, 0).cast(dtypes.int32)) if weight else None  # in range: no check
    d = nll_bwd(_row_grads(g, valid, self.reduction, wr), target, nc, self.ignore_index, acc_dtype(logp.dtype))
    return (d.cast(logp.dtype), None, *((None,) if weight else ()))

def _valid(target: Tensor, nc: int, ignore_index: int) -> Tensor:
  return (target != ignore_index) & (target >= 0) & (target < nc)

def cross_entropy(logits: Tensor, target: Tensor, reduction: str = "mean", ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> Tensor:
  """F.cross_entropy on (N, C) logits and (N,) class ids, its backward the one-pass kernel cross_entropy_bwd.

  Other cases (probability targets, label smoothing, more dims) and TEENY_CUSTOM_KERNELS=0 use Tensor.cross_entropy."""
  if not covers_cross_entropy(logits, target, reduction, label_smoothing):
    return logits.cross_entropy(target, reduction=reduction, label_smoothing=label_smoothing, ignore_index=ignore_index)
  n, nc = logits.shape
  logits._check_targets(target, nc, ignore_index, "cross_entropy")
  x = logits.detach()
  if gpu := is_gpu(x.device):   # one kernel: each row's loss, logsumexp and validity, the logits read once
    stats, lse = ce_rows(x, target, ignore_index)
    rows, count = stats[0], stats[1].sum()
  else:   # the graph's reductions (vectorised on the CPU)
    lse = x.cast(acc_dtype(x.dtype)).logsumexp(1).contiguous()
    valid = _valid(target, nc, ignore_index)
    picked = x.cast(lse.dtype)._gather(1, valid.where(target, 0).cast(dtypes.int32).unsqueeze(1)).reshape(n)
    rows = valid.where(lse - picked, 0.0)
    if reduction == "mean": count = valid.sum().cast(rows.dtype)
  # lse (and 1 / the valid rows) are inputs of the backward, so it reuses the forward's instead of reducing again
  extra: tuple[Tensor, ...] = ()
  if reduction == "none": loss = rows
  elif reduction == "sum": loss = rows.sum()
  else:
    loss = rows.sum() / count
    extra = ((1.0 / count).reshape(1),)
  return with_grad(loss.cast(logits.dtype), (logits, target, lse) + extra, CrossEntropyGrad(reduction, ignore_index),
                   f"ce_loss_{n}_{nc}" if gpu else f"ce_fwd_{n}_{nc}")

def route_cross_entropy(logits: Tensor, target: Tensor, reduction: str, label_smoothing: float,
                        ignore_index: int) -> Tensor | None:
  """Tensor.cross_entropy through the hand-written backward where that pays, else None (the fused graph).

  (N, C) logits and class ids: the backward is one masked store per row plus an atomic. On the CPU, 8192x32000
  forward and backward take 230 ms this way and 308 ms as the fused graph; for small ones (a 128x10 batch) the graph's
  fewer launches win (120 vs 115 MLP steps/s), so they stay graphs."""
  if isinstance(logits.device, tuple): return None   # several devices: the graph (engine/multi.py lowers it)
  if hasattr(target, "uop") and logits.requires_grad and (is_gpu(logits.device) or logits.numel() >= 1 << 16) and \
     covers_cross_entropy(logits, target, reduction, label_smoothing):
    return cross_entropy(logits, target, reduction, ignore_index, label_smoothing)
  return None

def nll_loss(logp: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
  """F.nll_loss on (N, C) log-probabilities and (N,) class ids, its backward the kernel nll_bwd."""
  if not covers_nll_loss(logp, target, reduction):
    return logp.nll_loss(target, weight=weight, ignore_index=ignore_index, reduction=reduction)
  n, nc = logp.shape
  loss = logp.detach().nll_loss(target, weight=weight.detach() if weight is not None else None,
                                ignore_index=ignore_index, reduction=reduction)
  ins = (logp, target) + ((weight.detach(),) if weight is not None else ())
  return with_grad(loss, ins, NLLGrad(reduction, ignore_index), f"nll_fwd_{n}_{nc}")
