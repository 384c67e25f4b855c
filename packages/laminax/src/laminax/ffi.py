"""`laminax.ffi`: calling C/C++ kernels through XLA's FFI (JAX's module), implemented in
`laminax_dispatch.ffi` (registration, headers, lowering) and laminax_core (`ffi_call`).

`ffi_lowering` takes dict backend configs and `has_side_effect` (the typed FFI);
`build_ffi_lowering_function` also the legacy ABI's string configs; `ffi_call` takes scalar and
string attributes and the `has_side_effect`/`vmap_method` options (not layouts or aliases).
"""

from laminax_dispatch.ffi import (
    build_ffi_lowering_function,
    ffi_call,
    ffi_lowering,
    include_dir,
    pycapsule,
    register_ffi_target,
    register_ffi_target_as_batch_partitionable,
    register_ffi_type,
    register_ffi_type_id,
)

__all__ = [
    "build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir", "pycapsule",
    "register_ffi_target", "register_ffi_target_as_batch_partitionable", "register_ffi_type",
    "register_ffi_type_id",
]  # fmt: skip
