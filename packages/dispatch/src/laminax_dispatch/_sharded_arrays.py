"""Building sharded Arrays from their pieces: `make_array_from_callback` and
`make_array_from_single_device_arrays` (JAX's names; laminax_pjit re-exports them).

Both work with any sharding of dispatch's protocol: the sharding says which index of the global
array each of this process's devices holds (`addressable_devices_indices_map`); the pieces are
checked against its shard shape and assembled by jaxlib's `ArrayImpl` without copying.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from laminax_core import dtypes
from laminax_core.internal import ShapedArray

from laminax_dispatch._device_put import device_put
from laminax_dispatch._sharding import Sharding

__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays"]


def _describe(shape, dtype, sharding) -> str:
    return f"Shape of Array is {np.dtype(dtype).name}{list(shape)} with sharding {sharding}"


def _check_pieces(shape, sharding: Sharding, pieces, dtype) -> None:
    expected = tuple(sharding.shard_shape(shape))
    for piece in pieces:
        if tuple(piece.shape) != expected:
            raise ValueError(
                f"Expected shard shape {expected} doesn't match the single device array shape "
                f"{tuple(piece.shape)}. {_describe(shape, dtype, sharding)}. Give each device "
                "the piece of the global array its index selects."
            )


def make_array_from_callback(
    shape: Sequence[int],
    sharding: Sharding,
    data_callback: Callable[[tuple[slice, ...]], Any],
    dtype=None,
) -> Any:
    """An Array of global `shape` laid out by `sharding`, each piece made by `data_callback`.

    Args:
      shape: the global shape.
      sharding: any sharding (one device, GSPMD, laminax_pjit's NamedSharding).
      data_callback: called once per addressable device with the tuple of slices that device
        holds; returns that piece (a NumPy array, scalar or Array).
      dtype: the dtype, when the callback's pieces should be converted (default: theirs).

    Returns:
      A committed Array.

    Raises:
      ValueError: a piece does not have the sharding's shard shape.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import SingleDeviceSharding, devices, make_array_from_callback
      >>> data = np.arange(4, dtype=np.float32)
      >>> make_array_from_callback((4,), SingleDeviceSharding(devices()[0]), lambda i: data[i])
      Array([0., 1., 2., 3.], dtype=float32)
    """
    shape = tuple(int(d) for d in shape)
    indices = sharding.addressable_devices_indices_map(shape)
    devices = [d for d in sharding._device_assignment if d in indices]
    pieces = [data_callback(indices[d]) for d in devices]
    if dtype is None:
        dtype = np.asarray(pieces[0]).dtype if pieces else np.dtype(np.float32)
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    _check_pieces(shape, sharding, pieces, dtype)
    aval = ShapedArray(shape, dtype)
    if all(not isinstance(p, _jax.ArrayImpl) for p in pieces):
        values = [np.asarray(p, dtype=dtype) for p in pieces]
        return _jax.batched_device_put(aval, sharding, values, devices, True)
    arrays = [device_put(np.asarray(p, dtype=dtype), d) for p, d in zip(pieces, devices, strict=True)]
    return _jax.ArrayImpl(aval, sharding, arrays, True)


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Sharding, arrays: Sequence[Any], *, dtype=None
) -> Any:
    """An Array of global `shape` from one single-device Array per addressable device.

    Args:
      shape: the global shape.
      sharding: how the pieces make up the whole.
      arrays: the pieces, one per addressable device of `sharding` (in any order).
      dtype: the dtype (default: the pieces').

    Returns:
      A committed Array sharing the pieces' buffers.

    Raises:
      ValueError: the wrong number of pieces, a piece of the wrong shape, or pieces on other
        devices than the sharding's.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import SingleDeviceSharding, device_put, devices
      >>> from laminax_dispatch import make_array_from_single_device_arrays
      >>> piece = device_put(np.ones(2, np.float32), devices()[0])
      >>> make_array_from_single_device_arrays((2,), SingleDeviceSharding(devices()[0]), [piece])
      Array([1., 1.], dtype=float32)
    """
    shape = tuple(int(d) for d in shape)
    arrays = list(arrays)
    expected = len(sharding._addressable_device_assignment)
    if len(arrays) != expected:
        raise ValueError(
            f"Expected {expected} per-device arrays (this is how many devices are addressable "
            f"by the sharding), but got {len(arrays)}. Pass one array per device."
        )
    for a in arrays:
        if not isinstance(a, _jax.ArrayImpl):
            raise TypeError(
                f"make_array_from_single_device_arrays: every piece must be an Array on one "
                f"device, got {type(a).__name__}; device_put it first."
            )
    dtype = arrays[0].dtype if dtype is None else np.dtype(dtype)
    _check_pieces(shape, sharding, arrays, dtype)
    return _jax.ArrayImpl(ShapedArray(shape, dtype), sharding, arrays, True)
