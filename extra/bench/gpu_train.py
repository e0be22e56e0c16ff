#!/usr/bin/env python3
"""Training steps on a GPU: teeny (plain, and TinyJit replayed as one CUDA graph) vs PyTorch (eager, and captured
with torch.cuda.graph) on the same GPU, in one run. Not a test.

  DEV=CUDA python extra/bench/gpu_train.py        # STEPS=n timed steps (default 100), WARMUP=n (default 10)
  CPU_SMOKE=1 STEPS=2 WARMUP=1 python extra/bench/gpu_train.py   # every case once on the CPU (torch too, no graphs)
  ONLY=wider DEV=CUDA python extra/bench/gpu_train.py             # the cases whose names hold "wider"

Cases: the 784-128-10 MLP (batch 128, Adam, cross-entropy) of extra/bench/train.py, and examples/tiny_gpt.py's model
(AdamW, cross-entropy over every position) at the example's size and at a wider one, each in float32 and in bfloat16
mixed precision: teeny's TinyGPT(dtype="bfloat16") (float32 weights and optimizer, bfloat16 matmuls summed in float32:
the tensor-core kernels) against PyTorch's model under torch.autocast(dtype=torch.bfloat16) (backward outside it, as
torch recommends). Each step is forward, backward and the optimizer update, with the loss read back to the host (which
waits for the GPU). Steps/s (and tokens/s for the GPT), ratios to PyTorch eager.

Then the bfloat16 loss check (issue 12): the example's model on its text, float32 and bfloat16 from one seed, trained
for as many steps as float32 needs to cut its loss (the mean of the last 10 steps) by 40% (MATCH_MAX=n steps at most,
default 300); PASS when bfloat16's loss there is within 2% of float32's.
"""
from __future__ import annotations
import math, os, sys, time
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "examples"))

STEPS, WARMUP = int(os.environ.get("STEPS", 100)), int(os.environ.get("WARMUP", 10))
ONLY = os.environ.get("ONLY", "")   # e.g. ONLY=wider: the cases whose names hold one of these words
CPU_SMOKE = os.environ.get("CPU_SMOKE", "0") == "1"   # run it all on the CPU once: the code paths, not a measurement
MATCH_MAX, MATCH_CUT, MATCH_TOL = int(os.environ.get("MATCH_MAX", 300)), 0.40, 0.02
GPT_SIZES = {"gpt example (d64 l2 b16 t64)": dict(dim=64, heads=4, layers=2, batch=16, context=64),
             "gpt wider (d256 l4 b32 t128)": dict(dim=256, heads=8, layers=4, batch=32, context=128)}
VOCAB = 96

def timed(step) -> float:
  for _ in range(WARMUP): step()
  st = time.perf_counter()
  for _ in range(STEPS): step()
  return STEPS / (time.perf_counter() - st)

def mlp_data(bs=128, seed=0):
  rng = np.random.default_rng(seed)
  return rng.standard_normal((bs, 784)).astype(np.float32), rng.integers(0, 10, bs).astype(np.int64)

def gpt_data(batch, context, seed=0):
  rng = np.random.default_rng(seed)
  toks = rng.integers(0, VOCAB, (batch, context + 1))
  return toks[:, :-1].astype(np.int32), toks[:, 1:].astype(np.int32)

# ---- teeny
def teeny_mlp(jit: bool):
  from teeny import Tensor, TinyJit, nn
  from teeny.nn.state import get_parameters
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  opt = nn.optim.Adam(get_parameters([l1, l2]), lr=1e-3)
  X, Y = mlp_data()
  x, y = Tensor(X), Tensor(Y.astype(np.int32))
  def step(x, y):
    with Tensor.train():
      opt.zero_grad()
      loss = l2(l1(x).relu()).cross_entropy(y)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      return loss
  f = TinyJit(step) if jit else step
  return lambda: f(x, y).item()

def teeny_gpt(jit: bool, dim, heads, layers, batch, context, dtype="float32"):
  from teeny import Tensor, TinyJit, nn
  from teeny.nn.state import get_parameters
  import teeny.kernels as K
  from tiny_gpt import TinyGPT
  Tensor.manual_seed(0)
  model = TinyGPT(VOCAB, dim=dim, heads=heads, layers=layers, context=context, dtype=dtype)
  opt = nn.optim.AdamW(get_parameters(model), lr=1e-3, weight_decay=0.01)
  X, Y = gpt_data(batch, context)
  x, y = Tensor(X), Tensor(Y.reshape(-1))
  def step(x, y):
    with Tensor.train():
      opt.zero_grad()
      loss = K.cross_entropy(model(x).reshape(batch * context, VOCAB), y)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      return loss
  f = TinyJit(step) if jit else step
  return lambda: f(x, y).item()

