"""Regressions for what fuzzing teeny against torch found (notes of 2026-12-03): each case is torch's answer, written
out."""
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers import needs_values
from teeny import Device, Tensor, dtypes
from teeny.indexing import _reads_allowed

pytestmark = needs_values

def test_clamp_takes_torchs_keywords():
  x = Tensor([1.0, 5.0, 9.0])
  np.testing.assert_array_equal(x.clamp(max=4).numpy(), [1, 4, 4])
  np.testing.assert_array_equal(x.clamp(min=2, max=6).numpy(), [2, 5, 6])
  np.testing.assert_array_equal(x.clip(min=6).numpy(), [6, 6, 9])
  np.testing.assert_array_equal(x.clamp(2, 6).numpy(), [2, 5, 6])
  with pytest.raises(TypeError, match="lower bound once"): x.clamp(1, min=2)
  with pytest.raises(ValueError, match="at least one"): x.clamp()

@pytest.mark.parametrize("e", [2.0, 1.0])
def test_int_pow_float_exponent_is_float(e):
  # torch: int tensor ** 2.0 is float32 (1e10 here); x * x in int32 wrapped to 1410065408
  for dt in (dtypes.int32, dtypes.uint8, dtypes.bool):
    x = Tensor([100000] if dt is dtypes.int32 else [200] if dt is dtypes.uint8 else [True, False], dtype=dt)
    out = x ** e
    assert out.dtype == dtypes.float32
    ref = np.array([100000.0] if dt is dtypes.int32 else [200.0] if dt is dtypes.uint8 else [1.0, 0.0]) ** e
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)

def test_int_pow_int_exponent_stays_int():
  out = Tensor([3, -2], dtype=dtypes.int32) ** 2
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), [9, 4])

def test_std_gradient_at_zero_variance_is_zero():
  t = Tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
  t.requires_grad = True
  t.std(1).sum().backward()
  # torch: [[0, 0, 0], [-0.5, 0, 0.5]] (d std / dx = (x - mean) / ((n - 1) std), 0 where std is 0)
  np.testing.assert_allclose(t.grad.numpy(), [[0, 0, 0], [-0.5, 0, 0.5]], atol=1e-6)
  np.testing.assert_allclose(Tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]).std(1).numpy(), [0, 1], atol=1e-7)

@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["float16", "bfloat16"]))
def test_16bit_results_round_at_every_op_when_fused(seed, dt):
  """A fused chain of 16-bit ops gives what it gives op by op (and torch): each result rounded to its dtype, not kept
  in float32 until the store. Before, (x*y).float() for float16 x = y = 31.65625 gave 1002.118 (torch: 1002)."""
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(seed)
  x, y, z = (rng.standard_normal(64).astype(np.float32) * 40 for _ in range(3))
  tx, ty, tz = (torch.tensor(v).to(getattr(torch, dt)) for v in (x, y, z))
  want = ((tx * ty + tz) * tx - ty / tz).float().numpy()
  a, b, c = (Tensor(v).cast(dt) for v in (x, y, z))
  fused = ((a * b + c) * a - b / c).float().numpy()
  np.testing.assert_array_equal(fused, want)
  # a comparison and an int cast of the rounded product
  np.testing.assert_array_equal(((a * b) == (a * b).realize()).numpy(), np.ones(64, bool))
  np.testing.assert_array_equal((a * b).int().numpy(), (tx * ty).int().numpy())

@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_16bit_matmul_and_conv_sum_exact_products(dt):
  """matmul, einsum and conv2d of 16-bit inputs multiply in float32 and round the sum once, as torch: with every
  product rounded first, a sum of 256 products drifts from torch's."""
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((16, 256)).astype(np.float32), rng.standard_normal((256, 8)).astype(np.float32)
  ta, tb = (torch.tensor(v).to(getattr(torch, dt)) for v in (a, b))
  want = (ta.float() @ tb.float()).to(getattr(torch, dt)).float().numpy()   # exact products, one rounding
  ea, eb = Tensor(a).cast(dt), Tensor(b).cast(dt)
  for got in ((ea @ eb), Tensor.einsum("ik,kj->ij", ea, eb)):
    np.testing.assert_allclose(got.float().numpy(), want, rtol=0, atol=np.abs(want).max() * 2.0 ** -10)
  x, w = rng.standard_normal((2, 16, 8, 8)).astype(np.float32), rng.standard_normal((4, 16, 3, 3)).astype(np.float32)
  tx, tw = (torch.tensor(v).to(getattr(torch, dt)) for v in (x, w))
  want = torch.nn.functional.conv2d(tx.float(), tw.float(), padding=1).to(getattr(torch, dt)).float().numpy()
  got = Tensor(x).cast(dt).conv2d(Tensor(w).cast(dt), padding=1).float().numpy()
  np.testing.assert_allclose(got, want, rtol=0, atol=np.abs(want).max() * 2.0 ** -10)

@pytest.mark.parametrize("dt, v, c", [("int8", 100, 2), ("int32", 2**31 - 1, 4), ("int16", -20000, 6),
                                      ("uint8", 200, 2)])
