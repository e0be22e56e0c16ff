#!/usr/bin/env python3
"""Several GPUs (issue 14), measured side by side in one run on a machine with two CUDA devices:

1. all-reduce of a 256 MB float32 buffer across CUDA:0 and CUDA:1: teeny's NCCL binding (runtime/collectives.py)
   against PyTorch's NCCL (torch.cuda.nccl.all_reduce in this process, and torch.distributed with two processes);
   bus bandwidth = 2 (n-1)/n * bytes / time (NCCL's definition). Target: teeny >= 0.8x PyTorch.
2. a data-parallel training step of a GPT (examples/tiny_gpt.py's model, sized to keep a GPU busy) at the same
   per-GPU batch: tokens/s on 1 GPU and on 2 GPUs (the batch sharded, gradients all-reduced), and PyTorch (1 GPU, and
   DDP on 2) on the same model. Target: teeny 2 GPUs >= 1.8x teeny 1 GPU.

  python3 extra/bench/multi.py                      # everything
  python3 extra/bench/multi.py --skip-torch-dist    # no spawned torch.distributed / DDP processes
  SIZE_MB=256 STEPS=10 BATCH=16 DIM=512 LAYERS=4 CONTEXT=256 python3 extra/bench/multi.py

Without two CUDA devices (or without NCCL) it says so and exits with status 2. Keep NCCL_NVLS_ENABLE=0 (NVLink
multicast can take shared GPUs out of service); this script sets it when unset.
"""
from __future__ import annotations
import argparse, os, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("DEV", "CUDA")   # models are made on CUDA:0, then replicated
import numpy as np

SIZE_MB, STEPS, BATCH = int(os.getenv("SIZE_MB", "256")), int(os.getenv("STEPS", "10")), int(os.getenv("BATCH", "16"))
DIM, LAYERS, CONTEXT, HEADS, VOCAB = (int(os.getenv("DIM", "512")), int(os.getenv("LAYERS", "4")),
                                      int(os.getenv("CONTEXT", "256")), int(os.getenv("HEADS", "8")), 256)

