"""`laminax.scipy.stats.t`: laminax's implementation lives in `laminax_core.scipy.stats.t`; this module re-exports its public names."""

from laminax_core.scipy.stats.t import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.t import __all__ as __all__
