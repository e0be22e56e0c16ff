"""In-place writes, views and autograd across realize: each case against torch (or numpy), for the classes of bug the
exact-semantics issue listed (writes through views, lazy write chains, pending reads, realize and gradients)."""
import numpy as np
import pytest
from teeny import Tensor, Device
from teeny.nn.optim import SGD, Adam

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(Device.DEFAULT.startswith("NULL"), reason="NULL holds no data")

def t_and_torch(arr):
  arr = np.asarray(arr, dtype=np.float32)
  return Tensor(arr.copy()), torch.tensor(arr.copy())

def close(a: Tensor, b, tol=1e-6):
  np.testing.assert_allclose(a.numpy(), b.detach().numpy() if hasattr(b, "detach") else b, rtol=tol, atol=tol)

# ---- 1. writes through views reach the storage, at the view's addresses

@pytest.mark.parametrize("realized", [True, False])
def test_setitem_int_plus_equals(realized):
  a, ta = t_and_torch([0., 1, 2])
  if realized: a.realize()
  a[1] += 5
  ta[1] += 5
  close(a, ta)

VIEWS = [  # (teeny view, the same view in numpy: basic slicing, negative steps too, transpose and reshape are views)
  (lambda b: b[2], lambda b: b[2]), (lambda b: b[:, 1:3], lambda b: b[:, 1:3]), (lambda b: b.T[0], lambda b: b.T[0]),
  (lambda b: b[::2, ::-1], lambda b: b[::2, ::-1]), (lambda b: b[1:, None, 1:3], lambda b: b[1:, None, 1:3]),
  (lambda b: b.reshape(12)[3:9], lambda b: b.reshape(12)[3:9]),
  (lambda b: b.permute(1, 0)[1:, :2], lambda b: b.transpose(1, 0)[1:, :2]),
  (lambda b: b[..., -1], lambda b: b[..., -1]), (lambda b: b[::-1][0], lambda b: np.flip(b, 0)[0]),
  (lambda b: b[1:3][0][1:], lambda b: b[1:3][0][1:]), (lambda b: b.detach()[0], lambda b: b[0]),
  (lambda b: b[::-2, 3:0:-2], lambda b: b[::-2, 3:0:-2]),
  (lambda b: b.reshape(2, 6)[:, ::4], lambda b: b.reshape(2, 6)[:, ::4])]

@pytest.mark.parametrize("view", range(len(VIEWS)))
@pytest.mark.parametrize("op", ["assign", "iadd", "setitem", "imul"])
def test_write_through_view(view, op):
  arr = np.arange(12, dtype=np.float32).reshape(3, 4)
  b, ref = Tensor(arr.copy()).contiguous().realize(), arr.copy()
  v, rv = VIEWS[view][0](b), VIEWS[view][1](ref)
  if op == "assign": v.assign(v * 10 + 1); rv[...] = rv * 10 + 1
  elif op == "iadd": v += 10; rv += 10
  elif op == "imul": v *= -2; rv *= -2
  else: v[...] = -5; rv[...] = -5
  np.testing.assert_equal(b.numpy(), ref)
  np.testing.assert_equal(v.numpy(), rv)

def test_write_through_view_of_lazy_tensor():
  x = Tensor.arange(12).float().reshape(3, 4) * 2
  tx = torch.arange(12).float().reshape(3, 4) * 2
  v, tv = x[1:, 2:], tx[1:, 2:]
  v += 100; tv += 100
  x[0, 0] = -1; tx[0, 0] = -1
  close(x, tx)
  close(v, tv)

def test_views_see_later_writes_computations_do_not():
  b = Tensor(np.zeros(4, np.float32)).realize()
  view, snap = b[1:3], b[1:3] * 1
  b[1] = 7
  np.testing.assert_equal(view.numpy(), [7, 0])
  np.testing.assert_equal(snap.numpy(), [0, 0])

def test_write_through_expand_is_refused():
  b = Tensor([1., 2., 3.]).realize()
  with pytest.raises(RuntimeError, match="expanded"): b.reshape(1, 3).expand(2, 3).assign(Tensor.ones(2, 3))

