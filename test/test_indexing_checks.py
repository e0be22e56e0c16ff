"""Out-of-range tensor indices raise torch's kind of error (teeny.indexing.check_index_range), against torch 2.x.

Indices made from host data are checked for free on every device; computed (lazy) ones are read on the CPU by default
and
everywhere with TEENY_CHECK_INDICES=1 (these tests turn it on where they need the read, so they hold on any device with
data). Where nothing is checked, kernels mask the bad index: it reads 0.
"""
from __future__ import annotations
import re
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from teeny import Tensor, Device, nn
from teeny.helpers import Context
from teeny.indexing import check_index_range
import teeny.kernels as K
from helpers import is_null, needs_values

A = np.arange(12, dtype=np.float32).reshape(3, 4)
CHECKED = Context(TEENY_CHECK_INDICES=1)   # lazy indices are read on any device (the CPU's default)
INT_DTYPES = [np.int32, np.int64]

def on_cpu() -> bool: return str(Device.DEFAULT).upper().startswith("CPU")

def lazy(vals, dtype=np.int32, k: int = 3) -> Tensor:
  """A computed index tensor holding `vals`: (vals // k) * k + vals % k, made from host data whose ranges are small;
  only
  the computed values are out of range (no free host range: the check must read them)."""
  v = np.asarray(vals, dtype=dtype)
  t = Tensor(v // k) * k
  if (v % k).any(): t = t + Tensor(v % k)
  assert t.host_range() is None
  return t

def raises_like(torch_fn, teeny_fn, value: int, same_msg: bool = True):
  """torch raises; teeny raises the same exception type, naming `value` (and containing torch's message when it is
  specific to this case)."""
  with pytest.raises(Exception) as te: torch_fn()
  with pytest.raises(type(te.value)) as e: teeny_fn()
  msg = str(e.value)
  assert re.search(rf"(?<![\d-]){value}(?!\d)", msg), f"message does not name the bad value {value}: {msg}"
  if same_msg: assert str(te.value).rstrip(".").lower() in msg.lower(), f"torch says {te.value!r}, teeny {msg!r}"
  return msg

def teeny_eq(got: Tensor, want: torch.Tensor):
  assert tuple(got.shape) == tuple(want.shape)
  if not is_null(): np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)

# ---------------------------------------------------------------- __getitem__ with tensors

class TestGetitem:
  @pytest.mark.parametrize("dt", INT_DTYPES)
  @pytest.mark.parametrize("bad", [3, 5, -4, -100])
  def test_out_of_range_host(self, bad, dt):
    raises_like(lambda: torch.tensor(A)[torch.tensor([0, bad])], lambda: Tensor(A)[Tensor(np.array([0, bad], dt))], bad)

  @pytest.mark.parametrize("bad", [4, -5])
  def test_out_of_range_second_dim(self, bad):
    # torch names dimension 0 here (its own quirk); teeny names the dim indexed, 1
    msg = raises_like(lambda: torch.tensor(A)[:, torch.tensor([bad])], lambda: Tensor(A)[:, Tensor([bad])], bad,
                      same_msg=False)
    assert "dimension 1 with size 4" in msg

  def test_two_index_tensors_second_bad(self):
    # the flat position 0*4 + 9 would still lie inside the buffer: the check is per index, not on the merged one
    raises_like(lambda: torch.tensor(A)[torch.tensor([0]), torch.tensor([9])],
                lambda: Tensor(A)[Tensor([0]), Tensor([9])], 9, same_msg=False)

  def test_list_and_numpy_indices(self):
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"): Tensor(A)[[0, 3]]
    with pytest.raises(IndexError, match="-4"): Tensor(A)[np.array([-4])]

  def test_int64_beyond_int32(self):
    # 2**32 + 1 would wrap to 1 if the index were cast to int32 before the check
    big = 2 ** 32 + 1
    raises_like(lambda: torch.tensor(A)[torch.tensor([big])], lambda: Tensor(A)[Tensor(np.array([big], np.int64))], big)

  @needs_values
  @pytest.mark.parametrize("bad", [3, -6])
  def test_out_of_range_lazy(self, bad):
    idx = lazy([0, bad])
    with CHECKED: raises_like(lambda: torch.tensor(A)[torch.tensor([0, bad])], lambda: Tensor(A)[idx], bad)

  @needs_values
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_in_range_lazy_and_bounds(self, dt):
    vals = [-3, -1, 0, 2]
    with CHECKED: got = Tensor(A)[Tensor(np.array(vals, dt)) * 1]
    teeny_eq(got, torch.tensor(A)[torch.tensor(vals)])

  @pytest.mark.parametrize("vals", [[-3], [2], [-3, -2, -1, 0, 1, 2], [[0, -1], [-2, 2]]])
  def test_bounds_and_negative_match_torch(self, vals):
    teeny_eq(Tensor(A)[Tensor(np.array(vals, np.int64))], torch.tensor(A)[torch.tensor(vals)])

  @pytest.mark.parametrize("idx", [(slice(None), [-4, 3, -1]), ([-1, 0], [-4, 3]), ([[-3], [2]], slice(1, None), )])
  def test_mixed_negative_match_torch(self, idx):
    ti = tuple(torch.tensor(i) if isinstance(i, list) else i for i in idx)
    gi = tuple(Tensor(np.array(i, np.int32)) if isinstance(i, list) else i for i in idx)
    teeny_eq(Tensor(A)[gi], torch.tensor(A)[ti])

  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_empty_index(self, dt):
    teeny_eq(Tensor(A)[Tensor(np.zeros((0,), dt))], torch.tensor(A)[torch.zeros((0,), dtype=torch.long)])
    with CHECKED:
      teeny_eq(Tensor(A)[Tensor(np.zeros((0,), dt)) * 3], torch.tensor(A)[torch.zeros((0,), dtype=torch.long)])

