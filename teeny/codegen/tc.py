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
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import Callable, cast
import numpy as np
from teeny.dtype import DType, dtypes
from teeny.helpers import TF32, ceildiv as ceil_div, prod
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
  def __repr__(self): return f"TCOp({self.layout}, {self.dtype_in.name}->{self.dtype_acc.name})"
  @property
  def flops_per_lane(self) -> int:
    t = LAYOUTS[self.layout]
    return 2 * t.m * t.n * t.k // t.lanes

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

_TILES = ((128, 128, 2, 4), (256, 128, 4, 2), (128, 256, 2, 4), (128, 64, 2, 2), (64, 64, 2, 2))   # bm, bn, warps
TC_CONFIGS = {c.name: c for c in [TCConfig(bm, bn, bk, wm, wn, st) for (bm, bn, wm, wn) in _TILES
                                  for bk in (32, 64) for st in (2, 3, 4)]}

@dataclass
class TCMatch:
  """A kernel the TC Opt can rebuild: one float32 sum over range k of a product of two 16-bit loads, A (read along m
  and k) and B (along n and k), each contiguous along k ("k") or along its output axis ("mn"); other GLOBAL ranges are
  a batch."""
  red: UOp
  m: UOp
  n: UOp
  k: UOp
  batch: list[UOp]
  a: UOp            # the INDEX A is loaded through
  b: UOp
  a_major: str      # "k" or "mn"
  b_major: str
  a_aligned: bool   # 16-byte copies (cp.async) or, where a row of 8 may start anywhere, plain loads
  b_aligned: bool
  dtype_in: DType

def _loads_of(v: UOp) -> list[UOp] | None:
  """The two loads a reduce's value multiplies: MUL(LOAD, LOAD) in 16 bits then widened, or MUL of widened loads."""
  if v.op is Ops.CAST: v = v.src[0]
  if v.op is not Ops.MUL: return None
  out = []
  for s in v.src:
    if s.op is Ops.CAST: s = s.src[0]
    if s.op is not Ops.LOAD or s.src[0].op is not Ops.INDEX or len(s.src[0].src) != 2: return None
    out.append(s)
  return out

def _major(idx: UOp, out_axis: UOp, k: UOp, vec: int) -> tuple[str, bool] | None:
  """('k', aligned) if the operand's address runs contiguously along k, ('mn', aligned) if along its output axis, None
  if neither. aligned: every run of `vec` values (16 bytes) the copies read starts 16-byte aligned (every other stride
  and the offset multiples of vec), so they can be asynchronous 16-byte copies."""
  ck, co = coefficient(idx.src[1], k), coefficient(idx.src[1], out_axis)
  if ck is None or co is None: return None
  major = "k" if ck == 1 else "mn" if co == 1 else None
  if major is None: return None
  terms, const = decompose(idx.src[1])
  contiguous = k if major == "k" else out_axis
  if any(t.op is not Ops.RANGE for t, _ in terms): return None
  return major, not (const % vec or any(t is not contiguous and c % vec for t, c in terms))

def tc_match(ast: UOp) -> TCMatch | str:
  """The kernel's matmul shape for the TC Opt, or why it has none."""
  topo = list(ast.toposort)
  if any(u.op in (Ops.ATOMIC, Ops.ATOMIC_CAS, Ops.CUSTOM, Ops.BARRIER, Ops.SPECIAL, Ops.DEFINE_LOCAL, Ops.DEFINE_REG)
         or (u.op is Ops.RANGE and u.arg[1] not in (AxisType.GLOBAL, AxisType.REDUCE)) for u in topo):
    return "the kernel has ranges other than GLOBAL and REDUCE, atomics or custom code"
  reds = [u for u in topo if u.op is Ops.REDUCE]
  if len(reds) != 1 or reds[0].arg is not Ops.ADD or len(reds[0].src) != 2:
    return "the kernel needs exactly one sum over one reduce range"
  red, k = reds[0], reds[0].src[1]
  if red.dtype != dtypes.float32: return f"the sum accumulates in {red.dtype.name}; tensor cores accumulate float32"
  loads = _loads_of(red.src[0])
  if loads is None: return "the summed value is not a product of two loads"
  dts = {ld.dtype for ld in loads}
  if len(dts) != 1 or (dt := dts.pop()) not in (dtypes.float16, dtypes.bfloat16, dtypes.float32):
    return "tensor cores multiply float16 or bfloat16 inputs (both the same), or float32 as TF32 (TF32=1)"
  if dt == dtypes.float32 and not TF32:
    return "float32 stays exact: tensor cores round it to TF32 only when asked (Tensor.allow_tf32 = True or TF32=1)"
  glob = global_ranges(ast)
  if any(const_size(r) is None for r in glob + [k]): return "every range needs a constant size"
  ia, ib = loads[0].src[0], loads[1].src[0]
  # the output axes: a GLOBAL range only A reads is m, one only B reads is n (swap the operands if needed)
  def only(x: UOp, y: UOp) -> list[UOp]: return [g for g in glob if g in x.toposort and g not in y.toposort]
  ma, nb = only(ia, ib), only(ib, ia)
  if len(ma) != 1 or len(nb) != 1: return "the kernel is not a matmul: each operand needs one output axis of its own"
  m, n = ma[0], nb[0]
  batch = [g for g in glob if g is not m and g is not n]   # (an operand may be broadcast along one)
  vec = 16 // dt.itemsize
  if (am := _major(ia, m, k, vec)) is None or (bmj := _major(ib, n, k, vec)) is None:
    return "an operand is contiguous along neither k nor its output axis"
  # the epilogue (every effect a store of the output element) may read the sum and other values of that element
  if any(e.op is not Ops.STORE for e in ast.src): return "every effect must be a store"
  return TCMatch(red, m, n, k, batch, ia, ib, am[0], bmj[0], am[1], bmj[1], dt)

