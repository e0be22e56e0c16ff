"""Optimizers (SGD, Adam, AdamW, LAMB, RMSprop, Adagrad), gradient clipping and learning-rate schedules.

The learning rate is a Tensor the optimizer holds, so a schedule changes a buffer, never a kernel. `step()` builds every
update lazily and realizes them (params and optimizer state) in one `Tensor.realize` call.
"""
from __future__ import annotations
import math, numbers
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes

def _dedup(ts: list[Tensor]) -> list[Tensor]: return list({id(t): t for t in ts}.values())

def _on(t: Tensor, device) -> Tensor:
  """t on `device` (a lazy copy when it lives elsewhere): optimizer state kept on one device, used on every param's."""
  return t if t.device == device else t.to(device)

def _check_grad(where: str, i: int, p: Tensor, g: Tensor):
  """torch refuses a .grad that doesn't fit its param; teeny would broadcast or mix devices silently."""
  if tuple(g.shape) != tuple(p.shape):
    raise RuntimeError(f"{where}: param {i} has shape {tuple(p.shape)} but its .grad has shape {tuple(g.shape)}; "
                       "a gradient must have its parameter's shape (set p.grad to a tensor of that shape)")
  if g.device != p.device:
    raise RuntimeError(f"{where}: param {i} is on {p.device} but its .grad is on {g.device}; "
                       "move the gradient with p.grad = p.grad.to(p.device)")
  if dtypes.is_float(p.dtype) and not dtypes.is_float(g.dtype):
    raise TypeError(f"{where}: param {i} is {p.dtype} but its .grad is {g.dtype}; a gradient must be floating point "
                    "(cast it with p.grad = p.grad.cast(p.dtype))")

def _check_lr(lr: float):
  if math.isnan(lr) or lr < 0: raise ValueError(f"optimizer: invalid learning rate {lr}; it must be >= 0")

