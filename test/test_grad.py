"""Gradients of every differentiable Tensor op against PyTorch: forward values and the grad of every input, for a fixed
random upstream gradient. Plus the autograd API: accumulation, detach, no_grad, Tensor.gradient, backward(gradient=)."""
import math
from typing import Callable, Sequence
import numpy as np
import pytest
from teeny import Tensor, dtypes
from helpers import needs_values

torch = pytest.importorskip("torch")

# ---------------------------------------------------------------- helper

def _as_list(x) -> list: return list(x) if isinstance(x, (list, tuple)) else [x]

def helper_test_grad(shapes: Sequence | None, torch_fxn: Callable, teeny_fxn: Callable | None = None, low=-2.0,
                     high=2.0, atol: float = 1e-4, rtol: float = 1e-3, grad_atol: float | None = None,
                     grad_rtol: float | None = None, vals: Sequence[np.ndarray] | None = None, seed: int = 0) -> None:
  """Run `torch_fxn` on torch leaves and `teeny_fxn` (default: the same function) on teeny leaves built from the same
  float32 inputs; multiply each output by a fixed random upstream tensor, sum, backward; compare outputs and grads.
  `low`/`high` may be one bound or one per input. Functions may return one tensor or a sequence of them."""
  teeny_fxn = teeny_fxn or torch_fxn
  rng = np.random.default_rng(seed)
  if vals is None:
    n = len(shapes)
    lows = list(low) if isinstance(low, (list, tuple)) else [low] * n
    highs = list(high) if isinstance(high, (list, tuple)) else [high] * n
    xs = [rng.uniform(lo, hi, size=s).astype(np.float32) for s, lo, hi in zip(shapes, lows, highs)]
  else: xs = [np.asarray(v, dtype=np.float32) for v in vals]
  pt = [torch.tensor(x, requires_grad=True) for x in xs]
  tt = [Tensor(x, requires_grad=True) for x in xs]
  pouts, touts = _as_list(torch_fxn(*pt)), _as_list(teeny_fxn(*tt))
  assert len(pouts) == len(touts), f"torch gave {len(pouts)} outputs, teeny {len(touts)}"
  ups = [rng.standard_normal(tuple(p.shape)).astype(np.float32) for p in pouts]
  sum(((p * torch.tensor(u)).sum() for p, u in zip(pouts, ups)), torch.zeros(())).backward()
  tloss = None
  for t, u in zip(touts, ups):
    assert isinstance(t, Tensor), f"expected a Tensor output, got {type(t).__name__}"
    assert tuple(t.shape) == tuple(u.shape), f"output shape: teeny {tuple(t.shape)} vs torch {tuple(u.shape)}"
    term = (t * Tensor(u)).sum()
    tloss = term if tloss is None else tloss + term
  tloss.backward()
  for i, (t, p) in enumerate(zip(touts, pouts)):
    np.testing.assert_allclose(t.numpy(), p.detach().numpy(), atol=atol, rtol=rtol, err_msg=f"forward output {i}")
  for i, (t, p) in enumerate(zip(tt, pt)):
    if p.grad is None:
      assert t.grad is None or np.all(t.grad.numpy() == 0), f"input {i}: torch has no grad, teeny has a non-zero one"
      continue
    assert t.grad is not None, f"input {i}: torch has a grad, teeny has none"
    assert tuple(t.grad.shape) == tuple(p.shape), f"input {i}: grad shape {t.grad.shape} vs {tuple(p.shape)}"
    assert t.grad.dtype == dtypes.float32, f"input {i}: grad dtype {t.grad.dtype}"
    np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), atol=grad_atol if grad_atol is not None else atol,
                               rtol=grad_rtol if grad_rtol is not None else rtol, err_msg=f"grad of input {i}")

F = torch.nn.functional

# ---------------------------------------------------------------- binary arithmetic

BIN_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((), (3, 4)),
              ((3, 4), ())]

@needs_values
class TestBinary:
  @pytest.mark.parametrize("sa,sb", BIN_SHAPES)
  def test_add(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a + b)
  @pytest.mark.parametrize("sa,sb", BIN_SHAPES)
  def test_sub(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a - b)
  @pytest.mark.parametrize("sa,sb", BIN_SHAPES)
  def test_mul(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a * b)
  @pytest.mark.parametrize("sa,sb", BIN_SHAPES)
  def test_div(self, sa, sb):
    # divisor away from zero: |b| in [0.5, 2] with a random sign
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, sa).astype(np.float32)
    b = (rng.uniform(0.5, 2, sb) * np.where(rng.random(sb) < 0.5, -1, 1)).astype(np.float32)
    helper_test_grad(None, lambda x, y: x / y, vals=[a, b])
  def test_same_tensor_both_operands(self):
    helper_test_grad([(3, 4)], lambda a: a * a + a - a / 3)

  @pytest.mark.parametrize("fxn", [lambda a: a + 2.5, lambda a: 2.5 + a, lambda a: a - 1.5, lambda a: 1.5 - a,
                                   lambda a: a * -3.0, lambda a: -3.0 * a, lambda a: a / 4.0, lambda a: a * 2 + 1])
  def test_scalar_operand(self, fxn): helper_test_grad([(3, 4)], fxn)
  def test_scalar_divided_by_tensor(self): helper_test_grad([(3, 4)], lambda a: 3.0 / a, low=0.5, high=2)

