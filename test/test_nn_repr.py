"""print(layer) for teeny's layers against torch's for the same arguments (torch's extra_repr text), the containers
printing their children, and BatchNorm1d/2d as classes of their own (names, state_dict keys, input-dim checks)."""
import re
import numpy as np
import pytest
import torch
import teeny.nn as nn
from teeny import Tensor
from helpers import compare_torch, raises_like_torch

# (class name, args, kwargs); numpy arrays become a Tensor for teeny and a torch tensor for torch
W = np.ones(3, np.float32)
LAYERS = [
  ("Conv1d", (2, 4, 3), {}), ("Conv2d", (3, 8, 3), {"stride": 2, "padding": 1, "bias": False}),
  ("Conv2d", (4, 8, (3, 5)), {"dilation": 2, "groups": 2, "padding_mode": "reflect"}),
  ("Conv2d", (3, 8, 3), {"padding": "same"}), ("Conv3d", (2, 4, 3), {"padding": (1, 0, 1)}),
  ("ConvTranspose1d", (2, 4, 3), {}),
  ("ConvTranspose2d", (4, 8, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "bias": False}),
  ("ConvTranspose3d", (2, 4, 3), {"dilation": 2}),
  ("BatchNorm1d", (4,), {}), ("BatchNorm2d", (4,), {"eps": 1e-3, "momentum": None, "affine": False,
                                                    "track_running_stats": False}), ("BatchNorm3d", (4,), {}),
  ("RMSNorm", (4,), {}), ("RMSNorm", ([2, 3],), {"eps": 1e-5, "elementwise_affine": False}),
  ("GroupNorm", (2, 4), {}), ("GroupNorm", (2, 4), {"eps": 1e-3, "affine": False}),
  ("Embedding", (10, 3), {}), ("Embedding", (10, 3), {"padding_idx": 1}),
  ("Identity", (), {}), ("Flatten", (), {}), ("Flatten", (0, 2), {}), ("Unflatten", (1, (2, 3)), {}),
  ("Dropout", (), {}), ("Dropout", (0.2, True), {}), ("Dropout1d", (), {}), ("Dropout2d", (0.3,), {}),
  ("Dropout3d", (), {}), ("FeatureAlphaDropout", (0.1,), {}), ("AlphaDropout", (0.2,), {}),
  ("ReLU", (), {}), ("ReLU", (True,), {}), ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("LeakyReLU", (0.2,), {}),
  ("LeakyReLU", (), {"inplace": True}), ("RReLU", (0.1, 0.3), {}), ("RReLU", (), {"inplace": True}),
  ("PReLU", (), {}), ("PReLU", (3, 0.1), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
  ("SiLU", (True,), {}), ("Mish", (), {}), ("Mish", (True,), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
  ("LogSigmoid", (), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}), ("Softplus", (), {}), ("Softplus", (2, 10), {}),
  ("ELU", (), {}), ("ELU", (0.5, True), {}), ("CELU", (0.5,), {}), ("CELU", (), {"inplace": True}), ("SELU", (), {}),
  ("SELU", (True,), {}), ("Hardtanh", (), {}), ("Hardtanh", (-2, 2, True), {}), ("Hardsigmoid", (), {}),
  ("Hardsigmoid", (True,), {}), ("Hardswish", (), {}), ("Hardswish", (True,), {}), ("Threshold", (0.1, 20), {}),
  ("Threshold", (0.1, 20, True), {}), ("Hardshrink", (), {}), ("Softshrink", (0.3,), {}), ("GLU", (), {}),
  ("GLU", (1,), {}), ("Softmax", (1,), {}), ("Softmax", (), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}),
  ("Softmax2d", (), {}),
  ("MaxPool1d", (2,), {}), ("MaxPool2d", (3, 2, 1, 2, True, True), {}), ("MaxPool2d", ((2, 3),), {}),
  ("MaxPool3d", (2,), {}), ("MaxUnpool1d", (2,), {}), ("MaxUnpool2d", (2, 1, 1), {}), ("MaxUnpool3d", (2,), {}),
  ("MaxUnpool2d", ((2, 3),), {}),
  ("AvgPool1d", (3,), {}), ("AvgPool1d", (3, 2, 1, True, False), {}), ("AvgPool2d", (2,), {}),
  ("AvgPool2d", (3, 1, 1), {"divisor_override": 2}), ("AvgPool3d", (2,), {}),
  ("AvgPool3d", ((1, 2, 2), None, 0, True), {}),
  ("LPPool1d", (2, 3), {}), ("LPPool2d", (1.5, 2, 1, True), {}), ("LPPool3d", (2, 2), {}),
  ("AdaptiveAvgPool1d", (3,), {}), ("AdaptiveAvgPool2d", ((2, None),), {}), ("AdaptiveAvgPool3d", (2,), {}),
  ("AdaptiveMaxPool1d", (3,), {}), ("AdaptiveMaxPool2d", (2, True), {}), ("AdaptiveMaxPool3d", ((1, 2, 3),), {}),
  ("InstanceNorm1d", (4,), {}), ("InstanceNorm2d", (4,), {"affine": True, "track_running_stats": True}),
  ("InstanceNorm3d", (4,), {"eps": 1e-3, "momentum": None}),
  ("Upsample", (), {"scale_factor": 2}), ("Upsample", (), {"size": (4, 4), "mode": "bilinear", "align_corners": True}),
  ("Upsample", (3,), {}), ("UpsamplingNearest2d", (), {"scale_factor": 2}), ("UpsamplingBilinear2d", (3,), {}),
  ("PixelShuffle", (2,), {}), ("PixelUnshuffle", (2,), {}),
  ("CrossEntropyLoss", (), {}), ("CrossEntropyLoss", (W,), {"label_smoothing": 0.1}), ("NLLLoss", (), {}),
  ("MSELoss", (), {}), ("L1Loss", (), {"reduction": "sum"}), ("SmoothL1Loss", (), {}), ("HuberLoss", (), {}),
  ("KLDivLoss", (), {}), ("BCELoss", (W,), {}), ("BCEWithLogitsLoss", (), {}), ("SoftMarginLoss", (), {}),
  ("HingeEmbeddingLoss", (), {}), ("PoissonNLLLoss", (), {}), ("GaussianNLLLoss", (), {}),
  ("MultiLabelSoftMarginLoss", (), {}), ("MarginRankingLoss", (), {}), ("CosineEmbeddingLoss", (), {}),
  ("TripletMarginLoss", (), {}), ("TripletMarginWithDistanceLoss", (), {}), ("MultiMarginLoss", (), {}),
  ("MultiLabelMarginLoss", (), {}), ("CosineSimilarity", (), {}), ("CosineSimilarity", (0, 1e-6), {}),
  ("PairwiseDistance", (), {}), ("PairwiseDistance", (1.0, 1e-3, True), {}),
  ("ConstantPad1d", (2, 1.5), {}), ("ConstantPad2d", ((1, 2, 3, 4), 0), {}), ("ConstantPad3d", (1, 0.5), {}),
  ("ZeroPad1d", (2,), {}), ("ZeroPad2d", ((1, 1, 2, 0),), {}), ("ZeroPad3d", (1,), {}), ("ReflectionPad1d", (2,), {}),
  ("ReflectionPad2d", ((1, 1, 2, 0),), {}), ("ReflectionPad3d", (1,), {}), ("ReplicationPad1d", (2,), {}),
  ("ReplicationPad2d", (1,), {}), ("ReplicationPad3d", (1,), {}), ("CircularPad1d", (2,), {}),
  ("CircularPad2d", (1,), {}), ("CircularPad3d", (1,), {}),
  ("Bilinear", (2, 3, 4), {}), ("Bilinear", (2, 3, 4), {"bias": False}), ("LocalResponseNorm", (2,), {}),
  ("ChannelShuffle", (2,), {}), ("EmbeddingBag", (10, 3), {}),
  ("EmbeddingBag", (10, 3), {"mode": "sum", "padding_idx": 0}),
  ("Unfold", (2,), {}), ("Unfold", ((2, 3), 1, 1, 2), {}), ("Fold", ((4, 5), 2), {}),
]

