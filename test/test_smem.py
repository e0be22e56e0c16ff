"""Shared-memory float32 tiles: the SMEM Opt (teeny/codegen/tc.py) rebuilds a float32 matmul (TF32 off: exact) as
block tiles staged through shared memory by cp.async, each thread a register tile of multiply-adds fed by 16-byte
shared-memory loads. It shares the TC Opt's builder (grid, copies, pipeline, epilogue).

Without a GPU (CI): the heuristics choose it for float32 matmuls rendered for NULL:CUDA and NVRTC compiles them; every
block tile's values, over all four operand layouts, ragged sizes, a batch and a fused epilogue, come from the numpy
interpreter (gpu_interp.py); what it cannot serve is refused with a reason. On a CUDA GPU (DEV=CUDA): values against
numpy over random shapes, layouts and batches, and gradients."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Device, Tensor, dtypes
from teeny.codegen.kernel import get_program, normalized
from teeny.codegen.opt import KernelOptError, Opt, OptOps, apply_opt
from teeny.codegen.search import actions
from teeny.codegen.tc import SMEM_CONFIGS, tc_match
from teeny.uop.ops import Ops
from helpers import toolchain
from test_tc import _ast, operands as tc_operands, specs as kernel_specs

NULL_CUDA = "NULL:CUDA"

def operands(dev: str, m: int, n: int, k: int, lay: str = "nn", batch: tuple = (), seed: int = 0):
  """(A, B, a, b): float32 teeny tensors (*batch, m, k) and (*batch, k, n) stored row-major ('n') or transposed
  ('t'), and their numpy values (test_tc.py's operands, in float32)."""
  return tc_operands(dev, m, n, k, dtypes.float32, lay, batch, np.random.default_rng(seed))

def smem_specs(t: Tensor, dev: str = NULL_CUDA) -> list:
  return [p for p in kernel_specs(t, dev) if any(o.op is OptOps.SMEM for o in p.opts)]

# ---- rendered and compiled, no GPU needed

@pytest.mark.parametrize("lay", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("shape", [(256, 128, 512), (100, 72, 40)], ids=str)
def test_smem_chosen_rendered_compiled(shape, lay):
  m, n, k = shape
  a, b, _, _ = operands(NULL_CUDA, m, n, k, lay)
  p, = smem_specs(a @ b)
  assert "teeny_cp_async16(local0" in p.src and "teeny_lds128(" in p.src and "__syncthreads()" in p.src
  assert "mma" not in p.src   # CUDA cores: exact float32
  assert p.local_size == [SMEM_CONFIGS[p.opts[0].arg].threads, 1, 1] and p.smem > 0
  assert p.ops >= 2 * m * n * k
  c = toolchain("sm_90")
  assert c.valid_binary(c.compile(p.src))

def test_smem_heuristics_and_what_they_leave():
  # a big product takes the largest tile that still gives the GPU enough blocks; small ones keep the plain tiles
  a, b, _, _ = operands(NULL_CUDA, 4096, 4096, 4096)
  p, = kernel_specs(a @ b)
  assert p.opts == (Opt(OptOps.SMEM, None, "128x128x16t8x8s3"),)
  a, b, _, _ = operands(NULL_CUDA, 16, 16, 16)
  assert not smem_specs(a @ b)
  # rows that may start unaligned (k = 9): plain loads instead of asynchronous 16-byte copies
  a, b, _, _ = operands(NULL_CUDA, 256, 256, 9)
  p, = smem_specs(a @ b)
  assert "teeny_copy16_f32(local0" in p.src and "teeny_cp_async16(local0" in p.src   # (B's rows of 256 are aligned)
  # not a matmul
  x = Tensor(np.ones((512, 512), np.float32), device=NULL_CUDA)
  assert not smem_specs(x.sum(1)) and not smem_specs((x * x).sum(0))
  # 16-bit inputs take tensor cores, not this
  h = x.cast(dtypes.float16).contiguous().realize()
  assert not smem_specs(h @ h)

def test_smem_switch_off(monkeypatch):
  import teeny.codegen.opt as opt
  monkeypatch.setattr(opt, "SMEM", 0)
  a, b, _, _ = operands(NULL_CUDA, 256, 256, 256)
  assert not smem_specs(a @ b)

@pytest.mark.parametrize("make,dev,match", [
  (lambda d: operands(d, 64, 64, 64)[:2], "CPU", "CRenderer has no shared-memory float32 tiles"),
  (lambda d: operands(d, 64, 64, 64)[:2], "NULL:CL", "has no shared-memory float32 tiles"),
  (lambda d: (Tensor(np.ones((64, 64), np.float16), device=d),) * 2, NULL_CUDA, "two float32 loads"),
], ids=["cpu", "cl", "float16"])
def test_smem_refused_with_a_reason(make, dev, match):
  a, b = make(dev)
  with pytest.raises(KernelOptError, match=match):
    apply_opt(_ast(a @ b, dev), Opt(OptOps.SMEM, None, None), Device[dev].renderer)

def test_smem_errors_name_the_problem():
  a, b, _, _ = operands(NULL_CUDA, 64, 64, 64)
  ast, r = _ast(a @ b), Device[NULL_CUDA].renderer
  with pytest.raises(KernelOptError, match="unknown block tile 'huge'"):
    apply_opt(ast, Opt(OptOps.SMEM, None, "huge"), r)
  tiled = apply_opt(ast, Opt(OptOps.SMEM, None, None), r)
  with pytest.raises(KernelOptError, match="after STAGE|tiled already"):
    apply_opt(tiled, Opt(OptOps.SMEM, None, None), r)

def test_beam_tries_every_smem_tile():
  a, b, _, _ = operands(NULL_CUDA, 256, 256, 256)
  acts = actions(_ast(a @ b), Device[NULL_CUDA].renderer)
  assert {o.arg for o in acts if o.op is OptOps.SMEM} == set(SMEM_CONFIGS)
  assert not [o for o in actions(_ast(a @ b, "CPU"), Device["CPU"].renderer) if o.op is OptOps.SMEM]

# ---- the kernels' values without a GPU: played by the numpy interpreter (gpu_interp.py)

def interpret(m: int, n: int, k: int, lay: str, tile: str | None, batch: tuple = (), seed: int = 0, epilogue=None,
              extra: np.ndarray | None = None, broadcast_b: bool = False):
  """(result, numpy's value) of the SMEM kernel of A @ B (then `epilogue`, on teeny and numpy values alike; `extra`
  the value of the one other buffer it reads); broadcast_b: B has no batch dims (one matrix for every batch entry)."""
  from gpu_interp import run_kernel
  a, b, na, nb = operands(NULL_CUDA, m, n, k, lay, batch, seed)
  if broadcast_b: _, b, _, nb = operands(NULL_CUDA, m, n, k, lay, (), seed + 1)
  out_t = a @ b if epilogue is None else epilogue(a @ b)
  si = [s for s in out_t.schedule() if s.kind == "kernel"][-1]
  r = Device[NULL_CUDA].renderer
  mt = tc_match(normalized(si.ast, r), fma=True)
  assert not isinstance(mt, str), mt
  p = get_program(si.ast, r, opts=[Opt(OptOps.SMEM, None, tile)] if tile else None)
  assert any(o.op is OptOps.SMEM for o in p.opts)
  stored = lambda x, t: np.ascontiguousarray(np.swapaxes(x, -1, -2) if t == "t" else x).ravel()
  out = next(e.src[0].src[0].arg[0] for e in si.ast.src if e.op is Ops.STORE)
  bufs = {mt.a.src[0].arg[0]: stored(na, lay[0]), mt.b.src[0].arg[0]: stored(nb, lay[1]),
          out: np.zeros(int(np.prod(batch + (m, n))), np.float32)}
  if extra is not None:
    slot, = [u.arg[0] for u in p.uops if u.op is Ops.DEFINE_GLOBAL and u.arg[0] not in bufs]
    bufs[slot] = extra
  run_kernel(p.uops, bufs, p.local_size[0])
  want = na @ nb if epilogue is None else epilogue(na @ nb)
  return bufs[out].reshape(batch + (m, n)), want

def aligned(m: int, n: int, k: int, lay: str) -> tuple[int, int, int]:
  """The sizes rounded up so that every stored row is a multiple of 4 float32 values (16 bytes), as SMEM needs:
  A's rows run along k ('n') or m ('t'), B's along n ('n') or k ('t')."""
  up = lambda x: -(-x // 4) * 4
  return (up(m) if lay[0] == "t" else m, up(n) if lay[1] == "n" else n,
          up(k) if lay[0] == "n" or lay[1] == "t" else k)

def _close(got, want, k):
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(k) * max(1.0, float(np.abs(want).max())))

@pytest.mark.parametrize("tile", list(SMEM_CONFIGS))
def test_every_smem_tile_interpreted(tile):
  """Each tile over a ragged size in m, n and k (masked copies and stores), with a layout that varies by tile, its
  rows 16-byte aligned (cp.async) for half the tiles and not (plain loads) for the others."""
  i = list(SMEM_CONFIGS).index(tile)
  lay = ["nn", "nt", "tn", "tt"][i % 4]
  got, want = interpret(*(aligned(70, 74, 42, lay) if i % 8 < 4 else (70, 74, 42)), lay, tile)
  _close(got, want, 44)

@pytest.mark.parametrize("case", [(64, 64, 64, "nn", None, (3,), False),
                                  (20, 16, 24, "tn", "64x64x8t4x4s2", (16,), False),
                                  (130, 260, 36, "nt", "128x128x16t8x8s3", (), False),
                                  (36, 40, 28, "nt", "64x64x16t4x4s2", (2, 3), True)], ids=str)
def test_smem_batched_interpreted(case):
  """Batches on the grid's z (one operand may be broadcast along them: a Linear over (batch, time, features))."""
  m, n, k, lay, tile, batch, bcast = case
  got, want = interpret(m, n, k, lay, tile, batch, broadcast_b=bcast)
  _close(got, want, k)

def test_smem_epilogue_interpreted():
  """A bias and a ReLU after the matmul run in the tile's stores (one kernel), masked at the ragged edge."""
  bias = np.linspace(-3, 3, 72, dtype=np.float32)
  def epi(x): return (x + (Tensor(bias, device=NULL_CUDA) if isinstance(x, Tensor) else bias)).relu() \
    if isinstance(x, Tensor) else np.maximum(x + bias, 0)
  got, want = interpret(40, 72, 56, "nn", "64x64x16t4x4s3", epilogue=epi, extra=bias)
  _close(got, want, 56)

def interpret_last(t: Tensor, inputs: dict, opts=None, renderer=None) -> np.ndarray:
  """The values of `t`, whose last scheduled kernel reads only the realized tensors in `inputs` (tensor -> raw numpy
  values: float32, or 16-bit values as their bits), run by gpu_interp."""
  from gpu_interp import run_kernel
  si = [s for s in t.schedule() if s.kind == "kernel"][-1]
  p = get_program(si.ast, renderer or Device[NULL_CUDA].renderer, opts=opts)
  by_buf = {x.uop.base: v for x, v in inputs.items()}
  bufs = {i: by_buf[b] if b in by_buf else np.zeros(b.arg[2], np.float32 if t.dtype == dtypes.float32 else np.uint16)
          for i, b in enumerate(si.bufs)}
  run_kernel(p.uops, bufs, p.local_size[0])
  return p, bufs[0].reshape(t.shape)

@pytest.mark.parametrize("dt,pads,tile", [("float32", ((0, 0), (0, 4)), "64x64x16t4x4s3"),
                                          ("float32", ((3, 5), (2, 2)), "128x64x32t8x4s3"),
                                          ("float16", ((0, 0), (0, 4)), "64x64x32w2x2s3"),
                                          ("bfloat16", ((3, 5), (8, 0)), "64x64x32w2x2s3")], ids=str)
def test_padded_operand_read_in_place_interpreted(dt, pads, tile):
  """A matmul whose operand is a padded view of memory (a.pad(...) @ b) is one tiled kernel: the operand's chunks are
  copied by bit masks of the padding (teeny_copy16m: the INDEX's gate, valued per element), no padded copy first."""
  from gpu_interp import to_bits, to_float
  d = {"float32": dtypes.float32, "float16": dtypes.float16, "bfloat16": dtypes.bfloat16}[dt]
  rng = np.random.default_rng(3)
  na, nb = rng.standard_normal((100, 60)).astype(np.float32), rng.standard_normal((76, 72)).astype(np.float32)
  if d != dtypes.float32: na, nb = to_float(to_bits(na, d), d), to_float(to_bits(nb, d), d)
  npad = np.pad(na, pads)
  nb = nb[:npad.shape[1]]
  a = Tensor.empty(*na.shape, dtype=d, device=NULL_CUDA).realize()
  b = Tensor.empty(*nb.shape, dtype=d, device=NULL_CUDA).realize()
  raw = (lambda v: v.ravel()) if d == dtypes.float32 else (lambda v: to_bits(v.ravel(), d))
  y = a.pad(pads) @ b
  assert len([s for s in y.schedule() if s.kind == "kernel"]) == 1
  op = OptOps.SMEM if d == dtypes.float32 else OptOps.TC
  p, got = interpret_last(y, {a: raw(na), b: raw(nb)}, opts=[Opt(op, None, tile)])
  assert "teeny_copy16m" in p.src
  if d != dtypes.float32: got = to_float(got, d)
  tol = 1e-5 if d == dtypes.float32 else 2e-2
  want = npad.astype(np.float64) @ nb.astype(np.float64)
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))