def test_no_div_mod_fold_across_a_wrapping_product(dt, v, c):
  """(x*c)//c is x only where x*c cannot wrap: fused or realized in between, teeny gives torch's wrapped answer."""
  torch = pytest.importorskip("torch")
  x, tx = Tensor([v, 3], dtype=dt), torch.tensor([v, 3], dtype=getattr(torch, dt))
  for k in (c, c // 2 if c > 2 else 1):
    np.testing.assert_array_equal(((x * c) // k).numpy(), ((tx * c) // k).numpy())
    np.testing.assert_array_equal(((x * c).realize() // k).numpy(), ((tx * c) // k).numpy())
    np.testing.assert_array_equal(((x * c) % (k + 1)).numpy(), ((tx * c) % (k + 1)).numpy())

@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2**31 - 1))
def test_index_select_and_take_along_dim_match_torch(shape, seed):
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(seed)
  a = rng.standard_normal(shape).astype(np.float32)
  dim = int(rng.integers(-len(shape), len(shape)))
  idx = rng.integers(0, shape[dim], int(rng.integers(0, 6)))
  got = Tensor(a).index_select(dim, Tensor(idx, dtype=dtypes.int64))
  want = torch.tensor(a).index_select(dim, torch.tensor(idx, dtype=torch.int64))
  assert got.shape == tuple(want.shape)
  np.testing.assert_array_equal(got.numpy(), want.numpy())
  # indices broadcast with self outside dim (a size-1 dim on either side)
  ishape = [1 if rng.random() < 0.5 else s for s in shape]
  ishape[dim] = int(rng.integers(1, 5))
  ind = rng.integers(-shape[dim], shape[dim], ishape)   # (negative: from the end, along a dim)
  got = Tensor(a).take_along_dim(Tensor(ind), dim)
  want = torch.take_along_dim(torch.tensor(a), torch.tensor(ind), dim)
  assert got.shape == tuple(want.shape)
  np.testing.assert_array_equal(got.numpy(), want.numpy())
  ind %= shape[dim]   # (flattened: torch refuses negative indices)
  np.testing.assert_array_equal(Tensor(a).take_along_dim(Tensor(ind)).numpy(),
                                torch.take_along_dim(torch.tensor(a), torch.tensor(ind)).numpy())

def test_index_select_gradient_and_errors():
  torch = pytest.importorskip("torch")
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  t, p = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  t.index_select(1, Tensor([0, 0, 3])).sum().backward()
  p.index_select(1, torch.tensor([0, 0, 3])).sum().backward()
  np.testing.assert_array_equal(t.grad.numpy(), p.grad.numpy())
  with pytest.raises(IndexError, match="index_select: index 4 is out of bounds"):
    Tensor(a).index_select(1, Tensor([4])).numpy()
  with pytest.raises(TypeError, match="integer tensor"): Tensor(a).index_select(0, Tensor([0.0]))
  with pytest.raises(RuntimeError, match="broadcast"): Tensor(a).take_along_dim(Tensor([[0, 1], [1, 0]]), 1)
  if not _reads_allowed(Device.DEFAULT): return   # (the range check reads the indices: the CPU, by default)
  with pytest.raises(RuntimeError, match=r"take_along_dim: index -5 is out of bounds .* in \[-4, 4\)"):
    Tensor(a).take_along_dim(Tensor([[-5], [0], [0]]), 1)

@settings(max_examples=20, deadline=None)
@given(st.integers(-3, 4), st.integers(0, 2**31 - 1))
def test_round_decimals_matches_torch(decimals, seed):
  torch = pytest.importorskip("torch")
  x = (np.random.default_rng(seed).standard_normal(64) * 10.0 ** np.random.default_rng(seed).integers(-2, 5)).astype(
    np.float32)
  np.testing.assert_array_equal(Tensor(x).round(decimals=decimals).numpy(),
                                torch.tensor(x).round(decimals=decimals).numpy())
  with pytest.raises(TypeError, match="float tensor"): Tensor([15]).round(decimals=-1)

def test_softmax_dtype_and_empty_axes():
  torch = pytest.importorskip("torch")
  x = np.float32([[1, 2, 3], [0, -1, 5]])
  for fn in ("softmax", "log_softmax"):
    got = getattr(Tensor(x), fn)(1, dtype="float64")
    want = getattr(torch.tensor(x), fn)(1, dtype=torch.float64)
    assert got.dtype == dtypes.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert getattr(Tensor.zeros(2, 0), fn)(1).shape == (2, 0)
  np.testing.assert_array_equal(Tensor.zeros(0, 3).logsumexp(0).numpy(), torch.zeros(0, 3).logsumexp(0).numpy())
  assert Tensor.zeros(2, 0).logsumexp(1, keepdim=True).shape == (2, 1)

def test_inplace_methods_match_torch():
  torch = pytest.importorskip("torch")
  x = np.float32([[1, -2, 3], [4, 5, -6]])
  t, p = Tensor(x), torch.tensor(x)
  tv, pv = t[1], p[1]   # a view sees every write
  for f in (lambda a: a.add_(2), lambda a: a.add_(a, alpha=0.5), lambda a: a.sub_(1, alpha=3), lambda a: a.mul_(-2),
            lambda a: a.div_(4), lambda a: a.clamp_(min=-1.5), lambda a: a.clamp_(max=2)):
    assert f(t) is t and f(p) is p
    np.testing.assert_allclose(t.numpy(), p.numpy(), rtol=1e-6)
    np.testing.assert_allclose(tv.numpy(), pv.numpy(), rtol=1e-6)
  assert tv.fill_(7) is tv and pv.fill_(7) is pv
  np.testing.assert_array_equal(t.numpy(), p.numpy())
  t.zero_()
  np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3)))
  with pytest.raises(RuntimeError, match="can't be cast"): Tensor([1, 2]).mul_(2.5)

