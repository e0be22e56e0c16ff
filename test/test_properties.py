"""Property-based tests (hypothesis) against numpy and torch as independent references.

(a) random movement-op chains, then elementwise ops and reductions         (reference: numpy)
(b) random in-place writes through views of a realized tensor              (reference: numpy basic-slicing views)
(c) gradients of random compositions, with realize() and in-place ops      (reference: torch autograd)
(d) dtype promotion, casts, float/int `%` and `//`                          (reference: torch; numpy where torch lacks)
(e) matmuls through the heuristics' register tiles                          (reference: numpy, float64)
(f) conv2d backward through every hand-written input-gradient kernel        (reference: torch autograd)

Profiles live in test/conftest.py: `ci` (default, deterministic) and `long` (HYPOTHESIS_PROFILE=long).
`pytest test/test_properties.py --hypothesis-show-statistics` shows how often each hard case (hypothesis.event) was hit.
Every example notes its operations as teeny code (hypothesis.note), so a falsifying example prints a readable repro.
"""
from __future__ import annotations
import math
import numpy as np
import pytest
import torch
from hypothesis import event, given, note, settings, strategies as st
from teeny import Device, Tensor

pytestmark = pytest.mark.skipif(Device.DEFAULT.startswith("NULL"),
                                reason="the properties compare values; NULL holds no data")

MAX_DIM = 6

# ---------------------------------------------------------------- shared helpers

def seeded(draw, shape, lo=-2.0, hi=2.0, dtype=np.float32, integer=False) -> np.ndarray:
  rng = np.random.default_rng(draw(st.integers(0, 2**16), label="seed"))
  if integer: return rng.integers(int(lo), int(hi) + 1, size=shape).astype(dtype)
  return rng.uniform(lo, hi, size=shape).astype(dtype)

def draw_shape(draw, max_ndim=4, max_size=MAX_DIM, min_ndim=0) -> tuple[int, ...]:
  nd = draw(st.integers(min_ndim, max_ndim), label="ndim")
  size = st.one_of(st.sampled_from([0, 1]), st.integers(0, max_size))
  shape = tuple(draw(size, label="dim") for _ in range(nd))
  shape_events(shape)
  return shape

def shape_events(shape, where=""):
  if 0 in shape: event(f"{where}size-0 dim")
  if 1 in shape: event(f"{where}size-1 dim")
  if len(shape) == 0: event(f"{where}0-d")

def factor_shape(draw, n: int) -> tuple[int, ...]:
  """A random shape with n elements (0-4 dims, sizes up to n)."""
  if n == 0:
    shape = list(draw_shape(draw, min_ndim=1))
    if 0 not in shape: shape[draw(st.integers(0, len(shape) - 1))] = 0
    return tuple(shape)
  primes, m, p = [], n, 2
  while m > 1:
    while m % p == 0: primes.append(p); m //= p
    p += 1
  nd = draw(st.integers(1 if primes else 0, 4))
  if nd == 0: return ()
  dims = [1] * nd
  for q in primes: dims[draw(st.integers(0, nd - 1))] *= q
  return tuple(dims)

def draw_index(draw, shape, *, neg_steps=True, adv=False, adv_dups=False, torch_safe=False):
  """A random index for `shape`: ints, slices (steps, negative steps, out-of-range bounds), None, Ellipsis, and
  (adv=True) integer arrays. Returns (teeny index, numpy index, description, per-dim items for converters)."""
  items = []
  n_adv = 0
  for s in shape:
    kinds = ["slice", "slice", "full"] + (["int"] if s > 0 else []) + (["adv"] if adv and n_adv < 2 else [])
    k = draw(st.sampled_from(kinds))
    if k == "int": items.append(draw(st.integers(-s, s - 1)))
    elif k == "full": items.append(slice(None))
    elif k == "slice":
      bound = st.one_of(st.none(), st.integers(-s - 2, s + 2))
      step = draw(st.sampled_from([None, 1, 2, 3] + ([-1, -2, -3] if neg_steps else [])))
      start, stop = draw(bound), draw(bound)
      if torch_safe: start, stop = (None if v is None else min(max(v, -s), s) for v in (start, stop))
      items.append(slice(start, stop, step))
    else:
      if n_adv == 0:
        n = 0 if s == 0 else draw(st.integers(1, s if not adv_dups else s + 2))
        vals = [] if s == 0 else draw(st.lists(st.integers(-s, s - 1), min_size=n, max_size=n,
                                               unique_by=(None if adv_dups else (lambda v, s=s: v % s))))
        first_len = n
      elif s == 0 and first_len: items.append(slice(None)); continue
      else:  # a second index array: same length as the first, any values (the pairs stay unique)
        vals = [] if s == 0 else draw(st.lists(st.integers(-s, s - 1), min_size=first_len, max_size=first_len))
      items.append(np.array(vals, dtype=np.int32))
      n_adv += 1
  if n_adv:  # numpy counts an int next to an index array as advanced too (torch selects it first): keep them apart
    items = [slice(None) if isinstance(i, int) else i for i in items]
  if any(isinstance(i, slice) and (i.step or 1) < 0 for i in items): event("index: negative step")
  if any(isinstance(i, slice) and (i.step or 1) > 1 for i in items): event("index: step > 1")
  if n_adv: event(f"index: {n_adv} integer array(s)")
  # an Ellipsis stands for a run of full slices; trailing full slices may be dropped
  ell = None
  if draw(st.booleans()):
    i = draw(st.integers(0, len(items)))
    j = draw(st.integers(i, len(items)))
    if all(isinstance(x, slice) and x == slice(None) for x in items[i:j]) or draw(st.booleans()):
      for x in range(i, j): items[x] = slice(None)
      ell = (i, j)
  out = items[:ell[0]] + [Ellipsis] + items[ell[1]:] if ell else list(items)
  if ell: event("index: Ellipsis")
  elif draw(st.booleans()):
    while out and isinstance(out[-1], slice) and out[-1] == slice(None): out.pop()
  for _ in range(draw(st.integers(0, 2))):
    out.insert(draw(st.integers(0, len(out))), None)
    event("index: None")
  np_idx = tuple(out)
  # numpy counts even an empty Ellipsis between index arrays as a separator (torch does not): spell it out
  if n_adv and ell:
    k = next(i for i, x in enumerate(np_idx) if x is Ellipsis)
    np_idx = np_idx[:k] + (slice(None),) * (len(shape) - sum(x is not None for x in out) + 1) + np_idx[k + 1:]
  tn_idx = tuple(Tensor(x) if isinstance(x, np.ndarray) else x for x in out)
  if len(out) == 1 and draw(st.booleans()): np_idx, tn_idx = np_idx[0], tn_idx[0]
  return tn_idx, np_idx, _idx_repr(out), items, ell

