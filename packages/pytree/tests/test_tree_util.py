"""The tree functions of laminax_pytree: flatten, unflatten, map, reduce, transpose, ..."""

import collections
import operator
import pickle

import laminax_pytree as tu
import pytest
from laminax_pytree import PyTreeDef

Point = collections.namedtuple("Point", ["x", "y"])


def test_flatten_orders_dict_keys_and_treats_none_as_empty_subtree():
    leaves, treedef = tu.tree_flatten({"b": [2, None], "a": 1})
    assert leaves == [1, 2]
    assert str(treedef) == "PyTreeDef({'a': *, 'b': [*, None]})"
    assert treedef.num_leaves == 2
    assert treedef.num_nodes == 5


def test_flatten_with_is_leaf_stops_at_matching_subtrees():
    leaves, treedef = tu.tree_flatten([(1, 2), [3]], is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3]
    assert str(treedef) == "PyTreeDef([*, [*]])"


def test_unflatten_inverts_flatten():
    tree = {"a": (1, [2, 3]), "b": Point(4, None), "c": collections.OrderedDict(z=5, y=6)}
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert tu.tree_unflatten(treedef, iter(leaves)) == tree


def test_unflatten_with_too_few_leaves_says_expected_and_given():
    treedef = tu.tree_structure([1, (2, 3)])
    with pytest.raises(ValueError, match=r"has 3 leaves, but 2 were given"):
        tu.tree_unflatten(treedef, [1, 2])


def test_unflatten_with_too_many_leaves_says_expected_and_given():
    treedef = tu.tree_structure([1, 2])
    with pytest.raises(ValueError, match=r"has 2 leaves, but 4 were given"):
        tu.tree_unflatten(treedef, [1, 2, 3, 4])


def test_unflatten_from_an_iterator_of_wrong_length_keeps_jaxlib_message():
    with pytest.raises(ValueError, match=r"Too few leaves for PyTreeDef; expected 2, got 1"):
        tu.tree_unflatten(tu.tree_structure([1, 2]), iter([1]))


def test_leaves_and_structure_agree_with_flatten():
    tree = [1, {"k": (2, 3)}]
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef


def test_map_applies_to_every_leaf_of_one_tree():
    assert tu.tree_map(lambda x: x * 2, {"a": 1, "b": (2, None)}) == {"a": 2, "b": (4, None)}


def test_map_over_several_trees_passes_one_leaf_from_each():
    out = tu.tree_map(lambda x, y, z: x + y + z, [1, (2,)], [10, (20,)], [100, (200,)])
    assert out == [111, (222,)]


def test_map_passes_whole_subtrees_where_the_first_tree_has_a_leaf():
    out = tu.tree_map(lambda x, y: (x, y), [1, 2], [{"a": 3}, (4, 5)])
    assert out == [(1, {"a": 3}), (2, (4, 5))]


def test_map_with_is_leaf_treats_matching_subtrees_as_leaves():
    out = tu.tree_map(len, {"a": (1, 2), "b": [3]}, is_leaf=lambda x: isinstance(x, tuple | list))
    assert out == {"a": 2, "b": 1}


def test_map_mismatch_names_key_path_and_both_subtrees():
    first = [{"w": (1, 2)}, 3]
    second = [{"w": (1, 2, 3)}, 3]
    with pytest.raises(
        ValueError,
        match=r"tree_map: argument 1 differs from argument 0 at key path \[0\]\['w'\]: "
        r"argument 0 has a tuple of length 2 there, argument 1 has a tuple of length 3",
    ):
        tu.tree_map(lambda x, y: x, first, second)


def test_map_mismatch_reports_the_first_differing_argument():
    with pytest.raises(
        ValueError,
        match=r"argument 2 differs from argument 0 at the root: "
        r"argument 0 has a list of length 1 there, argument 2 has a tuple",
    ):
        tu.tree_map(lambda *xs: xs, [1], [2], (3,))


def test_map_mismatch_on_dict_keys_lists_both_key_sets():
    with pytest.raises(
        ValueError,
        match=r"a dict with keys \['a', 'b'\] there, argument 1 has "
        r"a dict with keys \['a', 'c'\]",
    ):
        tu.tree_map(lambda x, y: x, {"a": 1, "b": 2}, {"a": 1, "c": 2})


def test_map_mismatch_where_second_tree_has_a_leaf():
    with pytest.raises(
        ValueError,
        match=r"at key path \[1\]: argument 0 has a list of length 1 "
        r"there, argument 1 has a leaf of type int",
    ):
        tu.tree_map(lambda x, y: x, [1, [2]], [1, 2])


def test_map_treats_none_as_a_node_that_must_match():
    with pytest.raises(ValueError, match=r"at key path \[1\]: argument 0 has None there"):
        tu.tree_map(lambda x, y: x, [1, None], [1, 2])


def test_reduce_folds_left_with_and_without_initializer():
    assert tu.tree_reduce(operator.sub, [10, (1, 2)]) == 7
    assert tu.tree_reduce(operator.sub, [10, (1, 2)], 100) == 87
    with pytest.raises(TypeError, match="empty"):
        tu.tree_reduce(operator.add, [None])


def test_reduce_associative_pairs_halves():
    calls = []

    def op(x, y):
        calls.append((x, y))
        return f"({x}{y})"

    assert tu.tree_reduce_associative(op, ["a", "b", "c", "d"]) == "((ab)(cd))"
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="pass identity="):
        tu.tree_reduce_associative(operator.add, {})


