#!/usr/bin/env python3
"""A character-level GPT trained on the CPU on Python's own standard library source, then sampled.

  python examples/tiny_gpt.py        # STEPS=n training steps (default 150), SEED=n, SAMPLE=n characters to generate

The model: token embedding (teeny.kernels.embedding: its backward is the atomic scatter-add kernel), learned positions,
pre-norm blocks of causal self-attention (Tensor.scaled_dot_product_attention) and a GELU MLP, LayerNorm, a linear head;
the loss is teeny.kernels.cross_entropy (its backward one kernel: a masked row store plus one atomic at the target).

Sampling feeds a fixed-length window (the last CONTEXT characters, left-padded at the start), so every position reuses
the same compiled kernels; temperature and top-k are applied in the graph (top-k keeps the logits that fewer than k
others beat: a fixed-shape compare-and-count, no sort and no new kernel per position).
"""
from __future__ import annotations
import math, os, sys, sysconfig, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np
from tqdm import trange
from teeny import Tensor, nn
import teeny.kernels as K
from teeny.nn.state import get_parameters

CONTEXT, DIM, HEADS, LAYERS, BATCH, LR = 64, 64, 4, 2, 16, float(os.getenv("LR", "1e-2"))
STDLIB_FILES = ("textwrap.py", "string.py", "functools.py", "bisect.py", "heapq.py", "fnmatch.py", "shlex.py", "calendar.py",
                "glob.py", "colorsys.py", "difflib.py", "dataclasses.py", "argparse.py", "enum.py", "ast.py", "inspect.py")

def load_text(limit: int = 600_000) -> str:
  """Source of some standard library modules (plain ASCII: anything else becomes '?')."""
  root = sysconfig.get_paths()["stdlib"]
  parts = []
  for name in STDLIB_FILES:
    try:
      with open(os.path.join(root, name), encoding="utf-8") as f: parts.append(f.read())
    except OSError: continue
  if not parts: raise RuntimeError(f"no standard library sources found under {root}")
  text = "\n".join(parts)[:limit]
  return "".join(c if c == "\n" or 32 <= ord(c) < 127 else "?" for c in text)

class Block:
  def __init__(self, dim: int, heads: int):
    self.heads = heads
    self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
    self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
  def __call__(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
    att = q.scaled_dot_product_attention(k, v, is_causal=True).permute(0, 2, 1, 3).reshape(b, t, d)
    x = x + self.proj(att)
    return x + self.out(self.fc(self.ln2(x)).gelu())

class TinyGPT:
  def __init__(self, vocab: int, dim: int = DIM, heads: int = HEADS, layers: int = LAYERS, context: int = CONTEXT):
    self.tok = (Tensor.randn(vocab, dim) * 0.1).contiguous().realize()
    self.pos = (Tensor.randn(context, dim) * 0.02).contiguous().realize()
    self.tok.requires_grad = self.pos.requires_grad = True
    self.blocks = [Block(dim, heads) for _ in range(layers)]
    self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
  def __call__(self, idx: Tensor) -> Tensor:
    x = K.embedding(self.tok, idx) + self.pos[:idx.shape[1]]
    for blk in self.blocks: x = blk(x)
    return self.head(self.ln(x))

def top_k_filter(logits: Tensor, k: int) -> Tensor:
  """logits with everything outside the k largest set to -inf, in fixed shapes: an entry stays if fewer than k beat it."""
  beaten_by = (logits.unsqueeze(-2) > logits.unsqueeze(-1)).sum(-1)   # [.., j]: how many logits are larger than logit j
  return (beaten_by < k).where(logits, -math.inf)

def sample(model: TinyGPT, stoi: dict, itos: list, prompt: str, n: int, temperature: float = 0.8, top_k: int = 8) -> tuple[str, int]:
  """n characters after prompt, and how many kernels were compiled after the first generated position."""
  from teeny.engine.realize import _program_cache
  ids = [stoi.get(c, stoi["?"]) for c in prompt]
  compiled_after_first = 0
  with Tensor.no_grad(), Tensor.train(False):
    for i in range(n):
      window = ids[-CONTEXT:]
      pad = CONTEXT - len(window)
      x = Tensor(np.array([[stoi[" "]] * pad + window], dtype=np.int32))
      logits = model(x)[0, CONTEXT - 1]   # left-padded: the last position is always the newest character
      probs = (top_k_filter(logits / temperature, top_k)).softmax(-1)
      before = len(_program_cache)
      ids.append(int(probs.multinomial(1).item()))
      if i > 0: compiled_after_first += len(_program_cache) - before
  return "".join(itos[j] for j in ids[len(prompt):]), compiled_after_first

def main():
  steps, seed, n_sample = int(os.getenv("STEPS", "150")), int(os.getenv("SEED", "0")), int(os.getenv("SAMPLE", "150"))
  text = load_text()
  itos = sorted(set(text) | {" ", "?"})
  stoi = {c: i for i, c in enumerate(itos)}
  data = np.array([stoi[c] for c in text], dtype=np.int32)
  print(f"{len(text)} characters of standard library source, {len(itos)} distinct")
  Tensor.manual_seed(seed)
  rng = np.random.default_rng(seed)
  model = TinyGPT(len(itos))
  params = get_parameters(model)
  print(f"{sum(p.numel() for p in params)} parameters; embedding backward: the atomic kernel "
        f"({'on' if K.use_custom_kernels() else 'off: TEENY_CUSTOM_KERNELS=0'})")
  opt = nn.optim.AdamW(params, lr=LR, weight_decay=0.01)
  losses, st = [], time.perf_counter()
  with Tensor.train():
    for _ in (bar := trange(steps, desc="tiny gpt")):
      starts = rng.integers(0, len(data) - CONTEXT - 1, BATCH)
      xb = np.stack([data[s:s + CONTEXT] for s in starts])
      yb = np.stack([data[s + 1:s + CONTEXT + 1] for s in starts])
      opt.zero_grad()
      logits = model(Tensor(xb))
      loss = K.cross_entropy(logits.reshape(BATCH * CONTEXT, len(itos)), Tensor(yb.reshape(-1)))
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      losses.append(float(loss.item()))
      bar.set_postfix(loss=f"{losses[-1]:.3f}")
  first, last = losses[0], float(np.mean(losses[-10:]))
  print(f"loss {first:.3f} (first step) -> {last:.3f} (mean of the last 10) = {(1 - last / first) * 100:.0f}% lower, "
        f"{steps} steps in {time.perf_counter() - st:.1f} s")
  prompt = "def "
  out, compiled = sample(model, stoi, itos, prompt, n_sample)
  print(f"--- sample (temperature 0.8, top-k 8), {compiled} kernels compiled after the first position ---\n{prompt}{out}\n---")

if __name__ == "__main__":
  main()
