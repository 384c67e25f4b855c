"""Lowerings of `laminax_core/lax/_special.py`: CHLO's special functions, as JAX emits them.

bessel_i0e, igamma, igammac, igamma_grad_a and regularized_incomplete_beta have no CHLO op: as
in JAX, each lowers to a lax program (series and continued fractions in while loops, Chebyshev
polynomials) that core writes in `laminax_core/lax/_special_programs.py`, traced here with
`lower_fun`.
"""

from __future__ import annotations

from jaxlib.mlir.dialects import chlo
from laminax_core import lax
from laminax_core.internal import special_programs as programs

from laminax_dispatch._lowering._core import elementwise, lower_fun, register_lowering

register_lowering(lax.erf_p, elementwise(chlo.erf))
register_lowering(lax.erfc_p, elementwise(chlo.erfc))
register_lowering(lax.erf_inv_p, elementwise(chlo.erf_inv))
register_lowering(lax.lgamma_p, elementwise(chlo.lgamma))
register_lowering(lax.digamma_p, elementwise(chlo.digamma))
register_lowering(lax.igamma_p, lower_fun(programs.igamma_program))
register_lowering(lax.igammac_p, lower_fun(programs.igammac_program))
register_lowering(lax.igamma_grad_a_p, lower_fun(programs.igamma_grad_a_program))
register_lowering(lax.zeta_p, elementwise(chlo.zeta))
register_lowering(lax.polygamma_p, elementwise(chlo.polygamma))
register_lowering(lax.bessel_i0e_p, lower_fun(programs.bessel_i0e_program))
register_lowering(lax.bessel_i1e_p, elementwise(chlo.bessel_i1e))
register_lowering(lax.regularized_incomplete_beta_p, lower_fun(programs.betainc_program))
