"""UOp: hash-consing, immutability, cached toposort, tensor-level shapes, value bounds."""
import gc, weakref
import pytest
from teeny.dtype import dtypes
from teeny.uop.ops import AxisType, Ops, UOp

def c(v: int) -> UOp: return UOp.const(dtypes.index, v)

def fbuf(n: int = 24) -> UOp: return UOp(Ops.BUFFER, dtypes.float32, (), (10_000_001, "CPU", n))

# ---- hash-consing

def test_equal_nodes_are_the_same_object():
  a = UOp(Ops.ADD, dtypes.int32, (c(1), c(2)))
  b = UOp(Ops.ADD, dtypes.int32, (c(1), c(2)))
  assert a is b
  assert c(7) is c(7)
  assert UOp.range(8, 0) is UOp.range(8, 0)

def test_operators_hash_cons():
  r = UOp.range(16, 0)
  assert (r * 4 + 3) is (r * 4 + 3)
  assert (r // 4) is (r // 4)

def test_different_nodes_differ():
  assert c(1) is not c(2)
  assert UOp.const(dtypes.int32, 1) is not UOp.const(dtypes.int64, 1)
  assert UOp.range(8, 0) is not UOp.range(8, 1)
  assert UOp.range(8, 0, AxisType.GLOBAL) is not UOp.range(8, 0, AxisType.REDUCE)
  r = UOp.range(8, 0)
  assert (r + 1) is not (c(1) + r)  # source order is part of the identity

def test_replace_hash_conses():
  r = UOp.range(8, 0)
  u = r + 1
  assert u.replace(op=Ops.MUL) is (r * 1)
  assert u.replace(src=u.src) is u

def test_unhashable_arg_raises():
  with pytest.raises(TypeError):
    UOp(Ops.CONST, dtypes.int32, (), [1, 2])

def test_unreferenced_nodes_are_dropped():
  u = UOp(Ops.CONST, dtypes.int32, (), 987_654_321)
  ref = weakref.ref(u)
  del u
  gc.collect()
  assert ref() is None
  # building it again makes a fresh, equal node
  assert UOp(Ops.CONST, dtypes.int32, (), 987_654_321).arg == 987_654_321

# ---- immutability

def test_src_is_a_tuple():
  u = UOp.range(8, 0) + 1
  assert isinstance(u.src, tuple)

def test_replace_leaves_original_unchanged():
  r = UOp.range(8, 0)
  u = r + 1
  v = u.replace(arg="x")
  assert v is not u and u.arg is None and u.op is Ops.ADD and u.src == (r, c(1))

def test_fields_cannot_be_assigned():
  """A hash-consed node is shared by every graph that contains it: mutating one would change them all."""
  # built by no other test
  u = UOp(Ops.ADD, dtypes.int32, (UOp.const(dtypes.int32, 31_337), UOp.const(dtypes.int32, 271_828)))
  for field, new in (("op", Ops.MUL), ("dtype", dtypes.int64), ("src", ()), ("arg", 1)):
    with pytest.raises((AttributeError, TypeError)):
      setattr(u, field, new)
  assert u.op is Ops.ADD and u.dtype == dtypes.int32 and len(u.src) == 2 and u.arg is None

def test_bool_of_uop_raises():
  with pytest.raises(TypeError):
    bool(c(1))

# ---- toposort

def test_toposort_sources_before_users():
  r0, r1 = UOp.range(4, 0), UOp.range(5, 1)
  a = r0 * 5 + r1
  b = a // 3 + a % 3
  order = list(b.toposort)
  assert order[-1] is b
  pos = {u: i for i, u in enumerate(order)}
  for u in order:
    for s in u.src: assert pos[s] < pos[u], f"{s.op} comes after its user {u.op}"

def test_toposort_each_node_once():
  r = UOp.range(4, 0)
  a = r + r
  b = a * a
  order = list(b.toposort)
  assert len(order) == len(set(order))
  assert set(order) == {r, c(4), a, b}

def test_toposort_is_cached():
  u = (UOp.range(4, 0) + 2) * 3
  assert u.toposort.below is u.toposort.below
  assert (list(u.toposort)[-1] is u and u in u.toposort and u.src[0] in u.toposort
          and len(u.toposort) == len(list(u.toposort)))

def test_dropped_graph_frees_its_buffer_without_gc():
  # no node may hold itself through a cache: a reference cycle keeps a BUFFER node (and its device memory) alive until
  # the cyclic collector happens to run, so a big buffer freed every step would never be reused
  import gc
  from teeny import Tensor
  from teeny.engine.realize import live_buffers
  gc.disable()
  try:
    before = len(live_buffers())
    for _ in range(3):
      t = (Tensor.ones(64, 64, device="CPU").contiguous() * 2).realize()
      assert t.sum().item() == 64 * 64 * 2
      del t
    assert len(live_buffers()) <= before + 1
  finally: gc.enable()

def test_toposort_deep_graph_no_recursion_error():
  u = UOp.range(4, 0)
  for i in range(5000): u = u + i
  assert len(u.toposort) > 5000

def test_substitute():
  r0, r1 = UOp.range(4, 0), UOp.range(6, 1)
  u = r0 * 3 + 1
  assert u.substitute({r0: r1}) is (r1 * 3 + 1)
  assert u.substitute({}) is u

# ---- tensor-level shapes

def test_shape_of_buffer_and_const():
  assert fbuf(24).shape == (24,)
  assert UOp.const(dtypes.float32, 1.0).shape == ()

def test_shape_of_movement_ops():
  b = fbuf(24).reshape((2, 3, 4))
  assert b.shape == (2, 3, 4)
  assert b.permute((2, 0, 1)).shape == (4, 2, 3)
  assert b.pad(((1, 0), (0, 2), (3, 3))).shape == (3, 5, 10)
  assert b.shrink(((0, 1), (1, 3), (0, 4))).shape == (1, 2, 4)
  assert b.flip((1,)).shape == (2, 3, 4)
  assert b.reshape((2, 1, 12)).expand((2, 5, 12)).shape == (2, 5, 12)

def test_shape_of_reduce_and_elementwise():
  b = fbuf(24).reshape((2, 3, 4))
  assert b.r(Ops.ADD, (1,)).shape == (2, 1, 4)
  assert b.r(Ops.MAX, (0, 2)).shape == (1, 3, 1)
  e = b.alu(Ops.MUL, b)
  assert e.shape == (2, 3, 4)
  assert e.alu(Ops.CMPLT, b).shape == (2, 3, 4) and e.alu(Ops.CMPLT, b).dtype == dtypes.bool
  assert e.cast(dtypes.float16).shape == (2, 3, 4)

def test_noop_movement_returns_self():
  b = fbuf(24).reshape((2, 3, 4))
  assert b.reshape((2, 3, 4)) is b
  assert b.permute((0, 1, 2)) is b
  assert b.pad(((0, 0),) * 3) is b
  assert b.shrink(((0, 2), (0, 3), (0, 4))) is b
  assert b.expand((2, 3, 4)) is b

# ---- value bounds

def test_vmin_vmax_const_and_range():
  assert (c(5).vmin, c(5).vmax) == (5, 5)
  r = UOp.range(10, 0)
  assert (r.vmin, r.vmax) == (0, 9)

def test_vmin_vmax_arithmetic():
  r0, r1 = UOp.range(10, 0), UOp.range(4, 1)
  assert (r0 + r1).vmin_vmax == (0, 12)
  assert (r0 * 3 + 2).vmin_vmax == (2, 29)
  assert (r0 - r1).vmin_vmax == (-3, 9)
  assert (r0 * r1).vmin_vmax == (0, 27)
  assert (r0 * -2).vmin_vmax == (-18, 0)
  assert (r0 // 3).vmin_vmax == (0, 3)
  assert (r0 % 4).vmin_vmax == (0, 3)
  assert (r1 % 8).vmin_vmax == (0, 3)  # mod bounded by the dividend when that is smaller
  assert r0.maximum(r1 + 5).vmin_vmax == (5, 9)
  assert r0.minimum(r1).vmin_vmax == (0, 3)

def test_vmin_vmax_comparisons():
  r = UOp.range(10, 0)
  assert (r < 10).vmin_vmax == (True, True)
  assert (r < 0).vmin_vmax == (False, False)
  assert (r < 5).vmin_vmax == (False, True)
  assert r.ne(10).vmin_vmax == (True, True)
  assert r.eq(-1).vmin_vmax == (False, False)

def test_vmin_vmax_where():
  r = UOp.range(10, 0)
  w = (r < 5).where(r + 100, r)
  assert w.vmin_vmax == (0, 109)

def test_vmin_vmax_float_is_unbounded():
  f = UOp(Ops.LOAD, dtypes.float32, (UOp.placeholder(0, dtypes.float32, (4,)).index(0),))
  assert f.vmin == float("-inf") and f.vmax == float("inf")
