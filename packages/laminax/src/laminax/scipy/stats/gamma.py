"""`laminax.scipy.stats.gamma`: laminax's implementation lives in `laminax_core.scipy.stats.gamma`; this module re-exports its public names."""

from laminax_core.scipy.stats.gamma import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.gamma import __all__ as __all__
