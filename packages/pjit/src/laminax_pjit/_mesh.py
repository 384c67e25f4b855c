"""Meshes: devices arranged in an n-dimensional grid with named axes, and the mesh in context.

`Mesh(devices, axis_names)` holds real devices; `AbstractMesh(axis_sizes, axis_names)` only the
shape (what tracing needs). Both are interned by value, as in JAX: equal meshes are the same
object, so they hash and compare by identity, which keeps them cheap in cache keys.

Three contexts say which mesh bare `PartitionSpec`s refer to, each a config option included in
jit's cache keys (so a jitted function compiled under one mesh is not reused under another):

- ``with mesh:`` (the seed's resource environment, which `pjit` reads; JAX 0.10.2 deprecates
  it in favour of `set_mesh`): `thread_resources`, option ``mesh_context_manager``;
- `set_mesh(mesh)` / `use_mesh(mesh)`: the concrete mesh (``device_context``) and its
  abstract mesh (``abstract_mesh_context_manager``);
- `use_abstract_mesh(abstract_mesh)`: the abstract mesh alone.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import functools
import math
import threading
import warnings
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core.config import config
from laminax_core.internal import trace_context

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "ResourceEnv",
    "get_abstract_mesh",
    "get_concrete_mesh",
    "get_mesh",
    "set_mesh",
    "thread_resources",
    "use_abstract_mesh",
    "use_mesh",
    "show_axes",
    "resource_mesh",
]


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (JAX: `jax.sharding.AxisType`).

    ``Auto``: the compiler propagates shardings along it; ``Explicit``: shardings along it are
    part of array types; ``Manual``: inside `shard_map`, the program sees one shard per device.
    """

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


def show_axes(axes) -> str:
    """Axis names as messages print them: ```x`, `y```."""
    return ", ".join(sorted(f"`{a}`" for a in axes))


