"""JAX's `jax.api_util`: helpers that libraries building their own transformations use —
abstract values of arguments (`shaped_abstractify`), per-leaf axis and donation specifications
(`flatten_axes`, `donation_vector`, `rebase_donate_argnums`) and a length-checked `safe_map`.

Absent: JAX's `flatten_fun`, `flatten_fun_nokwargs`, `argnums_partial` and `debug_info`, which
act on JAX's `linear_util.WrappedFun` objects; laminax's transformations take plain callables.
"""

from __future__ import annotations

from laminax_pytree.internal import flatten_axes as flatten_axes

from laminax_core._avals import ShapedArray, get_aval

__all__ = ["donation_vector", "flatten_axes", "rebase_donate_argnums", "safe_map",
           "shaped_abstractify"]


def shaped_abstractify(x) -> ShapedArray:
    """The abstract value (`ShapedArray`) of an array, scalar or `ShapeDtypeStruct`.

    Example:
      >>> shaped_abstractify(1.0)
      ShapedArray(float32[], weak_type=True)
    """
    if not hasattr(x, "aval") and hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(
            x, "__array__"):
        return ShapedArray(tuple(x.shape), x.dtype, getattr(x, "weak_type", False))
    return get_aval(x)


def safe_map(f, *args) -> list:
    """`list(map(f, *args))`, refusing arguments of different lengths.

    Example:
      >>> safe_map(lambda a, b: a + b, [1, 2], [3, 4])
      [4, 6]
    """
    args = list(map(list, args))
    n = len(args[0])
    for i, arg in enumerate(args[1:], 2):
        if len(arg) != n:
            raise ValueError(f"safe_map() argument {i} is "
                             f"{'longer' if len(arg) > n else 'shorter'} than argument 1")
    return list(map(f, *args))


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True
                    ) -> tuple[bool, ...]:
    """Whether each leaf of the arguments is donated: `in_tree` is the structure of
    `(args, kwargs)` (or of `args` alone when `kws` is False); positional arguments are
    donated by index, keyword ones by name."""
    if kws:
        args_tree, kwargs_tree = in_tree.children()
    else:
        args_tree, kwargs_tree = in_tree, None
    flags: list[bool] = []
    for i, arg in enumerate(args_tree.children()):
        flags.extend([i in donate_argnums] * arg.num_leaves)
    if kwargs_tree is not None:
        keys = kwargs_tree.node_data()[1]
        for key, value in zip(keys, kwargs_tree.children(), strict=True):
            flags.extend([key in donate_argnames] * value.num_leaves)
    return tuple(flags)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """Donated argument indices renumbered as if the static arguments were removed.

    Example:
      >>> rebase_donate_argnums((3, 4), (0, 1))
      (1, 2)
    """
    static, donate = sorted(set(static_argnums)), sorted(set(donate_argnums))
    clash = set(static) & set(donate)
    if clash:
        raise ValueError(f"`static_argnums` {static} and `donate_argnums` {donate} cannot "
                         "intersect.")
    return tuple(d - sum(s < d for s in static) for d in donate)