class Optimizer:
  """Holds the parameters that require grad, the learning rate (a Tensor) and a step counter. Tensors handed over that
  don't require grad (BatchNorm's running statistics) are not updated, but realized with every step, as in tinygrad:
  their pending lazy updates then run in the same schedule as the step, reading the weights the step overwrites.

  lr is a float or a one-element Tensor. A float goes into a (1,) float32 buffer the optimizer owns; a Tensor is used
  as it is (writes into it change the lr, as in torch and tinygrad). `opt.lr = 0.5` writes the float into the owned
  buffer (no new kernel: step() reads the buffer; after a Tensor lr, into a new buffer, leaving that tensor alone, as
  torch's `param_groups[0]["lr"] = 0.5`), and `opt.lr = tensor` makes step() read that tensor from then on.
  Params may live on several devices: the optimizer's own state (lr, step counters) stays on params[0]'s device and
  is copied to each param's device within the step."""
  def __init__(self, params: list[Tensor], lr: float | Tensor):
    params = list(params)
    for p in params:
      # tinygrad: an unset float tensor handed to an optimizer is trained
      if p.requires_grad is None and dtypes.is_float(p.dtype): p.requires_grad = True
    self.params: list[Tensor] = _dedup([p for p in params if p.requires_grad])
    if not self.params: raise ValueError("optimizer got no parameters that require grad")
    self.buffers: list[Tensor] = _dedup([p for p in params if not p.requires_grad])
    self.device = self.params[0].device
    self._lr_owned = False
    self.lr = lr
    self.steps = Tensor([0], dtype=dtypes.int32, device=self.device).contiguous().realize()
    self.steps.requires_grad = False

  # (kept in the instance __dict__, where get_state_dict(opt) finds it under "lr")
  @property
  def lr(self) -> Tensor: return self.__dict__["lr"]
  @lr.setter
  def lr(self, value: float | Tensor): self.__dict__["lr"] = self._lr_tensor(value)

  def _lr_tensor(self, lr) -> Tensor:
    if isinstance(lr, Tensor):
      if lr.numel() != 1:
        raise ValueError(f"optimizer: a Tensor lr must have one element, got shape {tuple(lr.shape)}")
      if lr.dtype == dtypes.bool or not (dtypes.is_float(lr.dtype) or dtypes.is_int(lr.dtype)):
        raise TypeError(f"optimizer: a Tensor lr must be a number, got dtype {lr.dtype}")
      self._lr_owned = False
      return lr
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
      raise TypeError(f"optimizer: lr must be a float or a one-element Tensor, got {type(lr).__name__}")
    _check_lr(float(lr))
    cur = self.__dict__.get("lr")
    if cur is not None and self._lr_owned:   # write into the buffer step() reads: no new kernel, TinyJit sees it
      cur.assign(Tensor([float(lr)], dtype=cur.dtype, device=cur.device)).realize()
      return cur
    t = Tensor([float(lr)], dtype=dtypes.float32, device=self.device).contiguous().realize()
    t.requires_grad = False
    self._lr_owned = True
    return t

  def _lr_for(self, p: Tensor) -> Tensor:
    """The lr as a 0-d tensor of p's dtype on p's device."""
    lr = self.lr.detach() if self.lr.requires_grad else self.lr
    return _on(lr.reshape(()), p.device).cast(p.dtype)

  def _zeros_like_params(self, value: float = 0.0) -> list[Tensor]:
    # from host memory: identical lazy zeros realized together would share one buffer
    out = [Tensor(np.full(p.shape, value, np.float32), dtype=p.dtype, device=p.device) for p in self.params]
    for t in out: t.requires_grad = False
    return out

  def _new_param_steps(self) -> Tensor:
    """One int32 step count per param (torch keeps one per param: a param without a grad skips a step)."""
    t = Tensor(np.zeros(len(self.params), np.int32), dtype=dtypes.int32, device=self.device).contiguous().realize()
    t.requires_grad = False
    return t

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
    for i, p in live: _check_grad(f"{type(self).__name__}.step", i, p, p.grad)  # type: ignore[arg-type]
    self.steps.assign(self.steps + 1)
    with Tensor.no_grad():
      self._update(live)
    return [p for _, p in live] + self.state_tensors() + self.buffers

  def _update(self, live: list[tuple[int, Tensor]]): raise NotImplementedError

  def _grad(self, p: Tensor, maximize: bool, wd: float) -> Tensor:
    """The gradient in p's dtype, negated for maximize, plus torch's L2 weight decay term wd * p."""
    assert p.grad is not None
    g = p.grad.cast(p.dtype)
    if maximize: g = -g
    return g + wd * p.detach() if wd else g

  # ---- torch's optimizer.state_dict() / load_state_dict(): the optimizer's own tensors (not the params)
  def _state_items(self) -> dict[str, Tensor]:
    from teeny.nn.state import get_state_dict
    return {k: v for k, v in get_state_dict(self).items() if not k.startswith(("params.", "buffers."))}

  def state_dict(self) -> dict[str, Tensor]:
    """The optimizer's state tensors (lr, step counts, moments), keyed as in get_state_dict(opt) but without the
    params; references, as torch's (save them with safe_save, or copy)."""
    return self._state_items()

  def load_state_dict(self, state_dict: dict[str, Tensor]):
    """Load what state_dict() returned (keys and shapes must match: same optimizer class, options and params)."""
    from teeny.nn.state import load_state_dict
    if isinstance(state_dict, dict) and {"state", "param_groups"} <= set(state_dict):
      raise ValueError(f"{type(self).__name__}.load_state_dict: this is a torch optimizer's state_dict ('state' and "
                       "'param_groups'), which teeny does not read; load the model's weights and start the optimizer "
                       "fresh, or resume from a teeny optimizer's state_dict()")
    mine = self._state_items()
    sd = {k: v for k, v in state_dict.items() if not k.startswith(("params.", "buffers."))}
    missing, unexpected = [k for k in mine if k not in sd], [k for k in sd if k not in mine]
    bad = [f"{k}: optimizer {tuple(mine[k].shape)} vs state dict {tuple(sd[k].shape)}" for k in mine if k in sd
           and tuple(mine[k].shape) != tuple(sd[k].shape) and not (mine[k].numel() == sd[k].numel() == 1)]
    if missing or unexpected or bad:
      raise ValueError(f"{type(self).__name__}.load_state_dict: the state dict does not fit this optimizer and its "
                       f"{len(self.params)} params (missing {missing}, unexpected {unexpected}, "
                       f"shape mismatches {bad}); "
                       "load a state dict saved from the same optimizer class and options over the same params")
    load_state_dict(mine, sd)