def test_overlapping_write_reads_old_values():
  a, ta = t_and_torch(np.arange(6))
  a.realize()
  a[1:] = a[:-1].clone(); ta[1:] = ta[:-1].clone()
  close(a, ta)
  a[:-1] = a[1:]  # no clone: teeny computes the value before it writes
  np.testing.assert_equal(a.numpy(), [0, 1, 2, 3, 4, 4])

# ---- 2. a chain of lazy writes applies each write exactly once

@pytest.mark.parametrize("realize_every", [0, 1, 2])
def test_assign_chain(realize_every):
  a = Tensor(np.zeros(4, np.float32))
  ref = np.zeros(4, np.float32)
  for i in range(5):
    a.assign(a * 0.9 + 1)
    ref = ref * 0.9 + 1
    if realize_every and i % realize_every == 0: a.realize()
  np.testing.assert_allclose(a.numpy(), ref, rtol=1e-6)

def test_batchnorm_running_stats_lazy():
  from teeny import nn
  bn = nn.BatchNorm(3)
  x = np.random.default_rng(0).standard_normal((8, 3, 2, 2)).astype(np.float32)
  tbn = torch.nn.BatchNorm2d(3)
  with Tensor.train():
    for _ in range(3): bn(Tensor(x))
  for _ in range(3): tbn(torch.tensor(x))
  np.testing.assert_allclose(bn.running_mean.numpy(), tbn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5, atol=1e-6)

# ---- 3. a pending read sees the values from before a later write

def test_pending_read_before_write():
  a = Tensor([1., 2.]).contiguous().realize()
  b = Tensor([0., 0.]).contiguous().realize()
  b.assign(a + 1)
  a.assign(a * 0).realize()
  np.testing.assert_equal(b.numpy(), [2, 3])
  np.testing.assert_equal(a.numpy(), [0, 0])

def test_snapshot_then_optimizer_step():
  w = Tensor([1., 2., 3.], requires_grad=True).realize()
  target = Tensor.zeros(3).contiguous().realize()
  target.assign(w.detach())
  opt = SGD([w], lr=0.5)
  (w * w).sum().backward()
  opt.step()
  np.testing.assert_allclose(target.numpy(), [1, 2, 3])
  np.testing.assert_allclose(w.numpy(), [0, 0, 0])

@pytest.mark.parametrize("order", ["c_first", "a_first", "together"])
def test_realize_order_does_not_matter(order):
  a = Tensor([1., 2.]).realize()
  c = a * 3          # reads a before the write
  a += 1
  d = a * 3          # reads a after it
  if order == "c_first": c.realize(); d.realize()
  elif order == "a_first": a.realize(); d.realize()
  else: Tensor.realize(d, c, a)
  np.testing.assert_equal(c.numpy(), [3, 6])
  np.testing.assert_equal(d.numpy(), [6, 9])
  np.testing.assert_equal((c + d).numpy(), [9, 15])

def _chain_of_writes(T, ones, with_view):
  """Two equal reads of a pending write, then another write that reads the memory through a flip; a view taken first."""
  b = ones((2, 2))
  v = b[:, :] if with_view else None
  b[:, :] = 0.0
  b[0, :] = 2.0
  r0 = b * 2 + 1
  r1 = b * 2 + 1     # the same graph as r0: one is realized, the other still reads the version they were built from
  b[:, :0] = 5.0     # an empty write
  b += b.flip(0)
  return b, v, r0, r1

@pytest.mark.parametrize("with_view", [False, True])
@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_pending_write_over_a_realized_write(with_view, order):
  # found by test_properties with another seed: a realize that ran the first write left the second one's graph
  # rebuilt over the new version without its origin, so the readers of the old version were not realized first
  ts = _chain_of_writes(Tensor, lambda s: Tensor(np.ones(s, np.float32)).realize(), with_view)
  tt = _chain_of_writes(torch, lambda s: torch.ones(s), with_view)
  ts[2].realize()
  idx = [i for i in (0, 1, 3) if ts[i] is not None]
  for k in order:
    if k < len(idx): np.testing.assert_allclose(ts[idx[k]].numpy(), tt[idx[k]].numpy(), err_msg=f"tensor {idx[k]}")
  np.testing.assert_allclose(ts[2].numpy(), tt[2].numpy())