def _normalize_axis_types(axis_names: tuple, axis_types, who: str) -> tuple[AxisType, ...]:
    if axis_types is None:
        return (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(
            f"axis_types passed to {who} must be of type `jax.sharding.AxisType`. Got "
            f"{axis_types} of type {tuple(type(t) for t in axis_types)}; use for example "
            "(AxisType.Explicit, AxisType.Auto)."
        )
    if len(axis_types) != len(axis_names):
        raise ValueError(
            f"Number of axis names should match the number of axis_types. Got "
            f"axis_names={axis_names} and axis_types={axis_types}; give one type per axis."
        )
    return axis_types


class _AxisTypeQueries:
    """What both kinds of mesh answer about their axes' types."""

    axis_names: tuple
    axis_types: tuple[AxisType, ...]

    def _all(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    def _any(self, kind: AxisType) -> bool:
        return any(t == kind for t in self.axis_types)

    are_all_axes_auto = property(lambda self: self._all(AxisType.Auto))
    are_all_axes_explicit = property(lambda self: self._all(AxisType.Explicit))
    are_all_axes_manual = property(lambda self: self._all(AxisType.Manual))
    _any_axis_auto = property(lambda self: self._any(AxisType.Auto))
    _any_axis_explicit = property(lambda self: self._any(AxisType.Explicit))
    _any_axis_manual = property(lambda self: self._any(AxisType.Manual))

    def _axes_of_type(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t == kind)

    auto_axes = property(lambda self: self._axes_of_type(AxisType.Auto))
    explicit_axes = property(lambda self: self._axes_of_type(AxisType.Explicit))
    manual_axes = property(lambda self: self._axes_of_type(AxisType.Manual))

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape(self) -> collections.OrderedDict:
        """Axis name -> size, in mesh order."""
        return collections.OrderedDict(self.shape_tuple)

    @property
    def empty(self) -> bool:
        return self.size == 0


_meshes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class Mesh(_AxisTypeQueries, contextlib.ContextDecorator):
    """Devices in an n-dimensional array with one name per axis (JAX: `jax.sharding.Mesh`).

    Args:
      devices: an array (or nested sequence) of devices.
      axis_names: one name per dimension of `devices` (a single string for a 1-D mesh).
      axis_types: one `AxisType` per axis (default: all ``Auto``).

    ``with mesh:`` makes it the resource environment `pjit` and `with_sharding_constraint`
    resolve bare `PartitionSpec`s against (JAX 0.10.2 deprecates that in favour of
    `set_mesh`, and so warns).

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import devices
      >>> mesh = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
      >>> mesh.shape, mesh.size
      (OrderedDict({'x': 4, 'y': 2}), 8)
    """

    def __new__(cls, devices, axis_names, axis_types=None):
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(name is None for name in axis_names):
            raise ValueError(
                f"Mesh axis names cannot be None. Got: {axis_names}; name every axis."
            )
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length "
                "of its second argument (`axis_names`), but got "
                f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}."
            )
        axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
        flat = tuple(devices.flat)
        empty = not axis_names and (not flat or flat[0] is None)
        key = (flat, devices.shape, axis_names, axis_types)
        mesh = _meshes.get(key)
        if mesh is None:
            mesh = object.__new__(cls)
            frozen = np.array(flat, dtype=object).reshape(devices.shape)
            frozen.flags.writeable = False
            object.__setattr__(mesh, "devices", frozen)
            object.__setattr__(mesh, "axis_names", axis_names)
            object.__setattr__(mesh, "axis_types", axis_types)
            object.__setattr__(mesh, "size", 0 if empty else math.prod(devices.shape))
            mesh = _meshes.setdefault(key, mesh)
        return mesh

    def __setattr__(self, name, value):
        raise AttributeError("Mesh is immutable; build another (mesh.update(...)).")

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return self.devices.shape

    @property
    def is_scalar(self) -> bool:
        return self.size == 1 and not self.axis_names

    @functools.cached_property
    def device_ids(self) -> np.ndarray:
        """The devices' ids, in mesh shape."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @functools.cached_property
    def _flat_devices_tuple(self) -> tuple:
        return () if self.empty else tuple(self.devices.flat)

    @functools.cached_property
    def _flat_devices_set(self) -> set:
        return set(self._flat_devices_tuple)

    @functools.cached_property
    def _internal_device_list(self):
        # jaxlib's NamedSharding reads this: its device list (None would mean abstract)
        return xc.DeviceList(self._flat_devices_tuple)

    @functools.cached_property
    def local_devices(self) -> list:
        return [d for d in self.devices.flat if d.process_index == d.client.process_index()]

    @functools.cached_property
    def _local_devices_set(self) -> set:
        return set(self.local_devices)

    @property
    def is_multi_process(self) -> bool:
        return self.devices.size != len(self.local_devices)

    @property
    def local_mesh(self) -> Mesh:
        """The sub-mesh of this process's devices (the mesh itself in one process)."""
        if self.empty or not self.is_multi_process:
            return self
        local = np.vectorize(lambda d: d in self._local_devices_set, otypes=[bool])(self.devices)
        hull = []
        for axis in range(self.devices.ndim):
            others = tuple(a for a in range(self.devices.ndim) if a != axis)
            hit = np.flatnonzero(local.any(others))
            hull.append(slice(int(hit.min()), int(hit.max()) + 1))
        if not local[tuple(hull)].all():
            raise ValueError(
                "When passing host local inputs to pjit, devices connected to a single host "
                "must form a contiguous subcube of the global device mesh"
            )
        return Mesh(self.devices[tuple(hull)], self.axis_names, self.axis_types)

    @functools.cached_property
    def abstract_mesh(self) -> AbstractMesh:
        """This mesh's shape, names and types, without devices."""
        if not self.axis_names:
            return empty_abstract_mesh
        d = self.devices.flat[0]
        device = AbstractDevice(d.device_kind, getattr(d, "core_count", None), d.platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types, abstract_device=device)

    def update(self, devices=None, axis_names=None, axis_types=None) -> Mesh:
        """A mesh with some parts replaced."""
        return Mesh(
            self.devices if devices is None else devices,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
        )

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        axes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self.axis_types})"
        )

    # -- the resource environment (``with mesh:``) -------------------------------------------

    def __enter__(self) -> Mesh:
        warnings.warn(
            "`with mesh:` context manager has been deprecated. Please use `with "
            "jax.set_mesh(mesh):` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        env = thread_resources.stack[-1].with_mesh(self)
        thread_resources.stack.append(env)
        thread_resources.env = env
        _sync_resource_option()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> bool:
        thread_resources.stack.pop()
        thread_resources.env = thread_resources.stack[-1]
        _sync_resource_option()
        return False


class AbstractDevice(NamedTuple):
    """What kind of device a mesh is made of, without the devices themselves."""

    device_kind: str
    num_cores: int | None
    platform: str


_abstract_meshes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class AbstractMesh(_AxisTypeQueries):
    """A mesh's axis sizes, names and types, without devices (JAX:
    `jax.sharding.AbstractMesh`): what traced code and `NamedSharding`s for tracing need.

    Example:
      >>> AbstractMesh((4, 2), ("x", "y")).shape_tuple
      (('x', 4), ('y', 2))
    """

    def __new__(cls, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
        if len(axis_sizes) != len(axis_names):
            raise ValueError(
                f"AbstractMesh: {len(axis_sizes)} axis sizes {axis_sizes} for "
                f"{len(axis_names)} axis names {axis_names}; give one size per name."
            )
        axis_types = _normalize_axis_types(axis_names, axis_types, "AbstractMesh")
        key = (axis_sizes, axis_names, axis_types, abstract_device)
        mesh = _abstract_meshes.get(key)
        if mesh is None:
            mesh = object.__new__(cls)
            for name, value in zip(
                ("axis_sizes", "axis_names", "axis_types", "abstract_device", "size"),
                (*key, math.prod(axis_sizes) if axis_sizes else 0),
                strict=True,
            ):
                object.__setattr__(mesh, name, value)
            mesh = _abstract_meshes.setdefault(key, mesh)
        return mesh

    def __setattr__(self, name, value):
        raise AttributeError("AbstractMesh is immutable; build another (mesh.update(...)).")

    def __reduce__(self):
        return (_rebuild_abstract, (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device))

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {v}" for n, v in self.shape_tuple) if self.shape_tuple else "()"
        device = ""
        if self.abstract_device is not None:
            d = self.abstract_device
            device = f", device_kind={d.device_kind}, num_cores={d.num_cores}, platform={d.platform}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"

    @property
    def _internal_device_list(self):
        return None  # jaxlib's NamedSharding: no devices

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs) -> AbstractMesh:
        """A mesh with some parts replaced."""
        return AbstractMesh(
            self.axis_sizes if axis_sizes is None else axis_sizes,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
            abstract_device=kwargs.get("abstract_device", self.abstract_device),
        )

    def update_axis_types(self, name_to_type: dict) -> AbstractMesh:
        """The same mesh with some axes' types replaced."""
        types = tuple(name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types, strict=True))
        return self.update(axis_types=types)

    def _no_devices(self, what: str):
        raise ValueError(f"AbstractMesh does not implement {what}: it has no devices; use a Mesh.")

    devices = property(lambda self: self._no_devices("devices"))
    device_ids = property(lambda self: self._no_devices("device_ids"))
    local_devices = property(lambda self: self._no_devices("local_devices"))
    local_mesh = property(lambda self: self._no_devices("local_mesh"))
    is_multi_process = property(lambda self: self._no_devices("is_multi_process"))

    def __enter__(self):
        self._no_devices("__enter__")

    def __exit__(self, *exc):
        self._no_devices("__exit__")


