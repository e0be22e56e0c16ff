"""torch.Tensor methods and nn modules from the seventh fuzz pass against torch 2.x CPU: erfc (accurate tail), dist,
hardshrink, prelu, split_with_sizes, sum_to_size, narrow_copy, is_nonzero, is_same_size, isreal, adjoint/mH/H,
diagonal_scatter/select_scatter/slice_scatter, nextafter, matrix_exp, polygamma, mvlgamma (teeny/tensor_math.py), and
nn.LPPool1d/2d/3d, nn.FeatureAlphaDropout, nn.Embedding.from_pretrained.

`compare_torch` (helpers.py) compares values, dtypes and gradients; under DEV=NULL it still builds and renders every
graph, and tests that read values are marked `needs_values`. Few shapes, shared between tests (a cold kernel cache
compiles each new kernel once)."""
from __future__ import annotations
import math
import numpy as np
import pytest
from helpers import assert_like_torch, compare_torch, needs_values, raises_like_torch
from teeny import Tensor, dtypes, nn

torch = pytest.importorskip("torch")

A = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)       # the shared (3, 4) operand
ROW = np.random.default_rng(1).standard_normal((4,)).astype(np.float32)
SQ = np.random.default_rng(2).standard_normal((2, 3, 3)).astype(np.float32)

# ---- erfc

ERFC_X = np.array([-3, -1, -0.2, 0, 0.3, 0.5, 0.7, 1, 2, 2.5, 4, 6, 8.5, 9], np.float32)

@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_erfc_values_and_grad(dt):
  # relative accuracy in the tail, where 1 - erf(x) would lose every digit (erfc(9) ~ 4e-37)
  compare_torch(lambda x: x.erfc(), lambda x: x.erfc(), [ERFC_X.astype(dt)], atol=0, rtol=1e-6 if dt == np.float32
                else 1e-13, grad_atol=1e-7, grad_rtol=1e-5)

def test_erfc_specials_and_dtypes():
  compare_torch(lambda x: x.erfc(), lambda x: x.erfc(), [np.array([np.inf, -np.inf, np.nan, 30.0], np.float32)],
                grad=False)
  compare_torch(lambda x: x.erfc(), lambda x: x.erfc(), [np.array([-2, 0, 1, 3], np.int32)])
  ti, pt = Tensor(ERFC_X[:6]).cast(dtypes.float16), torch.tensor(ERFC_X[:6]).half()
  assert_like_torch(ti.erfc(), pt.erfc(), atol=1e-3, rtol=1e-3)

# ---- dist, hardshrink, prelu

@pytest.mark.parametrize("p", [2, 1, 0, 3, math.inf, -math.inf])
def test_dist(p):
  compare_torch(lambda a, b: a.dist(b, p), lambda a, b: a.dist(b, p), [A, ROW], grad=p != 0, atol=1e-5)

def test_dist_errors():
  raises_like_torch(lambda: Tensor([1, 2]).dist(Tensor([1, 3])),
                    lambda: torch.tensor([1, 2]).dist(torch.tensor([1, 3])), RuntimeError, "floating")
  raises_like_torch(lambda: Tensor(A).dist(Tensor(ROW[:3])), lambda: torch.tensor(A).dist(torch.tensor(ROW[:3])))

def test_hardshrink():
  compare_torch(lambda x: x.hardshrink(0.7), lambda x: x.hardshrink(0.7), [A])
  compare_torch(lambda x: x.hardshrink(), lambda x: x.hardshrink(), [np.array([np.nan, 0.5, -0.5, 0.51], np.float32)],
                grad=False)
  raises_like_torch(lambda: Tensor([1, 2]).hardshrink(), lambda: torch.tensor([1, 2]).hardshrink(), NotImplementedError)

