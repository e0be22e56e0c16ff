"""The torch.nn.functional losses and distances on Tensor (tensor_loss.py) against torch: mse/l1/smooth_l1/huber,
kl_div, binary_cross_entropy(_with_logits), cosine_similarity, pairwise_distance, margin_ranking, hinge_embedding,
soft_margin, cosine_embedding, triplet_margin, poisson_nll, gaussian_nll and multilabel_soft_margin: values, dtype,
shape, broadcasting and gradients (input and target) for every reduction, random shapes and arguments (hypothesis),
edges (empty, size 1, 0-d, non-contiguous, float16, kinks), the dtype rules of each and its errors.

Under DEV=NULL the forward and backward graphs are still built, scheduled and rendered; values are not compared."""
import math, warnings
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Tensor, dtypes
from helpers import compare_torch, is_null, needs_values

torch = pytest.importorskip("torch")
F = torch.nn.functional
REDS = ["mean", "sum", "none"]
FAST = settings(max_examples=15, deadline=None)

def _np(x, dtype=np.float32): return np.asarray(x, dtype=dtype)

def run(teeny_fn, torch_fn, vals, grad=True, atol=1e-5, rtol=1e-5, gatol=None, grtol=None, nograd=(), views=None,
        seed=0, expect_dtype=True):
  """compare_torch (helpers.py) on vals (lists become float32 arrays) with this file's defaults: gradient tolerances
  those of the values unless gatol/grtol, a positive upstream gradient, torch's warnings ignored; returns the teeny
  result. An argument torch has no gradient for (soft_margin_loss's target; weight, pos_weight) is compared without."""
  xs = [v if isinstance(v, np.ndarray) else _np(v) for v in vals]
  try:
    return compare_torch(teeny_fn, torch_fn, xs, atol=atol, rtol=rtol, grad=grad,
                         grad_atol=atol if gatol is None else gatol, grad_rtol=rtol if grtol is None else grtol,
                         no_grad=nograd, views=views, seed=seed, upstream="positive", dtype=expect_dtype, quiet=True)[0]
  except RuntimeError as e:
    if "not differentiable with respect to argument" not in str(e) or len(nograd) >= len(xs) - 1: raise
    more = (1,) if "argument 'target'" in str(e) else tuple(range(2, len(xs)))   # weight, pos_weight
    return run(teeny_fn, torch_fn, vals, grad, atol, rtol, gatol, grtol, tuple(set(nograd) | set(more)), views, seed,
               expect_dtype)

rng = np.random.default_rng(1234)   # (reseeded for each test by conftest.py)
def normal(*shape, scale=1.0): return (rng.standard_normal(shape) * scale).astype(np.float32)
def unif(*shape, lo=0.0, hi=1.0): return rng.uniform(lo, hi, shape).astype(np.float32)
def pm1(*shape): return np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32)

# name -> (teeny call, torch call, inputs maker(shape), kwargs choices for a parametrized sweep)
def _T(name): return lambda *a, **kw: getattr(a[0], name)(*a[1:], **kw)
def _P(name): return lambda *a, **kw: getattr(F, name)(*a, **kw)

CASES = {
  "mse_loss": (lambda s: [normal(*s), normal(*s)], [{}]),
  "l1_loss": (lambda s: [normal(*s), normal(*s)], [{}]),
  "smooth_l1_loss": (lambda s: [normal(*s), normal(*s)], [{}, {"beta": 0.5}, {"beta": 0.0}, {"beta": 3.0}]),
  "huber_loss": (lambda s: [normal(*s, scale=2), normal(*s)], [{}, {"delta": 0.3}, {"delta": 2.5}]),
  "kl_div": (lambda s: [normal(*s), unif(*s) * (rng.random(s) > 0.2)], [{}]),
  "binary_cross_entropy": (lambda s: [unif(*s, lo=0.02, hi=0.98), unif(*s)], [{}]),
  "binary_cross_entropy_with_logits": (lambda s: [normal(*s, scale=3), unif(*s)], [{}]),
  "soft_margin_loss": (lambda s: [normal(*s, scale=2), pm1(*s)], [{}]),
  "hinge_embedding_loss": (lambda s: [normal(*s, scale=2), pm1(*s)], [{}, {"margin": 0.5}, {"margin": -0.5}]),
  "poisson_nll_loss": (lambda s: [normal(*s), rng.integers(0, 6, s).astype(np.float32)],
                       [{}, {"full": True}]),
  "multilabel_soft_margin_loss": (lambda s: [normal(*s, scale=2), (rng.random(s) < 0.5).astype(np.float32)], [{}]),
}

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("name", list(CASES))
def test_pointwise_losses(name, reduction):
  make, kws = CASES[name]
  for i, kw in enumerate(kws):
    for shape in [(4, 5), (2, 3, 4)][:2 if i == 0 else 1]:
      run(lambda *a: _T(name)(*a, reduction=reduction, **kw), lambda *a: _P(name)(*a, reduction=reduction, **kw),
          make(shape))

@pytest.mark.parametrize("reduction", REDS)
def test_kl_div_variants(reduction):
  x, t = normal(3, 4), unif(3, 4)
  t[0, :2] = 0.0   # target 0 adds 0 (xlogy); its own gradient is nan in torch and here (0 * log 0)
  for lt in (False, True):
    tv = normal(3, 4) if lt else t
    run(lambda a, b: a.kl_div(b, reduction=reduction, log_target=lt),
        lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=lt), [x, tv])
  run(lambda a, b: a.kl_div(b, reduction="batchmean"), lambda a, b: F.kl_div(a, b, reduction="batchmean"), [x, t])
  run(lambda a, b: a.kl_div(b, reduction="batchmean"), lambda a, b: F.kl_div(a, b, reduction="batchmean"),
      [_np(0.5), _np(0.3)])   # 0-d: the sum

