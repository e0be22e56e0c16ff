"""The scheduler: where the graph is cut into kernels, what fuses, and buffer lifetime."""
import gc, weakref
import numpy as np
import pytest
from hypothesis import event, given, settings, strategies as st
from helpers import is_null, needs_values
from teeny import Context, GlobalCounters, Tensor
from teeny.engine.realize import buffer_for, live_buffers
from teeny.uop.ops import Ops

def rand(*shape: int, seed: int = 0) -> Tensor:
  return Tensor(np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)).realize()

def kernels(*ts: Tensor) -> int:
  """Kernels in the schedule of ts (copies excluded)."""
  return sum(1 for si in Tensor.schedule(*ts) if si.kind != "copy")

def launched(*ts: Tensor) -> int:
  GlobalCounters.reset()
  Tensor.realize_all(*ts)
  return GlobalCounters.kernel_count

@pytest.fixture
def x(): return rand(4, 8, seed=1)

@pytest.fixture
def y(): return rand(4, 8, seed=2)

# ---- elementwise fusion

@pytest.mark.parametrize("length", [1, 5, 20])
def test_elementwise_chain_is_one_kernel(length):
  a = rand(64)
  t = a
  for i in range(length): t = (t * 1.01 + 0.1) if i % 2 else (t - 0.5).relu()
  assert kernels(t) == 1
  if length == 20: assert launched(t) == 1

def test_elementwise_many_inputs_one_kernel():
  ins = [rand(16, seed=i) for i in range(6)]
  t = ins[0]
  for u in ins[1:]: t = t * u + u
  assert kernels(t) == 1

@needs_values
def test_elementwise_chain_values():
  a = rand(64)
  t, ref = a, a.numpy()
  for i in range(20):
    t = (t * 1.01 + 0.1) if i % 2 else (t - 0.5).relu()
    ref = (ref * np.float32(1.01) + np.float32(0.1)) if i % 2 else np.maximum(ref - np.float32(0.5), 0)
  np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5, atol=1e-6)

def test_reduce_with_prologue_and_epilogue_is_one_kernel(x, y):
  assert kernels((x * y).sum(1).relu()) == 1
  assert launched((x * y).sum(1).relu()) == 1

def test_matmul_bias_relu_is_one_kernel():
  x, w, b = rand(4, 8), rand(8, 3, seed=3), rand(3, seed=4)
  assert kernels((x @ w + b).relu()) == 1

def test_full_reduce_is_one_kernel(x):
  assert kernels(x.sum()) == 1
  assert kernels(x.mean()) == 1

def test_reduce_of_reduce_without_expand_fuses(x):
  assert kernels(x.sum(1).max()) == 1

# ---- where the graph is cut

def test_variance_kernel_count(x):
  assert kernels(((x - x.mean()) ** 2).mean()) == 2

def test_reduce_feeding_different_shape_splits(x):
  t = (x - x.sum(1, keepdim=True).expand(4, 8)).sum()
  assert kernels(t) >= 2
  assert kernels(t) == 2

@needs_values
def test_reduce_feeding_different_shape_values(x):
  xn = x.numpy()
  got = (x - x.sum(1, keepdim=True)).sum().numpy()
  np.testing.assert_allclose(got, (xn - xn.sum(1, keepdims=True)).sum(), rtol=1e-4, atol=1e-5)

def test_softmax_kernel_count(x):
  assert kernels(x.softmax(1)) == 3

def test_log_softmax_kernel_count(x):
  assert kernels(x.log_softmax(1)) == 3