@pytest.mark.parametrize("first", [0, 1, 2, 3])
def test_write_resolved_by_one_realize_is_done_for_other_graphs(first):
  # b's realize rebuilt its pending writes over the version r0's realize made and ran the rebuilt ones; r1, built
  # from the original writes, must read their result, not run them a second time
  def build(T, ones):
    b = ones((1, 2))
    b += b.flip(1)
    r0 = b * 2 + 1
    b[:, :] = 0.0
    b[:, 1] = 3.0
    return b, r0
  b, r0 = build(Tensor, lambda s: Tensor(np.arange(1, 3, dtype=np.float32).reshape(s)).realize())
  tb, tr0 = build(torch, lambda s: torch.arange(1, 3, dtype=torch.float32).reshape(s))
  r0.realize()
  v1, r1 = b.permute(1, 0), b * 2 + 1
  tv1, tr1 = tb.permute(1, 0), tb * 2 + 1
  ts, tt = [b, v1, r0, r1], [tb, tv1, tr0, tr1]
  for i in [first] + [i for i in range(4) if i != first]:
    np.testing.assert_allclose(ts[i].numpy(), tt[i].numpy(), err_msg=f"tensor {i}")

@pytest.mark.parametrize("first", [0, 1, 2, 3])
def test_reader_of_a_rebuilt_pending_write(first):
  # r0's realize ran the first write; b's realize rebuilds the later ones over its version: r1, a lazy reader of the
  # third (original) write, must still be found and realized before the fourth overwrites what it reads
  def build(T, b):
    b += b.flip(1)
    r0 = b * 2 + 1
    b += b.flip(1)
    b[:, 0] = 0.0
    r1 = b * 2 + 1
    v = b.permute(1, 0)
    b += b.flip(1)
    return [b, r0, r1, v]
  ts = build(Tensor, Tensor(np.array([[1.0, 2.0]], np.float32)).realize())
  tt = build(torch, torch.tensor([[1.0, 2.0]]))
  for i in [first] + [i for i in range(4) if i != first]:
    np.testing.assert_allclose(ts[i].numpy(), tt[i].numpy(), err_msg=f"tensor {i}")

def test_a_stale_schedule_refuses_the_versions_it_names():
  """A schedule built before a write names the versions it read; run after the write (their memory overwritten), its
  kernels refuse them with the error that names the fix, for a plain kernel and for an in-place write's (whose output
  slot is read too), instead of computing from the new contents."""
  from teeny.engine.realize import run_schedule
  a = Tensor([1., 2., 3.]).realize()
  r = a * 2
  stale = r.schedule()
  a.assign(Tensor([5., 6., 7.])).realize()
  np.testing.assert_equal(r.numpy(), [2., 4., 6.])   # (the lazy reader was realized before the write)
  with pytest.raises(RuntimeError, match="before it was modified in place"): run_schedule(stale)
  b = Tensor([1., 2., 3.]).realize()
  stale = b.assign(b + 1).schedule()
  b.assign(Tensor([5., 6., 7.])).realize()
  with pytest.raises(RuntimeError, match="before it was modified in place"): run_schedule(stale)
  np.testing.assert_equal(b.numpy(), [5., 6., 7.])

def test_one_kernel_reads_old_and_new_version():
  x = Tensor([1., 2., 3.]).realize()
  old = x + 0
  x += 10
  np.testing.assert_equal((old + x).numpy(), [12, 14, 16])

# ---- 4. realize never cuts the gradient graph

def test_grad_across_realize():
  rng = np.random.default_rng(1)
  X, W1, W2 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 5), (5, 2)))
  w1, w2 = Tensor(W1, requires_grad=True), Tensor(W2, requires_grad=True)
  h = (Tensor(X) @ w1).relu().realize()
  h = (h @ w2).realize()
  h.sum().backward()
  tw1, tw2 = torch.tensor(W1, requires_grad=True), torch.tensor(W2, requires_grad=True)
  ((torch.tensor(X) @ tw1).relu() @ tw2).sum().backward()
  close(w1.grad, tw1.grad, 1e-5)
  close(w2.grad, tw2.grad, 1e-5)

# ---- 5. manual SGD on a leaf keeps training

