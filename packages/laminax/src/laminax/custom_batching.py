"""`laminax.custom_batching`: JAX's module of custom vmap rules.

The implementations live in `laminax_core`; this module gathers them under JAX's module name.
"""

from laminax_core.custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
