"""`laminax.lax`: laminax's implementation lives in `laminax_core.lax`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.lax` and `laminax_core.lax` are the same objects.
"""

from laminax_core.lax import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.lax import __all__ as __all__
