"""What both digits examples share: test accuracy in eval mode, a loss-curve PNG when matplotlib is there, and a
save -> reload -> re-check of the weights through a safetensors file."""
from __future__ import annotations
import os, tempfile
from typing import Callable
import numpy as np
from teeny import Tensor
from teeny.nn.state import get_state_dict, load_state_dict, safe_save, safe_load

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
