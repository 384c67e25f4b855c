"""JAX's public gradient-checking helpers (`jax.test_util`): automatic derivatives against
central finite differences along random directions.

`check_jvp(f, f_jvp, args)` and `check_vjp(f, f_vjp, args)` take the derivative functions to
check, as JAX's do; `check_grads` checks `f`'s own jvp and vjp up to an order. (Core's
`testing` module has the simpler `check_jvp(f, args)` form its own tests use.)

Example:
  >>> check_grads(lax.sin, (np.float64(0.5),), order=2)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from laminax_core import _api, dtypes
from laminax_pytree import tree_flatten, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

# Per-dtype tolerances of a derivative check (atol and rtol alike), scaled by array size.
_GRADIENT_TOLERANCE = {
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _dtype(x) -> np.dtype:
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        return dtypes.canonicalize_dtype(dtypes.result_type(x))
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def _tolerance(dtype: np.dtype, tol) -> float:
    if tol is None:
        tol = {}
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = dtypes.canonicalize_dtype(dtype)
    return tol.get(dtype, _GRADIENT_TOLERANCE.get(dtype, 1e-5))


def _assert_close(x, y, atol, rtol, err_msg: str) -> None:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        raise AssertionError(f"{err_msg}: shapes {x.shape} and {y.shape} differ")
    if x.dtype == y.dtype == dtypes.float0:
        return
    atol = max(_tolerance(x.dtype, atol), _tolerance(y.dtype, atol))
    rtol = max(_tolerance(x.dtype, rtol), _tolerance(y.dtype, rtol))
    wide = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
    np.testing.assert_allclose(x.astype(wide), y.astype(wide), atol=atol * x.size,
                               rtol=rtol * y.size, err_msg=err_msg)


def _check_close(xs, ys, atol, rtol, err_msg: str) -> None:
    tree_map(functools.partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys)


def _random_like(rng, x):
    dtype = _dtype(x)
    draw = lambda: np.asarray(rng.randn(*np.shape(x)), dtype)  # noqa: E731
    value = draw() + dtype.type(1j) * draw() if np.iscomplexobj(np.zeros((), dtype)) else draw()
    return value.item() if isinstance(x, bool | int | float | complex) else value


def _keep_type(like, value):
    value = np.asarray(value, _dtype(like))
    return value.item() if isinstance(like, bool | int | float | complex) else value


def _numerical_jvp(f, primals, tangents, eps):
    def step(sign):
        return tuple(tree_map(lambda p, t: _keep_type(p, np.asarray(p) + sign * eps
                                                      * np.asarray(t)), primals, tangents))

    def central(plus, minus):
        plus, minus = np.asarray(plus), np.asarray(minus)
        with np.errstate(invalid="ignore"):
            diff = np.where(plus == minus, np.zeros((), plus.dtype), plus - minus)
        return _keep_type(plus, diff * (0.5 / eps))

    return tree_map(central, f(*step(1)), f(*step(-1)))


def _inner(xs, ys) -> np.ndarray:
    """Re <xs, ys>, in the operands' promoted dtype (which sets the check's tolerance)."""
    total = None
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0], strict=True):
        term = np.real(np.dot(np.conj(np.asarray(x)).ravel(), np.asarray(y).ravel()))
        total = term if total is None else total + term
    return np.asarray(total)


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol=None, rtol=None, eps=EPS,
              err_msg: str = "") -> None:
    """Checks a jvp function against finite differences of `f` along a random tangent.

    Args:
      f: the function, called as `f(*args)`.
      f_jvp: `f_jvp(args, tangents) -> (primal_out, tangent_out)` (`partial(jvp, f)`).
      args: the point, a tuple of arrays.
      atol, rtol: a tolerance, or a dict of tolerances per dtype (JAX's defaults otherwise).
      eps: the finite-difference step.
      err_msg: a prefix for the assertion messages.

    Raises:
      AssertionError: the primal or tangent output disagrees.
    """
    rng = np.random.RandomState(0)
    tangents = tree_map(functools.partial(_random_like, rng), tuple(args))
    out, tangent_out = f_jvp(tuple(args), tangents)
    expected_out = f(*args)
    numeric = _numerical_jvp(f, tuple(args), tangents, eps)
    _check_close(out, expected_out, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(tangent_out, numeric, atol, rtol, f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol=None, rtol=None, eps=EPS,
              err_msg: str = "") -> None:
    """Checks a vjp function: <J^T u, v> must equal <u, J v> with J v by finite differences.

    Args:
      f: the function, called as `f(*args)`.
      f_vjp: `f_vjp(*args) -> (primal_out, vjp_fun)` (`partial(vjp, f)`).
      args, atol, rtol, eps, err_msg: as for `check_jvp`.

    Raises:
      AssertionError: the primal output or the cotangent projection disagrees.
    """
    rng = np.random.RandomState(0)
    out, vjp_fun = f_vjp(*args)
    _check_close(out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangents = tree_map(functools.partial(_random_like, rng), tuple(args))
    tangent_out = _numerical_jvp(f, tuple(args), tangents, eps)
    cotangent = tree_map(functools.partial(_random_like, rng), out)
    cotangent_in = tree_map(np.conj, vjp_fun(tree_map(np.conj, cotangent)))
    projection, expected = _inner(tangents, cotangent_in), _inner(tangent_out, cotangent)
    _check_close(projection, expected, atol, rtol,
                 f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f: Callable, args: Sequence, order: int, modes=("fwd", "rev"), atol=None,
                rtol=None, eps=None) -> None:
    """Checks `f`'s forward and/or reverse derivatives up to `order` against finite
    differences, each along one random direction.

    Args:
      f: the function, called as `f(*args)`.
      args: the point (a tuple of arrays).
      order: the highest derivative order to check.
      modes: any of "fwd" and "rev".
      atol, rtol: a tolerance, or a dict of tolerances per dtype.
      eps: the finite-difference step (1e-4 by default).

    Raises:
      AssertionError: a derivative disagrees.
      ValueError: a mode is not "fwd" or "rev".
    """
    unknown = [m for m in modes if m not in ("fwd", "rev")]
    if unknown:
        raise ValueError(f"check_grads: unknown modes {unknown}; use 'fwd' and/or 'rev'.")
    eps = eps or EPS

    def check(fun, fun_args, level, err_msg):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(fun, functools.partial(_api.jvp, fun), fun_args, atol, rtol, eps, msg)
            if level > 1:
                check(functools.partial(_api.jvp, fun), (fun_args, fun_args), level - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(fun, functools.partial(_api.vjp, fun), fun_args, atol, rtol, eps, msg)
            if level > 1:
                def fun_vjp(*primals):
                    out, vjp_fun = _api.vjp(fun, *primals)
                    return vjp_fun(out)

                check(fun_vjp, fun_args, level - 1, msg)

    check(f, tuple(args), order, "")
