"""`laminax.experimental.sparse`: laminax's implementation lives in `laminax_core.sparse`; this module re-exports its public names."""

from laminax_core.sparse import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.sparse import __all__ as __all__
