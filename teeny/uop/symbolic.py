"""Simplification of index arithmetic: constant folding, identities, and div/mod folding by value bounds."""
from __future__ import annotations
import math
from typing import NoReturn
from teeny.dtype import dtypes
from teeny.uop.ops import Ops, UOp, GroupOp, SINT_FNS, _exec_alu
from teeny.uop.rewrite import UPat, PatternMatcher

def _is_int(u: UOp) -> bool: return u.dtype.kind in "iu"

def _scaled_fits(d: UOp, c: int, *terms: UOp) -> bool:
  """Do all of `terms` times c stay inside d's integer range? Rewrites that regroup integer math (distributing a
  product, folding two constant factors) must not create an overflow the original expression did not have: C leaves
  signed overflow undefined, and OpenCL compilers do exploit it."""
  lo, hi = dtypes.min(d.dtype), dtypes.max(d.dtype)
  if not lo <= c <= hi: return False
  for t in terms:
    a, b = t.vmin * c, t.vmax * c
    if not (lo <= min(a, b) and max(a, b) <= hi): return False
  return True

def fold_const(a: UOp) -> UOp | None:
  if a.op in GroupOp.ALU and all(s.op is Ops.CONST for s in a.src):
    return UOp.const(a.dtype, _exec_alu(a.op, a.dtype, tuple(s.arg for s in a.src)))
  if a.op is Ops.CAST and a.src[0].op is Ops.CONST: return UOp.const(a.dtype, a.src[0].arg)
  return None

def fold_by_bounds(a: UOp) -> UOp | None:
  """An int or bool expression whose bounds meet is that constant."""
  if a.op not in GroupOp.ALU or a.dtype.kind not in "iub": return None
  lo, hi = a.vmin_vmax
  return UOp.const(a.dtype, lo) if lo == hi and not isinstance(lo, float) else None

def decompose(x: UOp) -> tuple[list[tuple[UOp, int]], int]:
  """An int sum as [(term, coefficient)] and a constant (terms in source order; a loop, not recursion: sums of
  thousands of terms are left-deep chains)."""
  terms: list[tuple[UOp, int]] = []
  const = 0
  stack = [(x, 1)]
  while stack:
    n, k = stack.pop()
    if n.op is Ops.CONST: const += n.arg * k
    elif n.op is Ops.ADD: stack += [(n.src[1], k), (n.src[0], k)]
    elif n.op is Ops.MUL and n.src[1].op is Ops.CONST: stack.append((n.src[0], k * n.src[1].arg))
    else: terms.append((n, k))
  return terms, const

def build_sum(terms: list[tuple[UOp, int]], const: int, dtype) -> UOp:
  out: UOp | None = None
  for t, k in terms:
    if k == 0: continue
    v = t if k == 1 else t.alu(Ops.MUL, UOp.const(dtype, k))
    out = v if out is None else out.alu(Ops.ADD, v)
  if out is None: return UOp.const(dtype, const)
  return out if const == 0 else out.alu(Ops.ADD, UOp.const(dtype, const))

def _merge_terms(terms: list[tuple[UOp, int]]) -> list[tuple[UOp, int]]:
  merged: dict[UOp, int] = {}
  for t, k in terms: merged[t] = merged.get(t, 0) + k
  return [(t, k) for t, k in merged.items() if k != 0]

def _signbit(v) -> bool: return isinstance(v, float) and math.copysign(1.0, v) < 0

def simplify_add(a: UOp) -> UOp | None:
  """Combine like terms, fold constants, and rebuild (x//c)*c + x%c as x."""
  if not _is_int(a): return None
  terms, const = decompose(a)
  merged = _merge_terms(terms)
  changed = len(merged) != len(terms)
  # (y//c)*(k*c) + (y%c)*k -> y*k
  by_term = dict(merged)
  for t, k in list(by_term.items()):
    if t.op is Ops.IDIV and t.src[1].op is Ops.CONST and t in by_term:
      c = t.src[1].arg
      m = t.src[0].alu(Ops.MOD, t.src[1])
      if m in by_term and c != 0 and by_term[t] == by_term[m] * c:
        km = by_term.pop(m)
        by_term.pop(t)
        by_term[t.src[0]] = by_term.get(t.src[0], 0) + km
        changed = True
  if not changed:
    nconst = sum(1 for s in _add_leaves(a) if s.op is Ops.CONST)
    if nconst <= 1 and a.src[0].op is not Ops.CONST: return None
  ret = build_sum([(t, k) for t, k in by_term.items() if k != 0], const, a.dtype)
  return None if ret is a else ret

