"""nn's module classes run their teeny.nn.functional function (one copy of the math): each module gives exactly what
its F function gives, and both what torch gives, including the behaviours that routing fixed (BatchNorm's float16
output dtype, PReLU on a 0-d input, RMSNorm's float64 eps, optim.clip_grad_norm_ in place with torch's norm dtype);
F.embedding_bag (new) against torch's, values and gradients."""
import warnings
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
import teeny.nn.functional as F
from teeny.nn import optim, init
from helpers import needs_values, is_null, compare_torch, assert_like_torch

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

HSET = settings(max_examples=6, deadline=None)   # (each example compiles new kernels: CI time)

def _u(shape, seed=0, low=-2.0, high=2.0, dtype=np.float32):
  return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)

X4 = _u((2, 4, 3, 3))
X2 = _u((3, 4), 1)
T2 = _u((3, 4), 2)

# (module, the F call it must equal, input arrays); modules built in the test (a parameter's init is random)
CASES = {
  "LocalResponseNorm": (lambda: nn.LocalResponseNorm(3, 1e-2, 0.5, 2.0), lambda m, x: F.local_response_norm(x, 3, 1e-2,
                        0.5, 2.0), (X4,)),
  "ChannelShuffle": (lambda: nn.ChannelShuffle(2), lambda m, x: F.channel_shuffle(x, 2), (X4,)),
  "GLU": (lambda: nn.GLU(-3), lambda m, x: F.glu(x, -3), (X4,)),
  "PReLU": (lambda: nn.PReLU(4, 0.3), lambda m, x: F.prelu(x, m.weight), (X4,)),
  "Softplus": (lambda: nn.Softplus(2.0, 1.0), lambda m, x: F.softplus(x, 2.0, 1.0), (X4,)),
  "Tanhshrink": (lambda: nn.Tanhshrink(), lambda m, x: F.tanhshrink(x), (X4,)),
  "Hardshrink": (lambda: nn.Hardshrink(0.7), lambda m, x: F.hardshrink(x, 0.7), (X4,)),
  "Softshrink": (lambda: nn.Softshrink(0.7), lambda m, x: F.softshrink(x, 0.7), (X4,)),
  "Threshold": (lambda: nn.Threshold(0.1, -3.0), lambda m, x: F.threshold(x, 0.1, -3.0), (X4,)),
  "Hardtanh": (lambda: nn.Hardtanh(-0.5, 0.5), lambda m, x: F.hardtanh(x, -0.5, 0.5), (X4,)),
  "RMSNorm": (lambda: nn.RMSNorm((3, 3)), lambda m, x: F.rms_norm(x, (3, 3), m.weight), (X4,)),
  "GroupNorm": (lambda: nn.GroupNorm(2, 4), lambda m, x: F.group_norm(x, 2, m.weight, m.bias), (X4,)),
  "Softmax": (lambda: nn.Softmax(1), lambda m, x: F.softmax(x, 1), (X4,)),
  "LogSoftmax": (lambda: nn.LogSoftmax(-1), lambda m, x: F.log_softmax(x, -1), (X4,)),
  "Softmin": (lambda: nn.Softmin(0), lambda m, x: F.softmin(x, 0), (X4,)),
  "Upsample": (lambda: nn.Upsample(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
               lambda m, x: F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True), (X4,)),
  "MaxPool2d": (lambda: nn.MaxPool2d(2, 1), lambda m, x: F.max_pool2d(x, 2, 1), (X4,)),
  "AvgPool2d": (lambda: nn.AvgPool2d(2, 1, 1), lambda m, x: F.avg_pool2d(x, 2, 1, 1), (X4,)),
  "ReflectionPad2d": (lambda: nn.ReflectionPad2d((1, 0, 2, 1)), lambda m, x: F.pad(x, (1, 0, 2, 1), "reflect"), (X4,)),
  "ConstantPad1d": (lambda: nn.ConstantPad1d(2, 1.5), lambda m, x: F.pad(x, (2, 2), value=1.5), (X4,)),
  "Unfold": (lambda: nn.Unfold(2, padding=1), lambda m, x: F.unfold(x, 2, padding=1), (X4,)),
  "Conv2d": (lambda: nn.Conv2d(4, 2, 2, padding=1, padding_mode="circular"),
             lambda m, x: F.conv2d(F.pad(x, (1, 1, 1, 1), "circular"), m.weight, m.bias), (X4,)),
  "Bilinear": (lambda: nn.Bilinear(4, 4, 2), lambda m, a, b: F.bilinear(a, b, m.weight, m.bias), (X2, T2)),
  "CosineSimilarity": (lambda: nn.CosineSimilarity(-1), lambda m, a, b: F.cosine_similarity(a, b, -1), (X2, T2)),
  "PairwiseDistance": (lambda: nn.PairwiseDistance(1.0), lambda m, a, b: F.pairwise_distance(a, b, 1.0), (X2, T2)),
  "MSELoss": (lambda: nn.MSELoss("sum"), lambda m, a, b: F.mse_loss(a, b, reduction="sum"), (X2, T2)),
  "HuberLoss": (lambda: nn.HuberLoss("none", 0.5), lambda m, a, b: F.huber_loss(a, b, "none", 0.5), (X2, T2)),
  "SoftMarginLoss": (lambda: nn.SoftMarginLoss(), lambda m, a, b: F.soft_margin_loss(a, b), (X2, T2)),
  "TripletMarginWithDistanceLoss": (lambda: nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True),
                                    lambda m, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=0.5,
                                                                                           swap=True),
                                    (X2, T2, X2[::-1])),
}

