"""nn-functional parity with torch (fuzz round 2026-12-03b): max pooling's pick (ties, nans, padding) for values,
indices and gradients; integer avg_pool; layer_norm / group_norm / instance_norm; unbatched and empty conv_transpose and
conv_transpose1d/3d; adaptive avg/max pools; interpolate bicubic and area; pixel_shuffle / pixel_unshuffle.

`compare_torch` (helpers.py) compares values, dtypes and input gradients with torch; under DEV=NULL it only builds and
realizes the forward and backward graphs (nothing runs)."""
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Tensor, dtypes
from helpers import assert_close, compare_torch, is_null, needs_values, sample_array

torch = pytest.importorskip("torch")
F = torch.nn.functional

def _ties(shape, seed=0, nan=0.1, ninf=0.1):
  """Small integers (many ties) with some nans and -infs."""
  rng = np.random.default_rng(seed)
  x = np.round(rng.uniform(-2, 2, shape)).astype(np.float32)
  r = rng.random(shape)
  x[r < nan] = np.nan
  x[(r >= nan) & (r < nan + ninf)] = -np.inf
  return x

# ***** max pooling: torch's pick *****

def test_maxpool_nan_indices_repro():
  # the fuzz repro: several nans in a window, torch reports the last one
  x = np.array([[[[1, np.nan], [np.nan, 3]]]], np.float32)
  compare_torch(lambda x: x.max_pool2d(2, return_indices=True), lambda x: F.max_pool2d(x, 2, return_indices=True), [x])
  x = np.array([[[[np.nan, 5, np.nan, 1]]]], np.float32)
  compare_torch(lambda x: x.max_pool2d((1, 4), return_indices=True),
                lambda x: F.max_pool2d(x, (1, 4), return_indices=True), [x])

@pytest.mark.parametrize("ri", [False, True])
def test_maxpool_tie_gradient_repro(ri):
  # the whole gradient goes to the first maximum, with or without return_indices
  x = np.array([[[1., 1., 0., 0.]]], np.float32)
  compare_torch(lambda x: x.max_pool1d(2, return_indices=ri), lambda x: F.max_pool1d(x, 2, return_indices=ri), [x])

@pytest.mark.parametrize("n,k,s,p,d,ceil", [(1, 3, 1, 1, 1, False), (1, 2, 2, 1, 2, True), (2, 2, None, 0, 1, False),
                                            (2, 3, 2, 1, 1, False), (2, (3, 2), (1, 2), (1, 1), (2, 1), True),
                                            (2, 3, 3, 1, 1, True), (3, 2, 1, 1, 1, False),
                                            (3, (3, 2, 2), 2, 1, 1, True)])
@pytest.mark.parametrize("ri", [False, True])
def test_maxpool_ties_nans(n, k, s, p, d, ceil, ri):
  x = _ties((2, 2) + (7, 6, 5)[:n], seed=n)
  fn = f"max_pool{n}d"
  compare_torch(lambda x: getattr(x, fn)(k, s, p, d, ceil, return_indices=ri),
                lambda x: getattr(F, fn)(x, k, s, p, d, ceil, return_indices=ri), [x])

def test_maxpool_signed_zeros_and_no_grad():
  # ties between -0.0 and 0.0 keep the first one's sign, in the value-only path (no gradient) too
  x = np.array([[[-0.0, 0.0, 0.0, -0.0, -1.0, -0.0]]], np.float32)
  want = F.max_pool1d(torch.tensor(x), 2).numpy()
  for rg in (False, True):
    got = Tensor(x, requires_grad=rg).max_pool1d(2)
    if not is_null(): np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))
  with Tensor.no_grad():
    v = Tensor(_ties((1, 2, 6, 6)), requires_grad=True).max_pool2d(3, 1, 1)
  if not is_null():
    np.testing.assert_array_equal(v.numpy(), F.max_pool2d(torch.tensor(_ties((1, 2, 6, 6))), 3, 1, 1).numpy())

