"""Bad input raises a clear Python exception naming what was wrong, and the library keeps working afterwards."""
import numpy as np
import pytest
from teeny import Tensor, Device, dtypes
from helpers import is_null

def still_works():
  out = (Tensor([1.0, 2.0, 3.0]) * 2 + 1).relu().sum()
  if is_null(): out.realize()
  else: assert out.item() == 15.0

@pytest.fixture(autouse=True)
def _library_survives():
  yield
  still_works()

def _names(msg: str, *parts) -> None:
  for p in parts: assert str(p) in msg or str(p).replace(" ", "") in msg.replace(" ", ""), f"{p!r} not named in: {msg}"

class TestShapes:
  @pytest.mark.parametrize("a,b", [((2, 3), (4, 3)), ((3,), (4,)), ((2, 3, 4), (3, 3)), ((0, 3), (2, 3))])
  def test_broadcast_mismatch(self, a, b):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(*a) + Tensor.ones(*b)
    _names(str(e.value), a, b)

  def test_broadcast_mismatch_where_and_ops(self):
    x, y = Tensor.ones(2, 3), Tensor.ones(5)
    for fn in (lambda: x * y, lambda: x.maximum(y), lambda: (x > 0).where(x, y), lambda: x < y):
      with pytest.raises((ValueError, RuntimeError)) as e: fn()
      _names(str(e.value), (2, 3), (5,))

  @pytest.mark.parametrize("a,b", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (2,)), ((5, 2, 3), (4, 4, 2)),
                                   ((2, 3, 4), (5, 2))])
  def test_matmul_mismatch(self, a, b):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(*a) @ Tensor.ones(*b)
    _names(str(e.value), a, b)

  def test_matmul_scalar(self):
    with pytest.raises((ValueError, RuntimeError)): Tensor(2.0) @ Tensor.ones(3)

  @pytest.mark.parametrize("src,dst", [((3, 4), (5, 5)), ((3, 4), (5, -1)), ((3, 4), (-1, -1)), ((6,), (4,)),
                                       ((2, 3), (0, 6))])
  def test_bad_reshape(self, src, dst):
    with pytest.raises(ValueError) as e: Tensor.ones(*src).reshape(dst)
    _names(str(e.value), dst)
    if dst.count(-1) < 2: _names(str(e.value), src)  # two -1s is wrong whatever the source shape

  def test_bad_expand(self):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(2, 3).expand(4, 3)
    _names(str(e.value), (2, 3), (4, 3))

  def test_bad_cat(self):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.cat(Tensor.ones(2, 3), Tensor.ones(2, 4), dim=0)
    _names(str(e.value), (2, 3), (2, 4))

  def test_bad_permute(self):
    with pytest.raises((ValueError, IndexError, RuntimeError)): Tensor.ones(2, 3, 4).permute(0, 1)
    with pytest.raises((ValueError, IndexError, RuntimeError)): Tensor.ones(2, 3, 4).permute(0, 1, 1)

class TestAxes:
  @pytest.mark.parametrize("fn", [
    lambda x: x.sum(axis=3), lambda x: x.sum(axis=-4), lambda x: x.max(axis=5), lambda x: x.mean(axis=(0, 3)),
    lambda x: x.argmax(axis=3), lambda x: x.softmax(axis=3), lambda x: x.cumsum(axis=-4), lambda x: x.flip(3),
    lambda x: x.transpose(0, 3), lambda x: x.unsqueeze(5), lambda x: x.squeeze(3), lambda x: x.permute(0, 1, 3),
    lambda x: x.sum(dim=4), lambda x: x.flatten(0, 3),
  ])
  def test_out_of_range_axis(self, fn):
    with pytest.raises(IndexError) as e: fn(Tensor.ones(2, 3, 4))
    assert str(e.value), "the message must say which axis was out of range"

  def test_cat_stack_axis(self):
    with pytest.raises(IndexError): Tensor.cat(Tensor.ones(2, 3), Tensor.ones(2, 3), dim=2)
    with pytest.raises(IndexError): Tensor.stack(Tensor.ones(2, 3), Tensor.ones(2, 3), dim=4)

