"""How a product or a transcendental function is computed, beyond `Precision`: dot
algorithms (`DotAlgorithm`, the `DotAlgorithmPreset`s) that `dot_general`'s `precision`
accepts, and the accuracy requests (`AccuracyMode`, `Tolerance`) of `exp`, `sin` ....

An algorithm names the types the operands are rounded to, the accumulation type, and how
many component products emulate a wider type. The lowering converts the operands to the
algorithm's types and computes in its accumulation type; on CPU only the presets XLA honours
there are accepted (`CPU_PRESETS`), as in JAX.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np
from ml_dtypes import bfloat16

__all__ = [
    "AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "Tolerance", "algorithm_compute_types",
    "as_algorithm",
]  # fmt: skip


class DotAlgorithm(NamedTuple):
    """A dot algorithm: the operands' precision types, the accumulation type, the component
    counts of each operand and the number of primitive products (all 1 for a plain product),
    and whether accumulation may be less precise on some steps.

    Example:
      >>> DotAlgorithm(np.float32, np.float32, np.float32).num_primitive_operations
      1
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F16, _F32, _F64, _BF16 = (np.dtype(t) for t in (np.float16, np.float32, np.float64, bfloat16))


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms, `LHS_RHS_ACCUMULATION` (an `_X<n>` suffix: n products emulate a
    wider type). `DEFAULT` lets the compiler choose; the `ANY_F8` presets take float8 operands.
    Pass one, or its name, as `precision`."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple | None:
        """The operand types computed with as they are (others convert to the first)."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16"):
            return (_F16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (_BF16, _F32)
        return (_F64,) if name == "F64_F64_F64" else (_F32,)

    @property
    def supported_rhs_types(self) -> tuple | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        """The accumulation type, or None where the output type decides it."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": _F16, "BF16_BF16_BF16": _BF16, "F64_F64_F64": _F64}.get(name, _F32)

    def supported_output_types(self, lhs_dtype, rhs_dtype) -> tuple | None:
        """The output types the algorithm produces directly (others convert after)."""
        both = np.promote_types(lhs_dtype, rhs_dtype)
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return None  # any float type (a float8 too)
        if self is DotAlgorithmPreset.F16_F16_F32:
            return (_F32, _F16) if both == _F16 else (_F32,)
        if self is DotAlgorithmPreset.BF16_BF16_F32:
            return (_F32, _BF16) if both == _BF16 else (_F32,)
        accumulation = self.accumulation_type
        return None if accumulation is None else (accumulation,)


# the presets XLA's CPU backend computes as asked (it silently ignores the others)
CPU_PRESETS = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16, DotAlgorithmPreset.F32_F32_F32,
    DotAlgorithmPreset.F64_F64_F64, DotAlgorithmPreset.BF16_BF16_F32,
    DotAlgorithmPreset.BF16_BF16_F32_X3, DotAlgorithmPreset.BF16_BF16_F32_X6,
})  # fmt: skip


def algorithm_compute_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """`(lhs, rhs, accumulation)` dtypes the algorithm computes with (None: as given)."""
    if isinstance(algorithm, DotAlgorithm):
        return tuple(np.dtype(t) for t in (algorithm.lhs_precision_type,
                                           algorithm.rhs_precision_type,
                                           algorithm.accumulation_type))

    def pick(dtype, supported):
        return dtype if supported is None or np.dtype(dtype) in supported else supported[0]

    lhs = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, pick(out_dtype, algorithm.supported_output_types(lhs, rhs))


def as_algorithm(precision):
    """A preset's name as the preset; anything else unchanged."""
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    return precision


class AccuracyMode(enum.Enum):
    """The accuracy a transcendental function is asked for: `HIGHEST`, or `DEFAULT`."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """The tolerances a transcendental function must meet: at most two of an absolute
    (`atol`), a relative (`rtol`) and a units-in-the-last-place (`ulps`) bound.

    Example:
      >>> Tolerance(atol=1e-6).atol
      1e-06
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps
