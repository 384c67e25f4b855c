"""`laminax.numpy.linalg`: laminax's implementation lives in `laminax_core.numpy.linalg`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.numpy.linalg` and `laminax_core.numpy.linalg` are the same objects.
"""

from laminax_core.numpy.linalg import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.numpy.linalg import __all__ as __all__
