"""nn and autograd edge cases against torch, from fuzzing (notes/fuzz_2026-12-03/ad): binary cross-entropy at p = 0 and
1, Adam/AdamW with a param skipped on some steps, gradients at the kinks of piecewise activations, BatchNorm and Linear
misuse, Embedding's padding_idx and cross_entropy's class weights."""
import numpy as np
import pytest
from teeny import Tensor, TinyJit, nn
from teeny.nn import optim
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
F = torch.nn.functional

def _pair(vals, rg=True):
  a = np.asarray(vals, dtype=np.float32)
  return Tensor(a.copy(), requires_grad=rg), torch.tensor(a.copy(), requires_grad=rg)

def _close(got, want, what, atol=1e-6, rtol=1e-5):
  want = want.detach().numpy() if isinstance(want, torch.Tensor) else want
  np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), atol=atol, rtol=rtol,
                             equal_nan=True, err_msg=what)

# ***** 1. binary cross-entropy at p in {0, 1} *****

P_BCE = [0.0, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0, 1.0, 0.5]
Y_BCE = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.3, 0.7, 0.25]

@needs_values
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_finite_grad_at_saturated_probabilities(reduction):
  t, p = _pair(P_BCE)
  yt, yp = _pair(Y_BCE)
  lt, lp = t.binary_crossentropy(yt, reduction=reduction), F.binary_cross_entropy(p, yp, reduction=reduction)
  up = np.linspace(0.5, 1.5, lp.numel()).astype(np.float32).reshape(lp.shape)
  (lt * Tensor(up)).sum().backward()
  (lp * torch.tensor(up)).sum().backward()
  _close(lt.numpy(), lp, "value")
  assert np.isfinite(t.grad.numpy()).all()
  _close(t.grad.numpy(), p.grad, "grad of p", rtol=1e-5)
  # the target's gradient where the logs are not clamped (torch's is +-inf at p = 0 and 1, see the docstring)
  inner = np.array(P_BCE) == 0.5
  _close(yt.grad.numpy()[inner], yp.grad.numpy()[inner], "grad of y")

@needs_values
def test_bce_after_saturated_sigmoid():
  # (at +-30 sigmoid(x) rounds to 1 or ~0 while its derivative does not: torch's sigmoid gradient, from the rounded
  # output, is 0 there and teeny's is not; that is sigmoid's business, so the saturated points here are +-100)
  t, p = _pair([100.0, -100.0, 100.0, -100.0, 3.0, -3.0, 0.0])
  y = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.5]
  t.sigmoid().binary_crossentropy(Tensor(y)).backward()
  F.binary_cross_entropy(p.sigmoid(), torch.tensor(y)).backward()
  _close(t.grad.numpy(), p.grad, "grad through sigmoid", atol=1e-6)

@needs_values
@pytest.mark.parametrize("pos_weight", [None, [2.0, 0.5, 1.0, 3.0, 1.0]])
def test_bce_logits_at_large_logits(pos_weight):
  t, p = _pair([100.0, -100.0, 0.0, 30.0, -30.0])
  y = [1.0, 1.0, 0.5, 0.0, 0.0]
  pw_t = Tensor(pos_weight) if pos_weight is not None else None
  pw_p = torch.tensor(pos_weight) if pos_weight is not None else None
  lt = t.binary_crossentropy_logits(Tensor(y), pos_weight=pw_t)
  lp = F.binary_cross_entropy_with_logits(p, torch.tensor(y), pos_weight=pw_p)
  lt.backward()
  lp.backward()
  _close(lt.numpy(), lp, "value", rtol=1e-5)
  _close(t.grad.numpy(), p.grad, "grad")

# ***** 2. Adam / AdamW: a step count per param *****

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
B0 = np.array([1.0, -0.5, 0.3], np.float32)

