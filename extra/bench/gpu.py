#!/usr/bin/env python3
"""GPU benchmark: teeny (DEV=CUDA by default) vs PyTorch on the same GPU, measured in one run. Not a test.

  DEV=CUDA python extra/bench/gpu.py     # N=elements (256M), MM=matmul size (4096), SM=softmax side (8192), RUNS=n

Each figure is the median of RUNS timed runs after warm-up. "teeny" is end to end (graph, schedule, launch, wait for the
GPU); "kernel" is teeny's kernel time alone (events around each launch); "jit" is end to end again with the call
captured by TinyJit and replayed (the kernels launched as one CUDA graph, no graph building or scheduling); ratios are
teeny / torch (> 1: teeny faster), k.ratio and j.ratio the same for kernel and jit. Where tinygrad is importable (and
TINYGRAD=0 is not set), it runs the same cases in a process of its own, end to end and under its TinyJit ("tg",
"tg.jit"), and "/tg" is teeny's end-to-end figure over tinygrad's (TG_BEAM=2: tinygrad's kernels searched by its BEAM).
BENCH=mm32,sum picks cases. "BEAM=2" is teeny again with its kernels searched by BEAM=2 (from an empty cache directory,
so the search really runs; "search s" is its time over all the case's kernels); NOBEAM=1 leaves it out.
"""
from __future__ import annotations
import contextlib, io, os, statistics, sys, time, traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing
os.environ.setdefault("DEV", "CUDA")
import numpy as np

N = int(os.environ.get("N", 256 * 1024 * 1024))
MM = int(os.environ.get("MM", 4096))
SM = int(os.environ.get("SM", 8192))
RUNS = max(int(os.environ.get("RUNS", 30)), 3)

# (key, label, unit, work per run in bytes or flops, target ratio: issue 4, and issue 12 for the 16-bit matmuls, whose
# first milestone with mma.sync alone is 0.25)
ODD = (1000, 3000, 2000)   # m, n, k
CASES = [
  ("fused", f"(a*b+c).relu()   N={N}", "GB/s", 16 * N, 0.70),
  ("sum", f"a.sum()          N={N}", "GB/s", 4 * N, 0.70),
  ("mm32", f"a@b float32      {MM}^3", "TFLOP/s", 2 * MM ** 3, 0.7),
  ("mm32tf32", f"a@b float32 TF32 {MM}^3", "TFLOP/s", 2 * MM ** 3, None),   # opt-in on both sides
  ("mm16", f"a@b float16      {MM}^3", "TFLOP/s", 2 * MM ** 3, 0.6),
  ("mmbf16", f"a@b bfloat16     {MM}^3", "TFLOP/s", 2 * MM ** 3, 0.6),
  ("mm16odd", f"a@b float16      {MM - 1}^3", "TFLOP/s", 2 * (MM - 1) ** 3, 0.5),
  ("mm16rect", f"a@b float16 {ODD[0]}x{ODD[1]}x{ODD[2]}", "TFLOP/s", 2 * ODD[0] * ODD[1] * ODD[2], 0.5),
  ("softmax", f"softmax(-1)      ({SM},{SM})", "GB/s", 8 * SM * SM, 0.9),
]
BF16 = {"mmbf16"}   # inputs made float32 here, cast to bfloat16 on the device before timing (numpy has no bfloat16)

def median(fn, sync, runs: int = RUNS, warmup: int = 5) -> float:
  for _ in range(warmup): fn()
  sync()
  ts = []
  for _ in range(runs):
    st = time.perf_counter()
    fn()
    sync()
    ts.append(time.perf_counter() - st)
  return statistics.median(ts)

