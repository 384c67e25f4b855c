"""The import graph inside each package: no import cycle at all, and imports at module top.

`lint-imports` (tests/test_layers.py) keeps the packages and core's sub-layers in order; this
file looks inside them, at single modules.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["laminax_pytree", "laminax_core", "laminax_dispatch", "laminax_pjit", "laminax_hostcb",
            "laminax_export", "laminax"]
CORE = ROOT / "packages" / "core" / "src" / "laminax_core"

MAX_FUNCTION_LEVEL_IMPORTS_IN_CORE = 5  # core has none today: one needs its reason

_SCC_SCRIPT = r"""
import sys, grimp
package = sys.argv[1]
graph = grimp.build_graph(package)
edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
index, low, stack, on_stack, found = {}, {}, [], set(), []
sys.setrecursionlimit(100000)
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on_stack.add(v)
    for w in edges[v]:
        if w not in edges:
            continue
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        component = []
        while True:
            w = stack.pop(); on_stack.discard(w); component.append(w)
            if w == v:
                break
        if len(component) > 1:
            found.append(sorted(component))
for module in sorted(edges):
    if module not in index:
        visit(module)
for component in found:
    print(" ".join(component))
"""


def _cycles(package: str) -> list[list[str]]:
    result = subprocess.run([sys.executable, "-c", _SCC_SCRIPT, package], capture_output=True,
                            text=True, env=dict(os.environ), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return [line.split() for line in result.stdout.splitlines() if line]


def test_no_import_cycle_in_any_package():
    # Where a lower module needs a higher one's function, the higher one installs it (the hook
    # modules: core's `_interpreters/lax_ops.py` and `lax/_hooks.py`, dispatch's `_hooks.py`).
    found = {p: cycles for p in PACKAGES if (cycles := _cycles(p))}
    assert not found, f"these modules import each other in a cycle: {found}"


def _function_level_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, explained) of each import inside a function or class of `path`."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    top = {id(node) for node in tree.body}
    for node in tree.body:  # imports under a module-level if/try are still module level
        if isinstance(node, ast.If | ast.Try):
            top |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
            above = lines[node.lineno - 2].strip()
            explained = "#" in lines[node.lineno - 1] or above.startswith("#") or (
                above.startswith(("from ", "import ")) and lines[node.lineno - 3].strip()
                .startswith("#"))
            found.append((node.lineno, explained))
    return found


def test_core_imports_at_module_top():
    found = {path.relative_to(CORE).as_posix(): _function_level_imports(path)
             for path in sorted(CORE.rglob("*.py"))}
    total = sum(len(v) for v in found.values())
    assert total < MAX_FUNCTION_LEVEL_IMPORTS_IN_CORE, (
        f"{total} imports inside functions in core: move them to the module top"
    )
    unexplained = [f"{p}:{line}" for p, v in found.items() for line, ok in v if not ok]
    assert not unexplained, f"say why each import inside a function is there: {unexplained}"


def test_the_checks_see_a_cycle_and_a_function_level_import(tmp_path):
    package = tmp_path / "knot"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from knot import b\n")
    (package / "b.py").write_text("def f():\n    from knot import a\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = subprocess.run([sys.executable, "-c", _SCC_SCRIPT, "knot"], capture_output=True,
                            text=True, env=env)
    assert result.stdout.split() == ["knot.a", "knot.b"]
    assert _function_level_imports(package / "b.py") == [(2, False)]
