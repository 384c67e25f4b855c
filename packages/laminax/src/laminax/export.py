"""laminax.export: JAX's `jax.export` (JAX 0.10.2's API), implemented by laminax-export.

`export(jit(f))(*specs)` gives an `Exported`; `Exported.serialize()` writes JAX's format and
`deserialize(bytes)` reads artifacts written by laminax or by JAX. Shape polymorphism:
`symbolic_shape`, `symbolic_args_specs`, `SymbolicScope`.
"""

from laminax_export import DisabledSafetyCheck as DisabledSafetyCheck
from laminax_export import Exported as Exported
from laminax_export import SymbolicScope as SymbolicScope
from laminax_export import default_export_platform as default_export_platform
from laminax_export import deserialize as deserialize
from laminax_export import export as export
from laminax_export import is_symbolic_dim as is_symbolic_dim
from laminax_export import (
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version,
)
from laminax_export import (
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version,
)
from laminax_export import register_namedtuple_serialization as register_namedtuple_serialization
from laminax_export import register_pytree_node_serialization as register_pytree_node_serialization
from laminax_export import symbolic_args_specs as symbolic_args_specs
from laminax_export import symbolic_shape as symbolic_shape

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "SymbolicScope",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]