# ---------------------------------------------------------------- unary

def _t_gelu_tanh(x): return F.gelu(x, approximate="tanh")

# (name, torch fxn, teeny fxn or None for the same call, low, high)
UNARY = [
  ("neg", lambda x: -x, None, -2, 2),
  ("exp", lambda x: x.exp(), None, -2, 2),
  ("log", lambda x: x.log(), None, 0.2, 3),
  ("exp2", lambda x: x.exp2(), None, -2, 2),
  ("log2", lambda x: x.log2(), None, 0.2, 3),
  ("sqrt", lambda x: x.sqrt(), None, 0.2, 3),
  ("rsqrt", lambda x: x.rsqrt(), None, 0.2, 3),
  ("sin", lambda x: x.sin(), None, -3, 3),
  ("cos", lambda x: x.cos(), None, -3, 3),
  ("tan", lambda x: x.tan(), None, -1.2, 1.2),
  ("tanh", lambda x: x.tanh(), None, -3, 3),
  ("sigmoid", lambda x: x.sigmoid(), None, -4, 4),
  ("relu", lambda x: x.relu(), None, -2, 2),
  ("leaky_relu", lambda x: F.leaky_relu(x), lambda x: x.leaky_relu(), -2, 2),
  ("leaky_relu_0.2", lambda x: F.leaky_relu(x, 0.2), lambda x: x.leaky_relu(0.2), -2, 2),
  ("elu", lambda x: F.elu(x), lambda x: x.elu(), -3, 2),
  ("elu_alpha", lambda x: F.elu(x, 0.5), lambda x: x.elu(0.5), -3, 2),
  ("gelu", lambda x: F.gelu(x), lambda x: x.gelu(), -3, 3),
  ("gelu_tanh", _t_gelu_tanh, lambda x: x.gelu(approximate="tanh"), -3, 3),
  ("silu", lambda x: F.silu(x), lambda x: x.silu(), -4, 4),
  ("softplus", lambda x: F.softplus(x), lambda x: x.softplus(), -4, 4),
  ("softplus_beta", lambda x: F.softplus(x, beta=2.0), lambda x: x.softplus(beta=2.0), -4, 4),
  ("mish", lambda x: F.mish(x), lambda x: x.mish(), -4, 4),
  ("erf", lambda x: x.erf(), None, -2, 2),
  ("reciprocal", lambda x: x.reciprocal(), None, 0.3, 3),
  ("abs", lambda x: x.abs(), None, -2, 2),
  ("square", lambda x: x.square(), None, -2, 2),
  ("log1p", lambda x: x.log1p(), None, -0.5, 2),
  ("expm1", lambda x: x.expm1(), None, -2, 2),
  ("log10", lambda x: x.log10(), None, 0.2, 3),
  ("logsigmoid", lambda x: F.logsigmoid(x), lambda x: x.logsigmoid(), -4, 4),
  ("hardtanh", lambda x: F.hardtanh(x), lambda x: x.hardtanh(), -2, 2),
  ("softsign", lambda x: F.softsign(x), lambda x: x.softsign(), -3, 3),
]

@needs_values
class TestUnary:
  @pytest.mark.parametrize("name,tfx,nfx,low,high", UNARY, ids=[u[0] for u in UNARY])
  def test_unary(self, name, tfx, nfx, low, high): helper_test_grad([(4, 5)], tfx, nfx, low=low, high=high)
  def test_unary_chain(self):
    helper_test_grad([(3, 4)], lambda x: (x.sin() * x.exp()).tanh().sigmoid() + x.cos().square())
  def test_unary_0d(self): helper_test_grad([()], lambda x: x.exp().sin())

# ---------------------------------------------------------------- pow

@needs_values
class TestPow:
  @pytest.mark.parametrize("e", [2, 3, 0.5, -1, 1, 2.5, -0.5, 0])
  def test_tensor_pow_scalar_positive_base(self, e): helper_test_grad([(3, 4)], lambda x: x ** e, low=0.3, high=2)
  @pytest.mark.parametrize("e", [2, 3, 1])
  def test_tensor_pow_int_scalar_negative_base(self, e): helper_test_grad([(3, 4)], lambda x: x ** e, low=-2, high=-0.3)
  @pytest.mark.parametrize("b", [2.0, 0.5, math.e])
  def test_scalar_pow_tensor(self, b): helper_test_grad([(3, 4)], lambda x: b ** x, low=-2, high=2)
  @pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4))])
  def test_tensor_pow_tensor(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a ** b, low=[0.3, -2], high=[2, 2])
  def test_zero_base_pow_tensor(self):
    # d/db 0**b is 0 (not nan) for b > 0, as in torch; d/da a**b at a=0 is 0 for b > 1
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.5]], dtype=np.float32)
    b = np.array([[1.5, 2.0, 3.0], [2.5, 2.0, 1.5]], dtype=np.float32)
    helper_test_grad(None, lambda x, y: x ** y, vals=[a, b])
  def test_pow_method(self): helper_test_grad([(3, 4), (3, 4)], lambda a, b: a.pow(b), low=[0.3, -1], high=[2, 1])

# ---------------------------------------------------------------- maximum / minimum / where / clip

