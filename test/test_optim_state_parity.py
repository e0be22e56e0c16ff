"""Optimizers and state dicts against torch: grad checks, Tensor/settable lr, params on several devices, loading into
sharded params, BatchNorm's 0-d num_batches_tracked, and torch's SGD/Adam/AdamW options, RMSprop and Adagrad (params
and optimizer state compared step by step), plus optimizer.state_dict()/load_state_dict()."""
import numpy as np
import pytest
from teeny import Device, Tensor, TinyJit, nn
from teeny.dtype import dtypes
from teeny.nn import optim
from teeny.nn.state import get_state_dict, load_state_dict, safe_save, safe_load
from helpers import needs_values

torch = pytest.importorskip("torch")
hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

SHAPES = [(3, 4), (4,), (), (2, 1, 3)]

def _vals(seed: int, shapes=SHAPES, steps: int = 6):
  r = np.random.default_rng(seed)
  init = [r.uniform(-1, 1, s).astype(np.float32) for s in shapes]
  grads = [[r.uniform(-1, 1, s).astype(np.float32) for s in shapes] for _ in range(steps)]
  return init, grads

# which teeny state list matches which torch state key
_STATE = {"SGD": [("b", "momentum_buffer")],
          "Adam": [("m", "exp_avg"), ("v", "exp_avg_sq"), ("v_max", "max_exp_avg_sq"), ("param_steps", "step")],
          "RMSprop": [("square_avg", "square_avg"), ("grad_avg", "grad_avg"), ("momentum_buffer", "momentum_buffer")],
          "Adagrad": [("sum", "sum"), ("param_steps", "step")]}
_STATE["AdamW"] = _STATE["Adam"]

def _pair(name: str, kw: dict, seed: int = 0, skip=lambda step, i: False, steps: int = 6, shapes=SHAPES,
          dtype=np.float32, rtol=1e-5, atol=1e-6):
  """Run teeny's and torch's `name` optimizer on the same params and grads; compare params and state every step.
  skip(step, i): param i gets no grad at that step (torch then leaves it and its state alone, and so must teeny)."""
  init, grads = _vals(seed, shapes, steps)
  ours = [Tensor(v.astype(dtype), requires_grad=True) for v in init]
  theirs = [torch.tensor(v.astype(dtype), requires_grad=True) for v in init]
  tkw = dict(kw)
  if "b1" in tkw: tkw["betas"] = (tkw.pop("b1"), tkw.pop("b2"))
  o, to = getattr(optim, name)(ours, **kw), getattr(torch.optim, name)(theirs, **tkw)
  for s in range(steps):
    for i, (p, tp) in enumerate(zip(ours, theirs)):
      live = not skip(s, i)
      p.grad = Tensor(grads[s][i].astype(dtype)) if live else None
      tp.grad = torch.tensor(grads[s][i].astype(dtype)) if live else None
    o.step()
    to.step()
    for i, (p, tp) in enumerate(zip(ours, theirs)):
      assert p.shape == tuple(tp.shape) and p.dtype == dtypes.from_np(np.dtype(dtype))
      np.testing.assert_allclose(p.numpy().astype(np.float32), tp.detach().float().numpy(), rtol=rtol, atol=atol,
                                 err_msg=f"{name} {kw} step {s} param {i}")
    for attr, key in _STATE[name]:
      ts = getattr(o, attr, None)
      if ts is None or (isinstance(ts, list) and not ts): continue
      for i, tp in enumerate(theirs):
        if key not in to.state.get(tp, {}): continue
        want = to.state[tp][key].detach().float().numpy()
        got = ts.numpy()[i] if attr == "param_steps" else ts[i].numpy().astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{name} {kw} state {attr} step {s}")
  return o, ours

# ***** 1. a .grad that doesn't fit its param

_ALL = [lambda ps: optim.SGD(ps, lr=0.1), lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: optim.Adam(ps), lambda ps: optim.AdamW(ps), lambda ps: optim.LAMB(ps),
        lambda ps: optim.RMSprop(ps), lambda ps: optim.Adagrad(ps)]

