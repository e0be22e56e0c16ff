"""What both digits examples share: the training loop (Adam, a cosine schedule, a progress bar and test accuracy),
test accuracy in eval mode, a loss-curve PNG when matplotlib is there, and a save -> reload -> re-check of the weights
through a safetensors file."""
from __future__ import annotations
import os, tempfile, time
from typing import Callable
import numpy as np
from tqdm import trange
from teeny import Tensor, nn
from teeny.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load

def train_digits(make_model: Callable, name: str, title: str, lr: float, default_steps: int, report_epochs: int,
                 step_loss: Callable) -> None:
  """Train make_model() on the digits (batch 128; STEPS=n caps the steps, SEED=n picks the seed), reporting test
  accuracy every report_epochs epochs; step_loss(model, x, y, rng) is a batch's loss. Then plot, save and reload."""
  seed, steps, bs = int(os.getenv("SEED", "0")), int(os.getenv("STEPS", str(default_steps))), 128
  X_train, Y_train, X_test, Y_test = nn.datasets.digits()
  Tensor.manual_seed(seed)
  rng = np.random.default_rng(seed)
  model = make_model()
  opt = nn.optim.Adam(get_parameters(model), lr=lr)
  sched = nn.optim.CosineAnnealingLR(opt, T_max=steps)
  steps_per_epoch = len(X_train) // bs
  losses, st = [], time.perf_counter()
  with Tensor.train():
    for i in (t := trange(steps, desc=name.replace("_", " "))):
      idx = rng.integers(0, len(X_train), bs)
      opt.zero_grad()
      loss = step_loss(model, X_train[idx], Y_train[idx], rng)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())  # the loss and the update in one schedule
      sched.step()
      losses.append(float(loss.item()))
      t.set_postfix(loss=f"{losses[-1]:.3f}")
      if (i + 1) % (report_epochs * steps_per_epoch) == 0 or i + 1 == steps:
        t.write(f"step {i + 1:4d}  epoch {(i + 1) / steps_per_epoch:4.1f}  loss {losses[-1]:.4f}  "
                f"test accuracy {accuracy(model, X_test, Y_test) * 100:.2f}%")
  train_s = time.perf_counter() - st
  acc = accuracy(model, X_test, Y_test)
  print(f"test accuracy: {acc * 100:.2f}% ({len(Y_test)} images, {steps} steps, {train_s:.1f} s, seed {seed})")

  save_loss_curve(losses, name, title)
  check_reload(model, make_model, lambda m: accuracy(m, X_test, Y_test), acc, name)

def accuracy(model, X: np.ndarray, Y: np.ndarray) -> float:
  with Tensor.no_grad(), Tensor.train(False):  # eval mode: no dropout
    pred = model(Tensor(X)).argmax(axis=1).numpy()
  return float((pred == Y).mean())

def save_loss_curve(losses: list[float], name: str, title: str) -> None:
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError: return
  plt.plot(losses)
  plt.xlabel("step"), plt.ylabel("cross-entropy loss"), plt.title(title)
  plt.savefig(f"{name}_loss.png")
  print(f"loss curve saved to {name}_loss.png")

def check_reload(model, make_model: Callable, score: Callable, acc: float, name: str) -> None:
  """Round-trip the weights through a safetensors file; a different accuracy after reloading is an error."""
  with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, f"{name}.safetensors")
    safe_save(get_state_dict(model), path, metadata={"test_accuracy": f"{acc:.4f}"})
    fresh = make_model()
    load_state_dict(fresh, safe_load(path))
    reloaded = score(fresh)
  print(f"reloaded test accuracy: {reloaded * 100:.2f}%")
  if reloaded != acc: raise SystemExit(f"reloaded weights give {reloaded} accuracy, trained ones {acc}")
