"""teeny.linalg: torch.linalg's core, built from Tensor ops (lazy, on any device).

Factorizations are unrolled into n steps of Tensor ops over full-size masked updates: every step of one factorization
has the same shapes, and what changes from step to step (which row and column is k) comes in as small mask buffers,
so all n steps run the same few compiled kernels (`_masks`). No step reads data back to the host.

- det, slogdet, inv, solve: Gauss-Jordan elimination with partial pivoting (`_eliminate`) on [A | B] (the pivot row
  found by one max over a packed int64 key, used as a one-hot mask; rows are not moved, a mask tracks the rows used,
  and the result is un-permuted by one matmul at the end). The pivots are LU's (LAPACK getrf's), so det is their
  product times the sign of the row permutation. An exactly zero pivot is skipped, as LAPACK does (det 0,
  logabsdet -inf).
- cholesky: column by column (Cholesky-Banachiewicz, one column per step).
- solve_triangular: the same elimination, without pivoting, on the triangle torch reads.
- qr: Householder reflections with LAPACK's sign convention (R's diagonal is -sign(a_kk) * norm, and a column with
  nothing below the diagonal is left as it is), so Q and R agree with torch's; Q comes from applying the reflections
  to [A | I].
- eigh / eigvalsh: parallel cyclic Jacobi (n/2 disjoint rotations per round, a fixed number of sweeps: nothing is read
  back to test convergence). svd / svdvals: the eigenpairs of [[0, A], [A^T, 0]] (eigenvalues +-S; no squared
  condition number as with A^T A); full_matrices=True completes a non-square U or V by a complete QR of it. pinv,
  matrix_rank, cond, lstsq (pinv(A) B, with a first-order surrogate gradient) and the 2 / -2 / 'nuc' matrix norms
  build on them.
  float32 results carry the rounding of many rotations (a 33x33 SVD reconstructs to ~1e-4; float64 to ~1e-13).

Kernels, n = 4, one matrix (what `DEBUG=2` shows; launches / distinct ASTs): det 27 / 10, inv 26 / 14, solve 25 / 13,
cholesky 25 / 9, solve_triangular 16 / 7, qr 33 / 12, eigvalsh 95 / 11, svdvals 260 / 13. About 6 launches per
elimination step, 3 per Jacobi round; a larger n adds launches, not distinct kernels.

Gradients. det, slogdet, inv, solve, cholesky and solve_triangular compute their value on detached inputs and attach
the first-order derivative as a linear surrogate that is zero in value (`_tangent`: x - x.detach()), e.g.
inv(A) - X (A - A.detach()) X with X = inv(A) detached, whose gradient is torch's -X^T g X^T. The backward pass is
then a few matmuls instead of the reverse of the n unrolled steps (cheaper, and as stable as the forward). These
gradients are first order only (a gradient of a gradient is not the true second derivative). det's gradient uses
inv(A), so it is inf/nan for a singular A (torch uses an SVD there). eigh's is the perturbation formula (eigenvalues
must be distinct for the eigenvectors'); svd's and pinv's go through eigh's. qr's gradient is autograd through the
Householder steps.

Dtypes: float32 and float64; float16/bfloat16 are computed in float32 and cast back (torch refuses them on the CPU).
Integer inputs raise RuntimeError as torch's. Where teeny may read the data (the CPU, see indexing._reads_allowed),
a singular matrix in inv/solve and a matrix that is not positive-definite in cholesky raise LinAlgError with torch's
text; elsewhere (GPUs, NULL) nothing is read, and the result holds inf/nan as the arithmetic gives.
"""
from __future__ import annotations
import math, sys
from collections import namedtuple
from typing import Any, Sequence
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import dtypes, DType
from teeny.helpers import broadcast_shape
from teeny.indexing import _reads_allowed
from teeny.tensor_math import MathMixin

__all__ = ["LinAlgError", "det", "slogdet", "inv", "inv_ex", "solve", "cholesky", "solve_triangular", "qr",
           "vector_norm", "matrix_norm", "norm", "cross", "vecdot", "multi_dot", "matmul", "diagonal", "matrix_power",
           "cholesky_solve", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "cond", "lstsq"]

class LinAlgError(RuntimeError):
  """torch.linalg.LinAlgError: a singular matrix (inv, solve) or one that is not positive-definite (cholesky)."""

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])
HALF = (dtypes.float16, dtypes.bfloat16)

# ---- checks (from shapes and dtypes only)

def _float_check(fn: str, name: str, t: Any) -> None:
  if not isinstance(t, Tensor): raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
  if t.dtype.kind != "f":
    raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {t.dtype.name}")

def _square_check(fn: str, A: Any, name: str = "A") -> None:
  _float_check(fn, name, A)
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
  if A.shape[-1] != A.shape[-2]:
    raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                       f"{A.shape[-1]} matrices")

def _compute_dtype(dt: DType) -> DType: return dtypes.float32 if dt in HALF else dt

def _tangent(x: Tensor) -> Tensor:
  """Zero in value; its gradient with respect to x is the identity (the surrogate's direction dx)."""
  return x - x.detach()

def _wants_grad(*ts: Tensor) -> bool:
  return not getattr(Tensor, "_no_grad", False) and any(bool(t.requires_grad) for t in ts)

# ---- per-step masks: small buffers, so that every step of a factorization is the same kernels

_MASKS: dict[tuple, tuple[Tensor, ...]] = {}

def _masks(n: int, w: int, k: int, dt: DType, device: str) -> tuple[Tensor, Tensor, Tensor, Tensor]:
  """Masks for step k on (n, w) matrices, 0/1 of dtype dt: row k, rows >= k, rows > k (each (n,)) and column k (w,);
  realized once per (n, w, k, dtype, device) and reused."""
  key = (n, w, k, dt, device)
  if (m := _MASKS.get(key)) is None:
    r = np.arange(n)
    m = tuple(Tensor(a.astype(dt.np), device=device) for a in (r == k, r >= k, r > k, np.arange(w) == k))
    if len(_MASKS) > 4096: _MASKS.clear()
    _MASKS[key] = m
  return m  # type: ignore[return-value]

def _flat(A: Tensor) -> tuple[Tensor, tuple[int, ...]]:
  """(B, rows, cols) from (..., rows, cols), and the batch shape."""
  batch = tuple(A.shape[:-2])
  return A.reshape(math.prod(batch), A.shape[-2], A.shape[-1]), batch

# ---- Gauss-Jordan elimination with partial pivoting

