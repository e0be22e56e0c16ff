"""CPU target facts (teeny/runtime/ops_cpu.py): TEENY_CPU_ARCH picks the -march target, its vector width comes from the
compiler's predefined macros, the C heuristics size their tiles from it, and an unknown target is a clear error."""
import os, platform, shutil, subprocess, sys
import pytest
from teeny import Tensor
from teeny.codegen.opt import OptOps, hand_coded_opts
from teeny.codegen.render.c import CRenderer
from teeny.runtime.ops_cpu import CCompiler, cpu_target

x86 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 micro-architecture levels")

@x86
@pytest.mark.parametrize("arch,vec", [("x86-64", 16), ("x86-64-v3", 32), ("x86-64-v4", 64)])
def test_vector_width_from_the_compiler(arch, vec):
  t = cpu_target(arch=arch)
  assert t.arch == arch and t.vector_bytes == vec
  assert set(t.cache_bytes) == {"L1d", "L2", "L3"} and all(v > 0 for v in t.cache_bytes.values())

def test_unknown_arch_is_a_clear_error():
  with pytest.raises(ValueError, match="TEENY_CPU_ARCH='no-such-cpu'.*x86-64-v3"): cpu_target(arch="no-such-cpu")

@x86
def test_arch_is_in_flags_and_cache_key(monkeypatch):
  monkeypatch.setenv("TEENY_CPU_ARCH", "x86-64-v3")
  v3 = CCompiler()
  monkeypatch.setenv("TEENY_CPU_ARCH", "x86-64-v4")
  v4 = CCompiler()
  assert "-march=x86-64-v3" in v3.flags and "-march=x86-64-v4" in v4.flags
  # the tiles are sized in full AVX-512 vectors, which the compilers would otherwise split into 256-bit halves
  assert "-mprefer-vector-width=512" in v4.flags and not any("prefer-vector-width" in f for f in v3.flags)
  assert v3.cache_key != v4.cache_key and v3.cache_path("int x;") != v4.cache_path("int x;")

def test_heuristic_tiles_follow_the_vector_width():
  def tile(vec):
    items = [si for si in (Tensor.empty(64, 128) @ Tensor.empty(128, 256)).schedule() if si.kind == "kernel"]
    return [o.arg for o in hand_coded_opts(items[0].ast, CRenderer(vector_bytes=vec)) if o.op is OptOps.UPCAST]
  assert tile(32) == [16, 4] and tile(16) == [8, 4]
  assert tile(64) == [32, 4], "AVX-512: 16 floats a vector (compiled with -mprefer-vector-width=512)"

@x86
def test_x86_64_v3_code_runs(tmp_path):
  """A matmul, a softmax-like row max and an elementwise kernel compiled for AVX2 give numpy's values."""
  code = ("import numpy as np; from teeny import Tensor\n"
          "a = np.random.default_rng(0).uniform(-1, 1, (48, 64)).astype(np.float32)\n"
          "t = Tensor(a)\n"
          "np.testing.assert_allclose((t @ t.T).numpy(), a @ a.T, rtol=1e-4, atol=1e-4)\n"
          "np.testing.assert_allclose(t.max(1).numpy(), a.max(1))\n"
          "np.testing.assert_allclose((t * 2 + 1).relu().numpy(), np.maximum(a * 2 + 1, 0), rtol=1e-6)\n"
          "from teeny import Device; print(Device['CPU'].compiler.flags)\n")
  env = {**os.environ, "TEENY_CPU_ARCH": "x86-64-v3", "TEENY_CACHE_DIR": str(tmp_path), "DEV": "CPU"}
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  assert "-march=x86-64-v3" in out.stdout

@x86
@pytest.mark.parametrize("arch,regs", [("x86-64-v3", 16), ("x86-64-v4", 32)])
def test_vector_registers_from_the_compiler(arch, regs):
  assert cpu_target(arch=arch).vector_registers == regs

def test_beam_tiles_fit_the_register_file():
  """BEAM's largest tile and its UPCAST amounts come from the target's register file, not a constant: AVX2 holds
  16 x 8 float32, AVX-512 32 x 16 (and tries UPCAST 64), SSE 16 x 4."""
  from teeny.codegen.search import register_elems, upcast_amounts
  avx2, avx512, sse = CRenderer(32, None, 16), CRenderer(64, None, 32), CRenderer(16, None, 16)
  assert (register_elems(avx2), register_elems(avx512), register_elems(sse)) == (128, 512, 64)
  assert 64 in upcast_amounts(avx512) and 64 not in upcast_amounts(avx2)

_F16_CODE = """import numpy as np; from teeny import Tensor
bits = np.arange(65536, dtype=np.uint16)
want = bits.view(np.float16).astype(np.float32)
got = Tensor(bits).bitcast('float16').float().numpy()
assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)])
rng = np.random.default_rng(0)
f = np.concatenate([rng.standard_normal(20000).astype(np.float32) * s for s in (1e-7, 1e-5, 1, 300, 3e4)] + [
  np.float32([0, -0.0, 65504, 65519.99, 65520, 1e9, -1e9, np.inf, -np.inf, 2**-24, 2**-25, 3 * 2**-26, 2**-14])])
g = bits.view(np.float16).astype(np.float32)
f = np.concatenate([f, g[np.isfinite(g)] + 2.0 ** -30])   # just past the values: rounding near ties
h, w = Tensor(f).cast('float16').bitcast('uint16').numpy(), f.astype(np.float16).view(np.uint16)
assert np.array_equal(h, w), np.nonzero(h != w)
assert np.isnan(Tensor(np.float32([np.nan])).cast('float16').float().numpy()[0])
print("ok")
"""

@x86
@pytest.mark.parametrize("arch,cc", [("x86-64", "clang"), ("x86-64-v3", "clang"), ("x86-64", "gcc"),
                                     ("x86-64-v3", "gcc")])
def test_float16_conversions_match_numpy(tmp_path, arch, cc):
  """teeny_h2f/teeny_f2h are F16C instructions where the target has them (clang's __fp16, gcc's _Float16) and integer
  code elsewhere (x86-64 has no F16C): both give numpy's values for every float16 and round float32 to nearest even
  (ties, subnormals, the overflow edge at 65520, infinities)."""
  if shutil.which(cc) is None: pytest.skip(f"{cc} is not installed")
  env = {**os.environ, "TEENY_CPU_ARCH": arch, "TEENY_CACHE_DIR": str(tmp_path), "DEV": "CPU", "CC": cc}
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  out = subprocess.run([sys.executable, "-c", _F16_CODE], env=env, cwd=root, capture_output=True, text=True,
                       timeout=300)
  assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
