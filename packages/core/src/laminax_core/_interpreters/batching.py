"""Vectorization: the batch trace and the batching rule table.

A `BatchTracer` holds a value with one extra *batch dimension* at `bdim` (or `not_mapped`,
None, for a value shared by every batch element). A batching rule is
`rule(axis_data, args, dims, **params) -> (out, out_dim)` (lists for multiple results);
`axis_data` gives the axis size and name, which named-axis collectives (`psum` ...) use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable

from laminax_core import _trace
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters import lax_ops

__all__ = [
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "elementwise_batch_rule",
    "batch_rules",
    "bdim_at_front",
    "collective_axis_names",
    "move_bdim",
    "not_mapped",
    "batch_flat",
]

not_mapped = None

# primitive -> rule(axis_data, args, dims, **params) -> (out, out_dim)
batch_rules: dict = {}

# primitive -> params -> the named axes it reduces over (collectives register here)
collective_axis_names: dict[object, Callable[[dict], tuple]] = {}


@dataclasses.dataclass(frozen=True)
class AxisData:
    """The mapped axis of one vmap: its `size`, its `name` (None if unnamed), and the mesh
    axis (or axes) that split it (`spmd_name`, vmap's ``spmd_axis_name``; read by sharding
    constraints in laminax_pjit)."""

    name: Hashable
    size: int
    spmd_name: Hashable = None


def move_bdim(x, src: int | None, dst: int):
    """`x` with its batch dimension moved from `src` to `dst` (via `lax.transpose`)."""
    if src is None or src == dst:
        return x
    ndim = get_aval(x).ndim
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return lax_ops.transpose(x, tuple(perm))


def bdim_at_front(x, bdim: int | None, size: int):
    """`x` with its batch dimension first; an unmapped value is broadcast to `size`."""
    if bdim is None:
        aval = get_aval(x)
        dims = tuple(range(1, aval.ndim + 1))
        return lax_ops.broadcast_in_dim(x, (size, *aval.shape), dims)
    return move_bdim(x, bdim, 0)


def elementwise_batch_rule(primitive) -> Callable:
    """The batching rule of an elementwise `primitive` (operands broadcast as lax's do)."""

    def rule(axis_data, args, dims, **params):
        return _batch_elementwise(primitive, args, dims, params)

    return rule


def _batch_elementwise(primitive, args, dims, params):
    mapped = [(x, d) for x, d in zip(args, dims, strict=True) if d is not None]
    first_aval = get_aval(mapped[0][0])
    same = all(get_aval(x).shape == first_aval.shape and d == mapped[0][1] for x, d in mapped)
    if same and all(
        d is not None or get_aval(x).ndim == 0 for x, d in zip(args, dims, strict=True)
    ):
        return primitive.bind(*args, **params), mapped[0][1]
    out_ndim = max(get_aval(x).ndim - (d is not None) for x, d in zip(args, dims, strict=True))
    moved = []
    for x, d in zip(args, dims, strict=True):
        aval = get_aval(x)
        if d is None:
            if aval.ndim == 0:
                moved.append(x)
                continue
            x = lax_ops.broadcast_in_dim(x, (1, *aval.shape), tuple(range(1, aval.ndim + 1)))
        else:
            x = move_bdim(x, d, 0)
            if aval.ndim - 1 < out_ndim:
                shape = get_aval(x).shape + (1,) * (out_ndim - aval.ndim + 1)
                x = lax_ops.broadcast_in_dim(x, shape, tuple(range(aval.ndim)))
        moved.append(x)
    return primitive.bind(*moved, **params), 0


class BatchTracer(_trace.Tracer):
    """A batched value: `val` carries the batch dimension at `bdim` (None: not mapped)."""

    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        super().__init__(trace)
        self.val = val
        self.bdim = bdim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.bdim is None:
            return aval
        shape = aval.shape[: self.bdim] + aval.shape[self.bdim + 1 :]
        return aval.update(shape=shape)

    def to_concrete_value(self):
        return None


class BatchTrace(_trace.Trace):
    """The trace of one `vmap`."""

    transformation = "vmap"

    def __init__(self, parent, axis_data: AxisData):
        super().__init__(parent)
        self.axis_data = axis_data

    def lift(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        return x, None

    def _is_my_collective(self, primitive, params) -> bool:
        names = collective_axis_names.get(primitive)
        return names is not None and self.axis_data.name in names(params)

    def process_primitive(self, primitive, args, params):
        if eval_interpreter.takes_refs(primitive, args, params):
            return eval_interpreter.run_on_ref_values(primitive, args, params)
        vals, dims = zip(*map(self.lift, args), strict=True) if args else ((), ())
        # a reference made under vmap is batched even from an unbatched value: later writes
        # may be batched
        if (all(d is None for d in dims) and not self._is_my_collective(primitive, params)
                and not getattr(primitive, "ref_allocating", False)):
            with _trace.set_current_trace(self.parent):
                return primitive.bind(*vals, **params)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Batching rule for '{primitive.name}' not implemented. Register one with "
                f"{primitive.name}_p.def_batch(rule)."
            )
        with _trace.set_current_trace(self.parent):
            out, out_dim = rule(self.axis_data, tuple(vals), tuple(dims), **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim, strict=True)]
        return BatchTracer(self, out, out_dim)


def batch_flat(fun: Callable, args, in_dims, axis_data: AxisData, out_dims_fn: Callable):
    """Runs `fun` (flat list in, flat list out) on batched `args`.

    `out_dims_fn()` is called after `fun` and gives the wanted batch position of each output
    (None: the output must not be mapped). Returns the list of outputs.
    """
    trace = BatchTrace(_trace.current_trace(), axis_data)
    try:
        ins = [
            x if d is None else BatchTracer(trace, x, d) for x, d in zip(args, in_dims, strict=True)
        ]
        with _trace.set_current_trace(trace):
            outs = fun(*ins)
        lifted = [trace.lift(out) for out in outs]
    finally:
        trace.is_live = False
    results = []
    for (val, bdim), want in zip(lifted, out_dims_fn(), strict=True):
        if want is None:
            if bdim is not None:
                raise ValueError(
                    "vmap has mapped output but out_axes is None: an output marked "
                    "out_axes=None must not depend on the mapped inputs."
                )
            results.append(val)
            continue
        if bdim is None:
            val, bdim = bdim_at_front(val, None, axis_data.size), 0
        ndim = get_aval(val).ndim
        if not -ndim <= want < ndim:
            raise ValueError(f"axis {want} is out of bounds for array of dimension {ndim}: "
                             f"vmap out_axes={want} for an output of rank {ndim - 1} (rank "
                             f"{ndim} with the mapped axis).")
        results.append(move_bdim(val, bdim, want % ndim))
    return results
