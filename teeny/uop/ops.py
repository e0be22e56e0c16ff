"""The one IR: UOp(op, dtype, src, arg), immutable and hash-consed,
used from the tensor graph to the rendered kernel."""
from __future__ import annotations
from dataclasses import dataclass
import functools, itertools, math, weakref
from typing import TYPE_CHECKING, Any, Callable
from teeny.dtype import DType, PtrDType, dtypes, truncate_value
from teeny.helpers import FastEnum, auto, prod

# symbolic shapes' arithmetic lives a layer up (uop/symbolic.py, which needs rewrite.py); it fills this table when
# imported (teeny.uop's __init__ imports it), so a UOp's shape methods can simplify symbolic sizes without an import
SINT_FNS: dict[str, Callable] = {}

class Ops(FastEnum):
  # tensor graph
  BUFFER = auto(); CONST = auto(); COPY = auto(); CONTIGUOUS = auto(); ASSIGN = auto(); DETACH = auto()
  CUSTOM_KERNEL = auto(); KERNEL_OUT = auto(); GATHER = auto(); ARANGE = auto()
  BIND = auto()   # BIND(DEFINE_VAR, CONST): a symbolic dimension's variable with its value (uop/symbolic.py)
  # CONTIGUOUS_BACKWARD(x): x itself in the forward graph; its gradient is made CONTIGUOUS (its own buffer)
  CONTIGUOUS_BACKWARD = auto()
  # several devices (engine/multi.py): MULTI(shard per device, arg=axis or None) is one tensor held as a buffer per
  # device, split along axis (None: each holds all of it); ALLREDUCE(partial per device, arg=(op, i)) is device i's
  # copy of the elementwise reduction (Ops.ADD/MAX/MIN) of every device's partial
  MULTI = auto(); ALLREDUCE = auto()
  RESHAPE = auto(); PERMUTE = auto(); EXPAND = auto(); PAD = auto(); SHRINK = auto(); FLIP = auto(); WINDOW = auto()
  REDUCE_AXIS = auto()
  # kernel
  SINK = auto(); DEFINE_GLOBAL = auto(); DEFINE_VAR = auto(); RANGE = auto(); END = auto(); INDEX = auto()
  LOAD = auto(); STORE = auto(); REDUCE = auto(); SPECIAL = auto(); BARRIER = auto(); CUSTOM = auto()
  ATOMIC = auto(); ATOMIC_CAS = auto(); NOOP = auto()
  DEFINE_LOCAL = auto()   # a kernel-private array, arg (id, size): C: a staging buffer (Opt STAGE); GPU: shared memory
  DEFINE_REG = auto()     # a per-thread register array, arg (id, size): tensor-core fragments and accumulators
  # WMMA(INDEX(acc), INDEX(a), INDEX(b)), arg codegen.tc.TCOp: one warp's matrix instruction, acc += a @ b on the
  # fragments the three register arrays hold at those offsets (which lane holds which element: codegen/tc.py)
  WMMA = auto()
  # TENSOR_MAP(DEFINE_GLOBAL), arg (idx, dims, strides, box, offset): a kernel parameter describing a tiled view of the
  # buffer for the tensor memory accelerator (CUDA's CUtensorMap, sm_90): dims and box innermost first, strides in bytes
  # of every dim but the innermost, offset the view's first element; the runtime encodes it from the buffer's address
  TENSOR_MAP = auto()
  # alu
  CAST = auto(); BITCAST = auto()
  NEG = auto(); RECIP = auto(); SQRT = auto(); EXP = auto(); LOG = auto(); EXP2 = auto(); LOG2 = auto()
  SIN = auto(); COS = auto(); TAN = auto(); TANH = auto(); ERF = auto()
  TRUNC = auto(); FLOOR = auto(); CEIL = auto(); RINT = auto()
  ADD = auto(); SUB = auto(); MUL = auto(); FDIV = auto(); IDIV = auto(); MOD = auto(); MAX = auto(); MIN = auto()
  POW = auto(); CMPLT = auto(); CMPLE = auto(); CMPNE = auto(); CMPEQ = auto(); AND = auto(); OR = auto(); XOR = auto()
  SHL = auto(); SHR = auto()
  WHERE = auto()
  # tensor graph (last: the members before keep their values)
  # CALL(inputs..., arg=(name, body)): a composite op (a matmul, a convolution) held as one node. `body` is the op's
  # graph over PARAM placeholders (PARAM arg=(i, shape): input i), built once per shapes and shared; the scheduler and
  # autograd inline it (inline_calls: body with each PARAM replaced by its input) before they look inside. One node to
  # build and to walk instead of the 13-17 of its graph, on the host path of every realize (the schedule cache keys on
  # it as on any node)
  CALL = auto(); PARAM = auto()
  def __repr__(self): return f"Ops.{self.name}"

class GroupOp:
  Unary = {Ops.NEG, Ops.RECIP, Ops.SQRT, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.TAN, Ops.TANH,
           Ops.ERF, Ops.TRUNC, Ops.FLOOR, Ops.CEIL, Ops.RINT}
  Binary = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPLE,
            Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR}
  Ternary = {Ops.WHERE}
  ALU = Unary | Binary | Ternary
  Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
  Movement = {Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP, Ops.WINDOW}
  Comparison = {Ops.CMPLT, Ops.CMPLE, Ops.CMPNE, Ops.CMPEQ}
  Commutative = {Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR}
  Float = {Ops.RECIP, Ops.SQRT, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.TAN, Ops.TANH, Ops.ERF,
           Ops.FDIV, Ops.POW}

class AxisType(FastEnum):
  GLOBAL = auto(); LOCAL = auto(); LOOP = auto(); REDUCE = auto(); UPCAST = auto(); UNROLL = auto(); GROUP = auto()
  def __repr__(self): return f"AxisType.{self.name}"

class MemSem(FastEnum):
  Relaxed = auto(); Acquire = auto(); Release = auto(); AcqRel = auto()

class MemScope(FastEnum):
  Cta = auto(); Gpu = auto(); Sys = auto()

