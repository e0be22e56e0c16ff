"""Tensor-core fragment layouts as data: which lane holds which element of each operand of one matrix instruction.

A warp (wave) computes D = A @ B + C for an M x K tile A, a K x N tile B and an M x N tile C. No lane holds a whole
matrix: lane l keeps `elems` values of each operand in registers, value i of them at the (row, col) that the layout's
map gives for (l, i). These maps are the facts a renderer needs to load fragments from memory and to store results,
and the facts a test needs to check a rendered kernel without the hardware: `simulate` plays a warp's instruction
with numpy (scatter each lane's values through the maps, multiply, gather D back), and the CUDA suite checks the same
maps against the H200's mma.sync.

  layout            lanes  M x N x K   A, B, C values a lane holds   source
  cuda_m16n8k16       32   16 x 8 x 16   8, 4, 4                     PTX ISA, "Matrix fragments for mma.m16n8k16"
  cuda_m16n8k8_tf32   32   16 x 8 x 8    4, 2, 4 (float32 in, TF32)  PTX ISA, "mma.m16n8k8" with .tf32 (opt-in: TF32)
  amd_wmma_16x16x16   32   16 x 16 x 16  16, 16, 8 (lanes 16-31 hold A and B again)   RDNA3 ISA, WMMA (gfx1100)
  amd_mfma_16x16x16   64   16 x 16 x 16  4, 4, 4                     CDNA2 ISA, v_mfma_f32_16x16x16f16 (gfx90a)

Hopper's wgmma (m64nNk16 over a warpgroup of 128 threads, operands read from shared memory through descriptors) has
no A or B fragments; its result layout is `wgmma_c`, and the descriptors' view of the swizzled tiles is in _swizzled.

Below the layouts: the TC Opt (warp instructions on fragments, or on Hopper wgmma on swizzled tiles: WGConfig) and the
SMEM Opt (exact float32 on CUDA cores, a register tile per thread), three compute steps of one builder (`_tiled`: block
tiles staged through shared memory by cp.async, the matmul's m, n and k each a group of ranges, so a convolution is an
implicit GEMM).
"""
from __future__ import annotations
import re
from dataclasses import dataclass
from typing import Callable, cast
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import TF32, ceildiv as ceil_div, getenv, prod
from teeny.uop.ops import AxisType, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import decompose, symbolic
from teeny.codegen.ranges import KernelOptError, coefficient, const_size, flatten_ranges, gate, global_ranges

Map = Callable[[int, int], tuple[int, int]]   # (lane, value index) -> (row, col) in the operand's matrix

@dataclass(frozen=True)
class TCLayout:
  name: str
  lanes: int
  m: int
  n: int
  k: int
  elems: tuple[int, int, int]   # values of A, B, C each lane holds
  a: Map                        # -> (row in M, col in K)
  b: Map                        # -> (row in K, col in N)
  c: Map                        # -> (row in M, col in N)
  inputs: tuple[DType, ...] = (dtypes.float16, dtypes.bfloat16)   # the input dtypes it multiplies

# (written with // and %, not >> and &: the TC Opt runs the maps on UOps, the lane a UOp)
def _cuda_a(lane: int, i: int) -> tuple[int, int]:
  g, t = lane // 4, lane % 4
  return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)