@pytest.mark.parametrize("no_grad", [False, True])
def test_manual_sgd_loop(no_grad):
  w = Tensor([1., 2., 3.], requires_grad=True)
  tw = torch.tensor([1., 2., 3.], requires_grad=True)
  for _ in range(4):
    (w * w).sum().backward()
    if no_grad:
      with Tensor.no_grad(): w -= 0.1 * w.grad
    else: w -= 0.1 * w.grad
    w.grad = None
    (tw * tw).sum().backward()
    with torch.no_grad(): tw -= 0.1 * tw.grad
    tw.grad = None
  close(w, tw)
  assert w.requires_grad

def test_optimizer_realized_each_step_or_not():
  ws = []
  for realize in (True, False):
    w = Tensor([[1., -2.], [3., 0.5]], requires_grad=True)
    opt = Adam([w], lr=0.1)
    for _ in range(3):
      opt.zero_grad()
      ((w * w).sum() + w.sum()).backward()
      opt.step()
      if realize: w.realize()
    ws.append(w.numpy())
  tw = torch.tensor([[1., -2.], [3., 0.5]], requires_grad=True)
  topt = torch.optim.Adam([tw], lr=0.1)
  for _ in range(3):
    topt.zero_grad()
    ((tw * tw).sum() + tw.sum()).backward()
    topt.step()
  for w in ws: np.testing.assert_allclose(w, tw.detach().numpy(), rtol=1e-4, atol=1e-5)

# ---- 6. in-place ops on non-leaf tensors give torch's gradients

CASES = [
  ("iadd", lambda x, T: x.__iadd__(1)),
  ("setitem0", lambda x, T: x.__setitem__(0, 0.0)),
  ("setitem_slice", lambda x, T: x.__setitem__(slice(1, None), 5.0)),
  ("view_imul", lambda x, T: x[1:].__imul__(3)),
  ("setitem_tensor", lambda x, T: x.__setitem__(T([0, 2]), 7.0)),
]

@pytest.mark.parametrize("realize", [False, True])
@pytest.mark.parametrize("name,op", CASES, ids=[c[0] for c in CASES])
def test_nonleaf_inplace_grad(name, op, realize):
  w = Tensor([1., 2., 3.], requires_grad=True)
  tw = torch.tensor([1., 2., 3.], requires_grad=True)
  x, tx = w * 2, tw * 2
  if realize: x.realize()
  op(x, lambda v: Tensor(v)); op(tx, lambda v: torch.tensor(v))
  (x * x).sum().backward()
  (tx * tx).sum().backward()
  close(x, tx)
  close(w.grad, tw.grad)

def test_setitem_value_gets_gradient():
  w, v = Tensor([1., 2., 3.], requires_grad=True), Tensor([1., 1.], requires_grad=True)
  tw, tv = torch.tensor([1., 2., 3.], requires_grad=True), torch.tensor([1., 1.], requires_grad=True)
  x, tx = w * 2, tw * 2
  x[Tensor([0, 2])] = v * 3
  tx[torch.tensor([0, 2])] = tv * 3
  (x * x).sum().backward()
  (tx * tx).sum().backward()
  close(w.grad, tw.grad)
  close(v.grad, tv.grad)

# ---- 7. setitem refuses what torch refuses; duplicate indices store one value

def test_setitem_shape_mismatch():
  a = Tensor.zeros(10, 10)
  with pytest.raises(RuntimeError, match="shape mismatch"): a[:] = Tensor([1., 2, 3])
  with pytest.raises(RuntimeError, match="shape mismatch"): a[Tensor([0, 1])] = Tensor([1., 2, 3])

def test_setitem_duplicate_indices_store_one_value():
  a = Tensor.zeros(3, 3).contiguous().realize()
  a[[0, 0], [1, 1]] = Tensor([5., 6])
  assert a.numpy()[0, 1] in (5., 6.)
  assert a.numpy().sum() in (5., 6.)

