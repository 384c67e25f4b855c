"""`laminax.lax`: laminax's implementation lives in `laminax_core.lax`; this module re-exports its public names.

The facade adds nothing of its own, so `laminax.lax` and `laminax_core.lax` are the same objects;
`with_sharding_constraint` and its primitive come from `laminax_pjit`, `device_put_p` (the
primitive of `jax.device_put`) from `laminax_dispatch`.
"""

from laminax_core.lax import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.lax import __all__ as _core_names
from laminax_dispatch.internal import device_put_p as device_put_p
from laminax_pjit import sharding_constraint_p as sharding_constraint_p
from laminax_pjit import with_sharding_constraint as with_sharding_constraint

__all__ = [*_core_names, "device_put_p", "sharding_constraint_p", "with_sharding_constraint"]