def _eliminate(M: Tensor, n: int, pivoting: bool = True, full: bool = True) -> tuple[Tensor, Tensor, Tensor | None]:
  """Eliminate the first n columns of M (B, n, w) (no autograd: M is detached). Returns (M', pivots (B, n), the pivot
  rows (B, n) as float indices, or None without pivoting).

  pivoting: at step k the row of largest |value| in column k among the rows not yet used as pivots (the first such
  row on ties: LAPACK getrf's choice) is the pivot row. Rows are not swapped: the used rows are tracked in a mask, so
  a step is three reductions (column k, the pivot's key, the pivot row) and two updates (the mask, M), and row p_k of
  M' belongs to step k (see _unpermute). float64 has no room to pack its key: one reduction more.
  full: Gauss-Jordan (the pivot row divided by its pivot, column k cleared in every other row: M' = [P | P A^-1 B]
  for the permutation P); otherwise LU's elimination in the rows not yet used (M' holds U, its rows permuted).
  A zero pivot is divided as 1 (LAPACK skips that column): a singular matrix gives a zero pivot, not nan."""
  B, _, w = M.shape
  dt, dev = M.dtype, M.device
  pivs: list[Tensor] = []
  rows_used: list[Tensor] = []
  rows = Tensor.arange(n, device=dev).cast(dt)
  rows_key = n - Tensor.arange(n, device=dev).cast(dtypes.int64)
  used = Tensor.zeros(B, n, dtype=dt, device=dev).contiguous()   # (a buffer: step 0 runs the same kernels as the rest)
  for k in range(n):
    rk, _, _, ck = _masks(n, w, k, dt, dev)
    col = (M * ck).sum(-1)                                               # (B, n): column k
    piv: Tensor | None = None
    if pivoting and dt == dtypes.float32:
      # one max over a packed int64 key: |value|'s bits (monotonic for floats >= 0, nan above inf), then n - row (the
      # first row wins ties), then the sign bit; the pivot's value comes back from the key exactly
      key = (col.abs().bitcast(dtypes.int32).cast(dtypes.int64) << 32) | (rows_key << 1) | (col < 0).cast(dtypes.int64)
      best = (used > 0).where(-1, key).max(-1, keepdim=True)
      p = (n - ((best & 0xFFFFFFFF) >> 1)).cast(dt)                     # (B, 1): the pivot row
      piv = (best >> 32).cast(dtypes.int32).bitcast(dt) * (1 - 2 * (best & 1)).cast(dt)
    elif pivoting:   # float64: the largest |value|, then the first row that has it
      cand = (used > 0).where(-1.0, col.abs())
      mx = cand.max(-1, keepdim=True)
      p = n - (cand == mx).where(n - rows, 0.0).max(-1, keepdim=True)
    if pivoting:
      oh = (rows == p).cast(dt)                                          # (B, n): one-hot of the pivot row
      rows_used.append(p)
    else: oh = rk.reshape(1, n)
    rowp = (M * oh.unsqueeze(-1)).sum(-2)                                # (B, w): the pivot row
    if piv is None: piv = (rowp * ck).sum(-1, keepdim=True)              # (B, 1)
    safe = (piv == 0).where(1.0, piv)
    if full:
      newrow = rowp / safe
      M = (oh.unsqueeze(-1) > 0).where(newrow.unsqueeze(-2), M - (col * (1 - oh)).unsqueeze(-1) * newrow.unsqueeze(-2))
    else:
      used = (used + oh).contiguous()
      M = M - ((col * (1 - used)) / safe).unsqueeze(-1) * rowp.unsqueeze(-2)
    if full and pivoting: used = (used + oh).contiguous()
    M = M.contiguous()
    pivs.append(piv)
  P = Tensor.cat(*pivs, dim=-1) if pivs else Tensor.ones(B, 0, dtype=dt, device=dev)
  perm = (Tensor.cat(*rows_used, dim=-1) if rows_used else Tensor.zeros(B, 0, dtype=dt, device=dev)) if pivoting \
    else None
  return M, P, perm

def _unpermute(perm: Tensor, X: Tensor) -> Tensor:
  """Row k of the result is row perm[k] of X (B, n, m): a one-hot matmul."""
  n = perm.shape[-1]
  return (perm.unsqueeze(-1) == Tensor.arange(n, device=X.device).cast(perm.dtype)).cast(X.dtype).matmul(X)

def _perm_sign(perm: Tensor) -> Tensor:
  """(-1) ** (the number of inversions) of each row of perm (B, n): the sign of the row permutation."""
  inv = (perm.unsqueeze(-1) > perm.unsqueeze(-2)).triu(1).sum((-2, -1))
  return 1 - 2 * (inv % 2).cast(perm.dtype)

def _first_zero_pivot(P: Tensor) -> tuple[int, int] | None:
  """(batch element, 1-based index) of the first exactly zero pivot, read where teeny may read data; else None."""
  if P.numel() == 0 or not _reads_allowed(P.device): return None
  z = P.numpy() == 0
  if not z.any(): return None
  b = int(np.argmax(z.any(-1)))
  return b, int(np.argmax(z[b])) + 1

def _batch_prefix(batched: bool, b: int) -> str: return f"(Batch element {b}): " if batched else ""

def _solve_core(A: Tensor, Bm: Tensor | None, want_inv: bool) -> tuple[Tensor | None, Tensor | None, Tensor, Tensor]:
  """A (B, n, n), Bm (B, n, m) or None, detached, in the compute dtype. Returns (A^-1 Bm or None, A^-1 or None,
  pivots (B, n), sign of the row permutation (B,))."""
  Bt, n, _ = A.shape
  parts = [A]
  m = 0 if Bm is None else Bm.shape[-1]
  if Bm is not None: parts.append(Bm)
  if want_inv: parts.append(Tensor.eye(n, dtype=A.dtype, device=A.device).reshape(1, n, n).expand(Bt, n, n))
  M = Tensor.cat(*parts, dim=-1) if len(parts) > 1 else A
  M, P, perm = _eliminate(M, n, full=len(parts) > 1)
  assert perm is not None
  R = _unpermute(perm, M[:, :, n:]) if len(parts) > 1 else None
  X = R[:, :, :m] if R is not None and Bm is not None else None
  Ai = R[:, :, m:] if R is not None and want_inv else None
  return X, Ai, P, _perm_sign(perm)

# ---- det, slogdet, inv, solve

def _det_parts(fn: str, A: Tensor) -> tuple[Tensor, Tensor, Tensor | None, tuple[int, ...], DType]:
  """(pivots (B, n), permutation sign (B,), A^-1 (B, n, n) if A needs a gradient, batch shape, compute dtype)."""
  _square_check(fn, A)
  cdt = _compute_dtype(A.dtype)
  Af, batch = _flat(A.detach().cast(cdt))
  _, Ai, P, sign = _solve_core(Af, None, _wants_grad(A))
  return P, sign, Ai, batch, cdt

