"""teeny.linalg against torch.linalg: values and gradients (det, slogdet, inv, solve, cholesky, solve_triangular, qr),
norms and products, the Tensor methods, and the errors (singular, not positive-definite, shapes, dtypes).

Few distinct shapes (every factorization compiles a handful of kernels per shape): the batched cases are
(batch, n) in CASES."""
import math
import numpy as np
import pytest
import torch
import teeny
from teeny import Tensor, dtypes
from teeny.indexing import _reads_allowed
from helpers import assert_like_torch, raises_like_torch, is_null

# LinAlgError needs the data read back: the CPU does by default, GPUs and NULL do not (the result holds inf/nan)
needs_reads = pytest.mark.skipif(not _reads_allowed(str(teeny.Device.DEFAULT)), reason="no data reads on this device")

L = teeny.linalg
CASES = [((), 1), ((2,), 2), ((2, 3), 3), ((), 5)]
TOL = dict(atol=1e-4, rtol=1e-4)

def compare_torch(teeny_fn, torch_fn, inputs, *, atol=1e-5, rtol=1e-4, grad=True, no_grad=()):
  """teeny_fn on Tensors against torch_fn on torch tensors of the same float32/64 arrays `inputs`: every output, and
  (grad=True) the gradients of sum(first output * u) for a random u with respect to each input not in no_grad (10x the
  tolerances). Like helpers.compare_torch, but the outputs and gradients are realized in ONE schedule: a
  factorization's unrolled steps are shared by its outputs and the gradient's surrogate, and realized one by one each
  would run (and schedule) them again."""
  rg = [grad and i not in no_grad for i in range(len(inputs))]
  tt = [Tensor(x, requires_grad=r) for x, r in zip(inputs, rg)]
  pt = [torch.tensor(x, requires_grad=r) for x, r in zip(inputs, rg)]
  outs, refs = teeny_fn(*tt), torch_fn(*pt)
  if not isinstance(refs, tuple): outs, refs = (outs,), (refs,)
  assert isinstance(outs, tuple) and len(outs) == len(refs), f"teeny gave {outs!r}, torch {len(refs)} outputs"
  if any(rg):
    up = np.random.default_rng(1).standard_normal(tuple(refs[0].shape)).astype(np.float32)
    (outs[0] * Tensor(up, dtype=outs[0].dtype)).sum().backward()
    (refs[0] * torch.tensor(up).to(refs[0].dtype)).sum().backward()
  grads = [(t.grad, p.grad) for t, p, r in zip(tt, pt, rg) if r and p.grad is not None]
  for i, (t, p, r) in enumerate(zip(tt, pt, rg)):
    assert not r or p.grad is not None or t.grad is None, f"input {i}: torch gives no gradient, teeny does"
  if not is_null(): Tensor.realize_all(*outs, *[g for g, _ in grads])
  assert_like_torch(outs, refs, atol, rtol)
  for i, (g, pg) in enumerate(grads): assert_like_torch(g, pg, 10 * atol, 10 * rtol, f"gradient {i}")
  return outs

def well_conditioned(batch, n, seed=0, dtype=np.float32) -> np.ndarray:
  rng = np.random.default_rng(seed)
  return (rng.standard_normal((*batch, n, n)) + n * np.eye(n)).astype(dtype)

def spd(batch, n, seed=0, dtype=np.float32) -> np.ndarray:
  a = np.random.default_rng(seed).standard_normal((*batch, n, n))
  return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)

def rhs(shape, seed=1) -> np.ndarray: return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

# ---- values and gradients

@pytest.mark.parametrize("batch,n", CASES)
def test_det_slogdet_inv(batch, n):
  A = well_conditioned(batch, n)
  compare_torch(L.det, torch.linalg.det, [A], **TOL)
  compare_torch(lambda a: L.slogdet(a)[::-1], lambda a: torch.linalg.slogdet(a)[::-1], [A], **TOL)
  compare_torch(L.inv, torch.linalg.inv, [A], **TOL)