@settings(max_examples=15, deadline=None)
@given(st.integers(8, 40), st.integers(4, 40), st.integers(8, 40), st.tuples(*[st.integers(0, 9)] * 4),
       st.booleans(), st.sampled_from(["float32", "float16"]), st.integers(0, 2), st.integers(0, 2**31 - 1))
def test_padded_operands_interpreted_random(m, k, n, pads, transpose, dt, tile, seed):
  """Random sizes and pads on both operands (A padded along m and k, stored either way round; B along k), through a
  drawn tile (ragged edges included): the masked chunks against numpy."""
  from gpu_interp import to_bits, to_float
  d = {"float32": dtypes.float32, "float16": dtypes.float16}[dt]
  rng = np.random.default_rng(seed)
  pa = ((pads[0], pads[1]), (pads[2], 0))      # A (m, k) -> (m + p0 + p1, k + p2)
  kb = k + pads[2] - min(pads[3], k)           # B (kb, n) padded after by the rest of k
  pb = ((0, k + pads[2] - kb), (0, 0))
  na, nb = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((kb, n)).astype(np.float32)
  if d != dtypes.float32: na, nb = to_float(to_bits(na, d), d), to_float(to_bits(nb, d), d)
  raw = (lambda v: v.ravel()) if d == dtypes.float32 else (lambda v: to_bits(v.ravel(), d))
  a = Tensor.empty(*((k, m) if transpose else (m, k)), dtype=d, device=NULL_CUDA).realize()
  b = Tensor.empty(kb, n, dtype=d, device=NULL_CUDA).realize()
  y = (a.T if transpose else a).pad(pa) @ b.pad(pb)
  assert len([s for s in y.schedule() if s.kind == "kernel"]) == 1
  op = OptOps.SMEM if d == dtypes.float32 else OptOps.TC
  tiles = ["64x64x16t4x4s3", "64x64x8t4x4s2", "64x64x32t4x4s3"] if d == dtypes.float32 else \
          ["64x64x32w2x2s3", "64x64x64w2x2s4", "64x64x32w2x2s2"]
  try: p, got = interpret_last(y, {a: raw(np.ascontiguousarray(na.T) if transpose else na), b: raw(nb)},
                               opts=[Opt(op, None, tiles[tile])])
  except KernelOptError as e:   # (a refusal is no wrong answer: where a pad folds the product into a select)
    assert "product of two loads" in str(e), e
    return
  if d != dtypes.float32: got = to_float(got, d)
  want = np.pad(na, pa).astype(np.float64) @ np.pad(nb, pb).astype(np.float64)
  tol = 1e-5 if d == dtypes.float32 else 2e-2
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))

