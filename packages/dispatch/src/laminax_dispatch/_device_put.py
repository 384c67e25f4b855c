"""Moving data between host and devices: `device_put`, `device_get`, `block_until_ready`.

Committed and uncommitted arrays (JAX's rule): `device_put(x)` without a device gives an
*uncommitted* array on the default device, which computations may move next to their other
arguments; `device_put(x, device)` gives a *committed* one, which pins every computation that
uses it to that device. Two committed arguments on different devices are an error
(`_placement.place_inputs`).

Onto a sharding of several devices, the host value is cut into one piece per device (the
sharding's `devices_indices_map`) and the pieces go over in one `batched_device_put`; an
Array moves buffer by buffer when its pieces map one to one onto the new devices, and through
the host otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core import dtypes
from laminax_core.internal import PRNGKeyArray, ShapedArray, get_aval
from laminax_pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_dispatch._array import ArrayImpl, _deleted_error
from laminax_dispatch._backends import default_device, get_backend
from laminax_dispatch import _hooks, _placement
from laminax_dispatch._placement import place_inputs
from laminax_dispatch._sharding import Sharding, SingleDeviceSharding
from laminax_dispatch._transfer_guard import explicit_device_get_scope

__all__ = [
    "block_until_ready",
    "device_get",
    "device_put",
    "devices_for_args",
    "from_dlpack",
    "is_supported_dtype",
    "source_on_same_devices",
]


def _target(device: xc.Device | Sharding | None) -> tuple[Sharding, bool]:
    """The sharding to place data with, and whether the result is committed to it."""
    if device is None:
        return SingleDeviceSharding(default_device()), False
    if isinstance(device, xc.Device):
        return SingleDeviceSharding(device), True
    if isinstance(device, Sharding):
        return device, True
    raise TypeError(
        f"device_put: device must be a Device, a Sharding or None, got {device!r} of type "
        f"{type(device).__name__}. Pick one from laminax.devices()."
    )


@functools.lru_cache(maxsize=4096)
def _placement_of(sharding: Sharding, shape: tuple[int, ...]):
    """(addressable devices, index of each) for an array of `shape`, checking that every
    device's piece has the sharding's shard shape (one computation per sharding and shape)."""
    indices = sharding.devices_indices_map(shape)
    devices = sharding._addressable_device_assignment
    if len(devices) == 1 and sharding.is_fully_replicated:
        return devices, None
    expected = sharding.shard_shape(shape)
    for d in devices:
        got = tuple(len(range(*s.indices(n))) for s, n in zip(indices[d], shape, strict=True))
        if got != expected:
            raise ValueError(
                f"One of device_put args was given the sharding of {sharding}, which splits "
                f"an array of shape {shape} unevenly (device {d.id} would get {got}, others "
                f"{expected}): each dimension must be divisible by the number of devices it is "
                "split over. Pad the array or choose a sharding that divides it."
            )
    return devices, tuple(indices[d] for d in devices)


def _put_value(aval, value, sharding: Sharding, committed: bool, copy: bool = False) -> ArrayImpl:
    """`value` (host, canonical dtype) as an Array laid out by `sharding`."""
    devices, indices = _placement_of(sharding, aval.shape)
    if indices is None:
        xs = [value]
    else:
        xs = [value[index] for index in indices]
    return _jax.batched_device_put(aval, sharding, xs, list(devices), committed, force_copy=copy)


def _host_value(x: Any, weak_type: bool | None) -> tuple[ShapedArray, np.ndarray]:
    """The aval and the host array (of the canonical dtype) for a non-Array leaf."""
    try:
        aval = get_aval(x)
    except TypeError as err:
        raise TypeError(
            f"device_put: argument {x!r} of type {type(x)} is not a valid array type; pass "
            "NumPy arrays, Python or NumPy scalars, Arrays, or pytrees of them."
        ) from err
    if isinstance(x, int) and not isinstance(x, bool):
        info = np.iinfo(aval.dtype)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {aval.dtype.name}")
    if weak_type is not None:
        aval = aval.update(weak_type=weak_type)
    return aval, np.asarray(x, dtype=aval.dtype)


def _put_host(x: Any, device, weak_type: bool | None = None, copy: bool = False) -> ArrayImpl:
    if getattr(x, "dtype", None) == dtypes.float0:
        # float0 values hold no data and have no device form: a NumPy float0 array, as in JAX
        return np.zeros(np.shape(x), dtypes.float0)
    sharding, committed = _target(device)
    aval, value = _host_value(x, weak_type)
    return _put_value(aval, value, sharding, committed, copy)


def _copy_semantics(may_alias: bool | None, donate: bool) -> _jax.ArrayCopySemantics:
    if donate:
        return _jax.ArrayCopySemantics.DONATE_INPUT
    if may_alias is False:
        return _jax.ArrayCopySemantics.ALWAYS_COPY
    return _jax.ArrayCopySemantics.REUSE_INPUT


def _same_layout(x: ArrayImpl, sharding: Sharding) -> bool:
    """Whether `x`'s pieces map one to one onto `sharding`'s devices (same indices, in the
    order of the devices): then a move is a per-buffer copy, no data is split or joined."""
    source = x._sharding
    if len(x._arrays) != len(sharding._addressable_device_assignment):
        return False
    if source.is_fully_replicated and sharding.is_fully_replicated:
        return True
    shape = x.shape
    old = source.devices_indices_map(shape)
    new = sharding.devices_indices_map(shape)
    return [old[d] for d in source._addressable_device_assignment] == [
        new[d] for d in sharding._addressable_device_assignment
    ]


def _put_array(x: ArrayImpl, device, may_alias: bool | None, donate: bool) -> ArrayImpl:
    if x.is_deleted():
        raise _deleted_error(x)
    if device is None:
        if may_alias is not False and not donate:
            return x
        device = x._sharding if x._committed else None
    sharding, committed = _target(device)
    semantics = _copy_semantics(may_alias, donate)
    if x._sharding == sharding and semantics == _jax.ArrayCopySemantics.REUSE_INPUT:
        if x._committed or not committed:
            return x
        # Same buffers, now committed: only the array's metadata changes.
        return _jax.ArrayImpl(x.aval, sharding, x._arrays, True, True)
    target_devices = sharding._addressable_device_assignment
    if _same_layout(x, sharding) and x._arrays[0].sharding._device.client == target_devices[0].client:
        (moved,) = _jax.batched_copy_array_to_devices_with_sharding(
            [x], [_jax.DeviceList(tuple(target_devices))], [sharding], [semantics]
        )
        if moved._committed == committed:
            return moved
        return _jax.ArrayImpl(x.aval, sharding, moved._arrays, committed, True)
    if len(sharding.device_set) > 1 and source_on_same_devices(x, sharding):
        # another layout on the same devices: XLA moves the pieces between devices
        return _reshard_on_devices(x, sharding)
    # Other devices or another backend: through the host (gathered, then split anew).
    return _put_value(x.aval, np.asarray(x), sharding, committed)


def source_on_same_devices(x: ArrayImpl, sharding: Sharding) -> bool:
    """Whether `x` lives on exactly `sharding`'s devices, all of this process."""
    return (
        x._committed
        and x._sharding.device_set == sharding.device_set
        and x._sharding.is_fully_addressable
        and sharding.is_fully_addressable
    )


