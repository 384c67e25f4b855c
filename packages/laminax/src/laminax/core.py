"""`jax.core`: abstract values, tracers and traces, and evaluating jaxprs (JAX 0.10.2's names).

Libraries use these for `isinstance` checks (`jax.core.Tracer`, `jax.core.ShapedArray`) and to
run the jaxprs they build. They are core's own classes, re-exported. A few names JAX keeps only
for compatibility (`get_aval`, `raise_to_shaped`, `jaxprs_in_params`, `subjaxprs`,
`jaxpr_as_fun`, `mapped_aval`, `unmapped_aval`, `find_top_trace`) are provided because widely
used libraries still reach for them here.
"""

from __future__ import annotations

from collections.abc import Iterator

from laminax_core import ensure_compile_time_eval as ensure_compile_time_eval
from laminax_core.internal import AbstractValue as AbstractValue
from laminax_core.internal import ClosedJaxpr as ClosedJaxpr
from laminax_core.internal import Jaxpr as Jaxpr
from laminax_core.internal import Literal as Literal
from laminax_core.internal import ShapedArray as ShapedArray
from laminax_core.internal import Trace as Trace
from laminax_core.internal import Tracer as Tracer
from laminax_core.internal import Var as Var
from laminax_core.internal import current_trace, get_aval, jaxpr_as_fun
from laminax_core.internal import eval_jaxpr as eval_jaxpr
from laminax_core.internal import set_current_trace

__all__ = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "find_top_trace",
    "get_aval",
    "jaxpr_as_fn",
    "jaxprs_in_params",
    "mapped_aval",
    "max_dim",
    "min_dim",
    "raise_to_shaped",
    "subjaxprs",
    "unmapped_aval",
]

# What a jaxpr equation's operands are (variables or literals), and a primitive's parameters.
Atom = Var | Literal
ParamDict = dict
# Anything a primitive can be applied to.
Value = object


eval_context = ensure_compile_time_eval


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes (laminax's shapes are always concrete integers)."""
    return max(d1, d2)


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes (laminax's shapes are always concrete integers)."""
    return min(d1, d2)


def raise_to_shaped(aval: AbstractValue, weak_type: bool | None = None) -> AbstractValue:
    """`aval` itself (every laminax aval is already shaped), optionally with a new weak type."""
    if weak_type is None or not isinstance(aval, ShapedArray):
        return aval
    return aval.update(weak_type=weak_type)


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """The aval of one slice of `aval` along its mapped `axis` (of length `size`)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval} has size {aval.shape[axis]}, "
                         f"not the mapped size {size}.")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray, explicit_mesh_axis=None):
    """The aval of `size` stacked copies of `aval` along a new `axis` (`mapped_aval`'s inverse)."""
    del explicit_mesh_axis  # laminax's vmap has no explicit-sharding mesh axes
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def find_top_trace(xs) -> Trace:
    """The trace now running (the eval trace outside any transformation), as in JAX 0.10.2,
    whose `find_top_trace` no longer looks at `xs`: inside a nested transformation it is the
    innermost one even for the tracers of an outer one."""
    del xs
    return current_trace()


def jaxprs_in_params(params) -> list:
    """The jaxprs (open ones: a `ClosedJaxpr`'s `.jaxpr`) among a primitive's parameters,
    including those inside tuples and lists."""
    found = []
    for value in params.values():
        values = value if isinstance(value, (tuple, list)) else (value,)
        for v in values:
            if isinstance(v, ClosedJaxpr):
                found.append(v.jaxpr)
            elif isinstance(v, Jaxpr):
                found.append(v)
    return found


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """Every jaxpr nested directly in `jaxpr`'s equations' parameters."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def jaxpr_as_fn(closed: ClosedJaxpr):
    """A function evaluating the closed jaxpr on its arguments (returns the list of outputs)."""
    return jaxpr_as_fun(closed)