def _rebuild_abstract(axis_sizes, axis_names, axis_types, abstract_device) -> AbstractMesh:
    return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


empty_abstract_mesh = AbstractMesh((), ())
empty_concrete_mesh = Mesh(np.empty((), dtype=object), ())


# ----- the resource environment (``with mesh:``) ----------------------------------------------


class ResourceEnv(NamedTuple):
    """The mesh of the enclosing ``with mesh:`` blocks (the seed's resource environment)."""

    physical_mesh: Mesh

    def with_mesh(self, mesh: Mesh) -> ResourceEnv:
        return self._replace(physical_mesh=mesh)

    @property
    def shape(self):
        return self.physical_mesh.shape

    def __repr__(self) -> str:
        axes = ", ".join(f"'{k}': {v}" for k, v in self.physical_mesh.shape.items())
        return f"ResourceEnv(mesh=Mesh({axes}))"


EMPTY_ENV = ResourceEnv(empty_concrete_mesh)


class _ThreadResources(threading.local):
    def __init__(self):
        self.stack = [EMPTY_ENV]
        self.env = EMPTY_ENV


thread_resources = _ThreadResources()

_CONTEXT_HELP = " (internal: which mesh bare PartitionSpecs refer to; part of jit cache keys)."
mesh_context_manager = config.define_string_or_object_state(
    "mesh_context_manager",
    None,
    "The meshes of the enclosing `with mesh:` blocks" + _CONTEXT_HELP,
    include_in_jit_key=True,
    include_in_trace_context=True,
)
device_context = config.define_string_or_object_state(
    "device_context",
    None,
    "The concrete mesh set by set_mesh" + _CONTEXT_HELP,
    include_in_jit_key=True,
    include_in_trace_context=True,
)
abstract_mesh_context_manager = config.define_string_or_object_state(
    "abstract_mesh_context_manager",
    None,
    "The abstract mesh set by set_mesh or use_abstract_mesh" + _CONTEXT_HELP,
    include_in_jit_key=True,
    include_in_trace_context=True,
)


