"""laminax's `scipy.sparse`: iterative solvers for linear operators (`linalg`)."""

from laminax_core.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
