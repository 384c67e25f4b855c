"""Property tests: flatten/unflatten round-trips random nested trees."""

import collections
import dataclasses

import laminax_pytree as tu
from hypothesis import given, settings
from hypothesis import strategies as st

NT = collections.namedtuple("NT", "left right")


@tu.register_pytree_node_class
class Node:
    def __init__(self, children, tag):
        self.children, self.tag = list(children), tag

    def tree_flatten(self):
        return self.children, self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(children, tag)

    def __eq__(self, other):
        return type(other) is Node and (self.children, self.tag) == (other.children, other.tag)


@tu.register_dataclass
@dataclasses.dataclass
class Record:
    value: object
    label: str = dataclasses.field(default="r", metadata={"static": True})


leaf_values = st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
keys = st.text(min_size=1, max_size=3)


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(keys, children, max_size=4),
        st.builds(NT, children, children),
        st.dictionaries(keys, children, max_size=4).map(collections.OrderedDict),
        st.builds(Node, st.lists(children, max_size=3), st.sampled_from(["a", "b"])),
        st.builds(Record, children, st.sampled_from(["x", "y"])),
    )


trees = st.recursive(leaf_values | st.none(), _containers, max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(trees)
def test_unflatten_of_flatten_is_the_tree(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    assert all(x is not None for x in leaves)


@settings(max_examples=200, deadline=None)
@given(trees)
def test_map_keeps_structure_and_paths_match_leaves(tree):
    treedef = tu.tree_structure(tree)
    assert tu.tree_structure(tu.tree_map(lambda x: 0, tree)) == treedef
    pairs, path_treedef = tu.tree_flatten_with_path(tree)
    assert path_treedef == treedef
    assert [leaf for _, leaf in pairs] == tu.tree_leaves(tree)
    assert len({path for path, _ in pairs}) == len(pairs)


@settings(max_examples=100, deadline=None)
@given(trees)
def test_a_tree_is_a_prefix_of_itself_and_broadcasts_to_its_leaves(tree):
    assert tu.tree_broadcast(tree, tree) == tree
    from laminax_pytree.internal import first_mismatch

    assert first_mismatch(tree, tree) is None


@settings(max_examples=100, deadline=None)
@given(trees, trees)
def test_map_over_two_trees_succeeds_or_names_a_key_path(first, second):
    try:
        tu.tree_map(lambda x, y: x, first, second)
    except ValueError as err:
        assert "tree_map: argument 1 differs from argument 0 at " in str(err)
