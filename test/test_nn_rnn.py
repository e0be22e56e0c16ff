"""teeny.nn.rnn (RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU) and teeny.nn.transformer (MultiheadAttention,
Transformer*) against torch: torch's state_dict loads into the teeny module (same keys and shapes), then outputs,
input gradients and parameter gradients are compared in eval mode. Sizes stay tiny: each new shape compiles kernels."""
import math
import warnings
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
from teeny.nn.rnn import RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU
from teeny.nn.transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer,
                                  TransformerEncoder, TransformerDecoder, Transformer)
from teeny.nn.state import get_state_dict, load_state_dict
from helpers import is_null, needs_values

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

HSET = settings(max_examples=4, deadline=None)  # every example has new shapes: new kernels to compile

T = {"RNN": (RNN, torch.nn.RNN), "LSTM": (LSTM, torch.nn.LSTM), "GRU": (GRU, torch.nn.GRU)}
CELLS = {"RNNCell": (RNNCell, torch.nn.RNNCell), "LSTMCell": (LSTMCell, torch.nn.LSTMCell),
         "GRUCell": (GRUCell, torch.nn.GRUCell)}

def _rand(shape, seed=0, dtype=np.float32):
  return np.random.default_rng(seed).standard_normal(shape).astype(dtype)

def sync(tm, pm) -> dict:
  """torch's state_dict into the teeny module: the same keys in the same order and shapes (strict load)."""
  sd = get_state_dict(tm)
  psd = pm.state_dict()
  assert list(sd) == list(psd), f"keys: teeny {list(sd)} vs torch {list(psd)}"
  for k in sd: assert tuple(sd[k].shape) == tuple(psd[k].shape), f"{k}: {tuple(sd[k].shape)} vs {tuple(psd[k].shape)}"
  load_state_dict(tm, {k: Tensor(v.detach().numpy()) for k, v in psd.items()})
  return sd

def _flat(out) -> list:
  if out is None: return [None]
  if isinstance(out, (tuple, list)): return [t for o in out for t in _flat(o)]
  return [out]

def _close(got: Tensor, want, what: str, atol: float, rtol: float) -> None:
  assert tuple(got.shape) == tuple(want.shape), f"{what} shape: teeny {tuple(got.shape)} vs torch {tuple(want.shape)}"
  if is_null():
    got.realize()
    return
  np.testing.assert_allclose(got.float().numpy().astype(np.float64), want.detach().float().numpy().astype(np.float64),
                             atol=atol, rtol=rtol, equal_nan=True, err_msg=what)

