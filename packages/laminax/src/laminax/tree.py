"""`laminax.tree`: JAX's `jax.tree` short names (`tree.map`, `tree.leaves`, ...).

Provided by `laminax_pytree.tree`; see there for the documentation.
"""

from laminax_pytree.tree import all as all  # noqa: A004
from laminax_pytree.tree import broadcast as broadcast
from laminax_pytree.tree import flatten as flatten
from laminax_pytree.tree import flatten_with_path as flatten_with_path
from laminax_pytree.tree import leaves as leaves
from laminax_pytree.tree import leaves_with_path as leaves_with_path
from laminax_pytree.tree import map as map  # noqa: A004
from laminax_pytree.tree import map_with_path as map_with_path
from laminax_pytree.tree import reduce as reduce
from laminax_pytree.tree import reduce_associative as reduce_associative
from laminax_pytree.tree import static as static
from laminax_pytree.tree import structure as structure
from laminax_pytree.tree import transpose as transpose
from laminax_pytree.tree import unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
