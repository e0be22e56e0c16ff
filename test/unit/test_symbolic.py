"""Index-math simplification: each rule on its own, checked structurally (hash-consing makes `is` exact) and numerically
against a brute-force evaluator over every value of every range."""
import itertools, math
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from teeny.dtype import dtypes
from teeny.uop.ops import Ops, UOp
from teeny.uop.rewrite import graph_rewrite
from teeny.uop.symbolic import symbolic

def c(v: int) -> UOp: return UOp.const(dtypes.index, v)
def simplify(u: UOp) -> UOp: return graph_rewrite(u, symbolic)

R0, R1, R2 = UOp.range(12, 0), UOp.range(5, 1), UOp.range(3, 2)

# ---- brute-force evaluator (C semantics: // and % truncate toward zero)

def c_div(a: int, b: int) -> int:
  q = abs(a) // abs(b)
  return q if (a < 0) == (b < 0) else -q

def c_mod(a: int, b: int) -> int: return a - b * c_div(a, b)

BINARY = {Ops.ADD: lambda a, b: a + b, Ops.SUB: lambda a, b: a - b, Ops.MUL: lambda a, b: a * b, Ops.IDIV: c_div,
          Ops.MOD: c_mod, Ops.MAX: max, Ops.MIN: min, Ops.CMPLT: lambda a, b: a < b, Ops.CMPNE: lambda a, b: a != b,
          Ops.CMPEQ: lambda a, b: a == b, Ops.AND: lambda a, b: a & b, Ops.OR: lambda a, b: a | b,
          Ops.XOR: lambda a, b: a ^ b}

def evaluate(u: UOp, env: dict[UOp, int]):
  vals: dict[UOp, object] = {}
  for n in u.toposort:
    if n.op is Ops.CONST: v = n.arg
    elif n.op is Ops.RANGE: v = env[n]
    elif n.op in BINARY: v = BINARY[n.op](vals[n.src[0]], vals[n.src[1]])
    elif n.op is Ops.NEG: v = -vals[n.src[0]]
    elif n.op is Ops.WHERE: v = vals[n.src[1]] if vals[n.src[0]] else vals[n.src[2]]
    elif n.op is Ops.CAST: v = vals[n.src[0]]
    else: raise NotImplementedError(n.op)
    if n.dtype == dtypes.bool: v = bool(v)
    vals[n] = v
  return vals[u]

def ranges_of(u: UOp) -> list[UOp]: return sorted((n for n in u.toposort if n.op is Ops.RANGE), key=lambda r: r.arg[0])

def assert_same_values(orig: UOp, simp: UOp):
  """orig and simp agree at every point of the ranges orig uses, and each value lies within simp's [vmin, vmax]."""
  rngs = ranges_of(orig)
  assert set(ranges_of(simp)) <= set(rngs), "simplification introduced a range"
  for point in itertools.product(*[range(r.src[0].arg) for r in rngs]):
    env = dict(zip(rngs, point))
    want, got = evaluate(orig, env), evaluate(simp, env)
    assert want == got, f"at {point}: original {want}, simplified {got}"
    assert simp.vmin <= got <= simp.vmax, f"at {point}: {got} outside [{simp.vmin}, {simp.vmax}]"
    assert orig.vmin <= want <= orig.vmax, f"at {point}: {want} outside [{orig.vmin}, {orig.vmax}]"

def check(orig: UOp, expected: UOp):
  out = simplify(orig)
  assert out is expected, f"simplified to\n{out}\nexpected\n{expected}"
  assert_same_values(orig, out)

# ---- constant folding

def test_fold_constants():
  check(c(3) * c(4) + c(2), c(14))

