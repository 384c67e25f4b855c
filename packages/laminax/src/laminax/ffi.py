"""`laminax.ffi`: calling C/C++ kernels through XLA's FFI (JAX's module), implemented in
`laminax_dispatch.ffi` (registration, headers, lowering) and laminax_core (`ffi_call`).

Not provided yet: `build_ffi_lowering_function` (`ffi_lowering` is, with dict backend configs
and `has_side_effect` only), `register_ffi_type`/`register_ffi_type_id`, and
`register_ffi_target_as_batch_partitionable`; `ffi_call` takes scalar and string attributes and
the `has_side_effect`/`vmap_method` options (not layouts, aliases or the legacy API).
"""

from laminax_dispatch.ffi import (
    ffi_call,
    ffi_lowering,
    include_dir,
    pycapsule,
    register_ffi_target,
)

__all__ = ["ffi_call", "ffi_lowering", "include_dir", "pycapsule", "register_ffi_target"]