# the other functions: two of the cases (compile time)
MORE = [CASES[1], CASES[3]]

@pytest.mark.parametrize("batch,n", MORE)
def test_solve(batch, n):
  A = well_conditioned(batch, n)
  compare_torch(L.solve, torch.linalg.solve, [A, rhs((*batch, n, 2))], **TOL)
  compare_torch(lambda a, b: L.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
                [A, rhs((*batch, 2, n))], **TOL)
  # B a (batch of) vector(s); batch dims broadcast: (n,) against a batch of A, a size-1 batch of A against B's
  vecs = [rhs((*batch, n)), rhs((n,))]
  compare_torch(lambda a, *b: tuple(L.solve(a, v) for v in b), lambda a, *b: tuple(torch.linalg.solve(a, v) for v in b),
                [A, *vecs], grad=False, **TOL)
  if batch: compare_torch(L.solve, torch.linalg.solve, [A[:1], rhs((*batch, n, 2))], grad=False, **TOL)

@pytest.mark.parametrize("batch,n", MORE)
def test_cholesky(batch, n):
  S = spd(batch, n)
  compare_torch(L.cholesky, torch.linalg.cholesky, [S], **TOL)
  compare_torch(lambda a: L.cholesky(a, upper=True), lambda a: torch.linalg.cholesky(a, upper=True), [S], **TOL)

def test_solve_triangular():
  A, B, Bt = well_conditioned((2,), 2), rhs((2, 2, 3)), rhs((2, 3, 2))
  # (upper, left, unitriangular)
  combos = [(True, True, False), (False, True, True), (True, False, True), (False, False, False)]
  def f(lib, a, b, bt):
    return tuple(lib.solve_triangular(a, b if left else bt, upper=upper, left=left, unitriangular=unit)
                 for upper, left, unit in combos)
  compare_torch(lambda *t: f(L, *t), lambda *t: f(torch.linalg, *t), [A, B, Bt], **TOL)   # gradients: upper, left
  compare_torch(lambda a, b: L.solve_triangular(a, b, upper=False, left=False),
                lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False), [A, Bt], **TOL)

@pytest.mark.parametrize("batch,n", MORE)
def test_qr_square(batch, n):
  A = well_conditioned(batch, n)
  compare_torch(lambda a: tuple(L.qr(a)), lambda a: tuple(torch.linalg.qr(a)), [A], **TOL)
  compare_torch(lambda a: L.qr(a)[1], lambda a: torch.linalg.qr(a)[1], [A], **TOL)    # R's gradient alone

def test_qr_modes():
  for shape in ((2, 3, 2), (2, 3)):   # tall and wide
    A = rhs(shape, seed=3)
    for mode in ("reduced", "complete", "r"):   # (gradients: one of torch's differentiable cases)
      compare_torch(lambda a: tuple(L.qr(a, mode)), lambda a: tuple(torch.linalg.qr(a, mode)), [A],
                    grad=mode == "reduced" and len(shape) == 3, **TOL)

def test_float64_and_half():
  A = well_conditioned((2,), 2, dtype=np.float64)
  compare_torch(lambda a: (L.det(a), L.inv(a), L.eigvalsh(a + a.mT)), lambda a: (torch.linalg.det(a),
                torch.linalg.inv(a), torch.linalg.eigvalsh(a + a.mT)), [A], atol=1e-10, rtol=1e-10)
  # 16-bit inputs are computed in float32 and cast back (torch refuses them on the CPU)
  h = well_conditioned((2,), 2)
  out = L.inv(Tensor(h).half())
  assert out.dtype == dtypes.float16
  if not is_null(): np.testing.assert_allclose(out.numpy(), np.linalg.inv(h.astype(np.float16).astype(np.float32)),
                                               atol=2e-3, rtol=2e-3)

