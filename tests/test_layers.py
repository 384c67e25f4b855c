"""The layering contracts: packages import only downward, each other only through public modules
and `internal`, and never real JAX."""

import os
import shutil
import subprocess
import sys
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


SURFACES = "Packages use each other only through public modules and internal"


def test_a_private_import_across_packages_breaks_the_contract(tmp_path):
    copy = tmp_path / "laminax_dispatch"
    shutil.copytree(ROOT / "packages" / "dispatch" / "src" / "laminax_dispatch", copy)
    (copy / "_reach.py").write_text("from laminax_core._avals import ShapedArray\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert f"{SURFACES} BROKEN" in result.stdout
    assert "laminax_dispatch._reach -> laminax_core._avals" in result.stdout


def test_a_private_import_inside_a_package_keeps_the_contract(tmp_path):
    copy = tmp_path / "laminax_dispatch"
    shutil.copytree(ROOT / "packages" / "dispatch" / "src" / "laminax_dispatch", copy)
    (copy / "_reach.py").write_text("from laminax_dispatch._lowering import _core\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert f"{SURFACES} KEPT" in result.stdout, result.stdout


CORE_LAYERS = "Core's sub-layers import only downward"


def test_an_upward_import_inside_core_breaks_the_contract(tmp_path):
    # the interpreters sit beneath lax: reaching up to it (instead of `lax_ops`) is refused
    copy = tmp_path / "laminax_core"
    shutil.copytree(ROOT / "packages" / "core" / "src" / "laminax_core", copy)
    (copy / "_interpreters" / "_upward.py").write_text("from laminax_core import lax\n")
    result = _lint({"PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert f"{CORE_LAYERS} BROKEN" in result.stdout
    assert "laminax_core._interpreters._upward -> laminax_core.lax" in result.stdout
