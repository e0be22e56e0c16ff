"""nn.Module (torch-style subclassing), nn.Parameter/ParameterList/ParameterDict, the padding modules, BatchNorm3d,
Bilinear, LocalResponseNorm, ChannelShuffle, Softmax2d, AlphaDropout, EmbeddingBag, Fold/Unfold and the multi-margin
losses, against torch 2.x: state_dict keys (and order), strict loading of torch's state_dict, values, gradients and
errors."""
from collections import OrderedDict
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_state_dict
from helpers import needs_values
from teeny.device import Device
from teeny.indexing import _reads_allowed

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

HSET = settings(max_examples=12, deadline=None)   # (each example compiles new kernels: CI time)
HSMALL = settings(max_examples=12, deadline=None)

def _rand(shape, seed=0, low=-2.0, high=2.0, dtype=np.float32):
  return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)

def _close(got, want, what="", atol=1e-5, rtol=1e-4):
  want = want.detach().double().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
  got = got.numpy() if isinstance(got, Tensor) else got
  np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), atol=atol, rtol=rtol,
                             equal_nan=True, err_msg=what)

def _load_torch(tm, pm):
  """torch's state_dict into the teeny module (strict, through Module.load_state_dict or nn.state for plain layers)."""
  sd = pm.state_dict()
  assert list(get_state_dict(tm)) == list(sd), f"keys: teeny {list(get_state_dict(tm))} vs torch {list(sd)}"
  if isinstance(tm, nn.Module): tm.load_state_dict(sd)
  else:
    from teeny.nn.state import load_state_dict
    load_state_dict(tm, {k: Tensor(v.detach().numpy()) for k, v in sd.items()})

def _compare(tm, pm, *inputs, atol=1e-5, rtol=1e-4, grad=True, load=True):
  """Same parameters and inputs: outputs, input gradients and parameter gradients equal torch's."""
  if load: _load_torch(tm, pm)
  fl = [isinstance(x, np.ndarray) and x.dtype.kind == "f" and grad for x in inputs]
  tx = [Tensor(x, requires_grad=f) if isinstance(x, np.ndarray) else x for x, f in zip(inputs, fl)]
  px = [torch.tensor(x, requires_grad=f) if isinstance(x, np.ndarray) else x for x, f in zip(inputs, fl)]
  out, ref = tm(*tx), pm(*px)
  assert tuple(out.shape) == tuple(ref.shape), f"shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
  _close(out, ref, "forward", atol, rtol)
  if not grad or not ref.requires_grad: return out
  up = np.random.default_rng(7).standard_normal(tuple(ref.shape)).astype(np.float32)
  (out * Tensor(up)).sum().backward()
  (ref * torch.tensor(up)).sum().backward()
  for i, (t, p) in enumerate(zip(tx, px)):
    if isinstance(p, torch.Tensor) and p.requires_grad:
      _close(t.grad, p.grad, f"grad of input {i}", atol * 10, rtol * 10)
  named = dict(pm.named_parameters())
  tparams = dict(tm.named_parameters()) if isinstance(tm, nn.Module) else \
    {k: v for k, v in get_state_dict(tm).items() if v.requires_grad}
  for k, t in tparams.items():
    if named[k].grad is None: assert t.grad is None or not t.grad.numpy().any(), k
    else: _close(t.grad, named[k].grad, f"grad of {k}", atol * 10, rtol * 10)
  return out

# ***** Module *****

class TNet(nn.Module):
  def __init__(self):
    super().__init__()
    self.register_buffer("scale", Tensor([2.0]))
    self.conv = nn.Conv2d(2, 3, 3, padding=1)
    self.bn = nn.BatchNorm2d(3)
    self.head = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 5), nn.ReLU(), nn.Linear(5, 4))
    self.alpha = nn.Parameter(Tensor([0.5]))
    self.extra = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 2)])
    self.register_buffer("step", Tensor([0.0]), persistent=False)
    self.cache = Tensor.ones(3)     # a plain tensor attribute: not in the state dict (as torch's)
    self.sizes = [1, 2, 3]
  def forward(self, x):
    y = self.head(self.bn(self.conv(x)).relu()) * self.alpha * self.scale
    for m in self.extra: y = m(y)
    return y

class PNet(torch.nn.Module):
  def __init__(self):
    super().__init__()
    self.register_buffer("scale", torch.tensor([2.0]))
    self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
    self.bn = torch.nn.BatchNorm2d(3)
    self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5), torch.nn.ReLU(),
                                    torch.nn.Linear(5, 4))
    self.alpha = torch.nn.Parameter(torch.tensor([0.5]))
    self.extra = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)])
    self.register_buffer("step", torch.tensor([0.0]), persistent=False)
    self.cache = torch.ones(3)
    self.sizes = [1, 2, 3]
  def forward(self, x):
    y = self.head(self.bn(self.conv(x)).relu()) * self.alpha * self.scale
    for m in self.extra: y = m(y)
    return y

