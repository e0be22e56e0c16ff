"""Optimizers (SGD, Adam, AdamW, LAMB, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, ASGD) with torch's param
groups, gradient clipping and learning-rate schedules (torch.optim.lr_scheduler's, also `teeny.nn.optim.lr_scheduler`).

Each param group's learning rate is a Tensor the optimizer holds, so a schedule changes a buffer, never a kernel.
`step()` builds every update lazily and realizes them (params and optimizer state) in one `Tensor.realize` call.
"""
from __future__ import annotations
import bisect, collections, copy, math, numbers, sys, types, warnings
from collections.abc import MutableMapping
from typing import Any, Callable
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes
from teeny.device import Device

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

class ParamGroup(MutableMapping):
  """One entry of `opt.param_groups`, read and written like torch's dict: "params" (the group's params that require
  grad), "lr" and the optimizer's options ("momentum", "betas", "weight_decay", ...), plus any other keys (a scheduler's
  "initial_lr"). `g["lr"]` is a float (the Tensor itself when the lr was given as a Tensor); `g["lr"] = x` writes x into
  the buffer the step reads, so no kernel changes and TinyJit replays see it. Other options are constants of the
  update's kernels: a new value compiles new kernels, and a TinyJit capture keeps the value it was captured with.
  (Slotted and not a dict, so nn.state.get_state_dict does not walk into it.)"""
  __slots__ = ("_opt", "_idx", "_d")
  def __init__(self, opt: Optimizer, idx: int, d: dict):
    self._opt, self._idx, self._d = opt, idx, d
  def __getitem__(self, k):
    return self._opt._get_group_lr(self._idx) if k == "lr" else self._d[k]
  def __setitem__(self, k, v):
    if k == "params":
      raise ValueError("param_groups: a group's 'params' cannot be replaced; build a new optimizer, or add params in a "
                       "new group with opt.add_param_group({'params': [...]})")
    if k == "lr": self._opt._set_group_lr(self._idx, v)
    else: self._d[k] = v
  def __delitem__(self, k):
    if k in ("params", "lr") or k in self._opt.defaults:
      raise KeyError(f"param_groups: '{k}' is part of every group and cannot be deleted; set it instead")
    del self._d[k]
  def __iter__(self): yield from ["params", "lr"] + [k for k in self._d if k != "params"]
  def __len__(self): return len(self._d) + 1
  def __repr__(self): return repr(dict(self))

class _Hidden:
  """Holds optimizer bookkeeping that get_state_dict must not walk (slots, no __dict__): the defaults and the
  constructor's lr (a group added later without an lr takes it, as torch's)."""
  __slots__ = ("defaults", "lr", "seen")
  def __init__(self, defaults: dict, lr):
    self.defaults, self.lr = defaults, lr
    self.seen: list = []   # per group: the lr buffer's version node when its float (_lr_mirror) was written

