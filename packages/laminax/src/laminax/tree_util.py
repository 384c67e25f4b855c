"""`laminax.tree_util`: laminax's implementation lives in `laminax_pytree`; this module re-exports it.

The facade adds nothing of its own, so `laminax.tree_util` and `laminax_pytree` are the same objects.
"""

import laminax_pytree as _pytree
from laminax_pytree import *  # noqa: F403  (the facade is the source module's __all__ ...)

# ... less its `tree` submodule, which JAX keeps apart as `jax.tree` (`laminax.tree` here).
del tree  # noqa: F821
__all__ = [name for name in _pytree.__all__ if name != "tree"]
