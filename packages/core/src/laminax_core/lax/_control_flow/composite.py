"""composite: a function the compiler may recognize by its name, version and attributes and
replace (a "tangent" op decomposed as sin / cos), else runs as its decomposition. The
primitive carries the traced decomposition; lowered it is a `stablehlo.composite` calling a
private function. As in JAX it has no derivative or batching rule: wrap it in custom_jvp
where one is needed."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core._avals import get_aval
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core._trace import Tracer
from laminax_core.errors import UnexpectedTracerError
from laminax_core.lax._control_flow import common

__all__ = ["HashableArray", "composite", "composite_p"]


class HashableArray:
    """A NumPy array as a hashable, comparable param (a composite's array attribute)."""

    def __init__(self, value: np.ndarray):
        self.val = value

    def __repr__(self) -> str:
        return f"HashableArray({self.val!r})"

    def __hash__(self) -> int:
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other) -> bool:
        return isinstance(other, HashableArray) and self.val.shape == other.val.shape \
            and self.val.dtype == other.val.dtype and np.array_equal(self.val, other.val)


def composite(decomposition: Callable, name: str, version: int = 0):
    """`decomposition` as a composite op named `name`: positional arguments are its inputs,
    keyword arguments its attributes (static values; None ones are left out when lowered).

    Example:
      >>> tangent = composite(lambda x: lax.sin(x) / lax.cos(x), "my.tangent")
      >>> tangent(np.float32(0.0))
      array(0., dtype=float32)
    """

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                f"Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value "
                "that is involved in a JAX transformation. Any values that aren't explicitly "
                "known at compile time must be explicitly passed as arguments to the "
                "composite.\n\nNote: If you are passing jax arrays as attributes, use numpy "
                "arrays instead.")
        leaves, in_tree = tree_flatten(args)
        out_trees: list = []
        closed, consts = common.trace_user_fun(
            functools.partial(decomposition, **kwargs), in_tree,
            [get_aval(x) for x in leaves], name, out_trees)
        attributes = []
        for key, value in kwargs.items():
            values, tree = tree_flatten(value)
            values = tuple(HashableArray(v) if isinstance(v, np.ndarray) else v for v in values)
            attributes.append((key, values, tree))
        outs = composite_p.bind(*consts, *leaves, name=name, attributes=tuple(attributes),
                                version=version, jaxpr=closed)
        return tree_unflatten(out_trees[0], outs)

    return call


def _composite_jvp(primals, tangents, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to "
                     "add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_batch(axis_data, args, dims, **params):
    raise NotImplementedError("Batching rule for 'composite' not implemented")


composite_p = define_primitive(
    "composite",
    abstract_eval=lambda *avals, jaxpr, **params: list(jaxpr.out_avals),
    reference=lambda *args, jaxpr, **params: common.jaxpr_as_fun(jaxpr)(*args),
    jvp=_composite_jvp,
    transpose=NOT_LINEAR,
    batch=_composite_batch,
    multiple_results=True,
)