# ---- torch
def torch_case(torch, make_model, make_opt, X, Y, loss_of, graph: bool, autocast=None):
  """autocast: a dtype for torch.autocast around the forward and the loss (the backward runs outside it)."""
  dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")   # (the CPU only under CPU_SMOKE)
  if graph and dev.type != "cuda": raise RuntimeError("CUDA graphs need a GPU")
  m = make_model().to(dev)
  opt = make_opt(m.parameters(), graph and dev.type == "cuda")
  x, y = torch.tensor(X, device=dev), torch.tensor(Y, device=dev)
  def body():
    opt.zero_grad(set_to_none=not graph)
    # (the autocast cache of bfloat16 weights is off under a CUDA graph, as torch asks for graph capture)
    with torch.autocast(dev.type, dtype=autocast or torch.float32, enabled=autocast is not None,
                        cache_enabled=not graph):
      loss = loss_of(m(x), y)
    loss.backward()
    opt.step()
    return loss
  if not graph: return lambda: body().item()
  s = torch.cuda.Stream()
  s.wait_stream(torch.cuda.current_stream())
  with torch.cuda.stream(s):
    for _ in range(3): body()
  torch.cuda.current_stream().wait_stream(s)
  g = torch.cuda.CUDAGraph()
  with torch.cuda.graph(g): static_loss = body()
  def replay():
    g.replay()
    return static_loss.item()
  return replay

def torch_mlp(torch, graph: bool):
  X, Y = mlp_data()
  nn = torch.nn
  return torch_case(torch, lambda: nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)),
                    lambda ps, g: torch.optim.Adam(ps, lr=1e-3, capturable=g), X, Y,
                    torch.nn.functional.cross_entropy, graph)

def torch_gpt(torch, graph: bool, dim, heads, layers, batch, context, dtype="float32"):
  X, Y = gpt_data(batch, context)
  torch.manual_seed(0)
  from torch_gpt import torch_gpt as make
  return torch_case(torch, lambda: make(VOCAB, dim, heads, layers, context),
                    lambda ps, g: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.01, capturable=g),
                    X.astype(np.int64), Y.astype(np.int64),
                    lambda out, y: torch.nn.functional.cross_entropy(out.float().reshape(-1, VOCAB), y.reshape(-1)),
                    graph, autocast=getattr(torch, dtype) if dtype != "float32" else None)

# ---- the bfloat16 loss check
def loss_match() -> tuple[int | None, float, float, float, bool]:
  """(steps float32 took to cut its smoothed loss by MATCH_CUT (None: not within MATCH_MAX), float32's and bfloat16's
  smoothed loss there, their relative difference, PASS). The example's model, text, batches, seed and learning rate."""
  from teeny import Tensor
  import tiny_gpt as G
  data, itos, _ = G.load_data()
  def run(dtype: str, steps: int) -> list[float]:
    Tensor.manual_seed(0)
    return G.train(G.TinyGPT(len(itos), dtype=dtype), data, steps, np.random.default_rng(0), bar=False)
  smooth = lambda ls, i: float(np.mean(ls[max(0, i - 9):i + 1]))   # the example's summary: the mean of the last 10
  f32 = run("float32", MATCH_MAX)
  n = next((i + 1 for i in range(9, len(f32)) if smooth(f32, i) <= (1 - MATCH_CUT) * f32[0]), None)
  if n is None: return None, smooth(f32, len(f32) - 1), float("nan"), float("nan"), False
  b16 = run("bfloat16", n)
  lf, lb = smooth(f32, n - 1), smooth(b16, n - 1)
  rel = abs(lb - lf) / lf
  return n, lf, lb, rel, rel <= MATCH_TOL

def fmt(x): return f"{'-':>9s}" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:9.1f}"

