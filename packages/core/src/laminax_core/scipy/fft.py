"""`scipy.fft`'s discrete cosine transforms (type 2, as JAX provides): `dct`/`idct` along one
axis and `dctn`/`idctn` over several, through an FFT of the even/odd interleaved input."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core.numpy._operands import canonicalize_axis

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, type_: int, norm):
    if type_ != 2:
        raise NotImplementedError(f"{name}: only DCT type 2 is implemented (as in JAX).")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x, n, axis):
    """`x` zero-padded or truncated to length `n` along `axis`."""
    if n is None:
        return x
    pads = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, np.zeros((), x.dtype), pads)


def _along(values, axis, ndim):
    return jnp.reshape(values, [-1 if a == axis else 1 for a in range(ndim)])


def _ortho_scale(n, axis, ndim, dtype):
    """The per-frequency factors that make the transform orthonormal."""
    scale = np.full(n, np.sqrt(1 / (2 * n)))
    scale[0] = np.sqrt(1 / (4 * n))
    return _along(jnp.asarray(scale, dtype), axis, ndim)


def _twiddle(n, axis, ndim, real_dtype):
    k = np.arange(n)
    complex_dtype = dtypes.to_complex_dtype(real_dtype)
    return _along(jnp.asarray(np.exp(-0.5j * np.pi * k / n), complex_dtype), axis, ndim)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
    """The type-2 DCT `y_k = 2 sum_j x_j cos(pi k (2j + 1) / 2N)` along `axis`.

    Args:
      x: the input (complex inputs transform their real and imaginary parts).
      type: must be 2.
      n: pad with zeros or truncate to this length first.
      axis: the axis.
      norm: None/"backward" (unscaled) or "ortho" (orthonormal).
    """
    _check("dct", type, norm)
    x = jnp.asarray(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(dct(x.real, type, n, axis, norm), dct(x.imag, type, n, axis, norm))
    if not dtypes.issubdtype(x.dtype, np.inexact):
        x = x.astype(dtypes.default_float_dtype())
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, n, axis)
    size = x.shape[axis]
    # evens in order, then odds reversed: the DCT becomes a twiddled FFT of this sequence
    evens = lax.slice_in_dim(x, 0, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    spectrum = jnp.fft.fft(lax.concatenate([evens, odds], axis), axis=axis)
    out = 2 * (spectrum * _twiddle(size, axis, x.ndim, x.dtype)).real
    if norm == "ortho":
        out = out * _ortho_scale(size, axis, x.ndim, out.dtype)
    return out


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
    """The inverse of `dct` (a scaled type-3 DCT) along `axis`."""
    _check("idct", type, norm)
    x = jnp.asarray(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(idct(x.real, type, n, axis, norm), idct(x.imag, type, n, axis, norm))
    if not dtypes.issubdtype(x.dtype, np.inexact):
        x = x.astype(dtypes.default_float_dtype())
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, n, axis)
    size = x.shape[axis]
    if norm == "ortho":
        x = x / _ortho_scale(size, axis, x.ndim, x.dtype)
    # undo the twiddle: V_k = (y_k - i y_{N-k}) / (2 W_k), y_N = 0
    shifted = jnp.concatenate([jnp.zeros_like(lax.slice_in_dim(x, 0, 1, 1, axis)),
                               lax.rev(lax.slice_in_dim(x, 1, None, 1, axis), (axis,))], axis)
    spectrum = lax.complex(x, -shifted) / (2 * _twiddle(size, axis, x.ndim, x.dtype))
    v = jnp.fft.ifft(spectrum, axis=axis).real
    half = (size + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(v, half, None, 1, axis), (axis,))
    # interleave back: even positions from the first half, odd ones from the reversed rest
    moved_e, moved_o = jnp.moveaxis(evens, axis, -1), jnp.moveaxis(odds, axis, -1)
    if moved_o.shape[-1] < moved_e.shape[-1]:
        moved_o = jnp.concatenate([moved_o, jnp.zeros_like(moved_e[..., :1])], axis=-1)
    woven = jnp.reshape(jnp.stack([moved_e, moved_o], axis=-1), (*moved_e.shape[:-1], -1))
    return jnp.moveaxis(woven[..., :size], -1, axis)


def _axes_and_sizes(x, s, axes):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
    sizes = list(s) if s is not None else [None] * len(axes)
    return axes, sizes


def dctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
    """The type-2 DCT over several axes (all by default), one axis after another.

    Args:
      s: lengths to pad/truncate the transformed axes to (the last `len(s)` axes when `axes`
        is None).
    """
    _check("dctn", type, norm)
    x = jnp.asarray(x)
    axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, size in zip(axes, sizes, strict=True):
        x = dct(x, 2, size, axis, norm)
    return x


def idctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
    """The inverse of `dctn`."""
    _check("idctn", type, norm)
    x = jnp.asarray(x)
    axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, size in zip(axes, sizes, strict=True):
        x = idct(x, 2, size, axis, norm)
    return x
