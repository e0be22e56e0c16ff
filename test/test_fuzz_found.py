"""Regressions for what fuzzing teeny against torch found (notes of 2026-12-03): each case is torch's answer, written
out."""
import numpy as np
import pytest
from teeny import Tensor, dtypes

def test_clamp_takes_torchs_keywords():
  x = Tensor([1.0, 5.0, 9.0])
  np.testing.assert_array_equal(x.clamp(max=4).numpy(), [1, 4, 4])
  np.testing.assert_array_equal(x.clamp(min=2, max=6).numpy(), [2, 5, 6])
  np.testing.assert_array_equal(x.clip(min=6).numpy(), [6, 6, 9])
  np.testing.assert_array_equal(x.clamp(2, 6).numpy(), [2, 5, 6])
  with pytest.raises(TypeError, match="lower bound once"): x.clamp(1, min=2)
  with pytest.raises(ValueError, match="at least one"): x.clamp()

@pytest.mark.parametrize("e", [2.0, 1.0])
def test_int_pow_float_exponent_is_float(e):
  # torch: int tensor ** 2.0 is float32 (1e10 here); x * x in int32 wrapped to 1410065408
  for dt in (dtypes.int32, dtypes.uint8, dtypes.bool):
    x = Tensor([100000] if dt is dtypes.int32 else [200] if dt is dtypes.uint8 else [True, False], dtype=dt)
    out = x ** e
    assert out.dtype == dtypes.float32
    ref = np.array([100000.0] if dt is dtypes.int32 else [200.0] if dt is dtypes.uint8 else [1.0, 0.0]) ** e
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)

def test_int_pow_int_exponent_stays_int():
  out = Tensor([3, -2], dtype=dtypes.int32) ** 2
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), [9, 4])

def test_std_gradient_at_zero_variance_is_zero():
  t = Tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
  t.requires_grad = True
  t.std(1).sum().backward()
  # torch: [[0, 0, 0], [-0.5, 0, 0.5]] (d std / dx = (x - mean) / ((n - 1) std), 0 where std is 0)
  np.testing.assert_allclose(t.grad.numpy(), [[0, 0, 0], [-0.5, 0, 0.5]], atol=1e-6)
  np.testing.assert_allclose(Tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]).std(1).numpy(), [0, 1], atol=1e-7)
