"""CALL nodes (uop/ops.py: call_of): a matmul or convolution of tensors that need no gradient is one node whose body, a
graph over PARAMs built once per shapes, the scheduler inlines. Its results must be the plain graph's in every way a
user can reach: values (numpy, torch), fused epilogues and prologues, in-place writes into the result, aliasing of
the operands, gradients that reach it later, and schedules that the cache replays."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from teeny import GlobalCounters, Tensor, dtypes
from teeny.uop.ops import Ops, inline_calls
from helpers import is_null, needs_values

def _plain(monkeypatch):
  """Build matmuls and convolutions without CALL nodes (the graphs their bodies hold)."""
  import teeny.uop.ops as O
  monkeypatch.setattr(O, "call_of", lambda name, key, srcs, build, *args: build(*args))
  import teeny.tensor as T, teeny.tensor_nn as TN
  monkeypatch.setattr(T, "call_of", O.call_of)
  monkeypatch.setattr(TN, "call_of", O.call_of)

def test_matmul_and_conv_without_grad_are_one_call_node():
  a, b = Tensor.empty(8, 16), Tensor.empty(16, 4)
  assert (a @ b).uop.op is Ops.CALL and (a @ b).uop is (a @ b).uop   # (hash-consed: the body is built once)
  x, w = Tensor.empty(2, 3, 8, 8), Tensor.empty(4, 3, 3, 3)
  assert x.conv2d(w, padding=1).uop.op is Ops.CALL
  a.requires_grad_()
  assert (a @ b).uop.op is not Ops.CALL   # (gradients: the plain graph, which autograd differentiates)
  assert "matmul (10 nodes)" in repr((Tensor.empty(8, 16) @ Tensor.empty(16, 4)).uop)   # (DEBUG=5 prints it so)

@needs_values
@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float16, dtypes.int32])
def test_values_fusion_and_kernel_count_match_the_plain_graph(monkeypatch, dt):
  rng = np.random.default_rng(0)
  A, B = (rng.integers(-3, 4, (6, 10)).astype(dt.np), rng.integers(-3, 4, (10, 5)).astype(dt.np))
  X, W = rng.standard_normal((2, 3, 9, 9)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
  def run():
    a, b, x, w = Tensor(A), Tensor(B), Tensor(X), Tensor(W)
    GlobalCounters.reset()
    outs = [((a * 2) @ b).relu() + 1, (x.relu().conv2d(w, padding=1) * 3).sum((2, 3)), a @ a.T]
    Tensor.realize_all(*outs)
    return [o.numpy() for o in outs], GlobalCounters.kernel_count
  got, k = run()
  _plain(monkeypatch)
  want, k2 = run()
  assert k == k2
  for g, w_ in zip(got, want): np.testing.assert_array_equal(g, w_)
  np.testing.assert_allclose(got[0], np.maximum((A * 2) @ B, 0) + 1, rtol=1e-3)
  np.testing.assert_allclose(got[2], A @ A.T, rtol=1e-3)

@needs_values
def test_operand_aliasing_and_views_are_part_of_the_key():
  # x @ x and x @ y of the same shapes must not share a body (x @ x's body names one PARAM twice)
  rng = np.random.default_rng(1)
  A, B = rng.standard_normal((5, 5)).astype(np.float32), rng.standard_normal((5, 5)).astype(np.float32)
  x, y = Tensor(A), Tensor(B)
  np.testing.assert_allclose((x @ x).numpy(), A @ A, rtol=1e-5)
  np.testing.assert_allclose((x @ y).numpy(), A @ B, rtol=1e-5)
  np.testing.assert_allclose((y @ y).numpy(), B @ B, rtol=1e-5)
  np.testing.assert_allclose((x @ y.T).numpy(), A @ B.T, rtol=1e-5)
  # a convolution of a buffer, of a lazy value and of a transposed view, one shape: three bodies
  X, W = rng.standard_normal((1, 2, 6, 6)).astype(np.float32), rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
  import torch
  tw = torch.tensor(W)
  for xt, tx in [(Tensor(X), torch.tensor(X)), (Tensor(X) * 2, torch.tensor(X) * 2),
                 (Tensor(X.transpose(0, 1, 3, 2).copy()).transpose(2, 3), torch.tensor(X))]:
    for pad in (0, 1):
      np.testing.assert_allclose(xt.conv2d(Tensor(W), padding=pad).numpy(),
                                 torch.nn.functional.conv2d(tx, tw, padding=pad).numpy(), rtol=1e-4, atol=1e-5)

@needs_values
def test_writes_into_a_call_result_and_through_its_operands():
  rng = np.random.default_rng(2)
  A, B = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 3)).astype(np.float32)
  a, b = Tensor(A), Tensor(B)
  c = a @ b
  c[1] += 5                    # a lazy CALL result written in place
  want = A @ B
  want[1] += 5
  np.testing.assert_allclose(c.numpy(), want, rtol=1e-5)
  d = a @ b                    # a lazy reader of `a`, then `a` written: d keeps the values it was built from
  a[0] = 0
  np.testing.assert_allclose(d.numpy(), A @ B, rtol=1e-5)
  A[0] = 0
  np.testing.assert_allclose((a @ b).numpy(), A @ B, rtol=1e-5)
  out = Tensor.zeros(4, 3).contiguous().realize()
  out.assign(a @ b)            # an assign whose value is a CALL
  np.testing.assert_allclose(out.numpy(), A @ B, rtol=1e-5)
  out += a @ b
  np.testing.assert_allclose(out.numpy(), 2 * (A @ B), rtol=1e-5)
  # a pending write below a CALL runs once: realized with the CALL, it is done for its tensor too
  a += 1
  np.testing.assert_allclose((a @ b).numpy(), (A + 1) @ B, rtol=1e-5)
  np.testing.assert_allclose(a.numpy(), A + 1)
  np.testing.assert_allclose((a @ b).numpy(), (A + 1) @ B, rtol=1e-5)
  x = Tensor(A)
  x[1:3] *= 2
  e = (x @ b) + (x @ b).sum()
  A2 = A.copy()
  A2[1:3] *= 2
  np.testing.assert_allclose(e.numpy(), (A2 @ B) + (A2 @ B).sum(), rtol=1e-4)
  np.testing.assert_allclose(x.numpy(), A2)

@needs_values
def test_gradients_reach_through_a_call():
  import torch
  rng = np.random.default_rng(3)
  A, B, P = (rng.standard_normal(s).astype(np.float32) for s in ((4, 5), (5, 3), (4, 3)))
  a, b, p = Tensor(A), Tensor(B), Tensor(P, requires_grad=True)
  y = a @ b                    # a CALL: nothing wanted gradients when it was built
  assert y.uop.op is Ops.CALL
  (y * p).sum().backward()
  np.testing.assert_allclose(p.grad.numpy(), A @ B, rtol=1e-5)
  # and autograd differentiates a CALL's body where it meets one on the path (its inputs made to want gradients)
  g = Tensor(A)
  y2 = g @ b
  g.requires_grad_()
  (y2 * p).sum().backward()
  np.testing.assert_allclose(g.grad.numpy(), (torch.tensor(P) @ torch.tensor(B).T).numpy(), rtol=1e-5)

def test_the_schedule_cache_replays_a_call_graph():
  from teeny.engine import schedule
  a, b = Tensor.empty(32, 48).realize(), Tensor.empty(48, 16).realize()
  (a @ b).relu().realize()
  n = len(schedule._schedule_cache)
  for _ in range(3): (a @ b).relu().realize()
  c, d = Tensor.empty(32, 48).realize(), Tensor.empty(48, 16).realize()
  (c @ d).relu().realize()     # other buffers, the same structure
  assert len(schedule._schedule_cache) == n
  r = (a @ b).relu()
  u = r.uop
  r.realize()
  assert r.uop.base.op is Ops.BUFFER and r.uop.shape == (32, 16) and u.op is not Ops.BUFFER

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 6), k=st.integers(1, 7), m=st.integers(1, 6), batch=st.sampled_from([(), (2,), (1, 3)]),
       wbatch=st.booleans(), epi=st.sampled_from(["none", "relu", "sum", "T"]))
def test_matmul_calls_inline_to_the_plain_graph(monkeypatch, n, k, m, batch, wbatch, epi):
  """Over random shapes and epilogues: the CALL, inlined, is the node the plain path builds; values against numpy."""
  rng = np.random.default_rng(n * 100 + k * 10 + m)
  A = rng.standard_normal((*batch, n, k)).astype(np.float32)
  B = rng.standard_normal(((*batch, k, m) if wbatch else (k, m))).astype(np.float32)
  def f(a, b):
    r = a @ b
    return {"none": r, "relu": r.relu(), "sum": r.sum(-1), "T": r.transpose(-1, -2)}[epi]
  a, b = Tensor(A), Tensor(B)
  got = f(a, b)
  inlined = inline_calls(list(got.uop.toposort))[got.uop]
  with monkeypatch.context() as mp:
    _plain(mp)
    want = f(a, b)
  assert inlined is want.uop
  if not is_null():
    ref = A @ B
    ref = {"none": ref, "relu": np.maximum(ref, 0), "sum": ref.sum(-1), "T": np.swapaxes(ref, -1, -2)}[epi]
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-4, atol=1e-5)