def check(tm, pm, inputs, call=None, atol=1e-5, rtol=1e-4, grad=True, grad_inputs=True):
  """Same parameters and inputs (numpy arrays become Tensors, float ones requiring grad; anything else is passed as it
  is): compare every output, then the gradients of the float inputs and of every parameter for sum(out_i * u_i)."""
  call = call or (lambda m, *xs: m(*xs))
  sd = sync(tm, pm)
  pm.eval()
  rg = [grad and grad_inputs and isinstance(x, np.ndarray) and x.dtype.kind == "f" for x in inputs]
  tx = [Tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  px = [torch.tensor(x, requires_grad=r) if isinstance(x, np.ndarray) else x for x, r in zip(inputs, rg)]
  outs, refs = _flat(call(tm, *tx)), _flat(call(pm, *px))
  assert len(outs) == len(refs), f"teeny gave {len(outs)} outputs, torch {len(refs)}"
  for i, (o, r) in enumerate(zip(outs, refs)):
    assert (o is None) == (r is None), f"output {i}: teeny {o!r} vs torch {r!r}"
    if o is None: continue
    assert o.dtype == getattr(dtypes, str(r.dtype).split(".")[-1]), f"output {i} dtype {o.dtype} vs torch {r.dtype}"
  if grad:
    tl, pl = None, None
    for i, (o, r) in enumerate(zip(outs, refs)):
      if o is None or not r.requires_grad: continue
      u = _rand(tuple(r.shape), seed=100 + i)
      tl = (o * Tensor(u)).sum() if tl is None else tl + (o * Tensor(u)).sum()
      pl = (r * torch.tensor(u)).sum() if pl is None else pl + (r * torch.tensor(u)).sum()
    if tl is not None:
      tl.backward()
      pl.backward()
  for i, (o, r) in enumerate(zip(outs, refs)):
    if o is not None: _close(o, r, f"output {i}", atol, rtol)
  if not grad: return outs
  for i, (t, p) in enumerate(zip(tx, px)):
    if isinstance(p, torch.Tensor) and p.requires_grad and p.grad is not None:
      assert t.grad is not None, f"input {i} got no gradient"
      _close(t.grad, p.grad, f"grad of input {i}", atol * 10, rtol * 10)
  named = dict(pm.named_parameters())
  for k, t in sd.items():
    if named[k].grad is not None:
      assert t.grad is not None, f"parameter {k} got no gradient"
      _close(t.grad, named[k].grad, f"grad of {k}", atol * 10, rtol * 10)
  return outs

# ***** construction: keys, shapes, init *****

@pytest.mark.parametrize("mode,kw", [("RNN", {}), ("RNN", dict(num_layers=2, bidirectional=True, bias=False)),
                                     ("LSTM", dict(num_layers=3)), ("LSTM", dict(proj_size=2, bidirectional=True,
                                                                                 num_layers=2)),
                                     ("GRU", dict(bidirectional=True))])
def test_rnn_keys_shapes_and_init(mode, kw):
  tm, pm = T[mode][0](4, 3, **kw), T[mode][1](4, 3, **kw)
  sd = get_state_dict(tm)
  assert list(sd) == list(pm.state_dict())
  assert [tuple(t.shape) for t in sd.values()] == [tuple(t.shape) for t in pm.state_dict().values()]
  assert all(t.requires_grad and t.dtype == dtypes.float32 for t in sd.values())
  assert len(tm.all_weights) == len(pm.all_weights)
  assert repr(tm) == repr(pm)
  if not is_null():
    vals = np.concatenate([t.numpy().ravel() for t in sd.values()])
    assert np.abs(vals).max() <= 1 / math.sqrt(3) and vals.std() > 0.2   # uniform(-1/sqrt(h), 1/sqrt(h))

@pytest.mark.parametrize("name", list(CELLS))
def test_cell_keys(name):
  tm, pm = CELLS[name][0](5, 2), CELLS[name][1](5, 2)
  assert list(get_state_dict(tm)) == list(pm.state_dict())
  assert list(get_state_dict(CELLS[name][0](5, 2, bias=False))) == list(CELLS[name][1](5, 2, bias=False).state_dict())
  assert repr(tm) == repr(pm)

# ***** cells *****

@needs_values
@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", {}),
                                     ("GRUCell", {}), ("GRUCell", dict(bias=False))])
def test_cells_match_torch(name, kw):
  tm, pm = CELLS[name][0](4, 3, **kw), CELLS[name][1](4, 3, **kw)
  x, h = _rand((2, 4)), _rand((2, 3), 1)
  if name == "LSTMCell":
    check(tm, pm, [x, h, _rand((2, 3), 2)], call=lambda m, x, h, c: m(x, (h, c)))
  else:
    check(tm, pm, [x, h])
  check(tm, pm, [_rand((4,), 3)])   # unbatched, hx None (zeros)

@needs_values
def test_cell_steps_chain():
  """Three steps of an LSTMCell by hand: gradients flow back through the state."""
  tm, pm = LSTMCell(3, 2), torch.nn.LSTMCell(3, 2)
  def run(m, x):
    hc = None
    outs = []
    for t in range(3):
      hc = m(x[t], hc)
      outs.append(hc[0])
    return outs
  check(tm, pm, [_rand((3, 2, 3))], call=run)

# ***** multi-layer *****

