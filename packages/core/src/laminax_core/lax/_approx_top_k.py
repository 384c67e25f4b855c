"""Approximate top-k (`approx_max_k`, `approx_min_k`): JAX's `approx_top_k` primitive.

Only TPUs approximate; other backends compute the exact answer, as XLA's fallback does and
as here: the values sorted along `reduction_dimension` (largest first for max, NaN counting
as largest; smallest first for min, NaN last; ties in index order) with their int32
indices, cut to `k` (or, with `aggregate_to_topk=False`, to the size XLA's TPU algorithm
would return, from jaxlib's own calculator).
"""

from __future__ import annotations

import operator

import numpy as np
from jaxlib import _jax

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import move_bdim
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import NOT_LINEAR, define_primitive

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p", "install_take_along_axis"]


def _bind(operand, k, reduction_dimension, recall_target, is_max_k,
          reduction_input_size_override, aggregate_to_topk):
    return approx_top_k_p.bind(
        operand, k=operator.index(k), reduction_dimension=operator.index(reduction_dimension),
        recall_target=float(recall_target), is_max_k=bool(is_max_k),
        reduction_input_size_override=operator.index(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk))


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The `k` largest values along `reduction_dimension` and their indices (exact on
    CPU and GPU; `recall_target` only matters on TPU).

    Args:
      operand: a floating array.
      k: how many to keep.
      reduction_dimension: the dimension to search.
      recall_target, reduction_input_size_override: TPU tuning knobs.
      aggregate_to_topk: False keeps the TPU's larger intermediate result size.

    Returns:
      `(values, indices)`, largest first.

    Example:
      >>> approx_max_k(np.array([1.0, 5.0, 3.0], np.float32), 2)[1]
      array([1, 2], dtype=int32)
    """
    return _bind(operand, k, reduction_dimension, recall_target, True,
                 reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The `k` smallest values along `reduction_dimension` and their indices (see
    `approx_max_k`).

    Example:
      >>> approx_min_k(np.array([1.0, 5.0, 3.0], np.float32), 2)[0]
      array([1., 3.], dtype=float32)
    """
    return _bind(operand, k, reduction_dimension, recall_target, False,
                 reduction_input_size_override, aggregate_to_topk)


def _output_size(size, ndim, k, recall_target, reduction_input_size_override, aggregate):
    if aggregate:
        return k

    return _jax.approx_top_k_reduction_output_size(
        size, ndim, k, recall_target, aggregate, reduction_input_size_override)[0]


def _approx_top_k_abstract_eval(x, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):
    if k <= 0:
        raise ValueError(f"approx_top_k: k must be positive, got {k}.")
    if x.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}.")
    if not -x.ndim <= reduction_dimension < x.ndim:
        raise ValueError(f"approx_top_k: reduction_dimension {reduction_dimension} is out of "
                         f"bounds for rank {x.ndim}.")
    dims = list(x.shape)
    size = dims[reduction_dimension]
    if size < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {size}, got {k}")
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(f"approx_top_k: operand must be a floating type, got {x.dtype.name}.")
    dims[reduction_dimension] = _output_size(size, x.ndim, k, recall_target,
                                             reduction_input_size_override, aggregate_to_topk)
    return [ShapedArray(tuple(dims), x.dtype, x.weak_type),
            ShapedArray(tuple(dims), np.dtype(np.int32))]


def _approx_top_k_reference(x, *, k, reduction_dimension, is_max_k, **params):
    (values_aval, _) = _approx_top_k_abstract_eval(
        get_aval(x), k=k, reduction_dimension=reduction_dimension, is_max_k=is_max_k, **params)
    axis = reduction_dimension % x.ndim
    moved = np.moveaxis(x, axis, -1)
    nan = np.isnan(moved)
    # lexsort: the last key is the primary one; it is stable, so ties keep index order
    keys = (-moved, ~nan) if is_max_k else (moved, nan)
    order = np.lexsort(keys, axis=-1)[..., :values_aval.shape[axis]]
    values = np.take_along_axis(moved, order, -1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


# The jvp gathers the tangent with `jnp.take_along_axis`, as JAX's does. numpy sits above lax
# and installs it (`install_take_along_axis`, from numpy/_indexing.py) when it is imported, which
# importing laminax_core does.
_take_along_axis = None


def install_take_along_axis(fn) -> None:
    """Gives approx_top_k's jvp rule `jnp.take_along_axis` (called by laminax_core.numpy)."""
    global _take_along_axis
    _take_along_axis = fn


def _approx_top_k_jvp(primals, tangents, *, reduction_dimension, **params):
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, reduction_dimension=reduction_dimension, **params)
    if isinstance(t, Zero):
        return [values, indices], [Zero.from_primal_value(values), Zero.from_primal_value(indices)]
    axis = reduction_dimension % get_aval(x).ndim
    t_values = _take_along_axis(t, indices, axis)
    return [values, indices], [t_values, Zero.from_primal_value(indices)]


def _approx_top_k_batch(axis_data, args, dims, *, reduction_dimension, **params):
    x = move_bdim(args[0], dims[0], 0)
    dim = reduction_dimension if reduction_dimension < 0 else reduction_dimension + 1
    return approx_top_k_p.bind(x, reduction_dimension=dim, **params), [0, 0]


approx_top_k_p = define_primitive(
    "approx_top_k",
    abstract_eval=_approx_top_k_abstract_eval,
    reference=_approx_top_k_reference,
    jvp=_approx_top_k_jvp,
    transpose=NOT_LINEAR,
    batch=_approx_top_k_batch,
    multiple_results=True,
)
