"""nn-functional ops of issue 10 against torch, forward and backward: pad modes, einsum with '...' and repeated
subscripts, conv with string padding and 3-d conv, pooling with indices / unpooling / 3-d pooling, interpolate
(nearest-exact, uint8), scaled_dot_product_attention (masks, causal, grouped-query heads), scatter_reduce.

`compare_torch` (helpers.py) compares values and gradients with torch; under DEV=NULL it still builds, schedules and
renders the forward and backward graphs (nothing runs), so the file passes there and compile-only on GPU toolchains."""
import numpy as np
import pytest
from teeny import Device, Tensor, dtypes, nn
from teeny.indexing import _reads_allowed
from helpers import compare_torch, is_null, needs_values, raises_like_torch

torch = pytest.importorskip("torch")
F = torch.nn.functional

def _rand(shape, low=-1.0, high=1.0, seed=0):
  return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)

# ***** pad *****

def _torch_pad(x, pad, mode="constant", **kw):
  """F.pad, with the non-constant modes' inputs reshaped to (1, C, *padded dims) as torch's kernels want them."""
  if mode == "constant": return F.pad(x, pad, mode=mode, **kw)
  k = len(pad) // 2
  y = F.pad(x.reshape(1, -1, *x.shape[x.ndim - k:]), pad, mode=mode, **kw)
  return y.reshape(*x.shape[:x.ndim - k], *y.shape[2:])

PADS = [(1, 2), (2, 0, 1, 3), (-1, 2), (2, -1, 1, -2), (0, 0, 3, 3), (1, 1, 1, 1, 1, 1), (-2, 3), (3, -3)]

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", PADS)
def test_pad_modes(mode, pad):
  if mode == "circular" and pad[0] > 5 + pad[1]:
    pytest.skip("wraps more than once after cropping: an error (test_pad_errors)")
  compare_torch(lambda x: x.pad(pad, mode=mode), lambda x: _torch_pad(x, pad, mode=mode), [_rand((2, 3, 4, 5))])

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_1d_edges(mode):
  # the largest amounts each mode allows, and crops reaching past the other side's padding
  for pad in [(3, 3), (3, 0), (0, 3), (-1, 3), (-3, 3), (3, -3)] if mode == "reflect" else [(4, 4), (-1, 3), (3, -1)]:
    compare_torch(lambda x: x.pad(pad, mode=mode), lambda x: _torch_pad(x, pad, mode=mode), [_rand((2, 3, 4))])

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_pairs_and_value(mode):
  pairs = ((0, 0), (1, 2), (2, 1))  # the (before, after) per-dim form: the same as torch's flat (2, 1, 1, 2)
  compare_torch(lambda x: x.pad(pairs, mode=mode), lambda x: _torch_pad(x, (2, 1, 1, 2), mode=mode), [_rand((2, 4, 5))])
  compare_torch(lambda x: x.pad((1, 2), mode=mode), lambda x: _torch_pad(x, (1, 2), mode=mode),
                [np.arange(24, dtype=np.int32).reshape(2, 3, 4)])
  compare_torch(lambda x: x.pad((1, 2, 0, 1), value=-2.5), lambda x: F.pad(x, (1, 2, 0, 1), value=-2.5),
                [_rand((2, 3, 4))])

@pytest.mark.parametrize("mode,pad,shape", [("reflect", (4, 0), (2, 3, 4)), ("reflect", (0, 3), (2, 3, 3)),
                                            ("reflect", (1, 1, 3, 0), (1, 3, 4)), ("circular", (5, 0), (2, 3, 4)),
                                            ("constant", (-3, -2), (2, 3, 4)), ("constant", (1, 2, 3), (2, 3, 4)),
                                            ("constant", (1,) * 8, (2, 3, 4))])
def test_pad_errors(mode, pad, shape):
  x = _rand(shape)
  raises_like_torch(lambda: Tensor(x).pad(pad, mode=mode),
                    lambda: F.pad(torch.tensor(x), pad, mode=mode), names=("pad",))

