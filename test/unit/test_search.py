"""BEAM search (teeny/codegen/search.py): results against numpy, the chosen list cached on disk, wrong candidates
discarded, pinned kernels and the NULL device left alone, gather kernels searched only with their real inputs."""
import os
import numpy as np
import pytest
from helpers import needs_values
from teeny import Context, Device, Tensor
from teeny.codegen import search
from teeny.codegen.kernel import normalized
from teeny.codegen.opt import Opt, OptOps
from teeny.dtype import dtypes
from teeny.engine import realize
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp, written_slots

@pytest.fixture
def beam_env(tmp_path, monkeypatch):
  """A fresh compile cache, small search limits, every kernel searched (no minimum time), no programs in memory."""
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("BEAM_MAX_CANDIDATES", "12")
  monkeypatch.setenv("BEAM_MIN_US", "0")
  realize._program_cache.clear()
  yield tmp_path
  realize._program_cache.clear()

def _np(*shape, seed=0):
  return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)

def _searched(prefix: str = "r_") -> dict:
  """The figures of the last search of a kernel whose name starts with prefix (a reduce: r_...)."""
  return next(e for e in reversed(search.log) if e["name"].startswith(prefix))

def _mm_ast(opts, m=8, k=12, n=16) -> UOp:
  """A hand-written matmul kernel out[i, j] = sum_k a[i, k] * b[k, j] naming its own Opt list."""
  out, a, b = (UOp.placeholder(i, dtypes.float32, (s,)) for i, s in enumerate((m * n, m * k, k * n)))
  i, j, kk = UOp.range(m, 0, AxisType.GLOBAL), UOp.range(n, 1, AxisType.GLOBAL), UOp.range(k, 2, AxisType.REDUCE)
  acc = UOp(Ops.REDUCE, dtypes.float32, (a.index(i * k + kk).load() * b.index(kk * n + j).load(), kk), Ops.ADD)
  return out.index(i * n + j).store(acc).end(i, j).sink(arg=KernelInfo(name="mm", opts_to_apply=opts))

def _kernel_items(t: Tensor):
  return [si for si in t.schedule() if si.kind == "kernel"]

@needs_values
@pytest.mark.parametrize("case", ["matmul", "sum_axis", "elementwise", "max_rows"])
def test_beam_matches_numpy(beam_env, case):
  a, b = _np(32, 48), _np(48, 40, seed=1)
  ops = {"matmul": (lambda x, y: x @ y, lambda x, y: x @ y), "sum_axis": (lambda x, y: x.sum(1), lambda x, y: x.sum(1)),
         "elementwise": (lambda x, y: (x * 2 + 1).relu(), lambda x, y: np.maximum(x * 2 + 1, 0)),
         "max_rows": (lambda x, y: x.max(1), lambda x, y: x.max(1))}
  fn, ref = ops[case]
  with Context(BEAM=2):
    got = fn(Tensor(a), Tensor(b)).numpy()
  np.testing.assert_allclose(got, ref(a, b), rtol=1e-5, atol=1e-5)
  got_log = _searched("r_" if case != "elementwise" else "E_")
  assert not got_log["cached"] and got_log["tried"] >= 1

@needs_values
def test_beam_search_is_cached_on_disk(beam_env, monkeypatch):
  a, b = _np(32, 64), _np(64, 32, seed=1)
  with Context(BEAM=2): first = (Tensor(a) @ Tensor(b)).numpy()
  entries = [f for f in os.listdir(beam_env) if f.startswith("BEAM_")]
  assert entries, "the chosen list is written to the cache directory"
  chosen = _searched()["opts"]
  # a new process has no programs in memory: the list comes back from disk, nothing is searched
  realize._program_cache.clear()
  def no_search(*a, **k): raise AssertionError("searched again although the list was cached")
  monkeypatch.setattr(search, "Search", no_search)
  with Context(BEAM=2): again = (Tensor(a) @ Tensor(b)).numpy()
  assert _searched()["cached"] and _searched()["opts"] == chosen
  np.testing.assert_allclose(again, first, rtol=1e-6)
  np.testing.assert_allclose(again, a @ b, rtol=1e-4, atol=1e-5)
  # a damaged entry is not trusted: the kernel is searched again
  for f in entries:
    with open(os.path.join(beam_env, f), "r+b") as fh: fh.seek(20); fh.write(b"XX")
  realize._program_cache.clear()
  monkeypatch.undo()
  monkeypatch.setenv("TEENY_CACHE_DIR", str(beam_env))
  monkeypatch.setenv("BEAM_MIN_US", "0")
  with Context(BEAM=2): (Tensor(a) @ Tensor(b)).numpy()
  assert not _searched()["cached"]