@needs_values
def test_kl_div_zero_target_and_inf_input():
  x, t = _np([0.5, -1.0, -math.inf, 0.3]), _np([0.0, 0.0, 0.0, 0.2])
  got = Tensor(x).kl_div(Tensor(t), reduction="none").numpy()
  np.testing.assert_array_equal(np.isnan(got), F.kl_div(torch.tensor(x), torch.tensor(t), reduction="none").isnan())
  assert got[0] == 0 and got[1] == 0

# ***** binary cross-entropy: torch's names next to tinygrad's *****

@pytest.mark.parametrize("reduction", REDS)
def test_bce_weight(reduction):
  p, y = unif(3, 4, lo=0.05, hi=0.95), unif(3, 4)
  for w in (unif(4, lo=0.5, hi=2), unif(3, 4, lo=0.5, hi=2), unif(3, 1, lo=0.5, hi=2)):
    run(lambda a, b, c: a.binary_cross_entropy(b, weight=c, reduction=reduction),
        lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction=reduction), [p, y, w], nograd=(2,))
  # the tinygrad name gives the same as torch's
  run(lambda a, b: a.binary_crossentropy(b, reduction=reduction),
      lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), [p, y])

@needs_values
def test_bce_saturated_and_clamped():
  p, y = _np([0.0, 1.0, 0.0, 1.0, 1e-30, 0.5]), _np([0.0, 1.0, 1.0, 0.0, 1.0, 0.5])
  got = Tensor(p).binary_cross_entropy(Tensor(y), reduction="none").numpy()
  np.testing.assert_allclose(got, F.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction="none").numpy(),
                             rtol=1e-6)
  assert got[2] == 100 and got[3] == 100   # log clamped at -100, as torch
  t = Tensor(p, requires_grad=True)
  t.binary_cross_entropy(Tensor(y)).backward()
  tp = torch.tensor(p, requires_grad=True)
  F.binary_cross_entropy(tp, torch.tensor(y)).backward()
  np.testing.assert_allclose(t.grad.numpy(), tp.grad.numpy(), rtol=1e-5)

@pytest.mark.parametrize("reduction", REDS)
def test_bce_with_logits_weights(reduction):
  x, y = normal(3, 4, scale=4), unif(3, 4)
  for kw in ({"weight": unif(4, lo=0.5, hi=2)}, {"pos_weight": unif(4, lo=0.5, hi=3)},
             {"weight": unif(3, 1, lo=0.5, hi=2), "pos_weight": unif(3, 4, lo=0.5, hi=3)}):
    names = list(kw)
    run(lambda a, b, *w: a.binary_cross_entropy_with_logits(b, reduction=reduction, **dict(zip(names, w))),
        lambda a, b, *w: F.binary_cross_entropy_with_logits(a, b, reduction=reduction, **dict(zip(names, w))),
        [x, y, *kw.values()])
  run(lambda a, b, c: a.binary_crossentropy_logits(b, reduction=reduction, pos_weight=c),
      lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, reduction=reduction, pos_weight=c),
      [x, y, unif(4, lo=0.5, hi=3)])

def test_bce_with_logits_large_and_zero_logits():
  run(lambda a, b: a.binary_cross_entropy_with_logits(b, reduction="none"),
      lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
      [_np([100.0, -100.0, 0.0, 30.0, -30.0, 0.0]), _np([1.0, 1.0, 0.5, 0.0, 0.0, 1.0])])

def test_tinygrad_names_keep_lenient_target_dtype():
  # binary_crossentropy(_logits) cast any target to the input's dtype (torch's names refuse a dtype mismatch)
  p = Tensor(unif(2, 3, lo=0.1, hi=0.9))
  assert p.binary_crossentropy(Tensor(np.ones((2, 3), np.int64))).dtype == dtypes.float32
  assert p.binary_crossentropy_logits(Tensor(np.ones((2, 3), np.int64))).dtype == dtypes.float32
  with pytest.raises(TypeError, match="binary_cross_entropy: target dtype"):
    p.binary_cross_entropy(Tensor(np.ones((2, 3), np.float64)))

# ***** distances *****

@pytest.mark.parametrize("shapes,dim", [(((3, 5), (3, 5)), 1), (((3, 5), (3, 5)), 0), (((3, 1, 4), (5, 1)), -1),
                                        (((2, 3, 4), (2, 3, 4)), -2), (((4,), (4,)), 0), (((), ()), 0)])
def test_cosine_similarity(shapes, dim):
  run(lambda a, b: a.cosine_similarity(b, dim=dim), lambda a, b: F.cosine_similarity(a, b, dim=dim),
      [normal(*shapes[0]), normal(*shapes[1])])

