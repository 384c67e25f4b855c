"""`laminax.scipy.stats.wrapcauchy`: laminax's implementation lives in `laminax_core.scipy.stats.wrapcauchy`; this module re-exports its public names."""

from laminax_core.scipy.stats.wrapcauchy import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.wrapcauchy import __all__ as __all__
