"""Symbolic shapes: a bound Variable as a dimension. Values against numpy at several bound values, each kernel compiled
once for all of them (GlobalCounters.compile_count), the variable a kernel parameter, TinyJit replays across values, and
clear errors for the uses that are not supported."""
import re
import numpy as np
import pytest
from teeny import Context, Device, GlobalCounters, Tensor, TinyJit, Variable
from teeny.uop.ops import Ops
from helpers import is_null, needs_values

R = np.random.default_rng(0)
def rnd(*shape): return R.standard_normal(shape).astype(np.float32)

XN, WN = rnd(4, 10), rnd(10, 5)
N = Variable("n", 1, 10)

def _softmax(a):
  return np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)

CASES = {
  "slice_elementwise": (lambda x, w, v: x[:, :v] * 2 + 1, lambda n: XN[:, :n] * 2 + 1),
  "shrink_offset": (lambda x, w, v: x.shrink((None, (v - 1, v))) - 1, lambda n: XN[:, n - 1:n] - 1),
  "reshape": (lambda x, w, v: x[:, :v].contiguous().reshape(4 * v) + 1, lambda n: XN[:, :n].reshape(-1) + 1),
  "reshape_split": (lambda x, w, v: x[:, :v].reshape(2, 2, v).sum(1), lambda n: XN[:, :n].reshape(2, 2, n).sum(1)),
  "pad": (lambda x, w, v: x.pad(((0, 0), (0, v))) * 2, lambda n: np.pad(XN, ((0, 0), (0, n))) * 2),
  "pad_value": (lambda x, w, v: x[:, :v].pad(((1, 0), (v, 0)), value=-1.0),
                lambda n: np.pad(XN[:, :n], ((1, 0), (n, 0)), constant_values=-1)),
  "arange": (lambda x, w, v: Tensor.arange(v) * 2, lambda n: np.arange(n) * 2),
  "arange_start": (lambda x, w, v: Tensor.arange(1, v + 1) + 0, lambda n: np.arange(1, n + 1)),
  "sum": (lambda x, w, v: x[:, :v].sum(1), lambda n: XN[:, :n].sum(1)),
  "sum_all": (lambda x, w, v: x[:, :v].sum(), lambda n: XN[:, :n].sum()),
  "max": (lambda x, w, v: x[:, :v].max(1), lambda n: XN[:, :n].max(1)),
  "matmul": (lambda x, w, v: x[:, :v] @ w[:v, :], lambda n: XN[:, :n] @ WN[:n]),
  "matmul_out": (lambda x, w, v: x[:, :v].T @ x[:, :v], lambda n: XN[:, :n].T @ XN[:, :n]),
  "softmax": (lambda x, w, v: x[:, :v].softmax(-1), lambda n: _softmax(XN[:, :n])),
  "zeros_ones_full": (lambda x, w, v: Tensor.zeros(3, v) + Tensor.ones(3, v) * x[:3, :v] + Tensor.full((3, v), 2.0),
                      lambda n: XN[:3, :n] + 2),
  "empty_assign": (lambda x, w, v: Tensor.empty(4, v).assign(x[:, :v] * 3), lambda n: XN[:, :n] * 3),
}

@pytest.mark.parametrize("name", list(CASES))
def test_values_at_several_bindings_compile_once(name):
  f, ref = CASES[name]
  x, w = Tensor(XN).realize(), Tensor(WN).realize()
  counts = []
  for val in (3, 7, 1, 10, 5):
    out = f(x, w, N.bind(val))
    if is_null(): out.realize()
    else: np.testing.assert_allclose(out.numpy(), ref(val), rtol=1e-5, atol=1e-5)
    counts.append(GlobalCounters.compile_count)
  # every kernel was compiled for the variable, not for a value: nothing new after the first binding
  assert counts[1:] == [counts[0]] * 4, counts

def test_shape_holds_the_bound_variable():
  v = N.bind(4)
  t = Tensor.ones(3, 10)[:, :v]
  assert t.shape[0] == 3 and t.shape[1] is v
  assert t.reshape(3, v).shape[1] is v
  assert Tensor.arange(v).shape[0] is v

def test_kernel_takes_the_variable_as_a_parameter():
  # renders on every device, NULL included: the variable's name is in the kernel's parameter list
  from teeny.engine.realize import get_runner
  items = (Tensor.ones(4, 10)[:, :N.bind(6)] * 3).contiguous().schedule()
  kernels = [it for it in items if it.kind == "kernel" and any(u.op is Ops.DEFINE_VAR for u in it.ast.toposort)]
  assert kernels and kernels[0].var_vals == {N: 6}
  _, spec = get_runner(kernels[0].bufs[0].arg[1], kernels[0].ast)
  assert [v.arg[0] for v in spec.vars] == ["n"]
  m = re.search(re.escape(spec.name) + r"\s*\(([^)]*)\)", spec.src)
  assert m and re.search(r"\bn\b", m.group(1)), spec.src
  assert "6" not in m.group(1)

def test_compile_counter_counts_program_cache_misses(capsys):
  GlobalCounters.reset()
  assert GlobalCounters.compile_count == 0
  with Context(DEBUG=1):
    (Tensor.ones(3, 7) * 1234.5).realize()   # a constant no other test uses: a new program
  assert GlobalCounters.compile_count == 1
  assert "compiled 1 programs" in capsys.readouterr().out
  before = GlobalCounters.compile_count
  (Tensor.ones(3, 7) * 1234.5).realize()
  assert GlobalCounters.compile_count == before
  GlobalCounters.reset()
  assert GlobalCounters.compile_count == 0

