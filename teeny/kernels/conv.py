"""conv2d whose backward is hand-written: the weight gradient as a reduction (one program per weight element, no
atomics) and the input gradient as either a gather (one program per input row, no atomics) or an atomic scatter (one
program per output element), picked by shape. Stride, padding, dilation and groups are all handled.

x (B, C, H, W), weight (O, C/G, KH, KW), grad_out (B, O, OH, OW); ih = oh*sh - pt + kh*dh, iw = ow*sw - pl + kw*dw.

  weight grad   gw[o, c, kh, kw] = sum over b, oh, ow of grad_out[b, o, oh, ow] * x[b, g*C/G + c, ih, iw]
                padding >= 0: a GEMM over channels-last copies of padded x and of grad_out, one program per (image,
                tap, 4 output x CW input channel register tile: 16 on the CPU, 4 per GPU thread), summed over images
                afterwards (_wgrad_cl_kernel; H200 bench shape 1.2 ms with the copies, against 2.9 ms for a thread per
                (image, weight element)). Negative padding: GPU, a thread per (image, weight element); CPU, one program
                per (o, c) keeping KH*KW*OW accumulators, its innermost loop a contiguous row update
  input grad    gather:  gx[b, c, ih, iw] = sum over o in c's group, kh, kw of grad_out[b, o, oh, ow] * w[o, c', kh, kw]
                         where oh = (ih + pt - kh*dh) / sh is whole and in range (likewise ow); each program keeps a
                         whole row of iw in registers/L1 (an UPCAST range), so the innermost loop is a contiguous row
                         update; on GPUs a thread per (pixel, 4 input channels), the channels an UNROLL register tile
                scatter: for each output element, gx[b, c, ih, iw] += grad_out[b, o, oh, ow] * w[o, c', kh, kw] by
                         Relaxed atomic add, over c', kh, kw: every output element touches exactly KH*KW*C/G inputs, so
                         no work is spent on taps that miss (the gather tests every tap, and with stride s only 1/s^2
                         hit)

Choosing the input-gradient variant: measured by `ONLY=variants python extra/bench/kernels.py` (kernel ms, median of 3
on the 2-core CPU, of 5 on one H200), the gather won every shape:

  shape (input B x C x HxW, kernel, stride, groups)     CPU gather  scatter     H200 gather  scatter
  8x64x56x56 -> 64, 3x3, s1                                 43.8   2350.6            0.33     1.43
  8x64x56x56 -> 64, 3x3, s2                                 90.3   1183.5            0.29     0.73
  8x64x56x56 -> 128, 1x1, s2                                55.0    298.7            0.08     0.17
  8x64x56x56 -> 64, 3x3, s1, depthwise                      15.9     94.3            0.02     0.05
  8x64x56x56 -> 64, 3x3, s2, depthwise                      21.7     34.8            0.03     0.04
  8x32x112x112 -> 32, 1x1, s4                               52.6     65.0            0.04     0.07
  8x16x56x56 -> 16, 4x4, s4, depthwise                       2.1      2.6            0.02     0.03
  2x3x224x224 -> 64, 7x7, s2 (a stem)                      365.8   1350.0            0.53     0.65

The scatter comes closest where the gather wastes most taps (stride >= kernel, few channels per group: within 1.2-1.6x)
and is worst where many output channels pile onto each input (54x on the CPU, where every atomic is a lock-prefixed
compare-and-swap). So the rule (use_scatter) is: gather, always; variant="scatter" stays selectable. On the CPU, the
weight gradient (padding >= 0) and the stride-1 input gradient take faster forms: padded inputs instead of masks, and
register tiles sized by the target: both gradients as GEMMs over channels-last copies (_wgrad_cl_kernel, and
_igrad_cl_kernel for ungrouped convolutions; grouped ones take the row tile of _igrad_padded_kernel); a strided input
gradient runs the stride-1 kernel on grad_out with zeros inserted (_unstrided) when its padding allows. The table
above predates them: they only widen the gather's lead on the CPU (8x64x56x56 -> 64, 3x3, s2: 90 -> 13 ms; the stem:
366 -> 26 ms).
"""
from __future__ import annotations
from dataclasses import dataclass, replace
from teeny.device import Device
from teeny.dtype import dtypes
from teeny.tensor import Tensor
from teeny.codegen.opt import cpu_lanes, cpu_tile_rows
from teeny.tensor_nn import (_pad_or_shrink, _resolve_pads, _tuple, check_conv_args, conv_graph, gemm_shaped,
                             pads_in_place, padded_input)
from teeny.uop.ops import AxisType, KernelInfo, MemSem, Ops, UOp
from teeny.kernels.common import acc_dtype, in_range, is_gpu, reduce_sum, use_custom_kernels, with_grad

