"""laminax's `scipy`: the `scipy.special` functions that JAX programs use most."""

from laminax_core.scipy import special as special

__all__ = ["special"]
