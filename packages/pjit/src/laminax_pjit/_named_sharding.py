"""`NamedSharding`: an array laid out over a `Mesh` by a `PartitionSpec`.

The class is jaxlib's C++ `NamedSharding` (its constructor, equality and hashing are C++, so
the C++ fast path and executables recognise it), with the Python methods of dispatch's
`Sharding` protocol installed on it (`on_cpp_class`): the devices in mesh order, the
`HloSharding` and Shardy description the lowering writes, the index each device holds, and the
reverse (`_from_xla_hlo_sharding`: an executable's output layout as a spec on the same mesh).

jaxlib 0.10.2's C++ constructor checks a new sharding's spec by calling
``jax._src.named_sharding.check_pspec(mesh, spec)``, a function it imports once and then keeps.
laminax never imports JAX: at import, this module puts a stand-in module holding its own
`check_pspec` under those names in ``sys.modules`` for the one construction that makes C++ import
and keep it, and then removes the stand-in (`_install_spec_check`).
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
import types
from collections.abc import Mapping

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_dispatch import Sharding
from laminax_dispatch.internal import (
    SdyDim,
    SdyMesh,
    SdySharding,
    on_cpp_class,
    sharding_from_hlo,
)

from laminax_pjit._mesh import AbstractMesh, AxisType, Mesh, show_axes
from laminax_pjit._partition_spec import UNCONSTRAINED, PartitionSpec, axes_of

__all__ = [
    "DuplicateSpecError",
    "IndivisibleError",
    "NamedSharding",
    "check_pspec",
    "check_unique_axes",
]


class DuplicateSpecError(ValueError):
    """A `PartitionSpec` names one mesh axis for two dimensions."""


class IndivisibleError(ValueError):
    """An array dimension is not divisible by the number of pieces its spec splits it into."""


# ----- checking a spec against a mesh ---------------------------------------------------------


def check_unique_axes(spec: PartitionSpec, what: str) -> None:
    """Raises `DuplicateSpecError` if `spec` maps one mesh axis to two dimensions."""
    counts: dict = {}
    for entry in spec.partitions:
        for axis in axes_of(entry):
            counts[axis] = counts.get(axis, 0) + 1
    repeated = [a for a, c in counts.items() if c > 1]
    if repeated:
        raise DuplicateSpecError(
            f"A single {what} specification can map every mesh axis to at most one positional "
            f"dimension, but {spec} has duplicate entries for {show_axes(repeated)}"
        )


def check_pspec(mesh, spec, *_unused) -> None:
    """Checks that `spec` fits `mesh` (what a new `NamedSharding` runs, from C++).

    Raises:
      TypeError: `spec` is not a `PartitionSpec`.
      DuplicateSpecError: an axis is used twice.
      ValueError: an axis is not in the mesh; UNCONSTRAINED on a mesh without Auto axes;
        unreduced/reduced axes that are missing or not Explicit.
    """
    if not isinstance(spec, PartitionSpec):
        raise TypeError(
            f"NamedSharding: spec must be a PartitionSpec, got {spec!r} of type "
            f"{type(spec).__name__}; write PartitionSpec({', '.join(map(repr, spec)) if isinstance(spec, tuple) else '...'})."
        )
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError(
            f"NamedSharding: mesh must be a Mesh or AbstractMesh, got {type(mesh).__name__}; "
            "build one with make_mesh(shape, axis_names)."
        )
    check_unique_axes(spec, "NamedSharding spec")
    for entry in spec.partitions:
        for axis in axes_of(entry):
            if axis not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {axis} of {spec} is not found in mesh: "
                    f"{tuple(mesh.axis_names)}."
                )
    if AxisType.Auto not in mesh.axis_types and UNCONSTRAINED in spec.partitions:
        raise ValueError(
            f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`. Got "
            f"mesh axis_types: {mesh.axis_types}"
        )
    for what, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for axis in axes:
            if axis not in mesh.axis_names:
                raise ValueError(
                    f"{what} axes {axis} is not found in mesh.axis_names={mesh.axis_names}. "
                    f"Got pspec={spec}"
                )
            if mesh._name_to_type[axis] is not AxisType.Explicit:
                raise ValueError(
                    f"{what} axes can only refer to mesh axes that is of type `Explicit`. Got "
                    f"{what.lower()} axes: {axes} and mesh: {mesh}"
                )


def _install_spec_check() -> None:
    names = ("jax", "jax._src", "jax._src.named_sharding")
    saved = {name: sys.modules.get(name) for name in names}
    stand_ins = {name: types.ModuleType(name) for name in names}
    stand_ins["jax._src.named_sharding"].check_pspec = check_pspec
    sys.modules.update(stand_ins)
    try:
        _jax.NamedSharding(AbstractMesh((1,), ("_",)), PartitionSpec())
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


_install_spec_check()


# ----- layout arithmetic ----------------------------------------------------------------------


def _dim_splits(mesh, spec: PartitionSpec, ndim: int) -> list[tuple]:
    """For each of `ndim` dimensions, the mesh axes splitting it (size-1 axes dropped)."""
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    splits = [tuple(a for a in axes_of(entry) if sizes[a] != 1) for entry in spec.partitions]
    return splits + [()] * (ndim - len(splits))


@functools.lru_cache(maxsize=4096)
def _hlo_sharding(sharding, ndim: int) -> xc.HloSharding:
    mesh, spec = sharding.mesh, sharding.spec
    if len(spec) > ndim:
        _rank_error(sharding, ndim)
    sizes = [s for s in mesh.axis_sizes if s != 1]
    names = [n for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True) if s != 1]
    position = {n: i for i, n in enumerate(names)}
    splits = _dim_splits(mesh, spec, ndim)
    used = {a for axes in splits for a in axes}
    # mesh axes not splitting data: replicated, or manual / unreduced subgroups
    special = {a: xc.OpSharding.Type.MANUAL for a in mesh.manual_axes}
    special.update({a: xc.OpSharding.Type.UNREDUCED for a in spec.unreduced})
    rest = [n for n in names if n not in used]
    if not used and not any(n in special for n in rest):
        return xc.HloSharding.replicate()
    dims = [math.prod(sizes[position[a]] for a in axes) for axes in splits]
    perm = [position[a] for axes in splits for a in axes]
    groups: dict = {}
    for n in rest:
        groups.setdefault(special.get(n, xc.OpSharding.Type.REPLICATED), []).append(n)
    subgroup_types = []
    for kind, axes in sorted(groups.items(), key=lambda item: item[0].value):
        subgroup_types.append(kind)
        dims.append(math.prod(sizes[position[a]] for a in axes))
        perm.extend(position[a] for a in axes)
    if sharding._logical_device_ids is None:
        return xc.HloSharding.iota_tile(
            dims=dims, reshape_dims=sizes, transpose_perm=perm, subgroup_types=subgroup_types
        )
    ids = np.asarray(sharding._logical_device_ids).reshape(sizes).transpose(perm).reshape(dims)
    return xc.HloSharding.subgroup_with_device_ordering(ids, subgroup_types=subgroup_types)


def _rank_error(sharding, ndim: int):
    hint = " For scalars the PartitionSpec should be P()" if ndim == 0 else ""
    raise ValueError(
        f"Sharding {sharding} is only valid for values of rank at least {len(sharding.spec)}, "
        f"but was applied to a value of rank {ndim}.{hint}"
    )


@functools.lru_cache(maxsize=4096)
def _indices(sharding, shape: tuple) -> dict:
    mesh = sharding.mesh
    pieces = sharding.shard_shape(shape)  # raises for uneven splits, as JAX does
    splits = _dim_splits(mesh, sharding.spec, len(shape))
    axis_index = {n: i for i, n in enumerate(mesh.axis_names)}
    sizes = mesh.axis_sizes
    out = {}
    for coords in itertools.product(*(range(s) for s in sizes)):
        index = []
        for axes, piece in zip(splits, pieces, strict=True):
            if not axes:
                index.append(slice(None))
                continue
            block = 0
            for a in axes:  # major to minor
                block = block * sizes[axis_index[a]] + coords[axis_index[a]]
            index.append(slice(block * piece, (block + 1) * piece))
        out[mesh.devices[coords]] = tuple(index)
    return out


@functools.lru_cache(maxsize=1024)
def _parse_hlo(sharding, hlo: xc.HloSharding) -> PartitionSpec | None:
    """The spec on `sharding`'s mesh whose layout is `hlo`, or None when none is: tries the
    ways of giving the mesh's axes to dimensions (a mesh has few axes)."""
    mesh = sharding.mesh
    if hlo.is_replicated():
        return PartitionSpec()
    if not hlo.is_tiled() or any(
        t != xc.OpSharding.Type.REPLICATED for t in hlo.subgroup_types()
    ):
        return None
    tiles = list(hlo.tile_assignment_dimensions())
    trailing = len(hlo.subgroup_types()) + (1 if hlo.replicate_on_last_tile_dim() else 0)
    ndim = len(tiles) - trailing
    tiles = tiles[:ndim]
    names = [n for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True) if s != 1]
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    for owner in itertools.product(range(ndim + 1), repeat=len(names)):  # ndim: replicated
        groups = [[n for n, o in zip(names, owner, strict=True) if o == d] for d in range(ndim)]
        if any(math.prod(sizes[a] for a in g) != t for g, t in zip(groups, tiles, strict=True)):
            continue
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            entries = [None if not o else o[0] if len(o) == 1 else tuple(o) for o in orders]
            while entries and entries[-1] is None:
                entries.pop()
            spec = PartitionSpec(*entries)
            candidate = NamedSharding(
                mesh, spec, _logical_device_ids=sharding._logical_device_ids
            )
            if candidate._to_xla_hlo_sharding(ndim) == hlo:
                return spec
    return None


