"""Helpers shared by the control-flow primitives: tracing user functions into jaxprs, and
the jvp and batched versions of a jaxpr."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _manual_axes, _trace, dtypes
from laminax_core._avals import AbstractRef, ShapedArray, get_aval
from laminax_core._interpreters import batching, partial_eval
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, jvp_flat
from laminax_core._interpreters.partial_eval import hoist_tracer_consts
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr
from laminax_core._memory import MemorySpace
from laminax_core._primitive import NO_OPERANDS, NOT_LINEAR, ZERO_TANGENT, define_primitive
from laminax_core.lax import _elementwise, _structural

__all__ = [
    "MemorySpace",
    "batch_jaxpr",
    "check_no_refs",
    "check_same_types",
    "empty2_p",
    "empty_like_aval",
    "forwarded_inputs",
    "move_inputs_to_front",
    "prune_outputs",
    "jaxpr_as_fun",
    "jvp_jaxpr",
    "trace_closed",
    "trace_user_fun",
    "is_differentiable",
    "out_batched",
    "promote_weak_carry",
]


def trace_closed(fun: Callable, avals, name: str) -> tuple[ClosedJaxpr, list]:
    """Traces flat `fun` on `avals`; returns the closed jaxpr (tracer constants hoisted to
    leading invars) and those hoisted constants."""
    closed, _ = partial_eval.trace_to_jaxpr(fun, list(avals), name)
    return hoist_tracer_consts(closed)


def check_no_refs(leaves, fun, name: str) -> None:
    """ValueError, as JAX's, for a reference among a traced function's outputs."""
    for leaf in leaves:
        if isinstance(get_aval(leaf), AbstractRef):
            raise ValueError(
                f"function {getattr(fun, '__name__', 'fun')} traced for {name} returned a "
                f"mutable array reference of type {get_aval(leaf)}, but mutable array "
                "references cannot be returned. Close over it (or return its value).")


def trace_user_fun(fun: Callable, in_tree, avals, name: str, out_trees: list):
    """Traces a user function of pytrees; records its output tree in `out_trees`."""

    def flat(*leaves):
        out = fun(*tree_unflatten(in_tree, leaves))
        out_leaves, out_tree = tree_flatten(out)
        check_no_refs(out_leaves, fun, name)  # (get_aval: TypeError for non-arrays)
        out_trees.append(out_tree)
        return out_leaves

    return trace_closed(flat, avals, name)


def forwarded_inputs(closed: ClosedJaxpr) -> list:
    """For each output of `closed`, the position of the input it returns unchanged, or None."""
    position = {id(v): i for i, v in enumerate(closed.jaxpr.invars)}
    return [position.get(id(v)) for v in closed.jaxpr.outvars]


def prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    """`closed` returning only the outputs flagged in `keep` (its equations stay)."""
    jaxpr = closed.jaxpr
    outvars = [v for v, k in zip(jaxpr.outvars, keep, strict=True) if k]
    return ClosedJaxpr(
        Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, jaxpr.eqns, jaxpr.effects), closed.consts
    )


def move_inputs_to_front(closed: ClosedJaxpr, move: Sequence[bool]) -> ClosedJaxpr:
    """`closed` with the inputs flagged in `move` first (in their order), then the others."""
    jaxpr = closed.jaxpr
    invars = [v for v, m in zip(jaxpr.invars, move, strict=True) if m]
    invars += [v for v, m in zip(jaxpr.invars, move, strict=True) if not m]
    return ClosedJaxpr(
        Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns, jaxpr.effects), closed.consts
    )


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable:
    """The closed jaxpr as a Python function of flat arguments returning a list."""
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


def promote_weak_carry(carry: list, in_avals, out_avals) -> tuple[list, bool]:
    """As JAX's loops: a weakly typed initial carry whose body output has another dtype is
    converted to the type both promote to (`fori_loop(0, n, f, 1.0)` with a bfloat16 body runs
    in bfloat16). Returns the new carry and whether anything changed (the body is retraced)."""
    changed = False
    carry = list(carry)
    for i, (a, b) in enumerate(zip(in_avals, out_avals, strict=True)):
        if a.weak_type and (a.shape, a.dtype) != (b.shape, b.dtype):
            dtype = dtypes.result_type(carry[i], b.dtype)
            if np.dtype(dtype) != a.dtype or a.shape != b.shape:
                carry[i] = _elementwise.convert_element_type(carry[i], dtype)
                changed = True
    return carry, changed


def check_same_types(what: str, expected, found) -> None:
    """Raises TypeError unless two lists of avals agree in shape, dtype and (explicit)
    sharding."""
    mismatch = [
        (a.str_short(), b.str_short())
        for a, b in zip(expected, found, strict=True)
        if a.shape != b.shape or a.dtype != b.dtype or a.sharding != b.sharding
    ]
    if len(expected) != len(found) or mismatch:
        raise TypeError(
            f"{what} must have identical types, got\n"
            f"{[a.str_short() for a in expected]}\nand\n{[b.str_short() for b in found]}."
        )
    if _manual_axes.state.axes is None:  # types are only kept inside a check_vma body
        return
    for a, b in zip(expected, found, strict=True):
        if a.manual_axis_type != b.manual_axis_type:
            missing = b.manual_axis_type.varying ^ a.manual_axis_type.varying
            axes = a.manual_axis_type.ordered(missing) or b.manual_axis_type.ordered(missing)
            raise TypeError(
                f"{what} must have equal types, but they differ: {a} and {b}, so the manual "
                f"axis types do not match. This might be fixed by applying "
                f"`jax.lax.pcast(..., {axes!r}, to='varying')` to the value that does not vary "
                "over those axes (the initial loop carry, or one branch's output).")


def is_differentiable(aval) -> bool:
    return aval.to_tangent_aval().dtype != dtypes.float0


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: Sequence[bool]):
    """The jvp of `closed`: inputs `(*primals, *nonzero tangents)`, outputs
    `(*primals_out, *tangents_out)` for the outputs whose tangent is instantiated or nonzero.

    Returns:
      `(jvp_closed, out_nonzeros)`.
    """
    n_in = len(closed.in_avals)
    found: list = []

    def fun(*args):
        primals = args[:n_in]
        tangent_iter = iter(args[n_in:])
        tangents = [
            next(tangent_iter) if nz else Zero(a.to_tangent_aval())
            for a, nz in zip(closed.in_avals, nonzeros, strict=True)
        ]
        outs, out_tangents = jvp_flat(jaxpr_as_fun(closed), primals, tangents, instantiate=False)
        out_nz = [
            not isinstance(t, Zero) or inst
            for t, inst in zip(out_tangents, instantiate, strict=True)
        ]
        found[:] = [out_nz]

        kept = [instantiate_zeros(t) for t, nz in zip(out_tangents, out_nz, strict=True) if nz]
        return [*outs, *kept]

    tangent_avals = [
        a.to_tangent_aval() for a, nz in zip(closed.in_avals, nonzeros, strict=True) if nz
    ]
    jvp_closed, hoisted = trace_closed(fun, [*closed.in_avals, *tangent_avals], "jvp")
    assert not hoisted, "jvp of a closed jaxpr captured an outer tracer"
    return jvp_closed, found[0]


def batch_jaxpr(closed: ClosedJaxpr, axis_data, in_dims, out_dims_fn: Callable):
    """`closed` vmapped over `in_dims` (batch dims at 0 or None); `out_dims_fn(n_out)` gives
    where each output's batch dim goes (0, or None for outputs that must be unbatched)."""
    avals = []
    for aval, d in zip(closed.in_avals, in_dims, strict=True):
        avals.append(aval if d is None else aval.update(shape=(axis_data.size, *aval.shape)))
    n_out = len(closed.out_avals)

    def fun(*args):
        return batching.batch_flat(
            jaxpr_as_fun(closed), list(args), list(in_dims), axis_data, lambda: out_dims_fn(n_out)
        )

    batched, hoisted = trace_closed(fun, avals, "vmap")
    assert not hoisted, "vmap of a closed jaxpr captured an outer tracer"
    return batched


