"""`laminax.scipy.stats.gumbel_r`: laminax's implementation lives in `laminax_core.scipy.stats.gumbel_r`; this module re-exports its public names."""

from laminax_core.scipy.stats.gumbel_r import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.gumbel_r import __all__ as __all__
