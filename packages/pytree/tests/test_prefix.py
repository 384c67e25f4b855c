"""laminax_pytree.internal: prefix broadcasting, axis specifications, argument flattening."""

import collections

import laminax_pytree as tu
import pytest
from laminax_pytree import internal


def test_internal_surface_is_declared():
    assert set(internal.__all__) == {
        "broadcast_prefix",
        "first_difference",
        "first_mismatch",
        "flatten_args",
        "flatten_axes",
        "none_leaf_registry",
        "registry",
        "tree_map_mismatch_error",
        "treedef_difference",
    }
    assert internal.registry is tu.default_registry


def test_broadcast_prefix_repeats_leaves_per_subtree_leaf():
    assert internal.broadcast_prefix([1, 2], [(0, 0, 0), {"a": 0}]) == [1, 1, 1, 2]
    assert internal.broadcast_prefix(7, {"a": [0, 0]}) == [7, 7]
    assert internal.broadcast_prefix([1, 2], [None, 0]) == [2]


def test_broadcast_prefix_error_names_key_path():
    with pytest.raises(
        ValueError,
        match=r"broadcast_prefix: prefix_tree is not a prefix of "
        r"full_tree at the root: prefix_tree has a tuple of length 2 there, "
        r"full_tree has a list of length 2",
    ):
        internal.broadcast_prefix((1, 2), [0, 0])


def test_first_mismatch_finds_first_difference_in_flatten_order():
    found = internal.first_mismatch({"a": [1, 2], "b": (1,)}, {"a": [1, 2], "b": (1, 2)})
    assert found == ((tu.DictKey("b"),), "a tuple of length 1", "a tuple of length 2")
    assert internal.first_mismatch([1, (2,)], [[5], (2,)]) is None
    assert internal.first_mismatch([(1,)], [[1]], is_leaf=lambda x: type(x) is tuple) is None


def test_first_mismatch_describes_custom_nodes_by_metadata():
    od1 = collections.OrderedDict(a=1, b=2)
    od2 = collections.OrderedDict(b=1, a=2)
    path, there, here = internal.first_mismatch([od1], [od2])
    assert path == (tu.SequenceKey(0),)
    assert there == "an OrderedDict node with 2 children and metadata ('a', 'b')"
    assert here == "an OrderedDict node with 2 children and metadata ('b', 'a')"


def test_first_mismatch_uses_namedtuple_field_names():
    NT = collections.namedtuple("NT", "p q")
    path, _, _ = internal.first_mismatch(NT(1, [2]), NT(1, [2, 3]))
    assert tu.keystr(path) == ".q"


def test_flatten_axes_broadcasts_with_none_as_leaf():
    treedef = tu.tree_structure(([1, 2], {"w": 3, "b": 4}, None))
    assert internal.flatten_axes("vmap in_axes", treedef, (0, {"w": 1, "b": None}, 2)) == [
        0,
        0,
        None,
        1,
    ]
    assert internal.flatten_axes("vmap in_axes", treedef, None) == [None] * 4
    assert internal.flatten_axes("vmap in_axes", treedef, 1) == [1] * 4


def test_flatten_axes_error_names_spec_and_key_path():
    treedef = tu.tree_structure(({"w": 1, "b": 2}, 3))
    with pytest.raises(
        ValueError,
        match=r"vmap in_axes does not match the arguments at key path "
        r"\[0\]: vmap in_axes has a dict with keys \['c', 'w'\] there, the "
        r"arguments have a dict with keys \['b', 'w'\]",
    ):
        internal.flatten_axes("vmap in_axes", treedef, ({"w": 0, "c": 0}, 0))


def test_flatten_axes_with_kws_reports_on_positional_arguments():
    treedef = tu.tree_structure(((1, [2, 3]), {}))
    with pytest.raises(ValueError, match=r"at key path \[1\]: vmap in_axes has a list of length 3"):
        internal.flatten_axes("vmap in_axes", treedef, ((0, [0, 0, 0]), 0), kws=True)


def test_flatten_axes_tupled_args_suggests_wrapping_a_lone_argument():
    treedef = tu.tree_structure((({"a": 1, "b": 2},), {}))
    with pytest.raises(
        ValueError,
        match=r"wrap the specification in a 1-tuple: "
        r"\(\{'a': 0, 'b': None\},\)",
    ):
        internal.flatten_axes(
            "vmap in_axes", treedef, ({"a": 0, "b": None}, 0), kws=True, tupled_args=True
        )


def test_flatten_args_flattens_args_and_kwargs_together():
    leaves, treedef = internal.flatten_args((1, (2,)), {"z": 3, "a": [4]})
    assert leaves == [1, 2, 4, 3]
    assert treedef.unflatten(leaves) == ((1, (2,)), {"z": 3, "a": [4]})


def test_map_mismatch_error_is_none_when_trees_match():
    assert internal.tree_map_mismatch_error("tree_map", [1], ([2],), None) is None


def test_first_difference_counts_leaf_against_subtree_both_ways():
    assert internal.first_difference([1, (2,)], [5, (6,)]) is None
    assert internal.first_difference([1, 2], [1, (2,)]) == (
        (tu.SequenceKey(1),),
        "a leaf of type int",
        "a tuple of length 1",
    )
    assert internal.first_difference([1, (2,)], [1, 2]) == (
        (tu.SequenceKey(1),),
        "a tuple of length 1",
        "a leaf of type int",
    )
    assert internal.first_difference([(1,)], [[1]], is_leaf=lambda x: type(x) is tuple) == (
        (tu.SequenceKey(0),),
        "a tuple of length 1",
        "a list of length 1",
    )


def test_treedef_difference_compares_structures():
    a = tu.tree_structure({"x": [1, 2], "y": None})
    assert internal.treedef_difference(a, tu.tree_structure({"x": [0, 0], "y": None})) is None
    assert internal.treedef_difference(a, tu.tree_structure({"x": [0, 0], "y": 0})) == (
        (tu.DictKey("y"),),
        "None",
        "a leaf",
    )
