"""`laminax.nn.initializers`: laminax's implementation lives in `laminax_core.nn.initializers`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.nn.initializers` and `laminax_core.nn.initializers` are the same objects.
"""

from laminax_core.nn.initializers import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.nn.initializers import __all__ as __all__
