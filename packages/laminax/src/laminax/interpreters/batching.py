"""`jax.interpreters.batching`: vmap rules of primitives (JAX's names).

`fancy_primitive_batchers` is core's batching table itself, with rules
`rule(axis_data, args, dims, **params) -> (out, out_dims)`. JAX's older spellings store into it
through adapters: `primitive_batchers[p] = rule(args, dims, **params)` and
`axis_primitive_batchers[p] = rule(axis_size, axis_name, trace_type, args, dims, **params)`.
"""

from __future__ import annotations

from collections.abc import Callable

from laminax_core.internal import AxisData as AxisData
from laminax_core.internal import BatchTrace as BatchTrace
from laminax_core.internal import batch_rules as fancy_primitive_batchers
from laminax_core.internal import batching as _core_batching
from laminax_core.internal import not_mapped as not_mapped

from laminax import numpy as _jnp

__all__ = [
    "AxisData",
    "BatchTrace",
    "axis_primitive_batchers",
    "bdim_at_front",
    "broadcast",
    "defbroadcasting",
    "defvectorized",
    "fancy_primitive_batchers",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
]

bdim_at_front = _core_batching.bdim_at_front


def moveaxis(x, src: int | None, dst: int):
    """`x` with its batch dimension moved from `src` to `dst`."""
    return _core_batching.move_bdim(x, src, dst)


def broadcast(x, size: int, axis: int):
    """`size` copies of `x` stacked along a new dimension `axis`."""
    shape = x.shape[:axis] + (size,) + x.shape[axis:]
    return _jnp.broadcast_to(_jnp.expand_dims(x, axis), shape)


class _AdaptingTable:
    """A write-mostly view of core's batching table that adapts each rule on the way in."""

    def __init__(self, adapt: Callable, spelling: str):
        self._adapt = adapt
        self._originals: dict = {}
        self._spelling = spelling

    def __setitem__(self, primitive, rule: Callable) -> None:
        self._originals[primitive] = rule
        fancy_primitive_batchers[primitive] = self._adapt(primitive, rule)

    def __getitem__(self, primitive) -> Callable:
        return self._originals[primitive]

    def __contains__(self, primitive) -> bool:
        return primitive in self._originals

    def __delitem__(self, primitive) -> None:
        del self._originals[primitive]
        fancy_primitive_batchers.pop(primitive, None)

    def get(self, primitive, default=None):
        return self._originals.get(primitive, default)

    def __repr__(self) -> str:
        return f"<{self._spelling}: {len(self._originals)} rules>"


def _from_plain(primitive, rule):
    def adapted(axis_data, args, dims, **params):
        # JAX hands these rules tuples (rules use them as vmap axes, where a list is a pytree
        # node of another type)
        return rule(tuple(args), tuple(dims), **params)

    return adapted


def _from_axis(primitive, rule):
    def adapted(axis_data, args, dims, **params):
        return rule(axis_data.size, axis_data.name, None, tuple(args), tuple(dims), **params)

    return adapted


primitive_batchers = _AdaptingTable(_from_plain, "batching.primitive_batchers")
axis_primitive_batchers = _AdaptingTable(_from_axis, "batching.axis_primitive_batchers")


def defvectorized(primitive) -> None:
    """Batches `primitive` by applying it to the batched operands as they are (an operation
    acting on each element independently, with every operand batched along the same axis)."""

    def rule(axis_data, args, dims, **params):
        dim = next(d for d in dims if d is not None)
        args = [moveaxis(x, d, dim) if d is not None else x for x, d in zip(args, dims)]
        return primitive.bind(*args, **params), dim

    fancy_primitive_batchers[primitive] = rule


def defbroadcasting(primitive) -> None:
    """Batches an elementwise `primitive` whose operands broadcast: batch dimensions go first,
    unbatched operands get a size-1 leading dimension."""
    fancy_primitive_batchers[primitive] = _core_batching.elementwise_batch_rule(primitive)