def test_singular_det_slogdet():
  A = np.array([[[1, 2], [2, 4]], [[0, 1], [1, 0]]], dtype=np.float32)
  compare_torch(L.det, torch.linalg.det, [A], grad=False)
  assert_like_torch(tuple(L.slogdet(Tensor(A))), tuple(torch.linalg.slogdet(torch.tensor(A))))
  assert_like_torch(Tensor(A).logdet(), torch.tensor(A).logdet())                   # -inf and nan (det < 0)

def test_empty():
  for shape in ((0, 3, 3), (0, 0), (2, 0, 0)):
    a = np.zeros(shape, np.float32)
    for f, g in ((L.det, torch.linalg.det), (L.inv, torch.linalg.inv), (L.cholesky, torch.linalg.cholesky)):
      assert_like_torch(f(Tensor(a)), g(torch.tensor(a)))
  for shape in ((0, 3), (3, 0)):
    a = np.zeros(shape, np.float32)
    assert_like_torch(tuple(L.qr(Tensor(a), "complete")), tuple(torch.linalg.qr(torch.tensor(a), "complete")))

# ---- eigh and the SVD (Jacobi; eigenvector and singular vector signs are arbitrary, so the checks use
# sign-free quantities: squares, and products that undo the signs)

def sym(batch, n, seed=0) -> np.ndarray:
  a = np.random.default_rng(seed).standard_normal((*batch, n, n))
  return (a + np.swapaxes(a, -1, -2)).astype(np.float32)

@pytest.mark.parametrize("batch,n", [((2,), 3), ((2,), 5)])
def test_eigh(batch, n):
  S = sym(batch, n)
  # eigenvalues, and eigenvectors squared (their signs are arbitrary); UPLO='U' reads only the upper triangle (the
  # gradient, as torch's, is symmetric)
  def f(lib, a):
    lam, V = lib.eigh(a)
    return lam, V.square(), lib.eigvalsh(a + a.tril(-1), "U")
  compare_torch(lambda a: f(L, a), lambda a: f(torch.linalg, a), [S], **TOL)
  compare_torch(lambda a: f(L, a)[1:], lambda a: f(torch.linalg, a)[1:], [S], **TOL)   # the eigenvectors' gradient

def test_svd():
  # (one graph per compare: the functions of one input share one Jacobi run, and each new graph costs a schedule)
  A = rhs((2, 3, 2), seed=7)   # ([[0, A], [A^T, 0]] is 5x5: the Jacobi kernels of test_eigh's 5x5 case)
  def norms(lib, a):
    return (lib.matrix_norm(a, "nuc"), lib.matrix_norm(a, 2), lib.matrix_norm(a, -2), lib.cond(a), lib.svdvals(a),
            lib.matrix_rank(a))
  compare_torch(lambda a: norms(L, a), lambda a: norms(torch.linalg, a), [A], **TOL)
  # pinv (its gradient goes through U, S and V), and U, S, Vh (U and Vh squared: their signs are arbitrary)
  def factors(lib, a):
    return (lib.pinv(a), *(t.square() for t in lib.svd(a, full_matrices=False)), a.svd()[1], a.pinverse())
  compare_torch(lambda a: factors(L, a), lambda a: factors(torch.linalg, a), [A], **TOL)
  U, S, Vh = L.svd(Tensor(A), full_matrices=False)
  low = np.concatenate([A[:, :, :1], 2 * A[:, :, :1]], -1)   # rank 1
  H, A2 = sym((2,), 3), A[:, :2]
  assert_like_torch(((U * S.unsqueeze(-2)).matmul(Vh), L.matrix_rank(Tensor(low)), L.pinv(Tensor(H), hermitian=True),
                     L.cond(Tensor(A2), "fro")),
                    (torch.tensor(A), torch.linalg.matrix_rank(torch.tensor(low)),
                     torch.linalg.pinv(torch.tensor(H), hermitian=True), torch.linalg.cond(torch.tensor(A2), "fro")),
                    **TOL)

def _orthonormal_cols(Q, what):
  if is_null(): return
  q = Q.numpy()
  np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] +
                             (q.shape[-1],) * 2), atol=1e-5, err_msg=what)

