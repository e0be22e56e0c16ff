"""Optimisations as data (teeny/codegen/opt.py): Opt lists chosen by the heuristics, applied exactly when a kernel
names its own, checked (KernelOptError naming axis and size), recorded on the ProgramSpec, and part of the program
cache key. Values are compared with numpy on the CPU, and on OpenCL (PoCL) for the GPU-only Opts."""
import re
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers import needs_values, toolchain
from teeny import Context, Device, Tensor
from teeny.codegen.kernel import get_program
from teeny.codegen.opt import KernelOptError, Opt, OptOps, apply_opts, hand_coded_opts
from teeny.codegen.render.c import CRenderer
from teeny.dtype import dtypes
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp

U, UN, L, G, P, S, NL = (OptOps.UPCAST, OptOps.UNROLL, OptOps.LOCAL, OptOps.GROUP, OptOps.PADTO, OptOps.SWAP,
                         OptOps.NOLOCALS)
M, K, N = 24, 40, 36

def matmul_fxn(opts, m=M, k=K, n=N, red=Ops.ADD):
  """out[i, j] = red_k a[i, k] * b[k, j]: axes 0 (i, GLOBAL), 1 (j, GLOBAL), 2 (k, REDUCE)."""
  def fxn(out: UOp, a: UOp, b: UOp) -> UOp:
    i, j, kk = UOp.range(m, 0, AxisType.GLOBAL), UOp.range(n, 1, AxisType.GLOBAL), UOp.range(k, 2, AxisType.REDUCE)
    acc = UOp(Ops.REDUCE, dtypes.float32, (a.index(i * k + kk).load() * b.index(kk * n + j).load(), kk), red)
    return out.index(i * n + j).store(acc).end(i, j).sink(arg=KernelInfo(name="mm", opts_to_apply=opts))
  return fxn

def ref(a, b, red=Ops.ADD):
  return (a[:, :, None] * b[None, :, :]).sum(1) if red is Ops.ADD else (a[:, :, None] * b[None, :, :]).max(1)

def run_mm(opts, dev=None, red=Ops.ADD, m=M, k=K, n=N):
  rng = np.random.default_rng(0)
  a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
  out = Tensor.zeros(m * n, device=dev).contiguous().realize()
  got = out.custom_kernel(Tensor(a.reshape(-1), device=dev), Tensor(b.reshape(-1), device=dev),
                          fxn=matmul_fxn(opts, m, k, n, red))[0]
  return got, ref(a.astype(np.float64), b.astype(np.float64), red)

def mm_ast(opts, m=M, k=K, n=N, red=Ops.ADD) -> UOp:
  ph = [UOp.placeholder(0, dtypes.float32, (m * n,)), UOp.placeholder(1, dtypes.float32, (m * k,)),
        UOp.placeholder(2, dtypes.float32, (k * n,))]
  return matmul_fxn(opts, m, k, n, red)(*ph)

def test_opt_is_frozen_data():
  o = Opt(U, 1, 4)
  assert o == Opt(OptOps.UPCAST, 1, 4) and hash(o) == hash(Opt(U, 1, 4))
  with pytest.raises(AttributeError): o.arg = 8
  assert KernelInfo("k", [o]).opts_to_apply == (o,), "a list is stored as a tuple (the SINK must hash)"

# ---- applied exactly, values against numpy

