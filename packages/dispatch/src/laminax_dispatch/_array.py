"""`Array`: laminax's concrete array, built on jaxlib's C++ `ArrayImpl`.

An Array is an abstract value (`aval`: shape, dtype, weak type), a sharding, and one device
buffer per addressable device. jaxlib's C++ owns the object (construction, deletion, readiness,
the fast argument path of compiled calls); this module installs the Python half: properties,
host conversion, printing, DLPack and pickling. The class body's methods go onto the C++ class
(`on_cpp_class`), so arrays that executables return and arrays laminax builds are one type.

Host conversion is zero-copy where jaxlib allows it: `np.asarray(x)` on a CPU array is a
read-only view of the device buffer.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core.internal import ShapedArray, Tracer, pytype_aval_mappings

from laminax_dispatch import _hooks
from laminax_dispatch._sharding import Sharding, SingleDeviceSharding, on_cpp_class

__all__ = ["Array", "ArrayImpl", "Shard", "make_array"]

# DLPack device type codes (dlpack.h): the values `__dlpack_device__` reports.
_DL_CPU, _DL_CUDA, _DL_ROCM = 1, 2, 10


class Shard:
    """One device's piece of an Array (JAX: `jax.Shard`).

    Attributes:
      device: the device holding the piece.
      index: the tuple of slices that selects the piece from the global array.
      replica_id: which copy this is when the piece is replicated (0 for the first).
      data: the piece as a single-device Array.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import device_put
      >>> device_put(np.zeros(2, np.float32)).addressable_shards[0].index
      (slice(None, None, None),)
    """

    def __init__(self, device: xc.Device, sharding: Sharding, global_shape, data=None):
        self.device = device
        self._sharding = sharding
        self._global_shape = tuple(global_shape)
        self.data = data

    @property
    def index(self) -> tuple[slice, ...]:
        return self._sharding.devices_indices_map(self._global_shape)[self.device]

    @property
    def replica_id(self) -> int:
        index = self.index
        same = [
            d
            for d, i in self._sharding.devices_indices_map(self._global_shape).items()
            if i == index
        ]
        return [d.id for d in sorted(same, key=lambda d: d.id)].index(self.device.id)

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})"
        )


def _deleted_error(x) -> RuntimeError:
    return RuntimeError(
        f"Array has been deleted with shape={x.dtype.name}[{','.join(map(str, x.shape))}]. "
        "It was deleted with `.delete()` or donated to a computation; keep a copy made before "
        "that instead."
    )


def _array_repr(x) -> str:
    prefix = "Array("
    weak = ", weak_type=True" if x.aval.weak_type else ""
    dtype_text = f"dtype={x.dtype.name}{weak}"
    width = np.get_printoptions()["linewidth"]
    if x.size == 0:
        body = f"[], shape={x.shape}"
    else:
        body = np.array2string(
            x._value, prefix=prefix, suffix=",", separator=", ", max_line_width=width
        )
    last_line = len(body) - body.rfind("\n") + 1
    # JAX's layout: a wider gap (the prefix's width) when the dtype would overflow the line.
    gap = " " * len(prefix) if last_line + len(dtype_text) + 2 > width else " "
    return f"{prefix}{body},{gap}{dtype_text})"


@on_cpp_class(_jax.ArrayImpl)
class ArrayImpl:
    """A concrete array on one or more devices (JAX: `jax.Array`).

    Arrays are created by `device_put`, by running computations, and by `make_array`; they
    are immutable, hold their data in device memory, and convert to NumPy on request.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import device_put
      >>> device_put(np.array([1.0, 2.0], np.float32))
      Array([1., 2.], dtype=float32)
    """

    __array_priority__ = 100
    __hash__ = None  # mutable-by-deletion and compared elementwise: not hashable, as in JAX

    # -- jaxlib protocol: C++ calls this when `ArrayImpl(...)` is built with checks on --------

    def _check_and_rearrange(self, arrays, sharding, aval):
        by_device = {a.sharding._device.id: a for a in arrays}
        expected = sharding._addressable_device_assignment
        if len(by_device) != len(arrays) or set(by_device) != {d.id for d in expected}:
            raise ValueError(
                f"make_array: the per-device arrays are on devices {sorted(by_device)}, but the "
                f"sharding's addressable devices are {sorted(d.id for d in expected)}; pass "
                "exactly one array per addressable device."
            )
        shard_shape = sharding.shard_shape(aval.shape)
        for a in arrays:
            if a.shape != shard_shape or a.dtype != aval.dtype:
                raise ValueError(
                    f"make_array: expected every per-device array to be "
                    f"{aval.dtype.name}{list(shard_shape)}, got {a.dtype.name}{list(a.shape)}."
                )
        return [by_device[d.id] for d in expected]

    # -- metadata ---------------------------------------------------------------------------

    shape = property(lambda self: self.aval.shape, doc="The array's shape, a tuple of ints.")
    dtype = property(lambda self: self.aval.dtype, doc="The array's NumPy dtype.")
    ndim = property(lambda self: len(self.aval.shape), doc="The number of dimensions.")
    size = property(lambda self: math.prod(self.aval.shape), doc="The number of elements.")
    itemsize = property(lambda self: self.aval.dtype.itemsize, doc="Bytes per element.")
    nbytes = property(lambda self: self.size * self.aval.dtype.itemsize, doc="Bytes in all.")
    weak_type = property(lambda self: self.aval.weak_type, doc="Whether weakly typed.")
    sharding = property(lambda self: self._sharding, doc="The array's `Sharding`.")
    committed = property(lambda self: self._committed, doc="Whether pinned to its devices.")

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return self._sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every piece of the array."""
        return self._sharding.is_fully_addressable

    def devices(self) -> set[xc.Device]:
        """The set of devices holding the array's data."""
        return self._sharding.device_set

    @property
    def device(self) -> xc.Device | Sharding:
        """The device of a single-device array; the sharding otherwise."""
        device_set = self._sharding.device_set
        return next(iter(device_set)) if len(device_set) == 1 else self._sharding

    @property
    def addressable_shards(self) -> list[Shard]:
        """One `Shard` per device of this process, each with its data."""
        return [
            Shard(a.sharding._device, self._sharding, self.shape, self.addressable_data(i))
            for i, a in enumerate(self._arrays)
        ]

    @property
    def global_shards(self) -> list[Shard]:
        """One `Shard` per device of the sharding, in its device order; pieces on another
        process's devices have ``data=None``."""
        local = {a.sharding._device: i for i, a in enumerate(self._arrays)}
        return [
            Shard(d, self._sharding, self.shape, self.addressable_data(local[d]) if d in local else None)
            for d in self._sharding._device_assignment
        ]

    def addressable_data(self, index: int):
        """The data of the `index`-th addressable shard as a single-device Array."""
        buffer = self._arrays[index]
        if len(self._arrays) == 1 and buffer.aval is not None:
            return self
        device = buffer.sharding._device
        aval = self.aval.update(shape=self._sharding.shard_shape(self.shape))
        return _jax.ArrayImpl(aval, SingleDeviceSharding(device), [buffer], self._committed, True)

    # -- host values ------------------------------------------------------------------------

    @property
    def _value(self) -> np.ndarray:
        if self.is_deleted():
            raise _deleted_error(self)
        if self._npy_value is not None:
            return self._npy_value
        if not self.is_fully_replicated:
            value = self._gather()
            value.flags.writeable = False
            self._npy_value = value
            return value
        value, did_copy = self._single_device_array_to_np_array_did_copy()
        value.flags.writeable = False
        if did_copy:
            self._npy_value = value  # a host copy is worth keeping; a view is free to remake
        return value

    def _gather(self) -> np.ndarray:
        """The whole array on the host, assembled from the first copy of each piece (in a
        multi-process run, when this process holds a copy of every piece)."""
        indices = self._sharding.devices_indices_map(self.shape)
        if not self.is_fully_addressable and not _process_holds_every_piece(
            indices, self._sharding.addressable_devices
        ):
            raise RuntimeError(
                "Fetching value for `jax.Array` that spans non-addressable (non process local) "
                "devices is not possible. You can use "
                "`jax.experimental.multihost_utils.process_allgather` to print the global array "
                "or use `.addressable_shards` method of jax.Array to inspect the addressable "
                "(process local) shards."
            )
        pieces, seen = [], set()
        for i, buffer in enumerate(self._arrays):
            index = indices[buffer.sharding._device]
            key = tuple((s.start, s.stop, s.step) for s in index)
            if key not in seen:  # replicas hold the same data: read one
                seen.add(key)
                piece = self.addressable_data(i)
                piece.copy_to_host_async()
                pieces.append((index, piece))
        out = np.empty(self.shape, self.dtype)
        for index, piece in pieces:
            out[index] = np.asarray(piece)
        return out

    def __array__(self, dtype=None, copy=None):
        value = self._value
        if copy is False and dtype is not None and np.dtype(dtype) != value.dtype:
            raise ValueError(
                f"np.asarray(array, dtype={np.dtype(dtype).name}, copy=False) would need a copy "
                f"from {value.dtype.name}; allow the copy (copy=None)."
            )
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def copy_to_host_async(self) -> None:
        """Starts copying the data to host memory so that a later read does not wait."""
        if self.is_deleted() or self._npy_value is not None:
            return
        for a in self._arrays:
            a._copy_single_device_array_to_host_async()

    def item(self, *args) -> Any:
        """The element at `args` (or the single element) as a Python scalar."""
        return self._value.item(*args)

    def tolist(self) -> Any:
        """The array as nested Python lists of Python scalars."""
        return self._value.tolist()

    def _check_scalar(self) -> np.ndarray:
        if self.ndim != 0:
            raise TypeError(
                f"Only scalar arrays can be converted to Python scalars; got arr.ndim={self.ndim}"
            )
        return self._value

    def __float__(self) -> float:
        return float(self._check_scalar())

    def __int__(self) -> int:
        return int(self._check_scalar())

    def __complex__(self) -> complex:
        return complex(self._check_scalar())

    def __bool__(self) -> bool:
        if self.size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        if self.size == 0:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                "that an array is not empty."
            )
        return bool(self._value)

    def __index__(self) -> int:
        if self.ndim != 0 or not np.issubdtype(self.dtype, np.integer):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return operator.index(self._value.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator:
        # Host iteration until core's indexing exists; each row goes back onto the device.
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if len(self._sharding.device_set) > 1:
            # rows of a sharded array are sliced where the data lives
            return (self[i] for i in range(self.shape[0]))
        device = self.device if self._committed else None
        weak = self.aval.weak_type
        return (_hooks.device_put(row, device, _weak_type=weak) for row in self._value)

    # -- printing ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        return _array_repr(self)

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, format_spec: str) -> str:
        if self.ndim == 0:
            return format(self._value[()], format_spec)
        return format(self._value, format_spec)

    # -- interchange ------------------------------------------------------------------------

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if len(self._arrays) != 1:
            raise BufferError(
                "__dlpack__ needs an array on a single device; this one spans "
                f"{len(self._arrays)} devices. Take one shard's data first."
            )
        if copy:
            return _jax.buffer_to_dlpack_managed_tensor(self._arrays[0].clone(), stream=stream)
        return _jax.buffer_to_dlpack_managed_tensor(self._arrays[0], stream=stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        if len(self._arrays) != 1:
            raise BufferError("__dlpack_device__ needs an array on a single device.")
        device = self._arrays[0].sharding._device
        if device.platform == "cpu":
            return _DL_CPU, 0
        code = _DL_ROCM if "rocm" in device.client.platform_version else _DL_CUDA
        return code, device.local_hardware_id

    def __reduce__(self):
        # Pickles by value: unpickling puts the data on the default device, uncommitted.
        return (_unpickle_array, (np.array(self._value), self.aval.weak_type))


@on_cpp_class(_jax.Array)
class Array:
    """The type of every laminax array (JAX: `jax.Array`), for annotations and `isinstance`.

    `ArrayImpl` is the concrete class; this is jaxlib's C++ base class of it, which core's
    tracers also register with, as JAX's do.

    Example:
      >>> from laminax_dispatch import Array, device_put
      >>> isinstance(device_put(1.0), Array)
      True
    """


# `isinstance(tracer, Array)` is true under tracing, as in JAX: jaxlib's Array type asks
# instances of the registered tracer class `_is_traced_array()`.
_jax.set_tracer_class(Tracer)


def _unpickle_array(value: np.ndarray, weak_type: bool):
    return _hooks.device_put(value, _weak_type=weak_type)


def make_array(
    aval: ShapedArray, sharding: Sharding, arrays: Sequence[ArrayImpl], committed: bool = True
) -> ArrayImpl:
    """Assembles an Array from one single-device Array per addressable device of `sharding`.

    Args:
      aval: the global abstract value.
      sharding: where each piece lives.
      arrays: the pieces, in any order (they are matched to devices).
      committed: whether the result is pinned to its devices.

    Returns:
      The Array.

    Raises:
      ValueError: the pieces' devices, shapes or dtypes do not match the sharding.

    Example:
      >>> import numpy as np
      >>> from laminax_core import ShapedArray
      >>> from laminax_dispatch import SingleDeviceSharding, device_put, devices, make_array
      >>> piece = device_put(np.ones(2, np.float32))
      >>> sharding = SingleDeviceSharding(devices()[0])
      >>> make_array(ShapedArray((2,), np.float32), sharding, [piece]).committed
      True
    """
    return _jax.ArrayImpl(aval, sharding, list(arrays), committed)


def _array_aval(x: ArrayImpl) -> ShapedArray:
    return x.aval


pytype_aval_mappings[_jax.ArrayImpl] = _array_aval
SingleDeviceSharding.__module__ = __name__.rpartition(".")[0]


def _index_key(index) -> tuple:
    return tuple((s.start, s.stop, s.step) for s in index)


def _process_holds_every_piece(indices: dict, addressable) -> bool:
    """Whether this process's devices hold every distinct piece of an array spread over
    several processes (each piece replicated onto some device here)."""
    local = {_index_key(indices[d]) for d in addressable}
    return len(local) == len({_index_key(i) for i in indices.values()})