@pytest.mark.parametrize("shape", [(2, 3, 2), (2, 2, 3)])
def test_svd_full_matrices(shape):
  """full_matrices=True of a non-square A: U (m, m) and Vh (n, n) orthonormal, A = U[:, :k] diag(S) Vh[:k]; S and the
  squared first k singular vectors (signs are arbitrary) and their gradients against torch's (torch's gradient
  ignores the completed columns, as teeny's)."""
  A = rhs(shape, seed=7)
  m, n = shape[-2:]
  k = min(m, n)
  def f(lib, a):   # (the first output takes the gradient: through the thin part of U)
    U, S, Vh = lib.svd(a)
    return U[..., :k].square(), S, Vh[..., :k, :].square()
  compare_torch(lambda a: f(L, a), lambda a: f(torch.linalg, a), [A], **TOL)
  U, S, Vh = L.svd(Tensor(A))
  assert tuple(U.shape) == (*shape[:-2], m, m) and tuple(Vh.shape) == (*shape[:-2], n, n)
  U2, _, V2 = Tensor(A).svd(some=False)
  assert tuple(U2.shape) == (*shape[:-2], m, m) and tuple(V2.shape) == (*shape[:-2], n, n)
  rec = (U[..., :k] * S.unsqueeze(-2)).matmul(Vh[..., :k, :])
  assert_like_torch(rec, torch.tensor(A), **TOL)
  _orthonormal_cols(U, "U")
  _orthonormal_cols(Vh.transpose(-1, -2), "Vh^T")
  _orthonormal_cols(V2, "V of Tensor.svd(some=False)")
  # an empty dimension: U is the identity's basis, S and Vh empty
  Ue, Se, Vhe = L.svd(Tensor(np.zeros((3, 0), np.float32)))
  assert tuple(Ue.shape) == (3, 3) and tuple(Se.shape) == (0,) and tuple(Vhe.shape) == (0, 0)

# ---- lstsq

def _lstsq(lib, driver, rcond=None, residuals=True):
  """lstsq's fields as a tuple (residuals=False: without them; NULL cannot read whether A has full rank)."""
  return lambda a, b: tuple(v for i, v in enumerate(lib.lstsq(a, b, rcond, driver=driver)) if residuals or i != 1)

@pytest.mark.parametrize("driver", [None, "gelsd", "gels", "gelss"])
def test_lstsq(driver):
  """Every field against torch's for its driver (which ones are empty, their shapes and dtypes), the solution's
  gradients for A and B: overdetermined (m > n: residuals), underdetermined (the minimum-norm solution), B a vector,
  batch dims broadcast (A's batch in rank and singular_values). The 3x2 / 2x3 shapes reuse test_svd's kernels."""
  over, under = rhs((2, 3, 2), seed=7), rhs((2, 2, 3), seed=8)
  compare_torch(_lstsq(L, driver), _lstsq(torch.linalg, driver), [over, rhs((2, 3, 4), 2)], **TOL)
  compare_torch(_lstsq(L, driver), _lstsq(torch.linalg, driver), [under, rhs((2, 2, 1), 3)], **TOL)
  compare_torch(_lstsq(L, driver), _lstsq(torch.linalg, driver), [over, rhs((2, 3), 4)], no_grad=[0], **TOL)
  compare_torch(_lstsq(L, driver), _lstsq(torch.linalg, driver), [over[:1].reshape(1, 1, 3, 2), rhs((2, 2, 3, 1), 5)],
                grad=False, **TOL)