def _param_list(ps, where: str, allow_dicts: bool = False) -> list:
  """The Tensors of ps (a Tensor, or an iterable of Tensors or of (name, Tensor) pairs as named_parameters() gives);
  with allow_dicts, a list of param-group dicts is returned as it is."""
  if isinstance(ps, Tensor): return [ps]
  if isinstance(ps, (set, frozenset)):
    raise TypeError(f"{where}: optimizer parameters need to be organized in ordered collections, but the ordering of "
                    "tensors in sets will change between runs; use a list instead")
  try: out = list(ps)
  except TypeError:
    raise TypeError(f"{where}: params must be an iterable of Tensors or dicts, got {type(ps).__name__}") from None
  if allow_dicts and out and isinstance(out[0], dict):
    if not all(isinstance(g, dict) for g in out):
      raise TypeError(f"{where}: params must be all Tensors or all param-group dicts, not a mix")
    return out
  out = [p[1] if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) else p for p in out]
  for p in out:
    if not isinstance(p, Tensor):
      raise TypeError(f"{where}: optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
  return out

def _validate_lr(lr):
  if isinstance(lr, Tensor):
    if lr.numel() != 1:
      raise ValueError(f"optimizer: a Tensor lr must have one element, got shape {tuple(lr.shape)}")
    if lr.dtype == dtypes.bool or not (dtypes.is_float(lr.dtype) or dtypes.is_int(lr.dtype)):
      raise TypeError(f"optimizer: a Tensor lr must be a number, got dtype {lr.dtype}")
    return
  if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
    raise TypeError(f"optimizer: lr must be a float or a one-element Tensor, got {type(lr).__name__}")
  _check_lr(float(lr))

class Optimizer:
  """Holds the parameters that require grad, the learning rate (a Tensor) and a step counter. Tensors handed over that
  don't require grad (BatchNorm's running statistics) are not updated, but realized with every step, as in tinygrad:
  their pending lazy updates then run in the same schedule as the step, reading the weights the step overwrites.

  params is a list or iterable (model.parameters()) of Tensors, or torch's list of param groups: dicts with "params"
  and any options to override for that group (`[{"params": a, "lr": 0.1}, {"params": b}]`). `opt.param_groups` reads
  and writes them as torch's (see ParamGroup); `add_param_group` adds one. A param in two groups, an empty list and
  non-Tensors raise torch's errors; a param repeated within a group counts once.

  lr is a float or a one-element Tensor. A float goes into a (1,) float32 buffer the optimizer owns (one per group); a
  Tensor is used as it is (writes into it change the lr, as in torch and tinygrad). `opt.lr` is the first group's lr
  tensor (`group_lrs` holds the others'): `opt.lr = 0.5` writes the float into the owned buffer (no new kernel: step()
  reads the buffer; after a Tensor lr, into a new buffer, leaving that tensor alone, as torch's
  `param_groups[0]["lr"] = 0.5`), and `opt.lr = tensor` makes step() read that tensor from then on.
  Params may live on several devices: the optimizer's own state (lr, step counters) stays on params[0]'s device and
  is copied to each param's device within the step."""
  # (state list name, does a group's options need it, its initial value from the options): one tensor per param
  _STATE: tuple[tuple[str, Callable[[dict], bool], Callable[[dict], float]], ...] = ()
  # (vector name, need, dtype, initial value): one element per param (step counts, NAdam's mu_product)
  _VECTORS: tuple[tuple[str, Callable[[dict], bool], Any, float], ...] = ()
  # the options each group's values are checked for: betas (a pair in [0, 1)), then those that must be >= 0
  _BETAS = False
  _NONNEG: tuple[str, ...] = ()

  def __init__(self, params, lr: float | Tensor, defaults: dict | None = None):
    self._hidden = _Hidden(dict(defaults or {}), lr)
    name = type(self).__name__
    if isinstance(params, Tensor):
      raise TypeError(f"{name}: params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                      "got a Tensor; wrap it in a list: [t]")
    if isinstance(params, dict): params = [params]
    items = _param_list(params, name, allow_dicts=True)
    if not items: raise ValueError(f"{name}: optimizer got an empty parameter list; pass the tensors to train")
    self._check_opts(self.defaults, name)
    if isinstance(items[0], dict):
      groups = [self._parse_group(g, lr, f"{name} param group {i}") for i, g in enumerate(items)]
    else: groups = [self._parse_group({"params": items}, lr, name)]
    self.params: list[Tensor] = []
    self.buffers: list[Tensor] = []
    self._group_of: list[int] = []
    self._check_disjoint([g[0] for g in groups], name)
    if not any(g[0] for g in groups): raise ValueError(f"{name}: optimizer got no parameters that require grad")
    self.device = next(g[0][0] for g in groups if g[0]).device
    self.param_groups: list[ParamGroup] = []
    self._lr_owned: list[bool] = []
    self._lr_mirror: list[float | None] = []
    self.group_lrs: list[Tensor] = []
    for g in groups: self._register(*g)
    self.steps = Tensor([0], dtype=dtypes.int32, device=self.device).contiguous().realize()
    self.steps.requires_grad = False
    self._sync_state()

  @property
  def defaults(self) -> dict:
    """torch's opt.defaults: the constructor's options (lr included when it is a float)."""
    return self._hidden.defaults

  def _check_opts(self, opts: dict, where: str):
    """Raise for invalid options: _BETAS and _NONNEG (an optimizer with other rules adds them)."""
    if self._BETAS: _check_betas(where, opts)
    _nonneg(where, opts, *self._NONNEG)

  def _parse_group(self, g, lr, where: str) -> tuple[list[Tensor], list[Tensor], dict, float | Tensor]:
    if not isinstance(g, dict): raise TypeError(f"{where}: param_group must be a dict, but got {type(g).__name__}")
    if "params" not in g: raise KeyError(f"{where}: a param group needs a 'params' entry (the tensors to train)")
    ps = _param_list(g["params"], where)
    for p in ps:
      # tinygrad: an unset float tensor handed to an optimizer is trained
      if p._requires_grad is None and dtypes.is_float(p.dtype): p.requires_grad = True
    opts = {k: v for k, v in self.defaults.items() if k != "lr"}
    opts.update({k: v for k, v in g.items() if k not in ("params", "lr")})
    self._check_opts(opts, where)
    glr = g.get("lr", lr)
    _validate_lr(glr)
    return _dedup([p for p in ps if p.requires_grad]), _dedup([p for p in ps if not p.requires_grad]), opts, glr

  def _check_disjoint(self, new: list[list[Tensor]], where: str):
    seen = {id(p) for p in self.__dict__.get("params", [])}
    for ps in new:
      for p in ps:
        if id(p) in seen:
          raise ValueError(f"{where}: some parameters appear in more than one parameter group; give each param to "
                           "one group only")
      seen |= {id(p) for p in ps}

  def _register(self, ps: list[Tensor], bufs: list[Tensor], opts: dict, lr: float | Tensor):
    gi = len(self.param_groups)
    self.params.extend(ps)
    self.buffers.extend(b for b in bufs if all(b is not x for x in self.buffers))
    self._group_of.extend([gi] * len(ps))
    self._lr_owned.append(False)
    self._lr_mirror.append(None)
    self._hidden.seen.append(None)
    t = self._lr_tensor(lr, gi)
    if gi == 0: self.__dict__["lr"] = t
    else: self.group_lrs.append(t)
    self.param_groups.append(ParamGroup(self, gi, {"params": ps, **opts}))

  def add_param_group(self, param_group: dict):
    """torch's add_param_group: a dict with "params" and the options that differ from the constructor's."""
    name = f"{type(self).__name__}.add_param_group"
    ps, bufs, opts, lr = self._parse_group(param_group, self._hidden.lr, name)
    self._check_disjoint([ps], name)
    self._register(ps, bufs, opts, lr)
    self._sync_state()

  # ---- per-group learning rates: group 0's is opt.lr (kept in the instance __dict__, where get_state_dict(opt) finds
  # it under "lr"), the others' are group_lrs
  @property
  def lr(self) -> Tensor: return self.__dict__["lr"]
  @lr.setter
  def lr(self, value: float | Tensor): self._set_group_lr(0, value)

  def _lrs(self) -> list[Tensor]: return [self.__dict__["lr"]] + self.group_lrs

  def _get_group_lr(self, gi: int) -> float | Tensor:
    t = self._lrs()[gi]
    if not self._lr_owned[gi]: return t
    # the float last written (no read, no sync), unless the buffer was written since (a loaded state dict): every
    # in-place write gives the tensor a new version node
    m = self._lr_mirror[gi]
    if m is not None and (self._hidden.seen[gi] is t.uop or (not isinstance(t.device, tuple)
                                                              and Device[t.device].runs_nothing)): return m
    v = float(t.numpy().reshape(-1)[0])
    if m is None or float(np.float32(m)) != v: self._lr_mirror[gi] = m = v
    self._hidden.seen[gi] = t.uop
    return m

  def _set_group_lr(self, gi: int, value: float | Tensor, inplace: bool = False):
    """Point group gi at a Tensor lr, or write a float into its buffer. inplace=True (schedules) writes the float into
    a Tensor lr the user gave too (torch's fill_), keeping its shape."""
    cur = self._lrs()[gi]
    if inplace and not isinstance(value, Tensor) and not self._lr_owned[gi]:
      _check_lr(float(value))
      cur.assign(Tensor(np.full(cur.shape, float(value)), dtype=cur.dtype, device=cur.device)).realize()
      return
    t = self._lr_tensor(value, gi)
    if gi == 0: self.__dict__["lr"] = t
    else: self.group_lrs[gi - 1] = t

  def _lr_tensor(self, lr, gi: int) -> Tensor:
    """A Tensor lr as it is, or a float written into group gi's owned buffer (a new one when it has none)."""
    _validate_lr(lr)
    if isinstance(lr, Tensor):
      self._lr_owned[gi], self._lr_mirror[gi] = False, None
      return lr
    self._lr_mirror[gi] = float(lr)
    lrs = self._lrs() if "lr" in self.__dict__ else []
    cur = lrs[gi] if gi < len(lrs) else None
    if cur is not None and self._lr_owned[gi]:   # write into the buffer step() reads: no new kernel, TinyJit sees it
      cur.assign(Tensor([float(lr)], dtype=cur.dtype, device=cur.device)).realize()
      self._hidden.seen[gi] = cur.uop
      return cur
    t = Tensor([float(lr)], dtype=dtypes.float32, device=self.device).contiguous().realize()
    t.requires_grad = False
    self._lr_owned[gi] = True
    self._hidden.seen[gi] = t.uop
    return t

  def _lr_for(self, p: Tensor, i: int = 0) -> Tensor:
    """Param i's group lr as a 0-d tensor of p's dtype on p's device."""
    lr = self._lrs()[self._group_of[i]]
    lr = lr.detach() if lr.requires_grad else lr
    return _on(lr.reshape(()), p.device).cast(p.dtype)

  def _opts(self, i: int) -> dict:
    """The options of param i's group."""
    return self.param_groups[self._group_of[i]]._d

  # ---- state: lists of one tensor per param, and vectors of one element per param, made when some group needs them
  def _new_state(self, ps: list[Tensor], fills: list[float]) -> list[Tensor]:
    # from host memory: identical lazy zeros realized together would share one buffer
    out = [Tensor(np.full(p.shape, v, np.float32), dtype=p.dtype, device=p.device) for p, v in zip(ps, fills)]
    for t in out: t.requires_grad = False
    return out

  def _zeros_like_params(self, value: float = 0.0) -> list[Tensor]:
    return self._new_state(self.params, [value] * len(self.params))

  def _new_vector(self, n: int, dtype, value: float) -> Tensor:
    t = Tensor(np.full(n, value, dtype.np), dtype=dtype, device=self.device).contiguous().realize()
    t.requires_grad = False
    return t

  def _new_param_steps(self) -> Tensor:
    """One int32 step count per param (torch keeps one per param: a param without a grad skips a step)."""
    return self._new_vector(len(self.params), dtypes.int32, 0)

  def _sync_state(self):
    """Make the state the groups' options need now (at construction, after add_param_group, and when an option such
    as momentum was switched on by writing param_groups): new params get fresh state, existing state is kept."""
    n, groups = len(self.params), [g._d for g in self.param_groups]
    for name, need, fill in self._STATE:
      cur: list[Tensor] = self.__dict__.get(name) or []
      if len(cur) < n and any(need(o) for o in groups):
        cur = cur + self._new_state(self.params[len(cur):], [fill(self._opts(i)) for i in range(len(cur), n)])
      self.__dict__[name] = cur
    for name, need, dtype, value in self._VECTORS:
      vec: Tensor | None = self.__dict__.get(name)
      if (vec is None or vec.shape[0] < n) and any(need(o) for o in groups):
        new = self._new_vector(n - (0 if vec is None else vec.shape[0]), dtype, value)
        vec = new if vec is None else vec.cat(new).contiguous().realize()
        vec.requires_grad = False
      self.__dict__[name] = vec

  def _const_vec(self, values: list, dtype) -> Tensor | float | int:
    """A per-param vector of Python numbers as kernel constants (runs of equal values, concatenated); a plain number
    when they are all equal."""
    if len(set(values)) == 1: return values[0]
    runs: list[tuple[Any, int]] = []
    for v in values:
      if runs and runs[-1][0] == v: runs[-1] = (v, runs[-1][1] + 1)
      else: runs.append((v, 1))
    parts = [Tensor.full((k,), v, dtype=dtype, device=self.device) for v, k in runs]
    return parts[0].cat(*parts[1:])

  def _increments(self, live: set[int]) -> Tensor | float | int:
    """1 for the params that step now, 0 for the others (kernel constants: runs of equal values, concatenated)."""
    return self._const_vec([int(i in live) for i in range(len(self.params))], dtypes.int32)

  def zero_grad(self, set_to_none: bool = True):
    """Drop every param's .grad (torch's default); set_to_none=False sets them to zeros instead."""
    for p in self.params: p.grad = None if set_to_none or p.grad is None else p.grad.zeros_like()

  def state_tensors(self) -> list[Tensor]:
    """The optimizer's own state (not the params), realized with every step."""
    vecs = [v for name, *_ in self._VECTORS if (v := self.__dict__.get(name)) is not None]
    return [self.steps] + vecs + [t for name, *_ in self._STATE for t in self.__dict__.get(name, [])]

  def step(self):
    """Apply one update to every param from its .grad (params without a grad are left alone)."""
    if ts := self.schedule_step(): Tensor.realize(*ts)

  def schedule_step(self) -> list[Tensor]:
    """Assign the updates lazily and return the tensors to realize."""
    live = [(i, p) for i, p in enumerate(self.params) if p.grad is not None]
    if not live: return []   # (no param has a gradient: nothing changes, not even the step count, as torch's)
    for i, p in live: _check_grad(f"{type(self).__name__}.step", i, p, p.grad)  # type: ignore[arg-type]
    self._sync_state()
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

  def _step_counts(self, live) -> Tensor:
    """Count a step for the live params (param_steps) and return the counts as float32."""
    steps: Tensor = self.__dict__["param_steps"]
    steps.assign(steps + self._increments({i for i, _ in live}))
    return steps.cast(dtypes.float32)

  # ---- torch's optimizer.state_dict() / load_state_dict(): the optimizer's own tensors (not the params)
  def _state_items(self) -> dict[str, Tensor]:
    from teeny.nn.state import get_state_dict
    return {k: v for k, v in get_state_dict(self).items() if not k.startswith(("params.", "buffers."))}

  def state_dict(self) -> dict[str, Tensor]:
    """The optimizer's state tensors (lr, step counts, moments), keyed as in get_state_dict(opt) but without the
    params; references, as torch's (save them with safe_save, or copy). Options other than lr are not in it."""
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
    self._lr_mirror = [None] * len(self._lr_mirror)

  def __repr__(self):
    return f"{type(self).__name__}(" + "".join(f"\nParameter Group {i}\n" + "".join(
      f"    {k}: {v}\n" for k, v in sorted(g.items()) if k != "params") for i, g in enumerate(self.param_groups)) + ")"

def _nonneg(where: str, opts: dict, *keys: str):
  bad = [f"{k} ({opts[k]})" for k in keys if opts[k] < 0]
  if bad: raise ValueError(f"{where}: {', '.join(bad)} must be >= 0")

class SGD(Optimizer):
  """torch's SGD: L2 weight decay, momentum (buf = m*buf + (1-dampening)*g, the first buf being g), Nesterov and
  maximize."""
  _NONNEG = ("momentum", "weight_decay")
  _STATE = (("b", lambda o: bool(o["momentum"]), lambda o: 0.0),)
  # dampening skips the first step of each param's buffer, so each param counts its steps (only then: old keys stay)
  _VECTORS = (("param_steps", lambda o: bool(o["momentum"] and o["dampening"]), dtypes.int32, 0),)
  def __init__(self, params, lr: float | Tensor = 0.001, momentum: float = 0.0, weight_decay: float = 0.0,
               nesterov: bool = False, dampening: float = 0.0, maximize: bool = False):
    self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
    self.dampening, self.maximize = dampening, maximize
    super().__init__(params, lr, _opt_defaults(lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                               nesterov=nesterov, maximize=maximize))

  def _check_opts(self, o, where):
    super()._check_opts(o, where)
    if o["nesterov"] and (o["momentum"] <= 0 or o["dampening"] != 0):
      raise ValueError(f"{where}: nesterov momentum requires momentum > 0 and dampening = 0")

  def _update(self, live):
    first = None
    if self.param_steps is not None:
      self.param_steps.assign(self.param_steps + self._increments({i for i, _ in live}))
      first = self.param_steps == 1
    for i, t in live:
      o = self._opts(i)
      g = self._grad(t, o["maximize"], o["weight_decay"])
      if m := o["momentum"]:
        # the buffer is zero before the first step, so buf = g as in torch
        if first is None or not o["dampening"]: gd = g
        else: gd = g * _on(first[i], t.device).where(1.0, 1.0 - o["dampening"]).cast(t.dtype)
        self.b[i].assign(m * self.b[i] + gd)
        g = g + m * self.b[i] if o["nesterov"] else self.b[i]
      t.assign((t.detach() - g * self._lr_for(t, i)).cast(t.dtype))

def _betas(name: str, b1: float, b2: float, betas: tuple[float, float] | None) -> tuple[float, float]:
  if betas is None: return b1, b2
  if (b1, b2) != (0.9, 0.999): raise ValueError(f"{name}: give betas=(b1, b2) or b1=/b2=, not both")
  if not isinstance(betas, (tuple, list)) or len(betas) != 2:
    raise ValueError(f"{name}: betas must be a pair (b1, b2), got {betas!r}")
  return float(betas[0]), float(betas[1])

def _check_betas(where: str, o: dict):
  b = o["betas"]
  if not isinstance(b, (tuple, list)) or len(b) != 2:
    raise ValueError(f"{where}: betas must be a pair (b1, b2), got {b!r}")
  if not (0.0 <= b[0] < 1.0 and 0.0 <= b[1] < 1.0):
    raise ValueError(f"{where}: betas must be in [0, 1), got {tuple(b)}")

def _opt_defaults(lr, **kw) -> dict:
  """An optimizer's defaults dict (torch's opt.defaults): lr first, when it is a float."""
  return kw if isinstance(lr, Tensor) else {"lr": lr, **kw}

def _pow(b: float, t: Tensor) -> Tensor:
  """b**t for a tensor of step counts t >= 1."""
  return (t * math.log(b)).exp() if b > 0 else t.full_like(0.0)

def _correction(b: float, t: Tensor) -> Tensor:
  """1 - b**t for t >= 1, as -expm1(t * log(b)): accurate in float32, where 1 - b**t from a float32 b**t loses digits
  (1 - 0.999f is off by 5e-5)."""
  return -(t * math.log(b)).expm1() if b > 0 else t.full_like(1.0)

class _PerValue:
  """A per-step cache of vectors computed once for each distinct option value (a bias correction per beta)."""
  def __init__(self, fn: Callable):
    self.fn, self.cache = fn, dict[tuple, Any]()
  def __call__(self, *key):
    if key not in self.cache: self.cache[key] = self.fn(*key)
    return self.cache[key]

class LAMB(Optimizer):
  """LAMB (You et al. 2019): Adam's update scaled per tensor by the trust ratio ||w|| / ||update||.

  adam=True drops the trust ratio (that is AdamW); decoupled=False adds weight decay to the gradient (Adam's L2).
  betas=(b1, b2) is torch's spelling of b1=, b2=. amsgrad=True divides by the running max of v (torch's amsgrad);
  maximize=True ascends. Each param keeps its own step count (param_steps, one int32 vector), as torch's: a param
  without a grad at some step is skipped then, and its bias corrections 1 - b**t count only the steps it took. They are
  computed as -expm1(t * log(b)), accurate in float32 where 1 - b**t from a float32 b**t loses digits (1 - 0.999f is off
  by 5e-5).
  """
  _BETAS, _NONNEG = True, ("eps", "weight_decay")
  _STATE = (("m", lambda o: True, lambda o: 0.0), ("v", lambda o: True, lambda o: 0.0),
            ("v_max", lambda o: bool(o["amsgrad"]), lambda o: 0.0))
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0),)
  def __init__(self, params, lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-6, weight_decay: float = 0.0, adam: bool = False, decoupled: bool = True,
               betas: tuple[float, float] | None = None, amsgrad: bool = False, maximize: bool = False, **extra):
    b1, b2 = _betas(type(self).__name__, b1, b2, betas)
    self.b1, self.b2, self.eps, self.wd, self.adam, self.decoupled = b1, b2, eps, weight_decay, adam, decoupled
    self.amsgrad, self.maximize = amsgrad, maximize
    super().__init__(params, lr, _opt_defaults(lr, betas=(b1, b2), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                               maximize=maximize, **extra))

  @staticmethod
  def _correction(b: float, t: Tensor) -> Tensor: return _correction(b, t)

  def _update(self, live):
    t = self._step_counts(live)
    corr = _PerValue(lambda b: _correction(b, t))
    for i, p in live:
      o = self._opts(i)
      b1, b2 = o["betas"]
      decoupled = o.get("decoupled_weight_decay", self.decoupled)
      c1i, c2i = _on(corr(b1)[i], p.device).cast(p.dtype), _on(corr(b2)[i], p.device).cast(p.dtype)
      g = self._grad(p, o["maximize"], 0.0 if decoupled else o["weight_decay"])
      self.m[i].assign(b1 * self.m[i] + (1.0 - b1) * g)
      self.v[i].assign(b2 * self.v[i] + (1.0 - b2) * (g * g))
      v = self.v[i]
      if o["amsgrad"]: v = self.v_max[i].assign(self.v_max[i].maximum(v))
      up = (self.m[i] / c1i) / ((v / c2i).sqrt() + o["eps"])
      if o["weight_decay"] and decoupled: up = up + o["weight_decay"] * p.detach()
      if not self.adam:
        r1, r2 = (p.detach() * p.detach()).sum().sqrt(), (up * up).sum().sqrt()
        up = up * ((r1 > 0) & (r2 > 0)).where(r1 / r2, 1.0)
      p.assign((p.detach() - self._lr_for(p, i) * up).cast(p.dtype))