class TestIndex:
  @pytest.mark.parametrize("idx,bad", [(3, 3), (-4, -4), ((0, 4), 4), ((0, -5), -5), ((slice(None), 10), 10),
                                       ((1, 1, 0), None)])
  def test_int_index_out_of_range(self, idx, bad):
    with pytest.raises(IndexError) as e: Tensor.ones(3, 4)[idx]
    if bad is not None: _names(str(e.value), bad)

  def test_index_scalar(self):
    with pytest.raises(IndexError): Tensor(1.0)[0]

  def test_float_index(self):
    with pytest.raises((TypeError, IndexError)): Tensor.ones(3)[1.5]

class TestDevicesAndValues:
  def test_unknown_device(self):
    with pytest.raises((RuntimeError, ValueError)) as e: Tensor([1.0, 2.0], device="FOOBAR")
    _names(str(e.value), "FOOBAR")

  def test_unknown_device_to(self):
    with pytest.raises((RuntimeError, ValueError)) as e: Tensor([1.0]).to("NOPE")
    _names(str(e.value), "NOPE")

  def test_mixed_devices(self):
    try: a, b = Tensor([1.0, 2.0], device="CPU"), Tensor([1.0, 2.0], device="NULL")
    except Exception as e: pytest.skip(f"CPU and NULL are not both available: {e}")
    with pytest.raises((RuntimeError, ValueError)) as e: (a + b).realize()
    _names(str(e.value), "CPU", "NULL")

  def test_numpy_on_null(self):
    t = Tensor([1.0, 2.0], device="NULL") + 1
    with pytest.raises(RuntimeError) as e: t.numpy()
    _names(str(e.value), "NULL")

  @pytest.mark.parametrize("name", ["float8", "complex64", "int128", "floaty", "str"])
  def test_bad_dtype_name(self, name):
    with pytest.raises(TypeError) as e: Tensor([1, 2], dtype=name)
    _names(str(e.value), name)
    with pytest.raises(TypeError): Tensor([1, 2]).cast(name)

  def test_unsupported_numpy_dtype(self):
    with pytest.raises(TypeError): Tensor(np.array([1 + 2j]))
    with pytest.raises(TypeError): Tensor(np.array(["a", "b"]))

  @pytest.mark.parametrize("data", [[[1, 2], [3]], [[1.0], [2.0, 3.0]], [[[1, 2]], [[3, 4], [5, 6]]], [1, [2, 3]]])
  def test_ragged(self, data):
    with pytest.raises(ValueError): Tensor(data)

  @pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
  def test_item_non_scalar(self, shape):
    t = Tensor.ones(*shape)
    with pytest.raises(ValueError) as e: t.item()
    _names(str(e.value), shape)

  def test_unsupported_python_value(self):
    with pytest.raises((TypeError, ValueError)): Tensor("hello")
    with pytest.raises((TypeError, ValueError)): Tensor([object()])

class TestSurvives:
  def test_many_errors_then_work(self):
    for _ in range(3):
      with pytest.raises((ValueError, RuntimeError)): Tensor.ones(2, 3) + Tensor.ones(3, 2)
      with pytest.raises(ValueError): Tensor.ones(4).reshape(3)
      with pytest.raises(IndexError): Tensor.ones(3)[5]
    out = Tensor.ones(2, 3).sum(axis=1)
    assert out.shape == (2,) and out.dtype == dtypes.float32
    if is_null(): out.realize()
    else: np.testing.assert_equal(out.numpy(), [3.0, 3.0])

  def test_default_device_unchanged(self):
    before = Device.DEFAULT
    with pytest.raises((RuntimeError, ValueError)): Tensor([1.0], device="FOOBAR")
    assert Device.DEFAULT == before

