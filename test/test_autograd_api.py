"""torch's autograd attributes on Tensor: is_leaf, retain_grad/retains_grad, register_hook (leaves), against torch."""
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor

pytestmark = needs_values
torch = pytest.importorskip("torch")

def _pair(vals):
  return Tensor(np.array(vals, np.float32), requires_grad=True), torch.tensor(vals, requires_grad=True)

def test_is_leaf_as_torch():
  x, px = _pair([1.0, 2.0])
  c, pc = Tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
  for a, b in ((x, px), (x * 2, px * 2), (c, pc), (c * 2, pc * 2), (x.detach(), px.detach()),
               ((x * 2).sum(), (px * 2).sum())):
    assert a.is_leaf == b.is_leaf

def test_retain_grad_fills_a_non_leaf_grad_and_accumulates():
  x, px = _pair([1.0, -2.0, 3.0])
  outs = []
  for xx in (x, px):
    y = xx * xx + 1
    y.retain_grad()
    assert y.retains_grad and not xx.retains_grad
    z = (y * y.exp().clamp(max=10)).sum()
    z.backward(retain_graph=True)   # (teeny keeps the graph anyway)
    z.backward()
    outs.append((y.grad.detach().numpy() if xx is px else y.grad.numpy(), xx.grad.numpy()))
  np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5)
  np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5)

def test_non_retained_intermediate_has_no_grad():
  x = Tensor([1.0, 2.0], requires_grad=True)
  y = x * 2
  (y * y).sum().backward()
  assert y.grad is None and x.grad is not None

def test_retain_grad_needs_requires_grad():
  with pytest.raises(RuntimeError, match="does not require grad"): Tensor([1.0]).retain_grad()

def test_leaf_hook_changes_grad_and_can_be_removed():
  x, px = _pair([1.0, 2.0, 3.0])
  seen = []
  hx = x.register_hook(lambda g: (seen.append(g.numpy().copy()), g * 3)[1])
  hp = px.register_hook(lambda g: g * 3)
  (x * x).sum().backward()
  (px * px).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), px.grad.numpy())
  np.testing.assert_allclose(seen[0], [2, 4, 6])
  hx.remove()
  hp.remove()
  (x * x).sum().backward()
  (px * px).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), px.grad.numpy())

def test_hook_returning_none_keeps_grad():
  x = Tensor([1.0, 2.0], requires_grad=True)
  x.register_hook(lambda g: None)
  (x * 5).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [5, 5])

def test_hook_errors():
  x = Tensor([1.0, 2.0], requires_grad=True)
  with pytest.raises(NotImplementedError, match="leaves"): (x * 2).register_hook(lambda g: g)
  with pytest.raises(RuntimeError, match="does not require grad"): Tensor([1.0]).register_hook(lambda g: g)
  x.register_hook(lambda g: g.sum())
  with pytest.raises(RuntimeError, match="must return None or a tensor of shape"): (x * 2).sum().backward()
