"""`jax.extend.random`: the threefry2x32 hash primitive under laminax's PRNG (JAX's names)."""

from laminax_core.random import threefry2x32_p as threefry2x32_p
from laminax_core.random import threefry_2x32 as threefry_2x32

__all__ = ["threefry2x32_p", "threefry_2x32"]
