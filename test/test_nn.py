"""nn.functional-style Tensor methods and nn layers, forward and backward, against torch on the same data."""
import numpy as np
import pytest
from teeny import Context, Tensor, dtypes, nn
from teeny.helpers import GlobalCounters
from teeny.nn.state import get_parameters
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
F = torch.nn.functional

def _rand(rng, shape, low=-1.0, high=1.0): return rng.uniform(low, high, size=shape).astype(np.float32)

def _close(got, want, atol, rtol, what):
  np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), atol=atol,
                             rtol=rtol, err_msg=what)

def check(teeny_fn, torch_fn, inputs, atol=1e-5, rtol=1e-4, grad=True, seed=1, no_grad=()):
  """Run both functions on the same inputs; compare outputs and, through a random upstream gradient, the input grads
  (of every float input whose index is not in `no_grad`)."""
  rg = [grad and isinstance(x, np.ndarray) and x.dtype.kind == "f" and i not in no_grad for i, x in enumerate(inputs)]
  tt = [Tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  pt = [torch.tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  if not any(rg):
    with Tensor.no_grad(): out = teeny_fn(*tt)
    grad = False
  else: out = teeny_fn(*tt)
  ref = torch_fn(*pt)
  assert tuple(out.shape) == tuple(ref.shape), f"shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  if grad:  # backward before reading `out`: realizing it swaps its graph for a buffer
    up = np.random.default_rng(seed).standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * Tensor(up)).sum().backward()
    (ref * torch.tensor(up)).sum().backward()
  _close(out.numpy(), ref.detach().numpy(), atol, rtol, "forward")
  if not grad: return
  for i, (t, p) in enumerate(zip(tt, pt)):
    if isinstance(p, torch.Tensor) and p.requires_grad:
      assert t.grad is not None, f"input {i} got no gradient"
      _close(t.grad.numpy(), p.grad.numpy(), atol * 10, rtol * 10, f"grad of input {i}")

rng = np.random.default_rng(0)

# ***** convolutions *****

@needs_values
@pytest.mark.parametrize("stride,padding,dilation,groups", [
  (1, 0, 1, 1), (1, 1, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (2, 0, 1, 2), (1, "same", 1, 1), (1, "valid", 1, 1),
  (1, (1, 2), 1, 1), ((2, 1), (0, 1), (1, 2), 4), (3, 1, 1, 1)])
def test_conv2d(stride, padding, dilation, groups):
  x, w, b = _rand(rng, (2, 4, 9, 10)), _rand(rng, (6 if groups != 4 else 8, 4 // groups, 3, 3)), None
  b = _rand(rng, (w.shape[0],))
  check(lambda x, w, b: x.conv2d(w, b, stride=stride, padding=padding, dilation=dilation, groups=groups),
        lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups), [x, w, b])

@needs_values
def test_conv2d_nonsquare_kernel_no_bias():
  check(lambda x, w: x.conv2d(w, padding=(1, 0)), lambda x, w: F.conv2d(x, w, padding=(1, 0)),
        [_rand(rng, (1, 3, 7, 6)), _rand(rng, (5, 3, 3, 2))])

@needs_values
@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, "same", 2, 1),
                                                            (1, 2, 1, 3)])
