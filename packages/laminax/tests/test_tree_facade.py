"""The facade's pytree namespaces expose JAX 0.10.2's names, each documented."""

import laminax
import laminax_pytree
import pytest

# Recorded from JAX 0.10.2: sorted(n for n in dir(jax.tree_util) if not n.startswith("_")).
JAX_TREE_UTIL = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]
# Recorded from JAX 0.10.2: sorted(n for n in dir(jax.tree) if not n.startswith("_")).
JAX_TREE = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
# Type aliases and a registry instance: not functions or classes, so they carry no docstring.
NOT_DOCUMENTABLE = {"KeyEntry", "KeyPath", "default_registry"}


def test_laminax_exports_tree_namespaces():
    assert {"tree", "tree_util"} <= set(laminax.__all__)
    assert laminax.tree_util.tree_map is laminax_pytree.tree_map
    assert laminax.tree.map is laminax_pytree.tree_map


@pytest.mark.parametrize(("namespace", "names"), [("tree_util", JAX_TREE_UTIL), ("tree", JAX_TREE)])
def test_namespace_has_exactly_jax_names(namespace, names):
    module = getattr(laminax, namespace)
    assert sorted(module.__all__) == names
    public = sorted(n for n in dir(module) if not n.startswith("_"))
    assert public == names, f"laminax.{namespace} exposes extra names"


@pytest.mark.parametrize("namespace", ["tree_util", "tree"])
def test_every_name_has_a_docstring(namespace):
    module = getattr(laminax, namespace)
    assert module.__doc__
    for name in module.__all__:
        if name in NOT_DOCUMENTABLE:
            continue
        assert (getattr(module, name).__doc__ or "").strip(), f"laminax.{namespace}.{name}"


def test_import_laminax_as_jax_runs_tree_code():
    jax = laminax
    params = {"w": [1.0, 2.0], "b": 0.5}
    grads = jax.tree.map(lambda p: p * 0.1, params)
    assert jax.tree_util.tree_leaves(grads) == [0.05, 0.1, 0.2]
