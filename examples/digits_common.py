"""The end of both digits examples: a loss-curve PNG when matplotlib is there, then save the weights with safe_save,
reload them into a fresh model and check the reloaded model scores the same."""
from __future__ import annotations
import os, tempfile
from typing import Callable
from teeny.nn.state import get_state_dict, load_state_dict, safe_save, safe_load

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
