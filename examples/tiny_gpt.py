#!/usr/bin/env python3
"""A character-level GPT trained on the CPU on Python's own standard library source, then sampled.

  python examples/tiny_gpt.py        # STEPS=n training steps (default 150), SEED=n, SAMPLE=n characters to generate
  DTYPE=bfloat16 python examples/tiny_gpt.py   # mixed precision (DTYPE=float32, the default, or bfloat16)

The model: token embedding (teeny.kernels.embedding: its backward is the atomic scatter-add kernel), learned positions,
pre-norm blocks of causal self-attention (Tensor.scaled_dot_product_attention) and a GELU MLP, LayerNorm, a linear head;
the loss is teeny.kernels.cross_entropy (its backward one kernel: a masked row store plus one atomic at the target).

DTYPE=bfloat16 trains in mixed precision, as torch.autocast(dtype=torch.bfloat16) does: the weights and AdamW's state
stay float32; every matmul (the Linear layers and both attention products) rounds its two operands to bfloat16, each
into its own buffer, so the kernel loads bfloat16 and sums their products in float32 (the pattern CUDA's tensor cores
run, teeny.codegen.tc), and its bfloat16 result goes on as float32. LayerNorm, softmax, GELU, the residual stream and
the loss stay float32. The gradient reaching each matmul is stored as bfloat16 too (Tensor.contiguous_backward), so
the backward matmuls take the same path; the casts pass the gradients on to the float32 weights. All of it is in
`matmul`, `linear` and `causal_attention` below; the model takes the dtype as an argument. extra/bench/gpu_train.py
times it against PyTorch under torch.autocast and checks its loss against float32's.

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
from teeny import Tensor, TinyJit, Variable, GlobalCounters, nn, dtypes, DType
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

# ---- precision: where the model's matmuls run (DTYPE)
DTYPES = {"float32": dtypes.float32, "bfloat16": dtypes.bfloat16}

def compute_dtype(name: str | DType | None = None) -> DType:
  """The matmuls' dtype: `name`, else the DTYPE environment variable, else float32."""
  if isinstance(name, DType) and name in DTYPES.values(): return name
  name = os.getenv("DTYPE", "float32") if name is None else name
  if name not in DTYPES: raise ValueError(f"DTYPE={name!r} is not supported: use one of {', '.join(DTYPES)}")
  return DTYPES[str(name)]

def _bf16(x: Tensor) -> Tensor:
  """x rounded to bfloat16 in a buffer of its own, so a matmul loads bfloat16 (bfloat16 already: x). Its gradient gets
  a buffer of its own too: the backward matmul that computes it stores it as it comes out, not through the views
  (permutes, reshapes) that led to x, which would split its output axes and keep it off the tensor-core path."""
  return x if x.dtype == dtypes.bfloat16 else x.cast(dtypes.bfloat16).contiguous().contiguous_backward()

def matmul(a: Tensor, b: Tensor, dtype: DType = dtypes.float32) -> Tensor:
  """a @ b. bfloat16: both operands rounded to bfloat16, their products summed in float32 inside the kernel, the
  result stored as bfloat16 (as torch.autocast's matmul returns it; in its own layout, before any view a caller takes)
  and handed on as float32; the gradient coming back is stored as bfloat16 (contiguous_backward), so the two backward
  matmuls load bfloat16 as well."""
  if dtype == dtypes.float32: return a @ b
  return (_bf16(a) @ _bf16(b)).contiguous().contiguous_backward().float()

def linear(layer: nn.Linear, x: Tensor, dtype: DType = dtypes.float32) -> Tensor:
  """layer(x); in bfloat16 the weight's bfloat16 copy is made before the transpose (its stored layout), x is seen as
  one matrix of rows (so the weight's gradient is one matmul summing over every row, not over batch and time) and the
  bias is added in float32."""
  if dtype == dtypes.float32: return layer(x)
  y = matmul(x.reshape(-1, x.shape[-1]), _bf16(layer.weight).transpose(0, 1), dtype).reshape(*x.shape[:-1], -1)
  return y + layer.bias if layer.bias is not None else y

def causal_attention(q: Tensor, k: Tensor, v: Tensor, dtype: DType = dtypes.float32) -> Tensor:
  """Causal self-attention over (b, h, t, hd): float32 is Tensor.scaled_dot_product_attention; bfloat16 runs its two
  products through `matmul` (the scores, the mask and the softmax stay float32)."""
  if dtype == dtypes.float32: return q.scaled_dot_product_attention(k, v, is_causal=True)
  t = q.shape[-2]
  scores = matmul(q, k.transpose(-1, -2), dtype) * (1 / math.sqrt(q.shape[-1]))
  causal = Tensor.arange(t, device=q.device).reshape(t, 1) >= Tensor.arange(t, device=q.device)
  return matmul(causal.where(scores, -math.inf).softmax(-1), v, dtype)

