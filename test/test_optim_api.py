"""torch.optim's API on teeny's optimizers: param groups (per-group options, param_groups read and written,
add_param_group, torch's errors), Adamax/NAdam/RAdam/Adadelta and the options of the others, step by step against
torch.optim, and every torch.optim.lr_scheduler schedule's lr sequence, per group, against torch's (plus state_dict
round trips). Every optimizer test uses the same tiny param shapes, so the update kernels are shared."""
import pickle, warnings
import numpy as np
import pytest
from teeny import Tensor, TinyJit
from teeny.dtype import dtypes
from teeny.nn import optim
from teeny.nn.optim import lr_scheduler
from helpers import needs_values

pytestmark = pytest.mark.filterwarnings("ignore:.*cycle_momentum writes")
torch = pytest.importorskip("torch")
hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

SHAPES = [(3, 2), (2,)]

def _vals(seed: int, shapes=SHAPES, steps: int = 8):
  r = np.random.default_rng(seed)
  init = [r.uniform(-1, 1, s).astype(np.float32) for s in shapes]
  grads = [[r.uniform(-1, 1, s).astype(np.float32) for s in shapes] for _ in range(steps)]
  return init, grads

def _groups(ps, groups):
  """Param-group dicts over ps: groups is None (a plain list) or one dict of options per param."""
  return list(ps) if groups is None else [{"params": [p], **g} for p, g in zip(ps, groups)]

def _run_pair(name: str, kw: dict, groups=None, steps: int = 8, seed: int = 0, shapes=SHAPES, dtype=np.float32,
              rtol=1e-5, atol=1e-6, between=None, tgrad=None):
  """teeny's and torch's `name` optimizer over the same params and grads, params compared after every step.
  between(s, opt, topt) runs before step s (writes to param_groups); tgrad(g) makes the grad a view (non-contiguous)."""
  init, grads = _vals(seed, shapes, steps)
  ours = [Tensor(v.astype(dtype), requires_grad=True) for v in init]
  theirs = [torch.tensor(v.astype(dtype), requires_grad=True) for v in init]
  o = getattr(optim, name)(_groups(ours, groups), **kw)
  to = getattr(torch.optim, name)(_groups(theirs, groups), **kw)
  for s in range(steps):
    if between is not None: between(s, o, to)
    for p, tp, g in zip(ours, theirs, grads[s]):
      g = g.astype(dtype)
      p.grad, tp.grad = (Tensor(g), torch.tensor(g)) if tgrad is None else tgrad(g)
    o.step()
    to.step()
    for i, (p, tp) in enumerate(zip(ours, theirs)):
      assert p.shape == tuple(tp.shape) and p.dtype == dtypes.from_np(np.dtype(dtype))
      np.testing.assert_allclose(p.numpy().astype(np.float32), tp.detach().float().numpy(), rtol=rtol, atol=atol,
                                 err_msg=f"{name} {kw} {groups} step {s} param {i}")
  return o, to, ours

# ***** 1. the new optimizers, and the options of the others, against torch

CASES = [
  ("Adamax", {}), ("Adamax", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}),
  ("NAdam", {}), ("NAdam", {"lr": 0.05, "momentum_decay": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
  ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
  ("RAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1,
                                      "decoupled_weight_decay": True}),
  ("RAdam", {"weight_decay": 0.1, "maximize": True}),
  ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
  ("ASGD", {"lr": 0.05, "t0": 3.0, "lambd": 0.01}), ("ASGD", {"weight_decay": 0.1, "maximize": True, "alpha": 0.5}),
  ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
]   # (the other options of SGD, Adam, AdamW, RMSprop and Adagrad: test_optim_state_parity.py)

@needs_values
@pytest.mark.parametrize("name,kw", CASES, ids=lambda x: x if isinstance(x, str) else "-".join(map(str, x)))
def test_trajectory_matches_torch(name, kw):
  _run_pair(name, kw)

def _rev(g): return list(reversed(range(g.ndim)))

