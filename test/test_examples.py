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
