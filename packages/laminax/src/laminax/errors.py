"""`laminax.errors`: laminax's implementation lives in `laminax_core.errors`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.errors` and `laminax_core.errors` are the same objects.
"""

from laminax_core.errors import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.errors import __all__ as __all__