@needs_values
@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD"])
def test_new_optimizers_edge_params(name):
  """Empty and size-1 params and a non-contiguous (transposed) grad, float16 params (two of them: every dtype compiles
  its own kernels), and torch's defaults."""
  _run_pair(name, {}, shapes=[(0,), (1, 1), (2, 3)], steps=3,
            tgrad=lambda g: (Tensor(g.T.copy()).permute(*_rev(g)), torch.tensor(g.T.copy()).permute(*_rev(g))))
  if name in ("NAdam", "RAdam"): _run_pair(name, {}, shapes=[(3,)], steps=2, dtype=np.float16, rtol=2e-3, atol=2e-3)
  t = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults
  ours = getattr(optim, name)([Tensor([0.0], requires_grad=True)]).defaults
  assert {k: ours[k] for k in ours} == {k: t[k] for k in ours}

@needs_values
@settings(max_examples=10, deadline=None)
@given(st.sampled_from(CASES[:-1]), st.integers(0, 2**16), st.floats(0.001, 0.2), st.integers(1, 5))
def test_random_values_and_lr(case, seed, lr, steps):
  """Random params, grads, lr and step count over the option sets above (the lr is a buffer: no new kernels)."""
  name, kw = case
  _run_pair(name, {**kw, "lr": lr}, seed=seed, steps=steps, rtol=2e-5, atol=2e-6)

# ***** 2. param groups

@needs_values
@pytest.mark.parametrize("name,kw,groups", [
  ("SGD", {"lr": 0.1, "momentum": 0.9}, [{"lr": 0.3}, {"momentum": 0.0, "weight_decay": 0.1}]),
  ("SGD", {"lr": 0.1}, [{"momentum": 0.5, "dampening": 0.5}, {"momentum": 0.9, "nesterov": True}]),
  ("Adam", {"lr": 0.05}, [{"betas": (0.5, 0.9), "amsgrad": True}, {"lr": 0.01, "weight_decay": 0.1}]),
  ("RMSprop", {"lr": 0.01}, [{"centered": True}, {"momentum": 0.5, "alpha": 0.9}]),
  ("Adagrad", {"lr": 0.1}, [{"lr_decay": 0.2}, {"eps": 1e-3, "weight_decay": 0.1}]),
  ("NAdam", {}, [{"betas": (0.8, 0.99), "momentum_decay": 0.01, "lr": 0.05}, {}]),
  ("RAdam", {}, [{"betas": (0.5, 0.9), "lr": 0.05}, {"weight_decay": 0.1, "maximize": True}]),
  ("ASGD", {"lr": 0.05, "t0": 2.0}, [{"lr": 0.1}, {"lambd": 0.01}]),
])
def test_param_groups_match_torch(name, kw, groups):
  o, to, _ = _run_pair(name, kw, groups, steps=5)
  assert len(o.param_groups) == len(to.param_groups) == 2
  for g, tg in zip(o.param_groups, to.param_groups):
    assert set(tg) - {"foreach", "differentiable", "capturable", "fused"} <= set(g)
    for k in g:
      if k == "params": assert len(g[k]) == len(tg[k])
      elif k in tg: assert g[k] == pytest.approx(tg[k]), k

@needs_values
def test_write_param_groups_mid_run():
  """g["lr"] and g["momentum"] written between steps change the next steps as torch's (momentum switched on later
  gets its buffer then); the float lr goes into the same buffer, and reads back as written."""
  def between(s, o, to):
    if s == 2:
      for g, tg in zip(o.param_groups, to.param_groups): g["lr"], tg["lr"] = 0.05, 0.05
    if s == 4:
      o.param_groups[1]["momentum"] = to.param_groups[1]["momentum"] = 0.9
      o.param_groups[0]["lr"] = to.param_groups[0]["lr"] = 0.2
  o, _, _ = _run_pair("SGD", {"lr": 0.1}, [{}, {"lr": 0.3}], steps=7, between=between)
  assert o.param_groups[0]["lr"] == 0.2 and o.param_groups[1]["lr"] == 0.05
  assert isinstance(o.param_groups[0]["lr"], float) and o.lr.shape == (1,)