def _idx_repr(out) -> str:
  def one(x):
    if x is None: return "None"
    if x is Ellipsis: return "..."
    if isinstance(x, np.ndarray): return f"Tensor({x.tolist()})"
    if isinstance(x, slice):
      return ("" if x.start is None else str(x.start)) + ":" + ("" if x.stop is None else str(x.stop)) + \
        ("" if x.step is None else f":{x.step}")
    return repr(x)
  return "[" + ", ".join(one(x) for x in out) + "]" if out else "[()]"

def check_close(got: np.ndarray, want: np.ndarray, rtol=1e-4, atol=1e-5, what=""):
  want = np.asarray(want)
  assert got.shape == want.shape, f"{what}: shape {got.shape} != reference {want.shape}"
  if want.dtype == np.bool_ or want.dtype.kind in "iu":
    np.testing.assert_array_equal(got, want, err_msg=what)
  else:
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=what)

# ---------------------------------------------------------------- (a) movement chains + elementwise + reductions

def np_squeeze(n, dim):
  if dim is None: return np.squeeze(n)
  return np.squeeze(n, dim) if n.ndim and n.shape[dim] == 1 else n

def movement_step(draw, t, n, log):
  """One random movement op applied to both a teeny tensor and its numpy twin."""
  s = n.shape
  ops = ["reshape", "permute", "expand", "pad", "shrink", "flip", "transpose", "index", "index", "squeeze", "unsqueeze",
         "flatten", "realize"]
  op = draw(st.sampled_from(ops), label="movement")
  if op == "reshape":
    new = factor_shape(draw, n.size)
    if new and n.size and draw(st.booleans()):
      event("reshape with -1")
      k = draw(st.integers(0, len(new) - 1))
      arg = tuple(-1 if i == k else v for i, v in enumerate(new))
    else: arg = new
    log.append(f".reshape{arg!r}")
    return t.reshape(arg), n.reshape(new)
  if op == "permute":
    order = tuple(draw(st.permutations(range(len(s)))))
    log.append(f".permute{order!r}")
    return t.permute(order), n.transpose(order)
  if op == "expand":
    extra = draw(st.lists(st.integers(0, 3), max_size=max(0, 4 - len(s))))
    new = tuple(extra) + tuple(draw(st.integers(0, 4)) if v == 1 else v for v in s)
    if any(v == 1 and w != 1 for v, w in zip(s, new[len(extra):])): event("expand a size-1 dim")
    log.append(f".expand{new!r}")
    return t.expand(new), np.broadcast_to(n, new)
  if op == "pad":
    pairs = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in s)
    value = draw(st.sampled_from([0.0, 0.0, 1.5, -3.0]))
    log.append(f".pad({pairs!r}, value={value})")
    return t.pad(pairs, value=value), np.pad(n, pairs, constant_values=value) if s else n
  if op == "shrink":
    arg = []
    for v in s:
      b = draw(st.integers(0, v))
      arg.append((b, draw(st.integers(b, v))))
    log.append(f".shrink({tuple(arg)!r})")
    return t.shrink(tuple(arg)), n[tuple(slice(b, e) for b, e in arg)]
  if op == "flip":
    axes = tuple(sorted(draw(st.sets(st.integers(0, max(len(s) - 1, 0)), max_size=len(s))))) if s else ()
    if not axes: return t, n
    log.append(f".flip({axes!r})")
    return t.flip(axes), np.flip(n, axes)
  if op == "transpose":
    if len(s) < 2: return t, n
    a, b = draw(st.integers(-len(s), len(s) - 1)), draw(st.integers(-len(s), len(s) - 1))
    log.append(f".transpose({a}, {b})")
    return t.transpose(a, b), np.swapaxes(n, a, b)
  if op == "index":
    ti, ni, desc, _, _ = draw_index(draw, s, adv=draw(st.integers(0, 4)) == 0)
    log.append(desc)
    return t[ti], n[ni]
  if op == "squeeze":
    dim = draw(st.one_of(st.none(), st.integers(-len(s), len(s) - 1))) if s else None
    log.append(f".squeeze({dim})")
    return t.squeeze(dim), np_squeeze(n, dim)
  if op == "unsqueeze":
    if len(s) >= 5: return t, n
    d = draw(st.integers(-len(s) - 1, len(s)))
    log.append(f".unsqueeze({d})")
    return t.unsqueeze(d), np.expand_dims(n, d)
  if op == "flatten":
    if not s:
      log.append(".flatten()")
      return t.flatten(), n.reshape(1)
    a = draw(st.integers(0, len(s) - 1))
    b = draw(st.integers(a, len(s) - 1))
    log.append(f".flatten({a}, {b})")
    return t.flatten(a, b), n.reshape(s[:a] + (math.prod(s[a:b + 1]),) + s[b + 1:])
  event("realize mid-chain")
  log.append(".realize()")
  return t.realize(), n

