"""`laminax.random`: laminax's implementation lives in `laminax_core.random`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.random` and `laminax_core.random` are the same objects.
"""

from laminax_core.random import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.random import __all__ as __all__
