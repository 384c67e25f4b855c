"""Checkpointing (rematerialization) helpers: `checkpoint_name`, the policies, the policies'
answers (`Saveable`, `Recompute`, `Offloadable`), and `print_saved_residuals`.

The public home of what `laminax.ad_checkpoint` re-exports under JAX's module name.
"""

from laminax_core._checkpoint_policies import Offloadable as Offloadable
from laminax_core._checkpoint_policies import Recompute as Recompute
from laminax_core._checkpoint_policies import Saveable as Saveable
from laminax_core._checkpoint_policies import checkpoint_name as checkpoint_name
from laminax_core._checkpoint_policies import checkpoint_policies as checkpoint_policies
from laminax_core._checkpoint_policies import name_p as name_p
from laminax_core._checkpoint_policies import print_saved_residuals as print_saved_residuals
from laminax_core._checkpoint_policies import saved_residuals as saved_residuals

__all__ = [
    "Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies", "name_p",
    "print_saved_residuals", "saved_residuals",
]  # fmt: skip
