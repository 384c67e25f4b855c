"""`jax_debug_nans` and `jax_debug_infs`: checking computed values for NaNs and infinities.

Eagerly, each primitive's outputs are checked as they are produced, so the error names the
primitive. Under `jit` the compiled function's outputs are checked; when one holds a NaN, the
function's jaxpr is re-run op by op (eagerly) to find the first primitive that produced it and
the user's source line that staged it.
"""

from __future__ import annotations

import numpy as np
from jaxlib import _jax
from laminax_core import config as core_config
from laminax_core.internal import Literal

__all__ = ["check_outputs", "find_first_bad_equation", "has_bad_values"]


def _bad_kind(x) -> str | None:
    value = np.asarray(x)
    if not np.issubdtype(value.dtype, np.inexact):
        return None
    if core_config.debug_nans.value and np.isnan(value).any():
        return "nan"
    if core_config.debug_infs.value and np.isinf(value).any():
        return "inf"
    return None


def has_bad_values(outs) -> str | None:
    """'nan' or 'inf' if an output has a value the enabled checks reject, else None."""
    for x in outs:
        kind = _bad_kind(x)
        if kind:
            return kind
    return None


def check_outputs(name: str, outs) -> None:
    """Raises FloatingPointError if an output of `name` holds a NaN (or inf) being checked."""
    kind = has_bad_values(outs)
    if kind:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def find_first_bad_equation(jaxpr, consts, args):
    """Re-runs `jaxpr` equation by equation on concrete values; returns the first equation
    whose outputs hold a checked bad value (and the kind), or `(None, None)`."""
    env: dict[int, object] = {}

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[id(atom)]

    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(var)] = value
    for eqn in jaxpr.eqns:
        with core_config.debug_nans(False), core_config.debug_infs(False):
            outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        kind = has_bad_values([o for o in outs if isinstance(o, _jax.ArrayImpl | np.ndarray)])
        if kind:
            return eqn, kind
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = value
    return None, None
