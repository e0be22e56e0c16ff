#!/usr/bin/env python3
"""Check teeny's import graph: no cycles among teeny modules, and no import that breaks the layer order.

Every `import`/`from ... import` in every module counts, function-local ones included; only imports under
`if TYPE_CHECKING:` are skipped (they never run). The layer order is data: the fenced ```layers block in
docs/architecture.md, lowest layer first, one layer per line, each a list of module names. A name stands for that
module and every module under it; a module belongs to the longest name that covers it (`teeny` alone covers only
teeny/__init__.py). A module may import modules of its own layer or of a lower one.

  python3 extra/check_layers.py                  # the repository's teeny/ against docs/architecture.md
  python3 extra/check_layers.py ROOT [DOC]       # the package directory ROOT (its name is the package's) against DOC
Exit status 1 with one line per problem (module, file:line, imported module) when anything is wrong.
"""
from __future__ import annotations
import ast, re, sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

def read_layers(doc: Path) -> list[list[str]]:
  """The ```layers block of `doc`: one list of module names per line, lowest layer first (`#` starts a comment)."""
  m = re.search(r"^```layers\n(.*?)^```", doc.read_text(), re.S | re.M)
  if m is None: raise SystemExit(f"{doc}: no ```layers block (the layer order this check reads)")
  layers = [line.split("#", 1)[0].split() for line in m.group(1).splitlines()]
  return [names for names in layers if names]

def module_files(root: Path) -> dict[str, Path]:
  """Dotted module name -> file, for every .py under the package directory `root`."""
  out = {}
  for f in sorted(root.rglob("*.py")):
    parts = (root.name, *f.relative_to(root).with_suffix("").parts)
    out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
  return out

def _is_type_checking(test: ast.expr) -> bool:
  return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
    (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")

def _runtime_nodes(tree: ast.AST):
  """Every node of `tree` except those under `if TYPE_CHECKING:` (its else branch runs, so it counts)."""
  stack = [tree]
  while stack:
    node = stack.pop()
    yield node
    if isinstance(node, ast.If) and _is_type_checking(node.test): stack.extend(node.orelse)
    else: stack.extend(ast.iter_child_nodes(node))

def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
  """(imported teeny module, line) for every import in module `name` that names a module of the package."""
  is_pkg = path.name == "__init__.py"
  out = []
  for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      out += [(a.name, node.lineno) for a in node.names if a.name in modules]
    elif isinstance(node, ast.ImportFrom):
      if node.level:  # relative: from the module's own package, one level up per extra dot
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        frm = ".".join(base + ([node.module] if node.module else []))
      else: frm = node.module or ""
      if frm.split(".")[0] != next(iter(modules)).split(".")[0]: continue
      subs = [f"{frm}.{a.name}" for a in node.names if f"{frm}.{a.name}" in modules]
      # `from pkg import submodule` imports the submodule; any other name comes from pkg itself
      if len(subs) < len(node.names) and frm in modules: out.append((frm, node.lineno))
      out += [(s, node.lineno) for s in subs]
  return [(m, line) for m, line in out if m != name]

def layer_of(module: str, layers: list[list[str]], top: str) -> int | None:
  best, best_len = None, -1
  for i, names in enumerate(layers):
    for n in names:
      covers = module == n or (n != top and module.startswith(n + "."))
      if covers and len(n) > best_len: best, best_len = i, len(n)
  return best

def find_cycles(graph: dict[str, dict]) -> list[list[str]]:
  """Cycles that together pass through every module of every strongly connected component of more than one module
  (Tarjan, then a shortest cycle by BFS from each module not yet on a reported cycle)."""
  index: dict[str, int] = {}
  low: dict[str, int] = {}
  stack: list[str] = []
  on: set[str] = set()
  comps: list[set[str]] = []
  def strong(v: str) -> None:
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in graph[v]:
      if w not in index: strong(w); low[v] = min(low[v], low[w])
      elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      comp = set()
      while True:
        w = stack.pop(); on.discard(w); comp.add(w)
        if w == v: break
      if len(comp) > 1: comps.append(comp)
  sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
  for v in sorted(graph):
    if v not in index: strong(v)
  cycles: list[list[str]] = []
  for comp in comps:
    covered: set[str] = set()
    for start in sorted(comp):
      if start in covered: continue
      cycles.append(_shortest_cycle(graph, comp, start))
      covered.update(cycles[-1])
  return cycles

def _shortest_cycle(graph: dict[str, dict], comp: set[str], start: str) -> list[str]:
  """The shortest path start -> ... -> start inside the component `comp`, ends included."""
  prev: dict[str, str] = {}
  frontier, seen = [start], {start}
  while frontier and start not in prev:
    nxt = []
    for v in frontier:
      for w in sorted(graph[v]):
        if w not in comp: continue
        if w == start: prev.setdefault(start, v)
        elif w not in seen: seen.add(w); prev[w] = v; nxt.append(w)
    frontier = nxt
  path, v = [start], prev[start]
  while v != start: path.append(v); v = prev[v]
  return [start] + path[:0:-1] + [start]

def check(root: Path, doc: Path) -> list[str]:
  """Every problem found, one line each; empty when the import graph is clean."""
  layers = read_layers(doc)
  modules = module_files(root)
  top = root.name
  problems = []
  graph: dict[str, dict[str, list[int]]] = {m: {} for m in modules}
  for m, path in modules.items():
    for dep, line in imports_of(m, path, modules): graph[m].setdefault(dep, []).append(line)
  for m in modules:
    if layer_of(m, layers, top) is None:
      problems.append(f"{m} ({modules[m]}): in no layer of the ```layers block of {doc}; add it there")
  for m, deps in graph.items():
    lm = layer_of(m, layers, top)
    for dep, lines in deps.items():
      ld = layer_of(dep, layers, top)
      if lm is not None and ld is not None and ld > lm:
        problems += [f"layer order: {m} ({modules[m]}:{line}) imports {dep}, a higher layer "
                     f"({' '.join(layers[ld])} above {' '.join(layers[lm])})" for line in lines]
  for cyc in find_cycles(graph):
    steps = " -> ".join(f"{a} (line {graph[a][b][0]})" for a, b in zip(cyc, cyc[1:]))
    problems.append(f"import cycle: {steps} -> {cyc[0]}")
  return problems

if __name__ == "__main__":
  root = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "teeny"
  doc = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "docs" / "architecture.md"
  problems = check(root.resolve(), doc)
  for p in problems: print(p, flush=True)
  if problems: sys.exit(f"check_layers: {len(problems)} problem(s) in {root}'s imports")
  print(f"check_layers: {len(module_files(root.resolve()))} modules of {root.name}, no import cycle, layer order holds")
