"""Rendered C: the shape of fixed programs, kernel names, compiler flags, and float special values on the CPU.

Snapshots of rendered source in every language are in test_snapshots.py (stored under test/snapshots/)."""
import os, re
import numpy as np
import pytest
from helpers import needs_values
from teeny import Context, Tensor, dtypes
from teeny.codegen.kernel import get_program
from teeny.codegen.render.c import CRenderer

def ones(*shape: int, dtype=np.float32) -> Tensor: return Tensor(np.ones(shape, dtype=dtype))

def render(t: Tensor):
  """The ProgramSpec of the single kernel that realizes t, rendered as C."""
  with Context(DEBUG=0):
    items = [si for si in t.schedule() if si.kind == "kernel"]
    assert len(items) == 1, f"expected one kernel, the schedule has {len(items)}"
    return get_program(items[0].ast, CRenderer())

def prog_elementwise():
  a, b, c = ones(16), ones(16), ones(16)
  return render((a * b + c).relu())

def prog_reduce():
  x, y = ones(4, 8), ones(4, 8)
  return render((x * y).sum(1).relu())

def prog_half():
  return render(ones(16, dtype=np.float16) + ones(16, dtype=np.float16))

def prog_pad_flip():
  return render(ones(4, 8).pad(((1, 1), (2, 0))).flip(1) * 2)

def test_render_is_deterministic():
  assert prog_reduce().src == prog_reduce().src
  assert prog_pad_flip().src == prog_pad_flip().src

def test_elementwise_source_shape():
  src = prog_elementwise().src
  assert re.search(r"^void E_16\(", src, re.M)
  assert src.count("for (") == 1, "a 1-D elementwise kernel has one loop"
  assert "restrict" in src and "int core, int ncores" in src

def test_reduce_accumulates_in_a_register():
  src = prog_reduce().src
  assert src.count("for (") == 2
  assert re.search(r"float acc\d+ = 0\.0f;", src)
  assert src.count("data0[") == 1, "the reduce result is stored once"

def test_half_uses_conversions():
  src = prog_half().src
  assert "teeny_h2f" in src and "teeny_f2h" in src
  assert "unsigned short* restrict data0" in src

def test_float_kernel_has_no_half_helpers():
  src = prog_elementwise().src
  assert "teeny_h2f" not in src and "teeny_f2h" not in src and "teeny_bf2f" not in src

@pytest.mark.parametrize("make, prefix", [
  (lambda: ones(16) * 2, "E_16"), (lambda: ones(4, 8) + 1, "E_"), (lambda: ones(4, 8).sum(1), "r_4_8"),
  (lambda: ones(4, 8).sum(), "r_"), (lambda: ones(3, 5).max(0), "r_5_3"), (lambda: ones(6, 7).permute(1, 0) * 2, "E_"),
], ids=["e16", "e4x8", "sum1", "sumall", "max0", "permute"])
def test_kernel_names(make, prefix):
  t = make()
  p = render(t)
  assert p.name.startswith(prefix), p.name
  assert re.fullmatch(r"[Er](_\d+)+", p.name), f"kernel name {p.name!r} is not E_/r_ followed by sizes"
  assert all(int(s) >= 1 for s in p.name.split("_")[1:])
  assert f"void {p.name}(" in p.src

def test_kernel_name_contains_reduce_size():
  p = render(ones(4, 8).sum(1))
  assert p.name == "r_4_8"
  assert render(ones(3, 5).max(0)).name == "r_5_3"
  assert render(ones(4, 8).sum()).name == "r_1_4_8"  # a scalar output, then the reduce sizes

def test_cpu_compiler_has_no_fast_math():
  from teeny.runtime.ops_cpu import CCompiler
  flags = CCompiler().flags
  assert not any("fast-math" in f for f in flags), flags
  assert "-ffinite-math-only" not in flags and "-Ofast" not in flags

def test_program_spec_params():
  p = prog_elementwise()
  assert [slot for slot, _, _ in p.params] == [0, 1, 2, 3]
  assert all(dt == dtypes.float32 for _, dt, _ in p.params)
  assert p.global_size == [16]

@needs_values
def test_isnan_isinf_on_cpu():
  vals = np.array([0.0, np.nan, np.inf, -np.inf, 1.0, -0.0], dtype=np.float32)
  t = Tensor(vals)
  np.testing.assert_equal(t.isnan().numpy(), np.isnan(vals))
  np.testing.assert_equal(t.isinf().numpy(), np.isinf(vals))