def test_cosine_similarity_tiny_and_zero_vectors():
  # norms below eps are clamped in value only: torch's gradient (through the unclamped norm) is matched
  a, b = _np([[1e-9, 0.0], [1e-9, 3e-9], [0.0, 0.0], [1.0, 2.0]]), _np([[1e-9, 0.0], [2.0, 1.0], [1.0, 1.0], [0, 0]])
  run(lambda x, y: x.cosine_similarity(y), lambda x, y: F.cosine_similarity(x, y), [a, b], rtol=1e-4)
  run(lambda x, y: x.cosine_similarity(y, eps=0.5), lambda x, y: F.cosine_similarity(x, y, eps=0.5), [a, b],
      rtol=1e-4)

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf, 0.0, -1.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, keepdim):
  pairs = [((3, 5), (3, 5)), ((3, 5), (5,)), ((5,), (3, 5)), ((2, 3, 4), (3, 1)), ((4,), (4,))]
  for s1, s2 in pairs if not keepdim else pairs[3:]:
    run(lambda a, b: a.pairwise_distance(b, p=p, keepdim=keepdim),
        lambda a, b: F.pairwise_distance(a, b, p=p, keepdim=keepdim), [normal(*s1), normal(*s2)], grad=p != 0)

def test_pairwise_distance_equal_inputs_and_0d():
  # x1 == x2: the norm of eps; with eps=0 the norm is 0 and its gradient 0 (torch)
  x = normal(3, 4)
  run(lambda a, b: a.pairwise_distance(b), lambda a, b: F.pairwise_distance(a, b), [x, x.copy()])
  run(lambda a, b: a.pairwise_distance(b, eps=0.0), lambda a, b: F.pairwise_distance(a, b, eps=0.0), [x, x.copy()])
  run(lambda a, b: a.pairwise_distance(b), lambda a, b: F.pairwise_distance(a, b), [_np(1.5), _np(-0.5)])

def test_normalize_is_torchs():
  # F.normalize lives in tensor.py (Tensor.normalize); checked here next to the other distances
  for p, dim in [(2.0, 1), (1.0, 0), (3.0, -1)]:
    run(lambda a: a.normalize(p=p, dim=dim), lambda a: F.normalize(a, p=p, dim=dim), [normal(3, 4)])

# ***** margin and embedding losses *****

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("margin", [0.0, 0.5, -0.3])
def test_margin_ranking_loss(reduction, margin):
  run(lambda a, b, c: a.margin_ranking_loss(b, c, margin=margin, reduction=reduction),
      lambda a, b, c: F.margin_ranking_loss(a, b, c, margin=margin, reduction=reduction),
      [normal(4, 5), normal(4, 5), pm1(4, 5)])
  run(lambda a, b, c: a.margin_ranking_loss(b, c, margin=margin, reduction=reduction),
      lambda a, b, c: F.margin_ranking_loss(a, b, c, margin=margin, reduction=reduction),
      [normal(4, 1), normal(1, 5), pm1(4, 5)])

def test_margin_ranking_kink():
  # -y (x1 - x2) + margin == 0 exactly: torch's clamp_min passes the gradient there
  run(lambda a, b, c: a.margin_ranking_loss(b, c, reduction="sum"),
      lambda a, b, c: F.margin_ranking_loss(a, b, c, reduction="sum"),
      [_np([1.0, 2.0, 0.5]), _np([1.0, 1.0, 0.5]), _np([1.0, -1.0, -1.0])])

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("margin", [0.0, 0.4, -0.2])
def test_cosine_embedding_loss(reduction, margin):
  y = pm1(6)
  y[0] = 0.0   # neither 1 nor -1: contributes 0, as torch
  run(lambda a, b, c: a.cosine_embedding_loss(b, c, margin=margin, reduction=reduction),
      lambda a, b, c: F.cosine_embedding_loss(a, b, c, margin=margin, reduction=reduction),
      [normal(6, 4), normal(6, 4), y], nograd=(2,))
  for yy in (1.0, -1.0) if margin == 0.4 else ():
    run(lambda a, b, c: a.cosine_embedding_loss(b, c, margin=margin, reduction=reduction),
        lambda a, b, c: F.cosine_embedding_loss(a, b, c, margin=margin, reduction=reduction),
        [normal(4), normal(4), _np(yy)], nograd=(2,))
  run(lambda a, b, c: a.cosine_embedding_loss(b, c, margin=margin, reduction=reduction),
      lambda a, b, c: F.cosine_embedding_loss(a, b, c, margin=margin, reduction=reduction),
      [normal(6, 4), normal(1, 4), pm1(1)], nograd=(2,))

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("kw", [{}, {"margin": 0.5, "p": 1.0}, {"swap": True}, {"p": 3.0, "eps": 1e-3, "swap": True}])
def test_triplet_margin_loss(reduction, kw):
  for s in [(5, 4), (4,), (2, 3, 4)] if not kw else [(5, 4)]:
    run(lambda a, b, c: a.triplet_margin_loss(b, c, reduction=reduction, **kw),
        lambda a, b, c: F.triplet_margin_loss(a, b, c, reduction=reduction, **kw), [normal(*s), normal(*s), normal(*s)])
  run(lambda a, b, c: a.triplet_margin_loss(b, c, reduction=reduction, **kw),
      lambda a, b, c: F.triplet_margin_loss(a, b, c, reduction=reduction, **kw), [normal(5, 4), normal(1, 4),
                                                                                   normal(5, 1)])

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("kw", [{}, {"log_input": False}, {"full": True}, {"log_input": False, "full": True,
                                                                          "eps": 1e-3}])