UNARY = {
  "neg": (lambda x: -x, np.negative), "abs": (lambda x: x.abs(), np.abs),
  "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0)),
  "exp": (lambda x: x.exp(), np.exp), "sin": (lambda x: x.sin(), np.sin), "tanh": (lambda x: x.tanh(), np.tanh),
  "sqrt_abs": (lambda x: x.abs().sqrt(), lambda x: np.sqrt(np.abs(x))), "square": (lambda x: x.square(), np.square),
  "sigmoid": (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
  "log1p_abs": (lambda x: (x.abs() + 1).log(), lambda x: np.log(np.abs(x) + 1)),
  "floor": (lambda x: x.floor(), np.floor),
  "recip_safe": (lambda x: (x.abs() + 0.5).reciprocal(), lambda x: 1 / (np.abs(x) + 0.5)),
}
BINARY = {
  "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
  "mul": (lambda a, b: a * b, np.multiply),
  "div": (lambda a, b: a / (b.abs() + 0.5), lambda a, b: a / (np.abs(b) + 0.5)),
  "maximum": (lambda a, b: a.maximum(b), np.maximum), "minimum": (lambda a, b: a.minimum(b), np.minimum),
  "where": (lambda a, b: (a > b).where(a, b * 2), lambda a, b: np.where(a > b, a, b * 2)),
}
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean, "prod": np.prod}

def broadcast_partner(draw, s):
  """A shape that broadcasts with s (either side may broadcast, extra leading dims allowed)."""
  out = []
  for v in s:
    c = draw(st.sampled_from(["same", "same", "one", "grow"]))
    out.append(v if c == "same" else 1 if c == "one" else (draw(st.integers(0, 3)) if v == 1 else v))
  drop = draw(st.integers(0, len(out)))
  out = out[drop:]
  if len(out) < 4 and draw(st.booleans()): out = [draw(st.integers(1, 3)) if drop == 0 else 1] + out
  return tuple(out)

@given(st.data())
def test_movement_elementwise_reduce(data):
  draw = data.draw
  log: list[str] = []
  integer = draw(st.integers(0, 4)) == 0
  shape = draw_shape(draw)
  n = seeded(draw, shape, -3 if integer else -2, 3 if integer else 2, np.int32 if integer else np.float32, integer)
  t = Tensor(n.copy())
  log.append(f"x = Tensor(<{n.dtype} {shape}>)")
  if integer: event("(a) int32 data")
  depth = draw(st.integers(0, 6))
  for _ in range(depth):
    t, n = movement_step(draw, t, n, log)
    assert t.shape == n.shape, f"shape {t.shape} != numpy {n.shape} after x{''.join(log[1:])}"
  if depth >= 2: event("(a) view of a view (>=2 movement ops)")
  note("".join(log))
  check_close(t.numpy(), n, what="after movement ops " + "".join(log)) if draw(st.booleans()) else None
  if not integer:
    if draw(st.booleans()):
      name = draw(st.sampled_from(sorted(UNARY)))
      tf, nf = UNARY[name]
      t, n = tf(t), nf(n.astype(np.float64)).astype(np.float32)
      log.append(f" |> {name}")
    if draw(st.booleans()):
      name = draw(st.sampled_from(sorted(BINARY)))
      ps = broadcast_partner(draw, n.shape)
      p = seeded(draw, ps)
      tp = Tensor(p.copy())
      if len(ps) >= 2 and draw(st.booleans()):  # the partner as a transposed view
        tp = Tensor(np.ascontiguousarray(p.swapaxes(-1, -2))).transpose(-1, -2)
        event("(a) binary partner is a transposed view")
      if np.broadcast_shapes(ps, n.shape) != n.shape: event("(a) binary broadcasts the chain's result")
      tf, nf = BINARY[name]
      swap = draw(st.booleans())
      t, n = (tf(tp, t), nf(p.astype(np.float64), n)) if swap else (tf(t, tp), nf(n.astype(np.float64), p))
      n = n.astype(np.float32)
      log.append(f" |> {name}({'partner, x' if swap else 'x, partner'}) partner shape {ps}")
  note("".join(log))
  if draw(st.booleans()):
    name = draw(st.sampled_from(sorted(REDUCE)))
    axis = draw(st.one_of(st.none(), st.integers(-n.ndim, n.ndim - 1) if n.ndim else st.none(),
                          st.lists(st.integers(0, n.ndim - 1), unique=True, min_size=1, max_size=n.ndim).map(tuple)
                          if n.ndim else st.none()))
    keepdim = draw(st.booleans())
    log.append(f" |> .{name}(axis={axis}, keepdim={keepdim})")
    note("".join(log))
    if n.size == 0: event(f"(a) reduce {name} over size-0")
    if name in ("max", "min") and n.size == 0 and (axis is None or any(n.shape[a] == 0 for a in np.atleast_1d(axis))):
      # numpy and torch refuse: there is no identity for max/min
      event("(a) max/min of an empty axis: must raise")
      with pytest.raises((ValueError, RuntimeError, IndexError)): getattr(t, name)(axis, keepdim=keepdim).numpy()
      return
    with np.errstate(all="ignore"):
      ref = REDUCE[name](n.astype(np.float64), axis=axis, keepdims=keepdim)
    ref = ref.astype(np.int64) if integer and name != "mean" else ref.astype(np.float32)
    got = getattr(t, name)(axis, keepdim=keepdim).numpy()
    if integer and name != "mean": got = got.astype(np.int64)
    check_close(got, ref, rtol=1e-3, atol=1e-4, what="".join(log))
  else:
    check_close(t.numpy(), n, rtol=1e-4, atol=1e-5, what="".join(log))

# ---------------------------------------------------------------- (b) in-place writes through views

class Tracked:
  def __init__(self, t, n, desc, depth): self.t, self.n, self.desc, self.depth = t, n, desc, depth

