"""UPat matching, PatternMatcher dispatch, graph_rewrite to a fixed point."""
import pytest
from teeny.dtype import dtypes
from teeny.uop.ops import Ops, UOp
from teeny.uop.rewrite import PatternMatcher, UPat, graph_rewrite

def c(v: int) -> UOp: return UOp.const(dtypes.index, v)

R0, R1 = UOp.range(8, 0), UOp.range(6, 1)

def match(pat: UPat, u: UOp) -> dict | None:
  store: dict = {}
  return store if pat.match(u, store) else None

# ---- UPat

def test_match_single_op():
  assert match(UPat(Ops.ADD), R0 + 1) is not None
  assert match(UPat(Ops.MUL), R0 + 1) is None

def test_match_op_set():
  pat = UPat({Ops.ADD, Ops.MUL}, name="x")
  assert match(pat, R0 + 1)["x"] is (R0 + 1)
  assert match(pat, R0 * 2)["x"] is (R0 * 2)
  assert match(pat, R0 // 2) is None

def test_match_any_op():
  assert match(UPat(name="x"), R0)["x"] is R0
  assert match(UPat.var("x"), c(3))["x"] is c(3)

def test_match_dtype():
  assert match(UPat(Ops.CONST, dtype=dtypes.index), c(1)) is not None
  assert match(UPat(Ops.CONST, dtype=dtypes.float32), c(1)) is None
  assert match(UPat(Ops.CONST, dtype=(dtypes.float32, dtypes.index)), c(1)) is not None

def test_match_arg():
  assert match(UPat(Ops.CONST, arg=3), c(3)) is not None
  assert match(UPat(Ops.CONST, arg=3), c(4)) is None

def test_cvar_matches_only_consts():
  assert match(UPat.cvar("k"), c(5))["k"] is c(5)
  assert match(UPat.cvar("k"), R0) is None

def test_src_binds_names():
  m = match(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))), R0 + 3)
  assert m["x"] is R0 and m["k"] is c(3)
  assert match(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))), R0 + R1) is None

def test_same_name_twice_must_be_same_node():
  pat = UPat(Ops.ADD, src=(UPat.var("x"), UPat.var("x")))
  assert match(pat, R0 + R0)["x"] is R0
  assert match(pat, R0 + R1) is None
  # equal structure is the same node (hash-consing), so it matches too
  assert match(pat, (R0 * 2) + (R0 * 2))["x"] is (R0 * 2)

def test_src_length_must_match():
  pat = UPat(Ops.WHERE, src=(UPat.var("c"), UPat.var("x")))
  assert match(pat, (R0 < 3).where(R0, R1)) is None

def test_src_prefix_with_allow_any_len():
  pat = UPat(Ops.WHERE, src=(UPat.var("cond"), UPat.var("x")), allow_any_len=True)
  m = match(pat, (R0 < 3).where(R0, R1))
  assert m["cond"] is (R0 < 3) and m["x"] is R0
  # a prefix longer than the node's sources still fails
  assert match(UPat(Ops.ADD, src=(UPat(), UPat(), UPat()), allow_any_len=True), R0 + 1) is None

def test_commutative_matches_both_orders():
  pat = UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))).commute()
  for u in (R0 + 3, c(3) + R0):
    m = match(pat, u)
    assert m is not None and m["x"] is R0 and m["k"] is c(3)
  assert match(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))), c(3) + R0) is None

def test_commutative_failed_order_leaves_no_bindings():
  # first order binds x=R1 then fails on k; the second order must not see x=R1
  pat = UPat(Ops.ADD, src=(UPat.var("x"), UPat(Ops.CONST, name="k"))).commute()
  m = match(pat, c(2) + R1)
  assert m["x"] is R1 and m["k"] is c(2)

