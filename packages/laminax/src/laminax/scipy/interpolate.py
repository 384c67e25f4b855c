"""`laminax.scipy.interpolate`: laminax's implementation lives in `laminax_core.scipy.interpolate`; this module re-exports its public names."""

from laminax_core.scipy.interpolate import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.interpolate import __all__ as __all__
