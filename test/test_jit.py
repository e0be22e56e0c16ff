"""TinyJit: capture on the second call, replay after; the footguns each raise or behave as documented
(engine/jit.py)."""
import numpy as np
import pytest
from teeny import Context, Device, GlobalCounters, Tensor, TinyJit, nn
from teeny.nn.state import get_parameters
from helpers import is_null, needs_values

R = np.random.default_rng(0)
def rnd(*shape): return R.standard_normal(shape).astype(np.float32)

class Counted:
  """A function that counts how often its body runs (a replay does not run it)."""
  def __init__(self, fn): self.fn, self.n = fn, 0
  def __call__(self, *a, **k):
    self.n += 1
    return self.fn(*a, **k)

def test_body_runs_twice_then_replays():
  body = Counted(lambda a, b: (a + b).relu() * 2)
  f = TinyJit(body)
  xs = [(rnd(10), rnd(10)) for _ in range(5)]
  outs = [f(Tensor(x), Tensor(y)) for x, y in xs]
  assert body.n == 2 and len(f.captures) == 1 and f.cnt == 5
  if is_null(): return
  for (x, y), o in zip(xs, outs): np.testing.assert_allclose(o.numpy(), np.maximum(x + y, 0) * 2, rtol=1e-6)

def test_replay_launches_the_captured_kernels():
  f = TinyJit(lambda a: ((a * 2).sum(0) + 1, a.exp().max()))
  for _ in range(2): f(Tensor(rnd(8, 4)))
  cap = next(iter(f.captures.values()))
  GlobalCounters.reset()
  f(Tensor(rnd(8, 4)))
  assert GlobalCounters.kernel_count == cap.n_kernels > 0

@needs_values
def test_containers_and_kwargs():
  f = TinyJit(lambda xs, d, scale=None: {"sum": xs[0] + xs[1] * d["w"], "scaled": (xs[0] * scale,)})
  for _ in range(4):
    a, b, w, s = rnd(3, 2), rnd(3, 2), rnd(3, 2), rnd(1)
    out = f([Tensor(a), Tensor(b)], {"w": Tensor(w)}, scale=Tensor(s))
    assert set(out) == {"sum", "scaled"} and isinstance(out["scaled"], tuple)
    np.testing.assert_allclose(out["sum"].numpy(), a + b * w, rtol=1e-6)
    np.testing.assert_allclose(out["scaled"][0].numpy(), a * s, rtol=1e-6)
  assert len(f.captures) == 1

@needs_values
def test_returned_tensor_is_fresh_each_call():
  """As in torch: a loss returned by one call keeps its value after the next calls."""
  f = TinyJit(lambda x: (x * x).sum())
  xs = [rnd(16) for _ in range(6)]
  outs = [f(Tensor(x)) for x in xs]
  for x, o in zip(xs, outs): np.testing.assert_allclose(o.item(), (x * x).sum(), rtol=1e-5)

@needs_values
def test_new_shape_or_dtype_captures_again():
  body = Counted(lambda x: x * 3 + 1)
  f = TinyJit(body)
  for shape in [(4,), (4,), (4,), (5,), (5,), (5,), (4,)]:
    x = rnd(*shape)
    np.testing.assert_allclose(f(Tensor(x)).numpy(), x * 3 + 1, rtol=1e-6)
  assert len(f.captures) == 2 and body.n == 4
  xi = np.arange(4, dtype=np.int32)
  for _ in range(3): np.testing.assert_array_equal(f(Tensor(xi)).numpy(), xi * 3 + 1)
  assert len(f.captures) == 3

@needs_values
def test_view_inputs_are_part_of_the_key():
  data = rnd(4, 6)
  t = Tensor(data)
  f = TinyJit(lambda x: x + 1)
  for i in [0, 1, 2, 3, 0, 1, 2, 3]: np.testing.assert_allclose(f(t[i]).numpy(), data[i] + 1, rtol=1e-6)

