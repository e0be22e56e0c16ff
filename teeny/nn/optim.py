"""Optimizers (SGD, Adam, AdamW, LAMB), gradient clipping and learning-rate schedules.

The learning rate is a Tensor the optimizer holds, so a schedule changes a buffer, never a kernel. `step()` builds every
update lazily and realizes them (params and optimizer state) in one `Tensor.realize` call.
"""
from __future__ import annotations
import math
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes

def _dedup(ts: list[Tensor]) -> list[Tensor]: return list({id(t): t for t in ts}.values())

class Optimizer:
  """Holds the parameters that require grad, the learning rate (a Tensor) and a step counter. Tensors handed over that
  don't require grad (BatchNorm's running statistics) are not updated, but realized with every step, as in tinygrad:
  their pending lazy updates then run in the same schedule as the step, reading the weights the step overwrites."""
  def __init__(self, params: list[Tensor], lr: float):
    params = list(params)
    for p in params:
      # tinygrad: an unset float tensor handed to an optimizer is trained
      if p.requires_grad is None and dtypes.is_float(p.dtype): p.requires_grad = True
    self.params: list[Tensor] = _dedup([p for p in params if p.requires_grad])
    if not self.params: raise ValueError("optimizer got no parameters that require grad")
    self.buffers: list[Tensor] = _dedup([p for p in params if not p.requires_grad])
    self.device = self.params[0].device
    self.lr = Tensor([float(lr)], dtype=dtypes.float32, device=self.device).contiguous().realize()
    self.steps = Tensor([0], dtype=dtypes.int32, device=self.device).contiguous().realize()
    self.lr.requires_grad = self.steps.requires_grad = False

  def _zeros_like_params(self) -> list[Tensor]:
    # from host memory: identical lazy zeros realized together would share one buffer
    out = [Tensor(np.zeros(p.shape, np.float32), dtype=p.dtype, device=p.device) for p in self.params]
    for t in out: t.requires_grad = False
    return out

  def zero_grad(self):
    for p in self.params: p.grad = None

  def state_tensors(self) -> list[Tensor]:
    """The optimizer's own state (not the params), realized with every step."""
    return [self.steps]

  def step(self):
    """Apply one update to every param from its .grad (params without a grad are left alone)."""
    Tensor.realize(*self.schedule_step())

  def schedule_step(self) -> list[Tensor]:
    """Assign the updates lazily and return the tensors to realize."""
    live = [(i, p) for i, p in enumerate(self.params) if p.grad is not None]
    if not live: raise RuntimeError("optimizer step with no gradients: call loss.backward() first")
    self.steps.assign(self.steps + 1)
    with Tensor.no_grad():
      self._update(live)
    return [p for _, p in live] + self.state_tensors() + self.buffers

  def _update(self, live: list[tuple[int, Tensor]]): raise NotImplementedError

class SGD(Optimizer):
  """SGD with optional momentum (torch's: buf = m*buf + g, the first buf being g), Nesterov and L2 weight decay."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, momentum: float = 0.0, weight_decay: float = 0.0,
               nesterov: bool = False):
    super().__init__(params, lr)
    if nesterov and momentum <= 0: raise ValueError("nesterov momentum requires momentum > 0")
    self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
    self.b = self._zeros_like_params() if momentum else []

  def state_tensors(self): return super().state_tensors() + self.b

  def _update(self, live):
    for i, t in live:
      g = t.grad.cast(t.dtype)
      if self.wd: g = g + self.wd * t.detach()
      if self.momentum:
        self.b[i].assign(self.momentum * self.b[i] + g)  # zero on the first step, so buf = g as in torch
        g = g + self.momentum * self.b[i] if self.nesterov else self.b[i]
      t.assign((t.detach() - g * self.lr.reshape(()).cast(t.dtype)).cast(t.dtype))

class LAMB(Optimizer):
  """LAMB (You et al. 2019): Adam's update scaled per tensor by the trust ratio ||w|| / ||update||.

  adam=True drops the trust ratio (that is AdamW); decoupled=False adds weight decay to the gradient (Adam's L2).
  Each param keeps its own step count (param_steps, one int32 vector), as torch's: a param without a grad at some step
  is skipped then, and its bias corrections 1 - b**t count only the steps it took. They are computed as
  -expm1(t * log(b)), accurate in float32 where 1 - b**t from a float32 b**t loses digits (1 - 0.999f is off by 5e-5).
  """
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6,
               weight_decay: float = 0.0, adam: bool = False, decoupled: bool = True):
    super().__init__(params, lr)
    if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0): raise ValueError(f"betas must be in [0, 1), got ({b1}, {b2})")
    self.b1, self.b2, self.eps, self.wd, self.adam, self.decoupled = b1, b2, eps, weight_decay, adam, decoupled
    self.param_steps = Tensor(np.zeros(len(self.params), np.int32), dtype=dtypes.int32,
                              device=self.device).contiguous().realize()
    self.param_steps.requires_grad = False
    self.m, self.v = self._zeros_like_params(), self._zeros_like_params()

  def state_tensors(self): return super().state_tensors() + [self.param_steps] + self.m + self.v

  def _increments(self, live: set[int]) -> Tensor | int:
    """1 for the params that step now, 0 for the others (kernel constants: runs of equal values, concatenated)."""
    n = len(self.params)
    if len(live) == n: return 1
    runs: list[tuple[int, int]] = []
    for i in range(n):
      v = int(i in live)
      if runs and runs[-1][0] == v: runs[-1] = (v, runs[-1][1] + 1)
      else: runs.append((v, 1))
    parts = [Tensor.full((k,), v, dtype=dtypes.int32, device=self.device) for v, k in runs]
    return parts[0].cat(*parts[1:]) if len(parts) > 1 else parts[0]

  @staticmethod
  def _correction(b: float, t: Tensor) -> Tensor:
    """1 - b**t for t >= 1."""
    return -(t * math.log(b)).expm1() if b > 0 else t.full_like(1.0)

  def _update(self, live):
    self.param_steps.assign(self.param_steps + self._increments({i for i, _ in live}))
    t = self.param_steps.cast(dtypes.float32)
    c1, c2 = self._correction(self.b1, t), self._correction(self.b2, t)
    for i, p in live:
      c1i, c2i = c1[i].cast(p.dtype), c2[i].cast(p.dtype)
      g = p.grad.cast(p.dtype)
      if self.wd and not self.decoupled: g = g + self.wd * p.detach()
      self.m[i].assign(self.b1 * self.m[i] + (1.0 - self.b1) * g)
      self.v[i].assign(self.b2 * self.v[i] + (1.0 - self.b2) * (g * g))
      up = (self.m[i] / c1i) / ((self.v[i] / c2i).sqrt() + self.eps)
      if self.wd and self.decoupled: up = up + self.wd * p.detach()
      if not self.adam:
        r1, r2 = (p.detach() * p.detach()).sum().sqrt(), (up * up).sum().sqrt()
        up = up * ((r1 > 0) & (r2 > 0)).where(r1 / r2, 1.0)
      p.assign((p.detach() - self.lr.reshape(()).cast(p.dtype) * up).cast(p.dtype))

class Adam(LAMB):
  """Adam; weight_decay is torch's coupled L2 (added to the gradient)."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
               weight_decay: float = 0.0):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=False)