def test_lstsq_rank_and_dtypes():
  """float64 (gelsd) and a 3-D batch; a rank-deficient A: the minimum-norm solution (pinv(A) B), its rank, and
  residuals empty where teeny reads the rank (gelsd: they are given only when every A has full rank); rcond drops
  singular values below rcond * S_max."""
  A = rhs((2, 3, 2), seed=7)
  compare_torch(_lstsq(L, "gelsd"), _lstsq(torch.linalg, "gelsd"), [A.astype(np.float64), rhs((2, 3, 2), 6)
                .astype(np.float64)], atol=1e-8, rtol=1e-8)
  low = np.concatenate([A[:, :, :1], 2 * A[:, :, :1]], -1)   # rank 1
  B = rhs((2, 3, 2), 6)
  reads = _reads_allowed(str(teeny.Device.DEFAULT))
  ref = torch.linalg.lstsq(torch.tensor(low), torch.tensor(B), driver="gelsd")
  out = L.lstsq(Tensor(low), Tensor(B), driver="gelsd")
  assert_like_torch((out.solution, out.rank, out.singular_values), (ref.solution, ref.rank, ref.singular_values), **TOL)
  if reads: assert tuple(out.residuals.shape) == tuple(ref.residuals.shape) == (0,)
  compare_torch(_lstsq(L, "gelsd", 0.6, reads), _lstsq(torch.linalg, "gelsd", 0.6, reads), [A, B], grad=False, **TOL)

def test_lstsq_bad_inputs():
  a, b = torch.tensor(rhs((3, 2))), torch.tensor(rhs((3, 2), 2))
  ta, tb = Tensor(a.numpy()), Tensor(b.numpy())
  cases = [((ta, Tensor.ones(4, 2)), (a, torch.ones(4, 2)), "size\\(-2\\) should match other.size\\(-2\\)"),
           ((ta, Tensor.ones(4)), (a, torch.ones(4)), "size\\(-2\\) should match other.size\\(-1\\)"),
           ((Tensor.ones(3), Tensor.ones(3)), (torch.ones(3), torch.ones(3)), "at least 2 dimensions"),
           ((ta, Tensor.ones(2, 2, 3, 2)), (a, torch.ones(2, 2, 3, 2)), "input.dim\\(\\) must be greater"),
           ((ta, tb.cast(dtypes.float64)), (a, b.double()), "same dtype"),
           ((ta.cast(dtypes.float16), tb.cast(dtypes.float16)), (a.half(), b.half()), "float and double"),
           ((Tensor.ones(3, 2, dtype=dtypes.int32), Tensor.ones(3, 2, dtype=dtypes.int32)),
            (torch.ones(3, 2, dtype=torch.int32), torch.ones(3, 2, dtype=torch.int32)), "float and double"),
           ((Tensor.ones(2, 3, 2), Tensor.ones(3, 3, 2)), (torch.ones(2, 3, 2), torch.ones(3, 3, 2)), "broadcast")]
  for (x, y), (tx, ty), msg in cases:
    raises_like_torch(lambda: L.lstsq(x, y), lambda: torch.linalg.lstsq(tx, ty), RuntimeError, msg)
  raises_like_torch(lambda: L.lstsq(ta, tb, driver="x"), lambda: torch.linalg.lstsq(a, b, driver="x"), RuntimeError,
                    "driver")
  raises_like_torch(lambda: L.lstsq(ta, tb, "x"), lambda: torch.linalg.lstsq(a, b, "x"), TypeError, "rcond")
  raises_like_torch(lambda: L.lstsq([1.0], tb), lambda: torch.linalg.lstsq([1.0], b), TypeError, "input")

# ---- norms and products

