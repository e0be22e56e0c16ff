"""Optimisations on a kernel AST before linearizing. Each is a small rewrite; heuristics pick which to apply."""
from __future__ import annotations
from teeny.uop.ops import AxisType, Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic

def global_ranges(ast: UOp) -> list[UOp]:
  return sorted([u for u in ast.toposort if u.op is Ops.RANGE and u.arg[1] is AxisType.GLOBAL], key=lambda r: r.arg[0])

def _has_divmod_of(ast: UOp, r: UOp) -> int:
  return sum(1 for u in ast.toposort if u.op in (Ops.IDIV, Ops.MOD) and r in u.src[0].toposort)

def merge_globals(ast: UOp) -> UOp:
  """Fuse adjacent parallel loops into one when every address stays free of div/mod: fewer, longer loops split
  better across cores and vectorise."""
  changed = True
  while changed:
    changed = False
    rngs = global_ranges(ast)
    for a, b in zip(rngs, rngs[1:]):
      sa, sb = a.src[0].arg, b.src[0].arg
      merged = UOp.range(sa * sb, a.arg[0], AxisType.GLOBAL)
      cand = graph_rewrite(ast.substitute({a: merged // sb, b: merged % sb}), symbolic)
      if _has_divmod_of(cand, merged) <= _has_divmod_of(ast, a) + _has_divmod_of(ast, b):
        ast, changed = cand, True
        break
  return ast

def optimize(ast: UOp, renderer) -> UOp:
  return merge_globals(ast)