def test_setitem_advanced_matches_numpy():
  rng = np.random.default_rng(3)
  arr = rng.standard_normal((4, 5, 3)).astype(np.float32)
  for idx in [(np.array([3, 0]),), (slice(None), np.array([4, 1, 2])),
              (np.array([1, 2]), slice(1, 3), np.array([0, 2])), (np.array([[0], [3]]), np.array([[1, 2]]))]:
    a, ref = Tensor(arr.copy()), arr.copy()
    t_idx = tuple(Tensor(i) if isinstance(i, np.ndarray) else i for i in idx)
    val = rng.standard_normal(ref[idx].shape).astype(np.float32)
    a[t_idx] = Tensor(val)
    ref[idx] = val
    np.testing.assert_allclose(a.numpy(), ref)

@pytest.mark.parametrize("shape,idx", [
  ((1, 1, 3, 1), (slice(None), slice(None), [0, 1, 2], Ellipsis, [0, 0, 0])),  # an empty Ellipsis between index arrays
  ((3, 2, 1, 3), (1, slice(None), slice(None), [1, 2])),                        # an int next to an index array
  ((1, 0, 2, 1), (0, slice(None), [0, 0, 0], [0, 0, 0])),
  ((2, 3, 4), ([1, 0], None, [2, 1])),
])
def test_index_follows_torch_where_numpy_differs(shape, idx):
  """torch applies int indices first and does not count an empty Ellipsis as a separator; numpy does both. teeny follows
  torch, for reads and for `v[idx] += value`."""
  arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  a, ta = t_and_torch(arr)
  t_idx = tuple(Tensor(np.array(i, dtype=np.int32)) if isinstance(i, list) else i for i in idx)
  torch_idx = tuple(torch.tensor(i) if isinstance(i, list) else i for i in idx)
  assert a[t_idx].shape == tuple(ta[torch_idx].shape)
  close(a[t_idx], ta[torch_idx])
  val = np.arange(int(np.prod(ta[torch_idx].shape)), dtype=np.float32).reshape(ta[torch_idx].shape) + 100
  a[t_idx] += Tensor(val)
  ta[torch_idx] += torch.tensor(val)
  close(a, ta)

# ---- read after overwrite is an error, not a wrong number

def test_stale_read_raises_instead_of_wrong_answer():
  w = Tensor([1., 2.], requires_grad=True).realize()
  loss = (w * w).sum()
  with Tensor.no_grad(): w.assign(w * 0).realize()
  loss.numpy()   # loss was realized before the write ran: it keeps the old values
  assert loss.item() == 5.0

def test_long_chain_of_writes_stays_linear():
  a = Tensor.zeros(8).contiguous().realize()
  for i in range(300): a[i % 8] += 1
  np.testing.assert_equal(a.numpy(), np.full(8, 300 // 8) + (np.arange(8) < 300 % 8))

def test_grads_read_after_step_and_two_optimizers():
  rng = np.random.default_rng(5)
  W1, W2, X = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 2), (5, 3)))
  w1, w2 = Tensor(W1, requires_grad=True), Tensor(W2, requires_grad=True)
  tw1, tw2 = torch.tensor(W1, requires_grad=True), torch.tensor(W2, requires_grad=True)
  opt1, opt2 = SGD([w1], lr=0.1), SGD([w2], lr=0.1)
  topt1, topt2 = torch.optim.SGD([tw1], lr=0.1), torch.optim.SGD([tw2], lr=0.1)
  loss = ((Tensor(X) @ w1).tanh() @ w2).square().mean()
  loss.item()
  loss.backward()
  opt2.step()            # writes w2, which w1's lazy gradient still reads
  opt1.step()
  tloss = ((torch.tensor(X) @ tw1).tanh() @ tw2).square().mean()
  tloss.backward()
  topt2.step(); topt1.step()
  close(w1.grad, tw1.grad, 1e-5)
  close(w2.grad, tw2.grad, 1e-5)
  close(w1, tw1, 1e-5)
  close(w2, tw2, 1e-5)

def test_int_cast_of_param_read_after_step():
  w = Tensor([-1., 2., -3.], requires_grad=True)
  mask = (w > 0).int()
  (w * w).sum().backward()
  SGD([w], lr=1.0).step()
  np.testing.assert_equal(mask.numpy(), [0, 1, 0])

@pytest.mark.parametrize("case", ["t[1:] = t[:-1]", "t[:-1] = t[1:]", "t[::-1] = t", "t.assign(t.flip(0))",
                                  "t[:, 1:] = t[:, :-1]", "t[1:3] = t[0:2].permute(0, 1)", "t[[2, 0]] = t[[0, 1]]"])
