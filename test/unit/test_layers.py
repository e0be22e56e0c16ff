"""extra/check_layers.py: teeny's import graph has no cycle and keeps the layer order of docs/architecture.md; the check
itself names the modules and lines of a cycle or of an import of a higher layer."""
import importlib.util, textwrap
from pathlib import Path
import pytest

REPO = Path(__file__).resolve().parents[2]

def _load_check():
  spec = importlib.util.spec_from_file_location("check_layers", REPO / "extra" / "check_layers.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod

check_layers = _load_check()

def _package(tmp_path: Path, files: dict[str, str], layers: str) -> tuple[Path, Path]:
  root = tmp_path / "pkg"
  for name, src in {"__init__.py": "", **files}.items():
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(textwrap.dedent(src))
  doc = tmp_path / "arch.md"
  doc.write_text(f"# layers\n\n```layers\n{layers}\n```\n")
  return root, doc

def test_teeny_imports_keep_the_layer_order():
  assert check_layers.check(REPO / "teeny", REPO / "docs" / "architecture.md") == []

def test_a_clean_package_passes(tmp_path):
  root, doc = _package(tmp_path, {"low.py": "import os\n", "high.py": "from pkg.low import os\n",
                                  "sub/__init__.py": "from . import leaf\n", "sub/leaf.py": "from pkg import low\n"},
                       "pkg.low\npkg.sub\npkg.high\npkg")
  assert check_layers.check(root, doc) == []

def test_a_cycle_through_a_function_local_import_fails_naming_modules_and_lines(tmp_path):
  root, doc = _package(tmp_path, {"a.py": "from pkg.b import g\ndef f(): return g()\n",
                                  "b.py": "def g():\n  from pkg.a import f\n  return f\n"}, "pkg.a pkg.b\npkg")
  problems = check_layers.check(root, doc)
  assert problems == ["import cycle: pkg.a (line 1) -> pkg.b (line 2) -> pkg.a"]

def test_a_relative_import_cycle_inside_a_package_fails(tmp_path):
  root, doc = _package(tmp_path, {"k/__init__.py": "def helper(): pass\nfrom .x import y\n",
                                  "k/x.py": "from . import helper\ny = 1\n"}, "pkg.k\npkg")
  problems = check_layers.check(root, doc)
  assert len(problems) == 1 and "import cycle" in problems[0] and "pkg.k (line 2)" in problems[0] \
    and "pkg.k.x (line 1)" in problems[0]

def test_an_import_of_a_higher_layer_fails_naming_the_line(tmp_path):
  root, doc = _package(tmp_path, {"low.py": "x = 1\ndef f():\n  import pkg.high\n", "high.py": "y = 2\n"},
                       "pkg.low\npkg.high\npkg")
  problems = check_layers.check(root, doc)
  assert len(problems) == 1 and problems[0].startswith("layer order: pkg.low (")
  assert "low.py:3) imports pkg.high" in problems[0]

def test_type_checking_imports_do_not_count(tmp_path):
  low = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n  from pkg.high import y\n"
  root, doc = _package(tmp_path, {"low.py": low, "high.py": "from pkg.low import TYPE_CHECKING\ny = 2\n"},
                       "pkg.low\npkg.high\npkg")
  assert check_layers.check(root, doc) == []

def test_a_module_in_no_layer_fails(tmp_path):
  root, doc = _package(tmp_path, {"low.py": "", "stray.py": ""}, "pkg.low\npkg")
  problems = check_layers.check(root, doc)
  assert len(problems) == 1 and problems[0].startswith("pkg.stray (")

def test_a_doc_without_the_block_is_an_error(tmp_path):
  root, doc = _package(tmp_path, {}, "pkg")
  doc.write_text("no block\n")
  with pytest.raises(SystemExit, match="no ```layers block"): check_layers.check(root, doc)
