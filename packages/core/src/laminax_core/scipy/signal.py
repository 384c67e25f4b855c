"""`scipy.signal`'s direct and FFT convolutions and `detrend`, composed from lax: the direct
convolutions are one `conv_general_dilated` (the XLA op JAX emits), so values match JAX's."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.numpy._operands import canonicalize_axis, promote_dtypes_inexact
from laminax_core.scipy._signal_spectral import detrend, spectral, window_and_nperseg

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve",
           "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def _check_mode(name, mode):
    if mode not in _MODES:
        raise ValueError(f"jax.scipy.signal.{name}: mode must be one of {_MODES}, got {mode!r}.")


def _valid_swap(name, s1, s2):
    """'valid' needs one operand at least as large as the other along every axis; the larger
    one becomes the signal (convolution commutes)."""
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(a <= b for a, b in zip(s1, s2)):
        return True
    raise ValueError(f"jax.scipy.signal.{name}: for mode='valid', one input must be at least as "
                     f"large as the other in every dimension; got shapes {s1} and {s2}.")


def _convolve_nd(name, in1, in2, mode, precision, same_from_end=False):
    _check_mode(name, mode)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"jax.scipy.signal.{name}: in1 and in2 must have the same number of "
                         f"dimensions, got {in1.ndim} and {in2.ndim}.")
    if 0 in in1.shape or 0 in in2.shape:
        raise ValueError(f"jax.scipy.signal.{name}: inputs cannot be empty.")
    if mode == "valid" and _valid_swap(name, in1.shape, in2.shape):
        in1, in2 = in2, in1
    # conv_general_dilated correlates; flipping the kernel makes it a convolution, and the
    # padding picks where in the full result the window starts (full: k-1, same: (k-1)//2).
    kernel = lax.rev(in2, tuple(range(in2.ndim)))
    padding = []
    for k in in2.shape:
        if mode == "full":
            padding.append((k - 1, k - 1))
        elif mode == "same":
            # SciPy's correlate2d centres 'same' on the unflipped kernel (k//2 for even k).
            start = k // 2 if same_from_end else (k - 1) // 2
            padding.append((k - 1 - start, start))
        else:
            padding.append((0, 0))
    spatial = "".join(chr(ord("a") + i) for i in range(in1.ndim))
    spec = ("NC" + spatial, "OI" + spatial, "NC" + spatial)
    out = lax.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * in1.ndim, padding,
                                   dimension_numbers=spec, precision=precision)
    return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The n-d convolution of `in1` and `in2` (SciPy's `full`/`same`/`valid` modes); `method`
    'fft' computes it through FFTs."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"jax.scipy.signal.convolve: method must be 'auto', 'direct' or 'fft', "
                         f"got {method!r}.")
    return _convolve_nd("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The n-d cross-correlation of `in1` and `in2`: the convolution with `in2` reversed and
    conjugated."""
    in2 = jnp.asarray(in2)
    flipped = jnp.conj(lax.rev(in2, tuple(range(in2.ndim))))
    if method == "fft":
        return fftconvolve(in1, flipped, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"jax.scipy.signal.correlate: method must be 'auto', 'direct' or "
                         f"'fft', got {method!r}.")
    return _convolve_nd("correlate", in1, flipped, mode, precision)


