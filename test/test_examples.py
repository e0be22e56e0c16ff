"""The training examples run end to end (a few steps) and report an accuracy."""
import os, re, subprocess, sys
import pytest
from helpers import needs_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

@needs_values
@pytest.mark.parametrize("script", ["train_digits_mlp.py", "train_digits_cnn.py"])
def test_example_runs(script, tmp_path):
  pytest.importorskip("sklearn")
  env = {**os.environ, "STEPS": "20", "SEED": "1", "PYTHONPATH": ROOT}
  proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script)], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
  m = re.search(r"^test accuracy: (\d+\.\d+)%", proc.stdout, re.M)
  assert m, f"{script} printed no accuracy line:\n{proc.stdout[-3000:]}"
  assert 0.0 <= float(m.group(1)) <= 100.0
  assert re.search(r"^reloaded test accuracy: " + re.escape(m.group(1)) + "%", proc.stdout, re.M)