@needs_values
class TestSelect:
  @pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4))])
  def test_maximum(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a.maximum(b), lambda a, b: a.maximum(b))
  @pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4))])
  def test_minimum(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a.minimum(b), lambda a, b: a.minimum(b))
  def test_maximum_scalar(self):
    helper_test_grad([(3, 4)], lambda a: torch.clamp(a, min=0.25), lambda a: a.maximum(0.25))
  def test_minimum_scalar(self):
    helper_test_grad([(3, 4)], lambda a: torch.clamp(a, max=0.25), lambda a: a.minimum(0.25))

  @pytest.mark.parametrize("op", ["maximum", "minimum"])
  def test_tie_splits_evenly(self, op):
    # equal values from two different leaves: teeny (like torch.maximum) gives each half the upstream gradient
    v = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]], dtype=np.float32)
    a, b = Tensor(v.copy(), requires_grad=True), Tensor(v.copy(), requires_grad=True)
    up = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    (getattr(a, op)(b) * Tensor(up)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 0.5 * up)
    np.testing.assert_allclose(b.grad.numpy(), 0.5 * up)
    pa, pb = torch.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    (getattr(torch, op)(pa, pb) * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), pa.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), pb.grad.numpy())

  def test_tie_with_itself(self):
    # maximum(x, x.detach()*0 + x): both operands are x, so the halves add back up to the full gradient
    v = np.array([1.0, -2.0, 3.0, 0.25], dtype=np.float32)
    x = Tensor(v, requires_grad=True)
    up = np.array([1.0, 2.0, -3.0, 4.0], dtype=np.float32)
    (x.maximum(x.detach() * 0 + x) * Tensor(up)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), up)
    # and only the half through the non-detached first operand when the second one is all detached
    y = Tensor(v, requires_grad=True)
    (y.maximum(y.detach()) * Tensor(up)).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 0.5 * up)

  def test_where_both_branches(self):
    cond = np.random.default_rng(3).random((3, 4)) < 0.5
    helper_test_grad([(3, 4), (3, 4)], lambda a, b: torch.where(torch.tensor(cond), a, b),
                     lambda a, b: Tensor(cond).where(a, b))
  def test_where_broadcast(self):
    cond = np.random.default_rng(4).random((3, 1)) < 0.5
    helper_test_grad([(4,), (3, 4)], lambda a, b: torch.where(torch.tensor(cond), a, b),
                     lambda a, b: Tensor(cond).where(a, b))
  def test_where_scalar_branch(self):
    cond = np.random.default_rng(5).random((3, 4)) < 0.5
    helper_test_grad([(3, 4)], lambda a: torch.where(torch.tensor(cond), a, 0.5), lambda a: Tensor(cond).where(a, 0.5))
  def test_where_cond_from_tensor(self):
    helper_test_grad([(3, 4), (3, 4)], lambda a, b: torch.where(a > b, a * 2, b.exp()),
                     lambda a, b: (a > b).where(a * 2, b.exp()))

  @pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (-0.5, None), (None, 0.7)])
  def test_clip(self, lo, hi): helper_test_grad([(4, 5)], lambda x: x.clip(lo, hi))

# ---------------------------------------------------------------- reductions

# (axis, keepdim) pairs for a (2, 3, 4) input
RED_CASES = [(None, False), (None, True), (0, False), (1, True), (-1, False), ((0, 2), False), ((0, 2), True)]
RED_IDS = [f"{a}-{'keep' if k else 'drop'}" for a, k in RED_CASES]

def _norm_axis(axis): return tuple(range(3)) if axis is None else axis

