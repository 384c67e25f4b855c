"""The ahead-of-time stages of `jit` (JAX: `jax.stages`): `Traced`, `Lowered`, `Compiled`."""

from laminax_dispatch._stages import Compiled as Compiled
from laminax_dispatch._stages import Lowered as Lowered
from laminax_dispatch._stages import Traced as Traced

__all__ = ["Compiled", "Lowered", "Traced"]