@dataclass(frozen=True)
class KernelInfo:
  """A kernel's name and its Opts (codegen/opt.py): None = the heuristics choose, () = none, a list = exactly those.
  After codegen applied them, the SINK's KernelInfo holds the list applied."""
  name: str = "kernel"
  opts_to_apply: tuple | None = None
  def __post_init__(self):
    if self.opts_to_apply is not None and not isinstance(self.opts_to_apply, tuple):
      object.__setattr__(self, "opts_to_apply", tuple(self.opts_to_apply))  # a list is accepted; the SINK must hash

def _c_mod(a: int, b: int) -> int:
  """C's integer %: the dividend's sign (0 for a zero divisor, which C leaves undefined)."""
  if b == 0: return 0
  return a - b * (int(a / b) if abs(a) < 2**52 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1))

def _round_f(f: Callable, a):
  if not isinstance(a, float): return a  # an int rounds to itself
  return math.copysign(float(f(a)), a) if math.isfinite(a) else a

def _exec_alu(op: Ops, dtype: DType, vals: tuple) -> Any:
  """Evaluate an ALU op on Python values (constant folding), with C semantics for ints."""
  a = vals[0]
  b: Any = vals[1] if len(vals) > 1 else None
  fl = dtypes.is_float(dtype)
  def safe(f):
    try: return f()
    except (ValueError, OverflowError, ZeroDivisionError): return math.nan
  table: dict[Ops, Callable[[], Any]] = {
    Ops.NEG: lambda: -a if dtype != dtypes.bool else not a,
    Ops.RECIP: lambda: (1 / a if a != 0 else math.copysign(math.inf, a)),
    Ops.SQRT: lambda: safe(lambda: math.sqrt(a)), Ops.EXP: lambda: safe(lambda: math.exp(a)) if a < 709 else math.inf,
    Ops.LOG: lambda: (safe(lambda: math.log(a)) if a > 0 else (-math.inf if a == 0 else math.nan)),
    Ops.EXP2: lambda: safe(lambda: 2.0 ** a) if a < 1024 else math.inf,
    Ops.LOG2: lambda: (safe(lambda: math.log2(a)) if a > 0 else (-math.inf if a == 0 else math.nan)),
    Ops.SIN: lambda: safe(lambda: math.sin(a)), Ops.COS: lambda: safe(lambda: math.cos(a)),
    Ops.TAN: lambda: safe(lambda: math.tan(a)), Ops.TANH: lambda: math.tanh(a), Ops.ERF: lambda: math.erf(a),
    # rounding keeps inf and nan (math.floor(inf) raises: folding floor(inf) gave nan) and, as C does, the sign of zero
    Ops.TRUNC: lambda: _round_f(math.trunc, a), Ops.FLOOR: lambda: _round_f(math.floor, a),
    Ops.CEIL: lambda: _round_f(math.ceil, a), Ops.RINT: lambda: _round_f(round, a),
    Ops.ADD: lambda: a + b, Ops.SUB: lambda: a - b, Ops.MUL: lambda: a * b,
    Ops.FDIV: lambda: (a / b if b != 0
                       else (math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1, b))),
    Ops.IDIV: lambda: (int(a / b) if abs(a) < 2**52 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1))
                      if b != 0 else 0,
    # floats: C's fmod (exact; the sign of the dividend; nan for an inf dividend or a zero divisor)
    Ops.MOD: lambda: safe(lambda: math.fmod(a, b)) if fl else _c_mod(a, b),
    # nan wins a float max/min, as in the kernels (teeny_fmax)
    Ops.MAX: lambda: a if a != a else (b if b != b else max(a, b)),
    Ops.MIN: lambda: a if a != a else (b if b != b else min(a, b)), Ops.POW: lambda: safe(lambda: float(a) ** b),
    Ops.CMPLT: lambda: a < b, Ops.CMPLE: lambda: a <= b, Ops.CMPNE: lambda: a != b, Ops.CMPEQ: lambda: a == b,
    Ops.AND: lambda: a & b if not fl else math.nan, Ops.OR: lambda: a | b, Ops.XOR: lambda: a ^ b,
    Ops.SHL: lambda: a << b, Ops.SHR: lambda: a >> b, Ops.WHERE: lambda: vals[1] if a else vals[2],
  }
  ret = table[op]()
  if isinstance(ret, complex): ret = math.nan
  return truncate_value(ret, dtype)

def toposort_many(roots) -> dict:
  """Every node the roots depend on, each after its sources, in one walk shared by all roots (walking each root's
  graph on its own repeats the shared part once per root: a training step has 20 roots over one graph)."""
  out: dict = {}
  for root in roots:
    if root in out: continue
    stack = [(root, False)]
    while stack:
      node, visited = stack.pop()
      if node in out: continue
      if visited: out[node] = None
      else:
        stack.append((node, True))
        for x in reversed(node.src):
          if x not in out: stack.append((x, False))
  return out

def substitute_nodes(nodes, mapping: dict) -> dict:
  """Every node of `nodes` (sources before users, e.g. a toposort shared by several roots) -> that node with the
  nodes in `mapping` replaced, rebuilding only what changed."""
  memo: dict = {}
  for n in nodes:
    if n in mapping: memo[n] = mapping[n]
    else:
      new_src = tuple(memo[s] for s in n.src)
      memo[n] = n if all(a is b for a, b in zip(new_src, n.src)) else n.replace(src=new_src)
  return memo

def inline_calls(nodes) -> dict:
  """Every node of `nodes` (sources before users) -> the same node with each CALL below it (and itself) replaced by
  its body over its inputs; nodes without a CALL below map to themselves."""
  memo: dict = {}
  for n in nodes:
    new_src = tuple(memo[s] for s in n.src)
    if n.op is Ops.CALL:
      body = n.arg[1]
      params = {p: new_src[p.arg[0]] for p in body.toposort if p.op is Ops.PARAM}
      memo[n] = substitute_nodes(body.toposort, params)[body]
    else: memo[n] = n if all(a is b for a, b in zip(new_src, n.src)) else n.replace(src=new_src)
  return memo

# (name, key) -> body: each composite op's body, built once per key (the op's shapes, dtype and whatever else its graph
# depends on)
_call_bodies: dict[tuple, UOp] = {}

