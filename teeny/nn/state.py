"""State dicts (walk a model's attributes for Tensors) and the safetensors file format."""
from __future__ import annotations
import json, os, struct, tempfile, types
from collections import OrderedDict
import numpy as np
from teeny.tensor import Tensor
from teeny.dtype import DType, dtypes, bf16_bits_to_float32, float32_to_bf16_bits

def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict[str, Tensor]:
  """Every Tensor reachable through attributes, lists, tuples and dicts, keyed by dotted path ("layers.0.weight")."""
  return _walk(obj, prefix, tensor_type, set())

_LEAVES = (str, bytes, int, float, bool, type(None), type, types.ModuleType, types.FunctionType, types.MethodType)

def _walk(obj, prefix: str, tensor_type, seen: set[int]) -> dict[str, Tensor]:
  if isinstance(obj, tensor_type): return {prefix.strip("."): obj}
  if isinstance(obj, _LEAVES): return {}
  if id(obj) in seen: return {}  # cycles (a scheduler holding its optimizer holding ...) are walked once
  seen.add(id(obj))
  if hasattr(obj, "_asdict"): return _walk(obj._asdict(), prefix, tensor_type, seen)  # namedtuple
  if isinstance(obj, OrderedDict): obj = dict(obj)
  if not isinstance(obj, (dict, list, tuple)) and hasattr(obj, "__dict__"): obj = obj.__dict__
  out: dict[str, Tensor] = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): out.update(_walk(x, f"{prefix}{i}.", tensor_type, seen))
  elif isinstance(obj, dict):
    for k, v in obj.items(): out.update(_walk(v, f"{prefix}{k}.", tensor_type, seen))
  return out

def get_parameters(obj) -> list[Tensor]:
  """The distinct Tensors of get_state_dict(obj), in order (a tensor shared by two layers appears once)."""
  return list({id(t): t for t in get_state_dict(obj).values()}.values())

def load_state_dict(model, state_dict: dict[str, Tensor], strict: bool = True, verbose: bool = False) -> list[str]:
  """Copy `state_dict` into the model's tensors. Everything is checked before anything is written, so a failure leaves
  the model untouched. strict=True rejects missing and unexpected keys; shape mismatches always raise. Returns the
  keys that were loaded."""
  model_sd = get_state_dict(model)
  missing = [k for k in model_sd if k not in state_dict]
  unexpected = [k for k in state_dict if k not in model_sd]
  if strict and (missing or unexpected):
    raise KeyError(f"state dict does not match the model: missing keys {missing}, unexpected keys {unexpected}")
  keys = [k for k in model_sd if k in state_dict]
  bad = [f"{k}: model {tuple(model_sd[k].shape)} vs state dict {tuple(state_dict[k].shape)}" for k in keys
         if tuple(model_sd[k].shape) != tuple(state_dict[k].shape)]
  if bad: raise ValueError("shape mismatch in state dict: " + "; ".join(bad))
  targets: dict[int, Tensor] = {}
  for k in keys:
    dst, src = model_sd[k], state_dict[k]
    if src is dst or id(dst) in targets: continue  # a tensor reachable under two names (tied weights) is written once
    if src.device != dst.device: src = src.to(dst.device)
    dst.assign(src.cast(dst.dtype) if src.dtype != dst.dtype else src.contiguous())
    targets[id(dst)] = dst
    if verbose: print(f"loaded {k} {tuple(dst.shape)}")
  if targets: Tensor.realize(*targets.values())
  return keys

# ***** safetensors *****

SAFE_DTYPES: dict[str, DType] = {"F64": dtypes.float64, "F32": dtypes.float32, "F16": dtypes.float16,
                                 "BF16": dtypes.bfloat16, "I64": dtypes.int64, "I32": dtypes.int32, "I16": dtypes.int16,
                                 "I8": dtypes.int8,
                                 "U64": dtypes.uint64, "U32": dtypes.uint32, "U16": dtypes.uint16, "U8": dtypes.uint8,
                                 "BOOL": dtypes.bool}
SAFE_CODES = {v: k for k, v in SAFE_DTYPES.items()}
_MAX_HEADER = 100_000_000  # the safetensors package's limit

def _to_bytes(t: Tensor) -> bytes:
  """The raw little-endian bytes of a tensor (bfloat16 as its 16-bit patterns)."""
  arr = t.numpy()
  if t.dtype == dtypes.bfloat16:  # numpy() gives bfloat16 as float32, which holds every bfloat16 value exactly
    arr = float32_to_bf16_bits(arr.astype(np.float32))
  return np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()