def test_module_names_and_order_match_torch():
  t, p = TNet(), PNet()
  assert list(t.state_dict()) == list(p.state_dict()) == list(get_state_dict(t))
  assert [k for k, _ in t.named_parameters()] == [k for k, _ in p.named_parameters()]
  assert [k for k, _ in t.named_buffers()] == [k for k, _ in p.named_buffers()]
  assert [k for k, _ in t.named_modules()] == [k for k, _ in p.named_modules()]
  assert [k for k, _ in t.named_children()] == [k for k, _ in p.named_children()]
  assert len(list(t.parameters())) == len(list(p.parameters()))
  assert len(list(t.modules())) == len(list(p.modules())) and len(list(t.children())) == len(list(p.children()))
  assert [k for k, _ in t.named_parameters(recurse=False)] == ["alpha"]
  assert [k for k, _ in t.named_parameters(prefix="net")][0] == "net.alpha"
  assert "cache" not in t.state_dict() and t.sizes == [1, 2, 3] and tuple(t.cache.shape) == (3,)
  assert isinstance(t.alpha, nn.Parameter) and not isinstance(t.cache, nn.Parameter)
  assert isinstance(t.conv.weight, nn.Parameter)   # teeny's layers' parameters count as Parameters
  assert t.get_submodule("head.1") is t.head[1] and t.get_submodule("") is t

@needs_values
def test_module_loads_torch_state_dict_strictly_and_gives_torch_output():
  torch.manual_seed(0)
  t, p = TNet(), PNet()
  p.bn.running_mean.uniform_(-1, 1)
  p.bn.running_var.uniform_(0.5, 2)
  res = t.load_state_dict(p.state_dict())
  assert res.missing_keys == [] and res.unexpected_keys == []
  x = _rand((2, 2, 4, 4))
  t.eval()
  p.eval()
  _close(t(Tensor(x)), p(torch.tensor(x)), "eval output")

@needs_values
def test_subclassed_net_trains_one_sgd_step_like_torch():
  from teeny.nn.optim import SGD
  torch.manual_seed(1)
  t, p = TNet(), PNet()
  t.load_state_dict(p.state_dict())
  x, y = _rand((4, 2, 4, 4), seed=2), np.array([0, 1, 1, 0])
  t.train()
  p.train()
  assert Tensor.training and t.training
  opt, popt = SGD(list(t.parameters()), lr=0.1, momentum=0.9), torch.optim.SGD(p.parameters(), lr=0.1, momentum=0.9)
  for _ in range(2):
    t.zero_grad()
    popt.zero_grad()
    t(Tensor(x)).cross_entropy(Tensor(y)).backward()
    torch.nn.functional.cross_entropy(p(torch.tensor(x)), torch.tensor(y)).backward()
    opt.step()
    popt.step()
  for (k, a), (_, b) in zip(t.state_dict().items(), p.state_dict().items()):
    _close(a, b, k, atol=1e-5, rtol=1e-4)

def test_module_train_eval_set_the_global_flag():
  t = TNet()
  assert t.train() is t and Tensor.training is True and t.training and t.bn is not None
  assert t.eval() is t and Tensor.training is False and not t.training
  t.training = True
  assert Tensor.training is True
  with pytest.raises(ValueError, match="boolean"): t.train("yes")  # type: ignore[arg-type]

@needs_values
def test_zero_grad_requires_grad_apply_to():
  t = TNet()
  t.eval()
  t(Tensor(_rand((1, 2, 4, 4)))).sum().backward()
  assert all(p.grad is not None for p in t.parameters())
  t.zero_grad(set_to_none=False)
  assert all(p.grad is not None and not p.grad.numpy().any() for p in t.parameters())
  t.zero_grad()
  assert all(p.grad is None for p in t.parameters())
  t.requires_grad_(False)
  assert all(not p.requires_grad for p in t.parameters())
  assert [k for k, _ in t.named_parameters()] == [k for k, _ in PNet().named_parameters()]  # frozen: still params
  t.requires_grad_()
  seen, pseen = [], []
  t.apply(lambda m: seen.append(type(m).__name__))
  PNet().apply(lambda m: pseen.append(type(m).__name__))
  assert seen[:-1] == pseen[:-1]
  assert seen[-1] == "TNet"
  t.to(dtypes.float64)
  assert t.conv.weight.dtype == dtypes.float64 and t.bn.num_batches_tracked.dtype == dtypes.int64
  assert t.scale.dtype == dtypes.float64 and t.step.dtype == dtypes.float64 and t.conv.weight.requires_grad
  assert t(Tensor(_rand((1, 2, 4, 4)), dtype=dtypes.float64)).dtype == dtypes.float64
  w = t.conv.weight
  assert t.float() is t and t.conv.weight is w and w.dtype == dtypes.float32   # in place: the same tensor objects
  assert t.to("CPU") is t
  with pytest.raises(TypeError, match="floating point"): t.to(dtypes.int32)

def test_module_repr_like_torch():
  class T(nn.Module):
    def __init__(self):
      super().__init__()
      self.pad = nn.ZeroPad2d((1, 0, 2, 1))
      self.bil = nn.Bilinear(2, 3, 4)
      self.inner = nn.Module()
      self.sm = nn.Softmax2d()
  class P(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.pad = torch.nn.ZeroPad2d((1, 0, 2, 1))
      self.bil = torch.nn.Bilinear(2, 3, 4)
      self.inner = torch.nn.Module()
      self.sm = torch.nn.Softmax2d()
  assert repr(T()) == repr(P()).replace("P(", "T(", 1)
  assert repr(nn.ConstantPad1d(1, 2.0)) == repr(torch.nn.ConstantPad1d(1, 2.0))
  assert repr(nn.ReflectionPad3d(1)) == repr(torch.nn.ReflectionPad3d(1))
  assert repr(nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
  assert repr(nn.LocalResponseNorm(3)) == repr(torch.nn.LocalResponseNorm(3))
  assert repr(nn.Module()) == "Module()"
  class T2(nn.Module):
    def __init__(self):
      super().__init__()
      self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding="same"), nn.ReLU(), nn.Conv1d(2, 4, 3, stride=2,
                                                                                              bias=False))
      self.fc = nn.Linear(8, 2)
  class P2(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding="same"), torch.nn.ReLU(),
                                          torch.nn.Conv1d(2, 4, 3, stride=2, bias=False))
      self.fc = torch.nn.Linear(8, 2)
  assert repr(T2()) == repr(P2()).replace("P2(", "T2(", 1)

