"""Device meshes for `Mesh` (JAX: `jax.experimental.mesh_utils`), and `make_mesh`.

On CPU the devices keep their order; on GPU they are ordered by id (the backend's numbering,
which follows the interconnect within a host). TPU physical-topology orderings are not made:
laminax has no TPU backend.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from laminax_dispatch import devices as _all_devices

from laminax_pjit._mesh import AxisType, Mesh

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict", "make_mesh"]


def _axis_sizes(shape, who: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(
            f"`{what}` passed to `{who}` should be a sequence of ints. Got {shape}"
        ) from None


device_kind_handler_dict: dict[str, Callable[..., np.ndarray | None]] = {}
"""Mesh builders by device kind (`device.device_kind`), which `create_device_mesh` asks first:
`handler(mesh_shape, devices, contiguous_submeshes=...)` returns the device array, or None to
fall back to the default arrangement. JAX fills it with its TPU topologies' builders; laminax
runs on CPU and GPU, whose default arrangement needs none, so it starts empty for users'."""


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """Arranges `devices` (default: all) in an array of shape `mesh_shape` for `Mesh`.

    Args:
      mesh_shape: the logical mesh's shape, its product the number of devices.
      devices: the devices to arrange (default `devices()`).
      contiguous_submeshes, allow_split_physical_axes: accepted for JAX compatibility; they
        matter only for TPU topologies.

    Raises:
      ValueError: the shape's product is not the number of devices, or it is not ints.

    Example:
      >>> create_device_mesh((4, 2)).shape
      (4, 2)
    """
    del allow_split_physical_axes
    devices = list(_all_devices() if devices is None else devices)
    shape = _axis_sizes(mesh_shape, "create_device_mesh", "mesh_shape")
    if math.prod(shape) != len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must equal the product of mesh_shape {shape}"
        )
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        result = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if result is not None:
            return result
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    array = np.empty(len(devices), dtype=object)
    array[:] = devices
    return array.reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """A mesh over several granules (slices, or processes with ``process_is_granule``): each
    granule is arranged as `mesh_shape`, and the granules as `dcn_mesh_shape`, so the result's
    shape is their elementwise product.

    Raises:
      ValueError: devices lack the granule attribute, or the number of granules is not the
        product of `dcn_mesh_shape`.

    Example:
      >>> create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True).shape
      (2, 4)
    """
    devices = list(_all_devices() if devices is None else devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(
            f"Device {devices[0]} does not have attribute {attr}. See `process_is_granule` option."
        )
    by_granule = collections.defaultdict(list)
    for d in devices:
        by_granule[getattr(d, attr)].append(d)
    keys = sorted(by_granule) if should_sort_granules_by_key else list(by_granule)
    granules = [by_granule[k] for k in keys]
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(
            f"Number of slices {len(granules)} must equal the product of dcn_mesh_shape "
            f"{dcn_mesh_shape}"
        )
    meshes = [
        create_device_mesh(mesh_shape, g, allow_split_physical_axes=allow_split_physical_axes)
        for g in granules
    ]
    layout = np.arange(len(granules)).reshape(dcn_mesh_shape)
    blocks = np.vectorize(lambda i: meshes[i], otypes=[object])(layout)
    return np.block(blocks.tolist())


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: tuple[AxisType, ...] | None = None,
    *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A `Mesh` of the given shape and axis names over the first devices (JAX: `jax.make_mesh`).

    Args:
      axis_shapes: the mesh's shape; its product must not exceed the number of devices.
      axis_names: one name per axis.
      axis_types: one `AxisType` per axis (default: all ``Explicit``, as in JAX 0.10.2).
      devices: the devices to use (default `devices()`); the first ``prod(axis_shapes)``.

    Raises:
      ValueError: more mesh positions than devices, a shape that is not ints, or names that
        do not match the shape.

    Example:
      >>> make_mesh((4, 2), ("x", "y")).shape_tuple
      (('x', 4), ('y', 2))
    """
    devices = list(_all_devices() if devices is None else devices)
    shape = _axis_sizes(axis_shapes, "make_mesh", "axis_shapes")
    size = math.prod(shape)
    if size > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh_shape {shape}")
    mesh_devices = create_device_mesh(shape, devices[:size])
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(shape)
    return Mesh(mesh_devices, axis_names, axis_types=axis_types)