# the heuristics' tiles, largest first: the first that gives the GPU enough blocks (TC_MIN_BLOCKS) is taken, else the
# last (measured on the H200, 4096^3 float16: 128x256 and 128x128 at 260-266 TFLOP/s, 128x64 220, 64x64 177)
TC_ORDER = ("128x256x64w2x4s3", "128x128x64w2x4s3", "128x64x64w2x2s4", "64x64x64w2x2s4")
TC_MIN_BLOCKS = 128

def _size(r: UOp) -> int:
  assert r.src[0].op is Ops.CONST, "tc_match checked that every range has a constant size"
  return r.src[0].arg

def _blocks(mt: TCMatch, c: TCConfig) -> int:
  return ceil_div(_size(mt.m), c.bm) * ceil_div(_size(mt.n), c.bn) * prod(_size(b) for b in mt.batch)

def smem_shape(major: str, rows_out: int, bk: int, per_word: int = 2) -> tuple[int, int]:
  """(rows, 32-bit words per row) of an operand's tile in shared memory: [out][k] when it is contiguous along k, else
  [k][out]; `per_word` values a word (two 16-bit ones, or one float32), each row padded by 16 bytes against bank
  conflicts."""
  return (rows_out, bk // per_word + 4) if major == "k" else (bk, rows_out // per_word + 4)

def _per_word(mt: TCMatch) -> int: return 4 // mt.dtype_in.itemsize

def smem_bytes(mt: TCMatch, c: TCConfig) -> int:
  """Shared memory a tile needs: `stages` copies of A's and B's tiles."""
  pw = _per_word(mt)
  (ra, wa), (rb, wb) = smem_shape(mt.a_major, c.bm, c.bk, pw), smem_shape(mt.b_major, c.bn, c.bk, pw)
  return (ra * wa + rb * wb) * 4 * c.stages

def tc_refusal(mt: TCMatch, c: TCConfig, renderer) -> str | None:
  """Why tile c cannot serve the matched kernel on this renderer (None: it can): the checks apply_tc makes once it
  has picked its tile, without building the kernel (the heuristics ask before choosing TC)."""
  if (nb := prod(_size(b) for b in mt.batch)) > 65535: return f"a batch of {nb} exceeds the grid's 65535 blocks along z"
  if layout_for(renderer, mt.dtype_in) is None:
    return f"{type(renderer).__name__} has no tensor cores for {mt.dtype_in.name}" + \
      (" (TF32 is off: Tensor.allow_tf32 = True or TF32=1)" if mt.dtype_in == dtypes.float32 and not TF32 else "")
  if mt.dtype_in.itemsize == 4 and not (mt.a_aligned and mt.b_aligned):
    return "float32 operands need rows that start 16-byte aligned (their copies are asynchronous 16-byte copies)"
  if (need := smem_bytes(mt, c)) > (most := getattr(renderer, "max_shared", 48 * 1024)):
    return f"the tile needs {need} bytes of shared memory ({most} at most)"
  return None

def pick_config(mt: TCMatch, renderer=None) -> TCConfig:
  """The heuristics' tile: the first of TC_ORDER whose shared memory fits the renderer's and that gives TC_MIN_BLOCKS
  blocks, else the smallest of them that fits (where none does: the largest tile of TC_CONFIGS that fits)."""
  most = getattr(renderer, "max_shared", 48 * 1024)
  fits = [c for c in (TC_CONFIGS[n] for n in TC_ORDER) if smem_bytes(mt, c) <= most] or \
    sorted((c for c in TC_CONFIGS.values() if smem_bytes(mt, c) <= most), key=lambda c: -c.bm * c.bn) or \
    [TC_CONFIGS[TC_ORDER[-1]]]
  return next((c for c in fits if _blocks(mt, c) >= TC_MIN_BLOCKS), fits[-1])

def apply_tc(ast: UOp, arg, renderer) -> UOp:
  """The TC Opt (see codegen/opt.py): arg is a TC_CONFIGS name, or None for the heuristics' pick (pick_config)."""
  layouts = getattr(renderer, "tensor_cores", ())
  if not layouts:
    raise KernelOptError(f"TC: {type(renderer).__name__} has no tensor cores teeny can render (CUDA mma.sync, AMD "
                         "WMMA on gfx11, MFMA on gfx90a/gfx94x)")
  lang = getattr(renderer, "lang", "CUDA")
  mt = tc_match(ast)
  if isinstance(mt, str): raise KernelOptError(f"TC: {mt}")
  if arg is None: cfg = pick_config(mt, renderer)
  elif arg in TC_CONFIGS: cfg = TC_CONFIGS[arg]
  else: raise KernelOptError(f"TC: unknown block tile {arg!r}; the tiles are {list(TC_CONFIGS)}")
  if (why := tc_refusal(mt, cfg, renderer)) is not None: raise KernelOptError(f"TC: {why}")
  lay = cast(TCLayout, layout_for(renderer, mt.dtype_in))   # (tc_refusal checked there is one)
  # CUDA: cp.async copies; ldmatrix fragments for 16-bit values. Elsewhere (and TF32) fragments through the maps
  cuda, ldsm = lay.name.startswith("cuda"), lay.name == "cuda_m16n8k16"
  pw = _per_word(mt)             # values per 32-bit word of shared memory and registers
  vec = 16 // mt.dtype_in.itemsize   # values per 16-byte copy
  M, N, K = (_size(r) for r in (mt.m, mt.n, mt.k))
  # sizes that are not multiples of the tile: the copies zero-fill what lies outside (cp.async with fewer source
  # bytes), and the stores are masked
  ragged = bool(M % cfg.bm or N % cfg.bn or K % cfg.bk)
  wtm, wtn = cfg.bm // cfg.wm, cfg.bn // cfg.wn
  tm, tn, kks = wtm // lay.m, wtn // lay.n, cfg.bk // lay.k
  assert (tn % 2 == 0 or not ldsm) and wtm % lay.m == 0, "a warp's tile: 16-row blocks of A by (pairs of) 8 of B"
  ea, eb, ec = lay.elems[0] // pw, lay.elems[1] // pw, lay.elems[2]   # words of A and B, floats of C, per lane
  threads = cfg.wm * cfg.wn * lay.lanes
  idx = dtypes.index
  c = lambda v: UOp.const(idx, v)
  # grid: blocks along n (x), m (y) and the batch (z); one LOCAL range of threads
  bn = UOp.range(ceil_div(N, cfg.bn), 0, AxisType.GLOBAL)
  bm = UOp.range(ceil_div(M, cfg.bm), 1, AxisType.GLOBAL)
  # the batch ranges flattened into one, block index z (the loads and the reduce are rebuilt: match again)
  ast_b = ast
  if mt.batch:
    ast_b, flat = flatten_ranges(ast, mt.batch, AxisType.GLOBAL)
    assert flat is not None, "a batch has ranges"
    # a fresh axis id: an existing one (the n range's, say) of the same size would be the same node
    fresh = 1 + max(u.arg[0] for u in ast_b.toposort if u.op is Ops.RANGE)
    ast_b = ast_b.substitute({flat: UOp.range(prod(_size(b) for b in mt.batch), fresh, AxisType.GLOBAL)})
  mt2 = tc_match(ast_b)
  assert not isinstance(mt2, str), f"flattening the batch keeps the matmul shape: {mt2}"
  tid = UOp.range(threads, 3, AxisType.LOCAL)
  lane, warp = tid % lay.lanes, tid // lay.lanes
  wm, wn = warp // cfg.wn, warp % cfg.wn
  nk = ceil_div(K, cfg.bk)
  kt = UOp.range(nk, 4, AxisType.LOOP)
  # shared memory: `stages` copies of A's then B's tile (smem_shape)
  sa, sb = smem_shape(mt2.a_major, cfg.bm, cfg.bk, pw), smem_shape(mt2.b_major, cfg.bn, cfg.bk, pw)
  stage_words = sa[0] * sa[1] + sb[0] * sb[1]
  smem = UOp(Ops.DEFINE_LOCAL, dtypes.uint32.ptr(), (), (0, stage_words * cfg.stages))
  acc = UOp(Ops.DEFINE_REG, dtypes.float32.ptr(), (), (1, tm * tn * ec))
  areg = UOp(Ops.DEFINE_REG, dtypes.uint32.ptr(), (), (2, tm * ea * kks))
  breg = UOp(Ops.DEFINE_REG, dtypes.uint32.ptr(), (), (3, tn * eb * kks))
  ridx = lambda r, w: UOp(Ops.INDEX, r.dtype, (r, w if isinstance(w, UOp) else c(w)))
  tags = iter(range(1 << 30))
  def custom(fmt: str, *src: UOp) -> UOp:
    """A statement of the renderer's language as an effect; the tag keeps two equal statements two nodes."""
    return UOp(Ops.CUSTOM, dtypes.void, src, ((lang, fmt), ("tag", next(tags))))
  def copies(stage: UOp, ktile: UOp, guard: UOp | None) -> list[UOp]:
    """cp.async of one k tile of A and B into a stage: 16 bytes (vec values) per copy, rows along the contiguous
    axis."""
    out = []
    base = stage * stage_words
    for ix, major, aligned, rows_out, start, axis, size, (nrows, stride), off in (
        (mt2.a, mt2.a_major, mt2.a_aligned, cfg.bm, bm * cfg.bm, mt2.m, M, sa, 0),
        (mt2.b, mt2.b_major, mt2.b_aligned, cfg.bn, bn * cfg.bn, mt2.n, N, sb, sa[0] * sa[1])):
      per_row = (cfg.bk if major == "k" else rows_out) // vec
      chunks = nrows * per_row
      for j in range(ceil_div(chunks, threads)):
        ch = tid + j * threads
        row, col = ch // per_row, ch % per_row
        if major == "k": (o, kx), lim = (start + row, ktile * cfg.bk + col * vec), (axis, size, mt2.k, K)
        else: (o, kx), lim = (start + col * vec, ktile * cfg.bk + row), (mt2.k, K, axis, size)
        pos = {axis: o, mt2.k: kx}
        gidx = ix.src[1].substitute(pos)
        srcs = [smem, base + off + row * stride + col * 4, None]
        # unaligned rows: 8 plain 16-bit loads, written to shared memory as 4 words (teeny_copy16, same arguments)
        fn = "teeny_cp_async16" if aligned and cuda else "teeny_copy16"
        fmt = fn + "({0}, {1}, {2}, 16)"
        if ragged:   # how many of the chunk's values exist: 0 past a row's end, fewer at a ragged contiguous axis
          whole, part = lim[:2], lim[2:]
          left = (UOp.const(idx, part[1]) - pos[part[0]]).alu(Ops.MIN, c(vec)).alu(Ops.MAX, c(0))
          n = (pos[whole[0]] < whole[1]).where(left, c(0))
          gidx = (n > 0).where(gidx, c(0))
          srcs.append(n * mt2.dtype_in.itemsize)
          fmt = fn + "({0}, {1}, {2}, {3})"
        srcs[2] = UOp(Ops.INDEX, ix.dtype, (ix.src[0], gidx))
        conds = [x for x in (guard, ch < chunks if chunks % threads else None) if x is not None]
        cond = conds[0] if len(conds) == 1 else conds[0].alu(Ops.AND, conds[1]) if conds else None
        if cond is not None:
          fmt = f"if ({{{len(srcs)}}}) " + fmt
          srcs.append(cond)
        out.append(custom(fmt + ";", *srcs))
    return out
  def fragments(stage: UOp) -> list[UOp]:
    """Fill the fragment registers of every k16 step of a stage from shared memory, then one WMMA per output block:
    CUDA with ldmatrix (four 8x8 matrices per instruction, lane 8q+r giving the address of row r of matrix q; .trans
    where the tile is stored [k][m|n]), elsewhere a word (two values along k) at a time through the layout's maps."""
    out = []
    base = stage * stage_words
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
            out.append(ridx(areg, (kk * tm + mi) * ea + j).store(word(mt2.a_major, sa, 0, r0 + row,
                                                                      c(0) + kx + kk * lay.k)))
          continue
        if mt2.a_major == "k": w = base + (r0 + (q % 2) * 8 + r) * sa[1] + kk * 8 + (q // 2) * 4
        else: w = base + (kk * 16 + (q // 2) * 8 + r) * sa[1] + (r0 + (q % 2) * 8) // 2
        fn = "teeny_ldsm_x4" if mt2.a_major == "k" else "teeny_ldsm_x4_trans"
        out.append(custom(fn + "({0}, {1}, {2});", ridx(areg, (kk * tm + mi) * 4), smem, w))
      for ni in range(0, tn, 1 if not ldsm else 2):   # ldmatrix: B of two n tiles per instruction
        n0 = wn * wtn + ni * lay.n
        if not ldsm:
          for j in range(eb):
            kx, col = lay.b(lane, pw * j)
            out.append(ridx(breg, (kk * tn + ni) * eb + j).store(word(mt2.b_major, sb, sa[0] * sa[1], n0 + col,
                                                                      c(0) + kx + kk * lay.k)))
          continue
        if mt2.b_major == "k": w = base + sa[0] * sa[1] + (n0 + (q // 2) * 8 + r) * sb[1] + kk * 8 + (q % 2) * 4
        else: w = base + sa[0] * sa[1] + (kk * 16 + (q % 2) * 8 + r) * sb[1] + (n0 + (q // 2) * 8) // 2
        fn = "teeny_ldsm_x4" if mt2.b_major == "k" else "teeny_ldsm_x4_trans"
        out.append(custom(fn + "({0}, {1}, {2});", ridx(breg, (kk * tn + ni) * 2), smem, w))
      for mi in range(tm):
        for ni in range(tn):
          out.append(UOp(Ops.WMMA, dtypes.void, (ridx(acc, (mi * tn + ni) * ec), ridx(areg, (kk * tm + mi) * ea),
                                                   ridx(breg, (kk * tn + ni) * eb)),
                         TCOp(lay.name, mt2.dtype_in, dtypes.float32)))
    return out
  eff: list[UOp] = [ridx(acc, i).store(UOp.const(dtypes.float32, 0.0)) for i in range(tm * tn * ec)]
  # a pipeline of `stages` tiles in flight: the first stages-1 copies before the loop; in iteration kt, once tile kt
  # has landed and every warp is past iteration kt-1, the copy of tile kt+stages-1 goes into the stage kt-1 used
  S = cfg.stages
  # (plain copies land at once: no commit groups to wait for)
  commit = lambda *src: [custom('asm volatile("cp.async.commit_group;");', *src)] if cuda else []
  for p in range(S - 1): eff += copies(c(p), c(p), None if p < nk else UOp.const(dtypes.bool, False)) + commit()
  if cuda: eff += [custom(f'asm volatile("cp.async.wait_group {S - 2};");', kt)]
  eff += [UOp(Ops.BARRIER, dtypes.void, (kt,), 0)]
  nxt = kt + (S - 1)
  eff += copies(nxt % S, nxt, nxt < nk) + commit(kt)
  eff += fragments(kt % S)
  eff[-1] = eff[-1].end(kt)
  # the epilogue: the original store for each accumulator value, its output element placed by the C map
  for mi in range(tm):
    for ni in range(tn):
      for i in range(ec):
        row, col = lay.c(lane, i)
        mrow = bm * cfg.bm + wm * wtm + mi * lay.m + row
        ncol = bn * cfg.bn + wn * wtn + ni * lay.n + col
        val = ridx(acc, (mi * tn + ni) * ec + i).load(dtypes.float32)
        for e in ast_b.src:
          e = e.substitute({mt2.red: val, mt2.m: mrow, mt2.n: ncol})
          if M % cfg.bm or N % cfg.bn:   # outputs past the matrix: no store, no epilogue loads
            ok = (mrow < M).alu(Ops.AND, ncol < N)
            e = e.substitute({x: gate(x, ok) for x in e.toposort if x.op is Ops.INDEX and
                              x.src[0].op is Ops.DEFINE_GLOBAL})
          eff.append(e)
  return graph_rewrite(UOp(Ops.SINK, dtypes.void, tuple(eff), ast.arg), symbolic)