def test_poisson_nll_loss(reduction, kw):
  x = unif(4, 5, lo=0.1, hi=3) if kw.get("log_input", True) is False else normal(4, 5)
  t = rng.integers(0, 6, (4, 5)).astype(np.float32)
  t[0, 0], t[0, 1] = 1.0, 0.5
  # torch's target gradient is nan at target 0 with full=True (the masked Stirling term's log 0); teeny's is too
  run(lambda a, b: a.poisson_nll_loss(b, reduction=reduction, **kw),
      lambda a, b: F.poisson_nll_loss(a, b, reduction=reduction, **kw), [x, t])

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(reduction, full):
  x, y = normal(4, 3), normal(4, 3)
  for var in (unif(4, 3, lo=0.1, hi=2), unif(4, lo=0.1, hi=2), unif(4, 1, lo=0.1, hi=2), unif(1, 3, lo=0.1, hi=2),
              _np([[1e-9, 0.5, 0.0]] * 4)):   # the last clamped at eps in value; its gradient passes (torch)
    run(lambda a, b, v: a.gaussian_nll_loss(b, v, full=full, reduction=reduction),
        lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=full, reduction=reduction), [x, y, var], rtol=1e-4)
  run(lambda a, b: a.gaussian_nll_loss(b, 0.7, full=full, reduction=reduction),
      lambda a, b: F.gaussian_nll_loss(a, b, 0.7, full=full, reduction=reduction), [x, y])
  run(lambda a, b, v: a.gaussian_nll_loss(b, v, eps=0.1, reduction=reduction),
      lambda a, b, v: F.gaussian_nll_loss(a, b, v, eps=0.1, reduction=reduction), [x, normal(3), unif(4, 3)])

@pytest.mark.parametrize("reduction", REDS)
def test_multilabel_soft_margin_weight(reduction):
  for s, ws in [((4, 5), (5,)), ((4, 5), (4, 5)), ((5,), (5,)), ((2, 3, 4), (4,))]:
    run(lambda a, b, w: a.multilabel_soft_margin_loss(b, weight=w, reduction=reduction),
        lambda a, b, w: F.multilabel_soft_margin_loss(a, b, weight=w, reduction=reduction),
        [normal(*s), (rng.random(s) < 0.5).astype(np.float32), unif(*ws, lo=0.5, hi=2)])

# ***** kinks of the piecewise losses: torch's gradients exactly there *****

