"""`laminax_pytree.tree`: the short names, as in `jax.tree` (`tree.map`, `tree.leaves`, ...).

Each name is the same function as its `tree_*` counterpart in `laminax_pytree` (no extra call
layer), except `static`, which only exists here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from laminax_pytree._tree_util import (
    tree_all,
    tree_broadcast,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_reduce_associative,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)

__all__ = [
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

# These names shadow builtins inside this module only; they are the public spelling of jax.tree.
all = tree_all  # noqa: A001
broadcast = tree_broadcast
flatten = tree_flatten
flatten_with_path = tree_flatten_with_path
leaves = tree_leaves
leaves_with_path = tree_leaves_with_path
map = tree_map  # noqa: A001
map_with_path = tree_map_with_path
reduce = tree_reduce
reduce_associative = tree_reduce_associative
structure = tree_structure
transpose = tree_transpose
unflatten = tree_unflatten


def static(**kwargs: Any) -> Any:
    """A `dataclasses.field` marked static, for `register_dataclass` without field lists.

    Args:
      **kwargs: passed to `dataclasses.field` (`default=`, `metadata=`, ...); the metadata
        gets `"static": True`.

    Returns:
      The field.

    Example:
      >>> import dataclasses
      >>> from laminax_pytree import register_dataclass, tree
      >>> @register_dataclass
      ... @dataclasses.dataclass
      ... class Op:
      ...     x: float
      ...     kind: str = tree.static(default="add")
      >>> tree.flatten(Op(1.0))
      ([1.0], PyTreeDef(CustomNode(Op[('add',)], [*])))
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
