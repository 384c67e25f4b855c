"""Lowering of `laminax_core/lax/_dot.py`: dot_general to `stablehlo.dot_general`; and of
ragged_dot_general, through core's dense program."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import (
    algorithm_compute_types,
    cpu_dot_presets,
    ragged_dot_program,
    scaled_dot_decomposition,
    scaled_dot_p,
)

from laminax_dispatch._lowering._core import lower_fun, lowering_for, register_lowering
from laminax_dispatch._mlir import _element_type, aval_to_ir_type

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


def _retyped(x: ir.Value, dtype) -> ir.Value:
    """`x` converted to `dtype`, built from the element type itself: an aval would round a
    64-bit type down without x64, and F64_F64_F64 computes in float64 regardless."""
    tensor = ir.RankedTensorType(x.type)
    target = _element_type(dtype)
    if tensor.element_type == target:
        return x
    return hlo.convert(ir.RankedTensorType.get(tensor.shape, target), x)


_PRESET_TYPES = {"F16": ir.F16Type.get, "BF16": ir.BF16Type.get, "TF32": ir.FloatTF32Type.get,
                 "F32": ir.F32Type.get, "F64": ir.F64Type.get}


def _algorithm_attr(algorithm, lhs_dtype, rhs_dtype):
    """stablehlo's dot_algorithm: a DotAlgorithm's own fields; for a preset, the types its
    name spells (`LHS_RHS_ACCUMULATION[_X<n>]`; float8 presets take the operands' types)."""
    if isinstance(algorithm, lax.DotAlgorithm):
        return hlo.DotAlgorithm.get(
            *(_element_type(t) for t in (algorithm.lhs_precision_type,
                                         algorithm.rhs_precision_type,
                                         algorithm.accumulation_type)),
            algorithm.lhs_component_count, algorithm.rhs_component_count,
            algorithm.num_primitive_operations, algorithm.allow_imprecise_accumulation)
    name = algorithm.name
    if name.startswith("ANY_F8"):
        types = (_element_type(lhs_dtype), _element_type(rhs_dtype), ir.F32Type.get())
    else:
        types = tuple(_PRESET_TYPES[part]() for part in name.split("_")[:3])
    operations = int(name.rpartition("_X")[2]) if "_X" in name else 1
    return hlo.DotAlgorithm.get(*types, 1, 1, operations, name.endswith("FAST_ACCUM"))


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
    (out_aval,) = ctx.avals_out
    if not isinstance(precision, lax.DotAlgorithm | lax.DotAlgorithmPreset):
        return hlo.dot_general(aval_to_ir_type(out_aval), lhs, rhs, numbers,
                               precision_config=_precision_config(precision))
    if precision not in cpu_dot_presets:  # XLA's CPU backend would silently ignore it
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on CPU")
    lhs_aval, rhs_aval = ctx.avals_in[:2]
    lhs_dtype, rhs_dtype, accumulation = algorithm_compute_types(
        precision, lhs_aval.dtype, rhs_aval.dtype, out_aval.dtype)
    accumulation = accumulation or out_aval.dtype
    extra = {} if precision is lax.DotAlgorithmPreset.DEFAULT else {
        "algorithm": _algorithm_attr(precision, lhs_dtype, rhs_dtype)}
    out_type = ir.RankedTensorType.get(out_aval.shape, _element_type(accumulation))
    out = hlo.dot_general(out_type, _retyped(lhs, lhs_dtype), _retyped(rhs, rhs_dtype), numbers,
                          precision_config=_precision_config(None), **extra)
    return _retyped(out, out_aval.dtype)


# ragged_dot_general: dense, one masked copy of the lhs per group, as JAX computes it on CPU
register_lowering(lax.ragged_dot_general_p, lower_fun(ragged_dot_program))


def _scaled_dot_composite(*operands, **params):
    # JAX's lowering: a composite "xla.scaled_dot" over the decomposition, which a backend with
    # native block-scaled matmuls may replace
    return lax.composite(scaled_dot_decomposition, name="xla.scaled_dot")(*operands, **params)


register_lowering(scaled_dot_p, lower_fun(_scaled_dot_composite))
