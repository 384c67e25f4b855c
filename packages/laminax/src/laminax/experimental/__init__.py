"""laminax.experimental: JAX's `jax.experimental` namespace, filled by the layers that own each
submodule (pjit, maps and mesh_utils by laminax-pjit, host_callback and io_callback by
laminax-hostcb, export by laminax-export, and the rest of the public library by laminax-core)."""

from laminax_hostcb import io_callback as io_callback

from laminax.experimental import checkify as checkify
from laminax.experimental import export as export

__all__: list[str] = ["checkify", "export", "io_callback"]
