"""Cross-entropy and NLL losses whose backward is one kernel: a masked store for each row, then one atomic at the target
column (the only address that comes from data), honouring ignore_index.

  cross_entropy:  dlogits[r, c] = g_r * softmax(logits)[r, c]  (stored for the whole row), then dlogits[r, t_r] -= g_r
  nll_loss:       dlogp[r, c]   = 0                             (stored for the whole row), then dlogp[r, t_r]   -= g_r

g_r is the upstream gradient of row r's loss (divided by the number of valid rows, or the summed class weights, for
reduction='mean'); rows whose target is ignore_index (or outside [0, C)) get an all-zero gradient. One program per row
on the CPU (the columns a serial loop, the atomic after it); on GPUs one thread per element, where the thread holding
the target column does the atomic after its own store.
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import cast
from teeny.dtype import dtypes
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp
from teeny.kernels.common import acc_dtype, column_ranges, in_range, is_gpu, use_custom_kernels, with_grad

def _nll_bwd_kernel(dx: UOp, gr: UOp, target: UOp, logits: UOp | None, lse: UOp | None, ignore_index: int,
                    gpu: bool) -> UOp:
  (n, nc) = dx.arg[1]
  r = UOp.range(n, 0, AxisType.GLOBAL)
  c, cr = column_ranges(nc, gpu, 1)
  t = target.index(r).load()
  valid = in_range(t, nc).alu(Ops.AND, t.ne(ignore_index)) if ignore_index is not None else in_range(t, nc)
  g = gr.index(r).load().cast(dx.dtype.base)
  zero = UOp.const(dx.dtype.base, 0.0)
  if logits is not None:
    # the mask goes on the row's scalar, not on each element: exp under a condition does not vectorise (416 vs 150 ms
    # on the CPU for 8192x32000); ignored rows still store 0 (their p is finite: p * 0)
    lse = cast(UOp, lse)  # given with the logits
    p = (logits.index(r * nc + c).load().cast(dx.dtype.base) - lse.index(r).load().cast(dx.dtype.base)).alu(Ops.EXP)
    row = p * valid.where(g, zero)
  else: row = zero
  store = dx.index(r * nc + c).store(row)
  col = valid.where(t, UOp.const(t.dtype, 0)).cast(dtypes.index)
  if gpu:  # the thread that stored the target column adds to it, after its store
    hit = valid.alu(Ops.AND, c.eq(col))
    atomic = dx.index(r * nc + c).atomic("add", -g, mask=hit, sem=MemSem.Relaxed)
    name = f"{'ce' if logits is not None else 'nll'}_bwd_{n}_{nc}"
    return UOp.sink(store, atomic, arg=KernelInfo(name=name, opts_to_apply=()))
  atomic = dx.index(r * nc + col).atomic("add", -g, mask=valid, sem=MemSem.Relaxed)
  return UOp.sink(store.end(*cr), atomic, arg=KernelInfo(name=f"{'ce' if logits is not None else 'nll'}_bwd_{n}_{nc}",
                                                         opts_to_apply=()))

def _row_grads(g: Tensor, valid: Tensor, reduction: str, weight_rows: Tensor | None) -> Tensor:
  """The upstream gradient of each row's loss: (N,), zero on ignored rows."""
  n = valid.shape[0]
  w = valid.where(weight_rows if weight_rows is not None else 1.0, 0.0).cast(g.dtype)
  if reduction == "none": return g * w
  if reduction == "sum": return g.reshape(1).expand(n) * w
  return g.reshape(1).expand(n) * w / w.sum()

def cross_entropy_bwd(logits: Tensor, target: Tensor, lse: Tensor, grad_rows: Tensor,
                      ignore_index: int = -100) -> Tensor:
  """d(loss)/d(logits) for per-row losses lse[r] - logits[r, target[r]] with upstream gradients grad_rows (N,)."""
  n, nc = logits.shape
  dt = acc_dtype(logits.dtype)
  dx = Tensor.empty(n, nc, dtype=dt, device=logits.device)
  gpu = is_gpu(logits.device)
  return dx.custom_kernel(grad_rows.cast(dt), target, logits, lse.reshape(n).cast(dt),
                          fxn=lambda o, gr, t, lg, ls: _nll_bwd_kernel(o, gr, t, lg, ls, ignore_index, gpu))[0]

def nll_bwd(grad_rows: Tensor, target: Tensor, num_classes: int, ignore_index: int = -100,
            dtype=dtypes.float32) -> Tensor:
  """d(loss)/d(logp) for per-row losses -logp[r, target[r]] with upstream gradients grad_rows (N,)."""
  n = target.shape[0]
  dx = Tensor.empty(n, num_classes, dtype=dtype, device=target.device)
  gpu = is_gpu(target.device)
  return dx.custom_kernel(grad_rows.cast(dtype), target,
                          fxn=lambda o, gr, t: _nll_bwd_kernel(o, gr, t, None, None, ignore_index, gpu))[0]

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
  """grad_fxn of cross_entropy: (grad of the loss, logits, target, lse) -> gradients (frozen: equal across steps)."""
  reduction: str
  ignore_index: int
  def __call__(self, g: Tensor, logits: Tensor, target: Tensor, lse: Tensor) -> tuple:
    valid = _valid(target, logits.shape[1], self.ignore_index)
    d = cross_entropy_bwd(logits, target, lse, _row_grads(g, valid, self.reduction, None), self.ignore_index)
    return (d.cast(logits.dtype), None, None)

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
  # one node for the loss and the backward kernel: realized together (a training step), the row reductions run once
  lse = x.cast(acc_dtype(x.dtype)).logsumexp(1).contiguous()
  valid = _valid(target, nc, ignore_index)
  picked = x.cast(lse.dtype)._gather(1, valid.where(target, 0).cast(dtypes.int32).unsqueeze(1)).reshape(n)
  rows = valid.where(lse - picked, 0.0)
  if reduction == "none": loss = rows
  else: loss = rows.sum() if reduction == "sum" else rows.sum() / valid.sum().cast(rows.dtype)
  # lse is an input of the kernel, so the backward reuses the forward's instead of reducing the logits again
  return with_grad(loss.cast(logits.dtype), (logits, target, lse), CrossEntropyGrad(reduction, ignore_index),
                   f"ce_fwd_{n}_{nc}")

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
