"""laminax hostcb: calling Python on the host from jitted, transformed and sharded computations.

Today's callbacks under JAX's names (`pure_callback`, `io_callback`, `debug_callback`,
`debug_print`, `effects_barrier`) and the seed's `host_callback` API
(`laminax_hostcb.host_callback`: `id_tap`, `id_print`, `call`, `barrier_wait`), all on XLA's FFI
Python callbacks; `progress` reports from inside compiled loops.
"""

from laminax_dispatch import effects_barrier as effects_barrier

from laminax_hostcb import host_callback as host_callback
from laminax_hostcb import progress as progress
from laminax_hostcb._callback import IOEffect as IOEffect
from laminax_hostcb._callback import OrderedIOEffect as OrderedIOEffect
from laminax_hostcb._callback import io_callback as io_callback
from laminax_hostcb._callback import pure_callback as pure_callback
from laminax_hostcb._debugging import DebugEffect as DebugEffect
from laminax_hostcb._debugging import OrderedDebugEffect as OrderedDebugEffect
from laminax_hostcb._debugging import debug_callback as debug_callback
from laminax_hostcb._debugging import debug_log as debug_log
from laminax_hostcb._debugging import debug_print as debug_print

__all__ = [
    "DebugEffect",
    "IOEffect",
    "OrderedDebugEffect",
    "OrderedIOEffect",
    "debug_callback",
    "debug_log",
    "debug_print",
    "effects_barrier",
    "host_callback",
    "io_callback",
    "progress",
    "pure_callback",
]
