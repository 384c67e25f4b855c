"""Lowering of `laminax_core/lax/_dot.py`: dot_general to `stablehlo.dot_general`; and of
ragged_dot_general, through core's dense program."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import ragged_dot_program

from laminax_dispatch._lowering._core import lower_fun, lowering_for, register_lowering
from laminax_dispatch._mlir import aval_to_ir_type

_PRECISIONS = {
    None: "DEFAULT",
    "default": "DEFAULT",
    "high": "HIGH",
    "highest": "HIGHEST",
    "bfloat16": "DEFAULT",
    "tensorfloat32": "HIGH",
    "float32": "HIGHEST",
}


def _precision_name(precision) -> str:
    name = getattr(precision, "name", precision)
    if isinstance(name, str) and name.upper() in ("DEFAULT", "HIGH", "HIGHEST"):
        return name.upper()
    return _PRECISIONS.get(name if not isinstance(name, str) else name.lower(), "DEFAULT")


def _precision_config(precision) -> ir.ArrayAttr:
    # JAX always emits one precision per operand: `precision = [DEFAULT, DEFAULT]`
    pair = precision if isinstance(precision, tuple) else (precision, precision)
    return ir.ArrayAttr.get([hlo.PrecisionAttr.get(_precision_name(p)) for p in pair])


@lowering_for(lax.dot_general_p)
def _dot_general_lower(
    ctx, lhs, rhs, dimension_numbers, precision, preferred_element_type, **params
):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lhs_batch),
        rhs_batching_dimensions=list(rhs_batch),
        lhs_contracting_dimensions=list(lhs_contract),
        rhs_contracting_dimensions=list(rhs_contract),
    )
    return hlo.dot_general(
        aval_to_ir_type(ctx.avals_out[0]),
        lhs,
        rhs,
        numbers,
        precision_config=_precision_config(precision),
    )


# ragged_dot_general: dense, one masked copy of the lhs per group, as JAX computes it on CPU
register_lowering(lax.ragged_dot_general_p, lower_fun(ragged_dot_program))