@pytest.mark.parametrize("arch", ["gfx1100", "gfx90a"])
def test_padded_operand_on_amd_interpreted_and_compiled(arch):
  """The same masked chunks rendered for HIP's WMMA and MFMA tiles (teeny_copy16m): values from the interpreter, and
  clang compiles the kernel for the target."""
  from gpu_interp import to_bits, to_float
  from teeny.codegen.render.hip import HIPRenderer
  from helpers import toolchain
  r, d = HIPRenderer(arch), dtypes.float16
  rng = np.random.default_rng(4)
  na, nb = (to_float(to_bits(rng.standard_normal(sh).astype(np.float32), d), d) for sh in ((40, 50), (56, 72)))
  a, b = Tensor.empty(40, 50, dtype=d, device="NULL:HIP").realize(), Tensor.empty(56, 72, dtype=d, device="NULL:HIP")
  b = b.realize()
  p, got = interpret_last(a.pad(((0, 0), (2, 4))) @ b, {a: to_bits(na.ravel(), d), b: to_bits(nb.ravel(), d)},
                          renderer=r)
  assert any(o.op is OptOps.TC for o in p.opts) and "teeny_copy16m(" in p.src
  want = np.pad(na, ((0, 0), (2, 4))).astype(np.float64) @ nb.astype(np.float64)
  np.testing.assert_allclose(to_float(got, d), want, rtol=2e-2, atol=2e-2 * np.abs(want).max())
  c = toolchain(arch)
  assert c.valid_binary(c.compile(p.src)) if hasattr(c, "valid_binary") else c.compile(p.src)