@pytest.mark.parametrize("make", _ALL)
@pytest.mark.parametrize("pshape,gshape", [((2, 2), (2,)), ((2,), (2, 1)), ((3,), (1,)), ((), (1,)), ((1,), ())])
def test_grad_shape_mismatch_raises(make, pshape, gshape):
  p = Tensor(np.ones(pshape, np.float32), requires_grad=True)
  q = Tensor(np.ones(3, np.float32), requires_grad=True)
  o = make([q, p])
  q.grad, p.grad = Tensor(np.ones(3, np.float32)), Tensor(np.ones(gshape, np.float32))
  msg = rf"step: param 1 has shape \({', '.join(map(str, pshape))},?\) but its \.grad has shape"
  with pytest.raises(RuntimeError, match=msg): o.step()
  with pytest.raises(RuntimeError, match=r"clip_grad_norm_: param 1 has shape"): optim.clip_grad_norm_([q, p], 1.0)
  # nothing was written: the params keep their values and the step count is unchanged
  if not isinstance(p.device, tuple) and p.device != "NULL":
    np.testing.assert_equal(q.numpy(), np.ones(3))
    assert int(o.steps.numpy()[0]) == 0

def test_grad_shape_mismatch_matches_torch_refusal():
  tp = torch.ones(2, 2, requires_grad=True)
  with pytest.raises(RuntimeError): tp.grad = torch.ones(2)

def test_grad_device_and_dtype_mismatch_raise():
  p = Tensor(np.ones(3, np.float32), requires_grad=True, device="CPU")
  o = optim.Adam([p])
  p.grad = Tensor(np.ones(3, np.float32), device="CPU:1")
  with pytest.raises(RuntimeError, match=r"param 0 is on CPU but its \.grad is on CPU:1.*\.to\(p\.device\)"): o.step()
  p.grad = Tensor(np.ones(3, np.float32), device="CPU:1")
  with pytest.raises(RuntimeError, match=r"clip_grad_norm_: param 0 is on CPU but its \.grad is on CPU:1"):
    optim.clip_grad_norm_([p], 1.0)
  p.grad = Tensor(np.ones(3, np.int32), device="CPU")
  with pytest.raises(TypeError, match=r"param 0 is dtypes.float32 but its \.grad is dtypes.int32"): o.step()

@needs_values
def test_half_grad_on_float_param_is_cast():
  """A float16 grad on a float32 param is fine (cast), as teeny always did; the result matches a float32 grad."""
  a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([1.0, 2.0], requires_grad=True)
  oa, ob = optim.SGD([a], lr=0.5), optim.SGD([b], lr=0.5)
  a.grad, b.grad = Tensor([0.5, 0.25], dtype=dtypes.float16), Tensor([0.5, 0.25])
  oa.step()
  ob.step()
  np.testing.assert_equal(a.numpy(), b.numpy())

@needs_values
def test_non_contiguous_grad():
  g = np.arange(12, dtype=np.float32).reshape(4, 3)
  p, tp = Tensor(np.ones((3, 4), np.float32), requires_grad=True), torch.ones(3, 4, requires_grad=True)
  o, to = optim.Adam([p], lr=0.1), torch.optim.Adam([tp], lr=0.1)
  p.grad, tp.grad = Tensor(g).T, torch.tensor(g).T
  o.step()
  to.step()
  np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6)

# ***** 2. lr as a Tensor, and opt.lr set after construction

@needs_values
@pytest.mark.parametrize("lr", [lambda: Tensor(0.1), lambda: Tensor([0.1]),
                                lambda: Tensor([[0.1]], dtype=dtypes.float64)])
def test_tensor_lr_matches_torch(lr):
  init, grads = _vals(1, [(3,)], 4)
  p, tp = Tensor(init[0], requires_grad=True), torch.tensor(init[0], requires_grad=True)
  o, to = optim.Adam([p], lr=lr()), torch.optim.Adam([tp], lr=torch.tensor(0.1))
  for s in range(4):
    p.grad, tp.grad = Tensor(grads[s][0]), torch.tensor(grads[s][0])
    o.step()
    to.step()
  np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-7)

@needs_values
def test_tensor_lr_is_read_each_step():
  """Writes into the lr tensor the optimizer was given change the lr (tinygrad's and torch's tensor lr)."""
  lr = Tensor([1.0]).contiguous().realize()
  p = Tensor([0.0], requires_grad=True)
  o = optim.SGD([p], lr=lr)
  for v in (1.0, 0.5, 0.25):
    lr.assign(Tensor([v])).realize()
    p.grad = Tensor([1.0])
    o.step()
  np.testing.assert_allclose(p.numpy(), [-1.75])

