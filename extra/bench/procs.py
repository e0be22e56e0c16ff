"""Fresh processes for the CPU benchmarks (core.py, kernels.py, train.py). Not a test.

Each framework is measured in a process of its own, the processes alternating ROUNDS times, and each keeps its best
round. In one process the frameworks disturb each other: OpenBLAS's threads (numpy) and torch's OpenMP threads keep
spinning after their last op and take a core from whatever runs next (a 1024^3 teeny matmul measured 128 GFLOP/s right
after numpy's and 255 alone; teeny's MLP TinyJit step 2x slower right after torch steps than alone). A neighbour's load
on a shared machine moves single runs by 30% and more, so one round is not a figure.

A worker is the benchmark script itself run as `script --worker NAME`, printing one JSON object as its last line of
output. Under TEENY_CPU_ARCH=x86-64-v3 the other frameworks' workers are held to AVX2 too (same_isa_env).
`--baseline COMMIT` measures teeny at that commit too: a detached git worktree under /tmp, with PYTHONPATH,
TEENY_BENCH_ROOT and the working directory pointing there, running this tree's script.
"""
from __future__ import annotations
import json, os, subprocess, sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parents[2]
ROUNDS = max(int(os.environ.get("ROUNDS", 2)), 1)

# TEENY_CPU_ARCH -> the same instruction set for the other frameworks: torch's ATen kernels, oneDNN (torch's conv and
# matmul) and OpenBLAS (numpy) otherwise use the machine's widest, so an AVX2 teeny would race AVX-512 libraries
_ISA = {"x86-64-v3": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Haswell"},
        "x86-64-v2": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41", "OPENBLAS_CORETYPE": "Nehalem"},
        "x86-64": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41", "OPENBLAS_CORETYPE": "Prescott"}}

def same_isa_env() -> dict[str, str]:
  """Environment that holds torch and numpy to teeny's TEENY_CPU_ARCH (empty for native or an unknown value)."""
  return dict(_ISA.get(os.environ.get("TEENY_CPU_ARCH", "").strip(), {}))

def teeny_root() -> Path:
  """The teeny under test: this tree, or the baseline tree when the script runs as a worker for it."""
  return Path(os.environ.get("TEENY_BENCH_ROOT") or HERE)

def baseline_tree(commit: str) -> Path:
  """A detached worktree of `commit` under /tmp (made once, then reused)."""
  git = lambda *a: subprocess.run(["git", "-C", str(HERE), *a], check=True, capture_output=True,
                                  text=True).stdout.strip()
  try: sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
  except subprocess.CalledProcessError as e:
    raise SystemExit(f"--baseline: {commit!r} is not a commit of {HERE}: {e.stderr.strip()}") from None
  tree = Path(f"/tmp/teeny-baseline-{sha[:12]}")
  if tree.exists():
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head != sha: raise SystemExit(f"--baseline: {tree} exists but is at {head or 'no commit'}, not {sha}; remove it")
  else: git("worktree", "add", "--detach", str(tree), sha)
  return tree

def measure_in(script: str, who: str, tree: Path | None = None, env: dict[str, str] | None = None) -> dict:
  """`script --worker who` in a fresh python with the teeny of `tree` (default this one); its last line, as JSON. A
  worker other than teeny's runs with same_isa_env()."""
  tree = tree or HERE
  full = dict(os.environ, PYTHONPATH=str(tree), TEENY_BENCH_ROOT=str(tree), **(env or {}))
  if who != "teeny": full.update(same_isa_env())
  r = subprocess.run([sys.executable, str(Path(script).resolve()), "--worker", who], cwd=tree, env=full,
                     capture_output=True, text=True)
  if r.returncode != 0: raise SystemExit(f"benchmark worker {who} in {tree} failed:\n{r.stderr[-3000:]}")
  return json.loads(r.stdout.strip().splitlines()[-1])

def alternate(order: list[str], measure: Callable[[str], dict], rounds: int = ROUNDS) -> dict[str, list[dict]]:
  """measure(who) for every name in `order`, `rounds` times, every other round in reverse order (a load that drifts
  during the run weighs on all alike): {who: [result of each round]}."""
  runs: dict[str, list[dict]] = {k: [] for k in order}
  for r in range(rounds):
    for who in (order if r % 2 == 0 else order[::-1]): runs[who].append(measure(who))
  return runs
