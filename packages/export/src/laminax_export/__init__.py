"""laminax export: portable StableHLO artifacts in JAX's serialization format.

Today's API, as `jax.export` in JAX 0.10.2: `export(jit(f))(*specs) -> Exported`,
`Exported.serialize()` / `deserialize(bytes)` (JAX's format: artifacts move between laminax and
JAX both ways), `Exported.call(*args)` inside and outside jit, differentiable through the
exported backward pass.
"""

from laminax_export._call import call_exported as call_exported
from laminax_export._export import default_export_platform as default_export_platform
from laminax_export._export import export as export
from laminax_export._exported import DisabledSafetyCheck as DisabledSafetyCheck
from laminax_export._exported import Exported as Exported
from laminax_export._exported import (
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version,
)
from laminax_export._exported import (
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version,
)
from laminax_export._serialization import deserialize as deserialize
from laminax_export._shape_poly import SymbolicScope as SymbolicScope
from laminax_export._shape_poly import is_symbolic_dim as is_symbolic_dim
from laminax_export._shape_poly import symbolic_args_specs as symbolic_args_specs
from laminax_export._shape_poly import symbolic_shape as symbolic_shape
from laminax_export._serialization import (
    register_namedtuple_serialization as register_namedtuple_serialization,
)
from laminax_export._serialization import (
    register_pytree_node_serialization as register_pytree_node_serialization,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "SymbolicScope",
    "call_exported",
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
