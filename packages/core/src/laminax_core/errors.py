"""laminax's exception classes, with JAX's names and hierarchy (`jax.errors`).

Each class's docstring explains when it is raised and how to fix the program. Messages end with a
link to the matching section of laminax's error documentation.

Those raised about a tracer take the tracer itself and build the message from it: its abstract
value (`tracer.aval`, e.g. ``float32[3]``) and, when the tracer knows it, where it came from
(``tracer._origin_msg()`` or a ``tracer._debug_info`` string such as "the argument x of f").
"""

from __future__ import annotations

from typing import Any

from jaxlib._jax import JaxRuntimeError

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "describe_tracer",
    "tracer_origin",
]

# The explanation travels with the installed package: each class's docstring gives causes and fixes.
_MORE_HELP = "For common causes and fixes, see help(laminax.errors.{name})."

_STATIC_HINT = (
    "If this value is an argument of a jitted function that Python control flow or a shape "
    "depends on, mark it static: jit(f, static_argnums=...) or static_argnames=...; otherwise "
    "use laminax's structured control flow (lax.cond, lax.while_loop, jnp.where)."
)


def describe_tracer(tracer: Any) -> str:
    """A short description of a tracer for error messages: "traced array with shape float32[3]".

    Uses `tracer._error_repr()` when the tracer defines it, else its `aval`.
    """
    error_repr = getattr(tracer, "_error_repr", None)
    if callable(error_repr):
        return str(error_repr())
    aval = getattr(tracer, "aval", None)
    if aval is None:
        return f"traced value {tracer!r}"
    str_short = getattr(aval, "str_short", None)
    if callable(str_short):
        return f"traced array with shape {str_short()}"
    shape = ",".join(str(d) for d in getattr(aval, "shape", ()))
    dtype = getattr(aval, "dtype", None)
    name = getattr(dtype, "name", str(dtype))
    return f"traced array with shape {name}[{shape}]"


def tracer_origin(tracer: Any) -> str:
    """Where a tracer came from, as one sentence starting with a newline, or ""."""
    origin_msg = getattr(tracer, "_origin_msg", None)
    if callable(origin_msg):
        text = str(origin_msg())
    else:
        debug_info = getattr(tracer, "_debug_info", None)
        text = "" if debug_info is None else str(debug_info)
    text = text.strip()
    if not text:
        return ""
    if text[0].islower():  # a fragment such as "created by jit at f.py:3"
        text = f"This tracer was {text.rstrip('.')}."
    return "\n" + text


class _LaminaxErrorMixin:
    """Ends the message with where to read the class's causes and fixes."""

    def __init__(self, message: str):
        super().__init__(f"{message}\n{_MORE_HELP.format(name=type(self).__name__)}")


class JAXTypeError(_LaminaxErrorMixin, TypeError):
    """A laminax-specific `TypeError` (JAX's name); the base class of the tracer errors.

    Example:
      >>> issubclass(ConcretizationTypeError, JAXTypeError)
      True
    """


class JAXIndexError(_LaminaxErrorMixin, IndexError):
    """A laminax-specific `IndexError` (JAX's name); raised for indexing that cannot be traced."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where Python needs a concrete value.

    Under `jit`, `vmap` or `grad` the arguments are abstract tracers: they know their shape and
    dtype but not their value. Python code that needs the value (an `if`, a Python `int()`, a
    shape computed from the data, `range(x)`) fails with this error.

    Causes and fixes:

    * A jitted function branches on an argument (``if x > 0``): use `lax.cond` or `jnp.where`,
      or, if the value is truly a compile-time constant, mark it static with
      ``jit(f, static_argnums=0)``.
    * A shape depends on data (``jnp.zeros(n)`` with traced ``n``, ``x[mask]``): pass `n` as a
      static argument, or compute with fixed shapes (``jnp.where(mask, x, 0)``).
    * A Python loop bound is traced (``for i in range(n)``): use `lax.fori_loop`.

    Args:
      tracer: the offending tracer (its `aval` and origin go into the message).
      context: one or more sentences about where it happened, e.g.
        "The problem arose with the `bool` function."

    Example:
      >>> import numpy as np
      >>> class Aval:
      ...     shape, dtype, weak_type = (), np.dtype("float32"), False
      >>> class Tracer:
      ...     aval = Aval()
      >>> "static_argnums" in str(ConcretizationTypeError(Tracer()))
      True
    """

    def __init__(self, tracer: Any, context: str = ""):
        context = f"\n{context}" if context else ""
        super().__init__(
            "Abstract tracer value encountered where a concrete value is expected: "
            f"{describe_tracer(tracer)}{context}{tracer_origin(tracer)}\n{_STATIC_HINT}"
        )