# ----- the class ------------------------------------------------------------------------------


def _unpickle_named_sharding(mesh, spec, memory_kind, logical_device_ids):
    return NamedSharding(mesh, spec, memory_kind=memory_kind, _logical_device_ids=logical_device_ids)


def _concrete(sharding, what: str):
    if isinstance(sharding.mesh, AbstractMesh):
        raise ValueError(
            f"{what} is not implemented for `jax.sharding.AbstractMesh`: a NamedSharding on an "
            "abstract mesh has no devices; use a Mesh."
        )


@on_cpp_class(_jax.NamedSharding)
class NamedSharding(Sharding):
    """An array laid out over a mesh by a `PartitionSpec` (JAX: `jax.sharding.NamedSharding`).

    Constructed as ``NamedSharding(mesh, spec, *, memory_kind=None)``: dimension ``i`` of an
    array is split over the mesh axes ``spec[i]`` names; the mesh axes the spec does not use
    replicate it.

    Raises:
      TypeError: `spec` is not a `PartitionSpec`, `mesh` not a mesh.
      ValueError: an axis of `spec` is not in `mesh` or appears twice.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import devices
      >>> mesh = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
      >>> s = NamedSharding(mesh, PartitionSpec("x"))
      >>> s.shard_shape((8, 6)), s.is_fully_replicated
      ((2, 6), False)
    """

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        ids = (
            ""
            if self._logical_device_ids is None
            else f", logical_device_ids={self._logical_device_ids}"
        )
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{memory}{ids})"

    def __reduce__(self):
        return (
            _unpickle_named_sharding,
            (self.mesh, self.spec, self._memory_kind, self._logical_device_ids),
        )

    @property
    def memory_kind(self) -> str | None:
        """The memory space the data lives in (``'device'`` by default)."""
        return self._memory_kind

    @property
    def num_devices(self) -> int:
        """The number of devices of the mesh."""
        return self.mesh.size

    @property
    def device_set(self) -> set:
        """The mesh's devices, as a set."""
        _concrete(self, "device_set")
        return self.mesh._flat_devices_set

    @property
    def _device_assignment(self) -> tuple:
        _concrete(self, "_device_assignment")
        return self.mesh._flat_devices_tuple

    @property
    def addressable_devices(self) -> set:
        """The mesh's devices that belong to this process."""
        _concrete(self, "addressable_devices")
        return self.mesh._local_devices_set

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process reaches every device of the mesh."""
        _concrete(self, "is_fully_addressable")
        return self._internal_device_list.is_fully_addressable

    @property
    def _is_concrete(self) -> bool:
        return not isinstance(self.mesh, AbstractMesh)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array (no mesh axis of size > 1 splits it)."""
        if self.mesh.size == 1:
            return True
        if self.spec.unreduced:
            return False
        sizes = dict(zip(self.mesh.axis_names, self.mesh.axis_sizes, strict=True))
        return all(sizes[a] == 1 for entry in self.spec.partitions for a in axes_of(entry))

    @property
    def replicated_axes(self) -> frozenset:
        """The mesh axes the spec does not use."""
        used = {a for entry in self.spec.partitions for a in axes_of(entry)}
        return frozenset(self.mesh.axis_names) - used - self.spec.unreduced - self.spec.reduced

    # -- core's aval-sharding protocol (`laminax_core._sharding_rules`) ----------------------

    @property
    def aval_partitions(self) -> tuple:
        """The spec's entries, one per dimension of the typed array."""
        return self.spec.partitions

    @property
    def aval_mesh(self):
        return self.mesh

    @property
    def aval_axis_sizes(self) -> dict:
        return dict(self.mesh.shape_tuple)

    def with_aval_partitions(self, entries) -> NamedSharding:
        """The same mesh with other per-dimension entries (a typed result's sharding)."""
        return NamedSharding(self.mesh, PartitionSpec(*entries))

    def with_memory_kind(self, kind: str) -> NamedSharding:
        """The same layout in another memory space (``'device'``, ``'pinned_host'`` ...)."""
        return self.update(memory_kind=kind)

    def update(self, **kwargs) -> NamedSharding:
        """A sharding with some of ``mesh``, ``spec``, ``memory_kind`` replaced."""
        spec = kwargs.pop("spec", self.spec)
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(
            kwargs.pop("mesh", self.mesh),
            spec,
            memory_kind=kwargs.pop("memory_kind", self._memory_kind),
            _logical_device_ids=kwargs.pop("_logical_device_ids", self._logical_device_ids),
        )

    def check_compatible_aval(self, aval_shape) -> None:
        """Raises ValueError if the spec has more entries than the array has dimensions."""
        if len(aval_shape) < len(self.spec):
            _rank_error(self, len(aval_shape))

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        """Each device's piece of an array of `global_shape`.

        Raises:
          IndivisibleError (a ValueError): a dimension does not split evenly.
        """
        shape = tuple(global_shape)
        self.check_compatible_aval(shape)
        sizes = dict(zip(self.mesh.axis_names, self.mesh.axis_sizes, strict=True))
        splits = _dim_splits(self.mesh, self.spec, len(shape))
        parts = [math.prod(sizes[a] for a in axes) for axes in splits]
        out = []
        for dim, (n, p) in enumerate(zip(shape, parts, strict=True)):
            if n % p:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned {p} times, "
                    f"but the dimension size is {n} (full shape: {shape}, per-dimension tiling "
                    f"factors: {parts} should evenly divide the shape)"
                )
            out.append(n // p)
        return tuple(out)

    def devices_indices_map(self, global_shape) -> Mapping:
        """Device -> the tuple of slices of an array of `global_shape` it holds."""
        _concrete(self, "devices_indices_map")
        return _indices(self, tuple(global_shape))

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xc.HloSharding:
        return _hlo_sharding(self, num_dimensions)

    def _to_sdy_sharding(self, num_dimensions: int) -> SdySharding:
        if len(self.spec) > num_dimensions:
            _rank_error(self, num_dimensions)
        dims = [SdyDim()] * num_dimensions
        for i, entry in enumerate(self.spec.partitions):
            dims[i] = SdyDim(is_open=True) if entry is UNCONSTRAINED else SdyDim(axes_of(entry))
        ids = None if self._logical_device_ids is None else tuple(self._logical_device_ids)
        mesh = SdyMesh(tuple(self.mesh.axis_names), tuple(self.mesh.axis_sizes), ids)
        return SdySharding(mesh, tuple(dims))

    def _from_xla_hlo_sharding(self, hlo: xc.HloSharding) -> Sharding:
        # an executable's output layout, reported as a spec on this mesh where one describes it
        spec = None if isinstance(self.mesh, AbstractMesh) else _parse_hlo(self, hlo)
        if spec is not None:
            return NamedSharding(self.mesh, spec, memory_kind=self._memory_kind)
        return sharding_from_hlo(self._device_assignment, hlo, self._memory_kind)