def _reshard_on_devices(x: ArrayImpl, sharding: Sharding) -> ArrayImpl:
    return _identity_for(sharding)(x)


@functools.lru_cache(maxsize=256)
def _identity_for(sharding: Sharding):
    # one compiled copy program per target layout (and, inside jit's cache, per aval)
    return _hooks.jit(_copy, out_shardings=sharding)


def _copy(value):
    return value


def device_put(
    x: Any,
    device: xc.Device | Sharding | None = None,
    *,
    may_alias: bool | None = None,
    donate: bool = False,
    _weak_type: bool | None = None,
) -> Any:
    """Places `x` (an array, scalar or pytree of them) on a device.

    Args:
      x: a NumPy array, Python or NumPy scalar, Array, or a pytree of these.
      device: a `Device` or any `Sharding` (one device, GSPMD, laminax_pjit's NamedSharding)
        to commit the result to (an Array already laid out otherwise is resharded), None to
        put it on the default device uncommitted (Arrays are then returned unchanged), or a
        pytree prefix of `x` of these (one placement per subtree).
      may_alias: False to always copy; True or None (the default) let the result share the
        input's memory (an Array already in place is returned as is).
      donate: True to hand the input Array's buffer over to the result where the runtime
        supports it (the input must not be used afterwards).

    Returns:
      Arrays with the structure of `x`. Python scalars become weakly typed; 64-bit dtypes
      become 32-bit unless ``jax_enable_x64`` is on.

    Raises:
      TypeError: a leaf is not an array type (a string, an arbitrary object).
      ValueError: a sharding splits a dimension unevenly.
      OverflowError: a Python int does not fit the canonical integer dtype.
      ValueError: both `may_alias` and `donate` are True.

    Example:
      >>> from laminax_dispatch import device_put
      >>> device_put(1.0)
      Array(1., dtype=float32, weak_type=True)
    """

    if may_alias and donate:
        raise ValueError(
            "device_put: may_alias and donate cannot be True at the same time; donate gives the "
            "buffer away, may_alias shares it."
        )

    def put(leaf, leaf_device):
        if isinstance(leaf, PRNGKeyArray):  # typed keys move as their data
            return PRNGKeyArray(put(leaf._base, leaf_device))
        if isinstance(leaf, _jax.ArrayImpl):
            return _put_array(leaf, leaf_device, may_alias, donate)
        return _put_host(leaf, leaf_device, _weak_type, copy=may_alias is False)

    if device is None or isinstance(device, xc.Device | Sharding):
        return tree_map(lambda leaf: put(leaf, device), x)
    device = _resolve_sharding_likes(device)
    if isinstance(device, Sharding):
        return tree_map(lambda leaf: put(leaf, device), x)
    leaves, treedef = tree_flatten(x)
    try:
        leaf_devices = broadcast_prefix(device, x, is_leaf=_is_placement)
    except ValueError as err:
        raise ValueError(
            f"device_put: the device argument must be a Device, a Sharding, None, or a pytree "
            f"prefix of x made of those. {err}"
        ) from err
    return tree_unflatten(treedef, [put(*pair) for pair in zip(leaves, leaf_devices, strict=True)])


