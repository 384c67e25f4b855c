"""`scipy.linalg` (`laminax_core.scipy.linalg`): factorizations and solvers over `lax.linalg`,
structured matrices, and the matrix exponential with its Fréchet derivative.

`_schur_functions.py` holds what the Schur decomposition gives (`schur`, `rsf2csf`, `sqrtm`,
`funm`, `solve_sylvester`), `_tridiagonal.py` the symmetric tridiagonal eigensolver.
"""

from laminax_core.scipy.linalg._decompositions import (
    cho_factor, cho_solve, cholesky, det, eigh, hessenberg, inv, lu, lu_factor, lu_solve, polar,
    qr, qr_multiply, solve, solve_triangular, svd,
)
from laminax_core.scipy.linalg._matfuncs import expm, expm_frechet
from laminax_core.scipy.linalg._schur_functions import (
    funm, rsf2csf, schur, solve_sylvester, sqrtm,
)
from laminax_core.scipy.linalg._tridiagonal import eigh_tridiagonal
from laminax_core.scipy.linalg._matrices import (
    block_diag, circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion,
    hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal, toeplitz,
)

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
    "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet",
    "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert", "hessenberg",
    "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve",
    "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
    "solve_triangular", "sqrtm", "svd", "toeplitz",
]  # fmt: skip
