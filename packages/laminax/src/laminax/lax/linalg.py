"""`laminax.lax.linalg`: laminax's implementation lives in `laminax_core.lax.linalg`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.lax.linalg` and `laminax_core.lax.linalg` are the same objects.
"""

from laminax_core.lax.linalg import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.lax.linalg import __all__ as __all__