@needs_values
@pytest.mark.parametrize("mode,kw", [
  ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2, batch_first=True)),
  ("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(bias=False, batch_first=True)),
  ("GRU", {}), ("GRU", dict(bidirectional=True, batch_first=True))])
def test_rnn_matches_torch(mode, kw):
  tm, pm = T[mode][0](3, 2, **kw), T[mode][1](3, 2, **kw)
  L = 2 if kw.get("num_layers", 1) > 1 else 3   # (each step of each layer is kernels of its own: keep it short)
  check(tm, pm, [_rand((2, L, 3) if kw.get("batch_first") else (L, 2, 3))])

@needs_values
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_rnn_given_initial_state(mode):
  tm, pm = T[mode][0](3, 2, num_layers=2), T[mode][1](3, 2, num_layers=2)
  x, h0 = _rand((3, 2, 3)), _rand((2, 2, 2), 1)
  if mode == "LSTM": check(tm, pm, [x, h0, _rand((2, 2, 2), 2)], call=lambda m, x, h, c: m(x, (h, c)))
  else: check(tm, pm, [x, h0])

@needs_values
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_rnn_unbatched(mode):
  tm, pm = T[mode][0](3, 2, bidirectional=True), T[mode][1](3, 2, bidirectional=True)
  outs = check(tm, pm, [_rand((4, 3))])
  assert tuple(outs[0].shape) == (4, 4) and tuple(outs[1].shape) == (2, 2)
  h0 = _rand((2, 2), 1)
  if mode == "LSTM": check(tm, pm, [_rand((4, 3)), h0, _rand((2, 2), 2)], call=lambda m, x, h, c: m(x, (h, c)))
  else: check(tm, pm, [_rand((4, 3)), h0])

@needs_values
def test_lstm_proj_size():
  tm, pm = LSTM(3, 4, proj_size=2, bidirectional=True), torch.nn.LSTM(3, 4, proj_size=2, bidirectional=True)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # torch: projections are not supported with oneDNN
    outs = check(tm, pm, [_rand((3, 2, 3)), _rand((2, 2, 2), 1), _rand((2, 2, 4), 2)],
                 call=lambda m, x, h, c: m(x, (h, c)))
  assert [tuple(o.shape) for o in outs] == [(3, 2, 4), (2, 2, 2), (2, 2, 4)]

@needs_values
def test_rnn_non_contiguous_input_and_single_step():
  tm, pm = GRU(3, 2, batch_first=True), torch.nn.GRU(3, 2, batch_first=True)
  check(tm, pm, [_rand((3, 2, 3))], call=lambda m, x: m(x.transpose(0, 1)))    # (2, 3, 3) view
  check(tm, pm, [_rand((1, 3, 3))])   # L = 1 (batch_first: (N=1, L=3)); and one step:
  check(tm, pm, [_rand((2, 1, 3))])

@needs_values
def test_rnn_empty_batch():
  tm, pm = LSTM(3, 2), torch.nn.LSTM(3, 2)
  check(tm, pm, [_rand((2, 0, 3))], grad=False)

@needs_values
def test_rnn_float16():
  tm, pm = LSTM(3, 2, dtype=dtypes.float16), torch.nn.LSTM(3, 2).half()
  outs = check(tm, pm, [_rand((3, 2, 3), dtype=np.float16)], atol=2e-3, rtol=2e-2, grad=False)
  assert outs[0].dtype == dtypes.float16

@needs_values
def test_rnn_dropout_only_while_training():
  kw = dict(num_layers=2, dropout=1.0)
  tm, pm = RNN(3, 2, **kw), torch.nn.RNN(3, 2, **kw)
  check(tm, pm, [_rand((3, 2, 3))])   # eval: no dropout
  x = Tensor(_rand((3, 2, 3)))
  with Tensor.train(): out, h = tm(x)
  # dropout 1 zeroes the second layer's input: its output is that layer run over zeros
  p2 = torch.nn.RNN(2, 2)
  p2.load_state_dict({k.replace("l1", "l0"): v for k, v in pm.state_dict().items() if "l1" in k})
  ref, _ = p2(torch.zeros(3, 2, 2))
  _close(out, ref, "output with dropout 1", 1e-5, 1e-4)

