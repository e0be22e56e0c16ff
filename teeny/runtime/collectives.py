"""Collectives over one buffer per device: all-reduce, all-gather, reduce-scatter, broadcast.

`outs[i]`/`ins[i]` live on device i. On CUDA devices they run through NCCL (`NCCL`, ctypes over libnccl.so.2: one
communicator per tuple of devices, made with ncclCommInitAll, calls grouped and queued on each device's stream, the
null stream teeny's kernels use, so they are ordered after the kernels that made their inputs). Anywhere else (CPU:n,
NULL, mixed kinds) a host version copies through host memory; on NULL nothing runs.
"""
from __future__ import annotations
import ctypes, ctypes.util, os
from typing import Any, Callable, Sequence
import numpy as np
from teeny.device import Buffer, Device
from teeny.dtype import DType, dtypes
from teeny.uop.ops import Ops

REDUCE_OPS = {Ops.ADD: "sum", Ops.MUL: "prod", Ops.MAX: "max", Ops.MIN: "min"}
_NP_REDUCE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}

def _op_name(op: Any) -> str:
  name = REDUCE_OPS.get(op, op)
  if name not in _NP_REDUCE: raise ValueError(f"collective reduce op {op!r} is not one of sum, prod, max, min")
  return name

def _check(outs: Sequence[Buffer], ins: Sequence[Buffer], what: str):
  if len(outs) != len(ins) or not outs: raise ValueError(f"{what}: needs one input and one output buffer per device")
  for o, i in zip(outs, ins):
    if o.device != i.device: raise ValueError(f"{what}: output on {o.device} but its input on {i.device}")
    if o.dtype != i.dtype: raise TypeError(f"{what}: output is {o.dtype} but its input {i.dtype}")

def _kind(bufs: Sequence[Buffer]) -> str:
  devs = [b.device for b in bufs]
  if all(Device[d].runs_nothing for d in devs): return "null"
  if all(d.split(":")[0] == "CUDA" for d in devs) and os.environ.get("TEENY_NCCL", "1") != "0": return "nccl"
  return "host"

def _host(b: Buffer) -> np.ndarray: return b.numpy() if b.dtype != dtypes.bfloat16 else b.numpy()

def _put(b: Buffer, a: np.ndarray):
  if b.dtype == dtypes.bfloat16:
    from teeny.dtype import float32_to_bf16_bits
    a = float32_to_bf16_bits(np.ascontiguousarray(a, dtype=np.float32))
  b.copyin(np.ascontiguousarray(a).view(np.uint8).data.cast("B"))

def _null(outs: Sequence[Buffer]):
  for o in outs: o.ensure_allocated()

def all_reduce(outs: Sequence[Buffer], ins: Sequence[Buffer], op: Any = "sum"):
  """outs[i] = op over every ins[j] (elementwise), on every device."""
  _check(outs, ins, "all_reduce")
  name = _op_name(op)
  if any(o.size != i.size for o, i in zip(outs, ins)): raise ValueError("all_reduce: every buffer must have one size")
  kind = _kind(list(outs) + list(ins))
  if kind == "null": return _null(outs)
  if kind == "nccl": return nccl_for([b.device for b in ins]).all_reduce(outs, ins, name)
  acc = _host(ins[0]).copy()
  for b in ins[1:]: acc = _NP_REDUCE[name](acc, _host(b))
  for o in outs: _put(o, acc)

def all_gather(outs: Sequence[Buffer], ins: Sequence[Buffer]):
  """outs[i] = the concatenation of every ins[j], in device order (each out is len(ins) times an input)."""
  _check(outs, ins, "all_gather")
  if any(o.size != len(ins) * ins[0].size for o in outs) or any(i.size != ins[0].size for i in ins):
    raise ValueError("all_gather: inputs must have one size n and outputs n * devices")
  kind = _kind(list(outs) + list(ins))
  if kind == "null": return _null(outs)
  if kind == "nccl": return nccl_for([b.device for b in ins]).all_gather(outs, ins)
  whole = np.concatenate([_host(b) for b in ins])
  for o in outs: _put(o, whole)

