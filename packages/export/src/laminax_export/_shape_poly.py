"""Shape polymorphism's public API (JAX's `jax.export.symbolic_shape`, `symbolic_args_specs`,
`SymbolicScope`): dimension expressions come from core (`DimExpr`, which avals hold); this
module parses specifications into them and builds argument specs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from laminax_core import ShapeDtypeStruct
from laminax_core.internal import DimExpr, SymbolicScope, parse_shape
from laminax_pytree import tree_flatten, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

__all__ = ["SymbolicScope", "is_symbolic_dim", "symbolic_args_specs", "symbolic_shape"]


def is_symbolic_dim(p) -> bool:
    """Whether `p` is a symbolic dimension (a dimension expression, not an int)."""
    return isinstance(p, DimExpr)


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None, like: Sequence[int | None] | None = None):
    """The dimensions of a shape specification such as `"b, 2*n + 1"`: ints and dimension
    expressions of one `SymbolicScope` (`scope`, or a new one with `constraints`).

    Args:
      shape_spec: comma-separated dimension expressions, optionally in parentheses; `_` takes
        the dimension from `like`, a trailing `...` the remaining ones.
      constraints: `>=`, `<=` and `==` constraints among the variables (a new scope).
      scope: the scope to create the variables in (not together with `constraints`).
      like: the actual shape, where `_` or `...` are used (None for unknown entries).
    """
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if shape_spec is None:
        shape_spec = "..."
    if not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. Found {shape_spec!r}.")
    return parse_shape(shape_spec, scope, None if like is None else tuple(like))


def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None):
    """`ShapeDtypeStruct`s for `args` (a pytree of arrays or anything with `.shape` and
    `.dtype`) with the symbolic shapes of `shapes_specs` (one string for every leaf, or a
    pytree prefix of `args` with strings or None for static shapes), sharing one scope."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    leaves, tree = tree_flatten(args)
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        prefix = tuple(shapes_specs) if (
            isinstance(args, tuple) and isinstance(shapes_specs, list)) else shapes_specs
        specs = broadcast_prefix(prefix, args, is_leaf=lambda x: x is None)
    out = []
    for leaf, spec in zip(leaves, specs, strict=True):
        shape, dtype = np.shape(leaf), np.result_type(getattr(leaf, "dtype", leaf))
        dims = symbolic_shape(spec, scope=scope, like=shape)
        out.append(ShapeDtypeStruct(dims, dtype, sharding=getattr(leaf, "sharding", None)))
    return tree_unflatten(tree, out)
