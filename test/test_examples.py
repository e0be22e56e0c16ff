"""The training examples run end to end (20 steps, seed 1) and reach an accuracy well above chance (10%).

Measured on the CPU with STEPS=20 for seeds 0..3: MLP 71.4-79.4%, CNN 58.9-65.3%. The bounds leave >10 points of margin
under the lowest seen and are far above what an untrained or mis-trained model reaches (~10%)."""
import os, re, subprocess, sys
import pytest
from helpers import needs_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MIN_ACCURACY = {"train_digits_mlp.py": 60.0, "train_digits_cnn.py": 45.0}

@needs_values
@pytest.mark.parametrize("script", list(MIN_ACCURACY))
def test_example_runs(script, tmp_path):
  pytest.importorskip("sklearn")
  env = {**os.environ, "STEPS": "20", "SEED": "1", "PYTHONPATH": ROOT}
  proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script)], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
  m = re.search(r"^test accuracy: (\d+\.\d+)%", proc.stdout, re.M)
  assert m, f"{script} printed no accuracy line:\n{proc.stdout[-3000:]}"
  assert MIN_ACCURACY[script] <= float(m.group(1)) <= 100.0, f"{script}: {m.group(1)}% after 20 steps"
  assert re.search(r"^reloaded test accuracy: " + re.escape(m.group(1)) + "%", proc.stdout, re.M)

@needs_values
def test_tiny_gpt_kv_cache_compiles_once_and_matches_the_plain_path():
  """tiny_gpt samples through a KV cache whose attended length is a bound Variable: 200 greedy tokens (a small random
  model, context 32, so the context restarts several times) compile no program after the first token, and the tokens
  equal those of the uncached path (the whole context through the model every step)."""
  sys.path.insert(0, os.path.join(ROOT, "examples"))
  try: import tiny_gpt
  finally: sys.path.remove(os.path.join(ROOT, "examples"))
  from teeny import Tensor
  Tensor.manual_seed(3)
  itos = [chr(c) for c in range(32, 127)] + ["\n"]
  stoi = {c: i for i, c in enumerate(itos)}
  model = tiny_gpt.TinyGPT(len(itos), dim=32, heads=2, layers=2, context=32)
  compiles: list[int] = []
  out, after_first = tiny_gpt.sample(model, stoi, itos, "def f(", 200, temperature=0, compiles=compiles)
  assert len(out) == 200
  assert after_first == 0 and compiles[-1] == compiles[0], compiles[::20]
  assert out == tiny_gpt.sample_plain(model, stoi, itos, "def f(", 200)
  # without TinyJit (a schedule per step, the cached symbolic schedule): the same tokens, nothing compiled either
  out2, after_first2 = tiny_gpt.sample(model, stoi, itos, "def f(", 60, temperature=0, jit=False)
  assert out2 == out[:60] and after_first2 == 0
