"""`laminax.scipy.special`: laminax's implementation lives in `laminax_core.scipy.special`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.scipy.special` and `laminax_core.scipy.special` are the same objects.
"""

from laminax_core.scipy.special import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.special import __all__ as __all__
