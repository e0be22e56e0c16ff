"""The on-disk compile cache, across processes: reuse, corrupt entries, CACHELEVEL=0, atomic writes."""
import json, os, pathlib, shutil, subprocess, sys
import pytest
from helpers import needs_values

REPO = pathlib.Path(__file__).resolve().parents[2]

# counts calls to the C compiler, then realizes a kernel whose source is unique to this file (the constant)
PROGRAM = """
import json
import teeny.runtime.ops_cpu as ops_cpu
calls = [0]
orig = ops_cpu.CCompiler.compile
def counting(self, src):
  calls[0] += 1
  return orig(self, src)
ops_cpu.CCompiler.compile = counting
from teeny import Tensor
out = (Tensor([1.0, 2.0, 3.0]) * 1.2345678 + 0.5).numpy().tolist()
print(json.dumps({"values": out, "compiles": calls[0]}))
"""
EXPECTED = [1.0 * 1.2345678 + 0.5, 2.0 * 1.2345678 + 0.5, 3.0 * 1.2345678 + 0.5]

def run_program(cache_dir: pathlib.Path, **env: str) -> dict:
  e = {k: v for k, v in os.environ.items() if k not in ("DEV", "CPU", "NULL", "CUDA", "AMD", "CL", "DEBUG", "CACHELEVEL")}
  e.update(TEENY_CACHE_DIR=str(cache_dir), DEV="CPU", PYTHONPATH=os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")]), **env)
  proc = subprocess.run([sys.executable, "-c", PROGRAM], env=e, capture_output=True, text=True, timeout=120, cwd=REPO)
  assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
  ret = json.loads(proc.stdout.strip().splitlines()[-1])
  assert ret["values"] == pytest.approx(EXPECTED, rel=1e-6)
  return ret

def cache_files(d: pathlib.Path) -> list[pathlib.Path]: return sorted(p for p in d.iterdir()) if d.exists() else []

# tests that compile C in a subprocess skip in a DEV=NULL run, like every value test (nothing compiles there)
@pytest.fixture(scope="module")
def warm_template(tmp_path_factory) -> pathlib.Path:
  """A cache dir after one cold run (made once, copied by each test that starts warm)."""
  d = tmp_path_factory.mktemp("warm_cache")
  first = run_program(d)
  assert first["compiles"] == 1, "a cold cache must compile"
  return d

@pytest.fixture
def warm(warm_template, tmp_path) -> pathlib.Path:
  d = tmp_path / "cache"
  shutil.copytree(warm_template, d)
  return d

@needs_values
def test_first_process_writes_one_entry(warm_template):
  files = cache_files(warm_template)
  assert len(files) == 1, files
  assert files[0].stat().st_size > 64

@needs_values
def test_second_process_reuses_disk_cache(warm):
  files = cache_files(warm)
  assert run_program(warm)["compiles"] == 0, "the second process compiled again instead of loading the cached binary"
  assert cache_files(warm) == files

@needs_values
@pytest.mark.parametrize("keep", [0, 3, 64], ids=["empty", "3_bytes", "64_bytes"])
def test_truncated_cache_entry_is_recompiled(warm, keep):
  for f in cache_files(warm):
    with open(f, "r+b") as fh: fh.truncate(keep)
  assert run_program(warm)["compiles"] == 1
  # the bad entry was replaced by a good one: a third run compiles nothing
  assert run_program(warm)["compiles"] == 0

@needs_values
def test_garbage_cache_entry_is_recompiled(warm):
  for f in cache_files(warm): f.write_bytes(b"not a shared object at all" * 100)
  assert run_program(warm)["compiles"] == 1

@needs_values
def test_cachelevel_0_compiles_without_touching_cache_dir(tmp_path):
  d = tmp_path / "never_created"
  assert run_program(d, CACHELEVEL="0")["compiles"] == 1
  assert run_program(d, CACHELEVEL="0")["compiles"] == 1
  assert not d.exists(), f"CACHELEVEL=0 wrote to the cache dir: {cache_files(d)}"

@needs_values
def test_cachelevel_0_ignores_existing_entries(warm):
  files = {f: f.read_bytes() for f in cache_files(warm)}
  assert run_program(warm, CACHELEVEL="0")["compiles"] == 1
  assert {f: f.read_bytes() for f in cache_files(warm)} == files

@needs_values
def test_cache_write_leaves_no_temp_files(warm_template):
  names = [f.name for f in warm_template.iterdir()]
  assert not [n for n in names if n.startswith(".tmp_") or "tmp" in n.lower()], names

def test_cache_write_is_atomic(tmp_path, monkeypatch):
  """The entry appears through os.replace of a temp file in the same directory, never as a partly written file."""
  from teeny.device import Compiler
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  replaced = []
  real_replace = os.replace
  def spy(src, dst):
    replaced.append((pathlib.Path(src), pathlib.Path(dst)))
    assert pathlib.Path(dst).exists() is False, "the cache entry existed before the replace"
    assert pathlib.Path(src).read_bytes() == b"BINARY", "the temp file was not fully written before the replace"
    real_replace(src, dst)
  monkeypatch.setattr(os, "replace", spy)
  class Fake(Compiler):
    cache_key = "fake-compiler v1"
    def compile(self, src: str) -> bytes: return b"BINARY"
  from teeny.helpers import Context
  with Context(CACHELEVEL=2): assert Fake().compile_cached("int main;") == b"BINARY"
  assert len(replaced) == 1
  src, dst = replaced[0]
  assert src.parent == dst.parent == tmp_path
  assert not src.exists() and dst.read_bytes() == b"BINARY"
  assert [f.name for f in tmp_path.iterdir()] == [dst.name]
