"""Grad mode and training mode are per thread: Tensor.no_grad / enable_grad / set_grad_enabled, Tensor.train / test,
Tensor.training. Threads interleave through barriers so the order of mode changes is fixed; only one thread computes
at a time. References: numpy values and torch's own per-thread grad mode."""
import threading
import numpy as np
import pytest
import torch
from teeny import Device, Tensor, nn

needs_values = pytest.mark.skipif(Device.DEFAULT.startswith("NULL"), reason="NULL holds no data to compare")

def _leaf(seed=0):
  v = np.random.default_rng(seed).uniform(-1, 1, (3, 4)).astype(np.float32)
  return v, Tensor(v, requires_grad=True)

def _run_threads(*fns, timeout=120):
  """Run each fn in its own thread; re-raise the first exception a thread raised."""
  errs: list[BaseException] = []
  def wrap(fn):
    def run():
      try: fn()
      except BaseException as e:  # handed to the main thread
        errs.append(e)
    return run
  ts = [threading.Thread(target=wrap(f)) for f in fns]
  for t in ts: t.start()
  for t in ts: t.join(timeout)
  assert not any(t.is_alive() for t in ts), "a thread hung (barrier never reached)"
  if errs: raise errs[0]

@pytest.fixture(autouse=True)
def _modes_restored():
  assert Tensor.is_grad_enabled() and not Tensor.training
  yield
  assert Tensor.is_grad_enabled() and not Tensor.training, "a test left a mode changed on the main thread"

# ---- one thread: nesting, exceptions, decorators, the class-attribute spellings
class TestNesting:
  def test_nested_restore(self):
    with Tensor.no_grad():
      assert Tensor._no_grad
      with Tensor.enable_grad():
        assert not Tensor._no_grad
        with Tensor.no_grad(): assert Tensor._no_grad
        assert not Tensor._no_grad
      assert Tensor._no_grad
    assert not Tensor._no_grad
    with Tensor.train():
      with Tensor.test():
        with Tensor.train(True): assert Tensor.training
        assert not Tensor.training
      assert Tensor.training
    assert not Tensor.training

  def test_exception_restores(self):
    with pytest.raises(ValueError):
      with Tensor.no_grad(), Tensor.train():
        with Tensor.enable_grad(), Tensor.test(): raise ValueError("inner")
    assert not Tensor._no_grad and not Tensor.training
    with pytest.raises(KeyError):
      with Tensor.set_grad_enabled(False): raise KeyError("x")
    assert Tensor.is_grad_enabled()

  def test_same_object_reentered(self):
    ng = Tensor.no_grad()
    with Tensor.enable_grad():
      with ng:
        with Tensor.enable_grad():
          with ng: assert Tensor._no_grad
          assert not Tensor._no_grad
        assert Tensor._no_grad
      assert not Tensor._no_grad

  def test_decorators(self):
    @Tensor.no_grad()
    def f(t): return t * 2, Tensor._no_grad
    @Tensor.no_grad
    def g(t): return t * 2
    @Tensor.train()
    def h(): return Tensor.training
    @Tensor.test
    def k(): return Tensor.training
    @Tensor.set_grad_enabled(False)
    def s(t): return t * 3
    assert Tensor.is_grad_enabled()  # decorating with set_grad_enabled does not change the mode now
    _, x = _leaf()
    out, flag = f(x)
    assert flag and not out.requires_grad and not g(x).requires_grad and not s(x).requires_grad
    assert (x * 2).requires_grad and not Tensor._no_grad
    with Tensor.train(): assert h() and not k() and Tensor.training
    assert h.__name__ == "h"
    @Tensor.no_grad()
    def boom(): raise RuntimeError("boom")
    with pytest.raises(RuntimeError): boom()
    assert not Tensor._no_grad

  def test_set_grad_enabled_like_torch(self):
    for mode in (False, True):
      prev_t, prev_ours = torch.is_grad_enabled(), Tensor.is_grad_enabled()
      torch.set_grad_enabled(mode)
      Tensor.set_grad_enabled(mode)
      assert Tensor.is_grad_enabled() == torch.is_grad_enabled() == mode
      _, x = _leaf()
      assert bool((x * 2).requires_grad) == mode
      torch.set_grad_enabled(prev_t)
      Tensor.set_grad_enabled(prev_ours)
    with torch.set_grad_enabled(False), Tensor.set_grad_enabled(False):
      assert Tensor.is_grad_enabled() == torch.is_grad_enabled()
    assert Tensor.is_grad_enabled() == torch.is_grad_enabled()
    with pytest.raises(TypeError): Tensor.set_grad_enabled("no")

  def test_class_and_instance_spellings(self):
    t = Tensor([1.0])
    assert Tensor.training is False and t.training is False and t._no_grad is False
    Tensor.training = True
    try: assert Tensor.training is True and t.training is True
    finally: Tensor.training = False
    Tensor._no_grad = True
    try:
      assert t._no_grad and not (Tensor([1.0], requires_grad=True) * 2).requires_grad
    finally: Tensor._no_grad = False
    assert not Tensor.training and not Tensor._no_grad
    with pytest.raises(AttributeError): t.training = True  # set it on the class: Tensor.training = True

