"""The on-disk compile cache, across processes: reuse, corrupt entries (digests), CACHELEVEL=0, atomic writes, the size
cap (TEENY_CACHE_MAX_MB) with least-recently-used eviction, processes sharing one directory."""
import json, os, pathlib, shutil, subprocess, sys, time
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
  e = {k: v for k, v in os.environ.items()
       if k not in ("DEV", "CPU", "NULL", "CUDA", "AMD", "CL", "DEBUG", "CACHELEVEL", "TEENY_CACHE_MAX_MB")}
  e.update(TEENY_CACHE_DIR=str(cache_dir), DEV="CPU", PYTHONPATH=os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")]),
           **env)
  proc = subprocess.run([sys.executable, "-c", PROGRAM], env=e, capture_output=True, text=True, timeout=120, cwd=REPO)
  assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
  ret = json.loads(proc.stdout.strip().splitlines()[-1])
  assert ret["values"] == pytest.approx(EXPECTED, rel=1e-6)
  ret["stdout"], ret["stderr"] = proc.stdout, proc.stderr
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
  from teeny.device import Compiler, pack_entry
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  replaced = []
  real_replace = os.replace
  def spy(src, dst):
    replaced.append((pathlib.Path(src), pathlib.Path(dst)))
    assert pathlib.Path(dst).exists() is False, "the cache entry existed before the replace"
    assert pathlib.Path(src).read_bytes() == pack_entry(b"BINARY"), ("the temp file was not fully written "
                                                                     "before the replace")
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
  assert not src.exists() and dst.read_bytes() == pack_entry(b"BINARY")
  assert [f.name for f in tmp_path.iterdir()] == [dst.name]

# ---- digests: an entry is verified before anything loads it

def _payload(f: pathlib.Path) -> bytes:
  from teeny.device import unpack_entry
  lib, why = unpack_entry(f.read_bytes())
  assert lib is not None, why
  return lib

@needs_values
@pytest.mark.parametrize("debug", ["0", "2"])
def test_entry_cut_to_a_third_is_recompiled_not_a_crash(warm, debug):
  """The reported crash: every entry cut to a third, then a second run died of SIGBUS loading the cut .so (exit -7).
  The subprocess must exit 0 (run_program checks), compile once, and say so only at DEBUG>=2."""
  for f in cache_files(warm):
    with open(f, "r+b") as fh: fh.truncate(f.stat().st_size // 3)
  ret = run_program(warm, DEBUG=debug)
  assert ret["compiles"] == 1
  noted = "recompiling" in ret["stdout"] + ret["stderr"]
  assert noted == (debug == "2"), ret["stdout"] + ret["stderr"]
  if debug == "0":
    assert ret["stdout"].strip().count("\n") == 0 and not ret["stderr"], "a bad entry must be recompiled silently"
  assert run_program(warm)["compiles"] == 0

@needs_values
def test_cut_binary_with_a_matching_digest_is_never_loaded(warm):
  """Even an entry whose digest matches a cut shared object (written by a broken writer) is caught before dlopen."""
  from teeny.device import pack_entry
  for f in cache_files(warm):
    lib = _payload(f)
    f.write_bytes(pack_entry(lib[:len(lib) // 3]))
  assert run_program(warm)["compiles"] == 1

@needs_values
def test_digest_mismatch_is_recompiled(warm):
  """One flipped byte in the middle of the binary: same length, ELF header intact, digest wrong."""
  for f in cache_files(warm):
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
  assert run_program(warm)["compiles"] == 1
  assert run_program(warm)["compiles"] == 0

@needs_values
def test_entry_without_digest_is_recompiled(warm):
  """A bare binary (the format before digests, or a file put there by hand) is not trusted."""
  for f in cache_files(warm): f.write_bytes(_payload(f))
  assert run_program(warm)["compiles"] == 1
  for f in cache_files(warm): _payload(f)   # rewritten with a digest
  assert run_program(warm)["compiles"] == 0

def test_unpack_entry_rejects_bad_entries():
  from teeny.device import pack_entry, unpack_entry
  good = pack_entry(b"\x7fELF" + bytes(range(256)))
  assert unpack_entry(good)[0] == b"\x7fELF" + bytes(range(256))
  for bad in (b"", good[:10], good[:-1], good[:-1] + bytes([good[-1] ^ 1]), b"\x7fELF" + bytes(300), good + b"x"):
    lib, why = unpack_entry(bad)
    assert lib is None and why

def test_elf_complete_catches_cut_shared_objects():
  """The check the loaders run before dlopen / cuModuleLoadData / hipModuleLoadData."""
  from teeny.device import elf_complete
  elf = pathlib.Path(sys.executable).resolve().read_bytes()
  assert elf_complete(elf)
  for keep in (0, 4, 63, 64, len(elf) // 3, len(elf) - 1): assert not elf_complete(elf[:keep]), keep
  assert not elf_complete(b"not an elf" * 100)

# ---- the size cap: least recently used entries are evicted

class _Sized:
  """A fake compiler making 400-byte binaries, counting its compiles."""
  def __new__(cls):
    from teeny.device import Compiler
    class Fake(Compiler):
      cache_key = "fake-compiler lru"
      calls = 0
      def compile(self, src: str) -> bytes:
        Fake.calls += 1
        return (src.encode() * 400)[:400]
    return Fake()

def _entry_of(c, src: str) -> pathlib.Path: return pathlib.Path(c.cache_path(src))

def test_lru_eviction_order_with_a_tiny_cap(tmp_path, monkeypatch):
  from teeny.helpers import Context
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("TEENY_CACHE_MAX_MB", "0.001")      # 1048 bytes: two 442-byte entries fit, three do not
  c = _Sized()
  now = time.time()
  with Context(CACHELEVEL=2):
    a, b = c.compile_cached("A"), c.compile_cached("B")
    assert (a, b) == (b"A" * 400, b"B" * 400) and type(c).calls == 2
    os.utime(_entry_of(c, "A"), (now - 100, now - 100))
    os.utime(_entry_of(c, "B"), (now - 50, now - 50))
    assert c.compile_cached("A") == a and type(c).calls == 2, "a hit must not compile"
    assert _entry_of(c, "A").stat().st_mtime > now - 50, "a hit must mark the entry as recently used"
    c.compile_cached("C")                               # over the cap: B is the least recently used
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(_entry_of(c, k).name for k in "AC")
    os.utime(_entry_of(c, "A"), (now - 10, now - 10))
    os.utime(_entry_of(c, "C"), (now - 20, now - 20))
    c.compile_cached("D")                               # now C is the oldest, whatever the order of writes
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(_entry_of(c, k).name for k in "AD")
    assert c.compile_cached("B") == b"B" * 400 and type(c).calls == 5, "an evicted entry is compiled again"
  assert sum(f.stat().st_size for f in tmp_path.iterdir()) <= 1048

def test_cache_never_evicts_the_entry_it_just_wrote(tmp_path, monkeypatch):
  from teeny.helpers import Context
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("TEENY_CACHE_MAX_MB", "0.0001")     # 104 bytes: smaller than any entry
  c = _Sized()
  with Context(CACHELEVEL=2):
    for k in "ABC": c.compile_cached(k)
  assert [f.name for f in tmp_path.iterdir()] == [_entry_of(c, "C").name]

def test_eviction_tolerates_files_vanishing(tmp_path, monkeypatch):
  """Another process may evict (or a user delete) an entry between our listing and our unlink."""
  import teeny.device as device
  for i in range(4): (tmp_path / f"CCompiler_{i}").write_bytes(b"x" * 1000)
  real = device._entries
  def listing_then_vanish(d):
    out = real(d)
    for _, _, p in out[:2]: os.unlink(p)
    return out
  monkeypatch.setattr(device, "_entries", listing_then_vanish)
  left = device.evict(str(tmp_path), cap=2500)
  assert left <= 2500 and len(list(tmp_path.iterdir())) <= 2

def test_bad_cache_cap_is_a_clear_error(monkeypatch):
  from teeny.device import cache_max_bytes
  monkeypatch.setenv("TEENY_CACHE_MAX_MB", "lots")
  with pytest.raises(ValueError, match="TEENY_CACHE_MAX_MB"): cache_max_bytes()
  monkeypatch.setenv("TEENY_CACHE_MAX_MB", "2")
  assert cache_max_bytes() == 2 << 20

# ---- several processes sharing one directory

MANY = """
import json, sys
from teeny import Tensor
consts = [1.0 + k / 64 for k in range(8)]
if sys.argv[1] == "rev": consts = consts[::-1]
print(json.dumps({str(c): (Tensor([1.0, 2.0, 3.0]) * c + 0.25).numpy().tolist() for c in consts}))
"""

def _run_concurrently(d: pathlib.Path, **env: str) -> None:
  e = {k: v for k, v in os.environ.items()
       if k not in ("DEV", "CPU", "NULL", "CUDA", "AMD", "CL", "DEBUG", "CACHELEVEL", "TEENY_CACHE_MAX_MB")}
  e.update(TEENY_CACHE_DIR=str(d), DEV="CPU", PYTHONPATH=os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")]), **env)
  procs = [subprocess.Popen([sys.executable, "-c", MANY, order], env=e, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True) for order in ("fwd", "rev")]
  for p in procs:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, f"a process sharing the cache failed (exit {p.returncode}):\n{out}\n{err}"
    got = json.loads(out.strip().splitlines()[-1])
    for c, vals in got.items(): assert vals == pytest.approx([float(c) * x + 0.25 for x in (1.0, 2.0, 3.0)], rel=1e-6)

@needs_values
def test_two_processes_compile_into_one_dir(tmp_path):
  d = tmp_path / "shared"
  _run_concurrently(d)
  names = [f.name for f in d.iterdir()]
  assert not [n for n in names if n.startswith(".tmp_")], names
  assert len(names) == 8, names
  for f in d.iterdir(): _payload(f)
  _run_concurrently(d)          # all hits now
  assert sorted(f.name for f in d.iterdir()) == sorted(names)

@needs_values
def test_two_processes_evicting_under_a_tiny_cap(tmp_path):
  """Both processes write and evict in one small directory at once: neither may fail, and what is left is sound."""
  d = tmp_path / "shared_small"
  _run_concurrently(d, TEENY_CACHE_MAX_MB="0.04")    # about two entries of ~16 KB
  files = list(d.iterdir())
  assert not [f for f in files if f.name.startswith(".tmp_")]
  for f in files: _payload(f)
  # each process keeps its own writes under the cap; together they overshoot by at most one process's worth
  assert sum(f.stat().st_size for f in files) <= 2 * int(0.04 * (1 << 20)) + max(f.stat().st_size for f in files)

# ---- cubins and AMDGPU code objects go through the same checks (compiled without a GPU: NVRTC, clang's AMDGPU target)

GPU_SRC = {"nvrtc": 'extern "C" __global__ void k_cache(float* a) { a[threadIdx.x] += 1.0f; }',
           "hip": 'extern "C" __attribute__((global)) void k_cache(float* a) { '
                  'a[__builtin_amdgcn_workitem_id_x()] += 1.0f; }'}

def _gpu_compiler(kind: str):
  try:
    if kind == "nvrtc":
      from teeny.runtime.ops_cuda import null_compiler
    else:
      from teeny.runtime.ops_amd import null_compiler
    return null_compiler()
  except Exception as e: pytest.skip(f"no {kind} compiler here: {e}")

@pytest.mark.parametrize("kind", ["nvrtc", "hip"])
def test_gpu_binary_cut_to_a_third_is_recompiled(kind, tmp_path, monkeypatch):
  from teeny.device import elf_complete
  from teeny.helpers import Context
  monkeypatch.setenv("TEENY_CACHE_DIR", str(tmp_path))
  comp = _gpu_compiler(kind)
  calls = []
  real = type(comp).compile
  monkeypatch.setattr(type(comp), "compile", lambda self, src: calls.append(src) or real(self, src))
  with Context(CACHELEVEL=2):
    try: lib = comp.compile_cached(GPU_SRC[kind])
    except RuntimeError as e: pytest.skip(f"{kind} cannot compile here: {e}")
    assert elf_complete(lib) and not elf_complete(lib[:len(lib) // 3])
    (entry,) = tmp_path.iterdir()
    os.truncate(entry, entry.stat().st_size // 3)
    again = comp.compile_cached(GPU_SRC[kind])        # (clang's code objects differ in a few bytes from run to run)
    assert elf_complete(again) and len(again) == len(lib) and len(calls) == 2
    assert comp.compile_cached(GPU_SRC[kind]) == again and len(calls) == 2
    assert _payload(entry) == again
