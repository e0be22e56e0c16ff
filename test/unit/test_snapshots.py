"""Snapshots of rendered source: a dozen representative kernels in every language (C, CUDA, HIP, OpenCL), rendered
through NULL:<lang> (nothing compiles, nothing runs) and compared with the files in test/snapshots/.

The stored files are portable: kernel names are deterministic, and nothing in them names a path, a machine or a
target-dependent constant. After an intended change to the generated code, refresh them with
  UPDATE_SNAPSHOTS=1 python -m pytest test/unit/test_snapshots.py
and review the diff (git diff test/snapshots/)."""
import difflib, os, pathlib, re
import numpy as np
import pytest
from teeny import Context, Device, Tensor, dtypes
from teeny.codegen.kernel import get_program
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp

SNAPSHOTS = pathlib.Path(__file__).resolve().parent.parent / "snapshots"
LANGS = {"C": "c", "CUDA": "cu", "HIP": "hip", "CL": "cl"}

def ones(dev: str, *shape: int, dtype=np.float32) -> Tensor: return Tensor(np.ones(shape, dtype=dtype), device=dev)
def ramp(dev: str, *shape: int, dtype=np.float32) -> Tensor:
  return Tensor(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype), device=dev)

# ---- the programs: each builds tensors on `dev` and returns the tensor whose schedule is rendered
def s_elementwise_relu_E_16(dev): return (ones(dev, 16) * ones(dev, 16) + ones(dev, 16)).relu()
def s_broadcast(dev): return (ones(dev, 8, 1) + ones(dev, 1, 12)) * ones(dev, 12)
def s_reduce_relu_r_4_8(dev): return (ones(dev, 4, 8) * ones(dev, 4, 8)).sum(1).relu()
def s_multi_axis_reduce(dev): return ones(dev, 6, 5, 32).sum((0, 2))
def s_matmul(dev): return ones(dev, 64, 48) @ ones(dev, 48, 64)
def s_matmul_transposed(dev): return ones(dev, 16, 64) @ ones(dev, 24, 64).T
def s_argmax(dev): return ramp(dev, 6, 40).argmax(1)
def s_pad_flip_E_6_10(dev): return ones(dev, 4, 8).pad(((1, 1), (2, 0))).flip(1) * 2
def s_strided_view(dev): return ramp(dev, 8, 12)[1::2, ::3].permute(1, 0).contiguous()
def s_where_cast(dev):
  a, b = ramp(dev, 24), ones(dev, 24, dtype=np.int32)
  return (a > 5).where(a.cast(dtypes.int32), b * 3).cast(dtypes.float64) / 7
def s_half_add_E_16(dev): return ones(dev, 16, dtype=np.float16) + ones(dev, 16, dtype=np.float16)
def s_bfloat16(dev): return (ones(dev, 8, 8).cast(dtypes.bfloat16) * 2).sum(1)
def s_cumsum(dev): return ramp(dev, 4, 16).cumsum(1)
def s_grouped_reduce(dev): return ones(dev, 64, 1000).max(1)
def s_scatter_atomic(dev):
  """A hand-written histogram: a masked float atomic add per element (a custom kernel)."""
  n, bins = 64, 8
  def fxn(out: UOp, ids: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    b = ids.index(i).load()
    ok = (b < bins).alu(Ops.AND, (b < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)))
    return out.index(b).atomic("add", 1.0, mask=ok, sem=MemSem.Relaxed).end(i).sink(
      arg=KernelInfo(name="hist", opts_to_apply=()))
  ids = Tensor(np.arange(n, dtype=np.int32) % 11, device=dev)
  return Tensor.zeros(bins, device=dev).contiguous().realize().custom_kernel(ids, fxn=fxn)[0]

def s_unroll_tile(dev):
  """A hand-written register tile: 4 UNROLL lanes of a column sum, written out by codegen/expand.py (4 accumulators)."""
  def fxn(out: UOp, a: UOp) -> UOp:
    g, k, r = UOp.range(8, 0, AxisType.GLOBAL), UOp.range(4, 1, AxisType.UNROLL), UOp.range(16, 2, AxisType.REDUCE)
    acc = UOp(Ops.REDUCE, dtypes.float32, (a.index(r * 32 + g * 4 + k).load(), r), Ops.ADD)
    return out.index(g * 4 + k).store(acc * 2).end(g, k).sink(arg=KernelInfo(name="unroll_tile", opts_to_apply=()))
  return Tensor.zeros(32, device=dev).contiguous().realize().custom_kernel(ramp(dev, 16, 32), fxn=fxn)[0]