def reduce_scatter(outs: Sequence[Buffer], ins: Sequence[Buffer], op: Any = "sum"):
  """outs[i] = part i (of len(ins) equal parts) of op over every ins[j]."""
  _check(outs, ins, "reduce_scatter")
  name = _op_name(op)
  if any(i.size != len(ins) * outs[0].size for i in ins) or any(o.size != outs[0].size for o in outs):
    raise ValueError("reduce_scatter: outputs must have one size n and inputs n * devices")
  kind = _kind(list(outs) + list(ins))
  if kind == "null": return _null(outs)
  if kind == "nccl": return nccl_for([b.device for b in ins]).reduce_scatter(outs, ins, name)
  acc = _host(ins[0]).copy()
  for b in ins[1:]: acc = _NP_REDUCE[name](acc, _host(b))
  n = outs[0].size
  for k, o in enumerate(outs): _put(o, acc[k * n:(k + 1) * n])

def broadcast(outs: Sequence[Buffer], ins: Sequence[Buffer], root: int = 0):
  """outs[i] = ins[root] on every device (only the root's input is read)."""
  _check(outs, ins, "broadcast")
  if not 0 <= root < len(ins): raise ValueError(f"broadcast: root {root} is not a device index (0..{len(ins) - 1})")
  kind = _kind(list(outs) + list(ins))
  if kind == "null": return _null(outs)
  if kind == "nccl": return nccl_for([b.device for b in ins]).broadcast(outs, ins, root)
  a = _host(ins[root])
  for o in outs: _put(o, a)

# ---- NCCL through ctypes
NCCL_RESULTS = {0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
                4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress"}
NCCL_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4}
NCCL_TYPES = {dtypes.int8: 0, dtypes.uint8: 1, dtypes.bool: 1, dtypes.int32: 2, dtypes.uint32: 3, dtypes.int64: 4,
              dtypes.uint64: 5, dtypes.float16: 6, dtypes.float32: 7, dtypes.float64: 8, dtypes.bfloat16: 9}
NO_NCCL_FIX = ("install NCCL (pip install nvidia-nccl-cu12 or nvidia-nccl-cu13, or the system's libnccl2 package) "
               "or point TEENY_NCCL_LIB at libnccl.so.2; TEENY_NCCL=0 uses host copies instead")

class NCCLError(RuntimeError):
  """An NCCL call that returned an error: `result` is the ncclResult_t name."""
  def __init__(self, what: str, code: int, detail: str = ""):
    self.result = NCCL_RESULTS.get(code, f"ncclResult {code}")
    super().__init__(f"NCCL {what} failed: {self.result} ({code}){': ' + detail if detail else ''}")

class NCCLUniqueId(ctypes.Structure):
  _fields_ = [("internal", ctypes.c_char * 128)]

_lib: Any = None

def _candidates() -> list[str]:
  out = [os.environ["TEENY_NCCL_LIB"]] if os.environ.get("TEENY_NCCL_LIB") else []
  out.append("libnccl.so.2")
  try:   # the nvidia-nccl-cu* wheels put it under site-packages/nvidia/nccl/lib
    import nvidia.nccl
    for p in getattr(nvidia.nccl, "__path__", []): out.append(os.path.join(p, "lib", "libnccl.so.2"))
  except ImportError: pass
  if (found := ctypes.util.find_library("nccl")): out.append(found)
  return out

def libnccl() -> Any:
  """The loaded libnccl (ctypes), or a RuntimeError that says how to get it."""
  global _lib
  if _lib is not None: return _lib
  errs = []
  for path in _candidates():
    try:
      lib = ctypes.CDLL(path)
      break
    except OSError as e: errs.append(f"{path}: {e}")
  else:
    raise RuntimeError(f"collectives on CUDA need libnccl.so.2, which was not found ({'; '.join(errs)}); {NO_NCCL_FIX}")
  vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
  lib.ncclGetErrorString.restype = ctypes.c_char_p
  lib.ncclGetLastError.restype = ctypes.c_char_p
  lib.ncclGetLastError.argtypes = [vp]
  lib.ncclCommInitAll.argtypes = [ctypes.POINTER(vp), i, ctypes.POINTER(i)]
  lib.ncclCommInitRank.argtypes = [ctypes.POINTER(vp), i, NCCLUniqueId, i]
  lib.ncclGetUniqueId.argtypes = [ctypes.POINTER(NCCLUniqueId)]
  lib.ncclCommDestroy.argtypes = [vp]
  lib.ncclAllReduce.argtypes = [vp, vp, sz, i, i, vp, vp]
  lib.ncclAllGather.argtypes = [vp, vp, sz, i, vp, vp]
  lib.ncclReduceScatter.argtypes = [vp, vp, sz, i, i, vp, vp]
  lib.ncclBroadcast.argtypes = [vp, vp, sz, i, i, vp, vp]
  lib.ncclGetVersion.argtypes = [ctypes.POINTER(i)]
  _lib = lib
  return lib