def test_pad_circular_wraps_twice():
  # crop then wrap: 3 > the 2 elements left (torch answers with uninitialized memory or an aliasing error here)
  with pytest.raises(RuntimeError, match="wraps around more than once"):
    Tensor.ones(2, 3, 5).pad((3, -3), mode="circular")
  with pytest.raises(RuntimeError, match="wraps around more than once"):
    Tensor.ones(2, 3, 4).pad((5, 0), mode="circular")

def test_pad_bad_mode_and_value():
  x = _rand((2, 3, 4))
  raises_like_torch(lambda: Tensor(x).pad((1, 1), mode="foo"),
                    lambda: F.pad(torch.tensor(x), (1, 1), mode="foo"), names=("foo",))
  raises_like_torch(lambda: Tensor(x).pad((1, 1), mode="reflect", value=2.0),
                    lambda: F.pad(torch.tensor(x), (1, 1), mode="reflect", value=2.0), names=("reflect", "value"))

# ***** einsum *****

@pytest.mark.parametrize("formula,shapes", [
  ("ii->", [(4, 4)]), ("ii", [(3, 3)]), ("ii->i", [(4, 4)]), ("bii->bi", [(2, 3, 3)]), ("iii->i", [(3, 3, 3)]),
  ("iij->j", [(3, 3, 2)]), ("ii,jj->ij", [(3, 3), (2, 2)]), ("...ij->...ji", [(2, 3, 4, 5)]), ("...ij", [(2, 3, 4)]),
  ("ij...", [(2, 3, 4, 5)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("...ii->...i", [(2, 3, 3)]),
  ("...j,...j->...", [(2, 1, 3), (5, 3)]), ("i...->...", [(3, 2, 2)]), ("ij->j...", [(2, 3)]),
  ("i...j,j->i...", [(2, 3, 4), (4,)]), ("ij,j->i", [(2, 3), (1,)]), ("Ab,ab->", [(2, 3), (2, 3)]),
  ("ba,Ab", [(2, 3), (2, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)])])
def test_einsum(formula, shapes):
  compare_torch(lambda *xs: Tensor.einsum(formula, *xs), lambda *xs: torch.einsum(formula, *xs),
                [_rand(s, seed=i) for i, s in enumerate(shapes)])

@pytest.mark.parametrize("formula,shapes,named", [("ii->i", [(2, 3)], "'i'"), ("i1", [(2, 3)], "'1'"),
                                                  ("...i...", [(2, 3)], "..."), ("ij,jk", [(2, 3), (4, 5)], "'j'")])
def test_einsum_errors(formula, shapes, named):
  with pytest.raises((ValueError, RuntimeError)) as e: Tensor.einsum(formula, *[Tensor.ones(*s) for s in shapes])
  assert named in str(e.value), str(e.value)
  with pytest.raises(RuntimeError): torch.einsum(formula, *[torch.ones(*s) for s in shapes])  # torch refuses them too

# ***** convolutions *****

@pytest.mark.parametrize("n,k,padding,dilation", [(1, 4, "same", 1), (1, 3, "same", 3), (2, (4, 3), "same", (1, 2)),
                                                  (2, 2, "same", 2), (2, 3, "valid", 1), (3, 2, "same", 1),
                                                  (3, (3, 2, 4), "same", (2, 1, 1)), (3, 3, "valid", 2)])
def test_conv_string_padding(n, k, padding, dilation):
  ks = (k,) * n if isinstance(k, int) else k
  x, w, b = _rand((2, 4, *(7, 6, 5)[:n])), _rand((3, 4, *ks), seed=1), _rand((3,), seed=2)
  fn = {1: "conv1d", 2: "conv2d", 3: "conv3d"}[n]
  compare_torch(lambda x, w, b: getattr(x, fn)(w, b, padding=padding, dilation=dilation),
                lambda x, w, b: getattr(F, fn)(x, w, b, padding=padding, dilation=dilation), [x, w, b], atol=1e-4)

@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), ((1, 2, 1), (1, 0, 2), 1, 2),
                                                            (1, 1, 2, 4), (2, ((1, 0), (0, 1), (1, 1)), 1, 1)])
