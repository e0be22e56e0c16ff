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
  n = max(value.numel(), 1)
  def copy(out: UOp, v: UOp, *ins: UOp) -> UOp:
    i = UOp.range(n, 0, AxisType.GLOBAL)
    return out.index(i).store(v.index(i).load()).end(i).sink(*ins, arg=KernelInfo(name=name, opts_to_apply=()))
  out = Tensor.empty(n, dtype=value.dtype, device=value.device)
  outs = out.custom_kernel(value.detach().reshape(n), *inputs, fxn=copy,
                           grad_fxn=_CopyGrad(grad_fxn, tuple(value.shape)))
  return outs[0].reshape(value.shape)
