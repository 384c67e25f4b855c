"""`laminax.scipy.cluster.vq`: laminax's implementation lives in `laminax_core.scipy.cluster.vq`; this module re-exports its public names."""

from laminax_core.scipy.cluster.vq import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.scipy.cluster.vq import __all__ as __all__