def _skip_trajectory(make_t, make_p, skip_steps=(1,), steps=5, jit=False):
  tw, tb = Tensor(W0.copy(), requires_grad=True), Tensor(B0.copy(), requires_grad=True)
  pw, pb = torch.tensor(W0.copy(), requires_grad=True), torch.tensor(B0.copy(), requires_grad=True)
  ot, op = make_t([tw, tb]), make_p([pw, pb])
  def teeny_step(both: bool):
    ot.zero_grad()
    loss = (tb * tb * Tensor([1.0, 2.0, 3.0])).sum()
    if both: loss = loss + (tw * tw).sum() * 0.5 + tw.sum()
    loss.backward()
    ot.step()
    return loss
  # under TinyJit each of the two step shapes is its own function (a capture replays one fixed graph)
  fs = {b: (TinyJit(lambda b=b: teeny_step(b)) if jit else (lambda b=b: teeny_step(b))) for b in (True, False)}
  for i in range(steps):
    both = i not in skip_steps
    fs[both]()
    op.zero_grad()
    loss = (pb * pb * torch.tensor([1.0, 2.0, 3.0])).sum()
    if both: loss = loss + (pw * pw).sum() * 0.5 + pw.sum()
    loss.backward()
    op.step()
    assert pw.grad is None or both
    _close(tw.numpy(), pw, f"W after step {i}", rtol=1e-5, atol=1e-6)
    _close(tb.numpy(), pb, f"b after step {i}", rtol=1e-5, atol=1e-6)
  return ot

ADAMS = {
  "adam": (lambda ps: optim.Adam(ps, lr=0.1), lambda ps: torch.optim.Adam(ps, lr=0.1)),
  "adam_wd": (lambda ps: optim.Adam(ps, lr=0.1, weight_decay=0.1),
              lambda ps: torch.optim.Adam(ps, lr=0.1, weight_decay=0.1)),
  "adamw": (lambda ps: optim.AdamW(ps, lr=0.1), lambda ps: torch.optim.AdamW(ps, lr=0.1)),
  "adamw_wd": (lambda ps: optim.AdamW(ps, lr=0.05, b1=0.5, b2=0.9, weight_decay=0.5),
               lambda ps: torch.optim.AdamW(ps, lr=0.05, betas=(0.5, 0.9), weight_decay=0.5)),
}

@needs_values
@pytest.mark.parametrize("name", list(ADAMS))
def test_adam_param_skipped_on_a_step_matches_torch(name):
  ot = _skip_trajectory(*ADAMS[name])
  np.testing.assert_equal(ot.param_steps.numpy(), [4, 5])   # W took 4 steps, b 5: each its own bias correction

@needs_values
def test_adam_param_skipped_on_several_steps():
  _skip_trajectory(*ADAMS["adamw"], skip_steps=(0, 2, 3), steps=6)

@needs_values
def test_adam_param_skipped_under_jit():
  _skip_trajectory(*ADAMS["adam"], skip_steps=(1, 2, 4), steps=6, jit=True)

def test_adam_state_is_per_param():
  a, b, c = (Tensor(np.ones(k, np.float32), requires_grad=True) for k in (2, 3, 4))
  opt = optim.Adam([a, b, c])
  assert opt.param_steps.shape == (3,)
  opt.zero_grad()
  (a.sum() + c.sum()).backward()   # b gets no grad: skipped
  opt.step()
  if not is_null():
    np.testing.assert_equal(opt.param_steps.numpy(), [1, 0, 1])
    np.testing.assert_allclose(b.numpy(), np.ones(3), rtol=0)

# ***** 3. gradients at the kinks of piecewise activations *****