@needs_values
def test_softmax_values(x):
  xn = x.numpy()
  e = np.exp(xn - xn.max(1, keepdims=True))
  np.testing.assert_allclose(x.softmax(1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)

def test_contiguous_cuts(x):
  assert kernels((x + 1).contiguous() * 2) == 2

def test_reduce_used_by_two_outputs_is_stored_once(x):
  s = x.sum()
  assert kernels(x + s, x * s) == 3

def test_two_outputs_two_kernels(x):
  assert kernels(x + 1, x * 2) == 2

def test_schedule_order_producers_first(x):
  items = Tensor.schedule(x.softmax(1))
  outputs = [si.bufs[0] for si in items]
  for i, si in enumerate(items):
    for b in si.bufs[1:]:
      if b in outputs: assert outputs.index(b) < i, f"item {i} reads a buffer that item {outputs.index(b)} writes later"

# ---- movement ops

@pytest.mark.parametrize("move", [
  lambda t: t.reshape(8, 4), lambda t: t.permute(1, 0), lambda t: t.pad(((1, 1), (0, 2))),
  lambda t: t.shrink(((1, 3), (2, 6))), lambda t: t.flip(0), lambda t: t.reshape(4, 1, 8).expand(4, 3, 8),
  lambda t: t.reshape(8, 4).permute(1, 0).pad(((1, 1), (0, 0))).shrink(((0, 5), (1, 3))).flip(0),
], ids=["reshape", "permute", "pad", "shrink", "flip", "expand", "chain"])
def test_movement_alone_makes_no_kernel(x, move):
  assert kernels(move(x)) == 0

@pytest.mark.parametrize("move", [
  lambda t: t.permute(1, 0), lambda t: t.pad(((1, 1), (0, 2))), lambda t: t.flip(1),
  lambda t: t.shrink(((1, 3), (2, 6))),
  lambda t: t.reshape(4, 1, 8).expand(4, 3, 8), lambda t: t.reshape(2, 16).permute(1, 0).flip(0),
], ids=["permute", "pad", "flip", "shrink", "expand", "chain"])
def test_moved_input_to_elementwise_is_one_kernel(x, move):
  assert kernels(move(x) * 2 + 1) == 1

@needs_values
def test_moved_input_values(x):
  xn = x.numpy()
  got = (x.permute(1, 0).pad(((1, 0), (0, 2))).flip(1) * 2 + 1).numpy()
  np.testing.assert_allclose(got, np.flip(np.pad(xn.T, ((1, 0), (0, 2))), 1) * 2 + 1, rtol=1e-6)

def test_permuted_and_plain_inputs_fuse(x, y):
  assert kernels(x.permute(1, 0) + y.permute(1, 0).flip(0)) == 1

# ---- realized tensors

def test_realized_tensor_schedules_nothing(x):
  t = (x * 2).realize()
  assert t.schedule() == []
  assert launched(t) == 0

def test_realize_twice_runs_once(x):
  t = x * 3
  assert launched(t) == 1
  assert launched(t) == 0

def test_input_tensor_schedules_nothing():
  t = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
  assert t.schedule() == []
  assert launched(t) == 0

def test_const_schedules_nothing():
  assert Tensor(3.0).schedule() == []

def test_debug_1_prints_schedule_count(x, capsys):
  t = (x * 5 - 2).relu()
  capsys.readouterr()
  with Context(DEBUG=1): t.realize()
  out = capsys.readouterr().out
  assert "scheduled 1 kernels" in out, out

def test_debug_1_prints_count_for_softmax(x, capsys):
  t = x.softmax(1)
  capsys.readouterr()
  with Context(DEBUG=1): t.realize()
  assert "scheduled 3 kernels" in capsys.readouterr().out

def test_debug_0_prints_nothing(x, capsys):
  t = x * 7
  capsys.readouterr()
  with Context(DEBUG=0): t.realize()
  assert capsys.readouterr().out == ""

# ---- buffer lifetime

def test_buffer_freed_when_tensor_dropped(x):
  t = (x + 1).realize()
  buf_uop = t.uop.base
  assert buf_uop.op is Ops.BUFFER and "_buffer" in buf_uop.__dict__
  ref = weakref.ref(buffer_for(buf_uop))
  del t, buf_uop
  gc.collect()
  assert ref() is None, "the Buffer outlived every tensor that used it"

def test_input_buffer_freed_when_tensor_dropped():
  t = Tensor(np.ones(32, dtype=np.float32))
  ref = weakref.ref(buffer_for(t.uop.base))
  del t
  gc.collect()
  assert ref() is None

def test_intermediate_buffers_freed(x):
  gc.collect()
  before = live_buffers()  # held, so their ids stay unique
  out = x.softmax(1).realize()
  gc.collect()
  new = [b for b in live_buffers() if all(b is not o for o in before)]
  assert len(new) == 1, f"softmax's intermediate buffers are still alive: {new}"
  assert new[0] is buffer_for(out.uop.base)

def test_buffer_kept_while_view_alive(x):
  t = (x + 1).realize()
  v = t.permute(1, 0)
  ref = weakref.ref(buffer_for(t.uop.base))
  del t
  gc.collect()
  assert ref() is not None
  del v
  gc.collect()
  assert ref() is None

def test_nested_reduce_with_many_outputs_gets_its_own_kernel():
  # fused, the outer sum's one output would run all 4096x64 inner iterations on one thread (cross-entropy's mean over
  # rows); with many row sums they get their own parallel kernel. A small nested reduce stays fused.
  from teeny.engine.schedule import NESTED_REDUCE_MIN
  big, small = Tensor.rand(max(4096, NESTED_REDUCE_MIN), 64).realize(), Tensor.rand(16, 64).realize()
  assert [s.kind for s in big.sum(1).sum().schedule()].count("kernel") == 2
  assert [s.kind for s in small.sum(1).sum().schedule()].count("kernel") == 1
  if big.device.startswith("CPU"):
    np.testing.assert_allclose(big.sum(1).sum().item(), big.numpy().astype(np.float64).sum(), rtol=1e-5)

def test_costly_elementwise_read_through_an_expand_gets_its_own_kernel():
  # fused into a matmul, erf would run once per multiply-add (64x per element here); with its own buffer, once per
  # element. Cheap ops (a relu mask) and a small expand stay fused.
  import math
  np_erf = np.vectorize(math.erf)
  x, w = rand(32, 64), rand(64, 48, seed=1)
  assert kernels(x.erf() @ w) == 2
  assert kernels(x.relu() @ w) == 1
  assert kernels(x.erf() * 2 + 1) == 1
  small = rand(32, 1)
  assert kernels(small.erf() + rand(32, 2, seed=2)) == 1   # expanded only 2x: recomputing is cheaper than a store
  g = (x.exp() * 3).sin() @ w    # the same rule through a chain of transcendental ops
  assert kernels(g) == 2
  if x.device.startswith("CPU"):
    np.testing.assert_allclose((x.erf() @ w).numpy(), np_erf(x.numpy()) @ w.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g.numpy(), np.sin(np.exp(x.numpy()) * 3) @ w.numpy(), rtol=1e-4, atol=1e-4)

# ---- schedule.walk: the one walk a realize makes (toposort, the schedule cache's key, the nodes to resolve) must agree
# with the separate walks it replaced, on any graph: random op chains over a few shared inputs, several roots
_UNARY = [lambda t: t.exp2(), lambda t: t.reshape(-1).reshape(t.shape),
          lambda t: t.permute(1, 0).contiguous().permute(1, 0), lambda t: t.sum(0, keepdim=True).expand(t.shape),
          lambda t: t[1:].pad(((1, 0), (0, 0))), lambda t: t.relu()]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a.maximum(b), lambda a, b: (a < b).where(a, b)]