def test_conv3d(stride, padding, dilation, groups):
  if isinstance(padding, tuple) and isinstance(padding[0], tuple):  # torch takes no (before, after) pairs: pad by hand
    flat = tuple(v for p in reversed(padding) for v in p)
    ref = lambda x, w, b: F.conv3d(F.pad(x, flat), w, b, stride=stride, dilation=dilation, groups=groups)
  else:
    ref = lambda x, w, b: F.conv3d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
  compare_torch(lambda x, w, b: x.conv3d(w, b, stride=stride, padding=padding, dilation=dilation, groups=groups), ref,
                [_rand((2, 4, 6, 5, 7)), _rand((8, 4 // groups, 3, 2, 3), seed=1), _rand((8,), seed=2)], atol=1e-4)

@pytest.mark.parametrize("cls,tcls,shape", [(nn.Conv3d, torch.nn.Conv3d, (2, 3, 5, 6, 4)),
                                            (nn.Conv2d, torch.nn.Conv2d, (2, 3, 7, 6)),
                                            (nn.Conv1d, torch.nn.Conv1d, (2, 3, 9))])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(padding="same", kernel_size=4, dilation=2),
                                dict(padding=1, padding_mode="reflect"),
                                dict(padding=2, padding_mode="circular", stride=2),
                                dict(padding="same", padding_mode="replicate")])
def test_conv_modules(cls, tcls, shape, kw):
  kw = {"kernel_size": 3, **kw}
  m, tm = cls(3, 6, **kw), tcls(3, 6, **kw)
  if is_null():
    compare_torch(lambda x: m(x), lambda x: tm(x), [_rand(shape)])
    return
  with torch.no_grad():
    tm.weight.copy_(torch.tensor(m.weight.numpy()))
    tm.bias.copy_(torch.tensor(m.bias.numpy()))
  compare_torch(lambda x: m(x), lambda x: tm(x), [_rand(shape)], atol=1e-4)

@pytest.mark.parametrize("fn,nd", [("conv1d", 1), ("conv2d", 2), ("conv3d", 3)])
@pytest.mark.parametrize("kw,named", [(dict(padding="same", stride=2), "same"),
                                      (dict(padding="full"), "full")])
def test_conv_errors(fn, nd, kw, named):
  x, w = _rand((1, 2, *(5,) * nd)), _rand((3, 2, *(3,) * nd))
  raises_like_torch(lambda: getattr(Tensor(x), fn)(Tensor(w), **kw),
                    lambda: getattr(F, fn)(torch.tensor(x), torch.tensor(w), **kw), names=(named,))

@pytest.mark.parametrize("padding,crop", [(-1, (slice(1, -1), slice(1, -1))), ((-2, 1), (slice(2, -2), slice(None))),
                                          (((-2, 0), (-1, -1)), (slice(2, None), slice(1, -1)))])
def test_conv_negative_padding_crops(padding, crop):
  # tinygrad's meaning (torch refuses negative conv padding): the input is cropped; a positive amount still pads
  x, w = _rand((1, 2, 9, 8)), _rand((3, 2, 3, 3), seed=1)
  pads = padding if isinstance(padding, tuple) and isinstance(padding[0], tuple) else \
    [(p, p) for p in ((padding, padding) if isinstance(padding, int) else padding)]
  torch_pad = tuple(v for b, a in reversed(pads) for v in (max(b, 0), max(a, 0)))
  compare_torch(lambda x, w: x.conv2d(w, padding=padding),
                lambda x, w: F.conv2d(F.pad(x[(slice(None), slice(None)) + crop], torch_pad), w), [x, w])

def test_conv_negative_padding_by_cropping():
  x, w = _rand((1, 2, 7, 6)), _rand((3, 2, 3, 3), seed=1)
  compare_torch(lambda x, w: x.pad((-1, -1, -2, 0)).conv2d(w), lambda x, w: F.conv2d(x[:, :, 2:, 1:-1], w), [x, w])

# ***** pooling *****

_perm = lambda shape, seed=0: (np.random.default_rng(seed).permutation(int(np.prod(shape)))
                               .reshape(shape).astype(np.float32))

@pytest.mark.parametrize("k,s,p,d,ceil", [(2, None, 0, 1, False), (3, 1, 1, 1, False), (3, 2, 1, 2, True),
                                          ((2, 3), (1, 2), (1, 0), 1, False), (3, 2, 0, 1, True)])
def test_max_pool2d_indices(k, s, p, d, ceil):
  compare_torch(lambda x: x.max_pool2d(k, s, p, d, ceil, return_indices=True),
                lambda x: F.max_pool2d(x, k, s, p, d, ceil, return_indices=True), [_perm((2, 3, 7, 6))])

def test_max_pool2d_indices_ties_and_edges():
  # ties: torch takes the first maximum and routes the whole gradient there; -inf windows; nan wins
  x = np.round(_rand((2, 2, 6, 5), -2, 2))
  compare_torch(lambda x: x.max_pool2d(3, 1, 1, return_indices=True),
                lambda x: F.max_pool2d(x, 3, 1, 1, return_indices=True), [x])
  y = _rand((1, 2, 4, 4))
  y[0, 0, :2, :2], y[0, 1, 2, 3] = -np.inf, np.nan
  compare_torch(lambda x: x.max_pool2d(2, return_indices=True), lambda x: F.max_pool2d(x, 2, return_indices=True), [y],
                grad=False)

@pytest.mark.parametrize("k,s,p", [(2, None, 0), (3, 2, 1), ((2, 3, 1), (1, 2, 1), (1, 1, 0))])
def test_pool3d(k, s, p):
  x = _perm((2, 2, 5, 6, 4))
  compare_torch(lambda x: x.max_pool3d(k, s, p, return_indices=True),
                lambda x: F.max_pool3d(x, k, s, p, return_indices=True), [x])
  compare_torch(lambda x: x.max_pool3d(k, s, p, ceil_mode=True), lambda x: F.max_pool3d(x, k, s, p, ceil_mode=True),
                [x])
  for cip in (True, False):
    compare_torch(lambda x: x.avg_pool3d(k, s, p, count_include_pad=cip),
                  lambda x: F.avg_pool3d(x, k, s, p, count_include_pad=cip), [x / 100])
  compare_torch(lambda x: x.avg_pool3d(k, s, p, True, divisor_override=5),
                lambda x: F.avg_pool3d(x, k, s, p, True, divisor_override=5), [x / 100])

def test_pool1d():
  x = _perm((2, 3, 9))
  compare_torch(lambda x: x.max_pool1d(3, 2, 1, return_indices=True),
                lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), [x])
  compare_torch(lambda x: x.avg_pool1d(3, 2, 1, ceil_mode=True), lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True),
                [x])

