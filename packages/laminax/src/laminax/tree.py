"""`laminax.tree`: laminax's implementation lives in `laminax_pytree.tree`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.tree` and `laminax_pytree.tree` are the same objects.
"""

from laminax_pytree.tree import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_pytree.tree import __all__ as __all__
