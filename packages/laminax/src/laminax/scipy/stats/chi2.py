"""`laminax.scipy.stats.chi2`: laminax's implementation lives in `laminax_core.scipy.stats.chi2`; this module re-exports its public names."""

from laminax_core.scipy.stats.chi2 import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.chi2 import __all__ as __all__
