"""Sorting, selection and structure ops (teeny/tensor_select.py) against torch: forward values over shapes, dims, dtypes
and edge values (ties, NaN, +-inf, -0.0, empty dims, k=0), gradients, and torch's errors. Under DEV=NULL every graph is
still scheduled and rendered; value checks (and the data-dependent masked_select/nonzero) skip there."""
import numpy as np
import pytest
import teeny
from teeny import Tensor, dtypes, GlobalCounters
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")

def check(out, ref, dtype=None):
  """out (a Tensor) equals ref (a torch tensor or array) exactly, NaN == NaN; shape and dtype checked everywhere."""
  ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
  assert isinstance(out, Tensor), f"expected a Tensor, got {type(out).__name__}"
  assert tuple(out.shape) == ref.shape, f"shape: teeny {tuple(out.shape)} vs reference {ref.shape}"
  if dtype is not None: assert out.dtype == dtype, f"dtype: teeny {out.dtype} vs expected {dtype}"
  if is_null():
    out.realize()
    return
  np.testing.assert_equal(out.numpy(), ref)

def check_pair(out, ref, dtype):
  """(values, indices) results: a tuple with .values and .indices, indices int64 as in torch."""
  assert isinstance(out, tuple) and len(out) == 2
  assert out.values is out[0] and out.indices is out[1]
  check(out.values, ref[0], dtype)
  check(out.indices, ref[1], dtypes.int64)

def grad_check(fn, a, tfn=None, seed=0, atol=1e-6):
  """fn on torch and (tfn or fn) on teeny leaves from the same float32 `a`; compare outputs and input gradients for a
  fixed random upstream gradient (under NULL: both are only realized)."""
  a = np.asarray(a, dtype=np.float32)
  pt, tt = torch.tensor(a, requires_grad=True), Tensor(a, requires_grad=True)
  po, to = fn(pt), (tfn or fn)(tt)
  assert tuple(to.shape) == tuple(po.shape), f"shape: teeny {tuple(to.shape)} vs torch {tuple(po.shape)}"
  up = np.random.default_rng(seed).standard_normal(tuple(po.shape)).astype(np.float32)
  (po * torch.tensor(up)).sum().backward()
  (to * Tensor(up)).sum().backward()
  assert tt.grad is not None and tt.grad.shape == tt.shape
  if is_null():
    Tensor.realize_all(to, tt.grad)
    return
  np.testing.assert_allclose(to.numpy(), po.detach().numpy(), atol=atol, rtol=1e-6)
  np.testing.assert_allclose(tt.grad.numpy(), pt.grad.numpy(), atol=atol, rtol=1e-6)

RNG = np.random.default_rng(0)

