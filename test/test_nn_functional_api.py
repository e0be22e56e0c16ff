"""teeny.nn.functional, teeny.nn.init and teeny.nn.utils against torch 2.13: signatures (names, order, defaults),
values, dtypes, shapes and gradients of every functional (a parametrized table; `compare_torch` from helpers.py backs
it, and under DEV=NULL only builds and realizes the graphs), the explicit `training` of the dropouts, batch_norm's
running statistics, init statistics and exact values, gradient clipping, and the errors."""
import inspect
import math
import warnings
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Tensor, dtypes, nn
import teeny.nn.functional as F
from teeny.nn import init, utils
from helpers import assert_like_torch, compare_torch, is_null, needs_values, sample_array

torch = pytest.importorskip("torch")
TF = torch.nn.functional
HSET = settings(max_examples=4, deadline=None)   # (each example compiles kernels: CI time)

# shared inputs (one shape per role, so kernels are reused between tests)
X = sample_array((2, 3, 4), 0)                          # activations
X4 = sample_array((2, 4, 5, 5), 1)                      # images
X3 = sample_array((2, 4, 6), 2)                         # sequences
X5 = sample_array((1, 2, 4, 4, 4), 3)                   # volumes
P = np.clip(np.abs(sample_array((2, 3, 4), 4)) * 0.4 + 0.1, 0.1, 0.9)   # probabilities
LOGITS = sample_array((4, 5), 5)
TGT = np.array([1, 0, 4, 2], np.int64)
IDX = np.array([[0, 2, 5], [5, 1, 0]], np.int64)
W2 = sample_array((6, 4, 3, 3), 8)
SIGNS = np.where(sample_array((4,), 6) > 0, 1.0, -1.0).astype(np.float32)

def _pos(a): return (np.abs(a) + 0.5).astype(np.float32)

# ***** signatures: parameter names, order and defaults as torch's *****

def _torch_params(name):
  try: return list(inspect.signature(getattr(TF, name)).parameters.values())
  except (ValueError, TypeError): return None

SIG_NAMES = [n for n in F.__all__ if hasattr(TF, n)]

@pytest.mark.parametrize("name", SIG_NAMES)
def test_signature_matches_torch(name):
  theirs = _torch_params(name)
  if theirs is None or any(p.kind == p.VAR_POSITIONAL for p in theirs): pytest.skip("torch's is a builtin")
  ours = list(inspect.signature(getattr(F, name)).parameters.values())
  assert [p.name for p in ours] == [p.name for p in theirs], name
  for a, b in zip(ours, theirs):
    assert a.kind == b.kind, f"{name}: {a.name} kind"
    if b.default is not inspect.Parameter.empty and not isinstance(b.default, (torch.dtype,)):
      assert a.default == b.default, f"{name}: default of {a.name}: {a.default!r} vs torch {b.default!r}"

# torch's builtins (no Python signature): the documented ones
BUILTIN_SIGS = {
  "conv2d": "input weight bias stride padding dilation groups", "conv_transpose1d":
  "input weight bias stride padding output_padding groups dilation", "avg_pool2d":
  "input kernel_size stride padding ceil_mode count_include_pad divisor_override", "avg_pool1d":
  "input kernel_size stride padding ceil_mode count_include_pad", "linear": "input weight bias",
  "bilinear": "input1 input2 weight bias", "softplus": "input beta threshold", "hardshrink": "input lambd",
  "softshrink": "input lambd", "one_hot": "tensor num_classes", "pairwise_distance": "x1 x2 p eps keepdim",
  "cosine_similarity": "x1 x2 dim eps", "pdist": "input p", "prelu": "input weight", "gelu": "input approximate",
  "pixel_shuffle": "input upscale_factor", "pixel_unshuffle": "input downscale_factor",
  "max_pool2d": "input kernel_size stride padding dilation ceil_mode return_indices",
  "scaled_dot_product_attention": "query key value attn_mask dropout_p is_causal scale enable_gqa",
  "adaptive_avg_pool1d": "input output_size", "channel_shuffle": "input groups"}

@pytest.mark.parametrize("name", sorted(BUILTIN_SIGS))
def test_builtin_signature(name):
  assert list(inspect.signature(getattr(F, name)).parameters) == BUILTIN_SIGS[name].split()

# ***** the mapping onto Tensor methods: F.name(...) builds the very graph of the method it wraps (UOps are
# hash-consed, so equal graphs are one object); the methods themselves are tested against torch in test_ops_nn.py,
# test_losses.py, test_nn_functional_parity.py... Nothing compiles here. *****

def _t(a, dt=None): return Tensor(a, dtype=dt)
TX, TX3, TX4, TX5, TP, TL, TT = _t(X), _t(X3), _t(X4), _t(X5), _t(P), _t(LOGITS), _t(TGT)
TW2, TB6, TW5 = _t(sample_array((6, 4, 3, 3), 8)), _t(sample_array((6,), 10)), _t(sample_array((5,), 13))
TS = _t(SIGNS)

