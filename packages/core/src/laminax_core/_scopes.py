"""Context managers over tracing: `named_scope`/`named_call` (names that equations carry into
HLO locations and profiles) and `ensure_compile_time_eval` (evaluate constants while tracing).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

from laminax_core import _trace
from laminax_core._avals import ShapedArray, get_aval

__all__ = ["ensure_compile_time_eval", "named_call", "named_scope", "typeof"]


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Names the operations staged inside the block.

    Equations traced in the block record `name` (nested scopes join with "/"), and their
    compiled HLO operations are located at `jit(f)/name/op`, which profilers and HLO dumps show.

    Args:
      name: the scope's name.

    Raises:
      TypeError: `name` is not a string.

    Example:
      >>> with named_scope("layer1"):
      ...     y = lax.sin(x)
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {type(name).__name__}.")
    with _trace.extend_name_stack(name):
        yield


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` with every call run inside `named_scope(name)` (by default `fun.__name__`).

    Example:
      >>> f = named_call(lambda x: x * 2, name="double")
    """
    if name is None:
        name = getattr(fun, "__name__", None)
        if name is None:
            raise TypeError(f"named_call: {fun!r} has no __name__; pass name=.")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(name):
            return fun(*args, **kwargs)

    return named


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluates operations on concrete values right away, even while tracing under `jit`.

    Inside the block, an operation none of whose operands is a tracer computes its value (on
    the device) instead of being staged into the jaxpr; operations on traced values are staged
    as usual. Use it for constants that Python code must inspect while tracing.

    Example:
      >>> @jit
      ... def f(x):
      ...     with ensure_compile_time_eval():
      ...         n = int(jnp.sum(jnp.arange(4)))  # concrete: 6
      ...     return x * n
    """
    with _trace.compile_time_eval():
        yield


def typeof(x) -> ShapedArray:
    """The abstract value (`ShapedArray`: shape, dtype, weak type) of an array, tracer or
    scalar.

    Example:
      >>> typeof(1.0)
      ShapedArray(float32[], weak_type=True)
    """
    return get_aval(x)
