"""Custom kernels (Tensor.custom_kernel) and teeny's hand-written kernels (teeny.kernels: embedding, cross-entropy/NLL,
conv2d backward), checked against the plain autograd graph (TEENY_CUSTOM_KERNELS=0) and PyTorch, with tolerances (float
atomics are not bit-reproducible). On the CPU the work is forced across two threads."""
from __future__ import annotations
import contextlib, io
import numpy as np
import pytest
from helpers import needs_values, toolchain
from teeny import Device, Tensor, dtypes
from teeny.helpers import Context
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp
import teeny.kernels as K

torch = pytest.importorskip("torch")
DEV = Device.DEFAULT
THREADS = Context(CPU_THREADS=2)

def _src(fn) -> str:
  """What DEBUG=4 prints (the generated source) while fn() runs."""
  buf = io.StringIO()
  with Context(DEBUG=4), contextlib.redirect_stdout(buf): fn()
  return buf.getvalue()

# ---- the custom kernel API

def _add_one(n: int, name: str = "add_one"):
  def fxn(out: UOp, x: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return out.index(i).store(x.index(i).load() + 1.0).end(i).sink(arg=KernelInfo(name=name, opts_to_apply=()))
  return fxn

@needs_values
def test_add_one_across_threads():
  n = 1 << 20
  x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
  with THREADS:
    out = Tensor.zeros(n).contiguous().realize().custom_kernel(Tensor(x), fxn=_add_one(n))
  assert len(out) == 2
  np.testing.assert_allclose(out[0].numpy(), x + 1, rtol=1e-6)
  np.testing.assert_allclose(out[1].numpy(), x)   # one tensor per placeholder: the input is unchanged

def test_debug4_shows_custom_source():
  src = _src(lambda: Tensor.zeros(64).contiguous().realize()
             .custom_kernel(Tensor.ones(64), fxn=_add_one(64, "add_one_dbg"))[0].realize())
  assert "add_one_dbg" in src and "+1.0f" in src.replace(" ", "")

@needs_values
def test_loop_and_local_ranges():
  """GLOBAL x LOCAL x LOOP: out[i, j] = sum_k x[i, j, k], accumulated by plain stores (each (i, j) has one owner)."""
  a, b, c = 64, 32, 50
  x = np.random.default_rng(1).standard_normal((a, b, c)).astype(np.float32)
  def fxn(out: UOp, xs: UOp) -> UOp:
    i, j, k = UOp.range(a, 0, AxisType.GLOBAL), UOp.range(b, 1, AxisType.LOCAL), UOp.range(c, 2, AxisType.LOOP)
    o = out.index(i, j)
    return o.store(o.load() + xs.index(i, j, k).load()).end(i, j, k).sink(
      arg=KernelInfo(name="sum_last", opts_to_apply=()))
  with THREADS:
    res = Tensor.zeros(a, b).contiguous().realize().custom_kernel(Tensor(x), fxn=fxn)[0].numpy()
  np.testing.assert_allclose(res, x.sum(-1), rtol=1e-4, atol=1e-5)

def test_launch_checks_buffer_count():
  """A SINK that declares a placeholder the call does not pass: the launch names the mismatch."""
  def fxn(out: UOp, x: UOp) -> UOp:
    extra = UOp.placeholder(2, dtypes.float32, (16,))
    i = UOp.range(16, 0, AxisType.GLOBAL)
    return out.index(i).store(x.index(i).load() + extra.index(i).load()).end(i).sink(
      arg=KernelInfo(name="extra", opts_to_apply=()))
  with pytest.raises(RuntimeError, match="declares 3 buffer parameters but was launched with 2"):
    Tensor.zeros(16).contiguous().realize().custom_kernel(Tensor.ones(16), fxn=fxn)[0].realize()

def test_launch_checks_buffer_dtype():
  def fxn(out: UOp, x: UOp) -> UOp:
    as_int = UOp.placeholder(1, dtypes.int32, (16,))   # the call passes float32
    i = UOp.range(16, 0, AxisType.GLOBAL)
    return out.index(i).store(as_int.index(i).load().cast(dtypes.float32)).end(i).sink(
      arg=KernelInfo(name="bad_dtype", opts_to_apply=()))
  with pytest.raises(TypeError, match=r"data1 is dtypes.int32, but the buffer passed is dtypes.float32"):
    Tensor.zeros(16).contiguous().realize().custom_kernel(Tensor.ones(16), fxn=fxn)[0].realize()

def test_no_grad_fxn_raises():
  x = Tensor.ones(16, requires_grad=True).realize()
  y = Tensor.zeros(16).contiguous().realize().custom_kernel(x, fxn=_add_one(16, "no_grad"))[0]
  with pytest.raises(RuntimeError, match="has no grad_fxn"): y.sum().backward()

@needs_values
def test_grad_fxn():
  def fxn(out: UOp, x: UOp) -> UOp:
    i = UOp.range(16, 0, AxisType.GLOBAL)
    return out.index(i).store(x.index(i).load() * 3.0).end(i).sink(arg=KernelInfo(name="times3", opts_to_apply=()))
  x = Tensor(np.arange(16, dtype=np.float32), requires_grad=True).realize()
  y = Tensor.zeros(16).contiguous().realize().custom_kernel(x, fxn=fxn, grad_fxn=lambda g, xx: (g * 3,))[0]
  (y * y).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), 18 * np.arange(16), rtol=1e-6)

