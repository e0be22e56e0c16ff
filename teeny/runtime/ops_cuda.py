"""CUDA through cuda-python: NVRTC compiles straight to a cubin for the device's compute capability (a cubin, not PTX,
so an NVRTC newer than the driver still works); the driver API allocates, copies and launches. NVRTC needs no GPU, so
CUDA kernels compile on any machine with cuda-python and the NVRTC wheel (nvidia-cuda-nvrtc)."""
from __future__ import annotations
import ctypes, functools, os, shutil, subprocess, tempfile, threading
from typing import Any
import numpy as np
from teeny.device import Allocator, Compiled, Compiler, compile_error, elf_complete
from teeny.helpers import DEBUG

NO_DRIVER_FIX = ("install the NVIDIA driver (libcuda.so.1) on a machine with an NVIDIA GPU, or pick another device "
                 "with DEV=CPU or DEV=CL; CUDA source can still be rendered with DEV=NULL:CUDA and compiled without "
                 "a GPU")
NO_CUDA_PYTHON_FIX = ("pip install cuda-python nvidia-cuda-nvrtc (the [cuda] extra), or pick another device with "
                      "DEV=CPU or DEV=CL")

def _nvrtc():
  try:
    from cuda.bindings import nvrtc
    nvrtc.nvrtcVersion()
    return nvrtc
  except ImportError as e:
    raise RuntimeError(f"CUDA needs cuda-python: {NO_CUDA_PYTHON_FIX} ({e})") from None
  except Exception as e:
    raise RuntimeError(f"NVRTC could not be loaded ({e}): pip install nvidia-cuda-nvrtc (or the -cu12 wheel), "
                       "or pick another device with DEV=CPU or DEV=CL") from None

