"""The facade exposes JAX 0.10.2's names, each documented, and never loses one it had.

`jax_0_10_2_names.json` records the public names of JAX's namespaces (checked against the live
JAX by `tests/test_facade_vs_jax.py`). `facade_missing.json` lists the ones no layer implements
yet: a name may leave that list (regenerate it with `python packages/laminax/tests/test_facade.py`),
but a JAX name that is neither provided nor listed fails the test.
"""

import importlib
import inspect
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
JAX_NAMES = json.loads((HERE / "jax_0_10_2_names.json").read_text())
KNOWN_MISSING = json.loads((HERE / "facade_missing.json").read_text())


def facade_module(jax_module: str):
    return importlib.import_module("laminax" + jax_module[len("jax") :])


def missing_names(jax_module: str) -> list[str]:
    module = facade_module(jax_module)
    return [name for name in JAX_NAMES[jax_module] if not hasattr(module, name)]


@pytest.mark.parametrize("jax_module", sorted(JAX_NAMES))
def test_no_jax_name_goes_missing_unrecorded(jax_module):
    unexpected = sorted(set(missing_names(jax_module)) - set(KNOWN_MISSING.get(jax_module, [])))
    assert not unexpected, f"laminax{jax_module[3:]} lacks JAX names {unexpected}"


@pytest.mark.parametrize("jax_module", sorted(JAX_NAMES))
def test_every_public_facade_name_resolves_and_callables_are_documented(jax_module):
    module = facade_module(jax_module)
    undocumented = []
    for name in module.__all__:
        value = getattr(module, name)
        if (inspect.isfunction(value) or inspect.isclass(value)) and not inspect.getdoc(value):
            undocumented.append(name)
    assert not undocumented, f"laminax{jax_module[3:]}: no docstring on {undocumented}"


def test_facade_runs_jax_style_program():
    import laminax as jax
    import laminax.numpy as jnp

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w = jnp.ones((3, 2)) * 0.1
    x = jnp.arange(6.0).reshape(2, 3)
    grads = jax.jit(jax.grad(loss))(w, x)
    assert isinstance(grads, jax.Array)
    assert grads.shape == (3, 2)


if __name__ == "__main__":
    record = {module: missing_names(module) for module in sorted(JAX_NAMES)}
    (HERE / "facade_missing.json").write_text(json.dumps(record, indent=1) + "\n")
    print({module: len(names) for module, names in record.items()}, file=sys.stderr)