@needs_values
class TestReduce:
  @pytest.mark.parametrize("axis,keepdim", RED_CASES, ids=RED_IDS)
  @pytest.mark.parametrize("op,top", [("sum", "sum"), ("mean", "mean"), ("max", "amax"), ("min", "amin")])
  def test_reduce(self, op, top, axis, keepdim):
    # max/min: torch.amax/amin split ties evenly like teeny (random data has none anyway)
    helper_test_grad([(2, 3, 4)], lambda x: getattr(x, top)(_norm_axis(axis), keepdim=keepdim),
                     lambda x: getattr(x, op)(axis, keepdim=keepdim))
  def test_reduce_dim_kwarg(self):
    helper_test_grad([(2, 3)], lambda x: x.sum(dim=1) + x.max(dim=1).values * 0 + x.mean(dim=1),
                     lambda x: x.sum(dim=1) + x.max(dim=1) * 0 + x.mean(dim=1))
  @pytest.mark.parametrize("axis,keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
  def test_prod(self, axis, keepdim):
    rng = np.random.default_rng(7)
    v = (rng.uniform(0.5, 1.5, (2, 3, 4)) * np.where(rng.random((2, 3, 4)) < 0.3, -1, 1)).astype(np.float32)
    tfx = (lambda x: x.prod()) if axis is None else (lambda x: x.prod(axis, keepdim=keepdim))
    if axis is None and keepdim: tfx = lambda x: x.prod().reshape(1, 1, 1)
    helper_test_grad(None, tfx, lambda x: x.prod(axis, keepdim=keepdim), vals=[v])
  @pytest.mark.parametrize("axis,keepdim,correction", [(None, False, 1), (None, True, 0), (1, True, 1), (1, False, 0),
                                                       ((0, 2), False, 1), ((0, 2), True, 0)])
  def test_var(self, axis, keepdim, correction):
    helper_test_grad([(2, 3, 4)], lambda x: x.var(_norm_axis(axis), keepdim=keepdim, correction=correction),
                     lambda x: x.var(axis, keepdim=keepdim, correction=correction))
  @pytest.mark.parametrize("axis,keepdim", [(None, False), (1, True), ((0, 2), False)])
  def test_std(self, axis, keepdim):
    helper_test_grad([(2, 3, 4)], lambda x: x.std(_norm_axis(axis), keepdim=keepdim),
                     lambda x: x.std(axis, keepdim=keepdim))
  @pytest.mark.parametrize("axis,keepdim", [(None, False), (None, True), (0, True), (-1, False), ((0, 2), False)])
  def test_logsumexp(self, axis, keepdim):
    helper_test_grad([(2, 3, 4)], lambda x: x.logsumexp(_norm_axis(axis), keepdim=keepdim),
                     lambda x: x.logsumexp(axis, keepdim=keepdim), low=-4, high=4)
  @pytest.mark.parametrize("axis", [0, 1, -1])
  def test_softmax(self, axis): helper_test_grad([(2, 3, 4)], lambda x: x.softmax(axis), low=-4, high=4)
  @pytest.mark.parametrize("axis", [0, 1, -1])
  def test_log_softmax(self, axis): helper_test_grad([(2, 3, 4)], lambda x: x.log_softmax(axis), low=-4, high=4)
  def test_softmax_masked_inf(self):
    # -inf entries (attention masks) get exactly zero gradient and no nan
    mask = np.random.default_rng(6).random((3, 5)) < 0.4
    mask[:, 0] = False
    helper_test_grad([(3, 5)], lambda x: x.masked_fill(torch.tensor(mask), -math.inf).softmax(-1),
                     lambda x: Tensor(mask).where(-math.inf, x).softmax(-1))
  def test_softmax_large_values(self):
    helper_test_grad([(3, 5)], lambda x: x.softmax(-1), low=50, high=60)

  @pytest.mark.parametrize("op", ["max", "min"])
  @pytest.mark.parametrize("axis,keepdim", [(None, False), (1, False), (0, True), (-1, True)])
  def test_max_min_ties_split_evenly(self, op, axis, keepdim):
    # many tied extremes: amax/amin and max/min over all dims spread the gradient evenly among them (torch.amax/amin,
    # torch.max()); max/min over one int dim give it whole to the first extreme element (torch.max(dim))
    v = np.array([[[1, 3, 3, 0], [2, 2, -1, 2], [0, 0, 0, 0]], [[3, 1, 3, 3], [-1, -1, 5, -1], [4, 4, 4, 4]]],
                 dtype=np.float32)
    tfx = (lambda x: getattr(x, "a" + op)(_norm_axis(axis), keepdim=keepdim))
    helper_test_grad(None, tfx, lambda x: getattr(x, "a" + op)(axis, keepdim=keepdim), vals=[v])
    if axis is None: helper_test_grad(None, lambda x: getattr(x, op)(), lambda x: getattr(x, op)(), vals=[v])
    else: helper_test_grad(None, lambda x: getattr(x, op)(axis, keepdim=keepdim).values,
                           lambda x: getattr(x, op)(axis, keepdim=keepdim), vals=[v])

  @pytest.mark.parametrize("op", ["sum", "mean", "max"])
  def test_big_reduce(self, op):
    # >= 2**15 elements to a few outputs: the reduce is split in two kernels (partials, then their reduce)
    helper_test_grad([(2, 1 << 15)], lambda x: getattr(x, "amax" if op == "max" else op)(1),
                     lambda x: getattr(x, op)(1),
                     atol=1e-3, rtol=1e-3)
  def test_cumprod(self): helper_test_grad([(3, 6)], lambda x: x.cumprod(1), low=0.5, high=1.5)
  def test_cummax(self):
    helper_test_grad([(3, 6)], lambda x: x.cummax(1).values)

  @pytest.mark.parametrize("n,axis", [(5, 0), (7, 1), (300, 1), (513, 0)])
  def test_cumsum(self, n, axis):
    shape = (n, 3) if axis == 0 else (2, n)
    helper_test_grad([shape], lambda x: x.cumsum(axis), atol=1e-3, rtol=1e-3)

# ---------------------------------------------------------------- movement

@needs_values
class TestMovement:
  @pytest.mark.parametrize("shape,new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (4, -1)), ((6,), (1, 2, 1, 3)),
                                         ((3, 4), (12,))])
  def test_reshape(self, shape, new): helper_test_grad([shape], lambda x: x.reshape(new) * 2)
  @pytest.mark.parametrize("order", [(1, 0, 2), (2, 0, 1), (0, 1, 2)])
  def test_permute(self, order): helper_test_grad([(2, 3, 4)], lambda x: x.permute(order) * 2)
  @pytest.mark.parametrize("shape,new", [((3, 1), (3, 4)), ((1, 4), (2, 3, 4)), ((4,), (3, 4)), ((1, 1), (2, 5)),
                                         ((), (3,))])
  def test_expand(self, shape, new): helper_test_grad([shape], lambda x: x.expand(new) * 2)
  def test_expand_minus_one(self): helper_test_grad([(3, 1)], lambda x: x.expand(-1, 5))

  @pytest.mark.parametrize("pad", [(1, 2), (1, 0, 0, 2), (0, 1, 2, 3), (-1, 0), (1, -1, -1, 2), (-1, -1, 0, 0)])
  def test_pad(self, pad): helper_test_grad([(3, 4)], lambda x: F.pad(x, pad), lambda x: x.pad(pad))
  @pytest.mark.parametrize("value", [1.5, -2.0])
  def test_pad_value(self, value):
    helper_test_grad([(3, 4)], lambda x: F.pad(x, (1, 2, 2, 0), value=value),
                     lambda x: x.pad((1, 2, 2, 0), value=value))
  def test_pad_pairs(self):
    helper_test_grad([(3, 4)], lambda x: F.pad(x, (2, 0, 1, 1)), lambda x: x.pad(((1, 1), (2, 0))))

  @pytest.mark.parametrize("arg", [((0, 2), (1, 3)), ((1, 2), None), (None, (0, 4))])
  def test_shrink(self, arg):
    sl = tuple(slice(None) if a is None else slice(a[0], a[1]) for a in arg)
    helper_test_grad([(3, 4)], lambda x: x[sl], lambda x: x.shrink(arg))
  def test_empty_slice_gets_zero_grad(self):
    # a zero-size piece contributes nothing to the loss, but the leaf still gets a (zero) gradient, as in torch
    helper_test_grad([(3, 4)], lambda x: x[0:0, 1:3].sum(), lambda x: x.shrink(((0, 0), (1, 3))).sum())
  @pytest.mark.parametrize("axes", [0, 1, (0, 1), -1])
  def test_flip(self, axes):
    helper_test_grad([(3, 4)], lambda x: x.flip((axes,) if isinstance(axes, int) else axes), lambda x: x.flip(axes))
  @pytest.mark.parametrize("shape,reps", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (3, 2)), ((2, 3), (2, 1, 2))])
  def test_repeat(self, shape, reps): helper_test_grad([shape], lambda x: x.repeat(*reps))
  def test_repeat_interleave(self):
    helper_test_grad([(2, 3)], lambda x: x.repeat_interleave(2, dim=1), lambda x: x.repeat_interleave(2, 1))

  @pytest.mark.parametrize("dim", [0, 1, -1])
  def test_cat(self, dim):
    shapes = [tuple(k + 1 if i == dim % 2 else 3 for i in range(2)) for k in range(3)]
    helper_test_grad(shapes, lambda a, b, c: torch.cat([a, b, c], dim), lambda a, b, c: a.cat(b, c, dim=dim))
  def test_cat_same_tensor(self):
    helper_test_grad([(2, 3)], lambda a: torch.cat([a, a * 2, a], 0), lambda a: a.cat(a * 2, a, dim=0))
  @pytest.mark.parametrize("dim", [0, 1, 2, -1])
  def test_stack(self, dim):
    helper_test_grad([(2, 3), (2, 3), (2, 3)], lambda a, b, c: torch.stack([a, b, c], dim),
                     lambda a, b, c: Tensor.stack(a, b, c, dim=dim))
  @pytest.mark.parametrize("sizes,dim", [(2, 0), ([1, 3, 1], 0), (3, 1), ([2, 2], -1)])
  def test_split(self, sizes, dim):
    helper_test_grad([(5, 4)], lambda x: x.split(sizes, dim), lambda x: x.split(sizes, dim))
  @pytest.mark.parametrize("chunks,dim", [(2, 0), (3, 1), (5, 0)])
  def test_chunk(self, chunks, dim): helper_test_grad([(5, 4)], lambda x: x.chunk(chunks, dim))
  def test_split_partial_use(self):
    # only some pieces reach the loss: the others get zero gradient
    helper_test_grad([(6, 2)], lambda x: x.split(2, 0)[1] * 3)
  def test_unbind(self): helper_test_grad([(3, 2)], lambda x: x.unbind(1))

  @pytest.mark.parametrize("dim", [None, 0, 2, -1])
  def test_squeeze(self, dim):
    helper_test_grad([(1, 3, 1, 2)], (lambda x: x.squeeze()) if dim is None else (lambda x: x.squeeze(dim)))
  @pytest.mark.parametrize("dim", [0, 1, 2, -1])
  def test_unsqueeze(self, dim): helper_test_grad([(3, 2)], lambda x: x.unsqueeze(dim))
  @pytest.mark.parametrize("d0,d1", [(0, 1), (1, 2), (0, -1)])
  def test_transpose(self, d0, d1): helper_test_grad([(2, 3, 4)], lambda x: x.transpose(d0, d1))
  def test_T(self): helper_test_grad([(2, 3)], lambda x: x.T * 2)
  def test_flatten(self): helper_test_grad([(2, 3, 4)], lambda x: x.flatten(1))