class SGD(Optimizer):
  """torch's SGD: L2 weight decay, momentum (buf = m*buf + (1-dampening)*g, the first buf being g), Nesterov and
  maximize."""
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.001, momentum: float = 0.0, weight_decay: float = 0.0,
               nesterov: bool = False, dampening: float = 0.0, maximize: bool = False):
    super().__init__(params, lr)
    if momentum < 0 or weight_decay < 0: raise ValueError(f"SGD: momentum ({momentum}) and weight_decay "
                                                          f"({weight_decay}) must be >= 0")
    if nesterov and (momentum <= 0 or dampening != 0):
      raise ValueError("nesterov momentum requires momentum > 0 and dampening = 0")
    self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
    self.dampening, self.maximize = dampening, maximize
    self.b = self._zeros_like_params() if momentum else []
    # dampening skips the first step of each param's buffer, so each param counts its steps (only then: old keys stay)
    self.param_steps = self._new_param_steps() if momentum and dampening else None

  def state_tensors(self):
    return super().state_tensors() + self.b + ([self.param_steps] if self.param_steps is not None else [])

  def _update(self, live):
    first = None
    if self.param_steps is not None:
      self.param_steps.assign(self.param_steps + self._increments({i for i, _ in live}))
      first = self.param_steps == 1
    for i, t in live:
      g = self._grad(t, self.maximize, self.wd)
      if self.momentum:
        if first is None: gd = g   # the buffer is zero before the first step, so buf = g as in torch
        else: gd = g * _on(first[i], t.device).where(1.0, 1.0 - self.dampening).cast(t.dtype)
        self.b[i].assign(self.momentum * self.b[i] + gd)
        g = g + self.momentum * self.b[i] if self.nesterov else self.b[i]
      t.assign((t.detach() - g * self._lr_for(t)).cast(t.dtype))

def _betas(name: str, b1: float, b2: float, betas: tuple[float, float] | None) -> tuple[float, float]:
  if betas is None: return b1, b2
  if (b1, b2) != (0.9, 0.999): raise ValueError(f"{name}: give betas=(b1, b2) or b1=/b2=, not both")
  if not isinstance(betas, (tuple, list)) or len(betas) != 2:
    raise ValueError(f"{name}: betas must be a pair (b1, b2), got {betas!r}")
  return float(betas[0]), float(betas[1])

