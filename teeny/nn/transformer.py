"""Attention and transformer layers with torch's semantics, state_dict keys and init: MultiheadAttention,
TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer.

A torch checkpoint loads with teeny.nn.state.load_state_dict and gives torch's outputs. Dropout acts only while
Tensor.training. torch's inference fast paths (nested tensors) are not modelled: in eval mode under no_grad, torch's
TransformerEncoder with a src_key_padding_mask gives 0 at padded positions, teeny the values of the plain path (what
torch computes with gradients on)."""
from __future__ import annotations
import copy, math, warnings
from typing import Callable
from teeny.tensor import Tensor
from teeny.nn.tree import _Tree
from teeny.dtype import DType, dtypes
from teeny.nn.params import _param, _uniform
from teeny.nn.layers import Linear, LayerNorm
from teeny.nn.state import get_state_dict

def _xavier(shape: tuple[int, int], dtype: DType | None, device=None) -> Tensor:
  """torch's xavier_uniform_ of a 2-d weight: bound sqrt(6 / (fan_in + fan_out))."""
  return _uniform(shape, math.sqrt(6 / (shape[0] + shape[1])), dtype, device)

def _zeros(n: int, dtype: DType | None, device=None) -> Tensor:
  return _param(Tensor.zeros(n, dtype=dtype or dtypes.float32, device=device))

def _float_mask(mask: Tensor | None, name: str, dtype: DType, module: str) -> Tensor | None:
  """torch's canonical mask: bool (True = not allowed to attend) -> -inf there and 0 elsewhere; float kept (added)."""
  if mask is None: return None
  if not isinstance(mask, Tensor): raise TypeError(f"{module}: {name} must be a Tensor, got {type(mask).__name__}")
  if mask.dtype == dtypes.bool: return mask.where(-math.inf, 0.0).cast(dtype)
  if not dtypes.is_float(mask.dtype):
    raise ValueError(f"{module}: only bool and floating types of {name} are supported, got {mask.dtype}")
  return mask.cast(dtype)

