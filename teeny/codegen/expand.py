"""UNROLL ranges written out in the IR: one copy of the code per value, the range a constant in each.

An UNROLL range is never a loop. Where a REDUCE reduces over it, the copies of the reduced value are combined with the
reduce's op inside the loop that remains (a pairwise tree: acc += (v0 + v1) + (v2 + v3)); where a value depends on it
(a register tile of outputs), every effect that reads it is repeated once per value, each with accumulators of its own.
The linearizer then runs reduces that share their loops in one loop (linearize.py), so a tile of CB x TW accumulators is
CB x TW scalars updated in one reduce loop, which the compiler keeps in vector registers.
"""
from __future__ import annotations
from teeny.codegen.ranges import replace_range
from teeny.uop.ops import AxisType, Ops, UOp

def _combine(op: Ops, vals: list[UOp]) -> UOp:
  """vals combined by op as a balanced tree (short dependency chains)."""
  while len(vals) > 1:
    vals = [vals[i].alu(op, vals[i + 1]) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
  return vals[0]

def _expand_one(ast: UOp, r: UOp) -> UOp:
  if r.src[0].op is not Ops.CONST: raise ValueError(f"UNROLL range {r.arg[0]} needs a constant size, got {r.src[0].op}")
  copies = [UOp.const(r.dtype, k) for k in range(r.src[0].arg)]
  memo: dict[UOp, UOp] = {}
  for n in ast.toposort:
    src = tuple(memo[s] for s in n.src)
    if n.op is Ops.REDUCE and r in n.src[1:]:
      vals = [replace_range(src[0], r, c, ()) for c in copies]
      rest = tuple(s for s in src[1:] if s is not r)
      new = _combine(n.arg, vals)
      memo[n] = UOp(Ops.REDUCE, n.dtype, (new,) + rest, n.arg) if rest else new
    elif n.op is Ops.SINK:
      effects: list[UOp] = []
      for e in src:
        if r not in e.toposort:
          effects.append(e)
          continue
        each = [replace_range(e, r, c, ()) for c in copies]
        # the loops an END closes close after the last copy: the copies before it are bare effects in the same loops
        effects += [x.src[0] if x.op is Ops.END else x for x in each[:-1]] + each[-1:]
      memo[n] = n.replace(src=tuple(dict.fromkeys(effects)))
    else: memo[n] = n if all(a is b for a, b in zip(src, n.src)) else n.replace(src=src)
  return memo[ast]

def expand_unrolls(ast: UOp) -> UOp:
  """ast with every UNROLL range written out (see the module's docstring); ast itself when it has none."""
  for r in sorted((u for u in ast.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.UNROLL),
                  key=lambda u: u.arg[0]):
    ast = _expand_one(ast, r)
  return ast