def det(A: Tensor) -> Tensor:
  """torch.linalg.det: determinants of (..., n, n), shape (...). The product of LU's pivots times the permutation's
  sign; the gradient is det * A^-T (a surrogate, see the module's docstring)."""
  P, sign, Ai, batch, cdt = _det_parts("linalg.det", A)
  d = P.prod(-1) * sign
  if Ai is not None:
    d = d + d * (Ai.transpose(-1, -2) * _tangent(A.cast(cdt)).reshape(Ai.shape)).sum((-2, -1))
  return d.reshape(batch).cast(A.dtype)

def slogdet(A: Tensor) -> SlogdetResult:
  """torch.linalg.slogdet: (sign, log|det|) of (..., n, n); a singular matrix gives (0, -inf). The gradient of
  logabsdet is A^-T."""
  P, sign, Ai, batch, cdt = _det_parts("linalg.slogdet", A)
  s = P.sign().prod(-1) * sign
  la = P.abs().log().sum(-1)
  if Ai is not None: la = la + (Ai.transpose(-1, -2) * _tangent(A.cast(cdt)).reshape(Ai.shape)).sum((-2, -1))
  return SlogdetResult(s.reshape(batch).cast(A.dtype), la.reshape(batch).cast(A.dtype))

def _check_singular(P: Tensor, batched: bool, msg) -> None:
  if (z := _first_zero_pivot(P)) is not None: raise LinAlgError(_batch_prefix(batched, z[0]) + msg(z[1]))

def _inv_parts(fn: str, A: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
  """(A^-1 with its gradient surrogate, in the compute dtype, pivots (B, n), batch shape)."""
  _square_check(fn, A)
  cdt = _compute_dtype(A.dtype)
  Af, batch = _flat(A.detach().cast(cdt))
  _, Ai, P, _ = _solve_core(Af, None, True)
  assert Ai is not None
  X = Ai.reshape(A.shape)
  if _wants_grad(A): X = X - X.matmul(_tangent(A.cast(cdt))).matmul(X)
  return X, P, batch

def inv(A: Tensor) -> Tensor:
  """torch.linalg.inv: inverses of (..., n, n) by Gauss-Jordan elimination with partial pivoting. A singular matrix
  raises LinAlgError where teeny reads data (the CPU); the gradient is -A^-T g A^-T."""
  X, P, batch = _inv_parts("linalg.inv", A)
  _check_singular(P, len(batch) > 0, lambda i: f"linalg.inv: The diagonal element {i} is zero, the inversion could "
                  "not be completed because the input matrix is singular.")
  return X.cast(A.dtype)

def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:
  """torch.linalg.inv_ex: (inverse, info) without raising for a singular matrix (unless check_errors); info (int32,
  shape (...)) is the 1-based index of the first zero pivot, 0 where the inversion succeeded."""
  X, P, batch = _inv_parts("linalg.inv_ex", A)
  if check_errors:
    _check_singular(P, len(batch) > 0, lambda i: f"linalg.inv_ex: The diagonal element {i} is zero, the inversion "
                    "could not be completed because the input matrix is singular.")
  n = A.shape[-1]
  first = (P == 0).where(Tensor.arange(1, n + 1, device=A.device), n + 1).min(-1) if n else \
    Tensor.full((P.shape[0],), n + 1, device=A.device)
  return X.cast(A.dtype), (first == n + 1).where(0, first).cast(dtypes.int32).reshape(batch)

def _solve_shapes(fn: str, A: Tensor, B: Tensor, left: bool) -> bool:
  """Whether B is a (batch of) vector(s) (torch's rule: B.ndim == 1, or B's shape is A's without its last dim);
  raises for shapes that do not fit."""
  _square_check(fn, A)
  _float_check(fn, "B", B)
  if A.dtype != B.dtype:
    raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type {A.dtype} and B of type "
                       f"{B.dtype} instead")
  vec = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
  n = A.shape[-1]
  if vec:
    if B.shape[-1] != n:
      raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and "
                         f"{B.shape[-1]}x1)")
  else:
    if B.ndim < 2:
      raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                         f"({n}x{n} and {B.shape[-1]}x1)")
    k = B.shape[-2] if left else B.shape[-1]
    if k != n:
      raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                         f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
  bb = tuple(B.shape[:-1] if vec else B.shape[:-2])
  try: broadcast_shape(tuple(A.shape[:-2]), bb)
  except ValueError:
    raise RuntimeError(f"{fn}: the batch dimensions of A {tuple(A.shape)} and B {tuple(B.shape)} do not broadcast") \
      from None
  return vec

def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
  """torch.linalg.solve: X with A X = B (left=True) or X A = B (left=False). B is a vector (n,) / (..., n) when
  B.ndim == 1 or B.shape == A.shape[:-1], else matrices (..., n, k); batch dims broadcast. Gauss-Jordan with partial
  pivoting on [A | B]; a singular A raises LinAlgError where teeny reads data. Gradients (surrogate):
  dB = A^-T g, dA = -dB X^T."""
  vec = _solve_shapes("linalg.solve", A, B, left)
  if not left: return solve(A.transpose(-1, -2), B.transpose(-1, -2)).transpose(-1, -2)
  cdt = _compute_dtype(A.dtype)
  Bm = B.unsqueeze(-1) if vec else B
  batch = broadcast_shape(tuple(A.shape[:-2]), tuple(Bm.shape[:-2]))
  n, m = A.shape[-1], Bm.shape[-1]
  Ab, Bb = A.cast(cdt).expand(*batch, n, n), Bm.cast(cdt).expand(*batch, n, m)
  grad = _wants_grad(A, B)
  X0, Ai, P, _ = _solve_core(_flat(Ab.detach())[0], _flat(Bb.detach())[0], grad)
  assert X0 is not None
  _check_singular(P, False, lambda i: "torch.linalg.solve: The solver failed because the input matrix is singular.")
  X = X0.reshape(*batch, n, m)
  if Ai is not None:
    X = X - Ai.reshape(*batch, n, n).matmul(_tangent(Ab).matmul(X) - _tangent(Bb))
  X = X.cast(A.dtype)
  return X.squeeze(-1) if vec else X

# ---- triangular solves and Cholesky

def _tri_solve(T: Tensor, B: Tensor) -> Tensor:
  """T^-1 B for triangular T (B, n, n) (only its triangle nonzero) and B (B, n, m), both detached: the elimination
  without pivoting."""
  n = T.shape[-1]
  M, _, _ = _eliminate(Tensor.cat(T, B, dim=-1), n, pivoting=False)
  return M[:, :, n:]