SAME_GRAPH = [   # (F call, the method call it must equal)
  (lambda: F.relu6(TX), lambda: TX.relu6()), (lambda: F.elu(TX, 0.5), lambda: TX.elu(0.5)),
  (lambda: F.selu(TX), lambda: TX.selu()), (lambda: F.gelu(TX), lambda: TX.gelu()),
  (lambda: F.silu(TX), lambda: TX.silu()),
  (lambda: F.mish(TX), lambda: TX.mish()), (lambda: F.softsign(TX), lambda: TX.softsign()),
  (lambda: F.hardsigmoid(TX), lambda: TX.hardsigmoid()), (lambda: F.hardswish(TX), lambda: TX.hardswish()),
  (lambda: F.sigmoid(TX), lambda: TX.sigmoid()), (lambda: F.tanh(TX), lambda: TX.tanh()),
  (lambda: F.gelu(TX, approximate="tanh"), lambda: TX.gelu("tanh")),
  (lambda: F.celu(TX, alpha=2.0), lambda: TX.celu(2.0)),
  (lambda: F.leaky_relu(TX, 0.3), lambda: TX.leaky_relu(0.3)), (lambda: F.logsigmoid(TX), lambda: TX.logsigmoid()),
  (lambda: F.rrelu(TX, 0.2, 0.4), lambda: TX.rrelu(0.2, 0.4, False)),
  (lambda: F.softmax(TX, 1, dtype=dtypes.float64), lambda: TX.softmax(1, dtype=dtypes.float64)),
  (lambda: F.log_softmax(TX, dim=0), lambda: TX.log_softmax(0)),
  (lambda: F.conv1d(TX3, TW2[:, :2, 0], None, 2, 1, 1, 2), lambda: TX3.conv1d(TW2[:, :2, 0], None, 2, 1, 1, 2)),
  (lambda: F.conv2d(TX4[0], TW2, padding="same"), lambda: TX4[0].conv2d(TW2, None, 1, "same")),
  (lambda: F.conv3d(TX5, TW2[:3, :2, :2, :2].unsqueeze(2), stride=2),
   lambda: TX5.conv3d(TW2[:3, :2, :2, :2].unsqueeze(2), None, 2)),
  (lambda: F.conv_transpose1d(TX3, TW2[:4, :3, 0], stride=2, output_padding=1, dilation=1),
   lambda: TX3.conv_transpose1d(TW2[:4, :3, 0], None, 2, 0, 1)),
  (lambda: F.conv_transpose2d(TX4, TW2[:4, :2], TB6[:2], 2, 1, groups=1, dilation=2),
   lambda: TX4.conv_transpose2d(TW2[:4, :2], TB6[:2], 2, 1, 0, 1, 2)),
  (lambda: F.conv_transpose3d(TX5, TW2[:2, :1, :2, :2].unsqueeze(2)),
   lambda: TX5.conv_transpose3d(TW2[:2, :1, :2, :2].unsqueeze(2))),
  (lambda: F.max_pool1d(TX3, 2, ceil_mode=True), lambda: TX3.max_pool1d(2, None, 0, 1, True)),
  (lambda: F.max_pool2d(TX4, 3, 2, 1, return_indices=True), lambda: TX4.max_pool2d(3, 2, 1, 1, False, True)),
  (lambda: F.max_pool3d(TX5, 2, dilation=1), lambda: TX5.max_pool3d(2)),
  (lambda: F.max_pool2d_with_indices(TX4, 2), lambda: TX4.max_pool2d(2, return_indices=True)),
  (lambda: F.avg_pool1d(TX3, 3, 2, 1, False, False), lambda: TX3.avg_pool1d(3, 2, 1, False, False)),
  (lambda: F.avg_pool2d(TX4, 2, ceil_mode=True, divisor_override=3), lambda: TX4.avg_pool2d(2, None, 0, True, True, 3)),
  (lambda: F.avg_pool3d(TX5, 2, count_include_pad=False), lambda: TX5.avg_pool3d(2, None, 0, False, False)),
  (lambda: F.adaptive_avg_pool2d(TX4, (2, None)), lambda: TX4.adaptive_avg_pool2d((2, None))),
  (lambda: F.adaptive_max_pool1d(TX3, 4, True), lambda: TX3.adaptive_max_pool1d(4, True)),
  (lambda: F.max_unpool2d(*TX4.max_pool2d(2, return_indices=True), 2, output_size=(5, 5)),
   lambda: TX4.max_pool2d(2, return_indices=True)[0].max_unpool2d(TX4.max_pool2d(2, return_indices=True)[1], 2, None,
                                                                  0, (5, 5))),
  (lambda: F.instance_norm(TX4, eps=1e-3), lambda: TX4.instance_norm(None, None, None, None, True, 0.1, 1e-3)),
  (lambda: F.layer_norm(TX, (4,), eps=1e-3), lambda: TX.layer_norm((4,), None, None, 1e-3)),
  (lambda: F.group_norm(TX4, 2, TB6[:4]), lambda: TX4.group_norm(2, TB6[:4])),
  (lambda: F.normalize(TX, 3.0, -1), lambda: TX.normalize(3.0, -1)),
  (lambda: F.pad(TX4, (1, 1, 2, 0), "reflect"), lambda: TX4.pad((1, 1, 2, 0), mode="reflect")),
  (lambda: F.pad(TX, (1, 2), value=1.5), lambda: TX.pad((1, 2), 1.5)),
  (lambda: F.interpolate(TX4, scale_factor=2, mode="bilinear", align_corners=True),
   lambda: TX4.interpolate(None, 2, "bilinear", True)),
  (lambda: F.pixel_shuffle(TX4, 2), lambda: TX4.pixel_shuffle(2)),
  (lambda: F.cosine_similarity(TX, TX[0], -1, 1e-3), lambda: TX.cosine_similarity(TX[0], -1, 1e-3)),
  (lambda: F.pairwise_distance(TX, TX[0], 1.5, 1e-3, True), lambda: TX.pairwise_distance(TX[0], 1.5, 1e-3, True)),
  (lambda: F.scaled_dot_product_attention(TX, TX, TX, is_causal=True, scale=0.3),
   lambda: TX.scaled_dot_product_attention(TX, TX, None, 0.0, True, 0.3)),
  (lambda: F.smooth_l1_loss(TX, TP, reduction="sum", beta=0.5), lambda: TX.smooth_l1_loss(TP, "sum", 0.5)),
  (lambda: F.huber_loss(TX, TP, "none", 0.5), lambda: TX.huber_loss(TP, "none", 0.5)),
  (lambda: F.cross_entropy(TL, TT, TW5, ignore_index=2, reduction="sum", label_smoothing=0.1),
   lambda: TL.cross_entropy(TT, "sum", 0.1, 2, TW5)),
  (lambda: F.nll_loss(TL, TT, TW5, ignore_index=1), lambda: TL.nll_loss(TT, TW5, 1)),
  (lambda: F.binary_cross_entropy(TP, TP, TX, reduction="sum"), lambda: TP.binary_cross_entropy(TP, TX, "sum")),
  (lambda: F.binary_cross_entropy_with_logits(TX, TP, TX, reduction="none", pos_weight=TP[0, 0]),
   lambda: TX.binary_cross_entropy_with_logits(TP, TX, "none", TP[0, 0])),
  (lambda: F.kl_div(TX, TP, reduction="batchmean", log_target=True), lambda: TX.kl_div(TP, "batchmean", True)),
  (lambda: F.poisson_nll_loss(TX, TP, False, True, eps=1e-3, reduction="sum"),
   lambda: TX.poisson_nll_loss(TP, False, True, 1e-3, "sum")),
  (lambda: F.gaussian_nll_loss(TX, TP, TP, True, 1e-3, "none"),
   lambda: TX.gaussian_nll_loss(TP, TP, True, 1e-3, "none")),
  (lambda: F.margin_ranking_loss(TL[:, 0], TL[:, 1], TS, 0.1), lambda: TL[:, 0].margin_ranking_loss(TL[:, 1], TS, 0.1)),
  (lambda: F.hinge_embedding_loss(TL, TL.sign(), 0.5, reduction="sum"),
   lambda: TL.hinge_embedding_loss(TL.sign(), 0.5, "sum")),
  (lambda: F.soft_margin_loss(TL, TL.sign(), reduction="none"), lambda: TL.soft_margin_loss(TL.sign(), "none")),
  (lambda: F.multilabel_margin_loss(TL, TT.reshape(4, 1).expand(4, 5)), lambda: TL.multilabel_margin_loss(
    TT.reshape(4, 1).expand(4, 5))),
  (lambda: F.multilabel_soft_margin_loss(TL, TL.sign(), TW5), lambda: TL.multilabel_soft_margin_loss(TL.sign(), TW5)),
  (lambda: F.multi_margin_loss(TL, TT, 2, 0.5, TW5, reduction="sum"),
   lambda: TL.multi_margin_loss(TT, 2, 0.5, TW5, "sum")),
  (lambda: F.cosine_embedding_loss(TL, TL.flip(0), TS, 0.2), lambda: TL.cosine_embedding_loss(TL.flip(0), TS, 0.2)),
  (lambda: F.triplet_margin_loss(TL, TL.flip(0), TL * 0.5, 0.5, 1.5, 1e-3, True, reduction="none"),
   lambda: TL.triplet_margin_loss(TL.flip(0), TL * 0.5, 0.5, 1.5, 1e-3, True, "none")),
]

