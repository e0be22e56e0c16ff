"""Device registry (DEV env), Buffer, and the Allocator / Compiler / Program base classes every runtime implements."""
from __future__ import annotations
import contextlib, hashlib, importlib, os, re, struct, subprocess, sys, tempfile, time
from typing import Any, Callable
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import CACHELEVEL, DEBUG, cache_dir, getenv

KNOWN_DEVICES = ("CPU", "NULL", "CUDA", "AMD", "CL")
_CANONICAL: dict[str, str] = {}   # device names seen -> their canonical form

class _Device:
  """`Device["CPU"]` is the CPU runtime; `Device.DEFAULT` is the device new tensors land on."""
  def __init__(self) -> None:
    self._opened: dict[str, Any] = {}
    self._default: tuple[tuple, str] | None = None
  @staticmethod
  def canonicalize(name: str | tuple | list | None) -> Any:
    """The canonical name: 'CPU', 'CPU:1', 'CUDA:1', 'NULL', 'NULL:1', 'NULL:CUDA', 'NULL:CUDA:1' (index 0 is the bare
    name). A tuple or list of names (a multi-device tensor's devices) gives a tuple of canonical names."""
    if name is None: return Device.DEFAULT
    if type(name) is str and (hit := _CANONICAL.get(name)) is not None: return hit   # (every Tensor.empty asks)
    if isinstance(name, (tuple, list)):
      devs = tuple(Device.canonicalize(n) for n in name)
      if len(set(devs)) != len(devs): raise ValueError(f"devices {devs} name one device twice; each must be distinct")
      if not devs: raise ValueError("a multi-device tensor needs at least one device")
      return devs
    if not isinstance(name, str): raise TypeError(f"device must be a string like 'CPU' or 'NULL', got {name!r}")
    base, _, rest = name.partition(":")
    base = base.upper()
    if base not in KNOWN_DEVICES:
      raise RuntimeError(f"unknown device {name!r}; known devices: {', '.join(KNOWN_DEVICES)} (pick one with DEV=CPU "
                         "or device='CPU')")
    def index(s: str) -> str:
      if not s.isdigit(): raise RuntimeError(f"device {name!r}: {s!r} is not a device number (write e.g. {base}:1)")
      return "" if int(s) == 0 else f":{int(s)}"
    if base == "NULL":   # NULL, NULL:<n>, NULL:<lang>, NULL:<lang>:<n>
      parts = [p.upper() for p in rest.split(":")] if rest else []
      if parts and parts[0].isdigit(): parts = ["C"] + parts
      lang = parts[0] if parts else "C"
      num = index(parts[1]) if len(parts) > 1 else ""
      out = ("NULL" if lang == "C" else f"NULL:{lang}") + num
    else: out = base + (index(rest) if rest else "")
    _CANONICAL[name] = out   # (a function of the string alone)
    return out
  def __getitem__(self, name: str | tuple) -> Compiled:
    if isinstance(name, tuple): return self[name[0]]   # a multi-device tensor's devices: one kind, its first answers
    if (dev := self._opened.get(name)) is not None: return dev  # the hot path: an already-canonical, open device
    dev_name = self.canonicalize(name)
    if dev_name not in self._opened:
      base = dev_name.split(":")[0]
      mod = importlib.import_module(f"teeny.runtime.ops_{base.lower()}")
      self._opened[dev_name] = mod.open_device(dev_name)
    return self._opened[dev_name]
  @property
  def DEFAULT(self) -> str:
    """From DEV=..., else the first of CPU=1, NULL=1, ... that is set, else CPU (re-read only when DEV changes)."""
    env = os.environ
    key = (env.get("DEV"),) + tuple(env.get(k) for k in KNOWN_DEVICES)
    if self._default is None or self._default[0] != key:
      dev = self.canonicalize(key[0]) if key[0] else next((k for k in KNOWN_DEVICES if getenv(k, 0)), "CPU")
      self._default = (key, dev)
    return self._default[1]

Device = _Device()

class Allocator:
  """Allocates opaque device memory; freed blocks are kept by size and reused."""
  def __init__(self) -> None: self.cache: dict[int, list[Any]] = {}
  def alloc(self, nbytes: int) -> Any:
    if (lst := self.cache.get(nbytes)): return lst.pop()
    return self._alloc(nbytes)
  def free(self, opaque: Any, nbytes: int):
    lst = self.cache.setdefault(nbytes, [])
    if len(lst) < 8: lst.append(opaque)
  def _alloc(self, nbytes: int) -> Any: raise NotImplementedError
  def copyin(self, dest: Any, src: memoryview): raise NotImplementedError
  def copyout(self, dest: memoryview, src: Any): raise NotImplementedError

