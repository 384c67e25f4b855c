"""`with_sharding_constraint`: pin an intermediate value's layout inside a jitted program.

`sharding_constraint_p` is a core primitive (identity on values) whose lowering is dispatch's
constraint hook (`emit_sharding_constraint`: ``sdy.sharding_constraint`` with Shardy, the
``@Sharding`` custom call with GSPMD). It is linear (jvp and transpose constrain the tangent and
the cotangent the same way) and batches by giving the new dimension to vmap's
``spmd_axis_name`` (or leaving it unsplit). Applied to a concrete Array, outside any trace, it
moves the Array to the sharding (`device_put`), as JAX does.

Bare `PartitionSpec`s name axes of the mesh in context: `set_mesh`'s, else the enclosing
``with mesh:`` block's (`resolve_spec`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from laminax_core.internal import (
    ANY,
    define_primitive,
    linear,
    same_shape,
)
from laminax_core.internal import trace_context
from laminax_dispatch import GSPMDSharding, Sharding, device_put
from laminax_dispatch.internal import emit_sharding_constraint, register_lowering
from laminax_pytree import tree_flatten, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_pjit._mesh import get_abstract_mesh, get_concrete_mesh, resource_mesh
from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._partition_spec import UNCONSTRAINED, PartitionSpec

__all__ = ["context_mesh", "resolve_spec", "sharding_constraint_p", "with_sharding_constraint"]


def context_mesh():
    """The mesh bare PartitionSpecs refer to: `set_mesh`'s, else ``with mesh:``'s (maybe empty)."""
    concrete = get_concrete_mesh()
    return concrete if not concrete.empty else resource_mesh()


def resolve_spec(spec: PartitionSpec, api_name: str, what: str) -> NamedSharding:
    """`spec` as a NamedSharding on the mesh in context.

    Raises:
      RuntimeError: no mesh is in context.
    """
    mesh = context_mesh()
    if mesh.empty:
        raise RuntimeError(
            f"{api_name} requires a non-empty mesh in context if you are passing "
            f"`PartitionSpec`s to {what}. You can define a context mesh via "
            f"`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to {what} and then the "
            "mesh context manager is not required."
        )
    return NamedSharding(mesh, spec)


class _DimSet(frozenset):
    """A frozenset printed as JAX's jaxprs print it (``frozenset({})`` when empty)."""

    def __repr__(self) -> str:
        return f"frozenset({set(self)!r})" if self else "frozenset({})"


def _unconstrained_dims(sharding) -> frozenset:
    if not isinstance(sharding, NamedSharding):
        return _DimSet()
    return _DimSet(i for i, p in enumerate(sharding.spec.partitions) if p is UNCONSTRAINED)


def _abstract_eval(x, *, sharding, layout, context_mesh, unconstrained_dims):
    return x


def _reference(x, **params):
    return x


def _transpose(ct, x, **params):
    return [sharding_constraint_p.bind(ct, **params)]


def _batch(axis_data, args, dims, *, sharding, **params):
    (x,), (d,) = args, dims
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding, **params), None
    if isinstance(sharding, NamedSharding):
        entries = list(sharding.spec.partitions)
        entries += [None] * (d - len(entries))
        entries.insert(d, getattr(axis_data, "spmd_name", None))
        sharding = sharding.update(spec=sharding.spec.update(partitions=entries))
    else:  # a layout in XLA's terms: the new dimension is not split
        sharding = _with_unsplit_dim(sharding, d, np.ndim(x) - 1)
    return sharding_constraint_p.bind(x, sharding=sharding, **params), d


def _with_unsplit_dim(sharding, d: int, ndim: int):
    """`sharding` for an array with a new, unsplit dimension at `d`."""
    hlo = sharding._to_xla_hlo_sharding(ndim)
    if hlo.is_replicated() or not hlo.is_tiled():
        return sharding
    proto = hlo.to_proto()
    dims = list(hlo.tile_assignment_dimensions())
    proto.tile_assignment_devices = list(hlo.tile_assignment_devices())
    proto.iota_reshape_dims = []
    proto.iota_transpose_perm = []
    proto.tile_assignment_dimensions = [*dims[:d], 1, *dims[d:]]
    return GSPMDSharding(
        tuple(sharding._device_assignment), proto, memory_kind=sharding.memory_kind
    )


