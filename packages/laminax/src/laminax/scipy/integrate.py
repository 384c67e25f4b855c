"""`laminax.scipy.integrate`: laminax's implementation lives in `laminax_core.scipy.integrate`; this module re-exports its public names."""

from laminax_core.scipy.integrate import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.integrate import __all__ as __all__
