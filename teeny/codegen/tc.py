"""Tensor-core fragment layouts as data: which lane holds which element of each operand of one matrix instruction.

A warp (wave) computes D = A @ B + C for an M x K tile A, a K x N tile B and an M x N tile C. No lane holds a whole
matrix: lane l keeps `elems` values of each operand in registers, value i of them at the (row, col) that the layout's
map gives for (l, i). These maps are the facts a renderer needs to load fragments from memory and to store results,
and the facts a test needs to check a rendered kernel without the hardware: `simulate` plays a warp's instruction
with numpy (scatter each lane's values through the maps, multiply, gather D back), and the CUDA suite checks the same
maps against the H200's mma.sync.

  layout            lanes  M x N x K   A, B, C values a lane holds   source
  cuda_m16n8k16       32   16 x 8 x 16   8, 4, 4                     PTX ISA, "Matrix fragments for mma.m16n8k16"
  amd_wmma_16x16x16   32   16 x 16 x 16  16, 16, 8 (lanes 16-31 hold A and B again)   RDNA3 ISA, WMMA (gfx1100)
  amd_mfma_16x16x16   64   16 x 16 x 16  4, 4, 4                     CDNA2 ISA, v_mfma_f32_16x16x16f16 (gfx90a)
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import Callable
import numpy as np

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

def _cuda_a(lane: int, i: int) -> tuple[int, int]:
  g, t = lane >> 2, lane & 3
  return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)

def _cuda_b(lane: int, i: int) -> tuple[int, int]:
  g, t = lane >> 2, lane & 3
  return 2 * t + (i & 1) + 8 * (i >> 1), g

def _cuda_c(lane: int, i: int) -> tuple[int, int]:
  g, t = lane >> 2, lane & 3
  return g + 8 * (i >> 1), 2 * t + (i & 1)

CUDA_M16N8K16 = TCLayout("cuda_m16n8k16", 32, 16, 8, 16, (8, 4, 4), _cuda_a, _cuda_b, _cuda_c)
# RDNA3 wave32 WMMA: lane l's A vector is row l%16 (all 16 k), its B vector column l%16; the f32 result's value i of
# lane l is row 2i + l//16, column l%16
AMD_WMMA_16X16X16 = TCLayout("amd_wmma_16x16x16", 32, 16, 16, 16, (16, 16, 8), lambda l, i: (l % 16, i),
                             lambda l, i: (i, l % 16), lambda l, i: (2 * i + l // 16, l % 16))
# CDNA2 wave64 MFMA 16x16x16: lane l holds row l%16 of A and column l%16 of B at k = 4*(l//16) + i, and the result's
# rows 4*(l//16) + i of column l%16
AMD_MFMA_16X16X16 = TCLayout("amd_mfma_16x16x16", 64, 16, 16, 16, (4, 4, 4), lambda l, i: (l % 16, 4 * (l // 16) + i),
                             lambda l, i: (4 * (l // 16) + i, l % 16), lambda l, i: (4 * (l // 16) + i, l % 16))
LAYOUTS = {t.name: t for t in (CUDA_M16N8K16, AMD_WMMA_16X16X16, AMD_MFMA_16X16X16)}

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
