#!/usr/bin/env python3
"""Core CPU benchmark: teeny vs numpy (and torch, tinygrad when importable), measured in one run. Not a test.

  python extra/bench/core.py            # RUNS=n timed runs per figure (at least 7), N=elements, MM=matmul size
  python extra/bench/core.py --baseline 6ea6214   # also teeny at that commit (default heuristics), side by side

Figures are throughputs (GB/s or GFLOP/s), each the median of the timed runs after one warm-up; ratios are
teeny / other, so > 1 means teeny is faster. "teeny" is end to end (graph building, scheduling, launch, wait);
"kernel" is the kernel time alone, from GlobalCounters.time_sum_s.
Every framework runs in its own fresh process, alternating ROUNDS times (default 2), and keeps its best round
(extra/bench/procs.py says why: numpy's OpenBLAS threads, spinning after its matmul, halved the teeny matmul after it).
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, sys, time, traceback
from pathlib import Path
from typing import Callable

from procs import ROUNDS, alternate, baseline_tree, measure_in, teeny_root
sys.path.insert(0, str(teeny_root()))  # run from a checkout without installing (or the baseline's, as its worker)
import numpy as np

N = max(int(os.environ.get("N", 16 * 1024 * 1024)), 1)
MM = max(int(os.environ.get("MM", 1024)), 1)
RUNS = max(int(os.environ.get("RUNS", 7)), 7)
# (key, label, unit, target from the issue, work per run: bytes or flops)
CASES = [
  ("fused", f"(a*b+c).relu()  N={N}", "GB/s", 20.0, 4 * N * 4),
  ("sum", f"a.sum()         N={N}", "GB/s", 18.0, N * 4 + 4),
  ("matmul", f"a@b             {MM}x{MM}", "GFLOP/s", 20.0, 2 * MM ** 3),
  # the same matmul with BEAM=2 (searched from a cold TEENY_CACHE_DIR, then found again warm); the other columns repeat
  # their matmul figure, so the ratio is against the same numpy run. Target: 0.75x numpy (the issue's), set in main()
  ("matmul_beam", f"a@b BEAM=2      {MM}x{MM}", "GFLOP/s", 0.0, 2 * MM ** 3),
]
SAME_OP = {"matmul_beam": "matmul"}   # cases the other frameworks run as another case

def median_time(fn: Callable[[], object], runs: int = RUNS) -> float:
  """Median wall time of `fn` over `runs` calls, after one untimed warm-up call."""
  fn()
  times = []
  for _ in range(runs):
    st = time.perf_counter()
    fn()
    times.append(time.perf_counter() - st)
  return statistics.median(times)

def machine() -> str:
  model = platform.processor() or "unknown cpu"
  try:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
      if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break
  except OSError: pass
  usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
  load = (f" · load average {os.getloadavg()[0]:.2f} (busy cores make every column noisy)"
          if hasattr(os, "getloadavg") else "")
  return f"{model} · nproc {usable} (os.cpu_count {os.cpu_count()}) · {platform.system()} {platform.machine()}{load}"

def inputs() -> dict[str, list[np.ndarray]]:
  rng = np.random.default_rng(0)
  data = {"fused": [rng.random(N, dtype=np.float32) for _ in range(3)], "sum": [rng.random(N, dtype=np.float32)],
          "matmul": [rng.random((MM, MM), dtype=np.float32) for _ in range(2)]}
  data["matmul_beam"] = data["matmul"]
  return data

def reference(key: str, xs: list[np.ndarray]) -> np.ndarray:
  key = SAME_OP.get(key, key)
  if key == "fused": return np.maximum(xs[0] * xs[1] + xs[2], 0)
  if key == "sum": return np.asarray(xs[0].sum(dtype=np.float64), dtype=np.float32)
  return xs[0] @ xs[1]

def close(key: str, got: np.ndarray, want: np.ndarray) -> bool:
  # a float32 sum of 16M terms drifts with summation order; the relative error still stays tiny
  rtol, atol = {"fused": (1e-5, 1e-6), "sum": (1e-3, 0.0), "matmul": (1e-4, 1e-3)}[SAME_OP.get(key, key)]
  return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))

# ***** one runner per framework: each returns {case: seconds}, plus notes *****

def bench_numpy(data, notes: list[str]) -> dict[str, float]:
  if os.environ.get("OPENBLAS_CORETYPE"): notes.append(f"numpy: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}")
  ops = {"fused": lambda a, b, c: np.maximum(a * b + c, 0), "sum": lambda a: a.sum(), "matmul": lambda a, b: a @ b}
  return same_op({k: median_time(lambda k=k: ops[k](*data[k])) for k, *_ in CASES if k not in SAME_OP})

def same_op(times: dict[str, float]) -> dict[str, float]: return {**times, **{k: times[v] for k, v in SAME_OP.items()}}

def beam_search_figures(run, notes: list[str]):
  """Run `run` (one realize of the BEAM case) cold, from an empty TEENY_CACHE_DIR and with no program in memory (so the
  search really runs, also under BEAM=2 in the environment, where an earlier case may have searched the same kernel),
  then warm as a second process would (the programs in memory dropped, the chosen list read back from disk); notes the
  figures of the longest search of the cold run (the matmul's, not a small kernel's)."""
  import tempfile
  from teeny.codegen import search
  from teeny.engine import realize
  old = os.environ.get("TEENY_CACHE_DIR")
  def searches() -> list[dict]:
    search.log.clear()
    realize._program_cache.clear()
    run()
    return list(search.log)
  with tempfile.TemporaryDirectory(prefix="teeny-beam-") as d:
    os.environ["TEENY_CACHE_DIR"] = d
    try:
      cold_all = searches()
      warm_all = searches()
    finally:
      if old is None: os.environ.pop("TEENY_CACHE_DIR", None)
      else: os.environ["TEENY_CACHE_DIR"] = old
  if not cold_all: return notes.append("teeny: BEAM searched nothing (NULL device?)")
  cold = max(cold_all, key=lambda r: r["seconds"])
  warm = next((r for r in warm_all if r["name"] == cold["name"]), {"seconds": float("nan"), "cached": False})
  notes.append(f"teeny: BEAM=2 {cold['name']}: search {cold['seconds']:.2f} s cold ({cold['tried']} candidates tried, "
               f"{cold['mismatches']} wrong output, reference: {cold.get('reference')}), {warm['seconds']*1e3:.1f} ms "
               f"warm ({'read from the disk cache' if warm['cached'] else 'NOT cached'}); chosen {list(cold['opts'])}, "
               f"heuristics {list(cold.get('heuristics', ()))}")

def bench_teeny(data, notes: list[str]) -> tuple[dict[str, float], dict[str, float | None], str]:
  from teeny import Tensor, Device, GlobalCounters
  dev = Device.DEFAULT
  t = getattr(Device[dev].compiler, "target", None)
  arch = f", -march={t.arch} ({t.vector_bytes}-byte vectors)" if t is not None else ""
  notes.append(f"teeny: device {dev}{arch}, CPU_THREADS={os.environ.get('CPU_THREADS', 'default')}")
  if dev == "NULL": notes.append("teeny: DEV=NULL runs no kernels; its figures measure overhead only")
  sync = getattr(Device[dev], "synchronize", lambda: None)  # CPU runs synchronously; a GPU device would not
  Tensor.manual_seed(0)
  ops = {"fused": lambda a, b, c: (a * b + c).relu(), "sum": lambda a: a.sum(), "matmul": lambda a, b: a @ b}
  e2e: dict[str, float] = {}
  kern: dict[str, float | None] = {}
  outs: dict[str, np.ndarray] = {}
  from teeny import Context
  ops["matmul_beam"] = ops["matmul"]
  for key, *_ in CASES:
    if key == "matmul_beam" and os.environ.get("TEENY_BENCH_NO_BEAM"): continue
    # the timed inputs come from Tensor.rand, realized before timing; the check runs on copies of the numpy inputs
    shape = data[key][0].shape
    xs = [Tensor.rand(*shape).realize() for _ in data[key]]
    ctx = Context(BEAM=2) if key == "matmul_beam" else Context()
    with ctx:
      if key == "matmul_beam": beam_search_figures(lambda: ops[key](*xs).realize(), notes)
      # one loop times both: wall time end to end, and the kernel seconds the runtime reported for the same realize
      ops[key](*xs).realize()
      sync()
      walls, ktimes = [], []
      for _ in range(RUNS):
        GlobalCounters.reset()
        st = time.perf_counter()
        ops[key](*xs).realize()
        sync()
        walls.append(time.perf_counter() - st)
        ktimes.append(GlobalCounters.time_sum_s)
      notes.append(f"teeny: {key} ran {GlobalCounters.kernel_count} kernel(s) per realize")
      if dev != "NULL": outs[key] = ops[key](*[Tensor(x).realize() for x in data[key]]).numpy()
    e2e[key] = statistics.median(walls)
    kern[key] = statistics.median(ktimes) if any(ktimes) else None
  # checked after all timing: numpy's matmul (the reference) leaves OpenBLAS threads spinning, which took a core from
  # the teeny matmul timed after it (255 -> 130 GFLOP/s)
  notes += [f"teeny: WRONG RESULT for {k}" for k, got in outs.items() if not close(k, got, reference(k, data[k]))]
  if all(v is None for v in kern.values()): notes.append("teeny: GlobalCounters.time_sum_s stayed 0, no kernel column")
  return e2e, kern, dev

def bench_torch(data, notes: list[str]) -> dict[str, float]:
  import torch
  notes.append(f"torch {torch.__version__}: {torch.get_num_threads()} threads (torch's default), "
               f"{torch.backends.cpu.get_cpu_capability()} kernels")
  ops = {"fused": lambda a, b, c: torch.relu(a * b + c), "sum": lambda a: a.sum(), "matmul": lambda a, b: a @ b}
  with torch.inference_mode():
    return same_op({k: median_time(lambda k=k, xs=[torch.from_numpy(x) for x in data[k]]: ops[k](*xs))
                    for k, *_ in CASES if k not in SAME_OP})

def bench_tinygrad(data, notes: list[str]) -> dict[str, float]:
  from tinygrad import Tensor as TgTensor, Device as TgDevice
  import tinygrad
  notes.append(f"tinygrad {getattr(tinygrad, '__version__', '?')}: device {TgDevice.DEFAULT}")
  ops = {"fused": lambda a, b, c: (a * b + c).relu(), "sum": lambda a: a.sum(), "matmul": lambda a, b: a @ b}
  out = {}
  for key, *_ in CASES:
    if key in SAME_OP: continue
    xs = [TgTensor(x).realize() for x in data[key]]
    out[key] = median_time(lambda: ops[key](*xs).realize())
  return same_op(out)

def optional(name: str, fn, *args) -> dict[str, float] | None:
  try: return fn(*args)
  except ImportError as e:
    args[-1].append(f"{name}: not importable ({e.name or e}), column left out")
  except Exception as e:  # a benchmark of other frameworks must never stop the run
    args[-1].append(f"{name}: failed ({type(e).__name__}: {e}), column left out")
  return None

# ***** report *****

def fmt(x: float | None, width: int = 8, prec: int = 1) -> str:
  return f"{x:{width}.{prec}f}" if x is not None else " " * (width - 3) + "n/a"

def worker(who: str) -> dict:
  """One framework's figures, in this process: {"t": seconds per case, "k": teeny's kernel seconds, "notes": [...]}."""
  data, notes = inputs(), []
  if who == "numpy": return {"t": bench_numpy(data, notes), "notes": notes}
  if who == "teeny":
    try:
      te, tk, dev = bench_teeny(data, notes)
    except Exception as e:  # keep the other columns: a core under construction may not run every case yet
      notes.append(f"teeny: failed ({type(e).__name__}: {e}), traceback on stderr")
      traceback.print_exc()
      te, tk, dev = {}, {}, "?"
    return {"t": te, "k": tk, "dev": dev, "notes": notes}
  return {"t": optional(who, {"torch": bench_torch, "tinygrad": bench_tinygrad}[who], data, notes), "notes": notes}

def best(rounds: list[dict]) -> dict:
  """The best (shortest) time of each case over the rounds, the first round's notes plus any other round's new ones."""
  out = {"t": None, "k": {}, "dev": rounds[0].get("dev", "?"), "notes": []}
  for r in rounds:
    out["notes"] += [n for n in r["notes"] if n not in out["notes"]]
    if r["t"] is None: continue
    out["t"] = {k: min(v, out["t"].get(k, v)) for k, v in r["t"].items()} if out["t"] is not None else dict(r["t"])
    for k, v in (r.get("k") or {}).items():
      if v is not None: out["k"][k] = min(v, out["k"].get(k) or v)
  return out

def main() -> int:
  ap = argparse.ArgumentParser(description="core CPU figures: teeny vs numpy/torch/tinygrad (and a baseline commit)")
  ap.add_argument("--baseline", metavar="COMMIT", default=None, help="also measure teeny at this commit (no BEAM)")
  ap.add_argument("--worker", choices=["numpy", "teeny", "torch", "tinygrad"], help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.worker:
    print(json.dumps(worker(args.worker)))
    return 0
  print(f"machine: {machine()}")
  print(f"python {platform.python_version()} · numpy {np.__version__} · {RUNS} timed runs per figure, median, after "
        f"1 warm-up · each framework the best of {ROUNDS} rounds, each round a fresh process per framework")
  btree = baseline_tree(args.baseline) if args.baseline else None
  order = ["numpy", "teeny", "torch", "tinygrad"] + (["base"] if btree else [])
  runs = alternate(order, lambda who: measure_in(__file__, "teeny", btree, {"TEENY_BENCH_NO_BEAM": "1"})
                   if who == "base" else measure_in(__file__, who))
  res = {who: best(rs) for who, rs in runs.items()}
  tn, te, tk, dev = res["numpy"]["t"], res["teeny"]["t"] or {}, res["teeny"]["k"], res["teeny"]["dev"]
  notes = [n for who in order if who != "base" for n in res[who]["notes"]]
  base = res["base"]["t"] if btree else None
  rate = lambda work, t: (work / t / 1e9) if t else None
  others = [("numpy", tn)] + [(n, res[n]["t"]) for n in ("torch", "tinygrad") if res[n]["t"] is not None]
  head = f"{'case':<34}{'unit':>8} {'teeny':>8} {'kernel':>8} " + " ".join(f"{n:>8}" for n, _ in others)
  head += " " + " ".join(f"{'t/' + n[:5]:>8}" for n, _ in others) + f" {'target':>8}  status"
  if base is not None: head += f" {'baseline':>9} {'t/base':>7}"
  print("\n" + head + "\n" + "-" * len(head))
  for key, label, unit, target, work in CASES:
    ours, kern = rate(work, te.get(key)), rate(work, tk.get(key))
    theirs = [rate(work, r[key]) for _, r in others]
    if key == "matmul_beam": target = 0.75 * (theirs[0] or 0)   # the target: 0.75x numpy in the same run
    ratios = [ours / t if ours and t else None for t in theirs]
    status = "n/a" if ours is None or dev == "NULL" else "PASS" if ours >= target else "MISS"
    if status == "MISS" and kern is not None and kern >= target: status += " (kernel PASS)"
    line = (f"{label:<34}{unit:>8} {fmt(ours)} {fmt(kern)} " + " ".join(fmt(t) for t in theirs) + " " +
            " ".join(fmt(r, prec=2) for r in ratios) + f" {'>=' + format(target, '.3g'):>8}  {status:<5}")
    if base is not None and (b := rate(work, base.get(key))):
      line += f" {fmt(b, 9)} {fmt(ours / b if ours else None, 7, 2)}"
    print(line)
  print("\nratios t/x = teeny end-to-end throughput / x's throughput (> 1: teeny faster); targets are end to end" +
        (f"; baseline: teeny at {args.baseline}, default heuristics" if base is not None else ""))
  for n in notes: print(f"  · {n}")
  return 0  # a benchmark reports; it does not fail the caller on a MISS

if __name__ == "__main__":
  sys.exit(main())