@pytest.mark.parametrize("n,shape,k,s,p,output_size", [(2, (2, 3, 8, 8), 2, None, 0, None),
                                                       (2, (2, 3, 8, 8), 2, None, 0, (9, 9)),
                                                       (2, (2, 3, 9, 7), 3, 2, 1, None),
                                                       (2, (3, 8, 6), (2, 3), (2, 3), 0, (1, 3, 9, 6)),
                                                       (3, (1, 2, 4, 6, 4), 2, None, 0, None),
                                                       (1, (2, 3, 10), 2, None, 0, 11)])
def test_max_unpool(n, shape, k, s, p, output_size):
  pool, unpool = f"max_pool{n}d", f"max_unpool{n}d"
  v, i = getattr(F, pool)(torch.tensor(_perm(shape)), k, s, p, return_indices=True)
  os_ = (output_size,) if isinstance(output_size, int) else output_size
  compare_torch(lambda v, i: getattr(v, unpool)(i, k, s, p, output_size=os_),
                lambda v, i: getattr(F, unpool)(v, i, k, s, p, output_size=os_), [v.numpy(), i.numpy()])

def test_max_unpool_errors():
  v, i = F.max_pool2d(torch.tensor(_perm((1, 2, 4, 4))), 2, return_indices=True)
  raises_like_torch(lambda: Tensor(v.numpy()).max_unpool2d(Tensor(i.numpy()), 2, output_size=(6, 6)),
                    lambda: F.max_unpool2d(v, i, 2, output_size=(6, 6)), names=("output_size",))
  with pytest.raises(ValueError, match="indices shape"): Tensor(v.numpy()).max_unpool2d(Tensor(i.numpy()[:, :1]), 2)

