"""`laminax.ref`: laminax's implementation lives in `laminax_core.ref`; this module re-exports its public names."""

from laminax_core.ref import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.ref import __all__ as __all__
