"""Hopper's wgmma through the TC Opt (codegen/tc.py's WGConfig tiles, CUDA for sm_90a): rendered and compiled by NVRTC
for sm_90a, the kernels' values played by gpu_interp.py (which reads the swizzled shared-memory tiles the way the PTX
ISA says the tensor cores read them through their descriptors), and on an H200 (DEV=CUDA) against numpy."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from teeny import Device, Tensor, dtypes
from teeny.codegen.kernel import get_program
from teeny.codegen.opt import KernelOptError, Opt, OptOps, apply_opt, hand_coded_opts
from teeny.codegen.render.cuda import CUDARenderer
from teeny.codegen.search import actions
from teeny.codegen.tc import TC_CONFIGS, WG_ORDER, WGConfig
from helpers import toolchain
from teeny.uop.ops import Ops
from test_tc import DTS, _ast, _close, interpret, interpreted_close, operands, tc_specs

SM90A = CUDARenderer("sm_90a")
WG = [n for n, c in TC_CONFIGS.items() if isinstance(c, WGConfig)]

def wg_program(m: int, n: int, k: int, lay: str, dt, tile: str | None = None, batch: tuple = ()):
  a, b, _, _ = operands("NULL:CUDA", m, n, k, dt, lay, batch)
  si = [s for s in (a @ b).schedule() if s.kind == "kernel"][-1]
  return get_program(si.ast, SM90A, opts=[Opt(OptOps.TC, None, tile)] if tile else None)

# ---- rendered and compiled, no GPU needed

@pytest.mark.parametrize("dt", list(DTS))
@pytest.mark.parametrize("lay", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (300, 520, 200), (33, 17, 9)], ids=str)
def test_wgmma_chosen_rendered_compiled(shape, lay, dt):
  m, n, k = shape
  p = wg_program(m, n, k, lay, DTS[dt])
  cfg = TC_CONFIGS[p.opts[0].arg]
  assert isinstance(cfg, WGConfig), p.opts
  ptx = {"float16": "f16", "bfloat16": "bf16"}[dt]
  assert f"wgmma.mma_async.sync.aligned.m64n{cfg.bn}k16.f32.{ptx}.{ptx}" in p.src
  assert "wgmma.wait_group.sync.aligned 0" in p.src
  assert "__align__(1024)" in p.src and "ldmatrix" not in p.src and "mma.sync" not in p.src
  # operands whose rows are 16-byte multiples are tensor maps: TMA tiles (a producer warp, mbarriers, no cp.async)
  aligned = (k if lay[0] == "n" else m) % 8 == 0 and (n if lay[1] == "n" else k) % 8 == 0
  assert cfg.tma == aligned, (cfg.name, shape, lay)
  if cfg.tma:
    assert "cp.async.bulk.tensor.3d" in p.src and "mbarrier.try_wait.parity" in p.src and "cp.async.cg" not in p.src
    assert p.src.count("const __grid_constant__ teeny_tmap tmap") == 2 and [t[0] for t in p.tmaps] == [1, 2]
  else: assert "fence.proxy.async.shared::cta" in p.src and "cp.async.bulk" not in p.src and not p.tmaps
  # the operands' majors are the instruction's transpose flags: A ([m][k] stored) is K-major for "n", B for "t"
  assert f"<{int(lay[0] == 't')}, {int(lay[1] == 'n')}," in p.src
  assert p.local_size == [cfg.threads, 1, 1]
  assert p.smem == (cfg.bm + cfg.bn) * 64 * 2 * cfg.stages + 16 * cfg.stages * cfg.tma
  assert p.ops >= 2 * m * n * k
  c = toolchain("sm_90a")
  assert c.valid_binary(c.compile(p.src))

@pytest.mark.parametrize("tile", WG)
def test_every_wgmma_tile_compiles(tile):
  p = wg_program(200, 304, 136, "nn", dtypes.bfloat16, tile)
  c = toolchain("sm_90a")
  assert c.valid_binary(c.compile(p.src))

def test_heuristics_take_wgmma_on_sm90a_only(monkeypatch):
  a, b, _, _ = operands("NULL:CUDA", 4096, 4096, 4096, dtypes.float16)
  ast = _ast(a @ b)
  assert [o.arg for o in hand_coded_opts(ast, SM90A) if o.op is OptOps.TC] == ["wg256x128x64s4t"]   # (the fastest)
  # sm_90 (and any GPU but Hopper) keeps mma.sync; so does WGMMA=0
  assert not isinstance(TC_CONFIGS[next(o.arg for o in hand_coded_opts(ast, CUDARenderer("sm_90"))
                                        if o.op is OptOps.TC)], WGConfig)
  import teeny.codegen.tc as tc
  monkeypatch.setattr(tc, "WGMMA", 0)
  assert not isinstance(TC_CONFIGS[next(o.arg for o in hand_coded_opts(ast, SM90A) if o.op is OptOps.TC)], WGConfig)
  # the pick weighs each tile's speed by how full its waves of blocks are: 1000x3000 takes 256x128 (4 x 24 = 96 blocks,
  # one wave of 132 SMs) over 128x128 (192 blocks: two waves, the second half empty); 128x192's one wave of 128 blocks
  # is fuller but slower (its speed, measured in this very shape)
  monkeypatch.setattr(tc, "WGMMA", 1)
  a2, b2, _, _ = operands("NULL:CUDA", 1000, 3000, 2000, dtypes.bfloat16)
  assert [o.arg for o in hand_coded_opts(_ast(a2 @ b2), SM90A) if o.op is OptOps.TC] == ["wg256x128x64s4t"]
  a5, b5, _, _ = operands("NULL:CUDA", 1024, 3072, 2048, dtypes.float16)   # (the same by waves: 128x128 is 192 blocks)
  assert [o.arg for o in hand_coded_opts(_ast(a5 @ b5), SM90A) if o.op is OptOps.TC] != ["wg128x128x64s4t"]
  a3, b3, _, _ = operands("NULL:CUDA", 40, 24, 72, dtypes.float16)   # small: the smallest tile, the most blocks
  assert [o.arg for o in hand_coded_opts(_ast(a3 @ b3), SM90A) if o.op is OptOps.TC] == ["wg64x64x64s4t"]
  # rows that are not 16-byte multiples are no tensor maps: cp.async tiles; and TMA=0 keeps to those
  a4, b4, _, _ = operands("NULL:CUDA", 40, 24, 36, dtypes.float16)
  assert [o.arg for o in hand_coded_opts(_ast(a4 @ b4), SM90A) if o.op is OptOps.TC] == ["wg64x64x64s4"]
  monkeypatch.setattr(tc, "TMA", 0)
  assert [o.arg for o in hand_coded_opts(ast, SM90A) if o.op is OptOps.TC] == [WG_ORDER[0]]
  # BEAM tries them all where they apply
  assert {o.arg for o in actions(ast, SM90A) if o.op is OptOps.TC} >= set(WG)

def test_wgmma_refusals_name_the_problem():
  a, b, _, _ = operands("NULL:CUDA", 256, 256, 256, dtypes.float16)
  ast = _ast(a @ b)
  with pytest.raises(KernelOptError, match="no wgmma.*sm_90a"):
    apply_opt(ast, Opt(OptOps.TC, None, WG[0]), CUDARenderer("sm_90"))
  small = type("Small", (CUDARenderer,), {"max_shared": 96 * 1024})("sm_90a")
  with pytest.raises(KernelOptError, match="shared memory"):
    apply_opt(ast, Opt(OptOps.TC, None, "wg256x128x64s4"), small)
  b32 = Tensor.empty(256, 256, device="NULL:CUDA")
  with pytest.raises(KernelOptError): apply_opt(_ast(b32 @ b32), Opt(OptOps.TC, None, WG[0]), SM90A)
  odd, _, _, _ = operands("NULL:CUDA", 40, 24, 36, dtypes.float16)   # (rows of 36 values: 72 bytes)
  with pytest.raises(KernelOptError, match="TMA tiles read each operand as a strided 3-d view"):
    apply_opt(_ast(odd @ odd.T), Opt(OptOps.TC, None, "wg64x64x64s2t"), SM90A)

def test_wgmma_rendering_needs_sm90a():
  p = wg_program(128, 128, 64, "nn", dtypes.float16, "wg64x64x64s2")
  assert "teeny_wgmma_n64_f16<0, 0, 16, 16>" in p.src or "teeny_wgmma_n64_f16<0, 1, 16, 8192>" in p.src
  wmma = next(u for u in p.uops if u.op.name == "WMMA")
  with pytest.raises(NotImplementedError, match="no wgmma"):
    CUDARenderer("sm_90").render_wgmma(wmma.arg, "a", "s", "b", "c")

# ---- values: the kernels played by gpu_interp (its wgmma reads the swizzled tiles through the descriptors)

@pytest.mark.parametrize("case", [
  (64, 64, 64, "nn", "float16", "wg64x64x64s2", ()), (70, 130, 100, "nt", "float16", "wg64x128x64s3", ()),
  (130, 70, 200, "tn", "bfloat16", "wg128x128x64s4", ()), (33, 65, 9, "tt", "float16", "wg64x64x64s4", ()),
  (64, 64, 64, "nn", "bfloat16", "wg64x64x64s2", (2,)), (200, 260, 72, "nn", "float16", "wg128x256x64s3", ()),
  (130, 200, 130, "tt", "bfloat16", "wg256x128x64s2", ()), (40, 300, 64, "nt", "float16", "wg64x256x64s2", ()),
  (130, 200, 100, "nn", "bfloat16", "wg128x192x64s4", ()), (70, 390, 72, "tn", "float16", "wg64x192x64s3", ())],
  ids=str)
def test_wgmma_kernel_values_interpreted(case):
  interpreted_close(*case, renderer=SM90A)

@settings(max_examples=10, deadline=None)
@given(st.integers(2, 150), st.integers(2, 150), st.integers(2, 150), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(list(DTS)), st.sampled_from(["wg64x64x64s2", "wg64x128x64s3", "wg128x128x64s2"]),
       st.integers(0, 2**31 - 1))
def test_wgmma_kernel_values_interpreted_random(m, n, k, lay, dt, tile, seed):
  interpreted_close(m, n, k, lay, dt, tile, seed=seed, renderer=SM90A)

@pytest.mark.parametrize("case", [(2, 8, 16, 8, 3, 1, "wg64x64x64s3"), (1, 6, 72, 16, 1, 0, None),
                                  (2, 12, 64, 16, 3, 1, None)],
                         ids=str)
def test_conv_as_implicit_gemm_on_wgmma_interpreted(case):
  """A convolution's implicit GEMM (groups of ranges for m and k, input rows that start anywhere: plain copies) on
  wgmma tiles."""
  from test_smem import interpret_conv
  bs, cin, cout, hw, k, pad, tile = case
  got, want = interpret_conv(bs, cin, cout, hw, k, pad, dtypes.float16, tile, renderer=SM90A)
  np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * max(1.0, float(np.abs(want).max())))

# ---- TMA tiles (a producer warp copying tensor-map boxes, consumer warpgroups, mbarriers): gpu_interp runs each
# warpgroup as its own executor, the producer as far ahead as the barriers let it

TMA_CASES = [
  (64, 64, 64, "nn", "float16", "wg64x64x64s2t", ()), (100, 136, 264, "nt", "float16", "wg128x128x64s3t", ()),
  (136, 72, 200, "tn", "bfloat16", "wg128x128x64s4t", ()), (64, 128, 64, "tt", "bfloat16", "wg128x128x64s2t", ()),
  (40, 36, 72, "nt", "float16", "wg64x64x64s3t", ()),   # (N = 36: rows of the output the 16-byte epilogue cannot copy)
  (48, 64, 136, "nn", "float16", "wg64x128x64s2t", (3,)), (72, 264, 128, "tt", "float16", "wg64x256x64s5t", ()),
  (200, 200, 64, "nn", "bfloat16", "wg256x128x64s3t", ()), (130, 200, 72, "nn", "float16", "wg128x192x64s2t", ())]

@pytest.mark.parametrize("case", TMA_CASES, ids=str)
def test_tma_kernel_values_interpreted(case):
  interpreted_close(*case, renderer=SM90A)

@settings(max_examples=10, deadline=None)
@given(st.integers(1, 25), st.integers(1, 25), st.integers(1, 25), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(list(DTS)), st.sampled_from(["wg64x64x64s2t", "wg64x128x64s3t", "wg128x128x64s4t"]),
       st.sampled_from([(), (2,)]), st.integers(0, 2**31 - 1))
def test_tma_kernel_values_interpreted_random(m8, n8, k8, lay, dt, tile, batch, seed):
  interpreted_close(8 * m8, 8 * n8, 8 * k8, lay, dt, tile, batch, seed=seed, renderer=SM90A)

def _tma_epilogue(expr, out_dt, tile: str = "wg64x128x64s3t", staged: bool = True, seed: int = 0):
  """An epilogue fused into a TMA tile (bias, relu, a cast of the output), played by gpu_interp, against numpy."""
  from gpu_interp import run_kernel, to_bits, to_float
  rng = np.random.default_rng(seed)
  m, n, k = 136, 136, 64
  na, nb = (rng.standard_normal(s).astype(np.float16).astype(np.float32) for s in ((m, k), (k, n)))
  nbias = rng.standard_normal(n).astype(np.float16).astype(np.float32)
  a, b, bias = (Tensor.empty(*x.shape, dtype=dtypes.float16, device="NULL:CUDA") for x in (na, nb, nbias))
  si = [s for s in expr(a, b, bias).schedule() if s.kind == "kernel"][-1]
  p = get_program(si.ast, SM90A, opts=[Opt(OptOps.TC, None, tile)])
  assert p.tmaps and ("teeny_copy_out16" in p.src) == staged
  # the kernel's buffers by slot: the output, then the inputs in the order the schedule names them
  vals = {a.uop.base: na, b.uop.base: nb, bias.uop.base: nbias}
  bufs = {0: np.zeros(m * n, np.float32 if out_dt == dtypes.float32 else np.uint16)}
  for i, u in enumerate(si.bufs[1:]): bufs[i + 1] = to_bits(vals[u].ravel(), dtypes.float16)
  run_kernel(p.uops, bufs, p.local_size[0])
  got = bufs[0] if out_dt == dtypes.float32 else to_float(bufs[0], out_dt)
  return got.reshape(m, n), na @ nb, nbias

def test_tma_fused_epilogue_interpreted():
  """The staged epilogue (values into shared memory, then 16-byte chunks out) carries what fuses into the store: a
  bias and relu, and a float32 output."""
  got, prod, bias = _tma_epilogue(lambda a, b, c: (a @ b + c).relu(), dtypes.float16)
  _close(got, np.maximum(prod + bias, 0), dtypes.float16)
  got, prod, _ = _tma_epilogue(lambda a, b, c: (a @ b).cast(dtypes.float32), dtypes.float32)
  _close(got, prod, dtypes.float16)
  # a float32 tile of 128 x 128 (66 KB staged) does not fit two stages' 64 KB: the fragments' own stores
  got, prod, _ = _tma_epilogue(lambda a, b, c: (a @ b).cast(dtypes.float32), dtypes.float32, "wg128x128x64s2t", False)
  _close(got, prod, dtypes.float16)

def test_interpreter_catches_tma_pipeline_bugs(monkeypatch):
  """The interpreter's executors and mbarriers see what a wrong pipeline does: a stage released before the tensor
  cores finished reading it is copied over (wrong values), a wait for the wrong phase never returns (deadlock).
  (3 stages: one wgmma group left in flight, so the tile a warp just issued is still being read.)"""
  got, want = interpret(64, 64, 512, "nn", dtypes.float16, "wg64x64x64s3t", renderer=SM90A)
  _close(got, want, dtypes.float16)
  import teeny.codegen.tc as tc
  orig = tc._tma_pipeline
  def early_release(*a, **k):   # each warp releases the tile it just issued (k+1 for k): its group is still in flight
    eff = orig(*a, **k)
    def edit(e):
      if e.op is not Ops.END or "teeny_mbar_arrive(" not in str(dict(e.src[0].arg).get("CUDA", "")): return e
      kt = e.src[1]
      return e.replace(src=(e.src[0].substitute({kt: kt + 1}),) + e.src[1:])
    return [edit(e) for e in eff]
  monkeypatch.setattr(tc, "_tma_pipeline", early_release)
  got, want = interpret(64, 64, 512, "nn", dtypes.float16, "wg64x64x64s3t", renderer=SM90A)
  assert not np.allclose(got, want, atol=0.1)
  def wrong_parity(*a, **k):   # consumers wait for the phase after the tile's
    eff = orig(*a, **k)
    return [e.replace(src=e.src[:2] + ((e.src[2] + 1) % 2,)) if e.op is Ops.CUSTOM and
            dict(e.arg).get("CUDA", "").startswith("teeny_mbar_wait({0}, {1}, {2}, 1)") else e for e in eff]
  monkeypatch.setattr(tc, "_tma_pipeline", wrong_parity)
  with pytest.raises(AssertionError, match="deadlock"):
    interpret(64, 64, 512, "nn", dtypes.float16, "wg64x64x64s3t", renderer=SM90A)

def test_interpreter_reads_the_swizzle(monkeypatch):
  """Tiles written unswizzled are read wrong: the interpreter's model of the descriptors is its own, not a mirror of
  the copies' placement."""
  import teeny.codegen.tc as tc
  monkeypatch.setattr(tc, "_swizzled", lambda major, bk, row, col: (row // 8) * 256 + (row % 8) * 32 + col * 4
                      if major == "k" else (col // 8) * (bk * 32) + (row // 8) * 256 + (row % 8) * 32 + (col % 8) * 4)
  got, want = interpret(64, 64, 64, "nn", dtypes.float16, "wg64x64x64s2", renderer=SM90A)
  assert not np.allclose(got, want, atol=0.1)

def test_interpreter_catches_a_stage_copied_over_in_flight(monkeypatch):
  """With a wgmma group left in flight the copies must run one tile less ahead; copying S-1 ahead overwrites the
  stage the group still reads, which the interpreter (running a group when its wait lets it finish) shows."""
  import teeny.codegen.tc as tc
  assert tc.TC_CONFIGS["wg64x64x64s3"].inflight == 1
  got, want = interpret(64, 64, 320, "nn", dtypes.float16, "wg64x64x64s3", renderer=SM90A)
  _close(got, want, dtypes.float16)
  import gpu_interp
  monkeypatch.setattr(gpu_interp, "EARLY_COPIES", True)   # (copies landing at once: the hazard's worst case)
  got, want = interpret(64, 64, 320, "nn", dtypes.float16, "wg64x64x64s3", renderer=SM90A)
  _close(got, want, dtypes.float16)
  orig = tc._tiled
  monkeypatch.setattr(tc, "_tiled", lambda *a, **k: orig(*a, **{**k, "ahead": None}))
  got, want = interpret(64, 64, 320, "nn", dtypes.float16, "wg64x64x64s3", renderer=SM90A)
  assert not np.allclose(got, want, atol=0.1)

# ---- values on an H200 (DEV=CUDA on a Hopper GPU: its renderer has wgmma)

def _has_wgmma() -> bool:
  try: return bool(getattr(Device[Device.DEFAULT].renderer, "wgmma", False))
  except Exception: return False

needs_wgmma = pytest.mark.skipif(not _has_wgmma(), reason="the default device has no wgmma (DEV=CUDA on a Hopper GPU)")

@needs_wgmma
@pytest.mark.parametrize("tile", WG)
def test_wgmma_tiles_on_the_gpu(tile, monkeypatch):
  """Every tile, all four layouts, float16 and bfloat16, ragged sizes and a batch, against numpy."""
  import teeny.codegen.opt as opt
  from teeny.engine import realize
  monkeypatch.setattr(opt, "pick_config", lambda mt, renderer=None: TC_CONFIGS[tile])
  monkeypatch.setattr(realize, "_program_cache", {})   # (the same kernels were built with other tiles)
  monkeypatch.setattr(realize, "_compiled_cache", {})
  shapes = ((300, 520, 200), (130, 70, 136)) if not TC_CONFIGS[tile].tma else ((304, 520, 200), (136, 72, 136))
  for lay in ("nn", "nt", "tn", "tt"):
    for dt, (m, n, k), batch in ((dtypes.float16, shapes[0], ()), (dtypes.bfloat16, shapes[1], (2,))):
      a, b, na, nb = operands(Device.DEFAULT, m, n, k, dt, lay, batch, np.random.default_rng(1))
      out = a @ b
      assert [p.opts[0].arg for p in tc_specs(out, Device.DEFAULT)] == [tile]
      _close(out.cast(dtypes.float32).numpy(), na @ nb, dt)

@needs_wgmma
@settings(max_examples=20, deadline=None)
@given(st.integers(2, 700), st.integers(2, 700), st.integers(2, 700), st.sampled_from(["nn", "nt", "tn", "tt"]),
       st.sampled_from(list(DTS)), st.sampled_from([(), (3,)]), st.integers(0, 2**31 - 1))
def test_wgmma_matmul_values(m, n, k, lay, dt, batch, seed):
  d = DTS[dt]
  a, b, na, nb = operands(Device.DEFAULT, m, n, k, d, lay, batch, np.random.default_rng(seed))
  out = a @ b
  ps = tc_specs(out, Device.DEFAULT)
  assert ps and all(isinstance(TC_CONFIGS[p.opts[0].arg], WGConfig) for p in ps)
  _close(out.cast(dtypes.float32).numpy(), na @ nb, d)

def test_tensor_maps_at_launch_and_rebound_in_cuda_graphs(monkeypatch):
  """The runtime side of the TMA tiles, with a fake driver (no GPU): a launch passes each map after the buffers and
  variables, encoded from its buffer's address plus the view's first element (one map object per address and view);
  a CUDA graph (TinyJit's replay) encodes a buffer's maps again when the buffer is rebound, and updates that node."""
  import types
  pytest.importorskip("cuda.bindings")
  from cuda.bindings import driver
  import teeny.runtime.ops_cuda as oc
  ok = driver.CUresult.CUDA_SUCCESS
  enc: list[int] = []
  def encode(kind, rank, addr, dims, *rest):
    enc.append(addr)
    m = types.SimpleNamespace(addr=addr)
    m.getPtr = lambda m=m: id(m)
    return ok, m
  monkeypatch.setattr(driver, "cuTensorMapEncodeTiled", encode)
  monkeypatch.setattr(oc, "_tensor_maps", {})
  p = wg_program(128, 128, 64, "nn", dtypes.float16, "wg64x64x64s2t")
  assert [t[0] for t in p.tmaps] == [1, 2] and all(t[1] == dtypes.float16 for t in p.tmaps)
  m = oc.tensor_map(0x10000, p.tmaps[0])
  assert oc.tensor_map(0x10000, p.tmaps[0]) is m and enc == [0x10000 + 2 * p.tmaps[0][5]]
  # a graph of one launch of the kernel over three buffers; then buffer 2 rebound
  nodes: list = []
  monkeypatch.setattr(driver, "CUDA_KERNEL_NODE_PARAMS", types.SimpleNamespace)
  monkeypatch.setattr(driver, "cuGraphCreate", lambda flags: (ok, "graph"))
  monkeypatch.setattr(driver, "cuGraphAddKernelNode", lambda g, deps, n, prm: (ok, nodes.append(prm) or len(nodes)))
  monkeypatch.setattr(driver, "cuGraphInstantiate", lambda g, flags: (ok, "exec"))
  updated: list = []
  monkeypatch.setattr(driver, "cuGraphExecKernelNodeSetParams", lambda e, n, prm: (updated.append(n), ok)[1])
  monkeypatch.setattr(driver, "cuGraphLaunch", lambda e, s: ok)
  dev = types.SimpleNamespace(activate=lambda: None)
  prg = types.SimpleNamespace(fxn="fxn", smem=p.smem, name=p.name)
  bufs = [types.SimpleNamespace(ensure_allocated=lambda a=a: types.SimpleNamespace(_opaque=a))
          for a in (0x1000, 0x2000, 0x3000)]
  g = oc.CUDAGraph(dev, [("kernel", prg, p, [0, 1, 2], (), 0)], bufs)
  argv = g.keep[0][1]
  assert len(argv) == 5 and nodes[0].kernelParams == argv.ctypes.data   # 3 buffers, then the 2 maps
  maps = {k: v for (i, k), v in g.maps.items()}
  assert maps[3].addr == 0x2000 + 2 * p.tmaps[0][5] and maps[4].addr == 0x3000 + 2 * p.tmaps[1][5]
  assert int(argv[3]) == id(maps[3]) and int(argv[4]) == id(maps[4])
  g.bind(2, types.SimpleNamespace(ensure_allocated=lambda: types.SimpleNamespace(_opaque=0x9000)))
  g()
  assert g.maps[(0, 4)].addr == 0x9000 + 2 * p.tmaps[1][5] and int(argv[4]) == id(g.maps[(0, 4)])
  assert g.maps[(0, 3)] is maps[3] and updated == [1]   # (A's map kept; the node's parameters set again)
  g.exec = g.graph = None   # (the fake handles: nothing to destroy)

def test_launch_packs_arguments_through_ctypes(monkeypatch):
  """A CUDA launch goes straight to libcuda's cuLaunchKernel (ctypes): its kernelParams array must point at each
  buffer's address, then each variable (an int32 in the low half of its cell), then each tensor map; grid, block and
  shared memory as the spec says. Checked against a fake libcuda (no GPU), over two launches that reuse the cells."""
  import ctypes, types
  pytest.importorskip("cuda.bindings")
  import teeny.runtime.ops_cuda as oc
  p = wg_program(128, 128, 64, "nn", dtypes.float16, "wg64x64x64s2t")
  seen: list = []
  def launch(fxn, gx, gy, gz, bx, by, bz, smem, stream, argp, extra):
    argv = (ctypes.c_void_p * 6).from_address(argp)
    word = lambda i: ctypes.c_uint64.from_address(argv[i]).value
    seen.append(((fxn, gx, gy, gz, bx, by, bz, smem, stream, extra), [word(i) for i in range(4)], argv[4], argv[5]))
    return 0
  monkeypatch.setattr(oc, "_cu", lambda: types.SimpleNamespace(cuLaunchKernel=launch))
  maps: dict = {}
  def fake_map(ptr, tm):
    m = maps.setdefault((ptr, tm), types.SimpleNamespace(addr=ptr))
    m.getPtr = lambda m=m: id(m)
    return m
  monkeypatch.setattr(oc, "tensor_map", fake_map)
  prg = object.__new__(oc.CUDAProgram)
  prg.dev, prg.name, prg.fxn_handle, prg.smem = types.SimpleNamespace(activate=lambda: None), p.name, 0xF00, p.smem
  prg._launch_state(p)
  for bufs, vals in (((0x1000, 0x2000, 0x3000), (7,)), ((0x5000, 0x2000, 0x6000), (-1,))):
    assert prg(*bufs, global_size=(4, 2), local_size=(288,), vals=vals) == 0.0
    dims, words, m1, m2 = seen[-1]
    assert dims == (0xF00, 4, 2, 1, 288, 1, 1, p.smem, None, None)
    assert words == [*bufs, vals[0] & 0xFFFFFFFF]
    assert m1 == id(maps[(bufs[1], p.tmaps[0])]) and m2 == id(maps[(bufs[2], p.tmaps[1])])
