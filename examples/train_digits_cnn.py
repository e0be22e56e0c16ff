#!/usr/bin/env python3
"""Train a small CNN on scikit-learn's 8x8 handwritten digits with Adam and a cosine schedule: ~97-98% test accuracy
on the held-out last 20% (writers the model never saw), in about a minute on two CPU cores.

  python examples/train_digits_cnn.py          # STEPS=n caps the steps, SEED=n picks the seed (default 0)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from teeny import Tensor, nn
from digits_common import train_digits

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
  train_digits(DigitsCNN, "digits_cnn", "digits CNN", lr=5e-3, default_steps=450, report_epochs=1,
               step_loss=lambda m, x, y, rng: m(Tensor(shift(x, rng))).cross_entropy(Tensor(y), label_smoothing=0.1))

if __name__ == "__main__":
  main()