class LAMB(Optimizer):
  """LAMB (You et al. 2019): Adam's update scaled per tensor by the trust ratio ||w|| / ||update||.

  adam=True drops the trust ratio (that is AdamW); decoupled=False adds weight decay to the gradient (Adam's L2).
  betas=(b1, b2) is torch's spelling of b1=, b2=. amsgrad=True divides by the running max of v (torch's amsgrad);
  maximize=True ascends. Each param keeps its own step count (param_steps, one int32 vector), as torch's: a param
  without a grad at some step is skipped then, and its bias corrections 1 - b**t count only the steps it took. They are
  computed as -expm1(t * log(b)), accurate in float32 where 1 - b**t from a float32 b**t loses digits (1 - 0.999f is off
  by 5e-5).
  """
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-6, weight_decay: float = 0.0, adam: bool = False, decoupled: bool = True,
               betas: tuple[float, float] | None = None, amsgrad: bool = False, maximize: bool = False):
    super().__init__(params, lr)
    b1, b2 = _betas(type(self).__name__, b1, b2, betas)
    if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0): raise ValueError(f"betas must be in [0, 1), got ({b1}, {b2})")
    if eps < 0 or weight_decay < 0: raise ValueError(f"{type(self).__name__}: eps ({eps}) and weight_decay "
                                                     f"({weight_decay}) must be >= 0")
    self.b1, self.b2, self.eps, self.wd, self.adam, self.decoupled = b1, b2, eps, weight_decay, adam, decoupled
    self.amsgrad, self.maximize = amsgrad, maximize
    self.param_steps = self._new_param_steps()
    self.m, self.v = self._zeros_like_params(), self._zeros_like_params()
    self.v_max = self._zeros_like_params() if amsgrad else []

  def state_tensors(self): return super().state_tensors() + [self.param_steps] + self.m + self.v + self.v_max

  @staticmethod
  def _correction(b: float, t: Tensor) -> Tensor:
    """1 - b**t for t >= 1."""
    return -(t * math.log(b)).expm1() if b > 0 else t.full_like(1.0)

  def _update(self, live):
    self.param_steps.assign(self.param_steps + self._increments({i for i, _ in live}))
    t = self.param_steps.cast(dtypes.float32)
    c1, c2 = self._correction(self.b1, t), self._correction(self.b2, t)
    for i, p in live:
      c1i, c2i = _on(c1[i], p.device).cast(p.dtype), _on(c2[i], p.device).cast(p.dtype)
      g = self._grad(p, self.maximize, 0.0 if self.decoupled else self.wd)
      self.m[i].assign(self.b1 * self.m[i] + (1.0 - self.b1) * g)
      self.v[i].assign(self.b2 * self.v[i] + (1.0 - self.b2) * (g * g))
      v = self.v[i]
      if self.amsgrad: v = self.v_max[i].assign(self.v_max[i].maximum(v))
      up = (self.m[i] / c1i) / ((v / c2i).sqrt() + self.eps)
      if self.wd and self.decoupled: up = up + self.wd * p.detach()
      if not self.adam:
        r1, r2 = (p.detach() * p.detach()).sum().sqrt(), (up * up).sum().sqrt()
        up = up * ((r1 > 0) & (r2 > 0)).where(r1 / r2, 1.0)
      p.assign((p.detach() - self._lr_for(p) * up).cast(p.dtype))

class Adam(LAMB):
  """torch's Adam; weight_decay is the coupled L2 (added to the gradient); betas=, amsgrad=, maximize= as torch's."""
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-8, weight_decay: float = 0.0, betas: tuple[float, float] | None = None,
               amsgrad: bool = False, maximize: bool = False):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=False, betas=betas, amsgrad=amsgrad,
                     maximize=maximize)

class AdamW(LAMB):
  """torch's AdamW: weight decay decoupled from the gradient (p -= lr * wd * p); betas=, amsgrad=, maximize=."""
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-8, weight_decay: float = 0.01, betas: tuple[float, float] | None = None,
               amsgrad: bool = False, maximize: bool = False):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=True, betas=betas, amsgrad=amsgrad,
                     maximize=maximize)

class RMSprop(Optimizer):
  """torch's RMSprop: v = alpha*v + (1-alpha)*g^2; the step divides g by sqrt(v) + eps (centered: by
  sqrt(v - mean(g)^2) + eps), through a momentum buffer when momentum > 0."""
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.01, alpha: float = 0.99, eps: float = 1e-8,
               weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, maximize: bool = False):
    super().__init__(params, lr)
    if not (0.0 <= alpha) or eps < 0 or weight_decay < 0 or momentum < 0:
      raise ValueError(f"RMSprop: alpha ({alpha}), eps ({eps}), weight_decay ({weight_decay}) and momentum "
                       f"({momentum}) must be >= 0")
    self.alpha, self.eps, self.wd = alpha, eps, weight_decay
    self.momentum, self.centered, self.maximize = momentum, centered, maximize
    self.square_avg = self._zeros_like_params()
    self.grad_avg = self._zeros_like_params() if centered else []
    self.momentum_buffer = self._zeros_like_params() if momentum else []

  def state_tensors(self): return super().state_tensors() + self.square_avg + self.grad_avg + self.momentum_buffer

  def _update(self, live):
    a = self.alpha
    for i, p in live:
      g = self._grad(p, self.maximize, self.wd)
      v = self.square_avg[i].assign(a * self.square_avg[i] + (1.0 - a) * (g * g))
      if self.centered:
        ga = self.grad_avg[i].assign(a * self.grad_avg[i] + (1.0 - a) * g)
        v = v - ga * ga
      up = g / (v.sqrt() + self.eps)
      if self.momentum: up = self.momentum_buffer[i].assign(self.momentum * self.momentum_buffer[i] + up)
      p.assign((p.detach() - self._lr_for(p) * up).cast(p.dtype))

