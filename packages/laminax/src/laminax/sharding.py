"""laminax.sharding: JAX's `jax.sharding` (meshes, PartitionSpec, shardings, the mesh in
context), implemented by `laminax_pjit` on dispatch's `Sharding` protocol.

Not provided yet: explicit-sharding mode's `reshard`, `auto_axes`, `explicit_axes` and
`ManualAxisType`.
"""

from laminax_dispatch import Sharding as Sharding
from laminax_dispatch import SingleDeviceSharding as SingleDeviceSharding
from laminax_pjit import AbstractDevice as AbstractDevice
from laminax_pjit import AbstractMesh as AbstractMesh
from laminax_pjit import AxisType as AxisType
from laminax_pjit import Mesh as Mesh
from laminax_pjit import NamedSharding as NamedSharding
from laminax_pjit import PartitionSpec as PartitionSpec
from laminax_pjit import get_abstract_mesh as get_abstract_mesh
from laminax_pjit import get_mesh as get_mesh
from laminax_pjit import set_mesh as set_mesh
from laminax_pjit import use_abstract_mesh as use_abstract_mesh


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """All of an array on `device` (JAX: `jax.sharding.make_single_device_sharding`)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "set_mesh",
    "use_abstract_mesh",
]
