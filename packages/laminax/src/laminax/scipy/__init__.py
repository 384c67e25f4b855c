"""`laminax.scipy`: SciPy-style functions (`special`, `stats`, ...)."""

from laminax.scipy import special as special
from laminax.scipy import stats as stats

__all__ = ["special", "stats"]