def _args(lib, args, kwargs):
  conv = (lambda v: torch.tensor(v) if isinstance(v, np.ndarray) else v) if lib is torch.nn else \
    (lambda v: Tensor(v) if isinstance(v, np.ndarray) else v)
  return tuple(conv(a) for a in args), {k: conv(v) for k, v in kwargs.items()}

def both(name, args=(), kwargs=None):
  ta, tk = _args(nn, args, kwargs or {})
  pa, pk = _args(torch.nn, args, kwargs or {})
  return getattr(nn, name)(*ta, **tk), getattr(torch.nn, name)(*pa, **pk)

def like(t, p) -> str:
  """teeny's text for t as the installed torch prints p: teeny prints torch 2.13's text, where the norm layers have a
  `bias` argument (shown as bias=...); an older torch (2.11 on the H200 machine) has none and prints none."""
  tl, pl = repr(t).split("\n"), repr(p).split("\n")
  if len(tl) != len(pl): return repr(t)
  return "\n".join(a if "bias=" in b else re.sub(r", bias=(True|False)(?=[,)])", "", a) for a, b in zip(tl, pl))

@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LAYERS)])
def test_layer_repr(name, args, kwargs):
  t, p = both(name, args, kwargs)
  assert type(t).__name__ == type(p).__name__
  assert like(t, p) == repr(p) and str(t) == repr(t)

