"""The tree functions: flatten, unflatten, map, reduce, transpose, and their key-path forms.

Each hot function (flatten, unflatten, leaves, structure, map, and the with-path forms) is one
call into jaxlib's C++ registry plus the least Python around it: no per-call checks beyond
what the C++ does, errors explained only after the C++ raised.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from jaxlib._jax import pytree as _jaxlib_pytree

from laminax_pytree._keys import KeyPath
from laminax_pytree._prefix import broadcast_prefix, tree_map_mismatch_error
from laminax_pytree._registry import default_registry

__all__ = [
    "PyTreeDef",
    "all_leaves",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
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

T = TypeVar("T")
PyTreeDef = _jaxlib_pytree.PyTreeDef
if not PyTreeDef.__doc__:  # jaxlib 0.10.2 gives the class none
    PyTreeDef.__doc__ = (
        "The structure of a pytree without its leaves (jaxlib's C++ class): `num_leaves`, "
        "`num_nodes`, `children()`, `unflatten(leaves)`, `flatten_up_to(tree)`, "
        "`compose(inner)`, `node_data()`; hashable, comparable and picklable."
    )

# The registry's bound methods, looked up once: the hot functions call these directly.
_flatten = default_registry.flatten
_flatten_with_path = default_registry.flatten_with_path


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flattens a pytree into its leaves (in order) and its structure.

    Dicts flatten in sorted key order, `None` is an empty subtree, and any type not
    registered as a node is a leaf.

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      `(leaves, treedef)`; `tree_unflatten(treedef, leaves)` rebuilds `tree`.

    Example:
      >>> from laminax_pytree import tree_flatten
      >>> tree_flatten({"b": (2, 3), "a": 1, "c": None})
      ([1, 2, 3], PyTreeDef({'a': *, 'b': (*, *), 'c': None}))
    """
    return _flatten(tree, is_leaf)


