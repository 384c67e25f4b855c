"""Bit packing: `packbits` turns truthy elements into bits of uint8 bytes (8 per byte along
an axis), `unpackbits` turns bytes back into 0/1 elements. Both work on the last axis after a
swap, with NumPy's "big" (most significant bit first) or "little" bit order."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy._operands import as_array, canonicalize_axis, check_arraylike

__all__ = ["packbits", "unpackbits"]


def _bit_weights(bitorder: str, name: str) -> np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError(f"jnp.{name}: bitorder must be 'big' or 'little', got {bitorder!r}.")
    weights = np.left_shift(np.uint8(1), np.arange(8, dtype=np.uint8))
    return weights[::-1].copy() if bitorder == "big" else weights


def _to_last_axis(name: str, arr, axis):
    if axis is None:
        return lax.reshape(arr, (get_aval(arr).size,)), 0
    axis = canonicalize_axis(axis, get_aval(arr).ndim, f"jnp.{name}")
    return _swap_last(arr, axis), axis


def _swap_last(arr, axis: int):
    ndim = get_aval(arr).ndim
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return lax.transpose(arr, tuple(perm))


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """Packs the truth values of `a` into the bits of uint8 bytes, 8 elements per byte along
    `axis` (of the flattened array if None); a short last group is padded with zeros.

    Example:
      >>> packbits(np.array([1, 0, 1, 1, 0, 0, 0, 1, 1], np.int32))
      array([177, 128], dtype=uint8)
    """
    check_arraylike("packbits", a)
    arr = as_array(a)
    if not dtypes.issubdtype(get_aval(arr).dtype, np.integer) and get_aval(arr).dtype != bool:
        raise TypeError(
            f"jnp.packbits expects an integer or boolean array, got {get_aval(arr).dtype.name}."
        )
    weights = _bit_weights(bitorder, "packbits")
    bits = lax.convert_element_type(lax.ne(arr, np.zeros((), get_aval(arr).dtype)), np.uint8)
    bits, axis = _to_last_axis("packbits", bits, axis)
    shape = get_aval(bits).shape
    short = -shape[-1] % 8
    if short:
        config = [(0, 0, 0)] * (len(shape) - 1) + [(0, short, 0)]
        bits = lax.pad(bits, np.uint8(0), config)
    groups = lax.reshape(bits, (*shape[:-1], (shape[-1] + short) // 8, 8))
    weighted = lax.mul(groups, lax.broadcast_in_dim(weights, get_aval(groups).shape,
                                                    (len(shape),)))
    packed = lax.reduce_sum(weighted, (len(shape),))
    return _swap_last(packed, axis) if get_aval(packed).ndim else packed


def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """Unpacks each uint8 of `a` into 8 elements of 0 or 1 along `axis` (of the flattened
    array if None), keeping the first `count` of them if given (zero-padded if `count` is
    longer).

    Example:
      >>> unpackbits(np.array([177], np.uint8))
      array([1, 0, 1, 1, 0, 0, 0, 1], dtype=uint8)
    """
    check_arraylike("unpackbits", a)
    arr = as_array(a)
    if get_aval(arr).dtype != np.uint8:
        raise TypeError(
            f"jnp.unpackbits expects a uint8 array, got {get_aval(arr).dtype.name}."
        )
    weights = _bit_weights(bitorder, "unpackbits")
    arr, axis = _to_last_axis("unpackbits", arr, axis)
    shape = get_aval(arr).shape
    spread = lax.broadcast_in_dim(arr, (*shape, 8), tuple(range(len(shape))))
    masks = lax.broadcast_in_dim(weights, (*shape, 8), (len(shape),))
    bits = lax.convert_element_type(lax.ne(lax.bitwise_and(spread, masks), np.uint8(0)),
                                    np.uint8)
    bits = lax.reshape(bits, (*shape[:-1], shape[-1] * 8))
    if count is not None:
        # a negative count drops that many from the end, as a slice [:count] would
        count, n = operator.index(count), shape[-1] * 8
        config = [(0, 0, 0)] * (len(shape) - 1) + [(0, count if count < 0 else count - n, 0)]
        bits = lax.pad(bits, np.uint8(0), config)
    return _swap_last(bits, axis)
