"""Several processes (one per GPU, on one host or many): `teeny.dist.init(rank, world_size)` joins a group, and
`all_reduce` / `all_reduce_grads` / `broadcast` combine tensors across it.

On CUDA the group is an NCCL communicator (`ncclCommInitRank`); its unique id comes from rank 0, passed through the
environment (`TEENY_NCCL_ID`, 256 hex digits, for launchers that can set it) or a file every rank can read
(`id_file=`, e.g. on a shared filesystem: rank 0 writes it, the others wait for it). On other devices (CPU, for tests
and CI) the group exchanges arrays through files in the directory of `id_file` (the "file" backend: slow, but the same
program runs unchanged).

Data-parallel training with one process per device:

    g = dist.init()                           # RANK, WORLD_SIZE (and LOCAL_RANK for the GPU) from the environment
    dist.broadcast(model_params)              # every rank starts from rank 0's weights
    for x, y in my_part_of_the_data:
      loss = model(x).cross_entropy(y); opt.zero_grad(); loss.backward()
      dist.all_reduce_grads(opt.params)       # the mean gradient over every rank
      opt.step()
"""
from __future__ import annotations
import os, tempfile, time
from typing import Sequence
import numpy as np
from teeny.device import Device
from teeny.tensor import Tensor

class Group:
  """This process's place in a group: rank, world_size, device and how it talks to the others."""
  def __init__(self, rank: int, world_size: int, device: str, backend: str, comm=None, directory: str | None = None):
    self.rank, self.world_size, self.device, self.backend = rank, world_size, device, backend
    self.comm, self.directory, self.calls = comm, directory, 0
  def __repr__(self): return f"<teeny.dist.Group rank {self.rank}/{self.world_size} on {self.device} ({self.backend})>"

_group: Group | None = None

def _env_int(name: str, given: int | None) -> int:
  if given is not None: return int(given)
  if name not in os.environ: raise ValueError(f"teeny.dist.init: pass {name.lower()}= or set {name} in the environment")
  return int(os.environ[name])

def _write_atomic(path: str, data: bytes):
  fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp_")
  with os.fdopen(fd, "wb") as f: f.write(data)
  os.replace(tmp, path)

def _wait_for(path: str, timeout: float, what: str) -> bytes:
  end = time.monotonic() + timeout
  while True:
    try:
      with open(path, "rb") as f: return f.read()
    except FileNotFoundError:
      if time.monotonic() > end:
        raise TimeoutError(f"teeny.dist: waited {timeout:.0f} s for {what} ({path}); is every rank running with the "
                           "same id_file and world_size?") from None
      time.sleep(0.005)

def init(rank: int | None = None, world_size: int | None = None, device: str | None = None, id_file: str | None = None,
         backend: str | None = None, timeout: float = 300.0) -> Group:
  """Join the group. rank/world_size default to $RANK/$WORLD_SIZE; device to CUDA:$LOCAL_RANK when the default device
  is CUDA, else the default device. backend: "nccl" (CUDA) or "file" (anything else; needs id_file)."""
  global _group
  rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
  if not 0 <= rank < world_size: raise ValueError(f"teeny.dist.init: rank {rank} is not in [0, {world_size})")
  if device is None:
    base = Device.DEFAULT.split(":")[0]
    device = f"CUDA:{int(os.environ.get('LOCAL_RANK', 0))}" if base == "CUDA" else Device.DEFAULT
  device = Device.canonicalize(device)
  backend = backend or ("nccl" if device.split(":")[0] == "CUDA" else "file")
  if backend == "nccl":
    from teeny.runtime.collectives import NCCL, NCCLUniqueId, libnccl, nccl_check
    import ctypes
    if os.environ.get("TEENY_NCCL_ID"): uid = bytes.fromhex(os.environ["TEENY_NCCL_ID"])
    elif id_file is None:
      raise ValueError("teeny.dist.init: NCCL needs a unique id: set TEENY_NCCL_ID or pass id_file=")
    elif rank == 0:
      u = NCCLUniqueId()
      nccl_check(libnccl().ncclGetUniqueId(ctypes.byref(u)), "ncclGetUniqueId")
      uid = ctypes.string_at(ctypes.addressof(u), 128)
      _write_atomic(id_file, uid)
    else: uid = _wait_for(id_file, timeout, "rank 0's NCCL unique id")
    if len(uid) != 128: raise ValueError(f"teeny.dist.init: an NCCL unique id is 128 bytes, got {len(uid)}")
    _group = Group(rank, world_size, device, "nccl", comm=NCCL.for_rank(device, rank, world_size, uid))
  elif backend == "file":
    if id_file is None:
      raise ValueError("teeny.dist.init: the file backend needs id_file= (a directory next to it holds the exchange)")
    d = id_file + ".d"
    os.makedirs(d, exist_ok=True)
    _group = Group(rank, world_size, device, "file", directory=d)
    _group.timeout = timeout   # type: ignore[attr-defined]
  else: raise ValueError(f"teeny.dist.init: backend must be 'nccl' or 'file', got {backend!r}")
  return _group