def test_changed_python_argument_raises():
  f = TinyJit(lambda x, lr: x * lr)
  x = Tensor(rnd(4))
  for _ in range(3): f(x, 0.5)
  with pytest.raises(ValueError, match=r"args\[1\].*0\.25.*0\.5"): f(x, 0.25)
  g = TinyJit(lambda x, opts: x * opts["k"])
  for _ in range(3): g(x, {"k": 2})
  with pytest.raises(ValueError, match=r"args\[1\]\['k'\]"): g(x, {"k": 3})

def test_changed_python_output_raises_at_capture():
  n = iter(range(100))
  f = TinyJit(lambda x: (x + 1, next(n)))
  f(Tensor(rnd(3)))
  with pytest.raises(RuntimeError, match="return value"): f(Tensor(rnd(3)))

@needs_values
def test_constant_python_output_is_returned():
  f = TinyJit(lambda x: (x + 1, "tag", 3))
  for _ in range(4):
    x = rnd(3)
    out, tag, k = f(Tensor(x))
    assert (tag, k) == ("tag", 3)
    np.testing.assert_allclose(out.numpy(), x + 1, rtol=1e-6)

def test_host_data_that_changes_raises():
  f = TinyJit(lambda x, arr: x + Tensor(arr))
  x = Tensor(rnd(3))
  f(x, rnd(3))
  with pytest.raises(RuntimeError, match="host data"): f(x, rnd(3))

@needs_values
def test_constant_host_data_is_captured():
  f = TinyJit(lambda x: x + Tensor([1.0, 2.0, 3.0]))
  for _ in range(5):
    x = rnd(3)
    np.testing.assert_allclose(f(Tensor(x)).numpy(), x + [1, 2, 3], rtol=1e-6)

@needs_values
def test_host_data_written_in_step_starts_fresh_each_replay():
  def step(x):
    buf = Tensor(np.zeros(4, np.float32))
    buf[1:3] = x
    return buf * 1
  f = TinyJit(step)
  for _ in range(5):
    x = rnd(2)
    np.testing.assert_allclose(f(Tensor(x)).numpy(), [0, x[0], x[1], 0], rtol=1e-6)

@needs_values
def test_random_numbers_advance_like_eager():
  def step(x): return x + Tensor.rand(6) + Tensor.randn(2, 3).reshape(6) * 0 + Tensor.rand(3).sum()
  Tensor.manual_seed(7)
  eager = [step(Tensor(np.ones(6, np.float32))).numpy() for _ in range(5)]
  ctr_eager = Tensor._rng_counter
  Tensor.manual_seed(7)
  f = TinyJit(step)
  jitted = [f(Tensor(np.ones(6, np.float32))).numpy() for _ in range(5)]
  assert Tensor._rng_counter == ctr_eager
  for a, b in zip(eager, jitted): np.testing.assert_allclose(a, b, rtol=1e-6)
  assert not np.allclose(jitted[3], jitted[4])

@needs_values
def test_input_passed_twice():
  f = TinyJit(lambda a, b: a * 2 + b)
  for _ in range(3):
    x = rnd(5)
    t = Tensor(x)
    np.testing.assert_allclose(f(t, t).numpy(), 3 * x, rtol=1e-6)
  for _ in range(3):
    x, y = rnd(5), rnd(5)
    np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), 2 * x + y, rtol=1e-6)
  assert len(f.captures) == 2

@needs_values
def test_output_aliasing_input():
  def step(x, y):
    x += y
    return x, x.reshape(2, 2), y
  f = TinyJit(step)
  x = Tensor(np.zeros(4, np.float32))
  ref = np.zeros(4, np.float32)
  for i in range(5):
    yv = rnd(4)
    y = Tensor(yv)
    a, b, c = f(x, y)
    ref = ref + yv
    assert a is x and c is y
    np.testing.assert_allclose(x.numpy(), ref, rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), ref.reshape(2, 2), rtol=1e-5)
  x2 = Tensor(np.ones(4, np.float32))  # another tensor of the same shape: written, not x
  f(x2, Tensor(np.ones(4, np.float32)))
  np.testing.assert_allclose(x2.numpy(), 2)
  np.testing.assert_allclose(x.numpy(), ref, rtol=1e-5)