@pytest.mark.parametrize("i", range(len(SAME_GRAPH)))
def test_same_graph_as_method(i):
  a, b = (f() for f in SAME_GRAPH[i])
  for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
    assert x.uop is y.uop or _structure(x.uop) == _structure(y.uop)

def _structure(u) -> list:
  """The graph as (op, dtype, arg, source positions) in topological order, buffers without their unique id (ops that
  make a small constant tensor of their own give equal graphs over different buffers)."""
  order = list(u.toposort)
  pos = {n: i for i, n in enumerate(order)}
  return [(n.op, n.dtype, repr(n.arg[1:] if n.op.name == "BUFFER" else n.arg), tuple(pos[s] for s in n.src))
          for n in order]

# ***** against torch: values, dtypes, shapes and gradients. Each group's outputs are flattened and concatenated into
# one tensor (so its elementwise work fuses into few kernels); every output's shape is checked on its own. *****

PW3, PW1 = np.float32([0.1, 0.2, 0.3]), np.float32([0.25])

def _activations(M, x, w3, w1):
  # the ones built here from Tensor ops (the plain wrappers: SAME_GRAPH), plus relu and gelu as a check of the table
  return [M.relu(x), M.gelu(x, approximate="tanh"), M.softplus(x, beta=2.0, threshold=1.0), M.softplus(x * 30),
          M.softshrink(x, 0.3), M.hardshrink(x, lambd=0.3), M.tanhshrink(x), M.threshold(x, 0.1, 2.0),
          M.hardtanh(x, -0.5, max_val=0.5), M.prelu(x, w3), M.prelu(x, w1), M.glu(x, dim=-1),
          M.glu(x.transpose(0, 2), 0), M.softmin(x, 0), M.rms_norm(x, (4,), w3.sum() + x[0, 0]),
          M.rms_norm(x, [3, 4], eps=0.1)] + _softmax_dtypes(M, x)

def _softmax_dtypes(M, x):
  d64 = torch.float64 if M is TF else dtypes.float64
  return [M.softmax(x, 1, dtype=d64), M.softmin(x, -1, dtype=d64), M.log_softmax(x, dim=0, dtype=d64)]

def _linear(M, x, x4, w, b, w1, wb, bb, w2):
  return [M.linear(x, w, b), M.linear(x, w1), M.bilinear(x[:, :, :3], x[:, :, 1:], wb, bb),
          M.bilinear(x[0, :, :3], x[0, :, 1:], wb),
          M.conv2d(x4, w2[:4, :2, :2, :2], b[:4], stride=2, padding=1, groups=2)]

def _pools(M, x3, x4, x5):
  return [M.lp_pool1d(x3, 2, 3, stride=2, ceil_mode=True), M.lp_pool2d(x4, 3, (2, 3), stride=1),
          M.lp_pool3d(x5 * x5 + 0.5, 1.5, 2)]

def _norms(M, x4, x3):
  return [M.local_response_norm(x4, 3, alpha=0.1, k=2.0), M.local_response_norm(x3, 2),
          M.batch_norm(x4, x4[1, :, 0, 0].detach(), x4[1, :, 1, 1].detach().abs() + 0.5, x4[0, :, 0, 0], None)]