@given(st.data())
def test_inplace_writes_through_views(data):
  draw = data.draw
  shape = draw_shape(draw, min_ndim=1)
  rng = np.random.default_rng(draw(st.integers(0, 2**16), label="seed"))
  base_n = rng.integers(-8, 9, size=shape).astype(np.float32)
  base = Tensor(base_n.copy()).realize()
  log = [f"b = Tensor(<float32 {shape}>).realize()"]
  views = [Tracked(base, base_n, "b", 0)]
  readers: list[Tracked] = []
  wrote = False

  def pick(lst): return lst[draw(st.integers(0, len(lst) - 1))]
  def value_for(shape, what):
    kind = draw(st.sampled_from(["scalar", "array", "array_bcast"]))
    if kind == "scalar" or not shape:
      v = float(draw(st.integers(-4, 4)))
      return v, v, repr(v)
    if kind == "array_bcast":
      shape = tuple(1 if draw(st.booleans()) else v for v in shape)[draw(st.integers(0, len(shape))):]
    a = rng.integers(-4, 5, size=shape).astype(np.float32)
    event(f"(b) {what} value is an array")
    return Tensor(a.copy()), a, f"Tensor(<{shape}>)"
  def check(tr: Tracked, why: str):
    note("\n".join(log))
    check_close(tr.t.numpy(), tr.n, what=f"{why}: {tr.desc} (after: {' ; '.join(log)})")

  for _ in range(draw(st.integers(1, 10), label="steps")):
    op = draw(st.sampled_from(["view", "view", "setitem", "setitem", "iop", "iop", "assign", "realize", "read",
                               "reader", "item_iop"]), label="op")
    src = pick(views)
    if op == "view":
      if draw(st.integers(0, 4)) == 0 and src.n.ndim >= 2:
        order = tuple(draw(st.permutations(range(src.n.ndim))))
        t, n, d = src.t.permute(order), src.n.transpose(order), f".permute{order}"
      else:
        ti, ni, d, _, ell = draw_index(draw, src.n.shape)
        t, n = src.t[ti], src.n[ni if ell else (ni if isinstance(ni, tuple) else (ni,)) + (Ellipsis,)]
      assert np.shares_memory(n, base_n) or n.size == 0
      name = f"v{len(views)}"
      log.append(f"{name} = {src.desc}{d}")
      views.append(Tracked(t, n, name, src.depth + 1))
      if src.depth + 1 >= 2: event("(b) view of a view")
      if n.size == 0: event("(b) size-0 view")
      if n.ndim == 0: event("(b) 0-d view")
    elif op == "setitem":
      adv = draw(st.booleans())
      ti, ni, d, _, _ = draw_index(draw, src.n.shape, adv=adv)
      target_shape = src.n[ni].shape
      if src.n.ndim >= 1 and draw(st.integers(0, 3)) == 0:
        # the value is a view of the memory being written (t[1:] = t[:-1]): numpy reads all of it before writing
        ax = draw(st.integers(0, src.n.ndim - 1))
        tv, nv, vd = src.t.flip(ax)[ti], np.flip(src.n, ax)[ni].copy(), f"{src.desc}.flip({ax}){d}"
        event("(b) setitem whose value is a view of the target's memory")
      else: tv, nv, vd = value_for(target_shape, "setitem")
      log.append(f"{src.desc}{d} = {vd}")
      src.t[ti] = tv
      src.n[ni] = nv
      event("(b) setitem on a view" if src.depth else "(b) setitem on the base")
      if src.n[ni].size == 0: event("(b) setitem of zero elements")
      wrote = True
    elif op in ("iop", "item_iop"):
      sym = draw(st.sampled_from(["+=", "-=", "*="]))
      if op == "item_iop":  # v[idx] op= value: getitem, in-place op, setitem (Python's augmented subscript)
        ti, ni, d, _, _ = draw_index(draw, src.n.shape, adv=draw(st.booleans()))
        tv, nv, vd = value_for(src.n[ni].shape, "v[idx] op=")
        log.append(f"{src.desc}{d} {sym} {vd}")
        if sym == "+=": src.t[ti] += tv; src.n[ni] += nv
        elif sym == "-=": src.t[ti] -= tv; src.n[ni] -= nv
        else: src.t[ti] *= tv; src.n[ni] *= nv
        event("(b) v[idx] op= value")
      else:
        overlap = src.n.ndim >= 1 and draw(st.integers(0, 5)) == 0
        if overlap:  # the value reads the memory being written (numpy buffers the right side first)
          ax = draw(st.integers(0, src.n.ndim - 1))
          tv, nv, vd = src.t.flip(ax), np.flip(src.n, ax).copy(), f"{src.desc}.flip({ax})"
          event("(b) in-place op whose value overlaps the target")
        else: tv, nv, vd = value_for(src.n.shape, "op=")
        log.append(f"{src.desc} {sym} {vd}")
        t = src.t
        if sym == "+=": t += tv; src.n += nv
        elif sym == "-=": t -= tv; src.n -= nv
        else: t *= tv; src.n *= nv
        assert t is src.t, "an in-place operator must return the same tensor object"
        event("(b) op= on a view" if src.depth else "(b) op= on the base")
      wrote = True
    elif op == "assign" and src.n.ndim >= 1 and draw(st.integers(0, 3)) == 0:
      ax = draw(st.integers(0, src.n.ndim - 1))   # the value a plain view of the memory it overwrites
      src.t.assign(src.t.flip(ax))
      src.n[...] = np.flip(src.n, ax).copy()
      log.append(f"{src.desc}.assign({src.desc}.flip({ax}))")
      event("(b) assign of a view of its own memory")
      wrote = True
    elif op == "assign":
      k = draw(st.integers(1, 3))
      for _ in range(k):
        src.t.assign(src.t * 0.5 + 1)
        src.n[...] = src.n * 0.5 + 1
        if draw(st.booleans()):
          src.t.realize()
          log.append(f"{src.desc}.assign({src.desc} * 0.5 + 1).realize()")
        else: log.append(f"{src.desc}.assign({src.desc} * 0.5 + 1)")
      if k > 1: event("(b) assign chain")
      event("(b) assign on a view" if src.depth else "(b) assign on the base")
      wrote = True
    elif op == "realize":
      tr = pick(views + readers)
      tr.t.realize()
      log.append(f"{tr.desc}.realize()")
      if wrote: event("(b) realize interleaved with writes")
    elif op == "read":
      tr = pick(views + readers)
      log.append(f"read {tr.desc}")
      if tr in readers and tr.wrote_after: event("(b) reader snapshot read after a write")
      if tr.depth and wrote: event("(b) view read after a write")
      check(tr, "read")
    else:
      kind = draw(st.sampled_from(["*2+1", "sum", "clone", "+base.sum()"]))
      name = f"r{len(readers)}"
      if kind == "*2+1": t, n = src.t * 2 + 1, src.n * 2 + 1
      elif kind == "sum":
        ax = draw(st.integers(0, src.n.ndim - 1)) if src.n.ndim else None
        t, n, kind = src.t.sum(ax), src.n.sum(ax), f".sum({ax})"
      elif kind == "clone": t, n, kind = src.t.clone(), src.n.copy(), ".clone()"
      else: t, n = src.t + base.sum(), src.n + base_n.sum()
      log.append(f"{name} = {src.desc}{kind}  # a lazy reader: keeps these values")
      tr = Tracked(t, np.array(n, copy=True), name, 0)
      tr.wrote_after = False
      readers.append(tr)
    if op in ("setitem", "iop", "item_iop", "assign"):
      for r in readers: r.wrote_after = True
  note("\n".join(log))
  order = draw(st.permutations(views + readers), label="final read order")
  for tr in order:
    if tr in readers and tr.wrote_after: event("(b) reader snapshot read after a write")
    check(tr, "final read")
  if any(tr.depth >= 2 for tr in views) and wrote: event("(b) write with views of views alive")