def _check_nvrtc(ret: tuple, what: str) -> Any:
  nvrtc = _nvrtc()
  err, *vals = ret
  if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
    raise RuntimeError(f"NVRTC {what} failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
  return vals[0] if len(vals) == 1 else vals

def _check_ret(ret: int, what: str):
  """Raise the RuntimeError of _check for a driver call's result code got through ctypes."""
  from cuda.bindings import driver
  _check(driver.CUresult(ret), what)

@functools.cache
def _cu() -> Any:
  """libcuda through ctypes, for the calls made once per kernel (launch, synchronize); everything else goes through
  cuda-python, which loads the same library (so the same contexts are current)."""
  lib = ctypes.CDLL("libcuda.so.1")
  lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
  lib.cuLaunchKernel.restype = ctypes.c_int
  lib.cuCtxSynchronize.argtypes = []
  lib.cuCtxSynchronize.restype = ctypes.c_int
  # (a timed launch: events recorded through cuda-python put its 10-20 us of host time between the start event and
  # the launch, and DEBUG=2 reported that gap as kernel time)
  lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
  lib.cuEventRecord.restype = ctypes.c_int
  return lib

_current = threading.local()  # per thread (as CUDA's current context is): the context made current last

def _check(ret: Any, what: str) -> Any:
  """A driver call's result, or a RuntimeError carrying the driver's own error name and message."""
  from cuda.bindings import driver
  err, *vals = ret if isinstance(ret, tuple) else (ret,)
  if err != driver.CUresult.CUDA_SUCCESS:
    name, msg = driver.cuGetErrorName(err)[1], driver.cuGetErrorString(err)[1]
    raise RuntimeError(f"CUDA {what} failed: {name.decode() if name else err}: {msg.decode() if msg else ''}")
  return vals[0] if len(vals) == 1 else (vals or None)


class NVRTCCompiler(Compiler):
  """CUDA C -> cubin for one architecture (sm_90 ...)."""
  def __init__(self, arch: str):
    self.arch = arch
    self.opts = [f"--gpu-architecture={arch}", "--std=c++17", "-default-device"]
    major, minor = _check_nvrtc(_nvrtc().nvrtcVersion(), "version")
    self.version = f"{major}.{minor}"
    self.cache_key = f"nvrtc {self.version} {' '.join(self.opts)}"
  def _compile(self, src: str, opts: list[str], get: str) -> bytes:
    nvrtc = _nvrtc()
    prog = _check_nvrtc(nvrtc.nvrtcCreateProgram(src.encode(), b"kernel.cu", 0, [], []), "create program")
    try:
      err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
      if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = _check_nvrtc(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(compile_error(f"NVRTC {self.version} compile for {self.arch}", src,
                                         log.decode(errors="replace").rstrip(chr(0))))
      size = _check_nvrtc(getattr(nvrtc, f"nvrtcGet{get}Size")(prog), f"{get} size")
      out = b" " * size
      _check_nvrtc(getattr(nvrtc, f"nvrtcGet{get}")(prog, out), get)
      return out
    finally: nvrtc.nvrtcDestroyProgram(prog)
  def compile(self, src: str) -> bytes: return self._compile(src, self.opts, "CUBIN")
  def to_ptx(self, src: str) -> str:
    opts = [o.replace("=sm_", "=compute_") for o in self.opts]
    return self._compile(src, opts, "PTX").decode(errors="replace").rstrip("\0")
  def compile_cached(self, src: str, force: bool = False) -> bytes:
    if DEBUG >= 6: print(self.to_ptx(src))
    return super().compile_cached(src, force)
  def valid_binary(self, data: bytes) -> bool: return elf_complete(data)
  def disassemble(self, lib: bytes):
    """SASS through nvdisasm when the CUDA toolkit is installed (the PTX is printed at compile time)."""
    if not (tool := shutil.which("nvdisasm")): return
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
      f.write(lib)
      f.flush()
      print(subprocess.run([tool, f.name], capture_output=True, text=True).stdout)

class CUDAAllocator(Allocator):
  def __init__(self, dev: CUDADevice):
    super().__init__()
    self.dev = dev
  def _alloc(self, nbytes: int) -> Any:
    from cuda.bindings import driver
    self.dev.activate()
    err, ptr = driver.cuMemAlloc(nbytes)
    if err == driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY and any(self.cache.values()):
      self.free_cache()
      err, ptr = driver.cuMemAlloc(nbytes)
    _check((err, ptr), f"cuMemAlloc of {nbytes} bytes on {self.dev.name}")
    return ptr
  def free(self, opaque: Any, nbytes: int):
    # every freed block is kept for reuse (an allocation that finds no memory frees the cache and retries): cuMemFree
    # waits for the device to go idle, so with 8 blocks per size a GPT step's activations freed most of theirs every
    # step, and each free stalled the host until the GPU drained; on two GPUs that serialised them
    self.cache.setdefault(nbytes, []).append(opaque)
  def _free(self, opaque: Any):
    from cuda.bindings import driver
    try: driver.cuMemFree(opaque)
    except Exception: pass   # at interpreter exit the driver may already be gone
  def free_cache(self):
    for lst in self.cache.values():
      while lst: self._free(lst.pop())
  def copyin(self, dest: Any, src: memoryview):
    from cuda.bindings import driver
    self.dev.activate()
    host = np.frombuffer(src, dtype=np.uint8)
    # ordered on the null stream after the kernels queued before it; from pageable memory the driver stages the data
    # before returning (the host buffer may be reused at once) and, unlike cuMemcpyHtoD, does not first wait for the
    # device to finish its queued work
    _check(driver.cuMemcpyHtoDAsync(dest, host.ctypes.data, host.nbytes, 0), "cuMemcpyHtoDAsync")
  def copyout(self, dest: memoryview, src: Any):
    from cuda.bindings import driver
    self.dev.activate()
    host = np.frombuffer(dest, dtype=np.uint8)
    _check(driver.cuMemcpyDtoH(host.ctypes.data, src, host.nbytes), "cuMemcpyDtoH")

# encoded tensor maps (a map holds only the address, shape, strides and box it was made from, so one made for memory
# since freed is right for whatever lives there now)
_tensor_maps: dict[tuple, Any] = {}

def tensor_map(ptr: int, tm: tuple) -> Any:
  """The CUtensorMap of a program's tensor-map parameter (ProgramSpec.tmaps: slot, dtype, dims, strides, box, offset)
  over the buffer at device address ptr: 128-byte swizzled boxes (wgmma's layout), zeros outside the tensor."""
  key = (ptr, tm)
  if (m := _tensor_maps.get(key)) is not None: return m
  from cuda.bindings import driver
  from teeny.dtype import dtypes
  _, dt, dims, strides, box, off = tm
  kinds = {dtypes.float16: driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
           dtypes.bfloat16: driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16}
  if dt not in kinds: raise RuntimeError(f"tensor maps here copy float16 or bfloat16, not {dt}")
  m = _check(driver.cuTensorMapEncodeTiled(
    kinds[dt], len(dims), ptr + off * dt.itemsize, [driver.cuuint64_t(d) for d in dims],
    [driver.cuuint64_t(x) for x in strides], [driver.cuuint32_t(b) for b in box], [driver.cuuint32_t(1)] * len(dims),
    driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
    driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
    f"cuTensorMapEncodeTiled (dims {dims}, strides {strides}, box {box})")
  if len(_tensor_maps) >= 4096: _tensor_maps.clear()
  _tensor_maps[key] = m
  return m

def _tmap_slots(spec: Any) -> list[int]:
  """For each tensor-map parameter, the position of its buffer among the buffer arguments."""
  pos = {p[0]: i for i, p in enumerate(spec.params)}
  return [pos[tm[0]] for tm in getattr(spec, "tmaps", ())]

class CUDAProgram:
  """One kernel of a loaded cubin. Launches are asynchronous; wait=True times the kernel with events."""
  def __init__(self, dev: CUDADevice, name: str, lib: bytes, spec: Any = None):
    from cuda.bindings import driver
    self.dev, self.name, self.spec = dev, name, spec
    dev.activate()
    if not elf_complete(lib): raise RuntimeError(f"could not load the cubin of {name}: the ELF file is incomplete")
    self.module = _check(driver.cuModuleLoadData(lib), f"loading the cubin of {name} (built for {dev.arch})")
    self.fxn = _check(driver.cuModuleGetFunction(self.module, name.encode()), f"finding kernel {name}")
    self.fxn_handle = int(self.fxn)   # (the CUfunction itself, for the ctypes launch)
    self.smem = getattr(spec, "smem", 0)
    self._launch_state(spec)
    if self.smem > 48 * 1024:   # dynamic shared memory past 48 KB is opt-in per kernel
      attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
      _check(driver.cuFuncSetAttribute(self.fxn, attr, self.smem), f"{name}: {self.smem} bytes of shared memory")
  def _launch_state(self, spec: Any):
    """What a launch reuses: the tensor-map parameters (buffer position, map), the argument arrays (made at the first
    launch, _args), and the maps' parameter addresses by their buffers' addresses."""
    self.tmaps = list(zip(_tmap_slots(spec), getattr(spec, "tmaps", ()))) if spec is not None else []
    self._argc, self._lock = -1, threading.Lock()
    self._map_ptrs: dict[tuple, tuple] = {}
    self._dims_of: tuple = (None, None, ())   # (global_size, local_size, grid + block) of the last launch
  def _args(self, n: int) -> tuple[Any, Any]:
    """The launch's argument cells (8 bytes each: a buffer's address, or an int32 variable in the low half) for n of
    them, and the kernelParams array: one pointer per cell, then one per tensor map (set per launch). Made once per
    argument count: the driver copies the arguments at the launch, so every launch reuses them."""
    if self._argc != n:
      cells = (ctypes.c_uint64 * max(n, 1))()
      argv = (ctypes.c_void_p * max(n + len(self.tmaps), 1))(*[ctypes.addressof(cells) + 8 * i for i in range(n)])
      self._cells, self._argv, self._argc = cells, argv, n
    return self._cells, self._argv
  def __call__(self, *bufs: Any, global_size: Any = None, local_size: Any = None, vals: tuple = (), wait: bool = False,
               work: int = 0) -> float:
    self.dev.activate()
    nb = len(bufs)
    with self._lock:   # (the cells are the program's: two threads launching it fill them one after the other)
      cells, argv = self._args(nb + len(vals))
      for i, b in enumerate(bufs): cells[i] = int(b)
      for i, v in enumerate(vals): cells[nb + i] = int(v) & 0xFFFFFFFF
      if self.tmaps:   # (passed by value: the parameter's address is the map's own)
        at = nb + len(vals)
        key = tuple(cells[i] for i, _ in self.tmaps)
        if (ptrs := self._map_ptrs.get(key)) is None:
          maps = [tensor_map(int(bufs[i]), tm) for i, tm in self.tmaps]
          if len(self._map_ptrs) >= 64: self._map_ptrs.clear()
          self._map_ptrs[key] = ptrs = ([m.getPtr() for m in maps], maps)   # (the maps kept alive with their addresses)
        for j, ptr in enumerate(ptrs[0]): argv[at + j] = ptr
      # straight into libcuda through ctypes: cuda-python's cuLaunchKernel cost 20-30 us of host time a launch on the
      # H200 machine's host, longer than many kernels
      # (a program launches with its spec's sizes, the same objects every time: their six dims are kept)
      gs, ls, dims = self._dims_of
      if gs is not global_size or ls is not local_size:
        dims = (*_dims(global_size), *_dims(local_size))
        self._dims_of = (global_size, local_size, dims)
      if wait:   # (the start event recorded right before the launch: see _cu)
        st, en = self.dev.events
        if (ret := _cu().cuEventRecord(int(st), None)) != 0: _check_ret(ret, "cuEventRecord")
      ret = _cu().cuLaunchKernel(self.fxn_handle, *dims, self.smem, None, ctypes.addressof(argv), None)
      if wait and ret == 0 and (ret2 := _cu().cuEventRecord(int(en), None)) != 0: _check_ret(ret2, "cuEventRecord")
    if ret != 0: _check_ret(ret, f"launching {self.name} grid {list(dims[:3])} block {list(dims[3:])}")
    if not wait: return 0.0
    from cuda.bindings import driver
    _check(driver.cuEventSynchronize(en), f"running {self.name}")
    return _check(driver.cuEventElapsedTime(st, en), "cuEventElapsedTime") * 1e-3

def _dims(size: Any) -> list[int]: return list(size or [1]) + [1] * (3 - len(size or [1]))

class CUDAGraph:
  """A TinyJit capture replayed as one CUDA graph built node by node through the driver's graph API: one kernel node
  per launch, each depending on the one before (launch order is the capture's). A buffer's address lives in one host
  cell that the kernel nodes' parameter arrays point at; rebinding a buffer writes the cell and, before the next launch,
  updates the nodes that use it in the instantiated graph (cuGraphExecKernelNodeSetParams), so nothing re-instantiates.
  Copies are not graph nodes here: a capture with copies replays launch by launch instead (NotImplementedError)."""
  def __init__(self, dev: CUDADevice, launches: list[tuple], bufs: list[Any]):
    from cuda.bindings import driver
    if any(ln[0] != "kernel" for ln in launches):
      raise NotImplementedError("CUDA graphs here hold kernel launches only")
    dev.activate()
    self.dev = dev
    self.cells = [np.array([int(b.ensure_allocated()._opaque)], dtype=np.uint64) for b in bufs]
    self.graph = _check(driver.cuGraphCreate(0), "cuGraphCreate")
    self.nodes: list[Any] = []
    self.params: list[Any] = []
    self.keep: list[Any] = []   # what each node's parameter array points at must outlive the graph
    self.users: list[list[int]] = [[] for _ in bufs]
    # tensor maps encode their buffer's address: (node, argument, map parameter) per buffer slot, encoded again on bind
    self.map_users: list[list[tuple[int, int, tuple]]] = [[] for _ in bufs]
    self.maps: dict[tuple[int, int], Any] = {}   # (node, argument) -> its map (its parameter array points into it)
    self.dirty: set[int] = set()
    for i, (_, prg, spec, slots, vals, _work) in enumerate(launches):
      holders: list[Any] = [self.cells[s] for s in slots] + [np.array([int(v)], dtype=np.int32) for v in vals]
      argv = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
      for pos, tm in zip(_tmap_slots(spec), getattr(spec, "tmaps", ())):
        self.map_users[slots[pos]].append((i, len(argv), tm))
        self.maps[(i, len(argv))] = m = tensor_map(int(self.cells[slots[pos]][0]), tm)
        argv = np.append(argv, np.uint64(m.getPtr()))
      p = driver.CUDA_KERNEL_NODE_PARAMS()
      p.func = prg.fxn
      p.gridDimX, p.gridDimY, p.gridDimZ = _dims(spec.global_size)
      p.blockDimX, p.blockDimY, p.blockDimZ = _dims(spec.local_size)
      p.sharedMemBytes = prg.smem
      p.kernelParams = argv.ctypes.data
      deps = self.nodes[-1:]
      self.nodes.append(_check(driver.cuGraphAddKernelNode(self.graph, deps, len(deps), p),
                               f"adding {prg.name} to a CUDA graph"))
      self.params.append(p)
      self.keep.append((holders, argv))
      for s in set(slots): self.users[s].append(i)
    self.exec = _check(driver.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")
  def bind(self, slot: int, buf: Any):
    self.cells[slot][0] = int(buf.ensure_allocated()._opaque)
    self.dirty.update(self.users[slot])
    for i, k, tm in self.map_users[slot]:
      self.maps[(i, k)] = m = tensor_map(int(self.cells[slot][0]), tm)
      self.keep[i][1][k] = m.getPtr()
  def __call__(self) -> float:
    from cuda.bindings import driver
    self.dev.activate()
    for i in self.dirty:
      _check(driver.cuGraphExecKernelNodeSetParams(self.exec, self.nodes[i], self.params[i]),
             "cuGraphExecKernelNodeSetParams")
    self.dirty.clear()
    _check(driver.cuGraphLaunch(self.exec, 0), "cuGraphLaunch")
    return 0.0
  def __del__(self):
    try:
      from cuda.bindings import driver
      driver.cuGraphExecDestroy(self.exec)
      driver.cuGraphDestroy(self.graph)
    except Exception: pass   # half built, or the driver is gone at interpreter exit

class CUDADevice(Compiled):
  def __init__(self, name: str):
    idx = int(name.split(":")[1]) if ":" in name else 0
    try:
      from cuda.bindings import driver
      _check(driver.cuInit(0), "cuInit")
    except ImportError as e: raise RuntimeError(f"{name}: CUDA needs cuda-python ({e}): {NO_CUDA_PYTHON_FIX}") from None
    except Exception as e: raise RuntimeError(f"no CUDA driver found for {name} ({e}): {NO_DRIVER_FIX}") from None
    count = _check(driver.cuDeviceGetCount(), "cuDeviceGetCount")
    if idx >= count:
      have = f"CUDA:0..CUDA:{count-1}" if count else "none"
      raise RuntimeError(f"{name} does not exist: this machine has {count} CUDA device(s) ({have}); pick one with "
                         "device='CUDA:0' or DEV=CUDA:0, or another device with DEV=CPU / DEV=CL")
    self.cu_device = _check(driver.cuDeviceGet(idx), "cuDeviceGet")
    self.ctx = _check(driver.cuDevicePrimaryCtxRetain(self.cu_device), "cuDevicePrimaryCtxRetain")
    self.activate()
    attr = driver.CUdevice_attribute
    major = _check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.cu_device),
                   "attribute")
    minor = _check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.cu_device),
                   "attribute")
    # Hopper (9.0) compiles for sm_90a: its arch-specific instructions (wgmma) run on it, and the cubin on no other
    self.arch = os.environ.get("CUDA_ARCH") or f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
    self.events = (_check(driver.cuEventCreate(0), "cuEventCreate"), _check(driver.cuEventCreate(0), "cuEventCreate"))
    from teeny.codegen.render.cuda import CUDARenderer
    comp = NVRTCCompiler(self.arch)
    renderer = CUDARenderer(self.arch)
    renderer.sm_count = _check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                           self.cu_device), "attribute")
    super().__init__(name, CUDAAllocator(self), renderer, comp, functools.partial(CUDAProgram, self))
    self.graph = functools.partial(CUDAGraph, self)
    if DEBUG >= 1:
      dn = _check(driver.cuDeviceGetName(256, self.cu_device), "cuDeviceGetName").split(bytes(1))[0].decode()
      print(f"teeny: opened {name}: {dn} ({self.arch}), NVRTC {comp.version}")
  def activate(self):
    if getattr(_current, "ctx", None) is self.ctx: return  # setting it again would cost a driver call per launch
    from cuda.bindings import driver
    _check(driver.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
    _current.ctx = self.ctx
  def synchronize(self):
    self.activate()
    if (ret := _cu().cuCtxSynchronize()) != 0: _check_ret(ret, "cuCtxSynchronize")

def default_arch() -> str: return os.environ.get("CUDA_ARCH", "sm_90")

def open_device(name: str) -> Compiled: return CUDADevice(name)

def null_compiler() -> NVRTCCompiler:
  """The compiler NULL:CUDA uses under NULL_COMPILE=1 (no GPU needed): sm_90 unless CUDA_ARCH says otherwise."""
  return NVRTCCompiler(default_arch())
