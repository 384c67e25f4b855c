"""`laminax.scipy.stats.gumbel_l`: laminax's implementation lives in `laminax_core.scipy.stats.gumbel_l`; this module re-exports its public names."""

from laminax_core.scipy.stats.gumbel_l import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.gumbel_l import __all__ as __all__
