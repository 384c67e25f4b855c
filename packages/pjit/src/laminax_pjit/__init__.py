"""laminax pjit: meshes, PartitionSpec, NamedSharding, pjit, shard_map, pmap, multi-process.

This namespace is the user API the `laminax` facade re-exports (as `jax.sharding`,
`jax.experimental.pjit`, `jax.make_mesh` ...).
"""

from laminax_pjit import _shard_map_lowering  # noqa: F401  (registers shard_map's lowerings)
from laminax_pjit import _shard_map_checkify  # noqa: F401  (registers shard_map's checkify rule)
from laminax_pjit import distributed as distributed
from laminax_pjit import mesh_utils as mesh_utils
from laminax_pjit import multihost_utils as multihost_utils
from laminax_pjit._arrays import make_array_from_callback as make_array_from_callback
from laminax_pjit._arrays import make_array_from_process_local_data as make_array_from_process_local_data
from laminax_pjit._arrays import make_array_from_single_device_arrays as make_array_from_single_device_arrays
from laminax_pjit._explicit import auto_axes as auto_axes
from laminax_pjit._explicit import explicit_axes as explicit_axes
from laminax_pjit._explicit import reshard as reshard
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
from laminax_pjit._pjit import pjit as pjit
from laminax_pjit._sharding_constraint import sharding_constraint_p as sharding_constraint_p
from laminax_pjit._sharding_constraint import with_sharding_constraint as with_sharding_constraint
from laminax_pjit._partition_spec import PartitionSpec as PartitionSpec
from laminax_pjit._pmap import pmap as pmap
from laminax_pjit._shard_map import shard_map as shard_map
from laminax_pjit._shard_map import smap as smap
from laminax_pjit._inspect_sharding import inspect_array_sharding as inspect_array_sharding
from laminax_pjit._visualize import visualize_array_sharding as visualize_array_sharding
from laminax_pjit._visualize import visualize_sharding as visualize_sharding
from laminax_pjit.mesh_utils import make_mesh as make_mesh

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "auto_axes",
    "explicit_axes",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "get_abstract_mesh",
    "get_mesh",
    "distributed",
    "multihost_utils",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "mesh_utils",
    "pjit",
    "reshard",
    "sharding_constraint_p",
    "visualize_array_sharding",
    "inspect_array_sharding",
    "visualize_sharding",
    "with_sharding_constraint",
    "pmap",
    "set_mesh",
    "shard_map",
    "smap",
    "use_abstract_mesh",
    "use_mesh",
]