def out_batched(closed: ClosedJaxpr, axis_data, in_dims) -> list[bool]:
    """Which outputs of `closed` depend on the batched inputs (`in_dims`)."""
    found: list = []
    avals = [
        a if d is None else a.update(shape=(axis_data.size, *a.shape))
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]

    def fun(*args):
        trace = batching.BatchTrace(_trace.current_trace(), axis_data)
        ins = [
            x if d is None else batching.BatchTracer(trace, x, d)
            for x, d in zip(args, in_dims, strict=True)
        ]
        try:
            with _trace.set_current_trace(trace):
                outs = jaxpr_as_fun(closed)(*ins)
            found[:] = [[trace.lift(o)[1] is not None for o in outs]]
        finally:
            trace.is_live = False
        return []

    partial_eval.trace_to_jaxpr(fun, avals, "vmap")
    return found[0]


# ----- empty2: an array whose value does not matter ------------------------------------------
# Control flow fills output slots that a branch does not compute (cond's merged residuals) with
# it: JAX's `empty2`, a scalar of any value (zero here and in the lowering) broadcast to shape.


empty2_p = define_primitive(
    "empty2",
    abstract_eval=lambda dtype, memory_space: ShapedArray((), dtype),
    reference=lambda dtype, memory_space: np.zeros((), dtype),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)


def empty_like_aval(aval: ShapedArray):
    """An array of `aval`'s shape and dtype whose contents nobody reads (zeros)."""
    scalar = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
    if aval.shape == ():
        return scalar
    return _structural.broadcast_in_dim(scalar, aval.shape, ())
