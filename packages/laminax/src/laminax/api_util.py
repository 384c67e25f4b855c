"""`laminax.api_util`: laminax's implementation lives in `laminax_core.api_util`; this module re-exports its public names."""

from laminax_core.api_util import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.api_util import __all__ as __all__
