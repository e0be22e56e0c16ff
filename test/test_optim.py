"""Optimizers, gradient clipping and LR schedules against torch.optim (LAMB against a numpy version of the paper)."""
import numpy as np
import pytest
from teeny import Tensor
from teeny.nn import optim
from teeny.nn.state import get_state_dict, load_state_dict, safe_save, safe_load
from helpers import needs_values

torch = pytest.importorskip("torch")
lr_scheduler = torch.optim.lr_scheduler

def _init(seed=0):
  r = np.random.default_rng(seed)
  return [r.uniform(-1, 1, s).astype(np.float32) for s in ((4, 3), (3,), (3, 2))]

X = np.random.default_rng(9).uniform(-1, 1, (5, 4)).astype(np.float32)

def _loss(x, w1, b1, w2):
  """A small MLP with a nonlinear loss, written once for both libraries."""
  h = (x @ w1 + b1).relu()
  out = h @ w2
  return (out * out).mean() + (out * 0.5).sum()

class TeenyModel:
  def __init__(self, vals): self.w1, self.b1, self.w2 = [Tensor(v.copy(), requires_grad=True) for v in vals]
  def params(self): return [self.w1, self.b1, self.w2]

def teeny_steps(make_opt, steps, vals=None, clip=None):
  m = TeenyModel(vals or _init())
  opt = make_opt(m.params())
  for _ in range(steps):
    opt.zero_grad()
    _loss(Tensor(X), *m.params()).backward()
    if clip is not None: optim.clip_grad_norm_(m.params(), clip)
    opt.step()
  return [p.numpy() for p in m.params()]

def torch_steps(make_opt, steps, clip=None):
  ps = [torch.tensor(v, requires_grad=True) for v in _init()]
  opt = make_opt(ps)
  for _ in range(steps):
    opt.zero_grad()
    _loss(torch.tensor(X), *ps).backward()
    if clip is not None: torch.nn.utils.clip_grad_norm_(ps, clip)
    opt.step()
  return [p.detach().numpy() for p in ps]

def compare(teeny_opt, torch_opt, steps=5, atol=1e-5, rtol=1e-4, clip=None):
  for i, (a, b) in enumerate(zip(teeny_steps(teeny_opt, steps, clip=clip), torch_steps(torch_opt, steps, clip=clip))):
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=f"param {i}")

@needs_values
@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True), dict(weight_decay=0.1),
                                dict(momentum=0.8, weight_decay=0.05, nesterov=True)])
def test_sgd(kw):
  compare(lambda ps: optim.SGD(ps, lr=0.1, **kw), lambda ps: torch.optim.SGD(ps, lr=0.1, **kw))

@needs_values
@pytest.mark.parametrize("kw", [dict(), dict(weight_decay=0.1), dict(b1=0.8, b2=0.99, eps=1e-6)])
def test_adam(kw):
  tkw = {"betas": (kw.get("b1", 0.9), kw.get("b2", 0.999)), "eps": kw.get("eps", 1e-8),
         "weight_decay": kw.get("weight_decay", 0)}
  compare(lambda ps: optim.Adam(ps, lr=0.01, **kw), lambda ps: torch.optim.Adam(ps, lr=0.01, **tkw), steps=8)

@needs_values
@pytest.mark.parametrize("wd", [0.01, 0.3])
def test_adamw(wd):
  compare(lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=wd),
          lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=wd), steps=8)

def _numpy_lamb(vals, grads_fn, steps, lr, b1, b2, eps, wd):
  """LAMB from You et al. (2019), Algorithm 2, with Adam's bias correction and phi = identity."""
  ps = [v.astype(np.float64) for v in vals]
  m, v = [np.zeros_like(p) for p in ps], [np.zeros_like(p) for p in ps]
  for t in range(1, steps + 1):
    gs = grads_fn([p.astype(np.float32) for p in ps])
    for i, (p, g) in enumerate(zip(ps, gs)):
      m[i] = b1 * m[i] + (1 - b1) * g
      v[i] = b2 * v[i] + (1 - b2) * g * g
      r = (m[i] / (1 - b1 ** t)) / (np.sqrt(v[i] / (1 - b2 ** t)) + eps) + wd * p
      wn, rn = np.linalg.norm(p), np.linalg.norm(r)
      trust = wn / rn if wn > 0 and rn > 0 else 1.0
      ps[i] = p - lr * trust * r
  return ps

def _torch_grads(vals):
  ps = [torch.tensor(v, requires_grad=True) for v in vals]
  _loss(torch.tensor(X), *ps).backward()
  return [p.grad.numpy().astype(np.float64) for p in ps]

