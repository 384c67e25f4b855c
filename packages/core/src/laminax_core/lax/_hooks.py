"""The few operations that lax's lower families need from a family above them.

The families stack: `_helpers` < `_structural` < `_elementwise` < `_math`, and `_joining` /
`_slicing` < `_reductions`. Yet a rule below sometimes needs an operation above: the transpose of
`broadcast_in_dim` (or `pad`, `tile`) sums with `reduce_sum`, `full` converts its fill value with
`convert_element_type`, the jvp of a complex `abs` takes `conj` and `real`, and broadcasting
helpers squeeze, reshape and sum. Each family installs its operations here at import
(`install`), so the modules import only downward; every slot is filled before any rule runs,
since importing any part of `laminax_core` imports all of lax.
"""

from __future__ import annotations

__all__ = [
    "broadcast_in_dim", "conj", "convert_element_type", "install", "real", "reduce_sum",
    "reshape", "squeeze",
]  # fmt: skip


def _not_installed(*args, **kwargs):
    raise RuntimeError("laminax_core.lax has not installed its operations; import laminax_core")


broadcast_in_dim = conj = convert_element_type = real = _not_installed
reduce_sum = reshape = squeeze = _not_installed


def install(**ops) -> None:
    """Fills the named slots with the installing family's functions."""
    unknown = set(ops) - set(__all__) - {"install"}
    if unknown:
        raise TypeError(f"lax._hooks.install: no slot named {sorted(unknown)}")
    globals().update(ops)