@needs_values
@HSET
@given(mode=st.sampled_from(["RNN", "LSTM", "GRU"]), hin=st.integers(1, 3), hid=st.integers(1, 3),
       L=st.integers(1, 3), N=st.integers(1, 2), layers=st.integers(1, 2), bidir=st.booleans(),
       batch_first=st.booleans(), bias=st.booleans())
def test_rnn_property(mode, hin, hid, L, N, layers, bidir, batch_first, bias):
  kw = dict(num_layers=layers, bidirectional=bidir, batch_first=batch_first, bias=bias)
  tm, pm = T[mode][0](hin, hid, **kw), T[mode][1](hin, hid, **kw)
  check(tm, pm, [_rand((N, L, hin) if batch_first else (L, N, hin), seed=L * 7 + N)])

# ***** rnn errors *****

def test_rnn_errors():
  m = LSTM(4, 3)
  with pytest.raises(RuntimeError, match="input_size. Expected 4, got 6"): m(Tensor.zeros(5, 2, 6))
  with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"): m(Tensor.zeros(5, 2, 4, 1))
  with pytest.raises(RuntimeError, match="sequence length to be larger than 0"): m(Tensor.zeros(0, 2, 4))
  with pytest.raises(ValueError, match="input dtype .*int32.* does not match weight dtype"):
    m(Tensor.zeros(5, 2, 4, dtype=dtypes.int32))
  with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 3\), got \[1, 3, 3\]"):
    m(Tensor.zeros(5, 2, 4), (Tensor.zeros(1, 3, 3), Tensor.zeros(1, 2, 3)))
  with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 3\), got \[1, 2, 4\]"):
    m(Tensor.zeros(5, 2, 4), (Tensor.zeros(1, 2, 3), Tensor.zeros(1, 2, 4)))
  with pytest.raises(RuntimeError, match="hx and cx should also be 3-D but got"):
    m(Tensor.zeros(5, 2, 4), (Tensor.zeros(2, 3), Tensor.zeros(1, 2, 3)))
  with pytest.raises(TypeError, match="tuple"): m(Tensor.zeros(5, 2, 4), Tensor.zeros(1, 2, 3))
  r = GRU(4, 3)
  with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"):
    r(Tensor.zeros(5, 2, 4), Tensor.zeros(1, 3, 3))
  with pytest.raises(RuntimeError, match="unbatched 2-D input, hidden should also be 2-D"):
    r(Tensor.zeros(5, 4), Tensor.zeros(1, 1, 3))
  with pytest.raises(ValueError, match="Unknown nonlinearity 'foo'"): RNN(4, 3, nonlinearity="foo")
  with pytest.raises(ValueError, match="hidden_size must be greater than zero"): RNN(4, 0)
  with pytest.raises(ValueError, match="num_layers must be greater than zero"): RNN(4, 3, num_layers=0)
  with pytest.raises(ValueError, match="dropout should be a number in range"): RNN(4, 3, dropout=2)
  with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"): RNN(4, 3, dropout=0.5)
  with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"): GRU(4, 3, proj_size=2)
  with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"): LSTM(4, 3, proj_size=3)
  with pytest.raises(ValueError, match="proj_size should be a positive integer or zero"): LSTM(4, 3, proj_size=-1)