def group() -> Group:
  if _group is None: raise RuntimeError("teeny.dist: call teeny.dist.init(rank, world_size, ...) first")
  return _group

def _file_exchange(g: Group, a: np.ndarray) -> list[np.ndarray]:
  """Every rank's array for this call, in rank order (written to the group's directory; files of two calls ago, which
  every rank has read by now, are removed)."""
  k = g.calls
  g.calls += 1
  path = os.path.join(g.directory or ".", f"c{k}_r{{}}.npy")
  import io
  buf = io.BytesIO()
  np.save(buf, a)
  _write_atomic(path.format(g.rank), buf.getvalue())
  out = [np.load(io.BytesIO(_wait_for(path.format(r), getattr(g, "timeout", 300.0), f"rank {r}'s data")))
         for r in range(g.world_size)]
  old = os.path.join(g.directory or ".", f"c{k - 2}_r{g.rank}.npy")
  if k >= 2 and os.path.exists(old): os.unlink(old)
  return out

_NP = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}

def all_reduce(t: Tensor, op: str = "sum") -> Tensor:
  """A new tensor on this rank's device: op over every rank's `t` (elementwise; sum, prod, max, min, avg)."""
  g = group()
  if op not in (*_NP, "avg"): raise ValueError(f"all_reduce: op must be one of sum, prod, max, min, avg, not {op!r}")
  if g.backend == "file":
    parts = _file_exchange(g, t.numpy())
    acc = parts[0].copy()
    for p in parts[1:]: acc = _NP["sum" if op == "avg" else op](acc, p)
    if op == "avg": acc = acc / g.world_size
    return Tensor(acc.astype(parts[0].dtype), device=t.device, dtype=t.dtype)
  from teeny.engine.realize import buffer_for
  src = t.contiguous().realize()
  out = Tensor.empty(*t.shape, dtype=t.dtype, device=t.device).realize()
  g.comm.all_reduce([buffer_for(out.uop.base)], [buffer_for(src.uop.base)], op)
  return out

def broadcast(ts: Sequence[Tensor], root: int = 0):
  """Every tensor in ts gets rank root's values, in place (e.g. the parameters, before training)."""
  g = group()
  for t in ts:
    if g.backend == "file": v = Tensor(_file_exchange(g, t.numpy())[root], device=t.device, dtype=t.dtype)
    else:
      from teeny.engine.realize import buffer_for
      src = t.contiguous().realize()
      v = Tensor.empty(*t.shape, dtype=t.dtype, device=t.device).realize()
      g.comm.broadcast([buffer_for(v.uop.base)], [buffer_for(src.uop.base)], root)
    with Tensor.no_grad(): t.assign(v)
  Tensor.realize(*ts)

def all_reduce_grads(params: Sequence[Tensor], average: bool = True):
  """Replace each parameter's .grad with the sum (average=True: the mean) of its .grad over every rank: what
  data-parallel training does between backward() and optimizer.step()."""
  for p in params:
    if p.grad is not None: p.grad = all_reduce(p.grad, "avg" if average else "sum")

def destroy():
  """Leave the group (its communicator is freed)."""
  global _group
  _group = None
