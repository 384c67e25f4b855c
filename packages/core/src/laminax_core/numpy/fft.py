"""`jnp.fft`: NumPy's discrete Fourier transforms on top of `lax.fft`.

Every transform goes through `_fft_core`: it moves the requested axes to the end (XLA
transforms trailing dims), crops or zero-pads each to the requested length `s`, applies one
`fft_p` per group of at most three axes (XLA's limit), scales by `norm`, and moves the axes
back. `hfft`/`ihfft` are IRFFT/RFFT of the conjugate signal; `fftfreq`, `rfftfreq`,
`fftshift` and `ifftshift` are plain array programs.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core.lax._fft import FftType
from laminax_core.numpy import _creation, _shape, _ufuncs
from laminax_core.numpy._operands import as_array, check_arraylike

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift",
    "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]  # fmt: skip

_NORMS = (None, "backward", "ortho", "forward")


def _norm_scale(s, dtype, func_name: str, norm):
    """The factor `norm` applies to the transform's output (None for "backward")."""
    if norm not in _NORMS:
        raise ValueError(
            f'jnp.fft.{func_name}: invalid norm value {norm!r}; use "backward", "ortho" or '
            '"forward".'
        )
    if norm in (None, "backward"):
        return None
    size = np.prod(np.asarray(s, dtype))
    factor = np.sqrt(size) if norm == "ortho" else size
    inverse = func_name.startswith("i")
    return np.asarray(factor if inverse else np.asarray(1, dtype) / factor, dtype)


def _resize(arr, axes, s, fft_type: FftType):
    """`arr` cropped or zero-padded so each axis in `axes` has its length in `s` (for IRFFT
    the last one becomes the half-spectrum length `s[-1] // 2 + 1`)."""
    sizes = list(arr.shape)
    for axis, n in zip(axes, s, strict=True):
        sizes[axis] = n
    if fft_type == FftType.IRFFT:
        sizes[-1] = sizes[-1] // 2 + 1
    arr = arr[tuple(slice(n) for n in sizes)]
    widths = [(0, n - m) for n, m in zip(sizes, arr.shape, strict=True)]
    return _shape.pad(arr, widths) if any(w for _, w in widths) else arr


def _default_lengths(arr, axes, fft_type: FftType):
    s = [arr.shape[axis] for axis in axes]
    if fft_type == FftType.IRFFT and axes:
        s[-1] = max(0, 2 * (arr.shape[axes[-1]] - 1))
    return s


def _fft_trailing(arr, fft_type: FftType, s):
    """`lax.fft` over the last `len(s)` axes; XLA transforms at most 3 at once, so longer
    lists run the innermost 2 or 3 first (last for the inverse transforms) and recurse on the
    rest with a complex FFT/IFFT."""
    if len(s) <= 3:
        return lax.fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    outer = tuple(range(arr.ndim - len(s), arr.ndim - n))
    moved = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.FFT, FftType.RFFT):
        arr = lax.fft(arr, fft_type, tuple(s[-n:]))
        arr = _shape.moveaxis(arr, outer, moved)
        arr = _fft_trailing(arr, FftType.FFT, s[:-n])
        return _shape.moveaxis(arr, moved, outer)
    arr = _shape.moveaxis(arr, outer, moved)
    arr = _fft_trailing(arr, FftType.IFFT, s[:-n])
    arr = _shape.moveaxis(arr, moved, outer)
    return lax.fft(arr, fft_type, tuple(s[-n:]))


def _check_lengths(func_name: str, s, axes):
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError(f"jnp.fft.{func_name}: lengths must be positive, got s={s}.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(
            f"jnp.fft.{func_name}: s={s} and axes={tuple(axes)} have different lengths; give "
            "one length per transformed axis."
        )
    return s


