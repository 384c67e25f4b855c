"""laminax.experimental.host_callback: the seed's host-callback API (`id_tap`, `id_print`,
`call`, `barrier_wait`), which JAX 0.10.2 no longer has; implemented by laminax-hostcb."""

from laminax_hostcb.host_callback import CallbackException as CallbackException
from laminax_hostcb.host_callback import TapFunctionException as TapFunctionException
from laminax_hostcb.host_callback import barrier_wait as barrier_wait
from laminax_hostcb.host_callback import call as call
from laminax_hostcb.host_callback import id_print as id_print
from laminax_hostcb.host_callback import id_tap as id_tap
from laminax_hostcb.host_callback import stop_outfeed_receiver as stop_outfeed_receiver

__all__ = [
    "CallbackException",
    "TapFunctionException",
    "barrier_wait",
    "call",
    "id_print",
    "id_tap",
    "stop_outfeed_receiver",
]