# ---- several threads
class TestThreads:
  def test_new_thread_starts_with_defaults(self):
    seen = {}
    def child():
      seen.update(grad=Tensor.is_grad_enabled(), training=Tensor.training, torch_grad=torch.is_grad_enabled())
    with Tensor.no_grad(), Tensor.train(), torch.no_grad(): _run_threads(child)
    assert seen == {"grad": True, "training": False, "torch_grad": True}

  def test_interleaved_no_grad_blocks(self):
    # enter A, enter B, exit A, exit B: with one process-wide flag this left no_grad on for good
    bar = threading.Barrier(2, timeout=60)
    seen = {"A": [], "B": []}
    def a():
      with Tensor.no_grad():
        seen["A"].append(Tensor._no_grad)
        bar.wait()  # 1: A is in
        bar.wait()  # 2: B is in
        seen["A"].append(Tensor._no_grad)
      seen["A"].append(Tensor._no_grad)
      bar.wait()  # 3: A is out
      bar.wait()  # 4: B is out
      seen["A"].append(Tensor._no_grad)
    def b():
      bar.wait()  # 1
      seen["B"].append(Tensor._no_grad)  # A's block is not B's
      with Tensor.no_grad():
        bar.wait()  # 2
        bar.wait()  # 3
        seen["B"].append(Tensor._no_grad)
      seen["B"].append(Tensor._no_grad)
      bar.wait()  # 4
    _run_threads(a, b)
    assert seen == {"A": [True, True, False, False], "B": [False, True, False]}
    assert not Tensor._no_grad

  def test_interleaved_training_flags(self):
    bar = threading.Barrier(2, timeout=60)
    seen = {}
    def a():
      Tensor.training = True
      bar.wait()
      bar.wait()
      seen["a"] = Tensor.training
    def b():
      bar.wait()
      seen["b_before"] = Tensor.training
      with Tensor.test(): pass
      Tensor.training = False
      bar.wait()
    _run_threads(a, b)
    assert seen == {"a": True, "b_before": False}

  @needs_values
  def test_backward_while_other_thread_in_no_grad(self):
    v, w = np.random.default_rng(1).uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    bar = threading.Barrier(2, timeout=60)
    out = {}
    def holder():
      with Tensor.no_grad():
        bar.wait()  # 1: in no_grad
        bar.wait()  # 2: worker has run forward and backward
        _, x = _leaf(5)
        out["holder_rg"] = bool((x * 2).requires_grad)
    def worker():
      bar.wait()  # 1
      x, y = Tensor(v, requires_grad=True), Tensor(w, requires_grad=True)
      ((x * y).exp().sum() + (x - y).square().mean()).backward()
      out["gx"], out["gy"] = x.grad.numpy(), y.grad.numpy()
      bar.wait()  # 2
    _run_threads(holder, worker)
    tx, ty = torch.tensor(v, requires_grad=True), torch.tensor(w, requires_grad=True)
    ((tx * ty).exp().sum() + (tx - ty).square().mean()).backward()
    np.testing.assert_allclose(out["gx"], tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["gy"], ty.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert out["holder_rg"] is False

  @needs_values
  def test_dropout_follows_thread_training_flag(self):
    v = np.ones((64, 64), dtype=np.float32)
    bar = threading.Barrier(2, timeout=60)
    out = {}
    def trainer():
      with Tensor.train():
        bar.wait()  # 1: training on here
        out["train"] = Tensor(v).dropout(0.5).numpy()
        bar.wait()  # 2
    def evaluator():
      bar.wait()  # 1
      bar.wait()  # 2: trainer's dropout ran while its thread trained
      out["eval"] = Tensor(v).dropout(0.5).numpy()
    _run_threads(trainer, evaluator)
    np.testing.assert_array_equal(out["eval"], v)  # eval: identity, as torch's F.dropout(training=False)
    kept = out["train"] != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_allclose(out["train"][kept], 2.0)  # kept values scaled by 1/(1-p)

  @needs_values
  def test_batchnorm_follows_thread_training_flag(self):
    x = np.random.default_rng(2).standard_normal((8, 3, 4, 4)).astype(np.float32) * 3 + 1
    bn = nn.BatchNorm2d(3)
    tbn = torch.nn.BatchNorm2d(3)
    bar = threading.Barrier(2, timeout=60)
    out = {}
    def eval_thread():
      bar.wait()  # 1: the other thread is in training mode
      out["eval"] = bn(Tensor(x)).numpy()  # running stats (still the initial 0 and 1)
      bar.wait()  # 2
    def train_thread():
      Tensor.training = True
      bar.wait()  # 1
      bar.wait()  # 2: eval done first, with the initial running stats
      out["train"] = bn(Tensor(x)).numpy()  # batch statistics, and running stats updated
      out["mean"] = bn.running_mean.numpy()
    _run_threads(eval_thread, train_thread)
    tbn.eval()
    with torch.no_grad(): ref_eval = tbn(torch.tensor(x)).numpy()
    tbn.train()
    with torch.no_grad(): ref_train = tbn(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out["eval"], ref_eval, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["train"], ref_train, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["mean"], tbn.running_mean.numpy(), rtol=1e-5, atol=1e-5)
    assert not Tensor.training