def _hist(n: int, loop: int, atomic: bool):
  def fxn(out: UOp, ids: UOp) -> UOp:
    i, k = UOp.range(n, 0, AxisType.GLOBAL), UOp.range(loop, 1, AxisType.LOOP)
    addr = out.index(ids.index(k).load())
    eff = addr.atomic("add", 1, sem=MemSem.Relaxed) if atomic else addr.store(addr.load() + 1)
    return eff.end(i, k).sink(arg=KernelInfo(name=f"hist_{'atomic' if atomic else 'plain'}", opts_to_apply=()))
  return fxn

@pytest.mark.parametrize("atomic", [True, False], ids=["atomic", "plain-negative-control"])
def test_histogram_on_default_device(atomic):
  """Many programs adding into 4 bins: the atomic version gives the exact count.

  The plain load+store version is the negative control. Its source, rendered for the default device, holds no atomic
  (the atomic one's does), so the exact count depends on the atomic. Running it shows lost updates only on a GPU: on the
  CPU (and PoCL) the compiler turns the plain increment into one read-modify-write per element, which two threads were
  never seen to interleave, so there it checks only that no count is made up. test_atomics.py's negative controls (load
  and store kept apart) show the race on the CPU."""
  from teeny.codegen.kernel import get_program
  n, loop, bins = 4096, 256, 4
  ph = [UOp.placeholder(0, dtypes.int32, (bins,)), UOp.placeholder(1, dtypes.int32, (loop,))]
  src = get_program(_hist(n, loop, atomic)(*ph), Device[DEV].renderer).src
  assert ("atomic" in src.lower()) == atomic, src
  if DEV.startswith("NULL"): return
  ids = Tensor((np.arange(loop) % bins).astype(np.int32))
  exact = n * loop // bins
  for _ in range(5):
    with THREADS:
      res = Tensor.zeros(bins, dtype=dtypes.int32).contiguous().realize().custom_kernel(
        ids, fxn=_hist(n, loop, atomic))[0].numpy()
    if atomic:
      assert (res == exact).all(), res
      return
    assert (res <= exact).all() and (res > 0).all(), f"a plain increment can lose counts, not make them up: {res}"
    if DEV.startswith(("CPU", "CL")) or (res != exact).any(): return
  pytest.fail("the plain read-modify-write never lost an update on a GPU: the race is not real here")

# ---- embedding

def _torch_embedding(w, ids, g):
  tw = torch.tensor(w, requires_grad=True)
  torch.nn.functional.embedding(torch.tensor(ids).long(), tw).backward(torch.tensor(g))
  return tw.grad.numpy()

