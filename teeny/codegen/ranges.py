"""Ranges of a kernel AST, shared by the Opts (codegen/opt.py), the tensor-core rebuild (codegen/tc.py) and the
UNROLL expansion (codegen/expand.py): finding them, their sizes and strides, replacing and flattening them, masking an
address; and KernelOptError, the error of an Opt that does not fit."""
from __future__ import annotations
from teeny.helpers import prod
from teeny.uop.ops import AxisType, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic, decompose

class KernelOptError(ValueError):
  """An Opt that does not fit the kernel it is applied to."""

def ranges_of(ast: UOp, t: AxisType | None = None) -> list[UOp]:
  """The kernel's RANGEs (of one kind, if given), by axis id."""
  return sorted([u for u in ast.toposort if u.op is Ops.RANGE and (t is None or u.arg[1] is t)], key=lambda r: r.arg[0])

def global_ranges(ast: UOp) -> list[UOp]: return ranges_of(ast, AxisType.GLOBAL)
def const_size(r: UOp) -> int | None: return r.src[0].arg if r.src[0].op is Ops.CONST else None

def coefficient(idx: UOp, r: UOp) -> int | None:
  """The stride of range r in an index expression (None if r appears non-linearly)."""
  terms, _ = decompose(idx)
  coef = 0
  for t, k in terms:
    if t is r: coef += k
    elif r in t.toposort: return None
  return coef

def replace_range(ast: UOp, r: UOp, value: UOp, ranges: tuple[UOp, ...]) -> UOp:
  """ast with range r replaced: by `value` where it is read, by `ranges` where an END or a REDUCE closes it (a range
  there once)."""
  memo: dict[UOp, UOp] = {}
  for n in ast.toposort:
    src = tuple(memo[s] for s in n.src)
    if n.op in (Ops.END, Ops.REDUCE) and r in n.src[1:]:
      src = (src[0],) + tuple(dict.fromkeys(x for s, m in zip(n.src[1:], src[1:])
                                            for x in (ranges if s is r else (m,))))
    memo[n] = value if n is r else n if all(a is b for a, b in zip(src, n.src)) else n.replace(src=src)
  return memo[ast]

def flatten_ranges(ast: UOp, rngs: list[UOp], axis_type: AxisType,
                   axis_id: int | None = None) -> tuple[UOp, UOp | None]:
  """Replace ranges (outermost first) by one range over their product (axis id `axis_id`, default the outermost's);
  their values come back by div/mod, and a reduce over them reduces over the new range."""
  if not rngs: return ast, None
  sizes = [r.src[0].arg for r in rngs]
  new = UOp.range(prod(sizes), rngs[0].arg[0] if axis_id is None else axis_id, axis_type)
  stride = 1
  for r, s in zip(reversed(rngs), reversed(sizes)):
    q = new if stride == 1 else new // stride
    ast = replace_range(ast, r, q % s if stride * s < prod(sizes) else q, (new,))
    stride *= s
  return graph_rewrite(ast, symbolic), new

def gate(idx: UOp, valid: UOp) -> UOp:
  """The INDEX with `valid` added to its mask (a masked load reads 0; a masked store does nothing)."""
  return idx.replace(src=idx.src[:2] + ((valid if len(idx.src) < 3 else idx.src[2].alu(Ops.AND, valid)),))
