"""Fast Fourier transforms over the trailing dimensions: JAX's `fft_p` with params `fft_type`
(an `FftType`) and `fft_lengths` (the sizes of the transformed trailing dims).

FFT and IFFT map complex to complex, RFFT real to the non-redundant half spectrum (the last
length `n` becomes `n // 2 + 1`), IRFFT that half spectrum back to real. All four are linear,
so the jvp is the primitive itself. The transpose of FFT (a symmetric matrix) is FFT; RFFT and
IRFFT drop or duplicate the conjugate-symmetric half, so their transposes weight the
half-spectrum bins that stand for two bins by 2 (every bin but the zero frequency, and the
Nyquist bin when `n` is even).
"""

from __future__ import annotations

import enum
import math
import operator

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import move_bdim
from laminax_core._primitive import define_primitive, linear
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._elementwise import convert_element_type
from laminax_core.lax._math import conj
from laminax_core.lax._structural import broadcast_in_dim

__all__ = ["FftType", "fft"]
# the primitives, which lax exports beside their functions
__all__ += [
    "fft_p",
]  # fmt: skip


class FftType(enum.IntEnum):
    """Which transform `lax.fft` computes.

    Members: `FFT` (complex to complex, forward), `IFFT` (complex to complex, inverse),
    `RFFT` (real to half spectrum), `IRFFT` (half spectrum to real).

    Example:
      >>> FftType.RFFT.value
      2
    """

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str) and fft_type.upper() in FftType.__members__:
        if fft_type in (fft_type.upper(), fft_type.lower()):
            return FftType[fft_type.upper()]
    if isinstance(fft_type, str):
        raise ValueError(
            f"lax.fft: unknown FFT type {fft_type!r}; use one of 'fft', 'ifft', 'rfft', "
            "'irfft' or a lax.FftType member."
        )
    raise TypeError(
        f"lax.fft: unknown FFT type value {fft_type!r}; pass a lax.FftType member or one of "
        "the strings 'fft', 'ifft', 'rfft', 'irfft'."
    )


def fft(x, fft_type: FftType | str, fft_lengths):
    """Discrete Fourier transform over the last `len(fft_lengths)` dimensions of `x`.

    Args:
      x: the operand. FFT/IFFT/IRFFT convert it to complex, RFFT to floating (complex input
        is an error for RFFT).
      fft_type: an `FftType` or its name as a string (`"fft"`, `"IRFFT"` ...).
      fft_lengths: the lengths of the transformed trailing dims (for IRFFT the real output's
        lengths; its input's last dim is `fft_lengths[-1] // 2 + 1`).

    Returns:
      The transform: complex for FFT, IFFT and RFFT, real for IRFFT.

    Example:
      >>> fft(np.array([1.0, 0.0, 0.0, 0.0], np.float32), "rfft", (4,))
      array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    kind = _fft_type(fft_type)
    aval = get_aval(x)
    if kind == FftType.RFFT:
        if dtypes.issubdtype(aval.dtype, np.complexfloating):
            raise ValueError(
                "lax.fft: RFFT accepts only real-valued input, got a "
                f"{aval.dtype.name} array; use FFT for complex input."
            )
        target = dtypes.to_inexact_dtype(aval.dtype)
    else:
        target = dtypes.to_complex_dtype(aval.dtype)
    if target != aval.dtype or aval.weak_type:
        x = convert_element_type(x, target)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=lengths)


def _complex_of(dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)


def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float64 if np.dtype(dtype) == np.complex128 else np.float32)


def _fft_abstract_eval(x, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(
            f"fft: input shape {x.shape} has fewer dimensions than fft_lengths {fft_lengths}; "
            "the transformed dims are the trailing ones."
        )
    minor = x.shape[x.ndim - k :]
    if fft_type == FftType.RFFT:
        if np.dtype(x.dtype) not in (np.float32, np.float64):
            raise ValueError(f"fft: RFFT input must be float32 or float64, got {x.dtype.name}.")
        expected, dtype = fft_lengths, _complex_of(x.dtype)
        shape = x.shape[: x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    else:
        if not dtypes.issubdtype(x.dtype, np.complexfloating):
            raise ValueError(
                f"fft: {fft_type.name} input must be complex64 or complex128, got "
                f"{x.dtype.name}; lax.fft converts real input for you."
            )
        if fft_type == FftType.IRFFT:
            minor, expected = minor[:-1], fft_lengths[:-1]
            shape, dtype = x.shape[: x.ndim - k] + fft_lengths, _real_of(x.dtype)
        else:
            expected, shape, dtype = fft_lengths, x.shape, x.dtype
    if tuple(minor) != tuple(expected):
        raise ValueError(
            f"fft: {fft_type.name} input shape {x.shape} must end in {expected} to match "
            f"fft_lengths {fft_lengths}; slice or pad the input first."
        )
    return ShapedArray(shape, dtype, x.weak_type, x.sharding)  # the operand's, as JAX


def _fft_reference(x, fft_type, fft_lengths):
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        return np.fft.fftn(x, axes=axes).astype(x.dtype)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes).astype(x.dtype)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes).astype(_complex_of(x.dtype))
    return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(_real_of(x.dtype))


def _half_spectrum_weights(fft_lengths, size: int, dtype) -> np.ndarray:
    """2 for each half-spectrum bin that stands for a conjugate pair, else 1."""
    weights = np.full((size,), 2, dtype)
    weights[0] = 1
    if fft_lengths[-1] % 2 == 0:
        weights[-1] = 1
    return weights


def _rfft_transpose(ct, fft_lengths):
    aval = get_aval(ct)
    weights = _half_spectrum_weights(fft_lengths, aval.shape[-1], aval.dtype)
    halved = ew.div(conj(ct), _broadcast_last(weights, aval.shape))
    out = fft(halved, FftType.IRFFT, fft_lengths)
    return ew.mul(out, np.asarray(math.prod(fft_lengths), get_aval(out).dtype))


def _irfft_transpose(ct, fft_lengths):
    spectrum = fft(ct, FftType.RFFT, fft_lengths)
    aval = get_aval(spectrum)
    weights = _half_spectrum_weights(fft_lengths, aval.shape[-1], aval.dtype)
    weights = weights / np.asarray(math.prod(fft_lengths), aval.dtype)
    return conj(ew.mul(_broadcast_last(weights.astype(aval.dtype), aval.shape), spectrum))


def _broadcast_last(vector: np.ndarray, shape):
    return broadcast_in_dim(vector, tuple(shape), (len(shape) - 1,))


def _fft_transpose(ct, x, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    # the DFT matrix is symmetric, so (I)FFT is its own transpose
    return [fft(ct, fft_type, fft_lengths)]


def _fft_batch(axis_data, args, dims, fft_type, fft_lengths):
    x = move_bdim(args[0], dims[0], 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


def _fft_print(params):
    return {"fft_lengths": params["fft_lengths"], "fft_type": int(params["fft_type"])}


fft_p = define_primitive(
    "fft",
    abstract_eval=_fft_abstract_eval,
    reference=_fft_reference,
    jvp=linear,
    transpose=_fft_transpose,
    batch=_fft_batch,
    print_params=_fft_print,
)