@pytest.mark.parametrize("name", list(CASES))
def test_module_gives_its_F_function(name):
  make, fn, arrays = CASES[name]
  m = make()
  xs = [Tensor(np.ascontiguousarray(a)) for a in arrays]
  got, want = m(*xs), fn(m, *xs)
  assert tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype
  if not is_null(): np.testing.assert_array_equal(got.numpy(), want.numpy())

def test_module_on_non_contiguous_input_matches_torch():
  x = _u((2, 3, 4, 4), 3)
  compare_torch(nn.LocalResponseNorm(2), torch.nn.LocalResponseNorm(2), [x], views={0: lambda t: t.transpose(2, 3)})
  compare_torch(nn.GLU(1), torch.nn.GLU(1), [_u((2, 4, 3), 4)], views={0: lambda t: t[:, :, ::2]})

# ***** behaviours routing fixed *****

@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_float16_output_is_float16_like_torch(train):
  x = _u((4, 3), 5).astype(np.float16)
  tm, pm = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
  pm.train(train)
  with Tensor.train(train): got = tm(Tensor(x))
  assert_like_torch(got, pm(torch.tensor(x).float()).half().detach(), atol=2e-3, rtol=2e-3)
  assert got.dtype == dtypes.float16
  if train and not is_null():
    np.testing.assert_allclose(tm.running_var.numpy(), pm.running_var.numpy(), rtol=1e-3)
    assert int(tm.num_batches_tracked.numpy()) == 1

@needs_values
def test_batchnorm_momentum_none_is_torchs_cumulative_average():
  tm, pm = nn.BatchNorm2d(4, momentum=None), torch.nn.BatchNorm2d(4, momentum=None)
  pm.train()
  for seed in (0, 1, 2):
    x = _u((2, 4, 3, 3), seed, 0.0, 3.0)
    with Tensor.train(): y = tm(Tensor(x))
    assert_like_torch(y, pm(torch.tensor(x)).detach(), atol=1e-5, rtol=1e-4)
  np.testing.assert_allclose(tm.running_mean.numpy(), pm.running_mean.numpy(), rtol=1e-5)
  np.testing.assert_allclose(tm.running_var.numpy(), pm.running_var.numpy(), rtol=1e-5)
  assert int(tm.num_batches_tracked.numpy()) == int(pm.num_batches_tracked) == 3
  with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
    with Tensor.train(): tm(Tensor.ones(1, 4, 1, 1))

def test_batchnorm_without_running_stats_uses_the_batch_in_eval():
  x = _u((3, 2, 5), 6)
  pm = torch.nn.BatchNorm1d(2, track_running_stats=False).eval()
  assert_like_torch(nn.BatchNorm1d(2, track_running_stats=False)(Tensor(x)), pm(torch.tensor(x)).detach(), atol=1e-5)

def test_prelu_on_a_0d_input_and_its_channel_error_like_torch():
  x = np.array(-1.5, np.float32)
  compare_torch(nn.PReLU(), torch.nn.PReLU(), [x], grad=False)
  with pytest.raises(RuntimeError, match="prelu: mismatch of parameter numbers and input channel size"):
    nn.PReLU(3)(Tensor(_u((2, 4))))
  with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"): torch.nn.PReLU(3)(torch.ones(2, 4))

def test_rmsnorm_eps_none_is_the_computing_dtypes_like_torch():
  tm, pm = nn.RMSNorm(3), torch.nn.RMSNorm(3, dtype=torch.float64)
  assert tm.eps is None and pm.eps is None
  x = np.array([[1e-9, 2e-9, 0.0], [1.0, -2.0, 0.5]])
  assert_like_torch(tm(Tensor(x)), pm(torch.tensor(x)).detach(), atol=1e-9, rtol=1e-7)
  compare_torch(nn.RMSNorm(3), torch.nn.RMSNorm(3), [_u((2, 3), 7).astype(np.float16)], atol=2e-3, rtol=2e-3,
                grad=False, quiet=True)   # (a float16 input, the float32 weight: float16 out, as torch's)

