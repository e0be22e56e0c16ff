"""In-place writes against torch, for what a fuzzing sweep found (fuzz_2026-12-03): hash-consed lazy values written
separately, a kept view with a value written twice, a self-overlapping write after a pending one, and the results of
ops torch copies (pad, flip, repeat, repeat_interleave, roll, cat, a reshape that strides cannot express), which must
take writes as new tensors while staying lazy for reads. Then a property test: random programs of views, copies,
writes and reads, against torch.

Tests without `needs_values` only schedule and run (no value is read), so they also run on DEV=NULL: they catch the
crashes (the spurious "modified in place" and "pending write was not scheduled" errors) and the kernel counts."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import event, given, note, settings, strategies as st
from helpers import needs_values
from teeny import Tensor

torch = pytest.importorskip("torch")
F = torch.nn.functional

def pair(arr):
  arr = np.asarray(arr, dtype=np.float32)
  return Tensor(arr.copy()), torch.tensor(arr.copy())

def same(t: Tensor, tt, what=""):
  np.testing.assert_allclose(t.numpy(), tt.detach().numpy(), rtol=1e-6, atol=1e-6, err_msg=what)

# ---- A1. two equal lazy expressions are one hash-consed node: each tensor still gets memory of its own

def _twins(order: str, base_write: bool):
  base = Tensor([1., 2, 3])
  r0, r1 = base * 2, base * 2
  r0[0] = 10
  r1[1] = 20
  if base_write: base -= 1
  names = {"b": base, "0": r0, "1": r1}
  for k in order: names[k].realize()
  return base, r0, r1

@pytest.mark.parametrize("order", ["b01", "10b", "0b1", ""])
@pytest.mark.parametrize("base_write", [True, False])
def test_equal_lazy_values_written_separately_run(order, base_write):
  for t in _twins(order, base_write): t.realize()

@needs_values
@pytest.mark.parametrize("order", ["b01", "10b", "0b1", ""])
@pytest.mark.parametrize("base_write", [True, False])
def test_equal_lazy_values_written_separately(order, base_write):
  base, r0, r1 = _twins(order, base_write)
  np.testing.assert_equal(base.numpy(), [0, 1, 2] if base_write else [1, 2, 3])
  np.testing.assert_equal(r0.numpy(), [10, 4, 6])
  np.testing.assert_equal(r1.numpy(), [2, 20, 6])

@needs_values
@pytest.mark.parametrize("kind", ["whole", "part", "assign", "iadd"])
def test_equal_lazy_values_one_written_whole(kind):
  base, tb = pair([1., 2, 3])
  r0, r1, t0, t1 = base * 2, base * 2, tb * 2, tb * 2
  r0[0] = 10; t0[0] = 10
  if kind == "whole": r1[...] = -2.0; t1[...] = -2.0
  elif kind == "part": r1[0] = -2.0; t1[0] = -2.0
  elif kind == "assign": r1.assign(Tensor([5., 5, 5])); t1.copy_(torch.tensor([5., 5, 5]))
  else: r1 += 1; t1 += 1
  base -= 1; tb -= 1
  for a, b in ((base, tb), (r0, t0), (r1, t1)): same(a, b)

@needs_values
def test_clones_of_one_tensor_written_separately():
  x, tx = pair([[1., 2], [3, 4]])
  a, b, ta, tb = x.clone(), x.clone(), tx.clone(), tx.clone()
  a[0, 0] = -1; ta[0, 0] = -1
  b[1] += 5; tb[1] += 5
  x *= 2; tx *= 2
  for u, v in ((a, ta), (b, tb), (x, tx)): same(u, v)

@needs_values
def test_same_shaped_zeros_written_separately():
  a, b = Tensor.zeros(3).contiguous(), Tensor.zeros(3).contiguous()
  c, d = Tensor.zeros(3), Tensor.zeros(3)
  a[0] = 1; c[2] = 3
  np.testing.assert_equal([a.numpy(), b.numpy(), c.numpy(), d.numpy()], [[1, 0, 0], [0, 0, 0], [0, 0, 3], [0, 0, 0]])

def test_write_into_lazy_value_costs_one_kernel_for_its_value():
  # (its value goes straight into the buffer it is written in: one kernel for it, one for the write)
  r = Tensor([1., 2, 3]).realize() * 2
  r[0] = 10
  assert len(r.schedule()) == 2

# ---- A2. a kept view, and one lazy value written twice (through the view, then through the base)

CASES_KEPT_VIEW = ["v[...] = r; b[...] = r", "v[...] = r; b += r", "v[...] = r; v += r",
                   "vT[...] = r; vTT[...] = r", "vT[...] = r; b[...] = r", "vT[...] = r; b[0, 0] = 7",
                   "vT[...] = r; vT[0, 0] = 7"]

def _kept_view(case, lib):
  arr = np.array([[0., 1], [2, 3]], dtype=np.float32)
  b = Tensor(arr.copy()) if lib == "teeny" else torch.tensor(arr.copy())
  v, vT = b[:], b.T
  vTT = vT.T
  r = b * 5
  exec(case, {}, {"b": b, "v": v, "vT": vT, "vTT": vTT, "r": r})
  return b, r

@pytest.mark.parametrize("case", CASES_KEPT_VIEW)
def test_kept_view_value_written_twice_runs(case):
  for t in _kept_view(case, "teeny"): t.realize()

@needs_values
@pytest.mark.parametrize("case", CASES_KEPT_VIEW)
def test_kept_view_value_written_twice(case):
  for t, tt in zip(_kept_view(case, "teeny"), _kept_view(case, "torch")): same(t, tt, case)

# ---- A3. a write whose value is the memory it overwrites, after a pending write: copy first (numpy's semantics)

# (torch has no negative steps; its copy_ from a flip, a copy, gives the same; numpy copies an overlapping right side
# first)
SELF_CASES = ["a[0] = 5; a[::-1] = a", "a[...] = a; a[::-1] = a", "a[0] = 5; a[1:] = a[:-1]",
              "a[0] = 5; a[:-1] = a[1:]", "a[0] = 5; a[::2] = a[1::2]", "a[0] = 5; a[::-1] = a; a[0] += 1",
              "a += 1; a[::-1] = a[:]",
              "a[1] = 7; a[np.array([3, 2, 1, 0])] = a", "a[1] = 7; a[np.array([3, 2, 1, 0])] = a[:]",
              "a[1] = 7; a[np.array([0, 1])] = a[np.array([1, 0])]"]

def _self_case(case, lib):
  arr = np.array([1., 2, 3, 4], dtype=np.float32)
  a = Tensor(arr.copy()) if lib == "teeny" else arr.copy()
  exec(case.replace("np.array(", "Tensor(") if lib == "teeny" else case, {"np": np, "Tensor": Tensor}, {"a": a})
  return a

@pytest.mark.parametrize("case", SELF_CASES)
def test_self_overlapping_write_after_pending_runs(case):
  _self_case(case, "teeny").realize()

@needs_values
@pytest.mark.parametrize("case", SELF_CASES)
def test_self_overlapping_write_after_pending(case):
  np.testing.assert_equal(_self_case(case, "teeny").numpy(), _self_case(case, "numpy"), err_msg=case)

@needs_values
def test_self_overlapping_write_matches_torch_copy():
  a, ta = pair([1., 2, 3])
  a[0] = 5; ta[0] = 5
  a[::-1] = a; ta.copy_(ta.flip(0))
  same(a, ta)

# ---- B4. ops torch copies: a write into the result stays in the result; a write into the source misses the result

COPIES = {  # name: (teeny op, torch op)
  "pad": (lambda t: t.pad((1, 2, 1, 0)), lambda t: F.pad(t, (1, 2, 1, 0))),
  "pad_zero": (lambda t: t.pad((0, 0)), lambda t: F.pad(t, (0, 0))),
  "pad_crop": (lambda t: t.pad((-1, 1)), lambda t: F.pad(t, (-1, 1))),
  "pad_value": (lambda t: t.pad((1, 1), value=7.0), lambda t: F.pad(t, (1, 1), value=7.0)),
  "pad_reflect": (lambda t: t.pad((1, 1), mode="reflect"), lambda t: F.pad(t[None], (1, 1), mode="reflect")[0]),
  "pad_replicate_zero": (lambda t: t.pad((0, 0), mode="replicate"),
                         lambda t: F.pad(t[None], (0, 0), mode="replicate")[0]),
  "flip": (lambda t: t.flip(0), lambda t: t.flip(0)),
  "flip_all": (lambda t: t.flip((0, 1)), lambda t: t.flip((0, 1))),
  "flip_size1": (lambda t: t[:1].flip(0), lambda t: t[:1].flip(0)),
  "repeat": (lambda t: t.repeat(2, 1), lambda t: t.repeat(2, 1)),
  "repeat_ones": (lambda t: t.repeat(1, 1), lambda t: t.repeat(1, 1)),
  "repeat_newdim": (lambda t: t.repeat(2, 1, 2), lambda t: t.repeat(2, 1, 2)),
  "repeat_interleave": (lambda t: t.repeat_interleave(2, 1), lambda t: t.repeat_interleave(2, 1)),
  "repeat_interleave_flat": (lambda t: t.repeat_interleave(2), lambda t: t.repeat_interleave(2)),
  "roll": (lambda t: t.roll(1, 1), lambda t: t.roll(1, 1)),
  "roll_none": (lambda t: t.roll(0, 1), lambda t: t.roll(0, 1)),
  "cat_one": (lambda t: Tensor.cat(t), lambda t: torch.cat([t])),
  "cat_view": (lambda t: Tensor.cat(t[1:]), lambda t: torch.cat([t[1:]])),
  "stack_one": (lambda t: Tensor.stack(t), lambda t: torch.stack([t])),
  "cat_two": (lambda t: t.cat(t, dim=1), lambda t: torch.cat([t, t], 1)),
  "T_reshape": (lambda t: t.T.reshape(12), lambda t: t.T.reshape(12)),
  "T_flatten": (lambda t: t.T.flatten(), lambda t: t.T.flatten()),
  "slice_reshape": (lambda t: t[:, 1:].reshape(9), lambda t: t[:, 1:].reshape(9)),
  "step_reshape": (lambda t: t[:, ::2].reshape(6), lambda t: t[:, ::2].reshape(6)),
  "permute_reshape": (lambda t: t.reshape(3, 2, 2).permute(0, 2, 1).reshape(3, 4),
                      lambda t: t.reshape(3, 2, 2).permute(0, 2, 1).reshape(3, 4)),
  "expand_reshape": (lambda t: t[:, :1].expand(3, 4).reshape(12), lambda t: t[:, :1].expand(3, 4).reshape(12)),
  "gather": (lambda t: t[Tensor([2, 0])], lambda t: t[torch.tensor([2, 0])]),
  "masked_fill": (lambda t: t.masked_fill(t > 5, 0), lambda t: t.masked_fill(t > 5, 0)),
  "tril": (lambda t: t.tril(), lambda t: t.tril()),
  "clone": (lambda t: t.clone(), lambda t: t.clone()),
  "arith": (lambda t: t + 0, lambda t: t + 0),
}
VIEWS = {  # torch views: writes reach the source
  "slice": (lambda t: t[1:, ::2], lambda t: t[1:, ::2]),
  "select": (lambda t: t[1], lambda t: t[1]),
  "T": (lambda t: t.T, lambda t: t.T),
  "permute": (lambda t: t.permute(1, 0), lambda t: t.permute(1, 0)),
  "reshape": (lambda t: t.reshape(2, 6), lambda t: t.reshape(2, 6)),
  "view_of_view": (lambda t: t[1:].reshape(2, 2, 2), lambda t: t[1:].reshape(2, 2, 2)),
  "T_split_reshape": (lambda t: t.T.reshape(2, 2, 3), lambda t: t.T.reshape(2, 2, 3)),
  "step_split_reshape": (lambda t: t[:, ::2].reshape(3, 2, 1), lambda t: t[:, ::2].reshape(3, 2, 1)),
  "flatten": (lambda t: t.flatten(), lambda t: t.flatten()),
  "unsqueeze": (lambda t: t.T.unsqueeze(1), lambda t: t.T.unsqueeze(1)),
  "squeeze": (lambda t: t[:1].squeeze(0), lambda t: t[:1].squeeze(0)),
  "diagonal": (lambda t: t.diagonal(1), lambda t: t.diagonal(1)),
  "split": (lambda t: t.split(2, 1)[1], lambda t: t.split(2, 1)[1]),
  "chunk": (lambda t: t.chunk(3, 0)[2], lambda t: t.chunk(3, 0)[2]),
  "unbind": (lambda t: t.unbind(1)[3], lambda t: t.unbind(1)[3]),
  "detach": (lambda t: t.detach(), lambda t: t.detach()),
  "mT": (lambda t: t.mT[1:], lambda t: t.mT[1:]),
}
WRITES = {
  "setitem_first": lambda r: r.__setitem__((0,) * r.ndim, -1.0),
  "setitem_last": lambda r: r.__setitem__((-1,) * r.ndim, -7.0),
  "iadd": lambda r: r.__iadd__(100),
  "assign": lambda r: r.assign(r * 3 - 1) if isinstance(r, Tensor) else r.copy_(r * 3 - 1),
}

def _into_result(op, write, realize_src, realize_res):
  t, tt = pair(np.arange(12).reshape(3, 4))
  if realize_src: t.realize()
  r, rt = op[0](t), op[1](tt)
  if realize_res: r.realize()
  WRITES[write](r); WRITES[write](rt)
  return (t, tt), (r, rt)

@needs_values
@pytest.mark.parametrize("realize", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("name", list(COPIES) + list(VIEWS))
def test_write_into_result(name, write, realize):
  src, res = _into_result(COPIES.get(name) or VIEWS[name], write, *realize)
  same(*res, f"{name}: the result")
  same(*src, f"{name}: its source")

@needs_values
@pytest.mark.parametrize("realize", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("name", list(COPIES) + list(VIEWS))
def test_write_into_source(name, realize):
  t, tt = pair(np.arange(12).reshape(3, 4))
  if realize[0]: t.realize()
  op = COPIES.get(name) or VIEWS[name]
  r, rt = op[0](t), op[1](tt)
  if realize[1]: r.realize()
  t[0, 0] = -50; tt[0, 0] = -50
  t += 1; tt += 1
  same(r, rt, f"{name}: the result")
  same(t, tt, f"{name}: its source")

@needs_values
def test_copy_result_views_and_writes_into_padding():
  x, tx = pair(np.arange(6).reshape(2, 3))
  p, tp = x.pad((1, 1)), F.pad(tx, (1, 1))
  v, tv = p[:, :2], tp[:, :2]   # a view of the copy: writes reach the copy (its padding too), never x
  v += 10; tv += 10
  p[1, -1] = 99; tp[1, -1] = 99
  x[0] = 0; tx[0] = 0
  for a, b in ((p, tp), (v, tv), (x, tx)): same(a, b)

@needs_values
def test_copy_result_of_lazy_source_realized_together():
  m, tm = pair(np.arange(4))
  m, tm = m * 2, tm * 2
  f, tf = m.flip(0), tm.flip(0)
  Tensor.realize_all(m, f)
  m[0] = -1; tm[0] = -1
  f[1] = -2; tf[1] = -2
  same(m, tm); same(f, tf)

@needs_values
@pytest.mark.parametrize("name", ["pad", "flip", "repeat", "T_reshape", "roll"])
def test_copy_result_of_pending_write(name):
  # the copy reads a version a pending write makes; a later write to the source must not reach it
  x, tx = pair(np.arange(12).reshape(3, 4))
  x[0, 1] = 7; tx[0, 1] = 7
  r, rt = COPIES[name][0](x), COPIES[name][1](tx)
  x[1] = -1; tx[1] = -1
  x.realize()
  r[-1] = 3; rt[-1] = 3
  same(r, rt); same(x, tx)

@needs_values
@pytest.mark.parametrize("name", ["pad", "flip", "repeat", "T_reshape"])
def test_gradients_through_writes_into_copies(name):
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  w, tw = Tensor(a.copy(), requires_grad=True), torch.tensor(a.copy(), requires_grad=True)
  r, rt = COPIES[name][0](w), COPIES[name][1](tw)
  r[1] = 5; rt[1] = 5
  r *= 2; rt *= 2
  k = np.arange(int(np.prod(rt.shape)), dtype=np.float32).reshape(rt.shape)
  (r * Tensor(k)).sum().backward()
  (rt * torch.tensor(k)).sum().backward()
  same(w.grad, tw.grad)

def test_copy_results_read_without_copy_kernels():
  x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).realize()
  # (read lazily: the pad, flip or repeat is fused into the kernel that reads it)
  for r in (x.pad((1, 1)), x.flip(0), x.repeat(2, 1), x.repeat_interleave(2, 0), x.T.reshape(12)):
    assert len((r + 1).schedule()) == 1

def test_plain_writes_stay_one_kernel():
  x = Tensor.zeros(8).contiguous().realize()
  y = Tensor.ones(2).realize()
  x[1:3] = y
  assert len(x.schedule()) == 1
  w, g = Tensor.ones(4, 4).contiguous().realize(), Tensor.ones(4, 4).realize()
  w -= 0.1 * g
  assert len(w.schedule()) == 1

def test_expanded_views_still_refuse_writes():
  x = Tensor([[1., 2, 3]]).realize()
  with pytest.raises(RuntimeError, match="expanded"): x.expand(2, 3)[0, 0] = 5
  r = x.repeat(2, 1)
  r[0, 0] = 5   # (a copy: writable)

# ---- a property test: random programs of views, copies, writes and reads, against torch

class Pair:
  def __init__(self, t, tt, name, writable=True): self.t, self.tt, self.name, self.writable = t, tt, name, writable

def _draw_slices(draw, shape):
  idx = []
  for s in shape:
    k = draw(st.sampled_from(["full", "slice", "int"] if s else ["full"]))
    if k == "int": idx.append(draw(st.integers(-s, s - 1)))
    elif k == "full": idx.append(slice(None))
    else:
      b = draw(st.integers(0, s - 1))
      idx.append(slice(b, draw(st.integers(b + 1, s)), draw(st.sampled_from([1, 1, 2]))))
  return tuple(idx)

def _factor(draw, n):
  dims, m, p = [], n, 2
  while m > 1:
    while m % p == 0: dims.append(p); m //= p
    p += 1
  out = [1] * draw(st.integers(1, 3))
  for q in dims: out[draw(st.integers(0, len(out) - 1))] *= q
  return tuple(out)

@needs_values
@settings(max_examples=max(settings.default.max_examples // 2, 20))   # (each example compiles a few kernels)
@given(st.data())
def test_random_programs_against_torch(data):
  draw = data.draw
  shape = tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 3))))
  arr = np.random.default_rng(draw(st.integers(0, 2**16))).integers(-9, 10, size=shape).astype(np.float32)
  ts = [Pair(Tensor(arr.copy()), torch.tensor(arr.copy()), "b")]
  realized = draw(st.booleans())
  if realized: ts[0].t.realize()
  log = [f"b = Tensor(<{shape}>)" + (".realize()" if realized else "")]
  for step in range(draw(st.integers(1, 10))):
    src = ts[draw(st.integers(0, len(ts) - 1))]
    s = tuple(src.tt.shape)
    op = draw(st.sampled_from(["slice", "permute", "reshape", "permute_reshape", "expand", "pad", "flip", "repeat",
                               "repeat_interleave", "roll", "reader", "setitem", "setitem", "scatter", "iadd", "assign",
                               "realize", "read"]))
    name = f"t{step}"
    new = None
    if op == "slice" and s:
      ix = _draw_slices(draw, s)
      new, d = Pair(src.t[ix], src.tt[ix], name, src.writable), f"{src.name}[{ix}]"
    elif op == "permute" and len(s) >= 2:
      order = tuple(draw(st.permutations(range(len(s)))))
      new, d = Pair(src.t.permute(order), src.tt.permute(order), name, src.writable), f"{src.name}.permute{order}"
    elif op in ("reshape", "permute_reshape"):
      t, tt, d = src.t, src.tt, src.name
      if op == "permute_reshape" and len(s) >= 2:
        order = tuple(draw(st.permutations(range(len(s)))))
        t, tt, d = t.permute(order), tt.permute(order), f"{d}.permute{order}"
      ns = _factor(draw, int(np.prod(s)))
      tr = tt.reshape(ns)
      # (a view stays as writable as its source; a copy, torch's when strides cannot express it, is writable)
      view = tr.untyped_storage().data_ptr() == tt.untyped_storage().data_ptr()
      new, d = Pair(t.reshape(ns), tr, name, src.writable or not view), f"{d}.reshape{ns}"
      event("reshape: a view" if view else "reshape: a copy")
    elif op == "expand" and 1 in s:
      ns = tuple(draw(st.integers(1, 3)) if v == 1 else v for v in s)
      new, d = Pair(src.t.expand(ns), src.tt.expand(ns), name, False), f"{src.name}.expand{ns}"
    elif op == "pad" and s:
      flat = tuple(draw(st.integers(0, 2)) for _ in range(2 * len(s)))
      new, d = Pair(src.t.pad(flat), F.pad(src.tt, flat), name), f"{src.name}.pad{flat}"
    elif op == "flip" and s:
      ax = draw(st.integers(0, len(s) - 1))
      new, d = Pair(src.t.flip(ax), src.tt.flip(ax), name), f"{src.name}.flip({ax})"
    elif op == "repeat" and s:
      reps = tuple(draw(st.integers(1, 2)) for _ in s)
      new, d = Pair(src.t.repeat(*reps), src.tt.repeat(*reps), name), f"{src.name}.repeat{reps}"
    elif op == "repeat_interleave" and s:
      ax, k = draw(st.integers(0, len(s) - 1)), draw(st.integers(1, 2))
      new, d = (Pair(src.t.repeat_interleave(k, ax), src.tt.repeat_interleave(k, ax), name),
                f"{src.name}.repeat_interleave({k}, {ax})")
    elif op == "roll" and s:
      ax, k = draw(st.integers(0, len(s) - 1)), draw(st.integers(0, 3))
      new, d = Pair(src.t.roll(k, ax), src.tt.roll(k, ax), name), f"{src.name}.roll({k}, {ax})"
    elif op == "scatter" and src.writable and s:
      pos = draw(st.lists(st.integers(-s[0], s[0] - 1), min_size=1, max_size=s[0], unique_by=lambda v: v % s[0]))
      c = float(draw(st.integers(-5, 5)))
      src.t[Tensor(pos)] = c; src.tt[torch.tensor(pos)] = c; log.append(f"{src.name}[Tensor({pos})] = {c}")
      continue
    elif op == "reader":
      new, d = Pair(src.t * 2 + 1, src.tt * 2 + 1, name), f"{src.name} * 2 + 1"
    elif op in ("setitem", "iadd", "assign") and src.writable and s:
      dst = ts[draw(st.integers(0, len(ts) - 1))]   # the value: a scalar, or read from any tensor (maybe overlapping)
      ix = _draw_slices(draw, s) if op == "setitem" else (Ellipsis,)
      region = tuple(src.tt[ix].shape)
      if draw(st.booleans()) or tuple(dst.tt.shape) != s:
        c = float(draw(st.integers(-5, 5)))
        v, vt, vd = c, c, repr(c)
      else:   # a copy of a tensor of the same shape (torch's copy keeps it apart from the memory written)
        v, vt, vd = dst.t.flip(0)[ix], dst.tt.flip(0)[ix].clone(), f"{dst.name}.flip(0)[{ix}]"
        event("value read from a tracked tensor")
      if op == "setitem":
        src.t[ix] = v; src.tt[ix] = vt; log.append(f"{src.name}[{ix}] = {vd}")
      elif op == "iadd":
        src.t += v; src.tt += vt; log.append(f"{src.name} += {vd}")
      else:
        src.t.assign(src.t * 0.5 + v); src.tt.copy_(src.tt * 0.5 + vt); log.append(f"{src.name}.assign(* 0.5 + {vd})")
      event(f"write ({op}) of region {'empty' if 0 in region else 'non-empty'}")
      continue
    elif op == "realize":
      src.t.realize(); log.append(f"{src.name}.realize()")
      continue
    elif op == "read":
      note("\n".join(log))
      same(src.t, src.tt, f"{src.name} after:\n" + "\n".join(log))
      continue
    if new is not None:
      log.append(f"{name} = {d}")
      ts.append(new)
      event(f"made by {op}")
  note("\n".join(log))
  for p in ts: same(p.t, p.tt, f"{p.name} after:\n" + "\n".join(log))