# ---------------------------------------------------------------- gather / scatter

class TestGather:
  @pytest.mark.parametrize("dim,bad", [(0, 3), (0, 9), (0, -1), (0, -4), (1, 4), (1, -1)])
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_out_of_range_host(self, dim, bad, dt):
    idx = np.zeros((2, 3), dt)
    idx[1, 2] = bad
    raises_like(lambda: torch.tensor(A).gather(dim, torch.tensor(idx).long()),
                lambda: Tensor(A).gather(dim, Tensor(idx)), bad)

  @needs_values
  @pytest.mark.parametrize("bad", [3, -3])
  def test_out_of_range_lazy(self, bad):
    idx = np.array([[0, 0], [bad, 0]])
    with CHECKED:
      raises_like(lambda: torch.tensor(A).gather(0, torch.tensor(idx)), lambda: Tensor(A).gather(0, lazy(idx)), bad)

  def test_int64_beyond_int32(self):
    big = 2 ** 32
    raises_like(lambda: torch.tensor(A).gather(0, torch.tensor([[big]])),
                lambda: Tensor(A).gather(0, Tensor(np.array([[big]], np.int64))), big)

  @pytest.mark.parametrize("dim", [0, 1, -1])
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_in_range_bounds_match_torch(self, dim, dt):
    n = A.shape[dim]
    idx = np.array([[0, n - 1, 0], [n - 1, n - 1, 1]], dt)
    teeny_eq(Tensor(A).gather(dim, Tensor(idx)), torch.tensor(A).gather(dim, torch.tensor(idx).long()))
    with CHECKED:
      teeny_eq(Tensor(A).gather(dim, Tensor(idx) + 0), torch.tensor(A).gather(dim, torch.tensor(idx).long()))

  def test_empty_index(self):
    teeny_eq(Tensor(A).gather(0, Tensor(np.zeros((0, 4), np.int64))),
             torch.tensor(A).gather(0, torch.zeros((0, 4), dtype=torch.long)))

  @pytest.mark.parametrize("bad", [3, -1])
  def test_scatter_out_of_range(self, bad):
    idx = np.array([[0, bad]])
    raises_like(lambda: torch.tensor(A).scatter(0, torch.tensor(idx), 1.0),
                lambda: Tensor(A).scatter(0, Tensor(idx), 1.0), bad)

  def test_scatter_in_range_matches_torch(self):
    idx = np.array([[2, 0, 1, 2]])
    teeny_eq(Tensor(A).scatter(0, Tensor(idx), 7.0), torch.tensor(A).scatter(0, torch.tensor(idx), 7.0))

