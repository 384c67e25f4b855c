"""Lowering of `laminax_core/lax/_convolution.py`: `stablehlo.convolution`."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import lowering_for
from laminax_dispatch._lowering.dot import _precision_config
from laminax_dispatch._mlir import aval_to_ir_type


@lowering_for(lax.conv_general_dilated_p)
def _conv_general_dilated_lower(
    ctx,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
    preferred_element_type,
    **params,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    numbers = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0],
        input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]),
    )
    n_spatial = len(lhs_spec) - 2
    pads = np.asarray(padding, np.int64).reshape(n_spatial, 2)
    return hlo.ConvolutionOp(
        aval_to_ir_type(ctx.avals_out[0]),
        lhs,
        rhs,
        numbers,
        feature_group_count,
        batch_group_count,
        window_strides=list(window_strides),
        padding=ir.DenseIntElementsAttr.get(pads, shape=[n_spatial, 2]),
        lhs_dilation=list(lhs_dilation),
        rhs_dilation=list(rhs_dilation),
        window_reversal=[False] * n_spatial,
        precision_config=_precision_config(precision),
    ).result