# ---------------------------------------------------------------- indexing

def _idx(index, to_tensor):
  """Convert the np.ndarray parts of an index to torch/teeny tensors."""
  if isinstance(index, tuple): return tuple(_idx(i, to_tensor) for i in index)
  return to_tensor(index) if isinstance(index, np.ndarray) else index

def _torch_getitem(x, index):
  """torch has no negative slice steps: pick those dims with index_select first (indices without None/... only)."""
  index = index if isinstance(index, tuple) else (index,)
  rest = []
  for d, i in enumerate(index):
    if isinstance(i, slice) and (i.step or 1) < 0:
      x = x.index_select(d, torch.tensor(np.arange(x.shape[d])[i].copy()))
      i = slice(None)
    rest.append(i)
  return x[_idx(tuple(rest), lambda a: torch.tensor(a, dtype=torch.int64))]

GETITEM = [
  ("int", 1), ("neg_int", -1), ("int_int", (1, 2)), ("slice", slice(1, 3)),
  ("slice_step", (slice(None), slice(0, 5, 2))),
  ("neg_step", slice(None, None, -1)), ("neg_step2", (slice(3, 0, -2), slice(None, None, -3))),
  ("neg_step_dim1", (slice(None), slice(-2, None, -1))),
  ("none", (None, 1)), ("none_mid", (slice(None), None, slice(1, 3))), ("ellipsis", (Ellipsis, 2)),
  ("ellipsis_none", (0, Ellipsis, None)), ("mixed", (slice(1, None), -2)),
  ("mixed_step", (slice(None, None, 3), slice(1, None, 2))),
  ("tensor", np.array([2, 0, 1])), ("tensor_repeat", np.array([1, 1, 3, 1, 0])), ("tensor_neg", np.array([-1, 0, -1])),
  ("tensor_2d", np.array([[0, 3], [3, 3]])), ("tensor_dim1", (slice(None), np.array([4, 0, 4]))),
  ("tensor_pair", (np.array([0, 0, 2]), np.array([1, 1, 4]))), ("tensor_int", (np.array([3, 3]), 2)),
  ("tensor_slice_tensor", (np.array([1, 1]), slice(None), np.array([0, 2]))),
]