@needs_values
def test_wrong_candidate_is_discarded(beam_env, monkeypatch):
  """Every candidate but the reference is built wrong (its accumulators start at 1): each is discarded and counted, and
  the result stays right."""
  real_compile = search.Search.compile
  def bad_compile(self, spec):
    if self.want_ok:   # the heuristics' list and the reference (run first) are built right, every later candidate wrong
      spec.src = spec.src.replace("= 0.0f;", "= 1.0f;")
      return self.dev.compiler.compile(spec.src)
    return real_compile(self, spec)
  monkeypatch.setattr(search.Search, "compile", bad_compile)
  monkeypatch.setattr(search.Search, "measure", _sequential_measure(search.Search.measure))
  a, b = _np(24, 40), _np(40, 36, seed=1)
  with Context(BEAM=2): got = (Tensor(a) @ Tensor(b)).numpy()
  np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-5)
  log = _searched()
  assert log["mismatches"] >= 1 and log["opts"] in ((), log["heuristics"]), "only the (right) reference list is left"

def _sequential_measure(measure):
  """measure() compiles on threads; the injected fault must see want_ok as set by the runs before it,
  so build one by one."""
  def seq(self, cands, bar, best, **kw):
    out = {}
    for c in cands: out.update(measure(self, [c], bar, min([best, *out.values()]), **kw))
    return out
  return seq

@needs_values
def test_pinned_kernel_is_not_searched(beam_env, monkeypatch):
  pinned = (Opt(OptOps.UPCAST, 1, 4),)
  monkeypatch.setattr(search, "beam_search",
                      lambda *a, **k: (_ for _ in ()).throw(AssertionError("pinned kernel searched")))
  with Context(BEAM=2): _, spec = realize.get_runner(Device.DEFAULT, _mm_ast(pinned))
  assert spec.opts == pinned and not spec.beam

def test_null_device_skips_beam(beam_env, monkeypatch):
  monkeypatch.setattr(search, "beam_search", lambda *a, **k: (_ for _ in ()).throw(AssertionError("searched on NULL")))
  with Context(BEAM=2):
    out = (Tensor.ones(16, 8, device="NULL") @ Tensor.ones(8, 4, device="NULL")).realize()
  assert out.shape == (16, 4)

@needs_values
def test_gather_kernel_uses_real_indices(beam_env):
  table, idx = _np(50, 16), np.array([3, 49, 0, 7, 7, 12], dtype=np.int32)
  t, i = Tensor(table), Tensor(idx)
  items = _kernel_items(t[i])
  gathers = [si for si in items if search._reads_index_from_memory(si.ast)]
  assert gathers, "indexing by a tensor reads its indices from memory"
  assert search.searchable(gathers[0].ast, have_real_inputs=False) is not None, (
    "random indices would read out of bounds")
  with Context(BEAM=2): got = t[i].numpy()
  np.testing.assert_array_equal(got, table[idx])
  assert any(e["name"] == gathers[0].ast.arg.name and not e["cached"]
             for e in search.log), "searched on the real indices"

def test_actions_fit_the_kernel():
  from teeny.codegen.render.c import CRenderer
  items = _kernel_items(Tensor.empty(64, 32) @ Tensor.empty(32, 48))
  acts = search.actions(normalized(items[0].ast, CRenderer()), CRenderer())
  assert Opt(OptOps.UPCAST, 1, 16) in acts and not any(o.op in (OptOps.LOCAL, OptOps.GROUP)
                                                       for o in acts), "C: no GPU Opts"
  assert search.neighbours((Opt(OptOps.UPCAST, 0, 4),)) == [(Opt(OptOps.UPCAST, 0, 3),), (Opt(OptOps.UPCAST, 0, 8),)]