def test_nested_patterns():
  pat = UPat(Ops.IDIV, src=(UPat(Ops.IDIV, src=(UPat.var("x"), UPat.cvar("a"))), UPat.cvar("b")))
  m = match(pat, (R0 // 2) // 3)
  assert m["x"] is R0 and m["a"] is c(2) and m["b"] is c(3)
  assert match(pat, (R0 * 2) // 3) is None

# ---- PatternMatcher

def test_first_matching_rule_wins():
  pm = PatternMatcher([
    (UPat(Ops.ADD, name="a"), lambda a: c(1)),
    (UPat(Ops.ADD, name="a"), lambda a: c(2)),
  ])
  assert pm.rewrite(R0 + R1) is c(1)

def test_rule_returning_none_falls_through():
  pm = PatternMatcher([
    (UPat(Ops.ADD, name="a"), lambda a: None),
    (UPat(Ops.ADD, name="a"), lambda a: c(2)),
  ])
  assert pm.rewrite(R0 + R1) is c(2)

def test_rule_returning_same_node_falls_through():
  pm = PatternMatcher([
    (UPat(Ops.ADD, name="a"), lambda a: a),
    (UPat(Ops.ADD, name="a"), lambda a: c(2)),
  ])
  assert pm.rewrite(R0 + R1) is c(2)

def test_any_op_rule_keeps_its_place_in_order():
  log = []
  pm = PatternMatcher([
    (UPat(Ops.MUL, name="a"), lambda a: log.append("mul-first")),
    (UPat(name="a"), lambda a: log.append("any")),
    (UPat(Ops.ADD, name="a"), lambda a: log.append("add")),
  ])
  assert pm.rewrite(R0 + R1) is None
  assert log == ["any", "add"]
  log.clear()
  assert pm.rewrite(R0 * R1) is None
  assert log == ["mul-first", "any"]
  log.clear()
  assert pm.rewrite(R0 // 2) is None
  assert log == ["any"]

def test_no_rule_matches_returns_none():
  pm = PatternMatcher([(UPat(Ops.MUL, name="a"), lambda a: c(0))])
  assert pm.rewrite(R0 + 1) is None

def test_ctx_is_passed():
  pm = PatternMatcher([(UPat(Ops.ADD, name="a"), lambda a, ctx: ctx["value"])])
  assert pm.rewrite(R0 + 1, ctx={"value": c(42)}) is c(42)

def test_add_pattern_matchers_keeps_order():
  pm = PatternMatcher([(UPat(Ops.ADD), lambda: c(1))]) + PatternMatcher([(UPat(Ops.ADD), lambda: c(2))])
  assert pm.rewrite(R0 + 1) is c(1)

# ---- graph_rewrite

def test_rewrite_reaches_fixed_point():
  # MUL -> ADD, then ADD -> SUB: the output of the first rule is rewritten again
  pm = PatternMatcher([
    (UPat(Ops.MUL, src=(UPat.var("x"), UPat.var("y"))), lambda x, y: x + y),
    (UPat(Ops.ADD, src=(UPat.var("x"), UPat.var("y"))), lambda x, y: x - y),
  ])
  assert graph_rewrite(R0 * R1, pm) is (R0 - R1)

def test_rewrite_chain_to_fixed_point():
  # each step folds one (x + 1) into a const count: ((R0+1)+1)+1 ... -> R0 + n
  pm = PatternMatcher([
    (UPat(Ops.ADD, src=(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("a"))), UPat.cvar("b"))),
     lambda x, a, b: x + c(a.arg + b.arg)),
  ])
  u = R0
  for _ in range(10): u = u + 1
  assert graph_rewrite(u, pm) is (R0 + 10)

def test_replacement_sources_are_rewritten():
  # the replacement introduces a new MUL; it must be rewritten too
  pm = PatternMatcher([
    (UPat(Ops.IDIV, src=(UPat.var("x"), UPat.cvar("k"))), lambda x, k: (x * 1) + 0),
    (UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("k", dtype=dtypes.index))), lambda x, k: x if k.arg == 1 else None),
    (UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))), lambda x, k: x if k.arg == 0 else None),
  ])
  assert graph_rewrite((R0 // 3) * 5, pm) is (R0 * 5)

def test_sources_rewritten_before_users():
  seen: list[UOp] = []
  def log(a):
    seen.append(a)
    return None
  pm = PatternMatcher([(UPat({Ops.ADD, Ops.MUL, Ops.IDIV}, name="a"), log)])
  inner = R0 * 3
  mid = inner + R1
  root = mid // 2
  graph_rewrite(root, pm)
  assert seen.index(inner) < seen.index(mid) < seen.index(root)

def test_user_sees_rewritten_sources():
  got = []
  pm = PatternMatcher([
    (UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("k"))), lambda x, k: x if k.arg == 1 else None),
    (UPat(Ops.ADD, name="a"), lambda a: got.append(a.src) or None),
  ])
  out = graph_rewrite((R0 * 1) + (R1 * 1), pm)
  assert out is (R0 + R1)
  assert got == [(R0, R1)]

def test_shared_subgraph_rewritten_once():
  calls = []
  def f(x, k):
    calls.append(x)
    return x if k.arg == 1 else None
  pm = PatternMatcher([(UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("k"))), f)])
  shared = R0 * 1
  graph_rewrite((shared + shared) // (shared + 2), pm)
  assert calls == [R0]

def test_rewrite_no_rules_is_identity():
  u = (R0 * 4 + R1) // 3
  assert graph_rewrite(u, PatternMatcher([])) is u

def test_rewrite_deep_graph():
  u = R0
  for _ in range(3000): u = u * 1
  pm = PatternMatcher([(UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("k"))), lambda x, k: x if k.arg == 1 else None)])
  assert graph_rewrite(u, pm) is R0

def test_rule_that_never_settles_raises():
  pm = PatternMatcher([(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("k"))), lambda x, k: x + c(k.arg + 1))])
  with pytest.raises(RuntimeError):
    graph_rewrite(R0 + 1, pm, max_steps=100)