def _check_2d(name, boundary, fillvalue, in1, in2):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"jax.scipy.signal.{name}: only boundary='fill' with "
                                  "fillvalue=0 is implemented (as in JAX).")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"jax.scipy.signal.{name} only supports 2-d inputs, got "
                         f"{jnp.ndim(in1)}-d and {jnp.ndim(in2)}-d.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """The 2-d convolution of two 2-d arrays (zero fill at the boundary)."""
    _check_2d("convolve2d", boundary, fillvalue, in1, in2)
    return _convolve_nd("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """The 2-d cross-correlation of two 2-d arrays (zero fill at the boundary)."""
    _check_2d("correlate2d", boundary, fillvalue, in1, in2)
    in2 = jnp.asarray(in2)
    return _convolve_nd("correlate2d", in1, jnp.conj(lax.rev(in2, (0, 1))), mode, precision,
                        same_from_end=True)


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """The n-d convolution through FFTs along `axes` (all axes by default); along the other axes
    the inputs must agree and are paired elementwise."""
    _check_mode("fftconvolve", mode)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"jax.scipy.signal.fftconvolve: in1 and in2 must have the same number "
                         f"of dimensions, got {in1.ndim} and {in2.ndim}.")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("jax.scipy.signal.fftconvolve: inputs cannot be empty.")
    if axes is None:
        axes = tuple(range(in1.ndim))
    else:
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        axes = tuple(sorted({canonicalize_axis(operator.index(a), in1.ndim,
                                               "jax.scipy.signal.fftconvolve") for a in axes}))
    mapped = [a for a in range(in1.ndim) if a not in axes]
    if any(in1.shape[a] != in2.shape[a] for a in mapped):
        raise ValueError(f"jax.scipy.signal.fftconvolve: mapped axes must have same shape; got "
                         f"in1.shape={in1.shape} in2.shape={in2.shape} axes={axes}.")
    s1 = tuple(in1.shape[a] for a in axes)
    s2 = tuple(in2.shape[a] for a in axes)
    if mode == "valid" and _valid_swap("fftconvolve", s1, s2):
        in1, in2, s1, s2 = in2, in1, s2, s1
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if jnp.iscomplexobj(in1):
        out = jnp.fft.ifftn(jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes),
                            full, axes)
    else:
        out = jnp.fft.irfftn(jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes),
                             full, axes)
    if mode == "full":
        return out
    target = s1 if mode == "same" else tuple(a - b + 1 for a, b in zip(s1, s2))
    for axis, f, t in zip(axes, full, target):
        start = (f - t) // 2 if mode == "same" else min(s1[axes.index(axis)],
                                                         s2[axes.index(axis)]) - 1
        out = lax.slice_in_dim(out, start, start + t, axis=axis)
    return out


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap=None, nfft=None,
         detrend=False, return_onesided: bool = True, boundary="zeros", padded: bool = True,
         axis: int = -1):
    """The short-time Fourier transform of `x`: `(freqs, times, Zxx)`, SciPy's scaling."""
    return spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                    return_onesided, "spectrum", axis, "stft", boundary, padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean"):
    """The cross power spectral density of `x` and `y` by Welch's method: `(freqs, Pxy)`;
    `y=None` gives `x`'s own spectrum."""
    freqs, _, pxy = spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                             return_onesided, scaling, axis, "psd")
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                count = pxy.shape[-1]
                even = 2 * np.arange(1, (count - 1) // 2 + 1)
                bias = 1 + np.sum(1.0 / (even + 1) - 1.0 / even)
                if jnp.iscomplexobj(pxy):
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f"jax.scipy.signal.csd: average must be 'median' or 'mean', "
                                 f"got {average!r}.")
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean"):
    """The power spectral density of `x` by Welch's method (averaged periodograms of
    overlapping windowed segments): `(freqs, Pxx)`."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling, axis, average)
    return freqs, jnp.real(pxx)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,  # noqa: N803
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2):
    """The inverse of `stft` by weighted overlap-add: `(times, x)`."""
    zxx = jnp.asarray(Zxx)
    if zxx.ndim < 2:
        raise ValueError("jax.scipy.signal.istft: input stft must be at least 2d.")
    time_axis = canonicalize_axis(time_axis, zxx.ndim, "jax.scipy.signal.istft")
    freq_axis = canonicalize_axis(freq_axis, zxx.ndim, "jax.scipy.signal.istft")
    if time_axis == freq_axis:
        raise ValueError("jax.scipy.signal.istft: must specify differing time and frequency "
                         "axes.")
    count = zxx.shape[time_axis]
    default = 2 * (zxx.shape[freq_axis] - 1) if input_onesided else zxx.shape[freq_axis]
    if nperseg is None:
        nperseg = default
    win, nperseg = window_and_nperseg("istft", window, nperseg, 1 << 62, default)
    if nperseg < 1:
        raise ValueError("jax.scipy.signal.istft: nperseg must be a positive integer.")
    if nfft is None:
        # An odd segment's one-sided spectrum has (nperseg + 1) / 2 bins: its own length.
        nfft = nperseg if input_onesided and nperseg == default + 1 else default
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError("jax.scipy.signal.istft: nfft must be greater than or equal to nperseg.")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("jax.scipy.signal.istft: noverlap must be less than nperseg.")
    step = nperseg - noverlap
    rest = [a for a in range(zxx.ndim) if a not in (time_axis, freq_axis)]
    zxx = jnp.transpose(zxx, (*rest, time_axis, freq_axis))
    frames = (jnp.fft.irfft(zxx, n=nfft) if input_onesided else jnp.fft.ifft(zxx, n=nfft))
    frames = frames[..., :nperseg]
    win = jnp.asarray(win, dtype=jnp.real(frames).dtype)
    frames = frames * (jnp.sum(win) * win)
    length = nperseg + (count - 1) * step
    index = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    out = jnp.zeros((*frames.shape[:-2], length), frames.dtype).at[..., index].add(frames)
    norm = jnp.zeros((length,), win.dtype).at[index].add(jnp.broadcast_to(win * win,
                                                                          index.shape))
    if boundary:
        half = nperseg // 2
        out, norm = out[..., half:length - half], norm[half:length - half]
    out = out / jnp.where(norm > 1e-10, norm, 1.0)
    if input_onesided:
        out = jnp.real(out)
    if out.ndim > 1 and time_axis != zxx.ndim - 1:
        out = jnp.moveaxis(out, -1, time_axis - (1 if freq_axis < time_axis else 0))
    times = jnp.arange(out.shape[0], dtype=jnp.real(out).dtype) / fs
    return times, out