def test_conv1d(stride, padding, dilation, groups):
  check(lambda x, w, b: x.conv1d(w, b, stride=stride, padding=padding, dilation=dilation, groups=groups),
        lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups),
        [_rand(rng, (2, 6, 11)), _rand(rng, (9, 6 // groups, 3)), _rand(rng, (9,))])

@needs_values
@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
  (1, 0, 0, 1, 1), (2, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 2, 1, 1), (1, 1, 0, 2, 2), (2, 2, 0, 2, 1),
  ((2, 1), (1, 0), (1, 0), 1, 1)])
def test_conv_transpose2d(stride, padding, output_padding, groups, dilation):
  check(lambda x, w, b: x.conv_transpose2d(w, b, stride, padding, output_padding, groups, dilation),
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation),
        [_rand(rng, (2, 4, 5, 6)), _rand(rng, (4, 6 // groups, 3, 3)), _rand(rng, (6,))])

def test_conv_channel_mismatch():
  with pytest.raises(ValueError, match=r"\(2, 3, 8, 8\).*\(4, 2, 3, 3\)"):
    Tensor.zeros(2, 3, 8, 8).conv2d(Tensor.zeros(4, 2, 3, 3))
  x, w = Tensor.zeros(1, 2, 4, 4), Tensor.zeros(4, 2, 3, 3)
  with pytest.raises(ValueError, match="bias"): x.conv2d(w, Tensor.zeros(3))
  with pytest.raises(RuntimeError, match="same"): x.conv2d(w, stride=2, padding="same")

# ***** pooling, resampling *****

@needs_values
@pytest.mark.parametrize("k,s,p,d,ceil", [(2, None, 0, 1, False), (3, 1, 1, 1, False), (3, 2, 1, 1, False),
                                          (2, 2, 0, 2, False), (3, 2, 0, 1, True), (2, 3, 1, 1, True),
                                          ((2, 3), (1, 2), (1, 0), 1, False), (2, 2, 0, 1, True)])
def test_max_pool2d(k, s, p, d, ceil):
  check(lambda x: x.max_pool2d(k, s, p, d, ceil), lambda x: F.max_pool2d(x, k, s, p, d, ceil_mode=ceil),
        [rng.permutation(2 * 3 * 9 * 8).reshape(2, 3, 9, 8).astype(np.float32)])  # distinct values: one max per window

@needs_values
@pytest.mark.parametrize("k,s,p,ceil,cip", [(2, None, 0, False, True), (3, 1, 1, False, True), (3, 1, 1, False, False),
                                            (3, 2, 1, True, True), (3, 2, 1, True, False), (2, 3, 0, True, True),
                                            ((3, 2), 2, (1, 0), False, True)])
def test_avg_pool2d(k, s, p, ceil, cip):
  check(lambda x: x.avg_pool2d(k, s, p, ceil, cip),
        lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=cip), [_rand(rng, (2, 3, 9, 8))])

def test_pool_reads_windows_in_place():
  """A pool over a realized tensor is one kernel reading the windows where they lie: the windows were copied first,
  k*k times the input's size. Windows stay views that refuse writes (they overlap)."""
  x = Tensor.empty(4, 8, 30, 30).realize()
  for f, n in ((lambda: x.max_pool2d(3, 2), 1), (lambda: x.max_pool2d(2, 1, dilation=2), 1),
               (lambda: x.avg_pool2d(3, 1), 2)):   # (avg: and its divisors, 28x28)
    ks = [si for si in f().schedule() if si.kind == "kernel"]
    assert len(ks) == n and all(si.bufs[0].arg[2] <= x.numel() for si in ks), [si.bufs[0].arg for si in ks]
  win = x._window((3, 3), (1, 1), (1, 1))
  with pytest.raises(RuntimeError, match="sliding-window"): win[0, 0, 0, 0] = Tensor.ones(3, 3)

@needs_values
@pytest.mark.parametrize("kw", [
  dict(size=(7, 9), mode="nearest"), dict(scale_factor=2, mode="nearest"), dict(size=(3, 2), mode="nearest"),
  dict(size=(7, 9), mode="bilinear", align_corners=False), dict(size=(7, 9), mode="bilinear", align_corners=True),
  dict(scale_factor=2, mode="bilinear", align_corners=False), dict(size=(3, 2), mode="bilinear")])
def test_interpolate_2d(kw):
  check(lambda x: x.interpolate(**kw), lambda x: F.interpolate(x, **kw), [_rand(rng, (2, 3, 5, 4))])

@needs_values
@pytest.mark.parametrize("kw", [dict(size=11, mode="linear"), dict(size=11, mode="linear", align_corners=True),
                                dict(scale_factor=3, mode="nearest")])
def test_interpolate_1d(kw):
  check(lambda x: x.interpolate(**kw), lambda x: F.interpolate(x, **kw), [_rand(rng, (2, 3, 5))])

# ***** normalisation, dropout *****

@needs_values
def test_dropout():
  x = Tensor.ones(200, 100)
  assert np.array_equal(x.dropout(0.3).numpy(), np.ones((200, 100), np.float32)), "dropout outside training"
  with Tensor.train():
    y = x.dropout(0.3).numpy()
  assert np.all((y == 0) | np.isclose(y, 1 / 0.7))
  assert abs((y == 0).mean() - 0.3) < 0.02
  with Tensor.train():
    assert (x.dropout(1.0).numpy() == 0).all()
    assert np.array_equal(x.dropout(0.0).numpy(), np.ones((200, 100), np.float32))

@needs_values
def test_layernorm():
  check(lambda x: x.layernorm(-1, 1e-5), lambda x: F.layer_norm(x, (7,), eps=1e-5), [_rand(rng, (3, 5, 7))], atol=1e-4)
  check(lambda x: x.layernorm((-2, -1), 1e-5), lambda x: F.layer_norm(x, (5, 7), eps=1e-5), [_rand(rng, (3, 5, 7))],
        atol=1e-4)

@needs_values
def test_batchnorm_functional():
  x, w, b, m = _rand(rng, (4, 3, 5, 5)), _rand(rng, (3,)), _rand(rng, (3,)), _rand(rng, (3,))
  v = _rand(rng, (3,), 0.5, 2.0)
  check(lambda x, w, b, m, v: x.batchnorm(w, b, m, (v + 1e-5).rsqrt()),
        lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False, eps=1e-5), [x, w, b, m, v], atol=1e-4,
        no_grad=(3, 4))

# ***** indexing helpers *****

@needs_values
def test_one_hot():
  y = rng.integers(0, 5, (4, 3)).astype(np.int32)
  np.testing.assert_equal(Tensor(y).one_hot(7).numpy(), F.one_hot(torch.tensor(y).long(), 7).numpy())
  np.testing.assert_equal(Tensor(y).one_hot().numpy(), F.one_hot(torch.tensor(y).long()).numpy())
  with pytest.raises(TypeError, match="float32"): Tensor([1.0, 2.0]).one_hot(3)

@needs_values
@pytest.mark.parametrize("dim,ishape", [(0, (2, 3, 4)), (1, (4, 5, 2)), (2, (3, 2, 6)), (-1, (4, 5, 1))])
def test_gather(dim, ishape):
  x = _rand(rng, (4, 5, 6))
  idx = rng.integers(0, x.shape[dim], ishape).astype(np.int64)
  check(lambda x: x.gather(dim, Tensor(idx, dtype=dtypes.int32)), lambda x: torch.gather(x, dim, torch.tensor(idx)),
        [x])

@needs_values
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter(dim):
  x = _rand(rng, (4, 5))
  # unique targets per column/row so the scatter is well defined and its gradient matches torch
  if dim == 0: idx = np.stack([rng.permutation(4)[:3] for _ in range(5)], 1)
  else: idx = np.stack([rng.permutation(5)[:3] for _ in range(4)])
  check(lambda x, s: x.scatter(dim, Tensor(idx.astype(np.int32)), s),
        lambda x, s: torch.scatter(x, dim, torch.tensor(idx), s), [x, _rand(rng, idx.shape)])  # src shaped like index
  dup = rng.integers(0, x.shape[dim], (3, 4)).astype(np.int64)
  check(lambda x, s: x.scatter(dim, Tensor(dup.astype(np.int32)), s, reduce="add"),
        lambda x, s: torch.scatter_add(x, dim, torch.tensor(dup), s), [x, _rand(rng, (3, 4))])
  # a larger src is cut to index's shape
  big = _rand(rng, (4, 5))
  # (duplicate targets: a GPU's atomic adds land in any order, so a sum that cancels differs in its last bits)
  np.testing.assert_allclose(Tensor(x).scatter(dim, Tensor(dup.astype(np.int32)), Tensor(big), reduce="add").numpy(),
                             torch.tensor(x).scatter_add(dim, torch.tensor(dup), torch.tensor(big)).numpy(), rtol=1e-6,
                             atol=1e-6)
  np.testing.assert_allclose(Tensor(x).scatter(dim, Tensor(dup.astype(np.int32)), 2.5).numpy(),
                             torch.tensor(x).scatter(dim, torch.tensor(dup), 2.5).numpy())

# ***** losses *****

@needs_values
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_indices(reduction, ls):
  x, y = _rand(rng, (6, 5), -3, 3), rng.integers(0, 5, (6,)).astype(np.int32)
  y[2] = -100
  check(lambda x: x.cross_entropy(Tensor(y), reduction=reduction, label_smoothing=ls),
        lambda x: F.cross_entropy(x, torch.tensor(y).long(), reduction=reduction, label_smoothing=ls), [x])
  y2 = np.where(y < 0, 0, y).astype(np.int32)
  check(lambda x: x.cross_entropy(Tensor(y2), reduction=reduction, label_smoothing=ls, ignore_index=3),
        lambda x: F.cross_entropy(x, torch.tensor(y2).long(), reduction=reduction, label_smoothing=ls, ignore_index=3),
        [x])

@needs_values
def test_cross_entropy_kdim_and_1d():
  x, y = _rand(rng, (2, 4, 3, 3), -3, 3), rng.integers(0, 4, (2, 3, 3)).astype(np.int32)
  check(lambda x: x.cross_entropy(Tensor(y), label_smoothing=0.1),
        lambda x: F.cross_entropy(x, torch.tensor(y).long(), label_smoothing=0.1), [x])
  check(lambda x: x.cross_entropy(Tensor(np.int32(2))), lambda x: F.cross_entropy(x, torch.tensor(2)),
        [_rand(rng, (5,))])

@needs_values
@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_cross_entropy_probabilities(ls):
  x, p = _rand(rng, (6, 5), -3, 3), np.random.default_rng(3).dirichlet(np.ones(5), 6).astype(np.float32)
  for red in ("mean", "sum", "none"):
    check(lambda x: x.cross_entropy(Tensor(p), reduction=red, label_smoothing=ls),
          lambda x: F.cross_entropy(x, torch.tensor(p), reduction=red, label_smoothing=ls), [x])

def test_cross_entropy_bad_labels():
  x = Tensor.zeros(4, 3)
  with pytest.raises(TypeError, match="float32"): x.cross_entropy(Tensor([0.0, 1.0, 2.0, 1.0]))
  with pytest.raises(ValueError, match=r"\(5,\).*\(4, 3\)"): x.cross_entropy(Tensor([0, 1, 2, 1, 0]))
  with pytest.raises(TypeError, match="int32"): x.cross_entropy(Tensor.zeros(4, 3, dtype=dtypes.int32))
  with pytest.raises(ValueError, match="reduction"): x.cross_entropy(Tensor([0, 1, 2, 1]), reduction="avg")

@needs_values
def test_sparse_categorical_crossentropy():
  x, y = _rand(rng, (3, 4, 6), -3, 3), rng.integers(0, 6, (3, 4)).astype(np.int32)
  y[0, 1] = -100
  for ls in (0.0, 0.25):
    for red in ("mean", "sum", "none"):
      kw = dict(ignore_index=-100, label_smoothing=ls, reduction=red)
      check(lambda x: x.sparse_categorical_crossentropy(Tensor(y), **kw),
            lambda x: F.cross_entropy(x.permute(0, 2, 1), torch.tensor(y).long(), **kw), [x])

@needs_values
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
  x, y, w = _rand(rng, (7, 4), -3, 0), rng.integers(0, 4, (7,)).astype(np.int32), _rand(rng, (4,), 0.1, 2.0)
  y[3] = -100
  check(lambda x: x.nll_loss(Tensor(y), reduction=reduction),
        lambda x: F.nll_loss(x, torch.tensor(y).long(), reduction=reduction), [x])
  check(lambda x, w: x.nll_loss(Tensor(y), w, reduction=reduction),
        lambda x, w: F.nll_loss(x, torch.tensor(y).long(), w, reduction=reduction), [x, w], no_grad=(1,))
  y2 = np.where(y < 0, 0, y).astype(np.int32)
  check(lambda x, w: x.nll_loss(Tensor(y2), w, ignore_index=1, reduction=reduction),
        lambda x, w: F.nll_loss(x, torch.tensor(y2).long(), w, ignore_index=1, reduction=reduction), [x, w],
        no_grad=(1,))

@needs_values
def test_binary_crossentropy():
  p, y = _rand(rng, (5, 3), 0.05, 0.95), (rng.random((5, 3)) > 0.5).astype(np.float32)
  for red in ("mean", "sum", "none"):
    check(lambda p: p.binary_crossentropy(Tensor(y), reduction=red),
          lambda p: F.binary_cross_entropy(p, torch.tensor(y), reduction=red), [p])

@needs_values
def test_binary_crossentropy_logits():
  x, y, pw = _rand(rng, (5, 3), -30, 30), rng.random((5, 3)).astype(np.float32), _rand(rng, (3,), 0.5, 3)
  for red in ("mean", "sum", "none"):
    check(lambda x: x.binary_crossentropy_logits(Tensor(y), reduction=red),
          lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(y), reduction=red), [x], atol=1e-4)
  check(lambda x: x.binary_crossentropy_logits(Tensor(y), pos_weight=Tensor(pw)),
        lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(y), pos_weight=torch.tensor(pw)), [x], atol=1e-4)

