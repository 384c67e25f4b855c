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

__all__ = [
    "Callable", "abs2", "core", "custom_derivatives", "fit_4th_order_polynomial",
    "initial_step_size", "interp_fit_dopri", "jax", "jnp", "lax", "mean_error_ratio", "odeint",
    "op", "optimal_step_size", "partial", "ravel_first_arg", "ravel_pytree", "runge_kutta_step",
    "tree_leaves", "tree_map",
]  # fmt: skip
