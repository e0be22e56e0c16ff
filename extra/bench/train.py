#!/usr/bin/env python3
"""Training throughput: teeny vs PyTorch (and tinygrad when importable), steps/s after warm-up, in one run. Not a test.

  python extra/bench/train.py          # STEPS=n timed steps per case (default 50), WARMUP=n (default 5),
                                       # LIVE_STEPS=n for the live-tensor SGD rows (default STEPS/5),
                                       # CLOCK=cpu to time by process CPU time, not wall time (a shared machine)
  python extra/bench/train.py --baseline 20f7e57   # also teeny at that commit, side by side (ROUNDS=n, default 2)

Cases: a 784-128-10 MLP (batch 128, Adam, cross-entropy) on random data, and the digits CNN from
examples/train_digits_cnn.py (batch 64, Adam), each without and with TinyJit (the step captured once, then replayed;
tinygrad with its own TinyJit). Each step is forward, backward and the optimizer update, with the loss read back to the
host (as a training loop that logs does; under TinyJit the read is after the jitted call).
Then an SGD step of the same MLP, alone and with 20,000 unrelated tensors kept alive (half realized from numpy, half
lazy), in ms per step: the cost of a step should not grow with the number of live tensors.
Every framework runs in its own fresh process (`--worker teeny|torch|tinygrad`), alternating ROUNDS times (default
2), each keeping its best round (extra/bench/procs.py says why). --baseline COMMIT also measures teeny at that commit
(a detached git worktree under /tmp) with this same script, in the same rotation.
"""
from __future__ import annotations
import argparse, json, os, statistics, sys, time
import numpy as np
from procs import ROUNDS, alternate, baseline_tree, measure_in, teeny_root
ROOT = teeny_root()   # this tree, or the baseline tree when this script runs as a --worker for it
sys.path.insert(0, str(ROOT))

STEPS, WARMUP = int(os.environ.get("STEPS", 50)), int(os.environ.get("WARMUP", 5))
# CLOCK=cpu: the process's CPU time (all its threads) instead of wall time: steadier on a shared, loaded machine
CLOCK = time.process_time if os.environ.get("CLOCK") == "cpu" else time.perf_counter
LIVE_STEPS = int(os.environ.get("LIVE_STEPS", max(STEPS // 5, 5)))  # SGD steps timed with and without live tensors
N_LIVE = 20_000

CHUNKS = 5
def timed(step, steps: int | None = None) -> float:
  """steps/s from the median of CHUNKS timed runs of steps/CHUNKS steps each: a burst of noise from a neighbour on a
  shared machine moves one chunk, not the figure (the mean over all steps moved by 10-15% between runs)."""
  steps = steps or STEPS
  per = max(steps // CHUNKS, 1)
  for _ in range(WARMUP): step()
  times = []
  for _ in range(CHUNKS):
    st = CLOCK()
    for _ in range(per): step()
    times.append(CLOCK() - st)
  return per / statistics.median(times)

def data(shape_x, n_classes, bs, seed=0):
  rng = np.random.default_rng(seed)
  return rng.standard_normal((bs, *shape_x)).astype(np.float32), rng.integers(0, n_classes, bs).astype(np.int64)

def teeny_step(model, params: list, lr: float, X: np.ndarray, Y: np.ndarray, jit: bool = False):
  from teeny import Tensor, TinyJit, nn
  opt = nn.optim.Adam(params, lr=lr)
  x, y = Tensor(X), Tensor(Y.astype(np.int32))
  def train_step(x, y):
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).cross_entropy(y)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      return loss
  f = TinyJit(train_step) if jit else train_step
  return lambda: f(x, y).item()

def teeny_mlp(jit: bool = False):
  from teeny import nn
  from teeny.nn.state import get_parameters
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  return teeny_step(lambda x: l2(l1(x).relu()), get_parameters([l1, l2]), 1e-3, *data((784,), 10, 128), jit=jit)

def teeny_cnn(jit: bool = False):
  from teeny.nn.state import get_parameters
  sys.path.insert(0, str(ROOT / "examples"))
  from train_digits_cnn import DigitsCNN
  model = DigitsCNN()
  return teeny_step(model, get_parameters(model), 3e-3, *data((1, 8, 8), 10, 64), jit=jit)

def torch_step(m, lr: float, X: np.ndarray, Y: np.ndarray):
  import torch
  opt = torch.optim.Adam(m.parameters(), lr=lr)
  x, y = torch.tensor(X), torch.tensor(Y)
  def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward()
    opt.step()
    return loss.item()
  return step

def torch_mlp():
  import torch
  return torch_step(torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)), 1e-3,
                    *data((784,), 10, 128))

def torch_cnn():
  import torch
  m = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                          torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                          torch.nn.Linear(512, 10))
  return torch_step(m, 3e-3, *data((1, 8, 8), 10, 64))

