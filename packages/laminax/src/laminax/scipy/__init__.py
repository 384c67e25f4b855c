"""`laminax.scipy`: SciPy-style functions (`special`, `stats`, ...)."""

from laminax.scipy import linalg as linalg
from laminax.scipy import optimize as optimize
from laminax.scipy import special as special
from laminax.scipy import stats as stats

__all__ = ["linalg", "optimize", "special", "stats"]
