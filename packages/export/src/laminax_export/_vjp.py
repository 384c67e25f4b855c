"""The backward pass of an exported function, as a jaxpr to export next to it.

`vjp_jaxpr(closed)` is `(*primals, *output_cotangents) -> input_cotangents`: the function
`Exported.vjp()` exports, and what `serialize(vjp_order=k)` stores `k` orders of.
"""

from __future__ import annotations

from laminax_core import ShapeDtypeStruct, vjp
from laminax_core.internal import eval_jaxpr
from laminax_dispatch import jit
from laminax_pytree import tree_structure

__all__ = ["vjp_jaxpr"]


def vjp_jaxpr(closed):
    """Returns `(closed_vjp, in_tree, out_tree)` for the backward pass of `closed`."""
    n_in = len(closed.in_avals)

    def fun(*xs):
        return eval_jaxpr(closed.jaxpr, closed.consts, *xs)

    def fun_vjp(*args_and_cts):
        primals, cts = args_and_cts[:n_in], args_and_cts[n_in:]
        _, pullback = vjp(fun, *primals)
        return tuple(pullback(list(cts)))

    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in (*closed.in_avals, *closed.out_avals)]
    traced = jit(fun_vjp).trace(*specs)
    return traced.jaxpr, traced.in_tree, tree_structure(traced.out_info)
