"""`laminax.ops`: laminax's implementation lives in `laminax_core.ops`; this module re-exports its public names."""

from laminax_core.ops import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.ops import __all__ as __all__