def test_kinks():
  x, y = _np([0.0, 1.0, -1.0, 0.5, 2.0, 1.0]), _np([0.0, 0.0, 0.0, 0.0, 1.0, 1.0])
  for name, kw in [("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                   ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 0.5}),
                   ("mse_loss", {})]:
    run(lambda a, b: _T(name)(a, b, reduction="sum", **kw), lambda a, b: _P(name)(a, b, reduction="sum", **kw),
        [x, y])
  # hinge: margin - x == 0 at x = 1, target -1
  run(lambda a, b: a.hinge_embedding_loss(b, reduction="none"), lambda a, b: F.hinge_embedding_loss(a, b,
      reduction="none"), [_np([1.0, 1.0, 0.5, 2.0]), _np([-1.0, 1.0, 0.0, -1.0])])
  # triplet: margin + d(a, p) - d(a, n) == 0
  run(lambda a, b, c: a.triplet_margin_loss(b, c, eps=0.0), lambda a, b, c: F.triplet_margin_loss(a, b, c, eps=0.0),
      [_np([[0.0, 0.0]]), _np([[1.0, 0.0]]), _np([[2.0, 0.0]])])

# ***** shapes: broadcasting where torch broadcasts, size 1, empty, non-contiguous *****

@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_broadcast_warns_like_torch(name):
  for s1, s2 in [((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4))]:
    with pytest.warns(UserWarning, match="different to the input size"):
      _T(name)(Tensor(normal(*s1)), Tensor(normal(*s2)))
    run(lambda a, b: _T(name)(a, b, reduction="none"), lambda a, b: _P(name)(a, b, reduction="none"),
        [normal(*s1), normal(*s2)])
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    _T(name)(Tensor(normal(2, 3)), Tensor(normal(2, 3)))   # same shapes: no warning

@pytest.mark.parametrize("name", ["kl_div", "poisson_nll_loss", "hinge_embedding_loss", "multilabel_soft_margin_loss",
                                  "soft_margin_loss"])
def test_other_pointwise_broadcast(name):
  make, _ = CASES[name]
  pairs = [((3, 4), (4,)), ((3, 1), (3, 4))] if name == "soft_margin_loss" else [((3, 4), (4,)), ((4,), (3, 4))]
  for s1, s2 in pairs:
    a, b = make(s1)[0], make(s2)[1]
    if name == "soft_margin_loss" and s1 == (3, 1):  # torch: the target may not be bigger than the input
      with pytest.raises(RuntimeError, match="soft_margin_loss: target of shape"):
        Tensor(a).soft_margin_loss(Tensor(b))
      continue
    for red in REDS:
      run(lambda x, y: _T(name)(x, y, reduction=red), lambda x, y: _P(name)(x, y, reduction=red), [a, b])

@pytest.mark.parametrize("name", list(CASES))
def test_empty_size1_noncontiguous(name):
  make, kws = CASES[name]
  for red in REDS:
    run(lambda *a: _T(name)(*a, reduction=red), lambda *a: _P(name)(*a, reduction=red), make((0, 3)))
    run(lambda *a: _T(name)(*a, reduction=red), lambda *a: _P(name)(*a, reduction=red), make((1, 1)))
  tr = {0: lambda t: t.transpose(0, 1), 1: lambda t: t.transpose(0, 1)}
  run(lambda *a: _T(name)(*a, **kws[-1]), lambda *a: _P(name)(*a, **kws[-1]), make((5, 3)), views=tr)
  sl = {0: lambda t: t[1:, ::2], 1: lambda t: t[:-1, 1::2]}
  run(lambda *a: _T(name)(*a, reduction="sum"), lambda *a: _P(name)(*a, reduction="sum"), make((4, 6)), views=sl)

def test_distances_empty_and_noncontiguous():
  run(lambda a, b: a.cosine_similarity(b), lambda a, b: F.cosine_similarity(a, b), [normal(0, 3), normal(0, 3)])
  run(lambda a, b: a.pairwise_distance(b), lambda a, b: F.pairwise_distance(a, b), [normal(0, 3), normal(0, 3)])
  tr = {0: lambda t: t.transpose(0, 1), 1: lambda t: t.transpose(0, 1), 2: lambda t: t.transpose(0, 1)}
  run(lambda a, b, c: a.triplet_margin_loss(b, c, swap=True), lambda a, b, c: F.triplet_margin_loss(a, b, c, swap=True),
      [normal(4, 3), normal(4, 3), normal(4, 3)], views=tr)
  run(lambda a, b, c: a.cosine_embedding_loss(b, c), lambda a, b, c: F.cosine_embedding_loss(a, b, c),
      [normal(4, 3), normal(4, 3), pm1(6)], views={0: tr[0], 1: tr[1], 2: lambda t: t[::2]}, nograd=(2,))
  run(lambda a, b: a.cosine_similarity(b, dim=0), lambda a, b: F.cosine_similarity(a, b, dim=0),
      [normal(4, 3), normal(4, 3)], views={0: lambda t: t.transpose(0, 1), 1: lambda t: t.transpose(0, 1)})

# ***** dtypes: torch's result dtype for every pair of dtypes, or an error where torch raises *****

DT = {"f16": (np.float16, torch.float16), "f32": (np.float32, torch.float32), "f64": (np.float64, torch.float64),
      "i64": (np.int64, torch.int64), "b": (np.bool_, torch.bool)}
TWO = {   # name -> call(a, b) for both frameworks (a = input, b = the varied second operand)
  "mse_loss": lambda a, b, m: m.mse_loss(a, b), "l1_loss": lambda a, b, m: m.l1_loss(a, b),
  "smooth_l1_loss": lambda a, b, m: m.smooth_l1_loss(a, b), "huber_loss": lambda a, b, m: m.huber_loss(a, b),
  "soft_margin_loss": lambda a, b, m: m.soft_margin_loss(a, b), "kl_div": lambda a, b, m: m.kl_div(a, b),
  "hinge_embedding_loss": lambda a, b, m: m.hinge_embedding_loss(a, b, reduction="mean"),
  "binary_cross_entropy": lambda a, b, m: m.binary_cross_entropy(a, b),
  "binary_cross_entropy_with_logits": lambda a, b, m: m.binary_cross_entropy_with_logits(a, b),
  "poisson_nll_loss": lambda a, b, m: m.poisson_nll_loss(a, b),
  "poisson_nll_loss(full)": lambda a, b, m: m.poisson_nll_loss(a, b, log_input=False, full=True),
  "multilabel_soft_margin_loss": lambda a, b, m: m.multilabel_soft_margin_loss(a, b),
  "cosine_similarity": lambda a, b, m: m.cosine_similarity(a, b),
  "pairwise_distance": lambda a, b, m: m.pairwise_distance(a, b),
  "margin_ranking_loss": lambda a, b, m: m.margin_ranking_loss(a, b, b),
  "cosine_embedding_loss": lambda a, b, m: m.cosine_embedding_loss(a, b, b[:, 0]),
  "triplet_margin_loss": lambda a, b, m: m.triplet_margin_loss(a, b, b),
  "gaussian_nll_loss": lambda a, b, m: m.gaussian_nll_loss(a, b, a.abs() if a.dtype != torch.bool and
                                                           str(a.dtype) != "dtypes.bool" else a),
  "gaussian_nll_loss(var)": lambda a, b, m: m.gaussian_nll_loss(a, a, b),
}
# (hinge_embedding_loss refuses an integer input for every reduction; torch gives an integer result for 'none' and
# 'sum' and raises for 'mean', which this matrix uses)

class _M:
  """Calls the Tensor method of a name with the F signature (self first)."""
  def __getattr__(self, name): return lambda a, *rest, **kw: getattr(a, name)(*rest, **kw)

@pytest.mark.parametrize("name", list(TWO))
def test_dtype_rules_match_torch(name):
  fn = TWO[name]
  for ka, (na, ta) in DT.items():
    for kb, (nb, tb) in DT.items():
      a, b = (rng.random((3, 4)) * 0.8 + 0.1), (rng.random((3, 4)) * 0.8 + 0.1)
      if ka == "i64" or ka == "b": a = (a > 0.5)
      if kb == "i64" or kb == "b": b = (b > 0.5)
      try:
        with warnings.catch_warnings():
          warnings.simplefilter("ignore")
          want = fn(torch.tensor(a.astype(na)).to(ta), torch.tensor(b.astype(nb)).to(tb), F).dtype
      except Exception:  # torch refuses: teeny must too, with a Python exception of one of torch's kinds
        with pytest.raises((TypeError, RuntimeError, ValueError, IndexError)):
          fn(Tensor(a.astype(na)), Tensor(b.astype(nb)), _M())
        continue
      got = fn(Tensor(a.astype(na)), Tensor(b.astype(nb)), _M()).dtype
      assert str(got).split(".")[-1] == str(want).split(".")[-1], f"{name} {ka}/{kb}: {got} vs torch {want}"

def test_hinge_integer_input_refused():
  with pytest.raises(TypeError, match="hinge_embedding_loss: input must be a floating-point tensor"):
    Tensor([1, 2]).hinge_embedding_loss(Tensor([1, -1]), reduction="sum")

@pytest.mark.parametrize("name", list(CASES))
def test_float16_values(name):
  make, kws = CASES[name]
  for red in ("none", "mean"):
    xs = [x.astype(np.float16) for x in make((3, 4))]
    # against torch in float32, rounded to float16 (teeny's float16 math may round differently from torch's)
    run(lambda *a: _T(name)(*a, reduction=red, **kws[-1]),
        lambda *a: _P(name)(*[t.float() for t in a], reduction=red, **kws[-1]).half(), xs, grad=False,
        atol=2e-2, rtol=2e-2)
    assert _T(name)(*[Tensor(x) for x in xs], reduction=red, **kws[-1]).dtype == dtypes.float16

def test_float16_distances():
  h = lambda *s: normal(*s).astype(np.float16)
  for tf, pf, xs in [(lambda a, b: a.cosine_similarity(b), F.cosine_similarity, [h(3, 4), h(3, 4)]),
                     (lambda a, b: a.pairwise_distance(b), F.pairwise_distance, [h(3, 4), h(3, 4)]),
                     (lambda a, b, c: a.triplet_margin_loss(b, c, swap=True),
                      lambda a, b, c: F.triplet_margin_loss(a, b, c, swap=True), [h(3, 4), h(3, 4), h(3, 4)]),
                     (lambda a, b, c: a.margin_ranking_loss(b, c), F.margin_ranking_loss,
                      [h(3, 4), h(3, 4), pm1(3, 4).astype(np.float16)]),
                     (lambda a, b, c: a.cosine_embedding_loss(b, c, margin=0.1),
                      lambda a, b, c: F.cosine_embedding_loss(a, b, c, margin=0.1), [h(3, 4), h(3, 4), pm1(3)]),
                     (lambda a, b, c: a.gaussian_nll_loss(b, c), F.gaussian_nll_loss,
                      [h(3, 4), h(3, 4), unif(3, 4, lo=0.2, hi=2).astype(np.float16)])]:
    out = run(tf, lambda *a: pf(*[t.float() if t.dtype == torch.float16 else t for t in a]).half(), xs, grad=False,
              atol=2e-2, rtol=2e-2)
    assert out.dtype == dtypes.float16

def test_float64_mixed():
  # (torch 2.11's mse backward refuses the mixed pair: its reference takes both in float64)
  run(lambda a, b: a.mse_loss(b), lambda a, b: F.mse_loss(a, b.double()),
      [normal(3, 4).astype(np.float64), normal(3, 4)])
  # (torch's huber backward refuses a float64 target for a float32 input: forward only)
  run(lambda a, b: a.huber_loss(b), lambda a, b: F.huber_loss(a, b), [normal(3, 4), normal(3, 4).astype(np.float64)],
      grad=False)
  run(lambda a, b: a.binary_cross_entropy_with_logits(b), lambda a, b: F.binary_cross_entropy_with_logits(a, b),
      [normal(3, 4).astype(np.float64), unif(3, 4)])

# ***** errors: torch's kind, a message naming the function, the problem and the fix *****

def test_errors():
  x, y = Tensor(normal(3, 4)), Tensor(normal(3, 4))
  for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
               "hinge_embedding_loss", "multilabel_soft_margin_loss", "soft_margin_loss"]:
    with pytest.raises(RuntimeError, match=f"{name}: shapes .* cannot be broadcast"):
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _T(name)(x, Tensor(normal(3)))
    with pytest.raises(ValueError, match="reduction"): _T(name)(x, y, reduction="avg")
  with pytest.raises(TypeError, match="mse_loss: needs a floating-point input or target"):
    Tensor([1, 2]).mse_loss(Tensor([1, 3]))
  with pytest.raises(TypeError, match="kl_div: integral inputs are not supported"): x.kl_div(Tensor.ones(3, 4,
                                                                                                        dtype="int32"))
  with pytest.raises(ValueError, match="kl_div: reduction must be one of"): x.kl_div(y, reduction="avg")
  with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
    x.smooth_l1_loss(y, beta=-1.0)
  with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
    x.huber_loss(y, delta=0.0)
  p = x.sigmoid()
  with pytest.raises(ValueError, match=r"binary_cross_entropy: using a target size \(4,\)"):
    p.binary_cross_entropy(Tensor(unif(4)))
  with pytest.raises(TypeError, match="binary_cross_entropy: target dtype"): p.binary_cross_entropy(Tensor.ones(3, 4,
                                                                                                   dtype="float16"))
  with pytest.raises(TypeError, match="binary_cross_entropy: input must be a floating-point"):
    Tensor.ones(3, 4, dtype="int32").binary_cross_entropy(Tensor.ones(3, 4, dtype="int32"))
  with pytest.raises(RuntimeError, match="binary_cross_entropy: weight of shape"):
    p.binary_cross_entropy(p, weight=Tensor.ones(2, 3, 4))
  with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: target size \(3, 1\) must be the same"):
    x.binary_cross_entropy_with_logits(Tensor(unif(3, 1)))
  with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits: pos_weight of shape"):
    x.binary_cross_entropy_with_logits(y, pos_weight=Tensor.ones(2, 1, 4))
  with pytest.raises(TypeError, match="binary_cross_entropy_with_logits: target must be a floating-point"):
    x.binary_cross_entropy_with_logits(Tensor.ones(3, 4, dtype="int32"))
  with pytest.raises(TypeError, match="cosine_similarity: expected a floating-point common dtype"):
    Tensor([[1, 2]]).cosine_similarity(Tensor([[1, 2]]))
  with pytest.raises(IndexError, match="cosine_similarity: dim 2 out of range"): x.cosine_similarity(y, dim=2)
  with pytest.raises(RuntimeError, match="cosine_similarity: shapes"): x.cosine_similarity(Tensor(normal(3, 5)))
  with pytest.raises(RuntimeError, match="pairwise_distance: shapes"): x.pairwise_distance(Tensor(normal(3, 5)))
  with pytest.raises(RuntimeError, match="margin_ranking_loss: all input tensors must have the same number of dim"):
    x.margin_ranking_loss(Tensor(normal(4)), y)
  with pytest.raises(RuntimeError, match="cosine_embedding_loss: 0D or 1D target tensor expected"):
    x.cosine_embedding_loss(y, y)
  with pytest.raises(RuntimeError, match="cosine_embedding_loss: 1D target tensor expects 2D input tensors"):
    x.cosine_embedding_loss(Tensor(normal(4)), Tensor(pm1(3)))
  with pytest.raises(RuntimeError, match="cosine_embedding_loss: 0D target tensor expects 1D input tensors"):
    x.cosine_embedding_loss(y, Tensor(1.0))
  with pytest.raises(RuntimeError, match="cosine_embedding_loss: shapes"): x.cosine_embedding_loss(y, Tensor(pm1(2)))
  with pytest.raises(ValueError, match="triplet_margin_loss: margin must be greater than 0"):
    x.triplet_margin_loss(y, y, margin=0.0)
  with pytest.raises(RuntimeError, match="triplet_margin_loss: the anchor, positive, and negative tensors"):
    x.triplet_margin_loss(y, Tensor(normal(4)))
  with pytest.raises(ValueError, match="gaussian_nll_loss: var is of incorrect size"):
    x.gaussian_nll_loss(y, Tensor(unif(4)))
  with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative"): x.gaussian_nll_loss(y, -1.0)
  with pytest.raises(IndexError, match="multilabel_soft_margin_loss: the input needs a class dim"):
    Tensor(1.0).multilabel_soft_margin_loss(Tensor(1.0))