def test_prelu():
  compare_torch(lambda x, w: x.prelu(w), lambda x, w: x.prelu(w), [A, np.array([0.1, 0.2, -0.3, 0.4], np.float32)])
  compare_torch(lambda x, w: x.prelu(w), lambda x, w: x.prelu(w), [A, np.array([0.25], np.float32)])
  compare_torch(lambda x, w: x.prelu(w), lambda x, w: x.prelu(w), [ROW, np.array(0.25, np.float32)])
  raises_like_torch(lambda: Tensor(A).prelu(Tensor([0.1, 0.2])), lambda: torch.tensor(A).prelu(torch.tensor([.1, .2])),
                    RuntimeError, "channel")
  raises_like_torch(lambda: Tensor([1, -2]).prelu(Tensor([0.1])),
                    lambda: torch.tensor([1, -2]).prelu(torch.tensor([.1])), RuntimeError, "dtype")

# ---- splitting, reducing to a size, copies, metadata

def test_split_with_sizes():
  compare_torch(lambda x: x.split_with_sizes([1, 3], 1), lambda x: x.split_with_sizes([1, 3], 1), [A])
  compare_torch(lambda x: x.split_with_sizes([0, 3]), lambda x: x.split_with_sizes([0, 3]), [A])
  raises_like_torch(lambda: Tensor(A).split_with_sizes([1, 1]), lambda: torch.tensor(A).split_with_sizes([1, 1]),
                    RuntimeError, "sum exactly to 3")

def test_sum_to_size():
  for size in [(1, 4), (4,), (3, 1), (1, 1), (3, 4)]:
    compare_torch(lambda x: x.sum_to_size(*size), lambda x: x.sum_to_size(*size), [A], atol=1e-5)
  compare_torch(lambda x: x.sum_to_size((1, 4)), lambda x: x.sum_to_size((1, 4)), [A.astype(np.int32)])
  raises_like_torch(lambda: Tensor(A).sum_to_size(3, 3), lambda: torch.tensor(A).sum_to_size(3, 3), RuntimeError,
                    "expandable")

def test_narrow_copy():
  # (gradients against narrow().clone(): torch 2.11 has no derivative for narrow_copy, and 2.13's is zeros for a
  # negative start)
  for d, st, n in ((1, 1, 2), (0, 2, 1), (0, -1, 1)):
    compare_torch(lambda x: x.narrow_copy(d, st, n), lambda x: x.narrow_copy(d, st, n), [A], grad=False)
    compare_torch(lambda x: x.narrow_copy(d, st, n), lambda x: x.narrow(d, st, n).clone(), [A])
  raises_like_torch(lambda: Tensor(A).narrow_copy(0, 1, 5), lambda: torch.tensor(A).narrow_copy(0, 1, 5), RuntimeError)

@needs_values
def test_is_nonzero():
  for v in (2.0, 0.0, -0.0, math.nan):
    assert Tensor([v]).is_nonzero() == torch.tensor([v]).is_nonzero()
  assert Tensor(3).is_nonzero() and not Tensor(False).is_nonzero()

def test_is_nonzero_errors_and_sizes():
  for shape in [(0,), (2,)]:
    raises_like_torch(lambda: Tensor.ones(*shape).is_nonzero(), lambda: torch.ones(*shape).is_nonzero(), RuntimeError,
                      "ambiguous")
  assert Tensor(A).is_same_size(Tensor.zeros(3, 4)) and not Tensor(A).is_same_size(Tensor(ROW))
  assert_like_torch(Tensor(A).isreal(), torch.tensor(A).isreal())
  assert_like_torch(Tensor(1).isreal(), torch.tensor(1).isreal())

def test_adjoint_mH_H():
  compare_torch(lambda x: x.adjoint(), lambda x: x.adjoint(), [A])
  compare_torch(lambda x: x.mH, lambda x: x.mH, [SQ])
  compare_torch(lambda x: x.H, lambda x: x.H, [A])
  compare_torch(lambda x: x.H, lambda x: x.H, [np.array(2.0, np.float32)], quiet=True)   # (torch warns on 0-D)
  raises_like_torch(lambda: Tensor(ROW).adjoint(), lambda: torch.tensor(ROW).adjoint(), RuntimeError, "matrices")
  raises_like_torch(lambda: Tensor(ROW).mH, lambda: torch.tensor(ROW).mH, RuntimeError, "mH")
  raises_like_torch(lambda: Tensor(SQ).H, lambda: torch.tensor(SQ).H, RuntimeError, "mH")

# ---- the *_scatter ops