# ---------------------------------------------------------------- (c) gradients against torch autograd

def to_torch_index(shape, np_idx):
  """Convert a numpy-style basic/advanced index into (flip dims, torch index) for a tensor of `shape`."""
  idx = np_idx if isinstance(np_idx, tuple) else (np_idx,)
  consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
  full = []
  for i in idx:
    if i is Ellipsis: full.extend([slice(None)] * (len(shape) - consumed))
    else: full.append(i)
  if not any(i is Ellipsis for i in idx): full.extend([slice(None)] * (len(shape) - consumed))
  flips, out, d = [], [], 0
  for i in full:
    if i is None: out.append(None); continue
    s = shape[d]
    if isinstance(i, slice) and (i.step or 1) < 0:
      r = list(range(*i.indices(s)))
      if not r: out.append(slice(0, 0))
      else:
        flips.append(d)
        out.append(slice(s - 1 - r[0], s - 1 - r[-1] + 1, -i.step))
    elif isinstance(i, np.ndarray): out.append(torch.from_numpy(i.astype(np.int64)))
    else: out.append(i)
    d += 1
  return flips, tuple(out)

T_UNARY = {"tanh": (lambda x: x.tanh(), torch.tanh), "sigmoid": (lambda x: x.sigmoid(), torch.sigmoid),
           "sin": (lambda x: x.sin(), torch.sin), "square": (lambda x: x * x, lambda x: x * x),
           "exp_tanh": (lambda x: x.tanh().exp(), lambda x: x.tanh().exp()), "relu": (lambda x: x.relu(), torch.relu),
           "abs": (lambda x: x.abs(), torch.abs), "neg": (lambda x: -x, torch.neg),
           "log_sq1": (lambda x: (x * x + 1).log(), lambda x: (x * x + 1).log()),
           "sqrt_sq1": (lambda x: (x * x + 1).sqrt(), lambda x: (x * x + 1).sqrt())}
T_BINARY = {"add": (lambda a, b: a + b, lambda a, b: a + b), "sub": (lambda a, b: a - b, lambda a, b: a - b),
            "mul": (lambda a, b: a * b, lambda a, b: a * b),
            "div": (lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1)),
            "maximum": (lambda a, b: a.maximum(b), torch.maximum),
            "minimum": (lambda a, b: a.minimum(b), torch.minimum)}