def tinygrad_mlp(jit: bool = False):
  from tinygrad import Tensor as TT, TinyJit as TJ, nn as tnn  # type: ignore
  X, Y = data((784,), 10, 128)
  l1, l2 = tnn.Linear(784, 128), tnn.Linear(128, 10)
  opt = tnn.optim.Adam(tnn.state.get_parameters([l1, l2]), lr=1e-3)
  x, y = TT(X), TT(Y.astype(np.int32))
  # training mode: Tensor.train() in older tinygrad, the TRAINING context variable in newer ones (0.14)
  if hasattr(TT, "train"): train = TT.train
  else:
    from tinygrad.helpers import Context  # type: ignore
    def train(): return Context(TRAINING=1)
  def train_step(x, y):
    with train():
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss.realize()
  f = TJ(train_step) if jit else train_step
  return lambda: f(x, y).item()

def teeny_sgd_mlp():
  from teeny import Tensor, nn
  from teeny.nn.state import get_parameters
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  opt = nn.optim.SGD(get_parameters([l1, l2]), lr=1e-2)
  X, Y = data((784,), 10, 128)
  x, y = Tensor(X), Tensor(Y.astype(np.int32))
  def step():
    opt.zero_grad()
    loss = l2(l1(x).relu()).cross_entropy(y)
    loss.backward()
    Tensor.realize(loss, *opt.schedule_step())
    return loss.item()
  return step