sharding_constraint_p = define_primitive(
    "sharding_constraint",
    abstract_eval=same_shape(dtypes=ANY),
    reference=_reference,
    jvp=linear,
    transpose=_transpose,
    batch=_batch,
)


def _sharding_constraint_lower(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    return emit_sharding_constraint(ctx, x, ctx.avals_in[0], sharding)


register_lowering(sharding_constraint_p, _sharding_constraint_lower)


def _is_sharding_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (PartitionSpec, Sharding))


def _flat_shardings(x_tree, shardings, n: int) -> list:
    if _is_sharding_leaf(shardings):
        return [shardings] * n
    if isinstance(shardings, list):
        shardings = tuple(shardings)
    try:
        return broadcast_prefix(shardings, tree_unflatten(x_tree, [0] * n), is_leaf=_is_sharding_leaf)
    except ValueError as err:
        raise ValueError(
            f"with_sharding_constraint: shardings must be a pytree prefix of x. {err}"
        ) from None


def _resolve(entry) -> Sharding:
    if isinstance(entry, PartitionSpec):
        return resolve_spec(entry, "with_sharding_constraint", "shardings")
    if isinstance(entry, Sharding):
        if isinstance(entry, NamedSharding) and entry.mesh.empty:
            raise ValueError(
                f"One of with_sharding_constraint shardings got an empty NamedSharding: {entry} "
                "which is not allowed."
            )
        return entry
    if entry is None:
        raise ValueError(
            "One of with_sharding_constraint arguments got sharding None which is not allowed. "
            "Please only pass `jax.sharding.Sharding` instances (or PartitionSpecs under a mesh)."
        )
    raise TypeError(
        "with_sharding_constraint shardings leaf specifications are expected to be "
        f"PartitionSpec instances or Shardings, but got {entry!r} of type {type(entry).__name__}"
    )


def with_sharding_constraint(x, shardings):
    """Constrains the layout of `x` (a pytree of arrays) inside a jitted computation (JAX:
    `jax.lax.with_sharding_constraint`); outside any trace it moves `x` to the layout.

    Args:
      x: arrays, or a pytree of them.
      shardings: a `Sharding` or a `PartitionSpec` (naming axes of the mesh in context), or a
        pytree prefix of `x` of them. ``P.UNCONSTRAINED`` entries leave a dimension's layout
        to the partitioner.

    Returns:
      `x`, with each leaf's layout pinned.

    Raises:
      ValueError: a spec longer than its array's rank; a None entry; an empty mesh.
      TypeError: an entry that is neither a Sharding nor a PartitionSpec.
      RuntimeError: a PartitionSpec with no mesh in context.
    """
    leaves, tree = tree_flatten(x)
    flat = [_resolve(s) for s in _flat_shardings(tree, shardings, len(leaves))]
    mesh = get_abstract_mesh() if not get_concrete_mesh().empty else resource_mesh()
    outs = []
    for leaf, sharding in zip(leaves, flat, strict=True):
        try:
            if isinstance(sharding, NamedSharding):
                sharding.check_compatible_aval(np.shape(leaf))
        except ValueError as err:
            raise ValueError(
                f"One of with_sharding_constraint arguments is incompatible with its sharding "
                f"annotation {sharding}: {err}"
            ) from None
        if trace_context.trace is None:  # a concrete value: move it, as JAX's impl does
            outs.append(device_put(leaf, sharding))
            continue
        outs.append(
            sharding_constraint_p.bind(
                leaf,
                sharding=sharding,
                layout=None,
                context_mesh=mesh,
                unconstrained_dims=_unconstrained_dims(sharding),
            )
        )
    return tree_unflatten(tree, outs)
