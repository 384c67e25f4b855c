"""Tree prefixes: broadcasting a prefix tree over a full tree, and saying where two trees differ.

A tree `p` is a prefix of a tree `t` when `t` is `p` with some leaves replaced by subtrees.
`tree_map(f, a, b)` needs `a` to be a prefix of `b`; vmap's `in_axes` must be a prefix of
the arguments. When that fails, jaxlib's C++ says little ("Expected list, got ..."); the
functions here walk both trees from the root and name the first key path where they part,
with what each tree has there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from laminax_pytree._keys import GetAttrKey, KeyPath, keystr
from laminax_pytree._registry import default_registry, none_leaf_registry

__all__ = [
    "broadcast_prefix",
    "first_difference",
    "first_mismatch",
    "flatten_axes",
    "tree_map_mismatch_error",
    "treedef_difference",
    "describe",
]


class _PytreeLeaf:
    """Stands in for the leaves of a treedef when only its structure matters."""

    def __repr__(self) -> str:
        return "pytree leaf"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def describe(node: Any) -> str:
    """A short phrase for the top of a subtree: 'a tuple of length 2', 'a leaf of type int'."""
    if node is None:
        return "None"
    if isinstance(node, _PytreeLeaf):
        return "a leaf"
    level = default_registry.flatten_one_level(node)
    kind = type(node).__name__
    if level is None:
        return f"a leaf of type {kind}"
    children, aux_data = level
    if type(node) in (list, tuple):
        return f"a {kind} of length {len(node)}"
    if type(node) is dict:
        return f"a dict with keys {list(aux_data)}"
    if isinstance(node, tuple) and hasattr(type(node), "_fields"):
        return f"a namedtuple {kind}"
    count = len(list(children))
    return f"{_article(kind)} {kind} node with {count} children and metadata {aux_data!r}"


def _child_keys(node: Any) -> list[Any]:
    if isinstance(node, tuple) and hasattr(type(node), "_fields"):
        # jaxlib 0.10.2's flatten_one_level_with_keys repeats the first field's name for every
        # namedtuple child, so build the keys from the fields.
        return [GetAttrKey(name) for name in node._fields]
    key_children, _ = default_registry.flatten_one_level_with_keys(node)
    return [key for key, _ in key_children]


def first_mismatch(
    prefix: Any,
    full: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> tuple[KeyPath, str, str] | None:
    """Where `full` stops extending `prefix`, walking both from the root in flatten order.

    Args:
      prefix: the tree that should be a prefix.
      full: the tree that should extend it.
      is_leaf: applied to `prefix`'s subtrees only, as in `tree_map`.
      is_leaf_takes_path: call `is_leaf(key_path, subtree)`, as `tree_map_with_path` can.

    Returns:
      `(key path, phrase for prefix's subtree, phrase for full's subtree)` at the first
      difference, or None when `prefix` is a prefix of `full`.
    """
    return _first_mismatch((), prefix, full, is_leaf, is_leaf_takes_path)


def _first_mismatch(path, prefix, full, is_leaf, is_leaf_takes_path):
    if is_leaf is not None and (is_leaf(path, prefix) if is_leaf_takes_path else is_leaf(prefix)):
        return None
    if default_registry.flatten_one_level(prefix) is None:
        return None
    mismatch = (path, describe(prefix), describe(full))
    if type(prefix) is not type(full):
        return mismatch
    prefix_children, prefix_aux = default_registry.flatten_one_level(prefix)
    full_children, full_aux = default_registry.flatten_one_level(full)
    prefix_children, full_children = list(prefix_children), list(full_children)
    if len(prefix_children) != len(full_children) or prefix_aux != full_aux:
        return mismatch
    for key, prefix_child, full_child in zip(
        _child_keys(prefix), prefix_children, full_children, strict=True
    ):
        found = _first_mismatch((*path, key), prefix_child, full_child, is_leaf, is_leaf_takes_path)
        if found is not None:
            return found
    return None


def first_difference(
    tree1: Any, tree2: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[KeyPath, str, str] | None:
    """Where two trees that should have the same structure first differ.

    Unlike `first_mismatch`, a leaf in `tree1` against a subtree in `tree2` is a difference.
    Use it for checks such as "the loop carry keeps its structure".

    Args:
      tree1: one tree.
      tree2: the other.
      is_leaf: optional predicate, applied to both trees' subtrees.

    Returns:
      `(key path, phrase for tree1's subtree, phrase for tree2's subtree)`, or None when the
      structures are equal.

    Example:
      >>> from laminax_pytree.internal import first_difference
      >>> first_difference({"a": 1, "b": [2]}, {"a": (1,), "b": [2]})
      ((DictKey(key='a'),), 'a leaf of type int', 'a tuple of length 1')
    """
    found = first_mismatch(tree1, tree2, is_leaf)
    if found is not None:
        return found
    found = first_mismatch(tree2, tree1, is_leaf)
    if found is None:
        return None
    path, phrase2, phrase1 = found
    return path, phrase1, phrase2


def treedef_difference(treedef1, treedef2) -> tuple[KeyPath, str, str] | None:
    """`first_difference` for two treedefs: where their structures first differ, or None.

    Example:
      >>> from laminax_pytree import tree_structure
      >>> from laminax_pytree.internal import treedef_difference
      >>> treedef_difference(tree_structure([1, (2, 3)]), tree_structure([1, (2,)]))
      ((SequenceKey(idx=1),), 'a tuple of length 2', 'a tuple of length 1')
    """
    tree1 = treedef1.unflatten([_PytreeLeaf()] * treedef1.num_leaves)
    tree2 = treedef2.unflatten([_PytreeLeaf()] * treedef2.num_leaves)
    return first_difference(tree1, tree2)


def _where(path: KeyPath) -> str:
    return f"key path {keystr(path)}" if path else "the root"


def tree_map_mismatch_error(
    fn_name: str,
    tree: Any,
    rest: tuple[Any, ...],
    is_leaf: Callable[..., bool] | None,
    is_leaf_takes_path: bool = False,
) -> ValueError | None:
    """The error for `fn_name(f, tree, *rest)` when some tree in `rest` does not extend `tree`.

    Returns None when every tree extends `tree` (the failure was something else).
    """
    for position, other in enumerate(rest, start=1):
        found = first_mismatch(tree, other, is_leaf, is_leaf_takes_path)
        if found is None:
            continue
        path, there, here = found
        return ValueError(
            f"{fn_name}: argument {position} differs from argument 0 at {_where(path)}: "
            f"argument 0 has {there} there, argument {position} has {here}. Every tree must "
            "have the structure of the first one, or extend it by putting subtrees at its "
            "leaves."
        )
    return None


def _prefix_error(what: str, prefix_name: str, full_name: str, found) -> ValueError:
    path, there, here = found
    return ValueError(
        f"{what}: {prefix_name} is not a prefix of {full_name} at {_where(path)}: "
        f"{prefix_name} has {there} there, {full_name} has {here}. A prefix may stop early (one "
        "leaf stands for a whole subtree) but must otherwise have the same structure."
    )


def _repeat_over_subtrees(prefix_leaves: list[Any], subtrees: list[Any]) -> list[Any]:
    result: list[Any] = []
    for leaf, subtree in zip(prefix_leaves, subtrees, strict=True):
        result.extend([leaf] * default_registry.flatten(subtree)[1].num_leaves)
    return result


def broadcast_prefix(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[Any]:
    """Repeats each leaf of `prefix_tree` once per leaf of the subtree it covers in `full_tree`.

    Args:
      prefix_tree: a prefix of `full_tree`.
      full_tree: the tree whose leaves are counted.
      is_leaf: applied when flattening `prefix_tree`.

    Returns:
      A list with one entry per leaf of `full_tree`.

    Raises:
      ValueError: `prefix_tree` is not a prefix of `full_tree`; names the key path.

    Example:
      >>> from laminax_pytree.internal import broadcast_prefix
      >>> broadcast_prefix(["x", "y"], [(1, 2), {"a": 3}])
      ['x', 'x', 'y']
    """
    prefix_leaves, prefix_def = default_registry.flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as err:
        found = first_mismatch(prefix_tree, full_tree, is_leaf)
        if found is None:
            raise
        raise _prefix_error("broadcast_prefix", "prefix_tree", "full_tree", found) from err
    return _repeat_over_subtrees(prefix_leaves, subtrees)


def _is_none(x: Any) -> bool:
    return x is None


def _tupled_args_hint(name: str, treedef, axis_tree: Any) -> str:
    if len(treedef.children()) != 1:
        return ""
    dummy = treedef.unflatten([_PytreeLeaf()] * treedef.num_leaves)
    if first_mismatch((axis_tree,), dummy, _is_none) is not None:
        return ""
    return (
        f" {name} has one entry per positional argument; for a single argument that is a "
        f"pytree, wrap the specification in a 1-tuple: ({axis_tree!r},)."
    )


def _flatten_axes_error(name: str, treedef, axis_tree: Any, kws: bool, tupled_args: bool):
    found = None
    if kws:
        # The tree is (args, kwargs) and the specification (spec, kwargs spec): users wrote
        # the args part, so report on it when the mismatch is there.
        args_treedef, args_axis_tree = treedef.children()[0], axis_tree[0]
        dummy = args_treedef.unflatten([_PytreeLeaf()] * args_treedef.num_leaves)
        found = first_mismatch(args_axis_tree, dummy, _is_none)
        if found is not None:
            treedef, axis_tree = args_treedef, args_axis_tree
    if found is None:
        dummy = treedef.unflatten([_PytreeLeaf()] * treedef.num_leaves)
        found = first_mismatch(axis_tree, dummy, _is_none)
    if found is None:
        return None
    path, there, here = found
    hint = _tupled_args_hint(name, treedef, axis_tree) if tupled_args else ""
    return ValueError(
        f"{name} does not match the arguments at {_where(path)}: {name} has {there} there, "
        f"the arguments have {here}. {name} must be a prefix of the arguments' pytree, where "
        f"one leaf (an int, or None) stands for a whole subtree.{hint}"
    )


def flatten_axes(
    name: str, treedef, axis_tree: Any, *, kws: bool = False, tupled_args: bool = False
) -> list[Any]:
    """Broadcasts an axis specification (a prefix tree, `None` a leaf) to `treedef`'s leaves.

    This is what vmap's `in_axes`/`out_axes` and similar per-argument specifications need.

    Args:
      name: how the specification is called in errors (e.g. "vmap in_axes").
      treedef: the structure of the value, e.g. of `(args, kwargs)`.
      axis_tree: the specification; `None` in it is a leaf, not an empty subtree.
      kws: `treedef` and `axis_tree` are `(args, kwargs)` pairs; errors speak about args.
      tupled_args: the specification has one entry per positional argument; errors then
        suggest wrapping a lone pytree argument's specification in a 1-tuple.

    Returns:
      A list of `treedef.num_leaves` entries.

    Raises:
      ValueError: `axis_tree` is not a prefix of `treedef`; names the key path.

    Example:
      >>> from laminax_pytree import tree_structure
      >>> from laminax_pytree.internal import flatten_axes
      >>> treedef = tree_structure(({"w": 1, "b": 2}, 3))
      >>> flatten_axes("vmap in_axes", treedef, (0, None))
      [0, 0, None]
    """
    axis_leaves, axis_def = none_leaf_registry.flatten(axis_tree)
    dummy = treedef.unflatten([_PytreeLeaf()] * treedef.num_leaves)
    try:
        subtrees = axis_def.flatten_up_to(dummy)
    except ValueError as err:
        error = _flatten_axes_error(name, treedef, axis_tree, kws, tupled_args)
        if error is None:
            raise
        raise error from err
    return _repeat_over_subtrees(axis_leaves, subtrees)