def _cuda_b(lane: int, i: int) -> tuple[int, int]:
  g, t = lane // 4, lane % 4
  return 2 * t + i % 2 + 8 * (i // 2), g

def _cuda_c(lane: int, i: int) -> tuple[int, int]:
  g, t = lane // 4, lane % 4
  return g + 8 * (i // 2), 2 * t + i % 2

CUDA_M16N8K16 = TCLayout("cuda_m16n8k16", 32, 16, 8, 16, (8, 4, 4), _cuda_a, _cuda_b, _cuda_c)
# TF32 (float32 rounded to a 10-bit mantissa): A's value i of lane l is row g + 8*(i%2), k t + 4*(i//2); B's is k
# t + 4*i, column g; C as above (g = l//4, t = l%4)
CUDA_M16N8K8_TF32 = TCLayout("cuda_m16n8k8_tf32", 32, 16, 8, 8, (4, 2, 4),
                             lambda l, i: (l // 4 + 8 * (i % 2), l % 4 + 4 * (i // 2)),
                             lambda l, i: (l % 4 + 4 * i, l // 4), _cuda_c, (dtypes.float32,))
# RDNA3 wave32 WMMA: lane l's A vector is row l%16 (all 16 k), its B vector column l%16; the f32 result's value i of
# lane l is row 2i + l//16, column l%16
AMD_WMMA_16X16X16 = TCLayout("amd_wmma_16x16x16", 32, 16, 16, 16, (16, 16, 8), lambda l, i: (l % 16, i),
                             lambda l, i: (i, l % 16), lambda l, i: (2 * i + l // 16, l % 16))
# CDNA2 wave64 MFMA 16x16x16: lane l holds row l%16 of A and column l%16 of B at k = 4*(l//16) + i, and the result's
# rows 4*(l//16) + i of column l%16
AMD_MFMA_16X16X16 = TCLayout("amd_mfma_16x16x16", 64, 16, 16, 16, (4, 4, 4), lambda l, i: (l % 16, 4 * (l // 16) + i),
                             lambda l, i: (4 * (l // 16) + i, l % 16), lambda l, i: (4 * (l // 16) + i, l % 16))
LAYOUTS = {t.name: t for t in (CUDA_M16N8K16, CUDA_M16N8K8_TF32, AMD_WMMA_16X16X16, AMD_MFMA_16X16X16)}

def layout_for(renderer, dtype_in: DType) -> TCLayout | None:
  """The renderer's first tensor-core layout that multiplies `dtype_in` (float32 only under TF32), or None."""
  if dtype_in == dtypes.float32 and not TF32: return None
  return next((LAYOUTS[n] for n in getattr(renderer, "tensor_cores", ()) if dtype_in in LAYOUTS[n].inputs), None)

def tiles_for(renderer, dtype_in: DType) -> bool:
  """Whether the renderer has block tiles for a matmul of `dtype_in` inputs: float32 shared-memory tiles (the SMEM Opt),
  or a tensor-core layout for the dtype (the TC Opt)."""
  if dtype_in == dtypes.float32: return bool(getattr(renderer, "smem_tiles", False))
  return layout_for(renderer, dtype_in) is not None

def fragments(mat: np.ndarray, fmap: Map, lanes: int, elems: int) -> np.ndarray:
  """(lanes, elems): the values each lane loads from `mat` through `fmap`."""
  return np.array([[mat[fmap(l, i)] for i in range(elems)] for l in range(lanes)], dtype=mat.dtype)

def simulate(t: TCLayout, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
  """D of one warp instruction, played with numpy through the layout: every lane's fragments of A, B and C are loaded
  through the maps, written back into matrices (a lane that holds a value twice must hold the same value), multiplied,
  and each lane's D values gathered through C's map and scattered into the result."""
  fa, fb, fc = (fragments(x, f, t.lanes, e) for x, f, e in ((a, t.a, t.elems[0]), (b, t.b, t.elems[1]),
                                                            (c, t.c, t.elems[2])))
  def assemble(frag: np.ndarray, fmap: Map, shape: tuple[int, int]) -> np.ndarray:
    out, seen = np.zeros(shape, np.float64), np.zeros(shape, bool)
    for l in range(frag.shape[0]):
      for i in range(frag.shape[1]):
        rc = fmap(l, i)
        if seen[rc] and out[rc] != frag[l, i]: raise AssertionError(f"{t.name}: lanes disagree on element {rc}")
        out[rc], seen[rc] = frag[l, i], True
    if not seen.all(): raise AssertionError(f"{t.name}: {int((~seen).sum())} elements no lane holds")
    return out
  d = assemble(fa, t.a, (t.m, t.k)) @ assemble(fb, t.b, (t.k, t.n)) + assemble(fc, t.c, (t.m, t.n))
  fd = fragments(d, t.c, t.lanes, t.elems[2])
  return assemble(fd, t.c, (t.m, t.n))

# ---- the TC Opt: a matmul-shaped kernel rebuilt as block tiles in shared memory and warp instructions on fragments

@dataclass(frozen=True)
class TCOp:
  """The arg of Ops.WMMA: the instruction's layout (LAYOUTS) and its input and accumulator dtypes."""
  layout: str
  dtype_in: DType
  dtype_acc: DType
  # wgmma (layout "cuda_wgmma_m64n<N>k16"): A's and B's (major, leading byte offset) in shared memory; its sources
  # are then the accumulators and the two operands' start words in shared memory, not fragment registers
  smem: tuple[tuple[str, int], tuple[str, int]] | None = None
  def __repr__(self): return f"TCOp({self.layout}, {self.dtype_in.name}->{self.dtype_acc.name})"
  @property
  def flops_per_lane(self) -> int:
    if (n := wgmma_n(self.layout)) is not None: return 2 * 64 * n * 16 // 128
    t = LAYOUTS[self.layout]
    return 2 * t.m * t.n * t.k // t.lanes

def wgmma_n(layout: str) -> int | None:
  """N of a wgmma layout name (cuda_wgmma_m64n<N>k16), None for the warp layouts of LAYOUTS."""
  m = re.fullmatch(r"cuda_wgmma_m64n(\d+)k16", layout)
  return int(m.group(1)) if m else None

def wgmma_c(lane: int, i: int) -> tuple[int, int]:
  """Where value i of lane l (0-127, a warpgroup) of wgmma's m64nNk16 float32 result lies: warp l//32 holds rows
  16*(l//32) up, each 8 columns laid out as mma.sync's m16n8 result (PTX ISA, "wgmma register fragments")."""
  w, g, t = lane // 32, (lane % 32) // 4, lane % 4
  return 16 * w + g + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * t + i % 2

@dataclass(frozen=True)
class TCConfig:
  """A block tile: bm x bn outputs per block of wm x wn warps (each warp (bm/wm) x (bn/wn)), bk of the reduce per
  shared-memory stage, `stages` stages in flight (cp.async double buffering with 2)."""
  bm: int = 128
  bn: int = 128
  bk: int = 32
  wm: int = 2
  wn: int = 4
  stages: int = 2
  @property
  def threads(self) -> int: return 32 * self.wm * self.wn   # on CUDA (32 lanes a warp; AMD's MFMA waves have 64)

  @property
  def name(self) -> str: return f"{self.bm}x{self.bn}x{self.bk}w{self.wm}x{self.wn}s{self.stages}"

@dataclass(frozen=True)
class WGConfig:
  """A block tile for Hopper's wgmma (sm_90a): bm/64 warpgroups of 128 threads, each a 64 x bn slice of the outputs
  by one m64n<bn>k16 instruction per 16 of the reduce, both operands read by the tensor cores straight from shared
  memory (128-byte swizzled tiles, bk = 64 16-bit values: one swizzle row); `stages` tiles in flight."""
  bm: int = 128
  bn: int = 256
  bk: int = 64
  stages: int = 4
  tma: bool = False   # tiles copied by the tensor memory accelerator (one thread, mbarriers; see _tiled), not cp.async
  @property
  def inflight(self) -> int:
    """wgmma groups left in flight at the end of an iteration (1 from 3 stages up: the copies then run one tile less
    ahead, see _tiled)."""
    return int(self.stages >= 3)
  @property
  def threads(self) -> int: return 128 * (self.bm // 64) + 32 * self.tma   # (TMA: and the producer warp)
  @property
  def name(self) -> str:
    return f"wg{self.bm}x{self.bn}x{self.bk}s{self.stages}" + "t" * self.tma

_TILES = ((128, 128, 2, 4), (256, 128, 4, 2), (128, 256, 2, 4), (128, 64, 2, 2), (64, 64, 2, 2))   # bm, bn, warps
_WG_TILES = ((128, 256), (128, 192), (128, 128), (256, 128), (64, 256), (64, 192), (64, 128), (64, 64))   # bm, bn
TC_CONFIGS: dict[str, TCConfig | WGConfig] = {
  **{c.name: c for c in [TCConfig(bm, bn, bk, wm, wn, st) for (bm, bn, wm, wn) in _TILES
                         for bk in (32, 64) for st in (2, 3, 4)]},
  # (16-bit tiles that fit the H200's 227 KB of shared memory a block)
  **{c.name: c for c in [WGConfig(bm, bn, 64, st, tma) for (bm, bn) in _WG_TILES for st in (2, 3, 4, 5)
                         for tma in (False, True) if (bm + bn) * 64 * 2 * st + 16 * st * tma <= 227 * 1024]}}

@dataclass
class TCMatch:
  """A kernel the TC (or SMEM) Opt can rebuild: one float32 sum over the k ranges of a product of two loads, A (read
  along its output ranges ms and along ks) and B (along ns and ks), each contiguous along k ("k") or along its output
  axes ("mn"); other GLOBAL ranges are a batch. Each group of ranges (outermost first) is one axis of the matmul, its
  values laid out by div/mod of one range over their product (a convolution is a matmul over (batch, rows, columns)
  by output channels, its sum over (input channels, kernel rows, kernel columns): an implicit GEMM)."""
  red: UOp
  ms: list[UOp]
  ns: list[UOp]
  ks: list[UOp]
  batch: list[UOp]
  a: UOp            # the INDEX A is loaded through
  b: UOp
  a_major: str      # "k" or "mn"
  b_major: str
  a_aligned: bool   # 16-byte copies (cp.async) or, where a row may start anywhere, plain loads
  b_aligned: bool
  dtype_in: DType
  @property
  def M(self) -> int: return prod(_size(r) for r in self.ms)
  @property
  def N(self) -> int: return prod(_size(r) for r in self.ns)
  @property
  def K(self) -> int: return prod(_size(r) for r in self.ks)

def _loads_of(v: UOp) -> list[UOp] | None:
  """The two loads a reduce's value multiplies: MUL(LOAD, LOAD) in 16 bits then widened, or MUL of widened loads."""
  if v.op is Ops.CAST: v = v.src[0]
  if v.op is not Ops.MUL: return None
  out = []
  for s in v.src:
    if s.op is Ops.CAST: s = s.src[0]
    # (an INDEX with a gate: a padded view, copied by masked chunks; see _chunk_gates)
    if s.op is not Ops.LOAD or s.src[0].op is not Ops.INDEX or len(s.src[0].src) not in (2, 3): return None
    out.append(s)
  return out

def _major(idx: UOp, outs: list[UOp], ks: list[UOp], vec: int) -> tuple[str, bool] | None:
  """('k', aligned) if the operand's address runs contiguously along the k ranges (flattened in the order given), ('mn',
  aligned) if along its output ranges, None if neither. A group runs contiguously when its strides are those of a
  contiguous block (innermost 1, each other the product of the sizes inside it), or when its innermost range has
  stride 1 and a size that is a multiple of `vec` (a run of vec values, 16 bytes, never crosses into the next).
  aligned: every such run starts 16-byte aligned (every other stride and the offset multiples of vec), so it can be
  one asynchronous 16-byte copy."""
  terms, const = decompose(idx.src[1])
  if any(t.op is not Ops.RANGE for t, _ in terms): return None
  coef = {t: c for t, c in terms}
  def runs(group: list[UOp]) -> list[UOp] | None:
    """The ranges whose strides the contiguous run accounts for, or None."""
    if coef.get(group[-1]) != 1: return None
    stride, block = 1, []
    for r in reversed(group):
      if coef.get(r) != stride: break
      block.append(r)
      stride *= _size(r)
    if len(block) == len(group) or _size(group[-1]) % vec == 0: return block
    return None
  if (run := runs(ks)) is not None: major = "k"
  elif (run := runs(outs)) is not None: major = "mn"
  else: return None
  return major, not (const % vec or any(t not in run and c % vec for t, c in terms))

def tc_match(ast: UOp, fma: bool = False) -> TCMatch | str:
  """The kernel's matmul shape for the TC Opt (fma=True: for the SMEM Opt, float32 only), or why it has none."""
  topo = list(ast.toposort)
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER, Ops.SPECIAL, Ops.DEFINE_LOCAL, Ops.DEFINE_REG)
         or (u.op is Ops.RANGE and u.arg[1] not in (AxisType.GLOBAL, AxisType.REDUCE)) for u in topo):
    return "the kernel has ranges other than GLOBAL and REDUCE, atomics or custom code"
  reds = [u for u in topo if u.op is Ops.REDUCE]
  if len(reds) != 1 or reds[0].arg is not Ops.ADD: return "the kernel needs exactly one sum"
  red, ks = reds[0], list(reds[0].src[1:])
  if red.dtype != dtypes.float32: return f"the sum accumulates in {red.dtype.name}; tensor cores accumulate float32"
  loads = _loads_of(red.src[0])
  if loads is None: return "the summed value is not a product of two loads"
  dts = {ld.dtype for ld in loads}
  if fma:
    if dts != {dtypes.float32}: return "shared-memory float32 tiles multiply two float32 loads"
    dt = dtypes.float32
  elif len(dts) != 1 or (dt := dts.pop()) not in (dtypes.float16, dtypes.bfloat16, dtypes.float32):
    return "tensor cores multiply float16 or bfloat16 inputs (both the same), or float32 as TF32 (TF32=1)"
  elif dt == dtypes.float32 and not TF32:
    return "float32 stays exact: tensor cores round it to TF32 only when asked (Tensor.allow_tf32 = True or TF32=1)"
  glob = global_ranges(ast)
  if any(const_size(r) is None for r in glob + ks): return "every range needs a constant size"
  ia, ib = loads[0].src[0], loads[1].src[0]
  # the output axes: GLOBAL ranges only A reads are m, those only B reads are n
  def only(x: UOp, y: UOp) -> list[UOp]: return [g for g in glob if g in x.toposort and g not in y.toposort]
  ma, nb = only(ia, ib), only(ib, ia)
  if not ma or not nb: return "the kernel is not a matmul: each operand needs an output axis of its own"
  batch = [g for g in glob if g not in ma and g not in nb]   # (an operand may be broadcast along one)
  vec = 16 // dt.itemsize
  # each group outermost first by its stride in the operand that reads it (k: try A's order, then B's)
  def order(group: list[UOp], idx: UOp) -> list[UOp] | None:
    cs = [coefficient(idx.src[1], r) for r in group]
    if any(c is None for c in cs): return None
    return [r for _, r in sorted(zip(cs, group), key=lambda x: -cast(int, x[0]))]
  ms, ns = order(ma, ia), order(nb, ib)
  for kk in (order(ks, ia), order(ks, ib)):
    if ms is None or ns is None or kk is None: continue
    if (am := _major(ia, ms, kk, vec)) is not None and (bmj := _major(ib, ns, kk, vec)) is not None: break
  else: return "an operand is contiguous along neither k nor its output axes"
  # the epilogue (every effect a store of the output element) may read the sum and other values of that element
  if any(e.op is not Ops.STORE for e in ast.src): return "every effect must be a store"
  # a gated operand (a padded view) is copied by masked chunks that value its gate per element (_chunk_gates): the gate
  # may only read the operand's own ranges
  for ix, outs in ((ia, ms), (ib, ns)):
    if len(ix.src) == 3 and any(u.op is Ops.RANGE and u not in (*outs, *kk, *batch) for u in ix.src[2].toposort):
      return "an operand's mask reads ranges of the other operand"
  # (a gated operand's chunks are masked plain loads, never cp.async)
  return TCMatch(red, ms, ns, kk, batch, ia, ib, am[0], bmj[0], am[1] and len(ia.src) == 2, bmj[1] and len(ib.src) == 2,
                 dt)

# the heuristics' tiles, largest first: the first that gives the GPU enough blocks (TC_MIN_BLOCKS) is taken, else the
# last (measured on the H200, 4096^3 float16: 128x256 and 128x128 at 260-266 TFLOP/s, 128x64 220, 64x64 177)
TC_ORDER = ("128x256x64w2x4s3", "128x128x64w2x4s3", "128x64x64w2x2s4", "64x64x64w2x2s4")
# where the renderer has wgmma (CUDA sm_90a) and the inputs are 16-bit: the candidates, and each one's speed relative
# to the best at 4096^3 on the H200 (notes/gpu_s10_*: 128x256 410-428 TFLOP/s float16 and 470-492 bfloat16 over five
# runs, 256x128 409-425 float16, 128x128 398-437 float16 and 416-432 bfloat16, 64x256 ~400, 64x128 370-385, 64x64
# 320-335; 128x192 and 64x192 taken between their neighbours); pick_config weighs them by how much of the GPU's waves
# of blocks the tile fills (wave quantisation: 96 blocks on 132 SMs leave 36 idle)
WG_ORDER = ("wg128x256x64s4", "wg256x128x64s4", "wg128x192x64s4", "wg128x128x64s4", "wg64x256x64s4",
            "wg64x192x64s4", "wg64x128x64s4", "wg64x64x64s4")
WG_SPEED = {"wg128x256x64s4": 1.0, "wg256x128x64s4": 0.97, "wg128x192x64s4": 0.96, "wg128x128x64s4": 0.92,
            "wg64x256x64s4": 0.9, "wg64x192x64s4": 0.88, "wg64x128x64s4": 0.85, "wg64x64x64s4": 0.72,
            # TMA tiles, relative to 256x128's 671-673 TFLOP/s at 4096^3 float16 (H200, kernels launched back to back,
            # each tile's time divided by its share of full waves: notes/gpu_s15_sweep_all.log). 128x192 measured 0.89
            # there but 0.69 alone in 1000x3000x2000's single wave, where its 128 blocks draw more of L2's bandwidth
            # than 256x128's 96 (26.3 against 28.6 us): 0.72 keeps 256x128 there
            "wg256x128x64s4t": 1.0, "wg128x256x64s4t": 0.95, "wg128x192x64s4t": 0.72, "wg128x128x64s4t": 0.84,
            "wg64x256x64s4t": 0.63, "wg64x192x64s4t": 0.52, "wg64x128x64s4t": 0.65, "wg64x64x64s4t": 0.54}
WG_INPUTS = (dtypes.float16, dtypes.bfloat16)   # what the wgmma tiles multiply
TC_MIN_BLOCKS = 128
WGMMA = getenv("WGMMA", 1)   # WGMMA=0: the heuristics keep to mma.sync tiles (BEAM may still try wgmma's)
TMA = getenv("TMA", 1)       # TMA=0: the heuristics' wgmma tiles are fed by cp.async, not the tensor memory accelerator

def _tma_view(ix: UOp, major: str, outs: list[UOp], ks: list[UOp], batch: list[UOp], itemsize: int) -> tuple | None:
  """An operand read through INDEX ix as the 3-d tensor map TMA copies its tiles from: (dims, byte strides of dims 1
  and 2, first element, whether dim 2 is the batch), dims innermost first: (k, out, batch) when the rows are along k,
  (out, k, batch) when along out; None where the index is not that (a sum of each group's ranges times one stride,
  the groups' ranges merging into one: a convolution's windows are not) or TMA cannot take it (strides and start
  16-byte multiples, within the map's limits)."""
  if len(ix.src) != 2: return None   # (a gated read)
  terms, off = decompose(ix.src[1])
  coef: dict[UOp, int] = {}
  for t, k in terms:
    if t.op is not Ops.RANGE or t in coef: return None
    coef[t] = k
  def flat(group: list[UOp]) -> tuple[int, int] | None:
    """(size, stride) of a group of ranges as one axis: each range's stride its inner neighbour's times its size."""
    if not group: return 1, 0
    stride = coef.pop(group[-1], 0)
    size = _size(group[-1])
    for r in reversed(group[:-1]):
      if coef.pop(r, 0) != stride * size: return None
      size *= _size(r)
    return size, stride
  fo, fk, fb = flat(outs), flat(ks), flat(batch)
  if fo is None or fk is None or fb is None or coef or off < 0: return None
  (inner, unit), (outer, ostride) = (fk, fo) if major == "k" else (fo, fk)
  if unit != 1: return None
  bsize, bstride = fb
  if bstride == 0: bsize = 1   # (read the same for every batch: a 2-d map, coordinate 0)
  strides = (ostride * itemsize, (bstride if bsize > 1 else ostride * outer) * itemsize)
  if any(s % 16 or not 0 < s < 1 << 40 for s in strides) or (off * itemsize) % 16 or \
     max(inner, outer, bsize) >= 1 << 32: return None
  return (inner, outer, bsize), strides, off, bsize > 1

def tma_views(mt: TCMatch) -> tuple[tuple, tuple] | None:
  """A's and B's tensor maps (_tma_view), or None where either cannot be one."""
  va = _tma_view(mt.a, mt.a_major, mt.ms, mt.ks, mt.batch, mt.dtype_in.itemsize)
  vb = _tma_view(mt.b, mt.b_major, mt.ns, mt.ks, mt.batch, mt.dtype_in.itemsize)
  return None if va is None or vb is None else (va, vb)

def _size(r: UOp) -> int:
  assert r.src[0].op is Ops.CONST, "tc_match checked that every range has a constant size"
  return r.src[0].arg

def _snug(mt: TCMatch, c: TCConfig | WGConfig | SmemConfig) -> bool:
  """A tile no larger than the matrix needs (a convolution's 64 output channels in a 256-wide tile waste 3/4 of it)."""
  return c.bm <= max(64, mt.M) and c.bn <= max(64, mt.N)

def _blocks(mt: TCMatch, c: TCConfig | WGConfig | SmemConfig) -> int:
  return ceil_div(mt.M, c.bm) * ceil_div(mt.N, c.bn) * prod(_size(b) for b in mt.batch)

def smem_shape(major: str, rows_out: int, bk: int, per_word: int = 2, pad: int = 4) -> tuple[int, int]:
  """(rows, 32-bit words per row) of an operand's tile in shared memory: [out][k] when it is contiguous along k, else
  [k][out]; `per_word` values a word (two 16-bit ones, or one float32), each row padded by `pad` words (16 bytes)
  against bank conflicts (wgmma's swizzled tiles: none, see _swizzled)."""
  return (rows_out, bk // per_word + pad) if major == "k" else (bk, rows_out // per_word + pad)

def _per_word(mt: TCMatch) -> int: return 4 // mt.dtype_in.itemsize

def smem_bytes(mt: TCMatch, c: TCConfig | WGConfig | SmemConfig) -> int:
  """Shared memory a tile needs: `stages` copies of A's and B's tiles."""
  if isinstance(c, WGConfig):   # (TMA: and two 8-byte mbarriers a stage)
    return (c.bm + c.bn) * c.bk * mt.dtype_in.itemsize * c.stages + 16 * c.stages * c.tma
  pw = _per_word(mt)
  (ra, wa), (rb, wb) = smem_shape(mt.a_major, c.bm, c.bk, pw), smem_shape(mt.b_major, c.bn, c.bk, pw)
  return (ra * wa + rb * wb) * 4 * c.stages

def _tile_refusal(mt: TCMatch, c: TCConfig | WGConfig | SmemConfig, renderer) -> str | None:
  """What both Opts' block tiles need: the batch fits the grid's z, and the tile's stages fit shared memory."""
  if (nb := prod(_size(b) for b in mt.batch)) > 65535: return f"a batch of {nb} exceeds the grid's 65535 blocks along z"
  if (need := smem_bytes(mt, c)) > (most := getattr(renderer, "max_shared", 48 * 1024)):
    return f"the tile needs {need} bytes of shared memory ({most} at most)"
  return None

def tc_refusal(mt: TCMatch, c: TCConfig | WGConfig, renderer) -> str | None:
  """Why tile c cannot serve the matched kernel on this renderer (None: it can): the checks apply_tc makes once it
  has picked its tile, without building the kernel (the heuristics ask before choosing TC)."""
  if isinstance(c, WGConfig):
    if not getattr(renderer, "wgmma", False):
      return f"{type(renderer).__name__} has no wgmma (CUDA for sm_90a: Hopper GPUs)"
    if mt.dtype_in not in WG_INPUTS: return "wgmma tiles multiply float16 or bfloat16 inputs"
    if c.tma and tma_views(mt) is None:
      return ("TMA tiles read each operand as a strided 3-d view (k, rows, batch) with 16-byte aligned rows; these "
              "operands are not (use the tile without 't')")
    return _tile_refusal(mt, c, renderer)
  if layout_for(renderer, mt.dtype_in) is None:
    return f"{type(renderer).__name__} has no tensor cores for {mt.dtype_in.name}" + \
      (" (TF32 is off: Tensor.allow_tf32 = True or TF32=1)" if mt.dtype_in == dtypes.float32 and not TF32 else "")
  return _tile_refusal(mt, c, renderer)

def pick_config(mt: TCMatch, renderer=None) -> TCConfig | WGConfig:
  """The heuristics' tile. Where the renderer has wgmma and the inputs are 16-bit: the WG_ORDER tile (its TMA form
  where the operands are tensor-map views) with the best WG_SPEED times wave use (sm_count SMs). Otherwise the first
  of TC_ORDER whose shared memory fits the renderer's and that gives TC_MIN_BLOCKS blocks, else the smallest of them
  that fits (where none does: the largest mma.sync tile of TC_CONFIGS that fits)."""
  most = getattr(renderer, "max_shared", 48 * 1024)
  wg = WGMMA and getattr(renderer, "wgmma", False) and mt.dtype_in in WG_INPUTS
  # (the tiles fed by the tensor memory accelerator, where the operands are views it can copy)
  order = [n + "t" for n in WG_ORDER] if wg and TMA and tma_views(mt) is not None else list(WG_ORDER)
  if wg and (cands := [TC_CONFIGS[n] for n in order if smem_bytes(mt, TC_CONFIGS[n]) <= most]):
    # the tile with the most useful work per block slot: its speed, times the share of its waves' blocks' outputs
    # that lie inside the matrix (ties: the earlier in WG_ORDER)
    sms = getattr(renderer, "sm_count", 132)
    def score(c: TCConfig | WGConfig) -> float:
      waves = ceil_div(_blocks(mt, c), sms)
      return WG_SPEED[c.name] * mt.M * mt.N * prod(_size(b) for b in mt.batch) / (waves * sms * c.bm * c.bn)
    return max(cands, key=score)
  fits = [c for c in (TC_CONFIGS[n] for n in TC_ORDER) if smem_bytes(mt, c) <= most and _snug(mt, c)] or \
    sorted((c for c in TC_CONFIGS.values() if isinstance(c, TCConfig) and smem_bytes(mt, c) <= most),
           key=lambda c: -c.bm * c.bn) or [TC_CONFIGS[TC_ORDER[-1]]]
  return next((c for c in fits if _blocks(mt, c) >= TC_MIN_BLOCKS), fits[-1])

def apply_tc(ast: UOp, arg, renderer) -> UOp:
  """The TC Opt (see codegen/opt.py): arg is a TC_CONFIGS name, or None for the heuristics' pick (pick_config)."""
  layouts = getattr(renderer, "tensor_cores", ())
  if not layouts:
    raise KernelOptError(f"TC: {type(renderer).__name__} has no tensor cores teeny can render (CUDA mma.sync, AMD "
                         "WMMA on gfx11, MFMA on gfx90a/gfx94x)")
  mt = tc_match(ast)
  if isinstance(mt, str): raise KernelOptError(f"TC: {mt}")
  if arg is None: cfg = pick_config(mt, renderer)
  elif arg in TC_CONFIGS: cfg = TC_CONFIGS[arg]
  else: raise KernelOptError(f"TC: unknown block tile {arg!r}; the tiles are {list(TC_CONFIGS)}")
  if (why := tc_refusal(mt, cfg, renderer)) is not None: raise KernelOptError(f"TC: {why}")
  if isinstance(cfg, WGConfig):
    wcfg = cfg
    return _tiled(ast, mt, cfg.bm, cfg.bn, cfg.bk, cfg.stages, cfg.threads, renderer, lambda t: _wgmma_tiles(t, wcfg),
                  swizzle=True, ahead=cfg.stages - 1 - (0 if cfg.tma else cfg.inflight), tma=cfg.tma)
  lay = cast(TCLayout, layout_for(renderer, mt.dtype_in))   # (tc_refusal checked there is one)
  tcfg = cfg
  return _tiled(ast, mt, cfg.bm, cfg.bn, cfg.bk, cfg.stages, cfg.wm * cfg.wn * lay.lanes, renderer,
                lambda t: _warp_tiles(t, tcfg, lay))

# ---- the SMEM Opt: a float32 matmul on CUDA cores, block tiles staged the same way, a register tile per thread

@dataclass(frozen=True)
class SmemConfig:
  """A block tile of bm x bn float32 outputs, each thread a tm x tn register tile of them (rows ty + (bm/tm)*i, columns
  tx + (bn/tn)*j: neighbouring threads read neighbouring words of shared memory and store neighbouring outputs), bk of
  the reduce per shared-memory stage, `stages` in flight."""
  bm: int = 128
  bn: int = 128
  bk: int = 16
  tm: int = 8
  tn: int = 8
  stages: int = 2
  @property
  def threads(self) -> int: return (self.bm // self.tm) * (self.bn // self.tn)
  @property
  def name(self) -> str: return f"{self.bm}x{self.bn}x{self.bk}t{self.tm}x{self.tn}s{self.stages}"

_FMA_TILES = ((128, 128, 8, 8), (128, 64, 8, 4), (64, 128, 4, 8), (64, 64, 4, 4))   # bm, bn, tm, tn: 256 threads
SMEM_CONFIGS = {c.name: c for c in [SmemConfig(bm, bn, bk, tm, tn, st) for (bm, bn, tm, tn) in _FMA_TILES
                                    for bk in (8, 16, 32) for st in (2, 3)]}
# (H200, 4096^3: 128x128x16t8x8s3 42.3 TFLOP/s, 128x64x16t8x4s3 41.4, 64x64x32t4x4s3 37.1, 64x64x16t4x4s3 35.1; the
# bench's 32x64x56x56 3x3 convolution, .devrun/cf.py: 128x64x32t8x4s3 0.252 ms against 128x64x16t8x4s3's 0.266, and
# for its weight gradient (576 x 64, 128 GEMMs) 64x64x32t4x4s3 0.257 against 128x64x16t8x4s3's 0.334)
SMEM_ORDER = ("128x128x16t8x8s3", "128x64x32t8x4s3", "64x64x32t4x4s3")
SMEM_MIN_WORK = 64 * 64 * 64   # smaller products keep the plain register tiles

def smem_refusal(mt: TCMatch, c: SmemConfig, renderer) -> str | None:
  """Why tile c cannot serve the matched float32 kernel on this renderer (None: it can)."""
  if not getattr(renderer, "smem_tiles", False):
    return f"{type(renderer).__name__} has no shared-memory float32 tiles (CUDA only: cp.async copies)"
  return _tile_refusal(mt, c, renderer)

def pick_smem_config(mt: TCMatch) -> SmemConfig:
  """The heuristics' tile: the first of SMEM_ORDER that gives the GPU TC_MIN_BLOCKS blocks, preferring one that divides
  the matrix (no block computes outputs past its edge: the weight gradient's 576 rows in 128-row tiles left a tenth of
  the last one's work, and its 64-row tiles ran 1.3x faster), else the smallest."""
  fits = [c for c in (SMEM_CONFIGS[n] for n in SMEM_ORDER) if _snug(mt, c)] or [SMEM_CONFIGS[SMEM_ORDER[-1]]]
  enough = [c for c in fits if _blocks(mt, c) >= TC_MIN_BLOCKS]
  return next((c for c in enough if mt.M % c.bm == 0 and mt.N % c.bn == 0), enough[0] if enough else fits[-1])

def apply_smem(ast: UOp, arg, renderer) -> UOp:
  """The SMEM Opt (see codegen/opt.py): arg is a SMEM_CONFIGS name, or None for the heuristics' pick."""
  mt = tc_match(ast, fma=True)
  if isinstance(mt, str): raise KernelOptError(f"SMEM: {mt}")
  if arg is None: cfg = pick_smem_config(mt)
  elif arg in SMEM_CONFIGS: cfg = SMEM_CONFIGS[arg]
  else: raise KernelOptError(f"SMEM: unknown block tile {arg!r}; the tiles are {list(SMEM_CONFIGS)}")
  if (why := smem_refusal(mt, cfg, renderer)) is not None: raise KernelOptError(f"SMEM: {why}")
  return _tiled(ast, mt, cfg.bm, cfg.bn, cfg.bk, cfg.stages, cfg.threads, renderer, lambda t: _thread_tiles(t, cfg))

# ---- the builder both share

@dataclass
class _Tiles:
  """What a tile's compute step sees: the matched kernel (batch flattened), its block's thread index, shared memory
  (A's then B's tile per stage: sa, sb (rows, words a row)) and the language's statements."""
  mt: TCMatch
  tid: UOp
  smem: UOp
  sa: tuple[int, int]
  sb: tuple[int, int]
  stage_words: int
  pw: int
  custom: Callable[..., UOp]
  # (TMA tiles: the k loop, whose first iteration's first instruction overwrites the accumulators instead of adding to
  # them: no zeroing before the loop; zeroed accumulators merged at a loop exit were among what made ptxas serialise
  # the wgmma instructions, see _tma_pipeline)
  kt: UOp | None = None

def _ridx(r: UOp, w) -> UOp:
  return UOp(Ops.INDEX, r.dtype, (r, w if isinstance(w, UOp) else UOp.const(dtypes.index, w)))

def _flattened(ast: UOp, mt: TCMatch) -> tuple[UOp, UOp, UOp, UOp, UOp, UOp, UOp, list[UOp]]:
  """The kernel with each group of ranges one range (batch, m, n: GLOBAL; k: REDUCE), their values by div/mod of it:
  (ast, m, n, k, the sum, A's INDEX, B's INDEX, [the batch range] or [])."""
  new: dict[str, UOp] = {}
  for name, group, kind in (("batch", mt.batch, AxisType.GLOBAL), ("m", mt.ms, AxisType.GLOBAL),
                            ("n", mt.ns, AxisType.GLOBAL), ("k", mt.ks, AxisType.REDUCE)):
    if not group: continue
    # a fresh axis id, past the builder's (0-4): an existing one (another group's, or a grid axis of the builder's) of
    # the same size and kind would be the same node
    ast, flat = flatten_ranges(ast, group, kind, max(5, 1 + max(u.arg[0] for u in ast.toposort if u.op is Ops.RANGE)))
    new[name] = cast(UOp, flat)
  red, = [u for u in ast.toposort if u.op is Ops.REDUCE]
  loads = _loads_of(red.src[0])
  assert loads is not None and len(loads) == 2, "flattening keeps the product of two loads"
  m = new["m"]
  ia, ib = (loads[0].src[0], loads[1].src[0]) if m in loads[0].src[0].toposort else (loads[1].src[0], loads[0].src[0])
  return ast, m, new["n"], new["k"], red, ia, ib, [new["batch"]] if "batch" in new else []

def _swizzled(major: str, bk: int, row: UOp, col: UOp) -> UOp:
  """Word offset in an operand's tile of 16-byte chunk `col` of tile row `row` (smem_shape's rows and chunks) in
  wgmma's 128-byte swizzled layout (PTX ISA, "shared memory matrix layout"): 8 rows of 128 bytes make a 1024-byte
  atom, and chunk c of row r of an atom is stored at chunk c ^ (r % 8). [out][k] tiles (bk = 64: one atom row per
  out) stack atoms along out; [k][out] tiles are atoms of 64 outs by 8 k, stacked along k (1024 bytes apart, the
  descriptor's stride offset) and then along out (bk * 128 bytes apart, its leading offset)."""
  if major == "k": return (row // 8) * 256 + (row % 8) * 32 + (col ^ (row % 8)) * 4
  return (col // 8) * (bk * 32) + (row // 8) * 256 + (row % 8) * 32 + ((col % 8) ^ (row % 8)) * 4

def _chunk_gates(ix: UOp, groups: list[tuple[list[UOp], UOp]], contig: int, vec: int) -> list[UOp]:
  """For an operand read through a gated INDEX `ix` (a padded view: its gate is in the kernel's own ranges), the gate
  at each of the `vec` values of a 16-byte chunk: each group's ranges (outermost first) valued by div/mod of the
  flattened coordinate the chunk starts at (`groups`: (ranges, coordinate)), value e of the chunk e further along
  group `contig` (the contiguous one). Where a chunk never crosses that group's innermost range (its size a multiple of
  vec: tc_match's usual contiguity), only that range moves: one div/mod chain for all vec values."""
  def values(rngs: list[UOp], flat: UOp) -> dict[UOp, UOp]:
    out, stride = {}, 1
    for r in reversed(rngs):
      q = flat if stride == 1 else flat // stride
      out[r] = q if r is rngs[0] else q % _size(r)
      stride *= _size(r)
    return out
  sub: dict[UOp, UOp] = {}
  for rngs, flat in groups: sub.update(values(rngs, flat))
  rngs, flat = groups[contig]
  if _size(rngs[-1]) % vec == 0: return [ix.src[2].substitute({**sub, rngs[-1]: sub[rngs[-1]] + e}) for e in range(vec)]
  return [ix.src[2].substitute({**sub, **values(rngs, flat + e)}) for e in range(vec)]

def _tiled(ast: UOp, mt: TCMatch, BM: int, BN: int, BK: int, S: int, threads: int, renderer,
           compute: Callable[[_Tiles], tuple[UOp, Callable[[UOp, UOp], list[UOp]], list[tuple[int, UOp, UOp]],
                                             list[UOp]]],
           swizzle: bool = False, ahead: int | None = None, tma: bool = False) -> UOp:
  """A matmul-shaped kernel as BM x BN block tiles: the grid's blocks along n (x), m (y) and the batch (z), `threads`
  threads a block; per iteration of the k loop one BK slice of A and B lands in one of S shared-memory stages (cp.async
  on CUDA, S-1 tiles in flight). `compute(tiles)` gives the accumulator register array, the effects that add one stage
  into it, and where each accumulator value belongs in the block tile (index, row, column); the original stores
  follow for each, after `compute`'s effects for the end of the loop. swizzle: the tiles in wgmma's layout
  (_swizzled), read by the tensor cores through the async proxy; ahead: tiles copied ahead (S-1 unless given).
  tma: the tiles copied by the tensor memory accelerator (the operands as tensor maps, _tma_view, in the same
  swizzled layout) from a producer warp, synchronised by mbarriers (_tma_pipeline), and the output staged through
  shared memory where it can be (_staged_epilogue)."""
  lang = getattr(renderer, "lang", "CUDA")
  cuda = lang == "CUDA"
  pw = _per_word(mt)             # values per 32-bit word of shared memory and registers
  vec = 16 // mt.dtype_in.itemsize   # values per 16-byte copy
  M, N, K = mt.M, mt.N, mt.K
  # sizes that are not multiples of the tile: the copies zero-fill what lies outside (cp.async with fewer source
  # bytes), and the stores are masked
  ragged = bool(M % BM or N % BN or K % BK)
  idx = dtypes.index
  c = lambda v: UOp.const(idx, v)
  bn = UOp.range(ceil_div(N, BN), 0, AxisType.GLOBAL)
  bm = UOp.range(ceil_div(M, BM), 1, AxisType.GLOBAL)
  ast_b, mr, nr, kr, red, ia, ib, batch = _flattened(ast, mt)
  mt2 = TCMatch(red, [mr], [nr], [kr], [], ia, ib, mt.a_major, mt.b_major, mt.a_aligned, mt.b_aligned, mt.dtype_in)
  tid = UOp.range(threads, 3, AxisType.LOCAL)
  nk = ceil_div(K, BK)
  kt = UOp.range(nk, 4, AxisType.LOOP)
  # shared memory: S copies of A's then B's tile (smem_shape)
  pad = 0 if swizzle else 4
  sa, sb = smem_shape(mt2.a_major, BM, BK, pw, pad), smem_shape(mt2.b_major, BN, BK, pw, pad)
  stage_words = sa[0] * sa[1] + sb[0] * sb[1]
  # (TMA: then each stage's two mbarriers, 8 bytes each: full ones from word stage_words*S, empty ones 2S words on)
  smem = UOp(Ops.DEFINE_LOCAL, dtypes.uint32.ptr(), (), (0, stage_words * S + 4 * S * tma))
  tags = iter(range(1 << 30))
  def custom(fmt: str, *src: UOp) -> UOp:
    """A statement of the renderer's language as an effect; the tag keeps two equal statements two nodes."""
    return UOp(Ops.CUSTOM, dtypes.void, src, ((lang, fmt), ("tag", next(tags))))
  def copies(stage: UOp, ktile: UOp, guard: UOp | None) -> list[UOp]:
    """cp.async of one k tile of A and B into a stage: 16 bytes (vec values) per copy, rows along the contiguous
    axis."""
    out = []
    base = stage * stage_words
    for ix, major, aligned, rows_out, start, axis, size, (nrows, stride), off, orig, outs in (
        (mt2.a, mt2.a_major, mt2.a_aligned, BM, bm * BM, mr, M, sa, 0, mt.a, mt.ms),
        (mt2.b, mt2.b_major, mt2.b_aligned, BN, bn * BN, nr, N, sb, sa[0] * sa[1], mt.b, mt.ns)):
      per_row = (BK if major == "k" else rows_out) // vec
      chunks = nrows * per_row
      for j in range(ceil_div(chunks, threads)):
        ch = tid + j * threads
        row, col = ch // per_row, ch % per_row
        if major == "k": (o, kx), lim = (start + row, ktile * BK + col * vec), (axis, size, kr, K)
        else: (o, kx), lim = (start + col * vec, ktile * BK + row), (kr, K, axis, size)
        pos = {axis: o, kr: kx}
        gidx = ix.src[1].substitute(pos)
        srcs = [smem, base + off + (_swizzled(major, BK, row, col) if swizzle else row * stride + col * 4), None]
        # unaligned rows: plain loads (8 of 16 bits, or 4 float32), written to shared memory as 4 words (same
        # arguments)
        fn = "teeny_cp_async16" if aligned and cuda else "teeny_copy16" if pw == 2 else "teeny_copy16_f32"
        fmt = fn + "({0}, {1}, {2}, 16)"
        if ragged:   # how many of the chunk's values exist: 0 past a row's end, fewer at a ragged contiguous axis
          whole, part = lim[:2], lim[2:]
          left = (UOp.const(idx, part[1]) - pos[part[0]]).alu(Ops.MIN, c(vec)).alu(Ops.MAX, c(0))
          n = (pos[whole[0]] < whole[1]).where(left, c(0))
          gidx = (n > 0).where(gidx, c(0))
          srcs.append(n * mt2.dtype_in.itemsize)
          fmt = fn + "({0}, {1}, {2}, {3})"
        if len(orig.src) == 3:
          # a padded view: each value read where the gate holds there (and where it exists), by a bit mask
          groups = [(outs, o), (mt.ks, kx)] + ([(mt.batch, batch[0])] if mt.batch else [])
          gates = _chunk_gates(orig, groups, 1 if major == "k" else 0, vec)
          if ragged: gates = [g.alu(Ops.AND, c(e * mt2.dtype_in.itemsize) < srcs[3]) for e, g in enumerate(gates)]
          mask = gates[0].where(c(1), c(0))
          for e, g in enumerate(gates[1:], 1): mask = mask + g.where(c(1 << e), c(0))
          srcs[3:] = [mask]
          gidx = (mask > 0).where(gidx, c(0))
          fmt = ("teeny_copy16m" if pw == 2 else "teeny_copy16m_f32") + "({0}, {1}, {2}, {3})"
        srcs[2] = UOp(Ops.INDEX, ix.dtype, (ix.src[0], gidx))
        conds = [x for x in (guard, ch < chunks if chunks % threads else None) if x is not None]
        cond = conds[0] if len(conds) == 1 else conds[0].alu(Ops.AND, conds[1]) if conds else None
        if cond is not None:
          fmt = f"if ({{{len(srcs)}}}) " + fmt
          srcs.append(cond)
        out.append(custom(fmt + ";", *srcs))
    return out
  fresh = tma and nk > 0   # (the first instruction overwrites the accumulators)
  acc, body, outputs, after = compute(_Tiles(mt2, tid, smem, sa, sb, stage_words, pw, custom, kt if fresh else None))
  eff: list[UOp] = [] if fresh else [_ridx(acc, i).store(UOp.const(dtypes.float32, 0.0)) for i in range(acc.arg[1])]
  if tma:
    pid = 1 + max(u.arg[0] for u in ast_b.toposort if u.op is Ops.RANGE)
    eff += _tma_pipeline(mt2, batch, BM, BN, BK, S, threads, tid, smem, stage_words, sa[0] * sa[1], kt, nk, bm, bn,
                         custom, body, UOp.range((tid >= threads - 32).where(c(nk), c(0)), pid, AxisType.LOOP))
  else: eff += _copy_pipeline(S, ahead, nk, kt, copies, custom, cuda, swizzle, body)
  eff += after   # (after the loop: e.g. waiting for the tensor cores' last group)
  # the epilogue: the original store for each accumulator value, at its output element (TMA tiles, where the output
  # is rows of 16-byte multiples: staged through shared memory, see _staged_epilogue)
  ragged = bool(M % BM or N % BN)
  def final(e: UOp, mrow: UOp, ncol: UOp) -> UOp:
    """A store (or value) of the epilogue at an output element; where tiles pass the matrix, its global accesses
    gated to the elements inside (no store, no epilogue loads past it)."""
    if not ragged: return e
    ok = (mrow < M).alu(Ops.AND, ncol < N)
    return e.substitute({x: gate(x, ok) for x in e.toposort if x.op is Ops.INDEX and x.src[0].op is Ops.DEFINE_GLOBAL})
  if tma and (st := _stageable(ast_b, mr, nr, N, batch)) is not None and BM * (BN * st[0] + 16) <= stage_words * S * 4:
    eff += _staged_epilogue(st, ast_b.src[0], red, acc, outputs, mr, nr, bm, bn, BM, BN, M, N, threads - 32, tid, smem,
                            stage_words * S * 4, custom, final)
  else:
    for i, row, col in outputs:
      mrow, ncol = bm * BM + row, bn * BN + col
      val = _ridx(acc, i).load(dtypes.float32)
      eff += [final(e.substitute({red: val, mr: mrow, nr: ncol}), mrow, ncol) for e in ast_b.src]
  return graph_rewrite(UOp(Ops.SINK, dtypes.void, tuple(eff), ast.arg), symbolic)

def _stageable(ast: UOp, mr: UOp, nr: UOp, N: int, batch: list[UOp]) -> tuple[int, int] | None:
  """(bytes a value, values a 16-byte chunk) where the kernel's one store writes rows of the output that 16-byte
  chunks can copy: its index ldc*m + n (+ a batch's offset), each row's start 16-byte aligned, N a whole number of
  chunks; None otherwise. (The staged tile must also fit the pipeline's shared memory: the caller checks.)"""
  if len(ast.src) != 1 or (st := ast.src[0]).op is not Ops.STORE or len(st.src[0].src) != 2: return None
  size = st.src[1].dtype.itemsize
  if st.src[1].dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32) or N % (16 // size): return None
  terms, off = decompose(st.src[0].src[1])
  coef = dict(terms)
  if len(coef) != len(terms) or coef.get(nr) != 1 or mr not in coef or set(coef) - {mr, nr, *batch}: return None
  if any(k * size % 16 for r, k in coef.items() if r is not nr) or off * size % 16: return None
  return size, 16 // size

_STS = {dtypes.float16: "f16", dtypes.bfloat16: "bf16", dtypes.float32: "f32"}

def _staged_epilogue(st: tuple[int, int], store: UOp, red: UOp, acc: UOp, outputs: list, mr: UOp, nr: UOp, bm: UOp,
                     bn: UOp, BM: int, BN: int, M: int, N: int, consumers: int, tid: UOp, smem: UOp, room: int,
                     custom, final) -> list[UOp]:
  """The consumers write each output's final value (the epilogue's value, in the output's dtype) into a row-major tile
  in shared memory (free once every consumer is past the k loop: every copy landed, every wgmma group waited for; a
  barrier of the consumers alone says so, the producer warp having left), rows padded by 16 bytes (a fragment's 8
  rows fall on different banks); then, after a second such barrier, copy it out in 16-byte chunks, a row's chunks by
  neighbouring threads: whole cache lines instead of the fragments' scattered 2- or 4-byte stores (4096^3 float16: a
  quarter of the kernel's time went to them)."""
  size, vec = st
  pitch = BN * size + 16
  assert BM * pitch <= room, "the staged tile fits the pipeline's shared memory"
  # every consumer is past its last wgmma first: the tile overwrites stages another warpgroup may still be reading
  sync = custom(f'asm volatile("bar.sync 1, {consumers};" ::: "memory");', smem)
  out: list[UOp] = [sync]
  for i, row, col in outputs:
    mrow, ncol = bm * BM + row, bn * BN + col
    v = final(store.substitute({red: _ridx(acc, i).load(dtypes.float32), mr: mrow, nr: ncol}).src[1], mrow, ncol)
    # (under the output's bounds even where the tile lies inside: unconditional, ptxas hoisted the accumulators'
    # conversions above the last wgmma wait and serialised every wgmma instruction to allow it)
    out.append(custom(f"if ({{3}}) teeny_sts_{_STS[v.dtype]}({{0}}, {{1}}, {{2}});", smem, row * pitch + col * size, v,
                      (mrow < M).alu(Ops.AND, ncol < N)))
  out.append(custom(f'asm volatile("bar.sync 1, {consumers};" ::: "memory");', smem))   # (and the tile is whole)
  per_row = BN // vec
  chunks = BM * per_row
  for j in range(ceil_div(chunks, consumers)):
    ch = tid + j * consumers
    r, cc = ch // per_row, ch % per_row
    mrow, ncol = bm * BM + r, bn * BN + cc * vec
    ok = (mrow < M).alu(Ops.AND, ncol < N)
    if chunks % consumers: ok = ok.alu(Ops.AND, ch < chunks)
    at = store.src[0].src[1].substitute({mr: mrow, nr: ncol})
    dst = UOp(Ops.INDEX, store.src[0].dtype, (store.src[0].src[0], at))
    out.append(custom("if ({3}) teeny_copy_out16({0}, {1}, {2});", dst, smem, r * pitch + cc * 16, ok))
  return out

def _copy_pipeline(S: int, ahead: int | None, nk: int, kt: UOp, copies, custom, cuda: bool, swizzle: bool,
                   body) -> list[UOp]:
  """The k loop with tiles copied by every thread (cp.async on CUDA), ordered by the block's barrier."""
  c = lambda v: UOp.const(dtypes.index, v)
  eff: list[UOp] = []
  # a pipeline of S stages: the first A = ahead copies before the loop; in iteration kt, once tile kt has landed and
  # every thread is past iteration kt-1, the copy of tile kt+A goes into the stage tile kt+A-S used (A = S-1: the
  # stage of kt-1, whose compute every thread has finished; wgmma with a group left in flight: A = S-2)
  # (plain copies land at once: no commit groups to wait for)
  A = S - 1 if ahead is None else ahead
  assert 1 <= A <= S - 1, "at least one tile in flight, and never into a stage being read"
  commit = lambda *src: [custom('asm volatile("cp.async.commit_group;");', *src)] if cuda else []
  for p in range(A): eff += copies(c(p), c(p), None if p < nk else UOp.const(dtypes.bool, False)) + commit()
  if cuda: eff += [custom(f'asm volatile("cp.async.wait_group {A - 1};");', kt)]
  # the tensor cores read wgmma's operands through the async proxy: the copies' writes are ordered before them by a
  # proxy fence in each thread, then the barrier
  if swizzle: eff += [custom('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");', kt)]
  eff += [bar := UOp(Ops.BARRIER, dtypes.void, (kt,), 0)]
  nxt = kt + A
  eff += copies(nxt % S, nxt, nxt < nk) + commit(kt)
  eff += body(kt % S, bar)
  eff[-1] = eff[-1].end(kt)
  return eff

def _tma_pipeline(mt2: TCMatch, batch: list[UOp], BM: int, BN: int, BK: int, S: int, threads: int, tid: UOp,
                  smem: UOp, stage_words: int, a_words: int, kt: UOp, nk: int, bm: UOp, bn: UOp, custom,
                  body, kp: UOp) -> list[UOp]:
  """The k loop with tiles copied by the tensor memory accelerator (see _tiled), warp-specialised: the block's last
  warp is the producer (its first thread issues every copy, in its own loop kp over the tiles), the warpgroups before
  it the consumers (the loop kt: wait for a tile, compute on it). Thread 0 initialises the mbarriers. Tile t goes into
  stage t % S, whose full barrier's phase t // S completes with its bytes, and whose empty barrier's phase t // S
  completes once every consumer warp has finished computing on it (in iteration t + 1, after the tensor cores' wait
  leaves at most one group, iteration t + 1's, in flight); the producer waits for that before copying tile t + S. The
  consumers' loop holds no branch but the waits' own (each statement is predicated instead): ptxas serialises wgmma
  instructions (a wait for each before the next) when the loop around them holds divergent code."""
  idx = dtypes.index
  c = lambda v: UOp.const(idx, v)
  views = tma_views(TCMatch(mt2.red, mt2.ms, mt2.ns, mt2.ks, batch, mt2.a, mt2.b, mt2.a_major, mt2.b_major,
                            mt2.a_aligned, mt2.b_aligned, mt2.dtype_in))
  assert views is not None, "tc_refusal checked the operands are tensor-map views"
  full = lambda s: stage_words * S + 2 * s
  empty = lambda s: stage_words * S + 2 * S + 2 * s
  maps, boxes = [], []
  for i, (ix, major, rows_out, start, (dims, strides, off, batched)) in enumerate(
      ((mt2.a, mt2.a_major, BM, bm * BM, views[0]), (mt2.b, mt2.b_major, BN, bn * BN, views[1]))):
    box = (BK, rows_out, 1) if major == "k" else (64, BK, 1)
    maps.append(UOp(Ops.TENSOR_MAP, dtypes.void, (ix.src[0],), (i, dims, strides, box, off)))
    # (a [k][out] tile is rows_out/64 boxes of 64 outs, bk*128 bytes apart: _swizzled's atoms)
    boxes.append([(i * a_words + j * BK * 32, start + 64 * j) for j in range(rows_out // 64)] if major == "mn"
                 else [(i * a_words, start)])
  tx = (BM + BN) * BK * mt2.dtype_in.itemsize
  bz = batch[0] if batch else c(0)
  def load(tile: UOp, cond: UOp) -> UOp:
    """Where cond holds (the producer thread): tile's copies into its stage, completing on its full barrier."""
    stage = tile % S
    srcs: list[UOp] = [smem, cond, c(full(0)) + stage * 2, stage * stage_words]
    code = ["teeny_mbar_expect({0}, {2}, %d, {1});" % tx]
    for i, (mp, (ix, major)) in enumerate(zip(maps, ((mt2.a, mt2.a_major), (mt2.b, mt2.b_major)))):
      bb = views[i][3]
      for w, o in boxes[i]:
        k0, o0 = tile * BK, o
        cs = (k0, o0) if major == "k" else (o0, k0)
        n = len(srcs)
        srcs += [mp, cs[0], cs[1], bz if bb else c(0)]
        code.append(f"teeny_tma3({{0}}, {{3}} + {w}, &{{{n}}}, {{{n + 1}}}, {{{n + 2}}}, {{{n + 3}}}, {{2}}, {{1}});")
    # (no C branches in the k loop: the helpers are predicated, see render/cuda.py)
    return custom(" ".join(code), *srcs)
  releases = (threads - 32) // 32   # consumer warps: each one's lane 0 releases a stage
  inits = " ".join(f"teeny_mbar_init({{0}}, {full(s)}, 1); teeny_mbar_init({{0}}, {empty(s)}, {releases});"
                   for s in range(S))
  init = custom(f'if ({{1}} == 0) {{{{ {inits} asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }}}}',
                smem, tid)
  eff: list[UOp] = [init, UOp(Ops.BARRIER, dtypes.void, (init,), 0)]
  # the producer: tile kp into its stage once the consumers released the tile before it there (for the first S
  # tiles the wait is for the phase before the first: done at once)
  prod = tid.eq(threads - 32)
  eff.append(custom("teeny_mbar_wait({0}, {2}, {3}, {1});", smem, prod, c(empty(0)) + kp % S * 2, (kp // S + 1) % 2))
  eff.append(load(kp, prod))
  eff[-1] = eff[-1].end(kp)
  # the producer warp is done: it leaves (wgmma's instructions, the epilogue's included, are for whole warpgroups,
  # and it is a warpgroup's first warp alone)
  eff.append(custom("if ({1}) {{ return; }}", smem, tid >= threads - 32))
  # the consumers
  wait = custom("teeny_mbar_wait({0}, {1}, {2}, 1);", smem, c(full(0)) + kt % S * 2, kt // S % 2)
  eff += [wait] + body(kt % S, wait)
  # a warp is done with the previous tile's stage (the tensor cores' wait above completed its group): its lane 0 says
  # so (the wait is warp-wide)
  rel = (kt > 0).alu(Ops.AND, (tid % 32).eq(0))
  eff.append(custom("teeny_mbar_arrive({0}, {2}, {1});", smem, rel, c(empty(0)) + (kt + S - 1) % S * 2))
  eff[-1] = eff[-1].end(kt)
  return eff

def _warp_tiles(t: _Tiles, cfg: TCConfig, lay: TCLayout):
  """TC: each warp a (bm/wm) x (bn/wn) tile of lay.m x lay.n instruction blocks; fragments from shared memory (CUDA
  16-bit: ldmatrix; otherwise a word at a time through the layout's maps), one WMMA per block and k step."""
  mt2, tid, smem, sa, sb, pw, custom = t.mt, t.tid, t.smem, t.sa, t.sb, t.pw, t.custom
  ldsm = lay.name == "cuda_m16n8k16"
  wtm, wtn = cfg.bm // cfg.wm, cfg.bn // cfg.wn
  tm, tn, kks = wtm // lay.m, wtn // lay.n, cfg.bk // lay.k
  assert (tn % 2 == 0 or not ldsm) and wtm % lay.m == 0, "a warp's tile: 16-row blocks of A by (pairs of) 8 of B"
  ea, eb, ec = lay.elems[0] // pw, lay.elems[1] // pw, lay.elems[2]   # words of A and B, floats of C, per lane
  lane, warp = tid % lay.lanes, tid // lay.lanes
  wm, wn = warp // cfg.wn, warp % cfg.wn
  c = lambda v: UOp.const(dtypes.index, v)
  acc = UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (1, tm * tn * ec))
  areg = UOp(Ops.DEFINE_REG, dtypes.uint32.ptr(), (), (2, tm * ea * kks))
  breg = UOp(Ops.DEFINE_REG, dtypes.uint32.ptr(), (), (3, tn * eb * kks))
  def body(stage: UOp, bar: UOp) -> list[UOp]:
    """Fill the fragment registers of every k step of a stage from shared memory, then one WMMA per output block:
    CUDA with ldmatrix (four 8x8 matrices per instruction, lane 8q+r giving the address of row r of matrix q; .trans
    where the tile is stored [k][m|n]), elsewhere a word (two values along k) at a time through the layout's maps."""
    out = []
    base = stage * t.stage_words
    q, r = lane // 8, lane % 8
    def word(major: str, shape: tuple[int, int], off: int, row: UOp, k: UOp) -> UOp:
      """The 32-bit word of values (row, k) and (row, k+1) of a 16-bit tile, k even; of value (row, k) of a float32
      one."""
      at = lambda w: UOp(Ops.INDEX, smem.dtype, (smem, w)).load(dtypes.uint32)
      if pw == 1: return at(base + off + (row * shape[1] + k if major == "k" else k * shape[1] + row))
      if major == "k": return at(base + off + row * shape[1] + k // 2)
      half = lambda kx: at(base + off + kx * shape[1] + row // 2).alu(
        Ops.SHR, ((row % 2) * 16).cast(dtypes.uint32)).alu(Ops.AND, UOp.const(dtypes.uint32, 0xFFFF))
      return half(k).alu(Ops.OR, half(k + 1).alu(Ops.SHL, UOp.const(dtypes.uint32, 16)))
    for kk in range(kks):
      for mi in range(tm):   # A's four matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15)
        r0 = wm * wtm + mi * lay.m
        if not ldsm:
          for j in range(ea):
            row, kx = lay.a(lane, pw * j)   # (the maps are arithmetic: UOps work)
            out.append(_ridx(areg, (kk * tm + mi) * ea + j).store(word(mt2.a_major, sa, 0, r0 + row,
                                                                       c(0) + kx + kk * lay.k)))
          continue
        if mt2.a_major == "k": w = base + (r0 + (q % 2) * 8 + r) * sa[1] + kk * 8 + (q // 2) * 4
        else: w = base + (kk * 16 + (q // 2) * 8 + r) * sa[1] + (r0 + (q % 2) * 8) // 2
        fn = "teeny_ldsm_x4" if mt2.a_major == "k" else "teeny_ldsm_x4_trans"
        out.append(custom(fn + "({0}, {1}, {2});", _ridx(areg, (kk * tm + mi) * 4), smem, w))
      for ni in range(0, tn, 1 if not ldsm else 2):   # ldmatrix: B of two n tiles per instruction
        n0 = wn * wtn + ni * lay.n
        if not ldsm:
          for j in range(eb):
            kx, col = lay.b(lane, pw * j)
            out.append(_ridx(breg, (kk * tn + ni) * eb + j).store(word(mt2.b_major, sb, sa[0] * sa[1], n0 + col,
                                                                       c(0) + kx + kk * lay.k)))
          continue
        if mt2.b_major == "k": w = base + sa[0] * sa[1] + (n0 + (q // 2) * 8 + r) * sb[1] + kk * 8 + (q % 2) * 4
        else: w = base + sa[0] * sa[1] + (kk * 16 + (q % 2) * 8 + r) * sb[1] + (n0 + (q // 2) * 8) // 2
        fn = "teeny_ldsm_x4" if mt2.b_major == "k" else "teeny_ldsm_x4_trans"
        out.append(custom(fn + "({0}, {1}, {2});", _ridx(breg, (kk * tn + ni) * 2), smem, w))
      for mi in range(tm):
        for ni in range(tn):
          out.append(UOp(Ops.WMMA, dtypes.void, (_ridx(acc, (mi * tn + ni) * ec), _ridx(areg, (kk * tm + mi) * ea),
                                                   _ridx(breg, (kk * tn + ni) * eb)),
                         TCOp(lay.name, mt2.dtype_in, dtypes.float32)))
    return out
  outputs = []
  for mi in range(tm):
    for ni in range(tn):
      for i in range(ec):
        row, col = lay.c(lane, i)
        outputs.append(((mi * tn + ni) * ec + i, wm * wtm + mi * lay.m + row, wn * wtn + ni * lay.n + col))
  return acc, body, outputs, []

def _thread_tiles(t: _Tiles, cfg: SmemConfig):
  """SMEM: each thread keeps a tm x tn register tile of the block's outputs. Per 4 k it reads its A and B values with
  16-byte shared-memory loads: for an operand stored [k][m|n] four neighbouring rows (columns) per load, the thread's
  ones being 4t..4t+3 + 4T*g for thread t of T along that axis; for one stored [m|n][k] four k of one row, its rows
  t + T*i. A warp is 4 x 8 threads: each load reads at most 128 distinct bytes (one shared-memory wavefront), the
  rest broadcast; then tm*tn multiply-adds per k."""
  R, C = cfg.bm // cfg.tm, cfg.bn // cfg.tn
  lane, warp = t.tid % 32, t.tid // 32
  ty, tx = (warp // (C // 8)) * 4 + lane // 8, (warp % (C // 8)) * 8 + lane % 8
  acc = UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (1, cfg.tm * cfg.tn))
  # per operand: its register array (bk values of each of its tile's rows), major, tile shape, offset, thread, threads
  ops = [(UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (2, cfg.tm * cfg.bk)), t.mt.a_major, t.sa, 0, ty, R, cfg.tm),
         (UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (3, cfg.tn * cfg.bk)), t.mt.b_major, t.sb, t.sa[0] * t.sa[1],
          tx, C, cfg.tn)]
  def pos(major: str, th: UOp, T: int, i: int) -> UOp:
    """Row (column) of the block tile that the thread's value i of an operand is."""
    return th * 4 + (i % 4 + 4 * T * (i // 4)) if major == "mn" else th + T * i
  def slot(major: str, tile: int, i: int, k: int) -> int:
    """Where value i at k sits in the operand's registers: each 16-byte load fills 4 neighbouring slots."""
    return (k // 4) * tile * 4 + ((k % 4) * tile + i if major == "mn" else i * 4 + k % 4)
  def body(stage: UOp, bar: UOp) -> list[UOp]:
    base = stage * t.stage_words
    eff: list[UOp] = []
    vals: list[list[list[UOp]]] = [[], []]   # per operand, per k: the tile's values (register reads after their load)
    for k4 in range(0, cfg.bk, 4):
      for o, (reg, major, shape, off, th, T, tile) in enumerate(ops):
        loads: dict[int, UOp] = {}
        for j in range(tile):   # (tile loads per 4 k either way)
          if major == "mn":   # load j: k = k4 + j // (tile/4), rows 4 * (j % (tile/4)) ... of the thread's
            k, i = k4 + j // (tile // 4), 4 * (j % (tile // 4))
            w = base + off + k * shape[1] + pos(major, th, T, i)
          else: k, i, w = k4, j, base + off + pos(major, th, T, j) * shape[1] + k4
          ld = t.custom("teeny_lds128({0}, {1}, {2});", _ridx(reg, slot(major, tile, i, k)), t.smem, w)
          eff.append(ld)
          for e in range(4): loads[slot(major, tile, i + e, k) if major == "mn" else slot(major, tile, i, k + e)] = ld
        for k in range(k4, k4 + 4):
          vals[o].append([UOp(Ops.LOAD, dtypes.float32, (_ridx(reg, s := slot(major, tile, i, k)), loads[s]))
                          for i in range(tile)])
    # this iteration's accumulators, read after its barrier (a read of the same register at another time is another
    # node), summed in SSA form over the stage's k and stored once
    acc_v = [UOp(Ops.LOAD, dtypes.float32, (_ridx(acc, i), bar)) for i in range(cfg.tm * cfg.tn)]
    for k in range(cfg.bk):
      a, b = vals[0][k], vals[1][k]
      acc_v = [acc_v[i * cfg.tn + j] + a[i] * b[j] for i in range(cfg.tm) for j in range(cfg.tn)]
    return eff + [_ridx(acc, i).store(v) for i, v in enumerate(acc_v)]
  outputs = [(i * cfg.tn + j, pos(t.mt.a_major, ty, R, i), pos(t.mt.b_major, tx, C, j))
             for i in range(cfg.tm) for j in range(cfg.tn)]
  return acc, body, outputs, []

def _wgmma_tiles(t: _Tiles, cfg: WGConfig):
  """TC with wgmma: warpgroup w (threads 128w ...) computes rows 64w ... of the block tile, all bn columns, by one
  m64n<bn>k16 instruction per 16 of the reduce. Its operands are descriptors of the swizzled tiles in shared memory
  (Ops.WMMA's sources: the accumulators and the start word of A's and B's slice); per stage: a fence (registers
  written before it are the instruction's), bk/16 instructions, then one commit and a wait until at most
  cfg.inflight groups are left (the copies run that many tiles less ahead, so no stage is overwritten while read);
  after the loop, a wait for the last."""
  mt2, tid, smem = t.mt, t.tid, t.smem
  nacc = cfg.bn // 2
  wg, lane = tid // 128, tid % 128
  acc = UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (1, nacc))
  # leading byte offsets: [k][out] tiles' atoms are bk*128 bytes apart along out; [out][k] ones have one atom along k
  lbo = {"k": 16, "mn": cfg.bk * 128}
  op = TCOp(f"cuda_wgmma_m64n{cfg.bn}k16", mt2.dtype_in, dtypes.float32,
            ((mt2.a_major, lbo[mt2.a_major]), (mt2.b_major, lbo[mt2.b_major])))
  a_words = t.sa[0] * t.sa[1]
  def start(major: str, off: UOp, kk: int) -> UOp:
    """The word where a 16-k slice starts: [out][k] tiles 32 bytes further per 16 k (the swizzle applies to the
    address), [k][out] tiles two atoms (16 rows of k) further."""
    return UOp(Ops.INDEX, smem.dtype, (smem, off + (kk * 8 if major == "k" else kk * 512)))
  def body(stage: UOp, bar: UOp) -> list[UOp]:
    base = stage * t.stage_words
    # warpgroup wg's 64 rows of A: 64 rows of 128 bytes ([m][k]), or the wg-th atom along m ([k][m])
    a0 = base + wg * (2048 if mt2.a_major == "k" else cfg.bk * 32)
    # (the stage a source: both statements belong inside the k loop)
    out = [t.custom(f"teeny_wgmma_fence_n{nacc}({{0}});", _ridx(acc, 0), stage)]
    for kk in range(cfg.bk // 16):
      first = (t.kt > 0,) if t.kt is not None and kk == 0 else ()   # (0: D = A @ B, the accumulators' first value)
      out.append(UOp(Ops.WMMA, dtypes.void, (_ridx(acc, 0), start(mt2.a_major, a0, kk),
                                             start(mt2.b_major, base + a_words, kk), *first), op))
    out.append(t.custom(f"teeny_wgmma_wait{cfg.inflight}_n{nacc}({{0}});", _ridx(acc, 0), stage))
    return out
  outputs = []
  for i in range(nacc):
    row, col = wgmma_c(lane, i)   # (arithmetic: the lane a UOp)
    outputs.append((i, wg * 64 + row, col))
  after = [t.custom(f"teeny_wgmma_wait0_n{nacc}({{0}});", _ridx(acc, 0))] if cfg.inflight else []
  return acc, body, outputs, after