def test_maxpool_all_minus_inf_with_padding():
  # a window of -inf only: torch picks its first element inside the input (never the padding)
  x = np.full((1, 1, 5, 4), -np.inf, np.float32)
  compare_torch(lambda x: x.max_pool2d(3, 1, 1, return_indices=True),
                lambda x: F.max_pool2d(x, 3, 1, 1, return_indices=True), [x])
  compare_torch(lambda x: x.max_pool2d(3, 2, 1, dilation=2, return_indices=True),
                lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, return_indices=True), [x])

def test_maxpool_int_unbatched_noncontiguous_f16():
  xi = np.random.default_rng(0).integers(-3, 3, (2, 5, 6)).astype(np.int64)
  compare_torch(lambda x: x.max_pool2d(2, 1, 1, return_indices=True),
                lambda x: F.max_pool2d(x, 2, 1, 1, return_indices=True), [xi])
  x = _ties((3, 2, 6, 5), nan=0.05)
  compare_torch(lambda x: x.transpose(-1, -2).max_pool2d(2, 1, return_indices=True),
                lambda x: F.max_pool2d(x.transpose(-1, -2), 2, 1, return_indices=True), [x])
  compare_torch(lambda x: x[:, :, 1:, ::2].max_pool2d(2, 1), lambda x: F.max_pool2d(x[:, :, 1:, ::2], 2, 1), [x])
  compare_torch(lambda x: x.max_pool1d(3, 2, 1), lambda x: F.max_pool1d(x, 3, 2, 1), [_ties((4, 9)).astype(np.float16)])
  compare_torch(lambda x: x.max_pool2d(2, return_indices=True), lambda x: F.max_pool2d(x, 2, return_indices=True),
                [np.zeros((0, 2, 4, 4), np.float32)])

@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), data=st.data())
def test_maxpool_property(n, data):
  k = tuple(data.draw(st.integers(1, 3)) for _ in range(n))
  s = tuple(data.draw(st.integers(1, 3)) for _ in range(n))
  d = tuple(data.draw(st.integers(1, 2)) for _ in range(n))
  p = tuple(data.draw(st.integers(0, kk // 2)) for kk in k)
  ceil, ri = data.draw(st.booleans()), data.draw(st.booleans())
  sp = tuple(data.draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 6)) for kk, dd, pp in zip(k, d, p))
  # every window must hold an element of the input (torch's backward writes out of bounds otherwise)
  for i, kk, ss, pp, dd in zip(sp, k, s, p, d):
    o = (i + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil else 0)) // ss + 1
    if ceil and (o - 1) * ss >= i + pp: o -= 1
    if not all(any(0 <= oo * ss - pp + j * dd < i for j in range(kk)) for oo in range(o)): return
  x = _ties((2, 2) + sp, seed=data.draw(st.integers(0, 1000)))
  fn = f"max_pool{n}d"
  compare_torch(lambda x: getattr(x, fn)(k, s, p, d, ceil, return_indices=ri),
                lambda x: getattr(F, fn)(x, k, s, p, d, ceil, return_indices=ri), [x])

def test_maxpool_errors():
  with pytest.raises(NotImplementedError, match="bool"): Tensor.ones(1, 1, 4, 4, dtype=dtypes.bool).max_pool2d(2)
  with pytest.raises(ValueError, match="larger than the padded input"): Tensor.ones(1, 1, 2, 2).max_pool2d(3)

# ***** avg pooling of integers *****

@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, stride=1, padding=1, count_include_pad=False),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, stride=1, padding=1, divisor_override=3),
                                dict(kernel_size=2, stride=1, padding=1, divisor_override=-3)])
def test_avgpool_int64(kw):
  x = np.random.default_rng(0).integers(-9, 9, (2, 3, 5, 6)).astype(np.int64)
  compare_torch(lambda x: x.avg_pool2d(**kw), lambda x: F.avg_pool2d(x, **kw), [x])
  kw1 = {k: v for k, v in kw.items() if k != "divisor_override"}
  compare_torch(lambda x: x.avg_pool1d(**kw1), lambda x: F.avg_pool1d(x, **kw1), [x[0]])

