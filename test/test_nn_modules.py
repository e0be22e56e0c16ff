"""torch-named nn modules (containers, dropout, activations, pooling, transposed convs, norms, resampling, losses)
against torch: the same parameters (loaded from torch's state_dict, which also checks the key names), then outputs,
input gradients and parameter gradients."""
import math
import warnings
from collections import OrderedDict
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_state_dict, load_state_dict
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

HSET = settings(max_examples=20, deadline=None)
HSET_SMALL = settings(max_examples=10, deadline=None)  # each example compiles new kernels (cold cache: ~1 s each)

def _has(*names: str) -> bool: return all(hasattr(Tensor, n) for n in names)

def needs(*names: str):
  """Skip until the Tensor methods a module calls exist (other files add them)."""
  return pytest.mark.skipif(not _has(*names), reason=f"Tensor lacks {[n for n in names if not hasattr(Tensor, n)]}")

def _rand(shape, seed=0, low=-2.0, high=2.0, dtype=np.float32):
  return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)

def _close(got, want, what, atol=1e-5, rtol=1e-4):
  want = want.detach().float().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
  np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), atol=atol, rtol=rtol,
                             equal_nan=True, err_msg=what)

T2T = {torch.float32: dtypes.float32, torch.float16: dtypes.float16, torch.int32: dtypes.int32,
       torch.int64: dtypes.int64, torch.bool: dtypes.bool}

def sync(tm, pm) -> dict:
  """Copy torch's state_dict into the teeny module (strict: the key names must be the same) and return teeny's."""
  sd = get_state_dict(tm)
  assert set(sd) == set(pm.state_dict()), f"state_dict keys: teeny {sorted(sd)} vs torch {sorted(pm.state_dict())}"
  src = {k: Tensor(v.detach().numpy().reshape(tuple(sd[k].shape))) for k, v in pm.state_dict().items()}
  load_state_dict(tm, src)
  return sd

def check_module(tm, pm, *inputs, atol=1e-5, rtol=1e-4, train=False, grad=True, up_seed=5):
  """Same params, same inputs: compare outputs (shape, dtype, values), input grads and param grads."""
  sd = sync(tm, pm)
  pm.train(train)
  f = [isinstance(x, np.ndarray) and x.dtype.kind == "f" and grad for x in inputs]
  tx = [Tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, f)]
  px = [torch.tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, f)]
  if train:
    with Tensor.train(): out = tm(*tx)
  else: out = tm(*tx)
  ref = pm(*px)
  assert tuple(out.shape) == tuple(ref.shape), f"shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  assert out.dtype == T2T[ref.dtype], f"dtype {out.dtype} vs torch {ref.dtype}"
  params = {k: t for k, t in sd.items() if t.requires_grad}
  do_grad = grad and ref.requires_grad
  if do_grad:
    up = np.random.default_rng(up_seed).standard_normal(tuple(ref.shape)).astype(np.float32)
    (out.float() * Tensor(up)).sum().backward()
    (ref.float() * torch.tensor(up)).sum().backward()
  _close(out.float().numpy(), ref, "forward", atol, rtol)
  if not do_grad: return out
  for i, (t, p) in enumerate(zip(tx, px)):
    if isinstance(p, torch.Tensor) and p.requires_grad:
      _close(t.grad.float().numpy(), p.grad, f"grad of input {i}", atol * 10, rtol * 10)
  named = dict(pm.named_parameters())
  for k, t in params.items():
    _close(t.grad.numpy(), named[k].grad, f"grad of {k}", atol * 10, rtol * 10)
  return out

# ***** containers *****

def test_sequential_keys_indexing_and_slicing():
  s = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
  ps = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
  assert list(get_state_dict(s)) == list(ps.state_dict())  # ["0.weight", "0.bias", "2.weight", "2.bias"]
  assert len(s) == 3 and isinstance(s[1], nn.ReLU) and s[-1] is s[2] and list(s) == [s[0], s[1], s[2]]
  tail = s[1:]
  assert isinstance(tail, nn.Sequential) and len(tail) == 2 and tail[1] is s[2]
  assert list(get_state_dict(tail)) == list(ps[1:].state_dict()) == ["2.weight", "2.bias"]  # names kept, as torch
  with pytest.raises(IndexError, match="out of range"): s[3]
  with pytest.raises(IndexError, match="out of range"): s[-4]
  with pytest.raises(TypeError, match="indices must be integers"): s["0"]
  s.append(nn.Tanh())
  ps.append(torch.nn.Tanh())
  assert len(s) == 4 and isinstance(s[3], nn.Tanh)
  del s[1]
  del ps[1]
  assert list(get_state_dict(s)) == list(ps.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
  s.insert(1, nn.Sigmoid())
  ps.insert(1, torch.nn.Sigmoid())
  assert list(get_state_dict(s)) == list(ps.state_dict())
  s[1] = nn.Identity()
  assert isinstance(s[1], nn.Identity)
  assert "Sequential(" in repr(s) and "(0)" in repr(s)

def test_sequential_ordereddict_nested_and_attribute_access():
  s = nn.Sequential(OrderedDict(conv=nn.Conv2d(2, 3, 3), act=nn.ReLU(), head=nn.Sequential(nn.Flatten(),
                                                                                           nn.Linear(12, 2))))
  ps = torch.nn.Sequential(OrderedDict(conv=torch.nn.Conv2d(2, 3, 3), act=torch.nn.ReLU(),
                                       head=torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 2))))
  assert list(get_state_dict(s)) == list(ps.state_dict())  # conv.weight ... head.1.bias
  assert s.conv is s[0] and isinstance(s.head, nn.Sequential)
  with pytest.raises(KeyError, match="without '.'"): nn.Sequential(OrderedDict({"a.b": nn.ReLU()}))
  with pytest.raises(KeyError, match="already exists"): nn.Sequential(OrderedDict(append=nn.ReLU()))
  with pytest.raises(TypeError, match="must be callable"): nn.Sequential(nn.ReLU(), 3)
  assert len(nn.Sequential()) == 0
  x = Tensor(_rand((2, 3)))
  assert nn.Sequential()(x) is x  # empty: identity, as torch's