class MultiheadAttention(_Tree):
  """torch.nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
  add_zero_attn=False, kdim=None, vdim=None, batch_first=False).

  Parameters as torch's: in_proj_weight (3E, E) (or q_proj_weight/k_proj_weight/v_proj_weight when kdim or vdim differ
  from embed_dim), in_proj_bias, bias_k/bias_v with add_bias_kv, out_proj.weight/out_proj.bias; xavier init, zero
  biases. forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
  average_attn_weights=True, is_causal=False) returns (output, weights or None): bool masks are True where attention is
  not allowed, float masks are added to the scores; attn_mask is (L, S) or (N * num_heads, L, S). need_weights=True
  computes the softmax itself (a fully masked row gives nan, as torch's), need_weights=False goes through
  scaled_dot_product_attention (a fully masked row gives 0, as torch's). is_causal is torch's hint: with no
  key_padding_mask and need_weights=False the causal mask replaces attn_mask. Invalid shapes raise ValueError (torch
  raises AssertionError for most)."""
  def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
               add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
               vdim: int | None = None, batch_first: bool = False, device=None, dtype: DType | None = None):
    if not isinstance(embed_dim, int) or embed_dim <= 0 or not isinstance(num_heads, int) or num_heads <= 0:
      raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than 0, got embed_dim="
                       f"{embed_dim} and num_heads={num_heads}")
    if embed_dim % num_heads:
      raise ValueError(f"MultiheadAttention: embed_dim must be divisible by num_heads, got {embed_dim} and {num_heads}")
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
      raise ValueError(f"MultiheadAttention: dropout must be a probability in [0, 1], got {dropout!r}")
    self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, float(dropout), batch_first
    self.kdim, self.vdim = kdim if kdim is not None else embed_dim, vdim if vdim is not None else embed_dim
    self.head_dim, self.add_zero_attn = embed_dim // num_heads, add_zero_attn
    self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
    E = embed_dim
    if self._qkv_same_embed_dim:
      self.in_proj_weight = _xavier((3 * E, E), dtype, device)
    else:
      self.q_proj_weight = _xavier((E, E), dtype, device)
      self.k_proj_weight = _xavier((E, self.kdim), dtype, device)
      self.v_proj_weight = _xavier((E, self.vdim), dtype, device)
    if bias: self.in_proj_bias = _zeros(3 * E, dtype, device)
    if add_bias_kv:  # torch's xavier_normal_ of a (1, 1, E) tensor: std sqrt(2 / (E + E))
      self.bias_k = _param(Tensor.randn(1, 1, E, dtype=dtype or dtypes.float32, device=device) / math.sqrt(E))
      self.bias_v = _param(Tensor.randn(1, 1, E, dtype=dtype or dtypes.float32, device=device) / math.sqrt(E))
    self.out_proj = Linear(E, E, bias, device, dtype)
    if bias: self.out_proj.bias = _zeros(E, dtype, device)

  def __repr__(self) -> str:
    return f"MultiheadAttention(embed_dim={self.embed_dim}, num_heads={self.num_heads})"

  def _proj(self, x: Tensor, i: int) -> Tensor:
    E = self.embed_dim
    w = self.in_proj_weight[i * E:(i + 1) * E] if self._qkv_same_embed_dim else \
      (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[i]
    y = x.matmul(w.transpose(0, 1))
    b = getattr(self, "in_proj_bias", None)
    return y + b[i * E:(i + 1) * E] if b is not None else y

  def __call__(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
               need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
               is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    name = "MultiheadAttention"
    for n, t in (("query", query), ("key", key), ("value", value)):
      if not isinstance(t, Tensor): raise TypeError(f"{name}: {n} must be a Tensor, got {type(t).__name__}")
    if query.ndim not in (2, 3):
      raise ValueError(f"{name}: query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                       "tensor")
    batched = query.ndim == 3
    if key.ndim != query.ndim or value.ndim != query.ndim:
      raise ValueError(f"{name}: for {'batched (3-D)' if batched else 'unbatched (2-D)'} `query`, expected `key` and "
                       f"`value` to be {query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors respectively")
    if not batched:
      query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
      if key_padding_mask is not None:
        if key_padding_mask.ndim != 1:
          raise ValueError(f"{name}: for unbatched (2-D) `query`, expected `key_padding_mask` to be None or 1-D but "
                           f"found {key_padding_mask.ndim}-D tensor instead")
        key_padding_mask = key_padding_mask.unsqueeze(0)
      if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise ValueError(f"{name}: for unbatched (2-D) `query`, expected `attn_mask` to be None, 2-D or 3-D but found "
                         f"{attn_mask.ndim}-D tensor instead")
    elif self.batch_first:
      query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
    L, N, E = query.shape
    S, H, hd = key.shape[0], self.num_heads, self.head_dim
    if E != self.embed_dim:
      raise ValueError(f"{name}: was expecting embedding dimension of {self.embed_dim}, but got {E}")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != N:
      raise ValueError(f"{name}: key {tuple(key.shape)} and value {tuple(value.shape)} must have the same sequence "
                       f"length and the query's batch size {N}")
    if key.shape[2] != self.kdim or value.shape[2] != self.vdim:
      raise ValueError(f"{name}: expected key and value feature sizes kdim={self.kdim} and vdim={self.vdim}, got "
                       f"{key.shape[2]} and {value.shape[2]}")
    for n, t in (("key", key), ("value", value)):
      if t.dtype != query.dtype:
        raise ValueError(f"{name}: {n} dtype {t.dtype} does not match query dtype {query.dtype}")
    if (key_padding_mask is not None and attn_mask is not None
        and (key_padding_mask.dtype == dtypes.bool) != (attn_mask.dtype == dtypes.bool)):
      warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
                    "instead.", stacklevel=2)
    kpm = _float_mask(key_padding_mask, "key_padding_mask", query.dtype, name)
    am = _float_mask(attn_mask, "attn_mask", query.dtype, name)
    if is_causal and am is None:
      raise RuntimeError(f"{name}: Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                         "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and kpm is None and not need_weights: am = None   # torch's hint: the causal mask replaces attn_mask
    else: is_causal = False if kpm is not None else is_causal
    if am is not None:
      if am.ndim == 2:
        if tuple(am.shape) != (L, S):
          raise RuntimeError(f"{name}: The shape of the 2D attn_mask is {tuple(am.shape)}, but should be {(L, S)}.")
        am = am.reshape(1, 1, L, S)
      elif am.ndim == 3:
        if tuple(am.shape) != (N * H, L, S):
          raise RuntimeError(f"{name}: The shape of the 3D attn_mask is {tuple(am.shape)}, but should be "
                             f"{(N * H, L, S)}.")
        am = am.reshape(N, H, L, S)
      else: raise RuntimeError(f"{name}: attn_mask's dimension {am.ndim} is not supported (2-D or 3-D)")
    if kpm is not None and tuple(kpm.shape) != (N, S):
      raise ValueError(f"{name}: expected key_padding_mask of shape {(N, S)} (batch, source length), got "
                       f"{tuple(key_padding_mask.shape) if key_padding_mask is not None else None}")
    q, k, v = self._proj(query, 0), self._proj(key, 1), self._proj(value, 2)    # (L, N, E), (S, N, E), (S, N, E)
    extra = 0
    if getattr(self, "bias_k", None) is not None:  # one more key/value: the learnt biases
      k = k.cat(self.bias_k.expand(1, N, E), dim=0)
      v = v.cat(self.bias_v.expand(1, N, E), dim=0)
      extra += 1
    q = q.reshape(L, N, H, hd).permute(1, 2, 0, 3)   # (N, H, L, hd)
    k, v = (t.reshape(S + extra, N, H, hd).permute(1, 2, 0, 3) for t in (k, v))
    if self.add_zero_attn:  # one more key/value of zeros
      k = k.pad((None, None, (0, 1), None))
      v = v.pad((None, None, (0, 1), None))
      extra += 1
    if extra:
      if am is not None: am = am.pad((None, None, None, (0, extra)))
      if kpm is not None: kpm = kpm.pad((None, (0, extra)))
    mask = None if kpm is None else kpm.reshape(N, 1, 1, S + extra)
    if am is not None: mask = am if mask is None else mask + am
    p = self.dropout if Tensor.training else 0.0
    if need_weights:
      scores = (q * math.sqrt(1.0 / hd)).matmul(k.transpose(-2, -1))
      if mask is not None: scores = scores + mask
      w = scores.softmax(-1)
      out = (w.dropout(p) if p > 0 else w).matmul(v)
      weights: Tensor | None = w.mean(1) if average_attn_weights else w
    else:
      out = q.scaled_dot_product_attention(k, v, attn_mask=mask, dropout_p=p, is_causal=is_causal)
      weights = None
    out = self.out_proj(out.permute(2, 0, 1, 3).reshape(L, N, E))
    if not batched: return out.squeeze(1), (weights.squeeze(0) if weights is not None else None)
    return (out.transpose(0, 1) if self.batch_first else out), weights

def _activation(activation, module: str) -> Callable:
  if isinstance(activation, str):
    if activation == "relu": return Tensor.relu
    if activation == "gelu": return Tensor.gelu
    raise RuntimeError(f"{module}: activation should be relu/gelu, not {activation}")
  if not callable(activation): raise TypeError(f"{module}: activation must be 'relu', 'gelu' or a callable")
  return activation

class _LayerBase(_Tree):
  def _init(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float, activation, layer_norm_eps: float,
            batch_first: bool, norm_first: bool, bias: bool, device, dtype, cross: bool) -> None:
    name = type(self).__name__
    self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, batch_first=batch_first, device=device,
                                        dtype=dtype)
    if cross:
      self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, bias, batch_first=batch_first, device=device,
                                               dtype=dtype)
    self.linear1 = Linear(d_model, dim_feedforward, bias, device, dtype)
    self.linear2 = Linear(dim_feedforward, d_model, bias, device, dtype)
    self.norm_first, self.batch_first, self.dropout_p = norm_first, batch_first, float(dropout)
    self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias, device=device, dtype=dtype)
    self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias, device=device, dtype=dtype)
    if cross: self.norm3 = LayerNorm(d_model, layer_norm_eps, bias=bias, device=device, dtype=dtype)
    self.activation = _activation(activation, name)
  def _drop(self, x: Tensor) -> Tensor: return x.dropout(self.dropout_p) if self.dropout_p > 0 else x
  def _ff(self, x: Tensor) -> Tensor: return self._drop(self.linear2(self._drop(self.activation(self.linear1(x)))))
  def _attn(self, attn: MultiheadAttention, x: Tensor, mem: Tensor, mask, kpm, is_causal: bool) -> Tensor:
    return self._drop(attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                           is_causal=is_causal)[0])