# ---------------------------------------------------------------- one_hot

class TestOneHot:
  @pytest.mark.parametrize("bad", [5, 6, -1, -7])
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_out_of_range_host(self, bad, dt):
    raises_like(lambda: F.one_hot(torch.tensor([0, bad]), 5), lambda: Tensor(np.array([0, bad], dt)).one_hot(5), bad)

  @needs_values
  @pytest.mark.parametrize("bad", [6, -3])
  def test_out_of_range_lazy(self, bad):
    with CHECKED: raises_like(lambda: F.one_hot(torch.tensor([0, bad]), 5), lambda: lazy([0, bad]).one_hot(5), bad)

  @needs_values
  def test_negative_with_inferred_num_classes(self):
    raises_like(lambda: F.one_hot(torch.tensor([2, -1])), lambda: Tensor([2, -1]).one_hot(), -1)

  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_in_range_bounds_match_torch(self, dt):
    vals = np.array([[0, 4], [3, 0]], dt)
    teeny_eq(Tensor(vals).one_hot(5), F.one_hot(torch.tensor(vals).long(), 5))
    with CHECKED: teeny_eq((Tensor(vals) * 1).one_hot(5), F.one_hot(torch.tensor(vals).long(), 5))

  def test_empty(self):
    teeny_eq(Tensor(np.zeros((0,), np.int32)).one_hot(5), F.one_hot(torch.zeros((0,), dtype=torch.long), 5))

# ---------------------------------------------------------------- cross_entropy / nll_loss

LOGITS = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)

def _losses():
  """(name, teeny fn(logits Tensor, target Tensor, **kw), torch fn): the graph paths and the custom-kernel paths."""
  return [
    ("ce", lambda x, t, **kw: x.cross_entropy(t, **kw), lambda x, t, **kw: F.cross_entropy(x, t, **kw)),
    ("ce_kernel", lambda x, t, **kw: K.cross_entropy(x, t, **kw), lambda x, t, **kw: F.cross_entropy(x, t, **kw)),
    ("nll", lambda x, t, **kw: x.log_softmax(1).nll_loss(t, **kw),
     lambda x, t, **kw: F.nll_loss(x.log_softmax(1), t, **kw)),
    ("nll_kernel", lambda x, t, **kw: K.nll_loss(x.log_softmax(1), t, **kw),
     lambda x, t, **kw: F.nll_loss(x.log_softmax(1), t, **kw)),
  ]
LOSSES = {n: (f, tf) for n, f, tf in _losses()}

