import os, sys, zlib
import pytest
sys.path.insert(0, os.path.dirname(__file__))  # `from helpers import ...` whatever the import mode

def pytest_report_header(config):
  try:
    from teeny import Device
    return f"teeny device: {Device.DEFAULT}"
  except Exception as e:  # the report header must never break collection
    return f"teeny device: unavailable ({e!r})"

# hypothesis profiles (test/test_properties.py): `ci` is the default and deterministic; HYPOTHESIS_PROFILE=long runs
# more
try:
  from hypothesis import HealthCheck, settings
  _slow = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
  settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, print_blob=True, database=None,
                            suppress_health_check=_slow)
  settings.register_profile("long", max_examples=2000, deadline=None, print_blob=True, suppress_health_check=_slow)
  settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is a test dependency; only the property tests need it
  pass

# a test module's own numpy generator (a module-level `rng`, `RNG` or `_rng`) is reseeded from each test's name before
# it runs: drawn from one generator for the whole module, a test's inputs depended on which tests ran before it in the
# same process, which under xdist changes from run to run (a tolerance test then failed now and then)
@pytest.fixture(autouse=True)
def _reseed_module_rng(request):
  import numpy as np
  mod = request.module
  for name in ("rng", "RNG", "_rng"):
    if isinstance(getattr(mod, name, None), np.random.Generator):
      setattr(mod, name, np.random.default_rng(zlib.crc32(request.node.nodeid.encode())))

@pytest.fixture(autouse=True)
def _restore_training():
  """Module.train()/eval() set the thread's Tensor.training: put it back after each test, so no test sees another's."""
  from teeny import Tensor
  prev = Tensor.training
  yield
  Tensor.training = prev
