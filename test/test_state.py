"""State dicts, strict loading, the safetensors format (against the safetensors package) and the data set loaders."""
import gzip, json, os, struct
import numpy as np
import pytest
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_metadata, safe_save
from helpers import needs_values

class Block:
  def __init__(self):
    self.conv = nn.Conv2d(2, 3, 3)
    self.norm = nn.BatchNorm(3)
class Model:
  def __init__(self):
    self.blocks = [Block(), Block()]
    self.heads = {"cls": nn.Linear(4, 2), "reg": nn.Linear(4, 1, bias=False)}
    self.name, self.scale = "model", 2.0

def test_state_dict_keys():
  sd = get_state_dict(Model())
  per_block = ("conv.weight", "conv.bias", "norm.weight", "norm.bias", "norm.running_mean", "norm.running_var",
               "norm.num_batches_tracked")
  heads = {"heads.cls.weight", "heads.cls.bias", "heads.reg.weight"}
  assert set(sd) == {f"blocks.{i}.{k}" for i in (0, 1) for k in per_block} | heads
  t = Tensor([1.0])
  assert get_state_dict(t, "x.")["x"] is t and get_state_dict(t)[""] is t

def test_get_parameters_dedup():
  lin = nn.Linear(3, 3)
  tied = {"a": lin, "b": lin.weight}
  assert len(get_state_dict(tied)) == 3 and len(get_parameters(tied)) == 2

def _distinct_state(m, seed: int) -> dict:
  """A value for every key of m's state dict, unlike any initialisation (running stats and counters included)."""
  rng = np.random.default_rng(seed)
  out = {}
  for k, v in get_state_dict(m).items():
    if dtypes.is_float(v.dtype): a = rng.uniform(3, 5, v.shape).astype(v.dtype.np)   # inits are in [-1, 1], 0 or 1
    else: a = rng.integers(5, 100, v.shape).astype(v.dtype.np)
    out[k] = Tensor(a)
  return out

@needs_values
def test_load_state_dict_round_trip():
  """Every key is loaded: a freshly initialised model differs from the source on every key before, matches after."""
  a = Model()
  load_state_dict(a, _distinct_state(a, 0))
  b = Model()
  sa, sb = get_state_dict(a), get_state_dict(b)
  assert len(sa) == 17
  for k in sa:
    assert not np.array_equal(sa[k].numpy(), sb[k].numpy()), f"{k} already matches before loading"
  load_state_dict(b, sa)
  _same(a, b)

def _same(a, b):
  for k, v in get_state_dict(a).items():
    np.testing.assert_array_equal(get_state_dict(b)[k].numpy(), v.numpy(), err_msg=k)

def _snapshot(m): return {k: v.numpy().copy() for k, v in get_state_dict(m).items()}
def _unchanged(m, snap):
  for k, v in get_state_dict(m).items():
    np.testing.assert_array_equal(v.numpy(), snap[k], err_msg=f"{k} changed by a failed load")

@needs_values
def test_load_state_dict_strict_errors():
  src, dst = get_state_dict(Model()), Model()
  snap = _snapshot(dst)
  missing = {k: v for k, v in src.items() if k != "heads.cls.bias"}
  with pytest.raises(KeyError, match="heads.cls.bias"): load_state_dict(dst, missing)
  _unchanged(dst, snap)
  extra = {**src, "heads.extra.weight": Tensor.zeros(2)}
  with pytest.raises(KeyError, match="heads.extra.weight"): load_state_dict(dst, extra)
  _unchanged(dst, snap)
  # the mismatch is on a late key: nothing before it may have been written
  bad = {**src, "heads.reg.weight": Tensor.zeros(2, 4)}
  with pytest.raises(ValueError, match=r"heads.reg.weight.*\(1, 4\).*\(2, 4\)"): load_state_dict(dst, bad)
  _unchanged(dst, snap)
  # strict=False skips what is missing or unexpected, and loads the rest
  loaded = load_state_dict(dst, {**missing, "other": Tensor.zeros(1)}, strict=False)
  assert "heads.cls.bias" not in loaded and "other" not in loaded
  np.testing.assert_array_equal(get_state_dict(dst)["heads.cls.weight"].numpy(), src["heads.cls.weight"].numpy())
  np.testing.assert_array_equal(get_state_dict(dst)["heads.cls.bias"].numpy(), snap["heads.cls.bias"])