def test_nn_rrelu_unfold_fold_are_Fs():
  assert nn.rrelu is F.rrelu and nn.unfold is F.unfold and nn.fold is F.fold

@pytest.mark.parametrize("mod", [nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout])
def test_dropout_modules_follow_tensor_training(mod):
  x = Tensor(_u((2, 3, 4, 5, 2), 8)) if mod is not nn.Dropout1d else Tensor(_u((2, 3, 4), 8))
  assert mod(0.5)(x) is x   # (eval: the input itself)
  with Tensor.train():
    y = mod(1.0)(x)
    if mod is nn.AlphaDropout: assert y.dtype == x.dtype
    elif not is_null(): assert not y.numpy().any()
  with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"): mod(1.5)

def test_loss_modules_check_reduction_through_F():
  x = Tensor(X2)
  with pytest.raises(ValueError, match="l1_loss: 'avg' is not a valid value for reduction"): nn.L1Loss("avg")(x, x)
  with pytest.raises(ValueError, match="kl_div: 'x' is not a valid value"): nn.KLDivLoss("x")(x, x)
  compare_torch(nn.KLDivLoss("batchmean", True), torch.nn.KLDivLoss(reduction="batchmean", log_target=True), [X2, T2])

def test_bilinear_errors_like_torch():
  b, pb = nn.Bilinear(4, 3, 2), torch.nn.Bilinear(4, 3, 2)
  with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 5 but expected 4"):
    b(Tensor.ones(2, 5), Tensor.ones(2, 3))
  with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
    pb(torch.ones(2, 5), torch.ones(2, 3))
  with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 4 but expected 3"):
    b(Tensor.ones(2, 4), Tensor.ones(2, 4))
  with pytest.raises(RuntimeError, match="input batch dimensions do not match"): b(Tensor.ones(2, 4), Tensor.ones(1, 3))

def test_fold_names_a_bad_output_size():
  with pytest.raises(ValueError, match="fold: output_size must be an int or a pair of ints"):
    F.fold(Tensor.ones(1, 4, 4), (3, 3, 3), 2)
  with pytest.raises(ValueError, match=r"unfold: Input Error: Only 3D \(unbatched\) or 4D"): F.unfold(Tensor.ones(2), 2)

# ***** optim.clip_grad_norm_ is nn.utils' *****

def _grads(dtype=np.float32):
  ps = [Tensor(_u((3, 4), 9, dtype=dtype), requires_grad=True), Tensor(_u((5,), 10, dtype=dtype), requires_grad=True)]
  gs = [_u((3, 4), 11, -3, 3, dtype), _u((5,), 12, -3, 3, dtype)]
  for p, g in zip(ps, gs): p.grad = Tensor(g)
  return ps, gs

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_optim_clip_grad_norm_in_place_like_torch(dtype):
  ps, gs = _grads(dtype)
  before = [p.grad for p in ps]
  total = optim.clip_grad_norm_(ps + ps[:1], 1.0)   # (a parameter listed twice counts once)
  pps = [torch.tensor(g.astype(np.float32)).to(torch.float16 if dtype == np.float16 else torch.float32)
         for g in gs]
  tps = [torch.zeros_like(g, requires_grad=True) for g in pps]
  for t, g in zip(tps, pps): t.grad = g.clone()
  want = torch.nn.utils.clip_grad_norm_(tps, 1.0)
  tol = 2e-3 if dtype == np.float16 else 1e-5
  assert_like_torch(total, want, atol=tol, rtol=tol)
  assert all(p.grad is b for p, b in zip(ps, before))   # scaled in place, as torch's mul_
  for p, t in zip(ps, tps): assert_like_torch(p.grad, t.grad, atol=tol, rtol=tol)

@needs_values
def test_optim_clip_grad_norm_eps_and_checks():
  ps, gs = _grads()
  norm = float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in gs)))
  total = optim.clip_grad_norm_(ps, 1.0, eps=0.5)
  np.testing.assert_allclose(total.numpy(), norm, rtol=1e-6)
  np.testing.assert_allclose(ps[1].grad.numpy(), gs[1] * (1.0 / (norm + 0.5)), rtol=1e-5)
  assert float(optim.clip_grad_norm_([Tensor.ones(2, requires_grad=True)], 1.0).numpy()) == 0.0   # no grads
  q = Tensor.ones(2, requires_grad=True)
  q.grad = Tensor.ones(3)
  with pytest.raises(RuntimeError, match="clip_grad_norm_: param 0 has shape"): optim.clip_grad_norm_([q], 1.0)

# ***** init.trunc_normal_ through Tensor.erfinv *****