@needs_values
def test_asgd_lr_write_mid_run():
  """ASGD's eta follows a written lr one step late, as torch's (eta is set from the lr after each step)."""
  def between(s, o, to):
    if s in (2, 4): o.param_groups[1]["lr"] = to.param_groups[1]["lr"] = 0.02 * s
  _run_pair("ASGD", {"lr": 0.05, "t0": 2.0}, [{"lr": 0.1}, {"lambd": 0.01}], steps=6, between=between)

@needs_values
def test_zero_grad_and_adagrad_group_accumulator():
  a = Tensor([1.0, 2.0], requires_grad=True)
  o = optim.Adagrad([{"params": [a], "initial_accumulator_value": 0.5}], lr=0.1)
  np.testing.assert_equal(o.sum[0].numpy(), [0.5, 0.5])   # the group's value (torch uses the constructor's)
  (a * a).sum().backward()
  o.zero_grad(set_to_none=False)
  np.testing.assert_equal(a.grad.numpy(), [0.0, 0.0])
  o.zero_grad()
  assert a.grad is None

@needs_values
def test_write_betas_and_add_param_group():
  extra = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
  holder: dict = {}
  def between(s, o, to):
    if s == 1:
      o.param_groups[0]["betas"] = to.param_groups[0]["betas"] = (0.5, 0.9)
    if s == 2:
      holder["q"], holder["tq"] = Tensor(extra, requires_grad=True), torch.tensor(extra, requires_grad=True)
      o.add_param_group({"params": [holder["q"]], "lr": 0.02, "amsgrad": True})
      to.add_param_group({"params": [holder["tq"]], "lr": 0.02, "amsgrad": True})
    if s >= 2:
      holder["q"].grad, holder["tq"].grad = Tensor(extra * s), torch.tensor(extra * s)
  o, to, _ = _run_pair("Adam", {"lr": 0.05}, steps=5, between=between)
  np.testing.assert_allclose(holder["q"].numpy(), holder["tq"].detach().numpy(), rtol=1e-5, atol=1e-6)
  assert len(o.param_groups) == 2 and o.param_groups[1]["lr"] == 0.02 and o.param_groups[1]["amsgrad"]
  assert sorted(k for k in o.state_dict() if k.startswith(("group_lrs", "param_steps", "v_max"))) == \
    ["group_lrs.0", "param_steps", "v_max.0", "v_max.1", "v_max.2"]

