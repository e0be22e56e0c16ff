#!/usr/bin/env python3
"""Train a small CNN on scikit-learn's 8x8 handwritten digits with Adam and a cosine schedule: ~97-98% test accuracy
on the held-out last 20% (writers the model never saw), in about a minute on two CPU cores.

  python examples/train_digits_cnn.py          # STEPS=n caps the steps, SEED=n picks the seed (default 0)
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from tqdm import trange
from teeny import Tensor, nn
from teeny.nn.state import get_parameters
from digits_common import accuracy, check_reload, save_loss_curve

class DigitsCNN:
  def __init__(self):
    self.c1 = nn.Conv2d(1, 32, 3, padding=1)
    self.c2 = nn.Conv2d(32, 32, 3, padding=1)
    self.l1 = nn.Linear(32 * 4 * 4, 10)
  def __call__(self, x: Tensor) -> Tensor:
    x = self.c1(x).relu().max_pool2d(2)  # (N, 32, 4, 4): pooling early keeps the second conv cheap
    x = self.c2(x).relu()
    return self.l1(x.reshape(x.shape[0], -1).dropout(0.3))

def shift(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
  """Move each image by up to one pixel in each direction (zero fill): the test digits are by other writers."""
  n = len(x)
  xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  d = rng.integers(0, 3, (n, 2))
  rows, cols = d[:, :1] + np.arange(8), d[:, 1:] + np.arange(8)
  return xp[np.arange(n)[:, None, None], 0, rows[:, :, None], cols[:, None, :]][:, None]

def main():
  seed, steps, bs = int(os.getenv("SEED", "0")), int(os.getenv("STEPS", "450")), 128
  X_train, Y_train, X_test, Y_test = nn.datasets.digits()
  Tensor.manual_seed(seed)
  rng = np.random.default_rng(seed)
  model = DigitsCNN()
  opt = nn.optim.Adam(get_parameters(model), lr=5e-3)
  sched = nn.optim.CosineAnnealingLR(opt, T_max=steps)
  steps_per_epoch = len(X_train) // bs
  losses, st = [], time.perf_counter()
  with Tensor.train():
    for i in (t := trange(steps, desc="digits cnn")):
      idx = rng.integers(0, len(X_train), bs)
      opt.zero_grad()
      loss = model(Tensor(shift(X_train[idx], rng))).cross_entropy(Tensor(Y_train[idx]), label_smoothing=0.1)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())  # the loss and the update in one schedule
      sched.step()
      losses.append(float(loss.item()))
      t.set_postfix(loss=f"{losses[-1]:.3f}")
      if (i + 1) % steps_per_epoch == 0 or i + 1 == steps:
        t.write(f"step {i + 1:4d}  epoch {(i + 1) / steps_per_epoch:4.1f}  loss {losses[-1]:.4f}  "
                f"test accuracy {accuracy(model, X_test, Y_test) * 100:.2f}%")
  train_s = time.perf_counter() - st
  acc = accuracy(model, X_test, Y_test)
  print(f"test accuracy: {acc * 100:.2f}% ({len(Y_test)} images, {steps} steps, {train_s:.1f} s, seed {seed})")

  save_loss_curve(losses, "digits_cnn", "digits CNN")
  check_reload(model, DigitsCNN, lambda m: accuracy(m, X_test, Y_test), acc, "digits_cnn")

if __name__ == "__main__":
  main()