def test_chunk_gates_cross_rows():
  """_chunk_gates where a chunk may cross its contiguous group's innermost range (whole-group contiguity, rows of 6
  values in chunks of 4): each value's gate is the gate at its own position."""
  from teeny.codegen.tc import _chunk_gates
  from teeny.uop.ops import AxisType, UOp
  from teeny.uop.rewrite import graph_rewrite
  from teeny.uop.symbolic import symbolic
  r1, r2 = UOp.range(5, 20, AxisType.GLOBAL), UOp.range(6, 21, AxisType.GLOBAL)
  c = lambda v: UOp.const(dtypes.index, v)
  gate = (r2 < 4).alu(Ops.AND, (r1 * 2 + r2) < 9)   # an odd mask, to be read at each (r1, r2)
  ix = UOp(Ops.INDEX, dtypes.float32.ptr(), (UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), (0,)), r1 * 6 + r2, gate))
  flat = UOp.range(30, 22, AxisType.GLOBAL)
  for start in range(0, 28, 4):
    gs = _chunk_gates(ix, [([r1, r2], flat)], 0, 4)
    for e, g in enumerate(gs):
      if start + e >= 30: continue
      i1, i2 = divmod(start + e, 6)
      v = graph_rewrite(g.substitute({flat: c(start)}), symbolic)
      assert v.op is Ops.CONST and bool(v.arg) == (i2 < 4 and i1 * 2 + i2 < 9), (start, e, v)