def _shapes(M, x4, x3, cols, cols2):
  return [M.interpolate(x4, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
          M.interpolate(x4, scale_factor=(0.7, 1.3), mode="nearest", recompute_scale_factor=True),
          M.pad(x3, (2, -1), "constant", 0.5), M.channel_shuffle(x4, 2),
          M.unfold(x4, 2, dilation=2, padding=1, stride=2),
          M.unfold(x4[0], (2, 3)), M.fold(cols, (4, 4), 2), M.fold(cols2, (5, 5), (2, 2), stride=2, padding=1),
          M.fold(cols[0, :4], 5, kernel_size=2, dilation=2)]

def _distances(M, lg, theta, theta3, emb):
  idx = (lg.detach() * 10).abs().long() % 6 if M is TF else (lg.detach() * 10).abs().cast(dtypes.int64) % 6
  return [M.pdist(lg), M.pdist(lg, p=math.inf), M.pdist(lg[:1]),
          M.affine_grid(theta, (2, 1, 3, 4), align_corners=False), M.affine_grid(theta3, [1, 1, 2, 3, 2], True),
          M.embedding(idx, emb), M.embedding(idx, emb, padding_idx=-1)]

def _grid_sample(M, x4, grid):
  return [M.grid_sample(x4, grid, align_corners=ac, padding_mode=pm, mode=m)
          for m, pm, ac in (("bilinear", "zeros", False), ("bilinear", "zeros", True), ("bilinear", "border", True),
                            ("bilinear", "border", False), ("nearest", "zeros", False), ("nearest", "border", True))]

GRID = (sample_array((2, 3, 6, 2), 32) * 0.8).astype(np.float32)
GRID[0, 0, :3] = [[1.3, -1.2], [-1.0, 1.0], [0.25, -0.75]]   # (outside, on the corners, on a pixel centre)

def _losses(M, x, p, lg, w, w5):
  t, y = p.detach(), (p > 0.4).float() if M is TF else (p > 0.4).cast(dtypes.float32)
  tg = TGT_T if M is TF else TT
  sg = lg.detach().sign()
  return [M.mse_loss(x, t, weight=w.detach()), M.l1_loss(x, t, reduction="sum", weight=w.detach()),
          M.huber_loss(x, t, delta=0.5, weight=w.detach()), M.cross_entropy(lg, tg, w5.detach(), label_smoothing=0.1),
          M.binary_cross_entropy(p, y, reduction="none"), M.kl_div(p.log(), t.flip(0), reduction="batchmean"),
          M.binary_cross_entropy_with_logits(x, t, pos_weight=w5[:4].detach()), M.soft_margin_loss(lg, sg),
          M.triplet_margin_with_distance_loss(lg, lg.flip(0), lg * 0.5, swap=True, margin=0.5),
          M.triplet_margin_with_distance_loss(lg, lg.flip(0), lg * 0.5,
                                              distance_function=lambda a, b: (a - b).abs().sum(-1))]

TGT_T = torch.tensor(TGT)
EMB = sample_array((6, 4), 11)
GROUPS = {
  "activations": (_activations, [X, PW3, PW1]),
  "linear_conv": (_linear, [X, X4, sample_array((5, 4), 12), sample_array((5,), 13), sample_array((4,), 14),
                            sample_array((5, 3, 3), 15), sample_array((5,), 16), W2]),
  "pools": (_pools, [X3, X4, X5]),
  "norms": (_norms, [X4, X3]),
  "shapes": (_shapes, [X4, X3, sample_array((2, 8, 9), 27), sample_array((12, 9), 28)]),
  "distances": (_distances, [LOGITS, sample_array((2, 2, 3), 30), sample_array((1, 3, 4), 31), EMB]),
  "grid_sample": (_grid_sample, [X4, GRID]),
  "losses": (_losses, [X, P, LOGITS, _pos(X), _pos(LOGITS[0])]),
}

def _flat(M, outs):
  if M is TF: return torch.cat([o.reshape(-1).float() for o in outs])
  return Tensor.cat(*[o.reshape(-1).cast(dtypes.float32) for o in outs])

@pytest.mark.parametrize("group", sorted(GROUPS))
def test_functional_like_torch(group):
  _run_group(*GROUPS[group])

def _run_group(fn, inputs, atol=1e-4, rtol=1e-4):
  """fn(M, *inputs) -> a list of outputs, for M = F and M = torch.nn.functional: each output's shape and dtype, then
  all values and the inputs' gradients at once (compare_torch on the flattened outputs, concatenated as float32)."""
  got: dict = {}
  def side(M):
    def f(*a):
      outs = fn(M, *a)
      got[M] = [(tuple(o.shape), str(o.dtype).split(".")[-1]) for o in outs]
      return _flat(M, outs)
    return f
  compare_torch(side(F), side(TF), inputs, atol=atol, rtol=rtol, grad_atol=10 * atol, grad_rtol=10 * rtol, quiet=True)
  for i, (a, b) in enumerate(zip(got[F], got[TF])): assert a == b, f"{fn.__name__} output {i}: teeny {a} vs torch {b}"

def _reductions(M, a, b):
  return [f(r) for r in ("none", "sum") for f in (
    lambda r: M.mse_loss(a, b, reduction=r), lambda r: M.l1_loss(a, b, reduction=r, weight=b.detach() + 1),
    lambda r: M.binary_cross_entropy(b, a.detach().sigmoid(), reduction=r),
    lambda r: M.triplet_margin_with_distance_loss(a, b, a * 0.5, reduction=r))]

def test_loss_reductions():
  _run_group(_reductions, [X, P], atol=1e-5)

def test_legacy_size_average_reduce():
  for sa, rd in ((False, None), (None, False), (True, True)):
    with pytest.warns(UserWarning, match="size_average and reduce"):
      compare_torch(lambda a, b: F.mse_loss(a, b, size_average=sa, reduce=rd),
                    lambda a, b: TF.mse_loss(a, b, size_average=sa, reduce=rd), [X, P], grad=False, quiet=False)

def _views_f16_ints(M, x, x4, w, h, xi, tgt, idx):
  # non-contiguous inputs (transposed, sliced, permuted), float16 where torch's CPU supports it, integer inputs
  return [M.softplus(x.transpose(0, 2), 2.0, 1.0), M.linear(x[:, ::2, ::2], w), M.glu(x4.permute(1, 0, 2, 3), 0),
          M.softshrink(h), M.hardshrink(h), M.tanhshrink(h), M.relu6(h * 4), M.hardtanh(h), M.rms_norm(h, (4,)),
          M.relu(xi), M.hardtanh(xi), M.relu6(xi), M.threshold(xi, 1, 5), M.one_hot(tgt, 5),
          M.one_hot(idx, num_classes=7)]

def test_views_float16_and_integers():
  # (one_hot gives int64, as torch's: Tensor.one_hot gives int32)
  _run_group(_views_f16_ints, [X, X4, sample_array((5, 2), 12), X.astype(np.float16), (X * 3).astype(np.int32), TGT,
                               IDX], atol=2e-3, rtol=2e-3)

def test_empty_and_size1():
  compare_torch(F.relu, TF.relu, [np.zeros((0, 3), np.float32)])
  compare_torch(lambda x: F.softmax(x, -1), lambda x: TF.softmax(x, -1), [np.ones((2, 1), np.float32)])
  compare_torch(lambda x: F.pdist(x), lambda x: TF.pdist(x), [LOGITS[:1]])
  compare_torch(lambda x, w: F.linear(x, w), lambda x, w: TF.linear(x, w),
                [np.zeros((0, 4), np.float32), sample_array((5, 4), 12)])

def test_softmax_implicit_dim():
  # torch's legacy choice (dim 0 for 0-, 1- and 3-d inputs, else 1), with its deprecation warning; (dtype=: the
  # activations group)
  for x, d in ((TX4, 1), (TX, 0), (TX[0, 0], 0), (TL, 1)):
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
      assert _structure(F.log_softmax(x).uop) == _structure(x.log_softmax(d).uop)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
      assert _structure(F.softmin(x).uop) == _structure(x.softmin(d).uop)

def test_inplace_and_underscore_variants():
  for fn, kw in (("relu", {}), ("elu", {"alpha": 0.5}), ("leaky_relu", {"negative_slope": 0.3}),
                 ("hardtanh", {"min_val": -0.2}), ("threshold", {"threshold": 0.0, "value": 9.0})):
    a, b = Tensor(X), torch.tensor(X)
    assert getattr(F, fn)(a, **kw, inplace=True) is a
    getattr(TF, fn)(b, **kw, inplace=True)
    assert_like_torch(a, b)
  a, b = Tensor(X), torch.tensor(X)
  F.relu_(a), TF.relu_(b)
  assert_like_torch(a, b)
  leaf = Tensor(X, requires_grad=True)
  with pytest.raises(RuntimeError, match="relu: a leaf Variable that requires grad"): F.relu(leaf, inplace=True)
  with Tensor.no_grad(): F.relu(leaf, inplace=True)   # (allowed without grad, as torch's)

# ***** dropout: the explicit training argument *****

def test_dropout_training_argument():
  x = Tensor.ones(64, 32)
  with Tensor.train(True):
    assert F.dropout(x, 0.5, training=False) is x
    assert F.alpha_dropout(x, 0.5) is x   # (training=False by default, as torch's)
  with Tensor.train(False):
    y = F.dropout(x, 0.5)   # training=True by default, whatever Tensor.training says
    z = F.dropout2d(Tensor.ones(8, 16, 3, 3), 0.25)
    w = F.alpha_dropout(Tensor(sample_array((64, 32), 46)), 0.2, training=True)
  assert not Tensor.training
  if is_null(): return
  v = y.numpy()
  assert set(np.unique(v)) <= {0.0, 2.0} and 0.35 < (v == 0).mean() < 0.65
  zc = z.numpy().reshape(8, 16, 9)
  assert (zc.min(-1) == zc.max(-1)).all(), "dropout2d zeroes whole channels"
  assert set(np.unique(zc)) <= {0.0, np.float32(1 / 0.75)}
  assert abs(w.numpy().mean()) < 0.15 and abs(w.numpy().std() - 1) < 0.15   # alpha dropout keeps mean and variance
  assert F.dropout(x, 0.0).numpy().min() == 1.0 and F.dropout(x, 1.0).numpy().max() == 0.0

@needs_values
def test_dropout_variants_shapes_and_grad():
  x = Tensor(sample_array((2, 4, 6), 40), requires_grad=True)
  y = F.dropout1d(x, 0.5)
  y.sum().backward()
  g, v = x.grad.numpy(), y.numpy()
  assert ((g == 0) == (v == 0)).all() and set(np.unique(g)) <= {0.0, 2.0}
  u = F.dropout1d(Tensor.ones(4, 6), 0.5).numpy()   # unbatched (C, L): per channel
  assert (u.min(-1) == u.max(-1)).all()
  f = F.feature_alpha_dropout(Tensor.ones(4, 8, 3), 0.5, training=True).numpy()
  assert (f.min(-1) == f.max(-1)).all()
  d3 = F.dropout3d(Tensor.ones(2, 3, 2, 2, 2), 0.5).numpy().reshape(2, 3, -1)
  assert (d3.min(-1) == d3.max(-1)).all()

def test_dropout_errors():
  with pytest.raises(ValueError, match="dropout: dropout probability has to be between 0 and 1"):
    F.dropout(Tensor(X), 1.5)
  with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"): F.dropout1d(Tensor(X4))
  with pytest.raises(TypeError, match="alpha_dropout: needs a floating-point"):
    F.alpha_dropout(Tensor([1, 2]), 0.5, training=True)
  with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"): F.dropout2d(Tensor(X), 0.5)

# ***** batch_norm *****

def test_batch_norm_running_stats():
  # (training=False, with the running statistics: the norms group)
  training = True
  rm, rv = sample_array((4,), 41) * 0.1, _pos(sample_array((4,), 42))
  w, b = sample_array((4,), 43), sample_array((4,), 44)
  trm, trv, prm, prv = Tensor(rm), Tensor(rv), torch.tensor(rm), torch.tensor(rv)
  compare_torch(lambda x, w, b: F.batch_norm(x, trm, trv, w, b, training=training, momentum=0.3, eps=1e-3),
                lambda x, w, b: TF.batch_norm(x, prm, prv, w, b, training=training, momentum=0.3, eps=1e-3),
                [X4, w, b], atol=1e-4)
  assert_like_torch(trm, prm, atol=1e-5, what="running_mean")
  assert_like_torch(trv, prv, atol=1e-5, what="running_var")
  compare_torch(lambda x: F.batch_norm(x, None, None, training=True),
                lambda x: TF.batch_norm(x, None, None, training=True),
                [X3], atol=1e-4)

def test_batch_norm_errors():
  with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
    F.batch_norm(Tensor(X[:1, :, :1]), None, None, training=True)
  with pytest.raises(RuntimeError, match="running_mean and running_var must be given"):
    F.batch_norm(Tensor(X4), None, None)
  with pytest.raises(RuntimeError, match="running_mean should contain 4 elements"):
    F.batch_norm(Tensor(X4), Tensor.zeros(3), Tensor.ones(3))

# ***** embedding: max_norm renormalises the weight in place *****

def test_embedding_max_norm():
  tw, pw = Tensor(EMB * 2), torch.tensor(EMB * 2)
  out = F.embedding(Tensor(IDX), tw, max_norm=1.5, norm_type=1.0)
  ref = TF.embedding(torch.tensor(IDX), pw, max_norm=1.5, norm_type=1.0)
  assert_like_torch(out, ref, atol=1e-5)
  assert_like_torch(tw, pw, atol=1e-5, what="renormalised weight")   # (rows 3 and 4 unused: untouched)
  with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
    F.embedding(Tensor(IDX), tw, scale_grad_by_freq=True)
  with pytest.raises(TypeError, match="integer dtype"): F.embedding(Tensor(X), tw)
  with pytest.raises(ValueError, match="padding_idx"): F.embedding(Tensor(IDX), tw, padding_idx=6)

def test_gumbel_softmax():
  x = Tensor(LOGITS, requires_grad=True)
  y, h = F.gumbel_softmax(x, tau=0.5), F.gumbel_softmax(x, hard=True, dim=0)
  assert y.shape == h.shape == (4, 5)
  (h * Tensor(sample_array((4, 5), 45))).sum().backward()
  if is_null(): return
  assert np.allclose(y.numpy().sum(-1), 1, atol=1e-5)
  hv = h.numpy()
  assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(0) == 1).all()
  assert np.isfinite(x.grad.numpy()).all() and np.abs(x.grad.numpy()).sum() > 0