class Adam(LAMB):
  """torch's Adam; weight_decay is the coupled L2 (added to the gradient) unless decoupled_weight_decay=True (then it
  is AdamW); betas=, amsgrad=, maximize= as torch's."""
  def __init__(self, params, lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-8, weight_decay: float = 0.0, betas: tuple[float, float] | None = None,
               amsgrad: bool = False, maximize: bool = False, decoupled_weight_decay: bool = False):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=False, betas=betas, amsgrad=amsgrad,
                     maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)

class AdamW(LAMB):
  """torch's AdamW: weight decay decoupled from the gradient (p -= lr * wd * p); betas=, amsgrad=, maximize=."""
  def __init__(self, params, lr: float | Tensor = 0.001, b1: float = 0.9, b2: float = 0.999,
               eps: float = 1e-8, weight_decay: float = 0.01, betas: tuple[float, float] | None = None,
               amsgrad: bool = False, maximize: bool = False):
    super().__init__(params, lr, b1, b2, eps, weight_decay, adam=True, decoupled=True, betas=betas, amsgrad=amsgrad,
                     maximize=maximize, decoupled_weight_decay=True)

class RMSprop(Optimizer):
  """torch's RMSprop: v = alpha*v + (1-alpha)*g^2; the step divides g by sqrt(v) + eps (centered: by
  sqrt(v - mean(g)^2) + eps), through a momentum buffer when momentum > 0."""
  _NONNEG = ("alpha", "eps", "weight_decay", "momentum")
  _STATE = (("square_avg", lambda o: True, lambda o: 0.0), ("grad_avg", lambda o: bool(o["centered"]), lambda o: 0.0),
            ("momentum_buffer", lambda o: bool(o["momentum"]), lambda o: 0.0))
  def __init__(self, params, lr: float | Tensor = 0.01, alpha: float = 0.99, eps: float = 1e-8,
               weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, maximize: bool = False):
    self.alpha, self.eps, self.wd = alpha, eps, weight_decay
    self.momentum, self.centered, self.maximize = momentum, centered, maximize
    super().__init__(params, lr, _opt_defaults(lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                               centered=centered, maximize=maximize))

  def _update(self, live):
    for i, p in live:
      o = self._opts(i)
      a = o["alpha"]
      g = self._grad(p, o["maximize"], o["weight_decay"])
      v = self.square_avg[i].assign(a * self.square_avg[i] + (1.0 - a) * (g * g))
      if o["centered"]:
        ga = self.grad_avg[i].assign(a * self.grad_avg[i] + (1.0 - a) * g)
        v = v - ga * ga
      up = g / (v.sqrt() + o["eps"])
      if o["momentum"]: up = self.momentum_buffer[i].assign(o["momentum"] * self.momentum_buffer[i] + up)
      p.assign((p.detach() - self._lr_for(p, i) * up).cast(p.dtype))