def nccl_check(ret: int, what: str):
  if ret != 0:
    lib = libnccl()
    detail = (lib.ncclGetLastError(None) or lib.ncclGetErrorString(ret) or b"").decode(errors="replace")
    raise NCCLError(what, ret, detail)

def nccl_version() -> int:
  v = ctypes.c_int()
  nccl_check(libnccl().ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
  return v.value

def _ptr(b: Buffer) -> int: return int(b.ensure_allocated()._opaque)

class NCCL:
  """A communicator over CUDA devices: either all of them in this process (`NCCL(devices)`, ncclCommInitAll), or this
  process's one rank of a group spread over processes (`NCCL.for_rank`, teeny.dist). Collectives are queued on each
  device's null stream inside one ncclGroupStart/End."""
  def __init__(self, devices: Sequence[str], comms: list | None = None, ranks: list[int] | None = None):
    self.devices = list(devices)
    lib = libnccl()
    if comms is None:
      idx = [int(d.split(":")[1]) if ":" in d else 0 for d in self.devices]
      for d in self.devices: Device[d]   # opens the device (its primary context is the one the runtime API uses)
      arr = (ctypes.c_void_p * len(idx))()
      nccl_check(lib.ncclCommInitAll(arr, len(idx), (ctypes.c_int * len(idx))(*idx)),
                 f"ncclCommInitAll over {', '.join(self.devices)}")
      comms = list(arr)
    self.comms = comms
  @staticmethod
  def for_rank(device: str, rank: int, world_size: int, unique_id: bytes) -> NCCL:
    """This process's communicator in a group of world_size processes that share `unique_id` (ncclGetUniqueId)."""
    lib = libnccl()
    if hasattr(dev := Device[device], "activate"): dev.activate()
    uid = NCCLUniqueId()
    ctypes.memmove(ctypes.byref(uid), unique_id, 128)
    comm = ctypes.c_void_p()
    nccl_check(lib.ncclCommInitRank(ctypes.byref(comm), world_size, uid, rank),
               f"ncclCommInitRank (rank {rank} of {world_size})")
    return NCCL([device], [comm.value])
  def _group(self, what: str, calls: list):
    lib = libnccl()
    nccl_check(lib.ncclGroupStart(), "ncclGroupStart")
    try:
      for fn, args in calls:
        dev = Device[args[0]]
        if hasattr(dev, "activate"): dev.activate()
        nccl_check(fn(*args[1:]), what)
    finally: nccl_check(lib.ncclGroupEnd(), f"{what} (ncclGroupEnd)")
  def _type(self, dt: DType) -> int:
    if dt not in NCCL_TYPES: raise TypeError(f"NCCL has no type for {dt}")
    return NCCL_TYPES[dt]
  def _each(self, what: str, fn: Any, outs: Sequence[Buffer], ins: Sequence[Buffer], count: Callable, *extra: Any):
    """One call per device (sendbuff, recvbuff, count, type, *extra, comm, stream), grouped."""
    self._group(what, [(fn, (i.device, _ptr(i), _ptr(o), count(o, i), self._type(i.dtype), *extra, c, None))
                       for o, i, c in zip(outs, ins, self.comms)])
  def all_reduce(self, outs: Sequence[Buffer], ins: Sequence[Buffer], op: str = "sum"):
    self._each("ncclAllReduce", libnccl().ncclAllReduce, outs, ins, lambda o, i: i.size, NCCL_OPS[op])
  def all_gather(self, outs: Sequence[Buffer], ins: Sequence[Buffer]):
    self._each("ncclAllGather", libnccl().ncclAllGather, outs, ins, lambda o, i: i.size)
  def reduce_scatter(self, outs: Sequence[Buffer], ins: Sequence[Buffer], op: str = "sum"):
    self._each("ncclReduceScatter", libnccl().ncclReduceScatter, outs, ins, lambda o, i: o.size, NCCL_OPS[op])
  def broadcast(self, outs: Sequence[Buffer], ins: Sequence[Buffer], root: int = 0):
    self._each("ncclBroadcast", libnccl().ncclBroadcast, outs, ins, lambda o, i: i.size, root)
  def __del__(self):
    try:
      for c in self.comms: _lib.ncclCommDestroy(c)
    except Exception: pass   # at interpreter exit the library may be gone

_comms: dict[tuple, NCCL] = {}

def nccl_for(devices: Sequence[str]) -> NCCL:
  """The communicator over these CUDA devices of this process (made once)."""
  key = tuple(devices)
  if key not in _comms: _comms[key] = NCCL(key)
  return _comms[key]