def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
  """torch.linalg.solve_triangular: X with A X = B (left) or X A = B, reading only A's upper or lower triangle (and
  taking its diagonal as ones with unitriangular). B must be matrices (..., n, k); batch dims broadcast. A zero on
  the diagonal gives inf/nan, as torch (no error). Gradients (surrogate): dB = A^-T g restricted, dA = -dB X^T on
  the triangle read."""
  fn = "linalg.solve_triangular"
  _float_check(fn, "A", A)
  _float_check(fn, "B", B)
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
  if B.ndim < 2: raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
  _solve_shapes(fn, A, B, left)
  if not left:
    return solve_triangular(A.transpose(-1, -2), B.transpose(-1, -2), upper=not upper,
                            unitriangular=unitriangular).transpose(-1, -2)
  cdt = _compute_dtype(A.dtype)
  n, m = A.shape[-1], B.shape[-1]
  T = A.cast(cdt).triu() if upper else A.cast(cdt).tril()
  if unitriangular: T = T.triu(1) + Tensor.eye(n, dtype=cdt, device=A.device) if upper else \
      T.tril(-1) + Tensor.eye(n, dtype=cdt, device=A.device)
  batch = broadcast_shape(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
  Tb, Bb = T.expand(*batch, n, n), B.cast(cdt).expand(*batch, n, m)
  if math.prod(batch) == 0 or n == 0 or m == 0: return Bb.cast(A.dtype) * 1
  X = _tri_solve(_flat(Tb.detach())[0], _flat(Bb.detach())[0]).reshape(*batch, n, m)
  if _wants_grad(A, B):
    Ti = _tri_solve(_flat(Tb.detach())[0], Tensor.eye(n, dtype=cdt, device=A.device).reshape(1, n, n)
                    .expand(math.prod(batch), n, n)).reshape(*batch, n, n)
    X = X - Ti.matmul(_tangent(Tb).matmul(X) - _tangent(Bb))
  return X.cast(A.dtype)

def _cholesky_core(A: Tensor) -> tuple[Tensor, Tensor]:
  """Lower Cholesky factor of A (B, n, n) (detached; the lower triangle is read), column by column; and the values
  whose square roots became the diagonal (B, n) (<= 0 or nan: not positive-definite)."""
  Bt, n, _ = A.shape
  dt, dev = A.dtype, A.device
  L = Tensor.zeros(Bt, n, n, dtype=dt, device=dev).contiguous()
  ds: list[Tensor] = []
  for j in range(n):
    rj, _, gt, cj = _masks(n, n, j, dt, dev)
    lrow = (L * rj.reshape(n, 1)).sum(-2)                                # (B, n): row j of L (columns < j filled)
    v = (A * cj).sum(-1) - (L * lrow.unsqueeze(-2)).sum(-1)              # (B, n): A[:, j] - L L[j]^T
    d = (v * rj).sum(-1, keepdim=True)                                   # (B, 1)
    root = (d > 0).where(d, 1.0).sqrt()
    colj = (d > 0).where(v * gt / root + rj * root, math.nan)
    L = (L + colj.unsqueeze(-1) * cj).contiguous()
    ds.append(d)
  D = Tensor.cat(*ds, dim=-1) if ds else Tensor.ones(Bt, 0, dtype=dt, device=dev)
  return L, D

def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
  """torch.linalg.cholesky: L with A = L L^T (lower; upper=True gives L^T) for symmetric positive-definite (..., n, n),
  reading A's lower triangle. Not positive-definite raises LinAlgError where teeny reads data (else nan). Gradient
  (surrogate, A taken as symmetric as torch): dA = L^-T Phi(L^T g) L^-1 symmetrized, Phi = the lower triangle with
  the diagonal halved."""
  fn = "linalg.cholesky"
  _square_check(fn, A)
  cdt = _compute_dtype(A.dtype)
  Af, batch = _flat(A.detach().cast(cdt))
  n = A.shape[-1]
  if Af.shape[0] == 0 or n == 0: return A * 1
  L0, D = _cholesky_core(Af)
  if D.numel() and _reads_allowed(D.device):
    bad = ~(D.numpy() > 0)
    if bad.any():
      b = int(np.argmax(bad.any(-1)))
      raise LinAlgError(_batch_prefix(len(batch) > 0, b) + f"{fn}: The factorization could not be completed because "
                        f"the input is not positive-definite (the leading minor of order {int(np.argmax(bad[b])) + 1}"
                        " is not positive-definite).")
  L = L0.reshape(*batch, n, n)
  if _wants_grad(A):
    eye = Tensor.eye(n, dtype=cdt, device=A.device)
    Li = _tri_solve(L0, eye.reshape(1, n, n).expand(L0.shape[0], n, n)).reshape(*batch, n, n)
    dA = _tangent(A.cast(cdt))
    S = Li.matmul((dA + dA.transpose(-1, -2)) * 0.5).matmul(Li.transpose(-1, -2))
    L = L + L.matmul(S.tril(-1) + S * eye * 0.5)
  L = L.cast(A.dtype)
  return L.transpose(-1, -2) if upper else L

def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
  """torch.cholesky_solve(B, L, upper): X with (L L^T) X = B (or U^T U X = B with upper), L a Cholesky factor."""
  if upper:
    return solve_triangular(L, solve_triangular(L.transpose(-1, -2), B, upper=False), upper=True)
  return solve_triangular(L.transpose(-1, -2), solve_triangular(L, B, upper=False), upper=True)

# ---- QR

def qr(A: Tensor, mode: str = "reduced") -> QRResult:
  """torch.linalg.qr: A = Q R for (..., m, n), mode 'reduced' (Q (m, k), R (k, n), k = min(m, n)), 'complete'
  (Q (m, m), R (m, n)) or 'r' (R only; Q is empty). Householder reflections with LAPACK's signs (torch's values).
  Gradients: autograd through the reflections."""
  fn = "linalg.qr"
  if mode not in ("reduced", "complete", "r"):
    raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                       "'complete'")
  _float_check(fn, "A", A)
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
  cdt = _compute_dtype(A.dtype)
  m, n = A.shape[-2], A.shape[-1]
  K = min(m, n)
  Af, batch = _flat(A.cast(cdt))
  Bt = Af.shape[0]
  dev = A.device
  M = Tensor.cat(Af, Tensor.eye(m, dtype=cdt, device=dev).reshape(1, m, m).expand(Bt, m, m), dim=-1)
  w = n + m
  for k in range(K if Bt else 0):
    rk, geq, gt, ck = _masks(m, w, k, cdt, dev)
    col = (M * ck).sum(-1)                                               # (B, m)
    x = col * geq
    alpha = (col * rk).sum(-1, keepdim=True)                             # (B, 1)
    below = (col * gt).square().sum(-1, keepdim=True)                    # |x below the diagonal|^2
    refl = below > 0
    nrm = (alpha.square() + refl.where(below, 0.0)).sqrt()
    beta = (alpha >= 0).where(-nrm, nrm)                                 # LAPACK: R_kk = -sign(alpha) * |x|
    v = x - rk * beta                                                    # (B, m): v_k = alpha - beta
    vv = refl.where(v.square().sum(-1, keepdim=True), 1.0)
    coef = refl.where(2.0 / vv, 0.0)                                     # no reflection when nothing is below
    vM = (v.unsqueeze(-1) * M).sum(-2)                                   # (B, w): v^T M
    M = (M - (coef * v).unsqueeze(-1) * vM.unsqueeze(-2)).contiguous()
  R = M[:, :, :n].triu()
  Qt = M[:, :, n:]
  if mode == "r":
    return QRResult(Tensor.zeros(0, dtype=A.dtype, device=dev), R[:, :K].reshape(*batch, K, n).cast(A.dtype))
  if mode == "reduced": R, Qt = R[:, :K], Qt[:, :K]
  Q = Qt.transpose(-1, -2)
  return QRResult(Q.reshape(*batch, m, Q.shape[-1]).cast(A.dtype), R.reshape(*batch, R.shape[-2], n).cast(A.dtype))