class Adagrad(Optimizer):
  """torch's Adagrad: s += g^2, p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(s) + eps), t counted per param. A param
  group's own initial_accumulator_value starts its params' sums (torch starts every sum at the constructor's)."""
  _NONNEG = ("lr_decay", "weight_decay", "initial_accumulator_value", "eps")
  _STATE = (("sum", lambda o: True, lambda o: float(o["initial_accumulator_value"])),)
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0),)
  def __init__(self, params, lr: float | Tensor = 0.01, lr_decay: float = 0.0, weight_decay: float = 0.0,
               initial_accumulator_value: float = 0.0, eps: float = 1e-10, maximize: bool = False):
    self.lr_decay, self.wd, self.eps, self.maximize = lr_decay, weight_decay, eps, maximize
    super().__init__(params, lr, _opt_defaults(lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                               initial_accumulator_value=initial_accumulator_value,
                                               maximize=maximize))

  def _update(self, live):
    t = self._step_counts(live)
    decay = _PerValue(lambda d: 1.0 / (1.0 + (t - 1.0) * d))
    for i, p in live:
      o = self._opts(i)
      g = self._grad(p, o["maximize"], o["weight_decay"])
      s = self.sum[i].assign(self.sum[i] + g * g)
      lr = self._lr_for(p, i)
      if o["lr_decay"]: lr = lr * _on(decay(o["lr_decay"])[i], p.device).cast(p.dtype)
      p.assign((p.detach() - lr * (g / (s.sqrt() + o["eps"]))).cast(p.dtype))

class Adamax(Optimizer):
  """torch's Adamax: m = b1*m + (1-b1)*g, u = max(b2*u, |g| + eps), p -= lr / (1 - b1**t) * m / u; L2 weight_decay
  and maximize as torch's. State: exp_avg, exp_inf and a step count per param."""
  _BETAS, _NONNEG = True, ("eps", "weight_decay")
  _STATE = (("exp_avg", lambda o: True, lambda o: 0.0), ("exp_inf", lambda o: True, lambda o: 0.0))
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0),)
  def __init__(self, params, lr: float | Tensor = 0.002, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0.0, maximize: bool = False):
    super().__init__(params, lr, _opt_defaults(lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                               maximize=maximize))

  def _update(self, live):
    t = self._step_counts(live)
    corr = _PerValue(lambda b: _correction(b, t))
    for i, p in live:
      o = self._opts(i)
      b1, b2 = o["betas"]
      g = self._grad(p, o["maximize"], o["weight_decay"])
      m = self.exp_avg[i].assign(b1 * self.exp_avg[i] + (1.0 - b1) * g)
      u = self.exp_inf[i].assign((b2 * self.exp_inf[i]).maximum(g.abs() + o["eps"]))
      c1 = _on(corr(b1)[i], p.device).cast(p.dtype)
      p.assign((p.detach() - self._lr_for(p, i) / c1 * (m / u)).cast(p.dtype))