# ***** hypothesis: shapes and arguments *****

@HSET
@given(n=st.integers(1, 3), c=st.sampled_from([2, 4]), h=st.integers(3, 6), k=st.integers(1, 3), s=st.integers(1, 2),
       p=st.integers(0, 1))
def test_hyp_unfold_fold_roundtrip(n, c, h, k, s, p):
  if p > k // 2 or (h + 2 * p - k) < 0: return
  x = sample_array((n, c, h, h + 1), n + h)
  compare_torch(lambda t: F.unfold(t, k, padding=p, stride=s), lambda t: TF.unfold(t, k, padding=p, stride=s), [x])
  cols = TF.unfold(torch.tensor(x), k, padding=p, stride=s).numpy()
  compare_torch(lambda t: F.fold(t, (h, h + 1), k, padding=p, stride=s),
                lambda t: TF.fold(t, (h, h + 1), k, padding=p, stride=s), [cols], grad=False)

@HSET
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), beta=st.sampled_from([0.5, 1.0, 3.0]),
       th=st.sampled_from([0.5, 20.0]), lambd=st.sampled_from([0.0, 0.4]))
def test_hyp_activations(shape, beta, th, lambd):
  x = sample_array(tuple(shape), len(shape)) * 2
  _run_group(lambda M, t: [M.softplus(t, beta, th), M.softshrink(t, lambd)], [x])