def main():
  from teeny import Device
  if not Device.DEFAULT.startswith("CUDA") and not CPU_SMOKE:
    sys.exit(f"gpu_train.py measures a GPU: run it with DEV=CUDA (the default device here is {Device.DEFAULT}; "
             "CPU_SMOKE=1 runs every case once on it)")
  try:
    import torch
    if not torch.cuda.is_available() and not CPU_SMOKE: torch = None
  except ImportError: torch = None
  rows = []
  def run(fn):
    try: return timed(fn())
    except Exception as e:   # a case that cannot run here is reported, not fatal
      print(f"  ({type(e).__name__}: {str(e)[:160]})")
      return float("nan")
  cases = [("MLP 784-128-10 b128 Adam", 128, lambda j: teeny_mlp(j), (lambda g: torch_mlp(torch, g)))]
  for name, kw in GPT_SIZES.items():
    for dt in ("float32", "bfloat16"):
      cases.append((name if dt == "float32" else f"{name} bf16", kw["batch"] * kw["context"],
                    lambda j, kw=kw, dt=dt: teeny_gpt(j, **kw, dtype=dt),
                    lambda g, kw=kw, dt=dt: torch_gpt(torch, g, **kw, dtype=dt)))
  if ONLY: cases = [c for c in cases if any(w in c[0] for w in ONLY.split(","))]
  for name, tokens, tn, tt in cases:
    print(f"{name} ...", flush=True)
    r = dict(name=name, tokens=tokens, teeny=run(lambda: tn(False)), teeny_jit=run(lambda: tn(True)))
    r["torch"] = run(lambda: tt(False)) if torch else None
    r["torch_graph"] = run(lambda: tt(True)) if torch else None
    rows.append(r)
  gpu = (torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU") if torch else "no torch"
  print(f"\nsteps/s on {Device.DEFAULT} ({gpu}), {STEPS} steps after {WARMUP} warm-up, loss read back each step"
        + (" (CPU_SMOKE: not a measurement)" if CPU_SMOKE else ""))
  print(f"{'case':37s} {'teeny':>9s} {'teeny jit':>9s} {'torch':>9s} {'torch cg':>9s}  {'jit/torch':>9s} "
        f"{'jit/torch cg':>12s}")
  ratio = lambda a, b: f"{a / b:9.2f}" if a and b and not math.isnan(a) and not math.isnan(b) else "        -"
  for r in rows:
    print(f"{r['name']:37s} {fmt(r['teeny'])} {fmt(r['teeny_jit'])} {fmt(r['torch'])} {fmt(r['torch_graph'])}  "
          f"{ratio(r['teeny_jit'], r['torch'])} {ratio(r['teeny_jit'], r['torch_graph']):>12s}")
  print("\ntokens/s (bf16: teeny mixed precision vs torch.autocast bfloat16)")
  print(f"{'case':37s} {'teeny jit':>11s} {'torch':>11s} {'torch cg':>11s}  {'jit/torch':>9s} {'jit/torch cg':>12s}")
  tfmt = lambda x: "          -" if x is None or math.isnan(x) else f"{x:11,.0f}"
  for r in rows:
    if r["name"].startswith("MLP"): continue   # (tokens/s: the GPT cases)
    tok = {k: (r[k] or float("nan")) * r["tokens"] for k in ("teeny_jit", "torch", "torch_graph")}
    print(f"{r['name']:37s} {tfmt(tok['teeny_jit'])} {tfmt(tok['torch'])} {tfmt(tok['torch_graph'])}  "
          f"{ratio(tok['teeny_jit'], tok['torch'])} {ratio(tok['teeny_jit'], tok['torch_graph']):>12s}")
  by_name = {r["name"]: r for r in rows}
  for name in GPT_SIZES:
    if name not in by_name or f"{name} bf16" not in by_name: continue   # (left out by ONLY)
    f32, b16 = by_name[name], by_name[f"{name} bf16"]
    up = {k: ratio(b16[k], f32[k]).strip() for k in ("teeny_jit", "torch", "torch_graph")}
    print(f"{name}: bf16/float32 speed-up teeny jit {up['teeny_jit']}, torch {up['torch']}, "
          f"torch cg {up['torch_graph']}")
  print(f"\nbfloat16 loss check: the example trained until float32 cuts its loss by {MATCH_CUT:.0%} "
        f"(at most {MATCH_MAX} steps), same seed ...", flush=True)
  n, lf, lb, rel, ok = loss_match()
  if n is None: print(f"  FAIL: float32 did not cut its loss by {MATCH_CUT:.0%} in {MATCH_MAX} steps (at {lf:.4f})")
  else:
    print(f"  after {n} steps (loss: mean of the last 10): float32 {lf:.4f}, bfloat16 {lb:.4f}, {rel:.2%} apart: "
          f"{'PASS' if ok else 'FAIL'} (limit {MATCH_TOL:.0%})")

if __name__ == "__main__":
  main()