@pytest.mark.parametrize("n", [1, 2, 3])
def test_unbatched_conv_matches_torch(n):
  """torch's conv takes an unbatched (C, *spatial) input and gives an unbatched output."""
  torch = pytest.importorskip("torch")
  rng = np.random.default_rng(n)
  x, w = rng.standard_normal((4, *[6] * n)).astype(np.float32), rng.standard_normal((3, 4, *[3] * n)).astype(np.float32)
  b = rng.standard_normal(3).astype(np.float32)
  fn = {1: "conv1d", 2: "conv2d", 3: "conv3d"}[n]
  got = getattr(Tensor(x), fn)(Tensor(w), Tensor(b), padding=1)
  want = getattr(torch.nn.functional, fn)(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=1)
  assert got.shape == tuple(want.shape)
  np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
  layer = {1: "Conv1d", 2: "Conv2d", 3: "Conv3d"}[n]
  from teeny import nn
  if hasattr(nn, layer): assert getattr(nn, layer)(4, 3, 3)(Tensor(x)).shape == (3, *[4] * n)

@needs_values
def test_signed_zero_constants_are_not_merged():
  """0.0 == -0.0 and both hash alike: the schedule cache's key keeps the sign, so x/-0.0 after x/0.0 (and x*-0.0,
  where(c, -0.0, 1)) is not the earlier graph's replay."""
  x = Tensor([3.0])
  assert (x / 0.0).tolist() == [math.inf] and (x / -0.0).tolist() == [-math.inf]
  assert (x / -0.0).tolist() == [-math.inf] and (x / 0.0).tolist() == [math.inf]
  assert (1 / (x * 0.0)).tolist() == [math.inf] and (1 / (x * -0.0)).tolist() == [-math.inf]
  c = Tensor([True])
  assert (1 / c.where(0.0, 1.0)).tolist() == [math.inf] and (1 / c.where(-0.0, 1.0)).tolist() == [-math.inf]

@needs_values
def test_plus_zero_is_not_folded_for_floats():
  """IEEE: -0.0 + 0.0 is +0.0, so a float x + 0.0 is not x (x + -0.0 and x - 0.0 are); torch gives +inf for 1/that."""
  x = Tensor([-0.0, 2.0])
  assert (1 / (x + 0.0)).tolist() == [math.inf, 0.5]
  assert (1 / (x - -0.0)).tolist() == [math.inf, 0.5]
  assert (1 / (x - 0.0)).tolist() == [-math.inf, 0.5] and (1 / (x + -0.0)).tolist() == [-math.inf, 0.5]

def test_jit_tells_signed_zero_arguments_apart():
  from teeny import TinyJit
  h = TinyJit(lambda x, s: (x / s).realize())
  for _ in range(3): h(Tensor([3.0]), 0.0)
  with pytest.raises(ValueError, match="is -0.0 but was 0.0"): h(Tensor([3.0]), -0.0)

@pytest.mark.parametrize("src,dst", [("bfloat16", "uint16"), ("float16", "int16"), ("float16", "bfloat16"),
                                     ("uint16", "bfloat16"), ("int16", "float16")])
def test_bitcast_of_16_bit_floats(src, dst):
  """16-bit floats are computed as float in every language: a bitcast goes through their 16 bits (the GPU renderers
  bitcast the float32 value, whose low 16 bits are 0 for a bfloat16)."""
  # (float16's infinities, no NaN: a float16 NaN's bits are not kept by every device's conversion, CUDA's cvt gives
  # 0x7FFF for any, as torch's CUDA float16 does; a bfloat16 NaN's are)
  f16 = "float16" in (src, dst)
  bits = np.array([0x3FC0, 0x8000, 0x7C00 if f16 else 0x7F80, 0xFC00 if f16 else 0xFF80, 0x0001, 0x3C00] +
                  ([] if f16 else [0x7FC0, 0xFFC1]), np.uint16)
  t = Tensor(bits).bitcast(getattr(dtypes, src)) if src.endswith("16") and "int" not in src else \
      Tensor(bits.view(np.dtype(src)))
  got = t.bitcast(getattr(dtypes, dst)).bitcast(dtypes.uint16 if "int" not in dst else getattr(dtypes, dst))
  np.testing.assert_array_equal(got.numpy().view(np.uint16), bits)

# ---- the fourth fuzz pass (notes/fuzz_2026-12-03d): each against torch

@pytest.mark.parametrize("call,shape,hi", [
  (lambda: Tensor.randint(5, size=(3,)), (3,), 5), (lambda: Tensor.randint(0, 5, size=(3,)), (3,), 5),
  (lambda: Tensor.randint(low=2, high=5, size=(4, 2)), (4, 2), 5), (lambda: Tensor.randint(7, shape=(6,)), (6,), 7),
  (lambda: Tensor.rand(size=(2, 3)), (2, 3), 1), (lambda: Tensor.randn(size=(2, 3)), (2, 3), None),
  (lambda: Tensor.uniform(size=(4,)), (4,), 1), (lambda: Tensor.normal(size=5), (5,), None),
  (lambda: Tensor.zeros(size=(2, 3)), (2, 3), 1), (lambda: Tensor.ones(size=[3]), (3,), 2),
  (lambda: Tensor.empty(size=(0, 2)), (0, 2), None), (lambda: Tensor.full(size=(2,), fill_value=3), (2,), 4)])
def test_creation_takes_torchs_size_keyword(call, shape, hi):
  """torch.randint(5, size=(3,)) is three ints in [0, 5): the size keyword was swallowed (shape (5,), values < 10)."""
  t = call()
  assert t.shape == shape
  if hi is not None and t.numel(): assert t.numpy().min() >= 0 and t.numpy().max() < hi

@pytest.mark.parametrize("call,match", [
  (lambda: Tensor.randint(0, 5, (3,), foo=1), "randint: unexpected keyword argument 'foo'"),
  (lambda: Tensor.rand(2, size=(3,)), "rand: pass the shape either positionally or as size=, not both"),
  (lambda: Tensor.zeros(2, bar=1), "zeros: unexpected keyword argument 'bar'"),
  (lambda: Tensor.arange(3, size=2), "arange: unexpected keyword argument 'size'"),
  (lambda: Tensor.full((2,), 1, fill=2), "full: unexpected keyword argument 'fill'"),
  (lambda: Tensor.full(fill_value=1), "full: missing the shape"),
  (lambda: Tensor.randn(3, generator=None), "randn: unexpected keyword argument 'generator'"),
  (lambda: Tensor.eye(2, layout=1), "eye: unexpected keyword argument 'layout'")])
