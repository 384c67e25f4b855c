"""The one check of argument positions and names that every API taking them shares.

jit (static_argnums, donate_argnums), grad, value_and_grad and the Jacobians (argnums),
checkpoint (static_argnums), custom_jvp/custom_vjp (nondiff_argnums), pmap
(static_broadcasted_argnums, donate_argnums) and pjit read their arguments through these, so a
bad value gets the same error (JAX's type) wherever it is given. This module imports nothing
from core, so any layer may use it.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence

__all__ = ["check_argnames", "check_argnums", "index_or_indices", "resolve_argnums"]


def check_argnums(name: str, argnums) -> tuple[int, ...]:
    """An `*_argnums` argument (None, an int, or a collection of ints) as a tuple of ints.

    The one check every API taking argument positions uses (jit, grad and the Jacobians,
    checkpoint, custom_jvp/custom_vjp, pmap, pjit). As JAX, anything `operator.index` accepts
    is one position (NumPy integers and 0-d integer arrays, bools), and any other iterable of
    such values is several (tuples, lists, ranges, 1-d integer arrays).

    Raises:
      TypeError: naming `name` (e.g. "jit static_argnums") and the value, for anything else.
    """
    if argnums is None:
        return ()
    index = index_or_indices(name, argnums)
    return (index,) if isinstance(index, int) else index


def index_or_indices(name: str, argnums) -> int | tuple[int, ...]:
    """`argnums` as one int (an int-like value) or a tuple of ints (an iterable of them): the
    differentiation APIs return a single gradient for the first and a tuple for the second."""
    try:
        return operator.index(argnums)
    except TypeError:
        pass
    items = [argnums] if isinstance(argnums, str) or not isinstance(argnums, Iterable) else argnums
    out = []
    for a in items:
        try:
            out.append(operator.index(a))
        except TypeError:
            raise TypeError(
                f"{name} must be an int or a sequence of ints (argument positions), got "
                f"{argnums!r}" + (f" ({a!r} is a {type(a).__name__})."
                                  if a is not argnums else ".")
            ) from None
    return tuple(out)


def resolve_argnums(argnums: Sequence[int], nargs: int) -> tuple[int, ...]:
    """Positions given by the user, checked against the `nargs` positional arguments of a call
    and made non-negative.

    Raises:
      ValueError: a position outside ``[-nargs, nargs)`` (JAX's error and message).
    """
    out = []
    for i in argnums:
        if not -nargs <= i < nargs:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {nargs}."
            )
        out.append(i % nargs)
    return tuple(out)


def check_argnames(name: str, argnames) -> tuple[str, ...]:
    """An `*_argnames` argument (None, a str, or a sequence of strs) as a tuple of strs.

    Raises:
      TypeError: naming `name` and the value, for anything else.
    """
    if argnames is None:
        return ()
    if isinstance(argnames, str):
        return (argnames,)
    if not isinstance(argnames, Iterable) or not all(isinstance(a, str) for a in argnames):
        raise TypeError(f"{name} must be a str or a sequence of strs (argument names), got "
                        f"{argnames!r}.")
    return tuple(argnames)