@needs_values
def test_generator_and_named_params_and_linear_mse():
  """model.parameters() (a generator) and named_parameters() pairs, a tiny Linear trained on MSE with two groups."""
  from teeny import nn
  r = np.random.default_rng(3)
  x, y = r.uniform(-1, 1, (4, 3)).astype(np.float32), r.uniform(-1, 1, (4, 2)).astype(np.float32)
  lin, tlin = nn.Linear(3, 2), torch.nn.Linear(3, 2)
  with torch.no_grad():
    tlin.weight.copy_(torch.tensor(lin.weight.numpy()))
    tlin.bias.copy_(torch.tensor(lin.bias.numpy()))
  o = optim.SGD([{"params": (p for p in [lin.weight])}, {"params": [lin.bias], "lr": 0.5}], lr=0.1, momentum=0.9)
  to = torch.optim.SGD([{"params": [tlin.weight]}, {"params": [tlin.bias], "lr": 0.5}], lr=0.1, momentum=0.9)
  for _ in range(4):
    o.zero_grad()
    ((lin(Tensor(x)) - Tensor(y)) ** 2).mean().backward()
    o.step()
    to.zero_grad()
    ((tlin(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
    to.step()
  np.testing.assert_allclose(lin.weight.numpy(), tlin.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(lin.bias.numpy(), tlin.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
  named = optim.Adam([("w", lin.weight), ("b", lin.bias)])
  assert named.params[0] is lin.weight and named.params[1] is lin.bias

@needs_values
def test_group_lr_write_inside_jit():
  """A TinyJit step keeps reading each group's lr buffer: g["lr"] written between calls changes the replays."""
  def run(jit: bool):
    a, b = Tensor([1.0, -2.0], requires_grad=True), Tensor([0.5], requires_grad=True)
    o = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.2}], lr=0.1, momentum=0.5)
    def step(x: Tensor):
      o.zero_grad()
      loss = (a * x).sum() + (b * b).sum()
      loss.backward()
      o.step()
      return loss.realize()
    f = TinyJit(step) if jit else step
    for i in range(5):
      o.param_groups[1]["lr"] = 0.1 * (i + 1)
      o.param_groups[0]["lr"] = 0.05 * (i + 1)
      f(Tensor([1.0, 2.0]))
    return a.numpy(), b.numpy()
  for x, y in zip(run(True), run(False)): np.testing.assert_allclose(x, y, rtol=1e-6)

def test_param_groups_structure():
  a, b, c = Tensor([1.0], requires_grad=True), Tensor([2.0], requires_grad=True), Tensor([3], dtype=dtypes.int32)
  o = optim.SGD([{"params": [a, a, c]}, {"params": b, "lr": 0.5, "tag": "bias"}], lr=0.1, momentum=0.9)
  assert o.params == [a, b] and o.buffers == [c]   # the int tensor is not trained; a repeated param counts once
  g0, g1 = o.param_groups
  assert list(g0) == ["params", "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"]
  assert g0["params"] == [a] and g1["params"] == [b] and g1["tag"] == "bias" and g1.get("missing") is None
  assert o.defaults == {"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False,
                        "maximize": False}
  g1["note"] = 1
  del g1["note"]
  assert "note" not in g1 and "Parameter Group 1" in repr(o)
  # param_groups and defaults are not optimizer state: the state dict keys stay as before, plus group_lrs
  assert sorted(o.state_dict()) == ["b.0", "b.1", "group_lrs.0", "lr", "steps"]
  with pytest.raises(ValueError, match="'params' cannot be replaced"): g0["params"] = [b]
  with pytest.raises(KeyError, match="cannot be deleted"): del g0["momentum"]
  with pytest.raises(ValueError, match="invalid learning rate"): g0["lr"] = -1.0
  with pytest.raises(TypeError, match="lr must be a float or a one-element Tensor"): g0["lr"] = "x"
  t = Tensor([0.25])
  g0["lr"] = t
  assert g0["lr"] is t and o.lr is t

_P = Tensor([1.0], requires_grad=True)

@pytest.mark.parametrize("make,exc,match", [
  (lambda: optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
  (lambda: optim.Adam(iter([])), ValueError, "optimizer got an empty parameter list"),
  (lambda: optim.SGD([_P, 3]), TypeError, "can only optimize Tensors, but one of the params is int"),
  (lambda: optim.SGD(_P), TypeError, "should be an iterable of Tensors or dicts, but got a Tensor"),
  (lambda: optim.SGD(3), TypeError, "params must be an iterable of Tensors or dicts, got int"),
  (lambda: optim.SGD({_P}), TypeError, "ordered collections"),
  (lambda: optim.SGD([{"params": [_P]}, {"params": [_P]}]), ValueError, "more than one parameter group"),
  (lambda: optim.SGD([{"lr": 0.1}]), KeyError, "needs a 'params' entry"),
  (lambda: optim.SGD([{"params": [_P]}, _P]), TypeError, "not a mix"),
  (lambda: optim.SGD([{"params": [_P], "momentum": -1.0}]), ValueError, r"SGD param group 0: momentum \(-1.0\)"),
  (lambda: optim.SGD([{"params": [_P], "nesterov": True}]), ValueError, "param group 0: nesterov momentum requires"),
  (lambda: optim.Adam([{"params": [_P], "lr": -0.5}]), ValueError, "invalid learning rate -0.5"),
  (lambda: optim.Adam([{"params": [_P], "betas": (0.9,)}]), ValueError, "betas must be a pair"),
  (lambda: optim.NAdam([_P], betas=(1.0, 0.9)), ValueError, r"NAdam: betas must be in \[0, 1\)"),
  (lambda: optim.NAdam([_P], momentum_decay=-1.0), ValueError, r"NAdam: momentum_decay \(-1.0\) must be >= 0"),
  (lambda: optim.RAdam([_P], eps=-1.0), ValueError, r"RAdam: eps \(-1.0\) must be >= 0"),
  (lambda: optim.Adamax([_P], weight_decay=-1.0), ValueError, r"Adamax: weight_decay \(-1.0\) must be >= 0"),
  (lambda: optim.Adadelta([_P], rho=1.5), ValueError, r"Adadelta: rho must be in \[0, 1\], got 1.5"),
  (lambda: optim.SGD([Tensor([1.0], requires_grad=False)]), ValueError, "no parameters that require grad"),
])
def test_errors(make, exc, match):
  with pytest.raises(exc, match=match): make()

def test_errors_match_torch_types():
  """The same mistakes raise the same exception types in torch."""
  tp = torch.zeros(1, requires_grad=True)
  for bad, exc in [([], ValueError), ([tp, 3], TypeError), (tp, TypeError), ([{"params": {tp}}], TypeError),
                   ([{"params": [tp]}, {"params": [tp]}], ValueError), ([{"lr": 0.1}], KeyError)]:
    with pytest.raises(exc): torch.optim.SGD(bad, lr=0.1)

def test_add_param_group_errors():
  a, b = Tensor([1.0], requires_grad=True), Tensor([2.0], requires_grad=True)
  o = optim.Adam([a])
  with pytest.raises(ValueError, match="Adam.add_param_group: some parameters appear in more than one"):
    o.add_param_group({"params": [a]})
  with pytest.raises(TypeError, match="param_group must be a dict, but got list"): o.add_param_group([b])
  with pytest.raises(ValueError, match="betas must be in"): o.add_param_group({"params": [b], "betas": (2.0, 0.9)})
  assert len(o.param_groups) == 1 and o.params == [a]   # nothing was added by the failed calls
  tp, tq = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
  to = torch.optim.Adam([tp])
  with pytest.raises(ValueError): to.add_param_group({"params": [tp]})
  with pytest.raises(TypeError): to.add_param_group([tq])

# ***** 3. schedules: lr sequences per group against torch.optim.lr_scheduler

def _sched_pair(make, tmake=None, opt="SGD", n=30, lrs=(0.1, 0.05), metric=None):
  """Run the same schedule over teeny's and torch's optimizer (two groups with different lrs) for n steps, comparing
  get_last_lr(), the lr buffers the step reads, last_epoch and (for cycling schedules) the momentum."""
  tmake = tmake or make
  ps = [Tensor([1.0], requires_grad=True), Tensor([2.0], requires_grad=True)]
  tps = [torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)]
  kw = {"momentum": 0.9} if opt == "SGD" else {}
  o = getattr(optim, opt)([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs)], **kw)
  to = getattr(torch.optim, opt)([{"params": [p], "lr": lr} for p, lr in zip(tps, lrs)], **kw)
  s, ts = make(lr_scheduler, o), tmake(torch.optim.lr_scheduler, to)
  got, want = [], []
  for k in range(n):
    got.append(s.get_last_lr() + [float(t.numpy()[0]) for t in o._lrs()])
    want.append([float(x) for x in ts.get_last_lr()] + [float(tg["lr"]) for tg in to.param_groups])
    if hasattr(ts, "last_epoch"): assert s.last_epoch == ts.last_epoch, k
    for g, tg in zip(o.param_groups, to.param_groups):
      for key in ("momentum", "betas"):
        if key in tg: assert g[key] == pytest.approx(tg[key], rel=1e-12), (k, key)
    to.step()   # (no grads: nothing changes, but torch then does not warn about the order)
    if metric is None: s.step(); ts.step()
    else: s.step(metric(k)); ts.step(metric(k))
  np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6, atol=1e-12)
  return s, ts, o