# ---- symmetric eigendecomposition (parallel cyclic Jacobi) and the SVD built on it

JACOBI_SWEEPS = 0   # sweeps over every pair (0: by size and dtype, see _sweeps); no step reads data to stop early
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
_PAIRS: dict[tuple, tuple[Tensor, Tensor]] = {}

def _pairing(N: int, r: int, dt: DType, device: str) -> tuple[Tensor, Tensor]:
  """Round r of the round-robin schedule on N (even) indices: the partner one-hot matrix (N, N) and +1 / -1 for the
  first / second index of each pair (N,); buffers, so every round runs the same kernels."""
  key = (N, r, dt, device)
  if (m := _PAIRS.get(key)) is None:
    order = [0] + [1 + (i + r) % (N - 1) for i in range(N - 1)]   # index 0 fixed, the others rotate
    P, sg = np.zeros((N, N)), np.zeros(N)
    for k in range(N // 2):
      a, b = order[k], order[N - 1 - k]
      P[a, b] = P[b, a] = 1
      sg[min(a, b)], sg[max(a, b)] = 1, -1
    m = (Tensor(P.astype(dt.np), device=device), Tensor(sg.astype(dt.np), device=device))
    if len(_PAIRS) > 4096: _PAIRS.clear()
    _PAIRS[key] = m
  return m

def _sweeps(N: int, dt: DType) -> int:
  """Jacobi sweeps for N indices: convergence is quadratic once the off-diagonal part is small, and the sweeps it
  takes to get there grow like log N (6 reach float64's precision for N <= 8 on random matrices)."""
  if JACOBI_SWEEPS: return JACOBI_SWEEPS
  return max(1, math.ceil(math.log2(max(N, 2)))) + (3 if dt == dtypes.float32 else 4)

def _jacobi(A: Tensor) -> tuple[Tensor, Tensor]:
  """Eigenvalues (B, n) and eigenvectors (B, n, n) (columns) of symmetric A (B, n, n) (detached), unsorted. Each round
  rotates N/2 disjoint pairs (p, q) at once, each rotation zeroing A[p, q]: A <- J^T A J, V <- V J, on M = [A; V]
  (B, 2N, N) as three kernels: one reduction (A[i, partner(i)] and the partner's diagonal entry), M J, and
  diag(J^T, I) (M J)."""
  Bt, n, _ = A.shape
  dt, dev = A.dtype, A.device
  N = n + n % 2   # an odd n gets a decoupled zero row and column
  if N != n: A = A.pad(((0, 0), (0, 1), (0, 1)))
  eye = Tensor.eye(N, dtype=dt, device=dev)
  A = (A + A.transpose(-1, -2)) * 0.5
  M = Tensor.cat(A, eye.reshape(1, N, N).expand(Bt, N, N), dim=-2).contiguous()
  corner = eye.pad(((N, 0), (N, 0)))                                    # (2N, 2N): I in the lower right block
  for _ in range(_sweeps(N, dt) if N > 1 else 0):
    for r in range(N - 1):
      P, sg = _pairing(N, r, dt, dev)
      Acur = M[:, :N]
      d = Acur.diagonal(0, -2, -1)                                       # (B, N)
      both = Tensor.stack(Acur * P, d.unsqueeze(-2) * P, dim=1).sum(-1)  # (B, 2, N): one reduction
      off, dp = both[:, 0], both[:, 1]                                   # A[i, partner(i)], d[partner(i)]
      zero = off == 0
      theta = sg * (dp - d) / (2 * zero.where(1.0, off))                 # (a_qq - a_pp) / (2 a_pq), same for p and q
      t = (theta >= 0).where(1.0, -1.0) / (theta.abs() + (theta * theta + 1).sqrt())
      t = zero.where(0.0, t)
      c = (t * t + 1).rsqrt()
      J = (eye * c.unsqueeze(-1) + P * (t * c * sg).unsqueeze(-1)).contiguous()  # J[p,p] = J[q,q] = c, J[p,q] = s
      G = J.transpose(-1, -2).pad(((0, 0), (0, N), (0, N))) + corner     # diag(J^T, I)
      M = G.matmul(M.matmul(J)).contiguous()
  lam = M[:, :N].diagonal(0, -2, -1)
  return lam[:, :n], M[:, N:N + n, :n]

def _eigh_core(fn: str, A: Tensor, UPLO: str, vectors: bool) -> tuple[Tensor, Tensor | None]:
  _square_check(fn, A)
  if UPLO not in ("L", "U"): raise RuntimeError(f"{fn}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
  cdt = _compute_dtype(A.dtype)
  n = A.shape[-1]
  batch = tuple(A.shape[:-2])
  Ac = A.cast(cdt)
  S = Ac.tril() + Ac.tril(-1).transpose(-1, -2) if UPLO == "L" else Ac.triu() + Ac.triu(1).transpose(-1, -2)
  if math.prod(batch) == 0 or n == 0:
    return Ac.sum(-1) * 0, (Ac * 0 if vectors else None)
  lam, V = _jacobi(_flat(S.detach())[0])
  lam, idx = lam.sort(-1)                                                # ascending, as torch
  V = V.gather(-1, idx.unsqueeze(-2).expand(V.shape))
  lam, V = lam.reshape(*batch, n), V.reshape(*batch, n, n)
  if _wants_grad(A):   # first-order perturbation theory: dl = diag(V^T dA V), dV = V (F * (V^T dA V)), with dA
    dA = _tangent(Ac)   # symmetrized: torch's gradient is symmetric (the whole matrix, though only a triangle is read)
    M = V.transpose(-1, -2).matmul((dA + dA.transpose(-1, -2)) * 0.5).matmul(V)
    lam = lam + M.diagonal(0, -2, -1)
    if vectors:
      gap = lam.detach().unsqueeze(-2) - lam.detach().unsqueeze(-1)       # [i, j] = l_j - l_i
      F = (gap == 0).where(0.0, 1 / (gap == 0).where(1.0, gap))
      V = V + V.matmul(F * M)
  return lam.cast(A.dtype), (V.cast(A.dtype) if vectors else None)

def eigh(A: Tensor, UPLO: str = "L") -> EighResult:
  """torch.linalg.eigh: eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric (..., n, n), from
  the lower (UPLO='L') or upper triangle. Parallel cyclic Jacobi, JACOBI_SWEEPS sweeps (no early stop: nothing is read
  back). Eigenvector signs are arbitrary, as torch's (they may differ from torch's). Gradients (surrogate, first
  order, dA symmetrized as torch's): dL = diag(V^T dA V), dV = V (F * V^T dA V), F[i, j] = 1 / (l_j - l_i) (0 for
  equal eigenvalues)."""
  lam, V = _eigh_core("linalg.eigh", A, UPLO, True)
  assert V is not None
  return EighResult(lam, V)

def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
  """torch.linalg.eigvalsh: the eigenvalues (ascending) of symmetric (..., n, n) (see eigh)."""
  return _eigh_core("linalg.eigvalsh", A, UPLO, False)[0]

def _svd_core(fn: str, A: Tensor, vectors: bool) -> tuple[Tensor | None, Tensor, Tensor | None]:
  """(U (..., m, k), S (..., k) descending, V (..., n, k)) of A (..., m, n), k = min(m, n), from the eigenpairs of
  [[0, A], [A^T, 0]]: its eigenvalues are +-S (and |m - n| zeros), its eigenvectors [u; v] / sqrt(2)."""
  _float_check(fn, "A", A)
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
  m, n = A.shape[-2], A.shape[-1]
  k = min(m, n)
  batch = tuple(A.shape[:-2])
  if k == 0 or math.prod(batch) == 0:
    z = A.cast(_compute_dtype(A.dtype)).sum((-2, -1)).reshape(*batch, 1) * 0
    S0 = z[..., :0] if k == 0 else z.expand(*batch, k) * 0
    U0 = Tensor.zeros(*batch, m, k, dtype=A.dtype, device=A.device) if vectors else None
    V0 = Tensor.zeros(*batch, n, k, dtype=A.dtype, device=A.device) if vectors else None
    return U0, S0.cast(A.dtype), V0
  zm, zn = Tensor.zeros(*batch, m, m, dtype=A.dtype, device=A.device), Tensor.zeros(*batch, n, n, dtype=A.dtype,
                                                                                     device=A.device)
  H = Tensor.cat(Tensor.cat(zm, A, dim=-1), Tensor.cat(A.transpose(-1, -2), zn, dim=-1), dim=-2)
  lam, W = _eigh_core(fn, H, "L", vectors)
  S = lam[..., m + n - k:].flip(-1)                                      # the k largest, descending
  if not vectors: return None, S, None
  assert W is not None
  Wk = W[..., m + n - k:].flip(-1) * math.sqrt(2)
  return Wk[..., :m, :], S, Wk[..., m:, :]

def _complete_basis(Q: Tensor) -> Tensor:
  """(..., r, r) from Q (..., r, k) with orthonormal columns: Q followed by r - k columns orthonormal to Q's and to
  each other, the last r - k columns of the complete Householder QR of Q (whose first k columns are Q's up to sign).
  The added columns are detached: they are any basis of the complement, and torch's gradient ignores them too."""
  r, k = Q.shape[-2], Q.shape[-1]
  if r == k: return Q
  rest = qr(Q.detach(), "complete").Q[..., k:]
  return Tensor.cat(Q, rest.cast(Q.dtype), dim=-1)

def svd(A: Tensor, full_matrices: bool = True) -> SVDResult:
  """torch.linalg.svd: A = U diag(S) Vh, S descending; full_matrices=False gives U (m, k), Vh (k, n), k = min(m, n),
  full_matrices=True U (m, m) and Vh (n, n). From the symmetric eigenproblem of [[0, A], [A^T, 0]] (see eigh: Jacobi,
  no squared condition number); singular vectors are exact up to sign for distinct, nonzero singular values,
  ambiguous (as any basis) for repeated ones. For a non-square A with full_matrices=True the thin U (or V) is
  completed to a square orthonormal basis by a complete Householder QR of it (the extra columns span the null space
  of A^T (or A); any orthonormal basis of it is an SVD's). Gradients through eigh's (the extra columns get none, as
  torch's)."""
  U, S, V = _svd_core("linalg.svd", A, True)
  assert U is not None and V is not None
  if full_matrices and A.shape[-1] != A.shape[-2]: U, V = _complete_basis(U), _complete_basis(V)
  return SVDResult(U, S, V.transpose(-1, -2))

def svdvals(A: Tensor) -> Tensor:
  """torch.linalg.svdvals: the singular values of (..., m, n), descending (see svd)."""
  return _svd_core("linalg.svdvals", A, False)[1]

def _eps(dt) -> float:
  """The machine epsilon of float64, else float32's (the default tolerances' unit, as torch's)."""
  return 2.220446049250313e-16 if dt == dtypes.float64 else 1.1920928955078125e-07

def _inv_kept(U: Tensor, S: Tensor, V: Tensor, keep: Tensor) -> Tensor:
  """V diag(1/S) U^T over the values `keep` marks, the others dropped (a pseudo-inverse from U, S, V)."""
  inv_s = keep.where(1 / keep.where(S, 1.0), 0.0)
  return (V * inv_s.unsqueeze(-2)).matmul(U.transpose(-1, -2))

def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False) -> Tensor:
  """torch.linalg.pinv: the pseudo-inverse V diag(1/S) U^T, singular values <= max(atol, rtol * S_max) dropped (rtol
  defaults to eps * max(m, n) when atol is not given, else 0). hermitian=True uses eigh."""
  fn = "linalg.pinv"
  _float_check(fn, "A", A)
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
  if rtol is None: rtol = _eps(A.dtype) * max(A.shape[-2], A.shape[-1]) if atol is None else 0.0
  atol = 0.0 if atol is None else atol
  if hermitian:
    lam, V = eigh(A)
    big = lam.abs().amax(-1, keepdim=True) if lam.shape[-1] else lam.abs().sum(-1, keepdim=True)
    return _inv_kept(V, lam, V, lam.abs() > (big * rtol).maximum(atol))
  U, S, Vh = svd(A, full_matrices=False)
  big = S[..., :1] if S.shape[-1] else S.sum(-1, keepdim=True)
  return _inv_kept(U, S, Vh.transpose(-1, -2), S > (big * rtol).maximum(atol))

LstsqResult = namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")

def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> LstsqResult:
  """torch.linalg.lstsq (its CPU drivers): X minimizing |A X - B| for A (*, m, n) and B (*, m, k) (or (*, m) when
  B.ndim == A.ndim - 1: a vector, X (*, n)); the batch dims broadcast. X = pinv(A) B: the minimum-norm solution, the
  singular values <= rcond * S_max dropped (rcond None: eps * max(m, n); 'gels' drops none, it assumes A has full
  rank; 'gelsy' picks its rank by an incremental condition estimate of a pivoted QR, teeny by the singular values, so
  an rcond that falls between them may give another rank than torch's). The other fields follow torch's driver
  (default 'gelsy'):
  - residuals |A X - B|^2 over the rows (*, k): for 'gels', 'gelsd', 'gelss' when m > n, and (not 'gels') every A
    of the batch has full rank (which teeny reads where it may read data, else assumes); otherwise empty;
  - rank (A's batch dims, int64): 'gelsy', 'gelsd', 'gelss' (the number of singular values kept); 'gels': empty;
  - singular_values (A's batch dims, min(m, n)): 'gelsd', 'gelss'; otherwise empty.
  The gradient of X (a surrogate, first order): the derivative of the pseudo-inverse at constant rank,
  dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P, and dX = dP B + P dB."""
  fn = "torch.linalg.lstsq"
  for name, t in (("input", A), ("other", B)):
    if not isinstance(t, Tensor):
      raise TypeError(f"linalg_lstsq(): argument '{name}' must be Tensor, not {type(t).__name__}")
  if A.dtype not in (dtypes.float32, dtypes.float64) or B.dtype not in (dtypes.float32, dtypes.float64):
    raise RuntimeError(f"{fn}: This function doesn't handle types other than float and double (got {A.dtype.name} "
                       f"and {B.dtype.name})")
  if A.ndim < 2: raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
  if A.dtype != B.dtype:
    raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got input's dtype {A.dtype.name} "
                       f"and other's dtype {B.dtype.name}")
  if driver is None: driver = "gelsy"
  if driver not in _LSTSQ_DRIVERS:
    raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), got {driver!r}")
  if rcond is not None and (isinstance(rcond, bool) or not isinstance(rcond, (int, float))):
    raise TypeError(f"linalg_lstsq(): argument 'rcond' must be float, not {type(rcond).__name__}")
  if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
    raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= "
                       f"1 (got {A.ndim} and {B.ndim})")
  vec = A.ndim - B.ndim == 1
  Bm = B.unsqueeze(-1) if vec else B
  try: batch = broadcast_shape(tuple(A.shape[:-2]), tuple(Bm.shape[:-2]))
  except ValueError:
    raise RuntimeError(f"{fn}: the batch dimensions of input {tuple(A.shape)} and other {tuple(B.shape)} do not "
                       "broadcast") from None
  m, n, k = A.shape[-2], A.shape[-1], Bm.shape[-1]
  if Bm.shape[-2] != m:
    raise RuntimeError(f"{fn}: input.size(-2) should match other.size({-1 if vec else -2}) (got {m} and "
                       f"{Bm.shape[-2]})")
  tol = 0.0 if driver == "gels" else (_eps(A.dtype) * max(m, n) if rcond is None else float(rcond))
  U, S, V = _svd_core("linalg.lstsq", A.detach(), True)                 # (A's batch, m / n, q), (A's batch, q)
  assert U is not None and V is not None
  big = S[..., :1] if S.shape[-1] else S.sum(-1, keepdim=True)
  keep = S > big * tol
  P = _inv_kept(U, S, V, keep)                                         # pinv(A) (A's batch, n, m), detached
  if _wants_grad(A):
    dA, Pt = _tangent(A), P.transpose(-1, -2)
    eye_m, eye_n = Tensor.eye(m, dtype=A.dtype, device=A.device), Tensor.eye(n, dtype=A.dtype, device=A.device)
    dAt = dA.transpose(-1, -2)
    P = P - P.matmul(dA).matmul(P) + P.matmul(Pt).matmul(dAt).matmul(eye_m - A.detach().matmul(P)) + \
      (eye_n - P.matmul(A.detach())).matmul(dAt).matmul(Pt).matmul(P)
  X = P.expand(*batch, n, m).matmul(Bm.expand(*batch, m, k))
  rank = keep.sum(-1).cast(dtypes.int64)
  empty = Tensor.zeros(0, dtype=A.dtype, device=A.device)
  residuals = empty
  if m > n and driver != "gelsy":
    full = True
    if driver != "gels" and rank.numel() and _reads_allowed(rank.device): full = bool((rank.numpy() == n).all())
    if full: residuals = (A.expand(*batch, m, n).matmul(X) - Bm.expand(*batch, m, k)).square().sum(-2)
  return LstsqResult(X.squeeze(-1) if vec else X, residuals,
                     Tensor.zeros(0, dtype=dtypes.int64, device=A.device) if driver == "gels" else rank,
                     S if driver in ("gelsd", "gelss") else empty)