@needs_values
def test_sequential_forward_backward_and_checkpoint():
  s = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                    nn.Linear(16, 3), Tensor.tanh)
  ps = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                           torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 3), torch.nn.Tanh())
  check_module(s, ps, _rand((2, 2, 4, 4)), atol=1e-4)  # eval mode: running statistics, loaded from torch's dict

def test_modulelist_and_moduledict_keys():
  class Net:
    def __init__(self, mods):
      self.layers = mods
  ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 3)])
  pl = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 3)])
  assert list(get_state_dict(Net(ml))) == ["layers." + k for k in pl.state_dict()]
  ml.append(nn.Linear(3, 1))
  ml += [nn.ReLU()]
  assert len(ml) == 4 and isinstance(ml[-1], nn.ReLU)
  assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
  ml.insert(0, nn.Linear(1, 1))
  assert list(get_state_dict(ml))[:2] == ["0.weight", "0.bias"] and list(get_state_dict(ml))[-2:] == ["3.weight",
                                                                                                       "3.bias"]
  del ml[0]
  assert [type(m).__name__ for m in ml] == ["Linear", "Linear", "Linear", "ReLU"]
  assert len(ml + nn.ModuleList([nn.ReLU()])) == 5
  with pytest.raises(IndexError, match="out of range"): ml[10]
  md = nn.ModuleDict({"enc": nn.Linear(2, 2), "dec": nn.Linear(2, 2)})
  pd = torch.nn.ModuleDict({"enc": torch.nn.Linear(2, 2), "dec": torch.nn.Linear(2, 2)})
  assert list(get_state_dict(md)) == list(pd.state_dict())
  assert "enc" in md and list(md) == ["enc", "dec"] and md.keys() == ["enc", "dec"] and len(md) == 2
  md["act"] = nn.ReLU()
  assert isinstance(md["act"], nn.ReLU) and md.pop("act") is not None and "act" not in md
  with pytest.raises(KeyError, match="already exists"): md["items"] = nn.ReLU()

@needs_values
@HSET
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4), data=st.data())
def test_flatten_unflatten_hypothesis(shape, data):
  n = len(shape)
  s = data.draw(st.integers(-n, n - 1))
  e = data.draw(st.integers(-n, n - 1))
  x = _rand(tuple(shape))
  if (s % n) > (e % n):
    with pytest.raises(Exception): torch.nn.Flatten(s, e)(torch.tensor(x))
    with pytest.raises(RuntimeError, match="cannot come after end_dim"): nn.Flatten(s, e)(Tensor(x))
    return
  check_module(nn.Flatten(s, e), torch.nn.Flatten(s, e), x)
  d = data.draw(st.integers(-n, n - 1))
  sz = shape[d]
  check_module(nn.Unflatten(d, (1, sz)), torch.nn.Unflatten(d, (1, sz)), x)
  check_module(nn.Unflatten(d, (-1, 1)), torch.nn.Unflatten(d, (-1, 1)), x)

@needs_values
def test_flatten_defaults_identity_and_views():
  x = _rand((4, 3, 2, 5))
  check_module(nn.Flatten(), torch.nn.Flatten(), x)
  xt = Tensor(x).permute(0, 2, 1, 3)  # non-contiguous
  _close(nn.Flatten()(xt).numpy(), torch.nn.Flatten()(torch.tensor(x).permute(0, 2, 1, 3)), "flatten of a view")
  check_module(nn.Flatten(), torch.nn.Flatten(), _rand((0, 3, 2)))  # empty batch
  check_module(nn.Unflatten(1, (3, 2)), torch.nn.Unflatten(1, (3, 2)), _rand((2, 6)))
  check_module(nn.Identity(54, unused="x"), torch.nn.Identity(54, unused="x"), x)
  with pytest.raises(TypeError, match="tuple of ints"): nn.Unflatten(1, 6)

# ***** dropout *****

def test_dropout_p_validation():
  for cls in (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d):
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"): cls(1.5)
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"): cls(-0.1)
    with pytest.raises(TypeError, match="must be a float"): cls("0.5")
  with pytest.raises(ValueError): torch.nn.Dropout(1.5)

@needs_values
def test_dropout_eval_is_identity_and_train_scales():
  x = _rand((64, 64), low=1.0, high=2.0)
  d = nn.Dropout(0.25)
  assert not Tensor.training
  np.testing.assert_array_equal(d(Tensor(x)).numpy(), x)
  t = Tensor(x, requires_grad=True)
  with Tensor.train():
    y = d(t)
    y.sum().backward()
  got, g = y.numpy(), t.grad.numpy()
  kept = got != 0
  assert 0.68 < kept.mean() < 0.82  # ~0.75 of 4096
  np.testing.assert_allclose(got[kept], x[kept] / 0.75, rtol=1e-6)
  np.testing.assert_allclose(g, kept / 0.75, rtol=1e-6)  # the gradient goes through the same mask
  with Tensor.train():
    np.testing.assert_array_equal(nn.Dropout(0.0)(Tensor(x)).numpy(), x)
    np.testing.assert_array_equal(nn.Dropout(1.0)(Tensor(x)).numpy(), np.zeros_like(x))