@pytest.mark.parametrize("realized", [True, False])
def test_value_is_a_view_of_the_memory_it_overwrites(case, realized):
  """numpy semantics: the right side is read whole before anything is written. A value that is a plain view of the
  target's own memory (no arithmetic on it) was read in place by the write kernel, which then read rows it had
  already overwritten: t[1:] = t[:-1] gave every row the first one."""
  a = np.arange(20, dtype=np.float32).reshape(4, 5)
  t = Tensor(a.copy())
  if realized: t.realize()
  n = a.copy()
  exec(case, {}, {"t": t})
  exec(case.replace(".flip(0)", "[::-1].copy()").replace(".permute(0, 1)", "").replace("t.assign(", "t[...] = ("),
       {}, {"t": n})
  np.testing.assert_array_equal(t.numpy(), n)

# ---- t[mask] = value (torch's masked assignment)

from hypothesis import given, settings, strategies as st   # noqa: E402

@settings(max_examples=40, deadline=None)
@given(st.data())
def test_setitem_boolean_mask_vs_torch(data):
  """A mask over the leading mask_ndim dims (bool tensor, numpy array or list), on the base or on a view, with a scalar
  or a value broadcast to each selected element; values and gradients against torch."""
  draw = data.draw
  shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
  rng = np.random.default_rng(draw(st.integers(0, 2**16)))
  a = rng.standard_normal(shape).astype(np.float32)
  k = draw(st.integers(1, len(shape)))
  mask = rng.random(shape[:k]) < 0.5
  rest = shape[k:]
  kind = draw(st.sampled_from(["scalar", "rest", "1rest", "bcast", "per_element", "iadd"]))
  if kind == "scalar": val_np = np.float32(draw(st.integers(-3, 3)))
  else:
    vshape = rest if kind == "rest" else (1, *rest) if kind == "1rest" else tuple(1 for _ in rest)
    val_np = rng.standard_normal(vshape).astype(np.float32)
  form = draw(st.sampled_from(["tensor", "numpy", "list"]))
  x, xt = Tensor(a.copy(), requires_grad=True), torch.tensor(a.copy(), requires_grad=True)
  y, yt = x * 2, xt * 2
  m = Tensor(mask) if form == "tensor" else mask if form == "numpy" else mask.tolist()
  if kind == "per_element":   # t[mask] = t[mask] * 3: one value per selected element (reads the mask)
    y[m] = y[m] * 3
    yt[torch.tensor(mask)] = yt[torch.tensor(mask)] * 3
  elif kind == "iadd":
    y[m] += 1
    yt[torch.tensor(mask)] += 1
  elif np.ndim(val_np) == 0:
    y[m] = float(val_np)
    yt[torch.tensor(mask)] = float(val_np)
  else:
    y[m] = Tensor(val_np)
    yt[torch.tensor(mask)] = torch.tensor(val_np)
  close(y, yt)
  (y * y).sum().backward()
  (yt * yt).sum().backward()
  close(x.grad, xt.grad, 1e-5)

def test_setitem_boolean_mask_through_a_view_and_errors():
  a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
  t, tt = t_and_torch(a)
  v, vt = t[1:], tt[1:]
  v[v < 0] = 9.0
  vt[vt < 0] = 9.0
  close(t, tt)
  with pytest.raises(IndexError, match="shape of the mask"): t[Tensor(np.ones(4, dtype=bool))] = 1.0
  with pytest.raises(RuntimeError, match="cannot be broadcast"): t[t > 0] = Tensor(np.ones(3, np.float32))
  with pytest.raises(RuntimeError, match="cannot be broadcast"): t[Tensor(np.ones(3, dtype=bool))] = Tensor(np.ones(3))
  with pytest.raises(NotImplementedError, match="boolean mask is supported alone"): t[t > 0, 1]
  # reading: the selected elements (or rows, for a mask of fewer dims) in order, as torch
  close(t[t > 2], tt[tt > 2])
  close(t[(t > 2)[:, 0]], tt[(tt > 2)[:, 0]])
  close(t[t > 100], tt[tt > 100])
