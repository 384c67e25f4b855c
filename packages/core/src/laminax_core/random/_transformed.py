"""Distributions obtained by transforming other samplers (JAX's formulas, so equal keys give
JAX's values): `cauchy`, `pareto`, `t`, `chisquare`, `f`, `rademacher`, `maxwell`,
`double_sided_maxwell`, `weibull_min`, `lognormal`, `rayleigh`, `wald`, `triangular`,
`geometric`, `generalized_normal`, `ball`; plus `clone` and `key_dtype`.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core.random._gamma import _gamma_with_gradient
from laminax_core.random._keys import KEY_DTYPE, _check_impl, check_key
from laminax_core.random._samplers import (
    _float_dtype,
    _shape,
    _to_shape,
    bernoulli,
    exponential_raw,
    normal_raw,
    split_raw,
    uniform_raw,
)

__all__ = [
    "ball", "cauchy", "chisquare", "clone", "double_sided_maxwell", "f", "generalized_normal",
    "geometric", "key_dtype", "lognormal", "maxwell", "pareto", "rademacher", "rayleigh", "t",
    "triangular", "wald", "weibull_min",
]  # fmt: skip


def _c(x, value):
    return np.asarray(value, get_aval(x).dtype)


def _param(x, dtype):
    if isinstance(x, int | float):
        x = np.asarray(x, dtypes.default_float_dtype())
    return lax.convert_element_type(x, dtype)


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _broadcast_shape(name, shape, *params):
    shapes = [_shape_of(p) if not isinstance(p, int | float) else () for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    return _shape(name, shape, *shapes)


def _setup(name, key, dtype, shape, *params):
    raw, _ = check_key(name, key)
    dtype = _float_dtype(name, dtype)
    return raw, dtype, _broadcast_shape(name, shape, *params)


def _loggamma(raw, a, shape):
    return _gamma_with_gradient(raw, _to_shape(a, shape), True)


def _gamma(raw, a, shape):
    return _gamma_with_gradient(raw, _to_shape(a, shape), False)


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy random values: `tan(pi (u - 1/2))`.

    Example:
      >>> cauchy(PRNGKey(0), (2,)).shape
      (2,)
    """
    raw, dtype, shape = _setup("cauchy", key, dtype, canonicalize_shape(shape, "cauchy"))
    u = uniform_raw(raw, shape, dtype, np.asarray(dtypes.finfo(dtype).eps, dtype),
                    np.asarray(1.0, dtype))
    return lax.tan(lax.mul(_c(u, np.pi), lax.sub(u, _c(u, 0.5))))


def pareto(key, b, shape=None, dtype=None):
    """Pareto random values with shape `b` (support [1, inf)): `exp(e / b)`, e exponential.

    Example:
      >>> bool((pareto(PRNGKey(0), 3.0, (4,)) >= 1).all())
      True
    """
    raw, dtype, shape = _setup("pareto", key, dtype, shape, b)
    return lax.exp(lax.div(exponential_raw(raw, shape, dtype), _param(b, dtype)))


def t(key, df, shape=None, dtype=None):
    """Student's t random values with `df` degrees of freedom.

    Example:
      >>> t(PRNGKey(0), 5.0, (3,)).shape
      (3,)
    """
    raw, dtype, shape = _setup("t", key, dtype, shape, df)
    df = _param(df, dtype)
    key_n, key_g = split_raw(raw)
    n = normal_raw(key_n, shape, dtype)
    half_df = lax.div(df, _c(n, 2))
    g = _gamma(key_g, half_df, shape)
    return lax.mul(n, lax.sqrt(lax.div(_to_shape(half_df, shape), g)))


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square random values with `df` degrees of freedom: `2 Gamma(df / 2)`.

    Example:
      >>> bool((chisquare(PRNGKey(0), 2.0, (3,)) > 0).all())
      True
    """
    raw, dtype, shape = _setup("chisquare", key, dtype, shape, df)
    return _chisquare(raw, _param(df, dtype), shape)


def _chisquare(raw, df, shape):
    half_df = lax.div(df, _c(df, 2))
    return lax.mul(lax.exp(_loggamma(raw, half_df, shape)), _c(df, 2))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F random values: the ratio of two scaled chi-squares.

    Example:
      >>> f(PRNGKey(0), 3.0, 7.0, (2,)).shape
      (2,)
    """
    raw, dtype, shape = _setup("f", key, dtype, shape, dfnum, dfden)
    dfden, dfnum = _param(dfden, dtype), _param(dfnum, dtype)
    key_dfd, key_dfn = split_raw(raw)
    num = lax.div(_chisquare(key_dfn, dfnum, shape), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape), dfden)
    return lax.div(num, den)