def special_floats(shape, dtype=np.float32, seed=0):
  """Small integers (many ties) with NaN, +-inf, -0.0 and 0.0 mixed in."""
  rng = np.random.default_rng(seed)
  a = rng.integers(-3, 4, size=shape).astype(dtype)
  flat = a.reshape(-1)
  if flat.size:
    sel = rng.choice(flat.size, size=min(flat.size, max(1, flat.size // 4)), replace=False)
    for j, s in enumerate(sel): flat[s] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan][j % 6]
  return a

def ints(shape, dtype, seed=0):
  info = np.iinfo(dtype)
  rng = np.random.default_rng(seed)
  a = rng.integers(-3, 4, size=shape).astype(np.int64)
  a = np.clip(a, info.min, info.max).astype(dtype)
  flat = a.reshape(-1)
  if flat.size >= 4: flat[:2], flat[-2:] = info.max, info.min   # the dtype's extremes
  return a

# ---------------------------------------------------------------- tril / triu

class TestTri:
  @pytest.mark.parametrize("shape", [(4, 5), (5, 3), (2, 3, 4), (1, 1), (0, 3), (2, 0, 2)])
  @pytest.mark.parametrize("diagonal", [-2, 0, 1, 7])
  def test_tril_triu(self, shape, diagonal):
    a = RNG.standard_normal(shape).astype(np.float32)
    check(Tensor(a).tril(diagonal), torch.tensor(a).tril(diagonal), dtypes.float32)
    check(Tensor(a).triu(diagonal), torch.tensor(a).triu(diagonal), dtypes.float32)
  @pytest.mark.parametrize("dt", [np.int32, np.bool_, np.float16, np.int64])
  def test_dtypes(self, dt):
    a = (RNG.standard_normal((3, 4)) * 3).astype(dt)
    check(Tensor(a).tril(), torch.tensor(a).tril(), dtypes.from_np(np.dtype(dt)))
    check(Tensor(a).triu(-1), torch.tensor(a).triu(-1), dtypes.from_np(np.dtype(dt)))
  def test_grad(self):
    grad_check(lambda x: x.tril(), RNG.standard_normal((3, 4)))
    grad_check(lambda x: x.triu(1), RNG.standard_normal((2, 4, 3)))
  def test_nan_above_is_zeroed(self):
    a = np.full((3, 3), np.nan, dtype=np.float32)
    check(Tensor(a).tril(), torch.tensor(a).tril())
  def test_errors(self):
    with pytest.raises(RuntimeError, match="at least 2 dimensions"): Tensor([1.0, 2.0]).tril()
    with pytest.raises(RuntimeError, match="at least 2 dimensions"): Tensor(1.0).triu()

# ---------------------------------------------------------------- diag / diagonal

class TestDiag:
  @pytest.mark.parametrize("n", [0, 1, 4])
  @pytest.mark.parametrize("d", [-2, 0, 1, 3])
  def test_diag_1d(self, n, d):
    a = RNG.standard_normal((n,)).astype(np.float32)
    check(Tensor(a).diag(d), torch.tensor(a).diag(d), dtypes.float32)
  @pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (1, 3)])
  @pytest.mark.parametrize("d", [-5, -1, 0, 2, 6])
  def test_diag_2d(self, shape, d):
    a = RNG.standard_normal(shape).astype(np.float32)
    check(Tensor(a).diag(d), torch.tensor(a).diag(d), dtypes.float32)
  def test_diag_dtypes(self):
    for dt in (np.int32, np.bool_, np.int64):
      a = (RNG.standard_normal((4,)) * 3).astype(dt)
      check(Tensor(a).diag(1), torch.tensor(a).diag(1), dtypes.from_np(np.dtype(dt)))
  @pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (2, -1, -2), (0, 2, 1), (-3, 0, 2),
                                           (9, 0, 1)])
  def test_diagonal(self, offset, d1, d2):
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    check(Tensor(a).diagonal(offset, d1, d2), torch.tensor(a).diagonal(offset, d1, d2), dtypes.float32)
  def test_grad(self):
    grad_check(lambda x: x.diag(), RNG.standard_normal((4,)))
    grad_check(lambda x: x.diag(-1), RNG.standard_normal((3,)))
    grad_check(lambda x: x.diag(1), RNG.standard_normal((3, 4)))
    grad_check(lambda x: x.diagonal(-1, 2, 0), RNG.standard_normal((3, 4, 5)))
  def test_diag_is_a_new_tensor(self):
    v = Tensor([1.0, 2.0])
    m = v.diag()
    m += 1
    check(v, np.array([1.0, 2.0], np.float32))
    check(m, np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
  def test_errors(self):
    with pytest.raises(RuntimeError, match="1-D or 2-D"): Tensor.zeros(2, 2, 2).diag()
    with pytest.raises(RuntimeError, match="cannot be identical"): Tensor.zeros(2, 2).diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match="cannot be identical"): Tensor.zeros(2, 2).diagonal(0, 0, -2)
    with pytest.raises(IndexError, match=r"dim2 2 .*\[-2, 1\]"): Tensor.zeros(2, 2).diagonal(0, 0, 2)
    with pytest.raises(IndexError, match=r"dim2 1 .*\[-1, 0\]"): Tensor.zeros(3).diagonal()

# ---------------------------------------------------------------- sort / argsort

def torch_sort(a, dim, descending):
  return torch.tensor(a).sort(dim=dim, descending=descending, stable=True)

