"""NULL: schedules, lowers and renders everything; allocates nothing and runs nothing. DEV=NULL:<lang> picks the
renderer."""
from __future__ import annotations
import importlib
from typing import Any
from teeny.device import Allocator, Compiled
from teeny.helpers import getenv

class NullAllocator(Allocator):
  def _alloc(self, nbytes: int) -> Any: return None
  def alloc(self, nbytes: int) -> Any: return None
  def free(self, opaque: Any, nbytes: int): pass
  def copyin(self, dest: Any, src: memoryview): pass
  def copyout(self, dest: memoryview, src: Any):
    raise RuntimeError("the NULL device holds no data; use DEV=CPU to get values")

class NullProgram:
  def __init__(self, name: str, lib: bytes, spec: Any = None): self.name = name
  def __call__(self, *bufs, **kwargs) -> float: return 0.0

RENDERERS = {"C": ("teeny.codegen.render.c", "CRenderer"), "CUDA": ("teeny.codegen.render.cuda", "CUDARenderer"),
             "HIP": ("teeny.codegen.render.hip", "HIPRenderer"),
             "CL": ("teeny.codegen.render.opencl", "OpenCLRenderer")}

# NULL_COMPILE=1 (GPU backends, issue 4): NULL:<lang> also compiles every kernel with that language's real compiler, so
# CI
# checks that CUDA/HIP kernels compile on a machine without the GPU
COMPILERS = {"CUDA": "teeny.runtime.ops_cuda", "HIP": "teeny.runtime.ops_amd", "CL": "teeny.runtime.ops_cl"}

def open_device(name: str) -> Compiled:
  parts = name.split(":")[1:]   # NULL[:<lang>][:<n>] (Device.canonicalize)
  lang = parts[0] if parts and not parts[0].isdigit() else "C"
  if lang not in RENDERERS:
    raise RuntimeError(f"NULL:{lang} is not a language teeny renders; pick one of {', '.join(RENDERERS)}")
  mod, cls = RENDERERS[lang]
  try: renderer = getattr(importlib.import_module(mod), cls)()
  except ImportError as e: raise RuntimeError(f"the {lang} renderer is not available yet: {e}") from None
  compile_too = getenv("NULL_COMPILE", 0) and lang in COMPILERS
  compiler = importlib.import_module(COMPILERS[lang]).null_compiler() if compile_too else None
  dev = Compiled(name, NullAllocator(), renderer, compiler, NullProgram)
  dev.runs_nothing = True
  return dev
