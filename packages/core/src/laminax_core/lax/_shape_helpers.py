"""Shape and dtype helpers JAX's lax offers beside its primitives: `broadcast_shapes`,
`broadcast_like` and `empty` (compositions of broadcast_in_dim; no primitives of their own),
and `dtype`."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _shape_poly, dtypes
from laminax_core._avals import get_aval
from laminax_core.lax._helpers import broadcast_to_shape
from laminax_core.lax._structural import broadcast_in_dim, reshape

__all__ = ["broadcast_like", "broadcast_shapes", "dtype", "empty"]


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives `shapes` (aligned at the trailing dims; size-1
    dims stretch).

    Raises:
      ValueError: two shapes disagree in a dim where neither is 1.

    Example:
      >>> broadcast_shapes((2, 1), (3,))
      (2, 3)
    """
    if any(isinstance(d, _shape_poly.DimExpr) for shape in shapes for d in shape):
        return _shape_poly.broadcast_shapes(*shapes)
    shapes = [tuple(operator.index(d) for d in shape) for shape in shapes]
    if not shapes:
        return ()
    rank = max(len(shape) for shape in shapes)
    padded = [(1,) * (rank - len(shape)) + shape for shape in shapes]
    result = []
    for sizes in zip(*padded, strict=True):
        stretched = {d for d in sizes if d != 1}
        if len(stretched) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={shapes}; each dim must agree "
                "or be 1."
            )
        result.append(stretched.pop() if stretched else 1)
    return tuple(result)


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy style) to the shape of `like_arr`, keeping `arr`'s dtype.

    Example:
      >>> broadcast_like(np.float32(1), np.zeros((2, 2), np.int32))
      array([[1., 1.],
             [1., 1.]], dtype=float32)
    """
    aval, shape = get_aval(arr), get_aval(like_arr).shape
    target = broadcast_shapes(aval.shape, shape)
    if target != tuple(shape):
        raise ValueError(
            f"lax.broadcast_like: an array of shape {aval.shape} does not broadcast to "
            f"{shape}."
        )
    if aval.ndim < len(shape):
        arr = reshape(arr, (1,) * (len(shape) - aval.ndim) + aval.shape)
    return broadcast_to_shape(arr, shape)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents are unspecified (zeros here, as XLA
    gives for JAX's `empty`): a placeholder to be overwritten.

    Example:
      >>> empty((2,), np.int32).shape
      (2,)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = tuple(operator.index(d) for d in shape)
    return broadcast_in_dim(np.zeros((), dtype), shape, ())


def dtype(x) -> np.dtype:
    """The canonical dtype of a value, dtype-like or Python scalar type (64-bit types become
    32-bit ones unless x64 is enabled).

    Example:
      >>> dtype(np.float64(1.0))
      dtype('float32')
    """
    return dtypes.dtype(x, canonicalize=True)