@needs_values
@pytest.mark.parametrize("cls,shape,lead", [(nn.Dropout1d, (8, 16, 5), 2), (nn.Dropout1d, (16, 5), 1),
                                            (nn.Dropout2d, (8, 16, 3, 4), 2), (nn.Dropout3d, (4, 16, 2, 3, 2), 2),
                                            (nn.Dropout3d, (16, 2, 3, 2), 1)])
def test_channel_dropout_masks_whole_channels(cls, shape, lead):
  x = _rand(shape, low=1.0, high=2.0)
  np.testing.assert_array_equal(cls(0.5)(Tensor(x)).numpy(), x)  # eval
  t = Tensor(x, requires_grad=True)
  with Tensor.train():
    y = cls(0.5)(t)
    y.sum().backward()
  got = y.numpy()
  kept = (got != 0).reshape(*shape[:lead], -1)
  assert (kept.all(-1) | ~kept.any(-1)).all(), "a channel was partly dropped"
  assert 0.1 < kept.all(-1).mean() < 0.9
  np.testing.assert_allclose(got[got != 0], (x * 2)[got != 0], rtol=1e-6)
  np.testing.assert_allclose(t.grad.numpy(), (got != 0) * 2.0)

def test_channel_dropout_rank_errors_and_warnings():
  with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
    nn.Dropout1d()(Tensor(_rand((2, 3, 4, 5))))
  with pytest.warns(UserWarning, match="interpreted as shape \\(N, C, L\\)"): nn.Dropout2d()(Tensor(_rand((2, 3, 4))))
  with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input"): nn.Dropout3d()(Tensor(_rand((2, 3, 4))))
  with pytest.raises(RuntimeError, match="dropout2d: expected a \\(N, C, \\*spatial\\) input"), \
      pytest.warns(UserWarning, match="dropout2d: Received a 1-D input"):
    nn.Dropout2d()(Tensor(_rand((3,))))

# ***** activations *****

ACTS = [
  ("ReLU", (), {}), ("ReLU6", (), {}), ("LeakyReLU", (0.2,), {}),
  ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}),
  ("Tanh", (), {}), ("Softplus", (), {}), ("Softplus", (2.0, 1.0), {}), ("ELU", (0.5,), {}), ("CELU", (1.5,), {}),
  ("SELU", (), {}), ("Hardtanh", (-0.5, 2.0), {}), ("Hardsigmoid", (), {}), ("Hardswish", (), {}),
  ("Softmax", (1,), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}), ("LogSigmoid", (), {}),
  ("Softsign", (), {}), ("Tanhshrink", (), {}), ("Threshold", (0.5, -2.0), {}), ("Hardshrink", (0.7,), {}),
  ("Softshrink", (0.3,), {}), ("GLU", (), {}), ("GLU", (0,), {}), ("PReLU", (), {}), ("PReLU", (4, 0.1), {}),
]

@needs_values
@pytest.mark.parametrize("name,args,kw", ACTS, ids=[f"{a[0]}{a[1]}{a[2]}" for a in ACTS])
def test_activation_module(name, args, kw):
  # the kinks and thresholds themselves (0, +-0.5, +-3, +-6, 20 * beta) plus random values
  special = np.array([0.0, 0.5, -0.5, 0.7, -0.3, 0.3, 3.0, -3.0, 6.0, -6.0, 1.0, 2.0, 10.0, -10.0, 25.0, -25.0],
                     np.float32)
  x = np.concatenate([special, _rand(48, seed=3, low=-8, high=8)]).reshape(4, 4, 4)
  tm, pm = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
  check_module(tm, pm, x, atol=1e-5, rtol=1e-5)
  if "inplace" in pm.__dict__:  # accepted for torch's signature; the result is a new tensor either way
    assert getattr(nn, name)(*args, inplace=True)(Tensor(x)).shape == x.shape

@needs_values
@pytest.mark.parametrize("name", ["ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Hardswish", "LeakyReLU", "ELU"])
def test_activation_float16_and_views(name):
  x16 = _rand((3, 5), seed=2, low=-4, high=4).astype(np.float16)
  out = getattr(nn, name)()(Tensor(x16))
  ref = getattr(torch.nn, name)()(torch.tensor(x16))
  assert out.dtype == dtypes.float16 and ref.dtype == torch.float16
  _close(out.numpy(), ref, f"{name} float16", atol=2e-3, rtol=2e-3)
  x = _rand((4, 6), seed=3)
  _close(getattr(nn, name)()(Tensor(x).transpose(0, 1)[1:]).numpy(),
         getattr(torch.nn, name)()(torch.tensor(x).transpose(0, 1)[1:]), f"{name} of a view")
  check_module(getattr(nn, name)(), getattr(torch.nn, name)(), _rand((0, 3)))

@needs_values
def test_activation_int_inputs():
  xi = np.array([[-3, 0, 2], [7, -1, 5]], np.int32)
  for name in ("ReLU", "ReLU6", "Hardtanh"):
    out, ref = getattr(nn, name)()(Tensor(xi)), getattr(torch.nn, name)()(torch.tensor(xi))
    assert out.dtype == dtypes.int32 and ref.dtype == torch.int32, name
    np.testing.assert_array_equal(out.numpy(), ref.numpy())

@needs_values
@HSET_SMALL
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), beta=st.sampled_from([0.5, 1.0, 3.0]),
       threshold=st.sampled_from([0.5, 2.0, 20.0]), seed=st.integers(0, 100))
def test_softplus_threshold_hypothesis(shape, beta, threshold, seed):
  check_module(nn.Softplus(beta, threshold), torch.nn.Softplus(beta, threshold), _rand(tuple(shape), seed, -6, 6))

