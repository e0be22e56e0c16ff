"""The loss modules built on Tensor's functional losses (SoftMarginLoss ... TripletMarginWithDistanceLoss), RReLU and
rrelu, and torch_load's requires_grad of Parameters, against torch: values, dtype, shape, gradients, state_dict keys
and errors."""
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_state_dict, torch_load
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

HSET = settings(max_examples=12, deadline=None)   # (each example compiles new kernels: CI time)
T2T = {torch.float32: dtypes.float32, torch.float16: dtypes.float16, torch.float64: dtypes.float64,
       torch.int32: dtypes.int32, torch.int64: dtypes.int64}
REDUCTIONS = ("mean", "sum", "none")

def _rng(seed): return np.random.default_rng(seed)
def _u(shape, seed, lo=-2.0, hi=2.0, dt=np.float32): return _rng(seed).uniform(lo, hi, size=shape).astype(dt)
def _sign(shape, seed, dt=np.float32): return np.where(_rng(seed).random(shape) < 0.5, -1, 1).astype(dt)

def _np(t) -> np.ndarray:
  return t.detach().double().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.numpy(), np.float64)

def compare(tm, pm, arrays, grads=None, atol=1e-5, rtol=1e-4, views=None, up_seed=7):
  """Same inputs through the teeny and the torch module: shape, dtype, values, and the gradients of the inputs in
  `grads` (default: every float input) for a random upstream gradient. views(x) maps each input to a view (both)."""
  if grads is None: grads = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
  tl = [Tensor(a, requires_grad=i in grads) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
  pl = [torch.tensor(a, requires_grad=i in grads) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
  tx, px = (tl, pl) if views is None else ([views(t) for t in tl], [views(p) for p in pl])
  out, ref = tm(*tx), pm(*px)
  assert tuple(out.shape) == tuple(ref.shape), f"shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  assert out.dtype == T2T[ref.dtype], f"dtype {out.dtype} vs torch {ref.dtype}"
  if is_null():
    out.realize()
    return out
  np.testing.assert_allclose(_np(out), _np(ref), atol=atol, rtol=rtol, equal_nan=True, err_msg="forward")
  if grads and ref.requires_grad:
    up = _rng(up_seed).standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * Tensor(up).cast(out.dtype)).sum().backward()
    (ref * torch.tensor(up).to(ref.dtype)).sum().backward()
    for i in grads:
      # a gradient torch leaves None (the target only masks) and teeny's zeros or None are the same thing
      tg = np.zeros(arrays[i].shape) if tl[i].grad is None else _np(tl[i].grad)
      pg = np.zeros(arrays[i].shape) if pl[i].grad is None else _np(pl[i].grad)
      np.testing.assert_allclose(tg, pg, atol=atol * 10, rtol=rtol * 10, equal_nan=True, err_msg=f"grad of input {i}")
  return out

# ***** the loss modules, one case per configuration, each under every reduction *****

def _cos_dist_teeny(a, b): return 1 - a.cosine_similarity(b, dim=-1)
def _cos_dist_torch(a, b): return 1 - torch.nn.functional.cosine_similarity(a, b, dim=-1)

# id -> (module name, constructor kwargs, torch kwargs (None: the same), inputs(seed), inputs needing gradients)
CASES = {
  "soft_margin": ("SoftMarginLoss", {}, None, lambda s: [_u((3, 4), s), _sign((3, 4), s + 1)], [0]),
  "soft_margin_bcast_target": ("SoftMarginLoss", {}, None, lambda s: [_u((3, 4), s), _sign((4,), s + 1)], [0]),
  "hinge": ("HingeEmbeddingLoss", {}, None, lambda s: [_u((3, 5), s), _sign((3, 5), s + 1)], [0]),
  "hinge_margin": ("HingeEmbeddingLoss", {"margin": 0.7}, None,
                   lambda s: [_u((2, 3, 4), s), _sign((2, 3, 4), s + 1)], [0]),
  "poisson": ("PoissonNLLLoss", {}, None, lambda s: [_u((4, 3), s), _u((4, 3), s + 1, 0, 5).round()], [0, 1]),
  "poisson_full": ("PoissonNLLLoss", {"full": True}, None,
                   lambda s: [_u((4, 3), s), _u((4, 3), s + 1, 0, 5).round()], [0]),
  "poisson_linear": ("PoissonNLLLoss", {"log_input": False, "eps": 1e-4}, None,
                     lambda s: [_u((4, 3), s, 0.1, 3), _u((4, 3), s + 1, 0, 5)], [0, 1]),
  "poisson_linear_full": ("PoissonNLLLoss", {"log_input": False, "full": True}, None,
                          lambda s: [_u((6,), s, 0.1, 3), _u((6,), s + 1, 0, 5).round()], [0]),
  "gaussian": ("GaussianNLLLoss", {}, None, lambda s: [_u((3, 4), s), _u((3, 4), s + 1), _u((3, 4), s + 2, 0.1, 2)],
               [0, 1, 2]),
  "gaussian_full_eps": ("GaussianNLLLoss", {"full": True, "eps": 0.5}, None,
                        lambda s: [_u((3, 4), s), _u((3, 4), s + 1), _u((3, 4), s + 2, 0.01, 1)], [0, 1, 2]),
  "gaussian_shared_var": ("GaussianNLLLoss", {}, None,
                          lambda s: [_u((3, 4), s), _u((3, 4), s + 1), _u((3, 1), s + 2, 0.1, 2)], [0, 2]),
  "gaussian_var_no_last_dim": ("GaussianNLLLoss", {}, None,
                               lambda s: [_u((3, 4), s), _u((3, 4), s + 1), _u((3,), s + 2, 0.1, 2)], [0, 2]),
  "gaussian_float_var": ("GaussianNLLLoss", {}, None, lambda s: [_u((5,), s), _u((5,), s + 1), 0.7], [0, 1]),
  "multilabel": ("MultiLabelSoftMarginLoss", {}, None,
                 lambda s: [_u((3, 5), s), (_u((3, 5), s + 1) > 0).astype(np.float32)], [0, 1]),
  "multilabel_weight": ("MultiLabelSoftMarginLoss", {"weight": Tensor(_u((5,), 9, 0.2, 2))},
                        {"weight": torch.tensor(_u((5,), 9, 0.2, 2))},
                        lambda s: [_u((3, 5), s), (_u((3, 5), s + 1) > 0).astype(np.float32)], [0]),
  "multilabel_1d": ("MultiLabelSoftMarginLoss", {}, None,
                    lambda s: [_u((6,), s), (_u((6,), s + 1) > 0).astype(np.float32)], [0]),
  "margin_ranking": ("MarginRankingLoss", {}, None, lambda s: [_u((7,), s), _u((7,), s + 1), _sign((7,), s + 2)],
                     [0, 1, 2]),
  "margin_ranking_margin": ("MarginRankingLoss", {"margin": 0.4}, None,
                            lambda s: [_u((3, 4), s), _u((3, 4), s + 1), _sign((3, 4), s + 2)], [0, 1]),
  "cosine_embedding": ("CosineEmbeddingLoss", {}, None,
                       lambda s: [_u((4, 6), s), _u((4, 6), s + 1), _sign((4,), s + 2)], [0, 1]),
  "cosine_embedding_margin": ("CosineEmbeddingLoss", {"margin": 0.2}, None,
                              lambda s: [_u((5, 3), s), _u((5, 3), s + 1), _sign((5,), s + 2)], [0, 1]),
  "cosine_embedding_1d": ("CosineEmbeddingLoss", {"margin": -0.5}, None,
                          lambda s: [_u((6,), s), _u((6,), s + 1), np.array(-1, np.float32)], [0, 1]),
  "triplet": ("TripletMarginLoss", {}, None, lambda s: [_u((4, 6), s), _u((4, 6), s + 1), _u((4, 6), s + 2)],
              [0, 1, 2]),
  "triplet_p1_swap": ("TripletMarginLoss", {"margin": 2.0, "p": 1.0, "eps": 1e-3, "swap": True}, None,
                      lambda s: [_u((4, 6), s), _u((4, 6), s + 1), _u((4, 6), s + 2)], [0, 1, 2]),
  "triplet_p3_3d": ("TripletMarginLoss", {"p": 3.0, "margin": 1.5}, None,
                    lambda s: [_u((2, 3, 5), s), _u((2, 3, 5), s + 1), _u((2, 3, 5), s + 2)], [0, 1, 2]),
  "triplet_dist": ("TripletMarginWithDistanceLoss", {}, None,
                   lambda s: [_u((4, 6), s), _u((4, 6), s + 1), _u((4, 6), s + 2)], [0, 1, 2]),
  "triplet_dist_cos_swap": ("TripletMarginWithDistanceLoss",
                            {"distance_function": _cos_dist_teeny, "swap": True, "margin": 0.5},
                            {"distance_function": _cos_dist_torch, "swap": True, "margin": 0.5},
                            lambda s: [_u((5, 4), s), _u((5, 4), s + 1), _u((5, 4), s + 2)], [0, 1, 2]),
}

def _modules(case, reduction="mean"):
  name, kw, pkw, _, _ = CASES[case]
  return getattr(nn, name)(**kw, reduction=reduction), getattr(torch.nn, name)(**(kw if pkw is None else pkw),
                                                                                 reduction=reduction)

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_loss_module_matches_torch(case, reduction):
  tm, pm = _modules(case, reduction)
  compare(tm, pm, CASES[case][3](3), CASES[case][4])

@pytest.mark.parametrize("case", list(CASES))
def test_loss_module_state_dict_keys_match_torch(case):
  tm, pm = _modules(case)
  assert list(get_state_dict(tm)) == list(pm.state_dict())

def test_multilabel_weight_is_a_state_dict_entry_like_torchs_buffer():
  w = _u((4,), 1, 0.5, 1.5)
  tm, pm = nn.MultiLabelSoftMarginLoss(Tensor(w)), torch.nn.MultiLabelSoftMarginLoss(torch.tensor(w))
  assert list(get_state_dict(tm)) == list(pm.state_dict()) == ["weight"]
  if not is_null(): np.testing.assert_array_equal(get_state_dict(tm)["weight"].numpy(), pm.state_dict()["weight"])
  assert list(get_state_dict(nn.MultiLabelSoftMarginLoss())) == list(torch.nn.MultiLabelSoftMarginLoss().state_dict())

@pytest.mark.parametrize("case", list(CASES))
def test_bad_reduction_raises_valueerror_like_torch(case):
  tm, pm = _modules(case, "avg")
  arrays = CASES[case][3](0)
  with pytest.raises(ValueError, match="avg is not (a )?valid"):
    pm(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])
  with pytest.raises(ValueError, match="reduction must be one of .*'avg'"):
    tm(*[Tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])

