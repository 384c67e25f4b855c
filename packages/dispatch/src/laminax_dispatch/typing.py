"""Static types for annotating laminax code (JAX: `jax.typing`).

`ArrayLike` is anything an operation accepts as an array without a copy of Python structure:
laminax Arrays and tracers, NumPy arrays and scalars, and Python numbers (not lists or tuples).
`DTypeLike` is anything that names a dtype.

Example:
  >>> def scale(x: ArrayLike, dtype: DTypeLike = "float32"): ...
  >>> isinstance(1.5, ArrayLike)
  True
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np
from laminax_core import Tracer

from laminax_dispatch._array import Array

__all__ = ["ArrayLike", "DTypeLike", "SupportsDType"]


class SupportsDType(Protocol):
    """An object with a `dtype` attribute (such as `laminax.numpy.float32`)."""

    @property
    def dtype(self) -> np.dtype: ...


# Tracers are listed because `isinstance(tracer, Array)` is False in laminax (True in JAX).
ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007
