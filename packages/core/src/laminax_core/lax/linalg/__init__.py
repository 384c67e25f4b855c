"""laminax's `lax.linalg`: matrix decompositions as primitives (JAX's names and params), with
jvp rules as JAX has them and batching over leading dimensions.

Modules: `_triangular.py` (cholesky, triangular_solve), `_lu_qr.py` (lu, lu_pivots_to_permutation,
qr), `_spectral.py` (eigh, svd), `_eig.py` (eig, and the implementation enums),
`_tridiagonal.py` (tridiagonal_solve), `_householder.py` (householder_product, ormqr),
`_hessenberg.py` (hessenberg), `_schur.py` (schur, tridiagonal), `_updates.py`
(cholesky_update, symmetric_product), `_qdwh.py` (qdwh, a composition), `_matrix.py`
(helpers the rules share).
"""

from laminax_core.lax.linalg._eig import EighImplementation as EighImplementation
from laminax_core.lax.linalg._eig import EigImplementation as EigImplementation
from laminax_core.lax.linalg._eig import SvdAlgorithm as SvdAlgorithm
from laminax_core.lax.linalg._eig import eig as eig
from laminax_core.lax.linalg._eig import eig_p as eig_p
from laminax_core.lax.linalg._hessenberg import hessenberg as hessenberg
from laminax_core.lax.linalg._hessenberg import hessenberg_p as hessenberg_p
from laminax_core.lax.linalg._householder import householder_product as householder_product
from laminax_core.lax.linalg._householder import householder_product_p as householder_product_p
from laminax_core.lax.linalg._householder import ormqr as ormqr
from laminax_core.lax.linalg._householder import ormqr_p as ormqr_p
from laminax_core.lax.linalg._lu_qr import lu as lu
from laminax_core.lax.linalg._lu_qr import lu_p as lu_p
from laminax_core.lax.linalg._lu_qr import lu_pivots_to_permutation as lu_pivots_to_permutation
from laminax_core.lax.linalg._lu_qr import (
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
)
from laminax_core.lax.linalg._lu_qr import qr as qr
from laminax_core.lax.linalg._lu_qr import qr_p as qr_p
from laminax_core.lax.linalg._qdwh import qdwh as qdwh
from laminax_core.lax.linalg._schur import schur as schur
from laminax_core.lax.linalg._schur import schur_p as schur_p
from laminax_core.lax.linalg._schur import tridiagonal as tridiagonal
from laminax_core.lax.linalg._schur import tridiagonal_p as tridiagonal_p
from laminax_core.lax.linalg._spectral import eigh as eigh
from laminax_core.lax.linalg._spectral import eigh_p as eigh_p
from laminax_core.lax.linalg._spectral import svd as svd
from laminax_core.lax.linalg._spectral import svd_p as svd_p
from laminax_core.lax.linalg._triangular import cholesky as cholesky
from laminax_core.lax.linalg._triangular import cholesky_p as cholesky_p
from laminax_core.lax.linalg._triangular import triangular_solve as triangular_solve
from laminax_core.lax.linalg._triangular import triangular_solve_p as triangular_solve_p
from laminax_core.lax.linalg._tridiagonal import tridiagonal_solve as tridiagonal_solve
from laminax_core.lax.linalg._updates import cholesky_update as cholesky_update
from laminax_core.lax.linalg._updates import cholesky_update_p as cholesky_update_p
from laminax_core.lax.linalg._updates import symmetric_product as symmetric_product
from laminax_core.lax.linalg._updates import symmetric_product_p as symmetric_product_p
from laminax_core.lax.linalg._tridiagonal import tridiagonal_solve_p as tridiagonal_solve_p

__all__ = [
    "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p",
    "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p", "hessenberg",
    "hessenberg_p", "householder_product", "householder_product_p", "lu", "lu_p",
    "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qdwh", "qr",
    "qr_p", "schur", "schur_p", "svd", "svd_p", "symmetric_product", "symmetric_product_p",
    "triangular_solve", "triangular_solve_p", "tridiagonal", "tridiagonal_p",
    "tridiagonal_solve", "tridiagonal_solve_p",
]  # fmt: skip
