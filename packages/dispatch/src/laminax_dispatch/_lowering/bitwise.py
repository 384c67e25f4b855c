"""Lowerings of `laminax_core/lax/_bitwise.py`: one StableHLO op each."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax

from laminax_dispatch._lowering._core import elementwise, register_lowering

register_lowering(lax.and_p, elementwise(hlo.and_))
register_lowering(lax.or_p, elementwise(hlo.or_))
register_lowering(lax.xor_p, elementwise(hlo.xor))
register_lowering(lax.not_p, elementwise(hlo.not_))
register_lowering(lax.shift_left_p, elementwise(hlo.shift_left))
register_lowering(lax.shift_right_logical_p, elementwise(hlo.shift_right_logical))
register_lowering(lax.shift_right_arithmetic_p, elementwise(hlo.shift_right_arithmetic))
register_lowering(lax.population_count_p, elementwise(hlo.popcnt))
register_lowering(lax.clz_p, elementwise(hlo.count_leading_zeros))
