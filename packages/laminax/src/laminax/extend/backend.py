"""`jax.extend.backend`: the XLA clients laminax runs on."""

from laminax_dispatch import backends as backends
from laminax_dispatch import get_backend as get_backend

__all__ = ["backends", "get_backend"]
