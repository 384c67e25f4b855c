"""`laminax.typing`: laminax's implementation lives in `laminax_dispatch.typing`; this module re-exports its public names."""

from laminax_dispatch.typing import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_dispatch.typing import __all__ as __all__