@needs_values
@pytest.mark.parametrize("vocab,dim,shape", [(100, 32, (8, 256)), (50, 7, (1000,)), (3, 64, (4, 4))])
def test_embedding_matches_graph_and_torch(vocab, dim, shape):
  rng = np.random.default_rng(2)
  w = rng.standard_normal((vocab, dim)).astype(np.float32)
  ids = rng.integers(0, vocab, shape).astype(np.int32)   # many repeats: the backward must add them all up
  g = rng.standard_normal((*shape, dim)).astype(np.float32)
  grads = {}
  for custom in (1, 0):
    with THREADS, Context(TEENY_CUSTOM_KERNELS=custom):
      W = Tensor(w, requires_grad=True).realize()
      y = K.embedding(W, Tensor(ids))
      np.testing.assert_allclose(y.numpy(), w[ids])
      y.backward(Tensor(g))
      grads[custom] = W.grad.numpy()
  ref = _torch_embedding(w, ids, g)
  np.testing.assert_allclose(grads[1], ref, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)

@needs_values
def test_embedding_bwd_masks_out_of_range_ids():
  """Ids only known on the device (computed): out-of-range ones read zeros and add nothing, never out of bounds."""
  vocab, dim = 10, 16
  ids = np.array([0, 3, -1, 10, 9, 1000, 3, -7], dtype=np.int32)
  g = np.ones((len(ids), dim), np.float32)
  with THREADS, Context(TEENY_CHECK_INDICES=0):  # no range check reads them (the GPU default)
    W = Tensor(np.ones((vocab, dim), np.float32), requires_grad=True).realize()
    dev_ids = Tensor(ids) + 0   # lazy: the host check cannot see these values
    y = K.embedding(W, dev_ids)
    ok = (ids >= 0) & (ids < vocab)
    np.testing.assert_allclose(y.numpy(), np.broadcast_to(np.where(ok[:, None], 1.0, 0.0), (len(ids), dim)))
    y.backward(Tensor(g))
    want = np.zeros((vocab, dim), np.float32)
    np.add.at(want, ids[ok], g[ok])
    np.testing.assert_allclose(W.grad.numpy(), want)
    np.testing.assert_allclose(K.embedding_bwd(Tensor(g), Tensor(ids), vocab).numpy(), want)

@pytest.mark.skipif(not DEV.startswith("CPU"), reason="ids are checked on the host only where reading them is free "
                    "(CPU)")
def test_embedding_host_ids_out_of_range_raise():
  W = Tensor.ones(10, 4, requires_grad=True).realize()
  with pytest.raises(IndexError, match="out of range"): K.embedding(W, Tensor(np.array([1, 10], np.int32)).realize())

def test_embedding_fallback_is_the_graph():
  W = Tensor.ones(10, 4, requires_grad=True).realize()
  with Context(TEENY_CUSTOM_KERNELS=0): y = K.embedding(W, Tensor(np.array([1, 2], np.int32)))
  assert not any(u.op is Ops.CUSTOM_KERNEL for u in y.uop.toposort)
  y2 = K.embedding(W, Tensor(np.array([1, 2], np.int32)))
  assert any(u.op is Ops.CUSTOM_KERNEL for u in y2.uop.toposort)

@needs_values
def test_embedding_half():
  rng = np.random.default_rng(3)
  w = rng.standard_normal((20, 8)).astype(np.float16)
  ids = rng.integers(0, 20, 300).astype(np.int32)
  g = rng.standard_normal((300, 8)).astype(np.float16)
  with THREADS:
    W = Tensor(w, requires_grad=True).realize()
    K.embedding(W, Tensor(ids)).backward(Tensor(g))
    got = W.grad.numpy()
  assert W.grad.dtype == dtypes.float16
  np.testing.assert_allclose(got.astype(np.float32), _torch_embedding(w.astype(np.float32), ids, g.astype(np.float32)),
                             rtol=2e-2, atol=2e-2)

