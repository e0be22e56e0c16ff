"""Long lazy chains: no layer from the UOp graph to the compiled kernel may hit Python's recursion limit or a C
compiler's
nesting limit. Kernel ASTs thousands of ops deep are built by hand (the codegen layers on their own), plus end-to-end
tensor chains; compile failures are short errors naming the kernel."""
from __future__ import annotations
import sys
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor, dtypes
from teeny.helpers import Context
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp

DEEP = 5000

@pytest.fixture(autouse=True)
def default_recursion_limit():
  """Python's default limit, whatever a plugin or an earlier test set: 5000-deep graphs must fit without raising it."""
  old = sys.getrecursionlimit()
  sys.setrecursionlimit(1000)
  yield
  sys.setrecursionlimit(old)

def max_nesting(src: str) -> int:
  depth = best = 0
  for ch in src:
    if ch in "([{": depth += 1
    elif ch in ")]}": depth -= 1
    best = max(best, depth)
  return best

A, B = 0.999, 0.001   # x -> x*A + B, DEEP times: stays finite, and float32 rounding matches numpy's step by step

def float_chain(v: UOp, n: int = DEEP) -> UOp:
  for _ in range(n): v = v * UOp.const(dtypes.float32, A) + UOp.const(dtypes.float32, B)
  return v

def numpy_chain(x: np.ndarray, n: int = DEEP) -> np.ndarray:
  for _ in range(n): x = x * np.float32(A) + np.float32(B)
  return x