def test_fold_constant_div_mod_c_semantics():
  check(c(7) // c(2), c(3))
  check(c(-7) // c(2), c(-3))
  check(c(-7) % c(2), c(-1))
  check(c(7) % c(-2), c(1))

def test_index_div_mod_by_zero_is_zero():
  """A size-0 dim's address divides by 0 under a gate that is never true; left in, C's x % 0 is undefined and gcc
  compiled it to a trap (SIGILL) that ran before the gate was tested. Index math folds it to 0."""
  r = UOp.range(c(4), 0)
  for op in (Ops.MOD, Ops.IDIV):
    assert simplify(((r - 1) // c(3)).alu(op, c(0))) is c(0)

def test_fold_constant_comparisons():
  check(c(3) < c(4), UOp.const(dtypes.bool, True))
  check(c(3).ne(c(3)), UOp.const(dtypes.bool, False))

def test_fold_constants_inside_expression():
  check(R0 + (c(2) * c(3)), R0 + 6)

def test_fold_float_constants():
  f = UOp.const(dtypes.float32, 1.5) * UOp.const(dtypes.float32, 2.0)
  assert simplify(f) is UOp.const(dtypes.float32, 3.0)

# ---- identities

def test_mul_one():
  check(R0 * 1, R0)
  check(c(1) * R0, R0)

def test_add_zero():
  check(R0 + 0, R0)
  check(c(0) + R0, R0)

def test_mul_zero_int():
  check(R0 * 0, c(0))
  check(c(0) * (R0 + R1), c(0))

def test_mul_zero_float_is_kept():
  """x*0 is not 0 for floats (nan, inf, -0.0), so it must not fold."""
  f = UOp(Ops.LOAD, dtypes.float32, (UOp.placeholder(0, dtypes.float32, (4,)).index(0),))
  assert simplify(f * UOp.const(dtypes.float32, 0.0)).op is Ops.MUL

def test_sub_self():
  check(R0 - R0, c(0))

def test_like_terms_combine():
  check(R0 + R0, R0 * 2)
  check(R0 * 3 + R1 + R0 * 2, simplify(R0 * 5 + R1))

def test_div_by_one():
  check(R0 // 1, R0)

def test_mod_by_one():
  check(R0 % 1, c(0))

# ---- div / mod

def test_div_of_div():
  check((R0 // 2) // 3, R0 // 6)

@pytest.mark.parametrize("b", [0, 1, 2, 3])
def test_mul_add_div(b):
  check((R0 * 4 + b) // 4, R0)

def test_mul_add_div_keeps_quotient_of_big_constant():
  # b outside [0, a): (x*4+9)//4 -> x + 2
  check((R0 * 4 + 9) // 4, R0 + 2)

@pytest.mark.parametrize("b", [0, 1, 3])
def test_mul_add_mod(b):
  check((R0 * 4 + b) % 4, c(b))

def test_mul_div_exact():
  check((R0 * 6) // 3, R0 * 2)

def test_mod_of_range_below_divisor():
  check(R0 % 12, R0)
  check(R0 % 16, R0)

def test_div_of_range_below_divisor():
  check(R0 // 12, c(0))
  check(R0 // 100, c(0))

def test_mod_of_range_not_below_divisor_is_kept():
  check(R0 % 5, R0 % 5)
  check(R0 // 5, R0 // 5)

def test_split_sum_by_divisor():
  # (r0*5 + r1)//5 -> r0 and %5 -> r1 since r1 < 5
  check((R0 * 5 + R1) // 5, R0)
  check((R0 * 5 + R1) % 5, R1)

def test_div_mod_recombine():
  check((R0 // 4) * 4 + R0 % 4, R0)
  check(R0 % 4 + (R0 // 4) * 4, R0)

def test_div_mod_recombine_scaled():
  check(((R0 // 3) * 3 + R0 % 3) * 2, R0 * 2)

def test_mod_of_mod():
  check((R0 % 6) % 3, R0 % 3)

# ---- where, comparisons

def test_where_constant_condition():
  check(UOp.const(dtypes.bool, True).where(R0, R1), R0)
  check(UOp.const(dtypes.bool, False).where(R0, R1), R1)

def test_where_condition_folded_by_bounds():
  check((R0 < 12).where(R0, R1), R0)
  check((R0 < 0).where(R0, R1), R1)

def test_where_same_branches():
  check((R0 < 5).where(R1, R1), R1)

def test_comparisons_folded_by_bounds():
  t, f = UOp.const(dtypes.bool, True), UOp.const(dtypes.bool, False)
  check(R0 < 12, t)
  check(R0 < 100, t)
  check(R0 < 0, f)
  check((R0 + 3) < 3, f)
  check(R0.ne(12), t)
  check(R0.eq(-1), f)
  check((R0 * 2 + 1).ne(0), t)

def test_comparison_not_decided_by_bounds_is_kept():
  check(R0 < 5, R0 < 5)

def test_max_min_by_bounds():
  check(R0.maximum(c(0)), R0)
  check(R0.minimum(c(11)), R0)
  check(R1.maximum(R1 + 5), R1 + 5)

def test_bool_identities():
  t = UOp.const(dtypes.bool, True)
  cond = R0 < 5
  check(cond.alu(Ops.AND, t), cond)
  check(cond.alu(Ops.OR, t), t)
  check(cond.alu(Ops.AND, cond), cond)

# ---- the index expressions movement ops produce

def test_reshape_roundtrip_index():
  # a (12,) buffer viewed as (3, 4) and back: ((r//4)*4 + r%4) is r
  flat = (R0 // 4) * 4 + R0 % 4
  check(flat, R0)

def test_permute_reshape_index_simplifies():
  # (r2, r1) of a (3, 5) view, flattened and split again
  flat = R2 * 5 + R1
  check(flat // 5, R2)
  check(flat % 5, R1)

def test_double_flip_index():
  # flip of a flip: 11 - (11 - r) is r; one flip mod its size is the flipped index itself
  check(c(11) - (c(11) - R0), R0)
  check((c(11) - R0) % 12, simplify(c(11) - R0))
  check((c(11) - R0) // 12, c(0))

def test_simplify_is_idempotent():
  exprs = [(R0 * 4 + R1) // 3, (R0 % 5) * 2 + R2, ((R0 + R1) // 2) % 3]
  for e in exprs:
    once = simplify(e)
    assert simplify(once) is once
    assert_same_values(e, once)

# ---- random expressions

RANGES = [UOp.range(7, 10), UOp.range(5, 11), UOp.range(4, 12)]

def expr_strategy():
  leaves = st.one_of(st.sampled_from(RANGES), st.integers(0, 9).map(c))
  def extend(children):
    return st.one_of(
      st.tuples(children, children).map(lambda t: t[0] + t[1]),
      st.tuples(children, st.integers(0, 6)).map(lambda t: t[0] * t[1]),
      st.tuples(children, children).map(lambda t: t[0] * t[1]),
      st.tuples(children, st.integers(1, 9)).map(lambda t: t[0] // t[1]),
      st.tuples(children, st.integers(1, 9)).map(lambda t: t[0] % t[1]),
    )
  return st.recursive(leaves, extend, max_leaves=8)

@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(expr_strategy())
def test_random_expressions_keep_their_values(e):
  out = simplify(e)
  assert_same_values(e, out)
  assert simplify(out) is out, "simplify did not reach a fixed point in one call"

@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(expr_strategy(), st.integers(0, 40))
def test_random_comparisons_keep_their_values(e, k):
  assert_same_values(e < k, simplify(e < k))

def test_random_expressions_seeded():
  """A fixed batch of random expressions (no hypothesis), so a failure reproduces with a plain loop."""
  import random
  rng = random.Random(1234)
  def build(depth: int) -> UOp:
    if depth == 0 or rng.random() < 0.25: return rng.choice(RANGES) if rng.random() < 0.7 else c(rng.randint(0, 9))
    op = rng.choice(["add", "mulc", "mul", "div", "mod"])
    a = build(depth - 1)
    if op == "add": return a + build(depth - 1)
    if op == "mul": return a * build(depth - 1)
    if op == "mulc": return a * rng.randint(0, 6)
    return a // rng.randint(1, 9) if op == "div" else a % rng.randint(1, 9)
  for _ in range(200):
    e = build(4)
    assert_same_values(e, simplify(e))

def test_evaluator_matches_c():
  assert (c_div(-7, 2), c_mod(-7, 2), c_div(7, -2), c_mod(7, -2)) == (-3, -1, -3, 1)
  assert all(c_div(a, b) == math.trunc(a / b) for a in range(-20, 20) for b in (-3, -1, 2, 5))

def test_regrouping_creates_no_overflow():
  """(r - 2**15) * 2**48 over r in [0, 2**16) fits int64; distributing it (r*2**48 - 2**63) does not: the rewrite must
  leave it alone (C and OpenCL compilers assume signed math does not overflow). Where the terms fit, it still
  applies."""
  r = UOp.range(2**16, 0).cast(dtypes.int64)
  big = lambda v: UOp.const(dtypes.int64, v)
  e = simplify((r + big(-2**15)) * big(2**48))
  assert e.op is Ops.MUL and e.src[0].op is Ops.ADD, "distributed into terms that overflow int64"
  f = simplify((r * big(2**20)) * big(2**20))   # the folded factor 2**40 times r fits
  assert f.op is Ops.MUL and f.src[1].arg == 2**40
  small = simplify((R0 + c(3)) * c(4))          # fits: distributed into one sum
  assert small.op is Ops.ADD
