"""Lowerings of `laminax_core/lax/_cumulative.py`: each running reduction is one
`stablehlo.reduce_window` whose window spans the whole axis, padded on the side the running
reduction comes from (JAX's CPU lowering). Along a symbolic axis the window and padding are
values, so the op is JAX's `stablehlo.dynamic_reduce_window` custom call, which shape
refinement turns back into a `reduce_window` once the sizes are known."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import highest, lowest

from laminax_dispatch._lowering._core import compare, ir_constant, register_lowering
from laminax_dispatch._lowering.windowed import dynamic_reduce_window
from laminax_dispatch._mlir import aval_to_ir_type


def _logaddexp(a, b):
    # log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); a + b where a - b is NaN
    top = hlo.maximum(a, b)
    delta = hlo.subtract(a, b)
    is_nan = compare(delta, delta, "NE", np.float32)
    total = hlo.add(top, hlo.log_plus_one(hlo.exponential(hlo.negate(hlo.abs(delta)))))
    return hlo.select(is_nan, hlo.add(a, b), total)


def _cumulative(combine, identity):
    def rule(ctx, x, axis, reverse):
        (aval,) = ctx.avals_in
        n = aval.shape[axis]
        if n == 0:  # an empty running reduction is the (empty) operand; a 0-wide window is not
            return x
        window = [n if d == axis else 1 for d in range(aval.ndim)]
        pads = [
            ((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0)
            for d in range(aval.ndim)
        ]
        init = ir_constant(np.asarray(identity(aval.dtype), aval.dtype))
        if not isinstance(n, int):
            ones = [1] * aval.ndim
            return dynamic_reduce_window(ctx, x, init, aval, aval, window, ones, pads, ones,
                                         ones, lambda block: [combine(*block.arguments)])
        padding = ir.DenseIntElementsAttr.get(np.asarray(pads, np.int64), shape=[aval.ndim, 2])
        op = hlo.ReduceWindowOp(
            [aval_to_ir_type(aval)],
            [x],
            [init],
            window,
            window_strides=[1] * aval.ndim,
            base_dilations=[1] * aval.ndim,
            window_dilations=[1] * aval.ndim,
            padding=padding,
        )
        scalar = aval_to_ir_type(aval.update(shape=()))
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([combine(*block.arguments)])
        return op.result

    return rule


register_lowering(lax.cumsum_p, _cumulative(hlo.add, lambda dtype: 0))
register_lowering(lax.cumprod_p, _cumulative(hlo.multiply, lambda dtype: 1))
register_lowering(lax.cummax_p, _cumulative(hlo.maximum, lowest))
register_lowering(lax.cummin_p, _cumulative(hlo.minimum, highest))
register_lowering(lax.cumlogsumexp_p, _cumulative(_logaddexp, lambda dtype: -np.inf))
