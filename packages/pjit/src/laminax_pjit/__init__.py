"""laminax pjit: meshes, PartitionSpec, NamedSharding, pjit, shard_map, pmap, multi-process.

This namespace is the user API the `laminax` facade re-exports (as `jax.sharding`,
`jax.experimental.pjit`, `jax.make_mesh` ...).
"""

from laminax_pjit import mesh_utils as mesh_utils
from laminax_pjit._mesh import AbstractDevice as AbstractDevice
from laminax_pjit._mesh import AbstractMesh as AbstractMesh
from laminax_pjit._mesh import AxisType as AxisType
from laminax_pjit._mesh import Mesh as Mesh
from laminax_pjit._mesh import get_abstract_mesh as get_abstract_mesh
from laminax_pjit._mesh import get_mesh as get_mesh
from laminax_pjit._mesh import set_mesh as set_mesh
from laminax_pjit._mesh import use_abstract_mesh as use_abstract_mesh
from laminax_pjit._mesh import use_mesh as use_mesh
from laminax_pjit._named_sharding import NamedSharding as NamedSharding
from laminax_pjit._partition_spec import P as P
from laminax_pjit._partition_spec import PartitionSpec as PartitionSpec
from laminax_pjit.mesh_utils import make_mesh as make_mesh

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "get_abstract_mesh",
    "get_mesh",
    "make_mesh",
    "mesh_utils",
    "set_mesh",
    "use_abstract_mesh",
    "use_mesh",
]
