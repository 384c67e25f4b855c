"""A line search for the strong Wolfe conditions (Nocedal and Wright, Algorithms 3.5 and 3.6),
as one `while_loop` with one function-and-gradient evaluation per step: first the step grows
until it brackets an acceptable point, then the bracket shrinks (safeguarded quadratic
interpolation) until a point satisfies both conditions."""

from __future__ import annotations

from typing import NamedTuple

from laminax_core import _api, lax
from laminax_core import numpy as jnp

__all__ = ["LineSearchResults", "line_search"]

_C1, _C2 = 1e-4, 0.9  # sufficient decrease and curvature constants


class LineSearchResults(NamedTuple):
    """The accepted step `a_k` with the function value and gradient there."""

    failed: object
    nfev: object
    ngev: object
    a_k: object
    f_k: object
    g_k: object
    status: object  # 0: success; 1: no acceptable step within the evaluations allowed


class _State(NamedTuple):
    i: object
    done: object
    bracketed: object
    a_prev: object
    f_prev: object
    d_prev: object
    a_next: object
    lo: object
    f_lo: object
    d_lo: object
    hi: object
    f_hi: object
    d_hi: object
    a_star: object
    f_star: object
    g_star: object


def _interpolate(lo, f_lo, d_lo, hi, f_hi):
    """The minimizer of the quadratic through (lo, f_lo, d_lo) and (hi, f_hi), or the midpoint
    where it falls outside the bracket's inner 80%."""
    width = hi - lo
    denom = 2 * (f_hi - f_lo - d_lo * width)
    candidate = lo - d_lo * width * width / jnp.where(denom == 0, 1, denom)
    low, high = jnp.minimum(lo, hi), jnp.maximum(lo, hi)
    margin = 0.1 * jnp.abs(width)
    ok = (denom > 0) & (candidate > low + margin) & (candidate < high - margin)
    return jnp.where(ok, candidate, lo + 0.5 * width)


def line_search(fun, xk, pk, old_fval=None, old_old_fval=None, gfk=None, maxiter: int = 10):
    """A step length along `pk` from `xk` satisfying the strong Wolfe conditions.

    Args:
      fun: the objective, of a 1-d array.
      xk, pk: the point and the (descent) direction.
      old_fval, gfk: `fun(xk)` and its gradient, if known.
      old_old_fval: the previous iterate's value, for the first trial step (N&W eq. 3.60).
      maxiter: the most evaluations allowed.
    """
    value_and_grad = _api.value_and_grad(fun)
    if old_fval is None or gfk is None:
        old_fval, gfk = value_and_grad(xk)
    d0 = jnp.dot(gfk, pk)
    first = jnp.asarray(1.0, d0.dtype)
    if old_old_fval is not None:
        guess = 1.01 * 2 * (old_fval - old_old_fval) / d0
        first = jnp.where((guess > 0) & jnp.isfinite(guess), jnp.minimum(first, guess), first)
    zero = jnp.zeros((), d0.dtype)
    state = _State(i=0, done=False, bracketed=False, a_prev=zero, f_prev=old_fval, d_prev=d0,
                   a_next=first, lo=zero, f_lo=old_fval, d_lo=d0, hi=zero, f_hi=old_fval,
                   d_hi=d0, a_star=zero, f_star=old_fval, g_star=gfk)

    def cond(s):
        return ~s.done & (s.i < maxiter)

    def body(s):
        a = jnp.where(s.bracketed, _interpolate(s.lo, s.f_lo, s.d_lo, s.hi, s.f_hi), s.a_next)
        f, g = value_and_grad(xk + a * pk)
        d = jnp.dot(g, pk)
        armijo_fails = f > old_fval + _C1 * a * d0
        curvature_ok = jnp.abs(d) <= -_C2 * d0
        # growing phase
        grow_hi = armijo_fails | ((s.i > 0) & (f >= s.f_prev))
        grow_done = ~grow_hi & curvature_ok
        grow_flip = ~grow_hi & ~grow_done & (d >= 0)
        grow_bracket = grow_hi | grow_flip
        # zoom phase
        zoom_hi = armijo_fails | (f >= s.f_lo)
        zoom_done = ~zoom_hi & curvature_ok
        zoom_swap = ~zoom_hi & ~zoom_done & (d * (s.hi - s.lo) >= 0)

        def pick(bracketed_value, growing_value):
            return jnp.where(s.bracketed, bracketed_value, growing_value)

        done = pick(zoom_done, grow_done)
        # new bracket [lo, hi]
        lo = pick(jnp.where(zoom_hi, s.lo, a), jnp.where(grow_hi, s.a_prev, a))
        f_lo = pick(jnp.where(zoom_hi, s.f_lo, f), jnp.where(grow_hi, s.f_prev, f))
        d_lo = pick(jnp.where(zoom_hi, s.d_lo, d), jnp.where(grow_hi, s.d_prev, d))
        hi = pick(jnp.where(zoom_hi, a, jnp.where(zoom_swap, s.lo, s.hi)),
                  jnp.where(grow_hi, a, s.a_prev))
        f_hi = pick(jnp.where(zoom_hi, f, jnp.where(zoom_swap, s.f_lo, s.f_hi)),
                    jnp.where(grow_hi, f, s.f_prev))
        d_hi = pick(jnp.where(zoom_hi, d, jnp.where(zoom_swap, s.d_lo, s.d_hi)),
                    jnp.where(grow_hi, d, s.d_prev))
        return _State(
            i=s.i + 1, done=done, bracketed=s.bracketed | (grow_bracket & ~done),
            a_prev=a, f_prev=f, d_prev=d, a_next=2 * a, lo=lo, f_lo=f_lo, d_lo=d_lo, hi=hi,
            f_hi=f_hi, d_hi=d_hi, a_star=jnp.where(done, a, s.a_star),
            f_star=jnp.where(done, f, s.f_star), g_star=jnp.where(done, g, s.g_star))

    s = lax.while_loop(cond, body, state)
    failed = ~s.done
    return LineSearchResults(failed=failed, nfev=s.i, ngev=s.i, a_k=s.a_star, f_k=s.f_star,
                             g_k=s.g_star, status=jnp.where(failed, 1, 0))