@needs_values
@pytest.mark.parametrize("wd", [0.0, 0.1])
def test_lamb(wd):
  got = teeny_steps(lambda ps: optim.LAMB(ps, lr=0.02, b1=0.9, b2=0.99, eps=1e-6, weight_decay=wd), 6)
  want = _numpy_lamb(_init(), _torch_grads, 6, 0.02, 0.9, 0.99, 1e-6, wd)
  for a, b in zip(got, want): np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-4)

@needs_values
@pytest.mark.parametrize("max_norm", [0.05, 100.0])
def test_clip_grad_norm(max_norm):
  compare(lambda ps: optim.SGD(ps, lr=0.1), lambda ps: torch.optim.SGD(ps, lr=0.1), steps=3, clip=max_norm)
  m = TeenyModel(_init())
  _loss(Tensor(X), *m.params()).backward()
  total = optim.clip_grad_norm_(m.params(), max_norm)
  ps = [torch.tensor(v, requires_grad=True) for v in _init()]
  _loss(torch.tensor(X), *ps).backward()
  want = torch.nn.utils.clip_grad_norm_(ps, max_norm)
  np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=1e-5)
  for p, q in zip(m.params(), ps): np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-6, rtol=1e-5)

def test_optimizer_params():
  a, b, c = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0], requires_grad=False), Tensor([4.0])
  opt = optim.SGD([a, b, a, c], lr=0.1)
  assert len(opt.params) == 2 and opt.params[0] is a and opt.params[1] is c and c.requires_grad  # b dropped, a once
  assert len(opt.buffers) == 1 and opt.buffers[0] is b  # not updated, only realized with each step
  with pytest.raises(ValueError, match="no parameters"): optim.SGD([b], lr=0.1)
  before = a.uop
  optim.SGD([a], lr=0.1).step()   # no gradient anywhere: a no-op, as torch's (scheduler-only loops, unused branches)
  assert a.uop is before and a.grad is None

@needs_values
def test_zero_grad():
  a = Tensor([1.0, 2.0], requires_grad=True)
  opt = optim.SGD([a], lr=0.5)
  (a * a).sum().backward()
  opt.step()
  np.testing.assert_allclose(a.numpy(), [0.0, 0.0])
  opt.zero_grad()
  assert a.grad is None

SCALAR_OPTS = {  # teeny optimizer, the reference: a torch optimizer, or for LAMB (not in torch) the numpy version above
  "sgd": (lambda ps: optim.SGD(ps, lr=0.25, momentum=0.5), lambda ps: torch.optim.SGD(ps, lr=0.25, momentum=0.5)),
  "sgd_nesterov_wd": (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
                      lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
  "adam": (lambda ps: optim.Adam(ps, lr=0.1), lambda ps: torch.optim.Adam(ps, lr=0.1)),
  "adamw": (lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.2),
            lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.2)),
  "lamb": (lambda ps: optim.LAMB(ps, lr=0.1, b1=0.9, b2=0.99, eps=1e-6, weight_decay=0.1), None),
}

def _scalar_loss(a): return a * a * a * 0.1 + a * a - a * 0.5   # grad 0.3a^2 + 2a - 0.5: never proportional to a

@pytest.mark.parametrize("name", list(SCALAR_OPTS))
def test_scalar_param_shape(name):
  a = Tensor(2.0, requires_grad=True)
  opt = SCALAR_OPTS[name][0]([a])
  for _ in range(2):
    opt.zero_grad()
    _scalar_loss(a).sum().backward()
    opt.step()
    assert a.shape == () and a.grad.shape == ()

@needs_values
@pytest.mark.parametrize("name", list(SCALAR_OPTS))
def test_scalar_param(name):
  """A 0-d parameter takes the same values as torch's (numpy's for LAMB) after each of several steps."""
  make, make_ref = SCALAR_OPTS[name]
  a = Tensor(2.0, requires_grad=True)
  opt = make([a])
  got = []
  for _ in range(6):
    opt.zero_grad()
    _scalar_loss(a).sum().backward()
    opt.step()
    assert a.shape == ()
    got.append(float(a.numpy()))
  if make_ref is None:
    grads = lambda ps: [0.3 * p.astype(np.float64) ** 2 + 2 * p.astype(np.float64) - 0.5 for p in ps]
    want = [float(_numpy_lamb([np.array(2.0, np.float32)], grads, t, 0.1, 0.9, 0.99, 1e-6, 0.1)[0])
            for t in range(1, 7)]
  else:
    ta = torch.tensor(2.0, requires_grad=True)
    topt, want = make_ref([ta]), []
    for _ in range(6):
      topt.zero_grad()
      _scalar_loss(ta).backward()
      topt.step()
      want.append(ta.item())
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  assert len(set(np.round(got, 6))) == 6, f"the parameter must move at every step: {got}"

