"""Lowering of `laminax_core/_checkpoint.py`: remat inlines its jaxpr; when it is being
differentiated with `prevent_cse`, its inputs first pass an `optimization_barrier`, so that XLA
does not merge the recomputation with the forward pass (JAX's lowering)."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import name_p, remat_p

from laminax_dispatch._lowering._core import lowering_for
from laminax_dispatch._lowering.custom_derivatives import inline_closed_jaxpr


@lowering_for(remat_p)
def _remat_lower(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    if differentiated and prevent_cse and args:
        args = list(hlo.OptimizationBarrierOp(list(args)).results)
    return inline_closed_jaxpr(ctx, jaxpr, args, "checkpoint")


@lowering_for(name_p)
def _name_lower(ctx, x, *, name):
    return x  # `checkpoint_name` only tags a value for the checkpoint policies
