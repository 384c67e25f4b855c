"""The `check` primitive of `checkify`: a user check, effectful so that staging keeps it.

Eagerly a failed check raises `JaxRuntimeError` at once; staged (under `jit`, `scan` ...)
without `checkify` it cannot be compiled, as in JAX (dispatch's lowering says so); `checkify`
functionalizes it (`_checkify_interpreter`).
"""

from __future__ import annotations

import numpy as np
from laminax_pytree import tree_flatten

from laminax_core._avals import get_aval
from laminax_core._checkify_errors import JaxRuntimeError, format_user_message
from laminax_core._effects import Effect, control_flow_allowed_effects, lowerable_effects
from laminax_core._primitive import Primitive
from laminax_core._trace import Tracer

__all__ = ["UNFUNCTIONALIZED", "check", "check_p", "debug_check", "error_effect", "ErrorEffect"]


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


@check_p.def_effectful_abstract_eval
def _check_abstract_eval(pred, *fmt_avals, msg, fmt_tree, debug):
    return [], {error_effect}


@check_p.def_impl
def _check_impl(pred, *fmt_args, msg, fmt_tree, debug):
    if not np.all(np.asarray(pred)):
        raise JaxRuntimeError(
            format_user_message(msg, fmt_tree, list(fmt_args))
        )
    return []


def _check_jvp(primals, tangents, **params):
    return check_p.bind(*primals, **params), []


def _check_batch(axis_data, args, dims, **params):
    # outside checkify a batched check fails when any element's predicate is false: the
    # impl reduces over every axis, so the batched operands can be bound as they are
    return check_p.bind(*args, **params), []


check_p.def_jvp(_check_jvp)
check_p.def_batch(_check_batch)
check_p.def_transpose(lambda cts, *args, **params: [None] * len(args))


def _is_array_like(x) -> bool:
    return isinstance(x, Tracer | np.ndarray | np.generic) or hasattr(x, "__array__") and hasattr(
        x, "dtype"
    )


def check(pred, msg: str, *fmt_args, debug: bool = False, **fmt_kwargs) -> None:
    """Checks that `pred` holds; `msg.format(*fmt_args, **fmt_kwargs)` describes a failure.

    Eagerly a failed check raises `JaxRuntimeError`; inside `checkify` it is recorded in the
    returned `Error`. Format arguments must be arrays (or pytrees of arrays).
    """
    if not isinstance(msg, str):
        raise TypeError(f"checkify.check: the message must be a str, got {type(msg).__name__}.")
    if not _is_array_like(pred) and not isinstance(pred, bool | np.bool_):
        raise TypeError(
            f"checkify.check takes as predicate a boolean array, got {pred!r} of type "
            f"{type(pred).__name__}."
        )
    pred_aval = get_aval(pred)
    if pred_aval.dtype != np.dtype(bool):
        raise TypeError(
            f"checkify.check takes as predicate a boolean array, got {pred_aval.str_short()}."
        )
    leaves, tree = tree_flatten((fmt_args, fmt_kwargs))
    for leaf in leaves:
        if not _is_array_like(leaf):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{leaf!r} of type {type(leaf)}."
            )
    check_p.bind(pred, *leaves, msg=msg, fmt_tree=tree, debug=debug)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """A `check` that is dropped (rather than rejected) when not functionalized."""
    check(pred, msg, *fmt_args, debug=True, **fmt_kwargs)