@HSET
@given(n=st.integers(1, 5), m=st.integers(1, 3), p=st.sampled_from([1.0, 2.0, 3.0]),
       red=st.sampled_from(["none", "mean", "sum"]))
def test_hyp_pdist_and_weighted_losses(n, m, p, red):
  x = sample_array((n, m), n * m)
  w = _pos(sample_array((n, m), 3))
  _run_group(lambda M, a, b, w: [M.pdist(a, p), M.mse_loss(a, b, reduction=red, weight=w.detach())],
             [x, x[::-1].copy(), w])

# ***** functional errors *****

def test_functional_errors():
  x = Tensor(X)
  with pytest.raises(ValueError, match="mse_loss: 'avg' is not a valid value for reduction"):
    F.mse_loss(x, x, reduction="avg")
  with pytest.raises(ValueError, match="kl_div: 'x' is not a valid value"): F.kl_div(x, x, reduction="x")
  with pytest.raises(ValueError, match="huber_loss: Weights and input must have the same size"):
    F.huber_loss(x, x, weight=Tensor.ones(4))
  with pytest.raises(RuntimeError, match="glu: halving dimension must be even"): F.glu(x, 1)
  with pytest.raises(IndexError, match="glu: dim 3 is out of range"): F.glu(x, 3)
  with pytest.raises(ValueError, match="gelu: approximate"): F.gelu(x, approximate="fast")
  with pytest.raises(ValueError, match="celu: alpha cannot be 0"): F.celu(x, 0.0)
  with pytest.raises(RuntimeError, match="softshrink: lambda must be greater or equal to 0"): F.softshrink(x, -1)
  with pytest.raises(RuntimeError, match="prelu: mismatch of parameter numbers"): F.prelu(x, Tensor.ones(4))
  with pytest.raises(RuntimeError, match="bilinear: input1"): F.bilinear(x, x, Tensor.ones(2, 3, 3))
  with pytest.raises(RuntimeError, match="pad: Padding length must be divisible by 2"): F.pad(x, (1, 2, 3))
  with pytest.raises(RuntimeError, match="pad: padding mode 'reflect' doesn't take in value"):
    F.pad(x, (1, 1), mode="reflect", value=2.0)
  with pytest.raises(NotImplementedError, match="antialias"): F.interpolate(Tensor(X4), scale_factor=2, antialias=True)
  with pytest.raises(RuntimeError, match="channel_shuffle: Number of channels must be divisible"):
    F.channel_shuffle(Tensor(X4), 3)
  with pytest.raises(ValueError, match="unfold: Input Error"): F.unfold(x[0], 2)
  with pytest.raises(RuntimeError, match="fold: given output_size=.* expected size of input's dimension 2"):
    F.fold(Tensor(sample_array((2, 8, 8), 0)), (4, 4), 2)
  with pytest.raises(RuntimeError, match="pdist: only supports 2D"): F.pdist(x)
  with pytest.raises(RuntimeError, match="rms_norm: given normalized_shape"): F.rms_norm(x, (3,))
  with pytest.raises(ValueError, match="local_response_norm: Expected 3D"): F.local_response_norm(x[0], 2)
  with pytest.raises(ValueError, match="triplet_margin_with_distance_loss: margin must be greater than 0"):
    F.triplet_margin_with_distance_loss(x, x, x, margin=0)
  with pytest.raises(ValueError, match="affine_grid"): F.affine_grid(Tensor.ones(2, 2, 3), (2, 1, 3))
  with pytest.raises(NotImplementedError, match="grid_sample: teeny supports 4-d inputs"):
    F.grid_sample(Tensor(X4), Tensor(GRID), padding_mode="reflection")
  with pytest.raises(ValueError, match="grid_sample: mode must be"): F.grid_sample(Tensor(X4), Tensor(GRID), "area")
  with pytest.raises(RuntimeError, match="grid_sample: expected a 4-d input"): F.grid_sample(Tensor(X4), Tensor(X4))

