"""Device registry (DEV env), Buffer, and the Allocator / Compiler / Program base classes every runtime implements."""
from __future__ import annotations
import hashlib, importlib, os, subprocess, tempfile, weakref
from typing import Any
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import CACHELEVEL, DEBUG, cache_dir, getenv

KNOWN_DEVICES = ("CPU", "NULL", "CUDA", "AMD", "CL")

class _Device:
  """`Device["CPU"]` is the CPU runtime; `Device.DEFAULT` is the device new tensors land on."""
  def __init__(self):
    self._opened: dict[str, Any] = {}
    self._default: tuple[tuple, str] | None = None
  @staticmethod
  def canonicalize(name: str | None) -> str:
    if name is None: return Device.DEFAULT
    if not isinstance(name, str): raise TypeError(f"device must be a string like 'CPU' or 'NULL', got {name!r}")
    base, _, rest = name.partition(":")
    base = base.upper()
    if base not in KNOWN_DEVICES:
      raise RuntimeError(f"unknown device {name!r}; known devices: {', '.join(KNOWN_DEVICES)} (pick one with DEV=CPU or device='CPU')")
    if base == "CPU": return "CPU"
    if base == "NULL": return "NULL" if rest.upper() in ("", "C") else f"NULL:{rest.upper()}"
    return f"{base}:{rest}" if rest and rest != "0" else base
  def __getitem__(self, name: str) -> Compiled:
    if (dev := self._opened.get(name)) is not None: return dev  # the hot path: an already-canonical, open device
    name = self.canonicalize(name)
    if name not in self._opened:
      base = name.split(":")[0]
      mod = importlib.import_module(f"teeny.runtime.ops_{base.lower()}")
      self._opened[name] = mod.open_device(name)
    return self._opened[name]
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
  def __init__(self): self.cache: dict[int, list[Any]] = {}
  def alloc(self, nbytes: int) -> Any:
    if (lst := self.cache.get(nbytes)): return lst.pop()
    return self._alloc(nbytes)
  def free(self, opaque: Any, nbytes: int):
    lst = self.cache.setdefault(nbytes, [])
    if len(lst) < 8: lst.append(opaque)
  def _alloc(self, nbytes: int) -> Any: raise NotImplementedError
  def copyin(self, dest: Any, src: memoryview): raise NotImplementedError
  def copyout(self, dest: memoryview, src: Any): raise NotImplementedError

class Compiler:
  """Turns source into a binary; results cached on disk keyed by source, flags and compiler version."""
  cache_key: str = "compiler"
  def compile(self, src: str) -> bytes: raise NotImplementedError
  def compile_cached(self, src: str, force: bool = False) -> bytes:
    """Compile through the disk cache; `force` recompiles and rewrites the entry (used when a cached binary fails to load)."""
    if not CACHELEVEL: return self.compile(src)
    h = hashlib.sha256(f"{self.cache_key}\n{src}".encode()).hexdigest()[:32]
    path = os.path.join(cache_dir(), f"{type(self).__name__}_{h}")
    if os.path.exists(path) and not force:
      with open(path, "rb") as f: data = f.read()
      if self.valid_binary(data): return data
      if DEBUG >= 1: print(f"teeny: cache entry {path} is corrupt, recompiling")
    lib = self.compile(src)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp_")
    with os.fdopen(fd, "wb") as f: f.write(lib)
    os.replace(tmp, path)
    return lib
  def valid_binary(self, data: bytes) -> bool: return len(data) > 0

def numbered(src: str) -> str:
  """Source with line numbers, for compile errors."""
  return "\n".join(f"{i+1:4d} {line}" for i, line in enumerate(src.splitlines()))

class ToolCompiler(Compiler):
  """A compiler run as a subprocess that reads the source on stdin and writes an ELF object; the cache key holds the
  tool's path, its `--version` line and the flags."""
  what = "compile"
  def __init__(self, tool: str, flags: list[str], after: list[str] | None = None):
    self.tool, self.flags, self.after = tool, flags, after or []
    try: ver = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except Exception: ver = "unknown"
    self.cache_key = f"{tool} {ver} {' '.join(self.flags + self.after)}"
  def compile(self, src: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "k.o")
      proc = subprocess.run([self.tool, *self.flags, "-", "-o", out, *self.after], input=src.encode(), capture_output=True)
      if proc.returncode != 0: raise RuntimeError(self.error(proc.stderr.decode(errors="replace"), src))
      with open(out, "rb") as f: return f.read()
  def error(self, err: str, src: str) -> str: return f"{self.what} failed ({self.tool}):\n{err}\n{numbered(src)}"
  def valid_binary(self, data: bytes) -> bool: return data[:4] == b"\x7fELF"

class Compiled:
  """A device: its allocator, compiler, renderer and program class."""
  def __init__(self, name: str, allocator: Allocator, renderer: Any, compiler: Compiler | None, program: type):
    self.name, self.allocator, self.renderer, self.compiler, self.program = name, allocator, renderer, compiler, program
    self.runs_nothing = False
  def synchronize(self): pass

class Buffer:
  """`size` elements of `dtype` on a device; memory is allocated on first use and returned to the allocator when dropped."""
  def __init__(self, device: str, size: int, dtype: DType):
    self.device, self.size, self.dtype = device, size, dtype
    self._opaque: Any = None
    self.version = 0   # which version node's contents the memory holds (engine/schedule.py: next_version)
  @property
  def nbytes(self) -> int: return self.size * self.dtype.itemsize
  @property
  def allocator(self) -> Allocator: return Device[self.device].allocator
  def ensure_allocated(self) -> Buffer:
    if self._opaque is None:
      self._opaque = self.allocator.alloc(max(self.nbytes, 1))
      weakref.finalize(self, self.allocator.free, self._opaque, max(self.nbytes, 1))
    return self
  @property
  def opaque(self) -> Any: return self.ensure_allocated()._opaque
  def copyin(self, data: memoryview) -> Buffer:
    self.ensure_allocated()
    self.allocator.copyin(self._opaque, data)
    return self
  def numpy(self) -> np.ndarray:
    """The contents as a fresh numpy array (bfloat16 becomes float32)."""
    if Device[self.device].runs_nothing:
      raise RuntimeError(f"the {self.device} device runs nothing and holds no data; use DEV=CPU (or device='CPU') to get values")
    np_dt = np.uint16 if self.dtype == dtypes.bfloat16 else self.dtype.np
    out = np.empty(self.size, dtype=np_dt)
    if self.size: self.allocator.copyout(memoryview(out).cast("B"), self.opaque)
    if self.dtype == dtypes.bfloat16:
      from teeny.dtype import bf16_bits_to_float32
      return bf16_bits_to_float32(out)
    return out
  def __repr__(self): return f"<Buffer {self.device} {self.size} {self.dtype}>"
