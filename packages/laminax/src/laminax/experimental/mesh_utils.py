"""laminax.experimental.mesh_utils: device arrays for `Mesh` (JAX:
`jax.experimental.mesh_utils`); TPU topology handlers (`device_kind_handler_dict`) are absent."""

from laminax_pjit.mesh_utils import create_device_mesh as create_device_mesh
from laminax_pjit.mesh_utils import create_hybrid_device_mesh as create_hybrid_device_mesh

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]
