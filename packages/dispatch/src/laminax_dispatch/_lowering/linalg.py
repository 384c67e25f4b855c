"""Lowerings of `laminax_core/lax/linalg/`: the factorizations XLA implements natively.

`cholesky` and `triangular_solve` become `stablehlo.cholesky` and `stablehlo.triangular_solve`
(XLA's CPU expanders). Real JAX calls LAPACK through FFI custom calls on CPU instead, so results
agree to float rounding, not bit for bit. eigh, svd, qr and lu need LAPACK and have no lowering
yet (they run eagerly on the NumPy reference).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes, lax

from laminax_dispatch._lowering._core import lowering_for


@lowering_for(lax.linalg.cholesky_p)
def _cholesky_lower(ctx, x):
    return hlo.cholesky(x, lower=True)


@lowering_for(lax.linalg.triangular_solve_p)
def _triangular_solve_lower(
    ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    is_complex = dtypes.issubdtype(ctx.avals_in[0].dtype, np.complexfloating)
    if conjugate_a and is_complex and not transpose_a:
        a = hlo.complex(hlo.real(a), hlo.negate(hlo.imag(a)))
    if transpose_a:
        mode = "ADJOINT" if conjugate_a and is_complex else "TRANSPOSE"
    else:
        mode = "NO_TRANSPOSE"
    return hlo.triangular_solve(a, b, left_side, lower, unit_diagonal, hlo.TransposeAttr.get(mode))
