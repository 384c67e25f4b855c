"""Activation functions and softmax-family reductions (`laminax_core.nn`), as compositions of
lax operations that follow JAX 0.10.2's formulas step by step, so results agree with JAX's to
float rounding.

Derivatives: `relu` and `relu6` have custom jvps, as in JAX (zero slope at the kinks): the
value is a plain `max`/`min`, which XLA computes without the select a derivative-shaping
composition would leave in the forward pass. Python scalars in the formulas are weakly typed, so float16
inputs compute in float16 as in JAX.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import config, dtypes, lax
from laminax_core._avals import get_aval, weak_array
from laminax_core._custom_derivatives import custom_jvp
from laminax_core._interpreters.jvp import zeros_like_aval
from laminax_core.lax._helpers import broadcast_to_shape, is_python_scalar
from laminax_core.numpy import logaddexp

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "leaky_relu", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp",
    "log1mexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
    "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize",
    "swish", "tanh",
]  # fmt: skip


# ----- operand helpers ----------------------------------------------------------------------


def _array(name: str, x):
    """`x` as an array operand: Python scalars become weakly typed default-dtype arrays."""
    if isinstance(x, bool | int | float):
        return weak_array(x, dtypes.result_type(x)) if not isinstance(x, bool) else np.asarray(x)
    try:
        get_aval(x)
    except TypeError as err:
        raise TypeError(f"{name} requires an array argument, got {type(x).__name__}.") from err
    return x


def _inexact(name: str, x):
    """`x` as a floating (or complex) array; integer and bool arrays are promoted."""
    x = _array(name, x)
    aval = get_aval(x)
    if not dtypes.issubdtype(aval.dtype, np.inexact):
        x = lax.convert_element_type(x, dtypes.default_float_dtype(), weak_type=aval.weak_type)
    return x


def _c(x, value):
    """`value` as a weakly typed constant of `x`'s dtype (as jnp's Python scalars behave)."""
    return weak_array(value, get_aval(x).dtype)


def _zeros_like(x):
    return zeros_like_aval(get_aval(x).strip_weak_type())


def _where(pred, on_true, on_false):
    """`jnp.where` on operands of one shape or scalars (scalars take the arrays' dtype)."""
    if is_python_scalar(on_true) and not is_python_scalar(on_false):
        on_true = _c(on_false, on_true)
    elif is_python_scalar(on_false) and not is_python_scalar(on_true):
        on_false = _c(on_true, on_false)
    shape = np.broadcast_shapes(*(get_aval(v).shape for v in (pred, on_true, on_false)))
    pred, on_true, on_false = (broadcast_to_shape(_rank(v, len(shape)), shape)
                               for v in (pred, on_true, on_false))
    return lax.select_n(pred, on_false, on_true)


def _axes(axis, ndim: int, name: str) -> tuple[int, ...]:
    axes = tuple(range(ndim)) if axis is None else (
        tuple(axis) if isinstance(axis, tuple | list) else (axis,))
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{name}: axis {a} is out of bounds for an array of rank {ndim}.")
        out.append(a % max(ndim, 1))
    if len(set(out)) != len(out):
        # JAX's answer; reducing over the deduplicated axes would hide the mistake
        raise ValueError(f"{name}: duplicate value in 'axis': {axis!r}.")
    return tuple(sorted(out))


def _keep(x, reduced, axes):
    """The reduction `reduced` of `x` over `axes` with the reduced dims kept as size 1."""
    # expand_dims (a broadcast_in_dim), as jnp's keepdims in JAX: its transpose reduces
    return lax.expand_dims(reduced, tuple(sorted(axes)))


def _masked(x, where, fill):
    return x if where is None else _where(where, x, fill)


def _sum(x, axes, where=None):
    return _keep(x, lax.reduce_sum(_masked(x, where, 0), axes), axes)


def _max(x, axes, where=None):
    return _keep(x, lax.reduce_max(_masked(x, where, -np.inf), axes), axes)


def _max_from_minus_inf(x, axes, where=None):
    # JAX's (log_)softmax take jnp.max with initial=-inf: one `max` after the reduction
    reduced = lax.max(-np.inf, lax.reduce_max(_masked(x, where, -np.inf), axes))
    return _keep(x, reduced, axes)


def _count(x, axes, where=None):
    """How many elements each reduction over `axes` sees, in `x`'s dtype, dims kept."""
    dtype = get_aval(x).dtype
    if where is None:
        shape = get_aval(x).shape
        return np.asarray(np.prod([shape[a] for a in axes]), dtype)
    ones = lax.add(_zeros_like(x), 1)
    return _sum(_where(where, ones, _zeros_like(x)), axes)


# ----- rectifiers ---------------------------------------------------------------------------


def relu(x):
    """Rectified linear unit `max(x, 0)`; its derivative at 0 is 0, as in JAX.

    Example:
      >>> relu(np.array([-1.0, 0.0, 2.0], np.float32))
      array([0., 0., 2.], dtype=float32)
    """
    return _relu(_array("relu", x))


@custom_jvp
def _relu(x):
    return lax.max(x, _zeros_like(x))


_relu.defjvps(lambda g, ans, x: lax.select(lax.gt(x, _c(x, 0)), g, _zeros_like(g)))


def relu6(x):
    """`min(max(x, 0), 6)`, with zero derivative at both kinks.

    Example:
      >>> relu6(np.array([-1.0, 3.0, 7.0], np.float32))
      array([0., 3., 6.], dtype=float32)
    """
    return _relu6(_array("relu6", x))


@custom_jvp
def _relu6(x):
    return lax.min(lax.max(x, _zeros_like(x)), lax.add(_zeros_like(x), 6.0))


_relu6.defjvps(lambda g, ans, x: lax.select(
    lax.bitwise_and(lax.gt(x, _c(x, 0)), lax.lt(x, _c(x, 6))), g, _zeros_like(g)))


def leaky_relu(x, negative_slope=0.01):
    """`x` where `x >= 0`, else `negative_slope * x`.

    Example:
      >>> leaky_relu(np.array([-2.0, 2.0], np.float32))
      array([-0.02,  2.  ], dtype=float32)
    """
    x = _array("leaky_relu", x)
    return _where(lax.ge(x, _c(x, 0)), x, lax.mul(negative_slope, x))


def hard_tanh(x):
    """`x` clipped to [-1, 1].

    Example:
      >>> hard_tanh(np.array([-2.0, 0.5, 2.0], np.float32))
      array([-1. ,  0.5,  1. ], dtype=float32)
    """
    x = _array("hard_tanh", x)
    return _where(lax.gt(x, _c(x, 1)), 1, _where(lax.lt(x, _c(x, -1)), -1, x))


def elu(x, alpha=1.0):
    """Exponential linear unit: `x` for `x > 0`, else `alpha * (exp(x) - 1)`.

    Example:
      >>> elu(np.array([-1.0, 1.0], np.float32))
      array([-0.63212055,  1.        ], dtype=float32)
    """
    x = _inexact("elu", x)
    positive = lax.gt(x, _c(x, 0))
    return _where(positive, x, lax.mul(alpha, lax.expm1(_where(positive, 0.0, x))))


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: `max(x, 0) + alpha * expm1(min(x, 0) / alpha)`.

    Example:
      >>> celu(np.array([-1.0, 1.0], np.float32))
      array([-0.63212055,  1.        ], dtype=float32)
    """
    x = _inexact("celu", x)
    zero = _zeros_like(x)
    return lax.add(lax.max(x, zero), lax.mul(alpha, lax.expm1(lax.div(lax.min(x, zero), alpha))))


_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def selu(x):
    """Scaled ELU with the self-normalizing constants (alpha ~ 1.6733, scale ~ 1.0507).

    Example:
      >>> selu(np.array([1.0], np.float32))
      array([1.050701], dtype=float32)
    """
    return lax.mul(_SELU_SCALE, elu(_inexact("selu", x), _SELU_ALPHA))


# ----- smooth activations -------------------------------------------------------------------


def sigmoid(x):
    """Logistic sigmoid `1 / (1 + exp(-x))`.

    Example:
      >>> sigmoid(np.float32(0))
      array(0.5, dtype=float32)
    """
    return lax.logistic(_inexact("sigmoid", x))


def softplus(x):
    """`log(1 + exp(x))`, computed without overflow.

    Example:
      >>> softplus(np.float32(0))
      array(0.6931472, dtype=float32)
    """
    return logaddexp(_inexact("softplus", x), 0.0)


def log_sigmoid(x):
    """`log(sigmoid(x)) = -softplus(-x)`.

    Example:
      >>> log_sigmoid(np.float32(0))
      array(-0.6931472, dtype=float32)
    """
    return lax.neg(softplus(lax.neg(_inexact("log_sigmoid", x))))


def silu(x):
    """Sigmoid linear unit (swish) `x * sigmoid(x)`.

    Example:
      >>> silu(np.float32(1))
      array(0.7310586, dtype=float32)
    """
    x = _inexact("silu", x)
    return lax.mul(x, lax.logistic(x))


swish = silu


def mish(x):
    """`x * tanh(softplus(x))`.

    Example:
      >>> mish(np.float32(1))
      array(0.8650984, dtype=float32)
    """
    x = _inexact("mish", x)
    return lax.mul(x, lax.tanh(softplus(x)))


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: `x * Phi(x)`, or its tanh approximation (the default).

    Args:
      x: input array.
      approximate: use `0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` for `Phi`.

    Example:
      >>> gelu(np.float32(1)), gelu(np.float32(1), approximate=False)
      (array(0.841192, dtype=float32), array(0.8413447, dtype=float32))
    """
    x = _inexact("gelu", x)
    dtype = get_aval(x).dtype
    if approximate:
        sqrt_2_over_pi = np.asarray(np.sqrt(2 / np.pi), dtype)
        inner = lax.mul(sqrt_2_over_pi, lax.add(x, lax.mul(0.044715, lax.integer_pow(x, 3))))
        return lax.mul(x, lax.mul(0.5, lax.add(1.0, lax.tanh(inner))))
    sqrt_half = np.asarray(np.sqrt(0.5), dtype)
    return lax.mul(lax.mul(0.5, x), lax.erfc(lax.mul(lax.neg(x), sqrt_half)))


def tanh(x):
    """Hyperbolic tangent.

    Example:
      >>> tanh(np.float32(0))
      array(0., dtype=float32)
    """
    return lax.tanh(_inexact("tanh", x))


def _log1mexp_value(x):
    # log(1 - exp(-x)): expm1 for small x, log1p for large (the switch at log 2 is JAX's)
    small = lax.lt(x, _c(x, np.log(2.0)))
    near_zero = lax.log(lax.neg(lax.expm1(lax.neg(x))))
    far = lax.log1p(lax.neg(lax.exp(lax.neg(x))))
    return lax.select_n(small, far, near_zero)


def _log1mexp_jvp(primals, tangents):
    # d/dx log(1 - exp(-x)) = 1 / expm1(x)
    (x,), (x_dot,) = primals, tangents
    return _log1mexp_value(x), lax.div(x_dot, lax.expm1(x))


def log1mexp(x):
    """`log(1 - exp(-x))` for `x > 0`, accurate near 0 and for large `x`.

    Example:
      >>> log1mexp(np.float32(1))
      array(-0.4586751, dtype=float32)
    """
    fn = custom_jvp(_log1mexp_value)
    fn.defjvp(_log1mexp_jvp)
    return fn(_inexact("log1mexp", x))


def soft_sign(x):
    """`x / (|x| + 1)`.

    Example:
      >>> soft_sign(np.float32(1))
      array(0.5, dtype=float32)
    """
    x = _inexact("soft_sign", x)
    return lax.div(x, lax.add(lax.abs(x), 1.0))


def squareplus(x, b=4):
    """`(x + sqrt(x^2 + b)) / 2`.

    Example:
      >>> squareplus(np.float32(0))
      array(1., dtype=float32)
    """
    x = _inexact("squareplus", x)
    return lax.div(lax.add(x, lax.sqrt(lax.add(lax.mul(x, x), float(b)))), 2.0)


def sparse_plus(x):
    """0 for `x <= -1`, `x` for `x >= 1`, `(x + 1)^2 / 4` between.

    Example:
      >>> sparse_plus(np.float32(0))
      array(0.25, dtype=float32)
    """
    x = _inexact("sparse_plus", x)
    middle = lax.div(lax.integer_pow(lax.add(x, 1.0), 2), 4.0)
    return _where(lax.le(x, _c(x, -1)), 0.0, _where(lax.ge(x, _c(x, 1)), x, middle))


def sparse_sigmoid(x):
    """`clip(x + 1, 0, 2) / 2`.

    Example:
      >>> sparse_sigmoid(np.float32(0))
      array(0.5, dtype=float32)
    """
    x = _inexact("sparse_sigmoid", x)
    shifted = lax.add(x, 1.0)
    zero = _zeros_like(shifted)
    return lax.mul(0.5, lax.min(lax.add(zero, 2.0), lax.max(zero, shifted)))


def hard_sigmoid(x):
    """`relu6(x + 3) / 6`.

    Example:
      >>> hard_sigmoid(np.float32(0))
      array(0.5, dtype=float32)
    """
    return lax.div(relu6(lax.add(_inexact("hard_sigmoid", x), 3.0)), 6.0)


def hard_silu(x):
    """`x * hard_sigmoid(x)` (hard swish).

    Example:
      >>> hard_silu(np.float32(3))
      array(3., dtype=float32)
    """
    x = _inexact("hard_silu", x)
    return lax.mul(x, hard_sigmoid(x))


hard_swish = hard_silu


def identity(x):
    """The identity activation.

    Example:
      >>> identity(np.array([2.0], np.float32))
      array([2.], dtype=float32)
    """
    return _array("identity", x)


def glu(x, axis: int = -1):
    """Gated linear unit: the first half of `x` along `axis` times sigmoid of the second.

    Example:
      >>> glu(np.array([1.0, 0.0], np.float32))
      array([0.5], dtype=float32)
    """
    x = _inexact("glu", x)
    shape = get_aval(x).shape
    (axis,) = _axes(axis, len(shape), "glu")
    if shape[axis] % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even to split it in two "
                         f"halves, got shape {shape}.")
    half = shape[axis] // 2
    limits = list(shape)
    limits[axis] = half
    starts = [0] * len(shape)
    starts[axis] = half
    first = lax.slice(x, (0,) * len(shape), tuple(limits))
    second = lax.slice(x, tuple(starts), shape)
    return lax.mul(first, lax.logistic(second))


