"""What the laminax layers above pjit (hostcb, export, the facade) may use. No stability
promise outside laminax.

The resource environment of ``with mesh:`` (`thread_resources`, `resource_mesh`), the mesh in
context for bare PartitionSpecs (`context_mesh`, `resolve_spec`, `get_concrete_mesh`), the
empty meshes, and JAX's sharding error classes.
"""

from laminax_pjit._mesh import EMPTY_ENV as EMPTY_ENV
from laminax_pjit._mesh import ResourceEnv as ResourceEnv
from laminax_pjit._mesh import empty_abstract_mesh as empty_abstract_mesh
from laminax_pjit._mesh import empty_concrete_mesh as empty_concrete_mesh
from laminax_pjit._mesh import get_concrete_mesh as get_concrete_mesh
from laminax_pjit._mesh import resource_mesh as resource_mesh
from laminax_pjit._mesh import thread_resources as thread_resources
from laminax_pjit._named_sharding import DuplicateSpecError as DuplicateSpecError
from laminax_pjit._named_sharding import IndivisibleError as IndivisibleError
from laminax_pjit._named_sharding import check_pspec as check_pspec
from laminax_pjit._sharding_constraint import context_mesh as context_mesh
from laminax_pjit._sharding_constraint import resolve_spec as resolve_spec

__all__ = [
    "EMPTY_ENV",
    "DuplicateSpecError",
    "IndivisibleError",
    "ResourceEnv",
    "check_pspec",
    "context_mesh",
    "empty_abstract_mesh",
    "empty_concrete_mesh",
    "get_concrete_mesh",
    "resolve_spec",
    "resource_mesh",
    "thread_resources",
]