def test_norms():
  x = rhs((2, 3, 4), seed=5)
  for ord in (2, 1, math.inf, -math.inf, 0, 3.5):
    compare_torch(lambda a: L.vector_norm(a, ord), lambda a: torch.linalg.vector_norm(a, ord), [x], grad=ord == 3.5)
  compare_torch(lambda a: L.vector_norm(a, 2, (0, 2), True), lambda a: torch.linalg.vector_norm(a, 2, (0, 2), True),
                [x], grad=False)
  for ord in ("fro", 1, -1, math.inf, -math.inf):
    compare_torch(lambda a: L.matrix_norm(a, ord), lambda a: torch.linalg.matrix_norm(a, ord), [x], grad=ord == 1)
  compare_torch(lambda a: L.matrix_norm(a, 1, (0, 2), True), lambda a: torch.linalg.matrix_norm(a, 1, (0, 2), True),
                [x], grad=False)
  for kw in ({}, {"dim": 1}, {"ord": math.inf, "dim": (1, 2)}):
    compare_torch(lambda a: L.norm(a, **kw), lambda a: torch.linalg.norm(a, **kw), [x], grad=False)
  compare_torch(lambda a: L.norm(a[0], "fro"), lambda a: torch.linalg.norm(a[0], "fro"), [x], grad=False)
  compare_torch(lambda a: L.norm(a[0, 0], 1), lambda a: torch.linalg.norm(a[0, 0], 1), [x], grad=False)
  raises_like_torch(lambda: L.norm(Tensor(x), 2), lambda: torch.linalg.norm(torch.tensor(x), 2), RuntimeError)
  raises_like_torch(lambda: L.matrix_norm(Tensor(x), 3), lambda: torch.linalg.matrix_norm(torch.tensor(x), 3),
                    RuntimeError)

def test_products():
  a, b = rhs((2, 3), 1), rhs((4, 2, 3), 2)
  compare_torch(lambda x, y: L.cross(x, y), lambda x, y: torch.linalg.cross(x, y), [a, b[0]])
  compare_torch(lambda x, y: L.vecdot(x, y), lambda x, y: torch.linalg.vecdot(x, y), [a, b])
  compare_torch(lambda x, y: L.vecdot(x, y, dim=-2), lambda x, y: torch.linalg.vecdot(x, y, dim=-2), [a, b],
                grad=False)
  ms = [rhs((3,), 1), rhs((3, 5), 2), rhs((5, 2), 3), rhs((2, 4), 4), rhs((4,), 5)]
  compare_torch(lambda *t: L.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), ms, grad=False)
  compare_torch(lambda *t: L.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), ms[1:4], grad=False)
  compare_torch(L.matmul, torch.linalg.matmul, [b, rhs((3, 2), 6)], grad=False)
  compare_torch(lambda x: L.diagonal(x, offset=1), lambda x: torch.linalg.diagonal(x, offset=1), [b], grad=False)
  A = well_conditioned((2,), 2)
  for n in (-3, -1, 0, 2):
    compare_torch(lambda x: L.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n), [A], grad=n == -3, **TOL)
  raises_like_torch(lambda: L.multi_dot([Tensor(a)]), lambda: torch.linalg.multi_dot([torch.tensor(a)]), RuntimeError)
  raises_like_torch(lambda: L.cross(Tensor(a[0]), Tensor(b[0])), lambda: torch.linalg.cross(torch.tensor(a[0]),
                    torch.tensor(b[0])), RuntimeError)

# ---- Tensor methods

@pytest.mark.filterwarnings("ignore:torch.*deprecated")
def test_tensor_methods():
  A, S = well_conditioned((2,), 2), spd((2,), 2)
  Lc = np.linalg.cholesky(S).astype(np.float32)
  U = np.swapaxes(Lc, -1, -2).copy()
  B = rhs((2, 2, 3))
  def f(a, s, b, lc, u):   # torch.Tensor's spellings (the gradient: through det)
    return (a.det(), s.logdet(), a.slogdet()[1], a.inverse(), s.cholesky(), s.cholesky(upper=True), *a.qr(),
            b.cholesky_solve(lc), b.cholesky_solve(u, True), lc.cholesky_inverse(), u.cholesky_inverse(True),
            *b.triangular_solve(u), b.triangular_solve(lc, False, True)[0])
  compare_torch(f, f, [A, S, B, Lc, U], no_grad=[1, 2, 3, 4], **TOL)
  compare_torch(lambda a: a.qr(some=False), lambda a: a.qr(some=False), [rhs((3, 2))], grad=False, **TOL)

# ---- errors