OPT_LISTS = {
  "none": [], "upcast_out": [Opt(U, 1, 4)], "upcast_both": [Opt(U, 1, 4), Opt(U, 0, 8)], "unroll_out": [Opt(UN, 1, 6)],
  "upcast_reduce": [Opt(U, 2, 8)], "unroll_reduce": [Opt(UN, 2, 4)], "pad_out": [Opt(P, 1, 16)],
  "pad_reduce": [Opt(P, 2, 16)], "pad_then_upcast": [Opt(P, 1, 16), Opt(U, 1, 16)], "swap": [Opt(S, 0, 1)],
  "swap_upcast": [Opt(S, 0, 1), Opt(U, 0, 4)],
  "everything": [Opt(P, 2, 32), Opt(U, 2, 4), Opt(UN, 1, 3), Opt(U, 0, 2), Opt(S, 0, 1)],
  "loop": [Opt(OptOps.LOOP, 1, 4)], "blocked": [Opt(U, 1, 4), Opt(U, 0, 2), Opt(S, 0, 1), Opt(OptOps.LOOP, 0, 3)],
  "stage_b": [Opt(U, 1, 4), Opt(U, 0, 2), Opt(OptOps.STAGE, None, 2)],
  "stage_a": [Opt(U, 1, 4), Opt(OptOps.STAGE, None, 1)],
  "stage_swapped": [Opt(S, 0, 1), Opt(U, 0, 4), Opt(OptOps.STAGE, None, 2)],
  "stage_plain": [Opt(OptOps.STAGE, None, 2)],
  "stage_upcast_reduce": [Opt(U, 2, 4), Opt(U, 1, 4), Opt(OptOps.STAGE, None, 2)],
}

@needs_values
@pytest.mark.parametrize("name", list(OPT_LISTS))
def test_opt_list_values(name):
  if name.startswith("stage") and getattr(Device[Device.DEFAULT].renderer, "is_gpu", False):
    pytest.skip("STAGE is a C-renderer Opt (GPUs stage through LOCAL/shared memory instead)")
  got, want = run_mm(OPT_LISTS[name])
  np.testing.assert_allclose(got.numpy().reshape(M, N), want, rtol=1e-5, atol=1e-5)

@needs_values
@pytest.mark.parametrize("opts", [[Opt(P, 2, 16)], [Opt(U, 2, 8)], [Opt(P, 1, 16), Opt(UN, 2, 4)]], ids=str)
def test_opt_list_values_max(opts):
  """A padded max must not see the padding's zeros (the inputs are all negative here)."""
  got, want = run_mm(opts, red=Ops.MAX)
  np.testing.assert_allclose(got.numpy().reshape(M, N), want, rtol=1e-6)

def test_applied_list_is_recorded_and_shapes_the_code():
  p = get_program(mm_ast([Opt(U, 1, 4), Opt(UN, 2, 4)]), CRenderer())
  assert p.opts == (Opt(U, 1, 4), Opt(UN, 2, 4))
  assert p.uops[-1].op is Ops.SINK and p.uops[-1].arg.opts_to_apply == p.opts
  assert "for (long u101 = 0; u101 < 4; u101++)" in p.src and "r2 < 10" in p.src
  assert get_program(mm_ast(()), CRenderer()).opts == () and "u10" not in get_program(mm_ast(()), CRenderer()).src

def test_padded_axis_masks_stores_and_loads():
  src = get_program(mm_ast([Opt(P, 1, 16)]), CRenderer()).src
  assert "g1 < 48" in src and "(g1<36)" in src, src

# ---- heuristics return lists

def scheduled(t: Tensor) -> UOp:
  items = [si for si in t.schedule() if si.kind == "kernel"]
  assert len(items) == 1
  return items[0].ast

def test_heuristics_return_opts_for_matmul():
  a, b = Tensor(np.ones((64, 48), np.float32)), Tensor(np.ones((48, 64), np.float32))
  p = get_program(scheduled(a @ b), CRenderer())
  assert [o.op for o in p.opts] == [U, U] and sorted(o.arg for o in p.opts) == [4, 16], p.opts
  assert all(isinstance(o.axis, int) for o in p.opts)

def test_heuristics_matmul_tile_rows_follow_vector_registers_and_stage_far_rows():
  """A x B's register tile: 16 columns (two AVX vectors) by 4 rows where the target has 16 vector registers, by 8 where
  it has 32 (16 accumulators: 18-28% faster on a Sapphire Rapids, interleaved runs); B's rows packed (STAGE) when
  consecutive reduce steps read them STAGE_STRIDE_BYTES or more apart."""
  def opts(k, n, regs):
    a, b = Tensor(np.ones((64, k), np.float32)).realize(), Tensor(np.ones((k, n), np.float32)).realize()
    return get_program(scheduled(a @ b), CRenderer(vector_bytes=32, vector_registers=regs)).opts
  assert sorted(o.arg for o in opts(48, 64, 16)) == [4, 16] and sorted(o.arg for o in opts(48, 64, 32)) == [8, 16]
  assert not any(o.op is OptOps.STAGE for o in opts(48, 256, 32)), "rows 1 KB apart: not packed"
  far = opts(48, 512, 32)
  assert far[-1] == Opt(OptOps.STAGE, None, 2) and [o.op for o in far[:-1]] == [U, U], far