@needs_values
class TestGetitem:
  @pytest.mark.parametrize("name,index", GETITEM, ids=[g[0] for g in GETITEM])
  def test_getitem(self, name, index):
    shape = (4, 5, 3) if name == "tensor_slice_tensor" else (4, 5)
    helper_test_grad([shape], lambda x: _torch_getitem(x, index),
                     lambda x: x[_idx(index, lambda a: Tensor(a.astype(np.int32)))])
  def test_getitem_list(self):
    helper_test_grad([(4, 5)], lambda x: x[[0, 0, 3]], lambda x: x[[0, 0, 3]])
  def test_getitem_twice(self):
    helper_test_grad([(4, 5)], lambda x: x[1:3] * 2 + x[torch.tensor([1, 1])].sum(0),
                     lambda x: x[1:3] * 2 + x[Tensor(np.array([1, 1], dtype=np.int32))].sum(0))

  @pytest.mark.parametrize("dim", [0, 1])
  def test_gather_repeated(self, dim):
    idx = np.array([[0, 0, 2, 1], [3, 3, 3, 0], [1, 0, 1, 1]]) if dim == 0 else \
      np.array([[0, 0, 2], [3, 3, 3], [1, 0, 1]])
    helper_test_grad([(4, 4)], lambda x: x.gather(dim, torch.tensor(idx)),
                     lambda x: x.gather(dim, Tensor(idx.astype(np.int32))))

# ---------------------------------------------------------------- matmul / einsum

@needs_values
class TestMatmul:
  @pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                     ((2, 1, 3, 4), (3, 4, 2)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                     ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((1, 4), (4, 1))])
  def test_matmul(self, sa, sb): helper_test_grad([sa, sb], lambda a, b: a @ b)
  def test_matmul_self(self): helper_test_grad([(4, 4)], lambda a: a @ a.T)
  def test_dot(self): helper_test_grad([(3, 4), (4, 2)], lambda a, b: a.matmul(b), lambda a, b: a.dot(b))
  def test_linear(self):
    helper_test_grad([(3, 4), (4, 5), (5,)], lambda x, w, b: x @ w + b, lambda x, w, b: x.linear(w, b))

  @pytest.mark.parametrize("formula,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(4,), (4,)]),
    ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ij,j->i", [(3, 4), (4,)]), ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
  ])
  def test_einsum(self, formula, shapes):
    helper_test_grad(shapes, lambda *a: torch.einsum(formula, *a), lambda *a: Tensor.einsum(formula, *a))

# ---------------------------------------------------------------- casts, dropout, misc

