#!/usr/bin/env python3
"""teeny's hand-written kernels (teeny.kernels) against the plain autograd graph (TEENY_CUSTOM_KERNELS=0) and PyTorch,
measured in one run. Not a test.

  python extra/bench/kernels.py                 # everything at the issue's sizes
  QUICK=1 python extra/bench/kernels.py         # small sizes (CI-friendly smoke run)
  ONLY=emb,conv,ce,variants                     # a subset; RUNS=n timed runs per figure (median, after one warm-up)
  EMB_V/EMB_N/EMB_D, CONV_B/CONV_C/CONV_HW, CE_N/CE_C   override the sizes; GRAPH_FULL=1 times the embedding graph at
                                                full size too (about 40 s a run on 2 cores: by default it is timed on
                                                1/32 of the tokens and scaled, its cost being linear in the tokens)

Each figure is wall time of the backward alone (forward realized first), end to end: graph building, scheduling, launch,
wait (the device is synchronized inside the timing). Ratios > 1 mean the hand-written kernel is faster. "kernel" is the
kernels' own time (GlobalCounters; on GPUs taken in a second pass where every launch waits). teeny runs on its default
device (DEV=CUDA python extra/bench/kernels.py for the H200) and PyTorch on the same kind of device.
teeny and PyTorch run in fresh processes of their own (`--worker teeny|torch`), alternating ROUNDS times (default 2),
each figure the best round (extra/bench/procs.py says why: torch's OpenMP threads, spinning after its last op, took a
core from the teeny kernels timed after it). PyTorch's gradients, written to a temporary directory, check teeny's.
--baseline COMMIT also measures teeny at that commit (a detached git worktree under /tmp), in the same rotation.
"""
from __future__ import annotations
import argparse, json, os, statistics, sys, tempfile, time
from typing import Callable

from procs import ROUNDS, alternate, baseline_tree, measure_in, teeny_root
sys.path.insert(0, str(teeny_root()))  # run from a checkout without installing (or the baseline's, as its worker)
import numpy as np
from teeny import Device, Tensor
from teeny.helpers import Context, GlobalCounters
import teeny.kernels as K
from teeny.kernels.conv import conv_shape

QUICK = bool(int(os.environ.get("QUICK", "0")))
RUNS = max(int(os.environ.get("RUNS", 3 if QUICK else 5)), 1)
ONLY = set(os.environ.get("ONLY", "emb,conv,ce,variants").split(","))
def env(k: str, full: int, quick: int) -> int: return int(os.environ.get(k, quick if QUICK else full))