def rademacher(key, shape=(), dtype=None):
    """Random signs -1 or +1 with equal probability.

    Example:
      >>> sorted(set(rademacher(PRNGKey(0), (20,)).tolist()))
      [-1, 1]
    """
    raw, _ = check_key("rademacher", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype,
                                                     "rademacher")
    return _rademacher(raw, canonicalize_shape(shape, "rademacher"), dtype)


def _rademacher(raw, shape, dtype):
    samples = lax.convert_element_type(bernoulli(raw, 0.5, shape), dtype)
    return lax.sub(lax.mul(_c(samples, 2), samples), _c(samples, 1))


def maxwell(key, shape=(), dtype=None):
    """Maxwell random values: the norm of a standard normal 3-vector.

    Example:
      >>> maxwell(PRNGKey(0), (2,)).shape
      (2,)
    """
    raw, dtype, shape = _setup("maxwell", key, dtype, canonicalize_shape(shape, "maxwell"))
    return _maxwell(raw, shape, dtype)


def _maxwell(raw, shape, dtype):
    rvs = normal_raw(raw, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(rvs, rvs), (len(shape),)))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell random values with location `loc` and scale `scale`.

    Example:
      >>> double_sided_maxwell(PRNGKey(0), 0.0, 1.0, (2,)).shape
      (2,)
    """
    raw, dtype, _ = _setup("double_sided_maxwell", key, dtype, ())
    params = tuple(np.broadcast_shapes(_shape_of_param(loc), _shape_of_param(scale)))
    # as JAX: the sample shape (default: the parameters' shape) is followed by params' shape
    shape = (tuple(canonicalize_shape(shape, "double_sided_maxwell")) or params) + params
    maxwell_key, sign_key = split_raw(raw)
    values = _maxwell(maxwell_key, shape, dtype)
    signs = _rademacher(sign_key, shape, dtype)
    scaled = lax.mul(lax.mul(signs, values), _to_shape(_param(scale, dtype), shape))
    return lax.add(scaled, _to_shape(_param(loc, dtype), shape))


def _shape_of_param(x):
    return () if isinstance(x, int | float) else _shape_of(x)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull random values: `(-log(1 - u)) ** (1 / concentration) * scale`.

    Example:
      >>> weibull_min(PRNGKey(0), 1.0, 2.0, (2,)).shape
      (2,)
    """
    raw, dtype, shape = _setup("weibull_min", key, dtype,
                               canonicalize_shape(shape, "weibull_min"))
    u = uniform_raw(raw, shape, dtype)
    power = lax.div(_c(u, 1.0), _to_shape(_param(concentration, dtype), shape))
    base = lax.neg(lax.log1p(lax.neg(u)))
    return lax.mul(lax.pow(base, power), _to_shape(_param(scale, dtype), shape))


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal random values: `exp(sigma * normal)`.

    Example:
      >>> bool((lognormal(PRNGKey(0), 0.5, (3,)) > 0).all())
      True
    """
    raw, dtype, shape = _setup("lognormal", key, dtype, shape, sigma)
    return lax.exp(lax.mul(normal_raw(raw, shape, dtype), _to_shape(_param(sigma, dtype),
                                                                    shape)))


def rayleigh(key, scale=1.0, shape=None, dtype=None):
    """Rayleigh random values: `scale * sqrt(-2 log u)`.

    Example:
      >>> rayleigh(PRNGKey(0), 2.0, (2,)).shape
      (2,)
    """
    raw, dtype, shape = _setup("rayleigh", key, dtype, shape, scale)
    u = uniform_raw(raw, shape, dtype)
    scale = _to_shape(_param(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _c(u, -2))))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) random values with mean `mean` and shape 1.

    Example:
      >>> bool((wald(PRNGKey(0), 1.5, (3,)) > 0).all())
      True
    """
    raw, dtype, shape = _setup("wald", key, dtype, shape, mean)
    k1, k2 = split_raw(raw)
    mean = _to_shape(_param(mean, dtype), shape)
    v = normal_raw(k1, shape, dtype)
    z = uniform_raw(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(lax.add(lax.mul(lax.mul(_c(y, 4), mean), y), lax.mul(mean_sq, y_sq)))
    x = lax.sub(lax.add(mean, lax.div(lax.mul(mean_sq, y), _c(y, 2))),
                lax.mul(lax.div(mean, _c(y, 2)), sqrt_term))
    accept = lax.le(z, lax.div(mean, lax.add(mean, x)))
    return lax.select_n(accept, lax.div(mean_sq, x), x)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular random values on `[left, right]` peaking at `mode`.

    Example:
      >>> x = triangular(PRNGKey(0), 0.0, 0.5, 1.0, (5,))
      >>> bool(((x >= 0) & (x <= 1)).all())
      True
    """
    raw, dtype, shape = _setup("triangular", key, dtype, shape, left, mode, right)
    left, mode, right = (_to_shape(_param(v, dtype), shape) for v in (left, mode, right))
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    u = uniform_raw(raw, shape, dtype)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(_c(u, 1), u), width),
                                           lax.sub(right, mode))))
    return lax.select_n(lax.lt(u, fc), out2, out1)


def geometric(key, p, shape=None, dtype=None):
    """Geometric random values: the number of Bernoulli(p) trials until the first success.

    Example:
      >>> bool((geometric(PRNGKey(0), 0.3, (5,)) >= 1).all())
      True
    """
    raw, _ = check_key("geometric", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype,
                                                     "geometric")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _broadcast_shape("geometric", shape, p)
    p = _param(p, dtypes.default_float_dtype()) if isinstance(p, int | float) else p
    if not dtypes.issubdtype(get_aval(p).dtype, np.inexact):
        p = lax.convert_element_type(p, dtypes.default_float_dtype())
    u = uniform_raw(raw, shape, get_aval(p).dtype)
    u = lax.select_n(lax.eq(u, _c(u, 0)), u, lax.add(lax.mul(u, _c(u, 0)), _c(u, 1)))
    log_one_minus_p = _to_shape(lax.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(lax.log(u), log_one_minus_p)), _c(u, 1))
    return lax.convert_element_type(g, dtype)


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal random values with density proportional to `exp(-|x|^p)`.

    Example:
      >>> generalized_normal(PRNGKey(0), 1.5, (3,)).shape
      (3,)
    """
    raw, dtype, shape = _setup("generalized_normal", key, dtype,
                               canonicalize_shape(shape, "generalized_normal"))
    return _generalized_normal(raw, p, shape, dtype)


def _generalized_normal(raw, p, shape, dtype):
    key_g, key_r = split_raw(raw)
    inv_p = lax.div(np.asarray(1, dtype), _param(p, dtype))
    g = _gamma(key_g, inv_p, shape)
    r = _rademacher(key_r, shape, dtype)
    return lax.mul(r, lax.pow(g, _to_shape(inv_p, shape)))


def ball(key, d: int, p: float = 2, shape=(), dtype=None):
    """Points uniformly distributed in the unit `p`-norm ball of dimension `d`.

    Example:
      >>> x = ball(PRNGKey(0), 3, shape=(4,))
      >>> x.shape, bool((np.linalg.norm(np.asarray(x), axis=-1) <= 1).all())
      ((4, 3), True)
    """
    raw, dtype, shape = _setup("ball", key, dtype, canonicalize_shape(shape, "ball"))
    d = operator.index(d)
    key_g, key_e = split_raw(raw)
    g = _generalized_normal(key_g, p, (*shape, d), dtype)
    e = exponential_raw(key_e, shape, dtype)
    p_arr = np.asarray(p, dtype)
    total = lax.add(lax.reduce_sum(lax.pow(lax.abs(g), _to_shape(p_arr, (*shape, d))),
                                   (len(shape),)), e)
    radius = lax.pow(total, _to_shape(lax.div(np.asarray(1, dtype), p_arr), shape))
    return lax.div(g, lax.broadcast_in_dim(radius, (*shape, d), tuple(range(len(shape)))))


def clone(key):
    """A key equal to `key` (JAX uses it to mark a deliberate reuse under key-reuse checking,
    which laminax does not track).

    Example:
      >>> clone(PRNGKey(3))
      array([0, 3], dtype=uint32)
    """
    check_key("clone", key, allow_batched=True)
    return key


def key_dtype(impl=None):
    """The dtype of typed keys (`key<fry>`); only "threefry2x32" exists.

    Example:
      >>> key_dtype()
      key<fry>
    """
    _check_impl(impl)
    return KEY_DTYPE