PROGRAMS = {k[2:]: v for k, v in globals().items() if k.startswith("s_")}

def render_all(name: str, lang: str) -> str:
  """The source of every kernel the program schedules, in schedule order, rendered for `lang`."""
  dev = f"NULL:{lang}" if lang != "C" else "NULL"
  with Context(DEBUG=0, NOOPT=0):
    t = PROGRAMS[name](dev)
    items = [si for si in t.schedule() if si.kind in ("kernel", "custom")]
    assert items, f"{name} scheduled no kernel"
    return "\n".join(get_program(si.ast, Device[dev].renderer).src for si in items)

def check_snapshot(path: pathlib.Path, src: str):
  if os.environ.get("UPDATE_SNAPSHOTS") == "1":
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(src)
    return
  if not path.exists():
    pytest.fail(f"snapshot {path.name} is missing; create it with: UPDATE_SNAPSHOTS=1 python -m pytest {__file__}")
  want = path.read_text()
  if src != want:
    diff = "".join(difflib.unified_diff(want.splitlines(True), src.splitlines(True), path.name, "rendered"))
    pytest.fail(f"rendered source differs from test/snapshots/{path.name} (UPDATE_SNAPSHOTS=1 to accept):\n{diff}")

@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_snapshot(name, lang):
  check_snapshot(SNAPSHOTS / f"{name}.{LANGS[lang]}", render_all(name, lang))

def test_snapshots_are_portable():
  """No stored snapshot names a path or this machine."""
  import socket
  marks = ["/home/", "/tmp/", "/work/", "/usr/", str(pathlib.Path.home()), socket.gethostname()]
  for p in SNAPSHOTS.iterdir():
    text = p.read_text()
    assert not [m for m in marks if len(m) > 3 and m in text], p.name

def test_every_snapshot_has_a_program():
  """A stored file no program renders any more is stale: delete it."""
  want = {f"{n}.{ext}" for n in PROGRAMS for ext in LANGS.values()}
  assert {p.name for p in SNAPSHOTS.iterdir()} <= want

def test_renderers_build_no_uops(monkeypatch):
  """Lowering happens in codegen's passes: rendering only spells the UOps it is given, in every language."""
  from teeny.uop.ops import UOpMetaClass
  programs = {}
  for lang in LANGS:
    dev = f"NULL:{lang}" if lang != "C" else "NULL"
    with Context(DEBUG=0, NOOPT=0):
      for name, prog in PROGRAMS.items():
        items = [si for si in prog(dev).schedule() if si.kind in ("kernel", "custom")]
        programs[(lang, name)] = [(Device[dev].renderer, get_program(si.ast, Device[dev].renderer)) for si in items]
  built = []
  orig = UOpMetaClass.__call__
  monkeypatch.setattr(UOpMetaClass, "__call__", lambda cls, *a, **k: built.append(a[0]) or orig(cls, *a, **k))
  for key, progs in programs.items():
    for renderer, p in progs:
      assert renderer.render(p.name, p.uops) == p.src, key
      assert not built, f"{key}: the renderer built UOps {built[:5]}"

def test_renderer_functions_fit_on_a_screen():
  """No function of the renderers is longer than 60 lines."""
  import ast as pyast
  for path in (pathlib.Path(__file__).resolve().parents[2] / "teeny" / "codegen" / "render").glob("*.py"):
    for node in pyast.walk(pyast.parse(path.read_text())):
      if isinstance(node, (pyast.FunctionDef, pyast.AsyncFunctionDef)):
        assert node.end_lineno - node.lineno + 1 <= 60, (f"{path.name}: {node.name} is "
                                                         f"{node.end_lineno - node.lineno + 1} lines")

def test_unused_atomic_is_a_statement():
  """An atomic whose old value nobody reads is a statement, also when the SINK lists it directly (no END)."""
  i = UOp.range(8, 0, AxisType.GLOBAL)
  out, ids = UOp.placeholder(0, dtypes.float32, (8,)), UOp.placeholder(1, dtypes.int32, (8,))
  sink = out.index(ids.index(i).load()).atomic("add", 1.0, sem=MemSem.Relaxed).sink(arg=KernelInfo("hist8", ()))
  for lang in LANGS:
    src = get_program(sink, Device[f"NULL:{lang}" if lang != "C" else "NULL"].renderer).src
    assert not re.search(r"\w+ val\d+ = ", src) and src.count("data0") >= 2, (lang, src)