SCHEDULES = {
  "step": lambda m, o: m.StepLR(o, 4, 0.5),
  "multistep": lambda m, o: m.MultiStepLR(o, [3, 7, 7, 20], 0.5),
  "exponential": lambda m, o: m.ExponentialLR(o, 0.9),
  "lambda": lambda m, o: m.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)]),
  "multiplicative": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05),
  "cosine": lambda m, o: m.CosineAnnealingLR(o, 7, 0.001),
  "warm_restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, 3, 2, 0.002),
  "linear": lambda m, o: m.LinearLR(o, 0.2, 0.9, 8),
  "constant": lambda m, o: m.ConstantLR(o, 0.25, 6),
  "polynomial": lambda m, o: m.PolynomialLR(o, 12, 2.0),
  "onecycle": lambda m, o: m.OneCycleLR(o, [0.5, 0.2], total_steps=31),
  "onecycle_3phase_linear": lambda m, o: m.OneCycleLR(o, 0.4, epochs=4, steps_per_epoch=8, pct_start=0.25,
                                                      anneal_strategy="linear", three_phase=True),
  "cyclic": lambda m, o: m.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=4, step_size_down=3),
  "cyclic_triangular2": lambda m, o: m.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3, mode="triangular2",
                                                cycle_momentum=False),
  "cyclic_exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.95),
  "cyclic_scale_fn": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x,
                                             scale_mode="iterations"),
  "sequential": lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, 1.0, 5), m.ExponentialLR(o, 0.9),
                                                m.CosineAnnealingLR(o, 6)], [5, 15]),
  "chained": lambda m, o: m.ChainedScheduler([m.StepLR(o, 3, 0.5), m.ExponentialLR(o, 0.95),
                                              m.ConstantLR(o, 0.5, 4)]),
  "nested": lambda m, o: m.ChainedScheduler([m.SequentialLR(o, [m.ConstantLR(o, 0.5, 3), m.ExponentialLR(o, 0.9)],
                                                            [4]), m.MultiStepLR(o, [8, 12], 0.5)]),
}