def test_module_errors():
  class Early(nn.Module):
    def __init__(self):
      self.fc = nn.Linear(2, 2)
  with pytest.raises(AttributeError, match="before Module.__init__"): Early()
  class NoForward(nn.Module): pass
  with pytest.raises(NotImplementedError, match='missing the required "forward"'): NoForward()(Tensor([1.0]))
  t = TNet()
  with pytest.raises(KeyError, match="contain"): t.register_buffer("a.b", Tensor([1.0]))
  with pytest.raises(KeyError, match="empty"): t.register_buffer("", Tensor([1.0]))
  with pytest.raises(KeyError, match="already exists"): t.register_buffer("alpha", Tensor([1.0]))
  with pytest.raises(TypeError, match="buffer 'c'"): t.register_buffer("c", 3)  # type: ignore[arg-type]
  with pytest.raises(TypeError, match="as parameter 'alpha'"): t.alpha = Tensor([1.0])
  with pytest.raises(TypeError, match="as buffer 'scale'"): t.scale = 3
  with pytest.raises(TypeError, match="as child module 'conv'"): t.conv = 3
  with pytest.raises(TypeError, match="not a Module"): t.add_module("x", 3)
  with pytest.raises(TypeError, match="takes no arguments"): nn.Module(3)
  with pytest.raises(AttributeError, match="no attribute 'nope'"): t.nope
  with pytest.raises(AttributeError, match="no submodule"): t.get_submodule("head.9")
  sd = dict(t.state_dict())
  sd.pop("alpha")
  sd["zzz"] = Tensor([1.0])
  with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "zzz"[\s\S]*Missing key\(s\) in '
                                         r'state_dict: "alpha"'):
    t.load_state_dict(sd)
  res = t.load_state_dict(sd, strict=False)
  assert res.missing_keys == ["alpha"] and res.unexpected_keys == ["zzz"]
  with pytest.raises(TypeError, match="dict-like"): t.load_state_dict([1, 2])
  sd2 = dict(t.state_dict())
  sd2["alpha"] = Tensor([1.0, 2.0])
  with pytest.raises(ValueError, match="shape mismatch"): t.load_state_dict(sd2)

