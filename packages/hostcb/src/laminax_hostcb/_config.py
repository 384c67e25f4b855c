"""The seed's host-callback flags, as options of laminax's config (`laminax.config.update`, the
environment as `JAX_HOST_CALLBACK_INLINE` or `LAMINAX_HOST_CALLBACK_INLINE`, absl flags)."""

from __future__ import annotations

from laminax_core.config import config

__all__ = ["ad_transforms", "inline", "max_queue_byte_size", "outfeed"]

inline = config.define_bool_state(
    "jax_host_callback_inline",
    False,
    "Run host callbacks (id_tap, id_print, call) on the calling thread when they are applied "
    "eagerly, outside jit and control flow, so that tracebacks show the calling code. Inside a "
    "compiled computation the flag has no effect.",
)

max_queue_byte_size = config.define_int_state(
    "jax_host_callback_max_queue_byte_size",
    int(256 * 1e6),
    "The most bytes of tapped operands waiting for the tap-function thread. A computation that "
    "would exceed it pauses until the thread has caught up; nothing is dropped.",
)

outfeed = config.define_bool_state(
    "jax_host_callback_outfeed",
    False,
    "Accepted for compatibility and ignored: XLA's outfeed no longer exists in the runtime, and "
    "every host callback goes through XLA's FFI Python callbacks.",
)

ad_transforms = config.define_bool_state(
    "jax_host_callback_ad_transforms",
    False,
    "The seed's temporary backwards-compatibility mode: under jvp a tap also receives the "
    "tangents (transform 'jvp'), and under transposition the cotangents (transform "
    "'transpose'). id_tap warns with a FutureWarning while it is on.",
)