def test_nll_loss_probability_target_message():
  # notes/fuzz_2026-12-03b/r_nll_prob_target_msg.py: a float target said "shape (3, 4) does not match (3, 4)"
  x = Tensor(normal(3, 4)).log_softmax(1)
  with pytest.raises(TypeError, match=r"nll_loss expects class indices \(an integer tensor of shape \(3,\)\), got a "
                                      r".*float32 target of shape \(3, 4\); for class probabilities use cross_entropy"):
    x.nll_loss(Tensor(unif(3, 4)))
  with pytest.raises(TypeError, match="nll_loss expects class indices"): x.nll_loss(Tensor(unif(3)))
  with pytest.raises(RuntimeError):
    F.nll_loss(torch.tensor(normal(3, 4)), torch.tensor(unif(3, 4)))   # torch refuses it too

# ***** property tests: random shapes, broadcasting and arguments *****

@st.composite
def bshapes(draw, min_dims=1):
  """Two shapes that broadcast together (some dims 1 on one side), and the broadcast one."""
  nd = draw(st.integers(min_dims, 3))
  full = tuple(draw(st.integers(1, 4)) for _ in range(nd))
  a = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else s for s in full)
  b = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else s for s in full)
  b = b[draw(st.integers(0, nd - min_dims)):]
  return a, b