def _structure_reference(roots, nodes):
  """The schedule cache's key built on its own, as before walk merged it into one pass: each node by position, a
  BUFFER by its dtype, device, size and first-seen index; and the buffers in first-seen order."""
  index, parts, bufs = {}, [], []
  for i, n in enumerate(nodes):
    index[n] = i
    if n.op is Ops.BUFFER:
      parts.append((Ops.BUFFER, n.dtype, n.arg[1], n.arg[2], len(bufs)))
      bufs.append(n)
    else: parts.append((n.op, n.dtype, n.arg, tuple(index[s] for s in n.src)))
  return (tuple(parts), tuple(index[r] for r in roots)), bufs

@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 10), st.integers(0, 10)), min_size=1,
                max_size=12), st.lists(st.integers(0, 30), min_size=1, max_size=3))
def test_walk_agrees_with_toposort_and_the_structure_key(steps, root_picks):
  from teeny.engine.schedule import walk
  from teeny.tensor import _REALIZED_AS, _RESOLVE_OPS
  from teeny.uop.ops import toposort_many
  pool = [Tensor.full((3, 4), float(i + 1)).contiguous().realize() for i in range(3)]
  made = list(pool)
  for kind, op, i, j in steps:
    a, b = made[i % len(made)], made[j % len(made)]
    if kind == 2: a.realize()   # graphs built on a's lazy node before now hold a realized node (resolved by the walk)
    elif kind == 3: pool[i % 3] += 1   # a lazy write (an ASSIGN) that later graphs read
    else: made.append(_UNARY[op](a) if kind == 0 else _BINARY[op % len(_BINARY)](a, b))
  roots = list(dict.fromkeys(made[k % len(made)].uop for k in root_picks))
  w = walk(roots, _RESOLVE_OPS, _REALIZED_AS)
  nodes = list(toposort_many(roots))
  assert w.nodes == nodes
  key, bufs = _structure_reference(roots, nodes)
  assert w.key == key and w.bufs == bufs
  assert w.flagged == [n for n in nodes
                       if n.op is not Ops.BUFFER and (n.op in _RESOLVE_OPS or _REALIZED_AS in n.__dict__)]
  event(f"flagged: {bool(w.flagged)}")

