"""`laminax.scipy.sparse`: iterative linear solvers (`laminax.scipy.sparse.linalg`)."""

from laminax.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