def test_creation_refuses_unknown_keywords(call, match):
  with pytest.raises(TypeError, match=match): call()

def test_median_of_nans_splits_the_gradient_among_them():
  x = Tensor([1.0, math.nan, 3.0, math.nan], requires_grad=True)
  m = x.median()
  m.backward()
  assert math.isnan(m.item())
  np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 0, 0.5])   # torch.median's gradient

def test_nanmedian_of_an_all_nan_row_points_at_the_middle():
  x = Tensor([[math.nan] * 5, [3.0, math.nan, 1.0, 2.0, math.nan]], requires_grad=True)
  v, i = x.nanmedian(1)
  v.sum().backward()
  assert i.tolist() == [2, 3]   # torch: (n - 1) // 2 for the all-NaN row
  np.testing.assert_array_equal(x.grad.numpy()[0], [0, 0, 1, 0, 0])

def test_median_of_bool_raises():
  for f in (lambda: Tensor([True, False]).median(), lambda: Tensor([[True, False]]).nanmedian(1)):
    with pytest.raises(RuntimeError, match="not implemented for bool"): f()

def test_group_norm_of_an_empty_batch():
  out = Tensor.zeros(0, 4, 3).group_norm(2)
  assert out.shape == (0, 4, 3) and out.numpy().shape == (0, 4, 3)

def test_zero_norm_is_in_the_graph_with_zero_gradient():
  x = Tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], requires_grad=True)
  n = x.norm(p=0)
  assert n.requires_grad and n.item() == 3
  n.backward()
  np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))
  y = Tensor([[1.0, 0.0]], requires_grad=True)
  d = y.pairwise_distance(Tensor([[1.0, 5.0]]), p=0)
  assert d.requires_grad and d.tolist() == [2.0]   # torch: the eps (1e-6) added to x - y makes both nonzero

def test_negative_p_norm_of_infinities_is_inf():
  # torch.linalg.vector_norm([inf, inf], -1) = (0) ** -1 = inf; ([0, 1], -1) = 0
  assert Tensor([math.inf, math.inf]).norm(p=-1).item() == math.inf
  assert Tensor([0.0, 1.0]).norm(p=-1).item() == 0.0
  assert Tensor([[3.0, 4.0]]).half().norm(dim=1).tolist() == [5.0]

def test_bicubic_uint8_matches_torch():
  # torch 2.13 F.interpolate(uint8 (1, 1, 5, 4) of 0, 10, ..., 190, size=(7, 3), mode="bicubic"), written out
  x = (np.arange(20, dtype=np.uint8) * 10).reshape(1, 1, 5, 4)
  out = Tensor(x).interpolate(size=(7, 3), mode="bicubic")
  assert out.dtype == dtypes.uint8
  np.testing.assert_array_equal(out.numpy().ravel()[:6], [0, 12, 26, 20, 34, 48])

@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 8), w=st.integers(1, 8), oh=st.integers(1, 11), ow=st.integers(1, 11), align=st.booleans(),
       seed=st.integers(0, 2**16))
def test_bicubic_uint8_against_torch(h, w, oh, ow, align, seed):
  torch = pytest.importorskip("torch")
  x = np.random.default_rng(seed).integers(0, 256, (2, 2, h, w)).astype(np.uint8)
  ref = torch.nn.functional.interpolate(torch.tensor(x), size=(oh, ow), mode="bicubic", align_corners=align).numpy()
  np.testing.assert_array_equal(Tensor(x).interpolate(size=(oh, ow), mode="bicubic", align_corners=align).numpy(), ref)

def test_view_raises_where_torch_does_and_shares_memory_where_it_does_not():
  x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).contiguous().realize()
  with pytest.raises(RuntimeError, match="use .reshape"): x.T.view(-1)   # (it copied: a write did not reach x)
  with pytest.raises(RuntimeError, match="use .reshape"): x[:, 1:].view(-1)
  with pytest.raises(TypeError, match="bitcast"): x.view(dtypes.int32)
  v = x.view(3, 2)
  v[0, 0] = 7.0
  assert x.numpy()[0, 0] == 7
  np.testing.assert_array_equal(x.T.reshape(-1).numpy(), [7, 3, 1, 4, 2, 5])   # reshape copies instead

def test_t():
  x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
  np.testing.assert_array_equal(x.t().numpy(), np.arange(6).reshape(2, 3).T)
  assert Tensor([1.0, 2.0]).t().shape == (2,) and Tensor(3.0).t().shape == ()
  with pytest.raises(RuntimeError, match="<= 2 dimensions"): Tensor.zeros(2, 2, 2).t()

