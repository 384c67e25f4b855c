"""conv_general_dilated: XLA's convolution with dimension numbers (`ConvDimensionNumbers`, or
string specs such as ('NHWC', 'HWIO', 'NHWC')), strides, 'SAME'/'VALID'/explicit padding,
lhs (input) and rhs (kernel) dilation, and feature/batch grouping.

The transposes to the input and to the kernel are convolutions themselves (of the cotangent
with the flipped kernel, and of the input with the cotangent) in the forward convolution's own
layouts, with permuted dimension numbers; batching folds the vmapped dimension into the batch,
output-feature or group dimensions.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import move_bdim
from laminax_core._interpreters.jvp import Zero
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import NUMERIC, check_dtype, define_primitive, jvp_from
from laminax_core._sharding_rules import conv_sharding, requested_sharding
from laminax_core.lax._elementwise import convert_element_type
from laminax_core.lax._joining import concatenate
from laminax_core.lax._slicing import slice
from laminax_core.lax._structural import expand_dims, reshape, rev, squeeze, transpose
from laminax_core.lax._windowed import (
    conv_general_vjp_lhs_padding,
    dilate_shape,
    padtype_to_pads,
)

__all__ = [
    "ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
    "conv_transpose", "conv_with_general_padding",
]
# the primitives, which lax exports beside their functions
__all__ += [
    "conv_general_dilated_p",
]  # fmt: skip


class ConvDimensionNumbers(NamedTuple):
    """Where the batch/feature/spatial dimensions are: `lhs_spec` = (batch, feature, spatial...),
    `rhs_spec` = (out feature, in feature, spatial...), `out_spec` = (batch, feature,
    spatial...)."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def _spec_from_string(spec: str, pair: str, rhs: str) -> tuple[int, ...]:
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if spec is not rhs:  # spatial dimensions are ordered as the kernel spec names them
        spatial.sort(key=lambda i: rhs.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`ConvDimensionNumbers` from None (NCHW, OIHW, NCHW), a `ConvDimensionNumbers`, or three
    strings such as ('NHWC', 'HWIO', 'NHWC').

    Example:
      >>> conv_dimension_numbers((2, 5, 6, 4), (3, 3, 4, 6), ("NHWC", "HWIO", "NHWC"))
      ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        raise TypeError(f"conv_general_dilated: lhs shape {tuple(lhs_shape)} and rhs shape "
                        f"{tuple(rhs_shape)} must have the same rank.")
    if dimension_numbers is None:
        default = tuple(range(ndim))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(dimension_numbers) != 3:
        raise TypeError(f"dimension_numbers must be None, a ConvDimensionNumbers or three "
                        f"strings, got {dimension_numbers!r}.")
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in dimension_numbers):
        for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
            if len(spec) != ndim or any(c not in spec for c in pair) or len(set(spec)) != ndim:
                raise TypeError(f"conv_general_dilated: dimension spec {spec!r} must name "
                                f"{ndim} distinct dimensions including {pair[0]!r} and "
                                f"{pair[1]!r}.")
        if set(lhs) - set("NC") != set(rhs) - set("OI") or set(out) - set("NC") != set(
                rhs) - set("OI"):
            raise TypeError(f"conv_general_dilated: spatial dimensions of {lhs!r}, {rhs!r} "
                            f"and {out!r} must use the same letters.")
        return ConvDimensionNumbers(_spec_from_string(lhs, "NC", rhs),
                                    _spec_from_string(rhs, "OI", rhs),
                                    _spec_from_string(out, "NC", rhs))
    return ConvDimensionNumbers(*(tuple(operator.index(d) for d in s) for s in
                                  dimension_numbers))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """A general n-d convolution (cross-correlation, as in XLA and deep learning).

    Args:
      lhs: the input, e.g. (N, C, H, W) by default.
      rhs: the kernel, e.g. (O, I, KH, KW) by default, with `I = C / feature_group_count`.
      window_strides: the stride in each spatial dimension.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or one (low, high) pair per spatial dimension.
      lhs_dilation: input dilation (transposed convolution); rhs_dilation: kernel dilation.
      dimension_numbers: see `conv_dimension_numbers`.
      feature_group_count, batch_group_count: grouped convolutions.
      precision, preferred_element_type: as for dot_general.

    Returns:
      The output, laid out by the output spec.

    Example:
      >>> out = conv_general_dilated(np.ones((1, 4, 4, 1), np.float32),
      ...                            np.ones((2, 2, 1, 1), np.float32), (1, 1), "VALID",
      ...                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
      >>> out.shape, float(out[0, 0, 0, 0])
      ((1, 3, 3, 1), 4.0)
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n_spatial = len(lhs_shape) - 2
    ones = (1,) * n_spatial
    lhs_dilation = tuple(lhs_dilation) if lhs_dilation is not None else ones
    rhs_dilation = tuple(rhs_dilation) if rhs_dilation is not None else ones
    strides = tuple(operator.index(s) for s in window_strides)
    if any(s < 1 for s in strides):
        raise ValueError(f"conv_general_dilated: window_strides must be positive, got "
                         f"{strides}; a stride of 1 visits every window position.")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        in_spatial = [lhs_shape[d] for d in dnums.lhs_spec[2:]]
        kernel = dilate_shape([rhs_shape[d] for d in dnums.rhs_spec[2:]], rhs_dilation)
        padding = padtype_to_pads(in_spatial, kernel, strides, padding)
    if any(operator.index(d) < 1 for d in (*lhs_dilation, *rhs_dilation)):
        raise TypeError(f"All dilations must be positive, got lhs_dilation={lhs_dilation}, "
                        f"rhs_dilation={rhs_dilation}.")
    padding = tuple(tuple(operator.index(v) for v in pair) for pair in padding)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count), precision=precision,
        preferred_element_type=None if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type), out_sharding=None)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """`conv_general_dilated` in the default NCHW/OIHW layout without dilation or groups."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """`conv_general_dilated` in the default layout with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _conv_transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """Padding of the dilated input that makes a transposed convolution 'SAME' or 'VALID'."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or explicit pairs, "
                         f"got {padding!r}.")
    return low, total - low


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None, preferred_element_type=None,
                   use_consistent_padding: bool = False):
    """A transposed ("deconvolution") convolution: the input is dilated by `strides`.

    Args:
      lhs, rhs: input and kernel; the default layouts are NC/IO/NC, NHC/HIO/NHC, NHWC/HWIO/NHWC
        or NHWDC/HWDIO/NHWDC by rank.
      strides: the input dilation.
      padding: 'SAME', 'VALID' or explicit (low, high) pairs.
      rhs_dilation: kernel dilation.
      transpose_kernel: flip the kernel spatially and swap its in/out features (the gradient
        of a convolution).

    Example:
      >>> conv_transpose(np.ones((1, 2, 1), np.float32), np.ones((3, 1, 1), np.float32), (2,),
      ...                "SAME").shape
      (1, 4, 1)
    """
    if use_consistent_padding:
        raise ValueError("conv_transpose: use_consistent_padding=True is not supported by "
                         "laminax; use the default padding or explicit pairs.")
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    if dimension_numbers is None:
        dimension_numbers = _TRANSPOSE_LAYOUTS.get(len(lhs_shape))
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    ones = (1,) * (len(lhs_shape) - 2)
    rhs_dilation = tuple(rhs_dilation) if rhs_dilation is not None else ones
    kernel = dilate_shape([rhs_shape[d] for d in dnums.rhs_spec[2:]], rhs_dilation)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(kernel, strides,
                                                                           strict=True)]
    if transpose_kernel:
        for axis in dnums.rhs_spec[2:]:  # one axis at a time, as JAX stages it
            rhs = rev(rhs, (axis,))
        perm = list(range(len(rhs_shape)))
        perm[dnums.rhs_spec[0]], perm[dnums.rhs_spec[1]] = dnums.rhs_spec[1], dnums.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, ones, padding, strides, rhs_dilation, dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ----- shape rule ---------------------------------------------------------------------------


def _conv_shape(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count):
    dn = dimension_numbers
    ndim = len(lhs_shape)
    n, c = lhs_shape[dn.lhs_spec[0]], lhs_shape[dn.lhs_spec[1]]
    o, i = rhs_shape[dn.rhs_spec[0]], rhs_shape[dn.rhs_spec[1]]
    where = f"lhs shape {tuple(lhs_shape)}, rhs shape {tuple(rhs_shape)}"
    for name, value in (("window_strides", window_strides), ("padding", padding),
                        ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(value) != ndim - 2:
            # JAX's types: explicit padding pairs TypeError, the other tuples ValueError
            raise (TypeError if name == "padding" else ValueError)(
                f"conv_general_dilated: {name} {value} must have one entry per spatial "
                f"dimension ({ndim - 2}).")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError("conv_general_dilated: at most one of feature_group_count and "
                         "batch_group_count may exceed 1.")
    if c != i * feature_group_count:
        raise ValueError(f"conv_general_dilated lhs feature dimension size ({c}) must equal the "
                        f"rhs input feature dimension size ({i}) times feature_group_count "
                        f"({feature_group_count}); got {where}.")
    if o % feature_group_count or o % batch_group_count or n % batch_group_count:
        raise ValueError(f"conv_general_dilated: the rhs output feature dimension ({o}) must be "
                        f"a multiple of feature_group_count ({feature_group_count}) and of "
                        f"batch_group_count ({batch_group_count}), which must also divide the "
                        f"lhs batch ({n}); got {where}.")
    in_spatial = dilate_shape([lhs_shape[d] for d in dn.lhs_spec[2:]], lhs_dilation)
    kernel = dilate_shape([rhs_shape[d] for d in dn.rhs_spec[2:]], rhs_dilation)
    spatial = [max(0, (s + lo + hi - k) // st + 1) if s + lo + hi >= k else 0
               for s, (lo, hi), k, st in zip(in_spatial, padding, kernel, window_strides,
                                             strict=True)]
    canonical = (n // batch_group_count, o, *spatial)
    out = [0] * ndim
    for dim, size in zip(dn.out_spec, canonical, strict=True):
        out[dim] = size
    return tuple(out)


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type, out_sharding):
    check_dtype("conv_general_dilated", lhs.dtype, NUMERIC)
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    shape = _conv_shape(lhs.shape, rhs.shape, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count, batch_group_count)
    dtype = preferred_element_type or lhs.dtype
    sharding = requested_sharding(out_sharding, len(shape))
    if out_sharding is None:  # a given one decides, also when it splits nothing
        sharding = conv_sharding(lhs, rhs, dimension_numbers, feature_group_count,
                                 batch_group_count, shape, dtype)
    return ShapedArray(shape, dtype, sharding=sharding)


# ----- NumPy reference ----------------------------------------------------------------------


def _canonical_reference(x, w, strides, padding, lhs_dilation, rhs_dilation, groups, bgroups):
    """The convolution of x (N, C, *S) with w (O, I, *K) in float64/complex128/int64."""
    spatial = x.ndim - 2
    grown = dilate_shape(x.shape[2:], lhs_dilation)
    padded_shape = [g + max(lo, 0) + max(hi, 0) for g, (lo, hi) in zip(grown, padding,
                                                                          strict=True)]
    padded = np.zeros(x.shape[:2] + tuple(padded_shape), x.dtype)
    inner = tuple(np.s_[max(lo, 0):max(lo, 0) + g:d]
                  for g, (lo, _), d in zip(grown, padding, lhs_dilation, strict=True))
    padded[(np.s_[:], np.s_[:], *inner)] = x
    crop = tuple(np.s_[max(-lo, 0):p - max(-hi, 0)]
                 for p, (lo, hi) in zip(padded_shape, padding, strict=True))
    padded = padded[(np.s_[:], np.s_[:], *crop)]
    kernel = np.zeros(w.shape[:2] + dilate_shape(w.shape[2:], rhs_dilation), w.dtype)
    kernel[(np.s_[:], np.s_[:], *(np.s_[::d] for d in rhs_dilation))] = w
    extent = kernel.shape[2:]
    if any(p < k for p, k in zip(padded.shape[2:], extent, strict=True)):
        out_spatial = [0] * spatial
        return np.zeros((x.shape[0] // bgroups, w.shape[0], *out_spatial), x.dtype)
    view = np.lib.stride_tricks.sliding_window_view(padded, extent, axis=tuple(
        range(2, 2 + spatial)))
    view = view[(np.s_[:], np.s_[:], *(np.s_[::s] for s in strides))]  # (N, C, *out, *K)
    blocks = []
    n_b, o_b = x.shape[0] // bgroups, w.shape[0] // (groups * bgroups)
    c_g = x.shape[1] // groups
    axes = (list(range(1, 2 + spatial))[:1] + list(range(2 + spatial, 2 + 2 * spatial)),
            [1] + list(range(2, 2 + spatial)))
    for b in range(bgroups):
        for g in range(groups):
            lhs_block = view[b * n_b:(b + 1) * n_b, g * c_g:(g + 1) * c_g]
            first = (b * groups + g) * o_b
            rhs_block = kernel[first:first + o_b]
            out = np.tensordot(lhs_block, rhs_block, axes=axes)  # (N_b, *out, O_b)
            blocks.append((b, np.moveaxis(out, -1, 1)))
    per_group = [np.concatenate([blk for bb, blk in blocks if bb == b], axis=1)
                 for b in range(bgroups)]
    return np.concatenate(per_group, axis=1)


def _conv_reference(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                    dimension_numbers, feature_group_count, batch_group_count, precision,
                    preferred_element_type, out_sharding):
    dn = dimension_numbers
    wide = np.complex128 if np.iscomplexobj(lhs) else (
        np.float64 if dtypes.issubdtype(lhs.dtype, np.floating) else np.int64)
    x = np.transpose(lhs, dn.lhs_spec).astype(wide)
    w = np.transpose(rhs, dn.rhs_spec).astype(wide)
    out = _canonical_reference(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                               feature_group_count, batch_group_count)
    out = np.transpose(out, np.argsort(dn.out_spec))
    return out.astype(preferred_element_type or lhs.dtype)


# ----- transposes ---------------------------------------------------------------------------
#
# Both gradients are convolutions expressed in the forward convolution's own layouts, by
# permuting its dimension numbers rather than moving data: the lhs gradient convolves the
# cotangent with the spatially reversed kernel whose in/out feature roles are swapped; the rhs
# gradient convolves the input with the cotangent with batch and feature roles swapped. This
# is the program JAX stages, so XLA receives no layout transposes to fold away.


def _swap_roles(spec):
    return (spec[1], spec[0], *spec[2:])


def _split_axis(x, axis, outer):
    """`x` with dimension `axis` split into (outer, size // outer)."""
    shape = get_aval(x).shape
    return reshape(x, (*shape[:axis], outer, shape[axis] // outer, *shape[axis + 1:]))


def _merge_axis(x, src, dst):
    """`x` with dimension `src` folded (as the major part) into dimension `dst`, where `dst`
    counts the dimensions left after removing `src`."""
    shape = get_aval(x).shape
    rest = [d for d in range(len(shape)) if d != src]
    perm = (*rest[:dst], src, *rest[dst:])
    sizes = [shape[d] for d in rest]
    sizes[dst] *= shape[src]
    return reshape(x, tuple(sizes), None if perm == tuple(range(len(shape))) else perm)


def _conv_transpose_lhs(ct, rhs, lhs_aval, params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    groups, bgroups = params["feature_group_count"], params["batch_group_count"]
    rhs_shape = get_aval(rhs).shape
    if max(groups, bgroups) > 1:  # the group axis moves from out features to in features
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], max(groups, bgroups)), rhs_spec[0],
                          rhs_spec[1])
    pads = conv_general_vjp_lhs_padding(
        [lhs_aval.shape[d] for d in lhs_spec[2:]], [rhs_shape[d] for d in rhs_spec[2:]],
        params["window_strides"], [get_aval(ct).shape[d] for d in out_spec[2:]],
        params["padding"], params["lhs_dilation"], params["rhs_dilation"])
    kernel = rev(rhs, rhs_spec[2:])
    if get_aval(kernel).dtype != get_aval(ct).dtype:  # a preferred_element_type cotangent
        kernel = convert_element_type(kernel, get_aval(ct).dtype)
    out = conv_general_dilated(
        ct, kernel, params["lhs_dilation"], pads, params["window_strides"],
        params["rhs_dilation"], ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec),
        max(groups, bgroups), 1, params["precision"], params["preferred_element_type"])
    if get_aval(out).dtype != lhs_aval.dtype:
        out = convert_element_type(out, lhs_aval.dtype)
    if bgroups > 1:  # the output's feature groups are the input's batch groups
        out = _merge_axis(_split_axis(out, lhs_spec[1], bgroups), lhs_spec[1], lhs_spec[0])
    return out