def test_avgpool_int_repro_and_other_ints():
  x = np.array([[[[1, 2], [2, 2]]]], np.int64)
  compare_torch(lambda x: x.avg_pool2d(2), lambda x: F.avg_pool2d(x, 2), [x])
  # torch refuses int32; here it follows int64's rule in its own dtype
  t = Tensor(np.array([[[-1, -2, 3, 4]]], np.int32)).avg_pool1d(2)
  assert t.dtype == dtypes.int32
  if not is_null(): np.testing.assert_array_equal(t.numpy(), [[[-1, 3]]])
  with pytest.raises(NotImplementedError, match="bool"): Tensor.ones(1, 4, 4, dtype=dtypes.bool).avg_pool2d(2)

# ***** layer_norm, group_norm, instance_norm *****

@pytest.mark.parametrize("ns", [(4,), (3, 4), 4])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(ns, affine):
  shp = (ns,) if isinstance(ns, int) else ns
  args = [sample_array((2, 3, 4)), sample_array(shp, 1), sample_array(shp, 2)] if affine else [sample_array((2, 3, 4))]
  compare_torch(lambda x, *wb: x.layer_norm(ns, *wb, eps=1e-3), lambda x, *wb: F.layer_norm(x, shp, *wb, eps=1e-3),
                args)
  compare_torch(lambda x, *wb: x.transpose(0, 1).layer_norm(ns, *wb), lambda x,
                *wb: F.layer_norm(x.transpose(0, 1), shp, *wb), [sample_array((3, 2, 4)), *args[1:]])

@pytest.mark.parametrize("dt", [np.float16, "bfloat16"])
@pytest.mark.parametrize("wdt", ["same", np.float32, None])
def test_layer_norm_16bit(dt, wdt):
  x = sample_array((3, 5)) * 50
  w, b = sample_array(5, 1), sample_array(5, 2)
  tdt = torch.float16 if dt is np.float16 else torch.bfloat16
  teeny_dt = dtypes.float16 if dt is np.float16 else dtypes.bfloat16
  def tt(a, same): return Tensor(a).cast(teeny_dt) if same else Tensor(a)
  def pt(a, same): return torch.tensor(a).to(tdt) if same else torch.tensor(a)
  same = wdt == "same"
  tw = (tt(w, same), tt(b, same)) if wdt is not None else (None, None)
  pw = (pt(w, same), pt(b, same)) if wdt is not None else (None, None)
  got, want = Tensor(x).cast(teeny_dt).layer_norm(5, *tw), F.layer_norm(torch.tensor(x).to(tdt), (5,), *pw)
  assert got.dtype == teeny_dt
  if not is_null(): assert_close(got.float().numpy(), want.float().numpy(), 2e-2, 2e-2, "16-bit layer_norm")

def test_layernorm_f16_repro():
  x = sample_array((2, 3)).astype(np.float16)
  assert Tensor(x).layer_norm(3, Tensor.ones(3), Tensor.zeros(3)).dtype == dtypes.float16
  assert Tensor(x).layernorm().dtype == dtypes.float16   # (tinygrad's name still works)

@pytest.mark.parametrize("shape,g", [((2, 6, 5), 3), ((2, 4, 3, 3), 1), ((3, 4), 4), ((2, 6, 2, 1, 3), 2)])
def test_group_norm(shape, g):
  c = shape[1]
  compare_torch(lambda x, w, b: x.group_norm(g, w, b, 1e-4), lambda x, w, b: F.group_norm(x, g, w, b, 1e-4),
                [sample_array(shape), sample_array(c, 1), sample_array(c, 2)])
  compare_torch(lambda x: x.group_norm(g), lambda x: F.group_norm(x, g), [sample_array(shape)])
  h = sample_array(shape).astype(np.float16)
  compare_torch(lambda x: x.group_norm(g), lambda x: F.group_norm(x, g), [h], atol=2e-3, rtol=2e-3, grad=False)

@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 3), (1, 2, 2, 2, 3)])
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm(shape, affine):
  c = shape[1]
  wb = [sample_array(c, 1), sample_array(c, 2)] if affine else []
  compare_torch(lambda x, *wb: x.instance_norm(None, None, *wb), lambda x, *wb: F.instance_norm(x, None, None, *wb),
                [sample_array(shape), *wb])