class NAdam(Optimizer):
  """torch's NAdam: Adam with Nesterov momentum, whose momentum coefficient mu_t = b1 * (1 - 0.5 * 0.96**(t *
  momentum_decay)) warms up; mu_product (one float32 per param) is the product of the mu_t so far.
  decoupled_weight_decay=True multiplies p by 1 - lr*wd (AdamW's), else wd*p is added to the gradient."""
  _BETAS, _NONNEG = True, ("eps", "weight_decay", "momentum_decay")
  _STATE = (("exp_avg", lambda o: True, lambda o: 0.0), ("exp_avg_sq", lambda o: True, lambda o: 0.0))
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0), ("mu_product", lambda o: True, dtypes.float32, 1.0))
  def __init__(self, params, lr: float | Tensor = 0.002, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0.0, momentum_decay: float = 0.004, decoupled_weight_decay: bool = False,
               maximize: bool = False):
    super().__init__(params, lr, _opt_defaults(lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                               momentum_decay=momentum_decay,
                                               decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

  def _update(self, live):
    t = self._step_counts(live)
    n = len(self.params)
    b1v = self._const_vec([self._opts(i)["betas"][0] for i in range(n)], dtypes.float32)
    mdv = self._const_vec([self._opts(i)["momentum_decay"] for i in range(n)], dtypes.float32)
    mu = b1v * (1.0 - 0.5 * (t * mdv * math.log(0.96)).exp())
    mu_next = b1v * (1.0 - 0.5 * ((t + 1.0) * mdv * math.log(0.96)).exp())
    inc = self._increments({i for i, _ in live})
    mp = self.mu_product.assign(self.mu_product * (mu if isinstance(inc, int) else (inc > 0).where(mu, 1.0)))
    corr = _PerValue(lambda b: _correction(b, t))
    for i, p in live:
      o, lr, w, g, m, v = _adam_moments(self, i, p)
      b1, b2 = o["betas"]
      mu_i, mun_i, mp_i = [_on(x[i], p.device).cast(p.dtype) for x in (mu, mu_next, mp)]
      denom = (v / _on(corr(b2)[i], p.device).cast(p.dtype)).sqrt() + o["eps"]
      up = lr * (1.0 - mu_i) / (1.0 - mp_i) * (g / denom) + lr * mun_i / (1.0 - mp_i * mun_i) * (m / denom)
      p.assign((w - up).cast(p.dtype))

def _adam_moments(opt, i: int, p: Tensor) -> tuple[dict, Tensor, Tensor, Tensor, Tensor, Tensor]:
  """NAdam's and RAdam's common start of a param's update: (its group's options, lr, the weight after decoupled
  weight decay, the gradient (with L2 weight decay otherwise), the new first and second moments)."""
  o = opt._opts(i)
  b1, b2 = o["betas"]
  lr, wd = opt._lr_for(p, i), o["weight_decay"]
  g = opt._grad(p, o["maximize"], 0.0 if o["decoupled_weight_decay"] else wd)
  w = p.detach() * (1.0 - lr * wd) if wd and o["decoupled_weight_decay"] else p.detach()
  m = opt.exp_avg[i].assign(b1 * opt.exp_avg[i] + (1.0 - b1) * g)
  v = opt.exp_avg_sq[i].assign(b2 * opt.exp_avg_sq[i] + (1.0 - b2) * (g * g))
  return o, lr, w, g, m, v

class RAdam(Optimizer):
  """torch's RAdam: Adam whose adaptive step is switched on, scaled by the variance rectification term, once the
  length of the approximated SMA rho_t exceeds 5 (before that, p -= lr * m / (1 - b1**t)); decoupled_weight_decay as
  NAdam's. The choice is a `where` on the device: no step reads a value back."""
  _BETAS, _NONNEG = True, ("eps", "weight_decay")
  _STATE = (("exp_avg", lambda o: True, lambda o: 0.0), ("exp_avg_sq", lambda o: True, lambda o: 0.0))
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0),)
  def __init__(self, params, lr: float | Tensor = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0.0, decoupled_weight_decay: bool = False, maximize: bool = False):
    super().__init__(params, lr, _opt_defaults(lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                               decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

  def _update(self, live):
    t = self._step_counts(live)
    def rect(b2: float) -> tuple[Tensor, Tensor]:
      rho_inf = 2.0 / (1.0 - b2) - 1.0
      rho = rho_inf - 2.0 * t * _pow(b2, t) / _correction(b2, t)
      r = ((rho - 4.0) * (rho - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho)).maximum(0.0).sqrt()
      return rho > 5.0, r * _correction(b2, t).sqrt()
    rects, corr = _PerValue(rect), _PerValue(lambda b: _correction(b, t))
    for i, p in live:
      o, lr, w, g, m, v = _adam_moments(self, i, p)
      b1, b2 = o["betas"]
      on, scale = rects(b2)
      on_i, scale_i = _on(on[i], p.device), _on(scale[i], p.device).cast(p.dtype)
      mhat = m / _on(corr(b1)[i], p.device).cast(p.dtype)
      up = on_i.where(mhat * (scale_i / (v.sqrt() + o["eps"])), mhat)
      p.assign((w - lr * up).cast(p.dtype))

class Adadelta(Optimizer):
  """torch's Adadelta: v = rho*v + (1-rho)*g^2, delta = sqrt(u + eps) / sqrt(v + eps) * g, u = rho*u + (1-rho)*delta^2,
  p -= lr * delta (lr defaults to 1.0); L2 weight_decay and maximize as torch's. State: square_avg, acc_delta."""
  _NONNEG = ("eps", "weight_decay")
  _STATE = (("square_avg", lambda o: True, lambda o: 0.0), ("acc_delta", lambda o: True, lambda o: 0.0))
  def __init__(self, params, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0.0,
               maximize: bool = False):
    super().__init__(params, lr, _opt_defaults(lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

  def _check_opts(self, o, where):
    if not 0.0 <= o["rho"] <= 1.0: raise ValueError(f"{where}: rho must be in [0, 1], got {o['rho']}")
    super()._check_opts(o, where)

  def _update(self, live):
    for i, p in live:
      o = self._opts(i)
      rho, eps = o["rho"], o["eps"]
      g = self._grad(p, o["maximize"], o["weight_decay"])
      v = self.square_avg[i].assign(rho * self.square_avg[i] + (1.0 - rho) * (g * g))
      delta = (self.acc_delta[i] + eps).sqrt() / (v + eps).sqrt() * g
      self.acc_delta[i].assign(rho * self.acc_delta[i] + (1.0 - rho) * (delta * delta))
      p.assign((p.detach() - self._lr_for(p, i) * delta).cast(p.dtype))

class ASGD(Optimizer):
  """torch's ASGD (averaged SGD): p = p * (1 - lambd * eta) - eta * g, ax averages p once step - t0 > 0 (mu = 1 /
  max(1, step - t0)), and after each step eta = lr / (1 + lambd * lr * step) ** alpha (the first step uses lr). State:
  ax per param, and eta, mu and a step count per param (vectors); L2 weight_decay and maximize as torch's."""
  _NONNEG = ("weight_decay",)
  _STATE = (("ax", lambda o: True, lambda o: 0.0),)
  _VECTORS = (("param_steps", lambda o: True, dtypes.int32, 0), ("eta", lambda o: True, dtypes.float32, 0.0),
              ("mu", lambda o: True, dtypes.float32, 1.0))
  def __init__(self, params, lr: float | Tensor = 0.01, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
               weight_decay: float = 0.0, maximize: bool = False):
    super().__init__(params, lr, _opt_defaults(lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                               maximize=maximize))

  def _update(self, live):
    t = self._step_counts(live)
    eta_new, mu_new = {}, {}
    for i, p in live:
      o = self._opts(i)
      lr = self._lr_for(p, i)
      first = _on(t[i] == 1, p.device)
      eta = first.where(lr, _on(self.eta[i], p.device).cast(p.dtype))
      mu = first.where(1.0, _on(self.mu[i], p.device).cast(p.dtype))
      g = self._grad(p, o["maximize"], o["weight_decay"])
      w = p.detach() * (1.0 - o["lambd"] * eta) - eta * g
      self.ax[i].assign((mu == 1.0).where(w, self.ax[i] + (w - self.ax[i]) * mu))
      p.assign(w.cast(p.dtype))
      lr32 = _on(self._lrs()[self._group_of[i]].detach().reshape(()), self.device).cast(dtypes.float32)
      eta_new[i] = lr32 / (1.0 + o["lambd"] * lr32 * t[i]) ** o["alpha"]
      mu_new[i] = 1.0 / (t[i] - o["t0"]).maximum(1.0)
    n = len(self.params)
    self.eta.assign(Tensor.stack(*[eta_new.get(i, self.eta[i]) for i in range(n)]))
    self.mu.assign(Tensor.stack(*[mu_new.get(i, self.mu[i]) for i in range(n)]))

def clip_grad_norm_(params: list[Tensor], max_norm: float, eps: float = 1e-6) -> Tensor:
  """nn.utils.clip_grad_norm_ with norm_type 2 and the clip coefficient max_norm / (total + eps), clamped to 1: the
  grads are scaled in place; returns their total norm before clipping (on the first grad's device, in their dtype, as
  torch's). Each .grad is checked against its param first (shape, device, dtype)."""
  from teeny.nn.utils import _clip_grad_norm   # (nn.utils imports nothing from optim: no cycle)
  ps = _dedup(list(params))
  for i, (p, g) in enumerate((p, g) for p in ps if (g := p.grad) is not None): _check_grad("clip_grad_norm_", i, p, g)
  return _clip_grad_norm(ps, max_norm, 2.0, False, eps)

# ***** learning-rate schedules: torch.optim.lr_scheduler *****

def _lr_float(v) -> float: return float(v.numpy().reshape(-1)[0]) if isinstance(v, Tensor) else float(v)

def _per_group(name: str, optimizer: Optimizer, value) -> list:
  """One value per param group: a list or tuple must have one per group, a single value is repeated."""
  n = len(optimizer.param_groups)
  if isinstance(value, (list, tuple)):
    if len(value) != n:
      raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} values, "
                       f"param_groups has {n}.")
    return list(value)
  return [value] * n

def _check_optimizer(where: str, optimizer):
  if not isinstance(optimizer, Optimizer):
    raise TypeError(f"{where}: {type(optimizer).__name__} is not an Optimizer; pass a teeny.nn.optim optimizer")

class LRScheduler:
  """torch's LRScheduler: construction counts as step 0 (it sets each group's lr to its step-0 value, and each group's
  "initial_lr" to its lr when not set yet: base_lrs); `step()` advances last_epoch and writes the new lr of every
  param group (into the buffer the optimizer step reads, so no kernel changes and TinyJit replays see it);
  `get_last_lr()` is the list of lrs last written. Schedules that torch computes from the current lr (StepLR,
  ExponentialLR, CosineAnnealingLR, ...) do the same, so they chain (ChainedScheduler) and follow manual writes to
  param_groups as torch's. `step(epoch)` (deprecated in torch) jumps to that epoch through the closed form where there
  is one. state_dict() is every attribute but the optimizer (plain Python values)."""
  _initial = False
  def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
    _check_optimizer(type(self).__name__, optimizer)
    self.optimizer = optimizer
    if last_epoch == -1:
      for g in optimizer.param_groups: g.setdefault("initial_lr", _lr_float(g["lr"]))
    else:
      for i, g in enumerate(optimizer.param_groups):
        if "initial_lr" not in g:
          raise KeyError(f"{type(self).__name__}: param 'initial_lr' is not specified in param_groups[{i}] when "
                         "resuming scheduler with last_epoch >= 0; build it with last_epoch=-1 and load its state_dict")
    self.base_lrs: list[float] = [float(g["initial_lr"]) for g in optimizer.param_groups]
    self.last_epoch = last_epoch
    self._initial_step()

  def _initial_step(self):
    self._step_count = 0
    self._initial = True
    try: self.step()
    finally: self._initial = False

  @property
  def base_lr(self) -> float:
    """The first group's base lr (teeny's older single-group name)."""
    return self.base_lrs[0]

  def _lrs(self) -> list[float]: return [_lr_float(g["lr"]) for g in self.optimizer.param_groups]

  def get_last_lr(self) -> list[float]: return list(self._last_lr)

  def get_lr(self) -> list[float]:
    """The lrs of the step being taken (called by step(); to read the current lrs use get_last_lr())."""
    raise NotImplementedError

  def _closed_form_at(self, epoch: int) -> list[float] | None:
    """The lrs at `epoch` from base_lrs alone, for schedules that have such a form (else None)."""
    return None

  def step(self, epoch: int | None = None):
    self._step_count += 1
    if epoch is not None:
      warnings.warn("The epoch parameter in `scheduler.step()` is deprecated (as in torch); call step() without it",
                    UserWarning, stacklevel=2)
    self._update_lr(epoch)

  def _update_lr(self, epoch: int | None = None):
    if epoch is None:
      self.last_epoch += 1
      values = self.get_lr()
    else:
      self.last_epoch = epoch
      cf = self._closed_form_at(epoch)
      values = cf if cf is not None else self.get_lr()
    self._write(values)

  def _write(self, values: list[float]):
    for gi, v in enumerate(values): self.optimizer._set_group_lr(gi, float(v), inplace=True)
    self._last_lr = [float(v) for v in values]

  _SKIP: tuple[str, ...] = ("optimizer",)
  def state_dict(self) -> dict:
    """Every attribute but the optimizer, copied (save it with pickle or torch.save; it holds no tensors)."""
    return copy.deepcopy({k: v for k, v in self.__dict__.items() if k not in self._SKIP})

  def load_state_dict(self, state_dict: dict):
    sd = copy.deepcopy(dict(state_dict))
    if "base_lr" in sd and "base_lrs" not in sd:   # teeny's older {"last_epoch", "base_lr"}: that lr, set again
      sd["base_lrs"] = [float(sd.pop("base_lr"))] * len(self.optimizer.param_groups)
      self.__dict__.update(sd)
      if (cf := self._closed_form_at(self.last_epoch)) is not None: self._write(cf)
      return
    self.__dict__.update(sd)

def _fns_state(fns: list) -> list:
  """torch's way of saving lr_lambdas: None for a function, a copy of __dict__ for a callable object."""
  return [None if isinstance(f, types.FunctionType) else dict(f.__dict__) for f in fns]

def _fns_load(fns: list, saved: list):
  for f, s in zip(fns, saved):
    if s is not None: f.__dict__.update(s)

class LambdaLR(LRScheduler):
  """torch's LambdaLR: lr = base_lr * lr_lambda(epoch), one function or one per param group."""
  _SKIP = ("optimizer", "lr_lambdas")
  def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list[Callable], last_epoch: int = -1):
    _check_optimizer(type(self).__name__, optimizer)
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
      if len(lr_lambda) != n: raise ValueError(f"{type(self).__name__}: expected {n} lr_lambdas (one per param "
                                               f"group), but got {len(lr_lambda)}")
      self.lr_lambdas = list(lr_lambda)
    else: self.lr_lambdas = [lr_lambda] * n
    for f in self.lr_lambdas:
      if not callable(f): raise TypeError(f"{type(self).__name__}: lr_lambda should be a function, but got "
                                          f"{type(f).__name__}")
    super().__init__(optimizer, last_epoch)
  def get_lr(self): return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]
  def state_dict(self): return {**super().state_dict(), "lr_lambdas": _fns_state(self.lr_lambdas)}
  def load_state_dict(self, state_dict: dict):
    sd = dict(state_dict)
    saved = sd.pop("lr_lambdas", [None] * len(self.lr_lambdas))
    super().load_state_dict(sd)
    _fns_load(self.lr_lambdas, saved)