def _add_leaves(x: UOp) -> list[UOp]:
  out, stack = [], [x]
  while stack:
    n = stack.pop()
    if n.op is Ops.ADD: stack += [n.src[1], n.src[0]]
    else: out.append(n)
  return out

def fold_divmod(x: UOp, c: int, is_mod: bool, orig: UOp) -> UOp | None:
  """(sum of terms) // c and % c for non-negative sums, pulling out terms whose coefficients c divides."""
  if c <= 0 or x.vmin < 0: return None
  if x.vmax < c: return x if is_mod else UOp.const(x.dtype, 0)
  terms, const = decompose(x)
  # a value dtype wraps: regrouping the sum is only sound where it cannot (unsigned (200*2)//2 is 72 in uint8, and its
  # clamped bounds, [0, 255], say nothing of the wrap). Index math is exact (addresses are checked when narrowed)
  if x.dtype != dtypes.index:
    lo = const + sum(min(k * t.vmin, k * t.vmax) for t, k in terms)
    hi = const + sum(max(k * t.vmin, k * t.vmax) for t, k in terms)
    if lo < dtypes.min(x.dtype) or hi > dtypes.max(x.dtype): return None
  q_terms, r_terms = [], []
  for t, k in terms:
    # k*t = (k//c)*c*t + (k%c)*t: the first part divides evenly when t >= 0 and k > 0
    if k % c == 0: q_terms.append((t, k))
    elif k > c and t.vmin >= 0:
      q_terms.append((t, (k // c) * c))
      r_terms.append((t, k % c))
    else: r_terms.append((t, k))
  qc, rc = divmod(const, c)
  rem = build_sum(r_terms, rc, x.dtype)
  if rem.vmin < 0: return None
  # a common factor of the remainder's coefficients and c divides out: (2a+2)//4 -> (a+1)//2
  g = math.gcd(c, rc, *[k for _, k in r_terms]) if r_terms else c
  if not q_terms and qc == 0 and g == 1:
    if rem.vmax < c: return rem if is_mod else UOp.const(x.dtype, 0)
    return None
  if is_mod:
    if g > 1 and r_terms:
      inner = build_sum([(t, k // g) for t, k in r_terms], rc // g, x.dtype)
      ret = inner.alu(Ops.MOD, UOp.const(x.dtype, c // g)).alu(Ops.MUL, UOp.const(x.dtype, g))
    else: ret = rem if rem.vmax < c else rem.alu(Ops.MOD, UOp.const(x.dtype, c))
  else:
    if rem.vmax < c: rdiv = UOp.const(x.dtype, 0)
    elif g > 1 and r_terms:
      rdiv = build_sum([(t, k // g) for t, k in r_terms], rc // g, x.dtype).alu(Ops.IDIV, UOp.const(x.dtype, c // g))
    else: rdiv = rem.alu(Ops.IDIV, UOp.const(x.dtype, c))
    ret = build_sum([(t, k // c) for t, k in q_terms] + ([(rdiv, 1)] if rdiv.op is not Ops.CONST else []),
                    qc + (rdiv.arg if rdiv.op is Ops.CONST else 0), x.dtype)
  return None if ret is orig else ret

def _dead_index(d: UOp) -> UOp | None:
  """Index math divided by a constant 0 (a size-0 dim's address, under a gate that is never true): 0. Left in, C's
  x % 0 is undefined, and gcc compiles it to a trap (ud2: SIGILL) that runs before the gate is tested."""
  return UOp.const(d.dtype, 0) if d.dtype == dtypes.index else None

def _div(x: UOp, c: UOp, d: UOp) -> UOp | None:
  if not _is_int(d): return None
  k = c.arg
  if k == 0: return _dead_index(d)
  if k == 1: return x
  if k == -1: return x.alu(Ops.NEG)
  if x.op is Ops.IDIV and x.src[1].op is Ops.CONST and x.src[1].arg > 0 and k > 0 and x.src[0].vmin >= 0 and \
     x.src[1].arg * k <= dtypes.max(d.dtype):
    return x.src[0].alu(Ops.IDIV, UOp.const(d.dtype, x.src[1].arg * k))
  # (x*c1)//k -> x*(c1//k) only where x*c1 cannot wrap: a wrapped product (int8 100*2 = -56) divides to another value
  if x.op is Ops.MUL and x.src[1].op is Ops.CONST and x.src[1].arg % k == 0 and \
     _scaled_fits(d, x.src[1].arg, x.src[0]):
    return x.src[0].alu(Ops.MUL, UOp.const(d.dtype, x.src[1].arg // k))
  if x.op is Ops.MOD and x.src[1].op is Ops.CONST and k > 0 and x.src[1].arg % k == 0 and x.src[0].vmin >= 0:
    return x.src[0].alu(Ops.IDIV, c).alu(Ops.MOD, UOp.const(d.dtype, x.src[1].arg // k))
  return fold_divmod(x, k, False, d)

def _mod(x: UOp, c: UOp, d: UOp) -> UOp | None:
  if not _is_int(d): return None
  k = c.arg
  if k == 0: return _dead_index(d)
  if k == 1 or k == -1: return UOp.const(d.dtype, 0)
  if x.op is Ops.MOD and x.src[1].op is Ops.CONST and k > 0 and x.src[1].arg % k == 0 and x.src[0].vmin >= 0:
    return x.src[0].alu(Ops.MOD, c)
  if x.op is Ops.MUL and x.src[1].op is Ops.CONST and x.src[1].arg % k == 0 and \
     _scaled_fits(d, x.src[1].arg, x.src[0]): return UOp.const(d.dtype, 0)
  return fold_divmod(x, k, True, d)

def _and_has(v: UOp, g: UOp) -> bool:
  """Is g one of the terms of the AND-chain v?"""
  stack = [v]
  while stack:
    n = stack.pop()
    if n is g: return True
    if n.op is Ops.AND: stack += n.src
  return False

def _where_same(c: UOp, x: UOp, y: UOp) -> UOp | None: return x if x is y else None

x, y, c1, c2 = UPat.var("x"), UPat.var("y"), UPat.cvar("c1"), UPat.cvar("c2")
symbolic = PatternMatcher([
  # constants
  (UPat(GroupOp.ALU | {Ops.CAST}, name="a"), fold_const),
  (UPat(GroupOp.ALU, name="a"), fold_by_bounds),
  # commutative ops keep constants on the right
  (UPat(GroupOp.Commutative, src=(UPat.cvar("c"), UPat.var("v")), name="a"), lambda a, c, v: a.replace(src=(v, c))),
  # identities
  # (a float x + 0.0 is not x where x is -0.0: IEEE gives +0.0; only x + -0.0 and x - 0.0 keep every x)
  (UPat(Ops.ADD, src=(x, UPat.cvar("c"))), lambda x, c: x if c.arg == 0 and (_is_int(x) or _signbit(c.arg)) else None),
  (UPat(Ops.SUB, src=(x, UPat.cvar("c"))),
   lambda x, c: x if c.arg == 0 and (_is_int(x) or not _signbit(c.arg)) else None),
  (UPat(Ops.MUL, src=(x, UPat.cvar("c"))),
   lambda x, c: x if c.arg == 1 else (c if c.arg == 0 and _is_int(x) else None)),
  (UPat(Ops.FDIV, src=(x, UPat.cvar("c"))), lambda x, c: x if c.arg == 1 else None),
  (UPat(Ops.SUB, src=(x, x)), lambda x: UOp.const(x.dtype, 0) if _is_int(x) else None),
  # int sub becomes add of a negated term so sums share one form
  (UPat(Ops.SUB, src=(x, y), name="d"),
   lambda x, y, d: x.alu(Ops.ADD, y.alu(Ops.MUL, UOp.const(d.dtype, -1))) if _is_int(d) else None),
  (UPat(Ops.NEG, src=(x,), name="d"), lambda x, d: x.alu(Ops.MUL, UOp.const(d.dtype, -1)) if _is_int(d) else None),
  (UPat(Ops.MUL, src=(UPat(Ops.MUL, src=(x, c1)), c2), name="d"),
   lambda x, c1, c2, d: x.alu(Ops.MUL, UOp.const(d.dtype, c1.arg * c2.arg))
   if _is_int(d) and _scaled_fits(d, c1.arg * c2.arg, x) else None),
  (UPat(Ops.MUL, src=(UPat(Ops.ADD, src=(x, y)), c1), name="d"),
   lambda x, y, c1, d: x.alu(Ops.MUL, c1).alu(Ops.ADD, y.alu(Ops.MUL, c1))
   if _is_int(d) and _scaled_fits(d, c1.arg, x, y) else None),
  (UPat(Ops.ADD, name="a"), simplify_add),
  # division and modulo
  (UPat(Ops.IDIV, src=(x, UPat.cvar("c")), name="d"), _div),
  (UPat(Ops.MOD, src=(x, UPat.cvar("c")), name="d"), _mod),
  # max/min by bounds
  (UPat(Ops.MAX, src=(x, y)),
   lambda x, y: x if _is_int(x) and x.vmin >= y.vmax else (y if _is_int(x) and y.vmin >= x.vmax else None)),
  (UPat(Ops.MIN, src=(x, y)),
   lambda x, y: x if _is_int(x) and x.vmax <= y.vmin else (y if _is_int(x) and y.vmax <= x.vmin else None)),
  # booleans
  (UPat(Ops.AND, dtype=dtypes.bool, src=(x, UPat.cvar("c"))), lambda x, c: x if c.arg else c),
  (UPat(Ops.OR, dtype=dtypes.bool, src=(x, UPat.cvar("c"))), lambda x, c: c if c.arg else x),
  (UPat(Ops.AND, src=(x, x)), lambda x: x),
  (UPat(Ops.OR, src=(x, x)), lambda x: x),
  # where
  (UPat(Ops.WHERE, src=(UPat.cvar("c"), x, y)), lambda c, x, y: x if c.arg else y),
  (UPat(Ops.WHERE, src=(UPat.var("c"), x, y)), _where_same),
  # a pad check around a load already gated by the same condition
  (UPat(Ops.WHERE, src=(UPat.var("g"), UPat(Ops.LOAD, src=(UPat(Ops.INDEX, name="i"),), name="ld"), UPat.cvar("z"))),
   lambda g, i, ld, z: ld if z.arg == 0 and len(i.src) > 2 and (i.src[2] is g or _and_has(i.src[2], g)) else None),
  # casts
  (UPat(Ops.CAST, src=(x,), name="d"), lambda x, d: x if x.dtype == d.dtype else None),
  # a float widened and narrowed back is itself (float16/bfloat16 -> float32 -> the same is exact): the gradient of a
  # 16-bit sum (accumulated in float32) writes this chain around the 16-bit loads of its backward matmuls
  (UPat(Ops.CAST, src=(UPat(Ops.CAST, src=(x,), name="w"),), name="d"),
   lambda x, w, d: x if x.dtype == d.dtype and x.dtype.kind == w.dtype.kind == "f"
   and w.dtype.itemsize > x.dtype.itemsize else None),
])

# ---- symbolic shapes: Variables and "sints" (a dimension that is an int, or an index UOp over bound variables)
def Variable(name: str, lo: int, hi: int) -> UOp:
  """A named integer in [lo, hi] that can stand for a dimension: `n = Variable("n", 1, 512)`, then `n.bind(37)` gives
  a bound variable usable in reshape, shrink/slicing, pad, arange, zeros/ones/full/empty. A kernel over it compiles once
  (the variable is a kernel parameter) and each launch passes the bound value."""
  if not isinstance(name, str) or not name.isidentifier():
    raise ValueError(f"Variable name must be a C identifier (letters, digits, _), got {name!r}")
  for what, x in (("lo", lo), ("hi", hi)):
    if not isinstance(x, int) or isinstance(x, bool):
      raise TypeError(f"Variable {name}: {what} must be an int, got {x!r}")
  if not 0 <= lo <= hi: raise ValueError(f"Variable {name}: needs 0 <= lo <= hi, got lo={lo}, hi={hi}")
  VARIABLES_MADE[0] = True
  return UOp(Ops.DEFINE_VAR, dtypes.index, (), (name, lo, hi))

# set once any Variable exists: until then the scheduler skips looking for symbolic sizes (a scan on every realize)
VARIABLES_MADE = [False]

def bind(var: UOp, value: int) -> UOp:
  if var.op is not Ops.DEFINE_VAR: raise TypeError(f"bind() needs a Variable, not a {var.op} node")
  name, lo, hi = var.arg
  if not isinstance(value, int) or isinstance(value, bool):
    raise TypeError(f"Variable {name} must be bound to an int, got {value!r}")
  if not lo <= value <= hi:
    raise ValueError(f"Variable {name} bound to {value}, outside its range [{lo}, {hi}]; "
                     "make a Variable with a wider range")
  return UOp(Ops.BIND, dtypes.index, (var, UOp.const(dtypes.index, value)))

def ssimplify(x):
  """A sint in simplest form: an int when it folds to a constant."""
  if not isinstance(x, UOp): return x
  if (hit := x.__dict__.get("_ssimplified")) is not None: return x if hit is True else hit
  from teeny.uop.rewrite import graph_rewrite
  # a - b as a + b*-1, so sums cancel term by term ((n+1) - n, n + (10 - n))
  subs = {u: u.src[0] + u.src[1] * -1 for u in x.toposort if u.op is Ops.SUB}
  r = graph_rewrite(x.substitute(subs) if subs else x, symbolic)
  r = r.arg if r.op is Ops.CONST else r
  x.__dict__["_ssimplified"] = True if r is x else r   # (never the node itself: a node must not hold itself)
  return r

def _up(x) -> UOp: return x if isinstance(x, UOp) else UOp.const(dtypes.index, int(x))

def sadd(*xs):
  """Sum of sints: ints folded, symbolic terms simplified."""
  c = sum(x for x in xs if not isinstance(x, UOp))
  syms = [x for x in xs if isinstance(x, UOp)]
  if not syms: return c
  out = syms[0]
  for s in syms[1:]: out = out + s
  return ssimplify(out + c if c else out)

def sprod(xs):
  """Product of sints in a canonical order (symbolic factors, then the int factor), so equal shapes give one node."""
  c, syms = 1, []
  for x in xs:
    if isinstance(x, UOp): syms.append(x)
    else: c *= int(x)
  if not syms or c == 0: return c
  out = syms[0]
  for s in syms[1:]: out = out * s
  return out * c if c != 1 else out   # (not simplified: this is on every numel(); compare sizes with ssimplify)

def sym_val(x, var_vals: dict | None = None) -> int:
  """The concrete value of a sint: bound variables take their bound value, free ones the value in var_vals."""
  if not isinstance(x, UOp): return x
  vals: dict[UOp, int | None] = {}
  for u in x.toposort:
    if u.op is Ops.CONST: vals[u] = u.arg
    elif u.op is Ops.BIND: vals[u] = u.src[1].arg
    elif u.op is Ops.DEFINE_VAR: vals[u] = var_vals.get(u) if var_vals is not None else None
    elif u.op in GroupOp.ALU or u.op is Ops.CAST:
      for s in u.src:
        if vals[s] is None: _unbound(s)
      vals[u] = _exec_alu(u.op, u.dtype, tuple(vals[s] for s in u.src)) if u.op is not Ops.CAST else vals[u.src[0]]
    else: raise TypeError(f"cannot evaluate a {u.op} node as a dimension")
  if (v := vals[x]) is None: _unbound(x)
  return int(v)

def _unbound(v: UOp) -> NoReturn:
  raise RuntimeError(f"Variable {v.arg[0]} is not bound to a value; bind it ({v.arg[0]}.bind(value)) before using it "
                     "as a dimension")

def sym_max(x) -> int:
  """The largest value a sint can take over its variables' ranges."""
  if not isinstance(x, UOp): return x
  return int(unbind_sint(x)[0].vmax)

def unbind_sint(x, var_vals: dict | None = None):
  """A sint with each BIND replaced by its variable (recording the value in var_vals)."""
  if not isinstance(x, UOp): return x, var_vals
  binds = [u for u in x.toposort if u.op is Ops.BIND]
  if not binds: return x, var_vals
  for b in binds:
    if var_vals is not None:
      v, val = b.src[0], b.src[1].arg
      if var_vals.setdefault(v, val) != val:
        raise ValueError(f"Variable {v.arg[0]} is bound to two values ({var_vals[v]} and {val}) in one realize; "
                         "bind it once")
  return x.substitute({b: b.src[0] for b in binds}), var_vals

def bind_sint(x, var_vals: dict):
  """The inverse of unbind_sint: each variable of var_vals bound to its value."""
  if not isinstance(x, UOp): return x
  vs = {u: bind(u, var_vals[u]) for u in x.toposort if u.op is Ops.DEFINE_VAR and u in var_vals}
  return x.substitute(vs) if vs else x

def sstr(x) -> str:
  """A sint for names and messages: 37, n, (n+1)."""
  if not isinstance(x, UOp): return str(x)
  if x.op is Ops.DEFINE_VAR: return x.arg[0]
  if x.op is Ops.BIND: return x.src[0].arg[0]
  if x.op is Ops.CONST: return str(x.arg)
  if x.op is Ops.ADD and x.src[1].op is Ops.CONST and x.src[1].arg < 0: return f"({sstr(x.src[0])}-{-x.src[1].arg})"
  sym = {Ops.ADD: "+", Ops.MUL: "*", Ops.SUB: "-", Ops.IDIV: "//", Ops.MOD: "%"}
  if x.op in sym and len(x.src) == 2: return f"({sstr(x.src[0])}{sym[x.op]}{sstr(x.src[1])})"
  return f"{x.op.name.lower()}({','.join(sstr(s) for s in x.src)})"

SINT_FNS.update(ssimplify=ssimplify, sadd=sadd, sstr=sstr, bind=bind)