# ---- the on-disk compile cache
# An entry is one file named <CompilerClass>_<sha256 of compiler key and source>, holding MAGIC, the sha256 of the
# binary
# and the binary. It is written to a temp file in the same directory and renamed into place (os.replace), so an entry is
# never seen half written and is never modified afterwards; a reader reads the whole file into memory, checks the digest
# and only then hands the bytes to a loader (the CPU loads its own private copy of them), so an entry cut short or
# overwritten from outside is recompiled instead of crashing the process (a truncated .so killed it with SIGBUS).
# The directory is capped at TEENY_CACHE_MAX_MB (default 512): a hit refreshes the entry's mtime, and a process whose
# writes take the directory over the cap deletes the least recently used entries until it is 10% under. Deleting is
# safe while another process reads: unlinking leaves an open file readable, and a vanished entry is only a miss.
# In memory each kernel shape a process compiles keeps its program (the loaded library, ~16 KB of cached entry and
# ~32 KB of RSS per kernel on the CPU) for the life of the process; that cache is not capped.
CACHE_MAGIC = b"TEENYBIN1\n"
_HEADER = len(CACHE_MAGIC) + 32
_TMP_PREFIX = ".tmp_"
# cache dir -> bytes it held at this process's last scan, plus what this process wrote since
_usage: dict[str, int] = {}

def cache_max_bytes() -> int:
  """TEENY_CACHE_MAX_MB as bytes (read on every write, so tests and long runs can change it)."""
  try: mb = float(os.environ.get("TEENY_CACHE_MAX_MB", "512"))
  except ValueError:
    raise ValueError("TEENY_CACHE_MAX_MB must be a number of megabytes, got "
                     f"{os.environ['TEENY_CACHE_MAX_MB']!r}") from None
  return int(mb * (1 << 20))

def pack_entry(lib: bytes) -> bytes: return CACHE_MAGIC + hashlib.sha256(lib).digest() + lib

def unpack_entry(data: bytes) -> tuple[bytes | None, str]:
  """(binary, '') for a sound entry, else (None, why not)."""
  if len(data) < _HEADER: return None, f"{len(data)} bytes, shorter than the header"
  if not data.startswith(CACHE_MAGIC): return None, "no digest header (an old or foreign file)"
  lib = data[_HEADER:]
  if hashlib.sha256(lib).digest() != data[len(CACHE_MAGIC):_HEADER]:
    return None, "digest mismatch (truncated or modified)"
  return lib, ""

def _entries(d: str) -> list[tuple[float, int, str]]:
  """(mtime, size, path) of every cache file in d; files that vanish while listed are skipped."""
  out: list[tuple[float, int, str]] = []
  try: it = os.scandir(d)
  except OSError: return out
  with it:
    for e in it:
      try:
        if e.is_file(follow_symlinks=False):
          st = e.stat(follow_symlinks=False)
          out.append((st.st_mtime, st.st_size, e.path))
      except OSError: continue
  return out

def evict(d: str, cap: int, keep: str | None = None) -> int:
  """Delete the least recently used entries of d until it holds at most 90% of cap (never `keep`, the entry just
  written); temp files older than an hour (left by a killed process) go too. Returns the bytes left."""
  entries = _entries(d)
  now = time.time()
  total = 0
  live = []
  for mt, size, path in entries:
    if os.path.basename(path).startswith(_TMP_PREFIX):
      if now - mt > 3600:
        with contextlib.suppress(OSError): os.unlink(path)
      else: total += size
    else:
      total += size
      live.append((mt, path, size))
  if total > cap:
    goal = cap * 9 // 10
    for mt, path, size in sorted(live):
      if total <= goal: break
      if path == keep: continue
      try: os.unlink(path)
      except FileNotFoundError: pass          # another process evicted it first
      except OSError: continue
      total -= size
      if DEBUG >= 2: print(f"teeny: cache over {cap >> 20} MB, evicted {os.path.basename(path)}")
  _usage[d] = total
  return total

def _note_write(d: str, path: str, size: int):
  cap = cache_max_bytes()
  if d not in _usage: evict(d, cap, keep=path)     # first write of this process: learn the directory's size
  else:
    _usage[d] += size
    if _usage[d] > cap: evict(d, cap, keep=path)   # a scan only when this process's count says the cap is passed

