"""torch-named Tensor methods built from other Tensor ops: elementwise math in torch's spellings, the matrix products
with beta/alpha (addmm, baddbmm...), casts and `new_*` constructors, metadata queries, and the in-place `op_` variants.

`class Tensor(MathMixin)` inherits these, so `self` is always a Tensor. Like tensor_nn.py, this module never imports
tensor.py: it reaches the class as `type(self)`.
"""
from __future__ import annotations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from teeny.tensor import Tensor  # noqa: F401

class MathMixin:
  pass