def test_embedding_bwd_source_on_c():
  """DEBUG=4 on an embedding backward shows the atomic (a CAS loop for float on C)."""
  def run():
    W = Tensor.ones(10, 64, requires_grad=True, device="NULL" if DEV.startswith("NULL") else DEV).realize()
    K.embedding(W, Tensor(np.arange(8, dtype=np.int32) % 10, device=W.device)).sum().backward()
    W.grad.realize()
  if not DEV.startswith(("CPU", "NULL")) or (DEV.startswith("NULL") and DEV != "NULL"): pytest.skip("C renderer only")
  src = _src(run)
  assert ("void embedding_bwd_10_64(" in src and "teeny_atomic_add_f32_relaxed(" in src
          and "__atomic_compare_exchange_n" in src)

# ---- cross-entropy / NLL

def _ce_all(lg, tg, reduction, ignore_index, custom):
  with THREADS, Context(TEENY_CUSTOM_KERNELS=custom):
    L = Tensor(lg, requires_grad=True).realize()
    loss = K.cross_entropy(L, Tensor(tg), reduction=reduction, ignore_index=ignore_index)
    g = np.linspace(0.5, 1.5, int(np.prod(loss.shape))).astype(np.float32).reshape(loss.shape)
    loss.backward(Tensor(g))
    return loss.numpy(), L.grad.numpy(), g

@needs_values
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_cross_entropy(reduction, ignore_index):
  rng = np.random.default_rng(4)
  n, c = 300, 37
  lg = (rng.standard_normal((n, c)) * 3).astype(np.float32)
  tg = rng.integers(0, c, n).astype(np.int32)
  tg[::5] = ignore_index
  loss, grad, g = _ce_all(lg, tg, reduction, ignore_index, 1)
  loss0, grad0, _ = _ce_all(lg, tg, reduction, ignore_index, 0)
  tl = torch.tensor(lg, requires_grad=True)
  tloss = torch.nn.functional.cross_entropy(tl, torch.tensor(tg).long(), reduction=reduction, ignore_index=ignore_index)
  tloss.backward(torch.tensor(g))
  for got in (loss, loss0): np.testing.assert_allclose(got, tloss.detach().numpy(), rtol=1e-5, atol=1e-5)
  for got in (grad, grad0): np.testing.assert_allclose(got, tl.grad.numpy(), rtol=1e-4, atol=1e-6)

@needs_values
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(weighted, reduction):
  rng = np.random.default_rng(5)
  n, c = 257, 11
  lp = np.log(rng.dirichlet(np.ones(c), n)).astype(np.float32)
  tg = rng.integers(0, c, n).astype(np.int32)
  tg[::4] = -100
  wt = rng.uniform(0.5, 2, c).astype(np.float32) if weighted else None
  tl = torch.tensor(lp, requires_grad=True)
  tloss = torch.nn.functional.nll_loss(tl, torch.tensor(tg).long(), weight=torch.tensor(wt) if weighted else None,
                                       reduction=reduction)
  g = np.full(tloss.shape, 0.75, np.float32)
  tloss.backward(torch.tensor(g))
  for custom in (1, 0):
    with THREADS, Context(TEENY_CUSTOM_KERNELS=custom):
      L = Tensor(lp, requires_grad=True).realize()
      loss = K.nll_loss(L, Tensor(tg), weight=Tensor(wt) if weighted else None, reduction=reduction)
      loss.backward(Tensor(g))
      np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-5, atol=1e-5)
      np.testing.assert_allclose(L.grad.numpy(), tl.grad.numpy(), rtol=1e-5, atol=1e-6)

@needs_values
def test_nll_bwd_masked_store_and_atomic():
  """Every element of every row is written (no stale memory), the target column gets -g, ignored rows stay zero."""
  tg = np.array([2, -100, 0, 5, 2], np.int32)
  with THREADS: d = K.nll_bwd(Tensor(np.arange(1, 6, dtype=np.float32)), Tensor(tg), 6, ignore_index=-100).numpy()
  want = np.zeros((5, 6), np.float32)
  for r, t in enumerate(tg):
    if t >= 0: want[r, t] = -(r + 1)
  np.testing.assert_array_equal(d, want)