@needs_values
@pytest.mark.parametrize("m,k,n", [(40, 24, 512), (16, 64, 1024), (33, 17, 520)])
def test_staged_matmul_values(m, k, n):
  rng = np.random.default_rng(2)
  a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
  np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a.astype(np.float64) @ b.astype(np.float64),
                             rtol=1e-5, atol=1e-4)

def test_heuristics_dot_tile_for_transposed_matmul():
  """x @ w.T (a Linear's forward): both loads run along the reduce axis only, so the tile is A x B outputs, each a
  vector of lanes along the reduce (UPCAST on it); the partial sums live in one accumulator array updated inside the
  reduce loop and combined after it (not a dot product per output)."""
  x, w = Tensor(np.ones((32, 64), np.float32)).realize(), Tensor(np.ones((16, 64), np.float32)).realize()
  ast = scheduled(x @ w.T)
  red_axis = next(u.arg[0] for u in ast.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE)
  p = get_program(ast, CRenderer(vector_bytes=32, vector_registers=16))
  assert p.opts[0] == Opt(U, red_axis, 8) and sorted(o.arg for o in p.opts[1:]) == [2, 4], p.opts
  p32 = get_program(ast, CRenderer(vector_bytes=32, vector_registers=32))
  assert sorted(o.arg for o in p32.opts[1:]) == [4, 4], p32.opts
  body = p.src[p.src.index("acc"):]
  update = body.index("for (long r")
  assert body.index("for (long u10", update) > update, "the tile's loops run inside the reduce loop\n" + p.src

@needs_values
@pytest.mark.parametrize("m,k,n", [(32, 64, 16), (8, 784, 128), (12, 40, 20), (6, 24, 9), (33, 64, 16)])
def test_transposed_matmul_values(m, k, n):
  rng = np.random.default_rng(1)
  a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (n, k)).astype(np.float32)
  got = (Tensor(a) @ Tensor(b).T).numpy()
  np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5, atol=1e-4)

def test_heuristics_lane_split_for_max():
  ast = scheduled(Tensor(np.ones((4, 1024), np.float32)).max(1))
  red_axis = next(u.arg[0] for u in ast.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE)
  p = get_program(ast, CRenderer())
  assert p.opts == (Opt(U, red_axis, 16),), p.opts

def test_heuristics_apply_nothing():
  ast = mm_ast(None, n=64)
  assert hand_coded_opts(ast, CRenderer()) and ast.arg.opts_to_apply is None, "choosing rewrites nothing"

def test_fixed_list_skips_heuristics_and_noopt():
  a, b = Tensor(np.ones((64, 48), np.float32)), Tensor(np.ones((48, 64), np.float32))
  ast = scheduled(a @ b)
  with Context(NOOPT=1): assert get_program(ast, CRenderer()).opts == ()
  assert get_program(ast.replace(arg=KernelInfo(ast.arg.name, ())), CRenderer()).opts == ()

@needs_values
def test_program_cache_key_follows_noopt():
  from teeny.engine.realize import get_runner
  a, b = Tensor(np.ones((64, 48), np.float32)), Tensor(np.ones((48, 64), np.float32))
  ast = scheduled(a @ b)
  dev = Device.DEFAULT
  _, s1 = get_runner(dev, ast)
  with Context(NOOPT=1): _, s2 = get_runner(dev, ast)
  assert s1.opts and s2.opts == () and s1.src != s2.src

# ---- errors name the axis and its size