def test_activation_errors():
  with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"): nn.GELU("fast")
  with pytest.raises(ValueError, match="min_val .* cannot be greater"): nn.Hardtanh(2.0, 1.0)
  with pytest.raises(ValueError, match="lambd must be greater or equal to 0"): nn.Softshrink(-1.0)
  with pytest.raises(RuntimeError, match="halving dimension must be even"): nn.GLU(1)(Tensor(_rand((2, 3))))
  with pytest.raises(IndexError, match="out of range"): nn.GLU(2)(Tensor(_rand((2, 4))))
  with pytest.raises(ValueError, match="needs 3 channels on dim 1"): nn.PReLU(3)(Tensor(_rand((2, 4))))
  with pytest.raises(ValueError, match="alpha cannot be 0"): nn.CELU(0.0)

@needs_values
@needs_values
@HSET_SMALL
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_softmax_modules_hypothesis(shape, data):
  dim = data.draw(st.integers(-len(shape), len(shape) - 1))
  name = data.draw(st.sampled_from(["Softmax", "LogSoftmax", "Softmin"]))
  check_module(getattr(nn, name)(dim), getattr(torch.nn, name)(dim), _rand(tuple(shape), seed=len(shape) + dim))

@needs_values
def test_softmax_implicit_dim_warns_like_torch():
  x = _rand((2, 3, 4))
  with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"): out = nn.Softmax()(Tensor(x))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ref = torch.nn.Softmax()(torch.tensor(x))
  _close(out.numpy(), ref, "implicit dim (0 for 3-d)")
  with pytest.warns(UserWarning): _close(nn.LogSoftmax()(Tensor(x[0])).numpy(), F_log_softmax(x[0], 1), "2-d: dim 1")

def F_log_softmax(x, dim): return torch.nn.functional.log_softmax(torch.tensor(x), dim)

def test_prelu_state_dict():
  assert list(get_state_dict(nn.PReLU(3))) == list(torch.nn.PReLU(3).state_dict()) == ["weight"]
  assert nn.PReLU(3).weight.shape == (3,)

# ***** pooling *****

POOLS = [
  ("MaxPool1d", (3,), {}, (2, 3, 10)), ("MaxPool1d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 10)),
  ("MaxPool2d", (2,), {}, (2, 3, 6, 6)), ("MaxPool2d", (3, 2, 1, 2), {}, (1, 2, 9, 8)),
  ("MaxPool2d", ((2, 3),), {"stride": (1, 2), "ceil_mode": True}, (3, 7, 7)),
  ("MaxPool3d", (2,), {"padding": 1}, (1, 2, 4, 5, 3)),
  ("AvgPool1d", (3,), {"stride": 1, "padding": 1, "count_include_pad": False}, (2, 3, 7)),
  ("AvgPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 2, 7, 6)), ("AvgPool2d", (2,), {"divisor_override": 3},
                                                                 (1, 2, 4, 4)),
  ("AvgPool3d", (2, 1), {"count_include_pad": False, "padding": 1}, (1, 2, 3, 3, 3)),
]

@needs_values
@pytest.mark.parametrize("name,args,kw,shape", POOLS, ids=[f"{p[0]}{p[1]}{p[2]}" for p in POOLS])
def test_pool_modules(name, args, kw, shape):
  tm, pm = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
  check_module(tm, pm, _rand(shape, seed=len(shape)))

@needs_values
@pytest.mark.parametrize("n", [1, 2, 3])
def test_maxpool_return_indices_and_unpool(n):
  shape = (2, 3) + (6, 4, 4)[:n]
  x = _rand(shape, seed=7)
  mp, pmp = getattr(nn, f"MaxPool{n}d")(2, return_indices=True), getattr(torch.nn, f"MaxPool{n}d")(2,
                                                                                                   return_indices=True)
  (v, i), (pv, pi) = mp(Tensor(x)), pmp(torch.tensor(x))
  assert i.dtype == dtypes.int64
  np.testing.assert_array_equal(i.numpy(), pi.numpy())
  _close(v.numpy(), pv, "pooled")
  up, pup = getattr(nn, f"MaxUnpool{n}d")(2), getattr(torch.nn, f"MaxUnpool{n}d")(2)
  _close(up(v, i).numpy(), pup(pv, pi), "unpooled")
  _close(up(v, i, output_size=tuple(s + 1 for s in shape[2:])).numpy(),
         pup(pv, pi, output_size=tuple(s + 1 for s in shape[2:])), "unpooled with output_size")

@needs_values
@HSET_SMALL
@given(hw=st.tuples(st.integers(3, 6), st.integers(3, 6)), k=st.integers(1, 3), s=st.integers(1, 3),
       ceil=st.booleans(), cip=st.booleans(), use_max=st.booleans(), seed=st.integers(0, 50))
def test_pool2d_hypothesis(hw, k, s, ceil, cip, use_max, seed):
  p = k // 2
  x = _rand((1, 1, *hw), seed)
  if use_max: check_module(nn.MaxPool2d(k, s, p, ceil_mode=ceil), torch.nn.MaxPool2d(k, s, p, ceil_mode=ceil), x)
  else: check_module(nn.AvgPool2d(k, s, p, ceil_mode=ceil, count_include_pad=cip),
                     torch.nn.AvgPool2d(k, s, p, ceil_mode=ceil, count_include_pad=cip), x)

@needs_values
def test_pool_edge_cases():
  x = _rand((2, 3, 4, 5), seed=9)
  for tm, pm in [(nn.MaxPool2d(2), torch.nn.MaxPool2d(2)), (nn.AvgPool2d(2, 1), torch.nn.AvgPool2d(2, 1))]:
    check_module(tm, pm, _rand((0, 2, 4, 4)))  # empty batch
    check_module(tm, pm, x[0])  # unbatched (C, H, W)
    check_module(tm, pm, _rand((1, 1, 2, 2)))  # one window
    _close(tm(Tensor(x).transpose(2, 3)).numpy(), pm(torch.tensor(x).transpose(2, 3)), "a transposed view")
    out, ref = tm(Tensor(x.astype(np.float16))), pm(torch.tensor(x.astype(np.float16)))
    assert out.dtype == dtypes.float16 and ref.dtype == torch.float16
    _close(out.numpy(), ref, "float16", atol=1e-3, rtol=1e-3)
  xi = np.random.default_rng(1).integers(-5, 5, (1, 2, 4, 4)).astype(np.int32)
  out, ref = nn.MaxPool2d(2)(Tensor(xi)), torch.nn.MaxPool2d(2)(torch.tensor(xi))
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), ref.numpy())