def test_constructor_arguments_are_torchs():
  assert nn.HingeEmbeddingLoss(0.5).margin == 0.5 and nn.MarginRankingLoss(0.5).margin == 0.5
  assert nn.CosineEmbeddingLoss(0.5).margin == 0.5
  p = nn.PoissonNLLLoss(False, True)
  assert (p.log_input, p.full, p.eps, p.reduction) == (False, True, 1e-8, "mean")
  t = nn.TripletMarginLoss(2.0, 1.0, 1e-3, True)
  assert (t.margin, t.p, t.eps, t.swap, t.reduction) == (2.0, 1.0, 1e-3, True, "mean")
  with pytest.raises(TypeError): nn.GaussianNLLLoss(True)  # keyword-only, as torch's
  with pytest.raises(TypeError): torch.nn.GaussianNLLLoss(True)
  with pytest.raises(TypeError): nn.TripletMarginWithDistanceLoss(None)
  g = nn.GaussianNLLLoss()
  assert (g.full, g.eps, g.reduction) == (False, 1e-6, "mean")

@pytest.mark.parametrize("name", ["TripletMarginLoss", "TripletMarginWithDistanceLoss"])
@pytest.mark.parametrize("margin", [0.0, -1.0])
def test_triplet_margin_must_be_positive(name, margin):
  with pytest.raises(ValueError, match="margin to be greater than 0"): getattr(torch.nn, name)(margin=margin)
  with pytest.raises(ValueError, match=f"{name}: expected margin to be greater than 0, got {margin}"):
    getattr(nn, name)(margin=margin)

