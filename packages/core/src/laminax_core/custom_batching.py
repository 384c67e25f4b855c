"""Custom batching rules: `custom_vmap` (with `def_vmap`), `sequential_vmap`, and the primitive
they stage.

The public home of what `laminax.custom_batching` re-exports under JAX's module name.
"""

from laminax_core._custom_batching import custom_vmap as custom_vmap
from laminax_core._custom_batching import custom_vmap_call_p as custom_vmap_call_p
from laminax_core._custom_batching import sequential_vmap as sequential_vmap

__all__ = ["custom_vmap", "custom_vmap_call_p", "sequential_vmap"]
