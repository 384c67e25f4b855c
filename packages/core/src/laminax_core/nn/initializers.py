"""Parameter initializers (`laminax_core.nn.initializers`), with JAX's names and numerics.

An initializer is a function `init(key, shape, dtype=None) -> array`; the factories here
(`normal(stddev)`, `variance_scaling(...)`, `glorot_uniform()` ...) build them. For the same key,
shape and dtype, the values equal JAX's: each draws from `laminax_core.random` with the same
calls and scales the sample with the same float operations.

Differs from JAX: real floating dtypes only (JAX also samples complex weights), and no
`out_sharding` argument (sharding belongs to the layers above core).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import random as _random

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]  # fmt: skip


@runtime_checkable
class Initializer(Protocol):
    """The type of initializers: `init(key, shape, dtype=None) -> array`.

    Example:
      >>> isinstance(normal(), Initializer)
      True
    """

    def __call__(self, key, shape, dtype=None): ...


_TRUNCATED_STDDEV = 0.8796256610342398  # stddev of a standard normal truncated to (-2, 2)


def _dtype(dtype, name: str) -> np.dtype:
    if dtype is None:
        return dtypes.default_float_dtype()
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, name)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"nn.initializers.{name}: laminax initializers support real floating "
                         f"dtypes, got {dtype}.")
    return dtype


def _full(shape, value, dtype):
    shape = tuple(shape)
    return lax.broadcast_in_dim(np.asarray(value, dtype), shape, ())


def zeros(key, shape, dtype=None):
    """An array of zeros (`key` is ignored).

    Example:
      >>> zeros(None, (2,))
      array([0., 0.], dtype=float32)
    """
    return _full(shape, 0, _dtype(dtype, "zeros"))


def ones(key, shape, dtype=None):
    """An array of ones (`key` is ignored).

    Example:
      >>> ones(None, (2,))
      array([1., 1.], dtype=float32)
    """
    return _full(shape, 1, _dtype(dtype, "ones"))


def constant(value, dtype=None):
    """An initializer filling every element with `value`.

    Example:
      >>> constant(-7.0)(None, (2,))
      array([-7., -7.], dtype=float32)
    """

    def init(key, shape, dtype=dtype):
        return _full(shape, value, _dtype(dtype, "constant"))

    return init


def uniform(scale=0.01, dtype=None):
    """An initializer drawing uniformly from `[0, scale)`.

    Example:
      >>> uniform(1.0)(_random.PRNGKey(0), (2,))
      array([0.947667 , 0.9785799], dtype=float32)
    """

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype, "uniform")
        return lax.mul(_random.uniform(key, shape, dtype), np.asarray(scale, dtype))

    return init


def normal(stddev=0.01, dtype=None):
    """An initializer drawing from a normal distribution with mean 0 and `stddev`.

    Example:
      >>> normal(1.0)(_random.PRNGKey(0), (2,))
      array([1.622642 , 2.0252647], dtype=float32)
    """

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype, "normal")
        return lax.mul(_random.normal(key, shape, dtype), np.asarray(stddev, dtype))

    return init


def truncated_normal(stddev=0.01, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing a standard normal truncated to `(lower, upper)`, times `stddev`.

    Example:
      >>> truncated_normal(1.0)(_random.PRNGKey(0), (2,)).shape
      (2,)
    """

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype, "truncated_normal")
        sample = _random.truncated_normal(key, lower, upper, shape, dtype)
        return lax.mul(sample, np.asarray(stddev, dtype))

    return init