@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 1, 0), (2, 1, 0)])
def test_diagonal_scatter(offset, d1, d2):
  n = torch.tensor(A).diagonal(offset, d1, d2).shape[0]
  compare_torch(lambda x, s: x.diagonal_scatter(s, offset, d1, d2), lambda x, s: x.diagonal_scatter(s, offset, d1, d2),
                [A, ROW[:n].copy()])

def test_diagonal_scatter_batched_and_errors():
  src = np.arange(6, dtype=np.float32).reshape(3, 2)
  compare_torch(lambda x, s: x.diagonal_scatter(s, 0, 0, 2), lambda x, s: x.diagonal_scatter(s, 0, 0, 2),
                [SQ, src])
  raises_like_torch(lambda: Tensor(A).diagonal_scatter(Tensor(ROW[:2])),
                    lambda: torch.tensor(A).diagonal_scatter(torch.tensor(ROW[:2])), RuntimeError, "size")

@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (0, 0)])
def test_select_scatter(dim, index):
  src = ROW if dim == 0 else ROW[:3].copy()
  compare_torch(lambda x, s: x.select_scatter(s, dim, index), lambda x, s: x.select_scatter(s, dim, index), [A, src])

def test_select_scatter_errors():
  raises_like_torch(lambda: Tensor(A).select_scatter(Tensor(ROW), 0, 5),
                    lambda: torch.tensor(A).select_scatter(torch.tensor(ROW), 0, 5), IndexError, "out of range")
  raises_like_torch(lambda: Tensor(A).select_scatter(Tensor(ROW[:3]), 0, 1),
                    lambda: torch.tensor(A).select_scatter(torch.tensor(ROW[:3]), 0, 1), RuntimeError, "size")

@pytest.mark.parametrize("dim,start,end,step", [(1, 1, None, 2), (0, -1, None, 1), (1, 0, 4, 3), (0, None, None, 1),
                                                (1, 2, 2, 1)])
def test_slice_scatter(dim, start, end, step):
  shape = list(torch.tensor(A).narrow(0, 0, 3)[(slice(None),) * dim + (slice(start, end, step),)].shape)
  src = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
  compare_torch(lambda x, s: x.slice_scatter(s, dim, start, end, step),
                lambda x, s: x.slice_scatter(s, dim, start, end, step), [A, src])

def test_slice_scatter_errors():
  raises_like_torch(lambda: Tensor(A).slice_scatter(Tensor(A), 1, step=0),
                    lambda: torch.tensor(A).slice_scatter(torch.tensor(A), 1, step=0), RuntimeError, "positive")
  raises_like_torch(lambda: Tensor(A).slice_scatter(Tensor(A), 1, 0, 2),
                    lambda: torch.tensor(A).slice_scatter(torch.tensor(A), 1, 0, 2), RuntimeError, "size")

# ---- nextafter

NA_X = np.array([0, 0, 1, 1, -2, 1, 2, -3, -0.0, np.inf, 1e-45], np.float32)
NA_Y = np.array([1, -1, 0, -0.0, np.inf, np.nan, 2, -3, 1, 0, 0], np.float32)

@needs_values
@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_nextafter_bits(dt):
  px, py = torch.tensor(NA_X).to(dt), torch.tensor(NA_Y).to(dt)
  td = getattr(dtypes, str(dt).split(".")[-1])
  out = Tensor(NA_X).cast(td).nextafter(Tensor(NA_Y).cast(td))
  want = px.nextafter(py)
  assert out.dtype == td
  # bit for bit (signed zeros, subnormals)
  assert np.array_equal(out.cast(dtypes.float64).numpy(), want.double().numpy(), equal_nan=True)
  assert np.array_equal(np.signbit(out.cast(dtypes.float64).numpy()), np.signbit(want.double().numpy()))

def test_nextafter_promotes_and_errors():
  out = Tensor(NA_X[:4]).nextafter(Tensor(NA_Y[:4]).cast(dtypes.float64))
  assert out.dtype == dtypes.float64 and not Tensor(NA_X, requires_grad=True).nextafter(Tensor(NA_Y)).requires_grad
  raises_like_torch(lambda: Tensor([1, 2]).nextafter(Tensor([1, 3])),
                    lambda: torch.tensor([1, 2]).nextafter(torch.tensor([1, 3])), NotImplementedError)

