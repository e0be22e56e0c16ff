"""Device selection (DEV=, CPU=1), the NULL device, DEBUG=4 output, CPU threading, and mixing devices."""
import os, pathlib, re, subprocess, sys
import numpy as np
import pytest
from helpers import needs_values
from teeny import Context, Device, GlobalCounters, Tensor
from teeny.codegen.render.c import CRenderer

REPO = pathlib.Path(__file__).resolve().parents[2]
DEVICE_FLAGS = ("DEV", "CPU", "NULL", "CUDA", "AMD", "CL")

def run_py(code: str, **env: str) -> str:
  """Run code in a fresh interpreter with only the given device switches set; returns stdout+stderr."""
  e = {k: v for k, v in os.environ.items() if k not in DEVICE_FLAGS + ("DEBUG",)}
  e.update(PYTHONPATH=os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")]), **env)
  proc = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120, cwd=REPO)
  assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
  return proc.stdout + proc.stderr

@pytest.fixture
def clean_env(monkeypatch):
  for k in DEVICE_FLAGS: monkeypatch.delenv(k, raising=False)
  return monkeypatch

# ---- choosing the default device

def test_dev_env_in_subprocess():
  assert run_py("from teeny import Device; print(Device.DEFAULT)", DEV="NULL").strip() == "NULL"

def test_dev_env(clean_env):
  clean_env.setenv("DEV", "NULL")
  assert Device.DEFAULT == "NULL"
  clean_env.setenv("DEV", "cpu")
  assert Device.DEFAULT == "CPU"

def test_default_is_cpu(clean_env):
  assert Device.DEFAULT == "CPU"

def test_cpu_flag(clean_env):
  clean_env.setenv("CPU", "1")
  assert Device.DEFAULT == "CPU"

def test_null_flag(clean_env):
  clean_env.setenv("NULL", "1")
  assert Device.DEFAULT == "NULL"

def test_dev_wins_over_flag(clean_env):
  clean_env.setenv("CPU", "1")
  clean_env.setenv("DEV", "NULL")
  assert Device.DEFAULT == "NULL"

def test_new_tensors_land_on_default(clean_env):
  clean_env.setenv("DEV", "NULL")
  assert Tensor([1.0, 2.0]).device == "NULL"

def test_unknown_device_raises_naming_it():
  with pytest.raises(RuntimeError, match="FOO"):
    Device["FOO"]
  with pytest.raises(RuntimeError, match="NOPE"):
    Tensor([1.0], device="NOPE")

def test_unknown_dev_env_raises_naming_it(clean_env):
  clean_env.setenv("DEV", "BOGUS")
  with pytest.raises(RuntimeError, match="BOGUS"):
    _ = Device.DEFAULT

def test_canonical_names():
  assert Device.canonicalize("cpu") == "CPU"
  assert Device.canonicalize("null") == "NULL"
  assert Device["cpu"] is Device["CPU"]

# ---- NULL

def test_null_realizes_but_has_no_values():
  t = (Tensor([1.0, 2.0, 3.0], device="NULL") * 2 + 1).relu()
  t.realize()
  assert t.device == "NULL" and t.shape == (3,)
  with pytest.raises(RuntimeError, match="NULL"):
    t.numpy()
  with pytest.raises(RuntimeError):
    t.tolist()

def test_null_renders_c_and_runs_nothing(monkeypatch):
  dev = Device["NULL"]
  assert isinstance(dev.renderer, CRenderer)
  assert dev.runs_nothing and dev.compiler is None
  from teeny.runtime import ops_cpu
  def no_compile(self, src): raise AssertionError("NULL must not compile")
  monkeypatch.setattr(ops_cpu.CCompiler, "compile", no_compile)
  GlobalCounters.reset()
  (Tensor(np.arange(10, dtype=np.float32), device="NULL") * 3.25 - 7.5).realize()
  assert GlobalCounters.kernel_count == 1

def test_null_schedule_matches_cpu():
  def build(dev):
    x = Tensor(np.ones((4, 8), dtype=np.float32), device=dev)
    return [si.ast.arg.name for si in x.softmax(1).schedule()]
  assert build("NULL") == build("CPU")

# ---- DEBUG=4

@needs_values
def test_debug4_cpu_prints_one_kernel_and_values():
  out = run_py("from teeny import Tensor; print((Tensor([1.,2,3])*2+1).relu().numpy())", DEBUG="4", DEV="CPU")
  defs = [ln for ln in out.splitlines() if re.match(r"\s*void E_", ln)]
  assert len(defs) == 1, f"expected one kernel definition, got {defs}\n{out}"
  assert out.rstrip().endswith("[3. 5. 7.]"), out

def test_debug4_null_prints_kernel_but_no_values():
  out = run_py("from teeny import Tensor; (Tensor([1.,2,3])*2+1).relu().realize()", DEBUG="4", DEV="NULL")
  defs = [ln for ln in out.splitlines() if re.match(r"\s*void E_", ln)]
  assert len(defs) == 1, f"expected one kernel definition, got {defs}\n{out}"
  assert not re.search(r"\[\s*3\.\s+5\.\s+7\.\s*\]", out), out
  assert "E_3" in out

# ---- CPU threads

