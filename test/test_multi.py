"""Several devices (issue 14): distinct CPU:n / NULL:n devices, sharded and replicated tensors, collectives,
data-parallel training, the vocab-sharded embedding. The devices are the default device's kind: CPU and CPU:1
(DEV=CPU), NULL and NULL:1 (DEV=NULL: scheduled and rendered, values skipped), CUDA:0 and CUDA:1 (DEV=CUDA, skipped
with fewer than two GPUs)."""
from __future__ import annotations
import os
import numpy as np
import pytest
import torch
from teeny import Tensor, Device, nn
from teeny.helpers import Context, GlobalCounters
from teeny.uop.ops import Ops
from helpers import is_null, needs_values

def _devices() -> tuple[str, str]:
  base = Device.DEFAULT.split(":")[0]
  if base == "NULL": return ("NULL", "NULL:1")
  if base == "CPU": return ("CPU", "CPU:1")
  if base == "CUDA":
    try:
      Device["CUDA:1"]
    except RuntimeError as e: pytest.skip(f"needs two CUDA devices: {e}")
    return ("CUDA", "CUDA:1")
  pytest.skip(f"multi-device tests run on CPU, NULL or CUDA, not {base}")

@pytest.fixture
def devs() -> tuple[str, str]: return _devices()

def _rng(seed=0): return np.random.default_rng(seed)

# ---- slice 1: distinct devices
def test_device_names_stay_distinct():
  assert Device.canonicalize("CPU:0") == "CPU" and Device.canonicalize("cpu:1") == "CPU:1"
  assert Device.canonicalize("NULL:1") == "NULL:1" and Device.canonicalize("NULL:0") == "NULL"
  assert Device.canonicalize("NULL:CUDA:1") == "NULL:CUDA:1" and Device.canonicalize("null:cuda") == "NULL:CUDA"
  assert Device.canonicalize(("CPU:0", "CPU:1")) == ("CPU", "CPU:1")
  assert Device["CPU:1"] is not Device["CPU"] and Device["NULL:1"] is not Device["NULL"]
  with pytest.raises(ValueError, match="twice"): Device.canonicalize(("CPU", "CPU:0"))
  with pytest.raises(RuntimeError, match="device number"): Device.canonicalize("CPU:x")

def test_to_other_device_copies(devs):
  a = Tensor([1.0, 2.0, 3.0], device=devs[0])
  b = a.to(devs[1])
  assert b.device == devs[1]
  b.realize()
  assert b.uop.base.arg[1] == devs[1]
  if is_null(): return
  np.testing.assert_equal(b.numpy(), [1, 2, 3])
  b += 1   # its own memory: the original keeps its values
  np.testing.assert_equal(a.numpy(), [1, 2, 3])
  np.testing.assert_equal(b.numpy(), [2, 3, 4])

def test_mixing_devices_raises(devs):
  a, b = Tensor([1.0, 2.0], device=devs[0]), Tensor([1.0, 2.0], device=devs[1])
  with pytest.raises(RuntimeError, match=rf"{devs[0]}.*{devs[1]}.*\.to\("): a + b
  m = Tensor([1.0, 2.0], device=devs[0]).to(devs)
  with pytest.raises(RuntimeError, match=r"different devices.*\.to\("): m + a

# ---- slice 2: multi-device tensors
@needs_values
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_shard_roundtrip(devs, axis):
  a = _rng().standard_normal((4, 6)).astype(np.float32)
  x = Tensor(a).shard(devs, axis)
  assert x.device == devs and x.shape == (4, 6) and x.sharded_axis == axis
  np.testing.assert_equal(x.numpy(), a)
  np.testing.assert_equal(x.to(devs[1]).numpy(), a)

def test_shard_uneven_raises(devs):
  with pytest.raises(ValueError, match="evenly"): Tensor.ones(3, 4).shard(devs, 0)