@pytest.mark.parametrize("opt, match", [
  (Opt(U, 1, 5), r"UPCAST axis 1 \(size 36\) by 5: 36 is not a multiple of 5"),
  (Opt(U, 7, 2), r"no axis 7; its axes .* 0 \(GLOBAL, 24\), 1 \(GLOBAL, 36\), 2 \(REDUCE, 40\)"),
  (Opt(U, 1, 1), r"amount must be an int >= 2"),
  (Opt(P, 0, 8), r"PADTO axis 0 \(size 24\) to 8: already a multiple"),
  (Opt(S, 0, 2), r"SWAP axis 2 \(size 40\) is a REDUCE range"),
  (Opt(L, 0, 4), r"LOCAL needs a GPU renderer"),
  (Opt(G, 2, 64), r"GROUP needs a GPU renderer"),
  (Opt(NL), r"NOLOCALS needs a GPU renderer"),
  (Opt(OptOps.TC, 0, 0), r"TC: CRenderer has no tensor cores"),
], ids=lambda x: x if isinstance(x, str) else repr(x))
def test_opt_that_does_not_fit_raises(opt, match):
  with pytest.raises(KernelOptError, match=match): get_program(mm_ast([opt]), CRenderer())
  assert issubclass(KernelOptError, ValueError)

def test_gpu_opt_errors():
  r = Device["NULL:CUDA"].renderer
  with pytest.raises(KernelOptError, match=r"GROUP axis 2 \(size 40\): the lane count must be a power of two"):
    apply_opts(mm_ast(None), [Opt(G, 2, 48)], r)
  with pytest.raises(KernelOptError, match=r"GROUP axis 2 \(size 40\): only a kernel of GLOBAL and REDUCE"):
    apply_opts(mm_ast(None), [Opt(U, 1, 4), Opt(G, 2, 32)], r)
  with pytest.raises(KernelOptError, match=r"LOCAL axis 2 \(size 40\) is a REDUCE range"):
    apply_opts(mm_ast(None), [Opt(L, 2, 8)], r)

# ---- GPU Opts: rendered through NULL:<lang>, values on OpenCL

def test_gpu_opts_shape_the_launch():
  r = Device["NULL:CUDA"].renderer
  p = get_program(mm_ast([Opt(G, 2, 32)]), r)
  assert p.local_size == [32, 1, 1] and "smem0[32]" in p.src and "for (int s = 16; s > 0" in p.src
  p = get_program(mm_ast([Opt(L, 1, 12), Opt(L, 0, 8)]), r)
  assert p.global_size == [3, 3, 1] and p.local_size == [8, 12, 1], (p.global_size, p.local_size)
  p = get_program(mm_ast([Opt(NL)]), r)
  assert p.local_size == [1, 1, 1] and p.global_size == [N, M, 1], (p.global_size, p.local_size)

@pytest.fixture(scope="module")
def cl_device():
  toolchain("CL")
  return "CL"

@pytest.mark.parametrize("opts", [[Opt(G, 2, 16)], [Opt(G, 2, 64)], [Opt(L, 1, 12), Opt(L, 0, 8)], [Opt(NL)],
                                  [Opt(U, 1, 4), Opt(L, 0, 4)], [Opt(P, 2, 64), Opt(G, 2, 32)]], ids=str)
def test_gpu_opt_values_on_cl(cl_device, opts):
  got, want = run_mm(opts, dev=cl_device)
  np.testing.assert_allclose(got.numpy().reshape(M, N), want, rtol=1e-5, atol=1e-5)

def test_gpu_heuristics_dot_tile_for_many_outputs(cl_device, monkeypatch):
  """x @ w.T on a GPU without shared-memory tiles (SMEM=0 on CUDA; OpenCL): a 4x4 register tile on the two output axes
  when there are GPU_DOT_MIN_OUTPUTS outputs or more (a grouped reduce per output was 3.8x slower on the H200), the
  grouped reduce below that; values on PoCL."""
  from teeny.codegen.render.cuda import CUDARenderer
  import teeny.codegen.opt as opt
  monkeypatch.setattr(opt, "SMEM", 0)
  def opts(m, n, k=256):
    x = Tensor(np.ones((m, k), np.float32), device="NULL").realize()
    w = Tensor(np.ones((n, k), np.float32), device="NULL").realize()
    return get_program(scheduled(x @ w.T), CUDARenderer()).opts
  assert [o.op for o in opts(512, 256)] == [U, U] and sorted(o.arg for o in opts(512, 256)) == [4, 4]
  assert [o.op for o in opts(64, 96)] == [G]
  rng = np.random.default_rng(3)
  a, b = rng.uniform(-1, 1, (256, 64)).astype(np.float32), rng.uniform(-1, 1, (260, 64)).astype(np.float32)
  got = (Tensor(a, device=cl_device) @ Tensor(b, device=cl_device).T).numpy()
  np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5, atol=1e-4)