class TestSort:
  @pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 11), 1), ((3, 11), 0), ((4, 5, 6), 1), ((4, 5, 6), -1),
                                         ((2, 33), -1), ((1,), 0), ((2, 1), 1)])
  @pytest.mark.parametrize("descending", [False, True])
  def test_float_specials(self, shape, dim, descending):
    a = special_floats(shape)
    check_pair(Tensor(a).sort(dim, descending), torch_sort(a, dim, descending), dtypes.float32)
  @pytest.mark.parametrize("dt", [np.int32, np.int64, np.int8, np.uint8, np.int16, np.bool_])
  @pytest.mark.parametrize("descending", [False, True])
  def test_int_dtypes(self, dt, descending):
    a = RNG.random((3, 9)) < 0.5 if dt == np.bool_ else ints((3, 9), dt)
    check_pair(Tensor(a).sort(-1, descending), torch_sort(a, -1, descending), dtypes.from_np(np.dtype(dt)))
  @pytest.mark.parametrize("dt", [np.float16, np.float64])
  @pytest.mark.parametrize("descending", [False, True])
  def test_float_dtypes(self, dt, descending):
    a = special_floats((3, 10), dt, seed=3)
    a[2] = RNG.standard_normal(10).astype(dt) * 1e4
    check_pair(Tensor(a).sort(0, descending), torch_sort(a, 0, descending), dtypes.from_np(np.dtype(dt)))
  @pytest.mark.parametrize("dt", [np.uint32, np.uint64])
  def test_unsigned_wide(self, dt):
    # torch does not sort these on the CPU: numpy's stable argsort is the reference
    info = np.iinfo(dt)
    a = np.array([[info.max, 0, 5, info.max - 1, 1 << 31, (1 << 31) - 1, 5, 0]], dtype=dt)
    idx = np.argsort(a, axis=-1, kind="stable")
    v, i = Tensor(a).sort()
    check(v, np.take_along_axis(a, idx, -1), dtypes.from_np(np.dtype(dt)))
    check(i, idx.astype(np.int64), dtypes.int64)
    v, i = Tensor(a).sort(descending=True)
    idx = np.lexsort((np.arange(a.shape[1]), np.iinfo(np.uint64).max - a[0].astype(np.uint64)))[None]   # desc, stable
    check(v, np.take_along_axis(a, idx, -1))
    check(i, idx.astype(np.int64))
  def test_extreme_floats(self):
    f = np.finfo(np.float32)
    a = np.array([f.max, -f.max, f.tiny, -f.tiny, 1e-45, -1e-45, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
    for desc in (False, True): check_pair(Tensor(a).sort(descending=desc), torch_sort(a, 0, desc), dtypes.float32)
  @pytest.mark.parametrize("n", [1000, 1025])
  def test_long(self, n):
    a = RNG.standard_normal((2, n)).astype(np.float32)
    a[1] = np.round(a[1] * 3)   # ties
    check_pair(Tensor(a).sort(), torch_sort(a, -1, False), dtypes.float32)
    check_pair(Tensor(a).sort(descending=True), torch_sort(a, -1, True), dtypes.float32)
  def test_empty_and_0d(self):
    for shape, dim in [((0,), 0), ((3, 0), 1), ((0, 4), 1), ((0, 4), 0)]:
      a = np.zeros(shape, np.float32)
      check_pair(Tensor(a).sort(dim), torch_sort(a, dim, False), dtypes.float32)
    check_pair(Tensor(np.float32(2.5)).sort(), torch.tensor(2.5).sort(), dtypes.float32)
    check_pair(Tensor(np.float32(2.5)).sort(-1), torch.tensor(2.5).sort(-1), dtypes.float32)
  def test_argsort(self):
    a = special_floats((3, 12), seed=5)
    check(Tensor(a).argsort(), torch.tensor(a).argsort(stable=True), dtypes.int64)
    check(Tensor(a).argsort(0, True), torch.tensor(a).argsort(dim=0, descending=True, stable=True), dtypes.int64)
    check(Tensor(a).argsort(dim=1, descending=True, stable=True),
          torch.tensor(a).argsort(dim=1, descending=True, stable=True))
  def test_stable_keyword(self):
    a = special_floats((13,), seed=2)
    check_pair(Tensor(a).sort(stable=True), torch_sort(a, 0, False), dtypes.float32)
    check_pair(Tensor(a).sort(dim=0, descending=True, stable=False), torch_sort(a, 0, True), dtypes.float32)
  @pytest.mark.parametrize("dim,descending", [(1, False), (0, True), (-1, True)])
  def test_grad(self, dim, descending):
    a = np.round(RNG.standard_normal((5, 9)) * 2)   # ties: the gradient follows the stable order, as torch's
    grad_check(lambda x: x.sort(dim=dim, descending=descending, stable=True).values, a,
               lambda x: x.sort(dim, descending).values)
  def test_indices_have_no_grad(self):
    x = Tensor(RNG.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    v, i = x.sort()
    assert v.requires_grad and not i.requires_grad
  def test_lazy(self):
    # sort and topk are kernels in the graph: building them runs nothing (values are read only on demand)
    x = Tensor(RNG.standard_normal((4, 50)).astype(np.float32)) + 1
    before = GlobalCounters.kernel_count
    v, i = x.sort(descending=True)
    tv, ti = x.topk(5)
    cv, ci = x.cummax(1)
    m = x.masked_fill(x > 1, 0.0)
    assert GlobalCounters.kernel_count == before
    Tensor.realize_all(v, i, tv, ti, cv, ci, m)
    assert GlobalCounters.kernel_count > before
  def test_errors(self):
    with pytest.raises(IndexError, match=r"dim 2 .*\[-2, 1\]"): Tensor.zeros(3, 4).sort(2)
    with pytest.raises(IndexError, match=r"dim -3"): Tensor.zeros(3, 4).argsort(-3)
    with pytest.raises(IndexError, match=r"\[-1, 0\]"): Tensor(1.0).sort(1)
    with pytest.raises(TypeError): Tensor.zeros(3).sort(0.5)

# ---------------------------------------------------------------- topk

def topk_ref(a, k, dim, largest):
  """torch's topk values; indices from torch's stable sort (teeny breaks ties by the lower index)."""
  s = torch_sort(a, dim, largest)
  return torch.tensor(a).topk(k, dim, largest).values, s.indices.narrow(dim, 0, k)

class TestTopk:
  @pytest.mark.parametrize("n,k", [(1, 1), (5, 0), (5, 3), (5, 5), (37, 1), (37, 4), (37, 37), (300, 7), (300, 40)])
  @pytest.mark.parametrize("largest", [True, False])
  def test_values_and_indices(self, n, k, largest):
    a = special_floats((3, n), seed=n)
    check_pair(Tensor(a).topk(k, largest=largest), topk_ref(a, k, -1, largest), dtypes.float32)
  def test_dim(self):
    a = special_floats((6, 4, 5), seed=1)
    check_pair(Tensor(a).topk(2, dim=0), topk_ref(a, 2, 0, True), dtypes.float32)
    check_pair(Tensor(a).topk(3, 1, False), topk_ref(a, 3, 1, False), dtypes.float32)
  @pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8, np.float16, np.float64])
  def test_dtypes(self, dt):
    a = ints((2, 20), dt, seed=4) if np.issubdtype(dt, np.integer) else special_floats((2, 20), dt, seed=4)
    check_pair(Tensor(a).topk(6), topk_ref(a, 6, -1, True), dtypes.from_np(np.dtype(dt)))
    check_pair(Tensor(a).topk(6, largest=False), topk_ref(a, 6, -1, False), dtypes.from_np(np.dtype(dt)))
  def test_big(self):
    a = RNG.standard_normal((2, 5000)).astype(np.float32)
    check_pair(Tensor(a).topk(50), torch.tensor(a).topk(50), dtypes.float32)
  @needs_values
  def test_unsorted(self):
    a = RNG.standard_normal((3, 40)).astype(np.float32)
    v, i = Tensor(a).topk(5, sorted=False)
    tv, ti = torch.tensor(a).topk(5, sorted=False)
    np.testing.assert_equal(np.sort(v.numpy(), -1), np.sort(tv.numpy(), -1))
    np.testing.assert_equal(np.sort(i.numpy(), -1), np.sort(ti.numpy(), -1))
  def test_0d_and_empty(self):
    check_pair(Tensor(np.float32(3.0)).topk(1), torch.tensor(3.0).topk(1), dtypes.float32)
    check_pair(Tensor(np.zeros((0, 4), np.float32)).topk(2), torch.zeros(0, 4).topk(2), dtypes.float32)
    check_pair(Tensor(np.zeros((3, 0), np.float32)).topk(0), torch.zeros(3, 0).topk(0), dtypes.float32)
  @pytest.mark.parametrize("k,largest", [(3, True), (1, False), (9, True)])
  def test_grad(self, k, largest):
    a = RNG.standard_normal((4, 9))   # distinct values: torch and teeny pick the same positions
    grad_check(lambda x: x.topk(k, largest=largest).values, a)
    grad_check(lambda x: x.topk(2, dim=0).values * 2, a)
  def test_errors(self):
    with pytest.raises(RuntimeError, match="k=4 out of range"): Tensor.zeros(3).topk(4)
    with pytest.raises(RuntimeError, match="out of range"): Tensor.zeros(3).topk(-1)
    with pytest.raises(RuntimeError, match="out of range"): Tensor(1.0).topk(2)
    with pytest.raises(IndexError, match=r"dim 2"): Tensor.zeros(3, 4).topk(1, dim=2)

# ---------------------------------------------------------------- cummax / cummin

class TestCumExtreme:
  @pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 6), 1), ((3, 6), 0), ((2, 3, 4), -1), ((2, 300), 1),
                                         ((1,), 0), ((0, 3), 0), ((3, 0), 1)])
  @pytest.mark.parametrize("op", ["cummax", "cummin"])
  def test_float_specials(self, shape, dim, op):
    a = special_floats(shape, seed=len(shape))
    check_pair(getattr(Tensor(a), op)(dim), getattr(torch.tensor(a), op)(dim), dtypes.float32)
  @pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8, np.int8, np.bool_, np.float16])
  @pytest.mark.parametrize("op", ["cummax", "cummin"])
  def test_dtypes(self, dt, op):
    if dt == np.bool_: a = RNG.random((3, 8)) < 0.5
    elif dt == np.float16: a = special_floats((3, 8), dt)
    else: a = ints((3, 8), dt, seed=7)
    check_pair(getattr(Tensor(a), op)(1), getattr(torch.tensor(a), op)(1), dtypes.from_np(np.dtype(dt)))
  def test_ties_take_the_last_index(self):
    a = np.array([2, 1, 2, 2, 0, 3, 3], np.int32)
    check_pair(Tensor(a).cummax(0), torch.tensor(a).cummax(0), dtypes.int32)
    check_pair(Tensor(a).cummin(0), torch.tensor(a).cummin(0), dtypes.int32)
  def test_0d(self):
    check_pair(Tensor(np.float32(1.5)).cummax(0), torch.tensor(1.5).cummax(0), dtypes.float32)
    check_pair(Tensor(np.float32(1.5)).cummin(-1), torch.tensor(1.5).cummin(-1), dtypes.float32)
  @pytest.mark.parametrize("op", ["cummax", "cummin"])
  def test_grad(self, op):
    a = np.round(RNG.standard_normal((4, 7)) * 2)   # ties: torch's gradient goes to the index it reports
    grad_check(lambda x: getattr(x, op)(1).values, a)
    grad_check(lambda x: getattr(x, op)(0).values, a)
  def test_errors(self):
    with pytest.raises(IndexError, match=r"dim 2 .*\[-2, 1\]"): Tensor.zeros(3, 4).cummax(2)
    with pytest.raises(IndexError, match=r"dim -3"): Tensor.zeros(3, 4).cummin(-3)