def test_same_output_tolerance():
  from teeny.dtype import dtypes
  w = np.array([1.0, 2.0, np.nan], np.float32)
  raw = lambda x: x.view(np.uint8)
  assert search.same_output([raw(w + np.float32(1e-6))], [raw(w)], [dtypes.float32]), "reassociation noise, NaN = NaN"
  assert not search.same_output([raw(w + 1)], [raw(w)], [dtypes.float32])
  assert not search.same_output([raw(np.array([1, 2], np.int32))], [raw(np.array([1, 3], np.int32))], [dtypes.int32])

def test_stage_is_a_c_action():
  """BEAM tries STAGE (a reduce's load packed into a kernel-private array) for each buffer a C kernel's reduce reads;
  GPU renderers have no such array."""
  from teeny import Tensor
  from teeny.codegen.kernel import normalized
  from teeny.codegen.opt import OptOps
  from teeny.codegen.render.c import CRenderer
  from teeny.codegen.render.cuda import CUDARenderer
  from teeny.codegen.search import actions
  items = [si for si in (Tensor.empty(64, 128) @ Tensor.empty(128, 256)).schedule() if si.kind == "kernel"]
  ast = normalized(items[0].ast, CRenderer())
  assert sorted(a.arg for a in actions(ast, CRenderer()) if a.op is OptOps.STAGE) == [1, 2]
  assert not any(a.op is OptOps.STAGE for a in actions(ast, CUDARenderer()))

@needs_values
def test_deadline_stops_a_step(beam_env):
  """BEAM_TIMEOUT bounds a search within a step too: past the deadline no further candidate runs (a GPU matmul's step of
  a hundred slow candidates ran minutes past the limit when it was checked between steps)."""
  ast = _kernel_items(Tensor(_np(32, 64)) @ Tensor(_np(64, 32, seed=1)))[0].ast
  s = search.Search(ast, Device[Device.DEFAULT], None)
  bar = search._Progress("mm", 4)
  try:
    cands = [(Opt(OptOps.UPCAST, 1, n),) for n in (2, 4, 8)]
    assert s.measure(cands, bar, float("inf"), deadline=0.0) == {} and s.tried == 0
    assert len(s.measure(cands, bar, float("inf"))) == 3 and s.tried == 3
  finally:
    bar.close()
    s.inputs.free()

@needs_values
def test_only_written_buffers_are_reset_and_read():
  """A candidate's check resets and reads back only what the kernel writes (its inputs never change)."""
  from teeny.codegen.kernel import get_program
  ast = _kernel_items(Tensor(_np(8, 16)) @ Tensor(_np(16, 4, seed=1)))[0].ast
  p = get_program(ast, Device[Device.DEFAULT].renderer, opts=())
  assert written_slots(ast) == {0}
  inp = search.Inputs(Device[Device.DEFAULT], p.params, None, written=written_slots(ast))
  try: assert inp.out == [0] and len(inp.read()) == 1 and inp.dtypes == [dtypes.float32]
  finally: inp.free()

def test_extensions_keep_stage_last():
  """STAGE must be the last Opt: a list that ends with one (the heuristics' for a matmul whose B rows are far apart) is
  extended before it, and dropping it is a neighbour (so the search can also leave B unpacked)."""
  u0, u1, st = Opt(OptOps.UPCAST, 1, 16), Opt(OptOps.UPCAST, 0, 8), Opt(OptOps.STAGE, None, 2)
  swap = Opt(OptOps.SWAP, 0, 1)
  assert search.extend((u0, u1, st), swap) == (u0, u1, swap, st)
  assert search.extend((u0, u1), swap) == (u0, u1, swap)
  assert (u0, u1) in search.neighbours((u0, u1, st)) and (u0, u1) not in search.neighbours((u0, u1))
