"""Key paths: flatten/leaves/map with path, keystr and the key classes."""

import collections

import laminax_pytree as tu
import pytest


def test_flatten_with_path_gives_a_path_per_leaf_and_the_same_treedef():
    tree = {"a": [1, (2,)], "b": None, "c": 3}
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert [leaf for _, leaf in pairs] == [1, 2, 3]
    assert pairs[1][0] == (tu.DictKey("a"), tu.SequenceKey(1), tu.SequenceKey(0))
    assert treedef == tu.tree_structure(tree)


def test_leaves_with_path_and_is_leaf_forms():
    tree = {"a": (1, 2), "b": [3]}
    plain = tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert [(tu.keystr(p), x) for p, x in plain] == [("['a']", (1, 2)), ("['b'][0]", 3)]
    by_path = tu.tree_leaves_with_path(
        tree, is_leaf=lambda path, x: len(path) == 1, is_leaf_takes_path=True
    )
    assert [x for _, x in by_path] == [(1, 2), [3]]
    _, treedef = tu.tree_flatten_with_path(
        tree, is_leaf=lambda path, x: len(path) == 1, is_leaf_takes_path=True
    )
    assert str(treedef) == "PyTreeDef({'a': *, 'b': *})"


def test_map_with_path_passes_path_first():
    out = tu.tree_map_with_path(
        lambda p, x, y: (tu.keystr(p), x + y), [1, {"k": 2}], [10, {"k": 20}]
    )
    assert out == [("[0]", 11), {"k": ("[1]['k']", 22)}]


def test_map_with_path_is_leaf_forms():
    tree = {"a": (1, 2)}
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p), tree, is_leaf=lambda x: type(x) is tuple)
    assert out == {"a": "['a']"}
    out = tu.tree_map_with_path(
        lambda p, x: len(x), tree, is_leaf=lambda p, x: p != (), is_leaf_takes_path=True
    )
    assert out == {"a": 2}


def test_map_with_path_mismatch_names_key_path():
    with pytest.raises(
        ValueError,
        match=r"tree_map_with_path: argument 1 differs from argument 0 "
        r"at key path \['a'\]: argument 0 has a list of length 2",
    ):
        tu.tree_map_with_path(lambda p, x, y: x, {"a": [1, 2]}, {"a": [1]})


def test_keystr_default_simple_and_separator():
    path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"), tu.FlattenedIndexKey(2))
    assert tu.keystr(path) == "['a'][0].x[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "a/0/x/2"
    assert tu.keystr(path, separator="|") == "['a']|[0]|.x|[<flat index 2>]"
    assert tu.keystr(()) == ""
    assert tu.keystr(("any", 3), simple=True, separator=".") == "any.3"


def test_key_classes_compare_hash_and_expose_fields():
    assert tu.SequenceKey(1) == tu.SequenceKey(1) and tu.SequenceKey(1) != tu.SequenceKey(2)
    assert hash(tu.DictKey("a")) == hash(tu.DictKey("a"))
    assert tu.SequenceKey(3).idx == 3 and tu.DictKey("k").key == "k"
    assert tu.GetAttrKey("n").name == "n" and tu.FlattenedIndexKey(4).key == 4


def test_namedtuple_paths_use_field_names():
    NT = collections.namedtuple("NT", "first second")
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([NT(1, 2)])]
    assert paths == ["[0].first", "[0].second"]


def test_map_with_path_mismatch_respects_path_taking_is_leaf():
    def stop_at_a(path, x):
        return path == (tu.DictKey("a"),)

    out = tu.tree_map_with_path(
        lambda p, x, y: y,
        {"a": [1], "b": [2]},
        {"a": [1, 2], "b": [3]},
        is_leaf=stop_at_a,
        is_leaf_takes_path=True,
    )
    assert out == {"a": [1, 2], "b": [3]}
    with pytest.raises(ValueError, match=r"at key path \['b'\]: argument 0 has a list of length 1"):
        tu.tree_map_with_path(
            lambda p, x, y: y,
            {"a": [1], "b": [2]},
            {"a": [1, 2], "b": [3, 4]},
            is_leaf=stop_at_a,
            is_leaf_takes_path=True,
        )