def test_reading_values_inside_raises_during_capture():
  f = TinyJit(lambda x: x * float((x.sum()).item()))
  if is_null(): pytest.skip("the warm-up call reads values")
  f(Tensor(rnd(3)))
  with pytest.raises(RuntimeError, match="TinyJit.*frozen"): f(Tensor(rnd(3)))

@needs_values
def test_state_written_in_place():
  w = Tensor(np.ones(4, np.float32))
  def step(x):
    w.assign(w - x * 0.5)
    return (w * x).sum()
  f = TinyJit(step)
  ref = np.ones(4, np.float32)
  for i in range(6):
    xv = rnd(4)
    before = w * 1                   # a lazy read before the replay keeps the values it read
    out = f(Tensor(xv))
    ref_before, ref = ref, ref - xv * 0.5
    np.testing.assert_allclose(out.item(), (ref * xv).sum(), rtol=1e-5)
    np.testing.assert_allclose(before.numpy(), ref_before, rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-6)
    np.testing.assert_allclose((w + 1).numpy(), ref + 1, rtol=1e-6)   # later lazy reads see the new version
  w.assign(Tensor(np.full(4, 10.0, np.float32)))   # a pending write from outside is seen by the next replay
  xv = rnd(4)
  f(Tensor(xv))
  np.testing.assert_allclose(w.numpy(), 10 - xv * 0.5, rtol=1e-6)

@needs_values
def test_replaced_state_raises():
  w = Tensor(np.ones(3, np.float32))
  def step(x):
    w.assign(w + x)
    return w * 1
  f = TinyJit(step)
  for _ in range(3): f(Tensor(rnd(3)))
  w.replace(Tensor(np.zeros(3, np.float32)))   # new memory, not a write: the capture writes the old one
  with pytest.raises(RuntimeError, match="other memory"): f(Tensor(rnd(3)))

@needs_values
def test_tensor_left_from_capture_raises_after_replay():
  kept = []
  def step(x):
    h = (x * 2).realize()
    kept.append(h)
    return h + 1
  f = TinyJit(step)
  for _ in range(3): f(Tensor(rnd(3)))
  with pytest.raises(RuntimeError, match="TinyJit capture"): kept[-1].numpy()

def test_jit_off_runs_the_body():
  body = Counted(lambda x: x + 1)
  f = TinyJit(body)
  with Context(JIT=0):
    for _ in range(4): f(Tensor(rnd(2)))
  assert body.n == 4 and not f.captures

@needs_values
def test_method():
  class Model:
    def __init__(self): self.w = Tensor(rnd(3, 3))
    @TinyJit
    def __call__(self, x): return x @ self.w
  m = Model()
  for _ in range(4):
    x = rnd(2, 3)
    np.testing.assert_allclose(m(Tensor(x)).numpy(), x @ m.w.numpy(), rtol=1e-5, atol=1e-6)
  with pytest.raises(ValueError, match="Model"): Model()(Tensor(rnd(2, 3)))

def test_debug_says_capture_and_replay(capsys):
  f = TinyJit(lambda x: x * 2 + 1)
  with Context(DEBUG=1):
    for _ in range(3): f(Tensor(rnd(4)))
  out = capsys.readouterr().out
  assert "TinyJit captured" in out and "TinyJit replay of" in out and "1 kernels" in out

def _mlp_losses(jit: bool, steps: int = 20, opt_cls=nn.optim.Adam, **kw):
  Tensor.manual_seed(3)
  l1, l2 = nn.Linear(64, 32), nn.Linear(32, 10)
  opt = opt_cls(get_parameters([l1, l2]), lr=1e-2, **kw)
  rng = np.random.default_rng(1)
  def step(x, y):
    with Tensor.train():
      opt.zero_grad()
      loss = l2(l1(x).relu().dropout(0.1)).cross_entropy(y)
      loss.backward()
      opt.step()
      return loss
  if jit: step = TinyJit(step)
  data = [(rng.standard_normal((16, 64)).astype(np.float32), rng.integers(0, 10, 16).astype(np.int32))
          for _ in range(2)]
  losses = [step(Tensor(data[i % 2][0]), Tensor(data[i % 2][1])) for i in range(steps)]
  return [x.item() for x in losses], [p.numpy() for p in get_parameters([l1, l2])]

