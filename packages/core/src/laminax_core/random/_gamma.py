"""Gamma-family samplers: `gamma`, `loggamma`, `beta`, `dirichlet`.

Each element draws from Marsaglia and Tsang's rejection sampler ("A simple method for generating
gamma variables", 2000) with its own key, split from the caller's key as JAX splits it, and the
same sequence of rejection steps (`lax.while_loop`s), so samples equal JAX's for equal keys.
Shapes below 1 are boosted: sample with `a + 1`, then scale by `u ** (1 / a)`.

As in JAX, the sampler is the primitive `random_gamma_p` (typed keys and `a`; lowered as the
lax program above), whose jvp is the implicit reparameterization gradient
(`lax.random_gamma_grad`), so derivatives with respect to `a` agree with JAX's.
"""

from __future__ import annotations

import math

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._api import vmap
from laminax_core._avals import get_aval
from laminax_core._avals import ShapedArray
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.jvp import instantiate_zeros
from laminax_core._primitive import Primitive
from laminax_core.random._keys import KEY_DTYPE, check_key, random_unwrap_p, random_wrap_p
from laminax_core.random._samplers import (
    _float_dtype,
    _shape,
    _to_shape,
    exponential_raw,
    normal_raw,
    split_raw,
    uniform_raw,
)
from laminax_core.random._threefry import threefry_split

__all__ = ["beta", "dirichlet", "gamma", "loggamma", "random_gamma_p"]


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _gamma_one(raw_key, alpha, log_space: bool):
    """One Gamma(alpha) sample (or its log) from one raw key; alpha is a scalar."""
    dtype = get_aval(alpha).dtype

    def const(v):
        return np.asarray(v, dtype)

    boost_mask = lax.ge(alpha, const(1))
    alpha_orig = alpha
    alpha = lax.select_n(boost_mask, lax.add(alpha, const(1)), alpha)
    d = lax.sub(alpha, const(1 / 3))
    c = lax.div(const(1 / 3), lax.sqrt(d))

    def rejected(state):
        # keep going unless U < 1 - 0.0331 X^2 or log U < X/2 + d (1 - V + log V), X = x^2
        _, x_sq, v, u = state
        squeeze = lax.ge(u, lax.sub(const(1), lax.mul(const(0.0331), lax.mul(x_sq, x_sq))))
        bound = lax.add(lax.mul(x_sq, const(0.5)),
                        lax.mul(d, lax.add(lax.sub(const(1), v), lax.log(v))))
        return lax.bitwise_and(squeeze, lax.ge(lax.log(u), bound))

    def propose(state):
        key = state[0]
        key, x_key, u_key = split_raw(key, 3)

        def next_normal(kxv):
            k, subkey = split_raw(kxv[0])
            x = normal_raw(subkey, (), dtype)
            return k, x, lax.add(const(1), lax.mul(x, c))

        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], const(0)), next_normal,
                                 (x_key, const(0), const(-1)))
        u = uniform_raw(u_key, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = split_raw(raw_key)
    _, _, v, _ = lax.while_loop(rejected, propose, (key, const(0), const(1), const(2)))
    if log_space:
        log_u = lax.neg(exponential_raw(subkey, (), dtype))
        skip = lax.bitwise_or(boost_mask, lax.eq(log_u, const(0)))
        log_boost = lax.select_n(skip, lax.mul(log_u, lax.div(const(1), alpha_orig)), const(0))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(const(1), uniform_raw(subkey, (), dtype))
    boost = lax.select_n(boost_mask, lax.pow(u, lax.div(const(1), alpha_orig)), const(1))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_samples(raw_key, a, log_space: bool):
    """Samples for every element of `a`, each with its own key split from `raw_key`."""
    shape = _shape_of(a)
    count = math.prod(shape)
    if count == 0:
        return lax.reshape(a, shape)
    keys = threefry_split(raw_key, (count,))
    flat = lax.reshape(a, (count,))
    samples = vmap(lambda k, alpha: _gamma_one(k, alpha, log_space))(keys, flat)
    return lax.reshape(samples, shape)


def _gamma_impl(keys, a, *, log_space):
    """Samples of `a`'s shape from typed `keys`, whose shape is a prefix of `a`'s: each key
    draws the block of `a` it leads (JAX's `random_gamma` primitive)."""
    raw = random_unwrap_p.bind(keys)
    lead = len(get_aval(keys).shape)
    draw = lambda k, alpha: _gamma_samples(k, alpha, log_space)  # noqa: E731
    for _ in range(lead):
        draw = vmap(draw)
    return draw(raw, a)


def _gamma_abstract_eval(keys, a, *, log_space):
    if keys.dtype != KEY_DTYPE:
        raise TypeError(f"random_gamma: expected typed keys, got {keys.str_short()}.")
    if tuple(a.shape[:len(keys.shape)]) != tuple(keys.shape):
        raise ValueError(f"random_gamma: the keys' shape {keys.shape} must lead a's shape "
                        f"{a.shape}.")
    return ShapedArray(a.shape, a.dtype)


def _gamma_jvp(primals, tangents, *, log_space):
    # the implicit reparameterization gradient: along P(a, x) = u, dx/da = random_gamma_grad
    keys, a = primals
    a_dot = instantiate_zeros(tangents[1])
    sample = random_gamma_p.bind(keys, a, log_space=log_space)
    if not log_space:
        return sample, lax.mul(a_dot, lax.random_gamma_grad(a, sample))
    # d log x = dx / x; exp(log x) may round to 0: use the smallest normal float instead
    x = lax.exp(sample)
    tiny = lax.full_like(x, dtypes.finfo(get_aval(x).dtype).tiny)
    x = lax.select_n(lax.eq(x, lax.full_like(x, 0)), x, tiny)
    return sample, lax.mul(a_dot, lax.div(lax.random_gamma_grad(a, x), x))


def _gamma_batch(axis_data, args, dims, *, log_space):
    # an unbatched key is shared by every example (as in JAX): both move the batch to the front
    keys, a = (bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims))
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


