"""`laminax.numpy`: laminax's implementation lives in `laminax_core.numpy`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.numpy` and `laminax_core.numpy` are the same objects.
"""

from laminax_core.numpy import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.numpy import __all__ as __all__