# ---- matrix_exp, polygamma, mvlgamma

@needs_values
@pytest.mark.parametrize("scale,dt", [(1.0, np.float32), (6.0, np.float64)])
def test_matrix_exp(scale, dt):
  compare_torch(lambda x: x.matrix_exp(), lambda x: x.matrix_exp(), [(SQ * scale).astype(dt)],
                atol=1e-5 if dt == np.float32 else 1e-9, rtol=1e-5 if dt == np.float32 else 1e-10,
                grad=dt == np.float32, grad_atol=1e-4, grad_rtol=1e-4)

def test_matrix_exp_errors():
  raises_like_torch(lambda: Tensor(ROW).matrix_exp(), lambda: torch.tensor(ROW).matrix_exp(), RuntimeError)
  raises_like_torch(lambda: Tensor(A).matrix_exp(), lambda: torch.tensor(A).matrix_exp(), RuntimeError)

PG_X = np.array([0.1, 0.5, 1, 2.5, 7, 30, -0.5, -2.5, -3.7, 1e-3, 1e4], np.float32)

@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma(n):
  compare_torch(lambda x: x.polygamma(n), lambda x: x.polygamma(n), [PG_X], atol=0, rtol=2e-6, grad_atol=0,
                grad_rtol=1e-4)
  # (torch's float64 trigamma is itself only good to ~1e-9)
  compare_torch(lambda x: x.polygamma(n), lambda x: x.polygamma(n), [PG_X.astype(np.float64)], atol=0, rtol=1e-8,
                grad=False)

def test_polygamma_poles_and_errors():
  x = np.array([0, -2, -0.0], np.float32)
  compare_torch(lambda x: x.polygamma(2), lambda x: x.polygamma(2), [x], grad=False)
  compare_torch(lambda x: x.polygamma(3), lambda x: x.polygamma(3), [x], grad=False)
  compare_torch(lambda x: x.polygamma(0), lambda x: x.polygamma(0), [PG_X[:6]], rtol=1e-5, atol=1e-6)
  compare_torch(lambda x: x.polygamma(1), lambda x: x.polygamma(1), [np.array([1, 2, 3], np.int32)], rtol=1e-6)
  with pytest.raises(RuntimeError, match="negative"): Tensor(PG_X).polygamma(-1)

def test_mvlgamma():
  x = np.array([1.5, 2, 3.7, 10], np.float32)
  compare_torch(lambda x: x.mvlgamma(3), lambda x: x.mvlgamma(3), [x], rtol=1e-5, atol=1e-5)
  compare_torch(lambda x: x.mvlgamma(1), lambda x: x.mvlgamma(1), [x], rtol=1e-5, atol=1e-5)
  raises_like_torch(lambda: Tensor(x).mvlgamma(0), lambda: torch.tensor(x).mvlgamma(0), RuntimeError, "p has to be")

# ---- the in-place-free empty and 0-d cases

def test_empty_and_zero_dim():
  e = np.zeros((0, 4), np.float32)
  compare_torch(lambda x: x.erfc(), lambda x: x.erfc(), [e])
  compare_torch(lambda x: x.hardshrink(), lambda x: x.hardshrink(), [e])
  compare_torch(lambda x: x.sum_to_size(1, 4), lambda x: x.sum_to_size(1, 4), [e])
  compare_torch(lambda x: x.erfc(), lambda x: x.erfc(), [np.array(0.7, np.float32)])
  compare_torch(lambda x, s: x.slice_scatter(s, 0), lambda x, s: x.slice_scatter(s, 0), [e, e])

# ---- nn modules

@pytest.mark.parametrize("n,p", [(1, 2.0), (2, 3.0), (3, 1.0)])
def test_lppool(n, p):
  shape = {1: (2, 3, 4), 2: (1, 3, 4, 4), 3: (1, 2, 4, 4, 4)}[n]
  x = np.abs(np.random.default_rng(4).standard_normal(shape)).astype(np.float32) + 0.1
  m, pm = getattr(nn, f"LPPool{n}d")(p, 2), getattr(torch.nn, f"LPPool{n}d")(p, 2)
  compare_torch(lambda t: m(t), lambda t: pm(t), [x], atol=1e-5)
  m2, pm2 = getattr(nn, f"LPPool{n}d")(p, 3, stride=1), getattr(torch.nn, f"LPPool{n}d")(p, 3, stride=1)
  compare_torch(lambda t: m2(t), lambda t: pm2(t), [x], atol=1e-5, grad=False)