class Block:
  def __init__(self, dim: int, heads: int, dtype: DType = dtypes.float32):
    self.heads, self.dtype = heads, dtype
    self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
    self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
  def __call__(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    dt = self.dtype
    q, k, v = linear(self.qkv, self.ln1(x), dt).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4) \
      .unbind(0)
    att = causal_attention(q, k, v, dt).permute(0, 2, 1, 3).reshape(b, t, d)
    x = x + linear(self.proj, att, dt)
    return x + linear(self.out, linear(self.fc, self.ln2(x), dt).gelu(), dt)
  def step(self, x: Tensor, start_pos) -> Tensor:
    """One position (x: (b, 1, d)) at start_pos (a bound Variable), attending over the KV cache up to it."""
    b, _, d = x.shape
    hd, dt = d // self.heads, self.dtype
    q, k, v = linear(self.qkv, self.ln1(x), dt).reshape(b, 1, 3, self.heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
    self.cache_k.shrink((None, None, (start_pos, start_pos + 1), None)).assign(k)
    self.cache_v.shrink((None, None, (start_pos, start_pos + 1), None)).assign(v)
    keys, values = self.cache_k[:, :, :start_pos + 1], self.cache_v[:, :, :start_pos + 1]   # (b, h, start_pos+1, hd)
    att = matmul((matmul(q, keys.transpose(-1, -2), dt) * (1 / math.sqrt(hd))).softmax(-1), values, dt)
    x = x + linear(self.proj, att.permute(0, 2, 1, 3).reshape(b, 1, d), dt)
    return x + linear(self.out, linear(self.fc, self.ln2(x), dt).gelu(), dt)

class TinyGPT:
  def __init__(self, vocab: int, dim: int = DIM, heads: int = HEADS, layers: int = LAYERS, context: int = CONTEXT,
               dtype: str | DType = "float32"):
    """dtype: where the matmuls run (compute_dtype); the parameters are float32 either way."""
    self.dtype = compute_dtype(dtype)
    self.tok = (Tensor.randn(vocab, dim) * 0.1).contiguous().realize()
    self.pos = (Tensor.randn(context, dim) * 0.02).contiguous().realize()
    self.tok.requires_grad = self.pos.requires_grad = True
    self.blocks = [Block(dim, heads, self.dtype) for _ in range(layers)]
    self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
    self.context = context
  def __call__(self, idx: Tensor) -> Tensor:
    x = K.embedding(self.tok, idx) + self.pos[:idx.shape[1]]
    for blk in self.blocks: x = blk(x)
    return linear(self.head, self.ln(x), self.dtype)
  def step(self, tok: Tensor, start_pos) -> Tensor:
    """Logits (b, vocab) after token tok (b, 1) at position start_pos (a bound Variable), through the KV caches."""
    if not hasattr(self.blocks[0], "cache_k") or self.blocks[0].cache_k.shape[0] != tok.shape[0]:
      for blk in self.blocks:
        shape = (tok.shape[0], blk.heads, self.context, self.tok.shape[1] // blk.heads)
        blk.cache_k, blk.cache_v = (Tensor.zeros(*shape).contiguous().realize(),
                                    Tensor.zeros(*shape).contiguous().realize())
    x = K.embedding(self.tok, tok) + self.pos.shrink(((start_pos, start_pos + 1), None))
    for blk in self.blocks: x = blk.step(x, start_pos)
    return linear(self.head, self.ln(x), self.dtype).reshape(tok.shape[0], -1)

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

def load_data() -> tuple[np.ndarray, list[str], dict[str, int]]:
  """The training text as int32 character ids, and the vocabulary both ways."""
  text = load_text()
  itos = sorted(set(text) | {" ", "?"})
  stoi = {c: i for i, c in enumerate(itos)}
  return np.array([stoi[c] for c in text], dtype=np.int32), itos, stoi

def train(model: TinyGPT, data: np.ndarray, steps: int, rng: np.random.Generator, lr: float = LR, batch: int = BATCH,
          bar: bool = True) -> list[float]:
  """`steps` AdamW steps on random windows of data (drawn from rng); the loss of each step."""
  vocab, context = model.head.weight.shape[0], model.context
  opt = nn.optim.AdamW(get_parameters(model), lr=lr, weight_decay=0.01)
  losses: list[float] = []
  with Tensor.train():
    for _ in (it := trange(steps, desc="tiny gpt" + ("" if model.dtype == dtypes.float32 else f" ({model.dtype.name})"),
                           disable=not bar)):
      starts = rng.integers(0, len(data) - context - 1, batch)
      xb = np.stack([data[s:s + context] for s in starts])
      yb = np.stack([data[s + 1:s + context + 1] for s in starts])
      opt.zero_grad()
      logits = model(Tensor(xb))
      loss = K.cross_entropy(logits.reshape(batch * context, vocab), Tensor(yb.reshape(-1)))
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      losses.append(float(loss.item()))
      it.set_postfix(loss=f"{losses[-1]:.3f}")
  return losses

def main():
  steps, seed, n_sample = int(os.getenv("STEPS", "150")), int(os.getenv("SEED", "0")), int(os.getenv("SAMPLE", "150"))
  try: dtype = compute_dtype()
  except ValueError as e: sys.exit(str(e))
  data, itos, stoi = load_data()
  print(f"{len(data)} characters of standard library source, {len(itos)} distinct")
  Tensor.manual_seed(seed)
  rng = np.random.default_rng(seed)
  model = TinyGPT(len(itos), dtype=dtype)
  params = get_parameters(model)
  print(f"{sum(p.numel() for p in params)} parameters; embedding backward: the atomic kernel "
        f"({'on' if K.use_custom_kernels() else 'off: TEENY_CUSTOM_KERNELS=0'})"
        + ("" if dtype == dtypes.float32 else f"; matmuls in {dtype.name}, float32 weights (mixed precision)"))
  st = time.perf_counter()
  losses = train(model, data, steps, rng)
  first, last = losses[0], float(np.mean(losses[-10:]))
  print(f"loss {first:.3f} (first step) -> {last:.3f} (mean of the last 10) = {(1 - last / first) * 100:.0f}% lower, "
        f"{steps} steps in {time.perf_counter() - st:.1f} s")
  prompt = "def "
  out, compiled = sample(model, stoi, itos, prompt, n_sample)
  print(f"--- sample (temperature 0.8, top-k 8), {compiled} kernels compiled after the first position ---\n"
        f"{prompt}{out}\n---")

if __name__ == "__main__":
  main()
