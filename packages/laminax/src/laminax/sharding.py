"""laminax.sharding: JAX's `jax.sharding` (meshes, PartitionSpec, shardings, the mesh in
context), implemented by `laminax_pjit` on dispatch's `Sharding` protocol.

Explicit-sharding mode (`reshard`, `auto_axes`, `explicit_axes`, shardings in array types) is
`laminax_pjit._explicit`'s. `ManualAxisType` is the type core's avals carry inside a
`shard_map` with `check_vma=True` (`jax.typeof(x).mat`).
"""

from laminax_core.internal import ManualAxisType as ManualAxisType

from laminax_dispatch import Sharding as Sharding
from laminax_dispatch import SingleDeviceSharding as SingleDeviceSharding
from laminax_pjit import AbstractDevice as AbstractDevice
from laminax_pjit import AbstractMesh as AbstractMesh
from laminax_pjit import AxisType as AxisType
from laminax_pjit import Mesh as Mesh
from laminax_pjit import NamedSharding as NamedSharding
from laminax_pjit import PartitionSpec as PartitionSpec
from laminax_pjit import auto_axes as auto_axes
from laminax_pjit import explicit_axes as explicit_axes
from laminax_pjit import get_abstract_mesh as get_abstract_mesh
from laminax_pjit import get_mesh as get_mesh
from laminax_pjit import set_mesh as set_mesh
from laminax_pjit import reshard as reshard
from laminax_pjit import use_abstract_mesh as use_abstract_mesh


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """All of an array on `device` (JAX: `jax.sharding.make_single_device_sharding`)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]