@pytest.mark.skipif(not _reads_allowed(Device.DEFAULT), reason="the index range check reads the indices only where "
                    "that is cheap")
def test_max_unpool_index_out_of_range():
  v, i = F.max_pool2d(torch.tensor(_perm((1, 2, 4, 4))), 2, return_indices=True)
  raises_like_torch(lambda: Tensor(v.numpy()).max_unpool2d(Tensor(i.numpy() + 100), 2),
                    lambda: F.max_unpool2d(v, i + 100, 2), names=("index",))

# ***** interpolate *****

@pytest.mark.parametrize("shape,kw", [((2, 3, 5, 4), dict(size=(7, 9))), ((2, 3, 5, 4), dict(scale_factor=1.5)),
                                      ((2, 3, 9), dict(size=4)),
                                      ((1, 2, 3, 4, 5), dict(size=(5, 3, 7))), ((1, 2, 6, 6), dict(size=(3, 13)))])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_interpolate_nearest(shape, kw, mode):
  compare_torch(lambda x: x.interpolate(mode=mode, **kw), lambda x: F.interpolate(x, mode=mode, **kw), [_rand(shape)])

@pytest.mark.parametrize("shape,kw", [((2, 3, 5, 4), dict(size=(7, 9))), ((1, 2, 8, 8), dict(size=(3, 5))),
                                      ((1, 1, 6, 6), dict(scale_factor=1.7)),
                                      ((1, 3, 10, 10), dict(size=(10, 4))), ((1, 1, 37, 45), dict(size=(101, 90)))])
@pytest.mark.parametrize("mode,ac", [("bilinear", False), ("bilinear", True), ("nearest", None),
                                     ("nearest-exact", None)])
def test_interpolate_uint8(shape, kw, mode, ac):
  # torch's uint8 bilinear rounds in int16 fixed point, one dim at a time: teeny matches it bit for bit
  x = np.random.default_rng(3).integers(0, 256, shape).astype(np.uint8)
  compare_torch(lambda x: x.interpolate(mode=mode, align_corners=ac, **kw),
                lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw), [x])

@pytest.mark.parametrize("dtype,mode,shape", [(np.int32, "nearest", (1, 1, 4, 4)), (np.int64, "bilinear", (1, 1, 4, 4)),
                                              (np.int8, "nearest-exact", (1, 1, 4, 4)), (np.uint8, "linear", (1, 1, 4)),
                                              (np.uint8, "trilinear", (1, 1, 4, 4, 4)),
                                              (np.float32, "bilinear", (1, 1, 4)), (np.float32, "linear", (1, 1, 4, 4)),
                                              (np.float32, "bicubicx", (1, 1, 4, 4))])
def test_interpolate_unsupported(dtype, mode, shape):
  x = np.zeros(shape, dtype)
  raises_like_torch(lambda: Tensor(x).interpolate(size=(6,) * (len(shape) - 2), mode=mode),
                    lambda: F.interpolate(torch.tensor(x), size=(6,) * (len(shape) - 2), mode=mode), names=(mode,))