random_gamma_p = Primitive("random_gamma")
random_gamma_p.def_abstract_eval(_gamma_abstract_eval)
random_gamma_p.def_jvp(_gamma_jvp)
random_gamma_p.def_batch(_gamma_batch)


@random_gamma_p.def_impl
def _gamma_eager(keys, a, *, log_space):
    # compiled as one program when an executor is plugged in; NumPy's reference evaluates the
    # lax program op by op (its reference rules cannot take typed keys)
    if eval_interpreter._eager_impl is not None:
        return eval_interpreter._eager_impl(random_gamma_p, (keys, a), {"log_space": log_space})
    return _gamma_impl(keys, a, log_space=log_space)


def _gamma_with_gradient(raw_key, a, log_space):
    return random_gamma_p.bind(random_wrap_p.bind(raw_key), a, log_space=log_space)


def _gamma(name, key, a, shape, dtype, log_space):
    raw, _ = check_key(name, key)
    dtype = _float_dtype(name, dtype)
    a = _as_array(a)
    shape = _shape_of(a) if shape is None else _shape(name, shape, _shape_of(a))
    a = _to_shape(lax.convert_element_type(a, dtype), shape)
    return _gamma_with_gradient(raw, a, log_space)


def _as_array(x):
    if isinstance(x, int | float):
        return np.asarray(x, dtypes.default_float_dtype())
    return x


def gamma(key, a, shape=None, dtype=None):
    """Gamma random values with shape `a` and scale 1.

    Args:
      key: a single PRNG key.
      a: positive shape parameters broadcast-compatible with `shape`.
      shape: the result shape (default: `a`'s shape).
      dtype: a float dtype.

    Example:
      >>> gamma(PRNGKey(0), np.float32(2.0), (3,)).shape
      (3,)
    """
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """Logarithms of Gamma(a) random values, accurate for small `a` where the values
    themselves underflow.

    Example:
      >>> loggamma(PRNGKey(0), np.float32(0.01), (2,)).shape
      (2,)
    """
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) random values, from two log-gamma samples.

    Example:
      >>> x = beta(PRNGKey(0), 2.0, 3.0, (4,))
      >>> bool(((x > 0) & (x < 1)).all())
      True
    """
    raw, _ = check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    a, b = _as_array(a), _as_array(b)
    if shape is None:
        shape = np.broadcast_shapes(_shape_of(a), _shape_of(b))
    else:
        shape = _shape("beta", shape, _shape_of(a), _shape_of(b))
    key_a, key_b = split_raw(raw)
    a = _to_shape(lax.convert_element_type(a, dtype), shape)
    b = _to_shape(lax.convert_element_type(b, dtype), shape)
    log_a = _gamma_with_gradient(key_a, a, True)
    log_b = _gamma_with_gradient(key_b, b, True)
    # Gamma_a / (Gamma_a + Gamma_b), scaled by the larger one to avoid underflow
    log_max = lax.max(log_a, log_b)
    scaled_a = lax.exp(lax.sub(log_a, log_max))
    scaled_b = lax.exp(lax.sub(log_b, log_max))
    return lax.div(scaled_a, lax.add(scaled_a, scaled_b))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) random vectors along the last axis (normalized log-gamma samples).

    Args:
      key: a single PRNG key.
      alpha: concentrations, shape `(..., k)`.
      shape: the batch shape (default: `alpha.shape[:-1]`).
      dtype: a float dtype.

    Example:
      >>> x = dirichlet(PRNGKey(0), np.ones(3, np.float32))
      >>> x.shape, bool(abs(float(x.sum()) - 1) < 1e-6)
      ((3,), True)
    """
    raw, _ = check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha = _as_array(alpha)
    alpha_shape = _shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _shape("dirichlet", shape, alpha_shape[:-1])
    full = (*shape, alpha_shape[-1])
    alpha = _to_shape(lax.convert_element_type(alpha, dtype), full)
    return _softmax_last_axis(_gamma_with_gradient(raw, alpha, True))


def _softmax_last_axis(x):
    """Softmax over the last axis as JAX's dirichlet computes it (random's own helper, not
    `nn.softmax`: the subtracted maximum is a `stop_gradient` whatever the softmax config)."""
    axis = get_aval(x).ndim - 1
    kept = (*get_aval(x).shape[:-1], 1)
    x_max = lax.stop_gradient(lax.reshape(lax.reduce_max(x, (axis,)), kept))
    unnormalized = lax.exp(lax.sub(x, x_max))
    return lax.div(unnormalized, lax.reshape(lax.reduce_sum(unnormalized, (axis,)), kept))
