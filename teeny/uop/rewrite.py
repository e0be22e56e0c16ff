"""Pattern matching and graph rewriting: every pass is a PatternMatcher applied to a fixed point."""
from __future__ import annotations
from typing import Any, Callable
from teeny.dtype import DType
from teeny.uop.ops import Ops, UOp

class UPat:
  """A pattern over UOps. `op` may be one Ops or a set; `src` a tuple of UPats (in order) or None (any);
  `name` binds the matched node for the rule's callback; `arg` must equal when given;
  `allow_any_len` lets src be a prefix."""
  __slots__ = ("op", "dtype", "src", "arg", "name", "allow_any_len", "commutative")
  def __init__(self, op: Ops | set | tuple | None = None, dtype: DType | tuple | None = None,
               src: tuple | UPat | None = None, arg: Any = None, name: str | None = None, allow_any_len: bool = False):
    self.op = None if op is None else (frozenset(op) if isinstance(op, (set, tuple, frozenset)) else frozenset([op]))
    self.dtype = None if dtype is None else (frozenset(dtype) if isinstance(dtype, (tuple, set))
                                             else frozenset([dtype]))
    self.src = (src,) if isinstance(src, UPat) else src
    self.arg, self.name, self.allow_any_len = arg, name, allow_any_len
    self.commutative = False
  @staticmethod
  def var(name: str | None = None, dtype=None) -> UPat: return UPat(dtype=dtype, name=name)
  @staticmethod
  def cvar(name: str | None = None, dtype=None) -> UPat: return UPat(Ops.CONST, dtype=dtype, name=name)
  def commute(self) -> UPat:
    """Match a binary op with its two sources in either order."""
    self.commutative = True
    return self
  def match(self, u: UOp, store: dict[str, UOp]) -> bool:
    if self.op is not None and u.op not in self.op: return False
    if self.dtype is not None and u.dtype not in self.dtype: return False
    if self.arg is not None and u.arg != self.arg: return False
    if self.name is not None:
      if self.name in store and store[self.name] is not u: return False
      store[self.name] = u
    if self.src is None: return True
    if len(u.src) != len(self.src) and not (self.allow_any_len and len(u.src) >= len(self.src)): return False
    if self.commutative:
      for order in (u.src, u.src[::-1]):
        trial = dict(store)
        if all(p.match(s, trial) for p, s in zip(self.src, order)):
          store.update(trial)
          return True
      return False
    return all(p.match(s, store) for p, s in zip(self.src, u.src))

class PatternMatcher:
  """An ordered list of (UPat, callback) rules, indexed by op. A callback returns a replacement UOp or None."""
  def __init__(self, rules: list[tuple[UPat, Callable[..., UOp | None]]]):
    self.rules = rules
    self.by_op: dict[Ops, list[tuple[UPat, Callable]]] = {}
    self.any_op: list[tuple[UPat, Callable]] = []
    for pat, fn in rules:
      if pat.op is None: self.any_op.append((pat, fn))
      else:
        for op in pat.op: self.by_op.setdefault(op, []).append((pat, fn))
    for op in list(self.by_op): self.by_op[op] = sorted(self.by_op[op] + self.any_op, key=lambda r: self.rules.index(r))
  def __add__(self, other: PatternMatcher) -> PatternMatcher: return PatternMatcher(self.rules + other.rules)
  def rewrite(self, u: UOp, ctx: Any = None) -> UOp | None:
    for pat, fn in self.by_op.get(u.op, self.any_op):
      store: dict[str, UOp] = {}
      if pat.match(u, store):
        if ctx is not None: store["ctx"] = ctx
        if (ret := fn(**store)) is not None and ret is not u: return ret
    return None

def graph_rewrite(root: UOp, pm: PatternMatcher, ctx: Any = None, max_steps: int = 200000) -> UOp:
  """Rewrite bottom-up until no rule applies anywhere: sources are rewritten before their users, and a
  replacement is itself rewritten (with its new sources) before it is used."""
  done: dict[UOp, UOp] = {}
  steps = 0
  # worklist of (node, state, replacement); state 0: expand sources, 1: apply rules, 2: alias to a rewritten replacement
  stack: list[tuple[UOp, int, UOp | None]] = [(root, 0, None)]
  while stack:
    n, state, repl = stack.pop()
    if state == 0:
      if n in done: continue
      stack.append((n, 1, None))
      for s in reversed(n.src):
        if s not in done: stack.append((s, 0, None))
    elif state == 1:
      if n in done: continue
      new_src = tuple(done[s] for s in n.src)
      cur = n if all(a is b for a, b in zip(new_src, n.src)) else n.replace(src=new_src)
      ret = pm.rewrite(cur, ctx)
      if ret is None:
        done[n] = cur
        if cur is not n and cur not in done: done[cur] = cur
        continue
      steps += 1
      if steps > max_steps: raise RuntimeError("graph_rewrite did not reach a fixed point (a rule keeps firing)")
      if ret in done: done[n] = done[ret]
      else:
        stack.append((n, 2, ret))
        stack.append((ret, 0, None))
    else:
      done[n] = done[repl]  # type: ignore[index]  # state 2 always carries the replacement
  return done[root]
