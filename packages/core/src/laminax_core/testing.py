"""Testing helpers: `check_grads` (derivatives against finite differences) and `OP_CASES`,
the table of primitive test cases that drives generic tests of every lax primitive.

Example:
  >>> from laminax_core import lax
  >>> check_grads(lax.sin, (np.float32(0.5),), order=2)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from laminax_core import _api, dtypes, lax
from laminax_core._avals import get_aval
from laminax_pytree import tree_flatten, tree_map

__all__ = ["OP_CASES", "OpCase", "check_grads", "check_jvp", "check_vjp", "random_args"]

_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 3e-3,
                np.dtype(np.float64): 1e-6}
_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 3e-2,
                np.dtype(np.float64): 1e-5}


def _leaves(tree) -> list[np.ndarray]:
    return [np.asarray(x, dtype=np.float64) for x in tree_flatten(tree)[0]]


def _inner(a, b) -> float:
    return float(sum(np.sum(x * y) for x, y in zip(_leaves(a), _leaves(b), strict=True)))


def _random_like(rng, tree):
    def draw(x):
        x = np.asarray(x)
        return rng.standard_normal(x.shape).astype(x.dtype)

    return tree_map(draw, tree)


def _axpy(alpha, x, y):
    return tree_map(lambda a, b: (np.asarray(b, np.float64) + alpha * np.asarray(a, np.float64))
                    .astype(np.asarray(b).dtype), x, y)


def _tolerance(args, atol, rtol, eps):
    dtype = max((np.asarray(x).dtype for x in tree_flatten(args)[0]),
                key=lambda d: d.itemsize, default=np.dtype(np.float32))
    tol = _DEFAULT_TOL.get(dtype, 3e-2)
    return (atol if atol is not None else tol, rtol if rtol is not None else tol,
            eps if eps is not None else _DEFAULT_EPS.get(dtype, 3e-3))


def _assert_close(name, actual, expected, atol, rtol):
    for a, e in zip(_leaves(actual), _leaves(expected), strict=True):
        np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, err_msg=name)


def check_jvp(f: Callable, args: Sequence, *, atol=None, rtol=None, eps=None, seed=0) -> None:
    """Checks `jvp(f)` along a random direction against a central finite difference."""
    atol, rtol, eps = _tolerance(args, atol, rtol, eps)
    rng = np.random.RandomState(seed)
    tangents = _random_like(rng, tuple(args))
    _, out_tangent = _api.jvp(f, tuple(args), tangents)
    plus = f(*_axpy(eps, tangents, tuple(args)))
    minus = f(*_axpy(-eps, tangents, tuple(args)))
    numeric = tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64))
                       / (2 * eps), plus, minus)
    _assert_close("jvp vs finite differences", out_tangent, numeric, atol, rtol)


def check_vjp(f: Callable, args: Sequence, *, atol=None, rtol=None, eps=None, seed=0) -> None:
    """Checks `vjp(f)` against `jvp(f)`: <u, J v> == <J^T u, v> for random u and v."""
    atol, rtol, eps = _tolerance(args, atol, rtol, eps)
    rng = np.random.RandomState(seed)
    tangents = _random_like(rng, tuple(args))
    out, out_tangent = _api.jvp(f, tuple(args), tangents)
    _, pullback = _api.vjp(f, *args)
    cotangent = _random_like(rng, out)
    ct_args = pullback(cotangent)
    lhs, rhs = _inner(cotangent, out_tangent), _inner(ct_args, tangents)
    np.testing.assert_allclose(rhs, lhs, atol=atol * (1 + abs(lhs)), rtol=rtol,
                               err_msg="vjp vs jvp (<u, J v> == <J^T u, v>)")


def check_grads(f: Callable, args: Sequence, order: int, modes=("fwd", "rev"), atol=None,
                rtol=None, eps=None) -> None:
    """Checks `f`'s derivatives up to `order` in forward and/or reverse mode.

    Forward mode is compared with central finite differences; reverse mode with forward mode
    through the identity <u, J v> = <J^T u, v>. Order 2 checks the derivatives of the jvp and
    vjp functions in turn.

    Args:
      f: a function of arrays returning arrays (pytrees allowed).
      args: the point to differentiate at (floating arrays).
      order: 1 or 2 (higher works, with looser tolerances).
      modes: any of "fwd", "rev".
      atol, rtol, eps: tolerances and finite-difference step (defaults per dtype).

    Raises:
      AssertionError: a derivative disagrees.
    """
    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r}; use 'fwd' and/or 'rev'.")
    if "fwd" in modes:
        check_jvp(f, args, atol=atol, rtol=rtol, eps=eps)
        if order > 1:
            tangents = _random_like(np.random.RandomState(1), args)
            f_jvp = lambda *primals: _api.jvp(f, primals, tangents)[1]  # noqa: E731
            check_grads(f_jvp, args, order - 1, ("fwd",), atol, rtol, eps)
    if "rev" in modes:
        check_vjp(f, args, atol=atol, rtol=rtol, eps=eps)
        if order > 1:
            out = f(*args)
            cotangent = _random_like(np.random.RandomState(2), out)
            f_vjp = lambda *primals: _api.vjp(f, *primals)[1](cotangent)  # noqa: E731
            check_grads(f_vjp, args, order - 1, ("rev",), atol, rtol, eps)


# ----- the primitive test table -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class OpCase:
    """One row of the primitive test table.

    Attributes:
      name: the primitive's name (as jaxprs print it).
      fun: the laminax function under test, taking arrays.
      reference: an independent NumPy implementation of the same function.
      shapes: the argument shapes.
      dtypes: dtypes to test (one per case, applied to every float argument).
      tol: tolerance for value comparisons.
      domain: the range random float arguments are drawn from.
      differentiable: whether to check derivatives.
      linear_args: indices of arguments the function is linear in (for the transpose test).
      int_args: values for integer arguments (fixed, e.g. indices), by position.
      grad_tol, grad_eps: tolerance and step for derivative checks (None: per-dtype defaults).
    """

    name: str
    fun: Callable
    reference: Callable
    shapes: tuple
    dtypes: tuple = (np.float32,)
    tol: float = 1e-5
    domain: tuple = (-2.0, 2.0)
    differentiable: bool = True
    linear_args: tuple = ()
    int_args: dict = dataclasses.field(default_factory=dict)
    grad_tol: float | None = None
    grad_eps: float | None = None


def random_args(case: OpCase, dtype, seed: int = 0, batch: int | None = None) -> list:
    """Random arguments for `case` (with a leading batch axis if `batch`)."""
    rng = np.random.RandomState(seed)
    args = []
    for i, shape in enumerate(case.shapes):
        full = shape if batch is None else (batch, *shape)
        if i in case.int_args:
            value = np.asarray(case.int_args[i], np.int32)
            args.append(np.broadcast_to(value, full).copy() if batch else value)
        elif np.dtype(dtype) == np.bool_:
            args.append(rng.uniform(size=full) > 0.5)
        else:
            lo, hi = case.domain
            args.append(rng.uniform(lo, hi, size=full).astype(dtype))
    return args


def _binary_case(name, fun, reference, **kw):
    return OpCase(name, fun, reference, ((3, 4), (3, 4)), **kw)


def _unary_case(name, fun, reference, **kw):
    return OpCase(name, fun, reference, ((3, 4),), **kw)


def _np_pad(x, value, config):
    lo_hi = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in config]
    out = x
    for axis, (_, _, interior) in enumerate(config):
        if interior:
            idx = np.repeat(np.arange(1, out.shape[axis]), interior)
            out = np.insert(out, idx, value, axis=axis)
    out = np.pad(out, lo_hi, constant_values=value)
    crop = tuple(np.s_[max(-lo, 0): out.shape[a] - max(-hi, 0)]
                 for a, (lo, hi, _) in enumerate(config))
    return out[crop]


def _fft_view(z):  # a real, linear view of a complex spectrum: Re z + Im z
    return lax.add(lax.real(z), lax.imag(z))


def _np_fft_view(z):
    return (np.real(z) + np.imag(z)).astype(np.float32)


def _fft_complex(x, y):  # float32 parts, so the bfloat16 runs of the table work too
    return lax.complex(lax.convert_element_type(x, np.float32),
                       lax.convert_element_type(y, np.float32))


def _solve_diagonal(x, y):  # (x^2 + 1) v = y by a custom linear solve (symmetric operator)
    diag = lax.add(lax.mul(x, x), lax.full_like(x, 1))
    return lax.custom_linear_solve(lambda v: lax.mul(diag, v), y,
                                   lambda matvec, v: lax.div(v, diag), symmetric=True)


OP_CASES: tuple[OpCase, ...] = (
    _binary_case("add", lax.add, np.add, dtypes=(np.float32, np.int32), linear_args=(0, 1)),
    _binary_case("add_any", lax.add_any, np.add, linear_args=(0, 1)),
    _binary_case("sub", lax.sub, np.subtract, dtypes=(np.float32, np.int32),
                 linear_args=(0, 1)),
    _binary_case("mul", lax.mul, np.multiply, dtypes=(np.float32, np.int32),
                 linear_args=(0,)),
    OpCase("mul", lambda x, y: lax.mul(x, y), np.multiply, ((3, 4), ()), linear_args=(1,)),
    _binary_case("div", lax.div, np.divide, domain=(0.5, 2.0), linear_args=(0,)),
    _unary_case("neg", lax.neg, np.negative, linear_args=(0,)),
    _binary_case("max", lax.max, np.maximum),
    _binary_case("min", lax.min, np.minimum),
    _unary_case("exp", lax.exp, np.exp, tol=1e-5),
    _unary_case("log", lax.log, np.log, domain=(0.5, 3.0)),
    _unary_case("sin", lax.sin, np.sin),
    _unary_case("cos", lax.cos, np.cos),
    _unary_case("tanh", lax.tanh, np.tanh),
    _unary_case("logistic", lax.logistic, lambda x: 1 / (1 + np.exp(-x))),
    _unary_case("sqrt", lax.sqrt, np.sqrt, domain=(0.5, 3.0)),
    _unary_case("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), domain=(0.5, 3.0)),
    _unary_case("integer_pow", lambda x: lax.integer_pow(x, 3), lambda x: x**3),
    _unary_case("integer_pow", lambda x: lax.integer_pow(x, -2), lambda x: x**-2.0,
                domain=(0.5, 2.0)),
    _binary_case("pow", lax.pow, np.power, domain=(0.5, 2.0), tol=1e-5),
    _unary_case("sign", lax.sign, np.sign, differentiable=False),
    _unary_case("abs", lax.abs, np.abs, dtypes=(np.float32, np.int32)),
    _binary_case("eq", lax.eq, np.equal, differentiable=False),
    _binary_case("ne", lax.ne, np.not_equal, differentiable=False),
    _binary_case("lt", lax.lt, np.less, differentiable=False),
    _binary_case("le", lax.le, np.less_equal, differentiable=False),
    _binary_case("gt", lax.gt, np.greater, differentiable=False),
    _binary_case("ge", lax.ge, np.greater_equal, differentiable=False),
    OpCase("select_n", lambda x, y, z: lax.select_n(lax.gt(x, 0.0), y, z),
           lambda x, y, z: np.where(x > 0, z, y), ((3, 4), (3, 4), (3, 4)), linear_args=(1, 2)),
    _unary_case("convert_element_type", lambda x: lax.convert_element_type(x, np.float16),
                lambda x: x.astype(np.float16), tol=1e-3, linear_args=(0,), grad_tol=0.15,
                grad_eps=5e-2),
    _unary_case("convert_element_type", lambda x: lax.convert_element_type(x, np.int32),
                lambda x: x.astype(np.int32), differentiable=False),
    _unary_case("stop_gradient", lax.stop_gradient, lambda x: x, differentiable=False),
    _unary_case("copy", lambda x: lax.copy_p.bind(x), np.copy, linear_args=(0,)),
    OpCase("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)),
           lambda x: np.broadcast_to(x, (2, 3, 4)), ((3, 4),), linear_args=(0,)),
    OpCase("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)),
           lambda x: np.broadcast_to(x, (3, 4)), ((1, 4),), linear_args=(0,)),
    OpCase("reshape", lambda x: lax.reshape(x, (4, 3)), lambda x: x.reshape(4, 3), ((3, 4),),
           linear_args=(0,)),
    OpCase("reshape", lambda x: lax.reshape(x, (2, 6), (1, 0)),
           lambda x: x.T.reshape(2, 6), ((3, 4),), linear_args=(0,)),
    OpCase("squeeze", lambda x: lax.squeeze(x, (1,)), lambda x: x[:, 0], ((3, 1, 4),),
           linear_args=(0,)),
    OpCase("squeeze", lambda x: lax.expand_dims(x, (0, 2)), lambda x: x[None, :, None],
           ((3, 4),), linear_args=(0,)),
    OpCase("transpose", lambda x: lax.transpose(x, (2, 0, 1)),
           lambda x: np.transpose(x, (2, 0, 1)), ((2, 3, 4),), linear_args=(0,)),
    OpCase("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), lambda x: x.sum((0, 2)),
           ((2, 3, 4),), tol=1e-5, linear_args=(0,)),
    OpCase("reduce_max", lambda x: lax.reduce_max(x, (1,)), lambda x: x.max(1), ((3, 4),)),
    OpCase("argmax", lambda x: lax.argmax(x, 1, np.int32), lambda x: x.argmax(1), ((3, 4),),
           differentiable=False),
    OpCase("dot_general", lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
           np.dot, ((3, 4), (4, 5)), tol=1e-5, linear_args=(0,)),
    OpCase("dot_general", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
           lambda x, y: np.einsum("bij,bjk->bik", x, y), ((2, 3, 4), (2, 4, 5)), tol=1e-5,
           linear_args=(1,)),
    OpCase("dot_general", lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((), ()))),
           lambda x, y: np.einsum("ij,ki->jk", x, y), ((3, 4), (5, 3)), tol=1e-5,
           linear_args=(0,)),
    OpCase("slice", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), lambda x: x[0:3:2, 1:4:2],
           ((3, 5),), linear_args=(0,)),
    OpCase("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)),
           lambda x, i: x[int(np.clip(i, 0, 1)):int(np.clip(i, 0, 1)) + 2, 1:3],
           ((3, 4), ()), int_args={1: 1}, linear_args=(0,)),
    OpCase("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 4)),
           lambda x, i: x[1:3], ((3, 4), ()), int_args={1: 5}, linear_args=(0,)),
    OpCase("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
           lambda x, u, i: np.concatenate([x[:1], np.concatenate(
               [x[1:3, :1], u, x[1:3, 3:]], 1)], 0),
           ((3, 4), (2, 2), ()), int_args={2: 1}, linear_args=(0, 1)),
    OpCase("concatenate", lambda x, y: lax.concatenate([x, y], 1),
           lambda x, y: np.concatenate([x, y], 1), ((3, 4), (3, 2)), linear_args=(0, 1)),
    OpCase("split", lambda x: lax.split(x, (1, 3), 1)[1] * 2.0,
           lambda x: x[:, 1:] * 2.0, ((3, 4),), linear_args=(0,)),
    OpCase("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 1, 0))),
           lambda x, v: _np_pad(x, v, ((1, 2, 1), (-1, 1, 0))), ((3, 4), ()),
           linear_args=(0, 1)),
)
"""The primitive test table: at least one row per lax primitive except the named-axis
collectives, which are tested inside vmap."""


# ----- rows for the rest of the primitive set (math, special functions, bitwise, reductions) --


def _vectorized(fn):
    return lambda *xs: np.vectorize(fn, otypes=[np.float64])(*xs)


def _np_round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _np_digamma(x):  # a central difference of log Gamma, in float64
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    x = np.asarray(x, np.float64)
    return (lgamma(x + 1e-5) - lgamma(x - 1e-5)) / 2e-5


def _np_hurwitz_zeta(s, q, terms=20000):  # direct sum plus the integral of the tail
    q = np.asarray(q, np.float64)
    k = np.arange(terms).reshape((-1,) + (1,) * q.ndim)
    return np.sum((q + k) ** -s, axis=0) + (q + terms) ** (1 - s) / (s - 1) + 0.5 * (
        q + terms) ** -s


def _np_erf_inv(y):  # bisection on math.erf
    lo, hi = np.full(np.shape(y), -6.0), np.full(np.shape(y), 6.0)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(60):
        mid = (lo + hi) / 2
        below = erf(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def _np_igamma(a, x, terms=300):  # the power series in float64
    a, x = np.asarray(a, np.float64), np.asarray(x, np.float64)
    term = 1 / a
    total = term
    for n in range(1, terms):
        term = term * x / (a + n)
        total = total + term
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    return total * np.exp(a * np.log(x) - x - lgamma(a))


def _np_i1(x):  # the power series of I1
    x = np.asarray(x, np.float64)
    term, total = x / 2, x / 2
    for k in range(1, 60):
        term = term * (x / 2) ** 2 / (k * (k + 1))
        total = total + term
    return total


def _np_shift(op, x, y):
    bits = x.dtype.itemsize * 8
    ok = (y >= 0) & (y < bits)
    return np.where(ok, op(x, np.where(ok, y, 0)), 0).astype(x.dtype)


_SHIFTS = np.arange(12, dtype=np.int32).reshape(3, 4) * 3  # 0 ... 33: some past the width
_BITS = dict(dtypes=(np.int32,), domain=(-1000.0, 1000.0), differentiable=False)

OP_CASES = OP_CASES + (
    _unary_case("square", lax.square, np.square, dtypes=(np.float32, np.int32)),
    _binary_case("rem", lax.rem, np.fmod, domain=(1.0, 9.0), dtypes=(np.int32,),
                 differentiable=False),
    OpCase("rem", lambda x, y: lax.rem(lax.add(x, 2.5), lax.add(y, 1.0)),  # quotient in (2, 3)
           lambda x, y: np.fmod(x + 2.5, y + 1), ((3, 4), (3, 4)), domain=(0.0, 0.2)),
    _binary_case("nextafter", lax.nextafter, np.nextafter, differentiable=False, tol=0),
    _unary_case("floor", lax.floor, np.floor, differentiable=False),
    _unary_case("ceil", lax.ceil, np.ceil, differentiable=False),
    _unary_case("round", lambda x: lax.round(lax.mul(x, 2.0)),
                lambda x: _np_round_half_away(x * 2), differentiable=False),
    _unary_case("round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                np.rint, differentiable=False),
    _unary_case("is_finite", lambda x: lax.is_finite(lax.div(1.0, lax.round(x))),
                lambda x: np.isfinite(1 / _np_round_half_away(x)), differentiable=False),
    _unary_case("exp2", lax.exp2, np.exp2),
    _unary_case("log1p", lax.log1p, np.log1p, domain=(-0.5, 2.0)),
    _unary_case("expm1", lax.expm1, np.expm1),
    _unary_case("tan", lax.tan, np.tan, domain=(-1.2, 1.2), grad_tol=5e-2),
    _unary_case("asin", lax.asin, np.arcsin, domain=(-0.8, 0.8)),
    _unary_case("acos", lax.acos, np.arccos, domain=(-0.8, 0.8)),
    _unary_case("atan", lax.atan, np.arctan),
    _binary_case("atan2", lax.atan2, np.arctan2, domain=(0.3, 2.0)),
    _unary_case("sinh", lax.sinh, np.sinh),
    _unary_case("cosh", lax.cosh, np.cosh),
    _unary_case("asinh", lax.asinh, np.arcsinh),
    _unary_case("acosh", lax.acosh, np.arccosh, domain=(1.2, 3.0)),
    _unary_case("atanh", lax.atanh, np.arctanh, domain=(-0.8, 0.8)),
    _unary_case("cbrt", lax.cbrt, np.cbrt, domain=(0.3, 3.0)),
    _binary_case("complex", lambda x, y: lax.real(lax.mul(lax.complex(x, y), lax.complex(y, x))),
                 lambda x, y: np.real((x + 1j * y) * (y + 1j * x)), tol=1e-5),
    _binary_case("real", lambda x, y: lax.real(lax.complex(x, y)), lambda x, y: x,
                 linear_args=(0,)),
    _binary_case("imag", lambda x, y: lax.imag(lax.complex(x, y)), lambda x, y: y,
                 linear_args=(1,)),
    _binary_case("conj", lambda x, y: lax.imag(lax.conj(lax.complex(x, y))), lambda x, y: -y,
                 linear_args=(1,)),
    _unary_case("conj", lambda x: lax.real(lax.conj(x)), lambda x: x, linear_args=(0,)),
    _unary_case("clamp", lambda x: lax.clamp(-1.0, x, 1.0), lambda x: np.clip(x, -1, 1)),
    OpCase("clamp", lambda lo, x, hi: lax.clamp(lo, x, lax.add(hi, 3.0)),
           lambda lo, x, hi: np.clip(x, lo, hi + 3), ((3, 4), (3, 4), (3, 4))),
    _unary_case("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, np.int32),
                lambda x: x.view(np.int32), differentiable=False, tol=0),
    OpCase("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, np.uint16),
           lambda x: x.reshape(3, 4, 1).view(np.uint16), ((3, 4),), differentiable=False,
           tol=0),
    _unary_case("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10),
                lambda x: x.astype(np.float16).astype(np.float32), differentiable=False,
                tol=0),
    _unary_case("erf", lax.erf, _vectorized(math.erf)),
    _unary_case("erfc", lax.erfc, lambda x: 1 - _vectorized(math.erf)(x)),
    _unary_case("erf_inv", lax.erf_inv, _np_erf_inv, domain=(-0.9, 0.9), tol=1e-4),
    _unary_case("lgamma", lax.lgamma,
                lambda x: np.log(np.abs(_vectorized(math.gamma)(x))), domain=(0.2, 4.0),
                tol=1e-4),
    _unary_case("digamma", lax.digamma, _np_digamma, domain=(0.3, 4.0), tol=1e-4),
    _unary_case("polygamma", lambda x: lax.polygamma(1.0, x),
                lambda x: _np_hurwitz_zeta(2.0, x), domain=(0.5, 4.0), tol=1e-4),
    _unary_case("zeta", lambda x: lax.zeta(2.5, x), lambda x: _np_hurwitz_zeta(2.5, x),
                domain=(0.5, 4.0), tol=1e-4),
    # (second derivatives need igamma_grad_a's, which JAX does not define either: first-order
    # checks are in test_lax_math.py)
    _binary_case("igamma", lambda a, x: lax.igamma(lax.add(a, 2.5), x),
                 lambda a, x: _np_igamma(a + 2.5, x), domain=(0.5, 3.0), tol=1e-5,
                 differentiable=False),
    _binary_case("igammac", lambda a, x: lax.igammac(lax.add(a, 2.5), x),
                 lambda a, x: 1 - _np_igamma(a + 2.5, x), domain=(0.5, 3.0), tol=1e-5,
                 differentiable=False),
    _binary_case("igamma_grad_a", lambda a, x: lax.igamma_grad_a(lax.add(a, 2.5), x),
                 lambda a, x: (_np_igamma(np.float64(a + 2.5) + 1e-5, x)
                               - _np_igamma(np.float64(a + 2.5) - 1e-5, x)) / 2e-5,
                 domain=(0.5, 3.0), tol=1e-4, differentiable=False),
    _unary_case("bessel_i0e", lax.bessel_i0e, lambda x: np.exp(-np.abs(x)) * np.i0(x),
                domain=(-4.0, 4.0)),
    _unary_case("bessel_i1e", lax.bessel_i1e, lambda x: np.exp(-np.abs(x)) * _np_i1(x),
                domain=(-4.0, 4.0)),
    OpCase("regularized_incomplete_beta", lambda x: lax.betainc(2.0, 3.0, x),
           lambda x: 6 * x**2 - 8 * x**3 + 3 * x**4, ((3, 4),), domain=(0.05, 0.95)),
    _binary_case("and", lax.bitwise_and, np.bitwise_and, **_BITS),
    _binary_case("and", lax.bitwise_and, np.logical_and, dtypes=(np.bool_,),
                 differentiable=False),
    _binary_case("or", lax.bitwise_or, np.bitwise_or, **_BITS),
    _binary_case("xor", lax.bitwise_xor, np.bitwise_xor, **_BITS),
    _unary_case("not", lax.bitwise_not, np.invert, **_BITS),
    _unary_case("not", lax.bitwise_not, np.logical_not, dtypes=(np.bool_,),
                differentiable=False),
    _binary_case("shift_left", lax.shift_left, lambda x, y: _np_shift(np.left_shift, x, y),
                 int_args={1: _SHIFTS}, **_BITS),
    _binary_case("shift_right_logical", lax.shift_right_logical,
                 lambda x, y: _np_shift(lambda a, b: (a.view(np.uint32) >> b.astype(np.uint32))
                                        .view(np.int32), x, y),
                 int_args={1: _SHIFTS}, **_BITS),
    _binary_case("shift_right_arithmetic", lax.shift_right_arithmetic,
                 lambda x, y: np.right_shift(x, np.minimum(y, 31)), int_args={1: _SHIFTS},
                 **_BITS),
    _unary_case("population_count", lax.population_count,
                np.vectorize(lambda v: bin(int(v) & 0xFFFFFFFF).count("1"), otypes=[np.int32]),
                **_BITS),
    _unary_case("clz", lax.clz,
                np.vectorize(lambda v: 32 - (int(v) & 0xFFFFFFFF).bit_length(),
                             otypes=[np.int32]), **_BITS),
    OpCase("reduce_min", lambda x: lax.reduce_min(x, (1,)), lambda x: x.min(1), ((3, 4),),
           dtypes=(np.float32, np.int32)),
    OpCase("reduce_prod", lambda x: lax.reduce_prod(x, (0, 2)), lambda x: x.prod((0, 2)),
           ((3, 2, 5),), domain=(0.5, 1.5), tol=1e-5),
    OpCase("reduce_and", lambda x: lax.reduce_and(x, (0,)), lambda x: x.all(0), ((3, 4),),
           dtypes=(np.bool_,), differentiable=False),
    OpCase("reduce_or", lambda x: lax.reduce_or(x, (1,)), lambda x: x.any(1), ((3, 4),),
           dtypes=(np.bool_,), differentiable=False),
    OpCase("reduce_xor", lambda x: lax.reduce_xor(x, (0, 1)),
           lambda x: np.bitwise_xor.reduce(x, axis=None), ((3, 4),), dtypes=(np.bool_,),
           differentiable=False),
    OpCase("argmin", lambda x: lax.argmin(x, 0, np.int32), lambda x: x.argmin(0), ((3, 4),),
           differentiable=False),
    OpCase("reduce", lambda x: lax.reduce(x, np.float32(0), lambda a, b: lax.add(a, b), (1,)),
           lambda x: x.sum(1), ((3, 5),), tol=1e-5),
    OpCase("rev", lambda x: lax.rev(x, (0, 1)), lambda x: x[::-1, ::-1], ((3, 4),),
           linear_args=(0,)),
    OpCase("tile", lambda x: lax.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), ((3, 4),),
           linear_args=(0,)),
    OpCase("stack", lambda x, y: lax.stack([x, y, x], 1), lambda x, y: np.stack([x, y, x], 1),
           ((3, 4), (3, 4)), linear_args=(0, 1)),
    OpCase("unstack", lambda x: lax.concatenate(lax.unstack(x, 1)[::-1], 0),
           lambda x: np.concatenate([x[:, k] for k in range(3, -1, -1)]), ((3, 4),),
           linear_args=(0,)),
)


# ----- rows for indexing, cumulative reductions and sorting ---------------------------------

_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                   start_index_map=(0,))
_ROW_UPDATES = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
_POINTS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1),
                                      scatter_dims_to_operand_dims=(0, 1))
_ROW_IDS = np.array([[2], [0], [2]], np.int32)  # a duplicate
_UNIQUE_IDS = np.array([[3], [0], [1]], np.int32)
_POINT_IDS = np.array([[0, 1], [2, 3], [0, 1], [1, 0]], np.int32)


def _np_scatter(combine, x, rows, updates):
    out = np.array(x)
    combine.at(out, rows.reshape(-1), updates)
    return out


def _np_set_rows(x, rows, updates):
    out = np.array(x)
    out[rows.reshape(-1)] = updates
    return out


OP_CASES = OP_CASES + (
    OpCase("gather", lambda x, i: lax.gather(x, i, _ROWS, (1, 4)),
           lambda x, i: x[i[:, 0]], ((5, 4), (3, 1)), int_args={1: _ROW_IDS},
           linear_args=(0,)),
    OpCase("gather", lambda x, i: lax.gather(x, i, _ROWS, (1, 4), mode="clip"),
           lambda x, i: x[np.clip(i[:, 0], 0, 4)], ((5, 4), (3, 1)),
           int_args={1: np.array([[7], [-2], [1]], np.int32)}, linear_args=(0,)),
    OpCase("scatter-add", lambda x, i, u: lax.scatter_add(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_scatter(np.add, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}, linear_args=(0, 2)),
    OpCase("scatter-add", lambda x, i, u: lax.scatter_add(x, i, u, _POINTS),
           lambda x, i, u: _np_scatter(np.add, x.reshape(-1), i[:, 0] * 4 + i[:, 1], u)
           .reshape(3, 4),
           ((3, 4), (4, 2), (4,)), int_args={1: _POINT_IDS}, linear_args=(0, 2)),
    OpCase("scatter", lambda x, i, u: lax.scatter(x, i, u, _ROW_UPDATES, unique_indices=True),
           lambda x, i, u: _np_set_rows(x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _UNIQUE_IDS}, linear_args=(0, 2)),
    OpCase("scatter", lambda x, i, u: lax.scatter(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_set_rows(x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}),
    OpCase("scatter-sub", lambda x, i, u: lax.scatter_sub(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_scatter(np.subtract, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}, linear_args=(0, 2)),
    OpCase("scatter-mul", lambda x, i, u: lax.scatter_mul(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_scatter(np.multiply, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}, linear_args=(0,), differentiable=False),
    OpCase("scatter-mul", lambda x, i, u: lax.scatter_mul(x, i, u, _ROW_UPDATES,
                                                          unique_indices=True),
           lambda x, i, u: _np_scatter(np.multiply, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _UNIQUE_IDS}, linear_args=(0,)),
    OpCase("scatter-min", lambda x, i, u: lax.scatter_min(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_scatter(np.minimum, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}),
    OpCase("scatter-max", lambda x, i, u: lax.scatter_max(x, i, u, _ROW_UPDATES),
           lambda x, i, u: _np_scatter(np.maximum, x, i, u), ((5, 4), (3, 1), (3, 4)),
           int_args={1: _ROW_IDS}),
    OpCase("cumsum", lambda x: lax.cumsum(x, 1), lambda x: np.cumsum(x, 1), ((3, 5),),
           dtypes=(np.float32, np.int32), linear_args=(0,)),
    OpCase("cumsum", lambda x: lax.cumsum(x, 0, reverse=True),
           lambda x: np.cumsum(x[::-1], 0)[::-1], ((3, 5),), linear_args=(0,)),
    OpCase("cumprod", lambda x: lax.cumprod(x, 1), lambda x: np.cumprod(x, 1), ((3, 5),),
           domain=(0.5, 1.5)),
    OpCase("cummax", lambda x: lax.cummax(x, 1, reverse=True),
           lambda x: np.maximum.accumulate(x[:, ::-1], 1)[:, ::-1], ((3, 5),)),
    OpCase("cummin", lambda x: lax.cummin(x, 0), lambda x: np.minimum.accumulate(x, 0),
           ((4, 3),), dtypes=(np.float32, np.int32)),
    OpCase("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1),
           lambda x: np.log(np.cumsum(np.exp(x.astype(np.float64)), 1)), ((3, 5),)),
    OpCase("fft", lambda x, y: _fft_view(lax.fft(_fft_complex(x, y), "fft", (4,))),
           lambda x, y: _np_fft_view(np.fft.fft(x + 1j * y)), ((3, 4), (3, 4)),
           linear_args=(0, 1), tol=1e-4),
    OpCase("fft", lambda x, y: _fft_view(lax.fft(_fft_complex(x, y), "ifft", (3, 4))),
           lambda x, y: _np_fft_view(np.fft.ifft2(x + 1j * y)), ((3, 4), (3, 4)),
           linear_args=(0, 1), tol=1e-4),
    OpCase("fft", lambda x: _fft_view(lax.fft(lax.convert_element_type(x, np.float32), "rfft",
                                              (5,))),
           lambda x: _np_fft_view(np.fft.rfft(x)), ((3, 5),), linear_args=(0,), tol=1e-4),
    OpCase("fft", lambda x, y: lax.fft(_fft_complex(x, y), "irfft", (2, 6)),
           lambda x, y: np.fft.irfft2(x + 1j * y, (2, 6)).astype(np.float32),
           ((2, 4), (2, 4)), linear_args=(0, 1), tol=1e-4),
    OpCase("mulhi", lax.mulhi,
           lambda x, y: ((x.astype(np.int64) * y.astype(np.int64)) >> 32).astype(np.int32),
           ((3, 4), (3, 4)), dtypes=(np.int32,), domain=(-2e9, 2e9), differentiable=False),
    OpCase("optimization_barrier", lambda x, y: lax.add(*lax.optimization_barrier((x, y))),
           np.add, ((3, 4), (3, 4)), linear_args=(0, 1)),
    OpCase("custom_linear_solve", _solve_diagonal, lambda x, y: y / (x * x + 1),
           ((3, 4), (3, 4)), linear_args=(1,)),
    OpCase("approx_top_k", lambda x: lax.approx_max_k(x, 2)[0],
           lambda x: -np.sort(-x, -1)[..., :2], ((3, 5),)),
    OpCase("approx_top_k", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0],
           lambda x: np.sort(x, 0)[:2], ((4, 3),)),
    OpCase("sort", lambda x: lax.sort(x, 1), lambda x: np.sort(x, 1), ((3, 5),),
           dtypes=(np.float32, np.int32)),
    OpCase("sort", lambda k, v: lax.sort((k, v), 0, num_keys=1)[1],
           lambda k, v: np.take_along_axis(v, np.argsort(k, 0, kind="stable"), 0),
           ((4, 3), (4, 3)), linear_args=(1,)),
    OpCase("top_k", lambda x: lax.top_k(x, 3)[0], lambda x: -np.sort(-x, 1)[:, :3], ((3, 5),),
           dtypes=(np.float32, np.int32)),
)


# ----- rows for windowed reductions and convolutions ----------------------------------------


def _np_pool(reduce, x, window, strides, pads, fill):
    """Pooling by explicit loops over output positions (independent of lax's windows)."""
    padded = np.pad(x, pads, constant_values=fill)
    out_shape = [(p - w) // s + 1 for p, w, s in zip(padded.shape, window, strides)]
    out = np.empty(out_shape, x.dtype)
    for index in np.ndindex(*out_shape):
        region = tuple(np.s_[i * s:i * s + w] for i, s, w in zip(index, strides, window))
        out[index] = reduce(padded[region])
    return out


def _np_conv_nhwc(x, w, strides, pads, groups=1):
    """NHWC x HWIO convolution by explicit loops (independent of lax's reference)."""
    x = np.pad(x, ((0, 0), *pads, (0, 0)))
    n, h, wd, c = x.shape
    kh, kw, i, o = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    out = np.zeros((n, oh, ow, o), np.float64)
    og = o // groups
    for a, b in np.ndindex(oh, ow):
        patch = x[:, a * strides[0]:a * strides[0] + kh, b * strides[1]:b * strides[1] + kw]
        for g in range(groups):
            out[:, a, b, g * og:(g + 1) * og] = np.einsum(
                "nhwi,hwio->no", patch[..., g * i:(g + 1) * i], w[..., g * og:(g + 1) * og])
    return out


_NHWC = ("NHWC", "HWIO", "NHWC")

OP_CASES = OP_CASES + (
    OpCase("reduce_window_sum", lambda x: lax.reduce_window_sum(x, (2, 3), (1, 2), "SAME"),
           lambda x: _np_pool(np.sum, x, (2, 3), (1, 2), ((0, 1), (0, 1)), 0), ((4, 6),),
           linear_args=(0,)),
    OpCase("reduce_window_max", lambda x: lax.reduce_window_max(x, (2, 2), (2, 1), "VALID"),
           lambda x: _np_pool(np.max, x, (2, 2), (2, 1), ((0, 0), (0, 0)), 0), ((4, 5),),
           dtypes=(np.float32, np.int32)),
    OpCase("reduce_window_min", lambda x: lax.reduce_window_min(x, (3,), (1,), ((1, 1),)),
           lambda x: _np_pool(np.min, x, (3,), (1,), ((1, 1),), np.inf), ((6,),)),
    OpCase("reduce_window", lambda x: lax.reduce_window(x, np.float32(1), lambda a, b: a * b,
                                                        (2, 2), (1, 1), "VALID"),
           lambda x: _np_pool(np.prod, x, (2, 2), (1, 1), ((0, 0), (0, 0)), 1), ((3, 4),),
           differentiable=False),
    OpCase("select_and_scatter_add",
           lambda s, x: lax.select_and_scatter_add(s, x, lax.ge_p, (2, 2), (2, 2), "VALID"),
           lambda s, x: np.kron(s, np.ones((2, 2))) * (
               x == np.kron(_np_pool(np.max, x, (2, 2), (2, 2), ((0, 0),) * 2, 0),
                            np.ones((2, 2)))),
           ((2, 3), (4, 6)), linear_args=(0,)),
    OpCase("select_and_gather_add",
           lambda t, x: lax.select_and_gather_add(t, x, lax.le_p, (2, 2), (1, 1), "VALID",
                                                  None, None),
           lambda t, x: _select_min(t, x),
           ((3, 4), (3, 4)), linear_args=(0,)),
    OpCase("conv_general_dilated",
           lambda x, w: lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=_NHWC),
           lambda x, w: _np_conv_nhwc(x, w, (1, 2), ((1, 1), (1, 1))),
           ((2, 4, 5, 3), (3, 3, 3, 4)),
           tol=1e-4, linear_args=(0, 1)),
    OpCase("conv_general_dilated",
           lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 0)),
                                                 dimension_numbers=_NHWC,
                                                 feature_group_count=2),
           lambda x, w: _np_conv_nhwc(x, w, (2, 1), ((1, 0), (0, 0)), groups=2),
           ((1, 5, 4, 4), (2, 2, 2, 6)), tol=1e-4, linear_args=(0, 1)),
)