@needs_values
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_torch(name):
  _sched_pair(SCHEDULES[name])

@needs_values
def test_onecycle_cycles_adam_betas():
  _sched_pair(lambda m, o: m.OneCycleLR(o, 0.3, total_steps=20), opt="Adam", n=20)

@needs_values
@pytest.mark.parametrize("kw", [{}, {"mode": "max", "factor": 0.5, "patience": 2, "cooldown": 2},
                                {"threshold_mode": "abs", "threshold": 0.05, "patience": 1, "min_lr": [0.02, 0.0]},
                                {"patience": 0, "min_lr": 0.01, "eps": 0.02}])
def test_reduce_on_plateau(kw):
  vals = [1.0, 0.9, 0.95, 0.97, 0.96, 0.98, 0.85, 0.86, 0.87, 0.9, 0.91, 0.7, 0.72, 0.73, 0.74, 0.75] * 2
  s, _, _ = _sched_pair(lambda m, o: m.ReduceLROnPlateau(o, **kw), metric=lambda k: vals[k], n=len(vals))
  s.step(Tensor(0.5))   # a Tensor metric is read back

@needs_values
def test_manual_lr_write_followed_by_chainable_schedule():
  """StepLR and friends compute from the current lr, so a manual write in between carries on as in torch."""
  def mk(m, o):
    s = m.StepLR(o, 2, 0.5)
    for g in o.param_groups: g["lr"] = g["lr"] * 3
    return s
  _sched_pair(mk, n=8)

@needs_values
@pytest.mark.parametrize("name", ["step", "cosine", "onecycle", "cyclic", "sequential", "chained", "lambda",
                                  "warm_restarts"])
def test_scheduler_state_dict_round_trip(name):
  """10 steps, save the optimizer's and the schedule's state (pickled), load them into fresh ones, 10 more steps:
  the same lrs as 20 steps straight."""
  def make():
    o = optim.SGD([{"params": [Tensor([1.0], requires_grad=True)], "lr": 0.1},
                   {"params": [Tensor([1.0], requires_grad=True)], "lr": 0.05}], momentum=0.9)
    return o, SCHEDULES[name](lr_scheduler, o)
  o, s = make()
  straight = []
  for _ in range(20):
    s.step()
    straight.append(s.get_last_lr())
  o1, s1 = make()
  for _ in range(10): s1.step()
  sd, osd = pickle.loads(pickle.dumps(s1.state_dict())), {k: Tensor(v.numpy()) for k, v in o1.state_dict().items()}
  assert "optimizer" not in sd
  o2, s2 = make()
  o2.load_state_dict(osd)
  s2.load_state_dict(sd)
  assert getattr(s2, "last_epoch", None) == getattr(s1, "last_epoch", None) and s2.get_last_lr() == s1.get_last_lr()
  resumed = straight[:10]
  for _ in range(10):
    s2.step()
    resumed.append(s2.get_last_lr())
  np.testing.assert_allclose(np.array(resumed), np.array(straight), rtol=1e-6)
  if name == "lambda": assert sd["lr_lambdas"] == [None, None]

