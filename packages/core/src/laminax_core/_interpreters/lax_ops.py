"""The few lax operations that the interpreters and transformations emit themselves: a zero of
an aval, the sum of two tangents, a batch dimension moved or broadcast, a batch summed away.

lax sits above the interpreters (its primitives register rules in their tables), so it installs
its functions here when it is imported (`install`, called at the end of `lax/__init__.py`).
Importing any part of `laminax_core` imports lax first, so the slots are always filled before a
transformation runs.
"""

from __future__ import annotations

__all__ = [
    "add_any", "broadcast_in_dim", "convert_element_type", "install", "reduce_sum", "transpose",
]


def _not_installed(*args, **kwargs):
    raise RuntimeError("laminax_core.lax has not installed its operations; import laminax_core")


add_any = broadcast_in_dim = convert_element_type = reduce_sum = transpose = _not_installed


def install(**ops) -> None:
    """Fills the slots (`add_any`, `broadcast_in_dim`, `reduce_sum`, `transpose`) with lax's."""
    unknown = set(ops) - set(__all__) - {"install"}
    if unknown:
        raise TypeError(f"lax_ops.install: no slot named {sorted(unknown)}")
    globals().update(ops)
