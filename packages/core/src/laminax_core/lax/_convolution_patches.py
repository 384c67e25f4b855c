"""Convolutions built from `conv_general_dilated` and `dot_general`: extracting image patches
(`conv_general_dilated_patches`: a grouped convolution with an identity kernel puts every
window position of every channel into a channel of its own) and unshared, "locally
connected" convolutions (`conv_general_dilated_local`: the patches contracted with a
different kernel at every output position)."""

from __future__ import annotations

import math

import numpy as np

from laminax_core._avals import get_aval
from laminax_core.lax._convolution import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_general_dilated,
)
from laminax_core.lax._dot import dot_general
from laminax_core.lax._products import Precision, canonicalize_precision
from laminax_core.lax._structural import transpose

__all__ = [
    "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_local",
    "conv_general_dilated_patches",
]  # fmt: skip

# what conv_general_dilated's `dimension_numbers` accepts, as JAX names the type
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def _identity_kernel(dtype, n_channels: int, filter_shape, rhs_spec):
    """Kernel of `n_channels * prod(filter_shape)` output features, one per (channel, window
    position), each a one-hot window; laid out as `rhs_spec` says."""
    size = math.prod(filter_shape)
    eye = np.broadcast_to(np.eye(size, dtype=dtype), (n_channels, size, size))
    kernel = eye.reshape((n_channels * size, 1, *filter_shape))
    return np.moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with windows of `filter_shape` would see: every output
    position gets `in_channels * prod(filter_shape)` features, channel-major (feature
    `c * prod(filter_shape) + k` is channel `c` at window position `k`, row-major).

    Args:
      lhs: the input, laid out as `dimension_numbers` says (default NCHW...).
      filter_shape: the spatial window shape.
      window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers: as for
        `conv_general_dilated`.
      precision: the precision of `lhs` in the underlying convolution.
      preferred_element_type: the output dtype.

    Returns:
      The patches, laid out as the convolution's output.

    Example:
      >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
      >>> conv_general_dilated_patches(x, (2, 2), (2, 2), "VALID").shape
      (1, 4, 2, 2)
    """
    filter_shape = tuple(int(d) for d in filter_shape)
    aval = get_aval(lhs)
    numbers = conv_dimension_numbers(aval.shape, (1, 1, *filter_shape), dimension_numbers)
    n_channels = aval.shape[numbers.lhs_spec[1]]
    kernel = _identity_kernel(aval.dtype, n_channels, filter_shape, numbers.rhs_spec)
    return conv_general_dilated(
        lhs, kernel, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=numbers, feature_group_count=n_channels,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A locally connected ("unshared") convolution: like `conv_general_dilated`, but each
    output position has its own kernel.

    Args:
      lhs: the input.
      rhs: the kernels: the `rhs_spec` of `dimension_numbers` names its output-feature and
        input-feature dims (input features are `in_channels * prod(filter_shape)`, ordered as
        `conv_general_dilated_patches` orders them) and one spatial dim per output spatial
        dim, sized as the output.
      window_strides, padding, filter_shape, lhs_dilation, rhs_dilation, dimension_numbers:
        as for `conv_general_dilated_patches`.
      precision: None, a `Precision`, or a pair (for the patches and for the contraction).

    Returns:
      The output, laid out as `out_spec` says.

    Example:
      >>> x = np.ones((1, 1, 4, 4), np.float32)
      >>> w = np.ones((2, 4, 3, 3), np.float32)  # (out, in * 2 * 2, out_h, out_w)
      >>> conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)).shape
      (1, 2, 3, 3)
    """
    pair = canonicalize_precision(precision)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if pair is None else pair[0])
    shape = get_aval(lhs).shape
    _, rhs_spec, out_spec = conv_dimension_numbers(shape, (1, 1, *filter_shape),
                                                   dimension_numbers)
    # contract the patch features with the kernels' input features; the spatial dims of both
    # are batch dims, paired in output order
    lhs_batch = list(out_spec[2:])
    rhs_batch = [rhs_spec[2:][i] for i in sorted(range(len(lhs_batch)), key=lhs_batch.__getitem__)]
    numbers = (((out_spec[1],), (rhs_spec[1],)), (tuple(sorted(lhs_batch)), tuple(rhs_batch)))
    out = dot_general(patches, rhs, numbers, pair)
    # out: (spatial..., batch, out_features) -> the out_spec layout
    ndim = len(shape)
    order = [None] * ndim
    order[out_spec[0]], order[out_spec[1]] = ndim - 2, ndim - 1
    spatial = iter(range(ndim - 2))
    order = [next(spatial) if o is None else o for o in order]
    return transpose(out, tuple(order))
