"""Lowering of `laminax_core/lax/_approx_top_k.py`: the exact answer XLA's non-TPU fallback
gives, as a stable sort of (NaN flag, value, index) along the reduction dimension, sliced to
the output size."""

from __future__ import annotations

import numpy as np
from laminax_core import lax

from laminax_dispatch._lowering._core import lower_fun, register_lowering


def _approx_top_k(x, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    values_aval, _ = lax.approx_top_k_p.abstract_eval(
        x.aval, k=k, reduction_dimension=reduction_dimension, recall_target=recall_target,
        is_max_k=is_max_k, reduction_input_size_override=reduction_input_size_override,
        aggregate_to_topk=aggregate_to_topk)[0]
    axis = reduction_dimension % x.aval.ndim
    index = lax.broadcasted_iota(np.int32, x.aval.shape, axis)
    is_nan = lax.ne(x, x)
    # max: NaNs first, then descending; min: ascending, NaNs last; ties keep index order
    flag = lax.convert_element_type(lax.bitwise_not(is_nan) if is_max_k else is_nan, np.int32)
    key = lax.neg(x) if is_max_k else x
    _, _, values, indices = lax.sort((flag, key, x, index), dimension=axis, is_stable=True,
                                     num_keys=2)
    n = values_aval.shape[axis]
    return [lax.slice_in_dim(values, 0, n, axis=axis), lax.slice_in_dim(indices, 0, n, axis=axis)]


register_lowering(lax.approx_top_k_p, lower_fun(_approx_top_k, multiple_results=True))