@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_stats(use_input_stats):
  x, w, b = sample_array((3, 4, 5, 2)), sample_array(4, 1), sample_array(4, 2)
  rm, rv = sample_array(4, 3), np.random.default_rng(4).uniform(0.5, 2, 4).astype(np.float32)
  trm, trv, Rm, Rv = torch.tensor(rm), torch.tensor(rv), Tensor(rm), Tensor(rv)
  compare_torch(lambda x, w, b: x.instance_norm(Rm, Rv, w, b, use_input_stats, 0.3, 1e-4),
                lambda x, w, b: F.instance_norm(x, trm, trv, w, b, use_input_stats, 0.3, 1e-4), [x, w, b])
  if not is_null():
    assert_close(Rm.numpy(), trm.numpy(), 1e-6, 1e-5, "running_mean")
    assert_close(Rv.numpy(), trv.numpy(), 1e-6, 1e-5, "running_var")

def test_norm_errors():
  x = Tensor.ones(2, 3, 4)
  with pytest.raises(RuntimeError, match="normalized_shape"): x.layer_norm(3)
  with pytest.raises(RuntimeError, match="weight must have shape"): x.layer_norm(4, Tensor.ones(3))
  with pytest.raises(RuntimeError, match="mixed dtypes"): x.layer_norm(4, Tensor.ones(4, dtype=dtypes.float16))
  with pytest.raises(NotImplementedError, match="int"): Tensor.ones(2, 4, dtype=dtypes.int32).layer_norm(4)
  with pytest.raises(RuntimeError, match="divisible by num_groups"): x.group_norm(2)
  with pytest.raises(ValueError, match="more than 1 spatial element"): Tensor.ones(2, 3, 1).instance_norm()
  with pytest.raises(ValueError, match="at least 3 dims"): Tensor.ones(2, 3).instance_norm()
  with pytest.raises(ValueError, match="use_input_stats=False"): x.instance_norm(use_input_stats=False)

# ***** conv_transpose *****

def test_conv_transpose_unbatched_repro():
  x, w = sample_array((2, 5, 5)), sample_array((2, 3, 2, 2), 1)
  compare_torch(lambda x, w: x.conv_transpose2d(w, stride=2), lambda x, w: F.conv_transpose2d(x, w, stride=2), [x, w])

@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose_nd(n, batched):
  x = sample_array(((2,) if batched else ()) + (4,) + (5, 4, 3)[:n])
  w, b = sample_array((4, 3, *(3, 2, 2)[:n]), 1), sample_array(6, 2)
  fn = f"conv_transpose{n}d"
  compare_torch(lambda x, w, b: getattr(x, fn)(w, b, 2, 1, 1, 2, 1), lambda x, w,
                b: getattr(F, fn)(x, w, b, 2, 1, 1, 2, 1), [x, w, b])
  compare_torch(lambda x, w: getattr(x, fn)(w, dilation=2), lambda x, w: getattr(F, fn)(x, w, dilation=2), [x, w])

def test_conv_transpose_zero_output():
  x, w, b = sample_array((2, 1, 3)), sample_array((1, 1, 2), 1), sample_array(1, 2)
  compare_torch(lambda x, w, b: x.conv_transpose1d(w, b, padding=2), lambda x, w,
                b: F.conv_transpose1d(x, w, b, padding=2), [x, w, b])
  # torch's 2-d and 3-d kernels refuse an empty output that its 1-d one gives; here every rank gives it
  x, w = Tensor(sample_array((1, 1, 3, 2)), requires_grad=True), Tensor(sample_array((1, 2, 2, 2), 1),
                requires_grad=True)
  y = x.conv_transpose2d(w, padding=(2, 0))
  assert y.shape == (1, 2, 0, 3)
  y.sum().backward()
  if not is_null(): assert not x.grad.numpy().any() and not w.grad.numpy().any()