class Adagrad(Optimizer):
  """torch's Adagrad: s += g^2, p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(s) + eps), t counted per param."""
  def __init__(self, params: list[Tensor], lr: float | Tensor = 0.01, lr_decay: float = 0.0, weight_decay: float = 0.0,
               initial_accumulator_value: float = 0.0, eps: float = 1e-10, maximize: bool = False):
    super().__init__(params, lr)
    if lr_decay < 0 or weight_decay < 0 or initial_accumulator_value < 0 or eps < 0:
      raise ValueError(f"Adagrad: lr_decay ({lr_decay}), weight_decay ({weight_decay}), initial_accumulator_value "
                       f"({initial_accumulator_value}) and eps ({eps}) must be >= 0")
    self.lr_decay, self.wd, self.eps, self.maximize = lr_decay, weight_decay, eps, maximize
    self.param_steps = self._new_param_steps()
    self.sum = self._zeros_like_params(initial_accumulator_value)

  def state_tensors(self): return super().state_tensors() + [self.param_steps] + self.sum

  def _update(self, live):
    self.param_steps.assign(self.param_steps + self._increments({i for i, _ in live}))
    decay = 1.0 / (1.0 + (self.param_steps.cast(dtypes.float32) - 1.0) * self.lr_decay) if self.lr_decay else None
    for i, p in live:
      g = self._grad(p, self.maximize, self.wd)
      s = self.sum[i].assign(self.sum[i] + g * g)
      lr = self._lr_for(p) if decay is None else self._lr_for(p) * _on(decay[i], p.device).cast(p.dtype)
      p.assign((p.detach() - lr * (g / (s.sqrt() + self.eps))).cast(p.dtype))

def clip_grad_norm_(params: list[Tensor], max_norm: float, eps: float = 1e-6) -> Tensor:
  """Scale all grads so their global L2 norm is at most max_norm (torch's formula); returns the norm before clipping
  (on the first grad's device: grads on several devices are summed per device, then across)."""
  grads = [(p, g) for p in _dedup(list(params)) if (g := p.grad) is not None]
  if not grads: return Tensor([0.0]).sum()
  for i, (p, g) in enumerate(grads): _check_grad("clip_grad_norm_", i, p, g)
  dev0 = grads[0][1].device
  by_dev: dict = {}
  for _, g in grads: by_dev.setdefault(g.device, []).append((g.float() * g.float()).sum())
  parts = [_on(Tensor.stack(*sq).sum(), dev0) for sq in by_dev.values()]
  total = (Tensor.stack(*parts).sum() if len(parts) > 1 else parts[0]).sqrt()
  coef = (max_norm / (total + eps)).minimum(1.0)
  for p, g in grads: p.grad = (g * _on(coef, g.device).cast(g.dtype)).contiguous()
  return total

# ***** learning-rate schedules *****

class LRScheduler:
  """Sets optimizer.lr from a closed form of the number of .step() calls; lr at construction is the step-0 value.
  The new lr is written into the optimizer's lr tensor in place (torch's fill_ of a tensor lr), so no kernel changes."""
  def __init__(self, optimizer: Optimizer):
    self.optimizer = optimizer
    self.base_lr = float(optimizer.lr.numpy().reshape(-1)[0])
    self.last_epoch = 0
    self._set(self.lr_at(0))

  def lr_at(self, epoch: int) -> float: raise NotImplementedError
  def _set(self, lr: float):
    cur = self.optimizer.lr
    cur.assign(Tensor(np.full(cur.shape, lr), dtype=cur.dtype, device=cur.device)).realize()
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