def test_cell_errors():
  c = LSTMCell(4, 3)
  with pytest.raises(RuntimeError, match="inconsistent input_size: got 5 expected 4"): c(Tensor.zeros(2, 5))
  with pytest.raises(ValueError, match="Expected input to be 1D or 2D, got 3D"): c(Tensor.zeros(2, 2, 4))
  with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
    c(Tensor.zeros(2, 4), (Tensor.zeros(3, 3), Tensor.zeros(2, 3)))
  with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 4, expected 3"):
    c(Tensor.zeros(2, 4), (Tensor.zeros(2, 3), Tensor.zeros(2, 4)))
  g = GRUCell(4, 3)
  with pytest.raises(ValueError, match="Expected hidden to be 1D or 2D, got 3D"): g(Tensor.zeros(2, 4),
                                                                                  Tensor.zeros(2, 2, 3))
  with pytest.raises(RuntimeError, match="1-D input, hidden0 must be 1-D too"): g(Tensor.zeros(4), Tensor.zeros(2, 3))
  with pytest.raises(RuntimeError, match="dtype"): g(Tensor.zeros(2, 4, dtype=dtypes.int32))
  with pytest.raises(ValueError, match="Unknown nonlinearity 'x'"): RNNCell(4, 3, nonlinearity="x")

def test_rnn_shapes_build_lazily():
  """Shapes and dtypes (also under DEV=NULL, which runs nothing): forward and backward build and realize."""
  m = LSTM(3, 2, num_layers=2, bidirectional=True, batch_first=True)
  x = Tensor(_rand((2, 3, 3)), requires_grad=True)
  out, (h, c) = m(x)
  assert (tuple(out.shape), tuple(h.shape), tuple(c.shape)) == ((2, 3, 4), (4, 2, 2), (4, 2, 2))
  (out.sum() + c.sum()).backward()
  assert x.grad is not None and tuple(x.grad.shape) == (2, 3, 3)
  Tensor.realize(x.grad, m.weight_hh_l1_reverse.grad)

# ***** multi-head attention *****

@pytest.mark.parametrize("kw", [{}, dict(bias=False), dict(kdim=3, vdim=5), dict(kdim=3, vdim=5, bias=False),
                                dict(add_bias_kv=True)])
def test_mha_keys(kw):
  assert list(get_state_dict(MultiheadAttention(8, 2, **kw))) == list(torch.nn.MultiheadAttention(8, 2, **kw)
                                                                     .state_dict())

def _mha_call(kpm=None, am=None, **kw):
  def call(m, q, k, v):
    wrap = Tensor if isinstance(q, Tensor) else torch.tensor
    return m(q, k, v, key_padding_mask=None if kpm is None else wrap(kpm),
             attn_mask=None if am is None else wrap(am), **kw)
  return call

KPM = np.array([[False, False, True, False], [False, True, True, False]])
AM_BOOL = np.triu(np.ones((3, 4), bool), 2)

@needs_values
@pytest.mark.parametrize("case", ["plain", "no_weights", "per_head", "batch_first", "kpm", "kpm_float", "am_bool",
                                  "am_float3d", "both", "causal_hint", "kdim_vdim", "bias_kv_zero_attn", "no_bias"])
def test_mha_matches_torch(case):
  kw, mk, call = {}, {}, _mha_call()
  q, k, v = _rand((3, 2, 8)), _rand((4, 2, 8), 1), _rand((4, 2, 8), 2)
  if case == "no_weights": call = _mha_call(need_weights=False)
  if case == "per_head": call = _mha_call(average_attn_weights=False)
  if case == "batch_first":
    mk = dict(batch_first=True)
    q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
  if case == "kpm": call = _mha_call(kpm=KPM)
  if case == "kpm_float": call = _mha_call(kpm=np.where(KPM, -2.0, 0.5).astype(np.float32), need_weights=False)
  if case == "am_bool": call = _mha_call(am=AM_BOOL, need_weights=False)
  if case == "am_float3d": call = _mha_call(am=_rand((4, 3, 4), 5))
  if case == "both": call = _mha_call(kpm=KPM, am=AM_BOOL, need_weights=False)
  if case == "causal_hint":
    k, v = _rand((3, 2, 8), 1), _rand((3, 2, 8), 2)
    call = _mha_call(am=np.triu(np.ones((3, 3), bool), 1), is_causal=True, need_weights=False)
  if case == "kdim_vdim":
    mk = dict(kdim=3, vdim=5)
    k, v = _rand((4, 2, 3), 1), _rand((4, 2, 5), 2)
  if case == "bias_kv_zero_attn":
    mk = dict(add_bias_kv=True, add_zero_attn=True)
    call = _mha_call(kpm=KPM, am=AM_BOOL)
  if case == "no_bias": mk = dict(bias=False)
  check(MultiheadAttention(8, 2, **mk), torch.nn.MultiheadAttention(8, 2, **mk), [q, k, v], call=call, **kw)