# ---------------------------------------------------------------- masked_fill / masked_select / nonzero

class TestMasks:
  @pytest.mark.parametrize("xs,ms", [((3, 4), (3, 4)), ((3, 4), (3, 1)), ((3, 4), (4,)), ((3, 4), (2, 3, 4)),
                                     ((3, 4), ()), ((0, 4), (1, 4))])
  def test_masked_fill(self, xs, ms):
    a = RNG.standard_normal(xs).astype(np.float32)
    m = RNG.random(ms) < 0.5
    check(Tensor(a).masked_fill(Tensor(m), -1.5), torch.tensor(a).masked_fill(torch.tensor(m), -1.5), dtypes.float32)
    check(Tensor(a).masked_fill(Tensor(m), float("-inf")), torch.tensor(a).masked_fill(torch.tensor(m), float("-inf")))
  def test_masked_fill_values(self):
    a = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
    m = RNG.random((3, 4)) < 0.5
    check(Tensor(a).masked_fill(Tensor(m), 2.7), torch.tensor(a).masked_fill(torch.tensor(m), 2.7), dtypes.int32)
    check(Tensor(a).masked_fill(Tensor(m), Tensor(7)), torch.tensor(a).masked_fill(torch.tensor(m), torch.tensor(7)))
    check(Tensor(a).masked_fill(Tensor(m), Tensor(-2.9)),
          torch.tensor(a).masked_fill(torch.tensor(m), torch.tensor(-2.9)))
    b = RNG.random((3, 4)) < 0.5
    check(Tensor(b).masked_fill(Tensor(m), True), torch.tensor(b).masked_fill(torch.tensor(m), True), dtypes.bool)
    f = RNG.standard_normal((4,)).astype(np.float16)
    check(Tensor(f).masked_fill(Tensor(m[0]), 1e-3), torch.tensor(f).masked_fill(torch.tensor(m[0]), 1e-3),
          dtypes.float16)
  def test_masked_fill_causal(self):
    # the attention-mask idiom: fill above the diagonal with -inf, then softmax
    a = RNG.standard_normal((2, 5, 5)).astype(np.float32)
    mask = Tensor.ones(5, 5, dtype=dtypes.bool).triu(1)
    tm = torch.ones(5, 5, dtype=torch.bool).triu(1)
    check(Tensor(a).masked_fill(mask, float("-inf")), torch.tensor(a).masked_fill(tm, float("-inf")))
    grad_check(lambda x: x.masked_fill(tm, float("-inf")).softmax(-1), a,
               lambda x: x.masked_fill(mask, float("-inf")).softmax(-1))
  def test_masked_fill_grad(self):
    m = RNG.random((3, 4)) < 0.5
    grad_check(lambda x: x.masked_fill(torch.tensor(m), 2.0), RNG.standard_normal((3, 4)),
               lambda x: x.masked_fill(Tensor(m), 2.0))
    # a 0-d value tensor gets the gradient of every position it filled
    pv, tv = torch.tensor(0.5, requires_grad=True), Tensor(0.5, requires_grad=True)
    up = RNG.standard_normal((3, 4)).astype(np.float32)
    (torch.zeros(3, 4).masked_fill(torch.tensor(m), pv) * torch.tensor(up)).sum().backward()
    (Tensor.zeros(3, 4).masked_fill(Tensor(m), tv) * Tensor(up)).sum().backward()
    if is_null(): tv.grad.realize()
    else: np.testing.assert_allclose(tv.grad.numpy(), pv.grad.numpy(), rtol=1e-5, atol=1e-6)  # a sum: order differs
  def test_masked_fill_errors(self):
    with pytest.raises(RuntimeError, match="boolean masks.*float"): Tensor.zeros(3).masked_fill(Tensor.ones(3), 1.0)
    with pytest.raises(RuntimeError, match="boolean masks.*int"): Tensor.zeros(3).masked_fill(Tensor([1, 0, 1]), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value"):
      Tensor.zeros(3).masked_fill(Tensor([True, False, True]), Tensor([1.0]))
    with pytest.raises(RuntimeError, match="broadcast"): Tensor.zeros(3).masked_fill(Tensor([True, False]), 1.0)

  @needs_values
  @pytest.mark.parametrize("xs,ms", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((), (3,)), ((2, 3), (2, 3))])
  def test_masked_select(self, xs, ms):
    a = RNG.standard_normal(xs).astype(np.float32)
    m = RNG.random(ms) < 0.5
    check(Tensor(a).masked_select(Tensor(m)), torch.tensor(a).masked_select(torch.tensor(m)), dtypes.float32)
    check(Tensor(a).masked_select(Tensor(np.zeros(ms, bool))),
          torch.tensor(a).masked_select(torch.zeros(ms, dtype=torch.bool)))
  @needs_values
  def test_masked_select_grad_and_dtypes(self):
    m = RNG.random((3, 5)) < 0.5
    grad_check(lambda x: x.masked_select(torch.tensor(m)), RNG.standard_normal((3, 5)),
               lambda x: x.masked_select(Tensor(m)))
    a = RNG.integers(0, 9, (3, 5)).astype(np.int64)
    check(Tensor(a).masked_select(Tensor(m)), torch.tensor(a).masked_select(torch.tensor(m)), dtypes.int64)
  def test_masked_select_errors(self):
    with pytest.raises(RuntimeError, match="bool tensor for mask"): Tensor.zeros(3).masked_select(Tensor.ones(3))

  @needs_values
  @pytest.mark.parametrize("dt", [np.float32, np.int32, np.bool_])
  def test_nonzero(self, dt):
    a = (RNG.integers(0, 3, (3, 4, 2)) * (RNG.random((3, 4, 2)) < 0.5)).astype(dt)
    check(Tensor(a).nonzero(), torch.tensor(a).nonzero(), dtypes.int64)
    for o, r in zip(Tensor(a).nonzero(as_tuple=True), torch.tensor(a).nonzero(as_tuple=True)): check(o, r, dtypes.int64)
  @needs_values
  def test_nonzero_edges(self):
    for a in [np.zeros((3, 2), np.float32), np.array(5.0, np.float32), np.array(0, np.int32),
              np.zeros((0, 3), np.float32), np.array([np.nan, 0.0, -0.0, 1.0], np.float32)]:
      check(Tensor(a).nonzero(), torch.tensor(a).nonzero(), dtypes.int64)
      out, ref = Tensor(a).nonzero(as_tuple=True), torch.tensor(a).nonzero(as_tuple=True)
      assert len(out) == len(ref)
      for o, r in zip(out, ref): check(o, r, dtypes.int64)