class TestBadArguments:
  @pytest.mark.parametrize("chunks", [0, -1])
  def test_chunk(self, chunks):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(4).chunk(chunks)
    _names(str(e.value), "chunks", chunks)

  @pytest.mark.parametrize("kw,named", [(dict(stride=0), "stride"), (dict(stride=(1, -1)), "stride"),
                                        (dict(dilation=0), "dilation"),
                                        (dict(groups=0), "groups"), (dict(groups=-2), "groups")])
  def test_conv2d(self, kw, named):
    x, w = Tensor.ones(1, 2, 5, 5), Tensor.ones(3, 2, 3, 3)
    with pytest.raises((ValueError, RuntimeError)) as e: x.conv2d(w, **kw)
    _names(str(e.value), named)

  def test_conv_kernel_size_zero(self):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(1, 2, 5, 5).conv2d(Tensor.ones(3, 2, 0, 3))
    _names(str(e.value), "kernel size")

  def test_conv_groups_channels(self):
    with pytest.raises((ValueError, RuntimeError)) as e:
      Tensor.ones(1, 4, 5, 5).conv2d(Tensor.ones(3, 2, 3, 3), groups=2)
    _names(str(e.value), "groups=2")

  def test_nn_conv2d(self):
    from teeny import nn
    for kw in (dict(stride=0), dict(dilation=0)):
      with pytest.raises((ValueError, RuntimeError)) as e: nn.Conv2d(2, 3, 3, **kw)(Tensor.ones(1, 2, 5, 5))
      _names(str(e.value), next(iter(kw)))

  @pytest.mark.parametrize("kw,named", [(dict(stride=0), "stride"), (dict(padding=-1), "negative padding"),
                                        (dict(dilation=0), "dilation"),
                                        (dict(stride=2, output_padding=2), "output_padding"),
                                        (dict(output_padding=-1), "output_padding"), (dict(padding=3), "too small")])
  def test_conv_transpose2d(self, kw, named):
    x, w = Tensor.ones(1, 2, 2, 2), Tensor.ones(2, 3, 3, 3)
    with pytest.raises((ValueError, RuntimeError)) as e: x.conv_transpose2d(w, **kw)
    _names(str(e.value), named)

  @pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
  @pytest.mark.parametrize("kw,named", [(dict(kernel_size=0), "kernel_size"), (dict(stride=0), "stride"),
                                        (dict(padding=-1), "padding"), (dict(padding=2), "padding")])
  def test_pool(self, fn, kw, named):
    with pytest.raises((ValueError, RuntimeError)) as e:
      getattr(Tensor.ones(1, 2, 6, 6), fn)(**{"kernel_size": 2, **kw})
    _names(str(e.value), named)

  def test_max_pool_dilation(self):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor.ones(1, 2, 6, 6).max_pool2d(2, dilation=0)
    _names(str(e.value), "dilation")

  @pytest.mark.parametrize("formula,named", [("ij->ijk", "'k'"), ("ij->ii", "'i'"), ("ij,jk->iz", "'z'")])
  def test_einsum_output(self, formula, named):
    ops = [Tensor.ones(2, 2)] * (formula.split("->")[0].count(",") + 1)
    with pytest.raises(ValueError) as e: Tensor.einsum(formula, *ops)
    _names(str(e.value), named)

  @pytest.mark.skipif(is_null(), reason="the weights are checked on the host")
  @pytest.mark.parametrize("w,named", [([0.5, -0.1, 0.6], "< 0"), ([1.0, float("inf")], "inf"),
                                       ([1.0, float("nan")], "nan"),
                                       ([[0.0, 0.0], [1.0, 1.0]], "sums to 0"), ([0.0, 0.0, 0.0], "sums to 0")])
  def test_multinomial(self, w, named):
    with pytest.raises(RuntimeError) as e: Tensor(w).multinomial()
    _names(str(e.value), named)

  def test_multinomial_num_samples(self):
    with pytest.raises((ValueError, RuntimeError)) as e: Tensor([1.0, 2.0]).multinomial(0)
    _names(str(e.value), "num_samples")

  @pytest.mark.parametrize("fn", [lambda d: Tensor.rand(5, dtype=d), lambda d: Tensor.randn(5, dtype=d),
                                  lambda d: Tensor.uniform(5, dtype=d), lambda d: Tensor.normal(5, dtype=d),
                                  lambda d: Tensor.ones(5, dtype=d).rand_like()])
  @pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "uint8"])
  def test_random_int_dtype(self, fn, dtype):
    with pytest.raises((RuntimeError, TypeError)) as e: fn(dtype)
    _names(str(e.value), dtype)

  def test_random_float_dtypes_work(self):
    for d in ("float16", "float64", "bfloat16"):
      assert Tensor.rand(3, dtype=d).dtype.name == d and Tensor.randn(3, dtype=d).dtype.name == d

  @pytest.mark.parametrize("v", [2 ** 63, [2 ** 64], [1, -(2 ** 63) - 1]])
  def test_int_too_big(self, v):
    with pytest.raises((OverflowError, ValueError)) as e: Tensor(v)
    _names(str(e.value), "int64")

