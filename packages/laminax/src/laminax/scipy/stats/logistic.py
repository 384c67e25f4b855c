"""`laminax.scipy.stats.logistic`: laminax's implementation lives in `laminax_core.scipy.stats.logistic`; this module re-exports its public names."""

from laminax_core.scipy.stats.logistic import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.logistic import __all__ as __all__
