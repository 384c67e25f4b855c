"""`laminax.scipy.stats.cauchy`: laminax's implementation lives in `laminax_core.scipy.stats.cauchy`; this module re-exports its public names."""

from laminax_core.scipy.stats.cauchy import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.cauchy import __all__ as __all__