@needs_values
@pytest.mark.parametrize("new", [0.5, 0, 2, np.float32(0.5), "tensor"])
def test_set_lr_after_construction_matches_param_group(new):
  init, grads = _vals(2, [(2, 3), (3,)], 6)
  ours = [Tensor(v, requires_grad=True) for v in init]
  theirs = [torch.tensor(v, requires_grad=True) for v in init]
  o, to = optim.SGD(ours, lr=0.1, momentum=0.9), torch.optim.SGD(theirs, lr=0.1, momentum=0.9)
  buf = o.lr
  for s in range(6):
    if s == 3:
      o.lr = Tensor(0.5) if new == "tensor" else new
      to.param_groups[0]["lr"] = 0.5 if new == "tensor" else float(new)
      if new != "tensor": assert o.lr is buf   # the float went into the same buffer: the kernels stay the same
    for p, tp, g in zip(ours, theirs, grads[s]): p.grad, tp.grad = Tensor(g), torch.tensor(g)
    o.step()
    to.step()
  for p, tp in zip(ours, theirs): np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)

@needs_values
def test_set_float_lr_inside_jit_training():
  """A TinyJit step keeps reading opt.lr's buffer: setting a float between calls changes the lr of the replays."""
  def run(jit: bool):
    p = Tensor([1.0, -2.0], requires_grad=True)
    o = optim.SGD([p], lr=0.1, momentum=0.5)
    def step(x: Tensor):
      o.zero_grad()
      loss = (p * x).sum()
      loss.backward()
      o.step()
      return loss.realize()
    f = TinyJit(step) if jit else step
    for i in range(5):
      o.lr = 0.1 * (i + 1)
      f(Tensor([1.0, 2.0]))
    return p.numpy()
  np.testing.assert_allclose(run(True), run(False), rtol=1e-6)

@needs_values
def test_scheduler_with_tensor_lr():
  lr = Tensor([0.5]).contiguous().realize()
  o = optim.SGD([Tensor([1.0], requires_grad=True)], lr=lr)
  s = optim.StepLR(o, 1, 0.5)
  s.step()
  assert o.lr is lr
  np.testing.assert_allclose(lr.numpy(), [0.25])
  o2 = optim.SGD([Tensor([1.0], requires_grad=True)], lr=Tensor(0.5))   # a 0-d lr: the schedule writes it in place
  optim.StepLR(o2, 1, 0.5).step()
  assert o2.lr.shape == ()
  np.testing.assert_allclose(o2.lr.numpy(), 0.25)

def test_bad_lr_raises():
  p = Tensor([1.0], requires_grad=True)
  with pytest.raises(ValueError, match="one element, got shape \\(2,\\)"): optim.SGD([p], lr=Tensor([0.1, 0.2]))
  with pytest.raises(TypeError, match="lr must be a float or a one-element Tensor, got str"): optim.Adam([p], lr="0.1")
  with pytest.raises(TypeError, match="got bool"): optim.Adam([p], lr=True)
  with pytest.raises(TypeError, match="must be a number, got dtype"): optim.SGD([p], lr=Tensor([True]))
  with pytest.raises(ValueError, match="invalid learning rate -0.1"): optim.SGD([p], lr=-0.1)
  o = optim.SGD([p], lr=0.1)
  with pytest.raises(ValueError, match="invalid learning rate"): o.lr = float("nan")

# ***** 3. params on several devices

@needs_values
@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
                                     ("Adam", {"lr": 0.05, "amsgrad": True}), ("RMSprop", {"centered": True}),
                                     ("Adagrad", {"lr_decay": 0.1})])
def test_params_on_two_devices(name, kw):
  init, grads = _vals(3, [(2, 3), (3,)], 4)
  devs = ["CPU", "CPU:1"]
  ours = [Tensor(v, requires_grad=True, device=d) for v, d in zip(init, devs)]
  theirs = [torch.tensor(v, requires_grad=True) for v in init]
  o, to = getattr(optim, name)(ours, **kw), getattr(torch.optim, name)(theirs, **kw)
  for s in range(4):
    for p, tp, g, d in zip(ours, theirs, grads[s], devs):
      p.grad, tp.grad = Tensor(g, device=d), torch.tensor(g)
    if s == 2:
      t = optim.clip_grad_norm_(ours, 0.5)
      tt = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
      assert t.device == "CPU"
      np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-6)
      for p, tp in zip(ours, theirs): np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
    o.step()
    to.step()
  for p, tp, d in zip(ours, theirs, devs):
    assert p.device == d
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)

