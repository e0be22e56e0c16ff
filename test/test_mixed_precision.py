"""examples/tiny_gpt.py in bfloat16 mixed precision (DTYPE=bfloat16, as torch.autocast): its matmuls run in bfloat16,
forward and backward, as kernels that load bfloat16 and sum in float32 (the pattern CUDA's tensor cores take); its
gradients reach the float32 weights; its loss follows float32 training from the same initial weights.

Measured on the CPU (1 layer, dim 32, context 16, batch 8, 10 AdamW steps at lr 1e-2 on the example's text, seed 0):
the first step's gradients differ from float32's by 0.07-0.6% (relative L2 per parameter; the matmul weights 0.1% and
more); the per-step losses by at most 0.08%, while the loss falls by ~38% over those steps. The example at full size:
float32 needs 44 steps to cut its loss (mean of the last 10 steps) by 40%, and bfloat16's is then 0.1% away. The bounds
below (gradients within 3%, losses within 1%) leave a margin of 5-10x and still fail a run whose gradients miss a weight
or whose training drifts away; the lower bound on the matmul weights' gradient error fails a "bfloat16" run that
computes in float32."""
import os, sys
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_parameters, get_state_dict
from teeny.uop.ops import Ops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFG = dict(dim=32, heads=2, layers=1, context=16)
BATCH, STEPS, LR = 8, 10, 1e-2

def _import(name: str, sub: str):
  sys.path.insert(0, os.path.join(ROOT, *sub.split("/")))
  try: return __import__(name)
  finally: sys.path.remove(os.path.join(ROOT, *sub.split("/")))

def _step_schedule(dtype: str):
  """The kernels of one training step (the loss and every parameter's gradient), scheduled: nothing runs."""
  import teeny.kernels as K
  G = _import("tiny_gpt", "examples")
  Tensor.manual_seed(0)
  model = G.TinyGPT(40, dtype=dtype, **CFG)
  x = Tensor(np.arange(BATCH * CFG["context"], dtype=np.int32).reshape(BATCH, -1) % 40)
  with Tensor.train():
    loss = K.cross_entropy(model(x).reshape(-1, 40), x.reshape(-1))
    loss.backward()
  params = get_parameters(model)
  assert all(p.dtype == dtypes.float32 and p.grad is not None and p.grad.dtype == dtypes.float32 for p in params)
  return Tensor.schedule(loss, *[p.grad for p in params])

def _bf16_matmuls(sched) -> int:
  """How many kernels are matmuls the tensor-core path takes with bfloat16 inputs (one float32 sum of products of two
  bfloat16 loads), as the heuristics see them for CUDA."""
  from teeny.codegen.tc import tc_match
  from teeny.codegen.kernel import normalized
  from teeny.codegen.render.cuda import CUDARenderer
  r, n = CUDARenderer(), 0
  for si in sched:
    if si.kind != "kernel" or not any(u.op is Ops.REDUCE for u in si.ast.toposort): continue
    mt = tc_match(normalized(si.ast, r))
    n += not isinstance(mt, str) and mt.dtype_in == dtypes.bfloat16
  return n

def _loads_bf16(sched) -> bool:
  return any(u.op is Ops.LOAD and u.dtype == dtypes.bfloat16 for si in sched if si.kind == "kernel"
             for u in si.ast.toposort)

def test_bf16_matmuls_load_bfloat16_forward_and_backward():
  """One layer: qkv, proj, fc, out, the two attention products and the head are 7 matmuls; the backward takes two
  matmuls for each (both operands need a gradient), so 21 kernels load two bfloat16 operands and sum in float32.
  float32 keeps every kernel float32."""
  assert _bf16_matmuls(bf := _step_schedule("bfloat16")) == 21
  assert _bf16_matmuls(f32 := _step_schedule("float32")) == 0 and not _loads_bf16(f32) and _loads_bf16(bf)

def test_dtype_is_checked():
  G = _import("tiny_gpt", "examples")
  with pytest.raises(ValueError, match="float32, bfloat16"): G.TinyGPT(40, dtype="float16", **CFG)
  assert G.TinyGPT(40, dtype=dtypes.bfloat16, **CFG).dtype == dtypes.bfloat16