def _axis_size(shape, axis) -> int:
    if isinstance(axis, int):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def _compute_fans(shape: Sequence[int], in_axis=-2, out_axis=-1, batch_axis=()):
    """`(fan_in, fan_out)` of a weight shape: the in/out sizes times the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _axis_size(shape, in_axis)
    out_size = _axis_size(shape, out_axis)
    batch_size = _axis_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _denominator(mode: str, fan_in: float, fan_out: float) -> float:
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    if mode == "fan_avg":
        return (fan_in + fan_out) / 2
    if mode == "fan_geo_avg":
        return (fan_in * fan_out) ** 0.5
    raise ValueError(f"invalid mode for variance scaling initializer: {mode}; use 'fan_in', "
                     "'fan_out', 'fan_avg' or 'fan_geo_avg'.")


def variance_scaling(scale, mode: str, distribution: str, in_axis=-2, out_axis=-1,
                     batch_axis=(), dtype=None):
    """An initializer whose samples have variance `scale / n`, `n` chosen by `mode` from the
    weight shape's fans.

    Args:
      scale: the variance numerator.
      mode: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg".
      distribution: "truncated_normal" (within two standard deviations), "normal" or
        "uniform".
      in_axis, out_axis, batch_axis: which dims of the shape are inputs, outputs and batch.
      dtype: the default dtype.

    Example:
      >>> init = variance_scaling(1.0, "fan_in", "normal")
      >>> init(_random.PRNGKey(0), (4, 3)).shape
      (4, 3)
    """
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}; use 'truncated_normal', 'normal' or 'uniform'.")
    _denominator(mode, 1.0, 1.0)

    def init(key, shape, dtype=dtype):
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype, "variance_scaling")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        variance = np.asarray(scale / _denominator(mode, fan_in, fan_out), dtype)
        if distribution == "truncated_normal":
            stddev = lax.div(lax.sqrt(variance), np.asarray(_TRUNCATED_STDDEV, dtype))
            return lax.mul(_random.truncated_normal(key, -2, 2, shape, dtype), stddev)
        if distribution == "normal":
            return lax.mul(_random.normal(key, shape, dtype), lax.sqrt(variance))
        sample = _random.uniform(key, shape, dtype, -1)
        return lax.mul(sample, lax.sqrt(lax.mul(3.0, variance)))

    return init


def _named(scale, mode, distribution, name, summary):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"{summary}: `variance_scaling({scale}, {mode!r}, {distribution!r})`.\n\n"
        "Example:\n"
        f"  >>> {name}()(_random.PRNGKey(0), (3, 2)).shape\n"
        "  (3, 2)\n"
    )
    return factory


glorot_uniform = _named(1.0, "fan_avg", "uniform", "glorot_uniform",
                        "Glorot (Xavier) uniform initializer")
glorot_normal = _named(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                       "Glorot (Xavier) normal initializer")
lecun_uniform = _named(1.0, "fan_in", "uniform", "lecun_uniform", "LeCun uniform initializer")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "lecun_normal",
                      "LeCun normal initializer")
he_uniform = _named(2.0, "fan_in", "uniform", "he_uniform", "He (Kaiming) uniform initializer")
he_normal = _named(2.0, "fan_in", "truncated_normal", "he_normal",
                   "He (Kaiming) normal initializer")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """An initializer drawing (semi-)orthogonal matrices: the rows or columns of the matrix
    formed by folding all other dims into one are orthonormal, times `scale`.

    Example:
      >>> w = orthogonal()(_random.PRNGKey(0), (3, 3))
      >>> bool(np.allclose(np.asarray(w) @ np.asarray(w).T, np.eye(3), atol=1e-5))
      True
    """

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype, "orthogonal")
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return _full(shape, 0, dtype)
        axis = column_axis % len(shape)
        n_cols = shape[axis]
        n_rows = math.prod(shape) // n_cols
        q = _random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = shape[:axis] + shape[axis + 1:]
        q = lax.reshape(q, (*rest, n_cols))
        perm = list(range(len(rest)))
        perm.insert(axis, len(rest))
        return lax.mul(np.asarray(scale, dtype), lax.transpose(q, tuple(perm)))

    return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """An initializer for 1-3D convolution kernels `(k..., in, out)`: an orthogonal
    `(in, out)` matrix at the kernel's center, zeros elsewhere (requires `in <= out`).

    Example:
      >>> w = delta_orthogonal()(_random.PRNGKey(0), (3, 2, 2))
      >>> bool((np.asarray(w)[0] == 0).all())
      True
    """

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype, "delta_orthogonal")
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        center = tuple((k - 1) // 2 for k in shape[:-2])
        padding = [(c, k - c - 1, 0) for c, k in zip(center, shape[:-2], strict=True)]
        expanded = lax.reshape(matrix, (1,) * len(center) + shape[-2:])
        return lax.pad(expanded, np.asarray(0, dtype), [*padding, (0, 0, 0), (0, 0, 0)])

    return init