def test_triplet_with_distance_errors():
  with pytest.raises(TypeError, match="distance_function must be callable"):
    nn.TripletMarginWithDistanceLoss(distance_function=3)
  a = Tensor(_u((2, 3), 0))
  with pytest.raises(RuntimeError, match="same number of dimensions.*anchor 2D, positive 1D"):
    nn.TripletMarginWithDistanceLoss()(a, Tensor(_u((3,), 1)), a)

def test_call_errors_name_the_function():
  x = Tensor(_u((3, 4), 0))
  with pytest.raises(RuntimeError, match="margin_ranking_loss: all input tensors must have the same number"):
    nn.MarginRankingLoss()(x, x, Tensor(_sign((4,), 1)))
  with pytest.raises(RuntimeError, match="cosine_embedding_loss: 1D target tensor expects 2D input"):
    nn.CosineEmbeddingLoss()(x.reshape(12), x.reshape(12), Tensor(_sign((3,), 1)))
  with pytest.raises(RuntimeError, match="triplet_margin_loss: the anchor, positive, and negative"):
    nn.TripletMarginLoss()(x, x.reshape(12), x)
  with pytest.raises(ValueError, match="gaussian_nll_loss: var is of incorrect size"):
    nn.GaussianNLLLoss()(x, x, Tensor(_u((2, 2), 1)))
  with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative"): nn.GaussianNLLLoss()(x, x, -1.0)
  with pytest.raises(RuntimeError, match="soft_margin_loss: shapes"):
    nn.SoftMarginLoss()(x, Tensor(_sign((5,), 1)))
  with pytest.raises(IndexError, match="multilabel_soft_margin_loss: the input needs a class dim"):
    nn.MultiLabelSoftMarginLoss()(Tensor(1.0), Tensor(1.0))