@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_view_against_torch(data):
  """A chain of permutes, slices and expands, then view to a random factoring of the size: raises exactly where
  torch's view raises, and otherwise gives torch's values."""
  torch = pytest.importorskip("torch")
  shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
  a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  tx, px = Tensor(a).contiguous().realize(), torch.tensor(a)
  for _ in range(data.draw(st.integers(1, 3))):
    c = data.draw(st.sampled_from(["perm", "slice", "expand"]))
    if c == "perm":
      p = data.draw(st.permutations(range(tx.ndim)))
      tx, px = tx.permute(*p), px.permute(*p)
    elif c == "slice":
      d = data.draw(st.integers(0, tx.ndim - 1))
      b = data.draw(st.integers(0, tx.shape[d] - 1))
      e, step = data.draw(st.integers(b + 1, tx.shape[d])), data.draw(st.integers(1, 2))
      idx = (slice(None),) * d + (slice(b, e, step),)
      tx, px = tx[idx], px[idx]
    else: tx, px = tx.unsqueeze(0).expand(2, *tx.shape), px.unsqueeze(0).expand(2, *px.shape)
  # torch's layout metadata of the view: strides (along dims of size > 1), storage offset, contiguity
  big = lambda x: [st for st, sz in zip(x.stride(), x.shape) if sz > 1]
  assert big(tx) == big(px)
  assert (tx.storage_offset(), tx.is_contiguous()) == (px.storage_offset(), px.is_contiguous())
  n, new = px.numel(), []
  for _ in range(data.draw(st.integers(0, 2))):
    d = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
    new.append(d)
    n //= d
  new.append(n)
  try: pv = px.view(new)
  except RuntimeError:
    with pytest.raises(RuntimeError, match="use .reshape"): tx.view(new)
    return
  np.testing.assert_array_equal(tx.view(new).numpy(), pv.numpy())

def test_T_reverses_all_dims():
  """numpy's and torch's .T: (2, 3, 4) -> (4, 3, 2) (it swapped dims 0 and 1 only, giving (3, 2, 4))."""
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  np.testing.assert_array_equal(Tensor(a).T.numpy(), a.T)
  np.testing.assert_array_equal(Tensor(a[0]).T.numpy(), a[0].T)

@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 300), n=st.integers(1, 8), col=st.integers(0, 7), seed=st.integers(0, 2**16))
def test_float16_strided_sums(k, n, col, seed):
  """clang 14 with 512-bit vectors summed the wrong elements of a strided float16 column (x[:, 0] of (64, 3): -4.90
  for -0.004), and so a float16 (8, 64) @ (64, 3): float16 kernels keep 256-bit vectors there."""
  col = col % n
  x = np.random.default_rng(seed).standard_normal((k, n)).astype(np.float16)
  got = Tensor(x)[:, col].cast(dtypes.float32).sum().item()
  np.testing.assert_allclose(got, x[:, col].astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
  w = np.random.default_rng(seed + 1).standard_normal((8, k)).astype(np.float16)
  ref = w.astype(np.float64) @ x.astype(np.float64)
  np.testing.assert_allclose((Tensor(w) @ Tensor(x)).numpy().astype(np.float64), ref, rtol=2e-2, atol=2e-2 * np.sqrt(k))

@settings(max_examples=40, deadline=None)
@given(dt=st.sampled_from(["float16", "bfloat16"]), op=st.sampled_from(["+", "-", "*", "/", "r-", "r/"]),
       s=st.sampled_from([0.1, 0.7, 1 / 3, 3.0, -2.5, 1e-9, 1e5, 7e4, 1e10, 123456.789, 2**-30, 5, 100001]),
       seed=st.integers(0, 2**16))
def test_half_op_python_scalar_rounds_once_as_torch(dt, op, s, seed):
  """torch multiplies and divides a 16-bit tensor by a Python number with the number in float32 and rounds the result
  once; teeny rounded the number to the 16-bit dtype first (bfloat16 * 0.1 used 0.10009765625; float16 * 1e5 used
  inf). (+ and - round the number first, in torch too.)"""
  torch = pytest.importorskip("torch")
  x = (np.random.default_rng(seed).standard_normal(64) * 10).astype(np.float32)
  f = {"+": lambda t: t + s, "-": lambda t: t - s, "*": lambda t: t * s, "/": lambda t: t / s,
       "r-": lambda t: s - t, "r/": lambda t: s / t}[op]
  ref = f(torch.tensor(x).to(getattr(torch, dt))).float().numpy()
  got = f(Tensor(x).cast(dt))
  assert got.dtype == getattr(dtypes, dt)
  if op == "r/":   # (torch's s / t is t.reciprocal() * s, rounded twice: within an ulp)
    np.testing.assert_allclose(got.cast(dtypes.float32).numpy(), ref, rtol=2e-3 if dt == "float16" else 1.6e-2)
  else: np.testing.assert_array_equal(got.cast(dtypes.float32).numpy(), ref)

def test_stride_storage_offset_is_contiguous():
  torch = pytest.importorskip("torch")
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  t, p = Tensor(a).contiguous().realize(), torch.tensor(a)
  views = [lambda x: x, lambda x: x.permute(2, 0, 1), lambda x: x[:, 1:, ::2], lambda x: x.transpose(0, 1)[1],
           lambda x: x[:, :1], lambda x: x.unsqueeze(0).expand(3, 2, 3, 4), lambda x: x.flip(0),
           lambda x: x.reshape(6, 4)[1:], lambda x: x + 1, lambda x: x[1], lambda x: x.T.contiguous(),
           lambda x: Tensor.zeros(2, 1, 3) if isinstance(x, Tensor) else torch.zeros(2, 1, 3)]
  for f in views:
    tv, pv = f(t), f(p)
    assert (tv.stride(), tv.storage_offset(), tv.is_contiguous()) == (pv.stride(), pv.storage_offset(),
                                                                     pv.is_contiguous())
    assert tv.stride(-1) == pv.stride(-1)
  assert Tensor.zeros(2, 3).is_contiguous(memory_format=torch.contiguous_format)
  with pytest.raises(NotImplementedError, match="row-major"): Tensor.zeros(2, 3).is_contiguous(torch.channels_last)

# ---- sixth fuzz pass (notes/fuzz_2026-12-03f)

@pytest.mark.parametrize("write", ["neg_", "mul_", "add_", "mask", "index", "zero_", "view"])
def test_no_grad_write_keeps_the_autograd_graph(write):
  """torch: a write under no_grad is not recorded and the tensor keeps its grad_fn, so the gradient passes as if
  nothing had been written (x.grad 31 here); teeny cut y off (x.grad 1)."""
  torch = pytest.importorskip("torch")
  a = np.array([-1.5, 2.0, 0.5], dtype=np.float32)
  def run(lib):
    x = Tensor(a, requires_grad=True) if lib is Tensor else torch.tensor(a, requires_grad=True)
    y = x * 3.0
    with (Tensor.no_grad() if lib is Tensor else torch.no_grad()):
      if write == "neg_": y.neg_()
      elif write == "mul_": y.mul_(2)
      elif write == "add_": y += 1
      elif write == "mask": y[y > 0] = 0.0
      elif write == "index": y[0] = 7.0
      elif write == "zero_": y.zero_()
      else: y[1:].mul_(-1)
    (x.sum() + (y * 10).sum()).backward()
    return (y.numpy() if lib is Tensor else y.detach().numpy()), x.grad.numpy()
  for got, want in zip(run(Tensor), run(torch)): np.testing.assert_allclose(got, want)

def test_write_through_detached_view_is_not_recorded_on_the_base():
  x, w = Tensor([0.0, 0.25, 0.5], requires_grad=True), Tensor([0.5, 0.5, 0.5], requires_grad=True)
  y = x * 2.0
  y.detach().mul_(w)
  (y * 3).sum().backward()
  np.testing.assert_allclose(y.numpy(), [0.0, 0.25, 0.5])
  np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])   # (torch's: y keeps its graph; w gets nothing)
  assert w.grad is None