# ***** attention *****

@needs_values
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_scaled_dot_product_attention(mask):
  q, k, v = _rand(rng, (2, 3, 5, 8)), _rand(rng, (2, 3, 6, 8)), _rand(rng, (2, 3, 6, 4))
  m = None
  if mask == "bool": m = rng.random((5, 6)) > 0.3
  if mask == "float": m = _rand(rng, (2, 1, 5, 6))
  if m is not None: m[:, 0] = True if mask == "bool" else m[:, 0]
  causal = mask == "causal"
  check(lambda q, k, v: q.scaled_dot_product_attention(k, v, None if m is None else Tensor(m), is_causal=causal),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, None if m is None else torch.tensor(m),
                                                       is_causal=causal), [q, k, v])

# ***** modules *****

def _copy_params(teeny_mod, torch_mod):
  with torch.no_grad():
    for name, p in torch_mod.named_parameters():
      p.copy_(torch.tensor(getattr(teeny_mod, name).numpy()))

def check_module(teeny_mod, torch_mod, x: np.ndarray, atol=1e-5, rtol=1e-4, train=False):
  _copy_params(teeny_mod, torch_mod)
  torch_mod.train(train)
  tx = Tensor(x, requires_grad=x.dtype.kind == "f")
  px = torch.tensor(x, requires_grad=x.dtype.kind == "f")
  if train:
    with Tensor.train(): out = teeny_mod(tx)
  else: out = teeny_mod(tx)
  ref = torch_mod(px if x.dtype.kind == "f" else px.long())
  up = np.random.default_rng(5).standard_normal(tuple(ref.shape)).astype(np.float32)
  (out * Tensor(up)).sum().backward()
  (ref * torch.tensor(up)).sum().backward()
  _close(out.numpy(), ref.detach().numpy(), atol, rtol, "forward")
  if x.dtype.kind == "f": _close(tx.grad.numpy(), px.grad.numpy(), atol * 10, rtol * 10, "input grad")
  for name, p in torch_mod.named_parameters():
    _close(getattr(teeny_mod, name).grad.numpy(), p.grad.numpy(), atol * 10, rtol * 10, f"grad of {name}")