# ***** 4. load_state_dict keeps the destination's sharding

DEVS = ("CPU", "CPU:1")

@needs_values
@pytest.mark.parametrize("axis", [0, 1, None])
def test_load_into_sharded_keeps_layout(axis):
  W = np.arange(8, dtype=np.float32).reshape(4, 2)
  lin = nn.Linear(2, 4)
  lin.weight.shard_(DEVS, axis=axis)
  load_state_dict(lin, {"weight": Tensor(W), "bias": Tensor(np.zeros(4, np.float32))})
  assert lin.weight.device == tuple(DEVS) and lin.weight.sharded_axis == axis and lin.bias.device == Device.DEFAULT
  np.testing.assert_equal(lin.weight.numpy(), W)
  # a source sharded another way is resharded like the destination
  load_state_dict(lin, {"weight": Tensor(W + 1).shard(DEVS, 1 if axis == 0 else 0), "bias": Tensor(np.ones(4))})
  assert lin.weight.sharded_axis == axis
  np.testing.assert_equal(lin.weight.numpy(), W + 1)
  np.testing.assert_equal(lin.bias.numpy(), np.ones(4))

@needs_values
def test_load_into_sharded_embedding():
  W = np.arange(8, dtype=np.float32).reshape(4, 2)
  e = nn.Embedding(4, 2, shard=DEVS)
  load_state_dict(e, {"weight": Tensor(W)})
  assert e.weight.sharded_axis == 0
  np.testing.assert_equal(e(Tensor([3, 0])).numpy(), W[[3, 0]])

# ***** 5. BatchNorm's num_batches_tracked is 0-d

@needs_values
def test_batchnorm_num_batches_tracked_is_0d_and_loads_torch():
  tm, m = torch.nn.BatchNorm1d(4), nn.BatchNorm(4)
  assert m.num_batches_tracked.shape == tuple(tm.num_batches_tracked.shape) == ()
  assert m.num_batches_tracked.dtype == dtypes.int64
  x = np.random.default_rng(4).standard_normal((5, 4)).astype(np.float32)
  tm.train()
  for _ in range(3): tm(torch.tensor(x))
  load_state_dict(m, {k: Tensor(v.numpy()) for k, v in tm.state_dict().items()})
  assert int(m.num_batches_tracked.numpy()) == 3 and m.num_batches_tracked.shape == ()
  with Tensor.train(): m(Tensor(x)).realize()
  tm(torch.tensor(x))
  assert int(m.num_batches_tracked.numpy()) == int(tm.num_batches_tracked) == 4
  np.testing.assert_allclose(m.running_mean.numpy(), tm.running_mean.numpy(), rtol=1e-5, atol=1e-6)
  # and back: teeny's state dict loads into torch
  tm2 = torch.nn.BatchNorm1d(4)
  tm2.load_state_dict({k: torch.tensor(v.numpy()) for k, v in get_state_dict(m).items()})
  assert int(tm2.num_batches_tracked) == 4

@needs_values
def test_old_checkpoint_with_1_element_shape_loads(tmp_path):
  m = nn.BatchNorm(3)
  old = {k: v for k, v in get_state_dict(m).items()}
  old["num_batches_tracked"] = Tensor(np.array([7], np.int64))   # teeny's old (1,) buffer
  safe_save(old, tmp_path / "old.safetensors")
  load_state_dict(m, safe_load(tmp_path / "old.safetensors"))
  assert m.num_batches_tracked.shape == () and int(m.num_batches_tracked.numpy()) == 7
  # the other way round: a 0-d value into a (1,) tensor
  holder = {"t": Tensor(np.array([1.5], np.float32))}
  load_state_dict(holder, {"t": Tensor(np.array(2.5, np.float32))})
  assert holder["t"].shape == (1,)
  np.testing.assert_equal(holder["t"].numpy(), [2.5])

@pytest.mark.parametrize("have,got", [((), (2,)), ((1,), (1, 1)), ((), (1, 1)), ((1, 1), (1,)), ((2,), (1,)),
                                      ((), (0,))])
def test_other_shape_mismatches_still_raise(have, got):
  holder = {"t": Tensor(np.zeros(have, np.float32))}
  with pytest.raises(ValueError, match=r"shape mismatch in state dict: t: model"):
    load_state_dict(holder, {"t": Tensor(np.zeros(got, np.float32))})

