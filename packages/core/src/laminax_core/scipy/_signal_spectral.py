"""The short-time Fourier machinery behind `scipy.signal.stft`, `istft`, `csd` and `welch`:
segments gathered by a static index matrix, windowed, transformed, scaled as SciPy scales them."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.numpy._operands import canonicalize_axis, promote_dtypes_inexact

__all__ = ["detrend", "spectral", "window_and_nperseg"]

_WINDOWS = {
    "hann": lambda n: 0.5 - 0.5 * np.cos(2 * np.pi * n),
    "hamming": lambda n: 0.54 - 0.46 * np.cos(2 * np.pi * n),
    "blackman": lambda n: 0.42 - 0.5 * np.cos(2 * np.pi * n) + 0.08 * np.cos(4 * np.pi * n),
    "boxcar": lambda n: np.ones_like(n),
    "bartlett": lambda n: 1 - np.abs(2 * n - 1),
}
_ALIASES = {"hanning": "hann", "han": "hann", "hamm": "hamming", "ham": "hamming",
            "black": "blackman", "blk": "blackman", "ones": "boxcar", "rect": "boxcar",
            "rectangular": "boxcar", "box": "boxcar", "bart": "bartlett", "brt": "bartlett",
            "triangle": "bartlett"}


def window_and_nperseg(name, window, nperseg, n, default=256):
    """The window as an array of `nperseg` values (SciPy's periodic windows for names) and the
    segment length: `nperseg`, else the window's length, else `default`, at most `n`."""
    if isinstance(window, str):
        key = _ALIASES.get(window, window)
        if key not in _WINDOWS:
            raise ValueError(f"jax.scipy.signal.{name}: unknown window {window!r}; laminax "
                             f"knows {sorted(_WINDOWS)} or an array.")
        nperseg = min(default if nperseg is None else int(nperseg), n)
        if nperseg < 1:
            raise ValueError(f"jax.scipy.signal.{name}: nperseg must be a positive integer.")
        return np.asarray(_WINDOWS[key](np.arange(nperseg) / nperseg)), nperseg
    if isinstance(window, tuple):
        raise ValueError(f"jax.scipy.signal.{name}: parametrized windows {window!r} are not "
                         "supported; pass the window as an array.")
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError(f"jax.scipy.signal.{name}: window must be 1-D.")
    if nperseg is not None and int(nperseg) != win.shape[0]:
        raise ValueError(f"jax.scipy.signal.{name}: value specified for nperseg is different "
                         "from length of window.")
    if n < win.shape[0]:
        raise ValueError(f"jax.scipy.signal.{name}: window is longer than input signal.")
    return win, win.shape[0]


def _extend(x, pad, boundary, name):
    if boundary == "zeros":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)])
    if boundary == "constant":
        return jnp.concatenate([jnp.repeat(x[..., :1], pad, -1), x,
                                jnp.repeat(x[..., -1:], pad, -1)], -1)
    left, right = x[..., 1:pad + 1][..., ::-1], x[..., -pad - 1:-1][..., ::-1]
    if boundary == "even":
        return jnp.concatenate([left, x, right], -1)
    if boundary == "odd":
        return jnp.concatenate([2 * x[..., :1] - left, x, 2 * x[..., -1:] - right], -1)
    raise ValueError(f"jax.scipy.signal.{name}: unknown boundary option {boundary!r}, must be "
                     "one of ['even', 'odd', 'constant', 'zeros', None].")


def _detrend_segments(seg, how):
    if how is False or how is None:
        return seg
    if callable(how):
        return how(seg)
    return detrend(seg, axis=-1, type=how)