class MultiplicativeLR(LambdaLR):
  """torch's MultiplicativeLR: each step multiplies the current lr by lr_lambda(epoch)."""
  def get_lr(self):
    if self._initial: return self._lrs()
    return [lr * f(self.last_epoch) for f, lr in zip(self.lr_lambdas, self._lrs())]

class StepLR(LRScheduler):
  """torch's StepLR: the lr is multiplied by gamma every step_size epochs (base_lr * gamma ** (epoch // step_size))."""
  def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
    if not isinstance(step_size, int) or step_size < 1:
      raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size!r}")
    self.step_size, self.gamma = step_size, gamma
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    if self.last_epoch == 0 or self.last_epoch % self.step_size != 0: return self._lrs()
    return [lr * self.gamma for lr in self._lrs()]
  def _closed_form_at(self, epoch): return [b * self.gamma ** (epoch // self.step_size) for b in self.base_lrs]
  def lr_at(self, epoch: int) -> float: return self.base_lrs[0] * self.gamma ** (epoch // self.step_size)

class MultiStepLR(LRScheduler):
  """torch's MultiStepLR: the lr is multiplied by gamma at each milestone (a milestone given twice, gamma**2)."""
  def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
    self.milestones, self.gamma = collections.Counter(milestones), gamma
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    if self.last_epoch not in self.milestones: return self._lrs()
    return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]
  def _closed_form_at(self, epoch):
    k = bisect.bisect_right(sorted(self.milestones.elements()), epoch)
    return [b * self.gamma ** k for b in self.base_lrs]

class ConstantLR(LRScheduler):
  """torch's ConstantLR: lr * factor until total_iters, then lr."""
  def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
    if factor > 1.0 or factor < 0:
      raise ValueError(f"ConstantLR: constant multiplicative factor expected to be between 0 and 1, got {factor}")
    self.factor, self.total_iters = factor, total_iters
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    if self.last_epoch == 0: return [lr * self.factor for lr in self._lrs()]
    if self.last_epoch != self.total_iters: return self._lrs()
    return [lr * (1.0 / self.factor) for lr in self._lrs()]
  def _closed_form_at(self, epoch):
    return [b * (self.factor + (epoch >= self.total_iters) * (1 - self.factor)) for b in self.base_lrs]

class LinearLR(LRScheduler):
  """torch's LinearLR: the factor goes linearly from start_factor to end_factor over total_iters steps."""
  def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
               total_iters: int = 5, last_epoch: int = -1):
    if start_factor > 1.0 or start_factor <= 0:
      raise ValueError(f"LinearLR: starting multiplicative factor expected to be greater than 0 and less or equal to "
                       f"1, got {start_factor}")
    if end_factor > 1.0 or end_factor < 0:
      raise ValueError(f"LinearLR: ending multiplicative factor expected to be between 0 and 1, got {end_factor}")
    self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    if self.last_epoch == 0: return [lr * self.start_factor for lr in self._lrs()]
    if self._initial or self.last_epoch > self.total_iters: return self._lrs()
    d = self.end_factor - self.start_factor
    return [lr * (1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)) for lr in self._lrs()]
  def _closed_form_at(self, epoch):
    f = self.start_factor + (self.end_factor - self.start_factor) * min(self.total_iters, epoch) / self.total_iters
    return [b * f for b in self.base_lrs]

class ExponentialLR(LRScheduler):
  """torch's ExponentialLR: the lr is multiplied by gamma every step."""
  def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
    self.gamma = gamma
    super().__init__(optimizer, last_epoch)
  def get_lr(self): return self._lrs() if self._initial else [lr * self.gamma for lr in self._lrs()]
  def _closed_form_at(self, epoch): return [b * self.gamma ** epoch for b in self.base_lrs]