def test_interpolate_align_corners_nearest():
  x = _rand((1, 1, 4, 4))
  raises_like_torch(lambda: Tensor(x).interpolate(size=6, mode="nearest-exact", align_corners=True),
                    lambda: F.interpolate(torch.tensor(x), size=6, mode="nearest-exact", align_corners=True),
                    names=("align_corners",))

# ***** attention *****

def _sdpa(**kw):
  return (lambda q, k, v, *m: q.scaled_dot_product_attention(k, v, *m, **kw),
          lambda q, k, v, *m: F.scaled_dot_product_attention(q, k, v, *m, **kw))

@pytest.mark.parametrize("shapes,kw", [
  ([(2, 4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 3)], dict()),
  ([(2, 4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 3)], dict(is_causal=True)),
  ([(2, 4, 7, 8), (2, 4, 5, 8), (2, 4, 5, 3)], dict(is_causal=True)),
  ([(3, 6, 8), (3, 6, 8), (3, 6, 8)], dict(scale=0.2)),
  ([(2, 6, 5, 8), (2, 2, 5, 8), (2, 2, 5, 4)], dict(enable_gqa=True, is_causal=True)),
  ([(4, 5, 8), (2, 5, 8), (1, 5, 4)], dict(enable_gqa=True)), ([(2, 4, 5, 8), (2, 1, 6, 8), (2, 1, 6, 4)], dict())])
def test_sdpa(shapes, kw):
  compare_torch(*_sdpa(**kw), [_rand(s, seed=i) for i, s in enumerate(shapes)], atol=1e-5)

def test_sdpa_masks():
  q, k, v = _rand((2, 4, 5, 8)), _rand((2, 4, 7, 8), seed=1), _rand((2, 4, 7, 3), seed=2)
  m = np.random.default_rng(0).random((5, 7)) > 0.5
  m[2] = False  # a row with every key masked out: zeros, and no nan in the gradients (torch's safe softmax)
  compare_torch(*_sdpa(), [q, k, v, m])
  fm = _rand((2, 1, 5, 7), seed=3)
  fm[0, 0, 1], fm[1, 0, 3, :3] = -np.inf, -np.inf
  compare_torch(*_sdpa(scale=0.3), [q, k, v, fm])
  mg = _rand((2, 6, 5, 7), seed=4) > 0  # a per-head bool mask with grouped-query heads
  compare_torch(*_sdpa(enable_gqa=True), [_rand((2, 6, 5, 8)), k[:, :3], v[:, :3], mg])

def test_sdpa_errors():
  q, k = torch.ones(1, 4, 3, 8), torch.ones(1, 3, 5, 8)
  raises_like_torch(lambda: Tensor.ones(4, 3, 8).scaled_dot_product_attention(
                      Tensor.ones(4, 3, 8), Tensor.ones(4, 3, 8), Tensor.ones(3, 3, dtype=dtypes.bool), is_causal=True),
                    lambda: F.scaled_dot_product_attention(q[0], q[0], q[0],
                                                           attn_mask=torch.ones(3, 3, dtype=torch.bool),
                                                           is_causal=True), names=("attn_mask", "is_causal"))
  # torch's 4-d path skips that check; teeny refuses the combination for every shape
  with pytest.raises(RuntimeError, match="is_causal"):
    Tensor.ones(1, 4, 3, 8).scaled_dot_product_attention(Tensor.ones(1, 4, 3, 8), Tensor.ones(1, 4, 3, 8),
                                                         Tensor.ones(3, 3, dtype=dtypes.bool), is_causal=True)
  raises_like_torch(lambda: Tensor.ones(1, 4, 3, 8).scaled_dot_product_attention(Tensor.ones(1, 3, 5, 8),
                                                                                 Tensor.ones(1, 3, 5, 8),
                                                                                 enable_gqa=True),
                    lambda: F.scaled_dot_product_attention(q, k, k, enable_gqa=True), names=("heads", "divide"))
  raises_like_torch(lambda: Tensor.ones(1, 4, 3, 8).scaled_dot_product_attention(Tensor.ones(1, 2, 5, 8),
                                                                                 Tensor.ones(1, 2, 5, 8)),
                    lambda: F.scaled_dot_product_attention(q, torch.ones(1, 2, 5, 8), torch.ones(1, 2, 5, 8)),
                    names=("enable_gqa",))

