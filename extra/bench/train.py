#!/usr/bin/env python3
"""Training throughput: teeny vs PyTorch (and tinygrad when importable), steps/s after warm-up, in one run. Not a test.

  python extra/bench/train.py          # STEPS=n timed steps per case (default 50), WARMUP=n (default 5)

Cases: a 784-128-10 MLP (batch 128, Adam, cross-entropy) on random data, and the digits CNN from
examples/train_digits_cnn.py (batch 64, Adam). Each step is forward, backward and the optimizer update, with the loss
read back to the host (as a training loop that logs does).
"""
from __future__ import annotations
import os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import numpy as np

STEPS, WARMUP = int(os.environ.get("STEPS", 50)), int(os.environ.get("WARMUP", 5))

def timed(step) -> float:
  for _ in range(WARMUP): step()
  st = time.perf_counter()
  for _ in range(STEPS): step()
  return STEPS / (time.perf_counter() - st)

def data(shape_x, n_classes, bs, seed=0):
  rng = np.random.default_rng(seed)
  return rng.standard_normal((bs, *shape_x)).astype(np.float32), rng.integers(0, n_classes, bs).astype(np.int64)

def teeny_step(model, params: list, lr: float, X: np.ndarray, Y: np.ndarray):
  from teeny import Tensor, nn
  opt = nn.optim.Adam(params, lr=lr)
  x, y = Tensor(X), Tensor(Y.astype(np.int32))
  def step():
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).cross_entropy(y)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      return loss.item()
  return step

def teeny_mlp():
  from teeny import nn
  from teeny.nn.state import get_parameters
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  return teeny_step(lambda x: l2(l1(x).relu()), get_parameters([l1, l2]), 1e-3, *data((784,), 10, 128))

def teeny_cnn():
  from teeny.nn.state import get_parameters
  sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
  from train_digits_cnn import DigitsCNN
  model = DigitsCNN()
  return teeny_step(model, get_parameters(model), 3e-3, *data((1, 8, 8), 10, 64))

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
                          torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(512, 10))
  return torch_step(m, 3e-3, *data((1, 8, 8), 10, 64))

def tinygrad_mlp():
  from tinygrad import Tensor as TT, nn as tnn  # type: ignore
  X, Y = data((784,), 10, 128)
  l1, l2 = tnn.Linear(784, 128), tnn.Linear(128, 10)
  opt = tnn.optim.Adam(tnn.state.get_parameters([l1, l2]), lr=1e-3)
  x, y = TT(X), TT(Y.astype(np.int32))
  # training mode: Tensor.train() in older tinygrad, the TRAINING context variable in newer ones (0.14)
  if hasattr(TT, "train"): train = TT.train
  else:
    from tinygrad.helpers import Context  # type: ignore
    def train(): return Context(TRAINING=1)
  def step():
    with train():
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss.item()
  return step

def main():
  rows = []
  for name, t, ref, tg in [("MLP 784-128-10, batch 128, Adam", teeny_mlp, torch_mlp, tinygrad_mlp),
                           ("digits CNN, batch 64, Adam", teeny_cnn, torch_cnn, None)]:
    teeny_sps = timed(t())
    try: torch_sps = timed(ref())
    except ImportError: torch_sps = None
    tg_sps = None
    if tg is not None:
      try: tg_sps = timed(tg())
      except ImportError: pass
    rows.append((name, teeny_sps, torch_sps, tg_sps))
  try:
    import torch
    tver = f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
  except ImportError: tver = "torch not installed"
  print(f"steps/s, median-free mean over {STEPS} steps after {WARMUP} warm-up · {os.cpu_count()} cores · {tver}")
  print(f"{'case':36s} {'teeny':>8s} {'torch':>8s} {'tinygrad':>9s} {'teeny/torch':>12s}")
  for name, a, b, c in rows:
    fmt = lambda v: f"{v:8.1f}" if v else f"{'-':>8s}"
    print(f"{name:36s} {fmt(a)} {fmt(b)} {fmt(c):>9s} {(a / b if b else float('nan')):12.2f}")

if __name__ == "__main__":
  main()