@given(st.data())
def test_gradients_vs_torch(data):
  draw = data.draw
  log: list[str] = []
  leaves: list[tuple[Tensor, torch.Tensor, str]] = []

  def leaf(shape):
    a = seeded(draw, shape, -1.5, 1.5)
    tt = torch.tensor(a.astype(np.float64), requires_grad=True)
    t = Tensor(a.copy(), requires_grad=True)
    name = f"w{len(leaves)}"
    leaves.append((t, tt, name))
    log.append(f"{name} = Tensor(<{shape}>, requires_grad=True)")
    return t, tt, name

  t, tt, _ = leaf(draw_shape(draw, max_size=4))
  cur = "w0"
  for _ in range(draw(st.integers(1, 6), label="steps")):
    s = tuple(tt.shape)
    op = draw(st.sampled_from(["unary", "binary", "reduce", "move", "move", "index", "matmul", "realize", "inplace",
                               "inplace_view"]), label="op")
    if op == "unary":
      name = draw(st.sampled_from(sorted(T_UNARY)))
      t, tt = T_UNARY[name][0](t), T_UNARY[name][1](tt)
      cur = f"{name}({cur})"
    elif op == "binary":
      name = draw(st.sampled_from(sorted(T_BINARY)))
      if draw(st.booleans()):
        o, ot, oname = leaf(broadcast_partner(draw, s))
        event("(c) binary with a second leaf")
      else:
        c = seeded(draw, broadcast_partner(draw, s))
        o, ot, oname = Tensor(c.copy()), torch.tensor(c.astype(np.float64)), "const"
      t, tt = T_BINARY[name][0](t, o), T_BINARY[name][1](tt, ot)
      cur = f"{name}({cur}, {oname})"
    elif op == "reduce":
      name = draw(st.sampled_from(["sum", "mean", "max", "min"]))
      nz = [d for d, v in enumerate(s) if v > 0] if name in ("max", "min") else list(range(len(s)))
      if not nz: continue
      axis = draw(st.lists(st.sampled_from(nz), unique=True, min_size=1, max_size=len(nz)).map(tuple))
      keep = draw(st.booleans())
      t = getattr(t, name)(axis, keepdim=keep)
      tt = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax,
            "min": torch.amin}[name](tt, dim=axis, keepdim=keep)
      cur = f"{cur}.{name}({axis}, keepdim={keep})"
      if name in ("max", "min"): event("(c) max/min reduce (ties split evenly)")
    elif op == "move":
      kind = draw(st.sampled_from(["reshape", "permute", "expand", "pad", "shrink", "flip"]))
      if kind == "reshape":
        new = factor_shape(draw, tt.numel())
        t, tt = t.reshape(new), tt.reshape(new)
        cur = f"{cur}.reshape{new}"
      elif kind == "permute":
        order = tuple(draw(st.permutations(range(len(s)))))
        t, tt = t.permute(order), tt.permute(order)
        cur = f"{cur}.permute{order}"
      elif kind == "expand":
        new = tuple(draw(st.integers(0, 3)) if v == 1 else v for v in s)
        t, tt = t.expand(new), tt.expand(new)
        cur = f"{cur}.expand{new}"
      elif kind == "pad":
        pairs = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in s)
        flat = tuple(v for p in reversed(pairs) for v in p)
        t, tt = t.pad(pairs), torch.nn.functional.pad(tt, flat) if s else tt
        cur = f"{cur}.pad{pairs}"
      elif kind == "shrink":
        arg = []
        for v in s:
          b = draw(st.integers(0, v))
          arg.append((b, draw(st.integers(b, v))))
        t, tt = t.shrink(tuple(arg)), tt[tuple(slice(b, e) for b, e in arg)]
        cur = f"{cur}.shrink{tuple(arg)}"
      else:
        if not s: continue
        axes = tuple(sorted(draw(st.sets(st.integers(0, len(s) - 1), min_size=1))))
        t, tt = t.flip(axes), tt.flip(axes)
        cur = f"{cur}.flip{axes}"
    elif op == "index":
      ti, ni, d, _, _ = draw_index(draw, s, adv=draw(st.booleans()), adv_dups=True)
      flips, tix = to_torch_index(s, ni)
      t, tt = t[ti], (tt.flip(flips) if flips else tt)[tix]
      cur = f"{cur}{d}"
      event("(c) getitem")
    elif op == "matmul":
      if not s: continue
      m = draw(st.integers(0, 4))
      o, ot, oname = leaf((s[-1], m))
      t, tt = t @ o, tt @ ot
      cur = f"({cur} @ {oname})"
      event("(c) matmul")
    elif op == "realize":
      t = t.realize()
      cur = f"{cur}.realize()"
      event("(c) realize mid-graph")
    elif op == "inplace":  # in-place writes on a non-leaf: x = y * 2; x[idx] = 0; x += 1
      ti, ni, d, _, _ = draw_index(draw, s, neg_steps=False, adv=draw(st.booleans()), torch_safe=True)
      flips, tix = to_torch_index(s, ni)
      assert not flips
      t, tt = t * 2, tt * 2
      t[ti] = 0
      tt[tix] = 0
      if draw(st.booleans()):
        t += 1
        tt += 1
        cur = f"x = {cur} * 2; x{d} = 0; x += 1; x"
      else: cur = f"x = {cur} * 2; x{d} = 0; x"
      event("(c) in-place setitem on a non-leaf")
    else:  # in-place through a view of a non-leaf: x = y * 2; v = x[idx]; v += 1 (changes x)
      ti, ni, d, _, _ = draw_index(draw, s, neg_steps=False, torch_safe=True)
      flips, tix = to_torch_index(s, ni)
      t, tt = t * 2, tt * 2
      v, vt = t[ti], tt[tix]
      v += 1
      vt += 1
      if draw(st.booleans()):
        v *= 3
        vt *= 3
        cur = f"x = {cur} * 2; v = x{d}; v += 1; v *= 3; x"
      else: cur = f"x = {cur} * 2; v = x{d}; v += 1; x"
      event("(c) in-place op through a view of a non-leaf")
    assert tuple(t.shape) == tuple(tt.shape), f"shape {t.shape} != torch {tuple(tt.shape)} after {cur}"
  shape_events(tuple(tt.shape), "(c) output: ")
  r = seeded(draw, tuple(tt.shape))
  note("; ".join(log) + f"; loss = ({cur} * R).sum(); loss.backward()")
  (t * Tensor(r.copy())).sum().backward()
  (tt * torch.tensor(r.astype(np.float64))).sum().backward()
  for lt, ltt, name in leaves:
    want = ltt.grad
    if want is None:
      assert lt.grad is None or not np.any(lt.grad.numpy()), f"{name}.grad should be None or zero"
      continue
    assert lt.grad is not None, f"{name}.grad is None; torch gives {want.numpy()}"
    check_close(lt.grad.numpy(), want.numpy(), rtol=2e-3, atol=2e-4, what=f"{name}.grad of {cur}")

# ---------------------------------------------------------------- (d) dtype promotion, casts, % and //

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"]
TORCH_DT = {d: getattr(torch, d) for d in DTYPES}
SCALARS = ["py_int", "py_float", "py_bool"]

def draw_values(draw, dt: str, shape, small=False, divisor=False) -> np.ndarray:
  rng = np.random.default_rng(draw(st.integers(0, 2**16), label="seed"))
  if dt == "bool": return rng.integers(0, 2, size=shape).astype(np.bool_)
  if dt in ("int8", "int16", "int32", "int64"):
    lim = {"int8": 127, "int16": 3000, "int32": 100000, "int64": 10**6}[dt] if not small else 20
    return rng.integers(-lim, lim + 1, size=shape).astype(dt)
  if dt == "uint8": return rng.integers(0, 256 if not small else 21, size=shape).astype(np.uint8)
  v = rng.uniform(-20, 20, size=shape)
  k = rng.integers(0, 3, size=shape)  # whole numbers and decimals (k * 0.1): the rounding cases of // and %
  v = np.where(k == 0, np.round(v), np.where(k == 1, rng.integers(-80, 81, size=shape) * 0.1, v))
  if divisor:  # small decimal divisors: a whole-number ratio that float rounding puts a hair off (2.3 // 0.1 is 22.0)
    v = np.where(rng.integers(0, 2, size=shape) == 0,
                 rng.choice([0.1, 0.2, 0.3, -0.1, -0.3, 0.5, 0.7, 1.5], size=shape), v)
  return v.astype(np.float32 if dt == "bfloat16" else dt)