class PolynomialLR(LRScheduler):
  """torch's PolynomialLR: base_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""
  def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
    self.total_iters, self.power = total_iters, power
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    if self._initial or self.last_epoch > self.total_iters: return self._lrs()
    e, n = self.last_epoch, self.total_iters
    f = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
    return [lr * f for lr in self._lrs()]
  def _closed_form_at(self, epoch):
    return [b * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power for b in self.base_lrs]

class CosineAnnealingLR(LRScheduler):
  """torch's CosineAnnealingLR (its recursive form, so it follows manual lr changes as torch's): eta_min +
  (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 when nothing else changes the lr."""
  def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
    if T_max <= 0: raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
    self.T_max, self.eta_min = T_max, eta_min
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    e, T, lo = self.last_epoch, self.T_max, self.eta_min
    if self._initial: return self._lrs()
    if self._step_count == 1 and e > 0: return self._closed_form_at(e)
    if (e - 1 - T) % (2 * T) == 0:
      return [lr + (b - lo) * (1 - math.cos(math.pi / T)) / 2 for b, lr in zip(self.base_lrs, self._lrs())]
    return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (lr - lo) + lo
            for lr in self._lrs()]
  def _closed_form_at(self, epoch):
    return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2 for b in self.base_lrs]
  def lr_at(self, epoch: int) -> float: return self._closed_form_at(epoch)[0]

class CosineAnnealingWarmRestarts(LRScheduler):
  """torch's CosineAnnealingWarmRestarts: cosine from base_lr to eta_min over T_i epochs, then restart with
  T_i *= T_mult. step(epoch) may take a fractional epoch (per-batch updates), as torch's."""
  def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):
    if not isinstance(T_0, int) or T_0 <= 0:
      raise ValueError(f"CosineAnnealingWarmRestarts: expected positive integer T_0, but got {T_0}")
    if not isinstance(T_mult, int) or T_mult < 1:
      raise ValueError(f"CosineAnnealingWarmRestarts: expected integer T_mult >= 1, but got {T_mult}")
    self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
    self.T_cur: float = last_epoch
    super().__init__(optimizer, last_epoch)
  def get_lr(self):
    return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for b in self.base_lrs]
  def step(self, epoch: float | None = None):
    self._step_count += 1
    if epoch is None and self.last_epoch < 0: epoch = 0
    if epoch is None:
      epoch = self.last_epoch + 1
      self.T_cur = self.T_cur + 1
      if self.T_cur >= self.T_i: self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
    else:
      if epoch < 0: raise ValueError(f"CosineAnnealingWarmRestarts: expected non-negative epoch, but got {epoch}")
      if epoch >= self.T_0:
        if self.T_mult == 1: self.T_cur = epoch % self.T_0
        else:
          n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
          self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
          self.T_i = self.T_0 * self.T_mult ** n
      else: self.T_i, self.T_cur = self.T_0, epoch
    self.last_epoch = math.floor(epoch)
    self._write(self.get_lr())

class _Cycle(LRScheduler):
  """What CyclicLR and OneCycleLR share: momentum (or Adam's beta1) cycled against the lr. Each new momentum is a
  new constant of the update's kernels (new kernels, kept as captured by a TinyJit); cycle_momentum=False avoids it."""
  def _momentum_setup(self, optimizer: Optimizer, cycle_momentum: bool, base_momentum, max_momentum, fresh: bool):
    self.cycle_momentum = cycle_momentum
    if not cycle_momentum: return
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
      raise ValueError(f"{type(self).__name__}: optimizer must support momentum or beta1 with `cycle_momentum` option "
                       "enabled; pass cycle_momentum=False")
    self.use_beta1 = "betas" in optimizer.defaults
    warnings.warn(f"{type(self).__name__}: cycle_momentum writes a new {'beta1' if self.use_beta1 else 'momentum'} "
                  "every step, a constant of the optimizer's update kernels in teeny: every step compiles new kernels "
                  "(and a TinyJit replay keeps the captured value); pass cycle_momentum=False to cycle the lr alone",
                  UserWarning, stacklevel=3)
    self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
    self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
    if fresh:
      for mx, b, g in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
        self._set_momentum(g, mx)
        g["max_momentum"], g["base_momentum"] = mx, b
  def _set_momentum(self, g, m: float):
    if self.use_beta1: g["betas"] = (m, *g["betas"][1:])
    else: g["momentum"] = m

class CyclicLR(_Cycle):
  """torch's CyclicLR: the lr cycles between base_lr and max_lr (modes triangular, triangular2, exp_range, or a
  scale_fn), momentum against it between max_momentum and base_momentum when cycle_momentum."""
  _SKIP = ("optimizer", "_scale_fn_custom")
  def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000, step_size_down: int | None = None,
               mode: str = "triangular", gamma: float = 1.0, scale_fn: Callable | None = None,
               scale_mode: str = "cycle", cycle_momentum: bool = True, base_momentum: float = 0.8,
               max_momentum: float = 0.9, last_epoch: int = -1):
    _check_optimizer("CyclicLR", optimizer)
    base_lrs = [float(b) for b in _per_group("base_lr", optimizer, base_lr)]
    if last_epoch == -1:
      for gi, b in enumerate(base_lrs): optimizer._set_group_lr(gi, b, inplace=True)
    self.max_lrs = [float(m) for m in _per_group("max_lr", optimizer, max_lr)]
    up = float(step_size_up)
    down = float(step_size_down) if step_size_down is not None else up
    self.total_size, self.step_ratio = up + down, up / (up + down)
    if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
      raise ValueError(f"CyclicLR: mode {mode!r} is invalid and scale_fn is None; use 'triangular', 'triangular2' or "
                       "'exp_range', or pass a scale_fn")
    self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
    self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
    self._momentum_setup(optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch == -1)
    super().__init__(optimizer, last_epoch)
    self.base_lrs = base_lrs
  def scale_fn(self, x: float) -> float:
    if self._scale_fn_custom is not None: return self._scale_fn_custom(x)
    if self.mode == "triangular": return 1.0
    if self.mode == "triangular2": return 1 / (2.0 ** (x - 1))
    return self.gamma ** x
  def get_lr(self):
    cycle = math.floor(1 + self.last_epoch / self.total_size)
    x = 1.0 + self.last_epoch / self.total_size - cycle
    f = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
    s = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
    lrs = [b + (m - b) * f * s for b, m in zip(self.base_lrs, self.max_lrs)]
    if self.cycle_momentum:
      for g, b, m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
        self._set_momentum(g, m - (m - b) * f * s)
    return lrs
  def state_dict(self):
    fn = self._scale_fn_custom
    return {**super().state_dict(), "_scale_fn_custom": None if fn is None or isinstance(fn, types.FunctionType)
            else dict(fn.__dict__)}
  def load_state_dict(self, state_dict: dict):
    sd = dict(state_dict)
    fn = sd.pop("_scale_fn_custom", None)
    super().load_state_dict(sd)
    if fn is not None and self._scale_fn_custom is not None: self._scale_fn_custom.__dict__.update(fn)