class TestLosses:
  @pytest.mark.parametrize("name", LOSSES)
  @pytest.mark.parametrize("bad", [5, 7, -1, -2])
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_out_of_range_host(self, name, bad, dt):
    f, tf = LOSSES[name]
    tgt = np.array([0, 4, bad, 1], dt)
    raises_like(lambda: tf(torch.tensor(LOGITS), torch.tensor(tgt).long()),
                lambda: f(Tensor(LOGITS, requires_grad=True), Tensor(tgt)), bad)

  @needs_values
  @pytest.mark.parametrize("name", LOSSES)
  def test_out_of_range_lazy(self, name):
    f, tf = LOSSES[name]
    with CHECKED: raises_like(lambda: tf(torch.tensor(LOGITS), torch.tensor([0, 6, 3, 3])),
                              lambda: f(Tensor(LOGITS, requires_grad=True), lazy([0, 6, 3, 3])), 6)

  @pytest.mark.parametrize("name", LOSSES)
  @pytest.mark.parametrize("ignore_index,tgt", [(-100, [0, -100, 4, -100]), (7, [7, 4, 0, 7]), (-1, [-1, 0, 4, 2]),
                                                (2, [2, 0, 4, 2])])
  def test_ignore_index_allowed_and_bounds(self, name, ignore_index, tgt):
    f, tf = LOSSES[name]
    want = tf(torch.tensor(LOGITS), torch.tensor(tgt), ignore_index=ignore_index)
    x = Tensor(LOGITS, requires_grad=True)
    teeny_eq(f(x, Tensor(np.array(tgt, np.int64)), ignore_index=ignore_index), want)
    with CHECKED: teeny_eq(f(x, Tensor(np.array(tgt, np.int32)) * 1, ignore_index=ignore_index), want)

  @pytest.mark.parametrize("name", LOSSES)
  def test_ignore_index_does_not_hide_other_bad_targets(self, name):
    f, tf = LOSSES[name]
    tgt = [-100, 0, 9, -100]
    raises_like(lambda: tf(torch.tensor(LOGITS), torch.tensor(tgt)), lambda: f(Tensor(LOGITS), Tensor(tgt)), 9)
    if is_null(): return  # NULL holds no data: computed targets are not read
    with CHECKED:
      raises_like(lambda: tf(torch.tensor(LOGITS), torch.tensor(tgt)), lambda: f(Tensor(LOGITS), Tensor(tgt) * 1), 9)

  def test_empty_targets(self):
    want = F.cross_entropy(torch.zeros((0, 5)), torch.zeros((0,), dtype=torch.long), reduction="sum")
    teeny_eq(Tensor.zeros(0, 5).cross_entropy(Tensor(np.zeros((0,), np.int64)), reduction="sum"), want)

  def test_big_kernel_path(self):
    # requires_grad logits of >= 2**16 elements take the custom kernel from Tensor.cross_entropy on the CPU too
    x = Tensor(np.zeros((16, 4096), np.float32), requires_grad=True)
    tgt = np.zeros(16, np.int32)
    tgt[3] = 4096
    raises_like(lambda: F.cross_entropy(torch.zeros(16, 4096), torch.tensor(tgt).long()),
                lambda: x.cross_entropy(Tensor(tgt)), 4096)

  def test_sparse_categorical_crossentropy(self):
    # tinygrad's loss (no torch twin): labels equal to ignore_index (-1) are allowed, others must be in [0, C)
    x = Tensor(LOGITS)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
      x.sparse_categorical_crossentropy(Tensor([0, 5, 1, 1]))
    with pytest.raises(IndexError, match="Target -2 is out of bounds"):
      x.sparse_categorical_crossentropy(Tensor([0, -2, 1, 1]))
    want = F.cross_entropy(torch.tensor(LOGITS), torch.tensor([0, -1, 4, 1]), ignore_index=-1)
    teeny_eq(x.sparse_categorical_crossentropy(Tensor([0, -1, 4, 1])), want)

# ---------------------------------------------------------------- embedding

W = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)

class TestEmbedding:
  @pytest.mark.parametrize("custom", [1, 0])
  @pytest.mark.parametrize("bad", [5, 8, -1])
  @pytest.mark.parametrize("dt", INT_DTYPES)
  def test_out_of_range_host(self, custom, bad, dt):
    ids = np.array([[0, bad]], dt)
    with Context(TEENY_CUSTOM_KERNELS=custom):
      raises_like(lambda: F.embedding(torch.tensor(ids).long(), torch.tensor(W)),
                  lambda: K.embedding(Tensor(W), Tensor(ids)), bad, same_msg=False)
      emb = nn.Embedding(5, 3)
      with pytest.raises(IndexError, match=f"id {bad} is out of range"): emb(Tensor(ids))

  @needs_values
  @pytest.mark.parametrize("custom", [1, 0])
  @pytest.mark.parametrize("bad", [6, -3])
  def test_out_of_range_lazy(self, custom, bad):
    with Context(TEENY_CUSTOM_KERNELS=custom), CHECKED:
      raises_like(lambda: F.embedding(torch.tensor([0, bad]), torch.tensor(W)),
                  lambda: K.embedding(Tensor(W), lazy([0, bad])), bad, same_msg=False)

  @pytest.mark.parametrize("custom", [1, 0])
  def test_in_range_bounds_match_torch(self, custom):
    ids = np.array([[0, 4], [4, 2]], np.int64)
    with Context(TEENY_CUSTOM_KERNELS=custom), CHECKED:
      teeny_eq(K.embedding(Tensor(W), Tensor(ids)), F.embedding(torch.tensor(ids), torch.tensor(W)))
      teeny_eq(K.embedding(Tensor(W), Tensor(ids) * 1), F.embedding(torch.tensor(ids), torch.tensor(W)))

  def test_empty(self):
    teeny_eq(K.embedding(Tensor(W), Tensor(np.zeros((0,), np.int32))), F.embedding(torch.zeros((0,), dtype=torch.long),
                                                                                   torch.tensor(W)))