def make_inputs(rng, key: str) -> list[np.ndarray]:
  f = lambda *s: rng.random(s, dtype=np.float32)
  if key == "fused": return [f(N), f(N), f(N)]
  if key == "sum": return [f(N)]
  if key in ("mm32", "mm32tf32"): return [f(MM, MM) - 0.5, f(MM, MM) - 0.5]
  if key in ("mm16", "mmbf16"):
    return [(f(MM, MM) - 0.5).astype(np.float16 if key == "mm16" else np.float32) for _ in range(2)]
  if key == "mm16odd": return [(f(MM - 1, MM - 1) - 0.5).astype(np.float16) for _ in range(2)]
  if key == "mm16rect": return [(f(*shape) - 0.5).astype(np.float16) for shape in ((ODD[0], ODD[2]), (ODD[2], ODD[1]))]
  return [f(SM, SM) * 4]

def fns_teeny(Tensor):
  return {"fused": lambda a, b, c: (a * b + c).relu(), "sum": lambda a: a.sum(), "softmax": lambda a: a.softmax(-1),
          **{k: (lambda a, b: a @ b) for k in ("mm32", "mm32tf32", "mm16", "mmbf16", "mm16odd", "mm16rect")}}

def selected(key: str) -> bool:
  """Whether BENCH (a comma-separated list of case keys; empty: all) picks the case."""
  only = [k for k in os.environ.get("BENCH", "").split(",") if k]
  return not only or key in only

def case_inputs(key: str) -> list[np.ndarray]:
  """The case's inputs, the same in every process (one seed per case)."""
  return make_inputs(np.random.default_rng([i for i, c in enumerate(CASES) if c[0] == key][0]), key)

def fns_torch(torch):
  return {"fused": lambda a, b, c: torch.relu(a * b + c), "sum": lambda a: a.sum(),
          "softmax": lambda a: torch.softmax(a, -1),
          **{k: (lambda a, b: a @ b) for k in ("mm32", "mm32tf32", "mm16", "mmbf16", "mm16odd", "mm16rect")}}

def teeny_inputs(key, xs, Tensor, dev):
  from teeny import dtypes
  ts = [Tensor(x, device=dev) for x in xs]
  return [(t.cast(dtypes.bfloat16) if key in BF16 else t).contiguous().realize() for t in ts]

def bench_teeny(key, xs):
  from teeny import Context, Device, GlobalCounters, Tensor
  dev = Device.DEFAULT
  ts = teeny_inputs(key, xs, Tensor, dev)
  fn = fns_teeny(Tensor)[key]
  sync = Device[dev].synchronize
  out = fn(*ts).realize()
  got = out.float().numpy()
  t = median(lambda: fn(*ts).realize(), sync)
  # kernel time alone: realize waits on events at DEBUG>=2 (its per-kernel lines go to a buffer)
  ks = []
  for _ in range(RUNS):
    GlobalCounters.reset()
    with Context(DEBUG=2), contextlib.redirect_stdout(io.StringIO()): fn(*ts).realize()
    ks.append(GlobalCounters.time_sum_s)
  nk = GlobalCounters.kernel_count
  # the same call captured by TinyJit and replayed (its kernels as one CUDA graph): what a training step under TinyJit
  # pays per op, without the graph building and scheduling a plain call repeats
  from teeny import TinyJit
  jf = TinyJit(lambda *a: fn(*a).realize())
  for _ in range(3): jgot = jf(*ts)
  if not np.array_equal(jgot.float().numpy(), got): raise RuntimeError("the TinyJit replay's result differs")
  tj = median(lambda: jf(*ts), sync)
  return got, t, statistics.median(ks), nk, tj

