"""`scipy.linalg` (`laminax_core.scipy.linalg`): factorizations and solvers over `lax.linalg`,
structured matrices, and the matrix exponential with its Fréchet derivative.

Not provided (they need a Schur decomposition, which laminax's lax lacks): `schur`, `sqrtm`,
`funm`, `rsf2csf`, `solve_sylvester`; nor `eigh_tridiagonal`, `qr_multiply`,
`convolution_matrix`.
"""

from laminax_core.scipy.linalg._decompositions import (
    cho_factor, cho_solve, cholesky, det, eigh, hessenberg, inv, lu, lu_factor, lu_solve, polar,
    qr, solve, solve_triangular, svd,
)
from laminax_core.scipy.linalg._matfuncs import expm, expm_frechet
from laminax_core.scipy.linalg._matrices import (
    block_diag, circulant, companion, dft, fiedler, fiedler_companion, hadamard, hankel, helmert,
    hilbert, invhilbert, invpascal, leslie, pascal, toeplitz,
)

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "det", "dft",
    "eigh", "expm", "expm_frechet", "fiedler", "fiedler_companion", "hadamard", "hankel",
    "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
    "lu_factor", "lu_solve", "pascal", "polar", "qr", "solve", "solve_triangular", "svd",
    "toeplitz",
]  # fmt: skip
