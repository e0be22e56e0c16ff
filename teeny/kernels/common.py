"""Helpers shared by the hand-written kernels (teeny/kernels/*.py): switches, device facts, small UOp builders, and
with_grad, which makes a lazily computed value differentiable through a hand-written backward."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Callable
from teeny.device import Device
from teeny.dtype import dtypes
from teeny.helpers import CUSTOM_KERNELS
from teeny.tensor import Tensor
from teeny.uop.ops import AxisType, KernelInfo, Ops, UOp

def use_custom_kernels() -> bool:
  """Whether the ops here run their hand-written kernels (TEENY_CUSTOM_KERNELS, on by default)."""
  return bool(CUSTOM_KERNELS)

def is_gpu(device: str) -> bool:
  """GPU renderers get LOCAL (work-group) ranges; the C renderer turns them into plain loops."""
  r = Device[device].renderer
  return bool(getattr(r, "is_gpu", False)) or getattr(r, "lang", "C") != "C"

def acc_dtype(dt):
  """Accumulate 16-bit floats in float32 (and atomics on them are not on every renderer)."""
  return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt

def in_range(v: UOp, n: int) -> UOp:
  """0 <= v < n, as a kernel-level bool."""
  return (v < 0).alu(Ops.XOR, UOp.const(dtypes.bool, True)).alu(Ops.AND, v < n)

def column_ranges(dim: int, gpu: bool, first_axis: int) -> tuple[UOp, tuple[UOp, ...]]:
  """The column index j and the ranges that make it: a GLOBAL block index and a LOCAL lane on GPUs, a LOOP on the
  CPU."""
  if not gpu:
    j = UOp.range(dim, first_axis, AxisType.LOOP)
    return j, (j,)
  block = next(b for b in (256, 128, 64, 32, 16, 8, 4, 2, 1) if dim % b == 0)
  jo, ji = UOp.range(dim // block, first_axis, AxisType.GLOBAL), UOp.range(block, first_axis + 1, AxisType.LOCAL)
  return jo * block + ji, (jo, ji)

def reduce_sum(value: UOp, *ranges: UOp) -> UOp:
  """The sum of `value` over REDUCE `ranges`."""
  return UOp(Ops.REDUCE, value.dtype, (value, *ranges), Ops.ADD)

# ---- one GPU block per row (kernels/softmax.py, kernels/nll.py): shared memory, barriers, trees over the threads

def block_threads(n: int) -> int:
  """Threads of a block that walks a row of n elements."""
  return 512 if n >= 4096 else 256 if n >= 1024 else 128

def at(buf: UOp, i: UOp | int, valid: UOp | None = None) -> UOp:
  """buf[i] (masked by `valid`), for any buffer: a parameter, shared memory (DEFINE_LOCAL) or registers (DEFINE_REG)."""
  ix = i if isinstance(i, UOp) else UOp.const(dtypes.index, i)
  return UOp(Ops.INDEX, buf.dtype, (buf, ix) + ((valid,) if valid is not None else ()))

def read(ix: UOp, after: UOp | None = None) -> UOp:
  """The value at `ix`; `after` (a BARRIER) orders it: loads of one address at two times must be two nodes, or
  hash-consing would make the second read the first's value."""
  return UOp(Ops.LOAD, ix.dtype.base, (ix,) + ((after,) if after is not None else ()))

class Barriers:
  """Distinct BARRIER nodes for one kernel (equal ones would be one node, hash-consed)."""
  def __init__(self) -> None: self.n = 0
  def __call__(self) -> UOp:
    self.n += 1
    return UOp(Ops.BARRIER, dtypes.void, (), self.n)

def block_tree(smem: UOp, bases: tuple[int, ...], tid: UOp, threads: int, values: list[UOp],
               combine: Callable[[list[UOp], list[UOp]], list[UOp]], barrier: Barriers) -> tuple[list[UOp], list[UOp]]:
  """The block's threads combine their `values` (one shared buffer of `threads` slots each, at `bases`) pairwise in
  halving steps. Returns the effects (stores and barriers, in order) and the totals, read after the last barrier."""
  eff = [at(smem, b + tid).store(v) for b, v in zip(bases, values)]
  bar = barrier()
  eff.append(bar)
  s = threads // 2
  while s >= 1:
    lane = tid < s
    mine = [read(at(smem, b + tid, lane), bar) for b in bases]
    other = [read(at(smem, b + tid + s, lane), bar) for b in bases]
    eff += [at(smem, b + tid, lane).store(v) for b, v in zip(bases, combine(mine, other))]
    bar = barrier()
    eff.append(bar)
    s //= 2
  return eff, [read(at(smem, b), bar) for b in bases]

@dataclass(frozen=True)
class _CopyGrad:
  """grad_fxn of with_grad's copy kernel: no gradient for the copied value, `inner` for the declared inputs. Frozen
  dataclasses (equal when their settings are) keep a training step's graph the same every step, so its schedule is
  reused (a fresh closure per call would make every step's graph new)."""
  inner: Callable
  shape: tuple
  def __call__(self, g: Tensor, _v: Tensor, *ins: Tensor) -> tuple:
    return (None, *self.inner(g.reshape(self.shape), *ins))

def with_grad(value: Tensor, inputs: tuple[Tensor, ...], grad_fxn: Callable[..., tuple], name: str) -> Tensor:
  """`value` (computed by the ordinary graph, lazily) made differentiable through `grad_fxn(grad, *inputs)`.

  A custom kernel copies `value` into its output and declares `inputs` as unused parameters, so autograd reaches them
  through this kernel and its grad_fxn rather than through value's own graph. grad_fxn should compare equal across
  calls with the same settings (a frozen dataclass, not a closure), so repeated steps reuse their schedule."""
  if value.numel() == 0:   # an empty batch: nothing to copy; each input that wants a gradient gets zeros
    for t in inputs:
      if t.requires_grad: value = value + t.reshape(-1)[:0].sum().cast(value.dtype)
    return value
  n = value.numel()
  def copy(out: UOp, v: UOp, *ins: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return out.index(i).store(v.index(i).load()).end(i).sink(*ins, arg=KernelInfo(name=name, opts_to_apply=()))
  out = Tensor.empty(n, dtype=value.dtype, device=value.device)
  outs = out.custom_kernel(value.detach().reshape(n), *inputs, fxn=copy,
                           grad_fxn=_CopyGrad(grad_fxn, tuple(value.shape)))
  return outs[0].reshape(value.shape)