def test_conv_transpose_errors():
  with pytest.raises(RuntimeError, match="too small"): Tensor.ones(2, 1, 3).conv_transpose1d(Tensor.ones(1, 1, 2),
                                                                                            padding=3)
  with pytest.raises(RuntimeError, match="conv_transpose1d wants"): Tensor.ones(2, 1, 3).conv_transpose1d(
    Tensor.ones(1, 1, 2, 2))
  with pytest.raises(RuntimeError, match="conv_transpose3d wants"): Tensor.ones(1, 1, 3, 3).conv_transpose3d(
    Tensor.ones(1, 1, 2, 2))

# ***** adaptive pooling *****

@pytest.mark.parametrize("n,shape,out", [(1, (2, 3, 10), 3), (1, (3, 7), 7), (1, (2, 2, 5), 8),
                                         (2, (2, 3, 7, 9), (3, 4)),
                                         (2, (3, 8, 8), 4), (2, (2, 2, 5, 6), (None, 4)), (2, (1, 2, 4, 4), 1),
                                         (3, (1, 2, 5, 4, 6), (2, 3, 4)), (3, (2, 4, 4, 3), (2, None, 2))])
def test_adaptive_pools(n, shape, out):
  x = _ties(shape, nan=0.0)
  compare_torch(lambda x: getattr(x, f"adaptive_avg_pool{n}d")(out),
                lambda x: getattr(F, f"adaptive_avg_pool{n}d")(x, out), [np.nan_to_num(x, neginf=-3.0)])
  compare_torch(lambda x: getattr(x, f"adaptive_max_pool{n}d")(out, True),
                lambda x: getattr(F, f"adaptive_max_pool{n}d")(x, out, True), [_ties(shape, nan=0.1)])
  compare_torch(lambda x: getattr(x, f"adaptive_max_pool{n}d")(out),
                lambda x: getattr(F, f"adaptive_max_pool{n}d")(x, out), [_ties(shape, seed=3)])

@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 2), data=st.data())
def test_adaptive_property(n, data):
  sp = tuple(data.draw(st.integers(1, 6)) for _ in range(n))
  out = tuple(data.draw(st.integers(1, 5)) for _ in range(n))
  batched = data.draw(st.booleans())
  x = _ties(((2,) if batched else ()) + (2,) + sp, seed=data.draw(st.integers(0, 1000)))
  compare_torch(lambda x: getattr(x, f"adaptive_max_pool{n}d")(out, True),
                lambda x: getattr(F, f"adaptive_max_pool{n}d")(x, out, True), [x])
  y = np.nan_to_num(x, neginf=-5.0)
  compare_torch(lambda x: getattr(x, f"adaptive_avg_pool{n}d")(out),
                lambda x: getattr(F, f"adaptive_avg_pool{n}d")(x, out), [y])

def test_adaptive_edges():
  compare_torch(lambda x: x.adaptive_avg_pool1d(0), lambda x: F.adaptive_avg_pool1d(x, 0), [sample_array((1, 3, 4))],
                grad=False)
  compare_torch(lambda x: x.adaptive_avg_pool2d(2), lambda x: F.adaptive_avg_pool2d(x, 2), [sample_array((0, 3, 4, 4))])
  compare_torch(lambda x: x.transpose(-1, -2).adaptive_max_pool2d((2, 3)),
                lambda x: F.adaptive_max_pool2d(x.transpose(-1, -2), (2, 3)), [sample_array((2, 3, 5, 7))])
  compare_torch(lambda x: x.adaptive_avg_pool2d(3), lambda x: F.adaptive_avg_pool2d(x, 3),
                [sample_array((1, 2, 7, 5)).astype(np.float16)], atol=2e-3, rtol=2e-3)
  with pytest.raises(RuntimeError, match="greater than or equal to 0"): Tensor.ones(1, 3, 4).adaptive_avg_pool1d(-1)
  with pytest.raises(RuntimeError, match="non-zero sizes"): Tensor.ones(2, 3, 0, 4).adaptive_avg_pool2d(2)
  with pytest.raises(RuntimeError, match="2-d .unbatched. or 3-d"): Tensor.ones(4).adaptive_avg_pool1d(2)
  with pytest.raises(ValueError, match="output_size"): Tensor.ones(1, 3, 4, 4).adaptive_max_pool2d((2, 3, 4))
  v, i = Tensor.ones(1, 2, 3, 4).adaptive_max_pool2d((0, 2), True)
  assert v.shape == i.shape == (1, 2, 0, 2) and i.dtype == dtypes.int64
  with pytest.raises(NotImplementedError, match="int"): Tensor.ones(1, 3, 4, dtype=dtypes.int32).adaptive_avg_pool1d(2)

