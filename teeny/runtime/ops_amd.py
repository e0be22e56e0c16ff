"""AMD: HIP source compiled by clang (Debian's clang-19 + lld-19, no ROCm needed) to an AMDGPU code object, run through
the HIP runtime (libamdhip64, ctypes) when one is installed. Without it kernels still compile (DEV=NULL:HIP renders
them)."""
from __future__ import annotations
import ctypes, ctypes.util, functools, glob, os, shutil, subprocess, tempfile
from typing import Any, cast
import numpy as np
from teeny.device import Allocator, Compiled, ToolCompiler, elf_complete
from teeny.helpers import DEBUG

NO_CLANG_FIX = "apt-get install clang-19 lld-19 (or set HIP_CLANG=/path/to/clang with AMDGPU support)"
NO_HIP_FIX = ("install ROCm's HIP runtime (libamdhip64.so) on a machine with an AMD GPU, or pick another device with "
              "DEV=CPU / DEV=CL")

def default_arch() -> str: return os.environ.get("AMD_ARCH", "gfx1100")

def find_clang() -> str:
  for cc in (os.environ.get("HIP_CLANG"), "clang-19", "clang-20", "clang-18", "clang"):
    if cc and shutil.which(cc): return cc
  raise RuntimeError(f"no clang found to compile HIP kernels: {NO_CLANG_FIX}; or pick another device with DEV=CPU / "
                     "DEV=CL")


class HIPCompiler(ToolCompiler):
  """HIP C++ -> AMDGPU ELF code object for one gfx architecture."""
  def __init__(self, arch: str | None = None):
    self.arch = arch or default_arch()
    self.what = f"HIP compile for {self.arch}"
    super().__init__(find_clang(), ["-x", "hip", f"--offload-arch={self.arch}", "-nogpulib", "-nogpuinc",
                                    "--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c", "-w"])
  @property
  def clang(self) -> str: return self.tool
  def error(self, err: str, src: str) -> str:
    if "lld" in err and "doesn't exist" in err: err += f"\n(the AMDGPU link step needs lld: {NO_CLANG_FIX})"
    return super().error(err, src)
  def disassemble(self, lib: bytes):
    tool = next((t for t in ("llvm-objdump-19", "llvm-objdump") if shutil.which(t)), None)
    if tool is None: return
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
      f.write(lib)
      f.flush()
      print(subprocess.run([tool, "-d", f"--mcpu={self.arch}", f.name], capture_output=True, text=True).stdout)

def load_hip() -> ctypes.CDLL | None:
  for name in ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", ctypes.util.find_library("amdhip64"),
               "/opt/rocm/lib/libamdhip64.so"):
    if not name: continue
    try: return ctypes.CDLL(name)
    except OSError: continue
  return None

def device_arch(idx: int) -> str | None:
  """gfx name of the idx-th GPU from the KFD topology (avoids the version-dependent hipDeviceProp_t layout)."""
  gpus = []
  for p in sorted(glob.glob("/sys/class/kfd/kfd/topology/nodes/*/properties")):
    props = dict(line.split() for line in open(p).read().splitlines() if len(line.split()) == 2)
    v = int(props.get("gfx_target_version", 0))
    if v: gpus.append(f"gfx{v // 10000}{(v // 100) % 100:x}{v % 100:x}")
  return gpus[idx] if idx < len(gpus) else None

class AMDDevice(Compiled):
  def __init__(self, name: str):
    idx = int(name.split(":")[1]) if ":" in name else 0
    self.hip = load_hip()
    self.arch = os.environ.get("AMD_ARCH") or device_arch(idx) or default_arch()
    if self.hip is not None:
      self.hip.hipGetErrorString.restype = ctypes.c_char_p
      self.check(self.hip.hipInit(0), "hipInit")
      n = ctypes.c_int()
      self.check(self.hip.hipGetDeviceCount(ctypes.byref(n)), "hipGetDeviceCount")
      if idx >= n.value:
        raise RuntimeError(f"{name} does not exist: this machine has {n.value} AMD GPU(s); pick one with "
                           "device='AMD:0' or DEV=AMD:0, or another device with DEV=CPU / DEV=CL")
    self.idx = idx
    from teeny.codegen.render.hip import HIPRenderer
    super().__init__(name, AMDAllocator(self), HIPRenderer(self.arch), HIPCompiler(self.arch),
                     functools.partial(AMDProgram, self))
    if DEBUG >= 1:
      print(f"teeny: opened {name} ({self.arch}), HIP runtime {'found' if self.hip else 'missing: compile only'}")
  def check(self, err: int, what: str):
    if err != 0:
      hip = cast(ctypes.CDLL, self.hip)  # err came from a HIP call, so the runtime is loaded
      raise RuntimeError(f"HIP {what} failed: error {err}: {hip.hipGetErrorString(err).decode()}")
  def runtime(self, what: str) -> ctypes.CDLL:
    """The HIP runtime, with the device selected; a clear error when there is none."""
    if self.hip is None: raise RuntimeError(f"{self.name}: cannot {what}: no HIP runtime found. {NO_HIP_FIX}")
    self.check(self.hip.hipSetDevice(self.idx), "hipSetDevice")
    return self.hip
  def synchronize(self):
    if self.hip is not None: self.check(self.runtime("synchronize").hipDeviceSynchronize(), "hipDeviceSynchronize")