@dataclass(frozen=True)
class ConvShape:
  bs: int; cin: int; h: int; w: int
  cout: int; kh: int; kw: int; groups: int
  oh: int; ow: int
  sh: int; sw: int; pt: int; pl: int; dh: int; dw: int
  pb: int = 0; pr: int = 0
  @property
  def cin_g(self) -> int: return self.cin // self.groups
  @property
  def cout_g(self) -> int: return self.cout // self.groups
  @property
  def name(self) -> str:
    return f"{self.bs}_{self.cin}_{self.h}_{self.w}_{self.cout}_{self.kh}_{self.kw}_s{self.sh}{self.sw}_" \
           f"p{self.pt}{self.pl}_d{self.dh}{self.dw}_g{self.groups}"

def conv_shape(x_shape, w_shape, stride=1, padding=0, dilation=1, groups: int = 1) -> ConvShape:
  check_conv_args("conv2d", x_shape, w_shape, stride, padding, dilation, groups)
  bs, cin, h, w = x_shape
  cout, _, kh, kw = w_shape
  (sh, sw), (dh, dw) = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation")
  (pt, pb), (pl, pr) = _resolve_pads(padding, (kh, kw), (dh, dw), (sh, sw))
  oh, ow = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1, (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
  return ConvShape(bs, cin, h, w, cout, kh, kw, groups, oh, ow, sh, sw, pt, pl, dh, dw, pb, pr)

GPU_BLOCK = 256

def _gpu_elements(total: int) -> tuple[UOp, UOp, tuple[UOp, ...]]:
  """GPU layout: one thread per element of a flattened domain, GPU_BLOCK threads a block: (element, in range,
  ranges)."""
  blk = UOp.range((total + GPU_BLOCK - 1) // GPU_BLOCK, 0, AxisType.GLOBAL)
  lane = UOp.range(GPU_BLOCK, 1, AxisType.LOCAL)
  e = blk * GPU_BLOCK + lane
  return e, e < total, (blk, lane)

def _unflatten(e: UOp, shape: tuple[int, ...]) -> list[UOp]:
  out = []
  for i, n in enumerate(shape):
    rest = 1
    for m in shape[i + 1:]: rest *= m
    v = e // rest if rest > 1 else e
    out.append(v % n if i > 0 else v)
  return out

def _and(*bs: UOp | None) -> UOp | None:
  out = None
  for b in bs:
    if b is not None: out = b if out is None else out.alu(Ops.AND, b)
  return out

# ---- weight gradient: a reduction over batch and output positions, no atomics

def _wgrad_kernel(gw: UOp, x: UOp, gout: UOp, s: ConvShape, gpu: bool) -> UOp:
  """CPU: partial sums gw[o, c, kh, kw, ow] over (b, oh), one program per (o, c); the caller sums the last axis. Each
  program keeps KH*KW*OW accumulators (UPCAST ranges, in registers and L1), so its innermost loop is a contiguous,
  vectorised row update that reuses each grad_out row KH*KW times. GPU: partial sums gw[b, o, c, kh, kw] over (oh, ow),
  one thread per (image, weight element), summed over images by the caller: a thread per weight element alone left
  36864 threads each reducing 100k products (7.0 ms on an H200 for the bench shape)."""
  if gpu:
    e, live, _ = _gpu_elements(s.bs * s.cout * s.cin_g * s.kh * s.kw)
    b, co, ci, kh, kw = _unflatten(e, (s.bs, s.cout, s.cin_g, s.kh, s.kw))
    oh, ow = UOp.range(s.oh, 5, AxisType.REDUCE), UOp.range(s.ow, 6, AxisType.REDUCE)
    red = [oh, ow]
  else:
    co, ci = UOp.range(s.cout, 0, AxisType.GLOBAL), UOp.range(s.cin_g, 1, AxisType.GLOBAL)
    kh, kw = UOp.range(s.kh, 2, AxisType.UPCAST), UOp.range(s.kw, 3, AxisType.UPCAST)
    b, oh = UOp.range(s.bs, 4, AxisType.REDUCE), UOp.range(s.oh, 5, AxisType.REDUCE)
    ow, live = UOp.range(s.ow, 6, AxisType.UPCAST), None
    red = [b, oh]
  ih, iw = oh * s.sh + (kh * s.dh - s.pt), ow * s.sw + (kw * s.dw - s.pl)
  c = (co // s.cout_g) * s.cin_g + ci if s.groups > 1 else ci
  dt = gw.dtype.base
  xv = x.index(((b * s.cin + c) * s.h + ih) * s.w + iw, valid=_and(live, in_range(ih, s.h), in_range(iw, s.w)))
  xv = xv.load().cast(dt)
  gv = gout.index(((b * s.cout + co) * s.oh + oh) * s.ow + ow, valid=live).load().cast(dt)
  acc = reduce_sum(xv * gv, *red)
  out = ((co * s.cin_g + ci) * s.kh + kh) * s.kw + kw
  st = gw.index(e if gpu else out * s.ow + ow, valid=live).store(acc)
  return st.sink(arg=KernelInfo(name=f"conv_bwd_w_{s.name}", opts_to_apply=()))

def _block(n: int, most: int) -> int:
  """The largest power of two up to `most` that divides n (a register tile's size along a channel axis)."""
  return next(b for b in (16, 8, 4, 2, 1) if b <= most and n % b == 0)

# input channels per GPU thread in the weight gradient's register tile, by 4 output channels (H200 bench shape, with the
# channels-last copies: 2 -> 1.15 ms, 4 -> 1.24, 8 -> 1.17, 16 -> 1.72)
GPU_WGRAD_CW = 4

def _wgrad_cl_kernel(part: UOp, xt: UOp, gt: UOp, s: ConvShape, gpu: bool = False, lanes: int = 8,
                     rows: int = 4) -> UOp:
  """CPU: the weight gradient as a GEMM over channels-last copies, xt = x padded (B, Hp, Wp, C) and gt = grad_out
  (B, OH, OW, O): part[b, o, c, kh, kw] = sum over oh, ow of gt[b, oh, ow, o] * xt[b, oh*sh + kh*dh, ow*sw + kw*dw, c].
  Each program owns an OB x CW register tile of (output channel, input channel) for one image and tap (UPCAST ranges
  on the CPU, CW two vectors of the target's float32, `lanes` each; UNROLL ranges on GPUs), vectorised over the CW
  contiguous input channels, so each step loads CW/lanes vectors and OB scalars for OB*CW multiply-adds. Images are the
  outermost programs. The caller sums over b. Measured on the bench shape (B32, 64->64, 56x56, 2 cores, AVX-512 Zen 4,
  UNROLL tiles), kernel ms: OB x CW = 4x16: 61-75, 2x32: 74, 8x8: 75, 2x16: 98, 4x8: 110, 8x16: 357 (too many
  accumulators: not vectorised); the dot-product kernel it replaces took 115-124 ms plus a 51 ms pad of grad_out. On
  an AVX2 Zen 3 the UNROLL 4x16 tile was not vectorised at all (5.6 s, loaded machine); UPCAST ranges: 0.36-0.44 s.
  OB is `rows` (up to): 8 on targets with 32 vector registers, where 8x32 (16 zmm accumulators) measured 52-84 ms
  against 4x32's 75-91 (Sapphire Rapids, interleaved in one process), 4 on the others."""
  hp, wp = s.h + s.pt + s.pb, s.w + s.pl + s.pr
  ob, cw = _block(s.cout_g, 4 if gpu else rows), _block(s.cin_g, GPU_WGRAD_CW if gpu else 2 * lanes)
  live = None
  if gpu:  # one thread per tile; neighbouring threads hold neighbouring input-channel blocks (coalesced loads of xt)
    e, live, _ = _gpu_elements(s.bs * s.kh * s.kw * (s.cout // ob) * (s.cin_g // cw))
    b, kh, kw, obo, cbo = _unflatten(e, (s.bs, s.kh, s.kw, s.cout // ob, s.cin_g // cw))
  else:
    b, kh = UOp.range(s.bs, 0, AxisType.GLOBAL), UOp.range(s.kh, 1, AxisType.GLOBAL)
    kw = UOp.range(s.kw, 2, AxisType.GLOBAL)
    obo, cbo = UOp.range(s.cout // ob, 3, AxisType.GLOBAL), UOp.range(s.cin_g // cw, 4, AxisType.GLOBAL)
  # CPU: an UPCAST (looped) register tile, which clang unrolls and vectorises as a matmul's; written out by UNROLL it
  # stayed scalar on AVX2 (64 accumulators: 5.6 s instead of 0.36 s for the bench shape on a loaded Zen 3)
  tile = AxisType.UNROLL if gpu else AxisType.UPCAST
  obi, cbi = UOp.range(ob, 5, tile), UOp.range(cw, 6, tile)
  oh, ow = UOp.range(s.oh, 7, AxisType.REDUCE), UOp.range(s.ow, 8, AxisType.REDUCE)
  o, ci = obo * ob + obi, cbo * cw + cbi
  c = (o // s.cout_g) * s.cin_g + ci if s.groups > 1 else ci
  dt = part.dtype.base
  gv = gt.index(((b * s.oh + oh) * s.ow + ow) * s.cout + o, valid=live).load().cast(dt)
  xv = xt.index(((b * hp + oh * s.sh + kh * s.dh) * wp + ow * s.sw + kw * s.dw) * s.cin + c, valid=live).load().cast(dt)
  st = part.index((((b * s.cout + o) * s.cin_g + ci) * s.kh + kh) * s.kw + kw, valid=live)
  st = st.store(reduce_sum(gv * xv, oh, ow))
  return st.sink(arg=KernelInfo(name=f"conv_bwd_w_{s.name}", opts_to_apply=()))

def _pads_ok(s: ConvShape) -> bool: return min(s.pt, s.pb, s.pl, s.pr) >= 0 and s.oh > 0 and s.ow > 0

def gemm_route(s: ConvShape, device: str, dtype) -> bool:
  """Whether both gradients run as implicit GEMMs of the plain graph (codegen/tc.py: tensor cores for 16-bit inputs,
  shared-memory float32 tiles) instead of the hand-written kernels: on a GPU renderer that has the tiles for the
  dtype, for unit stride and dilation, no groups, padding >= 0, and rows (in and out) a multiple of 8 wide, so that
  a run of 16 bytes along a row never crosses into the next (the Opts' contiguity rule). H200, 32x64x56x56 -> 64, 3x3:
  float32 0.26 + 0.30 ms against the hand-written 0.67 (gather) + 1.25 ms; float16 0.08 + 0.08 ms."""
  return is_gpu(device) and _pads_ok(s) and gemm_shaped(Device[device].renderer, dtype, s.w, s.ow, (s.kh, s.kw),
                                                        (s.sh, s.sw), (s.dh, s.dw), s.groups)

def _gemm_bwd_input(grad_out: Tensor, weight: Tensor, s: ConvShape) -> Tensor:
  """The input gradient of a unit-stride convolution is the convolution of grad_out, padded by k-1-p on each side,
  with the kernel flipped and its channel axes swapped: one implicit GEMM over (B, H, W) x C, summed over (O, KH,
  KW)."""
  pads = ((s.kh - 1 - s.pt, s.kh - 1 - s.pb), (s.kw - 1 - s.pl, s.kw - 1 - s.pr))
  wt = UOp(Ops.CONTIGUOUS, weight.dtype, (weight.uop.permute((1, 0, 2, 3)).flip((2, 3)),))
  # (built on UOps and wrapped once, as Tensor.conv2d would build it: each Tensor op costs host time)
  if (u := conv_graph(grad_out.uop, wt, pads, (s.kh, s.kw), (1, 1), (1, 1), 1)) is not None:
    return grad_out._wrap(u, weight)
  return grad_out.conv2d(weight.permute(1, 0, 2, 3).flip((2, 3)).contiguous(), padding=pads)

# float32 weight gradients (SMEM tiles) want at least this many GEMMs in their batch (images times row splits): each
# is only (O x C*KH*KW) outputs, a few blocks. H200, the bench's 32x64x56x56 3x3, the GEMMs' kernel plus the sum over
# them: 1 split 0.47 ms, 2 splits 0.46, 4 splits 0.37, 8 splits 0.37 (.devrun/cw.py). The 16-bit GEMMs (wgmma) ran
# slower split in two (0.10 against 0.14 ms): they stay one per image
GW_MIN_GEMMS = 128

def gw_split(s: ConvShape, dtype) -> int:
  """How many parts each image's output rows are split into for the weight gradient: for float32, the smallest divisor
  of OH that makes GW_MIN_GEMMS GEMMs; 1 for 16-bit inputs."""
  if dtype != dtypes.float32: return 1
  return next((d for d in range(1, s.oh + 1) if s.oh % d == 0 and s.bs * d >= GW_MIN_GEMMS), s.oh)

def _gemm_bwd_weight(x: Tensor, grad_out: Tensor, s: ConvShape) -> Tensor:
  """The weight gradient as a batch of GEMMs, one per image and part of its output rows (gw_split) (O x (C, KH, KW),
  summed over those rows and OW: a split of the 100k-long sum over (B, OH, OW) that gives the GPU enough blocks),
  accumulated in float32, then summed over the parts. Built on UOps and wrapped once (each Tensor op costs host
  time)."""
  f32, sp = dtypes.float32, gw_split(s, x.dtype)
  oh = s.oh // sp
  # (gemm_route: padding >= 0) the padded input, read in place by CUDA's tiles
  pads = ((s.pt, s.pb), (s.pl, s.pr))
  xp = padded_input(x.uop, pads, pads_in_place(x.uop, pads, (s.kh, s.kw), (1, 1), (1, 1), 1))
  # windows (B, C, OH, OW, KH, KW) -> (B, parts, 1, C, OH/parts, OW, KH, KW)
  xw = xp.window((s.kh, s.kw), (1, 1), (1, 1)).reshape((s.bs, s.cin, sp, oh, s.ow, s.kh, s.kw))
  xw = xw.permute((0, 2, 1, 3, 4, 5, 6)).reshape((s.bs, sp, 1, s.cin, oh, s.ow, s.kh, s.kw)).cast(f32)
  full = (s.bs, sp, s.cout, s.cin, oh, s.ow, s.kh, s.kw)
  g = grad_out.uop.reshape((s.bs, s.cout, sp, oh, s.ow)).permute((0, 2, 1, 3, 4))
  g = g.reshape((s.bs, sp, s.cout, 1, oh, s.ow, 1, 1)).cast(f32).expand(full)
  part = UOp(Ops.CONTIGUOUS, f32, (xw.expand(full).alu(Ops.MUL, g).r(Ops.ADD, (4, 5)),))
  return x._wrap(part.r(Ops.ADD, (0, 1)).reshape((s.cout, s.cin, s.kh, s.kw)), grad_out)

def conv2d_bwd_weight(x: Tensor, grad_out: Tensor, s: ConvShape) -> Tensor:
  """d(loss)/d(weight), (O, C/G, KH, KW), in float32 for 16-bit inputs."""
  dt, gpu = acc_dtype(grad_out.dtype), is_gpu(x.device)
  if gemm_route(s, x.device, x.dtype): return _gemm_bwd_weight(x, grad_out, s)
  if _pads_ok(s):
    xt = _pad_or_shrink(x, [(s.pt, s.pb), (s.pl, s.pr)]).permute(0, 2, 3, 1)
    part = Tensor.empty(s.bs, s.cout, s.cin_g, s.kh, s.kw, dtype=dt, device=x.device)
    r = Device[x.device].renderer
    lanes = 8 if gpu else cpu_lanes(r)   # float32 per vector of the C target
    rows = cpu_tile_rows(r)
    outs = part.custom_kernel(xt, grad_out.permute(0, 2, 3, 1),
                              fxn=lambda o, a, g: _wgrad_cl_kernel(o, a, g, s, gpu, lanes, rows))
    return outs[0].sum(0)
  part = Tensor.empty(*((s.bs,) if gpu else ()), s.cout, s.cin_g, s.kh, s.kw, *(() if gpu else (s.ow,)), dtype=dt,
                      device=x.device)
  gw = part.custom_kernel(x, grad_out, fxn=lambda o, a, g: _wgrad_kernel(o, a, g, s, gpu))[0]
  return gw.sum(0) if gpu else gw.sum(-1)

# ---- input gradient, gather: one program per input row (CPU) or input element (GPU), no atomics

# input channels per GPU thread in the gather: each grad_out load feeds that many multiply-adds (H200 bench shape:
# 1.16 ms with 1, 1.08 with 4, 1.01 with 8)
GPU_IGRAD_CB = 4

def _igrad_gather_kernel(gx: UOp, gout: UOp, w: UOp, s: ConvShape, gpu: bool) -> UOp:
  if gpu:  # one thread per (pixel, block of cb input channels of one group), the block an UNROLL register tile
    cb = _block(s.cin_g, GPU_IGRAD_CB)
    e, live, _ = _gpu_elements(s.bs * (s.cin // cb) * s.h * s.w)
    b, cbo, ih, iw = _unflatten(e, (s.bs, s.cin // cb, s.h, s.w))
    c = cbo * cb + UOp.range(cb, 7, AxisType.UNROLL)
  else:
    b, c = UOp.range(s.bs, 0, AxisType.GLOBAL), UOp.range(s.cin, 1, AxisType.GLOBAL)
    ih = UOp.range(s.h, 2, AxisType.GLOBAL)
    iw, live = UOp.range(s.w, 3, AxisType.UPCAST), None
  col = UOp.range(s.cout_g, 4, AxisType.REDUCE)
  kh, kw = UOp.range(s.kh, 5, AxisType.REDUCE), UOp.range(s.kw, 6, AxisType.REDUCE)
  g, ci = (c // s.cin_g, c % s.cin_g) if s.groups > 1 else (None, c)
  co = g * s.cout_g + col if g is not None else col
  th, tw = ih + (s.pt - kh * s.dh), iw + (s.pl - kw * s.dw)
  # (th, tw) = (oh*sh, ow*sw): a tap hits an output position when both are in range and divisible by the stride
  oh, ow = th // s.sh if s.sh > 1 else th, tw // s.sw if s.sw > 1 else tw
  ok = _and(live, in_range(th, s.oh * s.sh), in_range(tw, s.ow * s.sw), (th % s.sh).eq(0) if s.sh > 1 else None,
            (tw % s.sw).eq(0) if s.sw > 1 else None)
  dt = gx.dtype.base
  gv = gout.index(((b * s.cout + co) * s.oh + oh) * s.ow + ow, valid=ok).load().cast(dt)
  wv = w.index(((co * s.cin_g + ci) * s.kh + kh) * s.kw + kw, valid=live).load().cast(dt)
  acc = reduce_sum(gv * wv, col, kh, kw)
  st = gx.index(((b * s.cin + c) * s.h + ih) * s.w + iw, valid=live).store(acc)
  return st.sink(arg=KernelInfo(name=f"conv_bwd_x_gather_{s.name}", opts_to_apply=()))

def _row_tile(w: int, most: int = 64) -> int:
  """The widest tile of a row of w that divides it and holds at most `most` values."""
  return next(t for t in range(min(w, most), 0, -1) if w % t == 0)

def _igrad_channels(s: ConvShape, tw: int, renderer) -> int:
  """Input channels of the stride-1 gather's register tile: 2 when two rows of TW values fit half the target's vector
  registers, else 1 (bench shape, 56-wide rows: AVX-512 Zen 4, 4 vectors a row: CB=2 54 ms, CB=1 91 ms; AVX2 Zen 3, 7
  vectors a row, 16 registers: CB=1 163 ms, CB=2 219-232 ms, CB=4 292 ms)."""
  lanes, regs = max(getattr(renderer, "vector_bytes", 32) // 4, 1), getattr(renderer, "vector_registers", 16)
  return _block(s.cin_g, 2 if 2 * -(-tw // lanes) <= regs // 2 else 1)

def _igrad_padded_kernel(gx: UOp, gp: UOp, w: UOp, s: ConvShape, cb: int = 2) -> UOp:
  """Stride 1 on the CPU: the gather of _igrad_gather_kernel over a grad_out padded by (K-1)*d - p on each side, so no
  tap needs a mask: gx[b, c, ih, iw] = sum over o, kh, kw of gp[b, o, ih + kh*dh, iw + kw*dw] * w[o, c', KH-1-kh,
  KW-1-kw]. Each program owns a register tile of CB input channels x TW columns of one row, so each row of grad_out it
  loads feeds CB multiply-adds per lane: the channels an UNROLL range (one accumulator array each, codegen/expand.py),
  the columns an UPCAST loop the compiler vectorises. The channel blocks of a row are the innermost programs: the
  grad_out rows they share stay in L1. Measured on the bench shape (B32, 64->64, 56x56, 2 cores, Zen 4, the tile
  written out): CB=1 91 ms, CB=2 54 ms, CB=4 58 ms (was 246 ms with one channel and a looped accumulator); CB comes
  from the target's registers (_igrad_channels). The columns written out by UNROLL as well (112 scalar accumulators)
  left clang's SLP vectoriser with scalar leftovers: 61-64 ms a half of the bench shape, against 48-55 looped
  (Sapphire Rapids); on AVX2 76 ms looped against 89-126 written out."""
  hq, wq = s.h + (s.kh - 1) * s.dh, s.w + (s.kw - 1) * s.dw
  cb, tw = _block(s.cin_g, cb), _row_tile(s.w)
  b, ih = UOp.range(s.bs, 0, AxisType.GLOBAL), UOp.range(s.h, 1, AxisType.GLOBAL)
  iwo, cbo = UOp.range(s.w // tw, 2, AxisType.GLOBAL), UOp.range(s.cin // cb, 3, AxisType.GLOBAL)
  cbi, iwi = UOp.range(cb, 4, AxisType.UNROLL), UOp.range(tw, 5, AxisType.UPCAST)
  c, iw = cbo * cb + cbi, iwo * tw + iwi
  col = UOp.range(s.cout_g, 6, AxisType.REDUCE)
  kh, kw = UOp.range(s.kh, 7, AxisType.REDUCE), UOp.range(s.kw, 8, AxisType.REDUCE)
  g, ci = (c // s.cin_g, c % s.cin_g) if s.groups > 1 else (None, c)
  co = g * s.cout_g + col if g is not None else col
  dt = gx.dtype.base
  gv = gp.index(((b * s.cout + co) * hq + ih + kh * s.dh) * wq + iw + kw * s.dw).load().cast(dt)
  wv = w.index(((co * s.cin_g + ci) * s.kh + (s.kh - 1 - kh)) * s.kw + (s.kw - 1 - kw)).load().cast(dt)
  st = gx.index(((b * s.cin + c) * s.h + ih) * s.w + iw).store(reduce_sum(gv * wv, col, kh, kw))
  return st.sink(arg=KernelInfo(name=f"conv_bwd_x_gather_{s.name}", opts_to_apply=()))

def _igrad_cl_kernel(gx: UOp, gp: UOp, wt: UOp, s: ConvShape, rows: int = 4, lanes: int = 8) -> UOp:
  """Stride 1, groups 1 on the CPU, channels last: gx[b, ih, iw, c] = sum over kh, kw, o of gp[b, ih + kh*dh,
  iw + kw*dw, o] * wt[kh, kw, o, c], gp the padded grad_out (B, Hq, Wq, O) and wt the flipped weight (KH, KW, O, C).
  The same GEMM as _wgrad_cl_kernel's: each program owns a register tile of TS columns of a row (UPCAST, one grad_out
  value each, broadcast) x CW input channels (UPCAST, CW/lanes vectors of wt's contiguous row), TS = `rows`, CW two
  vectors, so each step loads TS scalars and CW/lanes vectors for TS*CW/lanes vector multiply-adds. On AVX2 this is
  the 4x16 tile of 8 accumulators that 16 registers hold, where the NCHW kernel's 56-wide rows allowed one channel
  (7 accumulators, each row vector used once)."""
  hq, wq = s.h + (s.kh - 1) * s.dh, s.w + (s.kw - 1) * s.dw
  ts, cw = _block(s.w, rows), _block(s.cin, 2 * lanes)
  b, ih = UOp.range(s.bs, 0, AxisType.GLOBAL), UOp.range(s.h, 1, AxisType.GLOBAL)
  iwo, cbo = UOp.range(s.w // ts, 2, AxisType.GLOBAL), UOp.range(s.cin // cw, 3, AxisType.GLOBAL)
  iwi, ci = UOp.range(ts, 4, AxisType.UPCAST), UOp.range(cw, 5, AxisType.UPCAST)
  kh, kw = UOp.range(s.kh, 6, AxisType.REDUCE), UOp.range(s.kw, 7, AxisType.REDUCE)
  o = UOp.range(s.cout, 8, AxisType.REDUCE)
  iw, c = iwo * ts + iwi, cbo * cw + ci
  dt = gx.dtype.base
  gv = gp.index(((b * hq + ih + kh * s.dh) * wq + iw + kw * s.dw) * s.cout + o).load().cast(dt)
  wv = wt.index(((kh * s.kw + kw) * s.cout + o) * s.cin + c).load().cast(dt)
  st = gx.index(((b * s.h + ih) * s.w + iw) * s.cin + c).store(reduce_sum(gv * wv, kh, kw, o))
  return st.sink(arg=KernelInfo(name=f"conv_bwd_x_cl_{s.name}", opts_to_apply=()))

def _unstrided(s: ConvShape) -> ConvShape:
  """The stride-1 convolution whose grad_out is s's grad_out with sh-1 (sw-1) zeros between values: same input
  gradient."""
  oh, ow = (s.oh - 1) * s.sh + 1, (s.ow - 1) * s.sw + 1
  return replace(s, sh=1, sw=1, oh=oh, ow=ow, pb=oh - s.h - s.pt + s.dh * (s.kh - 1),
                 pr=ow - s.w - s.pl + s.dw * (s.kw - 1))

def _padded_ok(s: ConvShape) -> bool:
  return s.sh == s.sw == 1 and _pads_ok(s) and (s.kh - 1) * s.dh >= max(s.pt, s.pb) and \
    (s.kw - 1) * s.dw >= max(s.pl, s.pr)

# ---- input gradient, scatter: one program per output element, atomic adds into the input gradient

def _igrad_scatter_kernel(gx: UOp, gout: UOp, w: UOp, s: ConvShape, gpu: bool) -> UOp:
  if gpu:
    e, live, rngs = _gpu_elements(s.bs * s.cout * s.oh * s.ow)
    b, co, oh, ow = _unflatten(e, (s.bs, s.cout, s.oh, s.ow))
  else:
    b, co = UOp.range(s.bs, 0, AxisType.GLOBAL), UOp.range(s.cout, 1, AxisType.GLOBAL)
    oh, ow = UOp.range(s.oh, 2, AxisType.GLOBAL), UOp.range(s.ow, 3, AxisType.GLOBAL)
    live = None
  ci = UOp.range(s.cin_g, 4, AxisType.LOOP)
  kh, kw = UOp.range(s.kh, 5, AxisType.LOOP), UOp.range(s.kw, 6, AxisType.LOOP)
  c = (co // s.cout_g) * s.cin_g + ci if s.groups > 1 else ci
  ih, iw = oh * s.sh + (kh * s.dh - s.pt), ow * s.sw + (kw * s.dw - s.pl)
  dt = gx.dtype.base
  gv = gout.index(((b * s.cout + co) * s.oh + oh) * s.ow + ow, valid=live).load().cast(dt)
  wv = w.index(((co * s.cin_g + ci) * s.kh + kh) * s.kw + kw, valid=live).load().cast(dt)
  ok = _and(live, in_range(ih, s.h), in_range(iw, s.w))
  add = gx.index(((b * s.cin + c) * s.h + ih) * s.w + iw).atomic("add", gv * wv, mask=ok, sem=MemSem.Relaxed)
  return add.end(ci, kh, kw).sink(arg=KernelInfo(name=f"conv_bwd_x_scatter_{s.name}", opts_to_apply=()))

def use_scatter(s: ConvShape, device: str) -> bool:
  """Whether a shape's input gradient is the atomic scatter: never, by the measurements in the module docstring (the
  gather won every measured shape, on the CPU and on an H200)."""
  return False

def conv2d_bwd_input(grad_out: Tensor, weight: Tensor, s: ConvShape, variant: str | None = None) -> Tensor:
  """d(loss)/d(x), (B, C, H, W), in float32 for 16-bit inputs; variant 'gather' or 'scatter' (default: by shape), or
  on the CPU one gather kernel by name: 'gather_cl' (channels last; ungrouped only, else the row kernel) or
  'gather_rows' (register tile along a row)."""
  dt, dev = acc_dtype(grad_out.dtype), grad_out.device
  gpu = is_gpu(dev)
  if variant is None:
    if gemm_route(s, dev, grad_out.dtype): return _gemm_bwd_input(grad_out, weight, s).cast(dt)
    variant = "scatter" if use_scatter(s, dev) else "gather"
  if variant not in ("gather", "gather_cl", "gather_rows", "scatter"):
    raise ValueError(f"conv2d_bwd_input: variant must be 'gather', 'gather_cl', 'gather_rows' or 'scatter', got "
                     f"{variant!r}")
  if variant.startswith("gather"):
    gx = Tensor.empty(s.bs, s.cin, s.h, s.w, dtype=dt, device=dev)
    if not gpu and (s.sh > 1 or s.sw > 1) and _padded_ok(s1 := _unstrided(s)):
      # strided: grad_out with zeros inserted between its values is the grad_out of a stride-1 convolution with the
      # same input gradient, so the register-tiled kernel serves it (it multiplies the zeros, as the masked gather tests
      # every tap, but vectorised): 72.5 -> 14 ms for 8x64x56x56 -> 64, 3x3, stride 2
      g1 = grad_out.reshape(s.bs, s.cout, s.oh, 1, s.ow, 1).pad(((0, 0),) * 3 + ((0, s.sh - 1), (0, 0), (0, s.sw - 1)))
      g1 = g1.reshape(s.bs, s.cout, s.oh * s.sh, s.ow * s.sw)[:, :, :s1.oh, :s1.ow]
      grad_out, s = g1, s1
    if not gpu and _padded_ok(s):
      gp = _pad_or_shrink(grad_out, [((s.kh - 1) * s.dh - s.pt, (s.kh - 1) * s.dh - s.pb),
                                     ((s.kw - 1) * s.dw - s.pl, (s.kw - 1) * s.dw - s.pr)])
      r = Device[dev].renderer
      # channels last for ungrouped convolutions, the row kernel for grouped ones (and by name). Bench shape (B32,
      # 64->64, 56x56, 3x3), kernel ms with the copies, interleaved in one process on a loaded 2-core Sapphire Rapids:
      # AVX-512 54-65 channels-last, 83-102 rows; AVX2 (x86-64-v3) 119-130 and 137-164
      if s.groups == 1 and variant != "gather_rows":
        wt = weight.flip(2, 3).permute(2, 3, 0, 1)
        rows, lanes = cpu_tile_rows(r), cpu_lanes(r)
        out = Tensor.empty(s.bs, s.h, s.w, s.cin, dtype=dt, device=dev)
        out = out.custom_kernel(gp.permute(0, 2, 3, 1), wt, fxn=lambda o, g, w, s=s: _igrad_cl_kernel(o, g, w, s, rows,
                                                                                                      lanes))[0]
        return out.permute(0, 3, 1, 2)
      cb = _igrad_channels(s, _row_tile(s.w), r)
      return gx.custom_kernel(gp, weight, fxn=lambda o, g, w, s=s: _igrad_padded_kernel(o, g, w, s, cb))[0]
    return gx.custom_kernel(grad_out, weight, fxn=lambda o, g, w: _igrad_gather_kernel(o, g, w, s, gpu))[0]
  gx = Tensor.zeros(s.bs, s.cin, s.h, s.w, dtype=dt, device=dev).contiguous().realize()
  return gx.custom_kernel(grad_out, weight, fxn=lambda o, g, w: _igrad_scatter_kernel(o, g, w, s, gpu))[0]

def conv2d_bwd(x: Tensor, weight: Tensor, grad_out: Tensor, stride=1, padding=0, dilation=1, groups: int = 1,
               variant: str | None = None) -> tuple[Tensor, Tensor]:
  """(grad_x, grad_weight) of conv2d(x, weight, stride, padding, dilation, groups) for the upstream grad_out."""
  s = conv_shape(x.shape, weight.shape, stride, padding, dilation, groups)
  if tuple(grad_out.shape) != (s.bs, s.cout, s.oh, s.ow):
    raise ValueError(f"conv2d_bwd: grad_out shape {tuple(grad_out.shape)} should be {(s.bs, s.cout, s.oh, s.ow)}")
  return conv2d_bwd_input(grad_out, weight, s, variant), conv2d_bwd_weight(x, grad_out, s)

def covers_conv2d(x: Tensor, weight: Tensor) -> bool:
  """Whether conv2d runs the hand-written backward (else it is Tensor.conv2d: route Tensor.conv2d here only when
  true)."""
  return use_custom_kernels() and x.ndim == 4 and weight.ndim == 4

@dataclass(frozen=True)
class Conv2dGrad:
  """grad_fxn of conv2d (a frozen dataclass: equal across steps, so a step's schedule is reused)."""
  s: ConvShape
  def __call__(self, g: Tensor, x: Tensor, w: Tensor) -> tuple:
    return conv2d_bwd_input(g, w, self.s).cast(x.dtype), conv2d_bwd_weight(x, g, self.s).cast(w.dtype)

def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
  """F.conv2d with the hand-written backward. The forward is Tensor.conv2d's graph; other ranks, and
  TEENY_CUSTOM_KERNELS=0, are Tensor.conv2d itself."""
  if not covers_conv2d(x, weight): return x.conv2d(weight, bias, stride, padding, dilation, groups)
  s = conv_shape(x.shape, weight.shape, stride, padding, dilation, groups)
  y = x.detach().conv2d(weight.detach(), None, stride, padding, dilation, groups)
  out = with_grad(y, (x, weight), Conv2dGrad(s), f"conv_fwd_{s.name}")
  return out if bias is None else out + bias.reshape(1, -1, 1, 1)