# ----- softmax family -----------------------------------------------------------------------


def log_softmax(x, axis=-1, where=None):
    """`x - logsumexp(x, axis)`: log of the softmax, computed stably.

    Args:
      x: input array.
      axis: the axis or axes to normalize over.
      where: elements to include; excluded ones give -inf.

    Example:
      >>> log_softmax(np.zeros(2, np.float32))
      array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = _inexact("log_softmax", x)
    axes = _axes(axis, get_aval(x).ndim, "log_softmax")
    x_max = _max_from_minus_inf(x, axes, where)
    shifted = lax.sub(_masked(x, where, -np.inf), lax.stop_gradient(x_max))
    result = lax.sub(shifted, lax.log(_sum(lax.exp(shifted), axes, where)))
    return result if where is None else _where(where, result, -np.inf)


def softmax(x, axis=-1, where=None):
    """`exp(x) / sum(exp(x), axis)`, computed stably.

    With `jax_softmax_custom_jvp` off (JAX 0.10.2's default) the maximum subtracted for
    stability is a `stop_gradient` and the derivative is that of the formula, as in JAX; with
    it on, softmax has JAX's custom jvp `y * (x_dot - sum(y * x_dot))`.

    Example:
      >>> softmax(np.array([0.0, np.log(3.0)], np.float32))
      array([0.25, 0.75], dtype=float32)
    """
    x = _inexact("softmax", x)
    axes = _axes(axis, get_aval(x).ndim, "softmax")
    if not config.softmax_custom_jvp.value:
        return _softmax_value(x, axes, where, lax.stop_gradient)
    return _softmax_with_custom_jvp(axes, where)(x)


def _softmax_value(x, axes, where, on_max=lambda m: m):
    x_max = on_max(_max_from_minus_inf(x, axes, where))
    unnormalized = lax.exp(lax.sub(_masked(x, where, -np.inf), x_max))
    result = lax.div(unnormalized, _sum(unnormalized, axes, where))
    return result if where is None else _where(where, result, 0)


def _softmax_with_custom_jvp(axes, where):
    @custom_jvp
    def softmax_(x):
        return _softmax_value(x, axes, where)

    @softmax_.defjvp
    def _softmax_jvp(primals, tangents):
        # d softmax = y * (x_dot - sum(y * x_dot)) over the normalized axes
        (x,), (x_dot,) = primals, tangents
        y = softmax_(x)
        return y, lax.mul(y, lax.sub(x_dot, _sum(lax.mul(y, x_dot), axes, where)))

    return softmax_


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """`log(sum(b * exp(a), axis))`, computed without overflow.

    Args:
      a: input array.
      axis: the axis or axes to reduce (default: all).
      b: optional weights broadcastable to `a`; a zero weight excludes its element.
      keepdims: keep the reduced dims with size 1.
      return_sign: return `(log|sum|, sign(sum))` instead of NaN for negative sums.
      where: elements to include.

    Example:
      >>> logsumexp(np.zeros(4, np.float32))
      array(1.3862944, dtype=float32)
    """
    a = _inexact("logsumexp", a)
    if where is not None:
        a = _where(where, a, 0)
    if b is not None:
        b = lax.convert_element_type(_array("logsumexp", b), get_aval(a).dtype)
        a, b = _broadcast_pair(a, b)
        a = _where(lax.ne(b, _c(b, 0)), a, -np.inf)
    ndim = get_aval(a).ndim
    axes = _axes(axis, ndim, "logsumexp")
    amax = _max(a, axes, where)
    amax = lax.stop_gradient(_where(lax.is_finite(amax), amax, 0))
    exp_a = lax.exp(lax.sub(a, amax))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = _sum(exp_a, axes, where)
    sign = lax.sign(sumexp)
    out = lax.add(lax.log(lax.abs(sumexp)), amax)
    if not keepdims:
        kept = tuple(d for i, d in enumerate(get_aval(out).shape) if i not in axes)
        out, sign = lax.reshape(out, kept), lax.reshape(sign, kept)
    if return_sign:
        return out, sign
    if b is not None:
        out = _where(lax.lt(sign, _c(sign, 0)), np.asarray(np.nan, get_aval(out).dtype), out)
    return out


def _broadcast_pair(a, b):
    shape = np.broadcast_shapes(get_aval(a).shape, get_aval(b).shape)
    return broadcast_to_shape(_rank(a, len(shape)), shape), broadcast_to_shape(
        _rank(b, len(shape)), shape)


def _rank(x, ndim):
    shape = get_aval(x).shape
    return x if len(shape) == ndim else lax.reshape(x, (1,) * (ndim - len(shape)) + shape)


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """`log(mean(exp(x), axis))`, computed without overflow.

    Example:
      >>> logmeanexp(np.zeros(4, np.float32))
      array(0., dtype=float32)
    """
    x = _inexact("logmeanexp", x)
    lse = logsumexp(x, axis=axis, keepdims=True, where=where)
    axes = _axes(axis, get_aval(x).ndim, "logmeanexp")
    out = lax.sub(lse, lax.log(_count(x, axes, where)))
    if not keepdims:
        out = lax.reshape(out, tuple(d for i, d in enumerate(get_aval(out).shape)
                                     if i not in axes))
    return out


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """`(x - mean) / sqrt(variance + epsilon)` along `axis`.

    Args:
      x: input array.
      axis: the axis or axes to normalize over.
      mean, variance: precomputed statistics (computed from `x` when None).
      epsilon: added to the variance.
      where: elements to include in the statistics.
      algorithm: "fast" (E[x^2] - E[x]^2, clipped at 0) or "stable" (E[(x - mean)^2]).

    Example:
      >>> standardize(np.array([1.0, 3.0], np.float32))
      array([-0.999995,  0.999995], dtype=float32)
    """
    x = _inexact("standardize", x)
    axes = _axes(axis, get_aval(x).ndim, "standardize")
    count = _count(x, axes, where)
    if mean is None:
        mean = lax.div(_sum(x, axes, where), count)
    if variance is None:
        if algorithm == "stable":
            centered = lax.sub(x, mean)
            variance = lax.div(_sum(lax.mul(centered, centered), axes, where), count)
        elif algorithm == "fast":
            variance = lax.sub(lax.div(_sum(lax.mul(x, x), axes, where), count),
                               lax.mul(mean, mean))
            variance = lax.max(_zeros_like(variance), variance)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return lax.mul(lax.sub(x, mean), lax.rsqrt(lax.add(variance, epsilon)))


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1):
    """One-hot encoding: a new axis of size `num_classes` with 1 at each index in `x`.

    Indices outside `[0, num_classes)` give an all-zero row.

    Args:
      x: integer indices.
      num_classes: the size of the new axis (static).
      dtype: the result dtype (default float32, float64 with x64).
      axis: where to put the new axis.

    Example:
      >>> one_hot(np.array([0, 2]), 3)
      array([[1., 0., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    try:
        num_classes = operator.index(num_classes)
    except TypeError as err:
        raise TypeError("one_hot: num_classes must be a static Python int, got "
                        f"{type(num_classes).__name__}.") from err
    x = _array("one_hot", x)
    dtype = dtypes.default_float_dtype() if dtype is None else (
        dtypes.check_and_canonicalize_user_dtype(dtype, "one_hot"))
    aval = get_aval(x)
    (out_axis,) = _axes(axis, aval.ndim + 1, "one_hot")
    out_shape = list(aval.shape)
    out_shape.insert(out_axis, num_classes)
    kept = tuple(d for d in range(aval.ndim + 1) if d != out_axis)
    indices = lax.broadcast_in_dim(x, tuple(out_shape), kept)
    classes = lax.convert_element_type(lax.iota(np.int32, num_classes), aval.dtype)
    classes = lax.broadcast_in_dim(classes, tuple(out_shape), (out_axis,))
    return lax.convert_element_type(lax.eq(indices, classes), dtype)
