"""What the laminax layers above pytree use; no promise is made to code outside laminax.

Names here may change in any release without notice. User code should import from
`laminax_pytree` (or `laminax.tree_util`) instead.
"""

from __future__ import annotations

from typing import Any

from laminax_pytree._prefix import (
    broadcast_prefix,
    first_difference,
    first_mismatch,
    flatten_axes,
    tree_map_mismatch_error,
    treedef_difference,
)
from laminax_pytree._registry import default_registry, none_leaf_registry
from laminax_pytree._tree_util import PyTreeDef

__all__ = [
    "broadcast_prefix",
    "first_difference",
    "first_mismatch",
    "flatten_args",
    "flatten_axes",
    "none_leaf_registry",
    "registry",
    "tree_map_mismatch_error",
    "treedef_difference",
]

registry = default_registry
"""laminax's pytree registry (jaxlib `PyTreeRegistry`); pass it to jaxlib C++ that takes one."""

_flatten = default_registry.flatten


def flatten_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], PyTreeDef]:
    """Flattens a call's arguments as the one pytree `(args, kwargs)`.

    Args:
      args: the positional arguments.
      kwargs: the keyword arguments.

    Returns:
      `(leaves, treedef)`; `treedef.unflatten(leaves)` gives back `(args, kwargs)`.

    Example:
      >>> from laminax_pytree.internal import flatten_args
      >>> flatten_args((1, [2]), {"k": 3})
      ([1, 2, 3], PyTreeDef(((*, [*]), {'k': *})))
    """
    return _flatten((args, kwargs))