def bench_teeny_beam(key, xs) -> tuple[float, float, bool]:
  """(median seconds end to end, seconds BEAM=2 searched, output matches the heuristics' run) for the case with its
  kernels searched from an empty TEENY_CACHE_DIR (the programs in memory dropped first)."""
  import tempfile
  from teeny import Context, Device, Tensor
  from teeny.codegen import search
  from teeny.engine import realize
  dev = Device.DEFAULT
  old = os.environ.get("TEENY_CACHE_DIR")
  with tempfile.TemporaryDirectory(prefix="teeny-gpu-beam-") as d:
    os.environ["TEENY_CACHE_DIR"] = d
    try:
      realize._program_cache.clear()
      search.log.clear()
      ts = teeny_inputs(key, xs, Tensor, dev)
      fn = fns_teeny(Tensor)[key]
      with Context(BEAM=2):
        got = fn(*ts).realize().float().numpy()
        searched = sum(r["seconds"] for r in search.log)
        t = median(lambda: fn(*ts).realize(), Device[dev].synchronize)
    finally:
      if old is None: os.environ.pop("TEENY_CACHE_DIR", None)
      else: os.environ["TEENY_CACHE_DIR"] = old
      realize._program_cache.clear()
  return t, searched, got

def bench_torch(key, xs):
  import torch
  ts = [torch.from_numpy(x).cuda() for x in xs]
  if key in BF16: ts = [t.to(torch.bfloat16) for t in ts]
  fn = fns_torch(torch)[key]
  got = fn(*ts).float().cpu().numpy()
  return got, median(lambda: fn(*ts), torch.cuda.synchronize)

def tinygrad_worker():
  """Run in a process of its own (tinygrad and teeny each hold their own CUDA context): every case but the TF32 one,
  end to end and replayed under tinygrad's TinyJit; prints one JSON line {key: [seconds, jit seconds]}."""
  import json
  from tinygrad import Device as TD, Tensor as TT, TinyJit as TJ, dtypes as tdt
  fns = fns_teeny(TT)
  TGDEV = os.environ.get("TG_DEVICE", "CUDA")   # (CPU: a check of this code on a machine without a GPU)
  out: dict[str, list] = {}
  for key, *_ in CASES:
    if key == "mm32tf32" or not selected(key): continue
    try:
      ts = [TT(x, device=TGDEV) for x in case_inputs(key)]
      ts = [(t.cast(tdt.bfloat16) if key in BF16 else t).contiguous().realize() for t in ts]
      fn, sync = fns[key], TD[TGDEV].synchronize
      t = median(lambda: fn(*ts).realize(), sync)
      jf = TJ(lambda *a: fn(*a).realize())
      out[key] = [t, median(lambda: jf(*ts), sync)]
    except Exception as e: out[key] = [None, None, f"{type(e).__name__}: {str(e)[:200]}"]
  print("TINYGRAD " + json.dumps(out))

def tinygrad_times() -> tuple[dict[str, list], str]:
  """tinygrad's figures from a worker process, and a line saying which tinygrad ran (or why none did)."""
  import importlib.util, json, subprocess
  if os.environ.get("TINYGRAD") == "0" or importlib.util.find_spec("tinygrad") is None:
    return {}, "tinygrad: not importable (or TINYGRAD=0): no tg columns"
  env = {**os.environ, "CUDA": "1", "DEV": "CUDA"}
  env.pop("BEAM", None)
  if os.environ.get("TG_BEAM"): env["BEAM"] = os.environ["TG_BEAM"]   # tinygrad's own kernel search
  p = subprocess.run([sys.executable, __file__, "--tinygrad-worker"], env=env, capture_output=True, text=True)
  line = next((ln for ln in p.stdout.splitlines() if ln.startswith("TINYGRAD ")), None)
  if line is None: return {}, f"tinygrad: the worker failed: {(p.stderr or p.stdout)[-600:]}"
  from importlib.metadata import PackageNotFoundError, version
  try: ver = version("tinygrad")
  except PackageNotFoundError: ver = "?"
  kernels = f"BEAM={os.environ['TG_BEAM']}" if os.environ.get("TG_BEAM") else "its default kernels (no BEAM)"
  return json.loads(line[9:]), f"tinygrad {ver} on CUDA, {kernels}, in a process of its own"

