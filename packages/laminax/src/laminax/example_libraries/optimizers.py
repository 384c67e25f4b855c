"""`laminax.example_libraries.optimizers`: JAX's minimal first-order optimizer library.

An optimizer is a triple `(init_fun, update_fun, get_params)`: `init_fun(params)` makes the
optimizer state, `update_fun(step, grads, state)` the next one, `get_params(state)` the
parameters. The `@optimizer` decorator lifts a triple written for one array to pytrees of
parameters; the state it returns (`OptimizerState`) is a pytree, so it passes through `jit`.
"""

from __future__ import annotations

import functools
from collections import namedtuple

from functools import partial
from typing import Any, Callable, NamedTuple  # noqa: UP035 (typing.Callable, as JAX exports it)

import laminax as jax
import laminax.numpy as jnp
from laminax import Array
from laminax.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

__all__ = [
    "Any", "Array", "annotations", "Callable", "InitFn", "JoinPoint", "NamedTuple", "Optimizer",
    "OptimizerState", "Params", "ParamsFn", "Schedule", "State", "Step", "UpdateFn", "Updates",
    "adagrad", "adam", "adamax", "clip_grads", "constant", "exponential_decay", "functools",
    "inverse_time_decay", "jax", "jnp", "l2_norm", "make_schedule", "map", "momentum",
    "namedtuple", "nesterov", "optimizer", "pack_optimizer_state", "partial",
    "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "safe_map",
    "safe_zip", "sgd", "sm3", "unpack_optimizer_state", "unzip2", "zip",
]  # fmt: skip

_builtin_map, _builtin_zip = map, zip


def safe_map(f, *args):
    """`map` over sequences that must have the same length, as a list."""
    args = list(_builtin_map(list, args))
    if any(len(a) != len(args[0]) for a in args[1:]):
        raise ValueError(f"safe_map: length mismatch {[len(a) for a in args]}")
    return list(_builtin_map(f, *args))


def safe_zip(*args):
    """`zip` of sequences that must have the same length, as a list."""
    args = list(_builtin_map(list, args))
    if any(len(a) != len(args[0]) for a in args[1:]):
        raise ValueError(f"safe_zip: length mismatch {[len(a) for a in args]}")
    return list(_builtin_zip(*args))


map, zip = safe_map, safe_zip  # noqa: A001 (JAX's module shadows them the same way)


def unzip2(pairs):
    """Two tuples from a sequence of pairs."""
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of an `@optimizer`: the flat per-parameter states, the
parameters' tree structure, and each state's own structure (a pytree whose leaves are the
packed states)."""
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]),
)

Step = int
Schedule = Callable[[Step], float]
Params = Any
State = Any
Updates = Params
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
    """The `(init_fn, update_fn, params_fn)` triple an `@optimizer` returns."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker):
    """Lifts an optimizer written for one array (`opt_maker(*args)` returning
    `(init, update, get_params)`) to pytrees of parameters."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = unzip2(_builtin_map(tree_flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}.")
            states = safe_map(tree_unflatten, subtrees, states_flat)
            new_states = safe_map(partial(update, i), grad_flat, states)
            new_states_flat, subtrees2 = unzip2(_builtin_map(tree_flatten, new_states))
            for s1, s2 in _builtin_zip(subtrees, subtrees2):
                if s2 != s1:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {s1} and output {s2}.")
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = safe_map(tree_unflatten, subtrees, states_flat)
            return tree_unflatten(tree, safe_map(get_params, states))

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ----- optimizers ---------------------------------------------------------------------------


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: `x - step_size(i) * g`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    return init, update, lambda x: x


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum: `v = mass * v + g; x - step_size(i) * v`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, lambda state: state[0]


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: steps by `mass * v + g` with `v = mass * v + g`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, lambda state: state[0]


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq += jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: steps by `g / sqrt(avg_sq_grad + eps)` with a decaying mean of `g**2`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014), with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's variant with the infinity norm (Kingma and Ba 2014, section 7)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, lambda state: state[0]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): memory-efficient adaptive steps from one accumulator per axis."""
    step_size = make_schedule(step_size)

    def splice(seq, i, x):
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim, x, axis):
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0):
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, axis) for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(splice(range(x.ndim), j, [])) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


# ----- learning-rate schedules --------------------------------------------------------------


def constant(step_size) -> Schedule:
    """The schedule always returning `step_size`."""
    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """`step_size * decay_rate ** (i / decay_steps)`."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """`step_size / (1 + decay_rate * i / decay_steps)` (the quotient floored if
    `staircase`)."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From `step_size` to `final_step_size` over `decay_steps` steps along
    `(1 - i / decay_steps) ** power`, then constant."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """`values[k]` from step `boundaries[k - 1]` on (`len(values) == len(boundaries) + 1`)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as is, a number as the constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ----- utilities ----------------------------------------------------------------------------


def l2_norm(tree):
    """The l2 norm of all the leaves of `tree` taken together."""
    leaves = tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """`grad_tree` scaled down to l2 norm `max_norm` if its norm is larger."""
    norm = l2_norm(grad_tree)
    normalize = lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm))  # noqa: E731
    return tree_map(normalize, grad_tree)


# ----- serialization ------------------------------------------------------------------------


class JoinPoint:
    """Marks where the parameters' tree meets a per-parameter state tree in a packed state."""

    def __init__(self, subtree):
        self.subtree = subtree


def unpack_optimizer_state(opt_state):
    """`opt_state` as a plain pytree (its parameter tree, with `JoinPoint`s holding each
    parameter's state), e.g. to pickle it."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = safe_map(tree_unflatten, subtree_defs, states_flat)
    sentinels = [JoinPoint(subtree) for subtree in subtrees]
    return tree_unflatten(tree_def, sentinels)


def pack_optimizer_state(marked_pytree):
    """The `OptimizerState` that `unpack_optimizer_state` turned into `marked_pytree`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state expects the output of unpack_optimizer_state")
    subtrees = [s.subtree for s in sentinels]
    states_flat, subtree_defs = unzip2(_builtin_map(tree_flatten, subtrees))
    return OptimizerState(states_flat, tree_def, subtree_defs)