@needs_values
def test_nan_survives_max_and_compare():
  vals = np.array([np.nan, 1.0, -np.inf], dtype=np.float32)
  t = Tensor(vals)
  assert np.isnan(t.relu().numpy()[0])
  np.testing.assert_equal((t == t).numpy(), vals == vals)

@needs_values
def test_half_add_values():
  a = np.array([1.5, 65504, -2.25, 0.1], dtype=np.float16)
  b = np.array([0.25, 65504, 2.25, 0.2], dtype=np.float16)
  with np.errstate(over="ignore"): want = a + b
  np.testing.assert_equal((Tensor(a) + Tensor(b)).numpy(), want)

def test_big_fill_streams_past_the_caches():
  # a fill of a buffer bigger than the caches uses non-temporal stores (clang's builtin, a plain store elsewhere);
  # a small fill, and a kernel that reads memory, store plainly
  big = render(Tensor.zeros(2048, 2048).contiguous()).src
  assert "teeny_stream(&data0[" in big and "__builtin_nontemporal_store" in big and "#else" in big
  assert "teeny_stream" not in render(Tensor.zeros(64, 64).contiguous()).src
  assert "teeny_stream" not in render(ones(2048, 2048) + 1).src

@needs_values
def test_big_fill_values():
  t = Tensor.full((2048, 1024), 3.0).contiguous().realize().numpy()
  assert t.shape == (2048, 1024) and (t == 3.0).all()
  a = Tensor.arange(4 << 20).realize().numpy()
  np.testing.assert_array_equal(a, np.arange(4 << 20))

@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="gcc not installed")
def test_big_fill_compiles_with_gcc():
  from teeny.runtime.ops_cpu import CCompiler
  old = os.environ.get("CC")
  os.environ["CC"] = "gcc"
  try:
    cc = CCompiler()
    assert cc.cc == "gcc" and len(cc.compile(render(Tensor.zeros(2048, 2048).contiguous()).src)) > 0
  finally:
    if old is None: del os.environ["CC"]
    else: os.environ["CC"] = old

def test_address_math_is_64_bit():
  """Loop counters and index values that only compute addresses are `long` in C (no sign extension per load under
  -fwrapv); the matmul's inner loop reads both inputs through them."""
  a, b = ones(64, 48), ones(48, 64)
  src = render(a @ b).src
  assert re.search(r"for \(long r\d+ = 0;", src) and "long val" in src
  assert not re.search(r"\bint (g|r|u)\d+ =", src), src

@needs_values
def test_int_values_keep_32_bit_wraparound():
  """A loop counter that reaches a value (not an address) keeps int32 arithmetic, wrap-around included, while the
  address of the same store is 64-bit."""
  x = Tensor.arange(8, dtype=dtypes.int32) * (1 << 29)
  got = x.numpy()
  want = (np.arange(8, dtype=np.int64) * (1 << 29)).astype(np.int32)
  np.testing.assert_array_equal(got, want)
  assert re.search(r"for \(int g\d+ = ", render(Tensor.arange(8, dtype=dtypes.int32) * (1 << 29)).src)

@needs_values
def test_masked_gather_with_64_bit_addresses():
  """Masks of padded reads are computed in the 64-bit address math too; values match numpy."""
  x = np.arange(24, dtype=np.float32).reshape(4, 6)
  got = Tensor(x).pad(((1, 2), (3, 0))).flip(0)[:, ::2].numpy()
  np.testing.assert_array_equal(got, np.pad(x, ((1, 2), (3, 0)))[::-1, ::2])

def test_gpu_int_math_goes_unsigned_only_where_it_can_wrap():
  """GPU compilers do not wrap signed overflow (NVRTC folded int32 (x*4)//2 to x*2), so value int math that may leave
  int32 is rendered through unsigned; math whose operand bounds keep it in range (an arange's i*-1+3) stays plain."""
  from teeny.codegen.render.cuda import CUDARenderer
  def src(t: Tensor) -> str:
    with Context(DEBUG=0):
      (si,) = [si for si in t.schedule() if si.kind == "kernel"]
      return get_program(si.ast, CUDARenderer()).src
  bounded = src(Tensor.arange(10, dtype=dtypes.int32) * -1 + 3)
  assert "unsigned" not in bounded and "*-1)+3)" in bounded, bounded
  data = src((Tensor(np.arange(16, dtype=np.int32)) * 4) // 2)
  assert "((unsigned int)(data1[" in data and "*4u" in data, data
  # the same product of an arange that can pass 2**31 wraps: unsigned
  assert "unsigned" in src(Tensor.arange(8, dtype=dtypes.int32) * (1 << 29))