@FAST
@given(shapes=bshapes(), name=st.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
                                                "poisson_nll_loss", "hinge_embedding_loss"]),
       red=st.sampled_from(REDS), k=st.floats(0.1, 3.0), seed=st.integers(0, 2**16))
def test_prop_pointwise(shapes, name, red, k, seed):
  r = np.random.default_rng(seed)
  a, b = r.standard_normal(shapes[0]).astype(np.float32), r.standard_normal(shapes[1]).astype(np.float32)
  kw = {"smooth_l1_loss": {"beta": k}, "huber_loss": {"delta": k}, "hinge_embedding_loss": {"margin": k}}.get(name, {})
  if name == "kl_div": b = np.abs(b)
  if name == "poisson_nll_loss": b = np.floor(np.abs(b) * 3)
  if name == "hinge_embedding_loss": b = np.sign(b).astype(np.float32)
  run(lambda x, y: _T(name)(x, y, reduction=red, **kw), lambda x, y: _P(name)(x, y, reduction=red, **kw), [a, b],
      atol=1e-5, rtol=1e-4)

@FAST
@given(shapes=bshapes(min_dims=2), p=st.sampled_from([1.0, 2.0, 3.0, 1.5]), dim=st.integers(-2, 1),
       swap=st.booleans(), margin=st.floats(0.05, 2.0), seed=st.integers(0, 2**16))