def test_walk_keys_tell_shared_inputs_apart():
  """a*a and a*b have one structure but not one schedule (one buffer read twice, or two): their keys differ, and each
  computes its own values."""
  from teeny.engine.schedule import walk
  a, b = Tensor([1.0, 2.0]).realize(), Tensor([3.0, 4.0]).realize()
  assert walk([(a * a).uop]).key != walk([(a * b).uop]).key
  assert walk([(a * b).uop]).key == walk([(b * a).uop]).key
  if not is_null():
    np.testing.assert_equal((a * a).numpy(), [1.0, 4.0])
    np.testing.assert_equal((a * b).numpy(), [3.0, 8.0])

def _hand_lstm(T: int, B: int = 2, I: int = 3, H: int = 4):
  rng = np.random.default_rng(0)
  xs, W, U = (rng.standard_normal(s).astype(np.float32) for s in ((T, B, I), (I, 4 * H), (H, 4 * H)))
  w, u, x = Tensor(W, requires_grad=True), Tensor(U, requires_grad=True), Tensor(xs)
  h, c, outs = Tensor.zeros(B, H), Tensor.zeros(B, H), []
  for t in range(T):
    i, f, g, o = (x[t] @ w + h @ u).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    outs.append(h)
  return Tensor.stack(*outs).sum(), (w, u), (xs, W, U)

def test_recurrence_written_as_a_loop_does_not_inline_earlier_steps():
  """An LSTM cell state c_t (read by the step's output and by the next step) gets a buffer: inlined, every kernel
  recomputed all earlier steps, kernels growing with T (a 16-step loop compiled kernels of 3,000 nodes)."""
  def biggest(T: int) -> int:
    loss, (w, u), _ = _hand_lstm(T)
    loss.backward()
    return max(len(list(si.ast.toposort)) for si in Tensor.schedule(w.grad, u.grad, loss) if si.kind == "kernel")
  assert biggest(12) <= biggest(4) * 1.5   # (inlined, 2.7x: 847 -> 2263 nodes on the CPU)

@needs_values
def test_recurrence_written_as_a_loop_values():
  loss, _, (xs, W, U) = _hand_lstm(6)
  sig = lambda v: 1 / (1 + np.exp(-v))
  h = c = np.zeros((2, 4), np.float32)
  total = 0.0
  for t in range(6):
    i, f, g, o = np.split(xs[t] @ W + h @ U, 4, -1)
    c = sig(f) * c + sig(i) * np.tanh(g)
    h = sig(o) * np.tanh(c)
    total += h.sum()
  np.testing.assert_allclose(loss.item(), total, rtol=1e-5)
