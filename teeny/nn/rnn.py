"""Recurrent layers with torch's semantics, parameter names and init: RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU.

Each module's Tensor attributes are its parameters, named as torch's state_dict keys (weight_ih_l0, bias_hh_l1_reverse,
...), so a torch checkpoint loads with teeny.nn.state.load_state_dict and gives torch's outputs. Everything is built
from lazy, differentiable Tensor ops; the time loop is a Python loop over the steps (the input projection of every step
is one matmul before it). The gate pre-activations, LSTM cell states and each step's input slice are marked
contiguous_backward: their gradients get buffers, so backward's kernels stay one step long instead of fusing (and
recomputing) the elementwise chain across every step."""
from __future__ import annotations
import math, warnings
from typing import Callable
from teeny.tensor import Tensor
from teeny.nn.tree import _Tree
from teeny.dtype import DType
from teeny.nn.params import _uniform


def _check_size(value, name: str, module: str) -> int:
  if isinstance(value, bool) or not isinstance(value, int):
    raise TypeError(f"{module}: {name} should be of type int, got: {type(value).__name__}")
  if value <= 0: raise ValueError(f"{module}: {name} must be greater than zero, got {value}")
  return value

def _affine(x: Tensor, w_t: Tensor, b: Tensor | None) -> Tensor:
  """x @ w_t (+ b): w_t is the weight already transposed to (in, out)."""
  y = x.matmul(w_t)
  return y + b if b is not None else y

def _gates(g: Tensor, n: int) -> tuple[Tensor, ...]:
  return g.chunk(n, -1)

def _rnn_step(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None, act: Callable[[Tensor], Tensor]) -> Tensor:
  """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); gi is the input part."""
  return act((gi + _affine(h, w_hh_t, b_hh)).contiguous_backward())

def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, b_hh: Tensor | None,
               w_hr_t: Tensor | None) -> tuple[Tensor, Tensor]:
  """torch's gate order i, f, g, o: c' = f*c + i*g, h' = o*tanh(c') (then h' @ W_hr^T with proj_size)."""
  i, f, g, o = _gates((gi + _affine(h, w_hh_t, b_hh)).contiguous_backward(), 4)
  c = f.sigmoid() * c + i.sigmoid() * g.tanh()
  h = o.sigmoid() * c.tanh()
  return (h.matmul(w_hr_t) if w_hr_t is not None else h), c