@needs_values
def test_sdpa_dropout_applies_like_torch():
  # torch applies dropout_p whenever it is > 0, in training or not: p=1 drops everything
  q = Tensor(_rand((1, 2, 3, 4)))
  assert not Tensor.training
  assert (q.scaled_dot_product_attention(q, q, dropout_p=1.0).numpy() == 0).all()
  out = q.scaled_dot_product_attention(q, q, dropout_p=0.5).numpy()
  ref = F.scaled_dot_product_attention(*[torch.tensor(q.numpy())] * 3).numpy()
  assert not np.allclose(out, ref)

# ***** scatter *****

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_reduce(reduce, include_self, dim):
  rng = np.random.default_rng(7)
  idx = rng.integers(0, 4, (5, 3)) if dim == 0 else rng.integers(0, 6, (4, 3))
  compare_torch(lambda x, s: x.scatter_reduce(dim, Tensor(idx), s, reduce, include_self=include_self),
                lambda x, s: x.scatter_reduce(dim, torch.tensor(idx), s, reduce, include_self=include_self),
                [_rand((4, 6)), _rand(idx.shape, seed=1)])

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_ties_zeros_ints(reduce, include_self):
  # rounded values: ties between self and src (amax/amin split the gradient as torch does), zeros (prod's gradient)
  rng = np.random.default_rng(8)
  idx = rng.integers(0, 4, (5, 6))
  x, s = np.round(_rand((4, 6), -2, 2, seed=2)), np.round(_rand((5, 6), -2, 2, seed=3))
  fns = (lambda x, s: x.scatter_reduce(0, Tensor(idx), s, reduce, include_self=include_self),
         lambda x, s: x.scatter_reduce(0, torch.tensor(idx), s, reduce, include_self=include_self))
  compare_torch(*fns, [x, s])
  compare_torch(*fns, [x.astype(np.int32) * 3 - 1, s.astype(np.int32) * 2 + 1])  # integer mean floors

@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce(reduce):
  idx = np.random.default_rng(9).integers(0, 4, (5, 6))
  compare_torch(lambda x, s: x.scatter(0, Tensor(idx), s, reduce=reduce),
                lambda x, s: x.scatter(0, torch.tensor(idx), s, reduce=reduce),
                [_rand((4, 6)), _rand((5, 6), seed=1)], grad=False)  # torch has no gradient for scatter with reduce
  compare_torch(lambda x: x.scatter(1, Tensor(idx[:4]), 2.5, reduce=reduce),
                lambda x: x.scatter(1, torch.tensor(idx[:4]), 2.5, reduce=reduce), [_rand((4, 6))], grad=False)

def test_scatter_add():
  idx = np.random.default_rng(9).integers(0, 4, (5, 6))
  compare_torch(lambda x, s: x.scatter_add(0, Tensor(idx), s), lambda x, s: x.scatter_add(0, torch.tensor(idx), s),
                [_rand((4, 6)), _rand((5, 6), seed=1)])

