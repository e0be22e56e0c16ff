"""A vocab-sharded embedding: device d holds rows [d * local, (d + 1) * local) of the table (weight sharded on axis 0).

Forward: every device reads the (replicated) ids and writes, for each token it owns, its row, and zeros for the others
(`embedding_shard_fwd`); the per-device partials are one tensor sharded on a new leading axis, and summing that axis
is an all-reduce, so every device ends with the whole lookup. Backward: each device adds only the gradients of the
tokens it owns into its own rows with Relaxed atomic adds (`embedding_shard_bwd`), so the weight's gradient is sharded
like the weight and no collective runs. In both kernels the device's offset is `_device_num * local`, with
`_device_num` a kernel variable bound per device at launch: one compiled kernel serves every device.
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any, Callable
import numpy as np
from teeny.dtype import dtypes
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp
from teeny.uop.symbolic import Variable
from teeny.indexing import check_index_range
from teeny.kernels.common import acc_dtype, column_ranges, is_gpu

def _owned(ids: UOp, i: UOp, local: int, ndev: int) -> tuple[UOp, UOp]:
  """(row in this device's shard, whether this device owns token i)."""
  t = ids.index(i).load().cast(dtypes.index)
  off = Variable("_device_num", 0, ndev - 1) * local
  ok = (t < off).alu(Ops.XOR, UOp.const(dtypes.bool, True)).alu(Ops.AND, t < off + local)
  return ok.where(t - off, UOp.const(dtypes.index, 0)), ok

def embedding_shard_fwd(out: UOp, weight: UOp, ids: UOp, ndev: int, gpu: bool) -> UOp:
  (_, n, dim), (local, _) = out.arg[1], weight.arg[1]
  i = UOp.range(n, 0, AxisType.GLOBAL)
  j, jr = column_ranges(dim, gpu, 1)
  row, ok = _owned(ids, i, local, ndev)
  v = weight.index(row * dim + j, valid=ok).load()
  info = KernelInfo(name=f"embedding_shard_{local}_{dim}", opts_to_apply=())
  return out.index(i * dim + j).store(ok.where(v, UOp.const(v.dtype, 0))).end(i, *jr).sink(arg=info)

def embedding_shard_bwd(grad_weight: UOp, grad_out: UOp, ids: UOp, ndev: int, gpu: bool) -> UOp:
  (local, dim), (n,) = grad_weight.arg[1], ids.arg[1]
  i = UOp.range(n, 0, AxisType.GLOBAL)
  j, jr = column_ranges(dim, gpu, 1)
  row, ok = _owned(ids, i, local, ndev)
  g = grad_out.index(i * dim + j).load().cast(grad_weight.dtype.base)
  add = grad_weight.index(row * dim + j).atomic("add", g, mask=ok, sem=MemSem.Relaxed)
  return add.end(i, *jr).sink(arg=KernelInfo(name=f"embedding_shard_bwd_{local}_{dim}", opts_to_apply=()))

def _per_device(shape: tuple, dtype, devices: Any, zero: bool) -> Tensor:
  make = (lambda d: Tensor.zeros(*shape, dtype=dtype, device=d)) if zero else \
    (lambda d: Tensor.empty(*shape, dtype=dtype, device=d))
  return Tensor.from_shards([make(d).contiguous().realize() for d in devices], 0)

@dataclass(frozen=True)
class _Fxn:
  """A kernel builder bound to its settings (frozen: equal across steps, so a step's schedule is reused)."""
  which: str
  ndev: int
  gpu: bool
  def __call__(self, a: UOp, b: UOp, c: UOp) -> UOp:
    return (embedding_shard_fwd if self.which == "fwd" else embedding_shard_bwd)(a, b, c, self.ndev, self.gpu)

@dataclass(frozen=True)
class ShardedEmbeddingGrad:
  """grad_fxn of the forward kernel: the weight's gradient, sharded like the weight (each device its own tokens)."""
  local: int
  def __call__(self, g: Tensor, w: Tensor, ids: Tensor) -> tuple:
    devs = w.device
    nd, n, dim = g.shape
    gw = _per_device((self.local, dim), acc_dtype(g.dtype), devs, zero=True)
    gw = gw.custom_kernel(g.reshape(nd, n, dim), ids, fxn=_Fxn("bwd", len(devs), is_gpu(devs[0])))[0]
    return (gw.cast(w.dtype), None)

def sharded_embedding(weight: Tensor, idx: Tensor | np.ndarray | list) -> Tensor:
  """weight[idx] for a table sharded on its rows (weight.shard(devices, 0)): replicated on every device, (*idx.shape,
  dim). The ids are replicated to every device (they may come from one device or already replicated)."""
  devs = weight.device
  if not isinstance(devs, tuple) or weight.sharded_axis != 0:
    raise ValueError("sharded_embedding needs a weight sharded on axis 0 over several devices "
                     "(weight.shard_(devices, 0))")
  if weight.ndim != 2: raise ValueError(f"embedding weight must be 2-d (vocab, dim), got shape {tuple(weight.shape)}")
  vocab, dim = weight.shape
  nd, local = len(devs), vocab // len(devs)
  if not isinstance(idx, Tensor): idx = Tensor(np.asarray(idx, dtype=np.int32))
  if not dtypes.is_int(idx.dtype): raise TypeError(f"embedding ids must be an integer tensor, got {idx.dtype}")
  if not isinstance(idx.device, tuple):
    check_index_range(idx, vocab, lambda v: f"embedding id {v} is out of range for a table of {vocab} rows",
                      hint=f"ids must be in [0, {vocab}); check the tokenizer or num_embeddings")
  shape, n = idx.shape, idx.numel()
  ids = idx.reshape(n)
  ids = ids.to(devs) if not isinstance(ids.device, tuple) else ids.shard(devs, None)
  out = _per_device((1, n, dim), weight.dtype, devs, zero=False)
  part = out.custom_kernel(weight, ids, fxn=_Fxn("fwd", nd, is_gpu(devs[0])), grad_fxn=ShardedEmbeddingGrad(local))[0]
  return part.sum(0).reshape(*shape, dim)   # the sum over devices: an all-reduce

# ---- a replicated table (data parallel): each device looks up its own ids with the one-device kernels
@dataclass(frozen=True)
class _Local:
  """embedding.py's kernel builder on one device's shard (frozen: equal across steps)."""
  fxn: Callable
  gpu: bool
  def __call__(self, *ps: UOp) -> UOp: return self.fxn(*ps, self.gpu)

@dataclass(frozen=True)
class ReplicatedEmbeddingGrad:
  """grad_fxn for a replicated table: each device scatter-adds its own tokens into a partial gradient of the whole
  table, and the partials are summed across devices (an all-reduce); with replicated ids every device already has it."""
  vocab: int
  bwd_kernel: Callable
  def __call__(self, g: Tensor, w: Tensor, ids: Tensor) -> tuple:
    devs, dim = w.device, g.shape[-1]
    dt = acc_dtype(g.dtype)
    fxn = _Local(self.bwd_kernel, is_gpu(devs[0]))
    if ids.sharded_axis is None:
      gw = Tensor.zeros(self.vocab, dim, dtype=dt, device=devs).contiguous().realize()
      return (gw.custom_kernel(g, ids, fxn=fxn)[0].cast(w.dtype), None)
    parts = _per_device((self.vocab, dim), dt, devs, zero=True)   # (devices * vocab, dim): one partial per device
    gw = parts.custom_kernel(g, ids, fxn=fxn)[0].reshape(len(devs), self.vocab, dim).sum(0)
    return (gw.cast(w.dtype), None)

def replicated_embedding(weight: Tensor, idx: Tensor, fwd_kernel: Callable, bwd_kernel: Callable) -> Tensor:
  """weight[idx] for a table replicated on several devices (data parallel) with embedding.py's one-device kernels:
  ids sharded (or replicated) over the same devices; the result is split like the ids."""
  devs = weight.device
  vocab, dim = weight.shape
  if not isinstance(idx.device, tuple): idx = idx.to(devs)
  if idx.device != devs:
    raise RuntimeError(f"embedding: ids on {idx.device}, table on {devs}; shard the ids over {devs}")
  shape, n = idx.shape, idx.numel()
  ids = idx.reshape(n)
  ax = ids.sharded_axis
  if ax is None: out = Tensor.from_shards([Tensor.empty(n, dim, dtype=weight.dtype, device=d) for d in devs], None)
  else: out = Tensor.from_shards([Tensor.empty(n // len(devs), dim, dtype=weight.dtype, device=d) for d in devs], 0)
  res = out.custom_kernel(weight, ids, fxn=_Local(fwd_kernel, is_gpu(devs[0])),
                          grad_fxn=ReplicatedEmbeddingGrad(vocab, bwd_kernel))[0]
  return res.reshape(*shape, dim)
