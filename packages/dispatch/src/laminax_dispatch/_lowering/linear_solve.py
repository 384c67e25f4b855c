"""Lowering of `laminax_core/lax/_linear_solve.py`: a custom linear solve runs its `solve`
jaxpr inline (the other jaxprs only matter to its derivatives), as JAX lowers it."""

from __future__ import annotations

from laminax_core import lax
from laminax_core.internal import eval_jaxpr

from laminax_dispatch._lowering._core import lower_fun, register_lowering


def _solve(*args, const_lengths, jaxprs):
    n_consts = sum(const_lengths)
    start = const_lengths.matvec + const_lengths.vecmat
    consts = args[start:start + const_lengths.solve]
    return eval_jaxpr(jaxprs.solve.jaxpr, jaxprs.solve.consts, *consts, *args[n_consts:])


register_lowering(lax.linear_solve_p, lower_fun(_solve, multiple_results=True))