def _fft_core(func_name: str, fft_type: FftType, a, s, axes, norm):
    check_arraylike(f"fft.{func_name}", a)
    arr = as_array(a)
    s = _check_lengths(func_name, s, axes)
    given_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(operator.index(axis) for axis in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(
            f"jnp.fft.{func_name} does not support repeated axes, got axes {axes}."
        )
    if given_axes is not None:
        trailing = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr, axes, given_axes = _shape.moveaxis(arr, axes, trailing), trailing, axes
    if s is None:
        s = _default_lengths(arr, axes, fft_type)
    else:
        arr = _resize(arr, axes, s, fft_type)
    out = _fft_trailing(arr, fft_type, list(s))
    scale = _norm_scale(s, out.dtype, func_name, norm)
    if scale is not None:
        out = lax.mul(out, scale)
    if given_axes is not None:
        out = _shape.moveaxis(out, axes, given_axes)
    return out


def _fft_1d(func_name: str, fft_type: FftType, a, n, axis, norm):
    if isinstance(axis, list | tuple):
        raise ValueError(
            f"jnp.fft.{func_name} transforms one axis, got axis={axis!r}; use "
            f"jnp.fft.{func_name}n for several."
        )
    return _fft_core(func_name, fft_type, a, None if n is None else [n], [axis], norm)


def _fft_2d(func_name: str, fft_type: FftType, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(
            f"jnp.fft.{func_name} transforms exactly 2 axes, got axes={axes!r}; use "
            f"jnp.fft.{func_name[:-1]}n for other counts."
        )
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis: int = -1, norm=None):
    """One-dimensional discrete Fourier transform (NumPy's `fft.fft`).

    Args:
      a: input array (real input is converted to complex).
      n: the transform length: the axis is cropped or zero-padded to it (default: its size).
      axis: the axis to transform.
      norm: "backward" (default, no scaling), "ortho" (1/sqrt(n)) or "forward" (1/n).

    Returns:
      The complex transform.

    Example:
      >>> fft(np.array([1.0, 0.0, 0.0, 0.0], np.float32))
      array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    """One-dimensional inverse discrete Fourier transform (NumPy's `fft.ifft`).

    Args and Returns as `fft`; "backward" scales by 1/n here.

    Example:
      >>> ifft(np.ones(4, np.complex64))
      array([1.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    """Discrete Fourier transform of real input: the `n // 2 + 1` non-negative frequencies.

    Args and Returns as `fft` (the input must be real).

    Example:
      >>> rfft(np.array([1.0, 1.0, 1.0, 1.0], np.float32))
      array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    """Inverse of `rfft`: a half spectrum back to a real signal of length `n` (default
    `2 * (m - 1)` for an axis of size `m`).

    Example:
      >>> irfft(np.array([4.0, 0.0, 0.0], np.complex64))
      array([1., 1., 1., 1.], dtype=float32)
    """
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis: int = -1, norm=None):
    """Transform of a Hermitian-symmetric signal given by its first half: real output of
    length `n` (default `2 * (m - 1)`).

    Example:
      >>> hfft(np.array([1.0, 0.0, 0.0], np.float32))
      array([1., 1., 1., 1.], dtype=float32)
    """
    conj_a = _ufuncs.conj(as_array(a))
    size = (conj_a.shape[axis] - 1) * 2 if n is None else n
    out = _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return lax.mul(out, np.asarray(size, out.dtype))


def ihfft(a, n=None, axis: int = -1, norm=None):
    """Inverse of `hfft`: the half spectrum (conjugated, scaled by 1/n) of a real signal.

    Example:
      >>> ihfft(np.array([1.0, 1.0, 1.0, 1.0], np.float32))
      array([1.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    arr = as_array(a)
    size = arr.shape[axis] if n is None else n
    out = _fft_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return lax.mul(_ufuncs.conj(out), np.asarray(1 / size, out.dtype))


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform over `axes` (default: all, or the last
    `len(s)`), each cropped or zero-padded to its length in `s`.

    Example:
      >>> fftn(np.ones((2, 2), np.float32))
      array([[4.+0.j, 0.+0.j],
             [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse discrete Fourier transform (see `fftn`).

    Example:
      >>> ifftn(np.full((2, 2), 4, np.complex64))[0, 0]
      np.complex64(4+0j)
    """
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional transform of real input; the last axis keeps `s[-1] // 2 + 1` bins.

    Example:
      >>> rfftn(np.ones((2, 4), np.float32)).shape
      (2, 3)
    """
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of `rfftn`: real output with lengths `s` (the last default `2 * (m - 1)`).

    Example:
      >>> irfftn(np.ones((2, 3), np.complex64)).shape
      (2, 4)
    """
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional `fftn` (over the last two axes by default).

    Example:
      >>> fft2(np.ones((2, 2), np.float32))[0, 0]
      np.complex64(4+0j)
    """
    return _fft_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional `ifftn`.

    Example:
      >>> ifft2(np.full((2, 2), 4, np.complex64))[0, 0]
      np.complex64(4+0j)
    """
    return _fft_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional `rfftn`.

    Example:
      >>> rfft2(np.ones((2, 4), np.float32)).shape
      (2, 3)
    """
    return _fft_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional `irfftn`.

    Example:
      >>> irfft2(np.ones((2, 3), np.complex64)).shape
      (2, 4)
    """
    return _fft_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name: str, n, d):
    if isinstance(n, list | tuple):
        raise ValueError(f"jnp.fft.{func_name}: n must be an int, got {list(n)}.")
    if isinstance(d, list | tuple):
        raise ValueError(f"jnp.fft.{func_name}: d must be a single value, got {list(d)}.")


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point FFT with sample spacing `d`: `[0, 1, ...,
    -(n // 2), ..., -1] / (d * n)`.

    Args:
      n: the transform length.
      d: the sample spacing.
      dtype: the result dtype (default: the default float dtype).
      device: accepted for JAX compatibility; placement is left to the array's layer.

    Example:
      >>> fftfreq(4)
      array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
    work = dtypes.to_inexact_dtype(out_dtype)
    if dtypes.issubdtype(work, np.complexfloating):
        work = np.dtype(np.finfo(work).dtype)
    i = _creation.arange(n, dtype=work)
    k = _ufuncs.subtract(_ufuncs.remainder(_ufuncs.add(i, n // 2), n), n // 2)
    scale = _creation.array(_ufuncs.multiply(d, n), dtype=work)
    return _ufuncs.divide(k, scale).astype(out_dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point `rfft`: `[0, 1, ..., n // 2] / (d * n)`.

    Example:
      >>> rfftfreq(4)
      array([0.  , 0.25, 0.5 ], dtype=float32)
    """
    _check_freq_args("rfftfreq", n, d)
    dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
    k = _creation.arange(0, n // 2 + 1, dtype=dtype)
    return _ufuncs.divide(k, _creation.array(_ufuncs.multiply(d, n), dtype=dtype))


def _shifts(x, axes, sign: int):
    if axes is None:
        axes = tuple(range(x.ndim))
    if isinstance(axes, int):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[axis] // 2) for axis in axes], axes


def fftshift(x, axes=None):
    """Rolls the zero frequency to the centre of each axis in `axes` (default: all).

    Example:
      >>> fftshift(np.array([0, 1, 2, -2, -1], np.int32))
      array([-2, -1,  0,  1,  2], dtype=int32)
    """
    check_arraylike("fft.fftshift", x)
    x = as_array(x)
    shift, axes = _shifts(x, axes, 1)
    return _shape.roll(x, shift, axes)


def ifftshift(x, axes=None):
    """Inverse of `fftshift` (they differ for odd lengths).

    Example:
      >>> ifftshift(np.array([-2, -1, 0, 1, 2], np.int32))
      array([ 0,  1,  2, -2, -1], dtype=int32)
    """
    check_arraylike("fft.ifftshift", x)
    x = as_array(x)
    shift, axes = _shifts(x, axes, -1)
    return _shape.roll(x, shift, axes)