@needs_values
def test_reduce_on_plateau_state_dict_and_old_scheduler_state():
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.1)
  s = lr_scheduler.ReduceLROnPlateau(o, patience=1)
  for v in (1.0, 2.0, 2.0, 2.0): s.step(v)
  sd = pickle.loads(pickle.dumps(s.state_dict()))
  s2 = lr_scheduler.ReduceLROnPlateau(optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.1), patience=1)
  s2.load_state_dict(sd)
  assert (s2.best, s2.num_bad_epochs, s2.last_epoch) == (s.best, s.num_bad_epochs, s.last_epoch) == (1.0, 1, 4)
  # teeny's older scheduler state dict ({"last_epoch", "base_lr"}) still loads and sets that lr
  s3 = optim.StepLR(o, 2, 0.5)
  s3.load_state_dict({"last_epoch": 5, "base_lr": 0.4})
  assert s3.base_lrs == [0.4] and s3.base_lr == 0.4 and o.param_groups[0]["lr"] == pytest.approx(0.1)

@needs_values
def test_lr_reads_need_no_device_read(monkeypatch):
  """g["lr"] and schedules read the float last written (no sync per step); a write from elsewhere (a loaded state
  dict) is noticed (the buffer has a new version) and read back."""
  from teeny.nn.state import load_state_dict
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.1)
  s = lr_scheduler.ExponentialLR(o, 0.5)
  with monkeypatch.context() as mp:
    mp.setattr(Tensor, "numpy", lambda self: pytest.fail("read the device"))
    s.step()
    o.param_groups[0]["lr"] = 0.3
    assert o.param_groups[0]["lr"] == 0.3
  load_state_dict({"lr": o.lr}, {"lr": Tensor([0.7])})
  assert o.param_groups[0]["lr"] == pytest.approx(0.7)
  s.step()
  assert s.get_last_lr() == [pytest.approx(0.35)]

@needs_values
def test_schedule_lr_reaches_the_step():
  """The written lrs are the ones the step uses, per group (lr * grad of 1 moves each param by its group's lr)."""
  a, b = Tensor([0.0], requires_grad=True), Tensor([0.0], requires_grad=True)
  o = optim.SGD([{"params": [a], "lr": 1.0}, {"params": [b], "lr": 0.5}])
  s = lr_scheduler.StepLR(o, 1, 0.1)
  for _ in range(3):
    a.grad, b.grad = Tensor([1.0]), Tensor([1.0])
    o.step()
    s.step()
  np.testing.assert_allclose([a.numpy()[0], b.numpy()[0]], [-1.11, -0.555], rtol=1e-6)

@needs_values
@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["step", "exp", "warm", "cos", "poly", "cyclic"]), st.integers(1, 6), st.floats(0.1, 0.99),
       st.integers(1, 3))
def test_random_schedules(kind, k, gamma, mult):
  make = {"step": lambda m, o: m.StepLR(o, k, gamma), "exp": lambda m, o: m.ExponentialLR(o, gamma),
          "warm": lambda m, o: m.CosineAnnealingWarmRestarts(o, k, mult, 0.001),
          "cos": lambda m, o: m.CosineAnnealingLR(o, k, 0.001 * gamma),
          "poly": lambda m, o: m.PolynomialLR(o, k + 2, gamma * 3),
          "cyclic": lambda m, o: m.CyclicLR(o, 0.01, 0.1, k, mult, cycle_momentum=False)}[kind]
  _sched_pair(make, n=15)