ADAPT = [("AdaptiveAvgPool1d", 3, (2, 3, 10)), ("AdaptiveAvgPool2d", (3, 2), (2, 3, 7, 5)),
         ("AdaptiveAvgPool2d", (None, 2), (1, 2, 5, 7)), ("AdaptiveAvgPool3d", 2, (1, 2, 5, 4, 3)),
         ("AdaptiveMaxPool1d", 4, (2, 3, 9)), ("AdaptiveMaxPool2d", (3, 4), (2, 2, 7, 9)),
         ("AdaptiveMaxPool3d", (2, 1, 3), (1, 2, 4, 3, 5)), ("AdaptiveAvgPool2d", 1, (3, 6, 6))]

@needs_values
@pytest.mark.parametrize("name,size,shape", ADAPT, ids=[f"{a[0]}{a[1]}" for a in ADAPT])
def test_adaptive_pool_modules(name, size, shape):
  fn = ("adaptive_avg_pool" if "Avg" in name else "adaptive_max_pool") + name[-2:]
  if not hasattr(Tensor, fn): pytest.skip(f"Tensor lacks {fn}")
  check_module(getattr(nn, name)(size), getattr(torch.nn, name)(size), _rand(shape, seed=11))

@needs_values
@needs("adaptive_avg_pool2d", "adaptive_max_pool2d")
@HSET_SMALL
@given(hw=st.tuples(st.integers(1, 7), st.integers(1, 7)),
       out=st.tuples(st.integers(1, 4), st.none() | st.integers(1, 4)), use_max=st.booleans(), seed=st.integers(0, 20))
def test_adaptive_pool2d_hypothesis(hw, out, use_max, seed):
  name = "AdaptiveMaxPool2d" if use_max else "AdaptiveAvgPool2d"
  check_module(getattr(nn, name)(out), getattr(torch.nn, name)(out), _rand((1, 2, *hw), seed))

@needs_values
@needs("adaptive_max_pool2d")
def test_adaptive_max_pool_return_indices():
  x = _rand((2, 3, 7, 6), seed=4)
  (v, i), (pv, pi) = nn.AdaptiveMaxPool2d(3, return_indices=True)(Tensor(x)), \
    torch.nn.AdaptiveMaxPool2d(3, return_indices=True)(torch.tensor(x))
  _close(v.numpy(), pv, "values")
  np.testing.assert_array_equal(i.numpy(), pi.numpy())

# ***** transposed convolutions *****

CONVT = [
  (1, (4, 6, 3), {}, (2, 4, 7)), (1, (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
                                  (2, 4, 5)),
  (1, (2, 3, 2), {"dilation": 2, "bias": False}, (1, 2, 6)),
  (2, (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 4, 5)),
  (2, (4, 4, (2, 3)), {"stride": (2, 1), "groups": 4}, (1, 4, 3, 3)),
  (3, (2, 3, 2), {}, (1, 2, 3, 2, 3)), (3, (4, 2, 3), {"stride": 2, "padding": 1, "groups": 2}, (1, 4, 2, 3, 2)),
]

@needs_values
@pytest.mark.parametrize("n,args,kw,shape", CONVT, ids=[f"{c[0]}d{c[1]}{c[2]}" for c in CONVT])
def test_conv_transpose_modules(n, args, kw, shape):
  if not hasattr(Tensor, f"conv_transpose{n}d"): pytest.skip(f"Tensor lacks conv_transpose{n}d")
  tm, pm = getattr(nn, f"ConvTranspose{n}d")(*args, **kw), getattr(torch.nn, f"ConvTranspose{n}d")(*args, **kw)
  assert tuple(tm.weight.shape) == tuple(pm.weight.shape)
  assert (tm.bias is None) == (pm.bias is None)
  check_module(tm, pm, _rand(shape, seed=n), atol=1e-4)

@needs_values
@needs("conv_transpose1d")
@HSET_SMALL
@given(stride=st.integers(1, 3), padding=st.integers(0, 2), dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]),
       k=st.integers(1, 3), length=st.integers(1, 5), data=st.data())
def test_conv_transpose1d_hypothesis(stride, padding, dilation, groups, k, length, data):
  op = data.draw(st.integers(0, max(stride, dilation) - 1))
  kw = dict(stride=stride, padding=padding, output_padding=op, groups=groups, dilation=dilation)
  if (length - 1) * stride - 2 * padding + dilation * (k - 1) + op + 1 <= 0:
    with pytest.raises((ValueError, RuntimeError)): nn.ConvTranspose1d(2, 4, k, **kw)(Tensor(_rand((1, 2, length))))
    return
  check_module(nn.ConvTranspose1d(2, 4, k, **kw), torch.nn.ConvTranspose1d(2, 4, k, **kw), _rand((1, 2, length)),
               atol=1e-4)

@needs_values
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_transpose_init_bound(n):
  if not hasattr(Tensor, f"conv_transpose{n}d"): pytest.skip(f"Tensor lacks conv_transpose{n}d")
  m = getattr(nn, f"ConvTranspose{n}d")(3, 8, 3)
  bound = 1 / math.sqrt(8 * 3 ** n)  # torch's fan_in is weight.shape[1] * prod(kernel)
  w, b = m.weight.numpy(), m.bias.numpy()
  assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound and np.abs(b).max() <= bound
  assert m.weight.requires_grad and m.bias.requires_grad