# ---- conv2d backward

CONVS = [  # (batch, cin, h, w, cout, k, stride, padding, dilation, groups)
  (2, 4, 9, 11, 6, 3, 1, 1, 1, 1), (2, 4, 9, 11, 6, 3, 2, 1, 1, 2), (1, 6, 8, 8, 6, 3, 2, 2, 2, 3),
  (2, 3, 7, 7, 4, 1, 3, 0, 1, 1),
  (3, 8, 12, 10, 8, 5, 1, 2, 1, 1), (2, 4, 10, 10, 4, 3, 1, 1, 1, 4), (8, 16, 14, 14, 16, 3, 1, 1, 1, 1),
  (2, 6, 11, 9, 6, 3, 1, 2, 2, 3), (2, 4, 9, 9, 4, 3, 1, ((1, 0), (2, 1)), 1, 1), (1, 4, 8, 8, 4, 3, 1, 3, 1, 1),
  # register tiles of the CPU kernels: 4 output x 8 input channels per group, and two 16-channel blocks at stride 2
  (2, 16, 6, 7, 8, 3, 1, 1, 1, 2), (2, 32, 5, 5, 8, 3, 2, 1, 1, 1),
  # strided input gradients through the stride-1 kernel on zero-inserted grad_out: a 7x7 stem, stride 3
  (2, 3, 15, 13, 4, 7, 2, 3, 1, 1), (2, 4, 10, 10, 4, 3, 3, 1, 1, 1)]

@needs_values
@pytest.mark.parametrize("cfg", CONVS, ids=lambda c: "x".join(map(str, c)).replace(" ", ""))
def test_conv2d_bwd(cfg):
  b, ci, h, w, co, k, st, pd, dl, gr = cfg
  rng = np.random.default_rng(6)
  x = rng.standard_normal((b, ci, h, w)).astype(np.float32)
  wt = rng.standard_normal((co, ci // gr, k, k)).astype(np.float32)
  bias = rng.standard_normal(co).astype(np.float32)
  tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, bias))
  if isinstance(pd, tuple):  # (top, bottom), (left, right): torch wants it as an explicit pad
    (pt, pb), (pl, pr) = pd
    ty = torch.nn.functional.conv2d(torch.nn.functional.pad(tx, (pl, pr, pt, pb)), tw, tb, stride=st, dilation=dl,
                                    groups=gr)
  else: ty = torch.nn.functional.conv2d(tx, tw, tb, stride=st, padding=pd, dilation=dl, groups=gr)
  gy = rng.standard_normal(ty.shape).astype(np.float32)
  ty.backward(torch.tensor(gy))
  tol = dict(rtol=1e-4, atol=1e-4)
  with THREADS:
    # gather_cl / gather_rows: the CPU's two gather kernels by name (on GPUs both are the gather)
    for variant in ("gather", "gather_cl", "gather_rows", "scatter"):
      gx, gw = K.conv2d_bwd(Tensor(x), Tensor(wt), Tensor(gy), st, pd, dl, gr, variant=variant)
      np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), **tol)
      np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), **tol)
    for custom in (1, 0):
      with Context(TEENY_CUSTOM_KERNELS=custom):
        X, W, B = (Tensor(a, requires_grad=True).realize() for a in (x, wt, bias))
        y = K.conv2d(X, W, B, st, pd, dl, gr)
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **tol)
        y.backward(Tensor(gy))
        for got, want in ((X.grad, tx.grad), (W.grad, tw.grad), (B.grad, tb.grad)):
          np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)

def test_conv2d_bwd_bad_variant():
  with pytest.raises(ValueError, match="variant must be 'gather', 'gather_cl'"):
    K.conv2d_bwd(Tensor.ones(1, 2, 5, 5), Tensor.ones(3, 2, 3, 3), Tensor.ones(1, 3, 3, 3), variant="gathr")

def test_conv2d_bwd_bad_grad_shape():
  with pytest.raises(ValueError, match="grad_out shape"):
    K.conv2d_bwd(Tensor.ones(1, 2, 5, 5), Tensor.ones(3, 2, 3, 3), Tensor.ones(1, 3, 5, 5))