@needs_values
@pytest.mark.parametrize("n", [1, 2, 3])
def test_cpu_threads_same_values(n):
  size = 100_003  # not a multiple of the thread count: the last core gets a short share
  a = np.random.default_rng(0).uniform(-3, 3, size).astype(np.float32)
  x = Tensor(a, device="CPU")
  with Context(CPU_THREADS=n):
    got = ((x * 1.5 + 2).relu() - x.exp() * 0.25).numpy()
  np.testing.assert_allclose(got, np.maximum(a * 1.5 + 2, 0) - np.exp(a) * 0.25, rtol=1e-5, atol=1e-5)

@needs_values
def test_cpu_threads_reduce_same_values():
  a = np.random.default_rng(1).uniform(-1, 1, (1001, 37)).astype(np.float32)
  outs = []
  for n in (1, 2):
    with Context(CPU_THREADS=n): outs.append((Tensor(a, device="CPU") * 2).sum(1).numpy())
  np.testing.assert_array_equal(outs[0], outs[1])
  np.testing.assert_allclose(outs[0], (a * 2).sum(1), rtol=1e-4, atol=1e-4)

COUNT_CORES = """#include <stdint.h>
void count(int *hits, int *ncores_seen, int core, int ncores) { hits[core] += 1; ncores_seen[core] = ncores; }
void teeny_entry(void **a, int core, int ncores) { count(a[0], a[1], core, ncores); }
"""

def _count_program():
  from teeny.runtime.ops_cpu import CCompiler, CPUProgram
  return CPUProgram("count", CCompiler().compile(COUNT_CORES))

def test_cpu_pool_runs_every_core_once():
  """The C worker pool (runtime/cpu_pool.py): each of n cores' shares runs exactly once per call, with more cores than
  the machine has, and calls from several Python threads take turns (ctypes drops the GIL: they really overlap)."""
  import threading
  prg = _count_program()
  for n in (1, 2, 7):
    hits, seen = np.zeros(8, np.int32), np.zeros(8, np.int32)
    with Context(CPU_THREADS=n):
      for _ in range(50): prg(hits, seen)
    assert hits.tolist() == [50] * n + [0] * (8 - n) and seen.tolist() == [n] * n + [0] * (8 - n)
  hits, seen = np.zeros(8, np.int32), np.zeros(8, np.int32)
  def many():
    for _ in range(300): prg(hits, seen, work=1 << 20)
  with Context(CPU_THREADS=3):
    ts = [threading.Thread(target=many) for _ in range(3)]
    for t in ts: t.start()
    for t in ts: t.join()
  assert hits.tolist() == [900] * 3 + [0] * 5

def test_cpu_pool_wakes_sleeping_workers():
  """With no spinning (TEENY_CPU_SPIN_US=0) every hand-off wakes a sleeping worker through the condition variable: a
  lost wake-up would hang this (run in a child with a time limit)."""
  code = ("import numpy as np, time\n"
          "from teeny import Context\n"
          "from teeny.runtime.ops_cpu import CCompiler, CPUProgram\n"
          f"prg = CPUProgram('count', CCompiler().compile({COUNT_CORES!r}))\n"
          "hits, seen = np.zeros(8, np.int32), np.zeros(8, np.int32)\n"
          "with Context(CPU_THREADS=4):\n"
          "  for i in range(2000):\n"
          "    prg(hits, seen)\n"
          "    if i % 500 == 0: time.sleep(0.01)\n"
          "print('hits', hits.tolist())\n")
  out = run_py(code, TEENY_CPU_SPIN_US="0")
  assert "hits [2000, 2000, 2000, 2000, 0, 0, 0, 0]" in out, out

def test_cpu_pool_bad_settings():
  with pytest.raises(AssertionError, match="TEENY_CPU_SPIN_US must be a non-negative int"):
    run_py("from teeny import Tensor; import numpy as np\n"
           "print((Tensor(np.ones(1 << 18, np.float32)) * 2).sum().numpy())", TEENY_CPU_SPIN_US="soon")
  prg = _count_program()
  with Context(CPU_THREADS=100000), pytest.raises(ValueError, match="1 to 512 threads"):
    prg(np.zeros(8, np.int32), np.zeros(8, np.int32))

@needs_values
def test_cpu_kernels_after_fork():
  """A forked child has none of the parent's worker threads: it starts its own (it used to wait for threads that do not
  exist in it)."""
  out = run_py("import os, numpy as np\n"
               "from teeny import Tensor, Context\n"
               "a = Tensor(np.ones(1 << 18, np.float32))\n"
               "with Context(CPU_THREADS=2): print('parent', (a * 2).sum().numpy())\n"
               "pid = os.fork()\n"
               "if pid == 0:\n"
               "  with Context(CPU_THREADS=2): print('child', (a * 3).sum().numpy(), flush=True)\n"
               "  os._exit(0)\n"
               "os.waitpid(pid, 0)\n")
  assert "parent 524288.0" in out and "child 786432.0" in out, out

# ---- mixing devices

def test_mixing_devices_raises_naming_both():
  with pytest.raises(RuntimeError) as e:
    Tensor([1.0], device="CPU") + Tensor([1.0], device="NULL")
  assert "CPU" in str(e.value) and "NULL" in str(e.value)

def test_mixing_devices_default_and_null(clean_env):
  with pytest.raises(RuntimeError) as e:
    Tensor([1.]) + Tensor([1.], device="NULL")
  assert "CPU" in str(e.value) and "NULL" in str(e.value)

def test_to_moves_between_devices():
  t = Tensor([1.0, 2.0], device="CPU").to("NULL")
  assert t.device == "NULL"
  (t + Tensor([1.0, 1.0], device="NULL")).realize()