@needs_values
def test_conv_transpose_output_size():
  x = _rand((1, 3, 5, 4))
  tm, pm = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
  sync(tm, pm)
  for size in [(9, 7), (10, 8), (1, 2, 10, 7)]:
    out, ref = tm(Tensor(x), output_size=size), pm(torch.tensor(x), output_size=size)
    assert tuple(out.shape) == tuple(ref.shape)
    _close(out.numpy(), ref, f"output_size {size}", atol=1e-5)
  with pytest.raises(ValueError, match="valid sizes range from \\(9, 7\\) to \\(10, 8\\)"):
    tm(Tensor(x), output_size=(11, 7))
  with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"): tm(Tensor(x), output_size=(9,))

def test_conv_transpose_errors():
  with pytest.raises(ValueError, match="divisible by groups"): nn.ConvTranspose2d(3, 4, 3, groups=2)
  with pytest.raises(ValueError, match="divisible by groups"): nn.ConvTranspose1d(4, 3, 3, groups=2)
  with pytest.raises(ValueError, match="padding_mode 'zeros'"): nn.ConvTranspose3d(2, 2, 3, padding_mode="reflect")
  assert list(get_state_dict(nn.ConvTranspose3d(2, 4, 3))) == list(torch.nn.ConvTranspose3d(2, 4, 3).state_dict())

# ***** norms *****

@needs_values
@needs("layer_norm")
@pytest.mark.parametrize("shape,ns,kw", [((3, 4, 5), (4, 5), {}), ((2, 6), 6, {"elementwise_affine": False}),
                                          ((2, 3, 6), [6], {"bias": False}), ((0, 5), 5, {})])
def test_layernorm_module(shape, ns, kw):
  tm, pm = nn.LayerNorm(ns, **kw), torch.nn.LayerNorm(ns, **kw)
  with torch.no_grad():
    for p in pm.parameters(): p.uniform_(-1, 1)
  check_module(tm, pm, _rand(shape, seed=3), atol=1e-4)

@needs_values
@needs("layer_norm")
def test_layernorm_float16_keeps_dtype():
  x = _rand((2, 3), seed=1).astype(np.float16)
  tm, pm = nn.LayerNorm(3), torch.nn.LayerNorm(3)
  out, ref = tm(Tensor(x)), pm(torch.tensor(x))
  assert ref.dtype == torch.float16 and out.dtype == dtypes.float16
  _close(out.numpy(), ref, "float16 LayerNorm", atol=2e-3, rtol=2e-3)
  with pytest.raises(ValueError, match="LayerNorm"): tm(Tensor(_rand((2, 4))))

@needs_values
@needs("group_norm")
@pytest.mark.parametrize("g,c,shape,affine", [(2, 6, (3, 6, 4, 2), True), (3, 3, (2, 3, 5), False),
                                              (1, 4, (2, 4), True)])
def test_groupnorm_module(g, c, shape, affine):
  tm, pm = nn.GroupNorm(g, c, affine=affine), torch.nn.GroupNorm(g, c, affine=affine)
  with torch.no_grad():
    for p in pm.parameters(): p.uniform_(-1, 1)
  check_module(tm, pm, _rand(shape, seed=4), atol=1e-4)
  x16 = _rand(shape, seed=4).astype(np.float16)
  assert tm(Tensor(x16)).dtype == dtypes.float16 and pm(torch.tensor(x16)).dtype == torch.float16

INORM = [(1, (2, 3, 7), {}), (1, (3, 7), {"affine": True}), (2, (2, 3, 4, 5), {"affine": True}),
         (2, (3, 4, 5), {}), (3, (2, 3, 2, 3, 4), {"affine": True, "eps": 1e-3})]

@needs_values
@needs("instance_norm")
@pytest.mark.parametrize("n,shape,kw", INORM, ids=[f"{i[0]}d{i[1]}{i[2]}" for i in INORM])
def test_instancenorm_module(n, shape, kw):
  tm, pm = getattr(nn, f"InstanceNorm{n}d")(3, **kw), getattr(torch.nn, f"InstanceNorm{n}d")(3, **kw)
  with torch.no_grad():
    for p in pm.parameters(): p.uniform_(-1, 1)
  check_module(tm, pm, _rand(shape, seed=6), atol=1e-4)

@needs_values
@needs("instance_norm")
def test_instancenorm_running_stats():
  tm = nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3)
  pm = torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3)
  assert list(get_state_dict(tm)) == list(pm.state_dict())
  x = _rand((2, 3, 4, 4), seed=8, low=0, high=3)
  check_module(tm, pm, x, atol=1e-4, train=True)  # batch statistics, and the running ones updated
  _close(tm.running_mean.numpy(), pm.running_mean, "running_mean")
  _close(tm.running_var.numpy(), pm.running_var, "running_var")
  check_module(tm, pm, _rand((2, 3, 4, 4), seed=9), atol=1e-4, train=False)  # eval: the running statistics

@needs_values
@needs("instance_norm", "group_norm", "layer_norm")
def test_norms_float16_and_views():
  x = _rand((2, 3, 5, 5), seed=12)
  for tm, pm in [(nn.InstanceNorm2d(3), torch.nn.InstanceNorm2d(3)), (nn.GroupNorm(3, 3), torch.nn.GroupNorm(3, 3)),
                 (nn.LayerNorm(5), torch.nn.LayerNorm(5))]:
    sync(tm, pm)
    out, ref = tm(Tensor(x.astype(np.float16))), pm(torch.tensor(x.astype(np.float16)))
    assert out.dtype == dtypes.float16 and ref.dtype == torch.float16, type(tm).__name__
    _close(out.numpy(), ref, f"{type(tm).__name__} float16", atol=3e-3, rtol=3e-3)
    _close(tm(Tensor(x).transpose(2, 3)).numpy(), pm(torch.tensor(x).transpose(2, 3)), "a view", atol=1e-4)