@needs_values
def test_linear():
  check_module(nn.Linear(7, 5), torch.nn.Linear(7, 5), _rand(rng, (3, 7)))
  check_module(nn.Linear(7, 5, bias=False), torch.nn.Linear(7, 5, bias=False), _rand(rng, (2, 3, 7)))

@needs_values
def test_conv_modules():
  check_module(nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(3, 4, 3, padding=1), _rand(rng, (2, 3, 6, 6)))
  kw = dict(stride=2, groups=2, bias=False)
  check_module(nn.Conv2d(4, 6, (3, 2), **kw), torch.nn.Conv2d(4, 6, (3, 2), **kw), _rand(rng, (2, 4, 7, 6)))
  kw = dict(padding="same", dilation=2)
  check_module(nn.Conv2d(3, 4, 3, **kw), torch.nn.Conv2d(3, 4, 3, **kw), _rand(rng, (1, 3, 8, 8)))
  check_module(nn.Conv1d(3, 4, 5, padding=2), torch.nn.Conv1d(3, 4, 5, padding=2), _rand(rng, (2, 3, 10)))
  check_module(nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
               torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), _rand(rng, (2, 4, 4, 5)))

@needs_values
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5, 5), (4, 3, 6)])
def test_batchnorm_module(shape):
  bn = nn.BatchNorm(3, momentum=0.2)
  tbn = (torch.nn.BatchNorm1d if len(shape) < 4 else torch.nn.BatchNorm2d)(3, momentum=0.2)
  bn.weight.assign(Tensor(_rand(rng, (3,), 0.5, 1.5))).realize()
  bn.bias.assign(Tensor(_rand(rng, (3,)))).realize()
  x = _rand(rng, shape, -2, 3)
  check_module(bn, tbn, x, atol=1e-4, train=True)
  _close(bn.running_mean.numpy(), tbn.running_mean.numpy(), 1e-5, 1e-4, "running_mean")
  _close(bn.running_var.numpy(), tbn.running_var.numpy(), 1e-5, 1e-4, "running_var")
  assert int(bn.num_batches_tracked.numpy().reshape(-1)[0]) == 1
  # eval mode uses the running statistics
  check_module(bn, tbn, _rand(rng, shape), atol=1e-4, train=False)