# ***** safetensors *****

st = pytest.importorskip("safetensors")
from safetensors.numpy import load_file as np_load_file, save_file as np_save_file  # noqa: E402

ARRAYS = {"f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7, "f16": np.linspace(-3, 3, 10).astype(np.float16),
          "i64": np.array([[-(2 ** 40), 5], [7, 2 ** 50]], np.int64), "i32": np.arange(5, dtype=np.int32),
          "u8": np.arange(9, dtype=np.uint8),
          "scalar": np.array(1.5, np.float32), "empty": np.zeros((0, 3), np.float32), "bool": np.array([True, False])}

@needs_values
def test_safetensors_teeny_to_package(tmp_path):
  path = tmp_path / "a.safetensors"
  safe_save({k: Tensor(v) for k, v in ARRAYS.items()}, path, metadata={"format": "pt", "step": "3"})
  got = np_load_file(str(path))
  assert set(got) == set(ARRAYS)
  for k, v in ARRAYS.items():
    assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
    np.testing.assert_array_equal(got[k], v, err_msg=k)
  with st.safe_open(str(path), "np") as f: assert f.metadata() == {"format": "pt", "step": "3"}
  assert safe_metadata(path) == {"format": "pt", "step": "3"}
  (n,) = struct.unpack("<Q", path.read_bytes()[:8])
  assert n % 8 == 0

@needs_values
def test_safetensors_package_to_teeny(tmp_path):
  path = tmp_path / "b.safetensors"
  np_save_file(ARRAYS, str(path), metadata={"k": "v"})
  got = safe_load(path)
  for k, v in ARRAYS.items():
    assert got[k].dtype == dtypes.from_np(v.dtype) and tuple(got[k].shape) == v.shape, k
    np.testing.assert_array_equal(got[k].numpy(), v, err_msg=k)

@needs_values
def test_safetensors_bf16_both_ways(tmp_path):
  torch = pytest.importorskip("torch")
  from safetensors.torch import load_file, save_file
  vals = torch.tensor([[1.0, -2.5, 3.140625], [1e-3, 65504.0, -0.0078125]], dtype=torch.bfloat16)
  save_file({"w": vals, "h": vals.half(), "l": torch.arange(4, dtype=torch.int64)}, str(tmp_path / "t.safetensors"))
  got = safe_load(tmp_path / "t.safetensors")
  assert got["w"].dtype == dtypes.bfloat16 and got["h"].dtype == dtypes.float16 and got["l"].dtype == dtypes.int64
  np.testing.assert_array_equal(got["w"].cast(dtypes.float32).numpy(), vals.float().numpy())
  np.testing.assert_array_equal(got["h"].numpy(), vals.half().numpy())
  safe_save(got, tmp_path / "back.safetensors")
  back = load_file(str(tmp_path / "back.safetensors"))
  assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], vals)
  assert torch.equal(back["l"], torch.arange(4))
  # bit patterns survive exactly, not just the values
  assert (tmp_path / "back.safetensors").read_bytes().count(vals.view(torch.int16).numpy().tobytes()) == 1

@needs_values
def test_safetensors_model_round_trip(tmp_path):
  a, b = Model(), Model()
  safe_save(get_state_dict(a), tmp_path / "m.safetensors")
  load_state_dict(b, safe_load(tmp_path / "m.safetensors"))
  _same(a, b)

@needs_values
def test_safetensors_corrupt(tmp_path):
  good = tmp_path / "good.safetensors"
  safe_save({"a": Tensor(np.arange(64, dtype=np.float32))}, good)
  raw = good.read_bytes()
  cases = {"empty": b"", "short": raw[:5], "header cut": raw[:20], "data cut": raw[:-4],
           "huge header length": struct.pack("<Q", 10 ** 12) + raw[8:],
           "not json": struct.pack("<Q", 8) + b"{oops!!}" + raw[16:],
           "bad dtype": _with_header({"a": {"dtype": "F99", "shape": [64], "data_offsets": [0, 256]}}, raw),
           "bad offsets": _with_header({"a": {"dtype": "F32", "shape": [64], "data_offsets": [0, 200]}}, raw),
           "missing key": _with_header({"a": {"dtype": "F32", "shape": [64]}}, raw),
           "past the end": _with_header({"a": {"dtype": "F32", "shape": [128], "data_offsets": [0, 512]}}, raw)}
  for name, data in cases.items():
    p = tmp_path / f"{name}.safetensors"
    p.write_bytes(data)
    with pytest.raises(ValueError, match=str(p.name).replace(".", r"\.")): safe_load(p)

