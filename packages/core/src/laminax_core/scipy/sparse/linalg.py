"""`scipy.sparse.linalg`'s Krylov solvers on pytrees of arrays: `cg` and `bicgstab` as lax
while loops, wrapped in `custom_linear_solve` so their gradients are implicit (a solve with the
transposed operator) rather than differentiated through the iterations."""

from __future__ import annotations

import functools

import numpy as np
from laminax_pytree import tree_leaves, tree_map, tree_structure

from laminax_core import lax
from laminax_core import numpy as jnp

__all__ = ["bicgstab", "cg"]


def _vdot(a, b):
    """Σ conj(a)·b over the leaves, in the leaves' common dtype."""
    return sum(jnp.vdot(x, y) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def _norm2(a):
    return jnp.real(_vdot(a, a))


def _axpy(alpha, x, y):
    return tree_map(lambda u, v: alpha * u + v, x, y)


def _sub(x, y):
    return tree_map(lax.sub, x, y)


def _as_operator(a):
    if callable(a):
        return a
    matrix = jnp.asarray(a)
    return lambda x: jnp.dot(matrix, x, precision=lax.Precision.HIGHEST)


def _identity(x):
    return x


def _cg(A, b, x0, *, tol, atol, maxiter, M):  # noqa: N803 (SciPy's names)
    atol2 = jnp.maximum(tol * tol * _norm2(b), atol * atol)
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = jnp.result_type(*tree_leaves(b))

    def cond(state):
        _, r, gamma, _, k = state
        residual = _norm2(r) if M is not _identity else jnp.real(gamma)
        return (residual > atol2) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = (gamma / _vdot(p, ap)).astype(dtype)
        x = _axpy(alpha, p, x)
        r = _axpy(-alpha, ap, r)
        z = M(r)
        new_gamma = _vdot(r, z).astype(dtype)
        p = _axpy(new_gamma / gamma, p, z)
        return x, r, new_gamma, p, k + 1

    state = (x0, r0, _vdot(r0, z0).astype(dtype), z0, 0)
    return lax.while_loop(cond, body, state)[0]


def _bicgstab(A, b, x0, *, tol, atol, maxiter, M):  # noqa: N803 (SciPy's names)
    atol2 = jnp.maximum(tol * tol * _norm2(b), atol * atol)
    r0 = _sub(b, A(x0))
    one = jnp.ones((), jnp.result_type(*tree_leaves(b)))

    def cond(state):
        r, k = state[1], state[-1]
        return (_norm2(r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, shadow, alpha, omega, rho, p, q, k = state
        new_rho = _vdot(shadow, r)
        beta = new_rho / rho * alpha / omega
        p = tree_map(lambda r_, p_, q_: r_ + beta * (p_ - omega * q_), r, p, q)
        phat = M(p)
        q = A(phat)
        alpha = new_rho / _vdot(shadow, q)
        s = _axpy(-alpha, q, r)
        # A small enough half-step residual ends the iteration before the stabilizing step.
        done = _norm2(s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot(t, s) / _vdot(t, t)
        half = _axpy(alpha, phat, x)
        x = tree_map(functools.partial(jnp.where, done), half, _axpy(omega, shat, half))
        r = tree_map(functools.partial(jnp.where, done), s, _axpy(-omega, t, s))
        # Breakdowns (rho, alpha or omega zero) stop the loop through a negative count.
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(new_rho == 0, -10, k)
        return x, r, shadow, alpha, omega, new_rho, p, q, k

    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(cond, body, state)[0]


def _isolve(name, method, A, b, x0, tol, atol, maxiter, M, symmetric):  # noqa: N803
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    if tree_structure(b) != tree_structure(x0):
        raise ValueError(f"jax.scipy.sparse.linalg.{name}: x0 and b must have matching tree "
                         f"structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if any(jnp.shape(u) != jnp.shape(v) for u, v in zip(tree_leaves(b), tree_leaves(x0))):
        raise ValueError(f"jax.scipy.sparse.linalg.{name}: arrays in x0 and b must have "
                         "matching shapes.")
    size = sum(int(np.prod(jnp.shape(leaf))) for leaf in tree_leaves(b))
    maxiter = 10 * size if maxiter is None else maxiter
    operator = _as_operator(A)
    precond = _identity if M is None else _as_operator(M)
    real = all(not jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))

    def solve(matvec, rhs):
        return method(matvec, rhs, x0, tol=tol, atol=atol, maxiter=maxiter, M=precond)

    x = lax.custom_linear_solve(operator, b, solve=solve, transpose_solve=solve,
                                symmetric=symmetric and real)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):  # noqa: N803
    """Solves `A x = b` for a Hermitian positive definite `A` (a matrix or a linear function
    on pytrees) by conjugate gradients, with optional preconditioner `M`: `(x, None)`."""
    return _isolve("cg", _cg, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):  # noqa: N803
    """Solves `A x = b` for a general `A` (a matrix or a linear function on pytrees) by the
    stabilized biconjugate gradient method, with optional preconditioner `M`: `(x, None)`."""
    return _isolve("bicgstab", _bicgstab, A, b, x0, tol, atol, maxiter, M, symmetric=False)
