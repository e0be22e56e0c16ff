"""State dicts (walk a model's attributes for Tensors), the safetensors file format, and reading PyTorch's .pt files."""
from __future__ import annotations
import json, os, pickle, struct, tempfile, types, zipfile
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
  the model untouched. strict=True rejects missing and unexpected keys; shape mismatches raise, except one-element
  tensors of shape (1,) and () (torch's 0-d num_batches_tracked vs teeny's old (1,)), which load into the model's shape.
  Each loaded value takes the destination's device and layout: into a tensor sharded over several devices it is split
  the same way (a replicated copy would lose the sharding). Returns the keys that were loaded."""
  model_sd = get_state_dict(model)
  missing = [k for k in model_sd if k not in state_dict]
  unexpected = [k for k in state_dict if k not in model_sd]
  if strict and (missing or unexpected):
    raise KeyError(f"state dict does not match the model: missing keys {missing}, unexpected keys {unexpected}")
  keys = [k for k in model_sd if k in state_dict]
  bad = [f"{k}: model {tuple(model_sd[k].shape)} vs state dict {tuple(state_dict[k].shape)}" for k in keys
         if tuple(model_sd[k].shape) != tuple(state_dict[k].shape)
         and not _scalar_like(tuple(model_sd[k].shape), tuple(state_dict[k].shape))]
  if bad: raise ValueError("shape mismatch in state dict: " + "; ".join(bad))
  targets: dict[int, Tensor] = {}
  for k in keys:
    dst, src = model_sd[k], state_dict[k]
    if src is dst or id(dst) in targets: continue  # a tensor reachable under two names (tied weights) is written once
    if src.shape != dst.shape: src = src.reshape(dst.shape)   # (1,) <-> (), checked above
    src = _placed_like(src, dst)
    dst.assign(src.cast(dst.dtype) if src.dtype != dst.dtype else src.contiguous())
    targets[id(dst)] = dst
    if verbose: print(f"loaded {k} {tuple(dst.shape)}")
  if targets: Tensor.realize(*targets.values())
  return keys

def _scalar_like(a: tuple, b: tuple) -> bool:
  """Shapes (1,) and () (either way round): one element, loadable into each other."""
  return {a, b} == {(1,), ()}

def _placed_like(src: Tensor, dst: Tensor) -> Tensor:
  """src on dst's device(s), split along dst's sharded axis when dst is spread over several devices."""
  if isinstance(dst.device, tuple):
    if src.device == dst.device and src.sharded_axis == dst.sharded_axis: return src
    return src.shard(dst.device, dst.sharded_axis)
  return src if src.device == dst.device else src.to(dst.device)

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

def _from_bytes(buf, dtype: DType, shape: tuple[int, ...], device: str | None = None) -> Tensor:
  if dtype == dtypes.bfloat16:  # widening to float32 is exact, and the Tensor rounds it back to the same bits
    return Tensor(bf16_bits_to_float32(np.frombuffer(buf, dtype="<u2").reshape(shape)), dtype=dtypes.bfloat16,
                  device=device)
  arr = np.frombuffer(buf, dtype=dtype.np.newbyteorder("<")).reshape(shape).astype(dtype.np)
  return Tensor(arr, dtype=dtype, device=device)

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

def safe_load(path: str | os.PathLike, device: str | None = None) -> dict[str, Tensor]:
  """Read a .safetensors file into a dict of Tensors (on `device`: the default device if None); the file's metadata,
  if any, is in safe_metadata(path)."""
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
    out[name] = _from_bytes(raw[start + b:start + e], dt, shape, device)
  return out

def safe_metadata(path: str | os.PathLike) -> dict[str, str]:
  """The "__metadata__" strings of a .safetensors file ({} when it has none)."""
  return dict(safe_load_metadata(path)[0].get("__metadata__", {}) or {})

# ***** PyTorch checkpoints (torch.save's zip format), read without torch *****

# torch's legacy typed-storage class names (what torch.save writes in each storage's persistent id) -> dtype
_TORCH_STORAGES = {"FloatStorage": dtypes.float32, "DoubleStorage": dtypes.float64, "HalfStorage": dtypes.float16,
                   "BFloat16Storage": dtypes.bfloat16, "LongStorage": dtypes.int64, "IntStorage": dtypes.int32,
                   "ShortStorage": dtypes.int16, "CharStorage": dtypes.int8, "ByteStorage": dtypes.uint8,
                   "BoolStorage": dtypes.bool}

class _Storage:
  def __init__(self, dtype: DType): self.dtype = dtype

class _Loaded:
  """A tensor read from a checkpoint: its elements (contiguous numpy), dtype and requires_grad (None: teeny's default,
  for a plain tensor saved without it), made a Tensor once unpickled."""
  def __init__(self, arr: np.ndarray, dtype: DType, requires_grad: bool | None = None):
    self.arr, self.dtype, self.requires_grad = arr, dtype, requires_grad

def _rebuild_tensor(storage: tuple[np.ndarray, DType], offset: int, size, stride, requires_grad=False, *_) -> _Loaded:
  """torch._utils._rebuild_tensor_v2's arguments; a tensor saved with requires_grad=True loads with it, as torch's."""
  out = _rebuild_data(storage, offset, size, stride)
  if requires_grad is True: out.requires_grad = True
  return out

def _rebuild_parameter(data, requires_grad=True, *_):
  """torch._utils._rebuild_parameter(_with_state): an nn.Parameter loads with its saved requires_grad (True unless it
  was frozen), as torch.load's Parameter."""
  if isinstance(data, _Loaded): data.requires_grad = bool(requires_grad)
  return data