@settings(max_examples=10, deadline=None)
@given(st.integers(2, 140), st.integers(2, 140), st.integers(2, 160), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(sorted(SMEM_CONFIGS)), st.booleans(), st.integers(0, 2**31 - 1))
def test_smem_values_interpreted_random(m, n, k, lay, tile, align, seed):
  if align: m, n, k = aligned(m, n, k, lay)
  got, want = interpret(m, n, k, lay, tile, seed=seed)
  _close(got, want, k)

# ---- values on a CUDA GPU (DEV=CUDA)

def _has_smem() -> bool:
  try: return bool(getattr(Device[Device.DEFAULT].renderer, "smem_tiles", False))
  except Exception: return False

needs_smem = pytest.mark.skipif(not _has_smem(), reason="the default device has no SMEM tiles (run with DEV=CUDA)")

@needs_smem
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 700), st.integers(1, 700), st.integers(1, 800), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from([(), (2,), (2, 3)]), st.booleans(), st.integers(0, 2**31 - 1))
def test_smem_matmul_values(m, n, k, lay, batch, align, seed):
  """(aligned rows are copied by cp.async, others by plain loads: both are drawn)"""
  if align: m, n, k = aligned(m, n, k, lay)
  a, b, na, nb = operands(Device.DEFAULT, m, n, k, lay, batch, seed)
  out = a @ b
  _close(out.numpy(), na @ nb, k)

@needs_smem
def test_smem_epilogue_and_gradients():
  a, b, na, nb = operands(Device.DEFAULT, 300, 520, 200)
  bias = np.linspace(-1, 1, 520, dtype=np.float32)
  out = ((a @ b) + Tensor(bias)).relu()
  assert smem_specs(out, Device.DEFAULT)
  _close(out.numpy(), np.maximum(na @ nb + bias, 0), 200)
  a.requires_grad_(True)
  b.requires_grad_(True)
  g = np.random.default_rng(1).standard_normal((300, 520)).astype(np.float32)
  ((a @ b) * Tensor(g)).sum().backward()
  _close(a.grad.numpy(), g @ nb.T, 520)
  _close(b.grad.numpy(), na.T @ g, 300)

# ---- convolutions: the same Opts as implicit GEMMs (a matmul over (batch, rows, columns) x output channels, summed
# over (input channels, kernel rows, kernel columns))

def conv_ref(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
  xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
  win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))   # (b, c, oh, ow, kh, kw)
  return np.einsum("bchwij,ocij->bohw", win.astype(np.float64), w.astype(np.float64))

def interpret_conv(bs: int, cin: int, cout: int, hw: int, k: int, pad: int, dt, tile: str | None = None,
                   renderer=None):
  """(result, numpy's) of the convolution's GEMM kernel (TC for 16-bit, SMEM for float32) run by gpu_interp (with
  NULL:CUDA's renderer, or e.g. CUDARenderer("sm_90a"))."""
  from gpu_interp import run_kernel, to_bits, to_float
  rng = np.random.default_rng(0)
  x = rng.standard_normal((bs, cin, hw, hw)).astype(np.float32)
  w = rng.standard_normal((cout, cin, k, k)).astype(np.float32)
  if dt != dtypes.float32: x, w = to_float(to_bits(x, dt), dt), to_float(to_bits(w, dt), dt)
  y = Tensor.empty(*x.shape, dtype=dt, device=NULL_CUDA).conv2d(Tensor.empty(*w.shape, dtype=dt, device=NULL_CUDA),
                                                                padding=pad)
  si = [s for s in y.schedule() if s.kind == "kernel"][-1]   # (after any padded copy of x)
  r = renderer or Device[NULL_CUDA].renderer
  mt = tc_match(normalized(si.ast, r), fma=dt == dtypes.float32)
  assert not isinstance(mt, str), mt
  op = OptOps.SMEM if dt == dtypes.float32 else OptOps.TC
  p = get_program(si.ast, r, opts=[Opt(op, None, tile)] if tile else None)
  assert p.opts[0].op is op, p.opts
  raw = (lambda v: v.ravel()) if dt == dtypes.float32 else (lambda v: to_bits(v.ravel(), dt))
  # (the kernel reads x through its padding in place, by masked chunks, or a padded copy made before it)
  xp = x if len(mt.a.src) == 3 else np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
  out = next(e.src[0].src[0].arg[0] for e in si.ast.src if e.op is Ops.STORE)
  n_out = int(np.prod(y.shape))
  bufs = {mt.a.src[0].arg[0]: raw(xp), mt.b.src[0].arg[0]: raw(w),
          out: np.zeros(n_out, np.float32 if dt == dtypes.float32 else np.uint16)}
  run_kernel(p.uops, bufs, p.local_size[0])
  got = bufs[out] if dt == dtypes.float32 else to_float(bufs[out], dt)
  return got.reshape(y.shape), conv_ref(x, w, pad)