@needs_values
def test_mha_unbatched_and_self_attention():
  tm, pm = MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2)
  outs = check(tm, pm, [_rand((3, 4)), _rand((5, 4), 1), _rand((5, 4), 2)],
               call=_mha_call(kpm=np.array([False, True, False, False, True])))
  assert [tuple(o.shape) for o in outs] == [(3, 4), (3, 5)]
  check(tm, pm, [_rand((3, 4)), _rand((5, 4), 1), _rand((5, 4), 2)], call=_mha_call(am=_rand((2, 3, 5))))
  check(tm, pm, [_rand((3, 2, 4))], call=lambda m, x: m(x, x, x))   # one tensor as query, key and value
  check(tm, pm, [_rand((2, 3, 4)), _rand((5, 2, 4), 1)], call=lambda m, q, k: m(q.transpose(0, 1), k, k))  # a view

@needs_values
def test_mha_fully_masked_row():
  """A row with every key masked: nan with need_weights (torch's softmax), 0 without (torch's SDPA)."""
  tm, pm = MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2)
  kpm = np.array([[True] * 3, [False] * 3])
  outs = check(tm, pm, [_rand((2, 2, 4)), _rand((3, 2, 4), 1), _rand((3, 2, 4), 2)], call=_mha_call(kpm=kpm),
               grad=False)
  assert np.isnan(outs[0].numpy()[:, 0]).all()
  outs = check(tm, pm, [_rand((2, 2, 4)), _rand((3, 2, 4), 1), _rand((3, 2, 4), 2)],
               call=_mha_call(kpm=kpm, need_weights=False))
  assert (outs[0].numpy()[:, 0] == 0).all()

@needs_values
@HSET
@given(E=st.sampled_from([2, 4, 6]), H=st.sampled_from([1, 2]), L=st.integers(1, 3), S=st.integers(1, 3),
       N=st.integers(1, 2), need_weights=st.booleans(), batch_first=st.booleans(), masked=st.booleans())
def test_mha_property(E, H, L, S, N, need_weights, batch_first, masked):
  kpm = np.zeros((N, S), bool)
  if masked and S > 1: kpm[:, -1] = True
  q, k, v = _rand((L, N, E)), _rand((S, N, E), 1), _rand((S, N, E), 2)
  if batch_first: q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
  check(MultiheadAttention(E, H, batch_first=batch_first), torch.nn.MultiheadAttention(E, H, batch_first=batch_first),
        [q, k, v], call=_mha_call(kpm=kpm if masked else None, need_weights=need_weights))