# ***** edge cases: views, empty and size-1 dims, float16, integers *****

@pytest.mark.parametrize("case", ["soft_margin", "hinge", "poisson", "gaussian", "multilabel", "margin_ranking_margin",
                                  "triplet_p1_swap", "triplet_dist"])
def test_non_contiguous_inputs(case):
  tm, pm = _modules(case, "none")
  arrays = [np.ascontiguousarray(a.T) for a in CASES[case][3](11)]   # transposed back by the view: the same values
  compare(tm, pm, arrays, CASES[case][4], views=lambda t: t.transpose(0, 1) if t.ndim == 2 else t)
  tm, pm = _modules(case, "sum")
  wide = [np.concatenate([a, a + 1], axis=-1) for a in CASES[case][3](12)]  # sliced to the first half of the last dim
  compare(tm, pm, wide, CASES[case][4], views=lambda t: t[..., :t.shape[-1] // 2])

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,n_in", [("SoftMarginLoss", 2), ("HingeEmbeddingLoss", 2), ("PoissonNLLLoss", 2),
                                       ("MultiLabelSoftMarginLoss", 2), ("MarginRankingLoss", 3),
                                       ("GaussianNLLLoss", 3), ("TripletMarginLoss", 3),
                                       ("TripletMarginWithDistanceLoss", 3)])
def test_empty_inputs(name, n_in, reduction):
  shape = (0, 4)
  arrays = [np.zeros(shape, np.float32) + 0.5 for _ in range(n_in)]
  compare(getattr(nn, name)(reduction=reduction), getattr(torch.nn, name)(reduction=reduction), arrays,
          grads=[0] if name == "SoftMarginLoss" else None)