# ***** nn.init *****

GAINS = [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
         ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None)]

@pytest.mark.parametrize("nl,param", GAINS)
def test_calculate_gain(nl, param):
  assert init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param))

@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 3, 3), (6, 4, 2), (3, 0)])
def test_fans(shape):
  assert init._calculate_fan_in_and_fan_out(Tensor.empty(*shape)) == \
    torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))

def _stats(t: Tensor) -> tuple[float, float, float, float]:
  v = t.numpy().astype(np.float64)
  return v.mean(), v.std(), v.min(), v.max()

RANDOM_INITS = [  # (name, shape, kwargs, expected std, bounds)
  ("uniform_", (200, 100), {"a": -2.0, "b": 4.0}, 6 / math.sqrt(12), (-2, 4)),
  ("normal_", (200, 100), {"mean": 1.0, "std": 0.5}, 0.5, None),
  ("xavier_uniform_", (200, 100), {"gain": 2.0}, 2 * math.sqrt(2 / 300),
   (-2 * math.sqrt(6 / 300), 2 * math.sqrt(6 / 300))),
  ("xavier_normal_", (100, 50, 2), {}, math.sqrt(2 / 300), None),
  ("kaiming_uniform_", (200, 100), {"a": math.sqrt(5)}, math.sqrt(2 / 6) / 10, (-1 / 10, 1 / 10)),
  ("kaiming_uniform_", (200, 100), {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2 / 200), None),
  ("kaiming_normal_", (200, 25, 2, 2), {"nonlinearity": "relu"}, math.sqrt(2 / 100), None),
  ("kaiming_normal_", (200, 100), {"mode": "fan_out", "nonlinearity": "tanh"}, 5 / 3 / math.sqrt(200), None),
  ("trunc_normal_", (200, 100), {"std": 1.0}, 0.8796, (-2, 2)),
  ("trunc_normal_", (200, 100), {"mean": 0.5, "std": 0.2, "a": 0.3, "b": 1.0}, None, (0.3, 1.0)),
]

@needs_values
@pytest.mark.parametrize("name,shape,kw,std,bounds", RANDOM_INITS,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(RANDOM_INITS)])
def test_random_init_statistics(name, shape, kw, std, bounds):
  Tensor.manual_seed(3)
  w = nn.Parameter(Tensor.zeros(*shape))
  out = getattr(init, name)(w, **kw)
  assert out is w and w.requires_grad and w.is_leaf and isinstance(w, nn.Parameter)
  ref = getattr(torch.nn.init, name)(torch.empty(*shape), **kw).double().numpy()
  mean, sd, lo, hi = _stats(w)
  assert abs(mean - ref.mean()) < 0.05 * max(ref.std(), 1e-3) + 0.01
  assert abs(sd - ref.std()) < 0.03 * ref.std()
  if std is not None: assert abs(sd - std) < 0.03 * std
  if bounds is not None: assert bounds[0] - 1e-6 <= lo and hi <= bounds[1] + 1e-6

@needs_values
def test_trunc_normal_distribution():
  # the truncated distribution's quantiles against torch's (same a, b: inverse CDF of the truncated normal)
  Tensor.manual_seed(5)
  w = init.trunc_normal_(Tensor.empty(400, 250), mean=0.2, std=1.5, a=-1.0, b=3.0).numpy()
  torch.manual_seed(5)
  ref = torch.nn.init.trunc_normal_(torch.empty(400, 250), mean=0.2, std=1.5, a=-1.0, b=3.0).numpy()
  q = [0.01, 0.1, 0.5, 0.9, 0.99]
  np.testing.assert_allclose(np.quantile(w, q), np.quantile(ref, q), atol=0.03)
  assert w.min() >= -1.0 and w.max() <= 3.0

def test_deterministic_inits():
  for shape in ((3, 5), (4, 4)):
    assert_like_torch(init.eye_(Tensor.zeros(*shape)), torch.nn.init.eye_(torch.zeros(*shape)))
  for shape, groups in (((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((2, 4, 1, 3, 2), 1), ((4, 4, 3), 2)):
    assert_like_torch(init.dirac_(Tensor.ones(*shape), groups), torch.nn.init.dirac_(torch.ones(*shape), groups))
  assert_like_torch(init.constant_(Tensor.zeros(2, 3), 2.5), torch.nn.init.constant_(torch.zeros(2, 3), 2.5))
  assert_like_torch(init.ones_(Tensor.zeros(2, 3, dtype=dtypes.float16)), torch.ones(2, 3, dtype=torch.float16))
  assert_like_torch(init.zeros_(Tensor.ones(4, dtype=dtypes.int32)), torch.zeros(4, dtype=torch.int32))

@needs_values
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2)])
def test_orthogonal(shape):
  w = init.orthogonal_(nn.Parameter(Tensor.empty(*shape)), gain=2.0)
  m = w.numpy().reshape(shape[0], -1).astype(np.float64)
  small = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
  np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)
  assert w.requires_grad and w.is_leaf

@needs_values
def test_sparse_and_init_keeps_training():
  w = init.sparse_(Tensor.empty(10, 6), sparsity=0.3, std=0.5).numpy()
  assert ((w == 0).sum(0) == 3).all()
  # a layer re-initialised in place still trains: the parameter stays the leaf the graph reaches
  lin = nn.Linear(4, 3)
  init.kaiming_normal_(lin.weight, nonlinearity="relu")
  init.zeros_(lin.bias)
  lin(Tensor(X)).sum().backward()
  assert lin.weight.grad is not None and lin.weight.grad.shape == (3, 4)
  np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 6.0))