# ---- the GPU spellings: hand-written kernels rendered for CUDA, HIP and OpenCL (and compiled where a toolchain is
# here)

def _gpu_kernels(lang: str):
  """ProgramSpecs of the backward kernels of embedding, conv2d (both input variants) and cross-entropy on
  NULL:<lang>."""
  from teeny.codegen.kernel import get_program
  dev = f"NULL:{lang}"
  W = Tensor.ones(100, 64, device=dev, requires_grad=True).realize()
  K.embedding(W, Tensor(np.arange(10, dtype=np.int32) % 7, device=dev)).sum().backward()
  x, w = Tensor.ones(2, 4, 9, 9, device=dev).realize(), Tensor.ones(6, 4, 3, 3, device=dev).realize()
  g = Tensor.ones(2, 6, 5, 5, device=dev).realize()
  gx_g, gw = K.conv2d_bwd(x, w, g, 2, 1, variant="gather")
  gx_s, _ = K.conv2d_bwd(x, w, g, 2, 1, variant="scatter")
  lg = Tensor.ones(16, 10, device=dev, requires_grad=True).realize()
  K.cross_entropy(lg, Tensor(np.arange(16, dtype=np.int32) % 10, device=dev)).backward()
  items = [si for t in (W.grad, gx_g, gx_s, gw, lg.grad) for si in t.schedule() if si.kind == "custom"]
  return {p.name: p for p in (get_program(si.ast, Device[dev].renderer) for si in items)}

@pytest.mark.parametrize("lang,atomic", [("CUDA", "atomicAdd"), ("HIP", "__hip_atomic_fetch_add"),
                                         ("CL", "atomic_cmpxchg")])
def test_gpu_render(lang, atomic):
  progs = _gpu_kernels(lang)
  assert {"embedding_bwd_100_64", "ce_bwd_16_10"} <= set(progs)
  assert atomic in progs["embedding_bwd_100_64"].src
  assert any(n.startswith("conv_bwd_x_scatter") and atomic in p.src for n, p in progs.items())
  assert all(p.local_size is not None for p in progs.values())

GPU_TARGETS = {"CUDA": ["sm_90"], "HIP": ["gfx1100", "gfx90a"], "CL": ["CL"]}

@pytest.mark.parametrize("lang,target", [(lang, t) for lang, ts in GPU_TARGETS.items() for t in ts])
def test_gpu_compile(lang, target):
  """The hand-written kernels compile with what CI installs: NVRTC (cuda-python) for sm_90, clang-19 for gfx1100 and
  gfx90a, PoCL for OpenCL; a missing toolchain fails under TEENY_REQUIRE_TOOLCHAINS=1."""
  c = toolchain(target)
  for p in _gpu_kernels(lang).values():
    lib = c.compile(p.src)
    assert c.valid_binary(lib) if lang != "CL" else len(lib) > 0, f"{target}: bad binary for {p.name}"

# ---- UNROLL ranges: written out in the IR (codegen/expand.py), one accumulator per value in one reduce loop

def _unrolled_matmul(out: UOp, a: UOp, b: UOp, n: int, k: int, m: int) -> UOp:
  i, jo = UOp.range(n, 0, AxisType.GLOBAL), UOp.range(m // 4, 1, AxisType.GLOBAL)
  ji, r = UOp.range(4, 2, AxisType.UNROLL), UOp.range(k, 3, AxisType.REDUCE)
  j = jo * 4 + ji
  acc = K.reduce_sum(a.index(i * k + r).load() * b.index(r * m + j).load(), r)
  return out.index(i * m + j).store(acc).sink(arg=KernelInfo(name="unrolled_mm", opts_to_apply=()))

@needs_values
def test_unroll_range_is_straight_line_and_correct():
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal((7, 8)).astype(np.float32)
  out = Tensor.empty(5, 8).custom_kernel(Tensor(a), Tensor(b),
                                         fxn=lambda o, x, y: _unrolled_matmul(o, x, y, 5, 7, 8))[0]
  np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  ph = [UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), (i, shp)) for i, shp in enumerate(((40,), (35,), (56,)))]
  src = get_program(_unrolled_matmul(*ph, 5, 7, 8), CRenderer()).src
  import re
  assert not re.search(r"for \((int|long) [ui]2", src)                 # no loop over the UNROLL range
  # an accumulator per lane, all four updated in the one reduce loop
  assert len(set(re.findall(r"(acc\d+) = \(\1\+", src))) == 4 and len(re.findall(r"for \((int|long) r3", src)) == 1

