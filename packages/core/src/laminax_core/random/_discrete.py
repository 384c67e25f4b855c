"""Counting distributions: `poisson`, `binomial`, `multinomial`.

Both scalar samplers pick, per element, between an inversion method for small means (Knuth's
product of uniforms for Poisson, sums of geometric waiting times for binomial) and a
transformed-rejection method for large ones (Hormann's PTRS for Poisson, BTRS for binomial).
All elements iterate together in one `while_loop`, drawing fresh uniforms for the whole array
each round, exactly as JAX does, so equal keys give JAX's samples.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core.random._keys import check_key
from laminax_core.random._samplers import _shape, split_raw, uniform_raw
from laminax_core.random._threefry import threefry_split

__all__ = ["binomial", "multinomial", "poisson"]


def _jnp():
    return jnp


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _full(value, dtype, shape):
    return lax.broadcast_in_dim(np.asarray(value, dtype), tuple(shape), ())


# ----- poisson ------------------------------------------------------------------------------


def _poisson_knuth(raw, lam, shape, dtype, max_iters):
    # count uniforms until their product drops below exp(-lam)
    jnp = _jnp()

    def body(carry):
        i, k, key, log_prod = carry
        key, subkey = split_raw(key)
        k = jnp.where(jnp.greater(log_prod, jnp.negative(lam)), jnp.add(k, 1), k)
        u = uniform_raw(subkey, shape, np.dtype(np.float32))
        return jnp.add(i, 1), k, key, jnp.add(log_prod, jnp.log(u))

    def cond(carry):
        i, _, _, log_prod = carry
        return jnp.logical_and(jnp.any(jnp.greater(log_prod, jnp.negative(lam))),
                               jnp.less(i, max_iters))

    init = (np.int32(0), _full(0, dtype, shape), raw, _full(0, np.float32, shape))
    k = lax.while_loop(cond, body, init)[1]
    return lax.convert_element_type(jnp.subtract(k, 1), dtype)


def _poisson_rejection(raw, lam, shape, dtype, max_iters):
    # transformed rejection with squeeze (Hormann 1993, "PTRS")
    jnp = _jnp()
    log_lam = jnp.log(lam)
    b = jnp.add(0.931, jnp.multiply(2.53, jnp.sqrt(lam)))
    a = jnp.add(-0.059, jnp.multiply(0.02483, b))
    inv_alpha = jnp.add(1.1239, jnp.divide(1.1328, jnp.subtract(b, 3.4)))
    v_r = jnp.subtract(0.9277, jnp.divide(3.6224, jnp.subtract(b, 2)))

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = split_raw(key, 3)
        u = jnp.subtract(uniform_raw(key_u, shape, get_aval(lam).dtype), 0.5)
        v = uniform_raw(key_v, shape, get_aval(lam).dtype)
        u_shifted = jnp.subtract(0.5, jnp.abs(u))
        k = jnp.floor(jnp.add(jnp.add(jnp.multiply(
            jnp.add(jnp.divide(jnp.multiply(2, a), u_shifted), b), u), lam), 0.43))
        s = jnp.log(jnp.divide(jnp.multiply(v, inv_alpha),
                               jnp.add(jnp.divide(a, jnp.multiply(u_shifted, u_shifted)), b)))
        t = jnp.subtract(jnp.add(jnp.negative(lam), jnp.multiply(k, log_lam)),
                         lax.lgamma(jnp.add(k, 1)))
        accept1 = jnp.logical_and(jnp.greater_equal(u_shifted, 0.07), jnp.less_equal(v, v_r))
        reject = jnp.logical_or(jnp.less(k, 0), jnp.logical_and(
            jnp.less(u_shifted, 0.013), jnp.greater(v, u_shifted)))
        accept = jnp.logical_or(accept1, jnp.logical_and(jnp.logical_not(reject),
                                                         jnp.less_equal(s, t)))
        k_out = jnp.where(accept, k, k_out)
        return jnp.add(i, 1), k_out, jnp.logical_or(accepted, accept), key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.logical_and(jnp.any(jnp.logical_not(accepted)), jnp.less(i, max_iters))

    init = (np.int32(0), _full(-1, get_aval(lam).dtype, shape), _full(False, np.bool_, shape),
            raw)
    return lax.convert_element_type(lax.while_loop(cond, body, init)[1], dtype)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson random integers with rate `lam` (computed in float32, as in JAX).

    Args:
      key: a single PRNG key.
      lam: non-negative rates broadcast-compatible with `shape`.
      shape: the result shape (default: `lam`'s shape).
      dtype: an integer dtype (default int32, int64 with x64).

    Example:
      >>> poisson(PRNGKey(0), 3.0, (4,)).shape
      (4,)
    """
    jnp = _jnp()
    raw, _ = check_key("poisson", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype, "poisson")
    lam = jnp.asarray(lam)
    shape = _shape_of(lam) if shape is None else canonicalize_shape(shape, "poisson")
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    use_knuth = jnp.logical_or(jnp.isnan(lam), jnp.less(lam, 10))
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    lam_rejection = jnp.where(use_knuth, 100000.0, lam)
    max_iters = np.asarray(dtypes.iinfo(dtype).max, dtype)
    result = jnp.where(use_knuth, _poisson_knuth(raw, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(raw, lam_rejection, shape, dtype, max_iters))
    return jnp.where(jnp.equal(lam, 0), jnp.zeros_like(result), result)


# ----- binomial -----------------------------------------------------------------------------

# log k! - Stirling's approximation, tabulated for k <= 9
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    jnp = _jnp()
    dtype = get_aval(k).dtype
    table = np.asarray(_STIRLING_TAIL, dtype)
    small = jnp.less_equal(k, 9)
    k = lax.clamp(np.asarray(0, dtype), k, np.asarray(9, dtype))
    kp1sq = jnp.multiply(jnp.add(k, 1), jnp.add(k, 1))
    approx = jnp.divide(jnp.subtract(1.0 / 12, jnp.divide(jnp.subtract(
        1.0 / 360, jnp.divide(1.0 / 1260, kp1sq)), kp1sq)), jnp.add(k, 1))
    tabulated = jnp.take(table, lax.convert_element_type(jnp.floor(k), np.int32))
    return jnp.where(small, tabulated, approx)


def _binomial_inversion(raw, count, prob, shape, dtype, max_iters):
    # count geometric waiting times until they exceed `count` trials
    jnp = _jnp()
    log1m_prob = jnp.log1p(jnp.negative(prob))

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split_raw(key)
        num_geom = jnp.where(jnp.less_equal(geom_sum, count), jnp.add(num_geom, 1), num_geom)
        u = uniform_raw(subkey, shape, get_aval(prob).dtype)
        geom = jnp.ceil(jnp.divide(jnp.log(u), log1m_prob))
        return jnp.add(i, 1), num_geom, jnp.add(geom_sum, geom), key

    def cond(carry):
        i, _, geom_sum, _ = carry
        return jnp.logical_and(jnp.any(jnp.less_equal(geom_sum, count)),
                               jnp.less(i, max_iters))

    zeros = _full(0, get_aval(prob).dtype, shape)
    k = lax.while_loop(cond, body, (np.int32(0), zeros, zeros, raw))[1]
    return lax.convert_element_type(jnp.subtract(k, 1), dtype)


def _btrs(raw, count, prob, shape, dtype, max_iters):
    # Hormann's BTRS: transformed rejection with a Stirling-corrected acceptance bound
    jnp = _jnp()
    add, sub, mul, div, log = jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.log
    stddev = jnp.sqrt(mul(mul(count, prob), sub(1, prob)))
    b = add(1.15, mul(2.53, stddev))
    a = add(add(-0.0873, mul(0.0248, b)), mul(0.01, prob))
    c = add(mul(count, prob), 0.5)
    v_r = sub(0.92, div(4.2, b))
    r = div(prob, sub(1, prob))
    alpha = mul(add(2.83, div(5.1, b)), stddev)
    m = jnp.floor(mul(add(count, 1), prob))
    dtype_p = get_aval(prob).dtype

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = split_raw(key, 3)
        u = sub(uniform_raw(key_u, shape, dtype_p), 0.5)
        v = uniform_raw(key_v, shape, dtype_p)
        us = sub(0.5, jnp.abs(u))
        accept1 = jnp.logical_and(jnp.greater_equal(us, 0.07), jnp.less_equal(v, v_r))
        k = jnp.floor(add(mul(add(div(mul(2, a), us), b), u), c))
        reject = jnp.logical_or(jnp.less(k, 0), jnp.greater(k, count))
        v = log(div(mul(v, alpha), add(div(a, mul(us, us)), b)))
        bound = add(add(mul(add(m, 0.5), log(div(add(m, 1), mul(r, add(sub(count, m), 1))))),
                        mul(add(count, 1), log(div(add(sub(count, m), 1),
                                                   add(sub(count, k), 1))))),
                    mul(add(k, 0.5), log(div(mul(r, add(sub(count, k), 1)), add(k, 1)))))
        bound = sub(sub(add(add(bound, _stirling_tail(m)), _stirling_tail(sub(count, m))),
                        _stirling_tail(k)), _stirling_tail(sub(count, k)))
        accept = jnp.logical_or(accept1, jnp.logical_and(jnp.logical_not(reject),
                                                         jnp.less_equal(v, bound)))
        k_out = jnp.where(accept, k, k_out)
        return add(i, 1), k_out, jnp.logical_or(accepted, accept), key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.logical_and(jnp.any(jnp.logical_not(accepted)), jnp.less(i, max_iters))

    init = (np.int32(0), _full(-1, dtype_p, shape), _full(False, np.bool_, shape), raw)
    return lax.convert_element_type(lax.while_loop(cond, body, init)[1], dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial random values: successes in `n` trials with probability `p` (as floats).

    Args:
      key: a single PRNG key.
      n: trial counts; p: success probabilities (broadcast-compatible with `shape`).
      shape: the result shape (default: the broadcast of `n` and `p`).
      dtype: a float dtype.

    Example:
      >>> binomial(PRNGKey(0), 10.0, 0.3, (3,)).shape
      (3,)
    """
    jnp = _jnp()
    raw, _ = check_key("binomial", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype,
                                                     "binomial")
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    count, prob = jnp.asarray(n), jnp.asarray(p)
    if shape is None:
        shape = tuple(np.broadcast_shapes(_shape_of(count), _shape_of(prob)))
    else:
        shape = _shape("binomial", shape, _shape_of(count), _shape_of(prob))
    if not dtypes.issubdtype(get_aval(prob).dtype, np.inexact):
        prob = lax.convert_element_type(prob, dtypes.default_float_dtype())
    count = jnp.broadcast_to(lax.convert_element_type(count, get_aval(prob).dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    return _binomial(raw, count, prob, shape, dtype)


def _binomial(raw, count, prob, shape, dtype):
    jnp = _jnp()
    p_below_half = jnp.less(prob, 0.5)
    q = jnp.where(p_below_half, prob, jnp.subtract(1.0, prob))
    count_nan_or_negative = jnp.logical_or(jnp.isnan(count), jnp.less(count, 0.0))
    count_inf = jnp.isinf(count)
    q_nan, q_negative = jnp.isnan(q), jnp.less(q, 0.0)
    q = jnp.where(jnp.logical_or(q_nan, q_negative), 0.01, q)
    use_inversion = jnp.logical_or(count_nan_or_negative,
                                   jnp.less_equal(jnp.multiply(count, q), 10.0))
    count = jnp.floor(count)
    count_inversion = jnp.where(use_inversion, count, 0.0)
    count_btrs = jnp.where(use_inversion, 10000.0, count)
    q_btrs = jnp.where(use_inversion, 0.5, q)
    max_iters = np.asarray(dtypes.finfo(dtype).max, dtype)
    samples = jnp.where(use_inversion,
                        _binomial_inversion(raw, count_inversion, q, shape, dtype, max_iters),
                        _btrs(raw, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = jnp.logical_or(jnp.logical_or(q_negative, q_nan), count_nan_or_negative)
    samples = jnp.where(invalid, np.asarray(np.nan, dtype), samples)
    samples = jnp.where(jnp.logical_and(count_inf, jnp.logical_not(invalid)),
                        np.asarray(np.inf, dtype), samples)
    keep = jnp.logical_or(jnp.logical_or(p_below_half, count_nan_or_negative),
                          jnp.logical_or(q_nan, count_inf))
    flipped = jnp.subtract(lax.convert_element_type(count, dtype), samples)
    return jnp.where(keep, samples, flipped)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts: `n` draws over the categories of the last axis of `p`.

    Args:
      key: a single PRNG key.
      n: the number of draws (broadcast to `shape[:-1]`).
      p: category probabilities along the last axis.
      shape: the result shape (default: `p`'s shape).
      dtype: the result dtype (default: the promoted dtype of `n` and `p`).
      unroll: accepted for JAX compatibility (the scan over categories is not unrolled).

    Example:
      >>> counts = multinomial(PRNGKey(0), 10.0, np.array([0.2, 0.3, 0.5], np.float32))
      >>> float(counts.sum())
      10.0
    """
    jnp = _jnp()
    del unroll
    raw, _ = check_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    promoted = dtypes.result_type(n, p)
    if not dtypes.issubdtype(promoted, np.inexact):
        promoted = dtypes.default_float_dtype()
    n, p = (lax.convert_element_type(v, promoted) for v in (n, p))
    shape = _shape_of(p) if shape is None else canonicalize_shape(shape, "multinomial")
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = jnp.divide(p, jnp.where(jnp.equal(remaining, 0), 1, remaining))

    keys = threefry_split(raw, (shape[-1],))

    def step(remainder, ratio_and_key):
        ratio, subkey = ratio_and_key
        count = _binomial(subkey, remainder, jnp.clip(ratio, 0, 1), shape[:-1], promoted)
        return jnp.subtract(remainder, count), count

    _, counts = lax.scan(step, n, (ratios, keys))
    out = jnp.moveaxis(counts, 0, -1)
    return out if dtype is None else lax.convert_element_type(out, dtype)