class TestCPUThreads:
  @pytest.mark.parametrize("val", ["-1", "0", "abc", "1.5", "-4"])
  def test_env(self, val):
    import os, subprocess, sys
    env = {**os.environ, "CPU_THREADS": val, "DEV": "CPU"}
    code = "from teeny import Tensor\nprint(Tensor.ones(100000, device='CPU').sum().item())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode != 0, f"CPU_THREADS={val} ran: {r.stdout}"
    assert "CPU_THREADS" in r.stderr and "Error" in r.stderr.splitlines()[-1], r.stderr[-500:]

  def test_context(self):
    from teeny.helpers import Context
    try: Tensor.ones(2, device="CPU")
    except Exception as e: pytest.skip(f"no CPU device: {e}")
    with Context(CPU_THREADS=-1):
      with pytest.raises(ValueError) as e: Tensor.ones(100000, device="CPU").sum().item()
    _names(str(e.value), "CPU_THREADS")

class TestTorchKinds:
  """Errors of torch's kind for bad dims and shapes (issue 10): IndexError for a dim out of range, naming the dim and
  the
  allowed range; RuntimeError for shapes that do not fit (also a ValueError, for tinygrad-style code)."""
  @pytest.mark.parametrize("fn", [lambda x: x.sum(3), lambda x: x.squeeze(5), lambda x: x.cumsum(-3),
                                  lambda x: x.softmax(2),
                                  lambda x: x.argmax(4), lambda x: x.unsqueeze(9), lambda x: x.transpose(0, 2),
                                  lambda x: x.flatten(1, 2), lambda x: x.cat(x, dim=2), lambda x: x.flip(-3)])
  def test_dim_out_of_range(self, fn):
    with pytest.raises(IndexError) as e: fn(Tensor.ones(2, 3))
    _names(str(e.value), "dim", "range")

  def test_repeated_dim(self):
    with pytest.raises(RuntimeError) as e: Tensor.ones(2, 3).sum((1, -1))
    _names(str(e.value), "dim 1")

  @pytest.mark.parametrize("fn", [lambda: Tensor.cat(Tensor.ones(2, 3), Tensor.ones(3, 3), dim=1),
                                  lambda: Tensor.stack(Tensor.ones(2, 3), Tensor.ones(2)),
                                  lambda: Tensor.ones(2, 3).reshape(7),
                                  lambda: Tensor.ones(2, 3).permute(1, 0, 2), lambda: Tensor.ones(2, 3).permute(1, 1),
                                  lambda: Tensor.ones(2, 3).flip((0, 0))])
  def test_shape_runtime_error(self, fn):
    with pytest.raises(RuntimeError): fn()

  def test_one_hot_negative(self):
    with pytest.raises(RuntimeError) as e: Tensor([1, -2]).one_hot(4)
    _names(str(e.value), "-2")

def test_opencl_compiler_that_does_not_know_the_cpu_names_the_fix(monkeypatch):
  """pyopencl's wheel bundles a PoCL on LLVM 14, which cannot build for a CPU its LLVM does not know (AMD Zen 5): the
  error says so and names the fixes, instead of only PoCL's "unknown target CPU 'generic'"."""
  import types
  from teeny.runtime import ops_cl
  class FakeCLError(Exception): pass
  class FakeProgram:
    def __init__(self, ctx, src): pass
    def build(self, options=()):
      raise FakeCLError("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nerror: unknown target CPU 'generic'")
  monkeypatch.setattr(ops_cl, "_cl", lambda: types.SimpleNamespace(RuntimeError=FakeCLError, Program=FakeProgram))
  comp = object.__new__(ops_cl.CLCompiler)
  comp.dev = types.SimpleNamespace(ctx=None, cl_device=types.SimpleNamespace(name="pthread-test"))
  with pytest.raises(RuntimeError) as e:
    comp.compile("__kernel void k(__global float *a) { a[0] = 1.0f; }")
  msg = str(e.value)
  assert "unknown target CPU" in msg and "does not know this CPU" in msg
  assert "apt-get install pocl-opencl-icd" in msg and "DEV=CPU" in msg
