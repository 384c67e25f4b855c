"""Products over `dot_general`: `dot` (matrix and vector products, or explicit dimension
numbers), `batch_matmul`, and the `Precision` enum with its canonical form (a pair, one per
operand), as dot_general's `precision` param carries it."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from laminax_core import dtypes
from laminax_core._avals import get_aval
from laminax_core.lax._dot import dot_general
from laminax_core.lax._dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from laminax_core.lax._elementwise import convert_element_type

__all__ = [
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "batch_matmul",
    "dot",
    "canonicalize_precision",
]

# ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), as JAX spells the type
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]

_PRECISION_STRINGS = {
    "bfloat16": "DEFAULT", "fastest": "DEFAULT", "default": "DEFAULT",
    "tensorfloat32": "HIGH", "high": "HIGH",
    "float32": "HIGHEST", "highest": "HIGHEST",
}  # fmt: skip


class Precision(enum.Enum):
    """How precisely a product's operands are used on accelerators (the CPU always computes
    in full precision).

    Members: `DEFAULT` (fastest; one bfloat16 pass on TPU), `HIGH` (three passes or
    tensorfloat32), `HIGHEST` (full float32). `Precision("float32")` and the other strings
    JAX accepts ("bfloat16", "tensorfloat32", "fastest", "default", "high", "highest") name
    members too.

    Example:
      >>> Precision("highest")
      Precision.HIGHEST
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str) and value in _PRECISION_STRINGS:
            return cls[_PRECISION_STRINGS[value]]
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = (None | str | Precision | tuple[str, str] | tuple[Precision, Precision]
                 | DotAlgorithm | DotAlgorithmPreset)


def canonicalize_precision(precision):
    """`precision` as dot_general's param: None, a pair of `Precision`s (one per operand), or
    a dot algorithm (a `DotAlgorithm`, or a `DotAlgorithmPreset`, also given by name).

    Example:
      >>> canonicalize_precision("highest")
      (Precision.HIGHEST, Precision.HIGHEST)
    """
    if precision is None or isinstance(precision, DotAlgorithm | DotAlgorithmPreset):
        return precision
    if isinstance(precision, str) and precision in _PRECISION_STRINGS:
        return Precision(precision), Precision(precision)
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, list | tuple) and len(precision) == 2:
        # a pair is all Precisions or all strings (JAX rejects a mix)
        if all(isinstance(p, Precision) for p in precision) or all(
            isinstance(p, str) for p in precision
        ):
            return tuple(canonicalize_precision(p)[0] for p in precision)
    raise ValueError(
        f"precision must be None, a lax.Precision, one of the strings {sorted(_PRECISION_STRINGS)}"
        f", or a pair of those (one per operand), a lax.DotAlgorithmPreset or its name, or a "
        f"lax.DotAlgorithm; got {precision!r}."
    )


def _promoted(lhs, rhs):
    """Both operands in their promoted dtype (dot_general takes equal dtypes)."""
    lhs_dtype, rhs_dtype = get_aval(lhs).dtype, get_aval(rhs).dtype
    if lhs_dtype == rhs_dtype:
        return lhs, rhs
    common = dtypes.promote_types(lhs_dtype, rhs_dtype)
    return convert_element_type(lhs, common), convert_element_type(rhs, common)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """A matrix or vector product, or any `dot_general` when `dimension_numbers` is given.

    Args:
      lhs, rhs: the operands. Without `dimension_numbers` both must be 1-D or 2-D, and the
        last dim of `lhs` is contracted with the first of `rhs`.
      dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`.
      precision: None, a `Precision` or its string, or a pair of them.
      preferred_element_type: the output (and accumulation) dtype.
      out_sharding: accepted for JAX compatibility.

    Returns:
      The product (batch dims, then lhs free dims, then rhs free dims).

    Example:
      >>> dot(np.ones((2, 3), np.float32), np.ones(3, np.float32))
      array([3., 3.], dtype=float32)
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    if dimension_numbers is None:
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
                and lhs_shape[-1] == rhs_shape[0]):
            raise ValueError(
                "lax.dot: without dimension_numbers the operands must be 1-D or 2-D with "
                f"lhs.shape[-1] == rhs.shape[0]; got lhs_shape={lhs_shape} "
                f"rhs_shape={rhs_shape}. Pass dimension_numbers, or use lax.dot_general."
            )
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    lhs, rhs = _promoted(lhs, rhs)
    return dot_general(lhs, rhs, dimension_numbers, canonicalize_precision(precision),
                       preferred_element_type, out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products batched over all leading dims: `lhs[..., i, k] @ rhs[..., k, j]`.

    Example:
      >>> batch_matmul(np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)).shape
      (2, 3, 5)
    """
    lhs_ndim, rhs_ndim = get_aval(lhs).ndim, get_aval(rhs).ndim
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(
            f"lax.batch_matmul: operands must be at least 2-D, got ranks {lhs_ndim} and "
            f"{rhs_ndim}; use lax.dot for vectors."
        )
    if lhs_ndim != rhs_ndim:
        raise ValueError(
            f"lax.batch_matmul: operands must have the same rank, got {lhs_ndim} and "
            f"{rhs_ndim}; broadcast_in_dim the smaller one first."
        )
    batch = tuple(range(lhs_ndim - 2))
    numbers = (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch))
    return dot_general(lhs, rhs, numbers, canonicalize_precision(precision))