@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp", "abs_u8", "round_u8", "floor_u8", "sign_bool",
                                "interpolate", "max_pool1d", "pixel_shuffle"])
def test_ops_with_nothing_to_do_do_not_alias_their_input(op):
  """A result torch copies must not share the input's memory even where the op has nothing to do (it returned self,
  or a view: y += 1 changed x)."""
  f = {"cumsum": lambda x: x.cumsum(1), "cumprod": lambda x: x.cumprod(1), "logcumsumexp": lambda x: x.logcumsumexp(1),
       "abs_u8": lambda x: x.abs(), "round_u8": lambda x: x.round(), "floor_u8": lambda x: x.floor(),
       "sign_bool": lambda x: x.sign(), "interpolate": lambda x: x.interpolate(size=(4,)),
       "max_pool1d": lambda x: x.max_pool1d(1), "pixel_shuffle": lambda x: x.pixel_shuffle(1)}[op]
  if op.endswith("u8"): a = np.array([[1], [2]], np.uint8)
  elif op == "sign_bool": a = np.array([[True], [False]])
  elif op in ("interpolate", "max_pool1d"): a = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
  elif op == "pixel_shuffle": a = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
  else: a = np.array([[0.5], [1.5]], np.float32)
  x = Tensor(a).contiguous().realize()
  y = f(x)
  if op == "sign_bool": y.logical_not_()
  else: y += 1
  np.testing.assert_array_equal(x.numpy(), a)

@pytest.mark.parametrize("when", ["before", "after"])
def test_retain_grad_across_realize(when):
  x = Tensor([[0.5, -2.0], [1.5, 2.0]], requires_grad=True)
  y = x * 3.0
  if when == "before": y.retain_grad()
  y.realize()
  if when == "after": y.retain_grad()
  (y * Tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
  np.testing.assert_array_equal(y.grad.numpy(), [[1, 2], [3, 4]])
  np.testing.assert_array_equal(x.grad.numpy(), [[3, 6], [9, 12]])

def test_write_into_an_empty_view_then_backward():
  """It made backward() loop for ever (a write of nothing mapped a version to a graph holding itself)."""
  x = Tensor(np.arange(16, dtype=np.float32).reshape(4, 2, 2) / 8, requires_grad=True)
  y = x * 2.0
  v = y * 0.5 + 0.25
  y.numpy()
  y[:, 2:1, :].reshape(1, 0).zero_()
  y.realize()
  w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 2, 2)
  (v * Tensor(w)).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), w)

def test_bfloat16_copy_between_devices():
  x = Tensor([1.5, -2.0], dtype=dtypes.bfloat16)
  y = x.to("CPU:1")
  assert (y.device, y.dtype) == ("CPU:1", dtypes.bfloat16)
  np.testing.assert_array_equal(y.to("CPU").numpy(), [1.5, -2.0])

def test_to_takes_torchs_forms_and_select():
  torch = pytest.importorskip("torch")
  x = Tensor([1.5, 2.5])
  assert x.to(dtypes.float16).dtype == dtypes.float16 and x.to("int32").dtype == dtypes.int32 and x.to(x) is x
  y = x.to("CPU:1", dtypes.int32)
  assert (y.device, y.dtype) == ("CPU:1", dtypes.int32) and x.to(x, copy=True) is not x
  assert x.to(device="CPU:1", dtype="bfloat16").dtype == dtypes.bfloat16
  with pytest.raises(TypeError, match="expected a device, a dtype or a Tensor"): x.to(3.5)
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  np.testing.assert_array_equal(Tensor(a).select(1, -1).numpy(), torch.tensor(a).select(1, -1).numpy())
  v = Tensor(a).contiguous().realize()
  s = v.select(0, 1)
  s += 100   # (a view, as torch's)
  assert v.numpy()[1, 0, 0] == 112

@pytest.mark.parametrize("op", ["relu_", "tanh_", "clamp_", "masked_fill_", "setitem_mask"])
def test_in_place_after_a_partial_write_then_loss_item_then_grad(op):
  """The usual step order (backward, read the loss, read the gradients) raised "a kernel needs the contents a tensor
  had before it was modified in place": reading the loss ran the in-place op's write before the lazy gradients that
  read h between the two writes."""
  torch = pytest.importorskip("torch")
  a = np.array([1.0, -2.0, 3.0, -4.0], dtype=np.float32)
  def run(lib):
    x = Tensor(a, requires_grad=True) if lib is Tensor else torch.tensor(a, requires_grad=True)
    h = x * 2.0
    h[0] = 0.0
    if op == "relu_": h.relu_()
    elif op == "tanh_": h.tanh_()
    elif op == "clamp_": h.clamp_(-1, 1)
    elif op == "masked_fill_": h.masked_fill_(h < 0, 9.0)
    else: h[h < 0] = 0.0
    loss = (h * 2).sum()
    loss.backward()
    return loss.item(), x.grad.numpy()
  got, want = run(Tensor), run(torch)
  np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
  np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-7)

@needs_values
def test_view_taken_before_a_gradient_carrying_write_into_its_base_requires_grad():
  """A view of a tensor that did not require grad, taken before a write of a value that does into the base, kept
  requires_grad None, so backward() through the view raised; torch rebases the view (it requires grad, the gradient
  reaches the written value). A detach()ed view stays out of it."""
  torch = pytest.importorskip("torch")
  def run(lib):
    mk = Tensor if lib is Tensor else torch.tensor
    w, x = mk([5.0], requires_grad=True), mk([1.0, 2.0, 3.0])
    v, d = x[0:2], x.detach()[1:]
    x[0:1] = w * 3
    (v * mk([1.0, 10.0])).sum().backward()
    vals = v.numpy() if lib is Tensor else v.detach().numpy()
    return bool(v.requires_grad), bool(d.requires_grad), vals, w.grad.numpy()
  got, want = run(Tensor), run(torch)
  assert got[:2] == want[:2] == (True, False)
  np.testing.assert_allclose(got[2], want[2])
  np.testing.assert_allclose(got[3], want[3])

def test_tensor_functions_reached_through_a_tensor_take_it_as_first_operand():
  """x.block_diag(y), x.cartesian_prod(y), x.meshgrid(y) dropped x (staticmethods reached through an instance)."""
  x, y = Tensor([[1.0]]), Tensor([[2.0, 3.0]])
  assert x.block_diag(y).shape == Tensor.block_diag(x, y).shape == (2, 3)
  a, b = Tensor([1, 2]), Tensor([3, 4, 5])
  assert a.cartesian_prod(b).shape == (6, 2) and [t.shape for t in a.meshgrid(b)] == [(2, 3), (2, 3)]

@pytest.mark.parametrize("dt, lo, hi", [(dtypes.int8, None, 300), (dtypes.int8, -3, 200), (dtypes.int16, -40000, None),
                                        (dtypes.uint8, None, 256)])
def test_int_clamp_bound_out_of_range_raises(dt, lo, hi):
  """An int bound outside an int tensor's range was cast (wrapped) to its dtype: int8.clamp(max=300) clamped to 44
  (torch raises). A negative bound of an unsigned tensor wraps, as torch's (uint8 clamp(max=-1): 255)."""
  x = Tensor(np.array([100, -100, 5]).astype(dt.np))
  with pytest.raises(OverflowError, match="without overflow"): x.clamp(lo, hi)

@needs_values
def test_int_clamp_in_range_and_negative_unsigned_bound_match_torch():
  torch = pytest.importorskip("torch")
  v = np.array([100, 156, 5], np.uint8)
  np.testing.assert_array_equal(Tensor(v).clamp(max=-1).numpy(), torch.tensor(v).clamp(max=-1).numpy())
  np.testing.assert_array_equal(Tensor(v.astype(np.int8)).clamp(-3, 50).numpy(),
                                torch.tensor(v.astype(np.int8)).clamp(-3, 50).numpy())

@needs_values
def test_conv_and_cross_entropy_of_an_empty_batch():
  """conv2d (the hand-written backward's path) of an empty batch raised ShapeError; torch gives an empty result and
  zero gradients."""
  import teeny.nn.functional as F
  x, w = Tensor.zeros(0, 3, 5, 5, requires_grad=True), Tensor.ones(2, 3, 3, 3, requires_grad=True)
  y = F.conv2d(x, w)
  assert y.shape == (0, 2, 3, 3) and y.requires_grad
  y.sum().backward()
  assert x.grad.shape == (0, 3, 5, 5) and w.grad.shape == (2, 3, 3, 3) and not w.grad.numpy().any()
  logits = Tensor.zeros(0, 4, requires_grad=True)
  loss = F.cross_entropy(logits, Tensor.zeros(0, dtype=dtypes.int32), reduction="none")
  assert loss.shape == (0,)
  loss.sum().backward()
  assert logits.grad.shape == (0, 4)

@needs_values
def test_shift_with_a_bool_operand_promotes_like_torch():
  torch = pytest.importorskip("torch")
  a, b = np.array([8, 7, -4], np.int32), np.array([True, False, True])
  np.testing.assert_array_equal((Tensor(a) >> Tensor(b)).numpy(), (torch.tensor(a) >> torch.tensor(b)).numpy())
  np.testing.assert_array_equal((Tensor(b) << Tensor(np.abs(a))).numpy(),
                                (torch.tensor(b) << torch.tensor(np.abs(a))).numpy())
  with pytest.raises(TypeError, match="two bool operands"): Tensor(b) << Tensor(b)