def test_lr_scheduler_namespace():
  import teeny.nn.optim.lr_scheduler as mod
  assert mod is lr_scheduler and lr_scheduler.StepLR is optim.StepLR
  for name in ["StepLR", "MultiStepLR", "ExponentialLR", "LambdaLR", "MultiplicativeLR", "CosineAnnealingLR",
               "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR", "CyclicLR",
               "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau", "LRScheduler"]:
    assert hasattr(lr_scheduler, name) and hasattr(torch.optim.lr_scheduler, name), name

def test_scheduler_errors():
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.1)
  a = optim.Adagrad([Tensor([1.0], requires_grad=True)], lr=0.1)
  for make, exc, match in [
    (lambda: lr_scheduler.StepLR("opt", 3), TypeError, "str is not an Optimizer"),
    (lambda: lr_scheduler.StepLR(o, 0), ValueError, "step_size must be a positive integer"),
    (lambda: lr_scheduler.LambdaLR(o, [lambda e: 1.0] * 2), ValueError, "expected 1 lr_lambdas"),
    (lambda: lr_scheduler.MultiplicativeLR(o, 0.5), TypeError, "lr_lambda should be a function"),
    (lambda: lr_scheduler.ConstantLR(o, 2.0), ValueError, "between 0 and 1"),
    (lambda: lr_scheduler.LinearLR(o, 0.0), ValueError, "greater than 0"),
    (lambda: lr_scheduler.CosineAnnealingWarmRestarts(o, 0), ValueError, "positive integer T_0"),
    (lambda: lr_scheduler.CyclicLR(o, 0.1, 0.2, mode="bad"), ValueError, "mode 'bad' is invalid"),
    (lambda: lr_scheduler.CyclicLR(a, 0.1, 0.2), ValueError, "must support momentum or beta1"),
    (lambda: lr_scheduler.CyclicLR(o, [0.1, 0.2], 0.3), ValueError, "base_lr must have the same length"),
    (lambda: lr_scheduler.OneCycleLR(o, 0.1), ValueError, "total_steps OR"),
    (lambda: lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, pct_start=1), ValueError, "pct_start"),
    (lambda: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor should be < 1.0"),
    (lambda: lr_scheduler.ReduceLROnPlateau(o, mode="up"), ValueError, "mode up is unknown"),
    (lambda: lr_scheduler.SequentialLR(o, [], []), ValueError, "at least one scheduler"),
    (lambda: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2)], [3]), ValueError, "one more than the number"),
    (lambda: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(a, 2)], []), ValueError, "the same optimizer"),
    (lambda: lr_scheduler.ChainedScheduler([lr_scheduler.ReduceLROnPlateau(o)]), ValueError, "ReduceLROnPlateau"),
    (lambda: lr_scheduler.StepLR(optim.SGD([Tensor([1.0], requires_grad=True)]), 2, last_epoch=3), KeyError,
     "initial_lr"),
    (lambda: lr_scheduler.LinearWarmup(o, 2, after=lr_scheduler.ReduceLROnPlateau(o)), TypeError, "closed form"),
  ]:
    with pytest.raises(exc, match=match): make()

@pytest.mark.filterwarnings("default")
def test_cycle_momentum_warns():
  o = optim.Adam([Tensor([1.0], requires_grad=True)], lr=0.1)
  with pytest.warns(UserWarning, match="cycle_momentum writes a new beta1 every step"):
    lr_scheduler.OneCycleLR(o, 0.1, total_steps=10)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    lr_scheduler.CyclicLR(o, 0.01, 0.1, cycle_momentum=False)

@needs_values
def test_onecycle_past_total_steps_raises():
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.1, momentum=0.9)
  s = lr_scheduler.OneCycleLR(o, 0.1, total_steps=3)
  for _ in range(3): s.step()
  with pytest.raises(ValueError, match="tried to step 4 times"): s.step()

@needs_values
def test_step_with_epoch_uses_closed_form():
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
  s = lr_scheduler.StepLR(o, 2, 0.5)
  with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    s.step(7)
  assert any("deprecated" in str(x.message) for x in w)
  assert s.last_epoch == 7 and s.get_last_lr() == [0.125]
