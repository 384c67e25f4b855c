"""`jax.interpreters.partial_eval`: staging functions into jaxprs and pruning them (JAX's names)."""

from __future__ import annotations

from laminax_core.internal import JaxprTrace as JaxprTrace
from laminax_core.internal import JaxprTracer as JaxprTracer
from laminax_core.internal import dce_jaxpr as dce_jaxpr

__all__ = ["JaxprTrace", "JaxprTracer", "dce_jaxpr"]
