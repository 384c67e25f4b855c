"""Shardings: where an array's data lives. This layer defines the base class and one device.

jaxlib's C++ runtime has its own `Sharding` and `SingleDeviceSharding` classes and calls back
into Python methods on them (for example `_to_xla_hlo_sharding` when it places a buffer).
laminax writes those methods here and installs them on the C++ classes (`on_cpp_class`), so an
object built by C++ code (an executable's outputs) and one built by laminax are the same type.
`laminax_pjit` adds `NamedSharding` on the same base.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jaxlib import _jax
from jaxlib import xla_client as xc

__all__ = ["Sharding", "SingleDeviceSharding", "on_cpp_class"]

# Attributes the Python class body always has; they must not overwrite the C++ class's own.
_CLASS_BOOKKEEPING = frozenset({"__module__", "__dict__", "__doc__", "__qualname__", "__weakref__"})

_REPLICATED = xc.HloSharding.replicate()


def on_cpp_class(cpp_class: type) -> Callable[[type], type]:
    """A class decorator that installs the class body's methods on a jaxlib C++ class.

    The decorated name then refers to the C++ class itself. Methods that C++ already provides
    (its constructor, for example) are kept when the Python body omits them.

    Args:
      cpp_class: the jaxlib class to extend, such as `jaxlib._jax.SingleDeviceSharding`.

    Returns:
      A decorator returning `cpp_class`.
    """

    def install(cls: type) -> type:
        for name, value in cls.__dict__.items():
            if name not in _CLASS_BOOKKEEPING:
                setattr(cpp_class, name, value)
        cpp_class.__doc__ = cls.__doc__
        return cpp_class

    return install


@on_cpp_class(_jax.Sharding)
class Sharding:
    """Describes how an array's data is laid out over devices (JAX: `jax.sharding.Sharding`).

    Subclasses provide `device_set`, `_device_assignment`, `is_fully_replicated`,
    `devices_indices_map` and `_to_xla_hlo_sharding`; the rest derives from them.

    Example:
      >>> from laminax_dispatch import Sharding, SingleDeviceSharding, devices
      >>> sharding = SingleDeviceSharding(devices()[0])
      >>> isinstance(sharding, Sharding), sharding.num_devices, sharding.shard_shape((4, 2))
      (True, 1, (4, 2))
    """

    @property
    def num_devices(self) -> int:
        """How many devices the sharding spans."""
        return len(self.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process can reach every device of the sharding."""
        return all(d.process_index == d.client.process_index() for d in self.device_set)

    @property
    def addressable_devices(self) -> set[xc.Device]:
        """The devices of the sharding that belong to this process."""
        return {d for d in self.device_set if d.process_index == d.client.process_index()}

    @property
    def _addressable_device_assignment(self) -> tuple[xc.Device, ...]:
        return tuple(d for d in self._device_assignment if d in self.addressable_devices)

    def addressable_devices_indices_map(self, global_shape) -> Mapping[xc.Device, Any]:
        """`devices_indices_map` restricted to this process's devices."""
        local = self.addressable_devices
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in local}

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        """The shape of each device's piece of an array of `global_shape`."""
        index = next(iter(self.devices_indices_map(global_shape).values()))
        return tuple(
            len(range(*s.indices(n))) for s, n in zip(index, tuple(global_shape), strict=True)
        )

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether both shardings place an `ndim`-dimensional array's data identically."""
        return (
            self._device_assignment == other._device_assignment
            and self._to_xla_hlo_sharding(ndim) == other._to_xla_hlo_sharding(ndim)
            and self.memory_kind == other.memory_kind
        )


def _unpickle_single_device_sharding(device, memory_kind):
    return SingleDeviceSharding(device, memory_kind=memory_kind)


@on_cpp_class(_jax.SingleDeviceSharding)
class SingleDeviceSharding(Sharding):
    """All of an array on one device (JAX: `jax.sharding.SingleDeviceSharding`).

    Constructed as ``SingleDeviceSharding(device, *, memory_kind=None)``.

    Example:
      >>> from laminax_dispatch import SingleDeviceSharding, devices
      >>> SingleDeviceSharding(devices()[0])
      SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """

    def __reduce__(self):
        return (_unpickle_single_device_sharding, (self._device, self._memory_kind))

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"SingleDeviceSharding(device={self._device!r}{memory})"

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    def __eq__(self, other) -> bool:
        if not isinstance(other, _jax.SingleDeviceSharding):
            return False
        return self._device == other._device and self._memory_kind == other._memory_kind

    @property
    def device_set(self) -> set[xc.Device]:
        """The one device, as a set."""
        return {self._device}

    @property
    def memory_kind(self) -> str | None:
        """The memory space the data lives in (``'device'`` by default)."""
        return self._memory_kind

    @property
    def _device_assignment(self) -> tuple[xc.Device, ...]:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        """Always True: the single device holds the whole array."""
        return True

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """The same device with another memory kind."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def devices_indices_map(self, global_shape) -> Mapping[xc.Device, tuple[slice, ...]]:
        """Maps the device to the index of its piece: the whole array."""
        return {self._device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        """The global shape itself."""
        return tuple(global_shape)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xc.HloSharding:
        return _REPLICATED