KINKS = {
  # name: (teeny, torch, kink points)
  "relu": (lambda x: x.relu(), F.relu, [0.0]),
  "leaky_relu": (lambda x: x.leaky_relu(0.1), lambda x: F.leaky_relu(x, 0.1), [0.0]),
  "leaky_relu_neg": (lambda x: x.leaky_relu(-0.5), lambda x: F.leaky_relu(x, -0.5), [0.0]),
  "hardtanh": (lambda x: x.hardtanh(), F.hardtanh, [-1.0, 1.0]),
  "hardtanh_bounds": (lambda x: x.hardtanh(-2.0, 3.0), lambda x: F.hardtanh(x, -2.0, 3.0), [-2.0, 3.0]),
  "relu6": (lambda x: x.relu6(), F.relu6, [0.0, 6.0]),
  "hardswish": (lambda x: x.hardswish(), F.hardswish, [-3.0, 3.0]),
  "hardsigmoid": (lambda x: x.hardsigmoid(), F.hardsigmoid, [-3.0, 3.0]),
  "selu": (lambda x: x.selu(), F.selu, [0.0]),
  "elu": (lambda x: x.elu(), F.elu, [0.0]),
  "elu_alpha": (lambda x: x.elu(0.5), lambda x: F.elu(x, 0.5), [0.0]),
  "celu": (lambda x: x.celu(0.5), lambda x: F.celu(x, 0.5), [0.0]),
  "gelu": (lambda x: x.gelu(), F.gelu, [0.0]),
  "gelu_tanh": (lambda x: x.gelu("tanh"), lambda x: F.gelu(x, approximate="tanh"), [0.0]),
  "silu": (lambda x: x.silu(), F.silu, [0.0]),
  "softplus": (lambda x: x.softplus(), F.softplus, [0.0]),
  "clip": (lambda x: x.clip(-1.0, 1.0), lambda x: x.clamp(-1.0, 1.0), [-1.0, 1.0]),
}

def _around(kinks):
  pts = [-100.0, -7.0, -2.5, 0.4, 2.5, 7.0, 100.0]   # (nan is left out: torch's vector and scalar loops differ on it)
  for k in kinks:
    k32 = np.float32(k)
    pts += [k, np.nextafter(k32, np.float32(-np.inf)), np.nextafter(k32, np.float32(np.inf)), k - 1e-3, k + 1e-3]
  return np.array(pts, np.float32)

@needs_values
@pytest.mark.parametrize("name", list(KINKS))
def test_activation_grad_at_kinks(name):
  fn_t, fn_p, kinks = KINKS[name]
  t, p = _pair(_around(kinks))
  yt, yp = fn_t(t), fn_p(p)
  up = np.linspace(0.5, 2.0, yt.shape[0]).astype(np.float32)
  (yt * Tensor(up)).sum().backward()
  (yp * torch.tensor(up)).sum().backward()
  _close(yt.numpy(), yp, f"{name} forward at {p.detach().numpy()}", atol=1e-7, rtol=1e-5)
  _close(t.grad.numpy(), p.grad, f"{name} grad at {p.detach().numpy()}", atol=1e-6, rtol=1e-5)

def test_hardtanh_rejects_min_above_max():
  with pytest.raises(ValueError, match="min_val"): Tensor([1.0]).hardtanh(2.0, 1.0)

# ***** 4. BatchNorm, Linear misuse *****

@pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1), (1, 3, 1, 1)])
def test_batchnorm_one_value_per_channel_raises_in_training(shape):
  bn = nn.BatchNorm(3)
  with Tensor.train(), pytest.raises(ValueError, match="more than 1 value per channel"): bn(Tensor.ones(*shape))
  with Tensor.train(False): bn(Tensor.ones(*shape)).realize()   # eval: running statistics, fine
  nt = nn.BatchNorm(3, track_running_stats=False)   # batch statistics in eval too, so torch raises there as well
  with Tensor.train(False), pytest.raises(ValueError, match="more than 1 value per channel"): nt(Tensor.ones(*shape))

@needs_values
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (3, 3, 2, 2)])
def test_batchnorm_momentum_none_is_cumulative_average(shape):
  rng = np.random.default_rng(0)
  tb, pb = nn.BatchNorm(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None) if len(shape) < 4 else \
    torch.nn.BatchNorm2d(3, momentum=None)
  for i in range(4):
    x = (rng.standard_normal(shape) * (i + 1) + i).astype(np.float32)
    with Tensor.train(): yt = tb(Tensor(x))
    yp = pb(torch.tensor(x))
    _close(yt.numpy(), yp, f"output {i}", atol=1e-5)
    _close(tb.running_mean.numpy(), pb.running_mean, f"running_mean {i}", atol=1e-6)
    _close(tb.running_var.numpy(), pb.running_var, f"running_var {i}", atol=1e-6)
  assert int(tb.num_batches_tracked.numpy().reshape(-1)[0]) == int(pb.num_batches_tracked) == 4
  x = rng.standard_normal(shape).astype(np.float32)
  pb.eval()
  with Tensor.train(False): _close(tb(Tensor(x)).numpy(), pb(torch.tensor(x)), "eval", atol=1e-5)