def _select_min(t, x):
    """For 2x2 windows with stride 1, the tangent at each window's minimum of `x`."""
    out = np.empty((x.shape[0] - 1, x.shape[1] - 1), t.dtype)
    for a, b in np.ndindex(*out.shape):
        window = x[a:a + 2, b:b + 2].reshape(-1)
        k = int(np.argmin(window))
        out[a, b] = t[a + k // 2, b + k % 2]
    return out


# ----- rows for lax.linalg ------------------------------------------------------------------


def _np_lu(a):
    """Gaussian elimination with partial pivoting: (L @ U, row order)."""
    a = np.array(a, np.float64)
    n = a.shape[0]
    order = np.arange(n)
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        a[[k, p]], order[[k, p]] = a[[p, k]], order[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, order


def _spd(x):
    return lax.add(lax.dot_general(x, x, (((1,), (1,)), ((), ()))),
                   np.float32(4) * np.eye(x.shape[0], dtype=np.float32))


def _np_spd(x):
    return x @ x.T + 4 * np.eye(x.shape[0])


def _sym(x):
    return lax.add(x, lax.transpose(x, (1, 0)))


def _recompose_eigh(x):
    v, w = lax.linalg.eigh(_sym(x))
    return lax.dot_general(lax.mul(v, lax.broadcast_in_dim(w, v.shape, (1,))), v,
                           (((1,), (1,)), ((), ())))


def _recompose_svd(x):
    u, s, vt = lax.linalg.svd(x, full_matrices=False)
    return lax.dot_general(lax.mul(u, lax.broadcast_in_dim(s, u.shape, (1,))), vt,
                           (((1,), (0,)), ((), ())))


_LINALG = dict(tol=1e-4, grad_tol=5e-2)

OP_CASES = OP_CASES + (
    _unary_case("cholesky", lambda x: lax.linalg.cholesky(_spd(x)),
                lambda x: np.linalg.cholesky(_np_spd(x)), **_LINALG),
    OpCase("triangular_solve", lambda a, b: lax.linalg.triangular_solve(
        lax.add(a, np.float32(4) * np.eye(3, dtype=np.float32)), b, left_side=True, lower=True),
           lambda a, b: np.linalg.solve(np.tril(a) + 4 * np.eye(3), b), ((3, 3), (3, 2)),
           linear_args=(1,), **_LINALG),
    OpCase("triangular_solve", lambda a, b: lax.linalg.triangular_solve(
        lax.add(a, np.float32(4) * np.eye(3, dtype=np.float32)), b, transpose_a=True),
           lambda a, b: b @ np.linalg.inv(np.triu(a).T + 4 * np.eye(3)), ((3, 3), (2, 3)),
           linear_args=(1,), **_LINALG),
    OpCase("lu", lambda x: lax.linalg.lu(x)[0], lambda x: _np_lu(x)[0], ((4, 4),), **_LINALG),
    OpCase("lu", lambda x: lax.linalg.lu(x)[2], lambda x: _np_lu(x)[1], ((4, 4),),
           differentiable=False),
    OpCase("qr", lambda x: lax.linalg.qr(x, full_matrices=False)[1],
           lambda x: np.linalg.qr(x)[1], ((4, 3),), **_LINALG),
    OpCase("qr", lambda x: lax.dot_general(*lax.linalg.qr(x), (((1,), (0,)), ((), ()))),
           lambda x: x, ((3, 3),), **_LINALG),
    OpCase("eigh", lambda x: lax.linalg.eigh(_sym(x))[1],
           lambda x: np.linalg.eigvalsh(x + x.T), ((4, 4),), **{**_LINALG, "tol": 1e-3}),
    OpCase("eigh", _recompose_eigh, lambda x: x + x.T, ((4, 4),), **{**_LINALG, "tol": 1e-3}),
    OpCase("svd", lambda x: lax.linalg.svd(x, compute_uv=False),
           lambda x: np.linalg.svd(x, compute_uv=False), ((4, 3),), **_LINALG),
    OpCase("svd", _recompose_svd, lambda x: x, ((3, 4),), **{**_LINALG, "tol": 1e-3}),
)


# ----- ragged_dot_general -------------------------------------------------------------------


def _np_ragged_dot(lhs, rhs, group_sizes):
    """Row by row: each row of lhs meets the rhs matrix of the group it falls in."""
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs))
    ends = np.cumsum(group_sizes)
    for row in range(lhs.shape[0]):
        group = int(np.searchsorted(ends, row, side="right"))
        if group < len(group_sizes):
            out[row] = lhs[row] @ rhs[group]
    return out