def elementwise_kernel(n: int, opts):
  def fxn(out: UOp, x: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return out.index(i).store(float_chain(x.index(i).load())).end(i).sink(arg=KernelInfo("deep_elementwise", opts))
  return fxn

def reduce_kernel(rows: int, cols: int):
  def fxn(out: UOp, x: UOp) -> UOp:
    i, r = UOp.range(rows, 0, AxisType.GLOBAL), UOp.range(cols, 1, AxisType.REDUCE)
    red = UOp(Ops.REDUCE, dtypes.float32, (float_chain(x.index(i * cols + r).load()), r), Ops.ADD)
    return out.index(i).store(red).end(i).sink(arg=KernelInfo("deep_reduce", None))
  return fxn

def index_chain(i: UOp, n: int, steps: int = DEEP) -> UOp:
  """((i + 7) % n + 7) % n ... : 2*steps int ops that symbolic cannot fold (each MOD's operand can reach n)."""
  for _ in range(steps): i = (i + 7) % n
  return i

def gather_kernel(n: int):
  def fxn(out: UOp, x: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return out.index(i).store(x.index(index_chain(i, n)).load()).end(i).sink(arg=KernelInfo("deep_index", None))
  return fxn

# ---- the layers on their own (no compiler, so these run under DEV=NULL too)

def test_vmin_vmax_of_a_5000_deep_index_chain():
  i = UOp.range(13, 0, AxisType.GLOBAL)
  idx = index_chain(i, 13)
  assert idx.vmin_vmax == (0, 12)
  assert (idx + 100).vmin_vmax == (100, 112)
  # a chain of casts and adds: bounds flow through every level
  v = i
  for k in range(DEEP): v = (v + 1).cast(dtypes.int64 if k % 2 else dtypes.int32)
  assert v.vmin_vmax == (DEEP, 12 + DEEP)

def test_graph_rewrite_substitute_and_print_a_deep_graph():
  from teeny.uop.rewrite import graph_rewrite
  from teeny.uop.symbolic import symbolic
  i = UOp.range(13, 0, AxisType.GLOBAL)
  idx = index_chain(i, 13)
  # a sum of DEEP terms as one left-deep chain: symbolic flattens it (decompose walks it without recursion)
  s = i
  for _ in range(DEEP): s = s + i
  assert graph_rewrite(s, symbolic) is i * UOp.const(dtypes.index, DEEP + 1)
  out = graph_rewrite(idx, symbolic)
  assert out.vmin_vmax == (0, 12)
  j = UOp.range(13, 1, AxisType.GLOBAL)
  sub = idx.substitute({i: j})
  assert j in sub.toposort and i not in sub.toposort
  text = repr(idx)
  # RANGE, 13 (its size and the divisor), 7, DEEP adds and mods
  assert text.count("\n") + 1 == len(idx.toposort) == 2 * DEEP + 3

def test_shape_and_base_of_a_deep_tensor_level_chain():
  c = UOp.const(dtypes.float32, 1.0, "CPU").reshape((1,)).expand((4,))
  v = c
  for _ in range(DEEP): v = UOp(Ops.ADD, dtypes.float32, (v, c))
  assert v.shape == (4,)
  m = v
  for _ in range(DEEP): m = m.reshape((2, 2)).reshape((4,)).expand((4,)).permute((0,))
  m = UOp(Ops.RESHAPE, dtypes.float32, (m,), (2, 2))
  for _ in range(DEEP): m = UOp(Ops.RESHAPE, dtypes.float32, (UOp(Ops.RESHAPE, dtypes.float32, (m,), (4,)),), (2, 2))
  assert m.shape == (2, 2) and m.base is v

@pytest.mark.parametrize("kind", ["elementwise", "elementwise_noopt", "reduce", "index"])
def test_codegen_of_a_5000_deep_kernel(kind):
  """optimize, linearize and render a 5000-op kernel; the source names intermediates instead of nesting them."""
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  out, x = UOp.placeholder(0, dtypes.float32, (16,)), UOp.placeholder(1, dtypes.float32, (16 * 64,))
  fxn = {"elementwise": elementwise_kernel(16, None), "elementwise_noopt": elementwise_kernel(16, ()),
         "reduce": reduce_kernel(16, 64), "index": gather_kernel(16)}[kind]
  spec = get_program(fxn(out, x), CRenderer())
  assert max_nesting(spec.src) <= 4 * CRenderer.max_nest, "an expression nests past the renderer's limit"
  assert spec.src.count("\n") < 3 * DEEP

@pytest.mark.parametrize("renderer,kind", [("cuda", "reduce"), ("hip", "elementwise"), ("opencl", "index")])
def test_gpu_codegen_of_a_5000_deep_kernel(renderer, kind):
  """The GPU shaping (grid flattening, grouped reduce) and renderers (one kernel each: 5000-deep graphs are slow to
  build)."""
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.cuda import CUDARenderer
  from teeny.codegen.render.hip import HIPRenderer
  from teeny.codegen.render.opencl import OpenCLRenderer
  ren = {"cuda": CUDARenderer, "hip": HIPRenderer, "opencl": OpenCLRenderer}[renderer]()
  out, x = UOp.placeholder(0, dtypes.float32, (16,)), UOp.placeholder(1, dtypes.float32, (16 * 1024,))
  fxn = {"elementwise": elementwise_kernel(16, None), "reduce": reduce_kernel(16, 1024),
         "index": gather_kernel(16)}[kind]
  spec = get_program(fxn(out, x), ren)
  assert max_nesting(spec.src) <= 4 * ren.max_nest

def test_a_chain_of_129_steps_stays_under_the_nesting_limit():
  """The reported chain, rendered: 129 steps of x*a+b nested 258 brackets deep, past clang's maximum of 256."""
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  out, x = UOp.placeholder(0, dtypes.float32, (4,)), UOp.placeholder(1, dtypes.float32, (4,))
  i = UOp.range(4, 0, AxisType.GLOBAL)
  v = x.index(i).load()
  for _ in range(129): v = v * UOp.const(dtypes.float32, 1.0001) + UOp.const(dtypes.float32, 0.5)
  src = get_program(out.index(i).store(v).end(i).sink(arg=KernelInfo("chain129", None)), CRenderer()).src
  body = [ln for ln in src.splitlines() if "data1" in ln or "val" in ln]
  assert max(max_nesting(ln) for ln in body) <= CRenderer.max_nest + 1
  # one name per max_nest levels
  assert 129 * 2 // CRenderer.max_nest - 1 <= src.count("float val") <= 129 * 2 // CRenderer.max_nest + 1

def test_short_expressions_are_not_named():
  """Naming is for depth (and values used twice), not a variable per op: a short chain stays one expression."""
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  out, x = UOp.placeholder(0, dtypes.float32, (4,)), UOp.placeholder(1, dtypes.float32, (4,))
  i = UOp.range(4, 0, AxisType.GLOBAL)
  src = get_program(out.index(i).store(float_chain(x.index(i).load(), 5)).end(i).sink(arg=KernelInfo("short", None)),
                    CRenderer()).src
  assert "val" not in src and "data0[g0] = " in src

# ---- compiled and run

@needs_values
@pytest.mark.parametrize("kind", ["elementwise", "reduce", "index"])
def test_5000_deep_custom_kernel_runs(kind):
  rng = np.random.default_rng(0)
  x = rng.uniform(-1, 1, 16 * 64).astype(np.float32)
  fxn = {"elementwise": elementwise_kernel(16, None), "reduce": reduce_kernel(16, 64), "index": gather_kernel(16)}[kind]
  got = Tensor.zeros(16).contiguous().realize().custom_kernel(Tensor(x), fxn=fxn)[0].numpy()
  if kind == "elementwise": ref = numpy_chain(x[:16])
  elif kind == "reduce": ref = numpy_chain(x.reshape(16, 64)).sum(1)
  else: ref = x[(np.arange(16) + 7 * DEEP) % 16]
  # -ffp-contract=fast fuses x*A+B into one rounding where numpy rounds twice: 5000 steps drift by ~1e-5
  np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)

@needs_values
def test_129_step_chain_end_to_end():
  """The report: 129 steps of x*1.0001+0.5 failed in clang and printed the whole source."""
  from teeny.helpers import GlobalCounters
  x0 = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
  x, ref = Tensor(x0), x0.copy()
  for _ in range(129):
    x = x * 1.0001 + 0.5
    ref = ref * np.float32(1.0001) + np.float32(0.5)
  GlobalCounters.reset()
  np.testing.assert_allclose(x.numpy(), ref, rtol=1e-5)
  assert GlobalCounters.kernel_count == 1

@needs_values
@pytest.mark.parametrize("steps", [200, 1000])
def test_euler_loop_is_one_kernel(steps):
  """x += 0.01 * -x, `steps` times, lazily: one fused kernel, scheduled and rendered under the default recursion
  limit."""
  from teeny.helpers import GlobalCounters
  x0 = np.linspace(-2, 2, 64, dtype=np.float32)
  x, ref = Tensor(x0), x0.copy()
  for _ in range(steps):
    x = x + 0.01 * (-x)
    ref = ref + np.float32(0.01) * (-ref)
  GlobalCounters.reset()
  np.testing.assert_allclose(x.numpy(), ref, rtol=1e-4, atol=1e-6)
  assert GlobalCounters.kernel_count == 1

# ---- compile errors: short, naming the kernel

BROKEN = {"C": "this is not C {0};"}

def _broken(out: UOp, x: UOp) -> UOp:
  i = UOp.range(4, 0, AxisType.GLOBAL)
  bad = UOp.custom(BROKEN, x.index(i).load(), dtype=dtypes.float32)
  return out.index(i).store(bad).end(i).sink(arg=KernelInfo("broken_kernel", ()))

@needs_values
def test_compile_error_names_the_kernel_and_the_first_errors():
  with pytest.raises(RuntimeError) as e, Context(CACHELEVEL=0):
    Tensor.zeros(4).contiguous().realize().custom_kernel(Tensor.ones(4), fxn=_broken)[0].realize()
  msg = str(e.value)
  assert "broken_kernel" in msg and "error" in msg.lower()
  assert "DEBUG=4" in msg, "the message should say how to see the whole source"
  assert "data0[g0] = val1" not in msg and len(msg.splitlines()) <= 14, f"the whole source was dumped:\n{msg}"

@needs_values
def test_compile_error_has_the_source_at_debug_4():
  import contextlib, io
  with pytest.raises(RuntimeError) as e, Context(CACHELEVEL=0, DEBUG=4), contextlib.redirect_stdout(io.StringIO()):
    Tensor.zeros(4).contiguous().realize().custom_kernel(Tensor.ones(4), fxn=_broken)[0].realize()
  # the numbered source: its last line (the store), which no compiler error line quotes
  assert "broken_kernel" in str(e.value) and "data0[g0] = val1" in str(e.value)

def test_compile_error_message_cuts_long_lines():
  from teeny.device import compile_error
  src = ("#include <math.h>\nvoid k_9(float* restrict data0, int core, int ncores) {\n  data0[0] = "
         + "(" * 300 + "1" + ")" * 300 + ";\n}\n")
  log = ("<stdin>:3:270: error: bracket nesting level exceeded maximum of 256\n" + src.splitlines()[2] + "\n"
         + " " * 270 + "^\n")
  log += "".join(f"<stdin>:3:{k}: error: more\n" for k in range(40))
  with Context(DEBUG=0): msg = compile_error("C compile (clang)", src, log)
  assert msg.startswith("C compile (clang) failed for kernel k_9:")
  assert "bracket nesting level exceeded" in msg and max(len(ln) for ln in msg.splitlines()) <= 250
  assert "more lines of compiler output" in msg and "#include" not in msg
