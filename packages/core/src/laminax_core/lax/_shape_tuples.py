"""Output-shape calculators for convolutions and windowed reductions, as JAX's lax offers
them (plain Python on shapes: no arrays involved)."""

from __future__ import annotations

import numpy as np

from laminax_core.lax._convolution import _conv_transpose_padding
from laminax_core.lax._windowed import padtype_to_pads

__all__ = [
    "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
    "conv_transpose_shape_tuple", "reduce_window_shape_tuple",
]  # fmt: skip


def _strided(size: int, window: int, stride: int) -> int:
    # the number of window positions: floor((size - window) / stride) + 1, at least 0
    return 0 if size < window else (size - window) // stride + 1


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count: int = 1):
    """The output shape of a convolution in (N, C, spatial...) layout.

    Args:
      lhs_shape: `(N, C_in, spatial...)`.
      rhs_shape: `(C_out, C_in / groups, window...)`.
      strides: the window strides.
      pads: `"SAME"`/`"VALID"`, or one `(low, high)` pair per spatial dim.
      batch_group_count: batch groups (divides N).

    Example:
      >>> conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (2, 2), "VALID")
      (2, 4, 4, 4)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads,
                                                                strict=True)]
    if any(d < 0 for d in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    spatial = tuple(_strided(d, int(k), int(s))
                    for d, k, s in zip(padded, rhs_shape[2:], strides, strict=True))
    batch = int(lhs_shape[0])
    if batch_group_count > 1:
        if batch % batch_group_count:
            raise ValueError(f"conv_shape_tuple: batch size {batch} is not divisible by "
                             f"batch_group_count={batch_group_count}.")
        batch //= batch_group_count
    return (batch, int(rhs_shape[0]), *spatial)


def conv_general_permutations(dimension_numbers):
    """The permutations that bring (lhs, rhs, out) layout strings such as
    `("NHWC", "HWIO", "NHWC")` to (N, C, spatial...), (O, I, spatial...), (N, C, spatial...),
    with the spatial dims in the kernel's order.

    Example:
      >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
      ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    spatial_sets = [set(spec) - set(pair) for spec, pair in zip(dimension_numbers, pairs,
                                                                strict=True)]
    if not spatial_sets[0] == spatial_sets[1] == spatial_sets[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def permutation(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(permutation(spec, pair) for spec, pair in zip(dimension_numbers, pairs,
                                                               strict=True))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_general_dilated` (no dilation) for layout strings.

    Example:
      >>> conv_general_shape_tuple((2, 9, 9, 3), (3, 3, 3, 4), (1, 1), "SAME",
      ...                          ("NHWC", "HWIO", "NHWC"))
      (2, 9, 9, 4)
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                           window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of `conv_transpose` for layout strings.

    Example:
      >>> conv_transpose_shape_tuple((1, 4, 4, 2), (3, 3, 2, 5), (2, 2), "SAME",
      ...                            ("NHWC", "HWIO", "NHWC"))
      (1, 8, 8, 5)
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs = [int(d) for d in np.take(lhs_shape, lhs_perm)]
    rhs = [int(d) for d in np.take(rhs_shape, rhs_perm)]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs[2:], window_strides, strict=True)]
    pad_totals = [int(np.sum(p)) for p in padding]
    spatial = [(i - 1) * s - k + 2 + p
               for i, k, s, p in zip(lhs[2:], rhs[2:], window_strides, pad_totals, strict=True)]
    out = (lhs[0], rhs[0], *spatial)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of a windowed reduction (`padding`: `(low, high)` pairs).

    Example:
      >>> reduce_window_shape_tuple((8, 8), (2, 2), (2, 2), ((0, 0), (0, 0)))
      (4, 4)
    """
    def dilate(shape, dilation):
        return [0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation, strict=True)]

    if base_dilation is not None:
        operand_shape = dilate(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = dilate(window_dimensions, window_dilation)
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(operand_shape, padding,
                                                                strict=True)]
    return tuple(_strided(d, int(k), int(s))
                 for d, k, s in zip(padded, window_dimensions, window_strides, strict=True))