class Compiler:
  """Turns source into a binary; results cached on disk keyed by source, flags and compiler version (see above)."""
  cache_key: str = "compiler"
  def compile(self, src: str) -> bytes: raise NotImplementedError
  def cache_path(self, src: str) -> str:
    h = hashlib.sha256(f"{self.cache_key}\n{src}".encode()).hexdigest()[:32]
    return os.path.join(cache_dir(), f"{type(self).__name__}_{h}")
  def compile_cached(self, src: str, force: bool = False) -> bytes:
    """Compile through the disk cache; `force` recompiles and rewrites the entry (used when a cached binary fails to
    load)."""
    if not CACHELEVEL: return self.compile(src)
    path = self.cache_path(src)
    if not force:
      try:
        with open(path, "rb") as f: data = f.read()
      except FileNotFoundError: data = None
      except OSError as e:
        data = None
        if DEBUG >= 2: print(f"teeny: cache entry {path} unreadable ({e}), recompiling")
      if data is not None:
        lib, why = unpack_entry(data)
        if lib is not None and not self.valid_binary(lib): lib, why = None, "not a binary this compiler makes"
        if lib is not None:
          with contextlib.suppress(OSError): os.utime(path)    # recently used: last to be evicted
          return lib
        if DEBUG >= 2: print(f"teeny: cache entry {path} is bad ({why}), recompiling")
    lib = self.compile(src)
    self.write_entry(path, lib)
    return lib
  def write_entry(self, path: str, lib: bytes):
    d = os.path.dirname(path)
    blob = pack_entry(lib)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=_TMP_PREFIX)
    try:
      with os.fdopen(fd, "wb") as f: f.write(blob)
      os.replace(tmp, path)
    except BaseException:
      with contextlib.suppress(OSError): os.unlink(tmp)
      raise
    _note_write(d, path, len(blob))
  def valid_binary(self, data: bytes) -> bool: return len(data) > 0

def elf_complete(data: bytes) -> bool:
  """An ELF file whose program and section header tables and loadable segments all lie inside the data (a cut shared
  object passes a magic-number check, then dlopen maps pages past its end and the process dies of SIGBUS)."""
  if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2): return False
  end = "<" if data[5] == 1 else ">"
  try:
    if data[4] == 2:
      phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
      phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
      ph, off_size = end + "IIQQQQQQ", (2, 5)   # p_type p_flags p_offset p_vaddr p_paddr p_filesz ...
    else:
      phoff, shoff = struct.unpack_from(end + "II", data, 28)
      phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 42)
      ph, off_size = end + "IIIIIIII", (1, 4)   # p_type p_offset p_vaddr p_paddr p_filesz ...
    if phoff + phnum * phentsize > len(data) or shoff + shnum * shentsize > len(data): return False
    for i in range(phnum):
      f = struct.unpack_from(ph, data, phoff + i * phentsize)
      if f[0] == 1 and f[off_size[0]] + f[off_size[1]] > len(data): return False   # PT_LOAD past the end
  except struct.error: return False
  return True

def load_library(lib: bytes, what: str) -> Any:
  """A shared object from its bytes as a ctypes.CDLL, or a RuntimeError naming `what`. dlopen maps the file, so the
  bytes are checked first (a cut object would pass the load and kill the process with SIGBUS on first touch), and it
  loads from a private copy (a cache file may be changed by other processes meanwhile)."""
  import ctypes
  if not elf_complete(lib): raise RuntimeError(f"could not load {what}: the shared object is incomplete")
  with tempfile.NamedTemporaryFile(suffix=".so", delete=False) as f:
    f.write(lib)
    path = f.name
  try: return ctypes.CDLL(path)
  except OSError as e: raise RuntimeError(f"could not load {what}: {e}") from None
  finally: os.unlink(path)

def numbered(src: str) -> str:
  """Source with line numbers, for compile errors."""
  return "\n".join(f"{i+1:4d} {line}" for i, line in enumerate(src.splitlines()))

def kernel_name(src: str) -> str:
  """The name of the kernel defined in rendered source: the last non-static `void` function, attributes skipped (and
  the CPU's `teeny_entry`, which calls the kernel)."""
  names = []
  for line in src.splitlines():
    if line.startswith("static") or "void" not in line or "(" not in line: continue
    line = re.sub(r"__(launch_bounds|attribute)__\s*\(\([^()]*(\([^()]*\))?[^()]*\)\)"
                  r"|__launch_bounds__\s*\([^()]*\)", "", line)
    if (m := re.search(r"\bvoid\s+(\w+)\s*\(", line)) and m.group(1) != "teeny_entry": names.append(m.group(1))
  return names[-1] if names else "?"

