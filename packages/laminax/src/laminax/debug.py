"""laminax.debug: JAX's `jax.debug` (host callbacks by laminax-hostcb)."""

from laminax_hostcb import debug_callback as callback
from laminax_hostcb import debug_print as print
from laminax_hostcb import DebugEffect as DebugEffect
from laminax_hostcb import OrderedDebugEffect as OrderedDebugEffect

__all__ = ["DebugEffect", "OrderedDebugEffect", "callback", "print"]
