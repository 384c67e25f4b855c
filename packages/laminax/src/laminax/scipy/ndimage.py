"""`laminax.scipy.ndimage`: laminax's implementation lives in `laminax_core.scipy.ndimage`; this module re-exports its public names."""

from laminax_core.scipy.ndimage import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.ndimage import __all__ as __all__