@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_linear_zero_in_features():
  lin = nn.Linear(0, 3)
  assert lin.weight.shape == (3, 0) and lin.bias is not None and lin.bias.shape == (3,)
  x = Tensor(np.zeros((2, 0), np.float32), requires_grad=True)
  y = lin(x)
  assert y.shape == (2, 3)
  y.sum().backward()
  if not is_null():
    ref = torch.nn.Linear(0, 3)(torch.zeros(2, 0))   # torch: the bias starts at zeros too
    _close(y.numpy(), ref, "Linear(0, 3) output")
    _close(lin.bias.grad.numpy(), np.full(3, 2.0), "bias grad")

# ***** 5. Embedding padding_idx, cross_entropy class weights *****

@needs_values
@pytest.mark.parametrize("padding_idx", [0, 4, -2])
def test_embedding_padding_idx(padding_idx):
  te, pe = nn.Embedding(6, 3, padding_idx=padding_idx), torch.nn.Embedding(6, 3, padding_idx=padding_idx)
  assert te.padding_idx == pe.padding_idx
  np.testing.assert_equal(te.weight.numpy()[pe.padding_idx], np.zeros(3, np.float32))
  w = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)   # a non-zero padding row: still read
  te.weight.assign(Tensor(w)).realize()
  with torch.no_grad(): pe.weight.copy_(torch.tensor(w))
  idx = np.array([[1, 4, 0, 5], [4, 4, 2, 0]])
  g = np.random.default_rng(2).standard_normal((2, 4, 3)).astype(np.float32)
  yt, yp = te(Tensor(idx.astype(np.int32))), pe(torch.tensor(idx))
  (yt * Tensor(g)).sum().backward()
  (yp * torch.tensor(g)).sum().backward()
  _close(yt.numpy(), yp, "lookup")
  _close(te.weight.grad.numpy(), pe.weight.grad, "weight grad (padding row zero)")

def test_embedding_padding_idx_out_of_range():
  with pytest.raises(ValueError, match="padding_idx"): nn.Embedding(5, 2, padding_idx=5)
  with pytest.raises(ValueError, match="padding_idx"): nn.Embedding(5, 2, padding_idx=-6)

CE_W = np.array([1.0, 2.0, 0.5, 3.0], np.float32)

@needs_values
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("kind", ["index", "index_ignored", "prob", "spatial"])
def test_cross_entropy_class_weights(reduction, label_smoothing, kind):
  rng = np.random.default_rng(3)
  if kind == "spatial":
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    y = rng.integers(0, 4, (3, 5))
    y[0, 1] = y[2, 4] = -100
  else:
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 3, 2, 1, 3, 0]) if kind != "index_ignored" else np.array([0, -100, 2, 1, -100, 3])
  if kind == "prob":
    e = np.exp(rng.standard_normal((6, 4)))
    probs = (e / e.sum(1, keepdims=True)).astype(np.float32)
    yt, yp = Tensor(probs), torch.tensor(probs)
  else: yt, yp = Tensor(y.astype(np.int32)), torch.tensor(y)
  t, p = _pair(x)
  lt = t.cross_entropy(yt, reduction=reduction, label_smoothing=label_smoothing, weight=Tensor(CE_W))
  lp = F.cross_entropy(p, yp, weight=torch.tensor(CE_W), reduction=reduction, label_smoothing=label_smoothing)
  up = np.linspace(0.5, 1.5, lp.numel()).astype(np.float32).reshape(lp.shape)
  (lt * Tensor(up)).sum().backward()
  (lp * torch.tensor(up)).sum().backward()
  _close(lt.numpy(), lp, "loss", rtol=1e-5)
  _close(t.grad.numpy(), p.grad, "grad", rtol=1e-5)

def test_cross_entropy_weight_shape_checked():
  with pytest.raises(ValueError, match="weight shape"):
    Tensor.ones(2, 3).cross_entropy(Tensor([0, 1]), weight=Tensor([1.0, 2.0]))
