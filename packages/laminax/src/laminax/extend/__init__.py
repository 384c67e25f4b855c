"""`jax.extend`: the API for libraries that extend laminax with their own primitives.

`extend.core.Primitive` makes a primitive; its rules go into the tables of
`laminax.interpreters` (`ad`, `batching`, `mlir`), or through `extend.mlir`. `extend.backend`
reaches the XLA clients, `extend.random` the threefry hash.
"""

from laminax.extend import backend as backend
from laminax.extend import core as core
from laminax.extend import mlir as mlir
from laminax.extend import linear_util as linear_util
from laminax.extend import random as random

__all__ = ["backend", "core", "linear_util", "mlir", "random"]
