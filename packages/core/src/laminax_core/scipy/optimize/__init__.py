"""`scipy.optimize` (`laminax_core.scipy.optimize`): `minimize` with BFGS and L-BFGS."""

from laminax_core.scipy.optimize._minimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
