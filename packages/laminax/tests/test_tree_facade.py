"""The facade's pytree namespaces are exactly JAX 0.10.2's, and are laminax_pytree's objects."""

import json
from pathlib import Path

import laminax
import laminax_pytree
import pytest

JAX_NAMES = json.loads((Path(__file__).parent / "jax_0_10_2_names.json").read_text())


def test_laminax_exports_tree_namespaces():
    assert {"tree", "tree_util"} <= set(laminax.__all__)
    assert laminax.tree_util.tree_map is laminax_pytree.tree_map
    assert laminax.tree.map is laminax_pytree.tree_map


@pytest.mark.parametrize("namespace", ["tree_util", "tree"])
def test_namespace_has_exactly_jax_names(namespace):
    module = getattr(laminax, namespace)
    expected = JAX_NAMES[f"jax.{namespace}"]
    assert sorted(module.__all__) == expected
    public = sorted(n for n in dir(module) if not n.startswith("_"))
    assert public == expected, f"laminax.{namespace} exposes extra names"


def test_import_laminax_as_jax_runs_tree_code():
    jax = laminax
    params = {"w": [1.0, 2.0], "b": 0.5}
    grads = jax.tree.map(lambda p: p * 0.1, params)
    assert jax.tree_util.tree_leaves(grads) == [0.05, 0.1, 0.2]