def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False) -> Tensor:
  """torch.linalg.matrix_rank: the number of singular values > max(atol, rtol * S_max) (int64)."""
  _float_check("linalg.matrix_rank", "A", A)
  if rtol is None: rtol = _eps(A.dtype) * max(A.shape[-2], A.shape[-1]) if atol is None else 0.0
  S = eigvalsh(A).abs() if hermitian else svdvals(A)
  big = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
  return (S > (big * rtol).maximum(0.0 if atol is None else atol)).sum(-1).cast(dtypes.int64)

def cond(A: Tensor, p: float | str | None = None) -> Tensor:
  """torch.linalg.cond: the condition number in the p-norm: S_max / S_min for p None or 2 (S_min / S_max for -2),
  else norm(A, p) * norm(inv(A), p) ('fro', 'nuc', inf, -inf, 1, -1; square matrices)."""
  if p is None or p in (2, -2):
    S = svdvals(A)
    return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
  return matrix_norm(A, p) * matrix_norm(inv(A), p)

# ---- norms and products

def vector_norm(x: Tensor, ord: float = 2, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
                dtype: DType | str | None = None) -> Tensor:
  """torch.linalg.vector_norm: the ord-norm over dim (None: every element): 2, 1, inf, -inf, 0 or any float."""
  fn = "linalg.vector_norm"
  if not isinstance(x, Tensor): raise TypeError(f"{fn}: x must be a Tensor, got {type(x).__name__}")
  if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
    raise TypeError(f"{fn}: ord must be a number, got {ord!r}")
  if (x if dtype is None else x.cast(dtype)).dtype.kind != "f":
    raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {x.dtype.name}")
  return x.norm(float(ord), dim=list(dim) if isinstance(dim, (list, tuple)) else dim, keepdim=keepdim, dtype=dtype)