def call_of(name: str, key: tuple, srcs: tuple, build: Callable[..., UOp | None], *args) -> UOp | None:
  """A CALL `name` on srcs whose body is the graph `build(*args)` makes over srcs, with each src replaced by a PARAM:
  built (and the body kept) on the first call with this key, a dict lookup after. `key` must fix every decision
  `build` takes (shapes, dtypes, device, properties of the srcs it looks at); which srcs are the same node is added
  here. None when build has no graph; build's graph itself where it reads more of a src than the src node (a body
  must reach its inputs only through its PARAMs)."""
  key = (name, key, tuple(map(srcs.index, srcs)))
  if (body := _call_bodies.get(key)) is None:
    if (g := build(*args)) is None: return None
    params = {s: UOp(Ops.PARAM, s.dtype, (), (i, s.shape)) for i, s in enumerate(srcs)}
    body = g.substitute(params)
    n = body
    while n.op is Ops.RESHAPE: n = n.src[0]
    if n.op in _VIEW_OPS or any(u.op in (Ops.BUFFER, Ops.ASSIGN, Ops.KERNEL_OUT) for u in body.toposort): return g
    if len(_call_bodies) >= 4096: _call_bodies.clear()
    _call_bodies[key] = body
  return UOp(Ops.CALL, body.dtype, srcs, (name, body))

class _Count(int):
  """An int that can also be called (UOp.numel is a property here and a method in tinygrad's dialect)."""
  def __call__(self) -> int: return int(self)

class _cached:
  """A computed attribute stored on the node at first use (functools.cached_property takes a lock on every first
  use in Python 3.11, a cost paid for every new node)."""
  def __init__(self, fn: Callable): self.fn, self.name = fn, fn.__name__
  def __get__(self, obj, cls=None):
    if obj is None: return self
    v = obj.__dict__[self.name] = self.fn(obj)
    return v

class _cached_up(_cached):
  """A cached attribute computed from the same attribute of the node's sources, depth-safe (see bottom_up)."""
  def __init__(self, needs: Callable):
    self.needs = needs
  def __call__(self, fn: Callable):
    self.fn, self.name = fn, fn.__name__
    return self
  def __get__(self, obj, cls=None):
    if obj is None: return self
    name = self.name
    # the usual case, every source already known: no walk
    if self.needs(obj):
      for s in obj.src:
        if name not in s.__dict__: return bottom_up(obj, name, self.fn, self.needs)
    v = obj.__dict__[name] = self.fn(obj)
    return v

def bottom_up(root, name: str, fn: Callable, needs: Callable) -> Any:
  """A per-node value stored as node.__dict__[name], computed from its sources' values: every node below `root` whose
  value is missing and needed (`needs(n)`: n's value reads its sources') is computed first, sources before users, with
  an explicit stack, so a chain thousands of nodes deep never reaches Python's recursion limit."""
  if (v := root.__dict__.get(name, _MISSING)) is not _MISSING: return v
  stack = [(root, False)]
  while stack:
    n, ready = stack.pop()
    d = n.__dict__
    if name in d: continue
    if ready: d[name] = fn(n)
    else:
      stack.append((n, True))
      if needs(n): stack.extend((s, False) for s in n.src if name not in s.__dict__)
  return root.__dict__[name]
_MISSING = object()

# the ops UOp.base looks through
_VIEW_OPS = frozenset(GroupOp.Movement | {Ops.DETACH})
# the ops whose shape needs no source's (UOp.shape)
_SHAPE_OWN = frozenset((Ops.CONST, Ops.BUFFER, Ops.ARANGE, Ops.RESHAPE, Ops.EXPAND, Ops.CALL, Ops.PARAM))

def _with_shape(u: UOp, shape: tuple | None) -> UOp:
  """u, its shape attribute set to `shape` (the value the attribute would compute) where that is known and u has none
  yet: a tensor-level graph built node by node then never walks back down for its shapes."""
  if shape is not None and "shape" not in u.__dict__: u.__dict__["shape"] = shape
  return u

class Topo:
  """A node's dependencies in topological order, the node itself last (a view: cheap to make, never cached)."""
  __slots__ = ("below", "node")
  def __init__(self, below: dict, node: UOp): self.below, self.node = below, node
  def __iter__(self): return itertools.chain(self.below, (self.node,))
  def __contains__(self, x) -> bool: return x is self.node or x in self.below
  def __len__(self) -> int: return len(self.below) + 1

class WeakKeyed(weakref.ref):
  """A weak reference that knows its key in the hash-cons table (what WeakValueDictionary does, without its Python-level
  bookkeeping on every insert: node creation is the hot path of building graphs)."""
  __slots__ = ("key",)
  key: tuple

class UOpMetaClass(type):
  cache: dict[tuple, WeakKeyed] = {}   # (op, dtype, src, arg) -> the one live node with those fields
  def __call__(cls, op: Ops, dtype: DType = dtypes.void, src: tuple = (), arg: Any = None):
    key: tuple = (op, dtype, src, arg)
    # -0.0 == 0.0 (and hashes alike): without the mark a constant -0.0 became the cached 0.0 (1 / Tensor(-0.0) was +inf)
    if op is Ops.CONST and arg == 0 and type(arg) is float and math.copysign(1.0, arg) < 0:
      key = (op, dtype, src, arg, "-0")
    cache = UOpMetaClass.cache
    try: r = cache.get(key)
    except TypeError: raise TypeError(f"UOp arg must be hashable, got {arg!r}") from None
    if r is not None and (ret := r()) is not None: return ret
    # the fields go straight into the new node's slots through their setters (type.__call__ and an __init__ of four
    # object.__setattr__ calls took twice as long: a TinyJit replay makes a node for every memory version it writes)
    ret = object.__new__(cls)  # type: ignore[arg-type]  # (cls is UOp)
    _set_op(ret, op)
    _set_dtype(ret, dtype)
    _set_src(ret, src)
    _set_arg(ret, arg)
    ref = cache[key] = WeakKeyed(ret, _forget)
    ref.key = key
    return ret

