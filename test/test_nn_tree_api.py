"""teeny's own layers (Linear, Conv2d, Sequential, BatchNorm, LSTM...) have torch's nn.Module tree API (parameters,
named_parameters, buffers, state_dict, load_state_dict, train/eval, requires_grad_, zero_grad, to, modules, children,
apply), not only nn.Module subclasses: torch code calls `nn.Sequential(...).parameters()` and `layer.requires_grad_()`
on them directly. Names and order are checked against torch's for the same architecture."""
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor, dtypes, nn
from teeny.nn import optim

torch = pytest.importorskip("torch")

def _both():
  t = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(), torch.nn.Flatten(),
                          torch.nn.Linear(8, 3))
  m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))
  return t, m

def test_plain_layers_walk_like_torch_modules():
  t, m = _both()
  assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
  assert [tuple(p.shape) for p in m.parameters()] == [tuple(p.shape) for p in t.parameters()]
  assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
  assert list(m.state_dict()) == list(t.state_dict())
  assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
  name = lambda c: "BatchNorm" if type(c).__name__.startswith("BatchNorm") else type(c).__name__   # (one teeny class)
  assert [name(c) for c in m.children()] == [name(c) for c in t.children()]
  lin = nn.Linear(3, 2)
  assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"] and list(lin.modules()) == [lin]
  lstm, tl = nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2)
  assert [n for n, _ in lstm.named_parameters()] == [n for n, _ in tl.named_parameters()]

def test_plain_layers_modes_freezing_and_apply():
  _, m = _both()
  assert m.train() is m and Tensor.training and m.training
  assert m.eval() is m and not Tensor.training
  assert m.requires_grad_(False) is m and not any(p.requires_grad for p in m.parameters())
  m[4].requires_grad_()
  assert [p.requires_grad for p in m.parameters()] == [False] * 4 + [True] * 2
  seen = []
  assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
  assert seen == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear", "Sequential"]

@needs_values
def test_plain_layers_train_load_and_cast():
  t, m = _both()
  m.load_state_dict(t.state_dict())
  x = np.random.default_rng(0).standard_normal((4, 1, 4, 4)).astype(np.float32)
  np.testing.assert_allclose(m.eval()(Tensor(x)).numpy(), t.eval()(torch.tensor(x)).detach().numpy(), atol=1e-5)
  opt = optim.SGD(m.parameters(), lr=0.1)
  m.train()
  m(Tensor(x)).sum().backward()
  assert all(p.grad is not None for p in m.parameters())
  opt.step()
  m.zero_grad()
  assert all(p.grad is None for p in m.parameters())
  lin = nn.Linear(3, 2)
  assert lin.to(dtypes.float16) is lin and lin.weight.dtype == dtypes.float16 and lin.bias.dtype == dtypes.float16
  assert lin.float().weight.dtype == dtypes.float32
  missing, unexpected = lin.load_state_dict({"weight": np.zeros((2, 3), np.float32)}, strict=False)
  assert missing == ["bias"] and unexpected == [] and not lin.weight.numpy().any()
  with pytest.raises(RuntimeError, match="Missing key"): lin.load_state_dict({"weight": np.zeros((2, 3), np.float32)})