@needs_values
def test_bf16_training_follows_float32():
  """teeny in bfloat16 mixed precision against the same model in float32 (PyTorch, extra/bench/torch_gpt.py: no
  second teeny model to compile), from the same initial weights on the same batches of the example's text."""
  torch = pytest.importorskip("torch")
  import teeny.kernels as K
  G, torch_gpt = _import("tiny_gpt", "examples"), _import("torch_gpt", "extra/bench").torch_gpt
  data, itos, _ = G.load_data()
  V, C = len(itos), CFG["context"]
  Tensor.manual_seed(0)
  model = G.TinyGPT(V, dtype="bfloat16", **CFG)
  ref = torch_gpt(V, CFG["dim"], CFG["heads"], CFG["layers"], C)
  ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in get_state_dict(model).items()})
  params = get_parameters(model)
  opt = nn.optim.AdamW(params, lr=LR, weight_decay=0.01)
  ropt = torch.optim.AdamW(ref.parameters(), lr=LR, weight_decay=0.01)
  rng = np.random.default_rng(0)
  losses, ref_losses = [], []
  for i in range(STEPS):
    starts = rng.integers(0, len(data) - C - 1, BATCH)
    xb, yb = np.stack([data[s:s + C] for s in starts]), np.stack([data[s + 1:s + C + 1] for s in starts])
    with Tensor.train():
      opt.zero_grad()
      loss = K.cross_entropy(model(Tensor(xb)).reshape(-1, V), Tensor(yb.reshape(-1)))
      loss.backward()
      if i == 0: Tensor.realize(loss, *[p.grad for p in params])
      Tensor.realize(loss, *opt.schedule_step())
    ropt.zero_grad()
    rloss = torch.nn.functional.cross_entropy(ref(torch.tensor(xb, dtype=torch.long)).reshape(-1, V),
                                              torch.tensor(yb.reshape(-1), dtype=torch.long))
    rloss.backward()
    if i == 0:
      # (read before the update: the gradients the first step computed, from the same weights)
      rgrads = {k: p.grad.numpy().copy() for k, p in ref.named_parameters()}
      grads = {k: v.grad.numpy() for k, v in get_state_dict(model).items()}
    ropt.step()
    losses.append(loss.item())
    ref_losses.append(rloss.item())
  errs = {k: np.linalg.norm(grads[k] - rgrads[k]) / np.linalg.norm(rgrads[k]) for k in rgrads}
  assert max(errs.values()) < 0.03, errs
  # bfloat16 is in effect: the matmul weights' gradients (bfloat16 products) differ from float32's far beyond float32
  # rounding (teeny and torch in float32 agree to ~1e-6)
  mm_weights = [k for k in errs if k.endswith("weight") and "ln" not in k]
  assert len(mm_weights) == 5 and min(errs[k] for k in mm_weights) > 2e-4, errs
  losses_a, ref_a = np.array(losses), np.array(ref_losses)
  assert ref_a[-3:].mean() < 0.8 * ref_a[0], ref_losses        # it trains: the bound below is small next to the drop
  np.testing.assert_allclose(losses_a, ref_a, rtol=0.01)

# ---- the two core pieces the bfloat16 path uses
def test_contiguous_backward_is_identity_with_a_stored_gradient():
  """Values and gradients as without it (against numpy); in backward() the gradient reaching it is a CONTIGUOUS
  node (its own buffer), which it is not without."""
  xs = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
  def grad_of(cb: bool):
    x = Tensor(xs, requires_grad=True)
    h = x.contiguous_backward() if cb else x
    y = (h * 3).exp().sum()
    y.backward()
    return h, x.grad
  h, g = grad_of(True)
  assert any(u.op is Ops.CONTIGUOUS for u in g.uop.toposort)
  assert not any(u.op is Ops.CONTIGUOUS for u in grad_of(False)[1].uop.toposort)
  if Tensor(1).device.startswith("NULL"): return
  np.testing.assert_allclose(h.numpy(), xs)
  np.testing.assert_allclose(g.numpy(), 3 * np.exp(3 * xs), rtol=1e-6)

def test_widen_then_narrow_cast_folds_and_narrow_then_widen_does_not():
  """symbolic: CAST(CAST(x: bfloat16 -> float32) -> bfloat16) is x (exact: the backward matmuls of a 16-bit sum load
  their operands through it); CAST(CAST(x: float32 -> bfloat16) -> float32) rounds, so it stays."""
  from teeny.uop.ops import UOp
  from teeny.uop.rewrite import graph_rewrite
  from teeny.uop.symbolic import symbolic
  leaf = lambda dt: UOp(Ops.NOOP, dt, (), "x")   # a value of that dtype, nothing known about it
  for lo, hi in ((dtypes.bfloat16, dtypes.float32), (dtypes.float16, dtypes.float32), (dtypes.float32, dtypes.float64)):
    assert graph_rewrite(leaf(lo).cast(hi).cast(lo), symbolic) is leaf(lo)
    kept = graph_rewrite(leaf(hi).cast(lo).cast(hi), symbolic)          # narrowing first rounds: kept
    assert kept.op is Ops.CAST and kept.src[0].op is Ops.CAST and kept.src[0].src[0] is leaf(hi)
  for a, b in ((dtypes.float16, dtypes.bfloat16), (dtypes.bfloat16, dtypes.float16)):   # same size: not exact
    kept = graph_rewrite(leaf(a).cast(b).cast(a), symbolic)
    assert kept.op is Ops.CAST and kept.src[0].op is Ops.CAST