class AdamW(LAMB):
  """AdamW: weight decay decoupled from the gradient (p -= lr * wd * p), as in torch."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
               weight_decay: float = 0.01):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=True)

def clip_grad_norm_(params: list[Tensor], max_norm: float, eps: float = 1e-6) -> Tensor:
  """Scale all grads so their global L2 norm is at most max_norm (torch's formula); returns the norm before clipping."""
  grads = [(p, g) for p in _dedup(list(params)) if (g := p.grad) is not None]
  if not grads: return Tensor([0.0]).sum()
  total = Tensor.stack(*[(g.float() * g.float()).sum() for _, g in grads]).sum().sqrt()
  coef = (max_norm / (total + eps)).minimum(1.0)
  for p, g in grads: p.grad = (g * coef.cast(g.dtype)).contiguous()
  return total

# ***** learning-rate schedules *****

class LRScheduler:
  """Sets optimizer.lr from a closed form of the number of .step() calls; lr at construction is the step-0 value."""
  def __init__(self, optimizer: Optimizer):
    self.optimizer = optimizer
    self.base_lr = float(optimizer.lr.numpy().reshape(-1)[0])
    self.last_epoch = 0
    self._set(self.lr_at(0))

  def lr_at(self, epoch: int) -> float: raise NotImplementedError
  def _set(self, lr: float):
    self.optimizer.lr.assign(Tensor([lr], dtype=self.optimizer.lr.dtype, device=self.optimizer.lr.device)).realize()
  def get_lr(self) -> float: return self.lr_at(self.last_epoch)
  def step(self):
    self.last_epoch += 1
    self._set(self.lr_at(self.last_epoch))
  def state_dict(self) -> dict: return {"last_epoch": self.last_epoch, "base_lr": self.base_lr}
  def load_state_dict(self, sd: dict):
    self.last_epoch, self.base_lr = int(sd["last_epoch"]), float(sd["base_lr"])
    self._set(self.lr_at(self.last_epoch))

class StepLR(LRScheduler):
  """lr = base_lr * gamma ** (epoch // step_size)."""
  def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1):
    self.step_size, self.gamma = step_size, gamma
    super().__init__(optimizer)
  def lr_at(self, epoch: int) -> float: return self.base_lr * self.gamma ** (epoch // self.step_size)

class CosineAnnealingLR(LRScheduler):
  """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""
  def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0):
    self.T_max, self.eta_min = T_max, eta_min
    super().__init__(optimizer)
  def lr_at(self, epoch: int) -> float:
    return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2

class LinearWarmup(LRScheduler):
  """Ramp linearly from start_factor*base_lr to base_lr over warmup_steps (torch's LinearLR), then hand over to `after`
  (another schedule on the same optimizer, started at its step 0)."""
  def __init__(self, optimizer: Optimizer, warmup_steps: int, after: LRScheduler | None = None,
               start_factor: float | None = None):
    if warmup_steps < 1: raise ValueError(f"warmup_steps must be >= 1, got {warmup_steps}")
    self.warmup_steps, self.after = warmup_steps, after
    self.start_factor = 1.0 / warmup_steps if start_factor is None else start_factor
    super().__init__(optimizer)
    if after is not None: self.base_lr = after.base_lr
    self._set(self.lr_at(0))
  def lr_at(self, epoch: int) -> float:
    if epoch >= self.warmup_steps and self.after is not None: return self.after.lr_at(epoch - self.warmup_steps)
    frac = min(epoch, self.warmup_steps) / self.warmup_steps
    return self.base_lr * (self.start_factor + (1 - self.start_factor) * frac)
