"""laminax.experimental.mesh_utils: device arrays for `Mesh` (JAX:
`jax.experimental.mesh_utils`), and the registry of per-device-kind mesh builders that
`create_device_mesh` consults (`device_kind_handler_dict`)."""

from laminax_pjit.mesh_utils import create_device_mesh as create_device_mesh
from laminax_pjit.mesh_utils import create_hybrid_device_mesh as create_hybrid_device_mesh
from laminax_pjit.mesh_utils import device_kind_handler_dict as device_kind_handler_dict

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]
