"""Every module's public functions and classes are in its `__all__`.

A name without a leading underscore that a module defines is public: it is what other modules
(and, through the package namespaces, users) may import. Listing it in `__all__` keeps the
public surface explicit; a helper meant for the module alone takes a leading underscore.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# `__main__.py` is a script, not a module to import from
SOURCES = sorted(p for p in ROOT.glob("packages/*/src/**/*.py") if p.name != "__main__.py")


def _declared(tree: ast.Module) -> set[str] | None:
    """The names `__all__` lists (assignments and `+=`), or None where it has none."""
    names = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = set(ast.literal_eval(node.value))
        names = value if isinstance(node, ast.Assign) or names is None else names | value
    return names


def _public_definitions(tree: ast.Module) -> list[str]:
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT / "packages")))
def test_public_definitions_are_in_all(path):
    tree = ast.parse(path.read_text())
    defined = _public_definitions(tree)
    if not defined:
        return
    declared = _declared(tree)
    assert declared is not None, f"{path.name} defines {defined} but has no __all__"
    missing = [name for name in defined if name not in declared]
    assert not missing, f"add {missing} to __all__ of {path.relative_to(ROOT)} (or prefix _)"


def test_the_check_sees_a_missing_name():
    tree = ast.parse('__all__ = ["f"]\n__all__ += ["g"]\ndef f(): ...\ndef g(): ...\ndef h(): ...')
    assert _declared(tree) == {"f", "g"}
    assert [n for n in _public_definitions(tree) if n not in _declared(tree)] == ["h"]
