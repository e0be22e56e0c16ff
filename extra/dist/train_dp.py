#!/usr/bin/env python3
"""Data-parallel training with one process per device (teeny.dist): each rank trains on its part of every batch and
the gradients are averaged over the ranks before each step. Prints one line per step (the rank's own loss and the mean
loss over ranks) and, at the end, the parameters' checksum.

  # two processes on one host (CPU: the file backend; CUDA: NCCL, one GPU per rank)
  for r in 0 1; do RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r python3 extra/dist/train_dp.py --id-file /tmp/teeny_id & done
  wait
  # one process, the whole batch (the reference the two-process run must match)
  python3 extra/dist/train_dp.py --single
"""
from __future__ import annotations
import argparse, os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import numpy as np
from teeny import Tensor, nn, dist

def model_params(seed: int = 0) -> tuple[nn.Linear, nn.Linear]:
  r = np.random.default_rng(seed)
  l1, l2 = nn.Linear(6, 16), nn.Linear(16, 3)
  for p in (l1.weight, l1.bias, l2.weight, l2.bias):
    p.replace(Tensor((r.standard_normal(p.shape) * 0.3).astype(np.float32)))
  return l1, l2

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--id-file", default=None)
  ap.add_argument("--single", action="store_true")
  ap.add_argument("--steps", type=int, default=4)
  ap.add_argument("--batch", type=int, default=8)
  ap.add_argument("--out", default=None, help="save the final parameters and losses here (.npz)")
  a = ap.parse_args()
  rank, world = (0, 1) if a.single else (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
  g = None if a.single else dist.init(rank, world, id_file=a.id_file)
  dev = g.device if g else None
  l1, l2 = model_params()
  params = [l1.weight, l1.bias, l2.weight, l2.bias]
  for p in params: p.replace(p.to(dev)).realize()
  if g: dist.broadcast(params)
  opt = nn.optim.Adam(params, lr=0.01)
  data = np.random.default_rng(1)
  losses = []
  with Tensor.train():
    for step in range(a.steps):
      X = data.standard_normal((a.batch, 6)).astype(np.float32)
      Y = data.integers(0, 3, a.batch).astype(np.int32)
      part = slice(rank * a.batch // world, (rank + 1) * a.batch // world)
      loss = (l2(l1(Tensor(X[part], device=dev)).relu())).cross_entropy(Tensor(Y[part], device=dev))
      opt.zero_grad()
      loss.backward()
      if g: dist.all_reduce_grads(params)
      opt.step()
      mean = dist.all_reduce(loss.detach().reshape(1), "avg").item() if g else loss.item()
      losses.append(mean)
      print(f"rank {rank} step {step} loss {loss.item():.6f} mean {mean:.6f}", flush=True)
  if a.out and rank == 0: np.savez(a.out, losses=np.array(losses), *[p.numpy() for p in params])

if __name__ == "__main__": main()