def _gru_step(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
  """torch's gate order r, z, n: n = tanh(x_n + r * (h W_hn^T + b_hn)), h' = (1 - z) * n + z * h."""
  ir, iz, in_ = _gates(gi, 3)
  hr, hz, hn = _gates(_affine(h, w_hh_t, b_hh).contiguous_backward(), 3)
  r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
  n = (in_ + r * hn).tanh()
  return n + z * (h - n)

def _activation(nonlinearity: str, module: str) -> Callable[[Tensor], Tensor]:
  if nonlinearity == "tanh": return Tensor.tanh
  if nonlinearity == "relu": return Tensor.relu
  raise ValueError(f"{module}: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")

# ***** cells *****

class _CellBase(_Tree):
  gates = 1
  def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype: DType | None = None):
    name = type(self).__name__
    if isinstance(input_size, bool) or not isinstance(input_size, int) or input_size < 0:
      raise ValueError(f"{name}: input_size must be a non-negative int, got {input_size!r}")
    self.input_size, self.hidden_size = input_size, _check_size(hidden_size, "hidden_size", name)
    self.bias = bias
    bound, g = 1 / math.sqrt(hidden_size), self.gates * hidden_size
    self.weight_ih = _uniform((g, input_size), bound, dtype, device)
    self.weight_hh = _uniform((g, hidden_size), bound, dtype, device)
    self.bias_ih = _uniform((g,), bound, dtype, device) if bias else None
    self.bias_hh = _uniform((g,), bound, dtype, device) if bias else None
  def __repr__(self) -> str:
    extra = "" if self.bias else ", bias=False"
    if (nl := getattr(self, "nonlinearity", "tanh")) != "tanh": extra += f", nonlinearity={nl}"
    return f"{type(self).__name__}({self.input_size}, {self.hidden_size}{extra})"
  def _input(self, x: Tensor) -> tuple[Tensor, bool]:
    """(x as (N, input_size), whether it was batched), with torch's checks."""
    name = type(self).__name__
    if not isinstance(x, Tensor): raise TypeError(f"{name}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (1, 2): raise ValueError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
    if x.shape[-1] != self.input_size:
      raise RuntimeError(f"{name}: input has inconsistent input_size: got {x.shape[-1]} expected {self.input_size}")
    if x.dtype != self.weight_ih.dtype:
      raise RuntimeError(f"{name}: input dtype ({x.dtype}) does not match weight dtype ({self.weight_ih.dtype}); "
                         f"cast the input with .cast({self.weight_ih.dtype})")
    return (x, True) if x.ndim == 2 else (x.unsqueeze(0), False)
  def _hidden(self, h: Tensor | None, x: Tensor, batched: bool, which: str) -> Tensor:
    """h (or zeros) as (N, hidden_size), checked against the input's batch size."""
    name = type(self).__name__
    if h is None: return Tensor.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
    if not isinstance(h, Tensor): raise TypeError(f"{name}: {which} must be a Tensor, got {type(h).__name__}")
    if h.ndim not in (1, 2): raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.ndim}D instead")
    if h.ndim != (2 if batched else 1):
      raise RuntimeError(f"{name}: for a {2 if batched else 1}-D input, {which} must be {2 if batched else 1}-D too, "
                         f"got {h.ndim}-D")
    h = h if batched else h.unsqueeze(0)
    if h.shape[0] != x.shape[0]:
      raise RuntimeError(f"{name}: Input batch size {x.shape[0]} doesn't match {which} batch size {h.shape[0]}")
    if h.shape[1] != self.hidden_size:
      raise RuntimeError(f"{name}: {which} has inconsistent hidden_size: got {h.shape[1]}, expected "
                         f"{self.hidden_size}")
    if h.dtype != x.dtype:
      raise RuntimeError(f"{name}: {which} dtype ({h.dtype}) does not match input dtype ({x.dtype})")
    return h
  def _gi(self, x: Tensor) -> Tensor: return _affine(x, self.weight_ih.transpose(0, 1), self.bias_ih)