class AMDAllocator(Allocator):
  def __init__(self, dev: AMDDevice):
    super().__init__()
    self.dev = dev
  def _alloc(self, nbytes: int) -> Any:
    ptr = ctypes.c_void_p()
    hip = self.dev.runtime("allocate memory")
    self.dev.check(hip.hipMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), f"hipMalloc({nbytes})")
    return ptr
  def free(self, opaque: Any, nbytes: int):
    lst = self.cache.setdefault(nbytes, [])
    if len(lst) < 8: lst.append(opaque)
    elif self.dev.hip is not None: self.dev.hip.hipFree(opaque)
  def copyin(self, dest: Any, src: memoryview):
    host = np.frombuffer(src, dtype=np.uint8)
    self.dev.check(self.dev.runtime("copy").hipMemcpy(dest, ctypes.c_void_p(host.ctypes.data),
                                                      ctypes.c_size_t(host.nbytes), 1), "hipMemcpy")
  def copyout(self, dest: memoryview, src: Any):
    host = np.frombuffer(dest, dtype=np.uint8)
    self.dev.check(self.dev.runtime("copy").hipMemcpy(ctypes.c_void_p(host.ctypes.data), src,
                                                      ctypes.c_size_t(host.nbytes), 2), "hipMemcpy")

class AMDProgram:
  def __init__(self, dev: AMDDevice, name: str, lib: bytes, spec: Any = None):
    self.dev, self.name, self.lib = dev, name, lib
    hip = dev.runtime(f"load kernel {name} (it compiled for {dev.arch})")
    if not elf_complete(lib):
      raise RuntimeError(f"could not load the code object of {name}: the ELF file is incomplete")
    self.module, self.fxn = ctypes.c_void_p(), ctypes.c_void_p()
    dev.check(hip.hipModuleLoadData(ctypes.byref(self.module), lib), f"hipModuleLoadData({name})")
    dev.check(hip.hipModuleGetFunction(ctypes.byref(self.fxn), self.module, name.encode()),
              f"hipModuleGetFunction({name})")
  def __call__(self, *bufs: Any, global_size: Any = None, local_size: Any = None, vals: tuple = (), wait: bool = False,
               work: int = 0) -> float:
    hip = self.dev.runtime("launch")
    grid = list(global_size or [1]) + [1] * (3 - len(global_size or [1]))
    block = list(local_size or [1]) + [1] * (3 - len(local_size or [1]))
    args = [ctypes.c_void_p(b.value) for b in bufs] + [ctypes.c_int(int(v)) for v in vals]
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    ev = [ctypes.c_void_p(), ctypes.c_void_p()]
    if wait:
      for e in ev: self.dev.check(hip.hipEventCreate(ctypes.byref(e)), "hipEventCreate")
      self.dev.check(hip.hipEventRecord(ev[0], None), "hipEventRecord")
    dims = [ctypes.c_uint(x) for x in grid + block]
    self.dev.check(hip.hipModuleLaunchKernel(self.fxn, *dims, ctypes.c_uint(0), None, params, None),
                   f"launching {self.name}")
    if not wait: return 0.0
    self.dev.check(hip.hipEventRecord(ev[1], None), "hipEventRecord")
    self.dev.check(hip.hipEventSynchronize(ev[1]), f"running {self.name}")
    ms = ctypes.c_float()
    self.dev.check(hip.hipEventElapsedTime(ctypes.byref(ms), ev[0], ev[1]), "hipEventElapsedTime")
    for e in ev: hip.hipEventDestroy(e)
    return ms.value * 1e-3

def open_device(name: str) -> Compiled: return AMDDevice(name)

def null_compiler() -> HIPCompiler:
  """The compiler NULL:HIP uses under NULL_COMPILE=1: gfx1100 unless AMD_ARCH says otherwise."""
  return HIPCompiler(default_arch())
