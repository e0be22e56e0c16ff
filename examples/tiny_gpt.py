#!/usr/bin/env python3
"""A character-level GPT trained on the CPU on Python's own standard library source, then sampled.

  python examples/tiny_gpt.py        # STEPS=n training steps (default 150), SEED=n, SAMPLE=n characters to generate

The model: token embedding (teeny.kernels.embedding: its backward is the atomic scatter-add kernel), learned positions,
pre-norm blocks of causal self-attention (Tensor.scaled_dot_product_attention) and a GELU MLP, LayerNorm, a linear head;
the loss is teeny.kernels.cross_entropy (its backward one kernel: a masked row store plus one atomic at the target).

Sampling runs one character at a time with a KV cache: each block keeps its keys and values in a buffer of CONTEXT
positions, writes the new character's at `start_pos` and attends over `cache[:, :, :start_pos+1]`, where start_pos is a
bound Variable (teeny.Variable). The kernels take start_pos as an argument, so they compile once, whatever the length:
`GlobalCounters.compile_count` stays constant as the text grows; the step runs under TinyJit, whose one capture is
replayed with each new start_pos. When the cache is full the context restarts from the
last CONTEXT/2 characters (fed again through the same kernels). Temperature and top-k are applied in the graph (top-k
keeps the logits that fewer than k others beat: a fixed-shape compare-and-count, no sort). `sample_plain` is the same
sampler without a cache (the whole context through the model each step, right-padded to CONTEXT: causal attention
never looks at the padding), the reference the cached one is tested against.
"""
from __future__ import annotations
import math, os, sys, sysconfig, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np
from tqdm import trange
from teeny import Tensor, TinyJit, Variable, GlobalCounters, nn
import teeny.kernels as K
from teeny.nn.state import get_parameters

CONTEXT, DIM, HEADS, LAYERS, BATCH, LR = 64, 64, 4, 2, 16, float(os.getenv("LR", "1e-2"))
STDLIB_FILES = ("textwrap.py", "string.py", "functools.py", "bisect.py", "heapq.py", "fnmatch.py", "shlex.py",
                "calendar.py", "glob.py", "colorsys.py", "difflib.py", "dataclasses.py", "argparse.py", "enum.py",
                "ast.py", "inspect.py")

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
  def step(self, x: Tensor, start_pos) -> Tensor:
    """One position (x: (b, 1, d)) at start_pos (a bound Variable), attending over the KV cache up to it."""
    b, _, d = x.shape
    hd = d // self.heads
    q, k, v = self.qkv(self.ln1(x)).reshape(b, 1, 3, self.heads, hd).permute(2, 0, 3, 1, 4).unbind(0)   # (b, h, 1, hd)
    self.cache_k.shrink((None, None, (start_pos, start_pos + 1), None)).assign(k)
    self.cache_v.shrink((None, None, (start_pos, start_pos + 1), None)).assign(v)
    keys, values = self.cache_k[:, :, :start_pos + 1], self.cache_v[:, :, :start_pos + 1]   # (b, h, start_pos+1, hd)
    att = ((q @ keys.transpose(-1, -2)) * (1 / math.sqrt(hd))).softmax(-1) @ values
    x = x + self.proj(att.permute(0, 2, 1, 3).reshape(b, 1, d))
    return x + self.out(self.fc(self.ln2(x)).gelu())