def live_tensors(n: int) -> list:
  """n unrelated tensors: half realized (from numpy), half lazy (never realized)."""
  from teeny import Tensor
  rng = np.random.default_rng(1)
  return ([Tensor(rng.standard_normal(4).astype(np.float32)) for _ in range(n // 2)] +
          [Tensor.rand(4) + 1 for _ in range(n - n // 2)])

def measure_teeny() -> dict[str, float]:
  """teeny's numbers for every case: steps/s for the Adam cases, ms per step for the SGD step with and without live
  tensors."""
  out = {"mlp": timed(teeny_mlp()), "cnn": timed(teeny_cnn()), "mlp_jit": timed(teeny_mlp(jit=True)),
         "cnn_jit": timed(teeny_cnn(jit=True))}
  step = teeny_sgd_mlp()
  out["sgd_ms"] = 1000 / timed(step, LIVE_STEPS)
  keep = live_tensors(N_LIVE)
  out["sgd_live_ms"] = 1000 / timed(step, LIVE_STEPS)
  del keep
  return out

def jit_replay_overhead(n_kernels: int = 10, calls: int = 500) -> tuple[float, float]:
  """Microseconds per kernel of a TinyJit replay of a chain of n kernels that do almost nothing (4 floats each): the
  whole call (binding, launches, fresh output, versions), and the launch loop alone."""
  from teeny import Tensor, TinyJit
  def chain(x):
    for _ in range(n_kernels): x = (x + 1).contiguous()
    return x
  f = TinyJit(chain)
  x = Tensor(np.zeros(4, np.float32))
  for _ in range(3): f(x)
  graph = next(iter(f.captures.values())).graph
  def per_kernel(fn) -> float:
    best = float("inf")
    for _ in range(3):
      st = time.perf_counter()
      for _ in range(calls): fn()
      best = min(best, (time.perf_counter() - st) / calls / n_kernels * 1e6)
    return best
  return per_kernel(lambda: f(x)), per_kernel(graph)

def measure_torch() -> dict[str, float]:
  try: return {"mlp": timed(torch_mlp()), "cnn": timed(torch_cnn())}
  except ImportError: return {}

def measure_tinygrad() -> dict[str, float]:
  try: return {"mlp": timed(tinygrad_mlp()), "mlp_jit": timed(tinygrad_mlp(jit=True))}
  except ImportError: return {}

WORKERS = {"teeny": measure_teeny, "torch": measure_torch, "tinygrad": measure_tinygrad}

def main():
  ap = argparse.ArgumentParser(description="training throughput: teeny vs PyTorch/tinygrad (and a baseline commit)")
  ap.add_argument("--baseline", metavar="COMMIT", default=None, help="also measure teeny at this commit (e.g. 20f7e57)")
  ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)  # internal: one framework, as JSON
  args = ap.parse_args()
  if args.worker:
    print(json.dumps(WORKERS[args.worker]()))
    return
  btree = baseline_tree(args.baseline) if args.baseline else None
  order = ["cur", "torch", "tinygrad"] + (["base"] if btree else [])
  runs = alternate(order, lambda who: measure_in(__file__, "teeny" if who in ("cur", "base") else who,
                                                btree if who == "base" else None))
  best = lambda rs: {k: (min if k.endswith("_ms") else max)(r[k] for r in rs) for k in rs[0]}
  cur, tch, tgr = best(runs["cur"]), best(runs["torch"]), best(runs["tinygrad"])
  base = best(runs["base"]) if btree else None
  rows = []
  for name, key in [("MLP 784-128-10, batch 128, Adam", "mlp"), ("digits CNN, batch 64, Adam", "cnn")]:
    rows.append((name, key, cur[key], tch.get(key), tgr.get(key)))
    rows.append(("  the same with TinyJit", key + "_jit", cur[key + "_jit"], tch.get(key), tgr.get(key + "_jit")))
  try:
    import torch
    tver = f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
  except ImportError: tver = "torch not installed"
  fmt = lambda v, w=8: f"{v:{w}.1f}" if v else f"{'-':>{w}s}"
  clock = "CPU time of the process (CLOCK=cpu)" if CLOCK is time.process_time else "wall time"
  print(f"steps/s by {clock}, median of {CHUNKS} runs of {max(STEPS // CHUNKS, 1)} steps after {WARMUP} warm-up · "
        f"{os.cpu_count()} cores · {tver}")
  print(f"each framework (teeny{', its baseline ' + str(args.baseline) if base else ''}, torch, tinygrad) the best of "
        f"{ROUNDS} rounds, each round a fresh process per framework, alternating")
  head = f"{'case':36s} {'teeny':>8s} {'torch':>8s} {'tinygrad':>9s} {'teeny/torch':>12s}"
  print(head + (f" {'baseline':>9s} {'teeny/base':>11s}" if base else ""))
  for name, key, a, b, c in rows:
    line = f"{name:36s} {fmt(a)} {fmt(b)} {fmt(c, 9)} {(a / b if b else float('nan')):12.2f}"
    print(line + (f" {fmt(base[key], 9)} {a / base[key]:11.3f}" if base and key in base else ""))
  print("TinyJit / without: " +
        ", ".join(f"{k} {cur[k + '_jit'] / cur[k]:.2f}x" for k in ("mlp", "cnn") if k + "_jit" in cur))
  spread = lambda who, k: "..".join(f"{f(r[k] for r in runs[who]):.1f}" for f in (min, max)) if runs[who][0] else "-"
  print("spread over rounds (min..max): " + "; ".join(
    f"{k}: teeny {spread('cur', k)}" + (f", baseline {spread('base', k)}" if base else "") +
    (f", torch {spread('torch', k)}" if k in ("mlp", "cnn") else "")
    for k in ("mlp", "mlp_jit", "cnn", "cnn_jit", "sgd_ms", "sgd_live_ms")))
  call_us, loop_us = jit_replay_overhead()
  print(f"TinyJit replay of 10 near-empty kernels (teeny of this tree): "
        f"{call_us:.1f} us per kernel for the whole call, "
        f"{loop_us:.1f} us per kernel in the launch loop")
  print(f"\nSGD step, MLP 784-128-10 batch 128, ms/step over {LIVE_STEPS} steps (lower is better); {N_LIVE:,} live "
        "tensors: half realized, half lazy")
  print(f"{'':36s} {'no extra':>9s} {f'{N_LIVE:,} live':>12s} {'live/none':>10s}")
  for label, r in [("teeny", cur)] + ([(f"teeny baseline {args.baseline}", base)] if base else []):
    print(f"{label:36s} {r['sgd_ms']:9.2f} {r['sgd_live_ms']:12.2f} {r['sgd_live_ms'] / r['sgd_ms']:10.2f}")
  if base:
    print(f"{'this tree / baseline (time)':36s} {cur['sgd_ms'] / base['sgd_ms']:9.3f} "
          f"{cur['sgd_live_ms'] / base['sgd_live_ms']:12.3f}")

if __name__ == "__main__":
  main()