# ---- DEBUG output

def test_debug3_shows_applied_opts(capsys):
  a, b = Tensor(np.ones((64, 48), np.float32), device="NULL"), Tensor(np.ones((48, 64), np.float32), device="NULL")
  with Context(DEBUG=3): (a @ b + 0.5).realize()
  out = capsys.readouterr().out
  assert re.search(r"r_64_64_48 opts: \[Opt\(OptOps.UPCAST, \d+, 16\), "
                   r"Opt\(OptOps.UPCAST, \d+, 4\)\]", out), out[-2000:]

def test_debug5_prints_each_pass(capsys):
  with Context(DEBUG=5): get_program(mm_ast([Opt(U, 1, 4)]), CRenderer())
  out = capsys.readouterr().out
  from teeny.codegen.kernel import PASSES
  for name, _ in PASSES: assert f"--- mm after {name}" in out
  assert "--- mm linearized" in out

def test_loop_opt_blocks_the_loops():
  """LOOP splits an axis into an outer GLOBAL part and an inner plain loop (id 300 + axis) inside the GLOBAL loops; with
  a SWAP first, a block of columns is the cores' loop and the rows run inside it. Refused on a REDUCE axis."""
  src = get_program(mm_ast([Opt(U, 1, 4), Opt(U, 0, 2), Opt(S, 0, 1), Opt(OptOps.LOOP, 0, 3)]), CRenderer()).src
  assert "for (long i300 = 0; i300 < 3; i300++)" in src
  assert src.index("for (long g0") < src.index("for (long g1") < src.index("for (long i300") < src.index("for (long r2")
  # the tile's vector loads depend on the cores' loop: it keeps constant bounds (else clang gathers them lane by lane)
  assert "for (long g0 = 0; g0 < 3; g0++)" in src and "continue;" in src
  with pytest.raises(KernelOptError, match="LOOP axis 2"):
    apply_opts(mm_ast(None), [Opt(OptOps.LOOP, 2, 4)], CRenderer())

def test_plain_tile_keeps_narrowed_core_bounds():
  src = get_program(mm_ast([Opt(U, 1, 4), Opt(U, 0, 2)]), CRenderer()).src
  assert "g0 = g0_lo; g0 < g0_hi" in src and "continue;" not in src

def test_stage_packs_the_load_and_runs_it_per_block():
  """STAGE copies the slice a reduce's load reads into a kernel-private array, laid out in the order the reduce reads
  it, once per iteration of the GLOBAL loops the load depends on: those it does not depend on become plain loops
  inside."""
  src = get_program(mm_ast([Opt(U, 1, 4), Opt(OptOps.STAGE, None, 2)]), CRenderer()).src
  decl = re.search(r"float (local\d+)\[(\d+)\]", src)
  assert decl and int(decl.group(2)) == K * 4, src                    # the reduce's 40 steps x the tile's 4 columns
  loc = decl.group(1)
  fill, use = src.index(f"{loc}[(") , src.index(f"*{loc}[")
  assert src.index("for (long g1") < fill < src.index("for (long i0") < use, src   # copied per block of columns
  assert "data2[" in src[fill - 200:fill + 200] and "data2[" not in src[use:]

@pytest.mark.parametrize("opts,match", [
  ([Opt(OptOps.STAGE, None, 0)], "exactly one"),                                   # the output is not read
  ([Opt(OptOps.STAGE, None, 2), Opt(U, 1, 4)], "STAGE must be the last")], ids=str)
def test_stage_refused(opts, match):
  with pytest.raises(KernelOptError, match=match): apply_opts(mm_ast(None), opts, CRenderer())