class TinyGPT:
  def __init__(self, vocab: int, dim: int = DIM, heads: int = HEADS, layers: int = LAYERS, context: int = CONTEXT):
    self.tok = (Tensor.randn(vocab, dim) * 0.1).contiguous().realize()
    self.pos = (Tensor.randn(context, dim) * 0.02).contiguous().realize()
    self.tok.requires_grad = self.pos.requires_grad = True
    self.blocks = [Block(dim, heads) for _ in range(layers)]
    self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
    self.context = context
  def __call__(self, idx: Tensor) -> Tensor:
    x = K.embedding(self.tok, idx) + self.pos[:idx.shape[1]]
    for blk in self.blocks: x = blk(x)
    return self.head(self.ln(x))
  def step(self, tok: Tensor, start_pos) -> Tensor:
    """Logits (b, vocab) after token tok (b, 1) at position start_pos (a bound Variable), through the KV caches."""
    if not hasattr(self.blocks[0], "cache_k") or self.blocks[0].cache_k.shape[0] != tok.shape[0]:
      for blk in self.blocks:
        shape = (tok.shape[0], blk.heads, self.context, self.tok.shape[1] // blk.heads)
        blk.cache_k, blk.cache_v = (Tensor.zeros(*shape).contiguous().realize(),
                                    Tensor.zeros(*shape).contiguous().realize())
    x = K.embedding(self.tok, tok) + self.pos.shrink(((start_pos, start_pos + 1), None))
    for blk in self.blocks: x = blk.step(x, start_pos)
    return self.head(self.ln(x)).reshape(tok.shape[0], -1)

def top_k_filter(logits: Tensor, k: int) -> Tensor:
  """logits with everything outside the k largest set to -inf, in fixed shapes:
  an entry stays if fewer than k beat it."""
  beaten_by = (logits.unsqueeze(-2) > logits.unsqueeze(-1)).sum(-1)   # [.., j]: how many logits are larger than logit j
  return (beaten_by < k).where(logits, -math.inf)

def _pick(logits: Tensor, temperature: float, top_k: int) -> int:
  """The next token from a row of logits: the largest when temperature is 0 (greedy), else a top-k sample."""
  if temperature == 0: return int(logits.numpy().argmax())
  return int(top_k_filter(logits / temperature, top_k).softmax(-1).multinomial(1).item())

def sample(model: TinyGPT, stoi: dict, itos: list, prompt: str, n: int, temperature: float = 0.8, top_k: int = 8,
           compiles: list | None = None, jit: bool = True) -> tuple[str, int]:
  """n characters after prompt through the KV cache, and how many programs were compiled after the first generated
  character (GlobalCounters.compile_count). `compiles`, if given, gets the running compile count after each character.
  With `jit`, each step is a TinyJit replay: one capture serves every start_pos (its value goes to the kernels'
  vals)."""
  step = TinyJit(lambda tok, pos: model.step(tok, pos).realize()) if jit else model.step
  ids = [stoi.get(c, stoi["?"]) for c in prompt]
  start_pos = Variable("start_pos", 0, model.context - 1)
  start = fed = 0          # the context is ids[start:]; the cache holds the first `fed` of it
  compiled_first = None
  with Tensor.no_grad(), Tensor.train(False):
    for _ in range(n):
      if len(ids) - start > model.context: start, fed = len(ids) - model.context // 2, 0   # full: restart the context
      while start + fed < len(ids):
        logits = step(Tensor([[ids[start + fed]]], dtype="int32"), start_pos.bind(fed))[0].realize()
        fed += 1
      ids.append(_pick(logits, temperature, top_k))
      if compiled_first is None: compiled_first = GlobalCounters.compile_count
      if compiles is not None: compiles.append(GlobalCounters.compile_count)
  return "".join(itos[j] for j in ids[len(prompt):]), GlobalCounters.compile_count - compiled_first

def sample_plain(model: TinyGPT, stoi: dict, itos: list, prompt: str, n: int) -> str:
  """Greedy sampling without a cache, with the same context as `sample`: the reference for the cached path."""
  ids = [stoi.get(c, stoi["?"]) for c in prompt]
  start = 0                # the context is ids[start:]
  with Tensor.no_grad(), Tensor.train(False):
    for _ in range(n):
      if len(ids) - start > model.context: start = len(ids) - model.context // 2
      ctx = ids[start:]
      x = Tensor(np.array([ctx + [0] * (model.context - len(ctx))], dtype=np.int32))
      ids.append(_pick(model(x)[0, len(ctx) - 1], 0, 0))
  return "".join(itos[j] for j in ids[len(prompt):])

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
  print(f"--- sample (temperature 0.8, top-k 8), {compiled} kernels compiled after the first position ---\n"
        f"{prompt}{out}\n---")

if __name__ == "__main__":
  main()
