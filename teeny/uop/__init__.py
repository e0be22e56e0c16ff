from teeny.uop.ops import Ops, UOp, AxisType, KernelInfo, MemSem, MemScope, GroupOp  # noqa: F401
from teeny.uop.rewrite import UPat, PatternMatcher, graph_rewrite  # noqa: F401
import teeny.uop.symbolic  # noqa: F401  (fills ops.SINT_FNS: symbolic sizes' arithmetic)