def test_mha_errors():
  m = MultiheadAttention(8, 2)
  q = Tensor.zeros(3, 2, 8)
  with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads"): MultiheadAttention(8, 3)
  with pytest.raises(RuntimeError, match=r"2D attn_mask is \(3, 4\), but should be \(3, 3\)"):
    m(q, q, q, attn_mask=Tensor.zeros(3, 4))
  with pytest.raises(RuntimeError, match=r"3D attn_mask is \(5, 3, 3\), but should be \(4, 3, 3\)"):
    m(q, q, q, attn_mask=Tensor.zeros(5, 3, 3))
  with pytest.raises(ValueError, match="only bool and floating types of attn_mask"):
    m(q, q, q, attn_mask=Tensor.zeros(3, 3, dtype=dtypes.int32))
  with pytest.raises(ValueError, match=r"key_padding_mask of shape \(2, 3\).*got \(2, 4\)"):
    m(q, q, q, key_padding_mask=Tensor.zeros(2, 4, dtype=dtypes.bool))
  with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"): m(q, q, q, is_causal=True)
  with pytest.raises(ValueError, match="expecting embedding dimension of 8, but got 7"): m(Tensor.zeros(3, 2, 7), q, q)
  with pytest.raises(ValueError, match="kdim=8 and vdim=8, got 7 and 7"): m(q, Tensor.zeros(3, 2, 7),
                                                                           Tensor.zeros(3, 2, 7))
  with pytest.raises(ValueError, match="same sequence length"): m(q, Tensor.zeros(4, 2, 8), q)
  with pytest.raises(ValueError, match="expected `key` and `value` to be 2-D"): m(Tensor.zeros(3, 8), q, q)
  with pytest.raises(ValueError, match="unbatched 2D or batched 3D"): m(Tensor.zeros(1, 3, 2, 8), q, q)
  with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
    m(q, q, q, key_padding_mask=Tensor.zeros(2, 3, dtype=dtypes.bool), attn_mask=Tensor.zeros(3, 3))

# ***** transformer layers *****

def _layer_pair(cls, tcls, **kw):
  kw.setdefault("dropout", 0.0)
  return cls(8, 2, 16, **kw), tcls(8, 2, 16, **kw)

@needs_values
@pytest.mark.parametrize("kw", [{}, dict(activation="gelu", norm_first=True), dict(batch_first=True, bias=False),
                                dict(activation="callable", layer_norm_eps=1e-3)])
def test_encoder_layer_matches_torch(kw):
  if kw.get("activation") == "callable":   # any callable, as torch's
    tm = TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=Tensor.tanh, layer_norm_eps=1e-3)
    pm = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=torch.tanh, layer_norm_eps=1e-3)
  else: tm, pm = _layer_pair(TransformerEncoderLayer, torch.nn.TransformerEncoderLayer, **kw)
  src = _rand((2, 3, 8))
  kpm = np.array([[False, False, True], [False, False, False]]) if kw.get("batch_first") else \
    np.array([[False, True], [False, False], [True, False]])
  mask = np.triu(np.ones((3, 3) if kw.get("batch_first") else (2, 2), bool), 1)
  check(tm, pm, [src])
  if not kw: check(tm, pm, [_rand((3, 8), 1)])   # unbatched (L, E)
  def call(m, x):
    wrap = Tensor if isinstance(x, Tensor) else torch.tensor
    return m(x, src_mask=wrap(mask), src_key_padding_mask=wrap(kpm))
  check(tm, pm, [src], call=call)

@needs_values
@pytest.mark.parametrize("kw", [{}, dict(norm_first=True, activation="gelu"), dict(batch_first=True)])
def test_decoder_layer_matches_torch(kw):
  tm, pm = _layer_pair(TransformerDecoderLayer, torch.nn.TransformerDecoderLayer, **kw)
  S, L, N = 4, 3, 2
  tgt, mem = (_rand((N, L, 8)), _rand((N, S, 8), 1)) if kw.get("batch_first") else \
    (_rand((L, N, 8)), _rand((S, N, 8), 1))
  causal = np.triu(np.ones((L, L), bool), 1)
  mkpm = np.zeros((N, S), bool)
  mkpm[0, -1] = True
  def call(m, t, mm):
    wrap = Tensor if isinstance(t, Tensor) else torch.tensor
    return m(t, mm, tgt_mask=wrap(causal), memory_key_padding_mask=wrap(mkpm), tgt_is_causal=True)
  check(tm, pm, [tgt, mem], call=call)

