"""laminax.debug: JAX's `jax.debug` (host callbacks by laminax-hostcb, sharding pictures by
laminax-pjit)."""

from laminax_hostcb import debug_callback as callback
from laminax_hostcb import debug_log as log
from laminax_hostcb import debug_print as print
from laminax_hostcb import DebugEffect as DebugEffect
from laminax_hostcb import OrderedDebugEffect as OrderedDebugEffect
from laminax_pjit import inspect_array_sharding as inspect_array_sharding
from laminax_pjit import visualize_array_sharding as visualize_array_sharding
from laminax_pjit import visualize_sharding as visualize_sharding

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