def main():
  try:
    import torch
    have_torch = torch.cuda.is_available()
  except ImportError: have_torch = False
  from teeny import Device, Tensor
  print(f"teeny on {Device.DEFAULT} · torch {'available' if have_torch else 'missing: no ratios'} · median of {RUNS} "
        "runs after warm-up")
  if have_torch:
    import torch
    # float32 is compared exact against exact: no TF32 on either side, but in the mm32tf32 case (opt-in on both)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    print(f"GPU: {torch.cuda.get_device_name()} · torch {torch.__version__} · TF32 matmul "
          f"{torch.backends.cuda.matmul.allow_tf32}")
  tg, tg_note = tinygrad_times()
  print(tg_note)
  for key, v in tg.items():
    if len(v) > 2: print(f"tinygrad {key}: FAILED: {v[2]}")
  beam = not os.environ.get("NOBEAM")
  print(f"{'case':34s} {'unit':8s} {'teeny':>10s} {'kernel':>10s} {'jit':>10s} {'torch':>10s} {'ratio':>7s} "
        f"{'k.ratio':>7s} {'j.ratio':>7s} {'target':>7s}  kernels  check"
        + (f" {'tg':>9s} {'tg.jit':>9s} {'/tg':>6s}" if tg else "")
        + (f" {'BEAM=2':>9s} {'/heur.':>7s} {'search s':>8s}" if beam else ""))
  for key, label, unit, work, target in CASES:
    if not selected(key): continue
    scale = 1e-12 if unit == "TFLOP/s" else 1e-9
    try:
      xs = case_inputs(key)
      tol = 2e-2 if key.startswith("mm") and key != "mm32" else 1e-3   # 16-bit results (and TF32's inputs)
      tf32 = key == "mm32tf32"   # TF32 on both sides for this case only (Tensor.allow_tf32, torch's switch)
      Tensor.allow_tf32 = tf32
      got, t, k, nk, tj = bench_teeny(key, xs)
      tt, ref, ok = None, None, "-"
      if have_torch:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ref, tt = bench_torch(key, xs)
        torch.backends.cuda.matmul.allow_tf32 = False
        atol = tol * max(1.0, float(np.abs(ref).max()))
        ok = "ok" if np.allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=atol) else "MISMATCH"
      fig = lambda s: work / s * scale if s else float("nan")
      ratio = f"{fig(t) / fig(tt):7.2f}" if tt else "      -"
      kratio = f"{fig(k) / fig(tt):7.2f}" if tt and k else "      -"
      jratio = f"{fig(tj) / fig(tt):7.2f}" if tt else "      -"
      line = (f"{label:34s} {unit:8s} {fig(t):10.1f} {fig(k):10.1f} {fig(tj):10.1f} "
              f"{fig(tt) if tt else float('nan'):10.1f} {ratio} {kratio} {jratio} "
              f"{'≥' + str(target) if target else '':>7s}  {nk:7d}  {ok:5s}")
      if tg:
        tgt, tgj = (tg.get(key) or [None, None])[:2]
        line += (f" {fig(tgt):9.1f} {fig(tgj):9.1f} {fig(t) / fig(tgt):6.2f}" if tgt
                 else f" {'-':>9s} {'-':>9s} {'-':>6s}")
      if beam:
        tb, searched, bgot = bench_teeny_beam(key, xs)
        same = np.allclose(bgot.astype(np.float64), got.astype(np.float64), rtol=tol,
                           atol=1e-3 * max(1.0, float(np.abs(got).max())))
        line += f" {fig(tb):9.1f} {fig(tb) / fig(t):7.2f} {searched:8.1f}" + ("" if same else " BEAM MISMATCH")
      Tensor.allow_tf32 = False
      print(line, flush=True)
    except Exception as e:
      print(f"{label:34s} FAILED: {type(e).__name__}: {str(e)[:2000]}")
      traceback.print_exc()

if __name__ == "__main__":
  if "--tinygrad-worker" in sys.argv: tinygrad_worker()
  else: main()