def _rebuild_data(storage: tuple[np.ndarray, DType], offset: int, size, stride) -> _Loaded:
  arr, dt = storage
  size, stride = tuple(size), tuple(stride)
  if 0 in size: return _Loaded(np.zeros(size, arr.dtype), dt)
  last = offset + sum((n - 1) * st for n, st in zip(size, stride))
  if any(st < 0 for st in stride) or offset < 0 or last >= arr.size:
    raise ValueError(f"torch_load: a tensor of size {size}, stride {stride} and offset {offset} does not fit its "
                     f"storage of {arr.size} elements: the file is corrupt")
  view = np.lib.stride_tricks.as_strided(arr[offset:], size, tuple(st * arr.itemsize for st in stride))
  return _Loaded(np.array(view), dt)   # (a copy that keeps a 0-d shape: ascontiguousarray gives 1-d)

class _TorchUnpickler(pickle.Unpickler):
  """Unpickles only what torch.save writes for tensors and containers of them: any other global is refused, so a
  checkpoint cannot run code (pickle.load of an untrusted .pt file can)."""
  def __init__(self, file, storage):
    super().__init__(file)
    self.storage = storage
  def find_class(self, module: str, name: str):
    if (module, name) == ("collections", "OrderedDict"): return OrderedDict
    if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"): return _rebuild_tensor
    if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
      return _rebuild_parameter
    if module == "torch" and name in _TORCH_STORAGES: return _Storage(_TORCH_STORAGES[name])
    if (module, name) == ("torch", "Size"): return tuple
    raise pickle.UnpicklingError(f"torch_load: the file refers to {module}.{name}, which is not a tensor, a storage or "
                                 "a container of them; only state dicts and tensors are read (no code runs from a "
                                 "checkpoint). Save tensors with torch.save(model.state_dict(), path)")
  def persistent_load(self, pid):
    if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Storage)):
      raise pickle.UnpicklingError(f"torch_load: unsupported storage reference {pid!r}")
    return self.storage(pid[1].dtype, str(pid[2]), int(pid[4]))

def torch_load(path: str | os.PathLike, device: str | None = None):
  """Read a file written by torch.save (its zip format, the default since torch 1.6) without torch: the saved object
  with every tensor a teeny Tensor (on `device`). State dicts, nested dicts/lists/tuples of tensors, Parameters and
  views sharing a storage are read; anything else in the pickle is refused, so no code runs from the file. As torch's:
  a Parameter loads with requires_grad=True (False if saved frozen), a tensor saved with requires_grad=True with True;
  other tensors keep teeny's default None."""
  if not zipfile.is_zipfile(path):
    raise ValueError(f"torch_load: {path} is not a zip archive: only torch.save's zip format (the default since torch "
                     "1.6) is read; re-save it with torch.save(obj, path) in a current torch")
  with zipfile.ZipFile(path) as z:
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if len(pkl) != 1:
      raise ValueError(f"torch_load: {path} has no single data.pkl ({len(pkl)} found): not a torch.save file")
    root = pkl[0][:-len("data.pkl")]
    big = root + "byteorder" in names and z.read(root + "byteorder").decode().strip() == "big"
    cache: dict[str, tuple[np.ndarray, DType]] = {}
    def storage(dt: DType, key: str, numel: int) -> tuple[np.ndarray, DType]:
      if key not in cache:
        if root + "data/" + key not in names: raise ValueError(f"torch_load: {path} lacks the storage data/{key}")
        np_dt = np.dtype("<u2") if dt == dtypes.bfloat16 else np.dtype(dt.np).newbyteorder(">" if big else "<")
        raw = z.read(root + "data/" + key)
        if len(raw) < numel * np_dt.itemsize:
          raise ValueError(f"torch_load: {path}: storage data/{key} has {len(raw)} bytes for {numel} elements of {dt}")
        cache[key] = (np.frombuffer(raw, np_dt, numel).astype(np_dt.newbyteorder("=")), dt)
      return cache[key]
    with z.open(pkl[0]) as f: obj = _TorchUnpickler(f, storage).load()
  def to_tensor(x):
    if isinstance(x, _Loaded):
      arr = bf16_bits_to_float32(x.arr) if x.dtype == dtypes.bfloat16 else x.arr
      return Tensor(arr, dtype=x.dtype, device=device, requires_grad=x.requires_grad)
    if isinstance(x, dict): return type(x)((k, to_tensor(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)): return type(x)(to_tensor(v) for v in x)
    return x
  return to_tensor(obj)
