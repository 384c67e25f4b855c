"""`laminax.ad_checkpoint`: JAX's module of checkpointing helpers (`checkpoint_name`, the
policies, `print_saved_residuals`).

The implementations live in `laminax_core`; this module gathers them under JAX's module name.
"""

from laminax_core.ad_checkpoint import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_name,
    checkpoint_policies,
    print_saved_residuals,
)

__all__ = [
    "Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies",
    "print_saved_residuals",
]  # fmt: skip
