"""`laminax.scipy.stats.multivariate_normal`: laminax's implementation lives in `laminax_core.scipy.stats.multivariate_normal`; this module re-exports its public names."""

from laminax_core.scipy.stats.multivariate_normal import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.stats.multivariate_normal import __all__ as __all__
