"""`minimize` with BFGS and limited-memory BFGS, each iteration a strong-Wolfe line search
along the quasi-Newton direction, all inside one `while_loop` (usable under `jit`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from laminax_core import _api, lax
from laminax_core import numpy as jnp
from laminax_core.scipy.optimize._line_search import line_search

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of `minimize`.

    Attributes:
      x: the solution found.
      success: whether the gradient norm fell below `gtol` without a line search failure.
      status: 0 converged, 1 too many iterations, 2 + the line search status when it failed
        (BFGS); L-BFGS adds 3 (function evaluations exhausted), 4 (gradient evaluations), 5
        (no progress: `ftol`).
      fun, jac: the objective's value and gradient at `x`.
      hess_inv: BFGS's inverse Hessian estimate (None for L-BFGS).
      nfev, njev, nit: evaluation and iteration counts.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x: Any
    f: Any
    g: Any
    h: Any
    old_f: Any
    ls_status: Any


def _norm(g, order):
    return jnp.linalg.norm(g, ord=order)


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol: float = 1e-5,
          line_search_maxiter: int = 10):
    maxiter = np.size(x0) * 200 if maxiter is None else maxiter
    n = x0.shape[0]
    f0, g0 = _api.value_and_grad(fun)(x0)
    state = _BFGSState(converged=_norm(g0, norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
                       x=x0, f=f0, g=g0, h=jnp.eye(n, dtype=x0.dtype),
                       old_f=f0 + jnp.linalg.norm(g0) / 2, ls_status=0)

    def cond(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s):
        p = -jnp.dot(s.h, s.g, precision=lax.Precision.HIGHEST)
        ls = line_search(fun, s.x, p, s.f, s.old_f, s.g, line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s.g
        rho = 1.0 / jnp.dot(y, step)
        # H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T, skipped when y^T s = 0
        w = jnp.eye(n, dtype=s.h.dtype) - rho * step[:, None] * y[None, :]
        h_new = (jnp.matmul(jnp.matmul(w, s.h, precision=lax.Precision.HIGHEST), w.T,
                            precision=lax.Precision.HIGHEST)
                 + rho * step[:, None] * step[None, :])
        h_new = jnp.where(jnp.isfinite(rho), h_new, s.h)
        return _BFGSState(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s.k + 1,
                          nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x=s.x + step, f=ls.f_k,
                          g=ls.g_k, h=h_new, old_f=s.f, ls_status=ls.status)

    s = lax.while_loop(cond, body, state)
    status = jnp.where(s.converged, 0, jnp.where(s.k == maxiter, 1,
                                                 jnp.where(s.failed, 2 + s.ls_status, -1)))
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=status, fun=s.f,
                           jac=s.g, hess_inv=s.h, nfev=s.nfev, njev=s.ngev, nit=s.k)


class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x: Any
    f: Any
    g: Any
    s_hist: Any
    y_hist: Any
    rho_hist: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop(g, s_hist, y_hist, rho_hist, gamma, k, history: int):
    """`H_k g` by the two-loop recursion over the stored pairs (oldest first in the ring)."""
    count = jnp.minimum(k, history)

    def newest_first(i, carry):
        q, alphas = carry
        j = (k - 1 - i) % history
        valid = i < count
        alpha = jnp.where(valid, rho_hist[j] * jnp.dot(s_hist[j], q), 0)
        return q - alpha * y_hist[j], alphas.at[j].set(alpha)

    q, alphas = lax.fori_loop(0, history, newest_first,
                              (g, jnp.zeros((history,), g.dtype)))
    r = gamma * q

    def oldest_first(i, r):
        j = (k - count + i) % history
        valid = i < count
        beta = rho_hist[j] * jnp.dot(y_hist[j], r)
        return jnp.where(valid, r + s_hist[j] * (alphas[j] - beta), r)

    return lax.fori_loop(0, history, oldest_first, r)


def _lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
           gtol: float = 1e-05, maxfun=None, maxgrad=None, maxls: int = 20):
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    n = x0.shape[0]
    dtype = x0.dtype
    f0, g0 = _api.value_and_grad(fun)(x0)
    state = _LBFGSState(
        converged=_norm(g0, norm) < gtol, failed=False, k=0, nfev=1, ngev=1, x=x0, f=f0, g=g0,
        s_hist=jnp.zeros((maxcor, n), dtype), y_hist=jnp.zeros((maxcor, n), dtype),
        rho_hist=jnp.zeros((maxcor,), dtype), gamma=jnp.ones((), dtype), status=0,
        ls_status=0)

    def cond(s):
        return ~s.converged & ~s.failed

    def body(s):
        p = -_two_loop(s.g, s.s_hist, s.y_hist, s.rho_hist, s.gamma, s.k, maxcor)
        ls = line_search(fun, s.x, p, s.f, None, s.g, maxls)
        step = ls.a_k * p
        x_new, f_new, g_new = s.x + step, ls.f_k, ls.g_k
        y = g_new - s.g
        sy = jnp.dot(step, y)
        slot = s.k % maxcor
        nfev, ngev, k = s.nfev + ls.nfev, s.ngev + ls.ngev, s.k + 1
        status = jnp.where(_norm(g_new, norm) < gtol, 0,
                 jnp.where(ls.failed, 2,
                 jnp.where(k >= maxiter, 1,
                 jnp.where(nfev >= maxfun, 3,
                 jnp.where(ngev >= maxgrad, 4,
                 jnp.where((s.f - f_new) / jnp.maximum(jnp.maximum(jnp.abs(s.f),
                                                                   jnp.abs(f_new)), 1) < ftol,
                           5, -1))))))  # fmt: skip
        return _LBFGSState(
            converged=status == 0, failed=(status > 0), k=k, nfev=nfev, ngev=ngev, x=x_new,
            f=f_new, g=g_new, s_hist=s.s_hist.at[slot].set(step),
            y_hist=s.y_hist.at[slot].set(y), rho_hist=s.rho_hist.at[slot].set(1.0 / sy),
            gamma=sy / jnp.dot(y, y), status=status, ls_status=ls.status)

    s = lax.while_loop(cond, body, state)
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=s.status, fun=s.f,
                           jac=s.g, hess_inv=None, nfev=s.nfev, njev=s.ngev, nit=s.k)


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimizes a scalar function of a 1-d array.

    Args:
      fun: `fun(x, *args) -> scalar`, differentiable.
      x0: the starting point (1-d).
      args: extra positional arguments for `fun` (a tuple).
      method: "BFGS", or "l-bfgs-experimental-do-not-rely-on-this" (limited-memory BFGS),
        as JAX names them.
      tol: accepted and ignored, as in JAX (use `options`' `gtol`).
      options: solver options: `maxiter`, `norm`, `gtol`, `line_search_maxiter` (BFGS);
        `maxiter`, `norm`, `maxcor`, `ftol`, `gtol`, `maxfun`, `maxgrad`, `maxls` (L-BFGS).

    Returns:
      `OptimizeResults`.

    Raises:
      TypeError: `args` is not a tuple.
      ValueError: an unknown method.

    Example:
      >>> res = minimize(lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
      >>> res.x
      Array([3., 3.], dtype=float32)
    """
    del tol
    options = {} if options is None else dict(options)
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")
    objective = lambda x: fun(x, *args)  # noqa: E731
    name = method.lower()
    if name == "bfgs":
        return _bfgs(objective, jnp.asarray(x0), **options)
    if name == "l-bfgs-experimental-do-not-rely-on-this":
        return _lbfgs(objective, jnp.asarray(x0), **options)
    raise ValueError(f"Method {method} not recognized")