class OneCycleLR(_Cycle):
  """torch's OneCycleLR: the lr rises from max_lr/div_factor to max_lr over pct_start of total_steps, then anneals
  (cos or linear) to initial_lr/final_div_factor (three_phase: back to initial_lr first); momentum moves against it.
  Stepping past total_steps raises ValueError, as torch's."""
  def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
               steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
               cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
               final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
    _check_optimizer("OneCycleLR", optimizer)
    if total_steps is not None:
      if not isinstance(total_steps, int) or total_steps <= 0:
        raise ValueError(f"OneCycleLR: expected positive integer total_steps, but got {total_steps}")
      self.total_steps = total_steps
    elif epochs is not None and steps_per_epoch is not None:
      if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"OneCycleLR: expected positive integer epochs, but got {epochs}")
      if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"OneCycleLR: expected positive integer steps_per_epoch, but got {steps_per_epoch}")
      self.total_steps = epochs * steps_per_epoch
    else: raise ValueError("OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
      raise ValueError(f"OneCycleLR: expected float between 0 and 1 pct_start, but got {pct_start}")
    if anneal_strategy not in ("cos", "linear"):
      raise ValueError(f"OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
    self.anneal_strategy = anneal_strategy
    n = self.total_steps
    if three_phase:
      self._phases = [(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                      (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
    else:
      self._phases = [(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    if last_epoch == -1:
      for m, g in zip(_per_group("max_lr", optimizer, max_lr), optimizer.param_groups):
        g["initial_lr"] = float(m) / div_factor
        g["max_lr"] = float(m)
        g["min_lr"] = g["initial_lr"] / final_div_factor
    self._momentum_setup(optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch == -1)
    super().__init__(optimizer, last_epoch)
  def _anneal(self, start: float, end: float, pct: float) -> float:
    if self.anneal_strategy == "cos": return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start
  def get_lr(self):
    t = self.last_epoch
    if t > self.total_steps:
      raise ValueError(f"OneCycleLR: tried to step {t} times. The specified number of total steps is "
                       f"{self.total_steps}; build it with a larger total_steps")
    lrs = []
    for g in self.optimizer.param_groups:
      start = 0.0
      for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
        if t <= end or i == len(self._phases) - 1:
          pct = (t - start) / (end - start)
          lrs.append(self._anneal(g[lr0], g[lr1], pct))
          if self.cycle_momentum: self._set_momentum(g, self._anneal(g[m0], g[m1], pct))
          break
        start = end
    return lrs

def _check_schedulers(where: str, optimizer, schedulers):
  for i, s in enumerate(schedulers):
    if not hasattr(s, "optimizer"):
      raise TypeError(f"{where}: the scheduler at index {i} should have `optimizer` as its attribute")
    if isinstance(s, ReduceLROnPlateau):
      raise ValueError(f"{where} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                       f"specified when calling `step`, but got one at index {i} in the given schedulers sequence")
    if s.optimizer is not optimizer:
      raise ValueError(f"{where} expects all schedulers to belong to the same optimizer, but got scheduler "
                       f"{type(s).__name__} at index {i} with another optimizer")

class SequentialLR(LRScheduler):
  """torch's SequentialLR: schedulers[i] runs between milestones[i-1] and milestones[i], each started from its own
  step 0 (its closed form at 0) when its milestone is reached."""
  _SKIP = ("optimizer", "_schedulers")
  def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list[int], last_epoch: int = -1):
    if len(schedulers) < 1: raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler")
    _check_schedulers("SequentialLR", optimizer, schedulers)
    if len(milestones) != len(schedulers) - 1:
      raise ValueError("SequentialLR expects number of schedulers provided to be one more than the number of milestone "
                       f"points, but got number of schedulers {len(schedulers)} and the number of milestones to be "
                       f"equal to {len(milestones)}")
    self._schedulers, self._milestones = list(schedulers), list(milestones)
    self.last_epoch, self.optimizer = last_epoch + 1, optimizer
    self.base_lrs = [float(g["initial_lr"]) for g in optimizer.param_groups]
    for gi, g in enumerate(optimizer.param_groups): optimizer._set_group_lr(gi, float(g["initial_lr"]), inplace=True)
    self._undo(self)
    idx = bisect.bisect_right(self._milestones, 0)
    self._schedulers[idx]._initial_step()
    self._last_lr = self._schedulers[idx].get_last_lr()
  @staticmethod
  def _undo(s):
    """Take back the step each scheduler took when it was built (nested ones too)."""
    if hasattr(s, "_schedulers"):
      for c in s._schedulers: SequentialLR._undo(c)
    elif hasattr(s, "last_epoch"): s.last_epoch -= 1
  def step(self):
    self.last_epoch += 1
    idx = bisect.bisect_right(self._milestones, self.last_epoch)
    s = self._schedulers[idx]
    if idx > 0 and self._milestones[idx - 1] == self.last_epoch: s._update_lr(0)
    else: s.step()
    self._last_lr = s.get_last_lr()
  def state_dict(self): return {**super().state_dict(), "_schedulers": [s.state_dict() for s in self._schedulers]}
  def load_state_dict(self, state_dict: dict):
    sd = dict(state_dict)
    subs = sd.pop("_schedulers")
    super().load_state_dict(sd)
    for s, d in zip(self._schedulers, subs): s.load_state_dict(d)

class ChainedScheduler(SequentialLR):
  """torch's ChainedScheduler: every step() steps each scheduler in turn (their effects compound)."""
  def __init__(self, schedulers: list, optimizer: Optimizer | None = None):  # (not SequentialLR's: none is undone)
    if len(schedulers) < 1:
      raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler")
    optimizer = optimizer or schedulers[0].optimizer
    _check_schedulers("ChainedScheduler", optimizer, schedulers)
    self._schedulers, self.optimizer = list(schedulers), optimizer
    self._last_lr = self._schedulers[-1]._lrs()
  def step(self):
    for s in self._schedulers: s.step()
    self._last_lr = self._schedulers[-1]._lrs()

class ReduceLROnPlateau(LRScheduler):
  """torch's ReduceLROnPlateau: step(metric) after each evaluation; when the metric has not improved (mode 'min' or
  'max', by threshold, relative or absolute) for more than `patience` steps, every group's lr is multiplied by factor
  (not below min_lr, and only when it changes by more than eps), then `cooldown` steps pass before counting again.
  A Tensor metric is read back (.item()), as torch's float(metric)."""
  def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
               threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0, eps: float = 1e-8):
    if factor >= 1.0: raise ValueError(f"ReduceLROnPlateau: factor should be < 1.0, got {factor}")
    _check_optimizer("ReduceLROnPlateau", optimizer)
    self.factor, self.optimizer = factor, optimizer
    if isinstance(min_lr, (list, tuple)):
      if len(min_lr) != len(optimizer.param_groups):
        raise ValueError(f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
      self.default_min_lr, self.min_lrs = None, [float(m) for m in min_lr]
    else: self.default_min_lr, self.min_lrs = min_lr, [float(min_lr)] * len(optimizer.param_groups)
    self.patience, self.cooldown, self.eps, self.last_epoch = patience, cooldown, eps, 0
    self._last_lr = self._lrs()
    self._init_is_better(mode, threshold, threshold_mode)
    self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0
  def _init_is_better(self, mode: str, threshold: float, threshold_mode: str):
    if mode not in ("min", "max"): raise ValueError(f"ReduceLROnPlateau: mode {mode} is unknown; use 'min' or 'max'")
    if threshold_mode not in ("rel", "abs"):
      raise ValueError(f"ReduceLROnPlateau: threshold mode {threshold_mode} is unknown; use 'rel' or 'abs'")
    self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
    self.mode_worse = math.inf if mode == "min" else -math.inf
  @property
  def in_cooldown(self) -> bool: return self.cooldown_counter > 0
  def _is_better(self, a: float, best: float) -> bool:
    if self.mode == "min": return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else
                                       best - self.threshold)
    return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold)
  def step(self, metrics, epoch: int | None = None):  # type: ignore[override]
    current = float(metrics.item()) if isinstance(metrics, Tensor) else float(metrics)
    if epoch is not None: warnings.warn("The epoch parameter in `scheduler.step()` is deprecated (as in torch)",
                                        UserWarning, stacklevel=2)
    self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
    if self._is_better(current, self.best): self.best, self.num_bad_epochs = current, 0
    else: self.num_bad_epochs += 1
    if self.in_cooldown:
      self.cooldown_counter -= 1
      self.num_bad_epochs = 0
    if self.num_bad_epochs > self.patience:
      self._reduce_lr()
      self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
    self._last_lr = self._lrs()
  def _reduce_lr(self):
    n = len(self.optimizer.param_groups)
    if n != len(self.min_lrs):
      if self.default_min_lr is None:
        raise RuntimeError(f"ReduceLROnPlateau: the number of param groups in the optimizer ({n}) differs from when it "
                           f"was initialized ({len(self.min_lrs)}); set its min_lrs to one value per group")
      self.min_lrs = [float(self.default_min_lr)] * n
    for gi, old in enumerate(self._lrs()):
      new = max(old * self.factor, self.min_lrs[gi])
      if old - new > self.eps: self.optimizer._set_group_lr(gi, new, inplace=True)
  def load_state_dict(self, state_dict: dict):
    super().load_state_dict(state_dict)
    self._init_is_better(self.mode, self.threshold, self.threshold_mode)

class LinearWarmup(LRScheduler):
  """Ramp linearly from start_factor*base_lr to base_lr over warmup_steps (torch's LinearLR), then hand over to `after`
  (another schedule on the same optimizer with a closed form, started at its step 0)."""
  _SKIP = ("optimizer", "after")
  def __init__(self, optimizer: Optimizer, warmup_steps: int, after: LRScheduler | None = None,
               start_factor: float | None = None):
    if warmup_steps < 1: raise ValueError(f"LinearWarmup: warmup_steps must be >= 1, got {warmup_steps}")
    if after is not None and after._closed_form_at(0) is None:
      raise TypeError(f"LinearWarmup: after must be a schedule with a closed form (StepLR, CosineAnnealingLR, "
                      f"ExponentialLR, ...), got {type(after).__name__}; use SequentialLR for others")
    self.warmup_steps, self.after = warmup_steps, after
    self.start_factor = 1.0 / warmup_steps if start_factor is None else start_factor
    super().__init__(optimizer, -1)
  def get_lr(self): return self._closed_form_at(self.last_epoch)
  def _closed_form_at(self, epoch) -> list[float]:
    if epoch >= self.warmup_steps and self.after is not None:
      cf = self.after._closed_form_at(epoch - self.warmup_steps)
      assert cf is not None   # (checked at construction)
      return cf
    frac = min(epoch, self.warmup_steps) / self.warmup_steps
    return [b * (self.start_factor + (1 - self.start_factor) * frac) for b in self.base_lrs]
  def lr_at(self, epoch: int) -> float: return self._closed_form_at(epoch)[0]
  def state_dict(self):
    return {**super().state_dict(), "after": None if self.after is None else self.after.state_dict()}
  def load_state_dict(self, state_dict: dict):
    sd = dict(state_dict)
    after = sd.pop("after", None)
    if self.after is not None and after is not None: self.after.load_state_dict(after)
    super().load_state_dict(sd)

# `from teeny.nn.optim import lr_scheduler` (and `import teeny.nn.optim.lr_scheduler`), as torch.optim.lr_scheduler
lr_scheduler = types.ModuleType(__name__ + ".lr_scheduler", "torch.optim.lr_scheduler's schedules (teeny.nn.optim's).")
for _c in (LRScheduler, LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR,
           PolynomialLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, SequentialLR,
           ChainedScheduler, ReduceLROnPlateau, LinearWarmup):
  setattr(lr_scheduler, _c.__name__, _c)
sys.modules[lr_scheduler.__name__] = lr_scheduler
