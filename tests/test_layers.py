"""The layering contract: packages import only downward, and never real JAX."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_every_layer_contract_is_kept():
    result = _lint()
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_upward_import_breaks_the_contract(tmp_path):
    # A copy of the bottom layer that imports the layer above it shadows the installed one.
    copy = tmp_path / "laminax_pytree"
    shutil.copytree(ROOT / "packages" / "pytree" / "src" / "laminax_pytree", copy)
    (copy / "_upward.py").write_text("import laminax_core\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert "Layers import only downward BROKEN" in result.stdout


def test_importing_real_jax_breaks_the_contract(tmp_path):
    copy = tmp_path / "laminax_pytree"
    shutil.copytree(ROOT / "packages" / "pytree" / "src" / "laminax_pytree", copy)
    (copy / "_cheat.py").write_text("import jax\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert "laminax never imports real JAX BROKEN" in result.stdout


def _private_modules() -> set[str]:
    """The outermost private module (a name part starting with "_") of every source file."""
    found = set()
    for src in (ROOT / "packages").glob("*/src"):
        for path in src.rglob("*.py"):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    found.add(".".join(parts[: i + 1]))
                    break
    return found


def _contract(name: str) -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


SURFACES = "Packages use each other only through public modules and internal"


def test_the_surface_contract_names_every_private_module():
    listed = set(_contract(SURFACES)["forbidden_modules"])
    private = _private_modules()
    assert not private - listed, (
        f"add {sorted(private - listed)} to forbidden_modules of {SURFACES!r} in pyproject.toml"
    )
    assert not listed - private, f"remove {sorted(listed - private)}: no such module"


def test_a_private_import_across_packages_breaks_the_contract(tmp_path):
    copy = tmp_path / "laminax_dispatch"
    shutil.copytree(ROOT / "packages" / "dispatch" / "src" / "laminax_dispatch", copy)
    (copy / "_reach.py").write_text("from laminax_core._avals import ShapedArray\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert f"{SURFACES} BROKEN" in result.stdout
    assert "laminax_dispatch._reach -> laminax_core._avals" in result.stdout
