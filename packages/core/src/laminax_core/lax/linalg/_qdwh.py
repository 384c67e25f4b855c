"""qdwh: the polar decomposition `x = u h` by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai and Gygi 2010), a composition of qr, cholesky and
triangular_solve, as JAX writes it (no primitive of its own).

Each step maps the singular values `s` of the iterate through `s (a + b s^2) / (1 + c s^2)`,
with weights chosen from a lower bound `l` of the smallest singular value; the bound's
sequence does not depend on `x` (it starts at eps after scaling), so the weights are computed
in Python before tracing. While `c` is large the step is taken through a QR factorization
(stable for ill-conditioned iterates), then through a Cholesky factorization (cheaper); once
the weights reach Halley's (3, 1, 3) it iterates until the iterate stops moving.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import get_aval
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._control_flow import fori_loop, while_loop
from laminax_core.lax._bitwise import bitwise_and, bitwise_not
from laminax_core.lax._reductions import reduce_max, reduce_sum
from laminax_core.lax._joining import concatenate
from laminax_core.lax._slicing import dynamic_index_in_dim, slice
from laminax_core.lax._structural import broadcasted_iota
from laminax_core.lax.linalg._lu_qr import qr
from laminax_core.lax.linalg._matrix import H, as_dtype, const, eye_like, matmul, real_dtype
from laminax_core.lax.linalg._triangular import cholesky, triangular_solve

__all__ = ["qdwh"]


def _weights(l: float):
    """The dynamically weighted Halley coefficients (a, b, c) for the bound `l`, and the next
    bound."""
    l2 = l * l
    d = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
    root = np.sqrt(1.0 + d)
    a = root + 0.5 * np.sqrt(8.0 - 4.0 * d + 8.0 * (2.0 - l2) / (l2 * root))
    b = (a - 1.0) ** 2 / 4.0
    c = a + b - 1.0
    return (a, b, c), l * (a + b * l2) / (1.0 + c * l2)


def _schedules(eps: float, max_iterations: int):
    """The weights of the QR steps and of the Cholesky steps, until the bound reaches 1."""
    qr_steps, cholesky_steps = [], []
    l, tol = eps, 5.0 * eps
    while l + tol < 1 and len(qr_steps) + len(cholesky_steps) < max_iterations:
        weights, l = _weights(l)
        (qr_steps if weights[2] > 100 else cholesky_steps).append(weights)
    return qr_steps, cholesky_steps


def _qr_step(u, a, b, c):
    """`(b/c) u + (a - b/c) / sqrt(c) Q1 Q2^H` with `[sqrt(c) u; I] = [Q1; Q2] R`."""
    m, n = get_aval(u).shape
    stacked = concatenate([ew.mul(ew.sqrt(c), u), eye_like((n, n), get_aval(u).dtype)], 0)
    q, _ = qr(stacked, full_matrices=False)
    q1, q2 = slice(q, (0, 0), (m, n)), slice(q, (m, 0), (m + n, n))
    ratio = ew.div(b, c)
    scale = ew.div(ew.sub(a, ratio), ew.sqrt(c))
    return ew.add(ew.mul(ratio, u), ew.mul(scale, matmul(q1, H(q2))))


def _cholesky_step(u, a, b, c):
    """`(b/c) u + (a - b/c) u (I + c u^H u)^-1`, the inverse through the Cholesky factor."""
    n = get_aval(u).shape[1]
    z = ew.add(eye_like((n, n), get_aval(u).dtype), ew.mul(c, matmul(H(u), u)))
    factor = cholesky(z)
    # u z^-1 = ((L L^H)^-1 u^H)^H: two triangular solves from the right
    y = triangular_solve(factor, u, left_side=False, lower=True, transpose_a=True,
                         conjugate_a=True)
    y = triangular_solve(factor, y, left_side=False, lower=True)
    ratio = ew.div(b, c)
    return ew.add(ew.mul(ratio, u), ew.mul(ew.sub(a, ratio), y))


def _frobenius(x):
    magnitude = ew.abs(x)
    return ew.sqrt(reduce_sum(ew.mul(magnitude, magnitude), (0, 1)))


def _max_abs_sum(x, axis):
    return reduce_max(reduce_sum(ew.abs(x), (axis,)), (0,))


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None, eps=None,
         dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition `x = u h` of a full-rank `x` (m, n), m >= n.

    Args:
      x: a float or complex matrix.
      is_hermitian: accepted for JAX's signature (unused there too).
      max_iterations: the most steps taken (default 10).
      eps: the steps stop once `|u_k - u_(k-1)|_F < (5 eps)^(1/3)` (default: the dtype's eps).
      dynamic_shape: `(m, n)`: the true shape of `x` padded with zeros beyond it.

    Returns:
      `(u, h, num_iters, is_converged)`: `u` (m, n) with orthonormal columns, `h` (n, n)
      Hermitian positive semi-definite, the steps taken, and whether they converged.

    Example:
      >>> u, h, _, _ = qdwh(np.diag(np.array([2.0, -3.0], np.float32)))
      >>> np.round(u, 4), np.round(h, 4)
      (array([[ 1.,  0.],
             [ 0., -1.]], dtype=float32), array([[2., 0.],
             [0., 3.]], dtype=float32))
    """
    del is_hermitian
    aval = get_aval(x)
    if aval.ndim != 2:
        raise ValueError(f"qdwh: the input must be a matrix, got shape {aval.shape}.")
    rows, cols = aval.shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(np.finfo(aval.dtype).eps) if eps is None else float(eps)
    if dynamic_shape is not None:
        m, n = dynamic_shape
        inside = bitwise_and(ew.lt(broadcasted_iota(np.int32, aval.shape, 0), np.int32(m)),
                                ew.lt(broadcasted_iota(np.int32, aval.shape, 1), np.int32(n)))
        x = ew.select_n(inside, ew.mul(x, const(0, x)), x)
    real = real_dtype(aval.dtype)
    # scale by an upper bound of the 2-norm, sqrt(|x|_1 |x|_inf)
    one_norm, inf_norm = _max_abs_sum(x, 0), _max_abs_sum(x, 1)
    inverse = ew.mul(ew.rsqrt(one_norm), ew.rsqrt(inf_norm))
    inverse = ew.select_n(ew.eq(one_norm, np.zeros((), real)), inverse, np.ones((), real))
    u = ew.mul(x, as_dtype(inverse, aval.dtype))
    tolerance = np.asarray((5.0 * eps) ** (1.0 / 3.0), real)
    qr_steps, cholesky_steps = _schedules(eps, max_iterations)

    def stepper(step, weights, check):
        table = np.asarray(weights, aval.dtype)

        def body(k, carry):
            u, moving = carry
            a, b, c = (dynamic_index_in_dim(dynamic_index_in_dim(table, k, 0, False), j, 0,
                                            False) for j in range(3))
            new = step(u, a, b, c)
            if check:
                moving = ew.gt(_frobenius(ew.sub(new, u)), tolerance)
            return new, moving

        return body

    moving = np.bool_(True)
    for step, weights, check in ((_qr_step, qr_steps, False),
                                 (_cholesky_step, cholesky_steps, True)):
        if weights:
            u, moving = fori_loop(np.int32(0), np.int32(len(weights)),
                                  stepper(step, weights, check), (u, moving))
    halley = tuple(np.asarray(v, aval.dtype) for v in (3.0, 1.0, 3.0))

    def keep_going(state):
        k, _, moving = state
        return bitwise_and(moving, ew.lt(k, np.int32(max_iterations)))

    def halley_step(state):
        k, u, _ = state
        new = _cholesky_step(u, *halley)
        return ew.add(k, np.int32(1)), new, ew.gt(_frobenius(ew.sub(new, u)), tolerance)

    taken = np.int32(len(qr_steps) + len(cholesky_steps))
    num_iters, u, moving = while_loop(keep_going, halley_step, (taken, u, moving))
    # one Newton-Schulz step polishes the orthogonality: u (3 I - u^H u) / 2
    u = ew.sub(ew.mul(const(1.5, u), u), ew.mul(const(0.5, u), matmul(u, matmul(H(u), u))))
    h = matmul(H(u), x)
    h = ew.div(ew.add(h, H(h)), const(2, h))
    return u, h, num_iters, bitwise_not(moving)
