"""`laminax.scipy.sparse.linalg`: laminax's implementation lives in `laminax_core.scipy.sparse.linalg`; this module re-exports its public names."""

from laminax_core.scipy.sparse.linalg import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.sparse.linalg import __all__ as __all__