def _resolve_sharding_likes(device):
    """`device` (a placement or a pytree of them) with sharding-like values the layers above
    registered (laminax_pjit's PartitionSpec, naming axes of `set_mesh`'s mesh) resolved."""
    kinds = tuple(_placement._resolvers)
    if not kinds:
        return device

    def resolve(node):
        if not isinstance(node, kinds):
            return node
        try:
            return _placement._resolve(node, "device")
        except RuntimeError as err:
            raise ValueError(
                "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to "
                f"device_put (got {node!r}), or pass a NamedSharding."
            ) from err

    return tree_map(resolve, device, is_leaf=lambda n: _is_placement(n) or isinstance(n, kinds))


def _is_placement(node: Any) -> bool:
    return node is None or isinstance(node, xc.Device | Sharding)


def device_get(x: Any) -> Any:
    """Copies the Arrays in pytree `x` to host NumPy arrays; other leaves are returned as is.

    Every copy starts before the first one is waited for, so transfers overlap.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import device_get, device_put
      >>> device_get({"a": device_put(np.ones(2, np.float32))})
      {'a': array([1., 1.], dtype=float32)}
    """
    with explicit_device_get_scope():
        for leaf in tree_leaves(x):
            if isinstance(leaf, _jax.ArrayImpl):
                leaf.copy_to_host_async()
        return tree_map(
            lambda leaf: np.asarray(leaf) if isinstance(leaf, _jax.ArrayImpl) else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Waits until every Array in pytree `x` has been computed; returns `x`.

    Raises:
      RuntimeError: an Array was deleted or donated.

    Example:
      >>> from laminax_dispatch import block_until_ready, device_put
      >>> block_until_ready([device_put(1.0)])
      [Array(1., dtype=float32, weak_type=True)]
    """
    arrays = [leaf for leaf in tree_leaves(x) if isinstance(leaf, _jax.ArrayImpl)]
    try:
        _jax.batched_block_until_ready(arrays)
    except _jax.JaxRuntimeError as err:
        deleted = [a for a in arrays if a.is_deleted()]
        if deleted:
            raise _deleted_error(deleted[0]) from err
        raise
    return x


def devices_for_args(
    args: Sequence[Any], arg_names: Sequence[str] | None = None, fun_name: str = "<unnamed>"
) -> xc.Device | None:
    """The device a computation on `args` must run on: that of its committed Arrays.

    A shorthand over `place_inputs` (the one place placement is decided) for callers that
    run on one device.

    Args:
      args: the flat arguments.
      arg_names: a name per argument for the error message (default ``args[i]``).
      fun_name: the function's name for the error message.

    Returns:
      The committed arguments' first device, or None when no argument is committed (the
      computation may then run on the default device).

    Raises:
      ValueError: two committed arguments are on different devices (JAX's message).

    Example:
      >>> from laminax_dispatch import device_put, devices
      >>> from laminax_dispatch.internal import devices_for_args
      >>> devices_for_args([device_put(1.0), device_put(2.0, devices()[0])])
      CpuDevice(id=0)
    """
    placement = place_inputs(args, arg_names=arg_names, fun_name=fun_name)
    return placement.devices[0] if placement.committed else None


# DLPack device types (dlpack.h's DLDeviceType) -> the platform holding such memory
_DL_PLATFORMS = {1: "cpu", 2: "cuda", 3: "cuda", 10: "rocm"}
_DLPACK_DTYPES = frozenset(np.dtype(d) for d in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128, np.bool_))


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can cross the DLPack boundary.

    Raises:
      TypeError: `dtype` is None (NumPy would silently read it as float64).

    Example:
      >>> is_supported_dtype("bfloat16"), is_supported_dtype("float8_e4m3fn")
      (True, False)
    """
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _DLPACK_DTYPES


def from_dlpack(external: Any, device: xc.Device | Sharding | None = None,
                copy: bool | None = None):
    """An Array sharing (or, with ``copy=True``, copying) the memory of a DLPack producer.

    The memory is shared when the producer's buffer is where the runtime can use it in place
    (on CPU: aligned to 64 bytes, compact strides); otherwise it is copied.

    Args:
      external: an object with ``__dlpack__`` and ``__dlpack_device__`` (a NumPy array, a
        torch tensor, another Array).
      device: a Device or single-device Sharding to commit the result to (default: the
        producer's device).
      copy: True to always copy, False to never copy (raise instead), None to copy only if
        needed.

    Returns:
      An Array committed to its device; a 64-bit one becomes 32-bit unless x64 is on.

    Raises:
      TypeError: `external` does not implement the DLPack protocol, or lives on a device
        type laminax has no backend for.
      ValueError: `device` has several devices, or differs from the producer's while
        ``copy=False``.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import from_dlpack
      >>> from_dlpack(np.arange(3, dtype=np.int32))
      Array([0, 1, 2], dtype=int32)
    """
    if isinstance(device, Sharding):
        if len(device.device_set) > 1:
            raise ValueError(
                "from_dlpack can only unpack a dlpack tensor onto a single device, but a "
                f"Sharding with {len(device.device_set)} devices was provided.")
        (device,) = device.device_set
    if not hasattr(external, "__dlpack__") or not hasattr(external, "__dlpack_device__"):
        raise TypeError(
            "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ "
            f"methods; got {type(external).__name__} (use device_put for other values).")
    dl_type, device_id = external.__dlpack_device__()
    platform = _DL_PLATFORMS.get(int(dl_type))
    if platform is None:
        raise TypeError(f"Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_type}, array: {external!r})")
    source = get_backend(platform).device_from_local_hardware_id(device_id)
    moves = device is not None and device != source
    if moves and copy is False:
        raise ValueError(
            f"Specified device={device!r} which requires a copy since the source device is "
            f"{source!r}, however copy=False. Set copy=True or copy=None to copy.")
    try:
        stream = source.get_stream_for_external_ready_events()
    except _jax.JaxRuntimeError as err:
        if "UNIMPLEMENTED" not in str(err):
            raise
        stream = None  # the CPU backend has no streams
    if int(dl_type) == 3:  # pinned host memory: producers take no stream there
        stream = None
    capsule = external.__dlpack__(stream=stream)
    buffer = _jax.dlpack_managed_tensor_to_buffer(capsule, source, stream, copy, int(dl_type))
    # the runtime returns an Array without a type: give it one (shape and dtype from the
    # producer's tensor; on CPU the host view of the same memory, which copies nothing)
    if platform == "cpu":
        shape, dtype = (view := buffer._single_device_array_to_np_array_did_copy()[0]).shape, \
            view.dtype
    else:
        shape, dtype = tuple(external.shape), np.dtype(str(external.dtype).split(".")[-1])
    out = _jax.ArrayImpl(ShapedArray(shape, dtype), SingleDeviceSharding(source), [buffer],
                         True, True)
    canonical = dtypes.canonicalize_dtype(dtype)
    if canonical != dtype:  # a 64-bit producer with x64 off: converted, as JAX does
        out = device_put(np.asarray(out).astype(canonical), source)
    return device_put(out, device) if moves else out


_hooks.device_put = device_put