OP_CASES = OP_CASES + (
    OpCase("ragged_dot_general", lambda lhs, rhs, sizes: lax.ragged_dot(lhs, rhs, sizes),
           _np_ragged_dot, ((6, 3), (2, 3, 4), (2,)), int_args={2: np.array([2, 3], np.int32)},
           tol=1e-5),
)


OP_CASES = OP_CASES + (
    OpCase("stage", lax.stage_p.bind, lambda x: x, ((3, 2),), linear_args=(0,)),
)


def _select_and_scatter_ge_add(x, s):
    scalar = np.zeros((), get_aval(x).dtype)
    select = _api.make_jaxpr(lax.ge)(scalar, scalar)
    scatter = _api.make_jaxpr(lax.add)(scalar, scalar)
    return lax.select_and_scatter_p.bind(
        x, s, scalar, select_jaxpr=select.jaxpr, select_consts=(), scatter_jaxpr=scatter.jaxpr,
        scatter_consts=(), window_dimensions=(2, 2), window_strides=(2, 2),
        padding=((0, 0), (0, 0)))


OP_CASES = OP_CASES + (
    # random floats hold no NaN or -0.0, where total order and IEEE comparisons differ
    _binary_case("eq_to", lax.eq_to_p.bind, np.equal, differentiable=False),
    _binary_case("le_to", lax.le_to_p.bind, np.less_equal, differentiable=False),
    _binary_case("lt_to", lax.lt_to_p.bind, np.less, differentiable=False),
    _unary_case("dce_sink", lambda x: (lax.dce_sink(x), lax.add(x, x))[1], lambda x: x + x,
                linear_args=(0,)),
    OpCase("select_and_scatter", _select_and_scatter_ge_add,
           lambda x, s: np.kron(s, np.ones((2, 2))) * (
               x == np.kron(_np_pool(np.max, x, (2, 2), (2, 2), ((0, 0),) * 2, 0),
                            np.ones((2, 2)))),
           ((4, 4), (2, 2)), differentiable=False),
)
