"""laminax_pytree.tree: the jax.tree short names."""

import dataclasses
import operator

import laminax_pytree as tu
from laminax_pytree import tree

JAX_TREE_NAMES = [
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


def test_tree_namespace_has_every_jax_tree_name():
    assert sorted(tree.__all__) == sorted(JAX_TREE_NAMES)


def test_short_names_are_the_tree_util_functions():
    assert tree.map is tu.tree_map and tree.flatten is tu.tree_flatten
    assert tree.leaves is tu.tree_leaves and tree.structure is tu.tree_structure


def test_short_names_work():
    t = {"a": 1, "b": [2, 3]}
    leaves, treedef = tree.flatten(t)
    assert tree.unflatten(treedef, leaves) == t
    assert tree.map(operator.neg, t) == {"a": -1, "b": [-2, -3]}
    assert tree.reduce(operator.add, t) == 6
    assert tree.reduce_associative(operator.add, t) == 6
    assert tree.all(t)
    assert tree.broadcast([0, 1], [(5, 5), 5]) == [(0, 0), 1]
    assert [x for _, x in tree.leaves_with_path(t)] == [1, 2, 3]
    assert tree.map_with_path(lambda p, x: len(p), t) == {"a": 1, "b": [2, 2]}
    pairs, _ = tree.flatten_with_path(t)
    assert len(pairs) == 3
    outer, inner = tree.structure([0, 0]), tree.structure((0, 0))
    assert tree.transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])


def test_static_marks_a_dataclass_field_static():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Cfg:
        x: float
        name: str = tree.static(default="n", metadata={"doc": "kept"})

    field = {f.name: f for f in dataclasses.fields(Cfg)}["name"]
    assert field.metadata["static"] is True and field.metadata["doc"] == "kept"
    assert tree.leaves(Cfg(1.0)) == [1.0]