def test_instancenorm_errors():
  with pytest.raises(ValueError, match="expected a 3-d \\(unbatched\\) or 4-d input"):
    nn.InstanceNorm2d(3)(Tensor(_rand((2, 3))))
  with pytest.raises(ValueError, match="to match num_features \\(3\\), but got: 4"):
    nn.InstanceNorm1d(3, affine=True)(Tensor(_rand((2, 4, 5))))
  if _has("instance_norm"):
    with pytest.warns(UserWarning, match="does not match num_features"): nn.InstanceNorm1d(3)(Tensor(_rand((2, 4, 5))))

# ***** resampling *****

UPS = [({"scale_factor": 2}, (1, 2, 3, 4)), ({"size": (5, 7)}, (2, 1, 3, 4)),
       ({"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 3)),
       ({"scale_factor": 1.5, "mode": "bilinear", "align_corners": True}, (1, 1, 4, 4)),
       ({"size": 6, "mode": "linear"}, (2, 3, 4)), ({"scale_factor": (2, 1, 3), "mode": "trilinear"}, (1, 1, 2, 3, 2)),
       ({"scale_factor": 1.7, "mode": "nearest", "recompute_scale_factor": True}, (1, 2, 3, 5)),
       ({"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True}, (1, 2, 3, 5))]

@needs_values
@pytest.mark.parametrize("kw,shape", UPS, ids=[str(u[0]) for u in UPS])
def test_upsample(kw, shape):
  check_module(nn.Upsample(**kw), torch.nn.Upsample(**kw), _rand(shape, seed=2), atol=1e-5)

@needs_values
def test_upsampling_aliases():
  x = _rand((1, 2, 3, 4))
  check_module(nn.UpsamplingNearest2d(scale_factor=2), torch.nn.UpsamplingNearest2d(scale_factor=2), x)
  check_module(nn.UpsamplingBilinear2d(size=(5, 6)), torch.nn.UpsamplingBilinear2d(size=(5, 6)), x)

@needs_values
@needs("pixel_shuffle", "pixel_unshuffle")
def test_pixel_shuffle_modules():
  check_module(nn.PixelShuffle(2), torch.nn.PixelShuffle(2), _rand((2, 8, 3, 4)))
  check_module(nn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3), _rand((1, 2, 6, 9)))
  check_module(nn.PixelShuffle(2), torch.nn.PixelShuffle(2), _rand((2, 3, 4, 2, 2)))  # extra leading dims

# ***** losses *****

def _cls_target(shape, nc, seed=0, ignore=None):
  t = np.random.default_rng(seed).integers(0, nc, size=shape).astype(np.int64)
  if ignore is not None: t.reshape(-1)[::3] = ignore
  return t

@needs_values
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.2},
                                {"ignore_index": 1}, {"weight": [0.5, 1.0, 2.0, 0.1]}])
def test_cross_entropy_and_nll_loss(kw):
  x, t = _rand((6, 4), seed=1), _cls_target((6,), 4, seed=2)
  tkw = {k: (Tensor(np.array(v, np.float32)) if k == "weight" else v) for k, v in kw.items()}
  pkw = {k: (torch.tensor(v) if k == "weight" else v) for k, v in kw.items()}
  tm, pm = nn.CrossEntropyLoss(**tkw), torch.nn.CrossEntropyLoss(**pkw)
  check_module(tm, pm, x, t)
  if "label_smoothing" not in kw:
    lp = torch.nn.functional.log_softmax(torch.tensor(x), 1).numpy()
    check_module(nn.NLLLoss(**tkw), torch.nn.NLLLoss(**pkw), lp, t)
  check_module(nn.CrossEntropyLoss(**tkw), torch.nn.CrossEntropyLoss(**pkw), _rand((2, 4, 3), seed=3),
               _cls_target((2, 3), 4, seed=4))  # K-dim

def test_loss_weight_state_dict_keys():
  w = np.array([1.0, 2.0], np.float32)
  assert list(get_state_dict(nn.CrossEntropyLoss(Tensor(w)))) == list(torch.nn.CrossEntropyLoss(
    torch.tensor(w)).state_dict()) == ["weight"]
  assert get_state_dict(nn.MSELoss()) == {} and list(torch.nn.MSELoss().state_dict()) == []
  assert list(get_state_dict(nn.BCEWithLogitsLoss(pos_weight=Tensor(w)))) == ["pos_weight"]

@needs_values
def test_cross_entropy_probability_target_and_errors():
  x, p = _rand((3, 5), seed=5), np.random.default_rng(6).dirichlet(np.ones(5), 3).astype(np.float32)
  check_module(nn.CrossEntropyLoss(label_smoothing=0.1), torch.nn.CrossEntropyLoss(label_smoothing=0.1), x, p,
               grad=True)
  with pytest.raises(ValueError, match="reduction"): nn.CrossEntropyLoss(reduction="avg")(Tensor(x), Tensor(p))

REG_LOSSES = [("MSELoss", {}, "mse_loss"), ("MSELoss", {"reduction": "sum"}, "mse_loss"),
              ("L1Loss", {"reduction": "none"}, "l1_loss"), ("L1Loss", {}, "l1_loss"),
              ("SmoothL1Loss", {"beta": 0.5}, "smooth_l1_loss"),
              ("SmoothL1Loss", {"reduction": "none"}, "smooth_l1_loss"), ("HuberLoss", {"delta": 0.7}, "huber_loss"),
              ("HuberLoss", {"reduction": "sum", "delta": 2.0}, "huber_loss")]

@needs_values
@pytest.mark.parametrize("name,kw,fn", REG_LOSSES, ids=[f"{r[0]}{r[1]}" for r in REG_LOSSES])
def test_regression_losses(name, kw, fn):
  if not hasattr(Tensor, fn): pytest.skip(f"Tensor lacks {fn}")
  x, y = _rand((3, 4), seed=1), _rand((3, 4), seed=2)
  y.reshape(-1)[:3] = x.reshape(-1)[:3]  # d = 0 exactly
  check_module(getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw), x, y)
  check_module(getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw), _rand((2, 3, 2), seed=3),
               _rand((2, 3, 2), seed=4))