def matrix_norm(A: Tensor, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                dtype: DType | str | None = None) -> Tensor:
  """torch.linalg.matrix_norm: 'fro', inf / -inf (max / min row sum of |a|), 1 / -1 (max / min column sum) over the two
  dims of `dim`; 'nuc', 2 and -2 from svdvals (the sum, largest, smallest singular value)."""
  fn = "linalg.matrix_norm"
  _float_check(fn, "A", A if dtype is None else A.cast(dtype))
  if A.ndim < 2: raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
  if not isinstance(dim, (tuple, list)) or len(dim) != 2: raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {dim}")
  d0, d1 = (d + A.ndim if d < 0 else d for d in dim)
  if not (0 <= d0 < A.ndim and 0 <= d1 < A.ndim):
    raise IndexError(f"{fn}: dim {tuple(dim)} is out of range for a tensor of {A.ndim} dims")
  if d0 == d1: raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
  x = A if dtype is None else A.cast(dtype)
  if isinstance(ord, str):
    if ord == "fro": return x.norm(2.0, dim=[d0, d1], keepdim=keepdim)
    if ord != "nuc": raise RuntimeError(f"{fn}: Order {ord} not supported.")
  if ord in (2, -2, "nuc"):   # from the singular values (svdvals)
    rest = [i for i in range(x.ndim) if i not in (d0, d1)]
    S = svdvals(x.permute(*rest, d0, d1))
    out = S.sum(-1) if ord == "nuc" else S[..., 0] if ord == 2 else S[..., -1]
    if keepdim: out = out.reshape(tuple(1 if i in (d0, d1) else s for i, s in enumerate(x.shape)))
    return out
  if ord not in (1, -1, math.inf, -math.inf): raise RuntimeError(f"{fn}: Order {ord} not supported.")
  sum_d, red_d = (d0, d1) if ord in (1, -1) else (d1, d0)
  s = x.abs().sum(sum_d, keepdim=True)
  if x.shape[red_d] == 0:   # torch: the max of no sums is 0; their min is an error
    if ord < 0: raise IndexError(f"{fn}: amin(): Expected reduction dim {red_d} to have non-zero size (ord={ord}, "
                                 f"shape {tuple(x.shape)})")
    out = s.sum(red_d, keepdim=True)
  else: out = s.amax(red_d, keepdim=True) if ord > 0 else s.amin(red_d, keepdim=True)
  return out if keepdim else out.squeeze((d0, d1) if d0 < d1 else (d1, d0)).reshape(
    tuple(s for i, s in enumerate(x.shape) if i not in (d0, d1)))

