"""Lowering of `laminax_core/random`'s primitive: threefry2x32 expands into lax operations
(`threefry2x32_lax`, the same 20 rounds), as JAX lowers it on CPU."""

from __future__ import annotations

from laminax_core.internal import threefry2x32_lax
from laminax_core.random import threefry2x32_p

from laminax_dispatch._lowering._core import lower_fun, register_lowering

register_lowering(threefry2x32_p, lower_fun(threefry2x32_lax, multiple_results=True))
