"""`jax.interpreters.xla`: eager execution of one primitive on XLA (JAX's names)."""

from __future__ import annotations

from jaxlib.xla_client import Client as Backend
from laminax_dispatch.internal import apply_primitive as _apply_primitive

__all__ = ["Backend", "apply_primitive"]


def apply_primitive(primitive, *args, **params):
    """Runs `primitive(*args, **params)` now, compiled by XLA, and returns its Array(s)."""
    return _apply_primitive(primitive, list(args), params)
