#!/usr/bin/env python3
"""Training steps on a GPU: teeny (plain, and TinyJit replayed as one CUDA graph) vs PyTorch (eager, and captured
with torch.cuda.graph) on the same GPU, in one run. Not a test.

  DEV=CUDA python extra/bench/gpu_train.py        # STEPS=n timed steps (default 100), WARMUP=n (default 10)

Cases: the 784-128-10 MLP (batch 128, Adam, cross-entropy) of extra/bench/train.py, and examples/tiny_gpt.py's model
(AdamW, cross-entropy over every position) at the example's size and at a wider one. Each step is forward, backward
and the optimizer update, with the loss read back to the host (which waits for the GPU). Steps/s (and tokens/s for
the GPT), ratios to PyTorch eager.
"""
from __future__ import annotations
import math, os, sys, time
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "examples"))

STEPS, WARMUP = int(os.environ.get("STEPS", 100)), int(os.environ.get("WARMUP", 10))
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

def teeny_gpt(jit: bool, dim, heads, layers, batch, context):
  from teeny import Tensor, TinyJit, nn
  from teeny.nn.state import get_parameters
  import teeny.kernels as K
  from tiny_gpt import TinyGPT
  Tensor.manual_seed(0)
  model = TinyGPT(VOCAB, dim=dim, heads=heads, layers=layers, context=context)
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
def torch_case(torch, make_model, make_opt, X, Y, loss_of, graph: bool):
  dev = torch.device("cuda")
  m = make_model().to(dev)
  opt = make_opt(m.parameters(), graph)
  x, y = torch.tensor(X, device=dev), torch.tensor(Y, device=dev)
  def body():
    opt.zero_grad(set_to_none=not graph)
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

def torch_gpt(torch, graph: bool, dim, heads, layers, batch, context):
  X, Y = gpt_data(batch, context)
  torch.manual_seed(0)
  from torch_gpt import torch_gpt as make
  return torch_case(torch, lambda: make(VOCAB, dim, heads, layers, context),
                    lambda ps, g: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.01, capturable=g),
                    X.astype(np.int64), Y.astype(np.int64),
                    lambda out, y: torch.nn.functional.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1)), graph)

def fmt(x): return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:9.1f}"

def main():
  from teeny import Device
  if not Device.DEFAULT.startswith("CUDA"):
    sys.exit(f"gpu_train.py measures a GPU: run it with DEV=CUDA (the default device here is {Device.DEFAULT})")
  try:
    import torch
    if not torch.cuda.is_available(): torch = None
  except ImportError: torch = None
  rows = []
  def run(fn):
    try: return timed(fn())
    except Exception as e:   # a case that cannot run here is reported, not fatal
      print(f"  ({type(e).__name__}: {str(e)[:160]})")
      return float("nan")
  cases = [("MLP 784-128-10 b128 Adam", 128, lambda j: teeny_mlp(j), (lambda g: torch_mlp(torch, g)))]
  for name, kw in GPT_SIZES.items():
    cases.append((name, kw["batch"] * kw["context"], lambda j, kw=kw: teeny_gpt(j, **kw),
                  lambda g, kw=kw: torch_gpt(torch, g, **kw)))
  for name, tokens, tn, tt in cases:
    print(f"{name} ...", flush=True)
    r = dict(name=name, tokens=tokens, teeny=run(lambda: tn(False)), teeny_jit=run(lambda: tn(True)))
    r["torch"] = run(lambda: tt(False)) if torch else None
    r["torch_graph"] = run(lambda: tt(True)) if torch else None
    rows.append(r)
  print(f"\nsteps/s on {Device.DEFAULT} ({torch.cuda.get_device_name() if torch else 'no torch'}), {STEPS} steps after "
        f"{WARMUP} warm-up, loss read back each step")
  print(f"{'case':32s} {'teeny':>9s} {'teeny jit':>9s} {'torch':>9s} {'torch cg':>9s}  {'jit/torch':>9s} "
        f"{'jit/torch cg':>12s}")
  for r in rows:
    ratio = lambda a, b: f"{a / b:9.2f}" if a and b and not math.isnan(a) and not math.isnan(b) else "        -"
    print(f"{r['name']:32s} {fmt(r['teeny'])} {fmt(r['teeny_jit'])} {fmt(r['torch'])} {fmt(r['torch_graph'])}  "
          f"{ratio(r['teeny_jit'], r['torch'])} {ratio(r['teeny_jit'], r['torch_graph']):>12s}")
  for r in rows[1:]:
    tok = {k: (r[k] or float("nan")) * r["tokens"] for k in ("teeny_jit", "torch", "torch_graph")}
    print(f"{r['name']}: tokens/s teeny jit {tok['teeny_jit']:,.0f}, torch {tok['torch']:,.0f}, "
          f"torch cuda graph {tok['torch_graph']:,.0f}")

if __name__ == "__main__":
  main()
