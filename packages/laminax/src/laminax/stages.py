"""`laminax.stages`: laminax's implementation lives in `laminax_dispatch.stages`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.stages` and `laminax_dispatch.stages` are the same objects.
"""

from laminax_dispatch.stages import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_dispatch.stages import __all__ as __all__
