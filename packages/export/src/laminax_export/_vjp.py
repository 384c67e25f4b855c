"""The backward pass of an exported function, as a jaxpr to export next to it.

`vjp_jaxpr(closed)` is `(*primals, *output_cotangents) -> input_cotangents`: the function
`Exported.vjp()` exports, and what `serialize(vjp_order=k)` stores `k` orders of. As in JAX,
an input that is not floating point has a `float0` cotangent: its aval says `float0`, and the
module returns a boolean array of its shape (how float0 values are laid out in XLA).
"""

from __future__ import annotations

import numpy as np
from laminax_core import ShapeDtypeStruct, dtypes, vjp
from laminax_core import numpy as lnp
from laminax_core.internal import ShapedArray, eval_jaxpr
from laminax_dispatch import jit
from laminax_pytree import tree_structure

__all__ = ["differentiable", "float0_as_bool", "vjp_jaxpr"]


def differentiable(aval) -> bool:
    return dtypes.issubdtype(aval.dtype, np.inexact)


def float0_as_bool(aval):
    """The aval a module value of `aval` has (float0 travels as bool)."""
    if aval.dtype == dtypes.float0:
        return ShapedArray(aval.shape, np.dtype(bool))
    return aval


def vjp_jaxpr(closed):
    """Returns `(closed_vjp, in_tree, out_tree, in_avals, out_avals)` for the backward pass of
    `closed` (the avals with float0 for the cotangents of non-float values)."""
    in_avals, out_avals = closed.in_avals, closed.out_avals
    n_in = len(in_avals)
    diff = [differentiable(a) for a in in_avals]
    out_diff = [differentiable(a) for a in out_avals]

    def fun_vjp(*args_and_cts):
        primals, cts = args_and_cts[:n_in], args_and_cts[n_in:]

        def fun(*diff_primals):
            it = iter(diff_primals)
            xs = [next(it) if d else p for d, p in zip(diff, primals, strict=True)]
            return eval_jaxpr(closed.jaxpr, closed.consts, *xs)

        _, pullback = vjp(fun, *[p for d, p in zip(diff, primals, strict=True) if d])
        cts = [ct if d else np.zeros(a.shape, dtypes.float0)
               for ct, d, a in zip(cts, out_diff, out_avals, strict=True)]
        diff_cts = iter(pullback(cts))
        return tuple(next(diff_cts) if d else lnp.zeros(a.shape, bool)
                     for d, a in zip(diff, in_avals, strict=True))

    ct_avals = [a if d else ShapedArray(a.shape, dtypes.float0)
                for d, a in zip(out_diff, out_avals, strict=True)]
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in in_avals]
    specs += [ShapeDtypeStruct(a.shape, float0_as_bool(a).dtype) for a in ct_avals]
    traced = jit(fun_vjp).trace(*specs)
    vjp_in_avals = (*in_avals, *ct_avals)
    vjp_out_avals = tuple(a if d else ShapedArray(a.shape, dtypes.float0)
                          for d, a in zip(diff, in_avals, strict=True))
    return (traced.jaxpr, traced.in_tree, tree_structure(traced.out_info), vjp_in_avals,
            vjp_out_avals)
