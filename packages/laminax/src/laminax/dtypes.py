"""`laminax.dtypes`: laminax's implementation lives in `laminax_core.dtypes`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.dtypes` and `laminax_core.dtypes` are the same objects.
"""

from laminax_core.dtypes import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.dtypes import __all__ as __all__