def norm(A: Tensor, ord: float | str | None = None, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: DType | str | None = None) -> Tensor:
  """torch.linalg.norm: a vector norm when dim is an int (or ord is None and dim is None: every element), a matrix norm
  when dim is a pair or ord is a string; with ord given and dim None the input must be 1-D or 2-D."""
  fn = "linalg.norm"
  if not isinstance(A, Tensor): raise TypeError(f"{fn}: A must be a Tensor, got {type(A).__name__}")
  if isinstance(dim, int): dim = (dim,)
  if dim is not None and len(dim) not in (1, 2):
    raise RuntimeError(f"{fn}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
  if dim is None:
    if ord is None: return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
      raise RuntimeError(f"{fn}: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")
    dim = tuple(range(A.ndim))
  if len(dim) == 2 or isinstance(ord, str):
    if len(dim) != 2: raise RuntimeError(f"{fn}: ord {ord!r} needs a 2-D dim, got {list(dim)}")
    return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)  # type: ignore[arg-type]
  return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)

def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
  """torch.linalg.cross: the 3-vector cross product along dim (default -1); the other dims broadcast."""
  if not isinstance(input, Tensor) or not isinstance(other, Tensor):
    raise TypeError("linalg.cross: input and other must be Tensors")
  if input.ndim != other.ndim: raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
  return input.cross(other, dim=dim)

def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
  """torch.linalg.vecdot: sum(x * y) over dim, the other dims broadcast."""
  if not isinstance(x, Tensor) or not isinstance(y, Tensor): raise TypeError("linalg.vecdot: x and y must be Tensors")
  if x.dtype != y.dtype:
    raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {x.dtype} and y "
                       f"of type {y.dtype} instead")
  try: shape = broadcast_shape(tuple(x.shape), tuple(y.shape))
  except ValueError:
    raise RuntimeError(f"linalg.vecdot: shapes {tuple(x.shape)} and {tuple(y.shape)} do not broadcast") from None
  if not -len(shape) <= dim < max(len(shape), 1):
    raise IndexError(f"linalg.vecdot: dim {dim} is out of range for {len(shape)} dims")
  return (x * y).sum(dim)

def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
  """torch.linalg.multi_dot: the product of a chain of matrices (the first may be 1-D, a row; the last 1-D, a
  column), multiplied in the cheapest order (the classic chain-order DP)."""
  ts = list(tensors)
  if len(ts) < 2: raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
  for i, t in enumerate(ts):
    if not isinstance(t, Tensor): raise TypeError(f"multi_dot(): tensor {i} is a {type(t).__name__}, not a Tensor")
    want = (1, 2) if i in (0, len(ts) - 1) else (2,)
    if t.ndim not in want:
      raise RuntimeError(f"multi_dot(): tensor {i} must be {'1D or 2D' if len(want) == 2 else '2D'} but got "
                         f"{t.ndim}D")
  first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
  if first_vec: ts[0] = ts[0].unsqueeze(0)
  if last_vec: ts[-1] = ts[-1].unsqueeze(-1)
  for i in range(len(ts) - 1):
    if ts[i].shape[1] != ts[i + 1].shape[0]:
      raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(ts[i].shape)} and "
                         f"{tuple(ts[i + 1].shape)} cannot be multiplied")
  dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
  N = len(ts)
  cost = [[0] * N for _ in range(N)]
  split = [[0] * N for _ in range(N)]
  for length in range(2, N + 1):
    for i in range(N - length + 1):
      j = i + length - 1
      cost[i][j] = -1
      for s in range(i, j):
        c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
        if cost[i][j] < 0 or c < cost[i][j]: cost[i][j], split[i][j] = c, s
  def chain(i: int, j: int) -> Tensor:
    return ts[i] if i == j else chain(i, split[i][j]).matmul(chain(split[i][j] + 1, j))
  out = chain(0, N - 1)
  if first_vec: out = out.squeeze(0)
  if last_vec: out = out.squeeze(-1)
  return out

def matmul(input: Tensor, other: Tensor) -> Tensor:
  """torch.linalg.matmul: torch.matmul."""
  return input.matmul(other)

def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
  """torch.linalg.diagonal: the diagonal of dims dim1, dim2 (default: the last two) as the last dim; a view."""
  return A.diagonal(offset, dim1, dim2)

def matrix_power(A: Tensor, n: int) -> Tensor:
  """torch.linalg.matrix_power: A**n by repeated squaring; a negative n inverts first."""
  return A.matrix_power(n)

# the Tensor methods (tensor_math: det, inverse, cholesky, qr...) sit in a lower layer than this module and reach it
# through this attribute, set when teeny is imported (as teeny.kernels registers its routes)
setattr(MathMixin, "_linalg", sys.modules[__name__])
