"""Real data sets: MNIST from its IDX files, and scikit-learn's 8x8 digits (shipped with the package, no download)."""
from __future__ import annotations
import gzip, os, struct
from typing import cast
import numpy as np
from numpy.typing import DTypeLike

MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
_IDX_TYPES: dict[int, DTypeLike] = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
                                    0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

def read_idx(path: str) -> np.ndarray:
  """Parse an IDX file (maybe gzipped): magic 0x0000TTNN (TT the type, NN the number of dims), big-endian dims, data."""
  with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f: raw = f.read()
  if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
    raise ValueError(f"{path}: not an IDX file (bad magic {raw[:4].hex()})")
  ndim, dt = raw[3], np.dtype(_IDX_TYPES[raw[2]])
  if len(raw) < 4 + 4 * ndim: raise ValueError(f"{path}: truncated IDX header")
  shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
  n = int(np.prod(shape)) if shape else 1
  data = raw[4 + 4 * ndim:]
  if len(data) != n * dt.itemsize:
    raise ValueError(f"{path}: IDX data is {len(data)} bytes, shape {shape} needs {n * dt.itemsize}")
  return np.frombuffer(data, dtype=dt).reshape(shape).astype(dt.newbyteorder("="))

def _find(folder: str, name: str) -> str | None:
  for cand in (name, name + ".gz", name.replace("-idx", ".idx"), name.replace("-idx", ".idx") + ".gz"):
    if os.path.exists(p := os.path.join(folder, cand)): return p
  return None

def _out(X: np.ndarray, Y: np.ndarray, tensors: bool):
  if not tensors: return X, Y
  from teeny.tensor import Tensor
  return Tensor(X), Tensor(Y)

def mnist(path: str | None = None, tensors: bool = True):
  """(X_train, Y_train, X_test, Y_test): float32 images in [0, 1] of shape (N, 1, 28, 28), int32 labels.

  Reads the four standard IDX files (plain or .gz) from `path`, else from the MNIST_DIR environment variable.
  """
  folder = path or os.environ.get("MNIST_DIR")
  if not folder:
    raise FileNotFoundError("MNIST: give mnist(path=...) or set MNIST_DIR to a folder with the IDX files "
                            f"{', '.join(MNIST_FILES)} (.gz is fine), as published at yann.lecun.com/exdb/mnist")
  found = {name: _find(folder, name) for name in MNIST_FILES}
  if missing := [name for name, p in found.items() if p is None]:
    raise FileNotFoundError(f"MNIST: {folder} lacks {', '.join(missing)} (plain or .gz); download the IDX files of "
                            "the MNIST database (yann.lecun.com/exdb/mnist or any mirror) into that folder")
  xtr, ytr, xte, yte = (read_idx(cast(str, found[name])) for name in MNIST_FILES)  # none missing (checked above)
  if xtr.shape[0] != ytr.shape[0] or xte.shape[0] != yte.shape[0]:
    raise ValueError(f"MNIST: image and label counts differ ({xtr.shape[0]} vs {ytr.shape[0]}, "
                     f"{xte.shape[0]} vs {yte.shape[0]})")
  prep = lambda x: (x.astype(np.float32) / 255.0).reshape(-1, 1, *x.shape[1:])
  return (*_out(prep(xtr), ytr.astype(np.int32), tensors), *_out(prep(xte), yte.astype(np.int32), tensors))

def digits(tensors: bool = False):
  """scikit-learn's load_digits (1797 real 8x8 scans of handwritten digits), split deterministically: the last 20%
  (360 images) are the test set. Returns (X_train, Y_train, X_test, Y_test): float32 images in [0, 1] of shape
  (N, 1, 8, 8) and int32 labels, as numpy arrays (tensors=True for Tensors)."""
  try: from sklearn.datasets import load_digits
  except ImportError:
    raise ImportError("digits() needs scikit-learn, which ships the data set: pip install scikit-learn") from None
  d = load_digits()
  X = (d.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
  Y = d.target.astype(np.int32)
  n_test = -(-len(X) // 5)  # 360 of 1797
  split = len(X) - n_test
  return (*_out(X[:split], Y[:split], tensors), *_out(X[split:], Y[split:], tensors))