def test_module_attribute_bookkeeping():
  t = TNet()
  t.alpha = None   # a parameter set to None: not in the state dict, still registered (as torch's)
  assert "alpha" not in t.state_dict() and "alpha" not in dict(t.named_parameters())
  t.alpha = nn.Parameter(Tensor([3.0]))
  assert list(t.state_dict())[0] == "alpha"
  del t.conv
  assert "conv.weight" not in t.state_dict() and "conv" not in dict(t.named_children())
  t.newp = Tensor.ones(2).contiguous().realize().requires_grad_()   # a leaf that requires grad registers as parameter
  assert "newp" in dict(t.named_parameters()) and list(t.state_dict()).index("newp") == 1
  t.scale = Tensor([5.0])   # a registered buffer keeps its name and place
  assert "scale" in t.state_dict() and "step" in dict(t.named_buffers()) and "step" not in t.state_dict()
  assert "step" in dir(t) and "cache" in dir(t)
  # a shared parameter appears once in parameters(), under both names in the state dict (as torch's)
  class Tied(nn.Module):
    def __init__(self):
      super().__init__()
      self.a = nn.Linear(3, 3)
      self.b = nn.Linear(3, 3)
      self.b.weight = self.a.weight
  class PTied(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.a = torch.nn.Linear(3, 3)
      self.b = torch.nn.Linear(3, 3)
      self.b.weight = self.a.weight
  assert list(Tied().state_dict()) == list(PTied().state_dict())
  assert [k for k, _ in Tied().named_parameters()] == [k for k, _ in PTied().named_parameters()]
  assert [k for k, _ in Tied().named_parameters(remove_duplicate=False)] == \
    [k for k, _ in PTied().named_parameters(remove_duplicate=False)]

@needs_values
def test_parameter():
  src = Tensor([1.0, 2.0])
  p = nn.Parameter(src)
  assert p.requires_grad and p is not src and not src.requires_grad and isinstance(p, nn.Parameter)
  assert not isinstance(src, nn.Parameter) and not isinstance(3, nn.Parameter)
  np.testing.assert_equal(p.numpy(), [1.0, 2.0])
  q = nn.Parameter(Tensor([1.0]), requires_grad=False)
  assert not q.requires_grad and isinstance(q, nn.Parameter)
  assert tuple(nn.Parameter().shape) == (0,)
  assert nn.Parameter(Tensor([1, 2]), requires_grad=False).dtype == dtypes.int32
  with pytest.raises(RuntimeError, match="floating point"): nn.Parameter(Tensor([1, 2]))
  with pytest.raises(TypeError, match="teeny Tensor"): nn.Parameter(np.ones(2))

def test_parameter_list_and_dict_match_torch():
  class T(nn.Module):
    def __init__(self):
      super().__init__()
      self.pl = nn.ParameterList([Tensor.ones(2), nn.Parameter(Tensor.zeros(3))])
      self.pd = nn.ParameterDict({"b": Tensor.ones(2, 2), "a": Tensor.zeros(1)})
  class P(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.pl = torch.nn.ParameterList([torch.ones(2), torch.nn.Parameter(torch.zeros(3))])
      self.pd = torch.nn.ParameterDict({"b": torch.ones(2, 2), "a": torch.zeros(1)})
  t, p = T(), P()
  assert list(t.state_dict()) == list(p.state_dict())
  assert [k for k, _ in t.named_parameters()] == [k for k, _ in p.named_parameters()]
  pl = t.pl
  assert len(pl) == 2 and pl[-1] is pl[1] and all(isinstance(v, nn.Parameter) for v in pl)
  pl.append(Tensor.ones(4))
  pl += [Tensor.ones(1)]
  assert len(pl) == 4 and len(pl[1:3]) == 2 and list(get_state_dict(pl)) == ["0", "1", "2", "3"]
  pl[0] = Tensor.zeros(2)
  assert isinstance(pl[0], nn.Parameter)
  pd = t.pd
  assert pd.keys() == ["a", "b"] and "a" in pd and len(pd) == 2 and pd.get("z") is None   # (sorted, as torch's)
  pd["c"] = Tensor.ones(1)
  assert list(pd) == ["a", "b", "c"] and isinstance(pd["c"], nn.Parameter)
  assert pd.pop("b") is not None and pd.keys() == ["a", "c"]
  with pytest.raises(KeyError): pd["nope"]
  with pytest.raises(IndexError, match="out of range"): pl[9]
  with pytest.raises(TypeError, match="holds tensors"): pl.append(3)
  with pytest.raises(TypeError, match="keys must be strings"): pd[1] = Tensor.ones(1)  # type: ignore[index]
  pd.clear()
  assert len(pd) == 0

@needs_values
@HSMALL
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.booleans(), st.integers(0, 100))
def test_module_mlp_hypothesis(widths, bias, seed):
  """Random MLPs written as torch-style subclasses: same keys, torch's weights load strictly, same outputs."""
  dims = [3, *widths]
  class T(nn.Module):
    def __init__(self):
      super().__init__()
      self.layers = nn.ModuleList([nn.Linear(a, b, bias=bias) for a, b in zip(dims, dims[1:])])
      self.gain = nn.Parameter(Tensor.ones(dims[-1]))
    def forward(self, x):
      for m in self.layers: x = m(x).tanh()
      return x * self.gain
  class P(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.layers = torch.nn.ModuleList([torch.nn.Linear(a, b, bias=bias) for a, b in zip(dims, dims[1:])])
      self.gain = torch.nn.Parameter(torch.ones(dims[-1]))
    def forward(self, x):
      for m in self.layers: x = m(x).tanh()
      return x * self.gain
  torch.manual_seed(seed)
  _compare(T(), P(), _rand((2, 3), seed))

# ***** padding *****

PAD_KINDS = [("ZeroPad", "constant"), ("ConstantPad", "constant"), ("ReflectionPad", "reflect"),
             ("ReplicationPad", "replicate"), ("CircularPad", "circular")]

def _pad_pair(kind, n, pad):
  args = (pad, 1.5) if kind == "ConstantPad" else (pad,)
  return getattr(nn, f"{kind}{n}d")(*args), getattr(torch.nn, f"{kind}{n}d")(*args)

@needs_values
@HSET
@given(st.sampled_from([k for k, _ in PAD_KINDS]), st.integers(1, 3), st.booleans(), st.data())
def test_padding_modules_hypothesis(kind, n, batched, data):
  shape = tuple(data.draw(st.integers(2, 4)) for _ in range(n))
  shape = ((2, 3) if batched else (3,)) + shape
  lo = 0 if kind in ("ReflectionPad", "CircularPad") else -1
  hi = 1 if kind in ("ReflectionPad", "CircularPad") else 2
  pad = data.draw(st.one_of(st.integers(0, hi), st.tuples(*[st.integers(lo, hi)] * (2 * n))))
  tm, pm = _pad_pair(kind, n, pad)
  _compare(tm, pm, _rand(shape, seed=n))

@needs_values
def test_padding_modules_edge_cases():
  # a transposed (non-contiguous) input, and a constant pad over a 5-d input (any rank >= n)
  x = np.ascontiguousarray(_rand((2, 3, 4)))
  out = nn.ReflectionPad1d((2, 1))(Tensor(x).transpose(1, 2))
  _close(out, torch.nn.ReflectionPad1d((2, 1))(torch.tensor(x).transpose(1, 2)))
  x5 = _rand((1, 2, 2, 2, 2))
  _close(nn.ZeroPad2d(1)(Tensor(x5)), torch.nn.ZeroPad2d(1)(torch.tensor(x5)))
  _close(nn.ZeroPad2d(-1)(Tensor(_rand((1, 3, 3)))), torch.nn.ZeroPad2d(-1)(torch.tensor(_rand((1, 3, 3)))))
  xi = np.arange(6, dtype=np.int32).reshape(1, 2, 3)
  got = nn.ReplicationPad1d(1)(Tensor(xi))
  assert got.dtype == dtypes.int32
  np.testing.assert_equal(got.numpy(), torch.nn.ReplicationPad1d(1)(torch.tensor(xi)).numpy())
  xh = _rand((1, 2, 3), dtype=np.float16)
  got = nn.ConstantPad1d(1, 2.0)(Tensor(xh))
  assert got.dtype == dtypes.float16
  _close(got, torch.nn.ConstantPad1d(1, 2.0)(torch.tensor(xh)).float())
  assert tuple(nn.ZeroPad1d(1)(Tensor.empty(0, 2, 3)).shape) == (0, 2, 5)
  assert get_state_dict(nn.ZeroPad2d(1)) == {} and list(torch.nn.ZeroPad2d(1).state_dict()) == []

def test_padding_modules_errors():
  with pytest.raises(ValueError, match=r"expected 3D \(unbatched\) or 4D"): nn.ReflectionPad2d(1)(Tensor.ones(2, 2))
  with pytest.raises(ValueError, match="expected 2D"): nn.CircularPad1d(1)(Tensor.ones(2, 2, 2, 2))
  with pytest.raises(RuntimeError, match="padding size should be less"):
    nn.ReflectionPad1d(3)(Tensor.ones(1, 2, 3))
  with pytest.raises(ValueError, match="tuple of 4 ints"): nn.ZeroPad2d((1, 2, 3))
  with pytest.raises(TypeError, match="must be an int"): nn.ReplicationPad1d(1.5)
  with pytest.raises(ValueError, match="at least 3 dims"): nn.ZeroPad3d(1)(Tensor.ones(2, 2))

# ***** BatchNorm3d, Bilinear, LocalResponseNorm, ChannelShuffle, Softmax2d *****

@needs_values
def test_batchnorm3d_train_and_eval():
  torch.manual_seed(0)
  tm, pm = nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3)
  x = _rand((2, 3, 2, 3, 2))
  _load_torch(tm, pm)
  with Tensor.train():
    out = tm(Tensor(x))
    out.realize()
  pm.train()
  _close(out, pm(torch.tensor(x)))
  _close(tm.running_mean, pm.running_mean)
  _close(tm.running_var, pm.running_var)
  pm.eval()
  _close(tm(Tensor(x)), pm(torch.tensor(x)))
  with pytest.raises(ValueError, match="expected 5D input"): tm(Tensor.ones(2, 3, 4, 4))

@needs_values
@HSET
@given(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_bilinear_hypothesis(lead, i1, i2, o, bias):
  torch.manual_seed(len(lead) + i1)
  tm, pm = nn.Bilinear(i1, i2, o, bias=bias), torch.nn.Bilinear(i1, i2, o, bias=bias)
  _compare(tm, pm, _rand((*lead, i1), 1), _rand((*lead, i2), 2))

@needs_values
def test_bilinear_init_and_errors():
  b = nn.Bilinear(16, 3, 5)
  w = b.weight.numpy()
  assert w.shape == (5, 16, 3) and np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2   # uniform(+-1/sqrt(16))
  with pytest.raises(RuntimeError, match="in1_features"): b(Tensor.ones(2, 15), Tensor.ones(2, 3))
  with pytest.raises(RuntimeError, match="same leading dims"): b(Tensor.ones(2, 16), Tensor.ones(3, 3))

@needs_values
@HSET
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2), st.sampled_from([(1e-4, 0.75, 1.0), (0.5, 0.5, 2.0)]))
def test_local_response_norm_hypothesis(size, c, extra, akb):
  a, b, k = akb
  shape = (2, c) + (3,) * (extra + 1)
  _compare(nn.LocalResponseNorm(size, a, b, k), torch.nn.LocalResponseNorm(size, a, b, k), _rand(shape, c))