@needs_reads
def test_singular_raises():
  sing = np.array([[1, 2], [2, 4]], np.float32)
  batch = np.stack([np.eye(2, dtype=np.float32), sing])
  for a in (sing, batch):
    raises_like_torch(lambda: L.inv(Tensor(a)), lambda: torch.linalg.inv(torch.tensor(a)), L.LinAlgError,
                      "diagonal element 2 is zero")
    raises_like_torch(lambda: Tensor(a).inverse(), lambda: torch.tensor(a).inverse(), L.LinAlgError)
    raises_like_torch(lambda: L.solve(Tensor(a), Tensor(np.ones(2, np.float32))),
                      lambda: torch.linalg.solve(torch.tensor(a), torch.ones(2)), L.LinAlgError, "singular")
  raises_like_torch(lambda: L.inv(Tensor(batch)), lambda: torch.linalg.inv(torch.tensor(batch)), L.LinAlgError,
                    r"^\(Batch element 1\): linalg.inv: The diagonal element 2 is zero")
  assert issubclass(L.LinAlgError, RuntimeError)
  inv, info = L.inv_ex(Tensor(batch))
  assert info.numpy().tolist() == torch.linalg.inv_ex(torch.tensor(batch)).info.tolist() == [0, 2]

@needs_reads
def test_not_positive_definite_raises():
  a = np.stack([np.eye(2, dtype=np.float32), np.array([[1, 2], [2, 1]], np.float32)])
  raises_like_torch(lambda: L.cholesky(Tensor(a)), lambda: torch.linalg.cholesky(torch.tensor(a)), L.LinAlgError,
                    r"\(Batch element 1\).*leading minor of order 2")
  raises_like_torch(lambda: L.cholesky(Tensor(-a[0])), lambda: torch.linalg.cholesky(torch.tensor(-a[0])),
                    L.LinAlgError, "order 1")

def test_bad_inputs():
  sq, rect, vec = Tensor.ones(2, 2), Tensor.ones(2, 3), Tensor.ones(3)
  for f in (L.det, L.slogdet, L.inv, L.cholesky):
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"): f(rect)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"): f(vec)
    with pytest.raises(RuntimeError, match="floating point"): f(Tensor.ones(2, 2, dtype=dtypes.int32))
  with pytest.raises(RuntimeError, match="floating point"): L.qr(Tensor.ones(2, 2, dtype=dtypes.int64))
  with pytest.raises(RuntimeError, match="unrecognized mode"): L.qr(sq, "x")
  with pytest.raises(RuntimeError, match=r"Incompatible shapes.*2x2 and 3x1"): L.solve(sq, vec)
  with pytest.raises(RuntimeError, match=r"XA = B"): L.solve(sq, Tensor.ones(2, 3), left=False)
  with pytest.raises(RuntimeError, match="same dtype"): L.solve(sq, Tensor.ones(2, dtype=dtypes.float64))
  with pytest.raises(RuntimeError, match="do not broadcast"): L.solve(Tensor.ones(2, 2, 2), Tensor.ones(3, 2, 1))
  with pytest.raises(RuntimeError, match="B must have at least 2"): L.solve_triangular(sq, Tensor.ones(2), upper=True)
  with pytest.raises(RuntimeError, match="floating point"): L.vector_norm(Tensor.ones(3, dtype=dtypes.int32))
  with pytest.raises(RuntimeError, match="at least 2 dimensions"): L.matrix_norm(vec)

def test_kernels_reused_across_steps():
  """Every step of the elimination runs the same kernels (what changes from step to step comes in as buffers), so a
  5x5 inverse compiles about as many distinct kernels as a 3x3 one (about 6 launches per step)."""
  def distinct(n):
    items = L.inv(Tensor(well_conditioned((), n))).schedule()
    return len({i.ast for i in items if i.kind == "kernel"}), len(items)
  (d3, k3), (d5, k5) = distinct(3), distinct(5)
  assert k5 - k3 >= 10 and d5 <= d3 + 1, (d3, k3, d5, k5)