@pytest.mark.parametrize("case", [(2, 8, 16, 8, 3, 1, "float32", "64x64x16t4x4s3"),
                                  (1, 4, 24, 12, 3, 1, "float32", "64x64x8t4x4s2"),
                                  (2, 8, 16, 8, 3, 1, "float16", "64x64x32w2x2s3"),
                                  (1, 6, 20, 16, 1, 0, "float16", None),
                                  # padding read in place (masked chunks): ragged M, N and K; 5x5 with padding 2
                                  (2, 8, 16, 16, 3, 1, "float32", None), (2, 8, 16, 16, 3, 1, "float16", None),
                                  (1, 3, 20, 8, 5, 2, "float32", "64x64x16t4x4s3"),
                                  (1, 3, 20, 8, 5, 2, "bfloat16", "64x64x32w2x2s3")], ids=str)
def test_conv_as_implicit_gemm_interpreted(case):
  bs, cin, cout, hw, k, pad, dt, tile = case
  d = {"float32": dtypes.float32, "float16": dtypes.float16, "bfloat16": dtypes.bfloat16}[dt]
  got, want = interpret_conv(bs, cin, cout, hw, k, pad, d, tile)
  tol = 1e-5 if d == dtypes.float32 else 2e-3
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))

def test_conv_gemm_chosen_and_compiled():
  """The bench's convolution (32x64x56x56, 3x3): SMEM for float32 (input rows start anywhere: plain loads), TC for
  float16, each with a tile no wider than its 64 output channels, reading the padding in place; NVRTC compiles
  both."""
  c = toolchain("sm_90")
  for dt, op in ((dtypes.float32, OptOps.SMEM), (dtypes.float16, OptOps.TC)):
    x = Tensor.empty(32, 64, 56, 56, dtype=dt, device=NULL_CUDA)
    w = Tensor.empty(64, 64, 3, 3, dtype=dt, device=NULL_CUDA)
    ps = kernel_specs(x.conv2d(w, padding=1))
    p = ps[-1]
    assert p.opts[0].op is op and "x64x" in p.opts[0].arg, p.opts
    # one kernel: the input read through its padding in place, by masked chunks
    assert len(ps) == 1 and ("teeny_copy16m_f32(" if dt == dtypes.float32 else "teeny_copy16m(") in p.src
    assert c.valid_binary(c.compile(p.src))
    # unpadded (3x3 valid, and 1x1): one kernel, tiled over the windows of the input where it lies (they were copied
    # first, 9 times the input's size, and the copy's reader lost the tiles)
    for xs, ws in (((32, 64, 58, 58), (64, 64, 3, 3)), ((32, 64, 56, 56), (128, 64, 1, 1))):
      x, w = Tensor.empty(*xs, dtype=dt, device=NULL_CUDA), Tensor.empty(*ws, dtype=dt, device=NULL_CUDA)
      ps = kernel_specs(x.conv2d(w))
      assert len(ps) == 1 and ps[0].opts[0].op is op, [(q.name, q.opts) for q in ps]