# ---------------------------------------------------------------- the switch, and masking where nothing is checked

@needs_values
def test_cpu_checks_lazy_indices_by_default():
  if not on_cpu(): pytest.skip("the default reads computed indices on the CPU only")
  with pytest.raises(IndexError, match="index 3 is out of bounds"): Tensor(A)[lazy([3])]
  with pytest.raises(RuntimeError, match="index 9 is out of bounds"): Tensor(A).gather(0, lazy([[9]]))

@needs_values
def test_gpu_default_does_not_read_lazy_indices_but_masks():
  if on_cpu(): pytest.skip("GPU-only default")
  # no sync: the bad index reads 0 (the GATHER lowering masks it); the product in range reads its row
  np.testing.assert_allclose(Tensor(A)[lazy([3, 0])].numpy(), np.stack([np.zeros(4, np.float32), A[0]]))
  with CHECKED, pytest.raises(IndexError, match="index 3 is out of bounds"): Tensor(A)[lazy([3, 0])]

@needs_values
@pytest.mark.parametrize("make", [lambda v: Tensor(np.array(v, np.int32)), lambda v: lazy(v)])
def test_checks_off_masks_reads(make):
  """TEENY_CHECK_INDICES=0: nothing raises; out-of-range indices read 0 instead of memory outside the buffer."""
  with Context(TEENY_CHECK_INDICES=0):
    np.testing.assert_allclose(Tensor(A)[make([3, 0, -6])].numpy(), np.stack([np.zeros(4), A[0], np.zeros(4)]))
    np.testing.assert_allclose(Tensor(A).gather(0, make([[9, 0, -3, 1]]).reshape(1, 4)).numpy(), [[0, 1, 0, 7]])
    np.testing.assert_allclose(make([6, 0]).one_hot(3).numpy(), [[0, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(K.embedding(Tensor(W), make([9, 3])).numpy(), np.stack([np.zeros(3), W[3]]))

@needs_values
def test_check_reads_lazy_index_once_and_keeps_it():
  """The lazy index is realized by the check; the op that follows reads the realized buffer (same values)."""
  idx = lazy([0, 3, 6]) // 3
  with CHECKED: got = Tensor(A)[idx]
  np.testing.assert_allclose(got.numpy(), A[[0, 1, 2]])

def test_helper_directly():
  t = Tensor(np.array([0, 4, -100], np.int64))
  check_index_range(t, 5, ignore=-100)
  with pytest.raises(ValueError, match="^thing 4 is out of bounds for dimension 2 with size 4 \\(fix it\\)$"):
    check_index_range(t, 4, "thing", ValueError, dim=2, ignore=-100, hint="fix it")
  with pytest.raises(IndexError, match="-100"): check_index_range(t, 5)
  check_index_range(Tensor(np.array([-5, 4])), 5, negative=True)
  with pytest.raises(IndexError, match="custom -6"):
    check_index_range(Tensor(np.array([-6, 4])), 5, lambda v: f"custom {v}", negative=True)

@pytest.mark.parametrize("bad", [3, -4])
def test_setitem_tensor_index_out_of_range(bad):
  def torch_set():
    t = torch.tensor(A)
    t[torch.tensor([0, bad])] = 1.0
  def teeny_set():
    t = Tensor(A)
    t[Tensor([0, bad])] = 1.0
  raises_like(torch_set, teeny_set, bad)

@needs_values
def test_host_range_forgotten_after_inplace_write():
  """A write moves the tensor to a new version node, so the free host range of the old contents no longer applies."""
  y = Tensor(np.array([1, 2, 0], np.int32))
  y[0] = 9
  with CHECKED, pytest.raises(IndexError, match="index 9 is out of bounds"): Tensor(A)[y]
