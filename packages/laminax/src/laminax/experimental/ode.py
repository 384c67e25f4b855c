"""`laminax.experimental.ode`: JAX's `odeint` (adaptive Dormand-Prince integration with an
adjoint-method gradient) and its step helpers, implemented in `laminax_core.ode`."""

import operator as op
from typing import Callable  # noqa: UP035 (typing.Callable, as JAX exports it)
from functools import partial

import laminax as jax
import laminax.numpy as jnp
from laminax import core, custom_derivatives, lax
from laminax.flatten_util import ravel_pytree
from laminax.tree_util import tree_leaves, tree_map
from laminax_core.ode import (
    abs2,
    fit_4th_order_polynomial,
    initial_step_size,
    interp_fit_dopri,
    mean_error_ratio,
    odeint,
    optimal_step_size,
    ravel_first_arg,
    runge_kutta_step,
)

from laminax import api_util
from laminax.api_util import safe_map
from laminax.extend import linear_util as lu
from laminax_core.internal import get_aval
from laminax_core.internal import promote_dtypes_inexact as _promote_inexact

__all__ = [
    "Callable", "abs2", "api_util", "core", "custom_derivatives", "fit_4th_order_polynomial",
    "initial_step_size", "interp_fit_dopri", "jax", "jnp", "lax", "lu", "map",
    "mean_error_ratio", "odeint", "op", "optimal_step_size", "partial", "promote_dtypes_inexact",
    "ravel_first_arg", "ravel_first_arg_", "ravel_pytree", "runge_kutta_step", "safe_map",
    "safe_zip", "tree_leaves", "tree_map", "zip",
]  # fmt: skip

_builtin_zip = zip


def safe_zip(*args) -> list:
    """`zip` as a list, refusing sequences of different lengths (ValueError), as JAX's module
    names it."""
    return list(_builtin_zip(*args, strict=True))


map, zip = safe_map, safe_zip  # noqa: A001 (the module's names, as JAX's ode module has them)


def promote_dtypes_inexact(*args) -> list:
    """The arguments as Arrays of their common inexact dtype and weak type (JAX's helper)."""
    promoted = _promote_inexact(*args)
    return [lax.convert_element_type(x, get_aval(x).dtype, weak_type=get_aval(x).weak_type)
            for x in promoted]


def _ravel_first_arg(f, unravel, y_flat, *args):
    return ravel_pytree(f(unravel(y_flat), *args))[0]


# the linear_util transformation behind `ravel_first_arg`: wrapped functions take the flat state
ravel_first_arg_ = lu.transformation2(_ravel_first_arg)