class NonConcreteBooleanIndexError(JAXIndexError):
    """An array was indexed with a traced boolean mask (``x[x > 0]`` under jit).

    The result's shape would depend on how many entries are True, which is unknown while
    tracing. Fixes: keep the shape fixed with ``jnp.where(mask, x, 0)``; reduce directly
    (``jnp.sum(x, where=mask)``); or give an upper bound, as in ``jnp.nonzero(mask, size=n)``.

    Args:
      tracer: the traced boolean index.
    """

    def __init__(self, tracer: Any):
        super().__init__(
            f"Array boolean indices must be concrete; got {describe_tracer(tracer)}"
            f"{tracer_origin(tracer)}\nUse jnp.where(mask, x, fill) to keep shapes static."
        )


class TracerArrayConversionError(JAXTypeError):
    """A tracer was converted to a NumPy array (``np.asarray(x)``, a NumPy function on it).

    NumPy needs concrete values; under a transformation there are none. Fixes: use
    `laminax.numpy` instead of `numpy` inside transformed functions; or move the NumPy code
    outside the transformed function; or, for a real host computation, use `pure_callback`.

    Args:
      tracer: the tracer that was converted.
    """

    def __init__(self, tracer: Any):
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on "
            f"{describe_tracer(tracer)}{tracer_origin(tracer)}\n"
            "Use laminax.numpy (jnp) functions on traced values instead of numpy ones."
        )


class TracerIntegerConversionError(JAXTypeError):
    """A tracer was used where Python needs an integer (`__index__`: ``lst[x]``, ``range(x)``).

    Fixes: index arrays rather than Python lists (``jnp.asarray(lst)[x]``); use `lax.fori_loop`
    for traced loop bounds; or mark the argument static with ``jit(f, static_argnums=...)``.

    Args:
      tracer: the tracer used as an integer.
    """

    def __init__(self, tracer: Any):
        super().__init__(
            f"The __index__() method was called on {describe_tracer(tracer)}"
            f"{tracer_origin(tracer)}\n{_STATIC_HINT}"
        )


class TracerBoolConversionError(ConcretizationTypeError):
    """A tracer was converted to a Python bool (``if x:``, ``while x:``, ``x and y``, ``bool(x)``).

    Fixes: `lax.cond` / `lax.select` / `jnp.where` for branches, `lax.while_loop` for loops,
    `jnp.logical_and` for ``and``; or mark the argument static with
    ``jit(f, static_argnums=...)`` if the condition is a compile-time constant.

    Args:
      tracer: the tracer converted to bool.
    """

    def __init__(self, tracer: Any):
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of {describe_tracer(tracer)}."
            f"{tracer_origin(tracer)}\n{_STATIC_HINT}",
        )


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it and was used afterwards.

    Typical causes: storing an intermediate value in a global, a list defined outside, or an
    object attribute inside a jitted or grad function, then reading it later. Fix: return the
    value from the function instead. ``config.update("jax_check_tracer_leaks", True)`` reports
    the leak where it happens.

    Args:
      msg: what leaked and where (the tracing machinery writes it).
    """

    def __init__(self, msg: str):
        super().__init__(msg)


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (checked only with ``jax_debug_key_reuse`` on).

    Random functions must get a fresh key each time: split first,
    ``key, subkey = random.split(key)``, and pass `subkey`.

    Args:
      message: which key was reused and where.
    """


class JaxprTypeError(TypeError):
    """A jaxpr failed its type check: an equation's inputs or outputs do not match its rule.

    This signals a bug in a primitive's rules or a transformation (raised with
    ``jax_enable_checks`` on); please report it with the jaxpr in the message.
    """


class InconclusiveDimensionOperation(Exception):
    """An operation on symbolic dimensions (shape polymorphism, `export.symbolic_shape`) whose
    answer depends on the values the dimension variables take: a comparison such as `a >= b`, or
    `int(a)`. Add a constraint (`symbolic_shape(..., constraints=["a >= b"])`) that decides it,
    or rewrite the program so that it does not depend on the comparison."""
