"""nn.state.torch_load: files written by torch.save, read without torch, against the tensors torch saved."""
import io, os, pickle, zipfile
import numpy as np
import pytest
from helpers import needs_values
from teeny import Tensor, dtypes, nn
from teeny.nn.state import get_state_dict, load_state_dict, torch_load

torch = pytest.importorskip("torch")
pytestmark = needs_values

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool]

def _np(t): return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()

@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_dtype(tmp_path, dt):
  g = torch.Generator().manual_seed(0)
  t = (torch.randn(3, 4, generator=g) * 50).to(dt)
  torch.save({"t": t}, tmp_path / "a.pt")
  got = torch_load(tmp_path / "a.pt")["t"]
  assert got.dtype == getattr(dtypes, str(dt).split(".")[1]) and got.shape == (3, 4)
  np.testing.assert_array_equal(got.numpy(), _np(t))

def test_views_sharing_a_storage_and_nesting(tmp_path):
  base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
  obj = {"T": base.T, "slice": base[1:, ::2], "base": base, "nested": [base[0], (base[:, 5], {"k": base[2:3]})],
         "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 3), "n": 7, "s": "text"}
  torch.save(obj, tmp_path / "v.pt")
  got = torch_load(tmp_path / "v.pt")
  for k in ("T", "slice", "base", "scalar", "empty"):
    assert got[k].shape == tuple(obj[k].shape), k   # (0-d stays 0-d)
    np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())
  np.testing.assert_array_equal(got["nested"][0].numpy(), base[0].numpy())
  np.testing.assert_array_equal(got["nested"][1][0].numpy(), base[:, 5].numpy())
  np.testing.assert_array_equal(got["nested"][1][1]["k"].numpy(), base[2:3].numpy())
  assert got["n"] == 7 and got["s"] == "text" and isinstance(got["nested"][1], tuple)

def test_a_torch_model_state_dict_loads_into_the_same_teeny_model(tmp_path):
  torch.manual_seed(0)
  tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
                           torch.nn.Linear(4 * 6 * 6, 5))
  tm.eval()
  torch.save(tm.state_dict(), tmp_path / "m.pt")
  mm = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
  sd = torch_load(tmp_path / "m.pt")
  assert list(sd) == list(get_state_dict(mm))
  assert all(sd[k].shape == tuple(v.shape) for k, v in tm.state_dict().items())   # (num_batches_tracked is 0-d)
  load_state_dict(mm, sd)
  x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
  with Tensor.train(False):
    got = mm(Tensor(x)).numpy()
  np.testing.assert_allclose(got, tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)

def test_whole_module_pickles_are_refused_no_code_runs(tmp_path):
  torch.save(torch.nn.Linear(2, 2), tmp_path / "mod.pt")
  with pytest.raises(pickle.UnpicklingError, match="only state dicts and tensors"): torch_load(tmp_path / "mod.pt")
  # a hand-made archive whose pickle calls os.system
  class Evil:
    def __reduce__(self): return (os.system, ("echo pwned",))
  buf = io.BytesIO()
  with zipfile.ZipFile(buf, "w") as z: z.writestr("archive/data.pkl", pickle.dumps(Evil(), protocol=2))
  (tmp_path / "evil.pt").write_bytes(buf.getvalue())
  with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system|nt.system"): torch_load(tmp_path / "evil.pt")

def test_bad_files_name_the_problem(tmp_path):
  torch.save({"t": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
  with pytest.raises(ValueError, match="not a zip archive"): torch_load(tmp_path / "old.pt")
  buf = io.BytesIO()
  with zipfile.ZipFile(buf, "w") as z: z.writestr("x.txt", "hi")
  (tmp_path / "nopkl.pt").write_bytes(buf.getvalue())
  with pytest.raises(ValueError, match="no single data.pkl"): torch_load(tmp_path / "nopkl.pt")

def test_device_argument(tmp_path):
  torch.save({"t": torch.arange(4)}, tmp_path / "d.pt")
  got = torch_load(tmp_path / "d.pt", device="CPU:1")["t"]
  assert got.device == "CPU:1" and got.tolist() == [0, 1, 2, 3]

def test_safe_load_device(tmp_path):
  from teeny.nn.state import safe_load, safe_save
  safe_save({"a": Tensor([1.0, 2.0]), "b": Tensor([1, 2], dtype=dtypes.bfloat16)}, tmp_path / "s.safetensors")
  got = safe_load(tmp_path / "s.safetensors", device="CPU:1")
  assert all(t.device == "CPU:1" for t in got.values()) and got["b"].tolist() == [1.0, 2.0]