@needs_values
@pytest.mark.parametrize("opt", ["adam", "sgd"])
def test_training_matches_eager(opt):
  kw = dict(opt_cls=nn.optim.Adam) if opt == "adam" else dict(opt_cls=nn.optim.SGD, momentum=0.9)
  a, pa = _mlp_losses(False, **kw)
  b, pb = _mlp_losses(True, **kw)
  np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
  for x, y in zip(pa, pb): np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
  assert a[0] > a[-1]

def _cuda() -> bool:
  try: return Device["CUDA"] is not None
  except Exception: return False

@pytest.mark.skipif(is_null() or not _cuda(), reason="needs a CUDA device")
def test_cuda_graph_replay():
  from teeny.runtime.ops_cuda import CUDAGraph
  w = Tensor(np.ones(8, np.float32), device="CUDA")
  def step(x):
    w.assign(w * 0.5 + x)
    return (w * x).sum(), x.exp()
  f = TinyJit(step)
  ref = np.ones(8, np.float32)
  for _ in range(6):
    xv = rnd(8)
    s, e = f(Tensor(xv, device="CUDA"))
    ref = ref * 0.5 + xv
    np.testing.assert_allclose(s.item(), (ref * xv).sum(), rtol=1e-4)
    np.testing.assert_allclose(e.numpy(), np.exp(xv), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-5)
  assert isinstance(next(iter(f.captures.values())).graph, CUDAGraph)

@needs_values
def test_batchnorm_running_stats_follow_eager():
  def run(jit: bool):
    Tensor.manual_seed(5)
    conv, bn = nn.Conv2d(2, 4, 3), nn.BatchNorm(4)
    opt = nn.optim.SGD(get_parameters([conv, bn]), lr=0.05)
    rng = np.random.default_rng(2)
    def step(x):
      with Tensor.train():
        opt.zero_grad()
        loss = bn(conv(x)).relu().mean()
        loss.backward()
        opt.step()
        return loss
    f = TinyJit(step) if jit else step
    losses = [f(Tensor(rng.standard_normal((3, 2, 6, 6)).astype(np.float32))).item() for _ in range(6)]
    return losses, bn.running_mean.numpy(), bn.running_var.numpy(), conv.weight.numpy()
  for a, b in zip(run(False), run(True)): np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)

@needs_values
def test_output_fed_back_as_input():
  f = TinyJit(lambda h, x: (h * 0.5 + x).tanh())
  h, hr = Tensor(np.zeros(5, np.float32)), np.zeros(5, np.float32)
  for _ in range(6):
    xv = rnd(5)
    h, hr = f(h, Tensor(xv)), np.tanh(hr * 0.5 + xv)
    np.testing.assert_allclose(h.numpy(), hr, rtol=1e-5, atol=1e-6)

def test_error_during_capture_leaves_no_recorder():
  from teeny.engine import realize
  calls = []
  def step(x):
    calls.append(1)
    if len(calls) == 2: raise KeyError("boom")
    return x + 1
  f = TinyJit(step)
  f(Tensor(rnd(3)))
  with pytest.raises(KeyError): f(Tensor(rnd(3)))
  assert realize.recorder is None and not f.captures
  f(Tensor(rnd(3)))   # captures now
  assert len(f.captures) == 1

def test_capture_keeps_no_returned_tensor_or_its_memory():
  import weakref
  from teeny.engine.realize import buffer_for
  f = TinyJit(lambda x: x * 2)
  f(Tensor(rnd(4)))
  out = f(Tensor(rnd(4)))   # the captured call
  t_ref, b_ref = weakref.ref(out), weakref.ref(buffer_for(out.uop.base))
  f(Tensor(rnd(4)))          # a replay writes fresh memory
  del out
  assert t_ref() is None and b_ref() is None

