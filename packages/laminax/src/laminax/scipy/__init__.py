"""`laminax.scipy`: SciPy-style functions (today `laminax.scipy.special`)."""

from laminax.scipy import special as special

__all__ = ["special"]