def test_local_response_norm_errors():
  with pytest.raises(ValueError, match="3D or higher"): nn.LocalResponseNorm(2)(Tensor.ones(2, 3))
  with pytest.raises(ValueError, match="positive int"): nn.LocalResponseNorm(0)

@needs_values
@HSET
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 2))
def test_channel_shuffle_hypothesis(g, per, extra):
  x = _rand((2, g * per) + (2,) * extra)
  _compare(nn.ChannelShuffle(g), torch.nn.ChannelShuffle(g), x)
  xi = np.arange(2 * g * per * 2, dtype=np.int32).reshape(2, g * per, 2)
  np.testing.assert_equal(nn.ChannelShuffle(g)(Tensor(xi)).numpy(), torch.nn.ChannelShuffle(g)(torch.tensor(xi)))

def test_channel_shuffle_errors():
  with pytest.raises(RuntimeError, match="divisible by groups"): nn.ChannelShuffle(2)(Tensor.ones(1, 3, 2))
  with pytest.raises(RuntimeError, match="at least 3 dimensions"): nn.ChannelShuffle(2)(Tensor.ones(2, 4))
  with pytest.raises(RuntimeError, match="positive"): nn.ChannelShuffle(0)(Tensor.ones(1, 4, 2))
  with pytest.raises(TypeError, match="must be an int"): nn.ChannelShuffle(2.0)

@needs_values
@pytest.mark.parametrize("shape", [(2, 3, 2, 2), (3, 1, 4), (1, 1, 1, 1)])
def test_softmax2d(shape):
  _compare(nn.Softmax2d(), torch.nn.Softmax2d(), _rand(shape))
  with pytest.raises(ValueError, match="3D or 4D"): nn.Softmax2d()(Tensor.ones(2, 3))

# ***** AlphaDropout *****

