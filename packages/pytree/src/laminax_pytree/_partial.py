"""`Partial`: a `functools.partial` that is a pytree node.

Its bound arguments are children (so transformations see them as inputs) and the function is
aux data (static: it goes into the treedef, so it must be hashable).
"""

from __future__ import annotations

import functools
from typing import Any

from laminax_pytree._registry import register_pytree_node

__all__ = ["Partial"]


class _PartialAsFunction:
    """Hides a `functools.partial` from `partial.__new__`, which would merge its arguments.

    `Partial(functools.partial(f, a), b)` must keep `a` inside the static function and only
    `b` as a child; CPython's `partial.__new__` would instead flatten it to `partial(f, a, b)`.
    """

    def __init__(self, wrapped: functools.partial):
        self.wrapped = wrapped

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _PartialAsFunction):
            return self.wrapped == other.wrapped
        return self.wrapped == other

    def __hash__(self) -> int:
        return hash(self.wrapped)

    def __repr__(self) -> str:
        return repr(self.wrapped)

    @property
    def func(self):
        return self.wrapped.func

    @property
    def args(self):
        return self.wrapped.args

    @property
    def keywords(self):
        return self.wrapped.keywords


class Partial(functools.partial):
    """A `functools.partial` that is a pytree: bound arguments are leaves, the function is static.

    Use it to pass a function with bound array arguments through transformations, which
    accept pytrees but not arbitrary callables. A `functools.partial` given as the function
    stays whole (its own arguments are part of the static function, not children).

    Args:
      func: the function (hashable, since it is stored in the treedef).
      *args: positional arguments to bind; they are pytree children.
      **kwargs: keyword arguments to bind; they are pytree children.

    Example:
      >>> import operator
      >>> from laminax_pytree import Partial, tree_leaves, tree_map
      >>> add_one = Partial(operator.add, 1)
      >>> add_one(2), tree_leaves(add_one)
      (3, [1])
      >>> tree_map(lambda x: 10 * x, add_one)(2)
      12
    """

    def __new__(cls, func: Any, *args: Any, **kwargs: Any):
        if isinstance(func, functools.partial):
            func = _PartialAsFunction(func)
        return super().__new__(cls, func, *args, **kwargs)


def _flatten_partial(partial: Partial):
    return (partial.args, partial.keywords), partial.func


def _unflatten_partial(func: Any, children: Any) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _flatten_partial, _unflatten_partial)
