"""The public surfaces: every __all__ name exists and is documented; jax.tree_util's names."""

import importlib

import laminax_pytree
import pytest

# jax.tree_util's public names in JAX 0.10.2.
JAX_TREE_UTIL_NAMES = [
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
# Names that are data or type aliases, not functions or classes of ours, so no docstring.
UNDOCUMENTED_ALIASES = {"KeyEntry", "KeyPath", "default_registry", "tree"}


def test_package_exports_every_jax_tree_util_name():
    missing = set(JAX_TREE_UTIL_NAMES) - set(laminax_pytree.__all__)
    assert not missing, f"laminax_pytree lacks {sorted(missing)}"


@pytest.mark.parametrize(
    "module_name", ["laminax_pytree", "laminax_pytree.tree", "laminax_pytree.internal"]
)
def test_every_exported_name_exists_and_has_a_docstring(module_name):
    module = importlib.import_module(module_name)
    assert module.__doc__
    for name in module.__all__:
        value = getattr(module, name)
        if name in UNDOCUMENTED_ALIASES or not callable(value):
            continue
        assert (value.__doc__ or "").strip(), f"{module_name}.{name} has no docstring"