def test_prop_distances(shapes, p, dim, swap, margin, seed):
  r = np.random.default_rng(seed)
  a, b = r.standard_normal(shapes[0]).astype(np.float32), r.standard_normal(shapes[1]).astype(np.float32)
  run(lambda x, y: x.cosine_similarity(y, dim=dim), lambda x, y: F.cosine_similarity(x, y, dim=dim), [a, b],
      atol=1e-5, rtol=1e-4)
  run(lambda x, y: x.pairwise_distance(y, p=p), lambda x, y: F.pairwise_distance(x, y, p=p), [a, b], atol=1e-5,
      rtol=1e-4)
  if len(shapes[0]) == len(shapes[1]):
    c = r.standard_normal(shapes[1]).astype(np.float32)
    run(lambda x, y, z: x.triplet_margin_loss(y, z, margin=margin, p=p, swap=swap),
        lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=margin, p=p, swap=swap), [a, b, c], atol=1e-5, rtol=1e-4)
    run(lambda x, y, z: x.margin_ranking_loss(y, z, margin=margin - 1),
        lambda x, y, z: F.margin_ranking_loss(x, y, z, margin=margin - 1), [a, b, np.sign(c)], atol=1e-5, rtol=1e-4)

@FAST
@given(n=st.integers(1, 5), c=st.integers(1, 5), red=st.sampled_from(REDS), use_w=st.booleans(), use_pw=st.booleans(),
       seed=st.integers(0, 2**16))
def test_prop_bce_family(n, c, red, use_w, use_pw, seed):
  r = np.random.default_rng(seed)
  x = (r.standard_normal((n, c)) * 3).astype(np.float32)
  y = r.random((n, c)).astype(np.float32)
  w = r.uniform(0.5, 2, (c,)).astype(np.float32)
  pw = r.uniform(0.5, 3, (n, c)).astype(np.float32)
  extra = ([w] if use_w else []) + ([pw] if use_pw else [])
  def kw(rest):
    it = iter(rest)
    return {**({"weight": next(it)} if use_w else {}), **({"pos_weight": next(it)} if use_pw else {})}
  run(lambda a, b, *rest: a.binary_cross_entropy_with_logits(b, reduction=red, **kw(rest)),
      lambda a, b, *rest: F.binary_cross_entropy_with_logits(a, b, reduction=red, **kw(rest)), [x, y, *extra],
      rtol=1e-4)
  p = (1 / (1 + np.exp(-x))).astype(np.float32)
  bw = [w] if use_w else []
  run(lambda a, b, *rest: a.binary_cross_entropy(b, reduction=red, weight=rest[0] if rest else None),
      lambda a, b, *rest: F.binary_cross_entropy(a, b, reduction=red, weight=rest[0] if rest else None), [p, y, *bw],
      nograd=(2,), rtol=1e-4, gatol=1e-4)
  run(lambda a, b: a.multilabel_soft_margin_loss(b, reduction=red),
      lambda a, b: F.multilabel_soft_margin_loss(a, b, reduction=red), [x, (y > 0.5).astype(np.float32)], rtol=1e-4)
  run(lambda a, b: a.soft_margin_loss(b, reduction=red), lambda a, b: F.soft_margin_loss(a, b, reduction=red),
      [x, np.sign(y - 0.5).astype(np.float32)], rtol=1e-4)

@FAST
@given(n=st.integers(1, 5), d=st.integers(1, 5), red=st.sampled_from(REDS), margin=st.floats(-0.5, 0.9),
       full=st.booleans(), var_kind=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_prop_embedding_and_gaussian(n, d, red, margin, full, var_kind, seed):
  r = np.random.default_rng(seed)
  a, b = r.standard_normal((n, d)).astype(np.float32), r.standard_normal((n, d)).astype(np.float32)
  y = np.where(r.random(n) < 0.5, -1.0, 1.0).astype(np.float32)
  run(lambda x1, x2, t: x1.cosine_embedding_loss(x2, t, margin=margin, reduction=red),
      lambda x1, x2, t: F.cosine_embedding_loss(x1, x2, t, margin=margin, reduction=red), [a, b, y], nograd=(2,),
      atol=1e-5, rtol=1e-4)
  vshape = [(n, d), (n,), (n, 1), (1, d)][var_kind]
  v = r.uniform(0.01, 2, vshape).astype(np.float32)
  run(lambda x, t, s: x.gaussian_nll_loss(t, s, full=full, reduction=red),
      lambda x, t, s: F.gaussian_nll_loss(x, t, s, full=full, reduction=red), [a, b, v], atol=1e-5, rtol=1e-4)

def test_float16_distances_do_not_overflow():
  """The p-norms under cosine_similarity, pairwise_distance, triplet_margin_loss and normalize sum in float32 for
  16-bit inputs (a float16 sum of squares overflows near norm 256), as torch's; the result is float16."""
  rng = np.random.default_rng(0)
  a, b, c = [(rng.standard_normal((2, 64)) * 30).astype(np.float16) for _ in range(3)]
  ta, tb, tc = (torch.tensor(x) for x in (a, b, c))
  for got, want in [(Tensor(a).cosine_similarity(Tensor(b)), F.cosine_similarity(ta.float(), tb.float()).half()),
                    (Tensor(a).pairwise_distance(Tensor(b)), F.pairwise_distance(ta.float(), tb.float()).half()),
                    (Tensor(a).triplet_margin_loss(Tensor(b), Tensor(c), reduction="none"),
                     F.triplet_margin_loss(ta.float(), tb.float(), tc.float(), reduction="none").half()),
                    (Tensor(a).normalize(), F.normalize(ta.float()).half())]:
    assert got.dtype == dtypes.float16
    if not is_null(): np.testing.assert_allclose(got.numpy().astype(np.float32), want.numpy().astype(np.float32),
                                                 rtol=2e-3, atol=2e-3)
