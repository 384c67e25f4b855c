"""`laminax.scipy.stats.expon`: laminax's implementation lives in `laminax_core.scipy.stats.expon`; this module re-exports its public names."""

from laminax_core.scipy.stats.expon import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.expon import __all__ as __all__
