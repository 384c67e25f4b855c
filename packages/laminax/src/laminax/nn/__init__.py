"""`laminax.nn`: laminax's implementation lives in `laminax_core.nn`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.nn` and `laminax_core.nn` are the same objects.
"""

from laminax_core.nn import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.nn import __all__ as __all__