def test_unroll_expansion_in_the_ir():
  """After the "expand" pass no UNROLL range is left: a reduce over one combines its copies inside the loop that
  remains, a value that depends on one is repeated per value; the renderer refuses an UNROLL range it is handed."""
  from teeny.codegen.expand import expand_unrolls
  from teeny.codegen.linearize import linearize
  from teeny.codegen.render.c import CRenderer
  ph = [UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), (i, shp)) for i, shp in enumerate(((40,), (35,), (56,)))]
  ast = _unrolled_matmul(*ph, 5, 7, 8)
  out = expand_unrolls(ast)
  assert not any(u.op is Ops.RANGE and u.arg[1] is AxisType.UNROLL for u in out.toposort)
  assert len([u for u in out.toposort if u.op is Ops.REDUCE]) == 4 and len(out.src) == 4   # 4 stores
  # a reduce over an UNROLL range: one REDUCE left, over the loop range, of the copies' sum
  i, ru, rl = UOp.range(5, 0, AxisType.GLOBAL), UOp.range(4, 1, AxisType.UNROLL), UOp.range(2, 2, AxisType.REDUCE)
  red = K.reduce_sum(ph[1].index(i * 7 + rl * 4 + ru).load(), rl, ru)
  out = expand_unrolls(ph[0].index(i).store(red).sink(arg=KernelInfo(name="k", opts_to_apply=())))
  reds = [u for u in out.toposort if u.op is Ops.REDUCE]
  assert len(reds) == 1 and reds[0].src[1:] == (rl,)
  assert len([u for u in reds[0].src[0].toposort if u.op is Ops.LOAD]) == 4
  with pytest.raises(ValueError, match="UNROLL range reached the renderer"):
    CRenderer().render("k", linearize(ast))

def test_atomic_kernel_counts_its_loop_trips_for_threads():
  # the CPU splits a kernel over threads by how often its innermost body runs, not only by its float ops: the
  # embedding scatter (integer index math, atomics) must count tokens x columns
  from teeny.codegen.kernel import get_program
  from teeny.codegen.render.c import CRenderer
  from teeny.kernels.embedding import _embedding_bwd_kernel
  ph = [UOp.placeholder(0, dtypes.float32, (1000, 64)), UOp.placeholder(1, dtypes.float32, (4096, 64)),
        UOp.placeholder(2, dtypes.int32, (4096,))]
  spec = get_program(_embedding_bwd_kernel(*ph, False), CRenderer())
  assert spec.iters == 4096 * 64 and spec.global_size == [4096]

@needs_values
def test_tensor_cross_entropy_routes_big_problems_to_the_kernel():
  # Tensor.cross_entropy uses the hand-written backward for big (N, C) problems (on GPUs always), the graph for small
  rng = np.random.default_rng(5)
  x, t = rng.standard_normal((256, 300)).astype(np.float32), rng.integers(0, 300, 256).astype(np.int32)
  t[3] = -100
  X = Tensor(x, requires_grad=True)
  def run():
    X.grad = None
    X.cross_entropy(Tensor(t)).backward()
    X.grad.realize()
  assert "ce_bwd_256_300" in _src(run)
  p = np.exp(x - x.max(1, keepdims=True))
  p /= p.sum(1, keepdims=True)
  want = p.copy()
  want[np.arange(256), np.where(t < 0, 0, t)] -= 1
  want[3] = 0
  np.testing.assert_allclose(X.grad.numpy(), want / 255, rtol=1e-4, atol=1e-7)
  if not K.is_gpu(X.device):
    small = Tensor(x[:8, :10], requires_grad=True)
    assert "ce_bwd" not in _src(lambda: (small.cross_entropy(Tensor(t[:8] % 10)).backward(), small.grad.realize()))

