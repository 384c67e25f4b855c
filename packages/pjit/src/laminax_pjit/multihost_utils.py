"""Moving data between processes of a multi-process run (JAX:
`jax.experimental.multihost_utils`): barriers, gathers and broadcasts written as small
computations over a mesh of every device, and conversions between each process's local
piece of an array and the global Array.

With one process every function works on its own data (nothing to exchange).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
from jaxlib import _jax
from laminax_dispatch import (
    device_put,
    devices,
    jit,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from laminax_pytree import tree_flatten, tree_map, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_pjit._arrays import make_array_from_single_device_arrays
from laminax_pjit._mesh import Mesh
from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._partition_spec import PartitionSpec

__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "sync_global_devices",
]


def _process_mesh() -> Mesh:
    """Every device, one row per process (processes x local devices)."""
    grid = np.array(devices()).reshape(process_count(), local_device_count())
    return Mesh(grid, ("processes", "local_devices"))


def _replicated_result(fun, arg, mesh: Mesh):
    out = jit(fun, out_shardings=NamedSharding(mesh, PartitionSpec()))(arg)
    return np.asarray(out.addressable_data(0))


def _stack_over_processes(host: np.ndarray):
    """A global Array of shape (process_count, *host.shape): row p is process p's `host`."""
    mesh = _process_mesh()
    rows = np.expand_dims(host, 0)
    pieces = [device_put(rows, d) for d in local_devices()]
    sharding = NamedSharding(mesh, PartitionSpec("processes"))
    return make_array_from_single_device_arrays((process_count(), *host.shape), sharding, pieces), mesh


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Every process gets the source process's values (process 0 unless `is_source` says
    which). Leaves must have the same shape and dtype in every process.

    Returns:
      The tree with NumPy arrays holding the source's values.
    """
    if process_count() == 1:
        return tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = process_index() == 0

    def one(leaf):
        host = np.asarray(leaf)
        stacked, mesh = _stack_over_processes(host if is_source else np.zeros_like(host))
        return _replicated_result(lambda x: x.sum(axis=0, dtype=x.dtype), stacked, mesh)

    return tree_map(one, in_tree)


def _allgather_one(leaf, tiled: bool):
    if isinstance(leaf, _jax.ArrayImpl) and not leaf.is_fully_addressable:
        if not tiled:
            raise ValueError(
                "process_allgather: gathering a global Array that is not fully addressable "
                "only supports tiled=True (the result is the global array)."
            )
        sharding = leaf.sharding
        replicated = (NamedSharding(sharding.mesh, PartitionSpec())
                      if isinstance(sharding, NamedSharding) else None)
        if replicated is None:
            raise TypeError(
                "process_allgather: a global Array must be laid out by a NamedSharding, got "
                f"{type(sharding).__name__}."
            )
        out = jit(lambda x: x, out_shardings=replicated)(leaf)
        return np.asarray(out.addressable_data(0))
    host = np.asarray(leaf)
    if process_count() == 1:
        return host if tiled else np.expand_dims(host, 0)
    stacked, mesh = _stack_over_processes(host)
    gathered = _replicated_result(lambda x: x, stacked, mesh)
    if tiled and host.ndim > 0:
        return gathered.reshape((process_count() * host.shape[0],) + host.shape[1:])
    return gathered


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's values, in every process.

    Args:
      in_tree: a tree of host values (the same shape in every process) or global Arrays.
      tiled: concatenate along axis 0 instead of stacking on a new leading axis (scalars are
        always stacked). A global Array that is not fully addressable needs tiled=True and
        comes back whole.

    Returns:
      The tree with NumPy arrays.
    """
    return tree_map(lambda leaf: _allgather_one(leaf, tiled), in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raises AssertionError unless every process holds the same values in `in_tree`."""
    gathered = process_allgather(in_tree, tiled=False)
    mine = tree_map(np.asarray, in_tree)
    leaves, _ = tree_flatten(gathered)
    expected, _ = tree_flatten(mine)
    for all_rows, own in zip(leaves, expected):
        if not all(np.array_equal(row, own) for row in all_rows):
            raise AssertionError(
                f"{fail_message} The values differ between processes: {all_rows!r}"
            )


def sync_global_devices(name: str) -> None:
    """A barrier over every process's devices: returns when all processes have called it
    with the same `name` (differing names raise AssertionError)."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ({name!r}).")