@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_conv_backward_as_implicit_gemms(dt):
  """On a GPU with the tiles, a unit-stride convolution's two gradients are implicit GEMMs (kernels/conv.py:
  gemm_route): the input gradient a convolution of the padded grad_out with the flipped kernel, the weight gradient
  a GEMM per image, then summed over images. Both take the Opt and compile (values: on the GPU below, and the GEMM
  forms interpreted above)."""
  import teeny.kernels as K
  d = {"float32": dtypes.float32, "float16": dtypes.float16}[dt]
  x, w = Tensor.empty(32, 64, 56, 56, dtype=d, device=NULL_CUDA), Tensor.empty(64, 64, 3, 3, dtype=d, device=NULL_CUDA)
  g = Tensor.empty(32, 64, 56, 56, dtype=d, device=NULL_CUDA)
  gx, gw = K.conv2d_bwd(x, w, g, 1, 1)
  progs = [get_program(si.ast, Device[NULL_CUDA].renderer) for si in Tensor.schedule(gx, gw) if si.kind == "kernel"]
  op = OptOps.SMEM if d == dtypes.float32 else OptOps.TC
  tiled = [p for p in progs if any(o.op is op for o in p.opts)]
  assert len(tiled) == 2, [(p.name, p.opts) for p in progs]
  # float32: each image's rows in 4 parts, 128 GEMMs (gw_split); the 16-bit GEMMs stay one per image
  assert K.conv.gw_split(K.conv.conv_shape(x.shape, w.shape, 1, 1), d) == (4 if d == dtypes.float32 else 1)
  c = toolchain("sm_90")
  for p in tiled: assert c.valid_binary(c.compile(p.src))
  # strided, grouped or narrow-row convolutions keep the hand-written kernels
  for xs, ws, kw in (((2, 8, 16, 16), (8, 8, 3, 3), dict(stride=2, padding=1)), ((2, 8, 16, 16), (8, 4, 3, 3),
                     dict(padding=1, groups=2)), ((2, 8, 12, 12), (8, 8, 3, 3), dict(padding=1))):
    x, w = Tensor.empty(*xs, dtype=d, device=NULL_CUDA), Tensor.empty(*ws, dtype=d, device=NULL_CUDA)
    s = K.conv.conv_shape(xs, ws, kw.get("stride", 1), kw["padding"], 1, kw.get("groups", 1))
    assert not K.conv.gemm_route(s, NULL_CUDA, d)

@needs_smem
@pytest.mark.parametrize("dt", ["float32", "float16"])
@pytest.mark.parametrize("shape", [((4, 16, 16, 24), (32, 16, 3, 3), 1), ((2, 8, 8, 16), (16, 8, 3, 3), 2),
                                   ((3, 5, 16, 8), (7, 5, 5, 5), 2), ((2, 32, 8, 8), (16, 32, 1, 1), 0)], ids=str)
def test_conv_gradients_on_the_gpu(dt, shape):
  """conv2d forward and both gradients through the GEMM Opts against torch on the CPU."""
  torch = pytest.importorskip("torch")
  import teeny.kernels as K
  xs, ws, pad = shape
  d = {"float32": dtypes.float32, "float16": dtypes.float16}[dt]
  rng = np.random.default_rng(0)
  xn, wn = rng.standard_normal(xs).astype(np.float32), (rng.standard_normal(ws) * 0.3).astype(np.float32)
  if d == dtypes.float16: xn, wn = xn.astype(np.float16).astype(np.float32), wn.astype(np.float16).astype(np.float32)
  x, w = Tensor(xn).cast(d).requires_grad_(True), Tensor(wn).cast(d).requires_grad_(True)
  y = K.conv2d(x, w, padding=pad)
  gn = rng.standard_normal(y.shape).astype(np.float32)
  if d == dtypes.float16: gn = gn.astype(np.float16).astype(np.float32)
  (y.cast(dtypes.float32) * Tensor(gn)).sum().backward()
  tx = torch.tensor(xn, dtype=torch.float64, requires_grad=True)
  tw = torch.tensor(wn, dtype=torch.float64, requires_grad=True)
  ty = torch.nn.functional.conv2d(tx, tw, padding=pad)
  ty.backward(torch.tensor(gn, dtype=torch.float64))
  tol = 1e-4 if d == dtypes.float32 else 2e-2
  for got, want in ((y, ty), (x.grad, tx.grad), (w.grad, tw.grad)):
    want = want.detach().numpy()
    np.testing.assert_allclose(got.cast(dtypes.float32).numpy(), want, rtol=tol,
                               atol=tol * max(1.0, np.abs(want).max()))

# ---- weight gradients: a long sum to a small matrix is split into a batch of GEMMs and the sum of their parts