@needs_values
class TestMisc:
  def test_cast_roundtrip(self):
    helper_test_grad([(3, 4)], lambda x: (x.double() * 3).float(),
                     lambda x: (x.cast(dtypes.float64) * 3).cast(dtypes.float32))
  def test_cast_float64_leaf(self):
    v = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x = Tensor(v, requires_grad=True)
    assert x.dtype == dtypes.float64
    (x.cast(dtypes.float32).exp().sum()).backward()
    assert x.grad.dtype == dtypes.float64
    np.testing.assert_allclose(x.grad.numpy(), np.exp(v), rtol=1e-5)
  def test_float16_leaf(self):
    v = np.random.default_rng(0).uniform(-1, 1, (3, 4)).astype(np.float16)
    x = Tensor(v, requires_grad=True)
    (x.exp() * x).sum().backward()
    assert x.grad.dtype == dtypes.float16
    v32 = v.astype(np.float32)
    np.testing.assert_allclose(x.grad.numpy().astype(np.float32), np.exp(v32) * (1 + v32), rtol=1e-2, atol=1e-2)
  def test_sum_float64_accumulator(self):
    v = np.random.default_rng(0).uniform(-1, 1, (3, 4)).astype(np.float32)
    x = Tensor(v, requires_grad=True)
    (x * x).sum(dtype=dtypes.float64).backward()
    assert x.grad.dtype == dtypes.float32
    np.testing.assert_allclose(x.grad.numpy(), 2 * v, rtol=1e-6)
  def test_cast_to_int_stops_gradient(self):
    x = Tensor(np.array([1.5, -2.5, 3.0], dtype=np.float32), requires_grad=True)
    (x * 2 + x.cast(dtypes.int32).cast(dtypes.float32)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
  def test_dropout_eval_is_identity(self):
    assert not Tensor.training
    helper_test_grad([(3, 4)], lambda x: F.dropout(x, 0.5, training=False), lambda x: x.dropout(0.5))
  def test_contiguous_clone(self): helper_test_grad([(3, 4)], lambda x: x.contiguous() * x.clone())
  def test_mlp(self):
    def fx(x, w1, b1, w2):
      return ((x @ w1 + b1).relu() @ w2).log_softmax(-1)
    helper_test_grad([(4, 3), (3, 5), (5,), (5, 2)], fx)
  def test_layer_norm_like(self):
    helper_test_grad([(3, 6)],
                     lambda x: (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True, correction=0) + 1e-5).sqrt())

# ---------------------------------------------------------------- the autograd API

def _leaf(shape=(3, 4), seed=0) -> tuple[np.ndarray, Tensor]:
  v = np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)
  return v, Tensor(v, requires_grad=True)

