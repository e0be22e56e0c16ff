"""Shape and structure ops against torch: cat/stack (the legacy empty 1-D rule, dtype promotion, errors), split/chunk
edge cases, eye's argument checks, and outer/ger, tensordot, trace, diff, tile, movedim/moveaxis, narrow,
swapdims/swapaxes, unflatten, rot90, kron, cross, cartesian_prod, unique and unique_consecutive: values, dtypes,
shapes, gradients, views, negative dims and torch's errors, with hypothesis over random shapes and arguments. Under
DEV=NULL every graph is still built and realized; value checks (and the data-dependent unique) skip there."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Tensor, dtypes
from helpers import (assert_like_torch, compare_torch, is_null, needs_values, raises_like_torch, sample_array,
                     teeny_and_torch, teeny_dtype)

torch = pytest.importorskip("torch")
# (modest: every new shape compiles new kernels, and a cold kernel cache pays for each)
HYP = settings(max_examples=15, deadline=None)

def grad_check(fn, *arrays, tfn=None, atol=1e-5):
  """compare_torch with fn on both sides (tfn on teeny's where it differs) at this file's tolerances and upstream."""
  compare_torch(tfn or fn, fn, arrays, atol=atol, rtol=1e-5, grad_atol=atol, grad_rtol=1e-5, seed=0)

shapes = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple)
pos_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)

# ---------------------------------------------------------------- split / chunk

class TestSplitChunk:
  @pytest.mark.parametrize("shape,chunks,dim", [((0, 4), 2, 0), ((0, 4), 5, 1), ((3,), 5, 0), ((5,), 3, 0),
                                                ((6,), 4, 0),
                                                ((0,), 3, 0), ((2, 0), 3, -1), ((4, 3), 2, -1), ((1, 1), 1, -2)])
  def test_chunk_cases(self, shape, chunks, dim):
    t, p = teeny_and_torch(sample_array(shape))
    outs, refs = t.chunk(chunks, dim), p.chunk(chunks, dim)
    assert len(outs) == len(refs)
    assert_like_torch(outs, refs)

  @pytest.mark.parametrize("shape,size,dim", [((0,), 2, 0), ((0, 3), 2, 0), ((4, 3), 2, -1), ((0,), 0, 0), ((5,), 7, 0),
                                              ((5, 2), [1, 0, 4], 0), ((4,), (2, 2), 0)])
  def test_split_cases(self, shape, size, dim):
    t, p = teeny_and_torch(sample_array(shape))
    outs, refs = t.split(size, dim), p.split(size, dim)
    assert len(outs) == len(refs)
    assert_like_torch(outs, refs)

  @HYP
  @given(shape=shapes, chunks=st.integers(1, 6), data=st.data())
  def test_chunk_split_random(self, shape, chunks, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = sample_array(shape)
    t, p = teeny_and_torch(a)
    outs, refs = t.chunk(chunks, dim), p.chunk(chunks, dim)
    assert len(outs) == len(refs)
    assert_like_torch(outs, refs)
    size = data.draw(st.integers(1 if shape[dim] else 0, 5))
    outs, refs = t.split(size, dim), p.split(size, dim)
    assert len(outs) == len(refs)
    assert_like_torch(outs, refs)

  def test_views_and_grad(self):
    x = Tensor.zeros(3, 4).contiguous().realize()
    c = x.chunk(2, 1)[1]
    c[...] = 7.0
    if not is_null(): np.testing.assert_array_equal(x.numpy()[:, 2:], 7.0)
    grad_check(lambda a: a.chunk(3, -1)[1] * 2, sample_array((2, 7)))
    grad_check(lambda a: a.split([1, 3], 0)[1], sample_array((4, 2)))

  @pytest.mark.parametrize("fn,pfn,exc,match", [
    (lambda t: t.chunk(0), lambda p: p.chunk(0), RuntimeError, "chunks must be greater than 0, got 0"),
    (lambda t: t.chunk(-1), lambda p: p.chunk(-1), RuntimeError, "chunks must be greater than 0, got -1"),
    (lambda t: t.chunk(2.0), lambda p: p.chunk(2.0), TypeError, "chunks must be an int"),
    (lambda t: t.split(0), lambda p: p.split(0), RuntimeError, "split_size can only be 0"),
    (lambda t: t.split(-1), lambda p: p.split(-1), RuntimeError, "non-negative"),
    (lambda t: t.split([1, 2]), lambda p: p.split([1, 2]), RuntimeError, "sum exactly to 4"),
    (lambda t: t.split([5, -1]), lambda p: p.split([5, -1]), RuntimeError, "non-negative"),
    (lambda t: t.split(2, 1), lambda p: p.split(2, 1), IndexError, "dim 1 is out of range"),
    (lambda t: t.sum().chunk(2), lambda p: p.sum().chunk(2), RuntimeError, "at least a 1-dimensional"),
    (lambda t: t.sum().split(1), lambda p: p.sum().split(1), RuntimeError, "at least a 1-dimensional"),
  ])
  def test_errors(self, fn, pfn, exc, match):
    t, p = teeny_and_torch(sample_array((4,)))
    raises_like_torch(lambda: fn(t), lambda: pfn(p), exc, match)

# ---------------------------------------------------------------- cat / stack / eye

DTS = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32]

class TestCatStack:
  @pytest.mark.parametrize("shapes,dim", [([(0,), (2, 3)], 0), ([(0,), (2, 3)], 1), ([(2, 3), (0,)], -2),
                                          ([(2, 3), (0,), (2, 3)], 0), ([(0,), (0,)], 0), ([(0,), (0,)], 1),
                                          ([(0,), (4,)], 0), ([(2, 0), (2, 3)], 1), ([(0, 3), (2, 3)], 0)])
  def test_legacy_empty_1d(self, shapes, dim):
    arrs = [sample_array(s, i) for i, s in enumerate(shapes)]
    assert_like_torch(Tensor.cat([Tensor(a) for a in arrs], dim=dim),
                      torch.cat([torch.tensor(a) for a in arrs], dim=dim))

  def test_legacy_empty_1d_promotes_and_grads(self):
    assert_like_torch(Tensor.cat(Tensor.zeros(0, dtype=dtypes.float64), Tensor.ones(2, 3, dtype=dtypes.int32)),
                      torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 3, dtype=torch.int32)]))
    # (the skipped tensor is not in the graph: its .grad stays None, where torch's is an empty tensor)
    grad_check(lambda b: torch.cat([torch.zeros(0), b]), sample_array((2, 3)),
               tfn=lambda b: Tensor.cat(Tensor.zeros(0), b))

  def test_promotion_dtypes(self):
    for d1 in DTS:
      for d2 in DTS:
        a, b = torch.tensor([1, 0, 1]).to(d1), torch.tensor([0, 1]).to(d2)
        ta, tb = Tensor.ones(3, dtype=teeny_dtype(d1)), Tensor.ones(2, dtype=teeny_dtype(d2))
        assert Tensor.cat(ta, tb).dtype == teeny_dtype(torch.cat([a, b]).dtype), (d1, d2)
        assert Tensor.stack(ta[:2], tb).dtype == teeny_dtype(torch.stack([a[:2], b]).dtype), (d1, d2)

  @pytest.mark.parametrize("d1,d2", [(torch.bool, torch.uint8), (torch.bool, torch.float32), (torch.uint8, torch.int8),
                                     (torch.int8, torch.int32), (torch.int32, torch.int64),
                                     (torch.int64, torch.float16),
                                     (torch.float16, torch.bfloat16), (torch.bool, torch.bool),
                                     (torch.float16, torch.float16)])
  def test_promotion_values(self, d1, d2):
    a, b = torch.tensor([1, 0, 1]).to(d1), torch.tensor([0, 1]).to(d2)
    ta, tb = Tensor(a.float().numpy()).cast(teeny_dtype(d1)), Tensor(b.float().numpy()).cast(teeny_dtype(d2))
    assert_like_torch(Tensor.cat(ta, tb), torch.cat([a, b]))
    assert_like_torch(Tensor.stack(ta[:2], tb), torch.stack([a[:2], b]))

  @HYP
  @given(shape=pos_shapes, n=st.integers(1, 3), data=st.data())
  def test_cat_stack_random(self, shape, n, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrs = [sample_array(tuple(data.draw(st.integers(0, 3)) if i == dim % len(shape) else s
                               for i, s in enumerate(shape)), k) for k in range(n)]
    grad_check(lambda *xs: torch.cat(xs, dim), *arrs, tfn=lambda *xs: Tensor.cat(*xs, dim=dim))
    sdim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    same = [sample_array(shape, k) for k in range(n)]   # (values only: stack's gradient is cat's)
    assert_like_torch(Tensor.stack(*[Tensor(a) for a in same], dim=sdim),
                      torch.stack([torch.tensor(a) for a in same], dim=sdim))

  def test_non_contiguous(self):
    a = sample_array((3, 4))
    ta, pa = teeny_and_torch(a)
    assert_like_torch(Tensor.cat(ta.T, ta[1:].T, dim=1), torch.cat([pa.T, pa[1:].T], dim=1))
    assert_like_torch(Tensor.stack([ta.T, ta.T.flip(0)], dim=-1), torch.stack([pa.T, pa.T.flip(0)], dim=-1))

  @pytest.mark.parametrize("tfn,pfn,exc,match", [
    (lambda: Tensor.cat([]), lambda: torch.cat([]), ValueError, "non-empty list"),
    (lambda: Tensor.stack([]), lambda: torch.stack([]), RuntimeError, "non-empty list"),
    (lambda: Tensor.cat(Tensor.ones(2, 3), Tensor.ones(2)), lambda: torch.cat([torch.ones(2, 3), torch.ones(2)]),
     RuntimeError, "same number of dimensions: got 2 and 1"),
    (lambda: Tensor.cat(Tensor.ones(2, 3), Tensor.ones(3, 2)), lambda: torch.cat([torch.ones(2, 3), torch.ones(3, 2)]),
     RuntimeError, "must match except in dim 0"),
    (lambda: Tensor.cat(Tensor.zeros(0), Tensor(1.0)), lambda: torch.cat([torch.zeros(0), torch.tensor(1.0)]),
     RuntimeError, r"zero-dimensional tensor \(at position 1\)"),
    (lambda: Tensor.cat(Tensor.zeros(0), Tensor.ones(2, 3), dim=2),
     lambda: torch.cat([torch.zeros(0), torch.ones(2, 3)], dim=2), IndexError, "dim 2 is out of range"),
    (lambda: Tensor.stack(Tensor.ones(2), Tensor.ones(3)), lambda: torch.stack([torch.ones(2), torch.ones(3)]),
     RuntimeError, "equal size"),
    (lambda: Tensor.stack(Tensor.ones(2), Tensor.ones(2), dim=2),
     lambda: torch.stack([torch.ones(2), torch.ones(2)], dim=2), IndexError, "dim 2 is out of range"),
    (lambda: Tensor.stack(Tensor.ones(2), 3), lambda: torch.stack([torch.ones(2), 3]), TypeError, "expected Tensors"),
    (lambda: Tensor.cat(Tensor.ones(2), 3), lambda: torch.cat([torch.ones(2), 3]), TypeError, "expected Tensors"),
  ])
  def test_errors(self, tfn, pfn, exc, match):
    raises_like_torch(tfn, pfn, exc, match)

class TestEye:
  @pytest.mark.parametrize("args", [(0,), (3,), (2, 0), (0, 3), (2, 4), (4, 2)])
  def test_values(self, args):
    assert_like_torch(Tensor.eye(*args), torch.eye(*args))
    assert_like_torch(Tensor.eye(*args, dtype=dtypes.int32), torch.eye(*args, dtype=torch.int32))

  @pytest.mark.parametrize("args,exc,match", [((-1,), RuntimeError, "n must be greater or equal to 0, got -1"),
                                              ((2, -3), RuntimeError, "m must be greater or equal to 0, got -3"),
                                              ((2.5,), TypeError, "n must be an int")])
  def test_errors(self, args, exc, match):
    raises_like_torch(lambda: Tensor.eye(*args), lambda: torch.eye(*args), exc, match)

# ---------------------------------------------------------------- products

class TestOuterKron:
  @HYP
  @given(n=st.integers(0, 4), m=st.integers(0, 4), ger=st.booleans())
  def test_outer_random(self, n, m, ger):
    grad_check(lambda a, b: a.ger(b) if ger else a.outer(b), sample_array((n,), 1), sample_array((m,), 2))

  @pytest.mark.parametrize("d1,d2", [(torch.int64, torch.float32), (torch.int32, torch.int64), (torch.bool, torch.bool),
                                     (torch.float16, torch.float16), (torch.uint8, torch.int8)])
  def test_outer_dtypes(self, d1, d2):
    a, b = torch.tensor([1, 0, 2]).to(d1), torch.tensor([3, 1]).to(d2)
    ta, tb = Tensor(a.float().numpy()).cast(teeny_dtype(d1)), Tensor(b.float().numpy()).cast(teeny_dtype(d2))
    assert_like_torch(ta.outer(tb), a.outer(b))
    assert_like_torch(ta.kron(tb), a.kron(b))

  def test_outer_non_contiguous(self):
    t, p = teeny_and_torch(sample_array((3, 4)))
    assert_like_torch(t[:, 1].outer(t[2, ::2]), p[:, 1].outer(p[2, ::2]))

  @pytest.mark.parametrize("sa,sb", [((2, 3), (3, 1)), ((), ()), ((), (3,)), ((2, 2), (4,)), ((0, 2), (3, 2))])
  def test_outer_errors_and_kron_shapes(self, sa, sb):
    if len(sa) != 1 or len(sb) != 1:
      raises_like_torch(lambda: Tensor(sample_array(sa)).outer(Tensor(sample_array(sb))),
                        lambda: torch.tensor(sample_array(sa)).outer(torch.tensor(sample_array(sb))), RuntimeError,
                        "outer: expected a 1-D argument")
    grad_check(lambda a, b: a.kron(b), sample_array(sa, 1), sample_array(sb, 2))

  @HYP
  @given(sa=st.lists(st.integers(0, 3), max_size=3).map(tuple), sb=st.lists(st.integers(0, 3), max_size=3).map(tuple))
  def test_kron_random(self, sa, sb):
    grad_check(lambda a, b: a.kron(b), sample_array(sa, 1), sample_array(sb, 2))

class TestTensordot:
  @HYP
  @given(free_a=st.lists(st.integers(0, 3), max_size=2), free_b=st.lists(st.integers(0, 3), max_size=2),
         con=st.lists(st.integers(1, 3), max_size=2), data=st.data())
  def test_random(self, free_a, free_b, con, data):
    # the contracted dims scattered among the free ones, in a random order on each side (some of size 1 on one side:
    # torch broadcasts those)
    na, nb = len(free_a) + len(con), len(free_b) + len(con)
    pa = data.draw(st.permutations(range(na)))
    pb = data.draw(st.permutations(range(nb)))
    ones = [data.draw(st.sampled_from([None, "a", "b"])) for _ in con]
    sa, sb = [0] * na, [0] * nb
    for i, s in enumerate(free_a): sa[pa[len(con) + i]] = s
    for i, s in enumerate(free_b): sb[pb[len(con) + i]] = s
    for i, s in enumerate(con): sa[pa[i]], sb[pb[i]] = (1 if ones[i] == "a" else s), (1 if ones[i] == "b" else s)
    da, db = [pa[i] - na * data.draw(st.booleans()) for i in range(len(con))], list(pb[:len(con)])
    grad_check(lambda a, b: torch.tensordot(a, b, dims=(da, db)), sample_array(tuple(sa), 1),
               sample_array(tuple(sb), 2),
               tfn=lambda a, b: a.tensordot(b, dims=(da, db)), atol=1e-4)

  @pytest.mark.parametrize("sa,sb,dims", [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0),
                                          ((), (3, 4), 0), ((3,), (3,), 1), ((2, 0), (0, 4), 1), ((2, 3), (2, 3), 2)])
  def test_int_dims(self, sa, sb, dims):
    grad_check(lambda a, b: torch.tensordot(a, b, dims), sample_array(sa, 1), sample_array(sb, 2),
               tfn=lambda a, b: Tensor.tensordot(a, b, dims), atol=1e-4)

  def test_default_and_dtypes(self):
    a, b = sample_array((2, 3, 4), 1), sample_array((3, 4, 2), 2)
    assert_like_torch(Tensor(a).tensordot(Tensor(b)), torch.tensordot(torch.tensor(a), torch.tensor(b)), atol=1e-4)
    ai, bi = sample_array((2, 3), 1, np.int32), sample_array((3, 4), 2, np.int32)
    assert_like_torch(Tensor(ai).tensordot(Tensor(bi), 1), torch.tensordot(torch.tensor(ai), torch.tensor(bi), 1))
    ah, bh = a.astype(np.float16), b.astype(np.float16)
    assert_like_torch(Tensor(ah).tensordot(Tensor(bh), 2), torch.tensordot(torch.tensor(ah), torch.tensor(bh), 2),
                      atol=1e-2, rtol=1e-2)
    t, p = teeny_and_torch(a)
    assert_like_torch(t.permute(2, 0, 1).tensordot(t.permute(2, 1, 0), dims=([0, 2], [0, 1])),
                      torch.tensordot(p.permute(2, 0, 1), p.permute(2, 1, 0), dims=([0, 2], [0, 1])), atol=1e-4)
    # a plain int per side (numpy's axes=(1, 0)) means one dim each (torch wants lists)
    assert_like_torch(Tensor(a[0]).tensordot(Tensor(b[:, :, 0]), dims=(0, 0)),
                      torch.tensordot(torch.tensor(a[0]), torch.tensor(b[:, :, 0]), dims=([0], [0])), atol=1e-4)

  @pytest.mark.parametrize("sa,sb,kw,exc,match", [
    ((2, 3), (3, 4), dict(dims=-1), RuntimeError, "dims >= 0"),
    ((2, 3), (3, 4), dict(dims=3), RuntimeError, "dims=3 is more than the dims"),
    ((2, 3), (4, 4), dict(dims=1), RuntimeError, "contracted dimensions need to match"),
    ((2, 3), (3, 4), dict(dims=([1, 0], [0])), RuntimeError, "same length"),
    ((2, 3), (3, 3), dict(dims=([1, 1], [0, 1])), RuntimeError, "dim 1 appears multiple times"),
    ((2, 3), (3, 4), dict(dims=([5], [0])), IndexError, "dim 5 is out of range"),
    ((2, 3), (3, 4), dict(dims=1.5), RuntimeError, "dims to be an int or a pair"),
  ])
  def test_errors(self, sa, sb, kw, exc, match):
    raises_like_torch(lambda: Tensor(sample_array(sa)).tensordot(Tensor(sample_array(sb)), **kw),
                      lambda: torch.tensordot(torch.tensor(sample_array(sa)), torch.tensor(sample_array(sb)),
                                              **kw), exc, match)

  def test_dtype_mismatch(self):
    raises_like_torch(lambda: Tensor.ones(2, 3).tensordot(Tensor.ones(3, dtype=dtypes.int64), 1),
                      lambda: torch.tensordot(torch.ones(2, 3), torch.ones(3, dtype=torch.int64), 1), RuntimeError,
                      "same dtype")

class TestTrace:
  @HYP
  @given(n=st.integers(0, 4), m=st.integers(0, 4))
  def test_random(self, n, m):
    a = sample_array((n, m))
    t = Tensor(a, requires_grad=True)
    assert_like_torch(t.trace(), torch.tensor(a).trace())
    t.trace().backward()   # (the diagonal's mask: torch 2.11 also marked a tall matrix's [2, 0])
    assert_like_torch(t.grad, torch.tensor(np.eye(n, m, dtype=np.float32)))

  @pytest.mark.parametrize("dt", [np.int32, np.uint8, np.int64, np.float16])
  def test_dtypes(self, dt):
    t, p = teeny_and_torch(sample_array((3, 4), 0, dt))
    # (torch 2.11 has no float16 trace on the CPU: its reference sums in float32 and rounds)
    ref = (lambda x: x.float().trace().half()) if dt == np.float16 else (lambda x: x.trace())
    assert_like_torch(t.trace(), ref(p), atol=1e-2)
    assert_like_torch(t.T.trace(), ref(p.T), atol=1e-2)

  @pytest.mark.parametrize("shape,exc,match", [((3,), RuntimeError, "expected a matrix"),
                                               ((2, 2, 2), RuntimeError, "expected a matrix"),
                                               ((), RuntimeError, "expected a matrix")])
  def test_errors(self, shape, exc, match):
    raises_like_torch(lambda: Tensor(sample_array(shape)).trace(), lambda: torch.tensor(sample_array(shape)).trace(),
                      exc, match)
    raises_like_torch(lambda: Tensor.ones(2, 2, dtype=dtypes.bool).trace(),
                      lambda: torch.ones(2, 2, dtype=torch.bool).trace(), NotImplementedError, "bool")

class TestCross:
  @HYP
  @given(shape=st.lists(st.integers(1, 2), min_size=0, max_size=2).map(tuple), data=st.data())
  def test_random(self, shape, data):
    pos = data.draw(st.integers(0, len(shape)))
    sa = shape[:pos] + (3,) + shape[pos:]
    sb = tuple(1 if data.draw(st.booleans()) else s for s in sa[:pos]) + (3,) + \
      tuple(1 if data.draw(st.booleans()) else s for s in sa[pos + 1:])
    dim = pos - len(sa) * data.draw(st.booleans())
    grad_check(lambda a, b: a.cross(b, dim=dim), sample_array(sa, 1), sample_array(sb, 2))

  @pytest.mark.filterwarnings("ignore::UserWarning")
  @pytest.mark.parametrize("sa,sb", [((4, 3), (4, 3)), ((3, 4), (3, 4)), ((3, 3), (3, 3)), ((3, 1), (3, 4)),
                                     ((2, 3, 3), (1, 3, 3)), ((0, 3), (0, 3))])
  def test_default_dim(self, sa, sb):
    grad_check(lambda a, b: a.cross(b), sample_array(sa, 1), sample_array(sb, 2))

  def test_dtypes_and_views(self):
    for dt, tol in ((np.float16, 1e-2), (np.int32, 0), (np.float64, 1e-9)):
      a, b = sample_array((2, 3), 1, dt), sample_array((2, 3), 2, dt)
      assert_like_torch(Tensor(a).cross(Tensor(b), dim=1), torch.tensor(a).cross(torch.tensor(b), dim=1), atol=tol)
    t, p = teeny_and_torch(sample_array((3, 4)))
    assert_like_torch(t.T.cross(t.flip(1).T, dim=-1), p.T.cross(p.flip(1).T, dim=-1))

  @pytest.mark.filterwarnings("ignore::UserWarning")
  @pytest.mark.parametrize("sa,sb,dim,match", [((2, 4), (2, 4), None, "no dimension of size 3"),
                                               ((4, 3), (4, 3), 0, "dimension 0 must have length 3. Got 4 and 4"),
                                               ((4, 3), (3,), None, "same number of dimensions"),
                                               ((3, 1), (1, 3), None, "must have length 3. Got 3 and 1"),
                                               ((4, 3), (3, 3), None, "do not broadcast")])
  def test_errors(self, sa, sb, dim, match):
    raises_like_torch(lambda: Tensor(sample_array(sa)).cross(Tensor(sample_array(sb)), dim=dim),
                      lambda: torch.tensor(sample_array(sa)).cross(torch.tensor(sample_array(sb)), dim=dim),
                      RuntimeError, match)
    raises_like_torch(lambda: Tensor(sample_array((3,))).cross(Tensor(sample_array((3,))), dim=1),
                      lambda: torch.tensor(sample_array((3,))).cross(torch.tensor(sample_array((3,))), dim=1),
                      IndexError, "out of range")
    raises_like_torch(lambda: Tensor.ones(3).cross(Tensor.ones(3, dtype=dtypes.int32)),
                      lambda: torch.ones(3).cross(torch.ones(3, dtype=torch.int32)), RuntimeError, "same dtype")
    raises_like_torch(lambda: Tensor.ones(3, dtype=dtypes.bool).cross(Tensor.ones(3, dtype=dtypes.bool)),
                      lambda: torch.ones(3, dtype=torch.bool).cross(torch.ones(3, dtype=torch.bool)),
                      NotImplementedError, "bool")

# ---------------------------------------------------------------- movement

class TestMovement:
  @HYP
  @given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple), data=st.data())
  def test_movedim_random(self, shape, data):
    n = len(shape)
    k = data.draw(st.integers(0, n))
    src = data.draw(st.permutations(range(n)))[:k] if n else []
    dst = data.draw(st.permutations(range(n)))[:k] if n else []
    src = [s - n * data.draw(st.booleans()) for s in src]
    grad_check(lambda a: a.movedim(src, dst), sample_array(shape))
    if k == 1: grad_check(lambda a: a.moveaxis(src[0], dst[0]), sample_array(shape))

  def test_movedim_is_a_view(self):
    x = Tensor.zeros(3, 4).contiguous().realize()
    m = x.movedim(0, 1)
    m[0] = 5.0
    if not is_null(): np.testing.assert_array_equal(x.numpy()[:, 0], 5.0)

  @pytest.mark.parametrize("src,dst,exc,match", [((0, 1), (2,), RuntimeError, "same number of dims"),
                                                 ((0, 0), (1, 2), RuntimeError,
                                                  r"repeated dim in `source` \(\[0, 0\]\)"),
                                                 ((0, 1), (2, 2), RuntimeError, "repeated dim in `destination`"),
                                                 (3, 0, IndexError, "dim 3 is out of range")])
  def test_movedim_errors(self, src, dst, exc, match):
    t, p = teeny_and_torch(sample_array((2, 3, 4)))
    raises_like_torch(lambda: t.movedim(src, dst), lambda: p.movedim(src, dst), exc, match)

  @HYP
  @given(shape=pos_shapes, data=st.data())
  def test_narrow_random(self, shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    start = data.draw(st.integers(-n, n))
    length = data.draw(st.integers(0, n - (start % n if start < 0 else start) if start != -n else n))
    grad_check(lambda a: a.narrow(dim, start, length), sample_array(shape))

  def test_narrow_view_and_non_contiguous(self):
    x = Tensor.zeros(3, 4).contiguous().realize()
    n = x.narrow(1, -3, 2)
    n += 1
    if not is_null(): np.testing.assert_array_equal(x.numpy(), np.array([[0, 1, 1, 0]] * 3, dtype=np.float32))
    t, p = teeny_and_torch(sample_array((3, 4)))
    assert_like_torch(t.T.narrow(0, 1, 2), p.T.narrow(0, 1, 2))

  @pytest.mark.parametrize("args,exc,match", [((1, -4, 1), IndexError, r"start out of range .*\[-3, 3\].* got -4"),
                                              ((1, 4, 0), IndexError, "start out of range"),
                                              ((1, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds"),
                                              ((1, 0, -1), RuntimeError, "length must be non-negative"),
                                              ((3, 0, 1), IndexError, "dim 3 is out of range"),
                                              ((1, 1.0, 1), TypeError, "start must be an int")])
  def test_narrow_errors(self, args, exc, match):
    t, p = teeny_and_torch(sample_array((2, 3, 4)))
    raises_like_torch(lambda: t.narrow(*args), lambda: p.narrow(*args), exc, match)
    raises_like_torch(lambda: Tensor(1.0).narrow(0, 0, 1), lambda: torch.tensor(1.0).narrow(0, 0, 1), RuntimeError,
                      "0-dim")

  @pytest.mark.parametrize("d0,d1", [(0, 1), (-1, 0), (2, -2), (1, 1)])
  def test_swapdims(self, d0, d1):
    grad_check(lambda a: a.swapdims(d0, d1), sample_array((2, 3, 4)))
    grad_check(lambda a: a.swapaxes(d0, d1), sample_array((2, 3, 4)))

  @HYP
  @given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple),
         reps=st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple))
  def test_tile_random(self, shape, reps):
    grad_check(lambda a: a.tile(reps), sample_array(shape))
    if reps: assert_like_torch(Tensor(sample_array(shape)).tile(*reps), torch.tensor(sample_array(shape)).tile(*reps))
    assert_like_torch(Tensor(sample_array(shape)).tile(dims=list(reps)),
                      torch.tensor(sample_array(shape)).tile(dims=list(reps)))

  def test_tile_copies_and_errors(self):
    x = Tensor.zeros(2, 2).contiguous().realize()
    t = x.tile(1, 1)
    t += 1
    if not is_null(): np.testing.assert_array_equal(x.numpy(), 0.0)
    tt, p = teeny_and_torch(sample_array((2, 3), 0, np.int32))
    assert_like_torch(tt.T.tile(2), p.T.tile(2))
    raises_like_torch(lambda: tt.tile(-1), lambda: p.tile(-1), RuntimeError, "non-negative")

  @pytest.mark.parametrize("shape,dim,sizes", [((2, 12), 1, (3, 4)), ((2, 12), -1, (2, -1, 3)), ((2, 3, 4), 1, (3, 1)),
                                               ((2, 0), 1, (-1, 2)), ((2, 0), 1, (0, 2)), ((2, 3, 4), 1, [3]),
                                               ((6,), 0, (-1, 1, 2))])
  def test_unflatten(self, shape, dim, sizes):
    grad_check(lambda a: a.unflatten(dim, sizes), sample_array(shape))

  @pytest.mark.parametrize("shape,dim,sizes,exc,match", [
    ((2, 3, 4), 1, (2, 2), RuntimeError, r"sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\)"),
    ((2, 3, 4), 1, (), RuntimeError, "sizes must be non-empty"),
    ((2, 3, 4), 1, (-1, -1), RuntimeError, "only one dimension can be inferred"),
    ((2, 0), 1, (-1, 0), RuntimeError, "cannot infer"),
    ((2, 3, 4), 1, (3, -2), RuntimeError, "invalid size -2"),
    ((), 0, (1,), IndexError, "no dimensions"),
    ((2, 3), 2, (3,), IndexError, "dim 2 is out of range"),
  ])
  def test_unflatten_errors(self, shape, dim, sizes, exc, match):
    t, p = teeny_and_torch(sample_array(shape))
    raises_like_torch(lambda: t.unflatten(dim, sizes), lambda: p.unflatten(dim, sizes), exc, match)

  @HYP
  @given(shape=st.lists(st.integers(0, 3), min_size=2, max_size=4).map(tuple), k=st.integers(-5, 5), data=st.data())
  def test_rot90_random(self, shape, k, data):
    n = len(shape)
    d0, d1 = data.draw(st.permutations(range(n)))[:2]
    dims = (d0 - n * data.draw(st.booleans()), d1)
    grad_check(lambda a: a.rot90(k, dims), sample_array(shape))

  def test_rot90_defaults_copy_and_dtypes(self):
    t, p = teeny_and_torch(sample_array((3, 4), 0, np.int64))
    assert_like_torch(t.rot90(), p.rot90())
    assert_like_torch(t.T.rot90(2), p.T.rot90(2))
    x = Tensor.zeros(2, 2).contiguous().realize()
    for k in range(4):
      r = x.rot90(k)
      r += 1
    if not is_null(): np.testing.assert_array_equal(x.numpy(), 0.0)

  @pytest.mark.parametrize("shape,k,dims,exc,match", [((2, 3, 4), 1, (0,), RuntimeError, "rotation dims == 2"),
                                                      ((2, 3, 4), 1, (0, 0), RuntimeError,
                                                       "rotation dims to be different"),
                                                      ((2, 3, 4), 1, (0, 3), IndexError, "out of range"),
                                                      ((3,), 1, (0, 1), RuntimeError, "total dims >= 2"),
                                                      ((2, 3), 1.0, (0, 1), TypeError, "k must be an int")])
  def test_rot90_errors(self, shape, k, dims, exc, match):
    t, p = teeny_and_torch(sample_array(shape))
    raises_like_torch(lambda: t.rot90(k, dims), lambda: p.rot90(k, dims), exc, match)

class TestDiff:
  @HYP
  @given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), n=st.integers(0, 5), data=st.data())
  def test_random(self, shape, n, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    d = dim % len(shape)
    pre = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    app = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    arrs = [sample_array(shape)]
    if pre is not None: arrs.append(sample_array(tuple(pre if i == d else s for i, s in enumerate(shape)), 1))
    if app is not None: arrs.append(sample_array(tuple(app if i == d else s for i, s in enumerate(shape)), 2))
    def f(x, *rest):
      it = iter(rest)
      return x.diff(n, dim, next(it) if pre is not None else None, next(it) if app is not None else None)
    grad_check(f, *arrs)

  @pytest.mark.parametrize("dt", [np.bool_, np.uint8, np.int32, np.int64, np.float16])
  def test_dtypes(self, dt):
    a = sample_array((3, 5), 3, dt)
    t, p = teeny_and_torch(a)
    for n in (1, 2, 4, 9):
      assert_like_torch(t.diff(n), p.diff(n), atol=1e-2)
      assert_like_torch(t.T.diff(n, dim=0), p.T.diff(n, dim=0), atol=1e-2)
    assert_like_torch(t.diff(prepend=Tensor(np.ones((3, 1), dtype=np.float32))), p.diff(prepend=torch.ones(3, 1)),
                      atol=1e-2)
    assert_like_torch(t.diff(0, prepend=Tensor(np.ones((3, 1), dtype=np.float32))), p.diff(0, prepend=torch.ones(3, 1)))

  @pytest.mark.parametrize("shape,kw,exc,match", [((4,), dict(n=-1), RuntimeError, "order must be non-negative"),
                                                  ((), dict(), RuntimeError, "at least one-dimensional"),
                                                  ((2, 3), dict(dim=2), IndexError, "dim 2 is out of range"),
                                                  ((2, 3), dict(n=1.5), TypeError, "n must be an int"),
                                                  ((4,), dict(prepend=(2,)), RuntimeError, "same dimension as input"),
                                                  ((2, 3), dict(prepend=(3,)), RuntimeError, "same dimension as input"),
                                                  ((2, 3), dict(prepend=(3, 1), dim=1), RuntimeError,
                                                   "except along the differencing dim")])
  def test_errors(self, shape, kw, exc, match):
    t, p = teeny_and_torch(sample_array(shape))
    tk = {k: Tensor(sample_array(v)) if k in ("prepend", "append") and isinstance(v, tuple) else v
          for k, v in kw.items()}
    pk = {k: torch.tensor(sample_array(v)) if k in ("prepend", "append") and isinstance(v, tuple) else v
          for k, v in kw.items()}
    if "prepend" in kw and kw["prepend"] == (2,):
      tk["prepend"], pk["prepend"] = Tensor(sample_array(())), torch.tensor(sample_array(()))
    raises_like_torch(lambda: t.diff(**tk), lambda: p.diff(**pk), exc, match)
    raises_like_torch(lambda: Tensor.ones(3).diff(prepend=0.0), lambda: torch.ones(3).diff(prepend=0.0), TypeError,
                      "prepend must be a Tensor")

class TestCartesianProd:
  @pytest.mark.parametrize("sizes", [(2,), (2, 3), (2, 1, 2), (2, 0), (3, 2, 2)])
  def test_values(self, sizes):
    arrs = [sample_array((s,), i) for i, s in enumerate(sizes)]
    grad_check(lambda *xs: torch.cartesian_prod(*xs), *arrs, tfn=lambda *xs: Tensor.cartesian_prod(*xs))
    ints = [sample_array((s,), i, np.int32) for i, s in enumerate(sizes)]
    assert_like_torch(Tensor.cartesian_prod([Tensor(a) for a in ints]),
                      torch.cartesian_prod(*[torch.tensor(a) for a in ints]))

  def test_errors(self):
    raises_like_torch(lambda: Tensor.cartesian_prod(Tensor([1, 2]), Tensor(3)),
                      lambda: torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor(3)), RuntimeError, "1-D")
    raises_like_torch(lambda: Tensor.cartesian_prod(Tensor([1, 2]), Tensor([1.0])),
                      lambda: torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([1.0])), RuntimeError,
                      "same dtype")

# ---------------------------------------------------------------- unique

FLAGS = [dict(), dict(return_inverse=True), dict(return_counts=True), dict(return_inverse=True, return_counts=True)]

def uniq_data(shape, seed, kind):
  rng = np.random.default_rng(seed)
  a = rng.integers(-3, 4, size=shape)
  if kind == "float":
    a = a.astype(np.float32)
    flat = a.reshape(-1)
    if flat.size: flat[rng.random(flat.size) < 0.2] = np.nan
    return a
  return {"bool": a > 0, "int64": a, "uint8": (a + 3).astype(np.uint8), "int32": a.astype(np.int32)}[kind]

@needs_values
class TestUnique:
  @HYP
  @given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple), seed=st.integers(0, 100),
         kind=st.sampled_from(["float", "bool", "int64", "uint8", "int32"]), flags=st.sampled_from(FLAGS),
         consecutive=st.booleans())
  def test_flat_random(self, shape, seed, kind, flags, consecutive):
    t, p = teeny_and_torch(uniq_data(shape, seed, kind))
    if consecutive: assert_like_torch(t.unique_consecutive(**flags), p.unique_consecutive(**flags))
    else:
      assert_like_torch(t.unique(**flags), p.unique(**flags))
      assert_like_torch(t.unique(sorted=False, **flags), p.unique(sorted=False, **flags))

  @HYP
  @given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 100),
         kind=st.sampled_from(["bool", "int64", "int32"]), flags=st.sampled_from(FLAGS), consecutive=st.booleans(),
         data=st.data())
  def test_dim_random(self, shape, seed, kind, flags, consecutive, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = uniq_data(shape, seed, kind)
    if data.draw(st.booleans()):   # repeat some slices, so there are duplicates
      a = np.concatenate([a, np.take(a, [0] * shape[dim], axis=dim)], axis=dim)
    t, p = teeny_and_torch(a)
    if consecutive: assert_like_torch(t.unique_consecutive(dim=dim, **flags), p.unique_consecutive(dim=dim, **flags))
    else: assert_like_torch(t.unique(dim=dim, **flags), p.unique(dim=dim, **flags))

  def test_special_values(self):
    a = np.array([3.0, 1, np.nan, 2, 1, np.nan, 3, -0.0, np.inf, -np.inf], dtype=np.float32)
    t, p = teeny_and_torch(a)
    assert_like_torch(t.unique(return_inverse=True, return_counts=True),
                      p.unique(return_inverse=True, return_counts=True))
    assert_like_torch(t.unique_consecutive(return_inverse=True, return_counts=True),
                      p.unique_consecutive(return_inverse=True, return_counts=True))
    rows = np.array([[np.nan, 1], [np.nan, 1]], dtype=np.float32)
    assert_like_torch(Tensor(rows).unique(dim=0, return_counts=True),
                      torch.tensor(rows).unique(dim=0, return_counts=True))

  @pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16, torch.float64, torch.int8])
  def test_dtypes(self, dt):
    p = torch.tensor([2.0, 1.0, 2.0, 3.5 if dt.is_floating_point else 3, 1.0]).to(dt)
    t = Tensor(p.float().numpy()).cast(teeny_dtype(dt))
    assert_like_torch(t.unique(return_inverse=True, return_counts=True),
                      p.unique(return_inverse=True, return_counts=True))

  def test_non_contiguous_and_0d(self):
    a = uniq_data((3, 4), 1, "int64")
    t, p = teeny_and_torch(a)
    assert_like_torch(t.T.unique(return_inverse=True), p.T.unique(return_inverse=True))
    assert_like_torch(t[:, ::2].unique(dim=1, return_counts=True), p[:, ::2].unique(dim=1, return_counts=True))
    for f in (lambda x: x.unique(return_inverse=True, return_counts=True),
              lambda x: x.unique_consecutive(return_inverse=True, return_counts=True)):
      assert_like_torch(f(Tensor(5.0)), f(torch.tensor(5.0)))

  @pytest.mark.parametrize("shape,dim", [((0, 3), 0), ((0,), None), ((2, 0), None), ((0, 3), None)])
  def test_empty(self, shape, dim):
    t, p = teeny_and_torch(np.zeros(shape, dtype=np.float32))
    assert_like_torch(t.unique(dim=dim, return_inverse=True, return_counts=True),
                      p.unique(dim=dim, return_inverse=True, return_counts=True))
    assert_like_torch(t.unique_consecutive(dim=dim, return_inverse=True, return_counts=True),
                      p.unique_consecutive(dim=dim, return_inverse=True, return_counts=True))

  def test_not_differentiable(self):
    x = Tensor([1.0, 2.0, 1.0], requires_grad=True)
    assert not x.unique().requires_grad

  @pytest.mark.parametrize("shape,dim,exc,match", [((2, 0), 0, RuntimeError, "0-sized dimensions other than dim 0"),
                                                   ((2, 3), 2, IndexError, "dim 2 is out of range"),
                                                   ((), 0, IndexError, "no dimensions")])
  def test_errors(self, shape, dim, exc, match):
    t, p = teeny_and_torch(np.zeros(shape, dtype=np.float32))
    raises_like_torch(lambda: t.unique(dim=dim), lambda: p.unique(dim=dim), exc, match)
    raises_like_torch(lambda: t.unique_consecutive(dim=dim), lambda: p.unique_consecutive(dim=dim), exc, match)
