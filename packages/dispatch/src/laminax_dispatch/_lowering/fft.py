"""Lowering of `laminax_core/lax/_fft.py`: fft to `stablehlo.fft` (one op for all four types;
the `fft_type` attribute carries the enum member's name)."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import lowering_for
from laminax_dispatch._mlir import aval_to_ir_type


@lowering_for(lax.fft_p)
def _fft_lower(ctx, x, fft_type, fft_lengths):
    return hlo.fft(
        x,
        hlo.FftTypeAttr.get(lax.FftType(fft_type).name),
        list(fft_lengths),
        results=[aval_to_ir_type(ctx.avals_out[0])],
    )
