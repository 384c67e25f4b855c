"""Lowerings of `laminax_core/lax/_sorting.py`: `stablehlo.sort` with JAX's total-order
comparator (-0.0 equals 0.0, NaNs sort last), and `chlo.top_k`."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes, lax

from laminax_dispatch._lowering._core import compare, ir_constant, lowering_for
from laminax_dispatch._mlir import aval_to_ir_type


def _canonical_float(x, dtype):
    # -0.0 -> 0.0 and every NaN -> the canonical NaN, so TOTALORDER compares values
    zero = ir_constant(np.zeros((), dtype))
    x = hlo.select(compare(x, zero, "EQ", dtype), ir_constant(np.zeros((), dtype)), x)
    nan = ir_constant(np.asarray(np.nan, dtype))
    return hlo.select(compare(x, x, "NE", dtype), nan, x)


def _keys(x, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        part = np.finfo(dtype).dtype
        return [
            (_canonical_float(hlo.real(x), part), part),
            (_canonical_float(hlo.imag(x), part), part),
        ]
    if dtypes.issubdtype(dtype, np.floating):
        return [(_canonical_float(x, dtype), dtype)]
    return [(x, dtype)]


def _less(a, b, dtype, direction="LT"):
    if dtypes.issubdtype(dtype, np.floating):
        return hlo.compare(
            a,
            b,
            hlo.ComparisonDirectionAttr.get(direction),
            compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"),
        )
    return compare(a, b, direction, dtype)


def _comparator(block, dtypes_, num_keys):
    # lexicographic over the first num_keys operands: lt(k0) or (eq(k0) and (lt(k1) or ...))
    args = list(block.arguments)
    lhs_keys, rhs_keys = [], []
    for i, dtype in enumerate(dtypes_[:num_keys]):
        lhs_keys += _keys(args[2 * i], dtype)
        rhs_keys += _keys(args[2 * i + 1], dtype)
    result = None
    for (a, dtype), (b, _) in zip(reversed(lhs_keys), reversed(rhs_keys), strict=True):
        less = _less(a, b, dtype)
        if result is None:
            result = less
        else:
            result = hlo.or_(less, hlo.and_(_less(a, b, dtype, "EQ"), result))
    hlo.return_([result])


@lowering_for(lax.sort_p)
def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    op = hlo.SortOp(
        [aval_to_ir_type(a) for a in ctx.avals_out],
        list(operands),
        dimension=dimension,
        is_stable=is_stable,
    )
    scalars = []
    for aval in ctx.avals_in:
        scalar = aval_to_ir_type(aval.update(shape=()))
        scalars += [scalar, scalar]
    block = op.regions[0].blocks.append(*scalars)
    with ir.InsertionPoint(block):
        _comparator(block, [a.dtype for a in ctx.avals_in], num_keys)
    return list(op.results)


@lowering_for(lax.top_k_p)
def _top_k_lower(ctx, x, k, axis):
    # chlo.top_k works on the last axis; other axes are transposed there and back
    (aval,) = ctx.avals_in
    last = aval.ndim - 1
    if axis in (-1, last):
        return list(chlo.TopKOp(x, k).results)
    perm = [d for d in range(aval.ndim) if d != axis] + [axis]
    inverse = list(np.argsort(perm))
    values, indices = chlo.TopKOp(hlo.transpose(x, perm), k).results
    return [hlo.transpose(values, inverse), hlo.transpose(indices, inverse)]