@needs_values
def test_jit_replays_one_capture_for_every_value():
  x = Tensor(XN).realize()
  body_runs = []
  @TinyJit
  def f(a, n):
    body_runs.append(1)
    return (a[:, :n] * 2).sum(1), (a[:, :n] + 1).contiguous()
  counts = []
  for val in (3, 5, 7, 2, 10, 10, 4, 1):
    s, e = f(x, N.bind(val))
    np.testing.assert_allclose(s.numpy(), (XN[:, :val] * 2).sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e.numpy(), XN[:, :val] + 1, rtol=1e-6)
    assert e.shape[1].val == val   # the output's shape follows the value
    counts.append(GlobalCounters.compile_count)
  assert len(body_runs) == 2 and len(f.captures) == 1
  assert counts[2:] == [counts[1]] * 6

@needs_values
def test_jit_replays_across_input_shapes_with_a_variable():
  g = TinyJit(lambda a: (a * 3).realize())
  for val in (3, 5, 7, 2, 9):
    a = Tensor(XN)[:, :N.bind(val)].contiguous().realize()
    np.testing.assert_allclose(g(a).numpy(), XN[:, :val] * 3, rtol=1e-6)
  assert len(g.captures) == 1

@needs_values
def test_jit_kv_cache_write_and_read():
  """A cache written at position p and attended up to p, the KV-cache pattern, replayed with a new p every call."""
  m = Variable("p", 0, 7)
  cache = Tensor.zeros(8, 4).contiguous().realize()
  rows = rnd(8, 4)
  @TinyJit
  def step(row, p):
    cache.shrink(((p, p + 1), None)).assign(row)
    return cache[:p + 1].sum(0)
  for i in range(8):
    out = step(Tensor(rows[i:i + 1]), m.bind(i))
    np.testing.assert_allclose(out.numpy(), rows[:i + 1].sum(0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(cache.numpy(), rows, rtol=1e-6)
  assert len(step.captures) == 1

def test_errors():
  x = Tensor.ones(4, 10)
  with pytest.raises(ValueError, match="outside its range"): N.bind(11)
  with pytest.raises(TypeError, match="bound to an int"): N.bind(2.5)
  with pytest.raises(ValueError, match="lo <= hi"): Variable("bad", 5, 2)
  with pytest.raises(ValueError, match="identifier"): Variable("not a name", 0, 2)
  # realizing a shape with a variable that was never bound
  with pytest.raises(RuntimeError, match="Variable n .*bind"): Tensor.ones(3, N).contiguous().realize()
  # a shrink the variable's range could push past the dim (a later value would read past the buffer)
  with pytest.raises(ValueError, match="upper bound"): x[:, N.bind(3):N.bind(3) + 1]
  with pytest.raises(ValueError, match="out of bounds"): Tensor.ones(4, 5)[:, :N.bind(7)]
  # ops that need concrete sizes name themselves
  v = N.bind(3)
  for name, fn in (("flip", lambda: x[:, :v].flip(1)), ("cumsum", lambda: x[:, :v].cumsum(1)),
                   ("conv2d", lambda: x[:, :v].reshape(1, 1, 4, v).conv2d(Tensor.ones(1, 1, 2, 2)))):
    with pytest.raises(ValueError, match=f"{name} does not support a symbolic dimension"): fn()
  with pytest.raises(Exception, match="-1 with a symbolic dimension"): x[:, :v].reshape(-1)
  with pytest.raises(ValueError, match="bound to two values"):
    (x[:, :N.bind(2)].sum() + x[:, :N.bind(3)].sum()).realize()

@needs_values
def test_device_default_runs_symbolic():
  # the value goes to the kernel at launch: the same program twice with different values gives both results
  x = Tensor(XN).realize()
  a, b = (x[:, :N.bind(2)] + 0).numpy(), (x[:, :N.bind(9)] + 0).numpy()
  assert a.shape == (4, 2) and b.shape == (4, 9) and str(Device.DEFAULT)
  np.testing.assert_allclose(b[:, :2], a)

def test_backward_through_a_symbolic_slice():
  x = Tensor(XN, requires_grad=True)
  counts = []
  for val in (3, 6, 9):
    x.grad = None
    (x[:, :N.bind(val)] * x[:, :N.bind(val)]).sum().backward()
    assert x.grad.shape == (4, 10)
    ref = np.zeros_like(XN)
    ref[:, :val] = 2 * XN[:, :val]
    if is_null(): x.grad.realize()
    else: np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-6)
    counts.append(GlobalCounters.compile_count)
  assert counts[1:] == [counts[0]] * 2

def test_sint_simplification_and_names():
  from teeny.uop.symbolic import ssimplify, sstr
  v = N.bind(4)
  assert ssimplify((v + 1) - v) == 1 and ssimplify(v + (10 - v)) == 10 and ssimplify(v * 4 // 4) is v
  assert sstr(v - 1) == "(n-1)" and sstr(v * 2 + 3) == "((n*2)+3)" and repr(v) == "<n=4>"
  assert v.val == 4 and v.unbind() == (N, 4) and N.expr == "n"