def _conv_transpose_rhs(ct, lhs, rhs_aval, params):
    dn = params["dimension_numbers"]
    if 0 in get_aval(ct).shape:  # the gradient convolution would have an empty kernel
        return Zero(rhs_aval)
    groups, bgroups = params["feature_group_count"], params["batch_group_count"]
    lhs_shape = get_aval(lhs).shape
    in_spatial = dilate_shape([lhs_shape[d] for d in dn.lhs_spec[2:]], params["lhs_dilation"])
    kernel = dilate_shape([rhs_aval.shape[d] for d in dn.rhs_spec[2:]], params["rhs_dilation"])
    out = dilate_shape([get_aval(ct).shape[d] for d in dn.out_spec[2:]],
                       params["window_strides"])
    # high padding that makes the gradient's spatial extent the kernel's
    pads = [(lo, k - 1 + o - i - lo) for (lo, _), k, o, i in zip(
        params["padding"], kernel, out, in_spatial, strict=True)]
    if get_aval(lhs).dtype != get_aval(ct).dtype:
        lhs = convert_element_type(lhs, get_aval(ct).dtype)
    # the input's features become the batch and the cotangent's batch the contracted feature;
    # feature groups become batch groups and vice versa
    grad = conv_general_dilated(
        lhs, ct, params["rhs_dilation"], pads, params["lhs_dilation"], params["window_strides"],
        ConvDimensionNumbers(_swap_roles(dn.lhs_spec), _swap_roles(dn.out_spec),
                             _swap_roles(dn.rhs_spec)),
        bgroups, groups, params["precision"], params["preferred_element_type"])
    if get_aval(grad).dtype != rhs_aval.dtype:
        grad = convert_element_type(grad, rhs_aval.dtype)
    return grad


