"""OpenCL through pyopencl. On a machine without a GPU, PoCL (pip install pocl-binary-distribution) runs the same
GPU-style kernels (work-groups, local memory, barriers) on the CPU."""
from __future__ import annotations
import functools, time
from typing import Any, cast
import numpy as np
from teeny.device import Allocator, Compiled, Compiler, compile_error
from teeny.helpers import DEBUG, getenv

NO_CL_FIX = ("pip install pyopencl pocl-binary-distribution (PoCL runs OpenCL on the CPU), or pick another device with "
             "DEV=CPU")

def _cl():
  try:
    import pyopencl as cl
    return cl
  except ImportError as e: raise RuntimeError(f"OpenCL needs pyopencl: {NO_CL_FIX} ({e})") from None


class CLAllocator(Allocator):
  def __init__(self, dev: CLDevice):
    super().__init__()
    self.dev = dev
  def _alloc(self, nbytes: int) -> Any:
    cl = _cl()
    return cl.Buffer(self.dev.ctx, cl.mem_flags.READ_WRITE, nbytes)
  def copyin(self, dest: Any, src: memoryview):
    _cl().enqueue_copy(self.dev.queue, dest, np.frombuffer(src, dtype=np.uint8), is_blocking=True)
  def copyout(self, dest: memoryview, src: Any):
    _cl().enqueue_copy(self.dev.queue, np.frombuffer(dest, dtype=np.uint8), src, is_blocking=True)

class CLCompiler(Compiler):
  """OpenCL C -> the platform's program binary (cached on disk like every compiled kernel)."""
  def __init__(self, dev: CLDevice):
    self.dev = dev
    d = dev.cl_device
    self.cache_key = f"opencl {d.platform.name} {d.platform.version} {d.name} {d.driver_version}"
  def compile(self, src: str) -> bytes:
    cl = _cl()
    try: prg = cl.Program(self.dev.ctx, src).build(options=["-w"])
    except cl.RuntimeError as e:
      msg = str(e)
      if "unknown target CPU" in msg:   # (a PoCL whose LLVM is older than the CPU: it has no code generator for it)
        msg += ("\nThis OpenCL platform's compiler does not know this CPU. Use a PoCL built with a newer LLVM (on "
                "Debian: apt-get install pocl-opencl-icd; DEV=CL:n picks the n-th device over all platforms, "
                "DEBUG=1 names the one opened), or run on DEV=CPU")
      raise RuntimeError(compile_error(f"OpenCL compile on {self.dev.cl_device.name}", src, msg)) from None
    return prg.get_info(cl.program_info.BINARIES)[0]

class CLProgram:
  def __init__(self, dev: CLDevice, name: str, lib: bytes, spec: Any = None):
    cl = _cl()
    self.dev, self.name, self.spec = dev, name, spec
    self.prg = cl.Program(dev.ctx, [dev.cl_device], [lib]).build(options=["-w"])
    self.kernel = getattr(self.prg, name)
  def __call__(self, *bufs: Any, global_size: Any = None, local_size: Any = None, vals: tuple = (), wait: bool = False,
               work: int = 0) -> float:
    grid = list(global_size or [1]) + [1] * (3 - len(global_size or [1]))
    local = list(local_size or [1]) + [1] * (3 - len(local_size or [1]))
    args = list(bufs) + [np.int32(v) for v in vals]
    st = time.perf_counter()
    ev = self.kernel(self.dev.queue, [g * l for g, l in zip(grid, local)], local, *args)
    if not wait: return 0.0
    ev.wait()
    try: return (ev.profile.end - ev.profile.start) * 1e-9
    except Exception: return time.perf_counter() - st

class CLDevice(Compiled):
  def __init__(self, name: str):
    cl = _cl()
    idx = int(name.split(":")[1]) if ":" in name else 0
    try: devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except Exception as e: raise RuntimeError(f"no OpenCL platform found for {name} ({e}): {NO_CL_FIX}") from None
    if getenv("CL_PLATFORM", ""):
      devices = [d for d in devices if getenv("CL_PLATFORM", "").lower() in d.platform.name.lower()]
    if idx >= len(devices):
      have = ", ".join(f"CL:{i} {d.name.strip()}" for i, d in enumerate(devices)) or "none"
      raise RuntimeError(f"{name} does not exist: OpenCL devices here: {have}; pick one with device='CL:0' or "
                         "DEV=CL:0, or another device with DEV=CPU")
    self.cl_device = devices[idx]
    self.ctx = cl.Context([self.cl_device])
    self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    from teeny.codegen.render.opencl import OpenCLRenderer
    super().__init__(name, CLAllocator(self), OpenCLRenderer(), CLCompiler(self), functools.partial(CLProgram, self))
    if DEBUG >= 1: print(f"teeny: opened {name}: {self.cl_device.name.strip()} on {self.cl_device.platform.name}")
  def synchronize(self): self.queue.finish()

def open_device(name: str) -> Compiled: return CLDevice(name)



def null_compiler() -> CLCompiler:
  """The compiler NULL:CL uses under NULL_COMPILE=1: the first OpenCL device (PoCL on a CPU-only machine)."""
  from teeny.device import Device
  return cast(CLCompiler, Device["CL"].compiler)  # a CL device is always made with a CLCompiler
