"""examples/tiny_gpt.py's model in PyTorch, the reference the GPU benchmarks (gpu_train.py, multi.py) time teeny
against: token + learned position embeddings, pre-norm blocks (causal SDPA, GELU MLP), LayerNorm, linear head."""
from __future__ import annotations

def torch_gpt(vocab: int, dim: int, heads: int, layers: int, context: int):
  import torch
  nn, F = torch.nn, torch.nn.functional
  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
      self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
      self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
    def forward(self, x):
      b, t, d = x.shape
      q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
      att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
      x = x + self.proj(att.permute(0, 2, 1, 3).reshape(b, t, d))
      return x + self.out(F.gelu(self.fc(self.ln2(x))))
  class GPT(nn.Module):
    def __init__(self):
      super().__init__()
      self.tok = nn.Parameter(torch.randn(vocab, dim) * 0.1)    # as TinyGPT initialises them
      self.pos = nn.Parameter(torch.randn(context, dim) * 0.02)
      self.blocks = nn.ModuleList([Block() for _ in range(layers)])
      self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
    def forward(self, idx):
      x = self.tok[idx] + self.pos[:idx.shape[1]]
      for blk in self.blocks: x = blk(x)
      return self.head(self.ln(x))
  return GPT()