def test_every_layer_covered():
  """Every layer class teeny.nn defines that torch.nn also has is in LAYERS (a new layer needs a repr test)."""
  import inspect
  have = {n for n, _, _ in LAYERS}
  missing = [n for n, c in vars(nn).items() if inspect.isclass(c) and c.__module__ == "teeny.nn" and
             not n.startswith("_") and hasattr(torch.nn, n) and n not in have and
             n not in ("Module", "Parameter", "ParameterList", "ParameterDict", "Sequential", "ModuleList",
                       "ModuleDict")]
  assert not missing, missing

def test_distance_function_child():
  """TripletMarginWithDistanceLoss: torch's default distance is a PairwiseDistance child (printed); a plain function is
  no child, a PairwiseDistance given is."""
  f = lambda a, b: (a - b).abs().sum(-1)
  assert repr(nn.TripletMarginWithDistanceLoss(distance_function=f)) == \
    repr(torch.nn.TripletMarginWithDistanceLoss(distance_function=f)) == "TripletMarginWithDistanceLoss()"
  assert repr(nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(1.0))) == \
    repr(torch.nn.TripletMarginWithDistanceLoss(distance_function=torch.nn.PairwiseDistance(1.0)))

def _net(lib):
  class Net(lib.Module):
    def __init__(self):
      super().__init__()
      self.body = lib.Sequential(lib.Conv2d(1, 2, 3), lib.BatchNorm2d(2), lib.ReLU(True), lib.MaxPool2d(2))
      self.head = lib.ModuleDict({"fc": lib.Linear(4, 2), "ln": lib.LayerNorm(2),
                                  "ln2": lib.LayerNorm([2, 3], bias=False)})
      self.drops = lib.ModuleList([lib.Dropout(0.1), lib.GELU("tanh")])
      self.pad = lib.ZeroPad2d(1)
    def forward(self, x): return x
  return Net()

def test_nested_model_repr():
  """print(model): a Module subclass holding containers of teeny's layers (and nn.layers' Linear / LayerNorm) reads
  as torch's for the same model, and so do the containers printed alone."""
  t, p = _net(nn), _net(torch.nn)
  assert like(t, p) == repr(p)
  assert like(t.body, p.body) == repr(p.body) and like(t.head, p.head) == repr(p.head)
  assert repr(t.drops) == repr(p.drops)
  assert repr(nn.Sequential()) == repr(torch.nn.Sequential())

# ---- BatchNorm1d / BatchNorm2d: classes of their own

def test_batchnorm_classes():
  """BatchNorm1d/2d are subclasses of teeny's BatchNorm named as torch's, with torch's state_dict keys and shapes and
  the same values as torch's (training mode: batch statistics and the running statistics' update)."""
  for name, shape in (("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (2, 3, 2, 2))):
    t, p = both(name, (3,), {"momentum": 0.2})
    assert type(t).__name__ == name and isinstance(t, nn.BatchNorm) and type(t) is not nn.BatchNorm
    shapes = lambda sd: {k: tuple(v.shape) for k, v in sd.items()}
    assert shapes(t.state_dict()) == shapes(p.state_dict())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    p.train()
    def f(m, xx, lib):
      if lib is torch: return m(xx)
      with Tensor.train(): return m(xx)
    compare_torch(lambda xx: (f(t, xx, nn), t.running_mean, t.running_var),
                  lambda xx: (f(p, xx, torch), p.running_mean, p.running_var), [x], grad=False, atol=1e-5)
  assert nn.BatchNorm1d is not nn.BatchNorm2d

@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm1d", (3,)),
                                        ("BatchNorm2d", (2, 3, 4)), ("BatchNorm2d", (2, 3)),
                                        ("BatchNorm3d", (2, 3, 4, 5))])
def test_batchnorm_input_dims(name, shape):
  t, p = both(name, (3,))
  x = np.zeros(shape, np.float32)
  raises_like_torch(lambda: t(Tensor(x)), lambda: p(torch.tensor(x)), ValueError, f"got {len(shape)}D input")

def test_linear_and_layernorm_print_like_torch_on_their_own():
  import torch
  import teeny.nn as tnn
  for t, p in [(tnn.Linear(8, 2), torch.nn.Linear(8, 2)),
               (tnn.Linear(3, 4, bias=False), torch.nn.Linear(3, 4, bias=False)),
               (tnn.LayerNorm(4), torch.nn.LayerNorm(4)),
               (tnn.LayerNorm([2, 3], eps=1e-6, bias=False), torch.nn.LayerNorm([2, 3], eps=1e-6, bias=False))]:
    assert like(t, p) == repr(p)
