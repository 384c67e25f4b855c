"""Samplers built on random bits: `bits`, `uniform`, `normal`, `randint`, `bernoulli`,
`truncated_normal`, `exponential`, `laplace`, `logistic`, `gumbel`, `categorical`, `choice`,
`permutation`.

Each sampler transforms threefry bits with the same sequence of lax operations as JAX 0.10.2,
so equal keys give equal values: bit for bit where only integer and exactly rounded float
arithmetic is involved (`bits`, `uniform`, `randint`, `bernoulli`), and to the last ulps of the
transcendental functions otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core.lax._helpers import broadcast_to_shape
from laminax_core.random import _threefry
from laminax_core.random._keys import check_key

__all__ = [
    "bernoulli", "bits", "categorical", "exponential", "gumbel", "laplace",
    "logistic", "normal", "randint", "truncated_normal", "uniform",
    "random_bits",
    "split_raw",
    "uniform_raw",
    "normal_raw",
    "exponential_raw",
    "gumbel_raw",
    "truncated_normal_raw",
]  # fmt: skip

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


# ----- shared checks and helpers ------------------------------------------------------------


def _float_dtype(name: str, dtype, kind=np.floating, what: str = "a float"):
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype, name)
    if not dtypes.issubdtype(dtype, kind):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def _shape(name: str, shape, *param_shapes) -> tuple[int, ...]:
    shape = canonicalize_shape(shape, name)
    if param_shapes:
        try:
            joint = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            joint = None
        if joint != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                f"the result of broadcasting the shapes must equal the shape argument, but got "
                f"result {joint} for shape argument {shape}.")
    return shape


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _to_rank(x, rank: int):
    """`x` with leading size-1 dimensions added up to `rank` (lax broadcasts size-1 dims)."""
    shape = _shape_of(x)
    if len(shape) >= rank:
        return x
    return lax.reshape(x, (1,) * (rank - len(shape)) + shape)


def _to_shape(x, shape):
    return broadcast_to_shape(_to_rank(x, len(shape)), shape)


def _const(value, dtype):
    return np.asarray(value, dtype)


def random_bits(raw_key, bit_width: int, shape):
    """The raw bits every sampler starts from."""
    return _threefry.threefry_random_bits(raw_key, bit_width, tuple(shape))


def split_raw(raw_key, num: int = 2) -> list:
    """`num` raw subkeys of a raw key, as a list."""
    keys = _threefry.threefry_split(raw_key, (num,))
    return [lax.squeeze(lax.slice(keys, (i, 0), (i + 1, 2)), (0,)) for i in range(num)]


# ----- bits, uniform, normal ----------------------------------------------------------------


def bits(key, shape=(), dtype=None):
    """Uniformly random unsigned integers.

    Args:
      key: a single PRNG key.
      shape: the result shape.
      dtype: an unsigned integer dtype (default uint32, or uint64 with x64).

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> bits(PRNGKey(0), (2,))
      array([4070199207, 4202968722], dtype=uint32)
    """
    raw, _ = check_key("bits", key)
    dtype = dtypes.default_uint_dtype() if dtype is None else (
        dtypes.check_and_canonicalize_user_dtype(dtype, "bits"))
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(raw, dtype.itemsize * 8, canonicalize_shape(shape, "bits"))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform random floats in `[minval, maxval)`.

    Args:
      key: a single PRNG key.
      shape: the result shape.
      dtype: a float dtype (default float32, or float64 with x64).
      minval, maxval: bounds broadcast-compatible with `shape`.

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> uniform(PRNGKey(0), (2,))
      array([0.947667 , 0.9785799], dtype=float32)
    """
    raw, _ = check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _shape("uniform", shape, _shape_of(minval), _shape_of(maxval))
    return uniform_raw(raw, shape, dtype, minval, maxval)