def torch_tensor(v: np.ndarray, dt: str) -> torch.Tensor: return torch.from_numpy(np.array(v)).to(TORCH_DT[dt])
def teeny_tensor(v: np.ndarray, dt: str) -> Tensor:
  t = Tensor(np.array(v), dtype=dt)
  assert t.dtype.name == dt, f"Tensor(<{v.dtype}>, dtype={dt}) has dtype {t.dtype.name}"
  return t

def expected_dtype(torch_dt: torch.dtype, operand_dts: list[str]) -> str:
  name = str(torch_dt).replace("torch.", "")
  # documented difference: teeny's default int is int32 (a Python int, or bool promoted with one, gives int32)
  if name == "int64" and "int64" not in operand_dts: return "int32"
  return name

def tol_for(dt: str):
  return {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (1e-5, 1e-5),
          "float64": (1e-10, 1e-10)}.get(dt, (0, 0))

OPS_D = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
         "//": lambda a, b: a // b, "%": lambda a, b: a % b, "<": lambda a, b: a < b, "==": lambda a, b: a == b,
         "maximum": None}

@given(st.data())
def test_dtype_promotion_and_division(data):
  draw = data.draw
  kind = draw(st.sampled_from(["binop", "binop", "binop", "cast"]), label="kind")
  shape = draw(st.sampled_from([(), (1,), (5,), (2, 3), (0,), (3, 1)]), label="shape")
  if kind == "cast":
    src, dst = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    v = draw_values(draw, src, shape)
    if src in ("float16", "bfloat16", "float32", "float64") and dst in ("int8", "int16", "int32", "int64", "uint8"):
      lim = {"int8": (-128, 127), "int16": (-3e4, 3e4), "int32": (-1e6, 1e6), "int64": (-1e6, 1e6),
             "uint8": (0, 255)}[dst]
      # float -> int out of range is undefined (in C and in torch)
      with np.errstate(over="ignore"): v = np.clip(v, *lim)
    if src == "int64" and dst in ("float16", "bfloat16"): event("(d) cast int64 -> 16-bit float")
    note(f"Tensor(<{src} {v.tolist()}>).cast({dst})")
    tt = torch_tensor(v, src).to(TORCH_DT[dst])
    got = teeny_tensor(v, src).cast(dst)
    assert got.dtype.name == dst
    event(f"(d) cast {'float' if src[0] in 'fb' and src != 'bool' else src}->{dst}")
    rt, at = tol_for(dst)
    check_close(got.numpy().astype(np.float64), tt.to(torch.float64).numpy(), rtol=rt, atol=at,
                what=f"cast {src}->{dst}")
    return
  op = draw(st.sampled_from(sorted(OPS_D) + ["//", "%"]), label="op")
  a_dt = draw(st.sampled_from(DTYPES + SCALARS))
  b_dt = draw(st.sampled_from(DTYPES + (SCALARS if a_dt not in SCALARS else [])))
  if op in ("//", "%"): event(f"(d) {op} {'float' if 'float' in a_dt + b_dt else 'int'}")
  swap = draw(st.booleans())
  ops_t, ops_r, descs, tensor_dts = [], [], [], []
  small = op in ("*", "//", "%")
  for pos, dt in enumerate((a_dt, b_dt)):
    if dt == "py_int":
      v = draw(st.integers(-5, 5)) if not any(d == "uint8" for d in (a_dt, b_dt)) else draw(st.integers(0, 5))
      ops_t.append(v); ops_r.append(v); descs.append(repr(v))
    elif dt == "py_float":
      v = draw(st.sampled_from([0.5, -1.5, 2.0, 0.1, 0.2, 0.3, -0.1, 0.7, 3.0, -0.25, 7.5]))
      ops_t.append(v); ops_r.append(v); descs.append(repr(v))
    elif dt == "py_bool":
      v = draw(st.booleans())
      ops_t.append(v); ops_r.append(v); descs.append(repr(v))
    else:
      v = draw_values(draw, dt, shape, small=small, divisor=(pos == 1) != swap and op in ("//", "%", "/"))
      ops_t.append(teeny_tensor(v, dt)); ops_r.append(torch_tensor(v, dt)); tensor_dts.append(dt)
      descs.append(f"Tensor({v.tolist()}, dtype={dt})")
  if swap: ops_t.reverse(); ops_r.reverse(); descs.reverse()
  if op == "maximum" and not isinstance(ops_t[0], Tensor): ops_t.reverse(); ops_r.reverse(); descs.reverse()
  expr = f"{descs[0]} {op} {descs[1]}" if op != "maximum" else f"{descs[0]}.maximum({descs[1]})"
  note(expr)
  zero_div = None
  if op in ("//", "%") and not any(d in ("py_float", "float16", "bfloat16", "float32", "float64")
                                   for d in (a_dt, b_dt)):
    # documented: integer division by zero gives 0 (numpy's answer) where torch raises; ask torch only about the rest
    d = ops_r[1]
    zero_div = (d == 0) if isinstance(d, torch.Tensor) else torch.tensor(d == 0)
    if bool(zero_div.any()):
      event("(d) integer // or % by zero")
      ops_r[1] = torch.where(zero_div, torch.ones_like(d), d) if isinstance(d, torch.Tensor) else type(d)(1)
  try:
    with torch.no_grad():
      if op == "maximum":  # a Python scalar promotes like one (torch.maximum only takes tensors)
        rdt = torch.result_type(*ops_r)
        want = torch.maximum(*(x.to(rdt) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=rdt) for x in ops_r))
      else: want = OPS_D[op](*ops_r)
  except (RuntimeError, TypeError) as e:
    if "not implemented for" in str(e):
      event("(d) torch lacks this op/dtype: skipped")
      return
    event("(d) torch refuses: teeny must raise")
    with pytest.raises((TypeError, RuntimeError, ValueError)): teeny_op(op, ops_t).numpy()
    return
  got = teeny_op(op, ops_t)
  exp_dt = expected_dtype(want.dtype, tensor_dts)
  assert got.dtype.name == exp_dt, f"{expr}: dtype {got.dtype.name}, torch gives {want.dtype} (expected {exp_dt})"
  w = want.to(torch.float64).numpy() if want.dtype.is_floating_point else want.numpy()
  if zero_div is not None and bool(zero_div.any()): w = np.where(zero_div.numpy(), 0, w).astype(w.dtype)
  g = got.numpy()
  rt, at = tol_for(exp_dt)
  if op in ("//", "%") and exp_dt in ("float16", "bfloat16") and "py_float" in (a_dt, b_dt):
    # documented: a Python float meets a 16-bit tensor rounded to its dtype (numpy's way); torch computes with it
    # unrounded in float32, and floor() of a quotient within a rounding error of an integer differs by one
    # (Tensor(-3.699, dtype=float16) // 0.1: numpy and teeny -38, torch -37). Either answer passes; nothing else does.
    rd = TORCH_DT[exp_dt]
    alt_ops = [(x.to(rd) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=rd)).double() for x in ops_r]
    alt = OPS_D[op](*alt_ops).to(rd).double().numpy()
    try: check_close(g.astype(np.float64), w, rtol=rt, atol=at, what=expr)
    except AssertionError:
      event("(d) 16-bit // or % with a Python float: numpy's rounding of the scalar")
      check_close(g.astype(np.float64), alt, rtol=rt, atol=at, what=expr + " (scalar rounded to the tensor's dtype)")
    return
  check_close(g.astype(np.float64) if w.dtype.kind == "f" else g, w, rtol=rt, atol=at, what=expr)