# ***** 6. torch's options, RMSprop and Adagrad, step by step against torch.optim

_CASES = [
  ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
  ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 1.0, "weight_decay": 0.1}),
  ("SGD", {"lr": 0.1, "maximize": True}), ("SGD", {"lr": 0.1, "momentum": 0.8, "nesterov": True, "maximize": True}),
  ("Adam", {"lr": 0.05, "betas": (0.8, 0.95)}), ("Adam", {"lr": 0.05, "amsgrad": True}),
  ("Adam", {"lr": 0.05, "amsgrad": True, "maximize": True, "weight_decay": 0.1}),
  ("Adam", {"lr": 0.05, "b1": 0.5, "b2": 0.9}), ("Adam", {"lr": 0.05, "betas": (0.0, 0.0)}),
  ("AdamW", {"lr": 0.05, "betas": (0.7, 0.99), "amsgrad": True}), ("AdamW", {"lr": 0.05, "maximize": True}),
  ("RMSprop", {}), ("RMSprop", {"lr": 0.05, "alpha": 0.9, "eps": 1e-6}),
  ("RMSprop", {"lr": 0.01, "momentum": 0.9}), ("RMSprop", {"lr": 0.01, "centered": True}),
  ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1, "maximize": True}),
  ("Adagrad", {}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.2}), ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}),
  ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6, "maximize": True}),
]

@needs_values
@pytest.mark.parametrize("name,kw", _CASES)
def test_matches_torch(name, kw):
  _pair(name, kw)

@needs_values
@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
                                     ("Adam", {"lr": 0.05, "amsgrad": True}),
                                     ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
                                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.3})])
def test_params_without_grad_some_steps(name, kw):
  """torch skips a param with no grad (no state change, its own step count stays): per-param steps matter for
  SGD's dampening, Adam's bias correction and Adagrad's lr_decay."""
  _pair(name, kw, skip=lambda s, i: (i == 0 and s < 2) or (i == 1 and s % 2 == 1))

@needs_values
@pytest.mark.parametrize("name,kw", [("RMSprop", {"lr": 0.01, "centered": True}), ("Adagrad", {"lr": 0.1}),
                                     ("Adam", {"lr": 0.01, "amsgrad": True}), ("SGD", {"lr": 0.1, "momentum": 0.9,
                                                                                       "dampening": 0.1})])
def test_float16_params(name, kw):
  _pair(name, kw, shapes=[(3, 4), (5,)], dtype=np.float16, rtol=2e-3, atol=2e-3, steps=4)

@needs_values
@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adam", "SGD"])
def test_empty_and_size_one_params(name):
  _pair(name, {"lr": 0.05}, shapes=[(0,), (1, 1), (0, 3), (1,)], steps=3)

@needs_values
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]), st.integers(0, 2**16),
       st.floats(0.001, 0.2), st.floats(0.0, 0.2), st.floats(0.0, 0.99), st.booleans(), st.booleans())
def test_random_hyperparameters(name, seed, lr, wd, m, flag, maximize):
  kw: dict = {"lr": lr, "weight_decay": wd, "maximize": maximize}
  if name == "SGD": kw.update(momentum=m, dampening=0.0 if flag else m / 2, nesterov=flag and m > 0)
  elif name in ("Adam", "AdamW"): kw.update(betas=(m, 0.999 if flag else 0.9), amsgrad=flag)
  elif name == "RMSprop": kw.update(alpha=0.9 + m / 10, momentum=m / 2, centered=flag)
  else: kw.update(lr_decay=m / 4, initial_accumulator_value=0.1 if flag else 0.0)
  _pair(name, kw, seed=seed, steps=5, shapes=[(2, 3), (4,)], rtol=2e-5, atol=2e-6)

def test_option_errors():
  p = Tensor([1.0], requires_grad=True)
  with pytest.raises(ValueError, match="nesterov momentum requires momentum > 0 and dampening = 0"):
    optim.SGD([p], momentum=0.9, dampening=0.1, nesterov=True)
  with pytest.raises(ValueError, match="betas must be in"): optim.Adam([p], betas=(1.0, 0.9))
  with pytest.raises(ValueError, match="give betas=.* or b1=/b2=, not both"): optim.AdamW([p], b1=0.5, betas=(0.5, 0.9))
  with pytest.raises(ValueError, match="betas must be a pair"): optim.Adam([p], betas=(0.9,))
  with pytest.raises(ValueError, match="RMSprop: alpha"): optim.RMSprop([p], alpha=-1.0)
  with pytest.raises(ValueError, match="Adagrad: lr_decay"): optim.Adagrad([p], lr_decay=-0.1)