def test_cosine_embedding_empty_batch():
  arrays = [np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), np.zeros((0,), np.float32)]
  for r in REDUCTIONS: compare(nn.CosineEmbeddingLoss(reduction=r), torch.nn.CosineEmbeddingLoss(reduction=r), arrays)

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_size_one_dims_broadcast(reduction):
  compare(nn.MarginRankingLoss(0.1, reduction), torch.nn.MarginRankingLoss(0.1, reduction=reduction),
          [_u((3, 1), 0), _u((1, 4), 1), _sign((3, 4), 2)])
  compare(nn.TripletMarginLoss(reduction=reduction), torch.nn.TripletMarginLoss(reduction=reduction),
          [_u((1, 5), 0), _u((3, 5), 1), _u((3, 1), 2)])
  compare(nn.GaussianNLLLoss(reduction=reduction), torch.nn.GaussianNLLLoss(reduction=reduction),
          [_u((2, 1, 4), 0), _u((2, 1, 4), 1), _u((2, 1, 1), 2, 0.1, 1)])
  compare(nn.PoissonNLLLoss(reduction=reduction), torch.nn.PoissonNLLLoss(reduction=reduction),
          [_u((1,), 0), _u((1,), 1, 0, 3)])

@pytest.mark.parametrize("case", ["soft_margin", "hinge", "poisson", "gaussian", "multilabel", "margin_ranking",
                                  "cosine_embedding", "triplet", "triplet_dist"])
def test_float16_inputs(case):
  tm, pm = _modules(case, "mean")
  arrays = [a.astype(np.float16) if isinstance(a, np.ndarray) else a for a in CASES[case][3](5)]
  compare(tm, pm, arrays, grads=[], atol=2e-2, rtol=2e-2)

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,args", [
  ("MarginRankingLoss", lambda: [_u((5,), 0, -4, 4, np.int32), _u((5,), 1, -4, 4, np.int32), _sign((5,), 2, np.int32)]),
  ("PoissonNLLLoss", lambda: [_u((5,), 0, -2, 3, np.int32), _u((5,), 1, 0, 5, np.int32)]),
  ("CosineEmbeddingLoss", lambda: [_u((3, 4), 0, -4, 4, np.int32), _u((3, 4), 1, -4, 4, np.int32),
                                   _sign((3,), 2, np.int32)]),
  ("TripletMarginLoss", lambda: [_u((3, 4), 0, -4, 4, np.int32), _u((3, 4), 1, -4, 4, np.int32),
                                 _u((3, 4), 2, -4, 4, np.int32)]),
])
def test_integer_inputs_promote_to_float_like_torch(name, args, reduction):
  compare(getattr(nn, name)(reduction=reduction), getattr(torch.nn, name)(reduction=reduction), args(), grads=[])

@pytest.mark.parametrize("name", ["SoftMarginLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss"])
def test_integer_inputs_refused_like_torch(name):
  x = np.array([[1, -2], [3, 0]], np.int32)
  with pytest.raises((RuntimeError, NotImplementedError)):
    getattr(torch.nn, name)()(torch.tensor(x), torch.tensor(x))
  with pytest.raises(TypeError, match="floating-point"): getattr(nn, name)()(Tensor(x), Tensor(x))

# ***** property-based: random shapes and arguments *****

_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)

@HSET
@given(shape=_shapes, seed=st.integers(0, 2**16), reduction=st.sampled_from(REDUCTIONS))
def test_soft_margin_and_hinge_random_shapes(shape, seed, reduction):
  compare(nn.SoftMarginLoss(reduction), torch.nn.SoftMarginLoss(reduction=reduction),
          [_u(shape, seed, -3, 3), _sign(shape, seed + 1)], grads=[0])
  compare(nn.HingeEmbeddingLoss(0.5, reduction), torch.nn.HingeEmbeddingLoss(0.5, reduction=reduction),
          [_u(shape, seed, -3, 3), _sign(shape, seed + 1)], grads=[0])