class RNNCell(_CellBase):
  """torch.nn.RNNCell: h' = tanh (or relu) of x W_ih^T + b_ih + h W_hh^T + b_hh; input (N, input_size) or unbatched
  (input_size,), hx defaults to zeros. Unlike torch, an unknown nonlinearity raises when the cell is built."""
  def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None,
               dtype: DType | None = None):
    self._act = _activation(nonlinearity, "RNNCell")
    self.nonlinearity = nonlinearity
    super().__init__(input_size, hidden_size, bias, device, dtype)
  def __call__(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
    x, batched = self._input(input)
    h = _rnn_step(self._gi(x), self._hidden(hx, x, batched, "hidden0"), self.weight_hh.transpose(0, 1), self.bias_hh,
                  self._act)
    return h if batched else h.squeeze(0)

class LSTMCell(_CellBase):
  """torch.nn.LSTMCell: gates i, f, g, o (in that order in weight_ih/weight_hh); returns (h', c'). hx is a tuple
  (h, c) or None (zeros)."""
  gates = 4
  def __call__(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    x, batched = self._input(input)
    if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
      raise TypeError(f"LSTMCell: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
    h0 = self._hidden(hx[0] if hx is not None else None, x, batched, "hidden0")
    c0 = self._hidden(hx[1] if hx is not None else None, x, batched, "hidden1")
    h, c = _lstm_step(self._gi(x), h0, c0, self.weight_hh.transpose(0, 1), self.bias_hh, None)
    return (h, c) if batched else (h.squeeze(0), c.squeeze(0))

class GRUCell(_CellBase):
  """torch.nn.GRUCell: gates r, z, n (in that order), with b_hn inside r * (h W_hn^T + b_hn); returns h'."""
  gates = 3
  def __call__(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
    x, batched = self._input(input)
    h = _gru_step(self._gi(x), self._hidden(hx, x, batched, "hidden0"), self.weight_hh.transpose(0, 1), self.bias_hh)
    return h if batched else h.squeeze(0)

# ***** multi-layer recurrent layers *****

class _RNNBase(_Tree):
  mode, gates = "RNN", 1
  def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
               batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
               nonlinearity: str = "tanh", device=None, dtype: DType | None = None):
    name = type(self).__name__
    if isinstance(input_size, bool) or not isinstance(input_size, int) or input_size < 0:
      raise ValueError(f"{name}: input_size must be a non-negative int, got {input_size!r}")
    _check_size(hidden_size, "hidden_size", name)
    _check_size(num_layers, "num_layers", name)
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
      raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing the probability of an element "
                       f"being zeroed, got {dropout!r}")
    if dropout > 0 and num_layers == 1:
      warnings.warn(f"{name}: dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                    f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                    stacklevel=3)
    if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0:
      raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable projections, got "
                       f"{proj_size!r}")
    if proj_size and self.mode != "LSTM":
      raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")
    if proj_size >= hidden_size and proj_size:
      raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got {proj_size} >= {hidden_size}")
    self._act = _activation(nonlinearity, name) if self.mode == "RNN" else None
    if self.mode == "RNN": self.nonlinearity = nonlinearity
    self.input_size, self.hidden_size, self.num_layers, self.bias = input_size, hidden_size, num_layers, bias
    self.batch_first, self.dropout, self.bidirectional, self.proj_size = batch_first, float(dropout), bidirectional, \
      proj_size
    dirs, out = 2 if bidirectional else 1, proj_size or hidden_size
    bound, g = 1 / math.sqrt(hidden_size), self.gates * hidden_size
    for layer in range(num_layers):   # torch's order: per layer, per direction, ih, hh, biases, hr
      for sfx in ("", "_reverse")[:dirs]:
        fan = input_size if layer == 0 else out * dirs
        setattr(self, f"weight_ih_l{layer}{sfx}", _uniform((g, fan), bound, dtype, device))
        setattr(self, f"weight_hh_l{layer}{sfx}", _uniform((g, out), bound, dtype, device))
        if bias:
          setattr(self, f"bias_ih_l{layer}{sfx}", _uniform((g,), bound, dtype, device))
          setattr(self, f"bias_hh_l{layer}{sfx}", _uniform((g,), bound, dtype, device))
        if proj_size:
          setattr(self, f"weight_hr_l{layer}{sfx}", _uniform((proj_size, hidden_size), bound, dtype, device))

  def __repr__(self) -> str:
    extra = "".join(f", {k}={v}" for k, v, d in (("proj_size", self.proj_size, 0), ("num_layers", self.num_layers, 1),
                    ("bias", self.bias, True),
                    ("batch_first", self.batch_first, False), ("dropout", self.dropout, 0.0),
                    ("bidirectional", self.bidirectional, False)) if v != d)
    if self.mode == "RNN" and self.nonlinearity != "tanh": extra += f", nonlinearity={self.nonlinearity}"
    return f"{type(self).__name__}({self.input_size}, {self.hidden_size}{extra})"

  def flatten_parameters(self) -> None:
    """torch's cuDNN weight compaction; nothing to do here."""

  @property
  def all_weights(self) -> list[list[Tensor]]:
    """Per layer and direction, the parameters in torch's order: weight_ih, weight_hh[, bias_ih, bias_hh][,
    weight_hr]."""
    names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if self.bias else []) + \
      (["weight_hr"] if self.proj_size else [])
    return [[getattr(self, f"{n}_l{layer}{sfx}") for n in names] for layer in range(self.num_layers)
            for sfx in ("", "_reverse")[:2 if self.bidirectional else 1]]

  def _check_hidden(self, h, expected: tuple, batched: bool, x: Tensor, what: str) -> Tensor:
    name = type(self).__name__
    if not isinstance(h, Tensor): raise TypeError(f"{name}: {what} must be a Tensor, got {type(h).__name__}")
    if h.ndim != (3 if batched else 2):
      raise RuntimeError(f"{name}: for {'batched 3-D' if batched else 'unbatched 2-D'} input, {what} should also be "
                         f"{3 if batched else 2}-D but got {h.ndim}-D tensor")
    given, h = list(h.shape), (h if batched else h.unsqueeze(1))
    if tuple(h.shape) != expected:
      want = expected if batched else (expected[0], expected[2])
      raise RuntimeError(f"{name}: Expected {what} size {want}, got {given}")
    if h.dtype != x.dtype: raise ValueError(f"{name}: {what} dtype ({h.dtype}) does not match input dtype ({x.dtype})")
    return h

  def __call__(self, input: Tensor, hx=None):
    """input (L, N, input_size), (N, L, input_size) with batch_first, or unbatched (L, input_size); hx as torch's
    (h_0 of (D * num_layers, N, H_out); for LSTM the tuple (h_0, c_0)), None for zeros. Returns (output, h_n), for LSTM
    (output, (h_n, c_n)), shaped as torch's. Dropout between layers only while Tensor.training."""
    name = type(self).__name__
    if not isinstance(input, Tensor): raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (2, 3): raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead")
    w0 = getattr(self, "weight_ih_l0")
    if input.dtype != w0.dtype:
      raise ValueError(f"{name}: input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}); cast the input "
                       f"with .cast({w0.dtype})")
    if input.shape[-1] != self.input_size:
      raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                         f"{input.shape[-1]}")
    batched = input.ndim == 3
    x = input.unsqueeze(1) if not batched else input.transpose(0, 1) if self.batch_first else input
    L, N = x.shape[0], x.shape[1]
    if L == 0: raise RuntimeError(f"{name}: Expected sequence length to be larger than 0 in RNN")
    dirs, H = 2 if self.bidirectional else 1, self.hidden_size
    hsize = (dirs * self.num_layers, N, self.proj_size or H)
    lstm = self.mode == "LSTM"
    if lstm:
      if hx is not None:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
          raise TypeError(f"{name}: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
        if any(not isinstance(t, Tensor) for t in hx): raise TypeError(f"{name}: h_0 and c_0 must be Tensors")
        want = 3 if batched else 2
        if hx[0].ndim != want or hx[1].ndim != want:
          raise RuntimeError(f"{name}: for {'batched 3-D' if batched else 'unbatched 2-D'} input, hx and cx should "
                             f"also be {want}-D but got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        h0 = self._check_hidden(hx[0], hsize, batched, x, "hidden[0]")
        c0 = self._check_hidden(hx[1], hsize[:2] + (H,), batched, x, "hidden[1]")
      else:
        h0 = Tensor.zeros(*hsize, dtype=x.dtype, device=x.device)
        c0 = Tensor.zeros(*hsize[:2], H, dtype=x.dtype, device=x.device)
    else:
      h0 = Tensor.zeros(*hsize, dtype=x.dtype, device=x.device) if hx is None else \
        self._check_hidden(hx, hsize, batched, x, "hidden")
    h_n, c_n = [], []
    # Every step's state gets a buffer of its own, and no kernel of a step reads another step's data at an offset:
    # fused across steps, the forward recomputed every earlier step inside each kernel (kernels growing with t, O(T^2)
    # work), and a constant offset t in a kernel made every step's kernels differ and compile anew. So the first
    # layer's input part (one matmul over all steps) is copied out step by step (small copies), later layers read the
    # previous layer's step buffers, and the gradient of the stacked output's slice t gets a buffer of its own.
    seq: list[Tensor] | None = None   # the previous layer's output, step by step
    for layer in range(self.num_layers):
      if seq is not None and self.dropout and Tensor.training: seq = [s.dropout(self.dropout) for s in seq]
      outs: list[list[Tensor]] = []
      for d, sfx in enumerate(("", "_reverse")[:dirs]):
        def p(n: str) -> Tensor | None: return getattr(self, f"{n}_l{layer}{sfx}", None)
        w_ih, w_hh, b_ih, b_hh, w_hr = (p(n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
        assert w_ih is not None and w_hh is not None
        w_ih_t = w_ih.transpose(0, 1)
        gi = ([g.contiguous().contiguous_backward() for g in _affine(x, w_ih_t, b_ih).unbind(0)] if seq is None else
              [_affine(s, w_ih_t, b_ih).contiguous_backward() for s in seq])
        w_hh_t, w_hr_t = w_hh.transpose(0, 1), (w_hr.transpose(0, 1) if w_hr is not None else None)
        h, k = h0[layer * dirs + d], layer * dirs + d
        c = c0[k] if lstm else None
        steps: list[Tensor] = [h] * L
        for t in (range(L) if d == 0 else range(L - 1, -1, -1)):
          if c is not None: h, c = _lstm_step(gi[t], h, c, w_hh_t, b_hh, w_hr_t)
          elif self.mode == "GRU": h = _gru_step(gi[t], h, w_hh_t, b_hh)
          else: h = _rnn_step(gi[t], h, w_hh_t, b_hh, self._act)  # type: ignore[arg-type]  # set for mode RNN
          if c is not None: c = c.contiguous().contiguous_backward()   # (its gradient too: a chain over all steps)
          steps[t] = h = h.contiguous()
        outs.append(steps)
        h_n.append(h)
        if c is not None: c_n.append(c)
      seq = outs[0] if dirs == 1 else [f.cat(r, dim=-1) for f, r in zip(outs[0], outs[1])]
    assert seq is not None
    x = seq[0].contiguous_backward().stack(*[s.contiguous_backward() for s in seq[1:]])
    out = x.squeeze(1) if not batched else x.transpose(0, 1) if self.batch_first else x
    hn = h_n[0].stack(*h_n[1:])
    if not batched: hn = hn.squeeze(1)
    if not lstm: return out, hn
    cn = c_n[0].stack(*c_n[1:])
    return out, (hn, cn if batched else cn.squeeze(1))

class RNN(_RNNBase):
  """torch.nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
  dropout=0.0, bidirectional=False): an Elman RNN, h_t = tanh (or relu) of x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh.
  Parameters weight_ih_l{k}[_reverse], ..., init uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). The time loop is
  a Python loop over the steps."""
  def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
               bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
               device=None, dtype: DType | None = None, proj_size: int = 0):
    super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size,
                     nonlinearity, device, dtype)

class LSTM(_RNNBase):
  """torch.nn.LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
  bidirectional=False, proj_size=0): gates i, f, g, o; returns (output, (h_n, c_n)). proj_size > 0 projects each h_t by
  weight_hr_l{k} to proj_size, as torch's. The time loop is a Python loop over the steps."""
  mode, gates = "LSTM", 4
  def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
               batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
               device=None, dtype: DType | None = None):
    super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size, "tanh",
                     device, dtype)

class GRU(_RNNBase):
  """torch.nn.GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
  bidirectional=False): gates r, z, n, with b_hn inside r * (h W_hn^T + b_hn). The time loop is a Python loop over the
  steps."""
  mode, gates = "GRU", 3
  def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
               batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
               dtype: DType | None = None, proj_size: int = 0):
    super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size, "tanh",
                     device, dtype)