@needs_values
def test_batchnorm_no_running_stats_no_affine():
  check_module(nn.BatchNorm(3, affine=False, track_running_stats=False),
               torch.nn.BatchNorm2d(3, affine=False, track_running_stats=False), _rand(rng, (4, 3, 2, 2)), atol=1e-4)
  assert issubclass(nn.BatchNorm1d, nn.BatchNorm) and issubclass(nn.BatchNorm2d, nn.BatchNorm)
  assert (nn.BatchNorm1d.__name__, nn.BatchNorm2d.__name__) == ("BatchNorm1d", "BatchNorm2d")   # (torch's names)

@needs_values
def test_norm_modules():
  ln, tln = nn.LayerNorm((4, 5)), torch.nn.LayerNorm((4, 5))
  ln.weight.assign(Tensor(_rand(rng, (4, 5)))).realize()
  ln.bias.assign(Tensor(_rand(rng, (4, 5)))).realize()
  check_module(ln, tln, _rand(rng, (3, 4, 5)), atol=1e-4)
  rms, trms = nn.RMSNorm(6), torch.nn.RMSNorm(6)
  rms.weight.assign(Tensor(_rand(rng, (6,)))).realize()
  check_module(rms, trms, _rand(rng, (3, 6)), atol=1e-4)
  check_module(nn.RMSNorm(6, eps=1e-3), torch.nn.RMSNorm(6, eps=1e-3), _rand(rng, (2, 3, 6)), atol=1e-4)
  gn, tgn = nn.GroupNorm(2, 6), torch.nn.GroupNorm(2, 6)
  gn.weight.assign(Tensor(_rand(rng, (6,)))).realize()
  gn.bias.assign(Tensor(_rand(rng, (6,)))).realize()
  check_module(gn, tgn, _rand(rng, (3, 6, 4, 2)), atol=1e-4)