def _unflatten_error(treedef: PyTreeDef, leaves: Any, err: ValueError) -> ValueError | None:
    if not hasattr(leaves, "__len__") or len(leaves) == treedef.num_leaves:
        return None
    return ValueError(
        f"tree_unflatten: {treedef} has {treedef.num_leaves} leaves, but {len(leaves)} were "
        "given. Pass exactly treedef.num_leaves leaves, in the order tree_flatten returns them."
    )


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Builds the pytree with structure `treedef` from `leaves`.

    Args:
      treedef: a structure, e.g. from `tree_flatten` or `tree_structure`.
      leaves: exactly `treedef.num_leaves` leaves, in flatten order.

    Returns:
      The pytree.

    Raises:
      ValueError: the number of leaves is wrong; says how many were expected and given.

    Example:
      >>> from laminax_pytree import tree_structure, tree_unflatten
      >>> tree_unflatten(tree_structure([0, (0, 0)]), "abc")
      ['a', ('b', 'c')]
    """
    try:
        return treedef.unflatten(leaves)
    except ValueError as err:
        error = _unflatten_error(treedef, leaves, err)
        if error is None:
            raise
        raise error from err


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of a pytree, in flatten order.

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      The list of leaves.

    Example:
      >>> from laminax_pytree import tree_leaves
      >>> tree_leaves([1, {"y": 3, "x": 2}, None])
      [1, 2, 3]
    """
    return _flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure (treedef) of a pytree, without its leaves.

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      The `PyTreeDef`.

    Example:
      >>> from laminax_pytree import tree_structure
      >>> tree_structure((1, [2, 3]))
      PyTreeDef((*, [*, *]))
    """
    return _flatten(tree, is_leaf)[1]


def tree_map(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Applies `f` to the leaves of one or more trees, keeping the first tree's structure.

    Args:
      f: called with one leaf from each tree.
      tree: the first tree; its structure is the result's.
      *rest: more trees, each with `tree`'s structure or extending it (where `tree` has a
        leaf, they may have a whole subtree, passed to `f` as it is).
      is_leaf: optional predicate applied to `tree`'s subtrees.

    Returns:
      A tree like `tree` holding `f`'s results.

    Raises:
      ValueError: a tree in `rest` differs from `tree`; names the key path and both subtrees.

    Example:
      >>> from laminax_pytree import tree_map
      >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
      {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = _flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten(map(f, leaves))
    try:
        others = [treedef.flatten_up_to(other) for other in rest]
    except ValueError as err:
        error = tree_map_mismatch_error("tree_map", tree, rest, is_leaf)
        if error is None:
            raise
        raise error from err
    return treedef.unflatten(map(f, leaves, *others))


class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_UNSPECIFIED: Any = _Unspecified()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: T = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Folds `function` over the leaves from left to right, like `functools.reduce`.

    Args:
      function: `(accumulated, leaf) -> accumulated`.
      tree: the pytree.
      initializer: optional starting value.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      The reduced value.

    Raises:
      TypeError: the tree has no leaves and no initializer was given.

    Example:
      >>> import operator
      >>> from laminax_pytree import tree_reduce
      >>> tree_reduce(operator.add, [1, (2, 3)], 100)
      106
    """
    leaves = _flatten(tree, is_leaf)[0]
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _reduce_halves(leaves: list[Any], operation: Callable[[T, T], T]) -> T:
    if len(leaves) == 1:
        return leaves[0]
    middle = len(leaves) // 2
    return operation(
        _reduce_halves(leaves[:middle], operation), _reduce_halves(leaves[middle:], operation)
    )


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: T = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Reduces the leaves with an associative `operation` as a balanced binary tree.

    The pairing is `op(reduce(first half), reduce(second half))`, recursively, so the depth
    of nested calls is logarithmic in the number of leaves.

    Args:
      operation: an associative `(x, y) -> z`.
      tree: the pytree.
      identity: returned for a tree with no leaves.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      The reduced value.

    Raises:
      TypeError: the tree has no leaves and no identity was given.

    Example:
      >>> import operator
      >>> from laminax_pytree import tree_reduce_associative
      >>> tree_reduce_associative(operator.add, {"a": [1, 2], "b": 3})
      6
    """
    leaves = _flatten(tree, is_leaf)[0]
    if leaves:
        return _reduce_halves(leaves, operation)
    if identity is _UNSPECIFIED:
        raise TypeError(
            "tree_reduce_associative: the tree has no leaves; pass identity=... to say what an "
            "empty reduction returns."
        )
    return identity


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every leaf is truthy (and for a tree with no leaves).

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.

    Returns:
      `all(tree_leaves(tree))`.

    Example:
      >>> from laminax_pytree import tree_all
      >>> tree_all([True, {"a": 1}]), tree_all([True, (0,)]), tree_all([None])
      (True, False, True)
    """
    return all(_flatten(tree, is_leaf)[0])