def _spec_axes(spec: PartitionSpec, ndim: int) -> list[tuple[str, ...]]:
    entries = list(spec) + [None] * (ndim - len(spec))
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries]


def _check_spec(spec, who: str) -> PartitionSpec:
    if spec is None:
        raise ValueError(
            f"{who}: None is not a valid partition spec; use PartitionSpec() for a replicated "
            "value."
        )
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"{who}: pspecs must be PartitionSpecs, got {spec!r}.")
    return spec


def _scale_shape(shape, spec, numerator: dict, denominator: dict, who: str) -> tuple[int, ...]:
    out = []
    for size, axes in zip(shape, _spec_axes(spec, len(shape))):
        factor_num = math.prod(numerator[a] for a in axes)
        factor_den = math.prod(denominator[a] for a in axes)
        if (size * factor_num) % factor_den:
            raise ValueError(f"{who}: dimension of size {size} does not split over {axes}.")
        out.append(size * factor_num // factor_den)
    return tuple(out)


def _per_leaf(who, tree, pspecs, convert):
    leaves, treedef = tree_flatten(tree)
    try:
        specs = broadcast_prefix(pspecs, tree, is_leaf=lambda s: s is None or isinstance(s, PartitionSpec))
    except ValueError as err:
        raise ValueError(f"{who}: pspecs must be a tree prefix of the inputs ({err}).") from None
    return tree_unflatten(treedef, [convert(leaf, _check_spec(s, who)) for leaf, s in zip(leaves, specs)])


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each process's local piece (laid out over its part of `global_mesh` by `pspecs`) joined
    into one global Array per leaf, without moving data between processes.

    A dimension split over mesh axes that span processes grows by the number of processes
    along them: with 2 processes and ``P('x')`` over all devices, local (4, 3) pieces make a
    global (8, 3) Array.
    """
    who = "host_local_array_to_global_array"
    local_mesh = global_mesh.local_mesh

    def convert(leaf, spec):
        if isinstance(leaf, _jax.ArrayImpl) and not leaf.is_fully_addressable:
            return leaf
        host = np.asarray(leaf)
        local_sharding = NamedSharding(local_mesh, spec)
        indices = local_sharding.devices_indices_map(host.shape)
        pieces = [device_put(host[indices[d]], d) for d in local_mesh.devices.flat]
        shape = _scale_shape(host.shape, spec, global_mesh.shape, local_mesh.shape, who)
        return make_array_from_single_device_arrays(shape, NamedSharding(global_mesh, spec), pieces)

    return _per_leaf(who, local_inputs, pspecs, convert)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """The inverse of `host_local_array_to_global_array`: each global Array's pieces held by
    this process, as an Array over this process's part of `global_mesh`."""
    who = "global_array_to_host_local_array"
    local_mesh = global_mesh.local_mesh

    def convert(leaf, spec):
        if not isinstance(leaf, _jax.ArrayImpl):
            return leaf
        if leaf.sharding != NamedSharding(global_mesh, spec):
            leaf = jit(lambda x: x, out_shardings=NamedSharding(global_mesh, spec))(leaf)
        shape = _scale_shape(leaf.shape, spec, local_mesh.shape, global_mesh.shape, who)
        by_device = {s.device: s.data for s in leaf.addressable_shards}
        pieces = [by_device[d] for d in local_mesh.devices.flat]
        return make_array_from_single_device_arrays(shape, NamedSharding(local_mesh, spec), pieces)

    return _per_leaf(who, global_inputs, pspecs, convert)
