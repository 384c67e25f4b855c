"""`laminax.image`: laminax's implementation lives in `laminax_core.image`; this module re-exports its public names."""

from laminax_core.image import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.image import __all__ as __all__
