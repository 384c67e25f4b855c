"""`laminax.flatten_util`: laminax's implementation lives in `laminax_core.flatten_util`; this module re-exports its public names."""

from laminax_core.flatten_util import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.flatten_util import __all__ as __all__