# ---------------------------------------------------------------- roll / unfold / meshgrid

class TestMovement:
  @pytest.mark.parametrize("shifts,dims", [(1, 0), (-1, 1), (7, 1), (-9, 0), ((1, 2), (0, 1)), ((2, -1), (1, 1)),
                                           (0, 1), (3, None), (-5, None), ((1,), None), (2, -1)])
  def test_roll(self, shifts, dims):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    check(Tensor(a).roll(shifts, dims), torch.tensor(a).roll(shifts, dims), dtypes.float32)
  def test_roll_edges(self):
    check(Tensor(np.zeros((0, 3), np.float32)).roll(1, 0), torch.zeros(0, 3).roll(1, 0))
    check(Tensor(np.float32(2.0)).roll(3), torch.tensor(2.0).roll(3))
    b = RNG.random((2, 5)) < 0.5
    check(Tensor(b).roll(2, 1), torch.tensor(b).roll(2, 1), dtypes.bool)
  def test_roll_grad(self):
    grad_check(lambda x: x.roll((1, -2), (0, 1)), RNG.standard_normal((3, 4)))
    grad_check(lambda x: x.roll(5), RNG.standard_normal((3, 4)))
  def test_roll_errors(self):
    with pytest.raises(RuntimeError, match="must align"): Tensor.zeros(3, 4).roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="must align"): Tensor.zeros(3, 4).roll((1, 2))
    with pytest.raises(IndexError, match=r"dims 2"): Tensor.zeros(3, 4).roll(1, 2)

  @pytest.mark.parametrize("shape,dim,size,step", [((10,), 0, 3, 2), ((10,), 0, 10, 1), ((10,), -1, 1, 3),
                                                   ((3, 8, 5), 1, 4, 1), ((3, 8, 5), 0, 2, 1), ((3, 8, 5), -1, 3, 2),
                                                   ((4, 6), 1, 0, 2), ((0, 6), 1, 2, 2)])
  def test_unfold(self, shape, dim, size, step):
    a = RNG.standard_normal(shape).astype(np.float32)
    check(Tensor(a).unfold(dim, size, step), torch.tensor(a).unfold(dim, size, step), dtypes.float32)
  def test_unfold_0d_and_dtypes(self):
    check(Tensor(np.float32(2.0)).unfold(0, 1, 1), torch.tensor(2.0).unfold(0, 1, 1))
    a = RNG.integers(0, 9, (2, 7)).astype(np.int32)
    check(Tensor(a).unfold(1, 3, 2), torch.tensor(a).unfold(1, 3, 2), dtypes.int32)
  def test_unfold_grad(self):
    grad_check(lambda x: x.unfold(1, 4, 1), RNG.standard_normal((3, 8, 2)))   # overlapping windows add up
    grad_check(lambda x: x.unfold(0, 2, 3), RNG.standard_normal((9, 2)))      # gaps get no gradient
  def test_unfold_errors(self):
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 4 but size is 5"):
      Tensor.zeros(3, 4).unfold(1, 5, 1)
    with pytest.raises(RuntimeError, match="step is 0"): Tensor.zeros(3, 4).unfold(1, 2, 0)
    with pytest.raises(RuntimeError, match="size is -1"): Tensor.zeros(3, 4).unfold(1, -1, 1)
    with pytest.raises(IndexError, match=r"dimension 2"): Tensor.zeros(3, 4).unfold(2, 1, 1)

  @pytest.mark.parametrize("indexing", ["ij", "xy"])
  @pytest.mark.parametrize("sizes", [(3,), (3, 4), (2, 3, 4), (0, 2)])
  def test_meshgrid(self, indexing, sizes):
    arrs = [RNG.standard_normal((s,)).astype(np.float32) for s in sizes]
    ref = torch.meshgrid(*[torch.tensor(a) for a in arrs], indexing=indexing)
    for fn in (Tensor.meshgrid, teeny.meshgrid):
      out = fn(*[Tensor(a) for a in arrs], indexing=indexing)
      assert isinstance(out, tuple) and len(out) == len(ref)
      for o, r in zip(out, ref): check(o, r, dtypes.float32)
    out = Tensor.meshgrid([Tensor(a) for a in arrs], indexing=indexing)   # a list works too, as in torch
    for o, r in zip(out, ref): check(o, r)
  def test_meshgrid_0d_and_grad(self):
    ref = torch.meshgrid(torch.tensor(1.0), torch.tensor([2.0, 3.0]), indexing="ij")
    for o, r in zip(Tensor.meshgrid(Tensor(1.0), Tensor([2.0, 3.0])), ref): check(o, r)
    b = RNG.standard_normal((4,)).astype(np.float32)
    grad_check(lambda x: sum(torch.meshgrid(x, torch.tensor(b), indexing="xy")), RNG.standard_normal((3,)),
               lambda x: sum(Tensor.meshgrid(x, Tensor(b), indexing="xy")))
  def test_meshgrid_errors(self):
    with pytest.raises(RuntimeError, match="0-d or 1-d"): Tensor.meshgrid(Tensor.zeros(2, 2))
    with pytest.raises(RuntimeError, match="same dtype"): Tensor.meshgrid(Tensor.zeros(2), Tensor([1, 2]))
    with pytest.raises(ValueError, match="indexing"): Tensor.meshgrid(Tensor.zeros(2), indexing="ji")
    with pytest.raises(RuntimeError, match="non-empty"): Tensor.meshgrid()