def need_two_gpus() -> tuple[str, str]:
  from teeny import Device
  try:
    Device["CUDA:1"]
  except Exception as e:
    sys.exit(print(f"multi.py needs two CUDA devices (CUDA:0 and CUDA:1): {e}", file=sys.stderr) or 2)
  try:
    from teeny.runtime.collectives import libnccl, nccl_version
    libnccl()
    print(f"NCCL {nccl_version()} (teeny), NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
  except Exception as e: sys.exit(print(f"multi.py: {e}", file=sys.stderr) or 2)
  return ("CUDA", "CUDA:1")

def busbw(nbytes: int, t: float, n: int = 2) -> float: return 2 * (n - 1) / n * nbytes / t / 1e9

# ---- 1. all-reduce
def teeny_allreduce(devs, nbytes: int, iters: int = 20) -> float:
  from teeny import Tensor, Device
  from teeny.engine.realize import buffer_for
  from teeny.runtime.collectives import nccl_for
  n = nbytes // 4
  ins = [buffer_for(Tensor.ones(n, device=d).contiguous().realize().uop.base) for d in devs]
  outs = [buffer_for(Tensor.empty(n, device=d).realize().uop.base) for d in devs]
  comm = nccl_for(devs)
  times = []
  for i in range(iters + 3):
    for d in devs: Device[d].synchronize()
    st = time.perf_counter()
    comm.all_reduce(outs, ins, "sum")
    for d in devs: Device[d].synchronize()
    if i >= 3: times.append(time.perf_counter() - st)
  assert float(outs[1].numpy()[:4].sum()) == 8.0, "all-reduce gave a wrong sum"
  return statistics.median(times)

def torch_allreduce_inproc(nbytes: int, iters: int = 20) -> float | None:
  try:
    import torch, torch.cuda.nccl as tnccl
    xs = [torch.ones(nbytes // 4, device=f"cuda:{i}") for i in range(2)]
    times = []
    for i in range(iters + 3):
      for k in range(2): torch.cuda.synchronize(k)
      st = time.perf_counter()
      tnccl.all_reduce(xs)
      for k in range(2): torch.cuda.synchronize(k)
      if i >= 3: times.append(time.perf_counter() - st)
    return statistics.median(times)
  except Exception as e:
    print(f"torch.cuda.nccl all-reduce unavailable: {e}")
    return None

def _torch_dist_init(rank: int, port: str):
  """torch.distributed over NCCL for rank (of 2) in a spawned worker, on GPU rank."""
  import torch, torch.distributed as td
  os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
  torch.cuda.set_device(rank)
  td.init_process_group("nccl", rank=rank, world_size=2)
  return td

def _torch_dist_worker(rank: int, nbytes: int, iters: int, port: str, q):
  import torch
  td = _torch_dist_init(rank, port)
  x = torch.ones(nbytes // 4, device=f"cuda:{rank}")
  times = []
  for i in range(iters + 3):
    torch.cuda.synchronize()
    td.barrier()
    st = time.perf_counter()
    td.all_reduce(x)
    torch.cuda.synchronize()
    if i >= 3: times.append(time.perf_counter() - st)
  if rank == 0: q.put(statistics.median(times))
  td.destroy_process_group()

def torch_allreduce_dist(nbytes: int, iters: int = 20) -> float | None:
  try:
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    mp.spawn(_torch_dist_worker, args=(nbytes, iters, "29517", q), nprocs=2, join=True)
    return q.get(timeout=10)
  except Exception as e:
    print(f"torch.distributed all-reduce failed: {e}")
    return None

# ---- 2. data-parallel GPT step
def teeny_dp(devs, batch_per_gpu: int, steps: int) -> float:
  """tokens/s of GPT training steps (Adam) on `devs` (one device: plain tensors; several: replicated model, sharded
  batch)."""
  import tiny_gpt
  from teeny import Tensor, Device, nn
  from teeny.nn.state import get_parameters
  Tensor.manual_seed(0)
  m = tiny_gpt.TinyGPT(VOCAB, dim=DIM, heads=HEADS, layers=LAYERS, context=CONTEXT)
  ps = get_parameters(m)
  for p in ps:
    p.requires_grad = True
    if len(devs) > 1: p.shard_(devs)
    else: p.replace(p.to(devs[0])).realize()
  opt = nn.optim.Adam(ps, lr=1e-4)
  r = np.random.default_rng(0)
  def batch():
    X = r.integers(0, VOCAB, (batch_per_gpu * len(devs), CONTEXT)).astype(np.int32)
    Y = r.integers(0, VOCAB, (batch_per_gpu * len(devs), CONTEXT)).astype(np.int32)
    if len(devs) == 1: return Tensor(X, device=devs[0]), Tensor(Y, device=devs[0])
    parts = [slice(i * batch_per_gpu, (i + 1) * batch_per_gpu) for i in range(len(devs))]
    return (Tensor.from_shards([Tensor(X[s], device=d) for s, d in zip(parts, devs)], 0),
            Tensor.from_shards([Tensor(Y[s], device=d) for s, d in zip(parts, devs)], 0))
  def step():
    x, y = batch()
    loss = m(x).reshape(-1, VOCAB).cross_entropy(y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss
  with Tensor.train():
    for _ in range(3): step()   # warm up: compile, allocate
    for d in devs: Device[d].synchronize()
    st = time.perf_counter()
    for _ in range(steps): loss = step()
    for d in devs: Device[d].synchronize()
    t = (time.perf_counter() - st) / steps
    print(f"  teeny {len(devs)} GPU(s): {t*1e3:8.2f} ms/step, loss {loss.item():.4f}")
  return batch_per_gpu * len(devs) * CONTEXT / t

def torch_model():
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
  from torch_gpt import torch_gpt
  return torch_gpt(VOCAB, DIM, HEADS, LAYERS, CONTEXT)

def _torch_steps(model, dev, batch: int, steps: int) -> float:
  import torch
  opt = torch.optim.Adam(model.parameters(), lr=1e-4)
  def step():
    x = torch.randint(0, VOCAB, (batch, CONTEXT), device=dev)
    y = torch.randint(0, VOCAB, (batch, CONTEXT), device=dev)
    loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
  for _ in range(3): step()
  torch.cuda.synchronize(dev)
  st = time.perf_counter()
  for _ in range(steps): step()
  torch.cuda.synchronize(dev)
  return (time.perf_counter() - st) / steps

def torch_one(batch: int, steps: int) -> float | None:
  try:
    return batch * CONTEXT / _torch_steps(torch_model().cuda(0), "cuda:0", batch, steps)
  except Exception as e:
    print(f"torch 1 GPU failed: {e}")
    return None

def _ddp_worker(rank: int, batch: int, steps: int, port: str, q):
  import torch
  from torch.nn.parallel import DistributedDataParallel as DDP
  td = _torch_dist_init(rank, port)
  torch.manual_seed(0)
  model = DDP(torch_model().cuda(rank), device_ids=[rank])
  t = _torch_steps(model, f"cuda:{rank}", batch, steps)
  if rank == 0: q.put(2 * batch * CONTEXT / t)
  td.destroy_process_group()

def torch_ddp(batch: int, steps: int) -> float | None:
  try:
    import torch.multiprocessing as mp
    q = mp.get_context("spawn").Queue()
    mp.spawn(_ddp_worker, args=(batch, steps, "29518", q), nprocs=2, join=True)
    return q.get(timeout=10)
  except Exception as e:
    print(f"torch DDP failed: {e}")
    return None

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--skip-torch-dist", action="store_true", help="no spawned torch.distributed / DDP processes")
  ap.add_argument("--skip-train", action="store_true")
  a = ap.parse_args()
  devs = need_two_gpus()
  nbytes = SIZE_MB << 20
  rows = []
  t_teeny = teeny_allreduce(devs, nbytes)
  t_tin = torch_allreduce_inproc(nbytes)
  t_tdist = None if a.skip_torch_dist else torch_allreduce_dist(nbytes)
  print(f"\nall-reduce of {SIZE_MB} MB float32 over 2 GPUs (bus bandwidth, GB/s):")
  ref = [t for t in (t_tdist, t_tin) if t]
  for name, t in (("teeny (NCCL via ctypes)", t_teeny), ("torch.cuda.nccl", t_tin), ("torch.distributed", t_tdist)):
    if t: print(f"  {name:26s} {t*1e3:8.3f} ms {busbw(nbytes, t):8.1f} GB/s")
  if ref:
    ratio = min(ref) / t_teeny
    rows.append(("all-reduce busbw teeny / best torch", ratio, 0.8))
  if not a.skip_train:
    print(f"\nGPT training step (dim {DIM}, {LAYERS} layers, context {CONTEXT}, batch {BATCH} per GPU), tokens/s:")
    one, two = teeny_dp(devs[:1], BATCH, STEPS), teeny_dp(devs, BATCH, STEPS)
    t1 = torch_one(BATCH, STEPS)
    t2 = None if a.skip_torch_dist else torch_ddp(BATCH, STEPS)
    for name, v in (("teeny 1 GPU", one), ("teeny 2 GPUs", two), ("torch 1 GPU", t1), ("torch DDP 2 GPUs", t2)):
      if v: print(f"  {name:26s} {v:12.0f} tokens/s")
    rows.append(("teeny 2 GPUs / 1 GPU tokens/s", two / one, 1.8))
    if t2: rows.append(("teeny 2 GPUs / torch DDP tokens/s", two / t2, None))
  print("\nratio                                        value   target")
  for name, v, target in rows:
    mark = "" if target is None else ("  ok" if v >= target else "  BELOW")
    print(f"  {name:40s} {v:7.2f}   {'' if target is None else f'>= {target}'}{mark}")

if __name__ == "__main__": main()
