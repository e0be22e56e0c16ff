"""softmax along the last axis on GPUs in one kernel: one block per row reads the row once into shared memory, finds
its max and its sum of exp(x - max) there (each a tree over the block's threads), and writes exp(x - max) / sum once.
The plain graph takes three kernels (max, sum, normalise) and reads the input three times.

Used by Tensor.softmax (KERNEL_ROUTES["softmax"]) on GPU renderers for float32 rows that fit the renderer's shared
memory (with the block's two reduction buffers); the backward, y * (g - sum(g * y)), is ordinary tensor code on y
recomputed by the same kernel.
A shared-memory load after a barrier carries that barrier as a source: loads of one address at two times are two
nodes (hash-consing would otherwise make the second read the first's value).
"""
from __future__ import annotations
import functools
from dataclasses import dataclass
from teeny.device import Device
from teeny.dtype import dtypes
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp
from teeny.kernels.common import Barriers, at, block_threads, block_tree, is_gpu, read, use_custom_kernels

@functools.lru_cache(maxsize=256)
def _softmax_kernel(out: UOp, x: UOp, rows: int, n: int) -> UOp:
  """(Cached: the placeholders are hash-consed, so a repeated call with the same shape gets the same SINK without
  building its few hundred UOps again, which cost about 1 ms per call.)"""
  T = block_threads(n)
  f32 = dtypes.float32
  r, tid = UOp.range(rows, 0, AxisType.GLOBAL), UOp.range(T, 1, AxisType.LOCAL)
  smem = UOp(Ops.DEFINE_LOCAL, f32.ptr(), (), (0, n + 2 * T))   # the row, then the max and sum buffers
  reg = UOp(Ops.DEFINE_REG, f32.ptr(), (), (1, 2))               # this thread's max and sum
  barrier = Barriers()
  steps = -(-n // T)
  eff: list[UOp] = [at(reg, 0).store(UOp.const(f32, float("-inf"))), at(reg, 1).store(UOp.const(f32, 0.0))]
  # the row into shared memory, and this thread's max
  j = UOp.range(steps, 2, AxisType.LOOP)
  i = j * T + tid
  ok = i < n
  v = read(at(x, r * n + i, ok))
  mx_old = read(at(reg, 0))
  eff += [at(smem, i, ok).store(v), at(reg, 0).store(ok.where(mx_old.alu(Ops.MAX, v), mx_old)).end(j)]
  done = barrier()   # the register read after the loop is a new read (not the loop's, which hash-consing would reuse)
  eff.append(done)
  red, (mx,) = block_tree(smem, (n,), tid, T, [read(at(reg, 0), done)], lambda a, b: [a[0].alu(Ops.MAX, b[0])], barrier)
  eff += red
  # this thread's sum of exp(x - max), from the row in shared memory
  k = UOp.range(steps, 3, AxisType.LOOP)
  i2 = k * T + tid
  ok2 = i2 < n
  e2 = (read(at(smem, i2, ok2), red[-1]) - mx).alu(Ops.EXP)
  eff.append(at(reg, 1).store(ok2.where(read(at(reg, 1)) + e2, read(at(reg, 1)))).end(k))
  done2 = barrier()
  eff.append(done2)
  red2, (total,) = block_tree(smem, (n + T,), tid, T, [read(at(reg, 1), done2)], lambda a, b: [a[0] + b[0]], barrier)
  eff += red2
  # written once
  q = UOp.range(steps, 4, AxisType.LOOP)
  i3 = q * T + tid
  ok3 = i3 < n
  y = (read(at(smem, i3, ok3), red2[-1]) - mx).alu(Ops.EXP) * total.alu(Ops.RECIP)
  eff.append(at(out, r * n + i3, ok3).store(y).end(q))
  return UOp(Ops.SINK, dtypes.void, tuple(eff), KernelInfo(name=f"softmax_{rows}_{n}", opts_to_apply=()))

def fits(x: Tensor, axis: int) -> bool:
  """Whether softmax(x, axis) runs as this kernel: custom kernels on, a GPU device, float32, the last axis, a row that
  fits shared memory."""
  if not use_custom_kernels() or isinstance(x.device, tuple) or not is_gpu(x.device): return False
  if x.dtype != dtypes.float32 or x.ndim == 0 or axis % x.ndim != x.ndim - 1 or x.numel() == 0: return False
  n = x.shape[-1]
  most = getattr(Device[x.device].renderer, "max_shared", 48 * 1024)
  return isinstance(n, int) and (n + 2 * block_threads(n)) * 4 <= most and n >= 32

@dataclass(frozen=True)
class SoftmaxGrad:
  """dx = y * (g - sum(g * y)) with y recomputed by the kernel (frozen: equal across steps, the schedule reused), over
  the rows of `shape` (rows, n)."""
  shape: tuple[int, int]
  def __call__(self, g: Tensor, x: Tensor) -> tuple:
    g, y = g.reshape(self.shape), softmax_rows(x.detach().reshape(self.shape))
    return ((y * (g - (g * y).sum(-1, keepdim=True))).reshape(x.shape),)

def route_softmax(x: Tensor, axis: int) -> Tensor | None:
  """Tensor.softmax's question: this kernel's result where it fits, None for the plain graph."""
  return softmax_rows(x) if fits(x, axis) else None

def softmax_rows(x: Tensor) -> Tensor:
  """softmax over the last axis of a float32 tensor, one block per row (see the module docstring). The kernel indexes
  its tensors flat (row r, element i at r*n + i), so x and the output keep their shape: no reshapes to build."""
  n = x.shape[-1]
  rows = x.numel() // n
  out = Tensor.empty(*x.shape, dtype=x.dtype, device=x.device)
  return out.custom_kernel(x, fxn=lambda o, a: _softmax_kernel(o, a, rows, n), grad_fxn=SoftmaxGrad((rows, n)))[0]