def test_init_errors():
  with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dim"):
    init.xavier_uniform_(Tensor.empty(5))
  with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"): init.calculate_gain("gelu")
  with pytest.raises(ValueError, match="negative_slope True not a valid number"):
    init.calculate_gain("leaky_relu", True)
  with pytest.raises(ValueError, match="Mode fan_avg not supported"):
    init.kaiming_uniform_(Tensor.empty(3, 3), mode="fan_avg")
  with pytest.raises(ValueError, match="eye_: Only tensors with 2 dimensions"): init.eye_(Tensor.empty(2, 2, 2))
  with pytest.raises(ValueError, match="dirac_: Only tensors with 3, 4, or 5 dimensions"):
    init.dirac_(Tensor.empty(2, 2))
  with pytest.raises(ValueError, match="dirac_: dim 0 .* must be divisible by groups"):
    init.dirac_(Tensor.empty(3, 2, 2), 2)
  with pytest.raises(ValueError, match="orthogonal_: Only tensors with 2 or more"): init.orthogonal_(Tensor.empty(3))
  with pytest.raises(NotImplementedError, match="generator="): init.normal_(Tensor.empty(3), generator=object())
  with pytest.raises(NotImplementedError, match="uniform_: not implemented for int32"):
    init.uniform_(Tensor.zeros(3, dtype=dtypes.int32))
  with pytest.warns(UserWarning, match="zero-element tensors is a no-op"): init.kaiming_uniform_(Tensor.empty(0, 3))

# ***** nn.utils *****

def _model_grads(seed=0):
  """Two teeny and two torch parameters with the same gradients (one parameter without a gradient)."""
  a, b = sample_array((3, 4), seed) * 3, sample_array((5,), seed + 1)
  tp = [Tensor(a, requires_grad=True), Tensor(b, requires_grad=True), Tensor(b, requires_grad=True)]
  pp = [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)]
  ((tp[0] * tp[0]).sum() + (tp[1] * 2).sum()).backward()
  ((pp[0] * pp[0]).sum() + (pp[1] * 2).sum()).backward()
  return tp, pp

@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (100.0, 2.0), (2.0, 1.0), (0.5, math.inf), (3.0, "inf")])
def test_clip_grad_norm(max_norm, norm_type):
  tp, pp = _model_grads()
  g0 = tp[0].grad
  total = utils.clip_grad_norm_(iter(tp), max_norm, norm_type)   # a generator, as model.parameters()
  ref = torch.nn.utils.clip_grad_norm_(iter(pp), max_norm, norm_type)
  assert tp[0].grad is g0   # in place
  assert_like_torch(total, ref, atol=1e-4, rtol=1e-5, what="total norm")
  for t, p in zip(tp[:2], pp[:2]): assert_like_torch(t.grad, p.grad, atol=1e-5, what="clipped grad")
  assert tp[2].grad is None

@needs_values
def test_clip_grad_norm_in_training_loop():
  # clip between backward and the optimizer step, over model.parameters() (a generator), as torch code does
  from teeny.nn import optim
  lin, ref = nn.Linear(4, 3), torch.nn.Linear(4, 3)
  with torch.no_grad():
    ref.weight.copy_(torch.tensor(lin.weight.numpy())), ref.bias.copy_(torch.tensor(lin.bias.numpy()))
  opt, popt = optim.SGD([lin.weight, lin.bias], lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
  x = X.reshape(6, 4) * 5
  for _ in range(2):
    opt.zero_grad(), popt.zero_grad()
    lin(Tensor(x)).square().mean().backward(), ref(torch.tensor(x)).square().mean().backward()
    n = utils.clip_grad_norm_(iter([lin.weight, lin.bias]), 0.5)
    pn = torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.5)
    opt.step(), popt.step()
    assert_like_torch(n, pn, atol=1e-4, what="total norm")
  assert_like_torch(lin.weight, ref.weight.detach(), atol=1e-5, what="weight after clipped steps")

def test_clip_grad_single_tensor_value_and_errors():
  tp, pp = _model_grads(3)
  assert_like_torch(utils.clip_grad_norm_(tp[0], 1.0), torch.nn.utils.clip_grad_norm_(pp[0], 1.0), atol=1e-4)
  assert utils.clip_grad_value_(tp, 0.7) is None
  torch.nn.utils.clip_grad_value_(pp, 0.7)
  for t, p in zip(tp[:2], pp[:2]): assert_like_torch(t.grad, p.grad, what="clip_grad_value_")
  assert_like_torch(utils.clip_grad_norm_([Tensor.ones(2)], 1.0), torch.nn.utils.clip_grad_norm_([torch.ones(2)], 1.0))
  if not is_null():
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * math.inf).sum().backward()
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
      utils.clip_grad_norm_([x], 1.0, error_if_nonfinite=True)
  with pytest.raises(ValueError, match="norm_type must be a number"): utils.clip_grad_norm_(tp, 1.0, norm_type="fro")
  with pytest.raises(TypeError, match="parameter 0 is a ndarray"): utils.clip_grad_norm_([X], 1.0)

@needs_values
def test_parameters_vector_roundtrip():
  lin, ref = nn.Linear(4, 3), torch.nn.Linear(4, 3)
  with torch.no_grad():
    ref.weight.copy_(torch.tensor(lin.weight.numpy())), ref.bias.copy_(torch.tensor(lin.bias.numpy()))
  v, pv = utils.parameters_to_vector([lin.weight, lin.bias]), torch.nn.utils.parameters_to_vector(ref.parameters())
  assert_like_torch(v, pv)
  (v * Tensor(np.arange(15, dtype=np.float32))).sum().backward()
  assert_like_torch(lin.bias.grad, torch.arange(12, 15, dtype=torch.float32))
  new = sample_array((15,), 50)
  utils.vector_to_parameters(Tensor(new), [lin.weight, lin.bias])
  torch.nn.utils.vector_to_parameters(torch.tensor(new), ref.parameters())
  assert_like_torch(lin.weight, ref.weight.detach()), assert_like_torch(lin.bias, ref.bias.detach())
  assert lin.weight.requires_grad and lin.weight.is_leaf
  with pytest.raises(TypeError, match="expected torch.Tensor, but got: ndarray"):
    utils.vector_to_parameters(new, [lin.bias])
  with pytest.raises(RuntimeError, match="vec must be 1-d with 3 elements"):
    utils.vector_to_parameters(Tensor(new), [lin.bias])

def test_namespaces():
  assert nn.functional is F and nn.init is init and nn.utils is utils
  assert "relu" in F.__all__ and "Tensor" not in F.__all__ and "np" not in F.__all__
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    F.softmax(Tensor(X), dim=-1)   # (no warning with dim)
