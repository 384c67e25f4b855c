"""`laminax.scipy.stats.truncnorm`: laminax's implementation lives in `laminax_core.scipy.stats.truncnorm`; this module re-exports its public names."""

from laminax_core.scipy.stats.truncnorm import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.truncnorm import __all__ as __all__