def _forget(r: WeakKeyed, cache: dict = UOpMetaClass.cache):
  # (the table bound here: nodes that live until the interpreter exits, in a cache, are freed after module globals)
  # one hash of the key: taken out, and put back in the rare case that it names a newer node
  if (cur := cache.pop(r.key, None)) is not r and cur is not None: cache[r.key] = cur

class UOp(metaclass=UOpMetaClass):
  """An immutable node. Building an equal node twice returns the same object, so `is` is equality."""
  # the fields, set once by UOpMetaClass.__call__, in slots: reading one is several times cheaper than reading from the
  # instance __dict__ (which holds only the cached attributes: shape, toposort, a BUFFER's memory, ...)
  __slots__ = ("op", "dtype", "src", "arg", "__dict__", "__weakref__")
  op: Ops
  dtype: DType
  src: tuple[UOp, ...]
  arg: Any
  if TYPE_CHECKING:   # (the metaclass builds nodes without calling an __init__: this is the signature it takes)
    def __init__(self, op: Ops, dtype: DType = dtypes.void, src: tuple[UOp, ...] = (), arg: Any = None): ...
  def __setattr__(self, name: str, value: Any):
    raise AttributeError(f"UOp is immutable (shared by hash-consing); build a new node with .replace({name}=...)")
  def __reduce__(self): return UOp, (self.op, self.dtype, self.src, self.arg)
  def replace(self, **kw) -> UOp:
    return UOp(kw.get("op", self.op), kw.get("dtype", self.dtype), kw.get("src", self.src), kw.get("arg", self.arg))
  def __repr__(self) -> str:
    if self.op is Ops.DEFINE_VAR: return f"Variable({self.arg[0]!r}, {self.arg[1]}, {self.arg[2]})"
    if self.op is Ops.BIND: return f"<{self.src[0].arg[0]}={self.src[1].arg}>"
    if self.dtype is dtypes.index and self.op in GroupOp.ALU \
       and any(u.op in (Ops.DEFINE_VAR, Ops.BIND) for u in self.toposort) \
       and all(u.op in GroupOp.ALU or u.op in (Ops.CONST, Ops.DEFINE_VAR, Ops.BIND) for u in self.toposort):
      return f"<{SINT_FNS['sstr'](self)}>"
    return pretty(self)
  def __bool__(self):
    if self._is_sint(): _symbolic_unsupported(self)
    raise TypeError("a UOp has no truth value; compare with `is` or use .arg")
  def __index__(self):
    if self.dtype is dtypes.index and self._is_sint(): _symbolic_unsupported(self)
    raise TypeError(f"a {self.op} UOp is not an integer")
  def _is_sint(self) -> bool:
    """Is this a symbolic dimension (an index expression over Variables)?"""
    return any(u.op in (Ops.DEFINE_VAR, Ops.BIND) for u in self.toposort) and \
      all(u.op in GroupOp.ALU or u.op in (Ops.CONST, Ops.DEFINE_VAR, Ops.BIND) for u in self.toposort)

  # ---- graph walking
  @property
  def toposort(self) -> Topo:
    """All nodes this one depends on (itself last), each after its sources: iterate it or test membership with `in`."""
    return Topo(self._below, self)
  @_cached
  def _below(self) -> dict[UOp, None]:
    # the cache leaves the node itself out: a cached dict holding its owner would be a reference cycle, and a cycle
    # keeps a BUFFER node (and the device memory behind it) alive until the cyclic garbage collector happens to run
    return toposort_many(self.src)
  def substitute(self, mapping: dict[UOp, UOp]) -> UOp: return substitute_nodes(self.toposort, mapping)[self]

  # ---- tensor-level shape
  @_cached_up(lambda n: n.op not in _SHAPE_OWN)
  def shape(self) -> tuple[int, ...] | None:
    op, a = self.op, self.arg
    if op in GroupOp.Elementwise: return self.src[-1].shape if op is not Ops.WHERE else self.src[0].shape  # (the most)
    if op is Ops.CONST: return ()
    if op is Ops.BUFFER: return (a[2],)
    if op is Ops.DEFINE_GLOBAL: return a[1]   # a custom kernel's placeholder: its tensor's shape
    if op is Ops.ARANGE: return (a[0],)
    if op in (Ops.RESHAPE, Ops.EXPAND): return a
    if op is Ops.PERMUTE: return tuple(self.src[0].shape[i] for i in a)
    if op is Ops.PAD:
      return tuple(s + b + e if type(s) is int and type(b) is int and type(e) is int else _sadd(s, b, e)
                   for s, (b, e) in zip(self.src[0].shape, a))
    if op is Ops.SHRINK: return tuple(e - b if type(e) is int and type(b) is int else _ssub(e, b) for b, e in a)
    if op is Ops.REDUCE_AXIS: return tuple(1 if i in a[1] else s for i, s in enumerate(self.src[0].shape))
    if op is Ops.WINDOW:
      k_, s_, d_ = a
      ins = self.src[0].shape
      n = len(k_)
      return ins[:-n] + tuple((i - d * (k - 1) - 1) // st + 1 for i, k, st, d in zip(ins[-n:], k_, s_, d_)) + tuple(k_)
    if op is Ops.GATHER: return self.src[1].shape
    if op is Ops.KERNEL_OUT: return self.src[0].src[a].shape
    if op is Ops.MULTI:
      sh = self.src[0].shape
      return sh if a is None else sh[:a] + (sum(s.shape[a] for s in self.src),) + sh[a + 1:]
    if op is Ops.ALLREDUCE: return self.src[a[1]].shape
    # ASSIGN(target, value): the whole memory after writing value through the view target; target.base is the version
    # it overwrites (a BUFFER, an earlier ASSIGN, or a lazy value given a buffer first)
    if op is Ops.ASSIGN: return self.src[0].base.shape
    if op in (Ops.FLIP, Ops.CONTIGUOUS, Ops.COPY, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD): return self.src[-1].shape
    if op is Ops.CALL: return a[1].shape
    if op is Ops.PARAM: return a[1]
    if op is Ops.CUSTOM_KERNEL: return None
    return None
  @property
  def numel(self) -> int:
    n = prod(self.shape)
    return _Count(n) if type(n) is int else n   # (callable too: p.numel() in tinygrad's kernels)
  @property
  def base(self) -> UOp:
    """The node under any movement ops."""
    n = self
    while n.op in _VIEW_OPS: n = n.src[0]
    return n
  @_cached
  def device(self) -> str:
    """The device a tensor-level node lives on ('?' for kernel-level nodes)."""
    if self.op in (Ops.BUFFER, Ops.ARANGE): return self.arg[1]
    if self.op is Ops.COPY: return self.arg
    if self.op is Ops.CONST: return self.src[0].arg if self.src else "?"
    # resolve sources bottom-up without recursion, stopping at nodes that know theirs: a new node on top of a built
    # graph costs its few new sources, not a walk of the whole graph (which made building a step quadratic)
    stack = [(s, False) for s in self.src if "device" not in s.__dict__]
    while stack:
      n, ready = stack.pop()
      if "device" in n.__dict__: continue
      if ready or not n.src or n.op in (Ops.BUFFER, Ops.ARANGE, Ops.COPY, Ops.CONST):
        n.__dict__["device"] = n._device_from_srcs()
      else:
        stack.append((n, True))
        stack.extend((x, False) for x in n.src if "device" not in x.__dict__)
    return self._device_from_srcs()
  def _device_from_srcs(self) -> Any:
    if self.op is Ops.MULTI: return tuple(s.device for s in self.src)
    if self.op is Ops.ALLREDUCE: return self.src[self.arg[1]].device
    if self.op in (Ops.BUFFER, Ops.ARANGE): return self.arg[1]
    if self.op is Ops.COPY: return self.arg
    if self.op is Ops.CONST: return self.src[0].arg if self.src else "?"
    for s in self.src:
      if (d := s.__dict__.get("device", "?")) != "?": return d
    return "?"

  # ---- constructors
  @staticmethod
  def const(dtype: DType, value: Any, device: str | None = None) -> UOp:
    """A constant; at tensor level it carries its device as a DEFINE_VAR-free source-less arg."""
    v = truncate_value(value, dtype)
    return UOp(Ops.CONST, dtype, (UOp(Ops.NOOP, arg=device),) if device else (), v)
  def const_like(self, value: Any) -> UOp: return UOp.const(self.dtype, value)
  @property
  def _vdtype(self) -> DType:
    """The dtype of this node's value: an element's for an INDEX used as a value (custom kernels: `p[i] + 1` loads)."""
    return self.dtype.base if self.op is Ops.INDEX and isinstance(self.dtype, PtrDType) else self.dtype
  def alu(self, op: Ops, *src: UOp, dtype: DType | None = None) -> UOp:
    out = dtype or (dtypes.bool if op in GroupOp.Comparison
                    else (self._vdtype if op is not Ops.WHERE else src[0]._vdtype))
    # (an elementwise node's shape is its last source's, WHERE's its condition's: see the shape attribute)
    return _with_shape(UOp(op, out, (self,) + src), (self if op is Ops.WHERE or not src else src[-1])._known_shape)
  def cast(self, dtype: DType) -> UOp:
    return self if self.dtype == dtype else _with_shape(UOp(Ops.CAST, dtype, (self,)), self._known_shape)
  @property
  def _known_shape(self) -> tuple | None:
    """The shape attribute if it is already computed, else None (computes nothing)."""
    return self.__dict__.get("shape")
  def bitcast(self, dtype: DType) -> UOp: return UOp(Ops.BITCAST, dtype, (self,))
  def _up(self, x: Any) -> UOp: return x if isinstance(x, UOp) else UOp.const(self._vdtype, x)
  # index-math operators (kernel level); tensors have their own
  def __add__(self, x): return self.alu(Ops.ADD, self._up(x))
  def __radd__(self, x): return self._up(x).alu(Ops.ADD, self)
  def __sub__(self, x): return self.alu(Ops.SUB, self._up(x))
  def __rsub__(self, x): return self._up(x).alu(Ops.SUB, self)
  def __mul__(self, x): return self.alu(Ops.MUL, self._up(x))
  def __rmul__(self, x): return self._up(x).alu(Ops.MUL, self)
  def __floordiv__(self, x): return self.alu(Ops.IDIV, self._up(x))
  def __truediv__(self, x): return self.alu(Ops.FDIV, self._up(x))
  def __mod__(self, x): return self.alu(Ops.MOD, self._up(x))
  def __neg__(self): return self.alu(Ops.NEG)
  def __and__(self, x): return self.alu(Ops.AND, self._up(x))
  def __or__(self, x): return self.alu(Ops.OR, self._up(x))
  def __xor__(self, x): return self.alu(Ops.XOR, self._up(x))
  def __lt__(self, x): return self.alu(Ops.CMPLT, self._up(x))
  def __gt__(self, x): return self._up(x).alu(Ops.CMPLT, self)
  def __ge__(self, x): return self.alu(Ops.CMPLT, self._up(x)).alu(Ops.XOR, UOp.const(dtypes.bool, True))
  def __le__(self, x): return self._up(x).alu(Ops.CMPLT, self).alu(Ops.XOR, UOp.const(dtypes.bool, True))
  __hash__ = object.__hash__
  def ne(self, x): return self.alu(Ops.CMPNE, self._up(x))
  def eq(self, x): return self.alu(Ops.CMPEQ, self._up(x))
  def maximum(self, x): return self.alu(Ops.MAX, self._up(x))
  def minimum(self, x): return self.alu(Ops.MIN, self._up(x))
  def where(self, a, b):
    a = a if isinstance(a, UOp) else (UOp.const(b._vdtype, a) if isinstance(b, UOp) else UOp.const(dtypes.float32, a))
    return UOp(Ops.WHERE, a._vdtype, (self, a, a._up(b)))
  def clip(self, lo, hi): return self.maximum(lo).minimum(hi)

  # ---- tensor-level movement and reduce constructors (no-ops return self)
  def reshape(self, shape: tuple[int, ...]) -> UOp:
    shape = tuple(shape)
    if shape == self.shape: return self
    return _with_shape(UOp(Ops.RESHAPE, self.dtype, (self,), shape), shape)
  def expand(self, shape: tuple[int, ...]) -> UOp:
    if (shape := tuple(shape)) == self.shape: return self
    return _with_shape(UOp(Ops.EXPAND, self.dtype, (self,), shape), shape)
  def permute(self, order: tuple[int, ...]) -> UOp:
    if (order := tuple(order)) == tuple(range(len(order))): return self
    u = UOp(Ops.PERMUTE, self.dtype, (self,), order)
    return u if (sh := self._known_shape) is None else _with_shape(u, tuple(sh[i] for i in order))
  def pad(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    if all(b == 0 and e == 0 for b, e in arg): return self
    return self._shaped(UOp(Ops.PAD, self.dtype, (self,), tuple(arg)))
  def shrink(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    return (self if all(b == 0 and e == s for (b, e), s in zip(arg, self.shape))
            else self._shaped(UOp(Ops.SHRINK, self.dtype, (self,), tuple(arg))))
  def flip(self, axes: tuple[int, ...]) -> UOp:
    axes = tuple(a for a in axes if self.shape[a] > 1)
    return self if not axes else self._shaped(UOp(Ops.FLIP, self.dtype, (self,), tuple(sorted(axes))))
  def window(self, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...]) -> UOp:
    """Sliding windows over the last len(k) dims: (..., *in) -> (..., *out, *k), out[o] + k[j] reading in[o*s + j*d]."""
    return self._shaped(UOp(Ops.WINDOW, self.dtype, (self,), (tuple(k), tuple(s), tuple(d))))
  def _shaped(self, u: UOp) -> UOp:
    """u (built over self), its shape computed now where self's is known: one step, where asking later would walk
    down a chain of new nodes."""
    if "shape" in self.__dict__: u.shape   # (the cached attribute, computed for its side effect)
    return u
  def r(self, op: Ops, axes: tuple[int, ...]) -> UOp:
    """Reduce over `axes`, keeping them as size 1."""
    sh = self.shape
    axes = tuple(sorted(a for a in axes if sh[a] != 1))
    if not axes: return self
    # (the summed axes kept as size 1: the shape the attribute would compute, set here so nothing walks back for it)
    return _with_shape(UOp(Ops.REDUCE_AXIS, self.dtype, (self,), (op, axes)),
                       tuple(1 if i in axes else v for i, v in enumerate(sh)))
  def const_shaped(self, value: Any, dtype: DType | None = None) -> UOp:
    """A constant with this node's shape and device (a broadcast view, no memory)."""
    dt = dtype or self.dtype
    c = UOp.const(dt, value, self.device)
    return c.reshape((1,) * len(self.shape)).expand(self.shape) if self.shape else c

  # ---- kernel construction API (also what custom kernels use)
  @staticmethod
  def range(size: int | UOp, axis_id: int, axis_type: AxisType = AxisType.GLOBAL) -> UOp:
    """A loop variable over [0, size): GLOBAL (parallel: the grid, or the CPU's threads) unless axis_type says
    otherwise (LOCAL, LOOP, REDUCE, ...), as in tinygrad's kernels."""
    s = size if isinstance(size, UOp) else UOp.const(dtypes.index, size)
    return UOp(Ops.RANGE, dtypes.index, (s,), (axis_id, axis_type))
  @staticmethod
  def placeholder(slot: int, dtype: DType, shape: tuple[int, ...]) -> UOp:
    return UOp(Ops.DEFINE_GLOBAL, dtype.ptr(), (), (slot, tuple(shape)))
  def flatten(self) -> UOp:
    """A placeholder viewed as 1-d (its memory is contiguous: the same addresses)."""
    return self.reshape((prod(self.shape),))
  def index(self, *idx: UOp | int, valid: UOp | None = None, ptr: bool = True) -> UOp:
    """buf.index(i, j): address of element (i, j) of a placeholder (row-major) or of a reshape of one; one index is
    taken as linear. Used as a value (`buf[i] * 2`), an INDEX is loaded (`implicit_loads`); ptr=False loads it here."""
    if self.op is Ops.RESHAPE and self.src[0].op is Ops.DEFINE_GLOBAL:   # a placeholder's reshape: same memory
      base = self.src[0]
      lin = UOp.placeholder(base.arg[0], base.dtype.base, self.arg).index(*idx).src[1]   # row-major in the view's shape
      ix = UOp(Ops.INDEX, base.dtype, (base, lin) + ((valid,) if valid is not None else ()))
      return ix if ptr else ix.load()
    if not ptr: return self.index(*idx, valid=valid).load()
    assert self.op is Ops.DEFINE_GLOBAL, f"index() needs a buffer placeholder, not {self.op}"
    shape = self.arg[1]
    ids = [i if isinstance(i, UOp) else UOp.const(dtypes.index, i) for i in idx]
    if len(ids) == 1: lin = ids[0]
    else:
      if len(ids) != len(shape): raise IndexError(f"buffer of shape {shape} indexed with {len(ids)} indices")
      lin, stride = ids[-1], 1
      for i, s in zip(reversed(ids[:-1]), reversed(shape[1:])):
        stride *= s
        lin = lin + i * stride
    lin = lin.cast(dtypes.index) if lin.dtype != dtypes.index else lin
    return UOp(Ops.INDEX, self.dtype, (self, lin) + ((valid,) if valid is not None else ()))
  def __getitem__(self, idx) -> UOp:
    return self.index(*(idx if isinstance(idx, tuple) else (idx,)))
  def load(self, dtype: DType | None = None) -> UOp:
    return UOp(Ops.LOAD, dtype or self.dtype.base, (self,))
  def store(self, value: UOp | Any) -> UOp:
    v = value if isinstance(value, UOp) else UOp.const(self.dtype.base, value)
    return UOp(Ops.STORE, dtypes.void, (self, v))
  def end(self, *ranges: UOp) -> UOp: return UOp(Ops.END, dtypes.void, (self,) + ranges)
  def sink(self, *more: UOp, arg: Any = None) -> UOp: return UOp(Ops.SINK, dtypes.void, (self,) + more, arg)
  @staticmethod
  def variable(name: str, lo: int, hi: int) -> UOp:
    """A kernel variable in [lo, hi] (an `int` parameter of the kernel, its value given at launch): what Variable()
    makes (uop/symbolic.py), spelled as in tinygrad's kernels."""
    if not isinstance(name, str) or not name.isidentifier():
      raise ValueError(f"variable name must be a C identifier, got {name!r}")
    if not 0 <= lo <= hi: raise ValueError(f"variable {name}: needs 0 <= lo <= hi, got lo={lo}, hi={hi}")
    return UOp(Ops.DEFINE_VAR, dtypes.index, (), (name, lo, hi))
  @staticmethod
  def custom(fmt: str | dict, *src: UOp, dtype: DType = dtypes.void) -> UOp:
    """Inline code: `fmt` uses {0}, {1}.. for its sources; a dict gives one spelling per language ('C', 'CUDA', ...)."""
    return UOp(Ops.CUSTOM, dtype, tuple(src), tuple(sorted(fmt.items())) if isinstance(fmt, dict) else fmt)
  def atomic(self, kind: str, value: UOp | Any, mask: UOp | None = None, sem: MemSem = MemSem.AcqRel,
             scope: MemScope = MemScope.Gpu) -> UOp:
    """Atomic read-modify-write at this INDEX; returns the previous value. kind: add max min and or xor xchg."""
    if kind not in ATOMIC_KINDS: raise ValueError(f"unknown atomic {kind!r}; supported: {ATOMIC_KINDS}")
    v = value if isinstance(value, UOp) else UOp.const(self.dtype.base, value)
    if v.dtype != self.dtype.base: v = v.cast(self.dtype.base)
    return UOp(Ops.ATOMIC, self.dtype.base, (self, v) + ((mask,) if mask is not None else ()), (kind, sem, scope))
  def atomic_cas(self, compare: UOp | Any, value: UOp | Any, sem: MemSem = MemSem.AcqRel,
                 scope: MemScope = MemScope.Gpu) -> UOp:
    c = compare if isinstance(compare, UOp) else UOp.const(self.dtype.base, compare)
    v = value if isinstance(value, UOp) else UOp.const(self.dtype.base, value)
    return UOp(Ops.ATOMIC_CAS, self.dtype.base, (self, c, v), (sem, scope))

  # ---- symbolic shapes (uop/symbolic.py): a DEFINE_VAR bound to a value
  def bind(self, value: int) -> UOp:
    return SINT_FNS["bind"](self, value)
  def unbind(self) -> tuple[UOp, int]:
    if self.op is not Ops.BIND: raise TypeError(f"unbind() needs a bound Variable, not a {self.op} node")
    return self.src[0], self.src[1].arg
  @property
  def expr(self) -> str:
    if self.op is not Ops.DEFINE_VAR: raise TypeError(f"expr is a Variable's name; this is a {self.op} node")
    return self.arg[0]
  @property
  def val(self) -> int:
    if self.op is not Ops.BIND: raise TypeError(f"val is a bound Variable's value; this is a {self.op} node")
    return self.src[1].arg

  # ---- value bounds for symbolic index math
  @_cached_up(lambda n: _bounds_need_src(n))
  def vmin_vmax(self) -> tuple[Any, Any]:
    """(lowest, highest) value of an int or bool expression ((-inf, inf) for floats)."""
    op, s = self.op, self.src
    if self.dtype.kind not in "iub": return (-math.inf, math.inf)
    dmin, dmax = dtypes.min(self.dtype), dtypes.max(self.dtype)
    if op is Ops.CONST: return (self.arg, self.arg)
    if op is Ops.RANGE: return (0, s[0].vmin_vmax[1] - 1)
    if op is Ops.SPECIAL: return (0, self.arg[1] - 1)
    if op is Ops.DEFINE_VAR: return self.arg[1], self.arg[2]
    if op is Ops.BIND: return s[0].vmin_vmax
    if op is Ops.CAST and s[0].dtype.kind in "iub":
      lo, hi = s[0].vmin_vmax
      return (lo, hi) if dmin <= lo and hi <= dmax else (dmin, dmax)
    if op in GroupOp.ALU:
      b = [x.vmin_vmax for x in s]
      if op is Ops.ADD: return _clamp(b[0][0] + b[1][0], b[0][1] + b[1][1], dmin, dmax)
      if op is Ops.SUB: return _clamp(b[0][0] - b[1][1], b[0][1] - b[1][0], dmin, dmax)
      if op is Ops.MUL:
        c = [x * y for x in b[0] for y in b[1]]
        return _clamp(min(c), max(c), dmin, dmax)
      if op is Ops.NEG: return _clamp(-b[0][1], -b[0][0], dmin, dmax)
      if op is Ops.MAX: return (max(b[0][0], b[1][0]), max(b[0][1], b[1][1]))
      if op is Ops.MIN: return (min(b[0][0], b[1][0]), min(b[0][1], b[1][1]))
      if op is Ops.IDIV and s[1].op is Ops.CONST and s[1].arg > 0 and b[0][0] >= 0:
        return (b[0][0] // s[1].arg, b[0][1] // s[1].arg)
      if op is Ops.MOD and s[1].op is Ops.CONST and s[1].arg > 0 and b[0][0] >= 0:
        return (0, min(b[0][1], s[1].arg - 1))
      if op is Ops.WHERE: return (min(b[1][0], b[2][0]), max(b[1][1], b[2][1]))
      if op is Ops.CMPLT:
        if b[0][1] < b[1][0]: return (True, True)
        if b[0][0] >= b[1][1]: return (False, False)
        return (False, True)
      if op is Ops.CMPLE:
        if b[0][1] <= b[1][0]: return (True, True)
        if b[0][0] > b[1][1]: return (False, False)
        return (False, True)
      if op is Ops.CMPNE or op is Ops.CMPEQ:
        disjoint = b[0][1] < b[1][0] or b[1][1] < b[0][0]
        if disjoint: return (True, True) if op is Ops.CMPNE else (False, False)
        if b[0][0] == b[0][1] == b[1][0] == b[1][1]: return (False, False) if op is Ops.CMPNE else (True, True)
        return (False, True)
      if op is Ops.AND and self.dtype == dtypes.bool: return (b[0][0] and b[1][0], b[0][1] and b[1][1])
      if op is Ops.OR and self.dtype == dtypes.bool: return (b[0][0] or b[1][0], b[0][1] or b[1][1])
      if op is Ops.AND and b[0][0] >= 0 and b[1][0] >= 0: return (0, min(b[0][1], b[1][1]))
      if op in (Ops.OR, Ops.XOR) and b[0][0] >= 0 and b[1][0] >= 0:   # (no bit above the larger's highest)
        return (0, (1 << max(b[0][1], b[1][1]).bit_length()) - 1)
    if self.dtype == dtypes.bool: return (False, True)
    return (dmin, dmax)
  @property
  def vmin(self): return self.vmin_vmax[0]
  @property
  def vmax(self): return self.vmin_vmax[1]

# the slots' setters, for UOpMetaClass.__call__ (UOp.__setattr__ refuses every write)
_set_op, _set_dtype, _set_src, _set_arg = (getattr(UOp, f).__set__ for f in ("op", "dtype", "src", "arg"))

def _symbolic_unsupported(x: UOp):
  """A symbolic dimension reached code that needs a concrete int: name the tensor op the user called."""
  import os, sys, types
  f: types.FrameType | None
  pkg, op, f = os.path.dirname(os.path.dirname(os.path.abspath(__file__))), None, sys._getframe(1)
  while f is not None:
    if f.f_code.co_filename.startswith(pkg) and not f.f_code.co_name.startswith("_") and "self" in f.f_locals:
      op = f.f_code.co_name
    f = f.f_back
  names = sorted({u.arg[0] if u.op is Ops.DEFINE_VAR else u.src[0].arg[0] for u in x.toposort
                  if u.op in (Ops.DEFINE_VAR, Ops.BIND)})
  raise ValueError(f"{op or 'this operation'} does not support a symbolic dimension (Variable {', '.join(names)}); "
                   "give it concrete sizes, or shrink/slice to the symbolic size after it")

def _ssub(a, b):
  return SINT_FNS["ssimplify"](a - b if isinstance(a, UOp) else UOp.const(dtypes.index, a) - b)

def _sadd(*xs): return SINT_FNS["sadd"](*xs)

def _bounds_need_src(n: UOp) -> bool:
  return n.dtype.kind in "iub" and n.op not in (Ops.CONST, Ops.SPECIAL, Ops.DEFINE_VAR) and \
    (n.op is not Ops.CAST or n.src[0].dtype.kind in "iub")

ATOMIC_KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")

def _clamp(lo, hi, dmin, dmax):
  return (lo, hi) if dmin <= lo and hi <= dmax else (dmin, dmax)

def pretty(u: UOp, depth: int = 0, seen: dict | None = None) -> str:
  """Print a UOp graph, each shared node once, as numbered lines."""
  seen = {} if seen is None else seen
  lines = []
  for i, n in enumerate(u.toposort):
    seen[n] = i
    srcs = ",".join(str(seen[s]) for s in n.src)
    arg = f"{n.arg[0]} ({len(n.arg[1].toposort)} nodes)" if n.op is Ops.CALL else repr(n.arg)
    lines.append(f"{i:4d} {n.op.name:14s} {n.dtype!r:22s} [{srcs}] {arg}"[:200])
  return "\n".join(lines)


# ops that take an INDEX as an address; anywhere else an INDEX is a value and is loaded (implicit_loads)
_ADDRESS_USERS = {Ops.LOAD: 1, Ops.STORE: 1, Ops.ATOMIC: 1, Ops.ATOMIC_CAS: 1, Ops.CUSTOM: 99, Ops.INDEX: 1,
                  Ops.WMMA: 3}

def in_memory(u: UOp, views: tuple[Ops, ...] = (Ops.RESHAPE,)) -> bool:
  """Contiguous memory once realized: a buffer, a CONTIGUOUS or a custom kernel's output, or `views` of one (so
  contiguous() of it is itself, not a copy kernel; a custom kernel reads a detached one in place too)."""
  while u.op in views: u = u.src[0]
  return u.op in (Ops.BUFFER, Ops.CONTIGUOUS, Ops.KERNEL_OUT)

@functools.lru_cache(maxsize=1024)   # (a pure function of a hash-consed SINK: a custom kernel called every step
def implicit_loads(sink: UOp) -> UOp:   # walks its whole graph once, not once per call)
  """A custom kernel's SINK with every INDEX used as a value wrapped in a LOAD (tinygrad's dialect reads `p[i]` as the
  element), and the dtypes built from it made element dtypes."""
  memo: dict[UOp, UOp] = {}
  for n in sink.toposort:
    keep = _ADDRESS_USERS.get(n.op, 0)
    src = tuple(s if k < keep or s.op is not Ops.INDEX else s.load() for k, s in enumerate(memo[x] for x in n.src))
    dt = n._vdtype if n.op is not Ops.INDEX else n.dtype
    memo[n] = n if dt is n.dtype and all(a is b for a, b in zip(src, n.src)) else UOp(n.op, dt, src, n.arg)
  return memo[sink]

def written_slots(sink: UOp) -> set[int]: return set(_written_slots(sink))

@functools.lru_cache(maxsize=1024)
def _written_slots(sink: UOp) -> frozenset[int]:
  """The parameter slots a kernel writes: stores, atomics, and buffers handed to inline CUSTOM code (DEFINE_GLOBALs
  only: a kernel's shared memory and register arrays are numbered too, and are no parameter)."""
  out = set()
  for u in sink.toposort:
    if u.op in (Ops.STORE, Ops.ATOMIC, Ops.ATOMIC_CAS) and u.src[0].op is Ops.INDEX and \
       u.src[0].src[0].op is Ops.DEFINE_GLOBAL: out.add(u.src[0].src[0].arg[0])
    if u.op is Ops.CUSTOM:
      out |= {s.src[0].arg[0] for s in u.src if s.op is Ops.INDEX and s.src[0].op is Ops.DEFINE_GLOBAL}
  return frozenset(out)