def teeny_op(op, ops_t):
  return ops_t[0].maximum(ops_t[1]) if op == "maximum" else OPS_D[op](*ops_t)

# ---------------------------------------------------------------- (e) matmuls through the heuristics' register tiles

@settings(max_examples=max(settings.default.max_examples // 3, 10))   # each example compiles its own kernels
@given(st.data())
def test_matmul_tiles_vs_numpy(data):
  """Random matmuls, batched or not, with transposed operands, a prologue and an epilogue, against numpy in float64.
  The shapes reach every C tile the heuristics choose: 16x8 / 16x4 register tiles, the dot tile of x @ w.T, and B's
  rows packed (STAGE) when they lie 2 KB or more apart (N >= 512); sizes that the tiles do not divide take the
  plain loops."""
  draw = data.draw
  m = draw(st.one_of(st.integers(1, 40), st.sampled_from([16, 24, 32])), label="M")   # tiles need 2 x 8 rows or more
  k = draw(st.integers(1, 70), label="K")
  n = draw(st.one_of(st.integers(1, 48), st.integers(500, 1100), st.sampled_from([512, 520, 1024])), label="N")
  batch = draw(st.sampled_from([(), (2,), (3,)]), label="batch")
  ta, tb = draw(st.booleans(), label="A stored transposed"), draw(st.booleans(), label="B stored transposed")
  a = seeded(draw, batch + ((k, m) if ta else (m, k)), -1, 1)
  b = seeded(draw, batch + ((n, k) if tb else (k, n)), -1, 1)
  pro = draw(st.sampled_from(["none", "scale", "relu"]), label="prologue")
  epi = draw(st.sampled_from(["none", "bias", "relu", "bias+relu"]), label="epilogue")
  bias = seeded(draw, (n,), -1, 1)
  if n >= 512: event("N >= 512 (B's rows may be packed)")
  note(f"A {a.shape}{'.T' if ta else ''} @ B {b.shape}{'.T' if tb else ''}, prologue {pro}, epilogue {epi}")
  def model(x, y, bias, relu, sw):
    x = sw(x) if ta else x
    y = sw(y) if tb else y
    if pro == "scale": x = x * 2 + 1
    elif pro == "relu": x = relu(x)
    out = x @ y
    if "bias" in epi: out = out + bias
    if "relu" in epi: out = relu(out)
    return out
  got = model(Tensor(a), Tensor(b), Tensor(bias), lambda t: t.relu(), lambda t: t.transpose(-1, -2)).numpy()
  want = model(a.astype(np.float64), b.astype(np.float64), bias.astype(np.float64), lambda t: np.maximum(t, 0),
               lambda t: np.swapaxes(t, -1, -2))
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(k, 1) ** 0.5)

# ---------------------------------------------------------------- (f) conv2d backward, every input-gradient kernel

@settings(max_examples=max(settings.default.max_examples // 4, 8))   # each example compiles its own kernels
@given(st.data())
def test_conv2d_bwd_kernels_vs_torch(data):
  """Random conv2d shapes (stride, padding, dilation, groups) through the hand-written backward, every input-gradient
  kernel by name (the channels-last GEMM, the row tile, the masked gather, the atomic scatter) and the weight gradient,
  against torch autograd."""
  import teeny.kernels as K
  draw = data.draw
  groups = draw(st.sampled_from([1, 1, 2, 4]), label="groups")
  cin, cout = groups * draw(st.integers(1, 8), label="cin/g"), groups * draw(st.integers(1, 8), label="cout/g")
  k, stride = draw(st.integers(1, 4), label="k"), draw(st.integers(1, 3), label="stride")
  pad, dil = draw(st.integers(0, 2), label="pad"), draw(st.integers(1, 2), label="dilation")
  h, w = (draw(st.integers(dil * (k - 1) + 1 - min(2 * pad, dil * (k - 1)), 14), label=n) for n in ("h", "w"))
  bs = draw(st.integers(1, 3), label="batch")
  x, wt = seeded(draw, (bs, cin, h, w), -1, 1), seeded(draw, (cout, cin // groups, k, k), -1, 1)
  tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
  ty = torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad, dilation=dil, groups=groups)
  gy = seeded(draw, tuple(ty.shape), -1, 1)
  ty.backward(torch.tensor(gy))
  for variant in ("gather", "gather_cl", "gather_rows", "scatter"):
    note(f"K.conv2d_bwd(x {x.shape}, w {wt.shape}, g {gy.shape}, {stride}, {pad}, {dil}, {groups}, {variant!r})")
    gx, gw = K.conv2d_bwd(Tensor(x), Tensor(wt), Tensor(gy), stride, pad, dil, groups, variant=variant)
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)