def _transpose_error(outer: PyTreeDef, inner: PyTreeDef, treedef: PyTreeDef) -> TypeError:
    return TypeError(
        f"tree_transpose: the tree has structure\n  {treedef}\nbut outer_treedef composed with "
        f"inner_treedef is\n  {outer.compose(inner)}\n({outer.num_leaves} outer x "
        f"{inner.num_leaves} inner leaves, the tree has {treedef.num_leaves}). Pass treedefs "
        "that describe the tree, e.g. from tree_structure."
    )


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turns a tree of trees inside out: an outer tree of inner trees becomes the reverse.

    Args:
      outer_treedef: the outer structure.
      inner_treedef: the structure of each inner tree; None infers it from the first one.
      pytree_to_transpose: a tree of structure `outer_treedef.compose(inner_treedef)`.

    Returns:
      A tree of structure `inner_treedef.compose(outer_treedef)`.

    Raises:
      TypeError: the tree's leaf count is not outer leaves x inner leaves.

    Example:
      >>> from laminax_pytree import tree_structure, tree_transpose
      >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0, 0))
      >>> tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])
      ([1, 4], [2, 5], [3, 6])
    """
    leaves, treedef = _flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = _flatten(outer_treedef.flatten_up_to(pytree_to_transpose)[0])[1]
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise _transpose_error(outer_treedef, inner_treedef, treedef)
    # leaves[o * inner_size + i] is inner leaf i of outer leaf o.
    columns = [leaves[i::inner_size] for i in range(inner_size)]
    return inner_treedef.unflatten([outer_treedef.unflatten(column) for column in columns])


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Copies each leaf of `prefix_tree` over the subtree it covers in `full_tree`.

    Args:
      prefix_tree: a prefix of `full_tree` (the same structure, or stopping early).
      full_tree: the tree whose structure the result takes.
      is_leaf: optional predicate applied to `prefix_tree`'s subtrees.

    Returns:
      A tree of `full_tree`'s structure.

    Raises:
      ValueError: `prefix_tree` is not a prefix of `full_tree`; names the key path.

    Example:
      >>> from laminax_pytree import tree_broadcast
      >>> tree_broadcast([1, 2], [(0, 0), {"a": 0}])
      [(1, 1), {'a': 2}]
    """
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf)
    return _flatten(full_tree)[1].unflatten(leaves)


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every item of `iterable` is a leaf (not a pytree node).

    Args:
      iterable: the items to test.
      is_leaf: optional predicate; an item for which it returns True counts as a leaf.

    Returns:
      Whether all items are leaves.

    Example:
      >>> from laminax_pytree import all_leaves
      >>> all_leaves([1, "a", 2.0]), all_leaves([1, (2,)])
      (True, False)
    """
    if is_leaf is None:
        return _jaxlib_pytree.all_leaves(default_registry, iterable)
    items = list(iterable)
    leaves = _flatten(items, is_leaf)[0]
    return len(leaves) == len(items) and all(
        item is leaf for item, leaf in zip(items, leaves, strict=True)
    )


def is_tree_node(typ: type) -> bool:
    """True when `typ` is a pytree node type (built in, registered, or a namedtuple).

    Args:
      typ: a type.

    Returns:
      Whether instances of `typ` are flattened into children.

    Example:
      >>> from laminax_pytree import is_tree_node
      >>> is_tree_node(dict), is_tree_node(int)
      (True, False)
    """
    return default_registry.is_node(typ)


def _not_a_node(tree: Any) -> ValueError:
    return ValueError(
        f"flatten_one_level: {type(tree)} is not a pytree node type, so it has no children. "
        "Register it (register_pytree_node, register_dataclass, ...) to flatten it."
    )


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """Splits one pytree node into its direct children and its aux data.

    Args:
      tree: a pytree node (built in or registered).

    Returns:
      `(children, aux_data)`.

    Raises:
      ValueError: `tree` is a leaf.

    Example:
      >>> from laminax_pytree import flatten_one_level
      >>> flatten_one_level({"b": [1, 2], "a": 3})
      ((3, [1, 2]), ('a', 'b'))
    """
    level = default_registry.flatten_one_level(tree)
    if level is None:
        raise _not_a_node(tree)
    return level


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """Like `flatten_one_level`, but each child comes with its key: `((key, child)...)`.

    Args:
      tree: a pytree node (built in or registered).

    Returns:
      `(key_child_pairs, aux_data)`.

    Raises:
      ValueError: `tree` is a leaf.

    Example:
      >>> from laminax_pytree import flatten_one_level_with_keys
      >>> flatten_one_level_with_keys([7, 8])
      (((SequenceKey(idx=0), 7), (SequenceKey(idx=1), 8)), None)
    """
    level = default_registry.flatten_one_level_with_keys(tree)
    if level is None:
        raise _not_a_node(tree)
    return level


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the given structures.

    Args:
      treedefs: the children's structures.

    Returns:
      The tuple's `PyTreeDef`.

    Example:
      >>> from laminax_pytree import tree_structure, treedef_tuple
      >>> treedef_tuple([tree_structure([1, 2]), tree_structure({"a": 3})])
      PyTreeDef(([*, *], {'a': *}))
    """
    return _jaxlib_pytree.treedef_tuple(default_registry, list(treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root node's direct children.

    Args:
      treedef: a structure.

    Returns:
      One `PyTreeDef` per child (an empty list for a leaf).

    Example:
      >>> from laminax_pytree import tree_structure, treedef_children
      >>> treedef_children(tree_structure([(1, 2), 3]))
      [PyTreeDef((*, *)), PyTreeDef(*)]
    """
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True when the structure is a single node: a leaf, or an empty node such as `None`.

    Args:
      treedef: a structure.

    Returns:
      Whether `treedef.num_nodes == 1`.

    Example:
      >>> from laminax_pytree import tree_structure, treedef_is_leaf
      >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure([1]))
      (True, False)
    """
    return treedef.num_nodes == 1


def _takes_path_only_leaf(is_leaf: Callable[[Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda _path, x: is_leaf(x)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flattens a pytree into `(key path, leaf)` pairs and its structure.

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.
      is_leaf_takes_path: call `is_leaf(path, subtree)` instead of `is_leaf(subtree)`.

    Returns:
      `([(path, leaf), ...], treedef)`.

    Example:
      >>> from laminax_pytree import tree_flatten_with_path
      >>> pairs, treedef = tree_flatten_with_path({"a": [5]})
      >>> pairs
      [((DictKey(key='a'), SequenceKey(idx=0)), 5)]
    """
    if is_leaf is not None and not is_leaf_takes_path:
        is_leaf = _takes_path_only_leaf(is_leaf)
    return _flatten_with_path(tree, is_leaf)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The `(key path, leaf)` pairs of a pytree, in flatten order.

    Args:
      tree: the pytree.
      is_leaf: optional predicate; a subtree for which it returns True is a leaf.
      is_leaf_takes_path: call `is_leaf(path, subtree)` instead of `is_leaf(subtree)`.

    Returns:
      The list of pairs.

    Example:
      >>> from laminax_pytree import keystr, tree_leaves_with_path
      >>> [(keystr(p), x) for p, x in tree_leaves_with_path((1, {"k": 2}))]
      [('[0]', 1), ("[1]['k']", 2)]
    """
    if is_leaf is not None and not is_leaf_takes_path:
        is_leaf = _takes_path_only_leaf(is_leaf)
    return _flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like `tree_map`, but `f` also receives each leaf's key path, as its first argument.

    Args:
      f: called as `f(path, leaf, *leaves_of_rest)`.
      tree: the first tree; its structure is the result's.
      *rest: more trees, each with `tree`'s structure or extending it.
      is_leaf: optional predicate applied to `tree`'s subtrees.
      is_leaf_takes_path: call `is_leaf(path, subtree)` instead of `is_leaf(subtree)`.

    Returns:
      A tree like `tree` holding `f`'s results.

    Raises:
      ValueError: a tree in `rest` differs from `tree`; names the key path and both subtrees.

    Example:
      >>> from laminax_pytree import keystr, tree_map_with_path
      >>> tree_map_with_path(lambda path, x: f"{keystr(path)}={x}", {"a": 1, "b": [2]})
      {'a': "['a']=1", 'b': ["['b'][0]=2"]}
    """
    path_is_leaf = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        path_is_leaf = _takes_path_only_leaf(is_leaf)
    pairs, treedef = _flatten_with_path(tree, path_is_leaf)
    if not rest:
        return treedef.unflatten(itertools.starmap(f, pairs))
    try:
        others = [treedef.flatten_up_to(other) for other in rest]
    except ValueError as err:
        error = tree_map_mismatch_error(
            "tree_map_with_path", tree, rest, is_leaf, is_leaf_takes_path
        )
        if error is None:
            raise
        raise error from err
    paths = [path for path, _ in pairs]
    leaves = [leaf for _, leaf in pairs]
    return treedef.unflatten(map(f, paths, leaves, *others))
