"""The `check` primitive of `checkify`: a user check, effectful so that staging keeps it.

Eagerly a failed check raises `JaxRuntimeError` at once; staged (under `jit`, `scan` ...)
without `checkify` it cannot be compiled, as in JAX (dispatch's lowering says so); `checkify`
functionalizes it (`_checkify_interpreter`).
"""

from __future__ import annotations

import functools

import numpy as np
from laminax_pytree import tree_flatten

from laminax_core._avals import get_aval
from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core._checkify_errors import (
    Error,
    FailedCheckError,
    JaxRuntimeError,
    Site,
    format_user_message,
    set_throw,
)
from laminax_core._effects import Effect, control_flow_allowed_effects, lowerable_effects
from laminax_core._primitive import Primitive
from laminax_core._trace import Tracer

__all__ = [
    "ErrorEffect", "UNFUNCTIONALIZED", "bind_error", "check", "check_p", "debug_check",
    "error_effect", "reduce_mapped", "split_operands",
]


class ErrorEffect(Effect):
    """A `check` not yet functionalized: kept by DCE, allowed in control flow."""

    __str__ = lambda self: "Error"  # noqa: E731


error_effect = ErrorEffect()
control_flow_allowed_effects.add_type(ErrorEffect)
lowerable_effects.add_type(ErrorEffect)

UNFUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
    "`checkify.checkify`."
)

# ----- the check primitive -------------------------------------------------------------------

check_p = Primitive("check")
check_p.multiple_results = True

# Operands: `failed`, `code` (an index into `sites`) and every site's payload, flattened; a user
# `check` is one site. An `Error` (from `check_error`) binds all of its sites at once.


@check_p.def_effectful_abstract_eval
def _check_abstract_eval(*avals, sites, debug):
    return [], {error_effect}


def split_operands(operands, sites):
    failed, code, *flat = operands
    payloads, start = [], 0
    for site in sites:
        payloads.append(list(flat[start : start + len(site.payload_avals)]))
        start += len(site.payload_avals)
    return failed, code, payloads


def reduce_mapped(failed, code, payloads):
    """One failure out of a mapped error (JAX reports the last failing index)."""
    if not np.ndim(failed):
        return failed, code, payloads
    flat_failed = jnp.ravel(failed)
    last = flat_failed.shape[0] - 1 - jnp.argmax(flat_failed[::-1])
    lead = np.ndim(failed)

    def pick(x):
        return jnp.reshape(x, (-1, *np.shape(x)[lead:]))[last]

    return jnp.any(failed), pick(code), [[pick(v) for v in p] for p in payloads]


@check_p.def_impl
def _check_impl(*operands, sites, debug):
    if debug:  # a debug_check outside checkify is dropped
        return []
    failed, code, payloads = reduce_mapped(*split_operands(operands, sites))
    exception = Error(failed, code, tuple(map(tuple, payloads)), sites).get_exception()
    if exception is not None:
        raise JaxRuntimeError(str(exception))
    return []


def _check_jvp(primals, tangents, **params):
    return check_p.bind(*primals, **params), []


def _check_batch(axis_data, args, dims, **params):
    # every operand mapped along a leading axis: the error becomes a mapped one
    moved = [
        jnp.broadcast_to(x, (axis_data.size, *np.shape(x))) if d is None else jnp.moveaxis(x, d, 0)
        for x, d in zip(args, dims)
    ]
    return check_p.bind(*moved, **params), []


check_p.def_jvp(_check_jvp)
check_p.def_batch(_check_batch)
check_p.def_transpose(lambda cts, *args, **params: [None] * len(args))


def bind_error(error: Error, debug: bool = False) -> None:
    """Binds `check` on every leaf of `error` (eagerly: raises if it holds a failure)."""
    flat = [leaf for payload in error._payloads for leaf in payload]
    check_p.bind(error._failed, error._code, *flat, sites=error._sites, debug=debug)


def _is_array_like(x) -> bool:
    return isinstance(x, Tracer | np.ndarray | np.generic) or hasattr(x, "__array__") and hasattr(
        x, "dtype"
    )


def check(pred, msg: str, *fmt_args, debug: bool = False, **fmt_kwargs) -> None:
    """Checks that `pred` holds; `msg.format(*fmt_args, **fmt_kwargs)` describes a failure.

    Eagerly a failed check raises `JaxRuntimeError`; inside `checkify` it is recorded in the
    returned `Error`. Format arguments must be arrays (or pytrees of arrays).
    """
    aval = get_aval(pred) if _is_array_like(pred) or isinstance(pred, bool | np.bool_) else None
    if aval is None or aval.shape != () or aval.dtype != np.dtype(bool):
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")
    leaves, tree = tree_flatten((fmt_args, fmt_kwargs))
    for leaf in leaves:
        if not _is_array_like(leaf):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{leaf!r} of type {type(leaf)}."
            )
    avals = tuple(get_aval(leaf) for leaf in leaves)
    site = Site(FailedCheckError, avals, functools.partial(format_user_message, msg, tree))
    failed = lax.bitwise_not(pred)
    check_p.bind(failed, np.int32(0), *leaves, sites=(site,), debug=debug)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """A `check` that is dropped (rather than rejected) when not functionalized."""
    check(pred, msg, *fmt_args, debug=True, **fmt_kwargs)




set_throw(bind_error)
