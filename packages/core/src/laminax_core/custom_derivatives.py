"""Custom differentiation rules: `custom_jvp`, `custom_vjp` (with symbolic zeros),
`custom_gradient` and `closure_convert`, and the primitives they stage.

The public home of what `laminax.custom_derivatives` re-exports under JAX's module name.
"""

from laminax_core._custom_derivatives import CustomVJPPrimal as CustomVJPPrimal
from laminax_core._custom_derivatives import SymbolicZero as SymbolicZero
from laminax_core._custom_derivatives import custom_jvp as custom_jvp
from laminax_core._custom_derivatives import custom_jvp_call_p as custom_jvp_call_p
from laminax_core._custom_derivatives import custom_vjp as custom_vjp
from laminax_core._custom_derivatives import custom_vjp_call_p as custom_vjp_call_p
from laminax_core._custom_derivatives import (
    custom_vjp_primal_tree_values as custom_vjp_primal_tree_values,
)
from laminax_core._custom_derivatives import zero_from_primal as zero_from_primal
from laminax_core._custom_gradient import closure_convert as closure_convert
from laminax_core._linear_call import linear_call as linear_call
from laminax_core._linear_call import linear_call_p as linear_call_p
from laminax_core._custom_gradient import custom_gradient as custom_gradient

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