@needs_values
def test_embedding():
  emb, temb = nn.Embedding(10, 4), torch.nn.Embedding(10, 4)
  check_module(emb, temb, rng.integers(0, 10, (3, 5)).astype(np.int32))

@needs_values
def test_embedding_out_of_range():
  emb = nn.Embedding(10, 4)
  ids = Tensor(np.array([[1, 10]], np.int32)).realize()
  with pytest.raises(IndexError, match="10"): emb(ids).realize()
  with pytest.raises(IndexError, match="-1"): emb(Tensor(np.array([-1, 2], np.int32)).realize()).realize()

@needs_values
def test_initialisers():
  Tensor.manual_seed(0)
  lin, conv, emb = nn.Linear(400, 300), nn.Conv2d(8, 16, 3, groups=2), nn.Embedding(500, 200)
  w = lin.weight.numpy()
  bound = 1 / np.sqrt(400)
  assert np.abs(w).max() <= bound and abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
  assert np.abs(lin.bias.numpy()).max() <= bound
  cmax = np.abs(conv.weight.numpy()).max()  # torch's fan_in for a grouped conv: in_channels / groups * k * k
  assert 0.9 / np.sqrt(4 * 9) < cmax <= 1 / np.sqrt(4 * 9)
  e = emb.weight.numpy()
  assert abs(e.mean()) < 0.02 and abs(e.std() - 1) < 0.02
  for p in get_parameters(lin) + get_parameters(conv) + get_parameters(emb): assert p.requires_grad