class TestAutogradAPI:
  @needs_values
  def test_detach_stops_gradient(self):
    v, x = _leaf()
    (x * x.detach()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), v, rtol=1e-6)
  @needs_values
  def test_detach_only_path(self):
    _, x = _leaf()
    y = Tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    (x.detach() * y).sum().backward()
    assert x.grad is None
    assert y.grad is not None

  @needs_values
  def test_accumulates_across_backward_calls(self):
    v, x = _leaf()
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * v + 3, rtol=1e-5, atol=1e-6)
  @needs_values
  def test_accumulate_same_graph_twice(self):
    v, x = _leaf()
    loss = (x.exp()).sum()
    loss.backward()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(v), rtol=1e-5)

  @needs_values
  def test_gradient_does_not_touch_grad(self):
    v, x = _leaf()
    w = np.random.default_rng(1).uniform(-1, 1, (3, 4)).astype(np.float32)
    y = Tensor(w, requires_grad=True)
    gx, gy = (x * y + x.sin()).sum().gradient(x, y)
    assert x.grad is None and y.grad is None
    np.testing.assert_allclose(gx.numpy(), w + np.cos(v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gy.numpy(), v, rtol=1e-6)
  @needs_values
  def test_gradient_of_unused_target_is_zero(self):
    _, x = _leaf()
    z = Tensor(np.ones((2,), dtype=np.float32), requires_grad=True)
    gz, = (x * 2).sum().gradient(z)
    assert gz.shape == (2,)
    np.testing.assert_equal(gz.numpy(), np.zeros(2, dtype=np.float32))
  @needs_values
  def test_gradient_with_upstream(self):
    v, x = _leaf()
    up = np.random.default_rng(2).uniform(-1, 1, (3, 4)).astype(np.float32)
    gx, = (x * x).gradient(x, gradient=Tensor(up))
    np.testing.assert_allclose(gx.numpy(), 2 * v * up, rtol=1e-5, atol=1e-6)
    assert x.grad is None

  @needs_values
  def test_second_order(self):
    x = Tensor(np.array([1.0, -2.0, 3.0], dtype=np.float32), requires_grad=True)
    g, = (x * x * x).sum().gradient(x)
    g2, = g.sum().gradient(x)  # differentiate the (still lazy) gradient graph again
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0, 27.0], rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), [6.0, -12.0, 18.0], rtol=1e-6)

  def test_backward_non_scalar_raises(self):
    _, x = _leaf()
    with pytest.raises(RuntimeError): (x * 2).backward()
  def test_gradient_non_scalar_raises(self):
    _, x = _leaf()
    with pytest.raises(RuntimeError): (x * 2).gradient(x)
  @needs_values
  def test_backward_non_scalar_with_gradient(self):
    v, x = _leaf()
    up = np.random.default_rng(3).uniform(-1, 1, (3, 4)).astype(np.float32)
    (x.exp() * 2).backward(gradient=Tensor(up))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(v) * up, rtol=1e-5, atol=1e-6)
  @needs_values
  def test_backward_scalar_with_gradient(self):
    v, x = _leaf()
    (x * x).sum().backward(gradient=Tensor(3.0))
    np.testing.assert_allclose(x.grad.numpy(), 6 * v, rtol=1e-5)
  def test_backward_gradient_shape_mismatch_raises(self):
    _, x = _leaf()
    with pytest.raises((ValueError, RuntimeError)): (x * 2).backward(gradient=Tensor(np.ones((4, 3), dtype=np.float32)))

  @needs_values
  def test_backward_after_realize(self):
    v, x = _leaf()
    out = (x * x.exp()).sum()
    np.testing.assert_allclose(out.numpy(), (v * np.exp(v)).sum(), rtol=1e-5)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(v) * (1 + v), rtol=1e-5, atol=1e-6)
  @needs_values
  def test_backward_after_intermediate_realize(self):
    v, x = _leaf()
    h = x.sin()
    h.realize()
    (h * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(v), rtol=1e-5, atol=1e-6)
  @needs_values
  def test_backward_non_scalar_after_realize(self):
    v, x = _leaf()
    out = x * 3
    out.numpy()
    out.backward(gradient=Tensor(np.ones((3, 4), dtype=np.float32)))
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 4), 3.0, dtype=np.float32))

  def test_no_grad_builds_no_path(self):
    _, x = _leaf()
    with Tensor.no_grad():
      y = x * 2 + 1
    assert not y.requires_grad
    try: y.sum().backward()  # torch raises here (nothing requires grad); either way x must get no gradient
    except RuntimeError: pass
    assert x.grad is None
  @needs_values
  def test_no_grad_part_is_constant(self):
    v, x = _leaf()
    with Tensor.no_grad():
      c = x * 5
    (x * c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 5 * v, rtol=1e-5, atol=1e-6)
  def test_no_grad_decorator_restores(self):
    @Tensor.no_grad()
    def f(t): return t * 2
    _, x = _leaf()
    assert not f(x).requires_grad
    assert (x * 2).requires_grad

  @needs_values
  def test_grad_only_on_leaves(self):
    _, x = _leaf()
    h = x * 2
    assert h.requires_grad
    (h.exp()).sum().backward()
    assert x.grad is not None
    assert h.grad is None
  def test_requires_grad_propagates(self):
    _, x = _leaf()
    c = Tensor(np.ones((3, 4), dtype=np.float32))
    assert not c.requires_grad
    assert (x + c).requires_grad and (c * x).requires_grad
    assert not (c * 2).requires_grad
    assert not x.detach().requires_grad
  @needs_values
  def test_leaf_without_requires_grad_gets_no_grad(self):
    v, x = _leaf()
    c = Tensor(v.copy())
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_allclose(x.grad.numpy(), v, rtol=1e-6)
  @needs_values
  @pytest.mark.parametrize("make", [
    lambda: Tensor.rand(3, 4, requires_grad=True), lambda: Tensor.randn(3, 4, requires_grad=True),
    lambda: Tensor.uniform(3, 4, low=-1, high=1, requires_grad=True), lambda: Tensor.eye(3, 4, requires_grad=True),
    lambda: Tensor.kaiming_uniform(3, 4, requires_grad=True), lambda: Tensor.full((3, 4), 1.5, requires_grad=True),
    lambda: Tensor.arange(12).reshape(3, 4).float().requires_grad_(), lambda: (Tensor.ones(3, 4) * 2).requires_grad_(),
  ], ids=["rand", "randn", "uniform", "eye", "kaiming_uniform", "full", "arange_requires_grad_", "lazy_requires_grad_"])
  def test_lazy_leaf(self, make):
    # leaves made by a lazy (not yet realized) computation are leaves like any other: they get .grad
    x = make()
    y = Tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    (x * x * y).sum().backward()
    assert x.grad is not None, "lazy leaf got no gradient"
    v = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), v * v, rtol=1e-5, atol=1e-6)
  def test_int_tensor_cannot_require_grad(self):
    with pytest.raises(RuntimeError): Tensor(np.array([1, 2, 3], dtype=np.int32), requires_grad=True)

@needs_values
@pytest.mark.parametrize("chain", ["exp_tanh_abs", "sin_mul_add", "sigmoid_log"])
def test_max_gradient_of_a_computed_value(chain):
  """max's gradient picks the elements equal to the max. The value it reduces is computed (transcendentals, fused
  multiply-adds): if the forward max and the backward's comparison each recomputed it in their own kernel, a vectorised
  loop (libmvec's expf) and a scalar one gave different bits, no element equalled the max, and the gradient was 0 or
  nan (found by the long hypothesis profile: abs(exp(tanh(w))).max())."""
  fns = {"exp_tanh_abs": (lambda x: x.tanh().exp().abs(), lambda x: x.tanh().exp().abs()),
         "sin_mul_add": (lambda x: (x.sin() * 1.7 + 0.3) * x, lambda x: (x.sin() * 1.7 + 0.3) * x),
         "sigmoid_log": (lambda x: (x.sigmoid() + 0.5).log(), lambda x: (x.sigmoid() + 0.5).log())}
  f, ft = fns[chain]
  for seed in range(40):
    a = np.random.default_rng(seed).uniform(-1.5, 1.5, size=(4,)).astype(np.float32)
    r = np.float32(np.random.default_rng(seed + 1).uniform(-2, 2))
    w = Tensor(a.copy(), requires_grad=True)
    (f(w).max(0) * r).backward()
    tw = torch.tensor(a.astype(np.float64), requires_grad=True)
    (ft(tw).max(0).values * float(r)).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=2e-3, atol=2e-4, err_msg=f"seed {seed}")