@needs_values
def test_encoder_decoder_stacks_match_torch():
  el, pel = _layer_pair(TransformerEncoderLayer, torch.nn.TransformerEncoderLayer)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # torch: nested tensors need batch_first
    tm, pm = TransformerEncoder(el, 2, norm=nn.LayerNorm(8)), torch.nn.TransformerEncoder(pel, 2,
                                                                                        norm=torch.nn.LayerNorm(8))
  # the copies start equal to the layer but are separate parameters
  assert tm.layers[0].linear1.weight is not tm.layers[1].linear1.weight is not el.linear1.weight
  if not is_null(): np.testing.assert_array_equal(tm.layers[0].linear1.weight.numpy(), el.linear1.weight.numpy())
  check(tm, pm, [_rand((3, 2, 8))])
  dl, pdl = _layer_pair(TransformerDecoderLayer, torch.nn.TransformerDecoderLayer)
  tm = TransformerDecoder(dl, 1, norm=nn.LayerNorm(8))
  pm = torch.nn.TransformerDecoder(pdl, 1, norm=torch.nn.LayerNorm(8))
  check(tm, pm, [_rand((2, 2, 8)), _rand((3, 2, 8), 1)])

@needs_values
def test_transformer_matches_torch():
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    tm, pm = Transformer(8, 2, 1, 1, 16, dropout=0.0), torch.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
  w = tm.encoder.layers[0].linear1.weight.numpy()   # xavier init: bound sqrt(6 / (16 + 8))
  assert np.abs(w).max() <= math.sqrt(6 / 24) and np.abs(w).max() > 0.3
  mask = Transformer.generate_square_subsequent_mask(3)
  _close(mask, torch.nn.Transformer.generate_square_subsequent_mask(3), "causal mask", 0, 0)
  def call(m, s, t):
    wrap = Tensor if isinstance(s, Tensor) else torch.tensor
    kpm = np.array([[False] * 4, [False] * 3 + [True]])
    return m(s, t, tgt_mask=wrap(mask.numpy()), src_key_padding_mask=wrap(kpm))
  check(tm, pm, [_rand((4, 2, 8)), _rand((3, 2, 8), 1)], call=call)

def test_transformer_errors():
  with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
    TransformerEncoderLayer(8, 2, activation="tanh")
  with pytest.raises(ValueError, match="divisible by num_heads"): TransformerEncoderLayer(8, 3)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = Transformer(8, 2, 1, 1, 16)
  with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
    m(Tensor.zeros(3, 2, 8), Tensor.zeros(3, 3, 8))
  with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to d_model"):
    m(Tensor.zeros(3, 2, 8), Tensor.zeros(3, 2, 4))

def test_transformer_keys_and_training_dropout():
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    tm, pm = Transformer(8, 2, 2, 1, 16, norm_first=True, bias=False), \
      torch.nn.Transformer(8, 2, 2, 1, 16, norm_first=True, bias=False)
  assert list(get_state_dict(tm)) == list(pm.state_dict())
  layer = TransformerEncoderLayer(8, 2, 16, dropout=0.5)
  x = Tensor(_rand((3, 2, 8)))
  a = layer(x)
  with Tensor.train(): b = layer(x)
  assert tuple(a.shape) == tuple(b.shape) == (3, 2, 8)
  if not is_null(): assert not np.allclose(a.numpy(), b.numpy())   # dropout acts only while training

def test_lstm_kernels_do_not_grow_with_sequence_length():
  """Each step's state has a buffer of its own and no step reads another's at an offset: fused across steps, every
  kernel recomputed all earlier steps (kernels growing with T; an LSTM of 64 steps took minutes to run) and no two
  steps shared a kernel. Only the small per-step copies of the first layer's input part depend on T."""
  def kernels(T: int):
    m = LSTM(4, 8, num_layers=2)
    out, (h, c) = m(Tensor.ones(T, 2, 4))
    items = [it for it in h.schedule(c) if it.kind == "kernel"]   # (not out: its stack reads all T steps)
    return len({it.ast for it in items}), max(len(list(it.ast.toposort)) for it in items)
  (n6, big6), (n12, big12) = kernels(6), kernels(12)
  assert big12 == big6 and n12 - n6 <= 6
