"""`laminax.numpy.fft`: laminax's implementation lives in `laminax_core.numpy.fft`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.numpy.fft` and `laminax_core.numpy.fft` are the same objects.
"""

from laminax_core.numpy.fft import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.numpy.fft import __all__ as __all__