def compile_error(what: str, src: str, log: str, max_lines: int = 10, width: int = 240) -> str:
  """A compile failure as one short message: the kernel's name, the compiler's first error lines (long source lines
  that compilers echo are cut), and the whole numbered source only at DEBUG>=4."""
  name = kernel_name(src)
  lines = [ln if len(ln) <= width else ln[:width] + " ..." for ln in log.strip().splitlines()]
  first = next((i for i, ln in enumerate(lines) if "error" in ln.lower()), 0)
  shown = lines[first:first + max_lines]
  more = len(lines) - first - len(shown)
  msg = f"{what} failed for kernel {name}:\n" + "\n".join(shown)
  if more > 0: msg += f"\n... ({more} more lines of compiler output)"
  if DEBUG >= 4: return msg + "\n" + numbered(src)
  return msg + "\n(run with DEBUG=4 to print the kernel's whole source)"

class ToolCompiler(Compiler):
  """A compiler run as a subprocess that reads the source on stdin and writes an ELF object; the cache key holds the
  tool's path, its `--version` line and the flags."""
  what = "compile"
  def __init__(self, tool: str, flags: list[str], after: list[str] | None = None):
    self.tool, self.flags, self.after = tool, flags, after or []
    try: ver = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except Exception: ver = "unknown"
    self.version = ver
    self.cache_key = f"{tool} {ver} {' '.join(self.flags + self.after)}"
  def flags_for(self, src: str) -> list[str]:
    """The flags for this source (the cache key holds the source, so flags chosen from it need no key of their own)."""
    return self.flags
  def compile(self, src: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "k.o")
      proc = subprocess.run([self.tool, *self.flags_for(src), "-", "-o", out, *self.after], input=src.encode(),
                            capture_output=True)
      if proc.returncode != 0: raise RuntimeError(self.error(proc.stderr.decode(errors="replace"), src))
      with open(out, "rb") as f: return f.read()
  def error(self, err: str, src: str) -> str: return compile_error(f"{self.what} ({self.tool})", src, err)
  def valid_binary(self, data: bytes) -> bool: return elf_complete(data)

class Compiled:
  """A device: its allocator, compiler, renderer and program class."""
  graph: Callable[..., Any] | None = None  # TinyJit's replayer for a capture, on devices that have one
  def __init__(self, name: str, allocator: Allocator, renderer: Any, compiler: Compiler | None,
               program: Callable[..., Any]):
    self.name, self.allocator, self.renderer, self.compiler, self.program = name, allocator, renderer, compiler, program
    self.runs_nothing = False
  def synchronize(self): pass

class Buffer:
  """`size` elements of `dtype` on a device; memory is allocated on first use and returned to the allocator when
  dropped."""
  def __init__(self, device: str, size: int, dtype: DType):
    self.device, self.size, self.dtype = device, size, dtype
    self._opaque: Any = None
    # (a flag, not `_opaque is None`: the NULL device's memory is None, and it registered a finalizer on every launch)
    self._allocated = False
    self.version = 0   # which version node's contents the memory holds (engine/schedule.py: next_version)
  @property
  def nbytes(self) -> int: return self.size * self.dtype.itemsize
  @property
  def allocator(self) -> Allocator: return Device[self.device].allocator
  def ensure_allocated(self) -> Buffer:
    if not self._allocated:
      allocator = self._allocator = self.allocator
      self._opaque = allocator.alloc(max(self.nbytes, 1))
      self._allocated = True
    return self
  def __del__(self, _finalizing=sys.is_finalizing):
    # the memory goes back to its allocator when the Buffer is dropped (a weakref.finalize per buffer cost a few
    # thousand interpreter instructions on every eager op's output); at interpreter exit the process's memory is
    # released with it, after the device runtimes may be gone
    if self._allocated and not _finalizing():
      self._allocated = False
      self._allocator.free(self._opaque, max(self.nbytes, 1))
  @property
  def opaque(self) -> Any: return self.ensure_allocated()._opaque
  def copyin(self, data: memoryview) -> Buffer:
    self.ensure_allocated()
    self.allocator.copyin(self._opaque, data)
    return self
  def raw(self) -> np.ndarray:
    """The contents' bytes, as a fresh uint8 array."""
    if Device[self.device].runs_nothing:
      raise RuntimeError(f"the {self.device} device runs nothing and holds no data; use DEV=CPU (or device='CPU') to "
                         "get values")
    out = np.empty(self.nbytes, dtype=np.uint8)
    if self.size: self.allocator.copyout(out.data.cast("B"), self.opaque)
    return out
  def numpy(self) -> np.ndarray:
    """The contents as a fresh numpy array (bfloat16 becomes float32)."""
    out = self.raw().view(np.uint16 if self.dtype == dtypes.bfloat16 else self.dtype.np)
    if self.dtype == dtypes.bfloat16:
      from teeny.dtype import bf16_bits_to_float32
      return bf16_bits_to_float32(out)
    return out
  def __repr__(self): return f"<Buffer {self.device} {self.size} {self.dtype}>"
