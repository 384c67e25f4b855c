"""hessenberg: reduction of a square matrix to upper Hessenberg form by Householder reflectors,
in LAPACK's gehrd storage. As in JAX, it has no derivative rule.

The result holds the Hessenberg matrix on and above the first subdiagonal and, below it, the
reflector vectors (`v_i` has an implicit 1 at row i + 1); `taus` (n - 1) holds their scalars:
`Q^H a Q = H` with `Q = H_0 ... H_{n-2}` and `H_i = I - tau_i v_i v_i^H`.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core.lax.linalg._matrix import (
    batch_leading,
    batched_reference,
    check_matrix,
)

__all__ = ["hessenberg"]


def hessenberg(a):
    """Reduces a square matrix (or batch) to upper Hessenberg form.

    Returns:
      `(a, taus)`: the Hessenberg matrix on and above the first subdiagonal with the
      Householder vectors below it, and the reflectors' scalars (..., n - 1).

    Example:
      >>> h, taus = hessenberg(np.diag(np.array([1.0, 2.0, 3.0], np.float32)))
      >>> taus
      array([0., 0.], dtype=float32)
    """
    return tuple(hessenberg_p.bind(a))


def _hessenberg_abstract_eval(a):
    check_matrix("hessenberg", a, square=True)
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*a.shape[:-2], max(n - 1, 0)), a.dtype)]


def _householder_vector(x):
    """LAPACK's larfg: `(beta, tau, v)` with `(I - tau v v^H)^H x = beta e_0`, v[0] = 1 and
    beta real."""
    alpha, rest = x[0], x[1:]
    rest_norm = np.linalg.norm(rest)
    if rest_norm == 0 and np.imag(alpha) == 0:
        return alpha, 0.0, np.concatenate([[1], np.zeros_like(rest)])
    beta = -np.copysign(np.sqrt(np.abs(alpha) ** 2 + rest_norm ** 2), np.real(alpha))
    tau = (beta - alpha) / beta
    return beta, tau, np.concatenate([[1], rest / (alpha - beta)])


def _hessenberg_one(a):
    a = a.copy()
    n = a.shape[0]
    taus = np.zeros(max(n - 1, 0), a.dtype)
    for i in range(n - 1):  # the last step only makes a complex subdiagonal entry real
        beta, tau, v = _householder_vector(a[i + 1:, i])
        taus[i] = tau
        # H from the right, then H^H from the left (columns left of i + 1 hold reflectors)
        a[:, i + 1:] -= tau * np.outer(a[:, i + 1:] @ v, np.conj(v))
        a[i + 1:, i + 1:] -= np.conj(tau) * np.outer(v, np.conj(v) @ a[i + 1:, i + 1:])
        a[i + 1, i] = beta
        a[i + 2:, i] = v[1:]
    return a, taus


def _hessenberg_reference(a):
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    if a.size == 0:
        return [a.copy(), np.zeros((*a.shape[:-2], max(a.shape[-1] - 1, 0)), a.dtype)]
    h, taus = batched_reference(lambda m: _hessenberg_one(m), wide)
    return [h.astype(a.dtype), taus.astype(a.dtype)]


def _hessenberg_jvp(primals, tangents):
    raise NotImplementedError("Differentiation rule for 'hessenberg' not implemented (JAX has "
                              "none either).")


hessenberg_p = define_primitive(
    "hessenberg",
    abstract_eval=_hessenberg_abstract_eval,
    reference=_hessenberg_reference,
    jvp=_hessenberg_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: hessenberg_p),
    multiple_results=True,
)
