"""Lowerings of `laminax_core/lax/_special.py`: CHLO's special functions, as JAX emits them.

Not lowered yet: bessel_i0e, igamma, igammac, igamma_grad_a and regularized_incomplete_beta,
which JAX expands into long lax programs (Cephes series and continued fractions in while
loops); they run eagerly on the NumPy reference and raise the missing-lowering error under jit.
"""

from __future__ import annotations

from jaxlib.mlir.dialects import chlo
from laminax_core import lax

from laminax_dispatch._lowering._core import elementwise, register_lowering

register_lowering(lax.erf_p, elementwise(chlo.erf))
register_lowering(lax.erfc_p, elementwise(chlo.erfc))
register_lowering(lax.erf_inv_p, elementwise(chlo.erf_inv))
register_lowering(lax.lgamma_p, elementwise(chlo.lgamma))
register_lowering(lax.digamma_p, elementwise(chlo.digamma))
register_lowering(lax.zeta_p, elementwise(chlo.zeta))
register_lowering(lax.polygamma_p, elementwise(chlo.polygamma))
register_lowering(lax.bessel_i1e_p, elementwise(chlo.bessel_i1e))