def _from_bytes(buf, dtype: DType, shape: tuple[int, ...]) -> Tensor:
  if dtype == dtypes.bfloat16:  # widening to float32 is exact, and the Tensor rounds it back to the same bits
    return Tensor(bf16_bits_to_float32(np.frombuffer(buf, dtype="<u2").reshape(shape)), dtype=dtypes.bfloat16)
  arr = np.frombuffer(buf, dtype=dtype.np.newbyteorder("<")).reshape(shape).astype(dtype.np)
  return Tensor(arr, dtype=dtype)

def safe_save(tensors: dict[str, Tensor], path: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
  """Write `tensors` as a .safetensors file, atomically: a temp file in the same folder is renamed over `path`."""
  if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
    raise TypeError("safetensors metadata must map str to str")
  header: dict = {"__metadata__": dict(metadata)} if metadata else {}
  blobs, offset = [], 0
  for name, t in tensors.items():
    if not isinstance(name, str) or name == "__metadata__": raise ValueError(f"bad tensor name {name!r}")
    if t.dtype not in SAFE_CODES: raise TypeError(f"safetensors can't store dtype {t.dtype} (tensor {name!r})")
    data = _to_bytes(t)
    header[name] = {"dtype": SAFE_CODES[t.dtype], "shape": [int(s) for s in t.shape],
                    "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
  hbytes = json.dumps(header, separators=(",", ":")).encode()
  hbytes += b" " * (-len(hbytes) % 8)  # the data must start 8-byte aligned
  path = os.fspath(path)
  fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + ".", dir=os.path.dirname(os.path.abspath(path)))
  try:
    with os.fdopen(fd, "wb") as f:
      f.write(struct.pack("<Q", len(hbytes)))
      f.write(hbytes)
      for b in blobs: f.write(b)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp): os.unlink(tmp)
    raise

def safe_load_metadata(path: str | os.PathLike) -> tuple[dict, int, bytes]:
  """(header, data start offset, whole file); raises ValueError naming what is wrong with the file."""
  with open(path, "rb") as f: raw = f.read()
  if len(raw) < 8: raise ValueError(f"{path}: truncated safetensors file ({len(raw)} bytes, no header length)")
  (n,) = struct.unpack("<Q", raw[:8])
  if n > _MAX_HEADER or 8 + n > len(raw):
    raise ValueError(f"{path}: truncated or corrupt safetensors file (header of {n} bytes, file of {len(raw)} bytes)")
  try: header = json.loads(raw[8:8 + n].decode("utf-8"))
  except (UnicodeDecodeError, json.JSONDecodeError) as e:
    raise ValueError(f"{path}: corrupt safetensors header: {e}") from None
  if not isinstance(header, dict): raise ValueError(f"{path}: corrupt safetensors header: not a JSON object")
  return header, 8 + n, raw

def safe_load(path: str | os.PathLike) -> dict[str, Tensor]:
  """Read a .safetensors file into a dict of Tensors; the file's metadata, if any, is in safe_metadata(path)."""
  header, start, raw = safe_load_metadata(path)
  out: dict[str, Tensor] = {}
  data_len = len(raw) - start
  for name, info in header.items():
    if name == "__metadata__": continue
    try: code, shape, (b, e) = info["dtype"], tuple(int(s) for s in info["shape"]), info["data_offsets"]
    except (KeyError, TypeError, ValueError):
      raise ValueError(f"{path}: corrupt safetensors entry for {name!r}: {info!r}") from None
    if code not in SAFE_DTYPES: raise ValueError(f"{path}: tensor {name!r} has unsupported dtype {code!r}")
    dt = SAFE_DTYPES[code]
    n = 1
    for s in shape: n *= s
    if not (isinstance(b, int) and isinstance(e, int) and 0 <= b <= e) or e - b != n * dt.itemsize:
      raise ValueError(f"{path}: tensor {name!r}: data_offsets {[b, e]} don't fit shape {list(shape)} of {code}")
    if e > data_len:
      raise ValueError(f"{path}: truncated safetensors file: tensor {name!r} ends at {e}, data has {data_len} bytes")
    out[name] = _from_bytes(raw[start + b:start + e], dt, shape)
  return out

def safe_metadata(path: str | os.PathLike) -> dict[str, str]:
  """The "__metadata__" strings of a .safetensors file ({} when it has none)."""
  return dict(safe_load_metadata(path)[0].get("__metadata__", {}) or {})
