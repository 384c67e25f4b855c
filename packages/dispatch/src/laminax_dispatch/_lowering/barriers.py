"""Lowerings of `laminax_core/lax/_barriers.py`: `stablehlo.optimization_barrier` over all
operands at once, and mulhi to `chlo.mulhi` (which XLA expands into a widening multiply)."""

from __future__ import annotations

from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import elementwise, lowering_for, register_lowering


@lowering_for(lax.optimization_barrier_p)
def _optimization_barrier_lower(ctx, *args):
    if not args:
        return []
    return list(hlo.OptimizationBarrierOp(list(args)).results)


@lowering_for(lax.dce_sink_p)
def _dce_sink_lower(ctx, x, *, prevent_mlir_dce):
    if not prevent_mlir_dce:
        return []
    from laminax_dispatch.ffi import ffi_lowering  # ffi builds on the lowering package

    return ffi_lowering("dce_sink", has_side_effect=True)(ctx, x)


register_lowering(lax.mulhi_p, elementwise(chlo.mulhi))