@needs_values
def test_elementwise_reduce_matmul(devs):
  r = _rng(1)
  a, b = r.standard_normal((8, 6)).astype(np.float32), r.standard_normal((8, 6)).astype(np.float32)
  w, bias = r.standard_normal((6, 5)).astype(np.float32), r.standard_normal((5,)).astype(np.float32)
  x, y = Tensor(a).shard(devs, 0), Tensor(b).shard(devs, 0)
  W, B = Tensor(w).to(devs), Tensor(bias).shard(devs)
  np.testing.assert_allclose((x * y + 1).numpy(), a * b + 1, rtol=1e-6)
  np.testing.assert_allclose((x * Tensor(b).to(devs)).exp().numpy(), np.exp(a * b), rtol=1e-5)   # sharded * replicated
  s1 = x.sum(1)
  assert s1.sharded_axis == 0
  np.testing.assert_allclose(s1.numpy(), a.sum(1), rtol=1e-5)
  s0 = x.sum(0)   # over the sharded axis: per-device sums + all-reduce
  assert s0.sharded_axis is None
  np.testing.assert_allclose(s0.numpy(), a.sum(0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(x.max().numpy(), a.max(), rtol=1e-6)
  np.testing.assert_allclose(x.min(0).numpy(), a.min(0), rtol=1e-6)
  np.testing.assert_allclose(x.mean().numpy(), a.mean(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose((x @ W + B).relu().numpy(), np.maximum(a @ w + bias, 0), rtol=1e-5, atol=1e-5)
  # sharded on the columns: the matmul's reduce crosses the shards
  xc = Tensor(a).shard(devs, 1)
  np.testing.assert_allclose((xc @ W).numpy(), a @ w, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(x.softmax(1).numpy(), torch.tensor(a).softmax(1).numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(x.softmax(0).numpy(), torch.tensor(a).softmax(0).numpy(), rtol=1e-5, atol=1e-6)

@needs_values
def test_movement_ops(devs):
  a = _rng(2).standard_normal((4, 6, 2)).astype(np.float32)
  x = Tensor(a).shard(devs, 0)
  t = x.permute(1, 0, 2)
  assert t.sharded_axis == 1
  np.testing.assert_equal(t.numpy(), a.transpose(1, 0, 2))
  r = x.reshape(2, 2, 12)
  assert r.sharded_axis == 0
  np.testing.assert_equal(r.numpy(), a.reshape(2, 2, 12))
  np.testing.assert_equal(x.reshape(48).numpy(), a.reshape(48))
  np.testing.assert_equal(x[:, 1:4].numpy(), a[:, 1:4])
  np.testing.assert_equal(x.flip(2).numpy(), a[:, :, ::-1])
  # crossing the shards (a slice / flip / pad of the sharded axis, a reshape that splits it): gathered, still right
  np.testing.assert_equal(x[1:3].numpy(), a[1:3])
  np.testing.assert_equal(x.flip(0).numpy(), a[::-1])
  np.testing.assert_equal(x.pad(((1, 1), None, None)).numpy(), np.pad(a, ((1, 1), (0, 0), (0, 0))))
  y = Tensor(a).shard(devs, 1)
  np.testing.assert_equal(y.reshape(24, 2).numpy(), a.reshape(24, 2))
  np.testing.assert_equal(Tensor.cat(x, x, dim=0).numpy(), np.concatenate([a, a], 0))

@needs_values
def test_one_compile_per_kernel(devs):
  x = Tensor(_rng(3).standard_normal((16, 8)).astype(np.float32)).shard(devs, 0).realize()
  c, k = GlobalCounters.compile_count, GlobalCounters.kernel_count
  out = (x * 1.2345 + 0.678).realize()   # one elementwise kernel per device, the same AST
  assert GlobalCounters.kernel_count - k == 2
  assert GlobalCounters.compile_count - c == 1
  np.testing.assert_allclose(out.numpy(), x.numpy() * 1.2345 + 0.678, rtol=1e-6)

def test_schedule_has_one_allreduce(devs):
  x = Tensor.ones(8, 4).shard(devs, 0)
  items = x.sum(0).schedule()
  ar = [it for it in items if it.kind == "allreduce"]
  assert len(ar) == 1 and ar[0].meta is Ops.ADD
  assert {b.arg[1] for b in ar[0].bufs} == set(devs)
  kernels = [it for it in items if it.kind == "kernel"]
  assert {it.bufs[0].arg[1] for it in kernels} == set(devs)

def test_debug2_shows_devices_and_collective(devs, capsys):
  x = Tensor.ones(8, 4).shard(devs, 0)
  with Context(DEBUG=2): x.sum(0).realize()
  out = capsys.readouterr().out
  assert "all-reduce" in out and devs[1] in out

@needs_values
def test_backward_through_sharded_ops(devs):
  r = _rng(4)
  a, w0 = r.standard_normal((8, 5)).astype(np.float32), r.standard_normal((5, 3)).astype(np.float32)
  w = Tensor(w0, requires_grad=True).shard_(devs)
  assert w.requires_grad and w.device == devs
  x = Tensor(a).shard(devs, 0)
  ((x @ w).relu() * 2).mean().backward()
  tw = torch.tensor(w0, requires_grad=True)
  ((torch.tensor(a) @ tw).relu() * 2).mean().backward()
  assert w.grad.device == devs and w.grad.sharded_axis is None   # replicated: all-reduced
  np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
  # through shard() of a tensor that requires grad
  v = Tensor(a, requires_grad=True)
  (v * 3).shard(devs, 0).square().sum().backward()
  np.testing.assert_allclose(v.grad.numpy(), 18 * a, rtol=1e-6)

# ---- slice 3: collectives
@needs_values
def test_host_collectives(devs):
  from teeny.engine.realize import buffer_for
  from teeny.runtime.collectives import all_reduce, all_gather, reduce_scatter, broadcast
  r = _rng(5)
  parts = [r.standard_normal(6).astype(np.float32) for _ in devs]
  ins = [buffer_for(Tensor(p, device=d).realize().uop.base) for p, d in zip(parts, devs)]
  def outs(n): return [buffer_for(Tensor.empty(n, device=d).realize().uop.base) for d in devs]
  o = outs(6)
  all_reduce(o, ins, "sum")
  for b in o: np.testing.assert_allclose(b.numpy(), parts[0] + parts[1], rtol=1e-6)
  all_reduce(o, ins, Ops.MAX)
  for b in o: np.testing.assert_equal(b.numpy(), np.maximum(parts[0], parts[1]))
  o = outs(12)
  all_gather(o, ins)
  for b in o: np.testing.assert_equal(b.numpy(), np.concatenate(parts))
  o = outs(3)
  reduce_scatter(o, ins, "sum")
  for k, b in enumerate(o): np.testing.assert_allclose(b.numpy(), (parts[0] + parts[1])[3 * k:3 * k + 3], rtol=1e-6)
  o = outs(6)
  broadcast(o, ins, root=1)
  for b in o: np.testing.assert_equal(b.numpy(), parts[1])
  with pytest.raises(ValueError, match="reduce op"): all_reduce(o, ins, "median")

def test_missing_nccl_is_a_clear_error(monkeypatch):
  from teeny.runtime import collectives
  monkeypatch.setattr(collectives, "_lib", None)
  monkeypatch.setattr(collectives, "_candidates", lambda: ["/nonexistent/libnccl.so.2"])
  with pytest.raises(RuntimeError, match="libnccl.so.2.*install NCCL"): collectives.libnccl()

def test_nccl_error_names_the_result():
  from teeny.runtime.collectives import NCCLError
  e = NCCLError("ncclAllReduce", 5, "bad")
  assert e.result == "ncclInvalidUsage" and "ncclInvalidUsage" in str(e)

# ---- slice 4: data-parallel training
class MLP:
  def __init__(self):
    self.l1, self.l2 = nn.Linear(6, 16), nn.Linear(16, 3)
  def __call__(self, x): return self.l2(self.l1(x).relu())
  def params(self): return [self.l1.weight, self.l1.bias, self.l2.weight, self.l2.bias]

def _train(opt_name: str, devices, steps: int = 3) -> tuple[list[float], list[np.ndarray]]:
  r = _rng(6)
  X, Y = r.standard_normal((8, 6)).astype(np.float32), r.integers(0, 3, 8).astype(np.int32)
  Tensor.manual_seed(0)
  m = MLP()
  init = [r.standard_normal(p.shape).astype(np.float32) * 0.3 for p in m.params()]
  for p, v in zip(m.params(), init): p.replace(Tensor(v))
  if devices is not None:
    for p in m.params(): p.shard_(devices)
  opt = nn.optim.SGD(m.params(), lr=0.1, momentum=0.9) if opt_name == "sgd" else nn.optim.Adam(m.params(), lr=0.01)
  losses = []
  with Tensor.train():
    for _ in range(steps):
      x, y = Tensor(X), Tensor(Y)
      if devices is not None: x, y = x.shard(devices, 0), y.shard(devices, 0)
      opt.zero_grad()
      loss = m(x).cross_entropy(y)
      loss.backward()
      opt.step()
      losses.append(loss.item())
  return losses, [p.numpy() for p in m.params()]

@needs_values
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_data_parallel_equals_one_device(devs, opt):
  l1, p1 = _train(opt, None)
  l2, p2 = _train(opt, devs)
  np.testing.assert_allclose(l2, l1, rtol=1e-5, atol=1e-6)
  for a, b in zip(p2, p1): np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
  assert l1[-1] < l1[0]

def test_data_parallel_step_schedules(devs):
  """On NULL too: the whole step lowers, with the gradients' all-reduces."""
  m = MLP()
  for p in m.params(): p.requires_grad = True
  for p in m.params(): p.shard_(devs)
  opt = nn.optim.SGD(m.params(), lr=0.1)
  loss = m(Tensor.ones(8, 6).shard(devs, 0)).relu().mean()
  loss.backward()
  items = Tensor.schedule(*[p.grad for p in m.params()])
  assert sum(it.kind == "allreduce" for it in items) >= 4
  opt.step()
  assert all(p.device == devs for p in m.params())

# ---- slice 5: vocab-sharded embedding
def _embedding_case(devs, dtype=np.float32):
  r = _rng(7)
  W = r.standard_normal((12, 8)).astype(dtype)
  ids = np.array([[0, 11, 3, 5, 6], [5, 5, 1, 7, 11]], dtype=np.int32)
  G = r.standard_normal((2, 5, 8)).astype(np.float32)
  e = nn.Embedding(12, 8, shard=devs)
  e.weight.replace(Tensor(W).shard(devs, 0))
  e.weight.requires_grad = True
  return W, ids, G, e

def test_sharded_embedding_kernels_compile_once(devs, monkeypatch):
  from teeny.engine import realize
  # (the caches are the process's: emptied for this test, so another test in the same worker that compiled
  # embedding_shard kernels, of these shapes or others, changes nothing here)
  monkeypatch.setattr(realize, "_program_cache", {})
  monkeypatch.setattr(realize, "_compiled_cache", {})
  _, ids, G, e = _embedding_case(devs)
  out = e(Tensor(ids))
  assert out.device == devs and out.shape == (2, 5, 8) and out.sharded_axis is None
  (out * Tensor(G).to(devs)).sum().backward()
  Tensor.realize(out, e.weight.grad)
  progs = {k: v for k, v in realize._program_cache.items() if "embedding_shard" in v[1].name}
  names = [spec.name for (prg, spec) in progs.values()]
  devices = {dev for (dev, ast, _) in progs}
  assert devices == set(devs)
  shared = [v for k, v in realize._compiled_cache.items() if "embedding_shard" in v[0].name]
  assert len(shared) == len(set(names)) == 2   # forward and backward, each compiled once for both devices
  assert all(any(v.arg[0] == "_device_num" for v in spec.vars) for _, spec, _ in [(0, s[0], 0) for s in shared])

@needs_values
def test_sharded_embedding_matches_torch(devs):
  W, ids, G, e = _embedding_case(devs)
  out = e(Tensor(ids))
  np.testing.assert_equal(out.numpy(), W[ids])
  (out * Tensor(G).to(devs)).sum().backward()
  tw = torch.tensor(W, requires_grad=True)
  (torch.nn.functional.embedding(torch.tensor(ids).long(), tw) * torch.tensor(G)).sum().backward()
  assert e.weight.grad.device == devs and e.weight.grad.sharded_axis == 0   # each device its own rows
  np.testing.assert_allclose(e.weight.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
  # the same gradients as the unsharded embedding
  e1 = nn.Embedding(12, 8)
  e1.weight.replace(Tensor(W))
  e1.weight.requires_grad = True
  (e1(Tensor(ids)) * Tensor(G)).sum().backward()
  np.testing.assert_allclose(e.weight.grad.numpy(), e1.weight.grad.numpy(), rtol=1e-5, atol=1e-6)

def test_sharded_embedding_needs_even_rows(devs):
  with pytest.raises(ValueError, match="evenly"): nn.Embedding(11, 4, shard=devs)

# ---- slice 6: several processes (teeny.dist)
@needs_values
def test_two_processes_match_one(tmp_path, devs):   # (devs: skipped without two devices of the default kind)
  """extra/dist/train_dp.py with two ranks (each half of every batch, gradients averaged through teeny.dist) gives the
  loss curve and parameters of one process with the whole batch."""
  import os, subprocess, sys
  script = os.path.join(os.path.dirname(__file__), "..", "extra", "dist", "train_dp.py")
  env = {**os.environ, "WORLD_SIZE": "2"}
  one = tmp_path / "one.npz"
  subprocess.run([sys.executable, script, "--single", "--out", str(one)], check=True, env=env, capture_output=True)
  cmd = [sys.executable, script, "--id-file", str(tmp_path / "id"), "--out", str(tmp_path / "two.npz")]
  procs = [subprocess.Popen(cmd, env={**env, "RANK": str(r), "LOCAL_RANK": str(r)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE) for r in range(2)]
  for p in procs:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()[-2000:]
  a, b = np.load(one), np.load(tmp_path / "two.npz")
  np.testing.assert_allclose(b["losses"], a["losses"], rtol=1e-5)
  for k in a.files: np.testing.assert_allclose(b[k], a[k], rtol=1e-4, atol=1e-6)

def test_dist_needs_init():
  from teeny import dist
  dist.destroy()
  with pytest.raises(RuntimeError, match=r"dist.init"): dist.all_reduce(Tensor([1.0]))
  with pytest.raises(ValueError, match="rank"): dist.init(2, 2, id_file="/tmp/x")

def _gpt_steps(devices, steps: int = 2):
  import os, sys
  sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
  import tiny_gpt
  from teeny.nn.state import get_parameters
  Tensor.manual_seed(0)
  m = tiny_gpt.TinyGPT(20, dim=32, heads=2, layers=1, context=8)
  ps = get_parameters(m)
  r = _rng(8)
  for p in ps:
    p.replace(Tensor((r.standard_normal(p.shape) * 0.1).astype(np.float32)))
    p.requires_grad = True
  if devices is not None:
    for p in ps: p.shard_(devices)
  opt = nn.optim.Adam(ps, lr=1e-2)
  X, Y = r.integers(0, 20, (4, 8)).astype(np.int32), r.integers(0, 20, (4, 8)).astype(np.int32)
  losses = []
  with Tensor.train():
    for _ in range(steps):
      x, y = Tensor(X), Tensor(Y)
      if devices is not None: x, y = x.shard(devices, 0), y.shard(devices, 0)
      loss = m(x).reshape(-1, 20).cross_entropy(y.reshape(-1))
      opt.zero_grad()
      loss.backward()
      opt.step()
      losses.append(loss.item())
  return losses, [p.numpy() for p in ps]

@needs_values
def test_data_parallel_tiny_gpt_equals_one_device(devs):
  """A transformer step (embedding kernel, attention, layer norm, cross-entropy, Adam) on two devices, the batch
  split between them, equals one device with the whole batch."""
  l1, p1 = _gpt_steps(None)
  l2, p2 = _gpt_steps(devs)
  np.testing.assert_allclose(l2, l1, rtol=1e-5)
  for a, b in zip(p2, p1): np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)

# ---- the seed's kernel (../shared/seeds: tinygrad's _embedding_bwd_kernel), in tinygrad's dialect, as given: only its
# imports and how `device`, `is_vocab_sharded`, `ndev` and `local_vocab_size` are bound differ
def _seed_kernel(device: str, is_vocab_sharded: bool, ndev: int = 1, local_vocab_size: int = 0):
  from teeny.uop.ops import UOp, Ops, KernelInfo, AxisType
  from teeny.dtype import dtypes
  def _embedding_bwd_kernel(grad_weight:UOp, grad_emb:UOp, idx:UOp) -> UOp:
    idx_flat, grad_emb_flat = idx.flatten(), grad_emb.reshape((idx.numel(), grad_weight.shape[-1]))

    embed_size = grad_weight.shape[-1]
    BLOCK_J = min(256, embed_size)
    assert embed_size % BLOCK_J == 0, f"embed_size {embed_size} must be divisible by {BLOCK_J}"

    n_j_blocks = embed_size // BLOCK_J
    i = UOp.range(grad_emb_flat.shape[0], 0)         # batch_size * sequence_length -> GLOBAL
    j_inner = UOp.range(BLOCK_J, 2, AxisType.LOOP if device in ("CPU", "NULL") else AxisType.LOCAL)  # BLOCK_J threads per workgroup  # noqa: E501
    j_outer = UOp.range(n_j_blocks, 1)
    j = j_outer * BLOCK_J + j_inner

    if is_vocab_sharded:
      # each device owns [offset, offset+local_vocab_size) of the global vocabulary
      dnum = UOp.variable("_device_num", 0, ndev-1)
      offset = dnum * local_vocab_size
      global_token_id = idx_flat[i].cast(dtypes.weakint)
      local_token_id = (global_token_id - offset).clip(0, grad_weight.shape[0]-1)
      in_range = (global_token_id >= offset) & (global_token_id < (offset + local_vocab_size))
      grad_val = in_range.where(grad_emb_flat[i, j].cast(dtypes.float), 0.0)
    else:
      local_token_id = idx_flat[i].clip(0, grad_weight.shape[0]-1).cast(dtypes.weakint)
      grad_val = grad_emb_flat[i, j].cast(dtypes.float)
    # atomic scatter-add: grad_weight[token_id, j] += grad_emb_flat[i, j]
    if device in ("CPU", "NULL"): atomic_arg = "__atomic_fetch_add({0}, {1}, __ATOMIC_RELAXED);"
    elif device == "AMD": atomic_arg = "__hip_atomic_fetch_add({0}, {1}, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);"
    else: raise NotImplementedError(f"no atomics for device {device}")
    atomic = UOp(Ops.CUSTOM, dtypes.void, (grad_weight.index(local_token_id, j, ptr=True), grad_val), arg = atomic_arg)
    return atomic.end(i, j_outer, j_inner).sink(arg=KernelInfo(name="embedding_bwd", opts_to_apply=()))
  return _embedding_bwd_kernel

def _seed_case(dim=8):
  r = _rng(9)
  ids = np.array([[0, 5, 3], [5, 9, 1]], dtype=np.int32)
  G = r.standard_normal((2, 3, dim)).astype(np.float32)
  ref = np.zeros((10, dim), np.float32)
  np.add.at(ref, ids.reshape(-1), G.reshape(-1, dim))
  return ids, G, ref

def _cpu_only():
  if Device.DEFAULT.split(":")[0] != "CPU": pytest.skip("the seed's CUSTOM atomics are C (CPU) and HIP strings")
  from teeny.runtime.ops_cpu import find_cc
  if "clang" not in os.path.basename(find_cc()):
    pytest.skip("the seed's CUSTOM code calls __atomic_fetch_add on a float*, which clang compiles and gcc rejects")

def test_gcc_rejecting_a_float_atomic_names_the_fix():
  """A user's Ops.CUSTOM float __atomic_fetch_add under gcc: the compile error says what to use instead."""
  from teeny.runtime.ops_cpu import CCompiler
  err = "<stdin>:10:9: error: operand type 'float *' is incompatible with argument 1 of '__atomic_fetch_add'"
  cc = CCompiler.__new__(CCompiler)   # (no compiler is looked for: only its error message is read)
  cc.tool = "gcc"
  msg = cc.error(err, "void k() {}")
  assert "UOp.atomic('add'" in msg and "apt-get install clang" in msg and "incompatible" in msg

def test_seed_kernel_one_device():
  _cpu_only()
  ids, G, ref = _seed_case()
  gw = Tensor.zeros(10, 8).contiguous().realize()
  out = gw.custom_kernel(Tensor(G), Tensor(ids), fxn=_seed_kernel("CPU", False))[0]
  np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)

def test_seed_kernel_vocab_sharded(devs):
  _cpu_only()
  ids, G, ref = _seed_case()
  gw = Tensor.from_shards([Tensor.zeros(5, 8, device=d).contiguous().realize() for d in devs], 0)
  g, ix = Tensor(G).to(devs).realize(), Tensor(ids).to(devs).realize()
  out = gw.custom_kernel(g, ix, fxn=_seed_kernel("CPU", True, 2, 5))[0]
  assert out.shape == (10, 8) and out.sharded_axis == 0
  c, k = GlobalCounters.compile_count, GlobalCounters.kernel_count
  out.realize()
  assert GlobalCounters.kernel_count - k == 2 and GlobalCounters.compile_count - c <= 1   # compiled once, run on both
  np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)

@pytest.mark.parametrize("sharded", [False, True])
def test_seed_kernel_renders_for_hip(sharded):
  from teeny.engine.realize import get_runner
  ids, _, _ = _seed_case()
  hd = ("NULL:HIP", "NULL:HIP:1")
  if sharded:
    gw = Tensor.from_shards([Tensor.zeros(5, 256, device=d).contiguous().realize() for d in hd], 0)
    g, ix = Tensor.ones(2, 3, 256, device=hd[0]).to(hd), Tensor(ids, device=hd[0]).to(hd)
  else: gw, g, ix = Tensor.zeros(10, 256, device=hd[0]).contiguous().realize(), Tensor.ones(2, 3, 256, device=hd[0]), \
      Tensor(ids, device=hd[0])
  out = gw.custom_kernel(g, ix, fxn=_seed_kernel("AMD", sharded, 2, 5))[0]
  items = [it for it in out.schedule() if it.kind == "custom"]
  assert len(items) == (2 if sharded else 1)
  _, spec = get_runner(items[0].bufs[0].arg[1], items[0].ast)
  assert "__hip_atomic_fetch_add(" in spec.src and "__HIP_MEMORY_SCOPE_AGENT" in spec.src
  assert ("const int _device_num" in spec.src) == sharded
  if sharded: assert sorted(it.var_vals[next(iter(it.var_vals))] for it in items) == [0, 1]
  assert spec.global_size and max(spec.global_size) >= 6 and spec.local_size and max(spec.local_size) == 256

@needs_values
def test_creation_on_several_devices(devs):
  np.testing.assert_equal(Tensor.zeros(3, 2, device=devs).numpy(), np.zeros((3, 2)))
  np.testing.assert_equal(Tensor.arange(5, device=devs).numpy(), np.arange(5))
  np.testing.assert_equal(Tensor([1, 2], device=devs).numpy(), [1, 2])
  e = Tensor.empty(4, device=devs)
  assert e.uop.op is Ops.MULTI and [s.device for s in e.uop.src] == list(devs)   # memory of its own on each
  e.assign(Tensor.ones(4, device=devs) * 2)
  np.testing.assert_equal(e.numpy(), [2, 2, 2, 2])
  r = Tensor.rand(6, device=devs).realize()   # replicated: the same counter-based numbers on every device
  assert r.uop.op is Ops.MULTI
  a, b = (Tensor(s).numpy() for s in r.uop.src)
  np.testing.assert_equal(a, b)
  assert len(set(a.tolist())) == 6

@needs_values
def test_writes_into_multi_device_tensors(devs):
  a = np.arange(32, dtype=np.float32).reshape(8, 4)
  x = Tensor(a).shard(devs, 0).realize()
  ref = a.copy()
  x[:, 1] += 100
  ref[:, 1] += 100
  x += 1
  ref += 1
  v = x[:, 2:]   # a view: writes through it reach x
  v *= 2
  ref[:, 2:] *= 2
  np.testing.assert_equal(x.numpy(), ref)
  assert x.device == devs and x.sharded_axis == 0
  x[3] = 0   # a row of one shard (the write's view crosses the shards: correct, x comes back replicated)
  ref[3] = 0
  np.testing.assert_equal(x.numpy(), ref)
  w = Tensor(a).to(devs).realize()
  w[2] = 7
  b = a.copy()
  b[2] = 7
  np.testing.assert_equal(w.numpy(), b)
  for s in w.uop.src: np.testing.assert_equal(Tensor(s).numpy(), b)   # every copy written

def test_tinyjit_refuses_multi_device_steps(devs):
  from teeny import TinyJit
  x = Tensor.ones(8, 4).shard(devs, 0).realize()
  step = TinyJit(lambda t: (t * 2).sum(0))
  with pytest.raises(NotImplementedError, match="TinyJit.*multi-device"): step(x)

@pytest.mark.parametrize("op", ["matmul", "where", "index", "cat", "gather"])
def test_mixed_devices_raise_at_the_op(op):
  """Every op that combines tensors refuses operands on different devices when it is built (as torch), naming both
  devices and .to(), not later at realize with a kernel's name."""
  a, b = Tensor([[1.0, 2.0]], device="CPU"), Tensor([[1.0, 2.0]], device="CPU:1")
  fn = {"matmul": lambda: a @ b.T, "where": lambda: Tensor([[True, False]], device="CPU").where(b, 0.0),
        "index": lambda: a[0][Tensor([0], device="CPU:1")], "cat": lambda: a.cat(b),
        "gather": lambda: a.gather(1, Tensor([[0]], device="CPU:1"))}[op]
  with pytest.raises(RuntimeError, match=r"different devices: CPU and CPU:1.*\.to\("): fn()