def test_requires_grad_is_a_bool_as_in_torch():
  """requires_grad was None (tinygrad's "not set") for plain tensors, detach() and no_grad results; torch says False.
  The optimizer still trains a float tensor whose requires_grad was never set."""
  from teeny.nn.optim import SGD
  x = Tensor([1.0, 2.0])
  assert x.requires_grad is False and x.detach().requires_grad is False and (x * 2).requires_grad is False
  SGD([x], lr=0.1)
  assert x.requires_grad is True
  frozen = Tensor([1.0], requires_grad=False)
  SGD([frozen, Tensor([2.0], requires_grad=True)], lr=0.1)
  assert frozen.requires_grad is False

@needs_values
@pytest.mark.parametrize("n", [4, 16])
def test_float_to_small_int_cast_out_of_range_wraps_like_numpy(n):
  """(unsigned char)(float) is undefined in C: clang's vectorised loop saturated (-1.0 -> uint8 0) where the scalar
  one wrapped (255), so the result depended on the tensor's size. Casts now go through int32 (int64 for uint32)."""
  v = np.resize(np.array([-1.0, 300.7, 70000.5, -2.5], np.float32), n)
  for dt in (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.uint16):
    np.testing.assert_array_equal(Tensor(v).cast(dt).numpy(), v.astype(np.int32).astype(dt.np))

@needs_values
def test_i0_gradient_where_the_series_terms_overflow():
  """i0's gradient through its 40-term series was NaN for about 7 <= |x| <= 20 (the terms' adjoints overflowed float32
  where their coefficients underflowed); it is I1(x), as torch's."""
  torch = pytest.importorskip("torch")
  v = np.array([0.0, 0.5, -3.0, 7.0, -10.0, 15.0, 19.9, 20.5, -25.0, 40.0], np.float32)
  x, tx = Tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
  x.i0().sum().backward()
  torch.i0(tx).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-6)

@needs_values
def test_matrix_power_zero_of_a_tensor_that_requires_grad():
  """matrix_power(0) gave identities cut off from autograd: backward() raised; torch gives zero gradients (and the
  identities even where the input holds inf)."""
  m = Tensor(np.array([[1.0, np.inf], [2.0, 3.0]], np.float32), requires_grad=True)
  r = m.matrix_power(0)
  r.sum().backward()
  np.testing.assert_array_equal(r.numpy(), np.eye(2))
  np.testing.assert_array_equal(m.grad.numpy(), np.zeros((2, 2)))

@needs_values
@pytest.mark.parametrize("op", ["//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>="])
def test_augmented_assignments_write_through_a_view(op):
  """//=, %=, **=, &=, |=, ^=, <<= and >>= made a new tensor (Python's fallback x = x op y), so a view's base was not
  written; torch writes in place, as teeny's += -= *= /= do."""
  torch = pytest.importorskip("torch")
  a = np.array([[7, 9, 11], [4, 5, 6]], np.int32)
  def run(lib):
    base = Tensor(a) if lib is Tensor else torch.tensor(a)
    import operator
    fn = {"//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "&=": operator.iand, "|=": operator.ior,
          "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift}[op]
    fn(base[0], 2)   # (what `v = base[0]; v op= 2` calls)
    return base.numpy()
  np.testing.assert_array_equal(run(Tensor), run(torch))

@needs_values
def test_add_sub_alpha_and_half_gelu_and_step_without_grads():
  """Tensor.add/sub took no alpha (add_/sub_ did); gelu in float16/bfloat16 lost its negative tail (1 + erf cancelled
  in 16 bits: bf16 gelu(-4) was 0); optimizer.step() with no gradients raised (torch: a no-op)."""
  torch = pytest.importorskip("torch")
  x, y = Tensor([1.0, 2.0]), Tensor([10.0, 20.0])
  np.testing.assert_array_equal(x.add(y, alpha=2).numpy(), [21.0, 42.0])
  np.testing.assert_array_equal(x.sub(y, alpha=2).numpy(), [-19.0, -38.0])
  v = np.array([-6.0, -4.0, -3.0, -1.0, 0.5, 3.0], np.float32)
  for dt, tdt in ((dtypes.float16, torch.float16), (dtypes.bfloat16, torch.bfloat16)):
    for approx in ("none", "tanh"):
      got = Tensor(v).cast(dt).gelu(approx).float().numpy()
      want = torch.nn.functional.gelu(torch.tensor(v).to(tdt), approximate=approx).float().numpy()
      np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-7)
  from teeny.nn.optim import Adam
  p = Tensor([1.0, 2.0], requires_grad=True)
  opt = Adam([p], lr=0.1)
  opt.step()
  np.testing.assert_array_equal(p.numpy(), [1.0, 2.0])

@needs_values
def test_cross_entropy_probability_targets_differentiate_the_weight():
  """With probability targets torch's cross_entropy differentiates `weight` (its path is ordinary ops); teeny detached
  it there as for class-index targets (where torch has no weight gradient either)."""
  torch = pytest.importorskip("torch")
  import teeny.nn.functional as F
  rng = np.random.default_rng(0)
  x, p = rng.standard_normal((3, 4)).astype(np.float32), np.full((3, 4), 0.25, np.float32)
  w = np.abs(rng.standard_normal(4)).astype(np.float32)
  yx, yw = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)
  tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
  F.cross_entropy(yx, Tensor(p), weight=yw).backward()
  torch.nn.functional.cross_entropy(tx, torch.tensor(p), weight=tw).backward()
  np.testing.assert_allclose(yw.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
  np.testing.assert_allclose(yx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)

def test_embedding_bag_first_offset_must_be_zero():
  """embedding_bag with offsets[0] > 0 silently dropped the ids before it (they belong to no bag); torch raises."""
  import teeny.nn.functional as F
  if not _reads_allowed(Device.DEFAULT): pytest.skip("the check reads the offsets (where teeny reads data)")
  with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
    F.embedding_bag(Tensor([1, 2, 3]), Tensor.ones(5, 2), Tensor([1, 2]))