def test_tree_all_is_all_of_leaves():
    assert tu.tree_all([1, (True, "x")])
    assert not tu.tree_all([1, (0,)])
    assert tu.tree_all({})
    assert tu.tree_all([(1, 0)], is_leaf=lambda x: isinstance(x, tuple))


def test_transpose_swaps_outer_and_inner_structure():
    outer = tu.tree_structure({"a": 0, "b": 0})
    inner = tu.tree_structure((0, 0))
    tree = {"a": (1, 2), "b": (3, 4)}
    assert tu.tree_transpose(outer, inner, tree) == ({"a": 1, "b": 3}, {"a": 2, "b": 4})
    assert tu.tree_transpose(outer, None, tree) == ({"a": 1, "b": 3}, {"a": 2, "b": 4})


def test_transpose_with_wrong_leaf_count_is_a_type_error_showing_both_structures():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    with pytest.raises(
        TypeError,
        match=r"(?s)tree_transpose: the tree has structure.*"
        r"\[\(\*, \*, \*\), \(\*, \*\)\].*\[\(\*, \*, \*\), \(\*, \*, \*\)\]",
    ):
        tu.tree_transpose(outer, inner, [(1, 2, 3), (4, 5)])


def test_broadcast_copies_prefix_leaves_over_subtrees():
    out = tu.tree_broadcast([1, {"a": 2}], [[0, 0], {"a": (0, 0)}])
    assert out == [[1, 1], {"a": (2, 2)}]


def test_broadcast_with_non_prefix_names_key_path():
    with pytest.raises(
        ValueError,
        match=r"prefix_tree is not a prefix of full_tree at key path "
        r"\[1\]\['a'\]: prefix_tree has a list of length 3 there, full_tree has "
        r"a list of length 2",
    ):
        tu.tree_broadcast([1, {"a": [1, 2, 3]}], [0, {"a": [0, 0]}])


def test_all_leaves():
    assert tu.all_leaves([1, "a", 2.5])
    assert not tu.all_leaves([1, [2]])
    assert not tu.all_leaves([None])
    assert tu.all_leaves([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))
    assert not tu.all_leaves([[1]], is_leaf=lambda x: isinstance(x, tuple))


def test_is_tree_node():
    assert tu.is_tree_node(list) and tu.is_tree_node(dict) and tu.is_tree_node(type(None))
    assert tu.is_tree_node(Point) and tu.is_tree_node(collections.OrderedDict)
    assert not tu.is_tree_node(int) and not tu.is_tree_node(str)


def test_flatten_one_level():
    assert tu.flatten_one_level((1, [2])) == ((1, [2]), None)
    children, aux = tu.flatten_one_level({"b": 1, "a": 2})
    assert (tuple(children), aux) == ((2, 1), ("a", "b"))
    pairs, aux = tu.flatten_one_level_with_keys({"a": 2})
    assert (tuple(pairs), aux) == (((tu.DictKey("a"), 2),), ("a",))
    with pytest.raises(ValueError, match=r"<class 'int'> is not a pytree node type"):
        tu.flatten_one_level(3)
    with pytest.raises(ValueError, match=r"<class 'str'> is not a pytree node type"):
        tu.flatten_one_level_with_keys("x")


def test_treedef_tuple_children_and_is_leaf():
    a, b = tu.tree_structure([1, 2]), tu.tree_structure({"k": 3})
    both = tu.treedef_tuple([a, b])
    assert both == tu.tree_structure(([1, 2], {"k": 3}))
    assert tu.treedef_children(both) == [a, b]
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert not tu.treedef_is_leaf(a)


def test_treedef_methods():
    treedef = tu.tree_structure({"a": [1, 2], "b": 3})
    assert isinstance(treedef, PyTreeDef)
    assert treedef.num_leaves == 3 and treedef.num_nodes == 5
    assert treedef.unflatten([7, 8, 9]) == {"a": [7, 8], "b": 9}
    assert treedef.flatten_up_to({"a": [(1,), 2], "b": {"z": 0}}) == [(1,), 2, {"z": 0}]
    assert [str(c) for c in treedef.children()] == ["PyTreeDef([*, *])", "PyTreeDef(*)"]
    composed = tu.tree_structure([0, 0]).compose(tu.tree_structure((0, 0)))
    assert composed == tu.tree_structure([(1, 2), (3, 4)])


def test_treedef_equality_and_hash_follow_structure():
    a = tu.tree_structure({"x": [1, 2]})
    b = tu.tree_structure({"x": ["p", "q"]})
    c = tu.tree_structure({"x": (1, 2)})
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2


def test_treedef_pickles_by_registry_reference():
    treedef = tu.tree_structure({"a": (1, [2]), "b": None, "c": collections.OrderedDict(q=1)})
    restored = pickle.loads(pickle.dumps(treedef))
    assert restored == treedef
    assert str(restored) == str(treedef)
    assert pickle.loads(pickle.dumps(tu.default_registry)) is tu.default_registry


def test_treedef_repr_matches_jax_style():
    assert repr(tu.tree_structure((1, [2], {"a": None}))) == "PyTreeDef((*, [*], {'a': None}))"
    expected = "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"
    assert repr(tu.tree_structure(Point(1, 2))) == expected