DEV = Device.DEFAULT
GPU = K.is_gpu(DEV)
REFS = os.environ.get("TEENY_BENCH_REFS", "")   # where the torch worker leaves its gradients for the teeny worker
ROWS: list[list] = []   # the teeny worker's table rows: [name, hand wall s, hand kernel s, graph s, torch key, note]
LINES: list[str] = []   # and its per-kernel and variant lines
try:
  if os.environ.get("TEENY_BENCH_WORKER") == "teeny": raise ImportError("torch runs in a process of its own")
  import torch
  torch.set_num_threads(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
  TDEV = "cuda" if GPU and DEV.split(":")[0] in ("CUDA", "AMD") and torch.cuda.is_available() else "cpu"
  if GPU and TDEV == "cpu": torch = None   # no torch on this GPU: a CPU figure would not compare like with like
  if TDEV == "cuda": torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False  # float32 as teeny
except ImportError: torch = None

def sync():
  Device[DEV].synchronize()
  if torch is not None and TDEV == "cuda": torch.cuda.synchronize()

def median_time(fn: Callable[[], object], runs: int = RUNS) -> tuple[float, float]:
  """(median wall seconds, median kernel seconds) of fn over `runs` calls after one untimed warm-up."""
  fn()
  sync()
  walls, kerns = [], []
  for _ in range(runs):
    GlobalCounters.reset()
    st = time.perf_counter()
    fn()
    sync()
    walls.append(time.perf_counter() - st)
    kerns.append(GlobalCounters.time_sum_s)
  if GPU: return statistics.median(walls), kernel_time(fn, runs)
  return statistics.median(walls), statistics.median(kerns)

def kernel_time(fn: Callable[[], object], runs: int = RUNS) -> float:
  """Median kernel seconds of fn; DEBUG=2 makes every launch wait, so GPU kernels are timed too (its lines are
  hidden)."""
  import contextlib, io
  kerns = []
  with Context(DEBUG=2), contextlib.redirect_stdout(io.StringIO()):
    for _ in range(runs):
      GlobalCounters.reset()
      fn()
      kerns.append(GlobalCounters.time_sum_s)
  return statistics.median(kerns)

def per_kernel(fn: Callable[[], object], runs: int = RUNS) -> list[tuple[str, float, float, float]]:
  """(kernel name, median ms, GFLOP/s, GB/s) of each kernel fn launches, in launch order, from the DEBUG=2 lines (every
  launch waits, so each kernel's own time): where the time of a backward goes."""
  import contextlib, io, re
  pat = re.compile(r"\*\*\* \S+\s+\d+ (\S+).*?([\d.]+) ms\s+([\d.]+) GFLOP/s\s+([\d.]+) GB/s")
  seen: dict[str, list[tuple[float, float, float]]] = {}
  for _ in range(runs):
    buf = io.StringIO()
    with Context(DEBUG=2), contextlib.redirect_stdout(buf): fn()
    for i, line in enumerate(re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).splitlines()):
      if (m := pat.search(line)):
        seen.setdefault(f"{m.group(1)}#{i}", []).append(tuple(float(m.group(k)) for k in (2, 3, 4)))
  med = lambda xs: statistics.median(xs)
  return [(k.split("#")[0], med([v[0] for v in vs]), med([v[1] for v in vs]), med([v[2] for v in vs]))
          for k, vs in seen.items()]

def row(name: str, hand: tuple[float, float], graph: float | None, ref: str | None, note: str = ""):
  """One table row of the teeny worker; `ref` names the torch worker's figure for the same case."""
  ROWS.append([name, hand[0], hand[1], graph, ref, note])

def print_row(name: str, hand: float, kern: float, graph: float | None, ref: float | None, note: str):
  ms = lambda t: f"{t * 1e3:10.1f}" if t is not None else f"{'-':>10}"
  ratio = lambda a, b: f"{a / b:9.2f}x" if a is not None and b is not None else f"{'-':>10}"
  print(f"{name:34s} {ms(hand)} {ms(kern)} {ms(graph)} {ms(ref)} {ratio(graph, hand)} {ratio(ref, hand)}  {note}")

def cpu_target_note() -> str:
  """The C target the CPU kernels are compiled for (TEENY_CPU_ARCH: run once with x86-64-v3 and once native)."""
  comp = Device[DEV].compiler
  t = getattr(comp, "target", None)
  return f" (-march={t.arch}, {t.vector_bytes}-byte vectors)" if t is not None else ""

def header(tinfo: str, base: str | None):
  load = f"load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
  print(f"teeny hand-written kernels vs autograd graph vs torch · teeny on {DEV}{cpu_target_note()} · {tinfo} · "
        f"{os.cpu_count()} cpus · {load} · median of {RUNS} runs, best of {ROUNDS} rounds (fresh processes)")
  print(f"{'backward of':34s} {'hand ms':>10} {'kernel ms':>10} {'graph ms':>10} {'torch ms':>10} {'graph/hand':>10} "
        f"{'torch/hand':>10}" + (f"  (hand ms at the baseline {base})" if base else ""))

def ref_path(name: str) -> str: return os.path.join(REFS, name + ".npy")

def load_ref(name: str) -> np.ndarray | None:
  return np.load(ref_path(name)) if REFS and os.path.exists(ref_path(name)) else None

# ---- embedding: grad_weight[token[i], j] += grad_out[i, j]

def emb_inputs():
  V, N, D = env("EMB_V", 50000, 5000), env("EMB_N", 8192, 1024), env("EMB_D", 768, 256)
  rng = np.random.default_rng(0)
  return V, N, D, rng.integers(0, V, N).astype(np.int32), rng.standard_normal((N, D)).astype(np.float32)