def uniform_raw(raw_key, shape, dtype, minval=0.0, maxval=1.0):
    """`uniform` on a raw key with a canonical shape and dtype."""
    _shape("uniform", shape)
    minval = _to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = _to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    info = dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    # dtypes with under 8 mantissa bits still draw 8 random bits per value
    rng_bits = nbits if nmant >= 8 else 8
    uint = _UINT[nbits]
    raw_bits = random_bits(raw_key, rng_bits, shape)
    if rng_bits != nbits:
        raw_bits = lax.convert_element_type(raw_bits, uint)
    # random mantissa under the exponent of 1.0 gives a float in [1, 2); subtract 1
    mantissa = lax.shift_right_logical(raw_bits, _const(rng_bits - nmant, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype)
    floats = lax.sub(floats, _const(1.0, dtype))
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, lax.reshape(scaled, shape))


def normal(key, shape=(), dtype=None):
    """Standard normal random values (complex dtypes: real and imaginary parts each of
    variance 1/2).

    Example:
      >>> normal(PRNGKey(0), (2,))
      array([1.622642 , 2.0252647], dtype=float32)
    """
    raw, _ = check_key("normal", key)
    dtype = _float_dtype("normal", dtype, np.inexact, "a float or complex")
    return normal_raw(raw, canonicalize_shape(shape, "normal"), dtype)


def normal_raw(raw_key, shape, dtype):
    """`normal` on a raw key with a canonical shape and dtype."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = np.zeros((), dtype).real.dtype
        key_re, key_im = split_raw(raw_key)
        parts = [_normal_real(k, shape, real_dtype) for k in (key_re, key_im)]
        return lax.div(lax.complex(*parts), _const(np.sqrt(2), dtype))
    return _normal_real(raw_key, shape, dtype)


def _normal_real(raw_key, shape, dtype):
    # inverse-CDF sampling: sqrt(2) erfinv(u) for u uniform on the open interval (-1, 1)
    lowest = -(1 - float(dtypes.finfo(dtype).epsneg))  # the float after -1 toward 0
    u = uniform_raw(raw_key, shape, dtype, _const(lowest, dtype), _const(1.0, dtype))
    return lax.mul(_const(np.sqrt(2), dtype), lax.erf_inv(u))


# ----- randint ------------------------------------------------------------------------------


def _int_array(x):
    """An integer operand: Python ints take the default int dtype, floats are truncated."""
    if isinstance(x, int | float | bool):
        x = np.asarray(x, dtypes.default_int_dtype() if not isinstance(x, float) else None)
    aval = get_aval(x)
    if not dtypes.issubdtype(aval.dtype, np.integer):
        x = lax.convert_element_type(x, dtypes.default_int_dtype())
    elif isinstance(x, np.ndarray | np.generic) and x.dtype != aval.dtype:
        x = np.asarray(x, aval.dtype)
    return x


def _clip_to(x, dtype):
    """Integer `x` clipped to the range both its dtype and `dtype` can hold, then cast."""
    source = get_aval(x).dtype
    low = max(dtypes.iinfo(dtype).min, dtypes.iinfo(source).min)
    high = min(dtypes.iinfo(dtype).max, dtypes.iinfo(source).max)
    clipped = lax.min(_const(high, source), lax.max(_const(low, source), x))
    return lax.convert_element_type(clipped, dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform random integers in `[minval, maxval)`.

    Args:
      key: a single PRNG key.
      shape: the result shape.
      minval, maxval: integer bounds broadcast-compatible with `shape` (values outside
        `dtype`'s range are clipped to it).
      dtype: an integer dtype (default int32, or int64 with x64).

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> randint(PRNGKey(0), (3,), 0, 10)
      array([9, 0, 2], dtype=int32)
    """
    raw, _ = check_key("randint", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype, "randint")
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = canonicalize_shape(shape, "randint")
    info = dtypes.iinfo(dtype)
    minval, maxval = _int_array(minval), _int_array(maxval)
    if info.bits >= 32:
        return _randint(raw, shape, minval, maxval, dtype)
    # narrow dtypes sample in int32 with the bounds clipped to the dtype's range
    bounds = []
    for bound, high in ((minval, info.max), (maxval, info.max + 1)):
        bound = lax.convert_element_type(bound, np.int32)
        bounds.append(lax.min(_const(high, np.int32), lax.max(_const(info.min, np.int32), bound)))
    return lax.convert_element_type(_randint(raw, shape, *bounds, np.dtype(np.int32)), dtype)