@needs_values
@needs("kl_div")
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")  # torch's warning for its 'mean' 
@pytest.mark.parametrize("kw", [{}, {"reduction": "batchmean"}, {"reduction": "sum", "log_target": True},
                                {"reduction": "none"}])
def test_kldiv_loss(kw):
  x = torch.log_softmax(torch.tensor(_rand((3, 5), seed=1)), 1).numpy()
  y = np.random.default_rng(2).dirichlet(np.ones(5), 3).astype(np.float32)
  if kw.get("log_target"): y = np.log(y)
  check_module(nn.KLDivLoss(**kw), torch.nn.KLDivLoss(**kw), x, y)

@needs_values
@needs("binary_cross_entropy")
@pytest.mark.parametrize("weighted,reduction", [(False, "mean"), (True, "sum"), (True, "none")])
def test_bce_loss(weighted, reduction):
  x = _rand((4, 3), seed=1, low=0.02, high=0.98)
  y = (np.random.default_rng(2).random((4, 3)) < 0.5).astype(np.float32)
  w = _rand((3,), seed=3, low=0.5, high=2.0)
  tm = nn.BCELoss(Tensor(w) if weighted else None, reduction)
  pm = torch.nn.BCELoss(torch.tensor(w) if weighted else None, reduction=reduction)
  check_module(tm, pm, x, y, grad=True)

@needs_values
@needs("binary_cross_entropy_with_logits")
@pytest.mark.parametrize("weighted,pos,reduction", [(False, False, "mean"), (True, True, "sum"),
                                                    (False, True, "none")])
def test_bce_with_logits_loss(weighted, pos, reduction):
  x, y = _rand((4, 3), seed=1, low=-5, high=5), _rand((4, 3), seed=2, low=0, high=1)
  w, pw = _rand((3,), seed=3, low=0.5, high=2.0), _rand((3,), seed=4, low=0.5, high=3.0)
  tm = nn.BCEWithLogitsLoss(Tensor(w) if weighted else None, reduction, Tensor(pw) if pos else None)
  pm = torch.nn.BCEWithLogitsLoss(torch.tensor(w) if weighted else None, reduction=reduction,
                                  pos_weight=torch.tensor(pw) if pos else None)
  check_module(tm, pm, x, y)

@needs_values
@needs("cosine_similarity", "pairwise_distance")
def test_cosine_similarity_and_pairwise_distance():
  a, b = _rand((4, 5), seed=1), _rand((4, 5), seed=2)
  check_module(nn.CosineSimilarity(), torch.nn.CosineSimilarity(), a, b)
  check_module(nn.CosineSimilarity(dim=0, eps=1e-3), torch.nn.CosineSimilarity(dim=0, eps=1e-3), a, b)
  check_module(nn.PairwiseDistance(), torch.nn.PairwiseDistance(), a, b)
  check_module(nn.PairwiseDistance(p=1.0, keepdim=True), torch.nn.PairwiseDistance(p=1.0, keepdim=True), a, b)

# ***** state_dict names *****

KEYS = [("Linear", (3, 2), {}), ("Conv1d", (2, 4, 3), {"bias": False}), ("ConvTranspose1d", (2, 4, 3), {}),
        ("ConvTranspose2d", (2, 4, 3), {"bias": False}), ("BatchNorm2d", (3,), {}), ("LayerNorm", ((2, 3),), {}),
        ("LayerNorm", (3,), {"bias": False}), ("RMSNorm", (3,), {}), ("GroupNorm", (1, 3), {}),
        ("GroupNorm", (1, 3), {"affine": False}), ("InstanceNorm2d", (3,), {}),
        ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}), ("Embedding", (5, 2), {}),
        ("PReLU", (2,), {})]

@pytest.mark.parametrize("name,args,kw", KEYS, ids=[f"{k[0]}{k[2]}" for k in KEYS])
def test_state_dict_keys_match_torch(name, args, kw):
  tm, pm = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
  sd = get_state_dict(tm)
  assert list(sd) == list(pm.state_dict())
  for k, v in pm.state_dict().items():
    assert tuple(sd[k].shape) == tuple(v.shape), k
  # torch's checkpoint loads
  load_state_dict(nn.Sequential(tm), {"0." + k: Tensor(v.numpy().reshape(tuple(sd[k].shape)))
                                      for k, v in pm.state_dict().items()})

# ***** under NULL: graphs build and schedule *****

def test_modules_build_graphs_on_any_device():
  x = Tensor(_rand((2, 3, 4, 4)))
  outs = [nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4, 2))(x),
          nn.AvgPool2d(2)(x), nn.Upsample(scale_factor=2)(x), nn.GELU("tanh")(x), nn.Softplus(2.0, 1.0)(x),
          nn.Dropout2d()(x), nn.GLU(1)(Tensor(_rand((2, 4))))]
  for o in outs: o.realize()
  if is_null(): return
  assert outs[0].shape == (2, 2)
