"""`odeint`: adaptive Dormand-Prince integration of `dy/dt = func(y, t, *args)`, differentiable
by the adjoint method (a custom vjp integrating the adjoint system backwards in time).

The public home of what `laminax.experimental.ode` re-exports under JAX's module name.
"""

from __future__ import annotations

import functools

import numpy as np
from laminax_pytree import tree_leaves, tree_map

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._api import vjp, vmap
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_vjp
from laminax_core._custom_gradient import closure_convert
from laminax_core.flatten_util import ravel_pytree

__all__ = [
    "abs2", "fit_4th_order_polynomial", "initial_step_size", "interp_fit_dopri",
    "mean_error_ratio", "odeint", "optimal_step_size", "ravel_first_arg", "runge_kutta_step",
]  # fmt: skip

# Dormand-Prince 5(4): stage times, stage weights, 5th-order solution and error weights
_ALPHA = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
_BETA = [
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_C_SOL = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0]
_C_ERR = [35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0]
# weights of the midpoint value the dense-output polynomial passes through
_C_MID = [6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2]


def _weighted(weights, k, dtype):
    return jnp.dot(jnp.asarray(weights, dtype), k)


def abs2(x):
    """`|x|**2`, elementwise (the squared modulus for complex `x`)."""
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step of `dt` from `(t0, y0)` with `f0 = func(y0, t0)`: the 5th-order
    solution, its derivative (the last stage), the error estimate, and the stages."""
    dtype = y0.dtype
    k = [f0]
    for alpha, beta in zip(_ALPHA, _BETA, strict=True):
        y = y0 + dt * _weighted(beta, jnp.stack(k), dtype)
        k.append(func(y, t0 + dt * alpha))
    k = jnp.stack(k)
    return y0 + dt * _weighted(_C_SOL, k, dtype), k[-1], dt * _weighted(_C_ERR, k, dtype), k


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Hairer, Norsett and Wanner's starting step for a method of order `order`."""
    scale = atol + jnp.abs(y0) * rtol
    d0, d1 = jnp.linalg.norm(y0 / scale), jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """The root-mean-square ratio of a step's error estimate to its tolerance."""
    error = error_estimate
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean(abs2(error / tol)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                      order=5.0):
    """The next step from the last one and its error ratio: grown at most `ifactor` times,
    shrunk at most to `dfactor` of it (not at all when the ratio is below 1)."""
    last, ratio = last_step, mean_error_ratio
    dfactor = jnp.where(ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(ratio == 0, last * ifactor, last * factor)


def interp_fit_dopri(y0, y1, k, dt):
    """The dense-output polynomial of a Dormand-Prince step (see `fit_4th_order_polynomial`),
    through its 4th-order midpoint value."""
    y_mid = y0 + dt * _weighted(_C_MID, k, y0.dtype)
    return fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt)


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """The quartic through `y0`, `y_mid`, `y1` with slopes `dy0`, `dy1` at the ends of a step
    of `dt`: its coefficients from the highest power down, in the step's unit time."""
    f0, f1 = dy0 * dt, dy1 * dt
    a = -2 * f0 + 2 * f1 - 8 * y0 - 8 * y1 + 16 * y_mid
    b = 5 * f0 - 3 * f1 + 18 * y0 + 14 * y1 - 32 * y_mid
    c = -4 * f0 + f1 - 11 * y0 - 5 * y1 + 16 * y_mid
    return jnp.stack([a, b, c, f0, y0])


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The flat solver (no custom derivative): `func(y, t, *args)` on flat `y`."""
    fun = lambda y, t: func(y, t, *args)  # noqa: E731
    f0 = fun(y0, ts[0])
    dt = jnp.clip(initial_step_size(fun, ts[0], y0, 4, rtol, atol, f0), 0.0, hmax)
    coeffs = jnp.stack([y0] * 5)

    def to_target(carry, target):
        def keep_going(state):
            i, _, _, t, _, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def advance(state):
            i, y, f, t, dt, last_t, coeffs = state
            y1, f1, err, k = runge_kutta_step(fun, y, f, t, dt)
            ratio = mean_error_ratio(err, rtol, atol, y, y1)
            next_dt = jnp.clip(optimal_step_size(dt, ratio), 0.0, hmax)
            accepted = [i + 1, y1, f1, t + dt, next_dt, t, interp_fit_dopri(y, y1, k, dt)]
            rejected = [i + 1, y, f, t, next_dt, last_t, coeffs]
            return tuple(jnp.where(ratio <= 1.0, a, r)
                         for a, r in zip(accepted, rejected, strict=True))

        _, *carry = lax.while_loop(keep_going, advance, (0, *carry))
        _, _, t, _, last_t, coeffs = carry
        x = (target - last_t) / (t - last_t)
        y_target = coeffs[0]
        for row in range(1, 5):  # Horner's rule, one polynomial per component
            y_target = y_target * x + coeffs[row]
        return carry, y_target

    init = [y0, f0, ts[0], dt, ts[0], coeffs]
    _, ys = lax.scan(to_target, init, ts[1:])
    return jnp.concatenate((y0[None], ys))


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Integrates `dy/dt = func(y, t, *args)` from `y(t[0]) = y0`, returning `y` at each time
    of the increasing array `t` (adaptive Dormand-Prince steps, dense output between them).

    Args:
      func: the dynamics, `func(y, t, *args)` with `y` of `y0`'s pytree structure.
      y0: the initial state, a pytree of arrays.
      t: the times, increasing, `t[0]` the initial one.
      *args: extra arguments of `func`, differentiable like `y0` and `t`.
      rtol, atol: the relative and absolute error tolerances of each step.
      mxstep: the most steps between two consecutive times.
      hmax: the largest step.

    Returns:
      `y` at the times `t`: `y0`'s structure with a leading axis of `t`'s length.

    Example:
      >>> ys = odeint(lambda y, t: -y, np.float32(1.0), np.float32([0.0, 1.0]))
      >>> bool(abs(ys[1] - np.exp(-1)) < 1e-5)
      True
    """
    for arg in tree_leaves(args):
        try:
            get_aval(arg)
        except TypeError:
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            ) from None
    if not dtypes.issubdtype(get_aval(t).dtype, np.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    t = jnp.asarray(t)
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def ravel_first_arg(func, unravel, debug_info=None):
    """`func` taking its first argument (a pytree) as the flat vector `unravel` undoes, and
    returning its result flattened."""
    del debug_info  # JAX's debugging record; laminax's errors name the function itself

    def flat(y, t, *args):
        out, _ = ravel_pytree(func(unravel(y), t, *args))
        return out

    return flat


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    flat_y0, unravel = ravel_pytree(y0)
    ys = _solve(ravel_first_arg(func, unravel), rtol, atol, mxstep, hmax, flat_y0, ts, *args)
    return vmap(unravel)(ys)


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    ys, ts, args = residuals
    flat_ys = vmap(lambda y: ravel_pytree(y)[0])(ys)
    flat_g = vmap(lambda y: ravel_pytree(y)[0])(g)
    _, unravel = ravel_pytree(tree_map(lambda y: y[0], ys))
    flat_func = ravel_first_arg(func, unravel)

    def augmented(state, t, *args):
        # the adjoint system, integrated in reversed time: y backwards, and the cotangents of
        # y, of the start time and of the extra arguments accumulating
        y, y_bar, _, _ = state
        y_dot, pullback = vjp(flat_func, y, -t, *args)
        y_cot, t_cot, *args_cot = pullback(y_bar)
        return (-y_dot, y_cot, t_cot, args_cot)

    def back_one(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(flat_func(flat_ys[i], ts[i], *args), flat_g[i])
        t0_bar = t0_bar - t_bar
        state = (flat_ys[i], y_bar, t0_bar, args_bar)
        flat_state, unravel_state = ravel_pytree(state)
        aug_flat = ravel_first_arg(augmented, unravel_state)
        out = _solve(aug_flat, rtol, atol, mxstep, hmax, flat_state,
                     jnp.stack([-ts[i], -ts[i - 1]]), *args)
        _, y_bar, t0_bar, args_bar = unravel_state(out[1])
        return (y_bar + flat_g[i - 1], t0_bar, args_bar), t_bar

    args_bar = tree_map(jnp.zeros_like, args)
    init = (flat_g[-1], jnp.zeros((), ts.dtype), args_bar)
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        back_one, init, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.reshape(t0_bar, (1,)), rev_ts_bar[::-1]])
    return (unravel(y_bar), ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