def test_weight_gradient_split_into_a_batch_of_gemms():
  """The gradient of W in x @ W with x (32, 128, 256): a sum over 4096 tokens to 256x256 outputs (16 tiles of 64x64,
  too few blocks for a GPU) runs as 32 GEMMs, one per batch entry (SMEM, batched on the grid's z), then their sum."""
  x = Tensor.empty(32, 128, 256, device=NULL_CUDA).requires_grad_(True)
  w = Tensor.empty(256, 256, device=NULL_CUDA).requires_grad_(True)
  (x @ w).backward(Tensor.empty(32, 128, 256, device=NULL_CUDA).realize())
  progs = kernel_specs(w.grad)
  assert len(progs) == 2 and progs[0].opts[0].op is OptOps.SMEM and progs[0].global_size[2] == 32, \
    [(p.name, p.opts, p.global_size) for p in progs]
  assert not any(o.op is OptOps.SMEM for o in progs[1].opts)
  # the CPU keeps one sum
  x = Tensor.empty(32, 128, 256, device="CPU").requires_grad_(True)
  w = Tensor.empty(256, 256, device="CPU").requires_grad_(True)
  (x @ w).backward(Tensor.empty(32, 128, 256, device="CPU").realize())
  assert len([si for si in w.grad.schedule() if si.kind == "kernel"]) == 1

@needs_smem
@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_split_weight_gradient_values(dt):
  d = {"float32": dtypes.float32, "bfloat16": dtypes.bfloat16}[dt]
  rng = np.random.default_rng(0)
  xn, wn, gn = (rng.standard_normal(sh).astype(np.float32) for sh in ((32, 128, 256), (256, 192), (32, 128, 192)))
  x, w = Tensor(xn).cast(d).requires_grad_(True), Tensor(wn).cast(d).requires_grad_(True)
  (x @ w).cast(dtypes.float32).backward(Tensor(gn))
  rx = lambda v: v if d == dtypes.float32 else v.astype(np.float32)
  want = np.einsum("btm,btn->mn", rx(x.detach().cast(dtypes.float32).numpy()).astype(np.float64), gn.astype(np.float64))
  tol = 1e-4 if d == dtypes.float32 else 2e-2
  np.testing.assert_allclose(w.grad.cast(dtypes.float32).numpy(), want, rtol=tol, atol=tol * np.abs(want).max())

@pytest.mark.parametrize("shape", [((2, 8, 8, 16), (16, 8, 3, 3), 1), ((3, 5, 16, 8), (7, 5, 5, 5), 2),
                                   ((2, 6, 8, 8), (4, 6, 1, 1), 0), ((2, 4, 10, 12), (6, 4, 3, 3), (2, 1))], ids=str)
def test_gemm_gradient_graphs_against_torch(shape):
  """The graphs the GPU route builds for both gradients (kernels/conv.py: _gemm_bwd_input, _gemm_bwd_weight), run on
  the CPU, against torch: their algebra, whichever device runs them."""
  torch = pytest.importorskip("torch")
  import teeny.kernels as K
  xs, ws, pad = shape
  rng = np.random.default_rng(1)
  xn, wn = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
  s = K.conv.conv_shape(xs, ws, 1, pad)
  gn = rng.standard_normal((s.bs, s.cout, s.oh, s.ow)).astype(np.float32)
  x, w, g = Tensor(xn, device="CPU"), Tensor(wn, device="CPU"), Tensor(gn, device="CPU")
  tx, tw = torch.tensor(xn, requires_grad=True), torch.tensor(wn, requires_grad=True)
  torch.nn.functional.conv2d(tx, tw, padding=pad).backward(torch.tensor(gn))
  np.testing.assert_allclose(K.conv._gemm_bwd_input(g, w, s).numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(K.conv._gemm_bwd_weight(x, g, s).numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)

def test_plain_graph_conv_weight_gradient_is_a_batch_of_gemms():
  """The plain graph's conv2d weight gradient (TEENY_CUSTOM_KERNELS=0) at the bench's shape: the sum over (B, OH, OW)
  is split by image without a reshape (a reshape of that 3.7e9-element expanded view is indexed by its flat position:
  split by a reshape, its kernel faulted on the H200), into a batched SMEM GEMM and the sum over images; every kernel
  builds, none needs 64-bit addresses."""
  from teeny.helpers import Context
  x = Tensor.empty(32, 64, 56, 56, device=NULL_CUDA).realize().requires_grad_(True)
  w = Tensor.empty(64, 64, 3, 3, device=NULL_CUDA).realize().requires_grad_(True)
  with Context(TEENY_CUSTOM_KERNELS=0): y = x.conv2d(w, padding=1)
  y.backward(Tensor.empty(32, 64, 56, 56, device=NULL_CUDA).realize())
  progs = [get_program(si.ast, Device[NULL_CUDA].renderer) for si in w.grad.schedule() if si.kind == "kernel"]
  assert any(p.opts and p.opts[0].op is OptOps.SMEM and 32 in p.global_size for p in progs), \
    [(p.name, p.opts, p.global_size) for p in progs]
  assert not any("long long" in p.src for p in progs)