# ***** interpolate: bicubic, area *****

@pytest.mark.parametrize("kw", [dict(size=(7, 9)), dict(size=(3, 2)), dict(scale_factor=1.7), dict(scale_factor=0.6),
                                dict(size=(1, 1)), dict(size=5)])
@pytest.mark.parametrize("ac", [False, True])
def test_interpolate_bicubic(kw, ac):
  compare_torch(lambda x: x.interpolate(mode="bicubic", align_corners=ac, **kw),
                lambda x: F.interpolate(x, mode="bicubic", align_corners=ac, **kw), [sample_array((2, 3, 5, 4))])

@pytest.mark.parametrize("shape,kw", [((2, 3, 10), dict(size=4)), ((2, 3, 5, 4), dict(size=(7, 3))),
                                      ((2, 3, 6, 4), dict(scale_factor=0.5)), ((1, 2, 3, 4, 5), dict(size=(2, 3, 2)))])
def test_interpolate_area(shape, kw):
  compare_torch(lambda x: x.interpolate(mode="area", **kw), lambda x: F.interpolate(x, mode="area", **kw),
                [sample_array(shape)])

def test_interpolate_mode_errors():
  with pytest.raises(ValueError, match="align_corners"): Tensor.ones(1, 1, 4, 4).interpolate(size=2, mode="area",
                                                                                             align_corners=True)
  with pytest.raises(NotImplementedError, match="bicubic mode needs a 4-d"): Tensor.ones(1, 1, 4).interpolate(
    size=2, mode="bicubic")
  with pytest.raises(NotImplementedError, match="modes"): Tensor.ones(1, 1, 4).interpolate(size=2, mode="cubic")

# ***** pixel_shuffle, pixel_unshuffle *****

@pytest.mark.parametrize("shape,r", [((2, 8, 3, 2), 2), ((9, 2, 3), 3), ((2, 1, 4, 2, 2), 2), ((1, 3, 2, 2), 1)])
def test_pixel_shuffle(shape, r):
  compare_torch(lambda x: x.pixel_shuffle(r), lambda x: F.pixel_shuffle(x, r), [sample_array(shape)])
  up = (*shape[:-3], shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
  compare_torch(lambda x: x.pixel_unshuffle(r), lambda x: F.pixel_unshuffle(x, r), [sample_array(up)])
  x = np.random.default_rng(0).integers(0, 9, shape).astype(np.int64)
  compare_torch(lambda x: x.pixel_shuffle(r), lambda x: F.pixel_shuffle(x, r), [x])

def test_pixel_shuffle_errors():
  with pytest.raises(RuntimeError, match="divisible by upscale_factor"): Tensor.ones(1, 5, 2, 2).pixel_shuffle(2)
  with pytest.raises(RuntimeError, match="divisible by downscale_factor"): Tensor.ones(1, 1, 3, 4).pixel_unshuffle(2)
  with pytest.raises(RuntimeError, match="at least 3 dims"): Tensor.ones(4, 4).pixel_shuffle(2)
  with pytest.raises(RuntimeError, match="positive"): Tensor.ones(1, 4, 2, 2).pixel_shuffle(0)

@needs_values
def test_pools_stay_lazy_and_nan_values():
  # nothing runs before realize, and a plain max pool of a window with a nan is nan
  x = Tensor(np.array([[[1.0, math.nan, 3.0, 2.0]]], np.float32))
  y = x.max_pool1d(2)
  np.testing.assert_array_equal(np.isnan(y.numpy()), [[[True, False]]])