@needs_values
def test_schedule_is_only_a_look():
  """Tensor.schedule() runs nothing and records nothing as run: a custom kernel's result read after it has the kernel's
  values (the schedule used to note the kernel as run, and the read then skipped it: zeros)."""
  from teeny.kernels import embedding
  w = Tensor(np.arange(40, dtype=np.float32).reshape(10, 4))
  ids = Tensor(np.array([1, 2, 3], np.int32))
  y = embedding(w, ids)
  assert [si.kind for si in y.schedule()] == ["custom"]
  assert [si.kind for si in y.schedule()] == ["custom"]   # still pending
  np.testing.assert_array_equal(y.numpy(), np.arange(40, dtype=np.float32).reshape(10, 4)[[1, 2, 3]])
  z = (w * 2).sum(1)
  z.schedule()
  np.testing.assert_array_equal(z.numpy(), (np.arange(40, dtype=np.float32).reshape(10, 4) * 2).sum(1))

@needs_values
def test_write_origin_of_a_dropped_output_tensor():
  """A custom kernel's output tensor (Tensor.empty) dropped before the realize: the graph rebuilt over it merged the
  writes' origins by hashing their weakrefs, and a dead one raised "weak object has gone away" (the GPU cross_entropy
  forward met it on OpenCL)."""
  import gc
  from teeny.kernels.common import with_grad
  from teeny.kernels.nll import CrossEntropyGrad
  def dbl(o, a):
    i = UOp.range(6, 0, AxisType.GLOBAL)
    return o.index(i).store(a.index(i).load() * 2).end(i).sink(arg=KernelInfo(name="dbl", opts_to_apply=()))
  x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
  stats = Tensor.empty(6).custom_kernel(x.detach().reshape(6), fxn=dbl)[0].reshape(3, 2)
  gc.collect()
  loss = with_grad(stats[0].sum(), (x, Tensor(np.int32([0, 1])), stats[1]), CrossEntropyGrad("sum", -100), "w")
  loss.backward()
  assert loss.item() == 2.0   # 2 * (0 + 1)
  lse = np.float32([4, 6])    # the "logsumexp" the kernel wrote: 2 * x[2:4]
  want = np.exp(np.arange(6, dtype=np.float32).reshape(2, 3) - lse[:, None])
  want[[0, 1], [0, 1]] -= 1
  np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)

@needs_values
def test_input_read_in_place_unless_the_kernel_writes_its_memory():
  """A detached buffer the kernel only reads is not copied; one whose memory the kernel writes (x.custom_kernel(
  x.detach())) is, so each element is read before any is written: here out[i] = x[n-1-i], which in place reads
  elements already overwritten (wrong values without the copy, once the loop is longer than a vector)."""
  n = 100003
  def rev(o, a):
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return o.index(i).store(a.index(n - 1 - i).load()).end(i).sink(arg=KernelInfo(name="rev", opts_to_apply=()))
  x = Tensor(np.arange(n, dtype=np.float32)).realize()
  y = Tensor.empty(n).custom_kernel(x.detach(), fxn=rev)[0]
  ks = [si.kind for si in y.schedule()]
  assert ks == ["custom"], ks   # no copy kernel before it
  np.testing.assert_array_equal(y.numpy(), np.arange(n)[::-1])
  z = x.custom_kernel(x.detach(), fxn=rev)[0]
  np.testing.assert_array_equal(z.numpy(), np.arange(n)[::-1])
  w = Tensor(np.arange(n, dtype=np.float32)).realize()
  v = w.custom_kernel(w, fxn=rev)[0]   # the same tensor as output and input: the input is its value before
  np.testing.assert_array_equal(v.numpy(), np.arange(n)[::-1])