@HSET
@given(shape=_shapes, seed=st.integers(0, 2**16), margin=st.floats(-1, 1), reduction=st.sampled_from(REDUCTIONS))
def test_margin_ranking_random_shapes(shape, seed, margin, reduction):
  compare(nn.MarginRankingLoss(margin, reduction), torch.nn.MarginRankingLoss(margin, reduction=reduction),
          [_u(shape, seed), _u(shape, seed + 1), _sign(shape, seed + 2)])

@HSET
@given(n=st.integers(1, 4), d=st.integers(1, 6), seed=st.integers(0, 2**16), p=st.sampled_from([1.0, 2.0, 3.0]),
       swap=st.booleans(), margin=st.floats(0.1, 2.0), reduction=st.sampled_from(REDUCTIONS))
def test_triplet_random_shapes(n, d, seed, p, swap, margin, reduction):
  arrays = [_u((n, d), seed), _u((n, d), seed + 1), _u((n, d), seed + 2)]
  compare(nn.TripletMarginLoss(margin, p, swap=swap, reduction=reduction),
          torch.nn.TripletMarginLoss(margin, p, swap=swap, reduction=reduction), arrays, atol=1e-4)
  compare(nn.TripletMarginWithDistanceLoss(margin=margin, swap=swap, reduction=reduction),
          torch.nn.TripletMarginWithDistanceLoss(margin=margin, swap=swap, reduction=reduction), arrays, atol=1e-4)

@HSET
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple), seed=st.integers(0, 2**16),
       var_kind=st.sampled_from(["full", "one", "nolast"]), full=st.booleans(), reduction=st.sampled_from(REDUCTIONS))
def test_gaussian_nll_random_shapes(shape, seed, var_kind, full, reduction):
  vshape = shape if var_kind == "full" else shape[:-1] + (1,) if var_kind == "one" else shape[:-1]
  compare(nn.GaussianNLLLoss(full=full, reduction=reduction), torch.nn.GaussianNLLLoss(full=full, reduction=reduction),
          [_u(shape, seed), _u(shape, seed + 1), _u(vshape, seed + 2, 0.05, 2)], atol=1e-4)

# ***** RReLU *****

def _with_specials(shape, seed, dt=np.float32):
  x = _u(shape, seed, -3, 3, dt).reshape(-1)
  x[:3] = [0.0, -0.0, np.nan]   # the kink and nan: torch's gradient there is the slope (eval) or 1 (nan, training)
  return x.reshape(shape)