def test_stage_refused_without_reuse():
  """A row sum's load depends on every GLOBAL range: a copy would be read once, so STAGE is refused."""
  out, a = UOp.placeholder(0, dtypes.float32, (8,)), UOp.placeholder(1, dtypes.float32, (64,))
  i, k = UOp.range(8, 0, AxisType.GLOBAL), UOp.range(8, 1, AxisType.REDUCE)
  ast = out.index(i).store(UOp(Ops.REDUCE, dtypes.float32, (a.index(i * 8 + k).load(), k), Ops.ADD)).sink(
    arg=KernelInfo("s"))
  with pytest.raises(KernelOptError, match="GLOBAL ranges but not all"):
    apply_opts(ast, [Opt(OptOps.STAGE, None, 1)], CRenderer())

def test_stage_refused_on_gpus_and_past_l2():
  from teeny.codegen.render.cuda import CUDARenderer
  with pytest.raises(KernelOptError, match="C renderer"):
    apply_opts(mm_ast(None), [Opt(OptOps.STAGE, None, 2)], CUDARenderer())
  small = CRenderer(cache_bytes={"L1d": 1 << 10, "L2": 256, "L3": 1 << 20})
  with pytest.raises(KernelOptError, match="half of L2"): apply_opts(mm_ast(None), [Opt(OptOps.STAGE, None, 2)], small)

# ---- merge_reduces: the ranges of one reduction over contiguous memory become one range

def _reduce_ranges(t: Tensor, dev: str = "NULL:CUDA") -> list[list[int]]:
  from teeny.codegen.kernel import normalized
  si = [s for s in t.schedule() if s.kind == "kernel"][-1]
  n = normalized(si.ast, Device[dev].renderer)
  return [[r.src[0].arg for r in u.src[1:]] for u in n.toposort if u.op is Ops.REDUCE]

def test_merge_reduces_weight_gradient_shape():
  """A Linear's weight gradient over (B, T, D) inputs sums over batch and time: one reduce range of B*T after
  normalisation (two made the GPU heuristics group over the batch alone: 2.4 ms for 256x256x4096 on the H200)."""
  a, g = Tensor.empty(4, 8, 16, device="NULL:CUDA"), Tensor.empty(4, 8, 12, device="NULL:CUDA")
  assert _reduce_ranges((a.reshape(4, 8, 16, 1) * g.reshape(4, 8, 1, 12)).sum((0, 1))) == [[32]]
  # not where the memory is not contiguous over the two axes: a transposed operand keeps both ranges
  at = Tensor.empty(8, 4, 16, device="NULL:CUDA").permute(1, 0, 2)
  assert _reduce_ranges((at.reshape(4, 8, 16, 1) * g.reshape(4, 8, 1, 12)).sum((0, 1))) == [[4, 8]]

@needs_values
@pytest.mark.parametrize("shape,axes", [((3, 5, 7), (0, 1)), ((3, 5, 7), (1, 2)), ((2, 3, 4, 5), (0, 1, 2)),
                                        ((2, 3, 4, 5), (1, 3)), ((6, 1, 4), (0, 1))], ids=str)
def test_merge_reduces_values(shape, axes):
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).sum(axes).numpy(), x.sum(axes), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(Tensor(x).max(axes).numpy(), x.max(axes), rtol=0, atol=0)
  w = np.random.default_rng(1).standard_normal(shape[-1:]).astype(np.float32)
  np.testing.assert_allclose((Tensor(x) * Tensor(w)).sum(axes).numpy(), (x * w).sum(axes), rtol=1e-5, atol=1e-5)

@needs_values
@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=2, max_size=4), st.data())
def test_merge_reduces_random_reductions(shape, data):
  """Reductions over random axis sets of random shapes, and of a permuted view (non-contiguous axes keep their ranges),
  against numpy: merging reduce ranges never changes a value."""
  shape = tuple(shape)
  axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
  perm = tuple(data.draw(st.permutations(range(len(shape)))))
  x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
  for t, ref in ((Tensor(x), x), (Tensor(x).permute(*perm), x.transpose(perm))):
    np.testing.assert_allclose(t.sum(axes).numpy(), ref.sum(axes), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(t.max(axes).numpy(), ref.max(axes))
    np.testing.assert_allclose((t * t).sum(axes).numpy(), (ref * ref).sum(axes), rtol=1e-5, atol=1e-5)
