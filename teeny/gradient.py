"""Derivative rules per UOp op. backward() walks the graph once, in reverse topological order; the gradient graph is
lazy and fuses like any other."""
from __future__ import annotations
import itertools, math
from typing import Callable, cast
from teeny.dtype import dtypes
from teeny.helpers import argsort
from teeny.uop.ops import Ops, UOp, inline_calls

def _c(like: UOp, v: float) -> UOp: return like.const_shaped(v)
def _reduce_to(g: UOp, shape: tuple[int, ...]) -> UOp:
  """Sum g over the axes where `shape` is 1 (the gradient of an expand)."""
  axes = tuple(i for i, (a, b) in enumerate(zip(shape, g.shape)) if a != b)
  if not axes: return g
  half = g.dtype in (dtypes.float16, dtypes.bfloat16)
  x = g.cast(dtypes.float32) if half else g
  if (red := _split_sum(x, axes)) is None: red = x.r(Ops.ADD, axes)
  return red.cast(g.dtype) if half else red

SPLIT_MIN_OUT, SPLIT_MAX_OUT, SPLIT_MIN_K = 4096, 1 << 22, 128

def _split_sum(x: UOp, axes: tuple[int, ...]) -> UOp | None:
  """On a GPU with matmul tiles (codegen/tc.py), a long sum to a matrix of a few tiles (a weight gradient: a sum over
  batch x time to a (d_in, d_out) matrix) as a sum per part of the outermost summed axis, then the sum of the parts:
  the first is a batch of GEMMs that fills the GPU with blocks, the second is small. H200, a 256x256 weight gradient
  summed over 32x128 tokens, float32: 0.16 ms as one GEMM of 16 block tiles. Keeps the order of the sum otherwise (no
  atomics), so the result is deterministic. The parts are the outermost summed axis itself where it is long enough
  (no reshape); splitting it by a reshape is only done below 2^31 elements of x: a reshape of an expanded view is
  indexed by its flat position, an int32 that would overflow (a convolution's weight gradient in the plain graph,
  32x64x64x56x56x9 products, faulted on the H200 that way)."""
  from teeny.device import Device
  if any(not isinstance(s, int) for s in x.shape) or not isinstance(x.device, str): return None   # (sharded)
  r = Device[x.device].renderer
  if not (getattr(r, "smem_tiles", False) or getattr(r, "tensor_cores", ())): return None
  out = math.prod(s for i, s in enumerate(x.shape) if i not in axes)
  k = math.prod(x.shape[a] for a in axes)
  if not (SPLIT_MIN_OUT <= out <= SPLIT_MAX_OUT) or k < 2 * SPLIT_MIN_K: return None
  want = 256 * 4096 // out   # parts for about 256 blocks of 64x64 outputs
  a0, n0 = axes[0], x.shape[axes[0]]
  keep = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
  if len(axes) > 1 and n0 >= max(want, 2) and k // n0 >= SPLIT_MIN_K:
    part = UOp(Ops.CONTIGUOUS, x.dtype, (x.r(Ops.ADD, axes[1:]),))
    return part.r(Ops.ADD, (a0,)).reshape(keep)
  if math.prod(x.shape) >= 1 << 31: return None
  parts = next((p for p in (2, 4, 8, 16, 32, 64, 128, 256) if p >= want and n0 % p == 0), None)
  if parts is None or k // parts < SPLIT_MIN_K: return None
  u = x.reshape(x.shape[:a0] + (parts, n0 // parts) + x.shape[a0 + 1:])
  inner = tuple(a + 1 if a > a0 else a for a in axes[1:])
  part = UOp(Ops.CONTIGUOUS, x.dtype, (u.r(Ops.ADD, (a0 + 1,) + inner),))
  return part.r(Ops.ADD, (a0,)).reshape(keep)

def _max_grad(g: UOp, a: UOp, b: UOp, is_max: bool) -> tuple[UOp, UOp]:
  """Binary max/min: the winner takes the gradient; ties split it evenly."""
  win = a.alu(Ops.CMPLT, b) if not is_max else b.alu(Ops.CMPLT, a)
  tie = a.alu(Ops.CMPEQ, b)
  one, half, zero = _c(g, 1.0), _c(g, 0.5), _c(g, 0.0)
  wa = win.where(one, tie.where(half, zero))
  wb = win.where(zero, tie.where(half, one))
  return g * wa, g * wb

def _reduce_grad(g: UOp, ret: UOp) -> tuple[UOp | None, ...]:
  x = ret.src[0]
  op = ret.arg[0]
  ge = g.expand(x.shape)
  if op is Ops.ADD: return (ge,)
  if op is Ops.MUL:
    # d prod / d x_i is the product of the other elements. prod / x_i is that only when x_i != 0 (a zero gave nan): with
    # one zero in the group, the zero gets the product of the rest and the others 0; with two or more, all get 0
    axes = ret.arg[1]
    zero = x.alu(Ops.CMPEQ, _c(x, 0.0))
    nzero = zero.cast(dtypes.int32).r(Ops.ADD, axes).expand(x.shape)
    rest = zero.where(_c(x, 1.0), x).r(Ops.MUL, axes).expand(x.shape)  # the product of the non-zero elements
    no_zero = (ge * ret.expand(x.shape)) / x
    one_zero = zero.where(ge * rest, _c(ge, 0.0))
    some_zero = nzero.alu(Ops.CMPEQ, _c(nzero, 1)).where(one_zero, _c(ge, 0.0))
    return (nzero.alu(Ops.CMPEQ, _c(nzero, 0)).where(no_zero, some_zero),)
  # max/min: ties split evenly among the maxima (a nan result: among the nans, as torch)
  re = ret.expand(x.shape)
  hit = x.alu(Ops.CMPEQ, re)
  if x.dtype.kind == "f": hit = hit.alu(Ops.OR, x.alu(Ops.CMPNE, x).alu(Ops.AND, re.alu(Ops.CMPNE, re)))
  mask = hit.cast(g.dtype)
  count = mask.r(Ops.ADD, ret.arg[1]).expand(x.shape)
  return ((ge * mask) / count,)

def _pow_grad(g: UOp, r: UOp) -> tuple[UOp | None, ...]:
  """torch's rule: the base gets 0 where the exponent is 0 (0 ** 0 gave 0 * inf = nan), the exponent gets 0 where the
  base is 0 and the exponent >= 0 (else result * log(base), -inf for 0 ** -1)."""
  a, b = r.src
  zero = _c(r, 0.0)
  da = b.alu(Ops.CMPEQ, zero).where(zero, b * a.alu(Ops.POW, b - _c(r, 1.0)))
  flat = a.alu(Ops.CMPEQ, zero).alu(Ops.AND, zero.alu(Ops.CMPLE, b))
  return (g * da, g * flat.where(zero, r * a.alu(Ops.LOG)))

def _fmod_grad(g: UOp, r: UOp) -> tuple[UOp | None, ...]:
  """Float fmod(a, b) = a - trunc(a / b) * b: 1 for a, -trunc(a / b) for b (torch). Integer % has no gradient."""
  if r.dtype.kind != "f": return (None, None)
  a, b = r.src
  return (g, (g * a.alu(Ops.FDIV, b).alu(Ops.TRUNC)).alu(Ops.NEG))

def _gather_grad(g: UOp, ret: UOp) -> tuple[UOp | None, ...]:
  """Scatter-add of g into the source rows its index picked: a one-hot compare reduced over the gathered axis."""
  src, index, ax = ret.src[0], ret.src[1], ret.arg
  n = src.shape[ax]
  out_shape = ret.shape
  # shapes: index (.., k, ..) -> (.., k, n, ..) compared with arange(n)
  ex_shape = out_shape[:ax + 1] + (n,) + out_shape[ax + 1:]
  idx = index.cast(dtypes.int32).reshape(out_shape[:ax + 1] + (1,) + out_shape[ax + 1:]).expand(ex_shape)
  ar = UOp(Ops.ARANGE, dtypes.int32, (), (n, src.device))
  ar = ar.reshape((1,) * (ax + 1) + (n,) + (1,) * (len(out_shape) - ax - 1)).expand(ex_shape)
  hit = idx.alu(Ops.CMPEQ, ar)
  gg = g.reshape(out_shape[:ax + 1] + (1,) + out_shape[ax + 1:]).expand(ex_shape)
  contrib = hit.where(gg, _c(gg, 0.0))
  summed = contrib.r(Ops.ADD, (ax,)).reshape(out_shape[:ax] + (n,) + out_shape[ax + 1:])
  return (summed, None)

def _window_grad(g: UOp, r: UOp) -> tuple[UOp | None, ...]:
  """Windows overlap, so each input gets the sum over the kernel positions that read it: one strided, shifted
  placement of g per kernel position, all summed (one fused kernel)."""
  k_, s_, d_ = r.arg
  src_shape = r.src[0].shape
  n, lead = len(k_), len(src_shape) - len(k_)
  outs = r.shape[lead:lead + n]
  # every kernel position reads g: compute it once rather than once per position
  if len(k_) and any(k > 1 for k in k_) and g.base.op not in (Ops.BUFFER, Ops.CONST):
    g = UOp(Ops.CONTIGUOUS, g.dtype, (g,))
  total: UOp | None = None
  for pos in itertools.product(*[range(k) for k in k_]):
    # g at this kernel position: (..., *out)
    gp = g.shrink(tuple((0, s) for s in r.shape[:lead + n]) + tuple((p, p + 1) for p in pos))
    gp = gp.reshape(r.shape[:lead + n])
    for j in range(n):
      ax, o, st, dil, size = lead + j, outs[j], s_[j], d_[j], src_shape[lead + j]
      if st > 1:  # spread the outputs s apart: (o,) -> (o, s) padded -> (o*s,)
        sh = gp.shape
        gp = gp.reshape(sh[:ax] + (o, 1) + sh[ax + 1:]).pad(tuple((0, 0) for _ in sh[:ax]) + ((0, 0), (0, st - 1)) +
                                                            tuple((0, 0) for _ in sh[ax + 1:]))
        gp = gp.reshape(sh[:ax] + (o * st,) + sh[ax + 1:])
      before = pos[j] * dil
      length = gp.shape[ax]
      keep = min(length, size - before)
      sh = gp.shape
      if keep < length: gp = gp.shrink(tuple((0, v) if i != ax else (0, keep) for i, v in enumerate(sh)))
      gp = gp.pad(tuple((0, 0) if i != ax else (before, size - before - min(length, keep)) for i in range(len(sh))))
    total = gp if total is None else total + gp
  return (total,)

RULES: dict[Ops, Callable[[UOp, UOp], tuple[UOp | None, ...]]] = {
  Ops.ADD: lambda g, r: (g, g),
  Ops.SUB: lambda g, r: (g, g.alu(Ops.NEG)),
  Ops.MUL: lambda g, r: (g * r.src[1], g * r.src[0]),
  Ops.FDIV: lambda g, r: (g / r.src[1], (g.alu(Ops.NEG) * r.src[0]) / (r.src[1] * r.src[1])),
  Ops.NEG: lambda g, r: (g.alu(Ops.NEG),),
  Ops.EXP: lambda g, r: (g * r,),
  Ops.LOG: lambda g, r: (g / r.src[0],),
  Ops.EXP2: lambda g, r: (g * r * _c(r, math.log(2)),),
  Ops.LOG2: lambda g, r: (g / (r.src[0] * _c(r, math.log(2))),),
  Ops.SQRT: lambda g, r: (g / (r * _c(r, 2.0)),),
  Ops.RECIP: lambda g, r: (g.alu(Ops.NEG) * r * r,),
  Ops.SIN: lambda g, r: (g * r.src[0].alu(Ops.COS),),
  Ops.COS: lambda g, r: (g.alu(Ops.NEG) * r.src[0].alu(Ops.SIN),),
  Ops.TAN: lambda g, r: (g * (_c(r, 1.0) + r * r),),
  Ops.TANH: lambda g, r: (g * (_c(r, 1.0) - r * r),),
  Ops.ERF: lambda g, r: (g * _c(r, 2 / math.sqrt(math.pi)) * (r.src[0] * r.src[0]).alu(Ops.NEG).alu(Ops.EXP),),
  Ops.POW: _pow_grad,
  Ops.MOD: _fmod_grad,
  Ops.MAX: lambda g, r: _max_grad(g, r.src[0], r.src[1], True),
  Ops.MIN: lambda g, r: _max_grad(g, r.src[0], r.src[1], False),
  Ops.WHERE: lambda g, r: (None, r.src[0].where(g, _c(g, 0.0)), r.src[0].where(_c(g, 0.0), g)),
  Ops.CAST: lambda g, r: (g.cast(r.src[0].dtype) if r.src[0].dtype.kind == "f" else None,),
  Ops.RESHAPE: lambda g, r: (g.reshape(r.src[0].shape),),
  Ops.PERMUTE: lambda g, r: (g.permute(tuple(argsort(list(r.arg)))),),
  Ops.EXPAND: lambda g, r: (_reduce_to(g, r.src[0].shape),),
  Ops.PAD: lambda g, r: (g.shrink(tuple((b, b + s) for (b, _), s in zip(r.arg, r.src[0].shape))),),
  Ops.SHRINK: lambda g, r: (g.pad(tuple((b, s - e) for (b, e), s in zip(r.arg, r.src[0].shape))),),
  Ops.FLIP: lambda g, r: (g.flip(r.arg),),
  Ops.REDUCE_AXIS: _reduce_grad,
  Ops.WINDOW: _window_grad,
  Ops.GATHER: _gather_grad,
  Ops.CONTIGUOUS: lambda g, r: (g,),
  Ops.CONTIGUOUS_BACKWARD: lambda g, r: (UOp(Ops.CONTIGUOUS, g.dtype, (g,)),),
  Ops.COPY: lambda g, r: (UOp(Ops.COPY, g.dtype, (UOp(Ops.CONTIGUOUS, g.dtype, (g,)),), r.src[0].device),),
  Ops.MULTI: lambda g, r: _multi_grad(g, r),
}

def _multi_grad(g: UOp, r: UOp) -> tuple[UOp | None, ...]:
  """MULTI(shards, axis): each shard gets its part of g on its device; a replicated tensor is one value, so only the
  first copy gets g (the others would count it once per device)."""
  def to(x: UOp, dev) -> UOp: return UOp(Ops.COPY, x.dtype, (UOp(Ops.CONTIGUOUS, x.dtype, (x,)),), dev)
  if r.arg is None: return (to(g, r.src[0].device),) + (None,) * (len(r.src) - 1)
  out, lo = [], 0
  for s in r.src:
    n = s.shape[r.arg]
    out.append(to(g.shrink(tuple((lo, lo + n) if i == r.arg else (0, d) for i, d in enumerate(g.shape))), s.device))
    lo += n
  return tuple(out)
# rounding is flat almost everywhere: a zero gradient (torch gives the input zeros, not None)
for _op in (Ops.TRUNC, Ops.FLOOR, Ops.CEIL, Ops.RINT): RULES[_op] = lambda g, r: (_c(g, 0.0),)
NO_GRAD = {Ops.CMPLT, Ops.CMPLE, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.IDIV, Ops.DETACH,
           Ops.BUFFER, Ops.CONST, Ops.ARANGE, Ops.BITCAST, Ops.NOOP}

def _custom_kernel_grad(g: UOp, ck: UOp) -> tuple[UOp | None, ...]:
  """A custom kernel is differentiable through its grad_fxn(grad_out, *inputs) -> one gradient (or None) per input.
  It is called with UOps; the front end stores the user's function wrapped so that it sees Tensors (tensor.py)."""
  sink, grad_fxn = ck.arg
  if grad_fxn is None:
    raise RuntimeError(f"custom kernel {sink.arg.name!r} has no grad_fxn, so it cannot be differentiated; pass "
                       "grad_fxn= to custom_kernel or detach() its inputs")
  grads = grad_fxn(g, *ck.src[1:])
  if not isinstance(grads, (tuple, list)) or len(grads) != len(ck.src) - 1:
    raise RuntimeError(f"grad_fxn of custom kernel {sink.arg.name!r} must return one gradient (or None) per input "
                       f"({len(ck.src) - 1}), got {grads!r}")
  out: list[UOp | None] = [None]
  for s, gr in zip(ck.src[1:], grads):
    if gr is None: out.append(None)
    else:
      u = gr.uop if hasattr(gr, "uop") else gr
      if u.shape != s.shape:
        raise RuntimeError(f"grad_fxn returned a gradient of shape {u.shape} for an input of shape {s.shape}")
      out.append(u.cast(s.dtype) if u.dtype != s.dtype else u)
  return tuple(out)

def _view_chain(target: UOp, prev: UOp) -> list[UOp]:
  """The movement ops (and DETACHes) from prev up to target, bottom first."""
  chain = []
  while target is not prev:
    chain.append(target)
    target = target.src[0]
  return chain[::-1]

def _assign_grad(g: UOp, a: UOp) -> list[tuple[UOp, UOp]]:
  """ASSIGN(target, value) is prev with the view's elements replaced by value: value gets g seen through the view, and
  prev gets g everywhere the write did not reach (the mask is the view's own gradient of ones, nonzero where
  written)."""
  target, value = a.src[0], a.src[1]
  prev = target.base
  chain = _view_chain(target, prev)
  gv = g
  for c in chain:
    if c.op is not Ops.DETACH: gv = c.replace(src=(gv,))
  if len(a.src) > 2:
    # a scatter into the flat view: value[i] came from position index[i]; written positions are those any index names
    index, n = a.src[2], target.shape[0]
    k = index.shape[0]
    positions = UOp(Ops.ARANGE, index.dtype, (), (n, g.device)).reshape((1, n)).expand((k, n))
    hit = index.reshape((k, 1)).expand((k, n)).alu(Ops.CMPEQ, positions)
    ones = hit.cast(g.dtype).r(Ops.ADD, (0,)).reshape((n,))
    gv = UOp(Ops.GATHER, g.dtype, (gv, index), 0)
  else: ones = _c(gv, 1.0)
  for c in reversed(chain):
    if c.op is not Ops.DETACH: ones = cast(UOp, RULES[c.op](ones, c)[0])  # a view's rule always grads its source
  written = ones.alu(Ops.CMPNE, _c(ones, 0.0))
  return [(value, gv), (prev, written.where(_c(g, 0.0), g))]

def compute_gradient(root: UOp, root_grad: UOp, targets: set[UOp]) -> dict[UOp, UOp]:
  """d(root)/d(t) for each target t reachable from root, given the incoming gradient of root."""
  topo = list(root.toposort)
  if any(n.op is Ops.CALL for n in topo):   # (a composite op: differentiated through its body)
    root = inline_calls(topo)[root]
    topo = list(root.toposort)
  on_path: set[UOp] = set()
  for n in topo:
    if n in targets or any(s in on_path for s in n.src if n.op is not Ops.DETACH): on_path.add(n)
  grads: dict[UOp, UOp] = {root: root_grad}
  for n in reversed(topo):
    g = grads.get(n)
    if g is None or n not in on_path or n in targets and not n.src: continue
    if n.op in NO_GRAD: continue
    if n.op is Ops.ASSIGN:
      for s, ag in _assign_grad(g, n):
        if s in on_path: grads[s] = ag if s not in grads else grads[s] + ag
      continue
    src_grads: tuple[UOp | None, ...]
    if n.op is Ops.KERNEL_OUT: src_grads = (g,) if n.arg == 0 else (None,)
    elif n.op is Ops.CUSTOM_KERNEL: src_grads = _custom_kernel_grad(g, n)
    elif n.op not in RULES: raise RuntimeError(f"no derivative rule for {n.op}; it cannot be differentiated")
    else: src_grads = RULES[n.op](g, n)
    for s, sg in zip(n.src, src_grads):
      if sg is None or s not in on_path: continue
      # a CUSTOM_KERNEL node has no shape: the gradient it gets is that of its output (KERNEL_OUT 0)
      if sg.shape != s.shape and s.op is not Ops.CUSTOM_KERNEL:
        raise RuntimeError(f"internal: gradient shape {sg.shape} for {s.op} of shape {s.shape}")
      grads[s] = sg if s not in grads else grads[s] + sg
  return {t: grads[t] for t in targets if t in grads}