def bench_embedding():
  V, N, D, ids_np, g_np = emb_inputs()
  ids, g = Tensor(ids_np).realize(), Tensor(g_np).realize()
  hand = median_time(lambda: K.embedding_bwd(g, ids, V).realize())
  full = os.environ.get("GRAPH_FULL", "0") == "1" or QUICK
  n_graph = N if full else max(N // 32, 1)
  W = Tensor(np.random.default_rng(5).standard_normal((V, D)).astype(np.float32)).realize()
  W.requires_grad = True
  gi, gg = Tensor(ids_np[:n_graph]).realize(), Tensor(g_np[:n_graph]).realize()
  def graph():
    W.grad = None
    with Context(TEENY_CUSTOM_KERNELS=0): W[gi].backward(gg)
    W.grad.realize()
  tg = median_time(graph, runs=1 if not QUICK else RUNS)[0] * (N / n_graph)
  got = K.embedding_bwd(g, ids, V).numpy()
  want = np.zeros((V, D), np.float32)
  np.add.at(want, ids_np, g_np)
  ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
  zero_note = f"target <= 30 ms end to end, zeroing {V}x{D} in its own kernel included"
  row(f"embedding V={V} N={N} D={D}", hand, tg, "emb", ("ok" if ok else "WRONG") + "; " + zero_note +
      ("" if full else f"; graph timed on {n_graph} tokens, scaled x{N // n_graph}"))
  # the two kernels alone: zeroing grad_weight, and the atomic scatter-add into a grad_weight zeroed beforehand
  from teeny.kernels.embedding import _embedding_bwd_kernel
  # adds into the same (pre-faulted) buffer every run: same work, no allocation in the way. Each run adds into the
  # version the run before wrote (adding into the first one again read memory already overwritten: a RuntimeError)
  gw0 = [Tensor.zeros(V, D).contiguous().realize()]
  def scatter_add():
    gw0[0] = gw0[0].custom_kernel(g, ids, fxn=lambda a, b, c: _embedding_bwd_kernel(a, b, c, GPU))[0].realize()
  t_at = median_time(scatter_add)[1]
  t_zero = median_time(lambda: Tensor.zeros(V, D).contiguous().realize())
  row("  of which: atomic scatter-add", (t_at, t_at), None, None, "kernel time")
  row("  of which: zeroing grad_weight", t_zero, None, None, "non-temporal stores on the CPU for fills over 8 MB")

def torch_embedding() -> float:
  V, N, D, ids_np, g_np = emb_inputs()
  tw = torch.zeros(V, D, requires_grad=True, device=TDEV)
  ti, tgo = torch.tensor(ids_np).long().to(TDEV), torch.tensor(g_np).to(TDEV)
  def ref():
    tw.grad = None
    torch.nn.functional.embedding(ti, tw).backward(tgo)
  return median_time(ref)[0]

# ---- conv2d: grad_x and grad_w of a 3x3 same convolution

def conv_inputs():
  B, C, HW = env("CONV_B", 32, 4), env("CONV_C", 64, 32), env("CONV_HW", 56, 28)
  rng = np.random.default_rng(1)
  x = rng.standard_normal((B, C, HW, HW)).astype(np.float32)
  w = (rng.standard_normal((C, C, 3, 3)) * 0.1).astype(np.float32)
  return B, C, HW, x, w, rng.standard_normal((B, C, HW, HW)).astype(np.float32)

def bench_conv():
  B, C, HW, x_np, w_np, g_np = conv_inputs()
  x, w, g = Tensor(x_np).realize(), Tensor(w_np).realize(), Tensor(g_np).realize()
  hand = median_time(lambda: Tensor.realize_all(*K.conv2d_bwd(x, w, g, 1, 1)))
  X, W = Tensor(x_np).realize(), Tensor(w_np).realize()
  X.requires_grad = W.requires_grad = True
  def graph():
    X.grad = W.grad = None
    with Context(TEENY_CUSTOM_KERNELS=0): y = X.conv2d(W, padding=1)
    y.realize()
    y.backward(g)
    Tensor.realize_all(X.grad, W.grad)
  tg = median_time(graph, runs=1 if not QUICK else RUNS)[0]
  check = "not checked (no torch gradients)"
  if (rgx := load_ref("conv_gx")) is not None and (rgw := load_ref("conv_gw")) is not None:
    gx, gw = K.conv2d_bwd(x, w, g, 1, 1)
    ex, ew = np.abs(gx.numpy() - rgx).max(), np.abs(gw.numpy() - rgw).max()
    # float sums of 100k products differ by their rounding order: the tolerance scales with the largest value
    # (torch on an H200 and torch on the CPU differ by 0.05 on a grad_w whose largest entry is 1582)
    ok = ex <= 1e-4 * np.abs(rgx).max() and ew <= 1e-4 * np.abs(rgw).max()
    check = "ok" if ok else f"WRONG (max error grad_x {ex:.3g}, grad_w {ew:.3g})"
  row(f"conv2d B={B} {C}->{C} {HW}x{HW} 3x3", hand, tg, "conv", check + "; graph timed once")
  s = conv_shape(x.shape, w.shape, 1, 1)
  row("  of which: grad_w", median_time(lambda: K.conv2d_bwd_weight(x, g, s).realize()), None, None)
  row("  of which: grad_x", median_time(lambda: K.conv2d_bwd_input(g, w, s).realize()), None, None)
  for name, ms, gflops, gbs in per_kernel(lambda: Tensor.realize_all(*K.conv2d_bwd(x, w, g, 1, 1))):
    LINES.append(f"    kernel {name[:60]:60s} {ms:9.2f} ms {gflops:8.2f} GFLOP/s {gbs:7.2f} GB/s")
  # the forward of the same shape (the graph's kernels: an implicit GEMM on GPUs with tiles), and both in float16 on
  # GPUs (cuDNN's float16 kernels on torch's side)
  fwd_check = "not checked (no torch output)"
  if (ry := load_ref("conv_y")) is not None:
    fwd_check = "ok" if np.abs(x.conv2d(w, padding=1).numpy() - ry).max() <= 1e-4 * np.abs(ry).max() else "WRONG"
  row("  forward, same shape", median_time(lambda: x.conv2d(w, padding=1).realize()), None, "conv_fwd", fwd_check)
  if GPU:
    from teeny import dtypes
    x16, w16, g16 = (t.cast(dtypes.float16).contiguous().realize() for t in (x, w, g))
    row("  float16 backward", median_time(lambda: Tensor.realize_all(*K.conv2d_bwd(x16, w16, g16, 1, 1))), None,
        "conv16", "")
    row("  float16 forward", median_time(lambda: x16.conv2d(w16, padding=1).realize()), None, "conv16_fwd", "")

def torch_conv() -> float:
  _, _, _, x_np, w_np, g_np = conv_inputs()
  tx, tw = torch.tensor(x_np, device=TDEV, requires_grad=True), torch.tensor(w_np, device=TDEV, requires_grad=True)
  tgo = torch.tensor(g_np, device=TDEV)
  ty = torch.nn.functional.conv2d(tx, tw, padding=1)
  t = median_time(lambda: torch.autograd.grad(ty, (tx, tw), tgo, retain_graph=True))[0]
  rgx, rgw = torch.autograd.grad(ty, (tx, tw), tgo, retain_graph=True)
  if REFS:
    np.save(ref_path("conv_gx"), rgx.cpu().numpy()), np.save(ref_path("conv_gw"), rgw.cpu().numpy())
    np.save(ref_path("conv_y"), ty.detach().cpu().numpy())
  return t

def torch_conv_more() -> dict[str, float]:
  """The forward of the bench's convolution, and on GPUs its float16 forward and backward."""
  _, _, _, x_np, w_np, g_np = conv_inputs()
  tx, tw, tgo = (torch.tensor(a, device=TDEV) for a in (x_np, w_np, g_np))
  out = {"conv_fwd": median_time(lambda: torch.nn.functional.conv2d(tx, tw, padding=1))[0]}
  if TDEV == "cuda":
    hx, hw_ = tx.half().requires_grad_(True), tw.half().requires_grad_(True)
    out["conv16_fwd"] = median_time(lambda: torch.nn.functional.conv2d(hx, hw_, padding=1))[0]
    hy = torch.nn.functional.conv2d(hx, hw_, padding=1)
    out["conv16"] = median_time(lambda: torch.autograd.grad(hy, (hx, hw_), tgo.half(), retain_graph=True))[0]
  return out

def bench_conv_variants():
  """The input gradient as a gather vs an atomic scatter, over shapes:
  where the rule in teeny/kernels/conv.py comes from."""
  shapes = [  # (batch, cin, hw, cout, k, stride, padding, groups)
    (8, 64, 56, 64, 3, 1, 1, 1), (8, 64, 56, 64, 3, 2, 1, 1), (8, 64, 56, 128, 1, 2, 0, 1),
    (8, 64, 56, 64, 3, 1, 1, 64), (8, 64, 56, 64, 3, 2, 1, 64), (8, 32, 112, 32, 1, 4, 0, 1),
    (8, 16, 56, 16, 4, 4, 0, 16), (2, 3, 224, 64, 7, 2, 3, 1)]
  if QUICK: shapes = [(b, c, hw // 2, o, k, s, p, g) for b, c, hw, o, k, s, p, g in shapes[:4]]
  LINES.append(f"\n{'input gradient, kernel ms':46s} {'gather':>9} {'scatter':>9}  faster")
  rng = np.random.default_rng(2)
  for b, c, hw, o, k, st, pd, gr in shapes:
    s = conv_shape((b, c, hw, hw), (o, c // gr, k, k), st, pd, 1, gr)
    g = Tensor(rng.standard_normal((b, o, s.oh, s.ow)).astype(np.float32)).realize()
    w = Tensor(rng.standard_normal((o, c // gr, k, k)).astype(np.float32)).realize()
    tg, ts = kernel_time(lambda: K.conv2d_bwd_input(g, w, s, "gather").realize()), \
      kernel_time(lambda: K.conv2d_bwd_input(g, w, s, "scatter").realize())
    name = f"B={b} {c}->{o} {hw}x{hw} k{k} s{st} g{gr}"
    LINES.append(f"{name:46s} {tg * 1e3:9.2f} {ts * 1e3:9.2f}  {'gather' if tg <= ts else 'scatter'} "
                 f"({max(tg, ts) / min(tg, ts):.1f}x)")

# ---- cross-entropy: dlogits = softmax * g - onehot * g

def ce_inputs():
  N, C = env("CE_N", 8192, 1024), env("CE_C", 32000, 4000)
  rng = np.random.default_rng(3)
  return N, C, rng.standard_normal((N, C)).astype(np.float32), rng.integers(0, C, N).astype(np.int32)

def bench_ce():
  N, C, lg_np, tg_np = ce_inputs()
  tg = Tensor(tg_np).realize()
  L = Tensor(lg_np).realize()
  L.requires_grad = True
  def teeny_bwd(custom: int, step: bool = False):
    """The backward alone (forward realized first), or with step=True forward and backward (the loss and the
    gradient realized together, as a training step does)."""
    def run():
      L.grad = None
      if step:
        GlobalCounters.reset()
        st = time.perf_counter()
      with Context(TEENY_CUSTOM_KERNELS=custom): loss = K.cross_entropy(L, tg)
      if not step:
        loss.realize()
        GlobalCounters.reset()
        st = time.perf_counter()
      loss.backward()
      Tensor.realize(loss, L.grad)
      sync()
      return time.perf_counter() - st, GlobalCounters.time_sum_s
    run()
    ts = [run() for _ in range(RUNS)]
    if GPU:  # kernel time where every launch waits
      import contextlib, io
      with Context(DEBUG=2), contextlib.redirect_stdout(io.StringIO()): ks = [run()[1] for _ in range(RUNS)]
      return statistics.median(t[0] for t in ts), statistics.median(ks)
    return statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts)
  hand = teeny_bwd(1)
  got = L.grad.numpy()
  tg_time = teeny_bwd(0)[0]
  want = load_ref("ce_grad")
  ok = "not checked (no torch gradients)" if want is None else \
    "ok" if np.allclose(got, want, rtol=1e-4, atol=1e-7) else "WRONG"
  row(f"cross_entropy {N}x{C}", hand, tg_time, "ce", ok)
  row("  forward + backward", teeny_bwd(1, True), teeny_bwd(0, True)[0], "ce_step", "the loss and gradient of a step")

def torch_ce(step: bool = False) -> float:
  """torch's backward alone, or with step=True forward and backward."""
  _, _, lg_np, tg_np = ce_inputs()
  tl = torch.tensor(lg_np, requires_grad=True, device=TDEV)
  tt = torch.tensor(tg_np).long().to(TDEV)
  def ref():
    tl.grad = None
    if step:
      sync()
      st = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(tl, tt)
    if not step:
      sync()
      st = time.perf_counter()
    loss.backward()
    sync()
    return time.perf_counter() - st
  ref()
  t = statistics.median(ref() for _ in range(RUNS))
  if REFS and not step: np.save(ref_path("ce_grad"), tl.grad.cpu().numpy())
  return t

def worker(who: str) -> dict:
  if who == "torch":
    if torch is None: return {"info": "torch: not available on this device", "t": {}}
    fns = {"emb": torch_embedding, "conv": torch_conv, "ce": torch_ce, "ce_step": lambda: torch_ce(True)}
    isa = f" ({torch.backends.cpu.get_cpu_capability()})" if TDEV == "cpu" else ""
    figs = {k: fn() for k, fn in fns.items() if k.split("_")[0] in ONLY}
    if "conv" in ONLY: figs.update(torch_conv_more())
    return {"info": f"torch {torch.__version__} on {TDEV}{isa}", "t": figs}
  for key, fn in (("emb", bench_embedding), ("conv", bench_conv), ("ce", bench_ce), ("variants", bench_conv_variants)):
    if key in ONLY: fn()
  return {"rows": ROWS, "lines": LINES}

def best_rows(rounds: list[dict]) -> list[list]:
  """Each row's best (shortest) figures over the rounds; the first round's notes."""
  out = [list(r) for r in rounds[0]["rows"]]
  for rs in rounds[1:]:
    for o, r in zip(out, rs["rows"]):
      for i in (1, 2, 3): o[i] = min(x for x in (o[i], r[i]) if x is not None) if r[i] is not None else o[i]
  return out

def main():
  ap = argparse.ArgumentParser(description="teeny's hand-written kernels vs its graph and PyTorch (and a baseline)")
  ap.add_argument("--baseline", metavar="COMMIT", default=None, help="also measure teeny at this commit")
  ap.add_argument("--worker", choices=["teeny", "torch"], help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.worker:
    print(json.dumps(worker(args.worker)))
    return
  btree = baseline_tree(args.baseline) if args.baseline else None
  with tempfile.TemporaryDirectory(prefix="teeny-bench-refs-") as refs:
    env = lambda who: {"TEENY_BENCH_REFS": refs, "TEENY_BENCH_WORKER": who}
    order = ["torch", "teeny"] + (["base"] if btree else [])   # torch first: its gradients check teeny's
    runs = alternate(order, lambda who: measure_in(__file__, "teeny", btree, env("teeny")) if who == "base"
                     else measure_in(__file__, who, None, env(who)))
  tt = {k: min(r["t"][k] for r in runs["torch"]) for k in runs["torch"][0]["t"]}
  rows, base = best_rows(runs["teeny"]), best_rows(runs["base"]) if btree else None
  header(runs["torch"][0]["info"], args.baseline)
  for i, (name, hand, kern, graph, ref, note) in enumerate(rows):
    bnote = ""
    if base is not None and i < len(base) and base[i][0] == name:
      bnote = f"  [baseline {base[i][1] * 1e3:.1f} ms, this/base {hand / base[i][1]:.2f}]"
    print_row(name, hand, kern, graph, tt.get(ref) if ref else None, note + bnote)
  for line in runs["teeny"][0]["lines"]: print(line)

if __name__ == "__main__":
  main()
