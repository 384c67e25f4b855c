"""The ahead-of-time stages of `jit` (JAX: `jax.stages`): `Traced`, `Lowered`, `Compiled`,
the `ArgInfo` of their arguments, `CompilerOptions`, and the `Wrapped` protocol of `jit`'s
functions."""

from laminax_dispatch._stages import ArgInfo as ArgInfo
from laminax_dispatch._stages import Compiled as Compiled
from laminax_dispatch._stages import CompilerOptions as CompilerOptions
from laminax_dispatch._stages import Lowered as Lowered
from laminax_dispatch._stages import Traced as Traced
from laminax_dispatch._stages import Wrapped as Wrapped

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