@needs_values
def test_alpha_dropout():
  x = _rand((200, 50), seed=3)
  m = nn.AlphaDropout(0.2)
  np.testing.assert_equal(m(Tensor(x)).numpy(), x)   # eval mode: identity, as torch's
  al, p = 1.7580993408473766, 0.2
  a = 1 / np.sqrt((al * al * p + 1) * (1 - p))
  with Tensor.train():
    xt = Tensor(x, requires_grad=True)
    out = m(xt)
    got = out.numpy()
  kept = np.isclose(got, a * x + al * a * p, atol=1e-5)
  dropped = np.isclose(got, -al * a + al * a * p, atol=1e-5)
  assert (kept | dropped).all() and abs(dropped.mean() - p) < 0.02
  out.sum().backward()
  np.testing.assert_allclose(xt.grad.numpy(), np.where(kept & ~dropped, a, 0.0).astype(np.float32), atol=1e-6)
  # SELU-normalised inputs stay (about) zero-mean, unit-variance
  z = np.random.default_rng(0).standard_normal((400, 400)).astype(np.float32)
  with Tensor.train(): y = nn.AlphaDropout(0.3)(Tensor(z)).numpy()
  assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
  with Tensor.train():
    np.testing.assert_equal(nn.AlphaDropout(1.0)(Tensor(x)).numpy(), np.zeros_like(x))
    np.testing.assert_equal(nn.AlphaDropout(0.0)(Tensor(x)).numpy(), x)
  with pytest.raises(ValueError, match="between 0 and 1"): nn.AlphaDropout(1.5)

# ***** EmbeddingBag *****

def _bag_pair(mode, padding_idx=None, include_last_offset=False, seed=0):
  torch.manual_seed(seed)
  pm = torch.nn.EmbeddingBag(7, 3, mode=mode, padding_idx=padding_idx, include_last_offset=include_last_offset)
  tm = nn.EmbeddingBag(7, 3, mode=mode, padding_idx=padding_idx, include_last_offset=include_last_offset)
  return tm, pm

def _bag_check(tm, pm, ids, offsets=None, psw=None):
  _load_torch(tm, pm)
  tw = None if psw is None else Tensor(psw, requires_grad=True)
  pw = None if psw is None else torch.tensor(psw, requires_grad=True)
  out = tm(Tensor(ids), None if offsets is None else Tensor(offsets), tw)
  ref = pm(torch.tensor(ids), None if offsets is None else torch.tensor(offsets), pw)
  assert tuple(out.shape) == tuple(ref.shape)
  _close(out, ref, "forward")
  up = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(np.float32)
  (out * Tensor(up)).sum().backward()
  (ref * torch.tensor(up)).sum().backward()
  _close(tm.weight.grad, pm.weight.grad, "weight grad", 1e-4, 1e-3)
  if psw is not None: _close(tw.grad, pw.grad, "per_sample_weights grad", 1e-4, 1e-3)

@needs_values
@HSET
@given(st.sampled_from(["sum", "mean", "max"]), st.sampled_from([None, 0, 3, -1]), st.booleans(), st.data())
def test_embedding_bag_offsets_hypothesis(mode, padding_idx, include_last, data):
  n = data.draw(st.integers(0, 8))
  ids = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=np.int64)
  cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=4)))
  offsets = np.array([0] + cuts[1:] + ([n] if include_last else []), dtype=np.int64)
  psw = _rand((n,), 4) if mode == "sum" and data.draw(st.booleans()) else None
  tm, pm = _bag_pair(mode, padding_idx, include_last)
  _bag_check(tm, pm, ids, offsets, psw)

@needs_values
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input(mode):
  ids = np.array([[1, 2, 4], [4, 3, 2], [0, 0, 6]], dtype=np.int64)
  tm, pm = _bag_pair(mode, padding_idx=0)
  _bag_check(tm, pm, ids, psw=_rand((3, 3), 2) if mode == "sum" else None)
  tm, pm = _bag_pair(mode)
  _bag_check(tm, pm, ids.astype(np.int32))

@needs_values
def test_embedding_bag_init_keys_and_errors():
  m = nn.EmbeddingBag(10, 4, padding_idx=2)
  assert list(m.state_dict()) == list(torch.nn.EmbeddingBag(10, 4).state_dict()) == ["weight"]
  w = m.weight.numpy()
  assert not w[2].any() and w.std() > 0.5   # N(0, 1), the padding row zeros
  f = nn.EmbeddingBag.from_pretrained(Tensor(np.eye(3, dtype=np.float32)), mode="sum")
  assert not f.weight.requires_grad
  np.testing.assert_equal(f(Tensor([[0, 1]])).numpy(), [[1, 1, 0]])
  with pytest.raises(ValueError, match="mode has to be one of"): nn.EmbeddingBag(3, 2, mode="min")
  with pytest.raises(NotImplementedError, match="max_norm"): nn.EmbeddingBag(3, 2, max_norm=1.0)
  with pytest.raises(ValueError, match="padding_idx"): nn.EmbeddingBag(3, 2, padding_idx=3)
  with pytest.raises(ValueError, match="offsets has to be None"): m(Tensor([[1, 2]]), Tensor([0]))
  with pytest.raises(ValueError, match="offsets has to be a 1D"): m(Tensor([1, 2]))
  with pytest.raises(ValueError, match="1D or 2D"): m(Tensor([[[1]]]))
  with pytest.raises(TypeError, match="integer tensor"): m(Tensor([[1.0]]))
  with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
    m(Tensor([[1, 2]]), per_sample_weights=Tensor([[1.0, 1.0]]))

# ***** Fold / Unfold *****

@needs_values
@HSET
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1), st.integers(1, 2), st.booleans(),
       st.integers(1, 2))
def test_unfold_fold_hypothesis(kh, kw, d, p, s, batched, c):
  h, w = 4 + kh, 3 + kw
  shape = (2, c, h, w) if batched else (c, h, w)
  x = _rand(shape, kh * 7 + kw)
  un, pun = nn.Unfold((kh, kw), d, p, s), torch.nn.Unfold((kh, kw), d, p, s)
  cols = _compare(un, pun, x)
  fo, pfo = nn.Fold((h, w), (kh, kw), d, p, s), torch.nn.Fold((h, w), (kh, kw), d, p, s)
  cshape = tuple(cols.shape)
  _compare(fo, pfo, _rand(cshape, 3))

@needs_values
def test_fold_unfold_functional_and_noncontiguous():
  x = np.ascontiguousarray(_rand((1, 2, 5, 4)))
  got = nn.unfold(Tensor(x).transpose(2, 3), 2, stride=(1, 2))
  _close(got, torch.nn.functional.unfold(torch.tensor(x).transpose(2, 3), 2, stride=(1, 2)))
  cols = _rand((1, 2 * 4, 12))
  _close(nn.fold(Tensor(cols), (4, 5), 2), torch.nn.functional.fold(torch.tensor(cols), (4, 5), 2))
  cols = _rand((2 * 4, 30))   # unbatched, padding 1: (4+2-1) * (5+2-1) blocks
  _close(nn.fold(Tensor(cols), (4, 5), 2, padding=1),
         torch.nn.functional.fold(torch.tensor(cols), (4, 5), 2, padding=1))

def test_fold_unfold_errors():
  with pytest.raises(ValueError, match="3D .* or 4D"): nn.Unfold(2)(Tensor.ones(2, 2))
  with pytest.raises(RuntimeError, match="too small"): nn.Unfold(5)(Tensor.ones(1, 1, 3, 3))
  with pytest.raises(ValueError, match="positive"): nn.Unfold(0)
  with pytest.raises(ValueError, match="pair of ints"): nn.Fold((3, 3, 3), 2)(Tensor.ones(1, 4, 4))
  with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"): nn.Fold(3, 2)(Tensor.ones(1, 5, 4))
  with pytest.raises(RuntimeError, match="calculated number of sliding blocks 2 \\* 2 = 4"):
    nn.Fold(3, 2)(Tensor.ones(1, 4, 5))
  with pytest.raises(ValueError, match="2D .* or 3D"): nn.Fold(3, 2)(Tensor.ones(4))

# ***** multi-margin losses *****

@needs_values
@HSET
@given(st.integers(0, 4), st.integers(1, 5), st.sampled_from([1, 2]), st.sampled_from([1.0, 0.4]), st.booleans(),
       st.sampled_from(["mean", "sum", "none"]), st.integers(0, 50))
def test_multi_margin_loss_hypothesis(n, c, p, margin, weighted, reduction, seed):
  if n == 0 and reduction != "none": n = 1   # (torch's reduction of an empty batch is uninitialised memory)
  rng = np.random.default_rng(seed)
  x, y = _rand((n, c), seed), rng.integers(0, c, n).astype(np.int64)
  w = _rand((c,), seed + 1, 0.1, 2.0) if weighted else None
  tm = nn.MultiMarginLoss(p, margin, None if w is None else Tensor(w), reduction)
  pm = torch.nn.MultiMarginLoss(p, margin, None if w is None else torch.tensor(w), reduction=reduction)
  if weighted: assert list(tm.state_dict()) == list(pm.state_dict()) == ["weight"]
  _compare(tm, pm, x, y, load=False)

@needs_values
def test_multi_margin_loss_vector_and_errors():
  x = _rand((4,))
  for r in ("none", "mean"):
    _close(Tensor(x).multi_margin_loss(Tensor(2), reduction=r),
           torch.nn.functional.multi_margin_loss(torch.tensor(x), torch.tensor(2), reduction=r))
  assert tuple(Tensor(x).multi_margin_loss(Tensor(2), reduction="none").shape) == ()
  xt = np.ascontiguousarray(_rand((3, 4)))
  _close(Tensor(xt).T.multi_margin_loss(Tensor([0, 1, 2, 1])),
         torch.nn.functional.multi_margin_loss(torch.tensor(xt).T, torch.tensor([0, 1, 2, 1])))
  xh = _rand((2, 3), dtype=np.float16)
  got = Tensor(xh).multi_margin_loss(Tensor([0, 2]))
  assert got.dtype == dtypes.float16
  # (torch's CPU kernel has no float16: compare with its float32 result)
  _close(got, torch.nn.functional.multi_margin_loss(torch.tensor(xh).float(), torch.tensor([0, 2])), atol=2e-3,
         rtol=2e-3)
  with pytest.raises(RuntimeError, match="target out of range"): Tensor.ones(3, 4).multi_margin_loss(Tensor([0, 4, 1]))
  with pytest.raises(RuntimeError, match="non-empty vector or matrix"):
    Tensor.ones(2, 3, 4).multi_margin_loss(Tensor.zeros(2, 3, dtype=dtypes.int64))
  with pytest.raises(RuntimeError, match="Expected target size \\[3\\]"):
    Tensor.ones(3, 4).multi_margin_loss(Tensor([0, 1]))
  with pytest.raises(ValueError, match="only p == 1 and p == 2"): nn.MultiMarginLoss(p=3)
  with pytest.raises(ValueError, match="only p == 1 and p == 2"):
    Tensor.ones(3, 4).multi_margin_loss(Tensor([0] * 3), 3)
  with pytest.raises(TypeError, match="integer tensor"): Tensor.ones(3, 4).multi_margin_loss(Tensor([0.0] * 3))
  with pytest.raises(TypeError, match="floating-point"): Tensor([[1, 2]]).multi_margin_loss(Tensor([0]))
  with pytest.raises(RuntimeError, match="weight must be a 1-D tensor of 4"):
    Tensor.ones(3, 4).multi_margin_loss(Tensor([0] * 3), weight=Tensor.ones(3))
  with pytest.raises(ValueError, match="reduction"): Tensor.ones(3, 4).multi_margin_loss(Tensor([0] * 3), reduction="x")