class TransformerEncoderLayer(_LayerBase):
  """torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu',
  layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True): self-attention then a feed-forward block, each
  with a residual and a LayerNorm (after it, or before it with norm_first). activation: 'relu', 'gelu' or a callable.
  forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)."""
  def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
               activation: str | Callable = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
               norm_first: bool = False, bias: bool = True, device=None, dtype: DType | None = None):
    self._init(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
               device, dtype, False)
  def __call__(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
               is_causal: bool = False) -> Tensor:
    x = src
    if self.norm_first:
      x = x + self._attn(self.self_attn, h := self.norm1(x), h, src_mask, src_key_padding_mask, is_causal)
      return x + self._ff(self.norm2(x))
    x = self.norm1(x + self._attn(self.self_attn, x, x, src_mask, src_key_padding_mask, is_causal))
    return self.norm2(x + self._ff(x))

class TransformerDecoderLayer(_LayerBase):
  """torch.nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu',
  layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True): self-attention, attention over the encoder's
  memory (multihead_attn), then a feed-forward block, each with a residual and a LayerNorm (norm1..norm3).
  forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
  tgt_is_causal=False, memory_is_causal=False)."""
  def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
               activation: str | Callable = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
               norm_first: bool = False, bias: bool = True, device=None, dtype: DType | None = None):
    self._init(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
               device, dtype, True)
  def __call__(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
               tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
               tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
    x = tgt
    if self.norm_first:
      x = x + self._attn(self.self_attn, h := self.norm1(x), h, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
      x = x + self._attn(self.multihead_attn, self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                         memory_is_causal)
      return x + self._ff(self.norm3(x))
    x = self.norm1(x + self._attn(self.self_attn, x, x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
    x = self.norm2(x + self._attn(self.multihead_attn, x, memory, memory_mask, memory_key_padding_mask,
                                  memory_is_causal))
    return self.norm3(x + self._ff(x))

def _clones(layer, n: int) -> list:
  """n deep copies of layer, each with parameters of its own (equal to layer's at the start, as torch's clones)."""
  if isinstance(n, bool) or not isinstance(n, int) or n < 0:
    raise ValueError(f"num_layers must be an int >= 0, got {n!r}")
  out = []
  for _ in range(n):
    memo: dict = {id(t): _param(t.detach().clone()) for t in get_state_dict(layer).values()}
    out.append(copy.deepcopy(layer, memo))
  return out

def _check_mask_is_float_or_bool(mask, name: str, module: str) -> None:
  if mask is not None: _float_mask(mask, name, dtypes.float32, module)

class TransformerEncoder(_Tree):
  """torch.nn.TransformerEncoder(encoder_layer, num_layers, norm=None): num_layers copies of encoder_layer (keys
  layers.0.self_attn.in_proj_weight, ...) applied in turn, then norm if given. forward(src, mask=None,
  src_key_padding_mask=None, is_causal=None); is_causal is a hint (None or False: the mask is used as given).
  enable_nested_tensor and mask_check are accepted and ignored (torch's inference fast path)."""
  def __init__(self, encoder_layer, num_layers: int, norm=None, enable_nested_tensor: bool = True,
               mask_check: bool = True):
    self.layers, self.num_layers, self.norm = _clones(encoder_layer, num_layers), num_layers, norm
  def __call__(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
               is_causal: bool | None = None) -> Tensor:
    _check_mask_is_float_or_bool(mask, "mask", "TransformerEncoder")
    _check_mask_is_float_or_bool(src_key_padding_mask, "src_key_padding_mask", "TransformerEncoder")
    x = src
    for layer in self.layers: x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                                        is_causal=bool(is_causal))
    return self.norm(x) if self.norm is not None else x

class TransformerDecoder(_Tree):
  """torch.nn.TransformerDecoder(decoder_layer, num_layers, norm=None): num_layers copies of decoder_layer, then norm.
  forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
  tgt_is_causal=None, memory_is_causal=False)."""
  def __init__(self, decoder_layer, num_layers: int, norm=None):
    self.layers, self.num_layers, self.norm = _clones(decoder_layer, num_layers), num_layers, norm
  def __call__(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
               tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
               tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
    x = tgt
    for layer in self.layers:
      x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal)
    return self.norm(x) if self.norm is not None else x

class Transformer(_Tree):
  """torch.nn.Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
  dropout=0.1, activation='relu', custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
  norm_first=False, bias=True): an encoder and a decoder (keys encoder.layers.0..., encoder.norm, decoder...), every
  parameter of 2 or more dims xavier-uniform initialised, as torch's. forward(src, tgt, src_mask=None, tgt_mask=None,
  memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
  src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)."""
  def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
               dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = "relu",
               custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
               norm_first: bool = False, bias: bool = True, device=None, dtype: DType | None = None):
    kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps,
              batch_first=batch_first, norm_first=norm_first, bias=bias, device=device, dtype=dtype)
    self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
      TransformerEncoderLayer(d_model, nhead, **kw), num_encoder_layers,
      LayerNorm(d_model, layer_norm_eps, bias=bias, device=device, dtype=dtype))
    self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
      TransformerDecoderLayer(d_model, nhead, **kw), num_decoder_layers,
      LayerNorm(d_model, layer_norm_eps, bias=bias, device=device, dtype=dtype))
    for p in get_state_dict(self).values():
      if p.ndim > 1:
        b = math.sqrt(6 / (p.shape[0] + math.prod(p.shape[1:])))
        p.assign(Tensor.uniform(*p.shape, low=-b, high=b, dtype=p.dtype, device=p.device)).realize()
    self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

  @staticmethod
  def generate_square_subsequent_mask(sz: int, device=None, dtype: DType | None = None) -> Tensor:
    """The (sz, sz) float causal mask: -inf above the diagonal, 0 on and below it."""
    r = Tensor.arange(sz, device=device)
    return (r.reshape(sz, 1) < r.reshape(1, sz)).where(-math.inf, 0.0).cast(dtype or dtypes.float32)

  def __call__(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
               memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
               tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
               src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
               memory_is_causal: bool = False) -> Tensor:
    batched = src.ndim == 3
    b = 0 if self.batch_first else 1
    if batched and src.shape[b] != tgt.shape[b]:
      raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal, got {src.shape[b]} and "
                         f"{tgt.shape[b]}")
    if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
      raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to d_model ({self.d_model}), "
                         f"got {src.shape[-1]} and {tgt.shape[-1]}")
    memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
    return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
