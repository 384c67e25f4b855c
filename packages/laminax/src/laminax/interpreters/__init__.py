"""`jax.interpreters`: the rule tables of laminax's transformations, under JAX's module names.

A library that defines its own primitive (`jax.extend.core.Primitive`) registers its rules
here exactly as with JAX: `ad.primitive_jvps[p] = rule`, `ad.primitive_transposes[p]`,
`batching.primitive_batchers[p]`, `mlir.register_lowering(p, rule)`. The tables are core's and
dispatch's own, so the primitive then works under every transformation and under jit.
"""

from laminax.interpreters import ad as ad
from laminax.interpreters import batching as batching
from laminax.interpreters import mlir as mlir
from laminax.interpreters import partial_eval as partial_eval
from laminax.interpreters import xla as xla

__all__ = ["ad", "batching", "mlir", "partial_eval", "xla"]