@needs_values
def test_trunc_normal_uses_erfinv_and_stays_in_bounds():
  t = init.trunc_normal_(Tensor.empty(20000), mean=0.5, std=2.0, a=-1.0, b=3.0).numpy()
  assert t.min() >= -1.0 and t.max() <= 3.0
  d = torch.distributions.Normal(0.5, 2.0)
  lo, hi = d.cdf(torch.tensor(-1.0)), d.cdf(torch.tensor(3.0))
  ref = d.icdf(torch.linspace(float(lo), float(hi), 20003)[1:-1]).numpy()   # (the truncated law's quantiles)
  np.testing.assert_allclose(np.quantile(t, [0.1, 0.5, 0.9]), np.quantile(ref, [0.1, 0.5, 0.9]), atol=0.06)

# ***** F.embedding_bag *****

W = _u((6, 3), 13)

def _bag_case(mode, two_d, pad, psw, seed):
  rng = np.random.default_rng(seed)
  ids = rng.integers(0, 6, size=(3, 4) if two_d else (7,)).astype(np.int64)
  offs = None if two_d else np.array([0, 2, 2, 5], np.int64)   # (bag 1 empty)
  w = _u(ids.shape, seed + 1, 0.5, 1.5) if psw else None
  return ids, offs, w, (pad if pad is None else int(ids.reshape(-1)[0]) - 6)   # (a negative padding_idx)

def _bag_pair(mode, ids, offs, w, pad, last=False):
  def ours(weight, *psw):
    return F.embedding_bag(Tensor(ids), weight, None if offs is None else Tensor(offs), mode=mode,
                           per_sample_weights=Tensor(psw[0]) if psw else None, include_last_offset=last,
                           padding_idx=pad)
  def theirs(weight, *psw):
    return TF.embedding_bag(torch.tensor(ids), weight, None if offs is None else torch.tensor(offs), mode=mode,
                            per_sample_weights=psw[0] if psw else None, include_last_offset=last, padding_idx=pad)
  return ours, theirs

@HSET
@given(st.sampled_from(["sum", "mean", "max"]), st.booleans(), st.sampled_from([None, 0]), st.booleans(),
       st.integers(0, 3))
def test_embedding_bag_like_torch(mode, two_d, pad, psw, seed):
  psw = psw and mode == "sum"
  ids, offs, w, pad = _bag_case(mode, two_d, pad, psw, seed)
  ours, theirs = _bag_pair(mode, ids, offs, w, pad)
  compare_torch(ours, theirs, [W] + ([w] if psw else []), atol=1e-5, no_grad=(1,))

def test_embedding_bag_include_last_offset_and_non_contiguous_weight():
  ids, offs = np.array([1, 4, 4, 0, 5], np.int64), np.array([0, 1, 1, 5], np.int64)
  ours, theirs = _bag_pair("mean", ids, offs, None, None, last=True)
  compare_torch(ours, theirs, [_u((3, 6), 14)], views={0: lambda t: t.transpose(0, 1)})

def test_embedding_bag_module_is_F():
  m = nn.EmbeddingBag(6, 3, mode="max", padding_idx=2)
  ids, offs = Tensor(np.array([2, 3, 1, 2], np.int64)), Tensor(np.array([0, 1], np.int64))
  got, want = m(ids, offs), F.embedding_bag(ids, m.weight, offs, mode="max", padding_idx=2)
  assert tuple(got.shape) == (2, 3)
  if not is_null(): np.testing.assert_array_equal(got.numpy(), want.numpy())

def test_embedding_bag_errors():
  w = Tensor(W)
  with pytest.raises(ValueError, match="embedding_bag: mode has to be one of sum, mean or max"):
    F.embedding_bag(Tensor([[0, 1]]), w, mode="min")
  with pytest.raises(NotImplementedError, match="max_norm"): F.embedding_bag(Tensor([[0, 1]]), w, max_norm=1.0)
  with pytest.raises(ValueError, match="weight has to be a 2D Tensor"): F.embedding_bag(Tensor([[0]]), Tensor.ones(6))
  with pytest.raises(TypeError, match="integer tensor of ids"): F.embedding_bag(Tensor([[0.5]]), w)
  with pytest.raises(ValueError, match="offsets has to be None"): F.embedding_bag(Tensor([[0]]), w, Tensor([0]))
  with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"): F.embedding_bag(Tensor([0]), w)
  with pytest.raises(ValueError, match="padding_idx"): F.embedding_bag(Tensor([[0]]), w, padding_idx=6)
  with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
    F.embedding_bag(Tensor([[0]]), w, per_sample_weights=Tensor([[1.0]]))
  with pytest.raises(ValueError, match="1D or 2D"): F.embedding_bag(Tensor([[[0]]]), w)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    out = F.embedding_bag(Tensor(np.zeros((0,), np.int64)), w, Tensor(np.array([0, 0], np.int64)), mode="max")
  assert tuple(out.shape) == (2, 3)   # (only empty bags: zeros)
  if not is_null(): assert not out.numpy().any()