def _with_header(header: dict, raw: bytes) -> bytes:
  (n,) = struct.unpack("<Q", raw[:8])
  h = json.dumps(header).encode()
  h += b" " * (-len(h) % 8)
  return struct.pack("<Q", len(h)) + h + raw[8 + n:]

@needs_values
def test_safetensors_atomic(tmp_path, monkeypatch):
  path = tmp_path / "w.safetensors"
  safe_save({"old": Tensor([1.0, 2.0])}, path)
  before = path.read_bytes()
  def boom(fd): raise OSError("disk full")
  monkeypatch.setattr(os, "fsync", boom)
  with pytest.raises(OSError, match="disk full"): safe_save({"new": Tensor(np.zeros(1000, np.float32))}, path)
  with pytest.raises(OSError, match="disk full"): safe_save({"new": Tensor([3.0])}, tmp_path / "fresh.safetensors")
  assert sorted(os.listdir(tmp_path)) == ["w.safetensors"], "a failed save left a partial or temporary file"
  assert path.read_bytes() == before

def test_safetensors_bad_metadata(tmp_path):
  with pytest.raises(TypeError, match="metadata"):
    safe_save({"a": Tensor([1.0])}, tmp_path / "x.safetensors", metadata={"a": 1})
  assert not os.listdir(tmp_path)

# ***** data sets *****

def _write_idx(path, arr: np.ndarray, code: int):
  data = struct.pack(">BBBB", 0, 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
  data += arr.astype(arr.dtype.newbyteorder(">")).tobytes()
  with (gzip.open if str(path).endswith(".gz") else open)(path, "wb") as f: f.write(data)

def test_mnist_idx(tmp_path, monkeypatch):
  r = np.random.default_rng(0)
  imgs, labels = r.integers(0, 256, (6, 28, 28)).astype(np.uint8), r.integers(0, 10, 6).astype(np.uint8)
  _write_idx(tmp_path / "train-images-idx3-ubyte.gz", imgs, 0x08)
  _write_idx(tmp_path / "train-labels-idx1-ubyte", labels, 0x08)
  _write_idx(tmp_path / "t10k-images-idx3-ubyte", imgs[:2], 0x08)
  with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"): nn.datasets.mnist(str(tmp_path))
  _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels[:2], 0x08)
  monkeypatch.setenv("MNIST_DIR", str(tmp_path))
  xtr, ytr, xte, yte = nn.datasets.mnist(tensors=False)
  assert xtr.shape == (6, 1, 28, 28) and xtr.dtype == np.float32 and xte.shape == (2, 1, 28, 28)
  np.testing.assert_allclose(xtr[:, 0], imgs / 255.0, rtol=1e-6)
  assert ytr.dtype == np.int32 and (ytr == labels).all() and (yte == labels[:2]).all()
  monkeypatch.delenv("MNIST_DIR")
  with pytest.raises(FileNotFoundError, match="MNIST_DIR"): nn.datasets.mnist()
  (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
  with pytest.raises(ValueError, match="IDX"): nn.datasets.read_idx(str(tmp_path / "bad"))

def test_digits():
  pytest.importorskip("sklearn")
  xtr, ytr, xte, yte = nn.datasets.digits()
  assert xtr.shape == (1437, 1, 8, 8) and xte.shape == (360, 1, 8, 8)
  assert xtr.dtype == np.float32 and ytr.dtype == np.int32
  assert 0.0 <= xtr.min() and xtr.max() <= 1.0 and set(np.unique(yte)) == set(range(10))
  from sklearn.datasets import load_digits
  np.testing.assert_array_equal(yte, load_digits().target[-360:])
  xt, _, _, _ = nn.datasets.digits(tensors=True)
  assert isinstance(xt, Tensor) and tuple(xt.shape) == (1437, 1, 8, 8)