# ***** a whole training step *****

def test_sgd_step_fused_schedule():
  """One fused SGD step of a 784-128-10 MLP: the values match torch's step, and the schedule has no redundant kernel
  (none computes what another already does, each one's output is a result or read by a later kernel, no buffer is
  written twice). The kernel count itself is a benchmark figure (printed here, not pinned)."""
  import teeny.engine.schedule as sched
  Tensor.manual_seed(0)
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  params = get_parameters([l1, l2])
  opt = nn.optim.SGD(params, lr=0.01)
  xs, ys = np.random.default_rng(0).random((32, 784), dtype=np.float32), np.arange(32, dtype=np.int32) % 10
  x, y = Tensor(xs).realize(), Tensor(ys).realize()
  Tensor.realize(*params)
  before = [p.numpy().copy() for p in (l1.weight, l1.bias, l2.weight, l2.bias)] if not is_null() else None
  made = []   # every schedule the step makes: (roots, items, becomes)
  real = sched.create_schedule
  def recording(roots, walked=None):
    items, becomes = real(roots, walked)
    made.append((roots, items, becomes))
    return items, becomes
  # the fused autograd graph (GPUs route cross-entropy through the hand-written kernel, which trades kernels for
  # atomics)
  with Tensor.train(), Context(TEENY_CUSTOM_KERNELS=0), pytest.MonkeyPatch.context() as mp:
    loss = l2(l1(x).relu()).cross_entropy(y)
    loss.backward()
    mp.setattr(sched, "create_schedule", recording)
    GlobalCounters.reset()
    Tensor.realize(loss, *opt.schedule_step())
  assert made, "the step made no schedule"
  n = 0
  for roots, items, becomes in made:
    outputs = {becomes[r].base for r in roots}
    kernels = [(i, it) for i, it in enumerate(items) if it.kind == "kernel"]
    for i, it in kernels:
      # what a kernel makes: a fresh buffer, or (an in-place write) the next version of the memory it writes
      out = it.produced()[0]
      assert out in outputs or any(out in later.consumed()
                                   for later in items[i + 1:]), f"kernel {it.ast.arg.name} is dead"
    computations = [(it.ast, tuple(it.consumed())) for _, it in kernels]
    assert len(set(computations)) == len(computations), "two kernels compute the same thing"
    assert len({it.produced()[0] for _, it in kernels}) == len(kernels), "a buffer version is written by two kernels"
    n += len(kernels)
  assert GlobalCounters.kernel_count == n, "the step ran what it scheduled"
  print(f"one SGD step of a 784-128-10 MLP: {n} kernels")
  if is_null(): return
  tl1, tl2 = torch.nn.Linear(784, 128), torch.nn.Linear(128, 10)
  with torch.no_grad():
    for tp, v in zip((tl1.weight, tl1.bias, tl2.weight, tl2.bias), before): tp.copy_(torch.tensor(v))
  topt = torch.optim.SGD(list(tl1.parameters()) + list(tl2.parameters()), lr=0.01)
  tloss = torch.nn.functional.cross_entropy(tl2(tl1(torch.tensor(xs)).relu()), torch.tensor(ys).long())
  tloss.backward()
  topt.step()
  np.testing.assert_allclose(loss.numpy(), tloss.item(), rtol=1e-5)
  for name, p, tp, b in zip(("l1.weight", "l1.bias", "l2.weight", "l2.bias"), (l1.weight, l1.bias, l2.weight, l2.bias),
                            (tl1.weight, tl1.bias, tl2.weight, tl2.bias), before):
    assert not np.array_equal(p.numpy(), b), f"{name} was not updated"
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