@needs_values
@HSET
@given(st.integers(1, 4), st.integers(1, 5), st.sampled_from(["mean", "sum", "none"]), st.integers(0, 50))
def test_multilabel_margin_loss_hypothesis(n, c, reduction, seed):
  rng = np.random.default_rng(seed)
  t = np.full((n, c), -1, np.int64)
  for i in range(n):   # each row: some class ids, then -1 and anything after it (ignored)
    k = int(rng.integers(0, c + 1))
    t[i, :k] = rng.integers(0, c, k)
    if k + 1 < c: t[i, k + 1:] = rng.integers(-1, c, c - k - 1)
  _compare(nn.MultiLabelMarginLoss(reduction), torch.nn.MultiLabelMarginLoss(reduction=reduction), _rand((n, c), seed),
           t, load=False)

@needs_values
def test_multilabel_margin_loss_vector_and_errors():
  x = _rand((4,))
  for r in ("none", "sum"):
    _close(Tensor(x).multilabel_margin_loss(Tensor([3, 0, -1, 2]), reduction=r),
           torch.nn.functional.multilabel_margin_loss(torch.tensor(x), torch.tensor([3, 0, -1, 2]), reduction=r))
  if _reads_allowed(Device.DEFAULT):   # (a check that reads the target: where index checks read, the CPU by default)
    with pytest.raises(RuntimeError, match="'target' is out of range"):
      Tensor.ones(3, 4).multilabel_margin_loss(Tensor([[0, 4, 1, -1]] * 3))
  with pytest.raises(RuntimeError, match="inconsistent target size"):
    Tensor.ones(3, 4).multilabel_margin_loss(Tensor.zeros(3, 3, dtype=dtypes.int64))
  with pytest.raises(RuntimeError, match="non-empty vector or matrix"):
    Tensor.ones(2, 3, 4).multilabel_margin_loss(Tensor.zeros(2, 3, 4, dtype=dtypes.int64))

def test_null_device_builds_the_graphs():
  """Everything above builds without values (DEV=NULL runs this too): shapes and dtypes only."""
  assert tuple(nn.ZeroPad2d(1)(Tensor.ones(1, 2, 3)).shape) == (1, 4, 5)
  assert tuple(nn.Unfold(2)(Tensor.ones(1, 2, 3, 3)).shape) == (1, 8, 4)
  assert tuple(nn.Fold(3, 2)(Tensor.ones(1, 8, 4)).shape) == (1, 2, 3, 3)
  assert tuple(nn.EmbeddingBag(5, 2)(Tensor([[1, 2]])).shape) == (1, 2)
  assert tuple(nn.Bilinear(2, 3, 4)(Tensor.ones(5, 2), Tensor.ones(5, 3)).shape) == (5, 4)
  assert Tensor.ones(3, 4).multi_margin_loss(Tensor([0, 1, 2])).dtype == dtypes.float32
  assert tuple(OrderedDict(TNet().state_dict())) == tuple(PNet().state_dict())

@needs_values
def test_empty_and_size_one_inputs():
  for tm, pm, shape in [(nn.LocalResponseNorm(2), torch.nn.LocalResponseNorm(2), (0, 3, 2)),
                        (nn.Softmax2d(), torch.nn.Softmax2d(), (0, 2, 1, 1)),
                        (nn.ChannelShuffle(2), torch.nn.ChannelShuffle(2), (0, 4, 1)),
                        (nn.Unfold(1), torch.nn.Unfold(1), (0, 2, 1, 1)),
                        (nn.Fold(1, 1), torch.nn.Fold(1, 1), (0, 2, 1)),
                        (nn.ReplicationPad2d(1), torch.nn.ReplicationPad2d(1), (1, 1, 1, 1))]:
    out, ref = tm(Tensor(_rand(shape))), pm(torch.tensor(_rand(shape)))
    assert tuple(out.shape) == tuple(ref.shape), type(tm).__name__
    _close(out, ref, type(tm).__name__)
  torch.manual_seed(0)
  tb, pb = nn.Bilinear(2, 3, 1), torch.nn.Bilinear(2, 3, 1)
  _load_torch(tb, pb)
  assert tuple(tb(Tensor.ones(0, 2), Tensor.ones(0, 3)).shape) == (0, 1)
  _compare(tb, pb, _rand((2,)), _rand((3,)), load=False)   # unbatched: (in1,), (in2,) -> (out,)
  x = np.ascontiguousarray(_rand((2, 3)))
  _close(tb(Tensor(x).T, Tensor.ones(3, 3)), pb(torch.tensor(x).T, torch.ones(3, 3)))   # a transposed input