def _conv_transpose(ct, lhs, rhs, **params):
    if isinstance(ct, Zero):
        return [None, None]
    if undefined(lhs) and undefined(rhs):
        raise TypeError("conv_general_dilated is transposed with both operands linear (a bug "
                        "in a jvp rule).")
    if undefined(lhs):
        return [_conv_transpose_lhs(ct, rhs, lhs.aval, params), None]
    grad = _conv_transpose_rhs(ct, lhs, rhs.aval, params)
    return [None, None if isinstance(grad, Zero) else grad]


# ----- batching -----------------------------------------------------------------------------


def _merge(x, bdim, into, size):
    """`x` with its batch dimension folded into its dimension `into` (numbered without the
    batch dimension), the batch index outermost; the dimension numbers stay valid."""
    x = move_bdim(x, bdim, into)
    shape = get_aval(x).shape
    return reshape(x, shape[:into] + (size * shape[into + 1],) + shape[into + 2:])


def _split(x, dim, size):
    shape = get_aval(x).shape
    return reshape(x, shape[:dim] + (size, shape[dim] // size) + shape[dim + 1:])


def _conv_batch(axis_data, args, dims, **params):
    (lhs, rhs), (l_dim, r_dim) = args, dims
    dn, size = params["dimension_numbers"], axis_data.size
    groups, bgroups = params["feature_group_count"], params["batch_group_count"]
    if r_dim is None and bgroups == 1:
        x = _merge(lhs, l_dim, dn.lhs_spec[0], size)
        out = conv_general_dilated_p.bind(x, rhs, **params)
        return _split(out, dn.out_spec[0], size), dn.out_spec[0]
    if l_dim is None and groups == 1 and bgroups == 1:
        w = _merge(rhs, r_dim, dn.rhs_spec[0], size)
        out = conv_general_dilated_p.bind(lhs, w, **params)
        return _split(out, dn.out_spec[1], size), dn.out_spec[1]
    if l_dim is not None and r_dim is not None and bgroups == 1:
        x = _merge(lhs, l_dim, dn.lhs_spec[1], size)
        w = _merge(rhs, r_dim, dn.rhs_spec[0], size)
        out = conv_general_dilated_p.bind(x, w, **{**params, "feature_group_count": groups * size})
        return _split(out, dn.out_spec[1], size), dn.out_spec[1]
    return _conv_batch_loop(size, args, dims, params)


def _block(x, axis, index, size):
    shape = get_aval(x).shape
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = index * size, (index + 1) * size
    return slice(x, start, limit)


def _conv_batch_loop(size, args, dims, params):
    rows = []
    for b in range(size):
        picked = [x if d is None else squeeze(_block(x, d, b, 1), (d,))
                  for x, d in zip(args, dims, strict=True)]
        rows.append(expand_dims(conv_general_dilated_p.bind(*picked, **params), (0,)))
    return concatenate(rows, 0), 0


conv_general_dilated_p = define_primitive(
    "conv_general_dilated",
    abstract_eval=_conv_abstract_eval,
    reference=_conv_reference,
    jvp=jvp_from(lambda t, ans, lhs, rhs, **p: conv_general_dilated_p.bind(t, rhs, **p),
                 lambda t, ans, lhs, rhs, **p: conv_general_dilated_p.bind(lhs, t, **p)),
    transpose=_conv_transpose,
    batch=_conv_batch,
)