# ***** optimizer.state_dict() / load_state_dict()

_MAKE = {"sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.2),
         "adam": lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True), "lamb": lambda ps: optim.LAMB(ps, lr=0.05),
         "rmsprop": lambda ps: optim.RMSprop(ps, centered=True, momentum=0.5),
         "adagrad": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1)}

@needs_values
@pytest.mark.parametrize("name", list(_MAKE))
def test_optimizer_state_dict_round_trip(tmp_path, name):
  init, grads = _vals(5, [(3, 2), (2,)], 5)
  def run(ps, o, steps):
    for s in steps:
      for p, g in zip(ps, grads[s]): p.grad = Tensor(g)
      o.step()
  straight = [Tensor(v, requires_grad=True) for v in init]
  run(straight, _MAKE[name](straight), range(5))
  first = [Tensor(v, requires_grad=True) for v in init]
  fo = _MAKE[name](first)
  run(first, fo, range(3))
  sd = fo.state_dict()
  assert "lr" in sd and "steps" in sd and not any(k.startswith("params") for k in sd)
  safe_save(sd, tmp_path / "opt.safetensors")
  resumed = [Tensor(p.numpy(), requires_grad=True) for p in first]
  ro = _MAKE[name](resumed)
  ro.load_state_dict(safe_load(tmp_path / "opt.safetensors"))
  run(resumed, ro, range(3, 5))
  for a, b in zip(resumed, straight): np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)

def test_optimizer_load_state_dict_mismatch():
  a, b = Tensor(np.ones((3, 2), np.float32), requires_grad=True), Tensor(np.ones(2, np.float32), requires_grad=True)
  sd = optim.Adam([a, b]).state_dict()
  with pytest.raises(ValueError, match=r"Adam.load_state_dict: .* 1 params \(missing \[\], unexpected \['m.1'"):
    optim.Adam([a]).load_state_dict(sd)
  with pytest.raises(ValueError, match=r"shape mismatches \['m.0: optimizer \(2,\) vs state dict \(3, 2\)"):
    optim.Adam([b, a]).load_state_dict(sd)
  with pytest.raises(ValueError, match=r"missing \['v_max.0', 'v_max.1'\]"):
    optim.Adam([a, b], amsgrad=True).load_state_dict(sd)
  torch = pytest.importorskip("torch")
  ts = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))]).state_dict()
  with pytest.raises(ValueError, match="a torch optimizer's state_dict"): optim.Adam([b]).load_state_dict(ts)

def test_get_state_dict_keys_unchanged():
  """Old checkpoints (get_state_dict(opt)) still load: the default optimizers have exactly their old keys."""
  a, b = Tensor(np.ones(2, np.float32), requires_grad=True), Tensor(np.ones(3, np.float32), requires_grad=True)
  def keys(o): return sorted(k for k in get_state_dict(o) if not k.startswith(("params.", "buffers.")))
  assert keys(optim.SGD([a, b])) == ["lr", "steps"]
  assert keys(optim.SGD([a, b], momentum=0.9, nesterov=True)) == ["b.0", "b.1", "lr", "steps"]
  assert keys(optim.Adam([a, b])) == ["lr", "m.0", "m.1", "param_steps", "steps", "v.0", "v.1"]
  assert keys(optim.AdamW([a, b])) == keys(optim.LAMB([a, b])) == keys(optim.Adam([a, b]))

@needs_values
@pytest.mark.parametrize("name", ["rmsprop", "adagrad", "adam", "sgd"])
def test_jit_training_step(name):
  """The new options inside a TinyJit training step give the eager result."""
  x = np.random.default_rng(6).uniform(-1, 1, (4, 3)).astype(np.float32)
  def run(jit: bool):
    w = Tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), requires_grad=True)
    o = _MAKE[name]([w])
    def step(xt):
      o.zero_grad()
      loss = ((xt @ w).tanh() ** 2).mean()
      loss.backward()
      o.step()
      return loss.realize()
    f = TinyJit(step) if jit else step
    for _ in range(5): f(Tensor(x))
    return w.numpy()
  np.testing.assert_allclose(run(True), run(False), rtol=1e-6, atol=1e-7)
