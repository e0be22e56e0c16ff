"""Tensor cores: the TC Opt (teeny/codegen/tc.py) rebuilds a float16/bfloat16 matmul as shared-memory block tiles and
mma.sync warp instructions (Ops.WMMA).

Without a GPU (CI): the heuristics choose TC for 16-bit matmuls of every layout, ragged sizes and batches rendered for
NULL:CUDA, and NVRTC compiles them for sm_90; float32 stays exact (no TF32); the Opt refuses what it cannot build with
a reason. On a CUDA GPU (DEV=CUDA): values against numpy over random shapes, layouts, batches and dtypes, an epilogue
fused into the stores, and gradients, all through the tensor-core kernels."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Device, Tensor, dtypes
from teeny.codegen.kernel import get_program, normalized
from teeny.codegen.opt import KernelOptError, Opt, OptOps, apply_opt, hand_coded_opts
from teeny.codegen.search import actions
from teeny.codegen.tc import TC_CONFIGS, tc_match
from teeny.uop.ops import Ops
from helpers import bf16_round, toolchain

NULL_CUDA = "NULL:CUDA"
DTS = {"float16": dtypes.float16, "bfloat16": dtypes.bfloat16}

def operands(dev: str, m: int, n: int, k: int, dt, lay: str = "nn", batch: tuple = (), rng=None):
  """(A, B, a, b): teeny tensors of shape (*batch, m, k) and (*batch, k, n) stored row-major ('n') or transposed ('t'),
  and the float32 numpy values they hold (rounded to dt; test_smem.py's float32 ones as drawn)."""
  rng = rng or np.random.default_rng(0)
  out = []
  for rows, cols, t in ((m, k, lay[0]), (k, n, lay[1])):
    x = rng.standard_normal(batch + ((cols, rows) if t == "t" else (rows, cols))).astype(np.float32)
    if dt != dtypes.float32: x = x.astype(np.float16).astype(np.float32) if dt == dtypes.float16 else bf16_round(x)
    tx = Tensor(x, device=dev).cast(dt).contiguous().realize()
    out.append((tx.transpose(-1, -2) if t == "t" else tx, np.swapaxes(x, -1, -2) if t == "t" else x))
  return out[0][0], out[1][0], out[0][1], out[1][1]

def specs(t: Tensor, dev: str = NULL_CUDA) -> list:
  return [get_program(si.ast, Device[dev].renderer) for si in t.schedule() if si.kind == "kernel"]

def tc_specs(t: Tensor, dev: str = NULL_CUDA) -> list:
  return [p for p in specs(t, dev) if any(o.op is OptOps.TC for o in p.opts)]

# ---- rendered and compiled, no GPU needed

@pytest.mark.parametrize("dt", list(DTS))
@pytest.mark.parametrize("lay", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("shape", [(256, 128, 512), (100, 24, 40), (33, 17, 9)], ids=str)
def test_tc_chosen_rendered_compiled(shape, lay, dt):
  m, n, k = shape
  a, b, _, _ = operands(NULL_CUDA, m, n, k, DTS[dt], lay)
  p, = tc_specs(a @ b)
  ptx = {"float16": "f16", "bfloat16": "bf16"}[dt]
  assert f"mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32" in p.src and "teeny_mma_" in p.src
  assert "ldmatrix.sync.aligned.m8n8.x4" in p.src and "__syncthreads()" in p.src
  # rows that may start unaligned (k = 9) are copied with plain loads, the rest with cp.async
  assert ("teeny_copy16(local0" if k % 8 else "teeny_cp_async16(local0") in p.src
  cfg = TC_CONFIGS[p.opts[0].arg]
  assert p.local_size == [cfg.threads, 1, 1]
  # (a grid axis of one block is simplified away: its range has one value)
  assert sorted(p.global_size) == sorted([-(-n // cfg.bn), -(-m // cfg.bm), 1])
  assert p.smem > 0 and "extern __shared__" in p.src
  assert p.ops >= 2 * m * n * k   # (the padded tile's work)
  c = toolchain("sm_90")
  assert c.valid_binary(c.compile(p.src))

def test_heuristics_pick_the_tile_for_the_renderers_shared_memory():
  """CUDA has 227 KB of (dynamic) shared memory a block: a 4096^3 matmul gets the largest tile of TC_ORDER; AMD's
  64 KB of LDS a smaller one that fits. (The heuristics once asked with the default 48 KB and gave CUDA a 128x128x32
  tile: 260 instead of 290 TFLOP/s on the H200.)"""
  from teeny.codegen.render.hip import HIPRenderer
  from teeny.codegen.tc import TC_ORDER, smem_bytes
  a, b, _, _ = operands(NULL_CUDA, 4096, 4096, 4096, dtypes.float16)
  ast = _ast(a @ b)
  p = get_program([s for s in (a @ b).schedule() if s.kind == "kernel"][-1].ast, Device[NULL_CUDA].renderer)
  assert p.opts == (Opt(OptOps.TC, None, TC_ORDER[0]),)
  hip = HIPRenderer("gfx1100")
  opt, = hand_coded_opts(ast, hip)
  assert smem_bytes(tc_match(ast), TC_CONFIGS[opt.arg]) <= hip.max_shared

def test_tc_batch_and_broadcast_on_the_grid_z():
  a, b, _, _ = operands(NULL_CUDA, 64, 64, 32, dtypes.float16, "nn", batch=(3,))
  p, = tc_specs(a @ b)
  assert np.prod(p.global_size) == 3   # one block tile per batch element
  # one operand broadcast along the batch
  w = Tensor(np.ones((32, 64), np.float16), device=NULL_CUDA)
  p, = tc_specs(a @ w)
  assert np.prod(p.global_size) == 3   # one block tile per batch element

def test_float32_stays_exact_and_other_kernels_untouched():
  """float32 matmuls never use tensor cores (no TF32 unless asked), nor do reductions that are not matmuls."""
  x = Tensor(np.ones((256, 256), np.float32), device=NULL_CUDA)
  assert not tc_specs(x @ x)
  h = x.cast(dtypes.float16)
  assert not tc_specs(h.sum(1)) and not tc_specs((h * h).sum(0))

def test_tc_switch_off(monkeypatch):
  import teeny.codegen.opt as opt
  monkeypatch.setattr(opt, "TC", 0)
  a, b, _, _ = operands(NULL_CUDA, 128, 128, 64, dtypes.float16)
  assert not tc_specs(a @ b)

def _ast(t: Tensor, dev: str = NULL_CUDA):
  si, = [si for si in t.schedule() if si.kind == "kernel"]
  return normalized(si.ast, Device[dev].renderer)

@pytest.mark.parametrize("make,dev,match", [
  (lambda d: operands(d, 64, 64, 64, dtypes.float16), "gfx1030", "HIPRenderer has no tensor cores"),   # RDNA2
  (lambda d: operands(d, 64, 64, 64, dtypes.float16), "CPU", "CRenderer has no tensor cores"),
  (lambda d: (Tensor(np.ones((64, 64), np.float32), device=d),) * 2, NULL_CUDA, "float32 stays exact.*TF32=1"),
  (lambda d: (Tensor(np.ones((64, 64), np.float16), device=d), Tensor(np.ones((64, 64), np.float16), device=d)
              .cast(dtypes.bfloat16)), NULL_CUDA, "not a product of two loads"),
], ids=["hip", "cpu", "float32", "mixed"])
def test_tc_refused_with_a_reason(make, dev, match):
  from teeny.codegen.render.hip import HIPRenderer
  r = HIPRenderer(dev) if dev.startswith("gfx") else Device[dev].renderer
  dev = "NULL:HIP" if dev.startswith("gfx") else dev
  a, b = make(dev)[:2]
  with pytest.raises(KernelOptError, match=match): apply_opt(_ast(a @ b, dev), Opt(OptOps.TC, None, None), r)

def test_tc_errors_name_the_problem():
  a, b, _, _ = operands(NULL_CUDA, 64, 64, 64, dtypes.float16)
  ast, r = _ast(a @ b), Device[NULL_CUDA].renderer
  with pytest.raises(KernelOptError, match="unknown block tile 'huge'"): apply_opt(ast, Opt(OptOps.TC, None, "huge"), r)
  tc = apply_opt(ast, Opt(OptOps.TC, None, None), r)
  with pytest.raises(KernelOptError, match="after STAGE|already"): apply_opt(tc, Opt(OptOps.TC, None, None), r)
  x = Tensor(np.ones((64, 64), np.float16), device=NULL_CUDA)
  assert "sum" in tc_match(_ast(x.sum(1)))

# ---- TF32: float32 matmuls on tensor cores when the user asks (Tensor.allow_tf32 = True or TF32=1)

@pytest.fixture
def tf32():
  Tensor.allow_tf32 = True
  yield
  Tensor.allow_tf32 = False

def f32_operands(dev: str, m: int, n: int, k: int, lay: str = "nn", batch: tuple = (), seed: int = 0):
  rng = np.random.default_rng(seed)
  out = []
  for rows, cols, t in ((m, k, lay[0]), (k, n, lay[1])):
    x = rng.standard_normal(batch + ((cols, rows) if t == "t" else (rows, cols))).astype(np.float32)
    tx = Tensor(x, device=dev).realize()
    out.append((tx.transpose(-1, -2) if t == "t" else tx, np.swapaxes(x, -1, -2) if t == "t" else x))
  return out[0][0], out[1][0], out[0][1], out[1][1]

def test_tf32_off_by_default_and_switched_by_allow_tf32(tf32):
  from teeny.helpers import TF32
  assert Tensor.allow_tf32 and TF32.value == 1
  a, b, _, _ = f32_operands(NULL_CUDA, 256, 128, 64)
  p, = tc_specs(a @ b)
  assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in p.src and "cvt.rna.tf32.f32" in p.src
  assert "ldmatrix" not in p.src and "teeny_cp_async16(local0" in p.src
  Tensor.allow_tf32 = False
  assert not tc_specs(a @ b) and TF32.value == 0

def test_tf32_switch_is_part_of_the_program_cache_key(tf32):
  """The same AST compiled with TF32 on and off gives two programs (the in-memory cache must not hand the TF32 one to
  an exact float32 matmul)."""
  from teeny.engine.realize import get_runner
  a, b, _, _ = f32_operands(NULL_CUDA, 128, 128, 64)
  si, = [s for s in (a @ b).schedule() if s.kind == "kernel"]
  _, on = get_runner(NULL_CUDA, si.ast)
  Tensor.allow_tf32 = False
  _, off = get_runner(NULL_CUDA, si.ast)
  assert "teeny_mma_tf32" in on.src and "teeny_mma_tf32" not in off.src

def test_tf32_refusals_name_the_problem(tf32):
  from teeny.codegen.render.hip import HIPRenderer
  # rows of 30 float32 values: a 16-byte copy of a row may start unaligned, so the copies are plain loads
  a, b, _, _ = f32_operands(NULL_CUDA, 64, 30, 64, "nn")
  p, = tc_specs(a @ b)
  assert "teeny_copy16_f32(local0" in p.src
  a, b, _, _ = f32_operands("NULL:HIP", 64, 64, 64)
  with pytest.raises(KernelOptError, match="no tensor cores for float32"):
    apply_opt(_ast(a @ b, "NULL:HIP"), Opt(OptOps.TC, None, None), HIPRenderer("gfx1100"))

def test_tf32_kernel_compiles_for_sm90(tf32):
  comp = toolchain("sm_90")
  for lay in ("nn", "tt"):
    a, b, _, _ = f32_operands(NULL_CUDA, 200, 96, 72, lay)
    p, = tc_specs(a @ b)
    assert comp.valid_binary(comp.compile(p.src))

def interpret_tf32(m: int, n: int, k: int, lay: str, tile: str | None, batch: tuple = (), seed: int = 0):
  """(result, numpy's product of the TF32-rounded operands, numpy's float32 product) of the TF32 kernel."""
  from gpu_interp import run_kernel, to_tf32
  a, b, na, nb = f32_operands(NULL_CUDA, m, n, k, lay, batch, seed)
  si = [s for s in (a @ b).schedule() if s.kind == "kernel"][-1]
  r = Device[NULL_CUDA].renderer
  mt = tc_match(normalized(si.ast, r))
  assert not isinstance(mt, str), mt
  p = get_program(si.ast, r, opts=[Opt(OptOps.TC, None, tile)] if tile else None)
  assert "teeny_mma_tf32" in p.src
  stored = lambda x, t: np.ascontiguousarray(np.swapaxes(x, -1, -2) if t == "t" else x).ravel()
  out = next(e.src[0].src[0].arg[0] for e in si.ast.src if e.op is Ops.STORE)
  bufs = {mt.a.src[0].arg[0]: stored(na, lay[0]), mt.b.src[0].arg[0]: stored(nb, lay[1]),
          out: np.zeros(int(np.prod(batch + (m, n))), np.float32)}
  run_kernel(p.uops, bufs, p.local_size[0])
  return bufs[out].reshape(batch + (m, n)), to_tf32(na).astype(np.float64) @ to_tf32(nb).astype(np.float64), na @ nb

@pytest.mark.parametrize("case", [(40, 24, 72, "nn", "64x64x32w2x2s2", ()), (36, 20, 44, "tt", "64x64x32w2x2s3", ()),
                                  (36, 20, 44, "nt", "64x64x64w2x2s4", ()), (36, 20, 44, "tn", None, ()),
                                  (130, 72, 100, "nn", "128x64x32w2x2s2", ()), (20, 16, 24, "nn", None, (3,)),
                                  (40, 30, 42, "nn", None, ()), (33, 21, 18, "tt", "64x64x32w2x2s3", ())],
                         ids=str)
def test_tf32_kernel_values_interpreted(tf32, case):
  m, n, k, lay, tile, batch = case
  got, want, exact = interpret_tf32(m, n, k, lay, tile, batch)
  # the sums are float32 over TF32-rounded inputs: close to numpy's product of the rounded values, and visibly not
  # float32's (the test would notice the kernel multiplying unrounded float32)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * np.sqrt(k))
  assert np.abs(got - exact).max() > 1e-4

def test_beam_tries_every_tile():
  a, b, _, _ = operands(NULL_CUDA, 256, 256, 256, dtypes.bfloat16)
  acts = actions(_ast(a @ b), Device[NULL_CUDA].renderer)
  assert {o.arg for o in acts if o.op is OptOps.TC} == set(TC_CONFIGS)

# ---- values on a GPU with tensor cores (DEV=CUDA)

def _has_tc() -> bool:
  try: return bool(getattr(Device[Device.DEFAULT].renderer, "tensor_cores", ()))
  except Exception: return False

needs_tc = pytest.mark.skipif(not _has_tc(), reason="the default device has no tensor cores (run with DEV=CUDA)")
TOL = {dtypes.float16: 2e-3, dtypes.bfloat16: 1e-2}   # the result is rounded to the input dtype

def _close(got: np.ndarray, want: np.ndarray, dt):
  scale = max(float(np.abs(want).max()), 1.0)
  np.testing.assert_allclose(got, want, rtol=TOL[dt], atol=TOL[dt] * scale)

@needs_tc
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 300), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(list(DTS)), st.sampled_from([(), (2,), (2, 3)]), st.integers(0, 2**31 - 1))
def test_tc_matmul_values(m, n, k, lay, dt, batch, seed):
  d = DTS[dt]
  a, b, na, nb = operands(Device.DEFAULT, m, n, k, d, lay, batch, np.random.default_rng(seed))
  out = a @ b
  # (a dimension of 1 is a matrix-vector product or an outer product: no tensor cores)
  assert bool(tc_specs(out, Device.DEFAULT)) == (min(m, n, k) > 1), "a matmul runs on tensor cores"
  _close(out.cast(dtypes.float32).numpy(), na @ nb, d)

@needs_tc
@pytest.mark.parametrize("dt", list(DTS))
def test_tc_epilogue_and_gradients(dt):
  d = DTS[dt]
  a, b, na, nb = operands(Device.DEFAULT, 300, 520, 200, d)
  bias = np.linspace(-1, 1, 520, dtype=np.float32)
  out = ((a @ b) + Tensor(bias, device=Device.DEFAULT).cast(d)).relu()
  assert tc_specs(out, Device.DEFAULT)
  rb = bias.astype(np.float16).astype(np.float32) if d == dtypes.float16 else bf16_round(bias)
  want = np.maximum(na @ nb + rb, 0)
  _close(out.cast(dtypes.float32).numpy(), want, d)
  # gradients: two more matmuls (grad @ B^T, A^T @ grad) on the tensor cores
  a.requires_grad_(True)
  b.requires_grad_(True)
  g = np.random.default_rng(1).standard_normal((300, 520)).astype(np.float32)
  g = g.astype(np.float16).astype(np.float32) if d == dtypes.float16 else bf16_round(g)
  ((a @ b) * Tensor(g, device=Device.DEFAULT).cast(d)).sum().backward()
  _close(a.grad.cast(dtypes.float32).numpy(), g @ nb.T, d)
  _close(b.grad.cast(dtypes.float32).numpy(), na.T @ g, d)

# ---- the kernels' values without a GPU: linearized tensor-core kernels played by a numpy interpreter (gpu_interp.py)

def interpret(m: int, n: int, k: int, lay: str, dt, tile: str | None, batch: tuple = (), seed: int = 0, edit=None,
              renderer=None):
  """(result, numpy's A @ B) of the TC kernel for these operands, run by gpu_interp; `edit` may change its uops.
  renderer: the CUDA one, or e.g. HIPRenderer("gfx90a")."""
  from gpu_interp import run_kernel, to_bits, to_float
  dev = NULL_CUDA if renderer is None else f"NULL:{renderer.lang}"
  a, b, na, nb = operands(dev, m, n, k, dt, lay, batch, np.random.default_rng(seed))
  si = [s for s in (a @ b).schedule() if s.kind == "kernel"][-1]
  r = renderer or Device[NULL_CUDA].renderer
  mt = tc_match(normalized(si.ast, r))
  assert not isinstance(mt, str), mt
  p = get_program(si.ast, r, opts=[Opt(OptOps.TC, None, tile)] if tile else None)
  stored = lambda x, t: np.ascontiguousarray(np.swapaxes(x, -1, -2) if t == "t" else x).ravel()
  out = next(e.src[0].src[0].arg[0] for e in si.ast.src if e.op is Ops.STORE)
  bufs = {mt.a.src[0].arg[0]: to_bits(stored(na, lay[0]), dt), mt.b.src[0].arg[0]: to_bits(stored(nb, lay[1]), dt),
          out: np.zeros(int(np.prod(batch + (m, n))), np.uint16)}
  run_kernel(edit(p.uops) if edit else p.uops, bufs, p.local_size[0])
  return to_float(bufs[out], dt).reshape(batch + (m, n)), na @ nb

def interpreted_close(m: int, n: int, k: int, lay: str, dt: str, tile: str | None, batch: tuple = (), seed: int = 0,
                      renderer=None):
  """The TC kernel (for `renderer`, by default NULL:CUDA's) played by gpu_interp agrees with numpy's A @ B."""
  got, want = interpret(m, n, k, lay, DTS[dt], tile, batch, seed, renderer=renderer)
  _close(got, want, DTS[dt])

@pytest.mark.parametrize("case", [
  (40, 24, 72, "nn", "float16", "64x64x32w2x2s2", ()), (40, 24, 72, "tt", "bfloat16", "64x64x32w2x2s3", ()),
  (130, 70, 200, "nt", "float16", "128x64x64w2x2s4", ()), (33, 17, 9, "tn", "float16", "64x64x32w2x2s4", ()),
  (64, 64, 64, "nn", "bfloat16", "64x64x32w2x2s2", (2,)), (72, 136, 40, "tn", "float16", "128x128x32w2x4s3", ()),
  (300, 20, 30, "nt", "float16", None, ()),
  # a batch as long as n: the flattened batch's range once took n's axis id, so it was n's node (bf16 attention)
  (20, 16, 24, "nn", "bfloat16", "64x64x32w2x2s2", (16,))], ids=str)
def test_tc_kernel_values_interpreted(case):
  interpreted_close(*case)

@settings(max_examples=12, deadline=None)
@given(st.integers(2, 80), st.integers(2, 80), st.integers(2, 90), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(list(DTS)), st.sampled_from(["64x64x32w2x2s2", "64x64x64w2x2s3", "64x64x32w2x2s4"]),
       st.integers(0, 2**31 - 1))
def test_tc_kernel_values_interpreted_random(m, n, k, lay, dt, tile, seed):
  interpreted_close(m, n, k, lay, dt, tile, seed=seed)

@pytest.mark.parametrize("dt", list(DTS))
def test_tc_epilogue_interpreted(dt):
  """A bias add and relu fused into the TC kernel's stores, on a ragged tile (the epilogue's own load masked past the
  edge), interpreted against numpy."""
  from gpu_interp import run_kernel, to_bits, to_float
  d = DTS[dt]
  a, b, na, nb = operands(NULL_CUDA, 70, 100, 48, d, "nn")
  bias = to_float(to_bits(np.linspace(-3, 3, 100, dtype=np.float32), d), d)
  tb = Tensor(bias, device=NULL_CUDA).cast(d).contiguous().realize()
  si, = [s for s in ((a @ b) + tb).relu().schedule() if s.kind == "kernel"]
  p = get_program(si.ast, Device[NULL_CUDA].renderer)
  assert any(o.op is OptOps.TC for o in p.opts)
  data = {t.uop.base.arg[:3]: to_bits(x.ravel(), d) for t, x in ((a, na), (b, nb), (tb, bias))}
  bufs = {i: data.get(buf.arg[:3], np.zeros(70 * 100, np.uint16)).copy() for i, buf in enumerate(si.bufs)}
  run_kernel(p.uops, bufs, p.local_size[0])
  _close(to_float(bufs[0], d).reshape(70, 100), np.maximum(na @ nb + bias, 0), d)

def test_interpreter_catches_a_pipeline_bug():
  """Waiting for one commit group too few leaves the stage being read stale: the result must come out wrong (the
  interpreter delays cp.async copies to their wait, as the hardware may)."""
  def early(uops):
    return [u.replace(arg=(("CUDA", 'asm volatile("cp.async.wait_group 2;");'), ("tag", -1)))
            if u.op is Ops.CUSTOM and "wait_group 1" in dict(u.arg)["CUDA"] else u for u in uops]
  got, want = interpret(64, 64, 128, "nn", dtypes.float16, "64x64x32w2x2s3")
  _close(got, want, dtypes.float16)
  got, want = interpret(64, 64, 128, "nn", dtypes.float16, "64x64x32w2x2s3", edit=early)
  assert np.abs(got - want).max() > 0.1

# ---- AMD: WMMA (gfx11, wave32) and MFMA (gfx90a, wave64) through the same Opt, fragments loaded through the maps

@pytest.mark.parametrize("arch", ["gfx1100", "gfx90a"])
@pytest.mark.parametrize("dt", list(DTS))
@pytest.mark.parametrize("lay", ["nn", "nt", "tn", "tt"])
def test_tc_amd_values_interpreted_and_compiled(arch, dt, lay):
  """No AMD GPU here: the kernel's values come from the interpreter (the layout maps of codegen/tc.py decide where each
  lane's fragment values go, as the hardware's tables do), and clang compiles it for the target."""
  from teeny.codegen.render.hip import HIPRenderer
  r = HIPRenderer(arch)
  got, want = interpret(40, 72, 56, lay, DTS[dt], None, renderer=r)
  _close(got, want, DTS[dt])
  a, b, _, _ = operands("NULL:HIP", 40, 72, 56, DTS[dt], lay)
  si = [s for s in (a @ b).schedule() if s.kind == "kernel"][-1]
  p = get_program(si.ast, r)
  assert any(o.op is OptOps.TC for o in p.opts)
  assert f"__builtin_amdgcn_{'wmma' if arch == 'gfx1100' else 'mfma'}_f32_16x16x16" in p.src
  assert p.local_size[0] % (32 if arch == "gfx1100" else 64) == 0
  c = toolchain(arch)
  assert c.valid_binary(c.compile(p.src)) if hasattr(c, "valid_binary") else c.compile(p.src)

@needs_tc
@pytest.mark.parametrize("shape,lay", [((512, 256, 384), "nn"), ((300, 200, 160), "tt"), ((64, 1024, 96), "nt")],
                         ids=str)
def test_tf32_values_on_the_gpu(tf32, shape, lay):
  """TF32 on the GPU against numpy's product of the TF32-rounded operands (float32 sums), and against torch with its
  TF32 switch where torch has CUDA; off again, float32 is exact to float32 rounding."""
  from gpu_interp import to_tf32
  m, n, k = shape
  a, b, na, nb = f32_operands(Device.DEFAULT, m, n, k, lay, seed=3)
  out = a @ b
  assert tc_specs(out, Device.DEFAULT)
  got = out.numpy()
  want = to_tf32(na).astype(np.float64) @ to_tf32(nb).astype(np.float64)
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(k))
  assert np.abs(got - na @ nb).max() > 1e-4   # really TF32
  Tensor.allow_tf32 = False
  exact = (a @ b).numpy()
  np.testing.assert_allclose(exact, na.astype(np.float64) @ nb.astype(np.float64), rtol=1e-5, atol=1e-5 * np.sqrt(k))

# ---- operands whose rows would start unaligned are copied aligned first (tensor.py: _tile_aligned)

def test_unaligned_operands_copied_aligned_for_the_tiles():
  """4095^3 float16: A padded along k, B transposed and padded, each one copy kernel, then the TC kernel with
  asynchronous 16-byte copies only; aligned sizes and small products keep their one kernel."""
  def kernels(m, n, k, dt=dtypes.float16):
    a = Tensor.empty(m, k, dtype=dt, device=NULL_CUDA)
    b = Tensor.empty(k, n, dtype=dt, device=NULL_CUDA)
    return specs(a @ b)
  ps = kernels(4095, 4095, 4095)
  assert len(ps) == 3 and [p.name for p in ps[:2]] == ["E_4095_4096", "E_4095_4096"], [p.name for p in ps]
  assert ps[-1].opts[0].op is OptOps.TC and "teeny_cp_async16(" in ps[-1].src and "teeny_copy16(" not in ps[-1].src
  ps = kernels(1000, 3001, 2000)   # only B's rows (n) are unaligned: B transposed, k not padded
  assert len(ps) == 2 and ps[0].name == "E_3001_2000" and "teeny_copy16(" not in ps[-1].src
  ps = kernels(1003, 3000, 1000, dtypes.float32)   # float32 (SMEM tiles): rows of 4 values
  assert len(ps) == 1 and "teeny_cp_async16(" in ps[0].src
  assert len(kernels(1000, 3000, 2000)) == 1 and len(kernels(33, 17, 9)) == 1 and len(kernels(255, 255, 255)) == 1

@pytest.mark.parametrize("shape", [(70, 45, 37), (3, 33, 9, 20), (5, 8, 8)], ids=str)
def test_aligned_operands_values_and_gradients(shape, monkeypatch):
  """The padded, transposed operands' product and gradients are the plain ones (on the CPU, tiles asked for, at any
  size)."""
  import teeny.tensor as tensor_mod
  monkeypatch.setattr(tensor_mod, "TILE_ALIGN_MIN_WORK", 0)
  *batch, m, k, n = shape
  rng = np.random.default_rng(0)
  na, nb = rng.standard_normal((*batch, m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
  a, b = Tensor(na, device="CPU", requires_grad=True), Tensor(nb, device="CPU", requires_grad=True)
  a2, b2 = tensor_mod._tile_aligned(a, b, tiles=True)
  assert a2.shape == a.shape if k % 4 == 0 else a2.shape[-1] == k + (-k) % 4
  out = a2 @ b2
  np.testing.assert_allclose(out.numpy(), na @ nb, rtol=1e-5, atol=1e-5)
  g = rng.standard_normal(out.shape).astype(np.float32)
  (out * Tensor(g, device="CPU")).sum().backward()
  np.testing.assert_allclose(a.grad.numpy(), g @ nb.T, rtol=1e-5, atol=1e-4)
  np.testing.assert_allclose(b.grad.numpy(), (np.swapaxes(na, -1, -2) @ g).reshape(-1, k, n).sum(0), rtol=1e-5,
                             atol=1e-4)

@needs_tc
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
def test_unaligned_matmul_values_on_the_gpu(dt):
  """Odd sizes past TILE_ALIGN_MIN_WORK through the aligned copies, against numpy, with gradients."""
  d = {"float32": dtypes.float32, **DTS}[dt]
  for (m, n, k), lay in (((301, 257, 259), "nn"), ((260, 303, 301), "tn"), ((515, 300, 257), "nt")):
    a, b, na, nb = operands(Device.DEFAULT, m, n, k, d, lay, (), np.random.default_rng(2))
    a.requires_grad_(True), b.requires_grad_(True)
    out = a @ b
    want = na.astype(np.float64) @ nb
    if d == dtypes.float32: np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-3)
    else: _close(out.cast(dtypes.float32).numpy(), want, d)
    out.cast(dtypes.float32).sum().backward()
    gw = np.ones((m, n))
    tol = 1e-3 if d == dtypes.float32 else 3e-2
    np.testing.assert_allclose(a.grad.cast(dtypes.float32).numpy(), gw @ nb.T, rtol=tol, atol=tol * k ** 0.5)
    np.testing.assert_allclose(b.grad.cast(dtypes.float32).numpy(), na.T @ gw, rtol=tol, atol=tol * m ** 0.5)