@pytest.mark.parametrize("lower,upper", [(1 / 8, 1 / 3), (0.1, 0.3), (0.2, 0.2), (-1.0, 2.0)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_rrelu_eval_matches_torch(lower, upper, dt):
  pm = torch.nn.RReLU(lower, upper).eval()
  x = _with_specials((4, 5), 0, dt)
  compare(nn.RReLU(lower, upper), pm, [x])   # teeny's mode: Tensor.training is off by default
  compare(lambda t: nn.rrelu(t, lower, upper), lambda t: torch.nn.functional.rrelu(t, lower, upper), [x])

def test_rrelu_eval_inside_test_mode_and_views():
  pm = torch.nn.RReLU().eval()
  with Tensor.train(False):
    compare(nn.RReLU(), pm, [_u((5, 3), 1)], views=lambda t: t.transpose(0, 1))
    compare(nn.RReLU(), pm, [_u((3, 8), 2)], views=lambda t: t[:, 1::2])
  compare(nn.RReLU(), pm, [np.zeros((0, 3), np.float32)])
  compare(nn.RReLU(), pm, [np.array(-3.0, np.float32)])

@needs_values
@pytest.mark.parametrize("lower,upper", [(1 / 8, 1 / 3), (0.05, 0.9)])
def test_rrelu_training_draws_a_slope_per_element(lower, upper):
  Tensor.manual_seed(3)
  xn = _u((64, 32), 4, -3, 3)
  xn[0, :4] = [0.0, np.nan, 1.0, -1.0]
  x = Tensor(xn, requires_grad=True)
  with Tensor.train(): y = nn.RReLU(lower, upper)(x)
  (y * 1).sum().backward()
  yn, g = y.numpy(), x.grad.numpy()
  assert y.dtype == dtypes.float32 and y.shape == x.shape
  neg, pos = xn < 0, xn > 0
  slope = yn[neg] / xn[neg]
  assert slope.min() >= lower - 1e-6 and slope.max() <= upper + 1e-6
  assert slope.std() > (upper - lower) / 6, "slopes should vary per element"
  assert abs(slope.mean() - (lower + upper) / 2) < (upper - lower) / 10
  np.testing.assert_array_equal(yn[pos], xn[pos])          # positives untouched, gradient 1
  np.testing.assert_array_equal(g[pos], 1.0)
  np.testing.assert_allclose(g[neg], slope, rtol=1e-6)     # the gradient of a negative element is its drawn slope
  assert yn[0, 0] == 0 and lower <= g[0, 0] <= upper       # 0: a slope, as torch's (input <= 0)
  assert np.isnan(yn[0, 1]) and g[0, 1] == 1.0             # nan: passes with gradient 1, as torch's training rrelu
  p = torch.tensor(xn[0, :2], requires_grad=True)           # (torch's, for the two special values)
  torch.nn.functional.rrelu(p, lower, upper, training=True).sum().backward()
  assert lower <= p.grad[0] <= upper and p.grad[1] == 1.0

@needs_values
def test_rrelu_training_functional_and_bounds():
  Tensor.manual_seed(0)
  x = Tensor(-np.ones((100,), np.float32))
  y = nn.rrelu(x, 0.2, 0.6, training=True).numpy()
  assert y.min() >= -0.6 and y.max() <= -0.2 and len(np.unique(y)) > 50
  np.testing.assert_array_equal(nn.rrelu(x, 0.25, 0.25, training=True).numpy(), -0.25)   # lower == upper: that slope
  np.testing.assert_allclose(nn.rrelu(x, 0.2, 0.6).numpy(), -0.4, rtol=1e-6)             # training=False: the mean
  with Tensor.train():
    a, b = nn.RReLU()(x).numpy(), nn.RReLU()(x).numpy()
  assert not np.array_equal(a, b), "each call draws new slopes"

@needs_values
@pytest.mark.parametrize("dt", [np.float16, np.float64])
def test_rrelu_training_other_float_dtypes(dt):
  x = Tensor(-np.ones((64,), dt) * 2)
  with Tensor.train(): y = nn.RReLU(0.1, 0.3)(x)
  assert y.dtype == dtypes.from_np(np.dtype(dt))
  s = y.numpy().astype(np.float64) / -2
  assert s.min() >= 0.1 - 1e-3 and s.max() <= 0.3 + 1e-3

def test_rrelu_float16_eval():
  x = _with_specials((3, 4), 1, np.float16)
  y = nn.RReLU()(Tensor(x))
  assert y.dtype == dtypes.float16
  if not is_null():
    ref = torch.nn.functional.leaky_relu(torch.tensor(x).float(), (1 / 8 + 1 / 3) / 2).numpy()
    np.testing.assert_allclose(y.numpy().astype(np.float32), ref, atol=1e-3, rtol=1e-3)

def test_rrelu_inplace_accepted_and_no_state():
  m, pm = nn.RReLU(0.1, 0.2, True), torch.nn.RReLU(0.1, 0.2, True)
  assert (m.lower, m.upper, m.inplace) == (pm.lower, pm.upper, pm.inplace)
  assert get_state_dict(m) == {} and list(pm.state_dict()) == []
  xn = _u((2, 3), 0)
  x = Tensor(xn)
  y = nn.rrelu(x, inplace=True)   # (nn.rrelu is F.rrelu: inplace=True writes into x, as torch's)
  assert y is x
  if not is_null(): np.testing.assert_allclose(x.numpy(), np.where(xn > 0, xn, xn * (1 / 8 + 1 / 3) / 2), rtol=1e-6)
  d = nn.RReLU()
  assert (d.lower, d.upper, d.inplace) == (1 / 8, 1 / 3, False)

def test_rrelu_errors():
  with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
    torch.nn.RReLU(0.5, 0.1)(torch.ones(2))
  with pytest.raises(RuntimeError, match=r"rrelu: lower bound \(0.5\) should be less than or equal to the upper"):
    nn.RReLU(0.5, 0.1)(Tensor([1.0]))   # (at the call, as torch)
  with pytest.raises(RuntimeError, match=r"rrelu: lower bound \(0.5\) should be"): nn.rrelu(Tensor([1.0]), 0.5, 0.1)
  with pytest.raises(TypeError, match="rrelu: input must be a floating-point tensor, got dtypes.int32"):
    nn.RReLU()(Tensor(np.array([1, -2], np.int32)))
  with pytest.raises(NotImplementedError): torch.nn.RReLU()(torch.tensor([1, -2], dtype=torch.int32))

@HSET
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple), seed=st.integers(0, 2**16),
       lower=st.floats(0, 0.5), width=st.floats(0, 0.5))
