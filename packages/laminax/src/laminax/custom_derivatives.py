"""`laminax.custom_derivatives`: JAX's module of custom differentiation rules.

The implementations live in `laminax_core`; this module gathers them under JAX's module name, so
`from laminax.custom_derivatives import custom_vjp, SymbolicZero` reads as it does with JAX.
"""

from laminax_core.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    linear_call,
    linear_call_p,
    zero_from_primal,
)

__all__ = [
    "linear_call",
    "linear_call_p",
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