def _sync_resource_option() -> None:
    meshes = tuple(e.physical_mesh for e in thread_resources.stack if not e.physical_mesh.empty)
    mesh_context_manager.set_local(meshes)


def resource_mesh() -> Mesh:
    """The mesh of the innermost ``with mesh:`` block (empty when there is none)."""
    return thread_resources.env.physical_mesh


# ----- set_mesh / use_abstract_mesh -----------------------------------------------------------


def _unset_to_none(value):
    return None if value is _jax.config.unset else value


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (`set_mesh`, `use_abstract_mesh`), or the empty one.

    Example:
      >>> get_abstract_mesh().empty
      True
    """
    value = abstract_mesh_context_manager.value
    return empty_abstract_mesh if value is None else value


def get_concrete_mesh() -> Mesh:
    """The mesh `set_mesh` put in context, or the empty mesh."""
    value = device_context.value
    return empty_concrete_mesh if value is None else value


def get_mesh() -> Mesh:
    """The mesh `set_mesh` put in context (JAX: `jax.sharding.get_mesh`); outside jit only.

    Raises:
      ValueError: called while tracing (use `get_abstract_mesh` there).
    """
    if trace_context.trace is not None:
        raise ValueError(
            "`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
            "`jax.sharding.get_abstract_mesh()`?"
        )
    return get_concrete_mesh()


class set_mesh:
    """Puts `mesh` in context for this thread: bare `PartitionSpec`s then refer to it (JAX:
    `jax.set_mesh`). Works as a global setter (``set_mesh(mesh)``) and as a context manager
    (``with set_mesh(mesh): ...``, restoring the previous mesh on exit).

    Raises:
      ValueError: `mesh` is not a `Mesh`, has `Manual` axes, or this is called under jit.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import devices
      >>> mesh = Mesh(np.array(devices()[:2]), ("x",))
      >>> with set_mesh(mesh):
      ...     get_abstract_mesh().shape_tuple
      (('x', 2),)
    """

    __slots__ = ("prev_abstract_mesh", "prev_mesh")

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(
                f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}; build one with "
                "jax.make_mesh(shape, names)."
            )
        if trace_context.trace is not None:
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        if mesh is not None and mesh._any_axis_manual:
            raise ValueError(
                f"mesh {mesh} contains manual axes which is not allowed when using "
                "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` mode instead."
            )
        abstract = empty_abstract_mesh if mesh is None else mesh.abstract_mesh
        concrete = empty_concrete_mesh if mesh is None else mesh
        self.prev_abstract_mesh = abstract_mesh_context_manager.swap_local(abstract)
        self.prev_mesh = device_context.swap_local(concrete)

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        abstract_mesh_context_manager.set_local(self.prev_abstract_mesh)
        device_context.set_local(self.prev_mesh)


@contextlib.contextmanager
def use_mesh(mesh: Mesh):
    """``with use_mesh(mesh):``: `set_mesh` as a context manager only (JAX's earlier name)."""
    with set_mesh(mesh):
        yield


class use_abstract_mesh:
    """Puts an `AbstractMesh` in context for this thread (JAX: `jax.sharding.use_abstract_mesh`).

    Raises:
      ValueError: `mesh` is not an `AbstractMesh`, or it changes the size of the mesh already
        in context.
    """

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(
                f"Expected mesh of type `jax.sharding.AbstractMesh`. Got type: {type(mesh)}"
            )
        self.mesh = mesh

    def __enter__(self) -> None:
        self.prev = abstract_mesh_context_manager.swap_local(self.mesh)
        prev = _unset_to_none(self.prev)
        if prev is not None and not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            abstract_mesh_context_manager.set_local(self.prev)
            raise ValueError(
                f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: {self.mesh} "
                f"with size={self.mesh.size} and prev mesh: {prev} with size={prev.size}"
            )

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        abstract_mesh_context_manager.set_local(self.prev)