def test_rrelu_eval_random_shapes(shape, seed, lower, width):
  compare(nn.RReLU(lower, lower + width), torch.nn.RReLU(lower, lower + width).eval(), [_u(shape, seed)])

# ***** torch_load: requires_grad of Parameters *****

def _save(tmp_path, obj):
  p = str(tmp_path / "ckpt.pt")
  torch.save(obj, p)
  return p, torch.load(p)

def test_torch_load_parameter_requires_grad_like_torch(tmp_path):
  obj = {"param": torch.nn.Parameter(torch.ones(2, 3)), "frozen": torch.nn.Parameter(torch.ones(2), False),
         "plain": torch.arange(4.0), "leaf_grad": torch.ones(3, requires_grad=True),
         "nested": [torch.nn.Parameter(torch.zeros(1)), (torch.ones(2),)]}
  p, ref = _save(tmp_path, obj)
  got = torch_load(p)
  assert [ref[k].requires_grad for k in ("param", "frozen", "plain", "leaf_grad")] == [True, False, False, True]
  assert got["param"].requires_grad is True and got["frozen"].requires_grad is False
  # torch's False for a tensor that does not need a gradient; teeny keeps tinygrad's "not set" (None) underneath, which
  # an optimizer given the tensor turns into True (frozen's explicit False it leaves)
  assert got["plain"].requires_grad is False and got["plain"]._requires_grad is None
  assert got["frozen"]._requires_grad is False
  assert got["leaf_grad"].requires_grad is True  # saved with requires_grad=True: loads with it, as torch's
  assert got["nested"][0].requires_grad is True and got["nested"][1][0].requires_grad is False
  if not is_null():
    np.testing.assert_array_equal(got["param"].numpy(), ref["param"].detach().numpy())

def test_torch_load_a_bare_parameter(tmp_path):
  p, ref = _save(tmp_path, torch.nn.Parameter(torch.tensor([1.0, -2.0])))
  got = torch_load(p)
  assert isinstance(got, Tensor) and got.requires_grad is True and ref.requires_grad is True
  assert got.shape == (2,) and got.dtype == dtypes.float32
  if is_null(): return
  (got * got).sum().backward()   # trains further without setting requires_grad by hand
  np.testing.assert_array_equal(got.grad.numpy(), [2.0, -4.0])

def test_torch_load_named_parameters_vs_state_dict(tmp_path):
  lin = torch.nn.Linear(3, 2)
  p, ref = _save(tmp_path, dict(lin.named_parameters()))   # Parameters (state_dict() would give plain tensors)
  got = torch_load(p)
  assert {k: v.requires_grad for k, v in got.items()} == {k: v.requires_grad for k, v in ref.items()}
  p, ref = _save(tmp_path, lin.state_dict())
  assert all(v.requires_grad is False and v._requires_grad is None for v in torch_load(p).values())
