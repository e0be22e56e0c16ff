"""Embedding lookup and its backward: grad_weight[token[i], j] += grad_out[i, j], an atomic scatter-add.

The forward is a gather kernel, one program per (token, column block). The backward zeroes grad_weight in its own
kernel, then runs one program per token (x column block on GPUs, where the block is a work-group of LOCAL threads; on
the CPU the columns are a serial loop), each adding its row of grad_out into the token's row with Relaxed atomic adds:
two tokens with the same id hit the same row, and only the data says which. Ids outside [0, vocab) are masked: they
read zeros in the forward and write nothing in the backward.
"""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from teeny.dtype import dtypes
from teeny.indexing import check_index_range
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, MemSem, UOp
from teeny.kernels.common import acc_dtype, column_ranges, in_range, is_gpu, use_custom_kernels

def _token(ids: UOp, i: UOp, vocab: int) -> tuple[UOp, UOp]:
  """(row, valid): the id of token i as a row index, and whether it is inside the table (compared in the ids' dtype)."""
  t = ids.index(i).load()
  ok = in_range(t, vocab)
  return ok.where(t, UOp.const(t.dtype, 0)).cast(dtypes.index), ok

def _embedding_bwd_kernel(grad_weight: UOp, grad_out: UOp, ids: UOp, gpu: bool) -> UOp:
  (vocab, dim), (n,) = grad_weight.arg[1], ids.arg[1]
  i = UOp.range(n, 0, AxisType.GLOBAL)
  j, jr = column_ranges(dim, gpu, 1)
  row, ok = _token(ids, i, vocab)
  g = grad_out.index(i * dim + j).load().cast(grad_weight.dtype.base)
  add = grad_weight.index(row * dim + j).atomic("add", g, mask=ok, sem=MemSem.Relaxed)
  return add.end(i, *jr).sink(arg=KernelInfo(name=f"embedding_bwd_{vocab}_{dim}", opts_to_apply=()))

def embedding_bwd(grad_out: Tensor, idx: Tensor, vocab_size: int) -> Tensor:
  """The gradient of weight[idx] for a (vocab_size, dim) weight: grad_out (*idx.shape, dim) scatter-added by token id.

  Returned in float32 for 16-bit grad_out (cast it to the weight's dtype); ids outside [0, vocab_size) add nothing."""
  dim = grad_out.shape[-1]
  n = idx.numel()
  if tuple(grad_out.shape) != (*idx.shape, dim):
    raise ValueError(f"embedding_bwd: grad_out shape {tuple(grad_out.shape)} does not match ids {tuple(idx.shape)} + "
                     "(dim,)")
  if not dtypes.is_int(idx.dtype): raise TypeError(f"embedding_bwd: ids must be integers, got {idx.dtype}")
  dt = acc_dtype(grad_out.dtype)
  grad_weight = Tensor.zeros(vocab_size, dim, dtype=dt, device=grad_out.device).contiguous().realize()
  gpu = is_gpu(grad_out.device)
  return grad_weight.custom_kernel(grad_out.reshape(n, dim), idx.reshape(n),
                                   fxn=lambda gw, g, ids: _embedding_bwd_kernel(gw, g, ids, gpu))[0]

def _embedding_fwd_kernel(out: UOp, weight: UOp, ids: UOp, gpu: bool) -> UOp:
  (vocab, dim), (n,) = weight.arg[1], ids.arg[1]
  i = UOp.range(n, 0, AxisType.GLOBAL)
  j, jr = column_ranges(dim, gpu, 1)
  row, ok = _token(ids, i, vocab)
  v = weight.index(row * dim + j, valid=ok).load()
  info = KernelInfo(name=f"embedding_{vocab}_{dim}", opts_to_apply=())
  return out.index(i * dim + j).store(v).end(i, *jr).sink(arg=info)

def check_ids(idx: Tensor, vocab_size: int):
  """IndexError for an id outside [0, vocab_size) (teeny.indexing.check_index_range: free for ids made from host data,
  a read of computed ids on the CPU, nothing on GPUs unless TEENY_CHECK_INDICES=1, where the kernels mask them)."""
  check_index_range(idx, vocab_size, lambda v: f"embedding id {v} is out of range for a table of {vocab_size} rows",
                    hint=f"ids must be in [0, {vocab_size}); check the tokenizer or num_embeddings")

@dataclass(frozen=True)
class EmbeddingGrad:
  """grad_fxn of the embedding kernel (a frozen dataclass: equal across steps, so a step's schedule is reused)."""
  vocab: int
  def __call__(self, g: Tensor, w: Tensor, ids: Tensor) -> tuple:
    return (embedding_bwd(g, ids, self.vocab).cast(w.dtype), None)

def embedding(weight: Tensor, idx: Tensor) -> Tensor:
  """weight[idx] for a (vocab, dim) table: shape (*idx.shape, dim). Its backward is the atomic kernel embedding_bwd."""
  if weight.ndim != 2: raise ValueError(f"embedding weight must be 2-d (vocab, dim), got shape {tuple(weight.shape)}")
  if isinstance(weight.device, tuple):   # several devices (embedding_sharded.py): a table split by rows, or replicated
    from teeny.kernels.embedding_sharded import sharded_embedding, replicated_embedding
    if weight.sharded_axis == 0: return sharded_embedding(weight, idx)
    if not isinstance(idx, Tensor): idx = Tensor(np.asarray(idx, dtype=np.int32))
    return replicated_embedding(weight.shard(weight.device), idx, _embedding_fwd_kernel, _embedding_bwd_kernel)
  if not isinstance(idx, Tensor): idx = Tensor(np.asarray(idx, dtype=np.int32), device=weight.device)
  if not dtypes.is_int(idx.dtype): raise TypeError(f"embedding ids must be an integer tensor, got {idx.dtype}")
  vocab, dim = weight.shape
  check_ids(idx, vocab)  # before the fallback too: weight[idx] would wrap a negative id
  if not use_custom_kernels(): return weight[idx]
  n = idx.numel()
  gpu = is_gpu(weight.device)
  out = Tensor.empty(n, dim, dtype=weight.dtype, device=weight.device)
  res = out.custom_kernel(weight, idx.reshape(n), fxn=lambda o, w, ids: _embedding_fwd_kernel(o, w, ids, gpu),
                          grad_fxn=EmbeddingGrad(vocab))[0]
  return res.reshape(*idx.shape, dim)