def spectral(name, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
             scaling, axis, mode, boundary=None, padded=False):
    """Windowed FFTs of `x`'s segments (times conj of `x`'s, or of `y`'s, for mode 'psd'), as
    `(freqs, times, result)` with the frequency axis at `axis` and segments last."""
    if mode == "psd":
        if y is not None and jnp.ndim(x) != jnp.ndim(y):
            raise ValueError(f"jax.scipy.signal.{name}: x and y must have the same rank, got "
                             f"{jnp.ndim(x)} and {jnp.ndim(y)}.")
        x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(x if y is None else y))
    else:
        (x,) = promote_dtypes_inexact(jnp.asarray(x))
    axis = canonicalize_axis(axis, x.ndim, f"jax.scipy.signal.{name}")
    x = jnp.moveaxis(x, axis, -1)
    if mode == "psd" and y is not None:
        y = jnp.moveaxis(y, axis, -1)
        nx, ny = x.shape[-1], y.shape[-1]
        # SciPy pads the shorter signal with zeros to the longer's length.
        if nx < ny:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, ny - nx)])
        elif ny < nx:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nx - ny)])
        shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        x = jnp.broadcast_to(x, (*shape, x.shape[-1]))
        y = jnp.broadcast_to(y, (*shape, y.shape[-1]))
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"jax.scipy.signal.{name}: the signal is empty.")
    win, nperseg = window_and_nperseg(name, window, nperseg, n)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"jax.scipy.signal.{name}: nfft must be greater than or equal to "
                         "nperseg.")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"jax.scipy.signal.{name}: noverlap must be less than nperseg.")
    step = nperseg - noverlap
    sides = "onesided" if return_onesided and not jnp.iscomplexobj(x) else "twosided"
    if mode == "psd" and y is not None and jnp.iscomplexobj(y):
        sides = "twosided"

    def frames(s):
        if boundary is not None:
            s = _extend(s, nperseg // 2, boundary, name)
        if padded:
            extra = (-(s.shape[-1] - nperseg) % step) % nperseg
            s = jnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, extra)])
        count = (s.shape[-1] - nperseg) // step + 1
        index = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
        seg = _detrend_segments(s[..., index], detrend)
        seg = seg * jnp.asarray(win, dtype=jnp.real(seg).dtype)
        if sides == "onesided":
            return jnp.fft.rfft(seg, n=nfft), s.shape[-1]
        return jnp.fft.fft(seg, n=nfft), s.shape[-1]

    result, length = frames(x)
    win_np = jnp.asarray(win, dtype=jnp.real(result).dtype)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win_np * win_np))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win_np) ** 2
    else:
        raise ValueError(f"jax.scipy.signal.{name}: unknown scaling {scaling!r}.")
    if mode == "stft":
        result = result * jnp.sqrt(scale)
    else:
        other = result if y is None else frames(y)[0]
        result = jnp.conj(result) * other * scale
        if sides == "onesided":
            stop = -1 if nfft % 2 == 0 else None
            result = result.at[..., 1:stop].multiply(2)
    freqs = (jnp.fft.rfftfreq(nfft, 1 / fs) if sides == "onesided"
             else jnp.fft.fftfreq(nfft, 1 / fs))
    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step)[:result.shape[-2]]
    if boundary is not None:
        times = times - nperseg / 2
    times = jnp.asarray(times / fs, dtype=jnp.real(result).dtype)
    result = jnp.moveaxis(result, -1, axis)
    return freqs, times, result


def detrend(data, axis: int = -1, type: str = "linear", bp=0,  # noqa: A002 (SciPy's name)
            overwrite_data=None):
    """`data` less its mean ('constant') or less its least-squares line ('linear') along
    `axis`, fitted piecewise between the breakpoints `bp` for 'linear'."""
    if type not in ("constant", "linear", "c", "l"):
        raise ValueError(f"jax.scipy.signal.detrend: type must be 'linear' or 'constant', "
                         f"got {type!r}.")
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    if type in ("constant", "c"):
        return data - jnp.mean(data, axis, keepdims=True)
    axis = canonicalize_axis(axis, data.ndim, "jax.scipy.signal.detrend")
    n = data.shape[axis]
    bps = sorted({0, n} | {int(b) for b in np.atleast_1d(np.asarray(bp))})
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("jax.scipy.signal.detrend: breakpoints must lie in [0, N] along axis.")
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = lax.slice_in_dim(data, lo, hi, axis=axis)
        shape = [1] * data.ndim
        shape[axis] = hi - lo
        t = np.arange(hi - lo, dtype=np.float64)
        t = jnp.asarray((t - t.mean()).reshape(shape), dtype=jnp.real(seg).dtype)
        centred = seg - jnp.mean(seg, axis, keepdims=True)
        denom = jnp.sum(t * t, axis, keepdims=True)
        slope = jnp.sum(t * centred, axis, keepdims=True) / jnp.where(denom == 0, 1, denom)
        pieces.append(centred - slope * t)
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=axis)