@needs_values
def test_batchnorm_running_stats_with_optimizer():
  """BatchNorm's lazy running-stat updates are realized with the step, from the weights before the update."""
  from teeny import nn
  from teeny.nn.state import get_parameters
  r = np.random.default_rng(0)
  conv, bn = nn.Conv2d(2, 3, 3), nn.BatchNorm(3)
  tconv, tbn = torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3)
  with torch.no_grad():
    tconv.weight.copy_(torch.tensor(conv.weight.numpy()))
    tconv.bias.copy_(torch.tensor(conv.bias.numpy()))
  opt = optim.SGD(get_parameters([conv, bn]), lr=0.5, momentum=0.9)
  topt = torch.optim.SGD(list(tconv.parameters()) + list(tbn.parameters()), lr=0.5, momentum=0.9)
  for _ in range(3):
    x = r.uniform(-1, 1, (4, 2, 6, 6)).astype(np.float32)
    opt.zero_grad()
    with Tensor.train():
      loss = (bn(conv(Tensor(x))).relu() ** 2).mean()
      loss.backward()
      opt.step()
    topt.zero_grad()
    (tbn(tconv(torch.tensor(x))).relu() ** 2).mean().backward()
    topt.step()
  for a, b in [(conv.weight, tconv.weight), (bn.weight, tbn.weight), (bn.running_mean, tbn.running_mean),
               (bn.running_var, tbn.running_var)]:
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), atol=1e-5, rtol=1e-4)
  assert int(bn.num_batches_tracked.numpy().reshape(-1)[0]) == 3

# ***** schedules *****

def _lrs(sched_fn, torch_sched_fn, n=12):
  ours = optim.SGD([Tensor([1.0], requires_grad=True)], lr=0.5)
  s = sched_fn(ours)
  p = torch.tensor([1.0], requires_grad=True)
  theirs = torch.optim.SGD([p], lr=0.5)
  ts = torch_sched_fn(theirs)
  got, want = [], []
  for _ in range(n):
    got.append(float(ours.lr.numpy().reshape(-1)[0]))
    want.append(theirs.param_groups[0]["lr"])
    theirs.step()
    s.step()
    ts.step()
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)

@needs_values
def test_step_lr(): _lrs(lambda o: optim.StepLR(o, 3, 0.5), lambda o: lr_scheduler.StepLR(o, 3, 0.5))

@needs_values
def test_cosine_lr():
  _lrs(lambda o: optim.CosineAnnealingLR(o, 10, 0.01), lambda o: lr_scheduler.CosineAnnealingLR(o, 10, 0.01))

@needs_values
def test_linear_warmup():
  _lrs(lambda o: optim.LinearWarmup(o, 4), lambda o: lr_scheduler.LinearLR(o, 0.25, 1.0, 4))
  _lrs(lambda o: optim.LinearWarmup(o, 4, after=optim.CosineAnnealingLR(o, 6)),
       lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.LinearLR(o, 0.25, 1.0, 4),
                                               lr_scheduler.CosineAnnealingLR(o, 6)], [4]), n=10)

@needs_values
def test_schedule_changes_lr_used_by_step():
  a = Tensor([1.0], requires_grad=True)
  opt = optim.SGD([a], lr=1.0)
  sched = optim.StepLR(opt, 1, 0.1)
  for _ in range(2):
    opt.zero_grad()
    a.sum().backward()
    opt.step()
    sched.step()
  np.testing.assert_allclose(a.numpy(), [1.0 - 1.0 - 0.1], rtol=1e-6)

# ***** save, load, resume *****

@needs_values
@pytest.mark.parametrize("name", ["sgd", "adamw", "lamb"])
def test_resume(tmp_path, name):
  make = {"sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
          "adamw": lambda ps: optim.AdamW(ps, lr=0.01), "lamb": lambda ps: optim.LAMB(ps, lr=0.01)}[name]
  def step(m, opt):
    opt.zero_grad()
    _loss(Tensor(X), *m.params()).backward()
    opt.step()
  straight = TeenyModel(_init())
  sopt = make(straight.params())
  for _ in range(4): step(straight, sopt)

  first = TeenyModel(_init())
  fopt = make(first.params())
  for _ in range(3): step(first, fopt)
  sd = get_state_dict({"model": first.__dict__, "opt": fopt})
  assert "opt.steps" in sd and "opt.lr" in sd
  if name != "sgd": assert "opt.m.0" in sd and "opt.v.2" in sd
  else: assert "opt.b.0" in sd
  safe_save(sd, tmp_path / "ckpt.safetensors")

  resumed = TeenyModel([np.zeros_like(v) for v in _init()])
  ropt = make(resumed.params())
  load_state_dict({"model": resumed.__dict__, "opt": ropt}, safe_load(tmp_path / "ckpt.safetensors"))
  assert int(ropt.steps.numpy().reshape(-1)[0]) == 3
  step(resumed, ropt)
  for a, b in zip(resumed.params(), straight.params()):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
