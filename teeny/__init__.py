"""teeny: a lazy tensor framework. Tensor code builds a UOp graph; realize() schedules it into fused kernels."""
from teeny.tensor import Tensor  # noqa: F401
from teeny.uop.symbolic import Variable  # noqa: F401
from teeny.dtype import dtypes, DType  # noqa: F401
from teeny.device import Device  # noqa: F401
from teeny.helpers import Context, GlobalCounters, getenv  # noqa: F401
from teeny.engine.jit import TinyJit  # noqa: F401
from teeny import nn  # noqa: F401
from teeny import kernels  # noqa: F401  (registers the hand-written kernels that Tensor methods may route to)
from teeny.tensor_select import meshgrid  # noqa: F401
from teeny import linalg  # noqa: F401  (torch.linalg's core; registers itself for Tensor.det/inverse/cholesky/qr...)