def test_feature_alpha_dropout():
  x = np.random.default_rng(5).standard_normal((4, 6, 3)).astype(np.float32)
  m = nn.FeatureAlphaDropout(0.5)
  assert_like_torch(m(Tensor(x)), torch.tensor(x))   # eval mode: the input
  with pytest.raises(ValueError): nn.FeatureAlphaDropout(1.5)

@needs_values
def test_feature_alpha_dropout_train():
  x = np.random.default_rng(5).standard_normal((4, 6, 3)).astype(np.float32)
  with Tensor.train(): out = nn.FeatureAlphaDropout(0.5)(Tensor(x)).numpy()
  p, alpha = 0.5, 1.7580993408473766
  a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
  b = a * alpha * p
  kept = np.isclose(out, a * x + b, atol=1e-5)
  dropped = np.isclose(out, -a * alpha + b, atol=1e-5)
  assert (kept | dropped).all()
  assert (kept.all(-1) | dropped.all(-1)).all()     # whole channels together
  assert kept.any() and dropped.any()

def test_embedding_from_pretrained():
  w = np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32)
  idx = np.array([[0, 4], [2, 2]], np.int64)
  e, pe = nn.Embedding.from_pretrained(Tensor(w)), torch.nn.Embedding.from_pretrained(torch.tensor(w))
  assert isinstance(e, nn.Embedding) and not e.weight.requires_grad and (e.num_embeddings, e.embedding_dim) == (5, 3)
  assert_like_torch(e(Tensor(idx)), pe(torch.tensor(idx)))
  e2 = nn.Embedding.from_pretrained(Tensor(w), freeze=False, padding_idx=-1)
  pe2 = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, padding_idx=-1)
  assert e2.padding_idx == pe2.padding_idx == 4 and e2.weight.requires_grad
  e2(Tensor(idx)).sum().backward()
  pe2(torch.tensor(idx)).sum().backward()
  assert_like_torch(e2.weight.grad, pe2.weight.grad)
  assert_like_torch(e2.weight, pe2.weight)          # the padding row is not zeroed (torch neither)
  with pytest.raises(ValueError, match="2-dimensional"): nn.Embedding.from_pretrained(Tensor(ROW))

# ---- more edge cases: src of another dtype, 0-d src, a zero distance's gradient, the in-place forms

def test_scatter_src_dtype_and_zero_dim():
  src = np.arange(3, dtype=np.int32)
  compare_torch(lambda x, s: x.diagonal_scatter(s), lambda x, s: x.diagonal_scatter(s), [A, src])
  compare_torch(lambda x, s: x.select_scatter(s, 1, 0), lambda x, s: x.select_scatter(s, 1, 0),
                [A, src.astype(np.float64)], no_grad=(1,))
  compare_torch(lambda x, s: x.select_scatter(s, 0, 2), lambda x, s: x.select_scatter(s, 0, 2),
                [ROW, np.array(5.0, np.float32)])

def test_dist_zero_gradient():
  compare_torch(lambda a, b: a.dist(b), lambda a, b: a.dist(b), [A, A.copy()])

@needs_values
def test_inplace_forms():
  for name, args, x in [("erfc", (), A), ("polygamma", (1,), np.abs(A) + 1), ("mvlgamma", (2,), np.abs(A) + 2),
                        ("nextafter", (np.zeros_like(ROW),), A)]:
    t, p = Tensor(x), torch.tensor(x)
    targs = [Tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    pargs = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    assert getattr(t[1], name + "_")(*targs) is not None
    getattr(p[1], name + "_")(*pargs)
    assert_like_torch(t, p, atol=1e-6, rtol=1e-5, what=name + "_")
  raises_like_torch(lambda: Tensor([1, 2]).erfc_(), lambda: torch.tensor([1, 2]).erfc_(), RuntimeError, "cast")