def _randint(raw_key, shape, minval, maxval, dtype):
    _shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    top = _clip_to(_const(dtypes.iinfo(dtype).max, dtype), get_aval(maxval).dtype)
    maxval_out_of_range = _to_rank(lax.gt(maxval, top), len(shape))
    minval = _to_rank(_clip_to(minval, dtype), len(shape))
    maxval = _to_rank(_clip_to(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    uint = np.dtype(_UINT[nbits])
    key_high, key_low = split_raw(raw_key)
    high_bits = random_bits(key_high, nbits, shape)
    low_bits = random_bits(key_low, nbits, shape)
    # span = maxval - minval, at least 1; one more when maxval exceeds the dtype's range
    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    span = _select(lax.le(maxval, minval), _const(1, uint), span)
    span = _select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                   lax.add(span, _const(1, uint)), span)
    # (high * 2**nbits + low) mod span, without overflow: 2**nbits mod span via its square root
    multiplier = lax.rem(_to_shape(_const(2 ** (nbits // 2), uint), _shape_of(span)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(high_bits, span), multiplier), lax.rem(low_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def _select(pred, on_true, on_false):
    """`lax.select` with the operands broadcast to one shape."""
    shape = np.broadcast_shapes(*(_shape_of(x) for x in (pred, on_true, on_false)))
    pred, on_true, on_false = (_to_shape(x, shape) for x in (pred, on_true, on_false))
    return lax.select_n(pred, on_false, on_true)


# ----- bernoulli, exponential, laplace, logistic, gumbel ------------------------------------


def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Random booleans, True with probability `p`.

    Args:
      key: a single PRNG key.
      p: a float probability (array) broadcast-compatible with `shape`.
      shape: the result shape (default: `p`'s shape).
      mode: "low" (one uniform per value) or "high" (two, resolving small `p` finely).

    Example:
      >>> bernoulli(PRNGKey(0), 0.5, (3,))
      array([False, False,  True])
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    raw, _ = check_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    shape = _shape_of(p) if shape is None else _shape("bernoulli", shape, _shape_of(p))
    p = _to_rank(p, len(shape))
    if mode == "low":
        return lax.lt(uniform_raw(raw, shape, dtype), p)
    pair = uniform_raw(raw, (2, *shape), dtype)
    u1, u2 = (lax.squeeze(lax.slice(pair, (i,) + (0,) * len(shape), (i + 1, *shape)), (0,))
              for i in range(2))
    u2 = lax.mul(u2, _const(2.0 ** -dtypes.finfo(dtype).nmant, dtype))
    return lax.lt(u2, lax.sub(p, u1))


def exponential(key, shape=(), dtype=None):
    """Exponential random values with rate 1.

    Example:
      >>> exponential(PRNGKey(0), (2,))
      array([2.950128 , 3.8434246], dtype=float32)
    """
    raw, _ = check_key("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    return exponential_raw(raw, canonicalize_shape(shape, "exponential"), dtype)


def exponential_raw(raw_key, shape, dtype):
    u = uniform_raw(raw_key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))  # -log(1 - u)


def laplace(key, shape=(), dtype=None):
    """Laplace (double exponential) random values with scale 1.

    Example:
      >>> laplace(PRNGKey(0), (2,))
      array([-2.2569816, -3.1502788], dtype=float32)
    """
    raw, _ = check_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    shape = canonicalize_shape(shape, "laplace")
    low = -1.0 + float(dtypes.finfo(dtype).epsneg)
    u = uniform_raw(raw, shape, dtype, _const(low, dtype), _const(1.0, dtype))
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic random values.

    Example:
      >>> logistic(PRNGKey(0), (2,))
      array([2.896376 , 3.8217716], dtype=float32)
    """
    raw, _ = check_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    shape = canonicalize_shape(shape, "logistic")
    tiny = float(dtypes.finfo(dtype).tiny)
    x = uniform_raw(raw, shape, dtype, _const(tiny, dtype), _const(1.0, dtype))
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))  # log(x / (1 - x))


def gumbel(key, shape=(), dtype=None, mode: str | None = None):
    """Standard Gumbel random values.

    Args:
      key: a single PRNG key.
      shape: the result shape.
      dtype: a float dtype.
      mode: "low" (default: one uniform per value), "high" (two per value, accurate far in
        the right tail) or "highest" (float32: 64 random bits per value, accurate in both
        tails; other dtypes use "high").

    Example:
      >>> gumbel(PRNGKey(0), (2,))
      array([2.9233725, 3.8326178], dtype=float32)
    """
    raw, _ = check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    shape = canonicalize_shape(shape, "gumbel")
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"gumbel: mode must be 'low', 'high' or 'highest', got {mode!r}.")
    return gumbel_raw(raw, shape, dtype, mode)


def gumbel_raw(raw_key, shape, dtype, mode="low"):
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest(raw_key, shape)
    if mode == "low":
        u = uniform_raw(raw_key, shape, dtype, _const(info.tiny, dtype), _const(1.0, dtype))
        return lax.neg(lax.log(lax.neg(lax.log(u))))  # -log(-log(u))
    pair = uniform_raw(raw_key, (2, *shape), dtype, _const(0.0, dtype), _const(1.0, dtype))
    high, low = (lax.squeeze(lax.slice(pair, (i,) + (0,) * len(shape), (i + 1, *shape)), (0,))
                 for i in range(2))
    # below 1/2, refine the high uniform with the low one's bits
    fine = lax.add(lax.add(high, lax.mul(_const(2.0 ** -info.nmant, dtype), low)),
                   _const(info.tiny, dtype))
    x = lax.select_n(lax.ge(high, _const(0.5, dtype)), fine, high)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def _leading(x, i):
    shape = tuple(get_aval(x).shape)
    return lax.squeeze(lax.slice(x, (i,) + (0,) * (len(shape) - 1), (i + 1, *shape[1:])), (0,))


def _fraction_to_float32(high, low):
    """The float32 nearest below the 64-bit binary fraction `0.high low` (uint32 words),
    normalized by counting leading zeros so that small fractions keep 24 significant bits."""
    u32 = np.uint32
    high_clz, low_clz = lax.clz(high), lax.clz(low)
    high_empty = lax.eq(high_clz, u32(32))
    from_low = lax.select_n(high_empty, lax.shift_right_logical(low, lax.sub(u32(32), high_clz)),
                            lax.shift_left(low, low_clz))
    mantissa = lax.bitwise_or(lax.shift_left(high, high_clz), from_low)
    mantissa = lax.bitwise_and(lax.shift_right_logical(mantissa, u32(8)), u32((1 << 23) - 1))
    zeros = lax.select_n(high_empty, high_clz, lax.add(u32(32), low_clz))
    exponent = lax.shift_left(lax.sub(u32(126), zeros), u32(23))
    exponent = lax.bitwise_and(exponent, u32((1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def _gumbel_highest(raw_key, shape):
    # 64 random bits per value; values above 1/2 are taken as 1 - x through the two's
    # complement, so both tails of -log(-log(x)) see a fraction with full relative precision
    u32 = np.uint32
    bits = random_bits(raw_key, 32, (2, *shape))
    flipped = lax.bitwise_not(bits)
    low_carry = lax.convert_element_type(lax.eq(_leading(flipped, 1), u32(2**32 - 1)), u32)
    carry = lax.concatenate([lax.broadcast_in_dim(c, (1, *shape), tuple(range(1, len(shape) + 1)))
                             for c in (low_carry, lax.add(lax.mul(low_carry, u32(0)), u32(1)))],
                            0)
    negated = lax.add(flipped, carry)
    keep = lax.lt(_leading(bits, 0), u32(2**31))
    chosen = lax.select_n(_to_shape(keep, (2, *shape)), negated, bits)
    x = _fraction_to_float32(_leading(chosen, 0), _leading(chosen, 1))
    lower_tail = lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    upper_tail = lax.neg(lax.log(lax.neg(lax.log(x))))
    return lax.select_n(keep, upper_tail, lower_tail)


# ----- truncated_normal ---------------------------------------------------------------------


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal values truncated to the open interval `(lower, upper)`.

    Args:
      key: a single PRNG key.
      lower, upper: bounds broadcast-compatible with `shape`.
      shape: the result shape (default: the bounds' broadcast shape).
      dtype: a float dtype.

    Example:
      >>> truncated_normal(PRNGKey(0), -1.0, 1.0, (2,))
      array([0.8618594, 0.9412884], dtype=float32)
    """
    raw, _ = check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    bound_shapes = (_shape_of(lower), _shape_of(upper))
    if shape is None:
        shape = np.broadcast_shapes(*bound_shapes)
    else:
        shape = _shape("truncated_normal", shape, *bound_shapes)
    return truncated_normal_raw(raw, lower, upper, tuple(shape), dtype)


def truncated_normal_raw(raw_key, lower, upper, shape, dtype):
    sqrt2 = _const(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    # inverse CDF between the bounds' CDF values (in erf's scale)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = uniform_raw(raw_key, shape, dtype, a, b)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # rounding may land on a bound: clip into the open interval
    inf = _const(np.inf, dtype)
    low = _to_rank(lax.nextafter(lax.stop_gradient(lower), _to_shape(inf, _shape_of(lower))),
                   len(shape))
    high = _to_rank(lax.nextafter(lax.stop_gradient(upper), _to_shape(lax.neg(inf),
                                                                      _shape_of(upper))),
                    len(shape))
    return lax.min(high, lax.max(low, out))


# ----- categorical, choice, permutation -----------------------------------------------------


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None):
    """Samples category indices with log-probabilities `logits` along `axis` (Gumbel-max).

    Args:
      key: a single PRNG key.
      logits: unnormalized log-probabilities.
      axis: the category axis of `logits`.
      shape: the result shape; must end with the batch shape (logits' shape without `axis`).
      replace: whether to sample with replacement (False: distinct categories per batch).
      mode: the gumbel mode.

    Returns:
      int32 (int64 with x64) indices of shape `shape`.

    Example:
      >>> categorical(PRNGKey(0), np.log(np.array([0.1, 0.9], np.float32)), shape=(4,))
      array([1, 1, 1, 1], dtype=int32)
    """
    raw, _ = check_key("categorical", key)
    logits = _as_float_array(logits)
    logits_shape = _shape_of(logits)
    axis = _axis("categorical", axis, len(logits_shape))
    batch_shape = logits_shape[:axis] + logits_shape[axis + 1:]
    shape = batch_shape if shape is None else _shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    dtype = get_aval(logits).dtype
    index_dtype = dtypes.default_int_dtype()
    mode = "low" if mode is None else mode
    if replace:
        sample_shape = (*prefix, *logits_shape)
        noise = gumbel_raw(raw, sample_shape, dtype, mode)
        expanded = lax.reshape(logits, (1,) * len(prefix) + logits_shape)
        return lax.argmax(lax.add(noise, expanded), len(prefix) + axis, index_dtype)
    count = math.prod(prefix)
    if count > logits_shape[axis]:
        raise ValueError(f"Number of samples without replacement ({count}) cannot exceed "
                         f"number of categories ({logits_shape[axis]}).")
    perturbed = lax.add(logits, gumbel_raw(raw, logits_shape, dtype, mode))
    moved = _moveaxis(perturbed, axis, len(logits_shape) - 1)
    _, indices = lax.top_k(moved, count)
    indices = lax.convert_element_type(indices, index_dtype)
    last = len(batch_shape)
    return lax.reshape(indices, shape, (last, *range(last)))


def _as_float_array(x):
    if isinstance(x, int | float):
        return np.asarray(x, dtypes.default_float_dtype())
    return x


def _axis(name: str, axis: int, ndim: int) -> int:
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}.")
    return axis % max(ndim, 1)


def _moveaxis(x, source: int, destination: int):
    ndim = len(_shape_of(x))
    perm = [d for d in range(ndim) if d != source]
    perm.insert(destination, source)
    return lax.transpose(x, tuple(perm)) if perm != list(range(ndim)) else x
