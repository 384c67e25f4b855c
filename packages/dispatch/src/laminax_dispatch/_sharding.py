"""Shardings: where an array's data lives, and the protocol every sharding follows.

jaxlib's C++ runtime has its own `Sharding`, `SingleDeviceSharding`, `GSPMDSharding` and
`NamedSharding` classes and calls back into Python methods on them (for example
`_to_xla_hlo_sharding` when it places a buffer). laminax writes those methods here and installs
them on the C++ classes (`on_cpp_class`), so an object built by C++ code (an executable's
outputs) and one built by laminax are the same type.

The protocol: what dispatch (placement, lowering, compiling, `device_put`, `Array`) calls on a
sharding. A new kind of sharding (laminax_pjit's `NamedSharding`) provides:

- ``_device_assignment``: the devices in their logical order (the order of the compiled
  program's partitions), a tuple;
- ``device_set``: the same devices as a set; ``memory_kind``: the memory space or None;
- ``_to_xla_hlo_sharding(ndim)``: the jaxlib `HloSharding` of an `ndim`-dimensional array,
  whose tile assignment numbers devices by their position in ``_device_assignment``;
- ``_to_sdy_sharding(ndim)``: the same layout as an `SdySharding` (a mesh and one `SdyDim` per
  dimension), what the lowering writes in Shardy's dialect;
- ``devices_indices_map(shape)``: device -> tuple of slices of the global array it holds;
- ``is_fully_replicated``: whether every device holds the whole array;
- ``_from_xla_hlo_sharding(hlo)`` (optional): a sharding of the same kind and devices with
  the layout XLA chose (how an executable's output shardings are reported); without it
  dispatch reports a `GSPMDSharding`;
- ``check_compatible_aval(shape)`` (optional): raises ValueError when the sharding cannot
  lay out an array of `shape` (a rank it does not describe);
- ``_with_new_dim(axis, ndim)`` (optional): the layout of the array with a new, unsplit
  dimension at `axis` (vmap keeps shardings through it; without it a splitting sharding is
  left to the compiler under vmap);
- ``__eq__`` and ``__hash__``: shardings that place data identically compare equal (jaxlib's
  fast path compares an argument's sharding with the compiled one).

`shard_shape`, `num_devices`, `addressable_devices`, `is_equivalent_to` derive from these.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc

__all__ = [
    "IndivisibleError",
    "num_ways_split",
    "GSPMDSharding",
    "SdyDim",
    "SdyMesh",
    "SdySharding",
    "Sharding",
    "SingleDeviceSharding",
    "hlo_sharding_indices",
    "on_cpp_class",
    "sharding_from_hlo",
]

# Attributes the Python class body always has; they must not overwrite the C++ class's own.
_CLASS_BOOKKEEPING = frozenset({"__module__", "__dict__", "__doc__", "__qualname__", "__weakref__"})

_REPLICATED = xc.HloSharding.replicate()


class IndivisibleError(ValueError):
    """An array dimension is not divisible by the number of pieces a sharding cuts it into
    (JAX: `jax._src.sharding.IndivisibleError`)."""


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

    Subclasses provide the protocol (this module's docstring lists it); the rest derives
    from it.

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
        """The shape of each device's piece of an array of `global_shape`.

        Raises:
          IndivisibleError: a dimension is not divisible by the number of pieces it is cut
            into.
        """
        global_shape = tuple(global_shape)
        hlo = self._to_xla_hlo_sharding(len(global_shape))
        partitions = num_ways_split(hlo, len(global_shape))
        out = []
        for dim, (size, ways) in enumerate(zip(global_shape, partitions, strict=False)):
            quotient, remainder = divmod(size, ways)
            if remainder:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned {ways} "
                    f"times, but the dimension size is {size} (full shape: {global_shape}, "
                    f"per-dimension tiling factors: {partitions} should evenly divide the shape)"
                )
            out.append(quotient)
        return tuple(out) + global_shape[len(out) :]

    def _from_xla_hlo_sharding(self, hlo: xc.HloSharding) -> Sharding:
        # how an executable's output with layout `hlo` on these devices is reported
        return sharding_from_hlo(self._device_assignment, hlo, self.memory_kind)

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

    def _to_sdy_sharding(self, num_dimensions: int) -> SdySharding:
        return SdySharding(SdyMesh((), (), None), (SdyDim(),) * num_dimensions)


# ----- Shardy descriptions ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SdyMesh:
    """A Shardy mesh: named axes of given sizes over the devices of a placement.

    Attributes:
      axis_names, axis_sizes: the mesh axes, major to minor.
      device_ids: the logical device ids (positions in the placement's device assignment) in
        mesh order, or None for 0, 1, 2 ... (Shardy's iota default).
    """

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    device_ids: tuple[int, ...] | None = None

    def text(self) -> str:
        """The mesh attribute as Shardy prints it (``<["x"=4, "y"=2]>``)."""
        axes = ", ".join(f'"{n}"={s}' for n, s in zip(self.axis_names, self.axis_sizes, strict=True))
        ids = "" if self.device_ids is None else f", device_ids=[{', '.join(map(str, self.device_ids))}]"
        return f"<[{axes}]{ids}>"


@dataclasses.dataclass(frozen=True)
class SdyDim:
    """How one array dimension is split: over `axes` (major first); `is_open` lets the
    partitioner add axes (an unconstrained dimension)."""

    axes: tuple[str, ...] = ()
    is_open: bool = False

    def text(self) -> str:
        names = ", ".join(f'"{a}"' for a in self.axes)
        if self.is_open:
            return f"{{{names}, ?}}" if names else "{?}"
        return f"{{{names}}}"


@dataclasses.dataclass(frozen=True)
class SdySharding:
    """A Shardy tensor sharding: a mesh, one `SdyDim` per dimension, explicitly replicated
    axes."""

    mesh: SdyMesh
    dims: tuple[SdyDim, ...]
    replicated_axes: tuple[str, ...] = ()

    def text(self, mesh_symbol: str) -> str:
        """The sharding attribute's body (``<@mesh, [{"x"}, {}]>``)."""
        dims = ", ".join(d.text() for d in self.dims)
        replicated = ""
        if self.replicated_axes:
            replicated = ", replicated={" + ", ".join(f'"{a}"' for a in self.replicated_axes) + "}"
        return f"<@{mesh_symbol}, [{dims}]{replicated}>"


# ----- HloSharding arithmetic ---------------------------------------------------------------


def _data_tile_dims(hlo: xc.HloSharding) -> tuple[list[int], int]:
    """The tile assignment's dimensions, and how many leading ones split data (the trailing
    ones are replication groups)."""
    dims = list(hlo.tile_assignment_dimensions())
    trailing = len(hlo.subgroup_types()) + (1 if hlo.replicate_on_last_tile_dim() else 0)
    return dims, len(dims) - trailing


def num_ways_split(hlo: xc.HloSharding, ndim: int) -> list[int]:
    """How many pieces `hlo` cuts each of an `ndim`-dimensional array's dimensions into."""
    if hlo.is_replicated() or not hlo.is_tiled():
        return [1] * ndim
    dims, n_data = _data_tile_dims(hlo)
    return dims[:n_data]


def hlo_sharding_indices(hlo: xc.HloSharding, shape: Sequence[int], num_devices: int):
    """The index (a tuple of slices) each logical device holds of an array of `shape`.

    Args:
      hlo: a replicated, maximal or tiled `HloSharding`.
      shape: the global shape.
      num_devices: the number of devices of the placement.

    Returns:
      A list with one tuple of slices per logical device.

    Example:
      >>> from jaxlib import xla_client as xc
      >>> hlo_sharding_indices(xc.HloSharding.iota_tile([2]), (4,), 2)
      [(slice(0, 2, None),), (slice(2, 4, None),)]
    """
    full = (slice(None),) * len(shape)
    if hlo.is_replicated() or hlo.is_maximal() or not hlo.is_tiled():
        return [full] * num_devices
    if hlo.num_devices() != num_devices:
        raise ValueError(
            f"the sharding {hlo} lays data out over {hlo.num_devices()} devices, but "
            f"{num_devices} devices were given; give as many devices as its tile assignment."
        )
    dims, n_data = _data_tile_dims(hlo)
    if n_data != len(shape):
        raise ValueError(
            f"the sharding {hlo} splits {n_data} dimensions, but the array has {len(shape)} "
            f"(shape {tuple(shape)}); use a sharding of the array's rank."
        )
    devices = np.asarray(hlo.tile_assignment_devices()).reshape(dims)
    indices: list = [full] * num_devices
    for position in itertools.product(*(range(d) for d in dims)):
        index = []
        for axis, (tile, tiles, size) in enumerate(zip(position, dims, shape, strict=False)):
            if axis >= n_data or tiles == 1:
                index.append(slice(None))
                continue
            chunk = -(-size // tiles)
            index.append(slice(min(tile * chunk, size), min((tile + 1) * chunk, size)))
        indices[int(devices[position])] = tuple(index)
    return indices


def _hlo_to_sdy(hlo: xc.HloSharding, ndim: int, num_devices: int) -> SdySharding:
    """An `HloSharding` as Shardy sees it: one mesh axis per tiled dimension (``_a0`` ...)
    and per replication group, over the tile assignment's device order."""
    if hlo.is_replicated() or not hlo.is_tiled():
        return SdySharding(SdyMesh(("_a0",), (num_devices,)), (SdyDim(),) * ndim)
    dims, n_data = _data_tile_dims(hlo)
    names, sizes, data_dims = [], [], []
    for i, size in enumerate(dims):
        name = f"_a{i}"
        if size > 1:
            names.append(name)
            sizes.append(size)
        data_dims.append(SdyDim((name,)) if i < n_data and size > 1 else SdyDim())
    ids = tuple(int(d) for d in hlo.tile_assignment_devices())
    device_ids = None if ids == tuple(range(len(ids))) else ids
    return SdySharding(SdyMesh(tuple(names), tuple(sizes), device_ids), tuple(data_dims[:n_data]))


def sharding_from_hlo(devices: Sequence[xc.Device], hlo: xc.HloSharding, memory_kind=None):
    """The laminax sharding for data laid out by `hlo` over `devices` (logical order): a
    `SingleDeviceSharding` for one device, a `GSPMDSharding` otherwise."""
    if len(devices) == 1:
        return SingleDeviceSharding(devices[0], memory_kind=memory_kind)
    return GSPMDSharding(tuple(devices), hlo, memory_kind=memory_kind)


def _unpickle_gspmd_sharding(devices, proto, memory_kind):
    op = xc.OpSharding()
    op.ParseFromString(proto)
    return GSPMDSharding(devices, op, memory_kind=memory_kind)


@on_cpp_class(_jax.GSPMDSharding)
class GSPMDSharding(Sharding):
    """Devices and an XLA `HloSharding` (JAX: `jax.sharding.GSPMDSharding`): the layout in
    XLA's own terms, with no mesh. What compiled programs report when no richer sharding
    describes their outputs.

    Constructed as ``GSPMDSharding(devices, hlo_sharding, *, memory_kind=None)``, devices in
    the order the tile assignment numbers them.

    Example:
      >>> from jaxlib import xla_client as xc
      >>> from laminax_dispatch import GSPMDSharding, devices
      >>> s = GSPMDSharding(devices()[:1], xc.HloSharding.replicate())
      >>> s.is_fully_replicated, s.shard_shape((4, 2))
      (True, (4, 2))
    """

    def __reduce__(self):
        proto = self._hlo_sharding.to_proto().SerializeToString()
        return (_unpickle_gspmd_sharding, (tuple(self._devices), proto, self._memory_kind))

    def __repr__(self) -> str:
        return f"GSPMDSharding({self._hlo_sharding!r}, memory_kind={self._memory_kind})"

    @functools.cached_property
    def _hash(self) -> int:
        return hash((self._internal_device_list, self._hlo_sharding, self._memory_kind))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, _jax.GSPMDSharding):
            return False
        return (
            self._internal_device_list == other._internal_device_list
            and self._hlo_sharding == other._hlo_sharding
            and self._memory_kind == other._memory_kind
        )

    @functools.cached_property
    def device_set(self) -> set[xc.Device]:
        """The devices, as a set."""
        return set(self._devices)

    @property
    def memory_kind(self) -> str | None:
        """The memory space the data lives in."""
        return self._memory_kind

    @functools.cached_property
    def _device_assignment(self) -> tuple[xc.Device, ...]:
        return tuple(self._devices)

    @functools.cached_property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return self._hlo_sharding.is_replicated() or len(self._devices) == 1

    def with_memory_kind(self, kind: str) -> GSPMDSharding:
        """The same layout in another memory kind."""
        return GSPMDSharding(self._devices, self._hlo_sharding, memory_kind=kind)

    def devices_indices_map(self, global_shape) -> Mapping[xc.Device, tuple[slice, ...]]:
        """Device -> the index of its piece of an array of `global_shape`."""
        devices = self._device_assignment
        indices = hlo_sharding_indices(self._hlo_sharding, tuple(global_shape), len(devices))
        return dict(zip(devices, indices, strict=True))

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xc.HloSharding:
        return self._hlo_sharding

    def check_compatible_aval(self, aval_shape) -> None:
        """Raises ValueError if the sharding tiles a different number of dimensions than an
        array of `aval_shape` has."""
        hlo = self._hlo_sharding
        if hlo.is_replicated() or not hlo.is_tiled():
            return
        _, n_data = _data_tile_dims(hlo)
        if len(aval_shape) != n_data:
            raise ValueError(
                f"Sharding {self} is only valid for values of rank {n_data}, but was applied "
                f"to a value of rank {len(aval_shape)}."
            )

    def _to_sdy_sharding(self, num_dimensions: int) -> SdySharding:
        return _hlo_to_sdy(self._hlo_sharding, num_dimensions, len(self._devices))

    def _with_new_dim(self, axis: int, ndim: int) -> GSPMDSharding:
        """The layout of an array with one more dimension, inserted unsplit at `axis` (how
        vmap keeps a sharding of the unbatched value)."""
        hlo = self._hlo_sharding
        if hlo.is_replicated() or not hlo.is_tiled():
            return self
        proto = hlo.to_proto()
        dims = list(proto.tile_assignment_dimensions)
        proto.tile_assignment_dimensions = dims[:axis] + [1] + dims[axis:]
        return GSPMDSharding(self._devices, proto, memory_kind=self._memory_kind)

    @classmethod
    def get_replicated(cls, devices, *, memory_kind: str | None = None) -> GSPMDSharding:
        """Every device of `devices` holding the whole array."""
        return cls(tuple(devices), _REPLICATED, memory_kind=memory_kind)
