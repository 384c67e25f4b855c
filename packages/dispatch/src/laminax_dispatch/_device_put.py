"""Moving data between host and devices: `device_put`, `device_get`, `block_until_ready`.

Committed and uncommitted arrays (JAX's rule): `device_put(x)` without a device gives an
*uncommitted* array on the default device, which computations may move next to their other
arguments; `device_put(x, device)` gives a *committed* one, which pins every computation that
uses it to that device. Two committed arguments on different devices are an error
(`devices_for_args`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core import dtypes
from laminax_core.internal import ShapedArray, get_aval
from laminax_pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_dispatch._array import ArrayImpl, _deleted_error
from laminax_dispatch._backends import get_backend
from laminax_dispatch._sharding import Sharding, SingleDeviceSharding

__all__ = ["block_until_ready", "device_get", "device_put", "devices_for_args", "from_dlpack"]


def _target(device: xc.Device | Sharding | None) -> tuple[xc.Device, bool]:
    """The device to place data on, and whether the result is committed to it."""
    if device is None:
        return get_backend().local_devices()[0], False
    if isinstance(device, xc.Device):
        return device, True
    if isinstance(device, _jax.SingleDeviceSharding):
        return device._device, True
    if isinstance(device, Sharding):
        raise NotImplementedError(
            f"device_put to {type(device).__name__} needs laminax_pjit (multi-device arrays); "
            "this layer places data on a single device."
        )
    raise TypeError(
        f"device_put: device must be a Device, a Sharding or None, got {device!r} of type "
        f"{type(device).__name__}. Pick one from laminax.devices()."
    )


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
    target, committed = _target(device)
    aval, value = _host_value(x, weak_type)
    sharding = SingleDeviceSharding(target)
    return _jax.batched_device_put(aval, sharding, [value], [target], committed, force_copy=copy)


def _copy_semantics(may_alias: bool | None, donate: bool) -> _jax.ArrayCopySemantics:
    if donate:
        return _jax.ArrayCopySemantics.DONATE_INPUT
    if may_alias is False:
        return _jax.ArrayCopySemantics.ALWAYS_COPY
    return _jax.ArrayCopySemantics.REUSE_INPUT


def _put_array(x: ArrayImpl, device, may_alias: bool | None, donate: bool) -> ArrayImpl:
    if x.is_deleted():
        raise _deleted_error(x)
    if device is None:
        if may_alias is not False and not donate:
            return x
        device = x.sharding._device if x.committed else None
    target, committed = _target(device)
    sharding = SingleDeviceSharding(target)
    semantics = _copy_semantics(may_alias, donate)
    if x.sharding == sharding and semantics == _jax.ArrayCopySemantics.REUSE_INPUT:
        if x.committed:
            return x
        # Same buffer, now committed: only the array's metadata changes.
        return _jax.ArrayImpl(x.aval, sharding, [x._arrays[0]], True, True)
    if len(x._arrays) == 1 and x._arrays[0].sharding._device.client == target.client:
        (moved,) = _jax.batched_copy_array_to_devices_with_sharding(
            [x], [_jax.DeviceList((target,))], [sharding], [semantics]
        )
        return _jax.ArrayImpl(x.aval, sharding, [moved._arrays[0]], committed, True)
    # Another backend (or a sharded source): go through the host.
    return _jax.batched_device_put(x.aval, sharding, [np.asarray(x)], [target], committed)


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
      device: a `Device` or `SingleDeviceSharding` to commit the result to, None to put it
        on the default device uncommitted (Arrays are then returned unchanged), or a pytree
        prefix of `x` of these (one placement per subtree).
      may_alias: False to always copy; True or None (the default) let the result share the
        input's memory (an Array already in place is returned as is).
      donate: True to hand the input Array's buffer over to the result where the runtime
        supports it (the input must not be used afterwards).

    Returns:
      Arrays with the structure of `x`. Python scalars become weakly typed; 64-bit dtypes
      become 32-bit unless ``jax_enable_x64`` is on.

    Raises:
      TypeError: a leaf is not an array type (a string, an arbitrary object).
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
        if isinstance(leaf, _jax.ArrayImpl):
            return _put_array(leaf, leaf_device, may_alias, donate)
        return _put_host(leaf, leaf_device, _weak_type, copy=may_alias is False)

    if device is None or isinstance(device, xc.Device | Sharding):
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
    for leaf in tree_leaves(x):
        if isinstance(leaf, _jax.ArrayImpl):
            leaf.copy_to_host_async()
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, _jax.ArrayImpl) else leaf, x)


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


def _describe(x: ArrayImpl) -> str:
    ids = sorted(d.id for d in x.sharding.device_set)
    platform = next(iter(x.sharding.device_set)).platform.upper()
    return (
        f"with shape {x.dtype.name}[{','.join(map(str, x.shape))}] and with device ids {ids} "
        f"on platform {platform}"
    )


def devices_for_args(
    args: Sequence[Any], arg_names: Sequence[str] | None = None, fun_name: str = "<unnamed>"
) -> xc.Device | None:
    """The device a computation on `args` must run on: that of its committed Arrays.

    Args:
      args: the flat arguments.
      arg_names: a name per argument for the error message (default ``args[i]``).
      fun_name: the function's name for the error message.

    Returns:
      The committed arguments' common device, or None when no argument is committed (the
      computation may then run on the default device).

    Raises:
      ValueError: two committed arguments are on different devices (JAX's message).

    Example:
      >>> from laminax_dispatch import device_put, devices
      >>> from laminax_dispatch.internal import devices_for_args
      >>> devices_for_args([device_put(1.0), device_put(2.0, devices()[0])])
      CpuDevice(id=0)
    """
    first = None
    for i, x in enumerate(args):
        if type(x) is not _jax.ArrayImpl or not x._committed:
            continue
        if first is None:
            first = (i, x, x.sharding.device_set)
        elif x.sharding.device_set != first[2]:
            names = list(arg_names) if arg_names is not None else None
            first_name = names[first[0]] if names else f"args[{first[0]}]"
            name = names[i] if names else f"args[{i}]"
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"{first_name} of {fun_name} {_describe(first[1])} and argument {name} of "
                f"{fun_name} {_describe(x)}"
            )
    return None if first is None else next(iter(first[2]))


def from_dlpack(external: Any, device: xc.Device | None = None, copy: bool | None = None):
    """An Array sharing (or, with ``copy=True``, copying) the memory of a DLPack producer.

    Args:
      external: an object with ``__dlpack__`` and ``__dlpack_device__`` (a NumPy array, a
        torch tensor, another Array).
      device: the device to place the result on (default: the producer's CPU device 0).
      copy: True to always copy, False to never copy (raise instead), None to copy only if
        needed.

    Returns:
      An uncommitted Array (committed when `device` is given).

    Raises:
      TypeError: `external` does not implement the DLPack protocol.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import from_dlpack
      >>> from_dlpack(np.arange(3, dtype=np.int32))
      Array([0, 1, 2], dtype=int32)
    """
    if not hasattr(external, "__dlpack__") or not hasattr(external, "__dlpack_device__"):
        raise TypeError(
            f"from_dlpack needs an object with __dlpack__ and __dlpack_device__, got "
            f"{type(external).__name__}; convert it with np.asarray and use device_put instead."
        )
    dtype = np.dtype(external.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
        # A 64-bit producer with x64 off: convert through the host, as device_put would.
        return device_put(np.from_dlpack(external), device)
    target, committed = _target(device)
    capsule = external.__dlpack__()
    buffer = _jax.dlpack_managed_tensor_to_buffer(capsule, target, None, copy)
    aval = ShapedArray(np.shape(external), dtype)
    return _jax.ArrayImpl(aval, SingleDeviceSharding(target), [buffer], committed, True)