def test_scatter_errors():
  x, idx, s = torch.zeros(3, 4), torch.zeros(2, 4, dtype=torch.int64), torch.ones(2, 4)
  tx, tidx, ts = Tensor.zeros(3, 4), Tensor.zeros(2, 4, dtype=dtypes.int64), Tensor.ones(2, 4)
  raises_like_torch(lambda: tx.scatter_reduce(0, tidx, ts, "foo"),
                    lambda: x.scatter_reduce(0, idx, s, "foo"), names=("reduce", "'foo'"))
  raises_like_torch(lambda: tx.scatter(0, tidx, ts, reduce="sum"),
                    lambda: x.scatter(0, idx, s, reduce="sum"), names=("reduce", "'sum'"))
  raises_like_torch(lambda: tx.scatter_reduce(2, tidx, ts, "sum"),
                    lambda: x.scatter_reduce(2, idx, s, "sum"), names=("dim", "range"))
  raises_like_torch(lambda: tx.scatter_reduce(0, tidx, 1.0, "sum"),
                    lambda: x.scatter_reduce(0, idx, 1.0, "sum"), names=("src",))
  raises_like_torch(lambda: tx.scatter_reduce(0, tidx[0], ts, "sum"),
                    lambda: x.scatter_reduce(0, idx[0], s, "sum"), names=("dims",))

def test_conv_body_on_uops_is_the_tensor_ops_graph(monkeypatch):
  """Tensor.conv2d builds its body on UOps (tensor_nn._conv_body) for host time: the graph must be the very node the
  Tensor ops build (hash-consed: `is`), with the same gradient flag, across ranks, groups, strides, dilations, crops,
  dtypes and requires_grad; the cases it leaves to the Tensor ops must come out the same too."""
  import teeny.tensor_nn as T
  from teeny.uop.ops import Ops, inline_calls
  orig = T._conv_body
  cases = [((2, 4, 9, 9), (6, 4, 3, 3), {}), ((2, 4, 9, 9), (6, 2, 3, 3), dict(groups=2, padding=1)),
           ((1, 3, 10, 11), (5, 3, 3, 2), dict(stride=2, padding=(1, 0))),
           ((2, 4, 12, 12), (4, 4, 3, 3), dict(dilation=2, padding=2)), ((2, 3, 8, 8), (4, 3, 2, 2), dict(stride=2)),
           ((2, 3, 16), (4, 3, 5), dict(padding=2)), ((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), dict(padding=1)),
           ((2, 4, 9, 9), (6, 4, 3, 3), dict(padding=-1)), ((1, 1, 3, 3), (1, 1, 3, 3), {})]
  used = 0
  for xs, ws, kw in cases:
    for dt in (dtypes.float32, dtypes.float16, dtypes.int32):
      for rg, grad_on in (((False, True), (True, True), (True, False)) if dt != dtypes.int32 else ((False, True),)):
        # the input in memory, computed (lazy), and a view of memory that is not contiguous: a CALL's body is built
        # once per key and must inline to what the Tensor ops build for each (padded_input and _im2col look at it)
        for form in ("buffer", "lazy", "view"):
          x, w = Tensor.empty(*xs, dtype=dt), Tensor.empty(*ws, dtype=dt)
          if rg: x.requires_grad_(True), w.requires_grad_(True)
          if form == "lazy": x = x * 2
          if form == "view": x = Tensor.empty(*xs[:-2], xs[-1], xs[-2], dtype=dt).transpose(-1, -2)
          conv = {3: x.conv1d, 4: x.conv2d, 5: x.conv3d}[len(xs)]
          calls = []
          with Tensor.set_grad_enabled(grad_on):
            monkeypatch.setattr(T, "_conv_body", lambda *a: calls.append(r := orig(*a)) or r)
            fast = conv(w, Tensor.empty(ws[0], dtype=dt), **kw)
            monkeypatch.setattr(T, "_conv_body", lambda *a: None)
            slow = conv(w, Tensor.empty(ws[0], dtype=dt), **kw)
          used += calls[0] is not None
          # (without gradients the body is one CALL node, whose body inlined is that graph)
          fu = inline_calls(list(fast.uop.src[0].toposort))[fast.uop.src[0]]
          assert fu is slow.uop.src[0] and fast.requires_grad == slow.requires_grad, (xs, ws, kw, dt, rg, grad_on, form)
          assert (fast.uop.src[0].op is Ops.CALL) == (calls[0] is not None and not (x.requires_grad or w.requires_grad))
  assert used >= 60