@needs_values
def test_tiny_gpt_training_matches_eager():
  """Custom kernels (the embedding's atomic scatter-add backward, cross-entropy), attention, LayerNorm, AdamW."""
  import os, sys
  sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
  import teeny.kernels as K
  from tiny_gpt import TinyGPT
  def run(jit: bool):
    Tensor.manual_seed(0)
    rng = np.random.default_rng(0)
    model = TinyGPT(40, dim=32, heads=2, layers=1, context=16)
    opt = nn.optim.AdamW(get_parameters(model), lr=1e-2, weight_decay=0.01)
    def step(x, y):
      with Tensor.train():
        opt.zero_grad()
        loss = K.cross_entropy(model(x).reshape(-1, 40), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    f = TinyJit(step) if jit else step
    ids = lambda: Tensor(rng.integers(0, 40, (4, 16)).astype(np.int32))
    losses = [f(ids(), ids()) for _ in range(5)]
    return [x.item() for x in losses], model.tok.numpy()
  (a, ta), (b, tb) = run(False), run(True)
  np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(ta, tb, rtol=1e-3, atol=1e-5)   # float atomics: not bit-reproducible

@needs_values
def test_const_inputs_no_inputs_and_no_outputs():
  g = TinyJit(lambda x, y, z: x + y + z)
  for i in range(5): np.testing.assert_equal(g(Tensor([i] * 3), Tensor.ones(3), Tensor.zeros(3)).numpy(), [i + 1] * 3)
  r = TinyJit(lambda: Tensor.rand(3))
  vals = [tuple(r().numpy()) for _ in range(5)]
  assert len(set(vals)) == 5
  def inc(a):
    a += 1
  f = TinyJit(inc)
  a = Tensor.zeros(1, dtype="int8").contiguous().realize()
  for _ in range(5): assert f(a) is None
  assert a.item() == 5

@needs_values
def test_nested_jit_runs_plain_inside_a_capture():
  inner = TinyJit(lambda x: x * 2)
  for _ in range(3): inner(Tensor(rnd(4)))   # captured on its own
  outer = TinyJit(lambda x: inner(x) + 1)
  for _ in range(5):
    x = rnd(4)
    np.testing.assert_allclose(outer(Tensor(x)).numpy(), x * 2 + 1, rtol=1e-6)

@needs_values
@pytest.mark.parametrize("op", ["flip", "pad", "repeat"])
def test_jit_copy_results_of_written_state(op):
  """pad/flip/repeat are copies (torch's): returned from a step that writes their source, or passed in computed from
  state the step writes, they keep the values they had, as without TinyJit (they were taken for views of the state)."""
  mk = {"flip": lambda w: w.flip(0), "pad": lambda w: w.pad(((1, 0),)), "repeat": lambda w: w.repeat(2)}[op]
  def run(jit):
    w = Tensor([1.0, 2.0, 3.0]).contiguous().realize()
    def step(x):
      w.assign(w + x)
      return mk(w)
    f = TinyJit(step) if jit else step
    outs = [f(Tensor([1.0, 1.0, 1.0])) for _ in range(5)]
    v = Tensor([1.0, 2.0, 3.0]).contiguous().realize()
    g = TinyJit(lambda x: (v.assign(v + 1), x.sum())[1].realize()) if jit else lambda x: (v.assign(v + 1), x.sum())[1]
    fed = [g(mk(v)).item() for _ in range(5)]
    return [o.tolist() for o in outs], fed
  assert run(True) == run(False)

def test_jit_names_another_object_clearly():
  l1, l2 = nn.Linear(2, 2), nn.Linear(2, 2)
  f = TinyJit(lambda m, x: m(x).realize())
  for _ in range(3): f(l1, Tensor.ones(1, 2))
  with pytest.raises(ValueError, match="another Linear object than the one it was captured with"):
    f(l2, Tensor.ones(1, 2))

def test_backward_on_a_replay_output_names_tinyjit():
  f = TinyJit(lambda x: (x * x).sum().realize())
  for _ in range(3): y = f(Tensor([1.0, 2.0], requires_grad=True))
  with pytest.raises(RuntimeError, match="returned by a replay of TinyJit"): y.backward()
