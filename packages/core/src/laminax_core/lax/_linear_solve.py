"""`custom_linear_solve` and `custom_root`: solvers whose derivatives come from the problem,
not from the solver's iterations.

`custom_linear_solve(matvec, b, solve)` computes `x = solve(matvec, b)` as one primitive,
`linear_solve_p` (JAX prints it `custom_linear_solve`), whose params hold the traced
`matvec`, its transpose `vecmat`, `solve` and `transpose_solve` as closed jaxprs; values they
close over that are traced (weights being differentiated, for example) become leading
operands, grouped per jaxpr (`const_lengths`). Its rules are the implicit-function ones:

* jvp: `A x = b` gives `A x_dot = b_dot - A_dot x`, another solve with the same operator;
* transpose (in `b`): `x = A^{-1} b` transposes to `A^{-T} ct`, the solve with the roles of
  `matvec`/`vecmat` and `solve`/`transpose_solve` swapped;
* batching: every jaxpr is vmapped with all vectors batched.

`custom_root(f, x0, solve, tangent_solve)` finds `x = solve(f, x0)` with `f(x) = 0` and
differentiates by the implicit function theorem: `x_dot = -J^{-1} (df/dparams . p_dot)`,
`J = df/dx`, solved by `tangent_solve`; it is a `custom_jvp` over the traced constants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core._api import linearize, vjp
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core._interpreters.batching import move_bdim
from laminax_core._interpreters.jvp import Zero, add_tangents, instantiate_zeros, jvp_flat
from laminax_core._interpreters.transpose import is_undefined_primal
from laminax_core._primitive import define_primitive
from laminax_core.lax._control_flow.common import batch_jaxpr, jaxpr_as_fun, trace_closed
from laminax_core.lax._elementwise import neg
from laminax_core.lax._structural import broadcast_in_dim

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


class _Solve(NamedTuple):
    """One value per function of a linear solve (jaxprs, const counts, const values)."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _Solve:
        return _Solve(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _plain_aval(x) -> ShapedArray:
    aval = get_aval(x)
    return ShapedArray(aval.shape, aval.dtype)


def _trace_vector_fun(fun: Callable, tree, avals, name: str, has_aux: bool, aux_trees: list):
    """Traces `fun` (a pytree like `b` in; the same structure out, plus aux if `has_aux`)."""
    b_shapes = [(a.shape, a.dtype) for a in avals]

    def flat(*leaves):
        out = fun(tree_unflatten(tree, leaves))
        out, aux = out if has_aux else (out, ())
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"custom_linear_solve: {name}() must return the structure of b "
                            f"({tree}), got {out_tree}.")
        shapes = [(get_aval(v).shape, get_aval(v).dtype) for v in out_leaves]
        if shapes != b_shapes:
            raise ValueError(f"custom_linear_solve: {name}() output shapes and dtypes must match "
                             f"b's, got {shapes} and {b_shapes}.")
        aux_leaves, aux_tree = tree_flatten(aux)
        aux_trees[:] = [aux_tree]
        return [*out_leaves, *aux_leaves]

    return trace_closed(flat, avals, name)


def _transposed(matvec: Callable, tree, avals) -> Callable:
    """The transpose of the linear `matvec`: its vjp at zero."""
    def vecmat(y):
        zeros = tree_unflatten(tree, [np.zeros(a.shape, a.dtype) for a in avals])
        _, pullback = vjp(matvec, zeros)
        (x,) = pullback(y)
        return x

    return vecmat


def custom_linear_solve(matvec: Callable, b, solve: Callable, transpose_solve=None,
                        symmetric: bool = False, has_aux: bool = False):
    """Solves `matvec(x) = b` with `solve(matvec, b)`, differentiating implicitly: the
    derivatives are further solves with the same operator, never derivatives of `solve`'s
    iterations.

    Args:
      matvec: the linear operator, a function of a pytree like `b`.
      b: the right-hand side (a pytree of arrays).
      solve: `solve(matvec, b) -> x` (or `(x, aux)` if `has_aux`).
      transpose_solve: `transpose_solve(vecmat, b) -> x` for the transposed operator; needed
        for reverse-mode differentiation.
      symmetric: the operator is symmetric (`solve` serves as `transpose_solve`).
      has_aux: `solve` also returns auxiliary data, returned alongside `x`.

    Returns:
      `x` (and the aux data if `has_aux`).

    Example:
      >>> a = np.array([[2.0, 0.0], [0.0, 4.0]], np.float32)
      >>> matvec = lambda v: dot_general(a, v, (((1,), (0,)), ((), ())))
      >>> custom_linear_solve(matvec, np.ones(2, np.float32), lambda f, v: v / np.diag(a))
      array([0.5 , 0.25], dtype=float32)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    avals = [_plain_aval(x) for x in b_leaves]
    unused: list = []
    aux_trees: list = []
    matvec_jaxpr, matvec_consts = _trace_vector_fun(matvec, tree, avals, "matvec", False, unused)
    solve_jaxpr, solve_consts = _trace_vector_fun(
        lambda v: solve(matvec, v), tree, avals, "solve", has_aux, aux_trees)
    vecmat_jaxpr = tr_jaxpr = None
    vecmat_consts = tr_consts = []
    if transpose_solve is not None:
        vecmat = matvec if symmetric else _transposed(matvec, tree, avals)
        vecmat_jaxpr, vecmat_consts = _trace_vector_fun(vecmat, tree, avals, "vecmat", False,
                                                        unused)
        tr_jaxpr, tr_consts = _trace_vector_fun(
            lambda v: transpose_solve(vecmat, v), tree, avals, "transpose_solve", has_aux,
            unused)
    consts = _Solve(matvec_consts, vecmat_consts, solve_consts, tr_consts)
    out = linear_solve_p.bind(
        *[c for group in consts for c in group], *b_leaves,
        const_lengths=_Solve(*map(len, consts)),
        jaxprs=_Solve(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_jaxpr))
    x = tree_unflatten(tree, out[:len(b_leaves)])
    if has_aux:
        return x, tree_unflatten(aux_trees[0], out[len(b_leaves):])
    return x


def _split(args, const_lengths):
    """`(_Solve of const lists, b list)` from the flat operands."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return _Solve(*groups), list(args[start:])


def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
    n_b = len(avals) - sum(const_lengths)
    b_avals = [ShapedArray(a.shape, a.dtype) for a in avals[len(avals) - n_b:]]
    return [*b_avals, *jaxprs.solve.out_avals[n_b:]]


def _linear_solve_reference(*args, const_lengths, jaxprs):
    consts, b = _split(args, const_lengths)
    return jaxpr_as_fun(jaxprs.solve)(*consts.solve, *b)


def _linear_solve_jvp(primals, tangents, const_lengths, jaxprs):
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    out = linear_solve_p.bind(*primals, **params)
    consts, b = _split(primals, const_lengths)
    consts_dot, b_dot = _split(tangents, const_lengths)
    x = out[:len(b)]
    rhs = b_dot
    if not all(isinstance(t, Zero) for t in consts_dot.matvec):
        # A x = b  =>  A x_dot = b_dot - A_dot x
        zeros = [Zero(_plain_aval(v).to_tangent_aval()) for v in x]
        _, a_dot_x = jvp_flat(jaxpr_as_fun(jaxprs.matvec), [*consts.matvec, *x],
                              [*consts_dot.matvec, *zeros])
        rhs = [add_tangents(t, _negate(d)) for t, d in zip(b_dot, a_dot_x, strict=True)]
    if all(isinstance(t, Zero) for t in rhs):
        return out, [Zero(_plain_aval(v).to_tangent_aval()) for v in out]
    x_dot = linear_solve_p.bind(*[c for g in consts for c in g],
                                *[instantiate_zeros(t) for t in rhs], **params)
    aux_zeros = [Zero(_plain_aval(v).to_tangent_aval()) for v in out[len(b):]]
    return out, [*x_dot[:len(b)], *aux_zeros]


def _negate(t):
    return t if isinstance(t, Zero) else neg(t)


def _linear_solve_transpose(cts, *operands, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("custom_linear_solve: transpose_solve is required for reverse-mode "
                        "differentiation (or pass symmetric=True if the operator is).")
    consts, b = _split(operands, const_lengths)
    if any(is_undefined_primal(c) for group in consts for c in group):
        raise NotImplementedError("custom_linear_solve: transposing with respect to the "
                                  "operator's constants is not supported (nor in JAX).")
    x_cts = [instantiate_zeros(ct) for ct in cts[:len(b)]]
    ct_b = linear_solve_p.bind(*[c for g in consts.transpose() for c in g], *x_cts,
                               const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(ct_b[:len(b)])


def _linear_solve_batch(axis_data, args, dims, const_lengths, jaxprs):
    # every vector (b, x, and each jaxpr's vector inputs and outputs) is batched at 0; the
    # constants keep their own batching

    consts, b = _split(args, const_lengths)
    const_dims, b_dims = _split(dims, const_lengths)
    consts = _Solve(*[[x if d is None else move_bdim(x, d, 0) for x, d in zip(xs, ds,
                                                                               strict=True)]
                      for xs, ds in zip(consts, const_dims, strict=True)])
    const_dims = _Solve(*[[None if d is None else 0 for d in ds] for ds in const_dims])
    new_b = []
    for x, d in zip(b, b_dims, strict=True):
        if d is None:
            aval = get_aval(x)
            x = broadcast_in_dim(x, (axis_data.size, *aval.shape), tuple(range(1, aval.ndim + 1)))
        else:
            x = move_bdim(x, d, 0)
        new_b.append(x)
    batched = _Solve(*[
        None if jaxpr is None else batch_jaxpr(jaxpr, axis_data, [*cd, *[0] * len(b)],
                                               lambda n: [0] * n)
        for jaxpr, cd in zip(jaxprs, const_dims, strict=True)
    ])
    out = linear_solve_p.bind(*[c for g in consts for c in g], *new_b,
                              const_lengths=const_lengths, jaxprs=batched)
    return out, [0] * len(out)


linear_solve_p = define_primitive(
    "custom_linear_solve",
    abstract_eval=_linear_solve_abstract_eval,
    reference=_linear_solve_reference,
    jvp=_linear_solve_jvp,
    transpose=_linear_solve_transpose,
    batch=_linear_solve_batch,
    multiple_results=True,
    print_params=lambda params: {"const_lengths": tuple(params["const_lengths"])},
)


# ----- custom_root --------------------------------------------------------------------------


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """Finds a root of `f` with `solve(f, initial_guess)`, differentiating by the implicit
    function theorem instead of through `solve`'s iterations.

    Args:
      f: the function whose root is sought, from and to pytrees like `initial_guess`.
      initial_guess: the starting point.
      solve: `solve(f, initial_guess) -> root` (or `(root, aux)` if `has_aux`).
      tangent_solve: `tangent_solve(g, y) -> x` solving the linear `g(x) = y` (`g` is `f`'s
        linearization at the root); for scalars `lambda g, y: y / g(1.0)` does.
      has_aux: `solve` also returns auxiliary data (not differentiated).

    Returns:
      The root (and the aux data if `has_aux`).

    Example:
      >>> def sqrt_of(a):
      ...     f = lambda x: x * x - a
      ...     newton = lambda f, x: fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x)
      ...     return custom_root(f, np.float32(1.0), newton, lambda g, y: y / g(1.0))
      >>> round(float(sqrt_of(np.float32(2.0))), 5)
      1.41421
    """
    guess_leaves, tree = tree_flatten(initial_guess)
    avals = [_plain_aval(x) for x in guess_leaves]
    aux_trees: list = []

    def flat_f(*leaves):
        out_leaves, out_tree = tree_flatten(f(tree_unflatten(tree, leaves)))
        if out_tree != tree:
            raise TypeError(f"custom_root: f must return the structure of initial_guess "
                            f"({tree}), got {out_tree}.")
        return out_leaves

    def flat_solve(*leaves):
        out = solve(f, tree_unflatten(tree, leaves))
        root, aux = out if has_aux else (out, ())
        root_leaves, root_tree = tree_flatten(root)
        if root_tree != tree:
            raise TypeError(f"custom_root: solve must return the structure of initial_guess "
                            f"({tree}), got {root_tree}.")
        aux_leaves, aux_trees[:] = tree_flatten(aux)[0], [tree_flatten(aux)[1]]
        return [*root_leaves, *aux_leaves]

    f_jaxpr, f_consts = trace_closed(flat_f, avals, "custom_root f")
    solve_jaxpr, solve_consts = trace_closed(flat_solve, avals, "custom_root solve")
    n = len(guess_leaves)
    # trace the tangent solve once now, as JAX does, so that a tangent_solve that does not
    # fit f's linearization fails here rather than only under differentiation
    trace_closed(lambda *xs: _tangent_solved(f_jaxpr, f_consts, list(xs[:n]), list(xs[n:]),
                                             tree, tangent_solve),
                 [*avals, *avals], "custom_root tangent_solve")

    def root_of(consts_f, consts_solve, guess):
        return jaxpr_as_fun(solve_jaxpr)(*consts_solve, *guess)

    def root_jvp(primals, tangents):
        consts_f, consts_solve, guess = primals
        consts_f_dot, _, _ = tangents
        out = root_of(consts_f, consts_solve, guess)
        root = out[:n]
        # f(p, x*(p)) = 0  =>  J x_dot = -df/dp . p_dot
        _, rhs = jvp_flat(lambda *cs: jaxpr_as_fun(f_jaxpr)(*cs, *root), list(consts_f),
                          list(consts_f_dot))
        rhs = [instantiate_zeros(t) for t in rhs]
        root_dot = _tangent_solved(f_jaxpr, consts_f, root, rhs, tree, tangent_solve)
        aux_dot = [np.zeros(get_aval(v).shape, get_aval(v).dtype) for v in out[n:]]
        return out, [*[_negate(t) for t in root_dot], *aux_dot]

    rooted = custom_jvp(root_of)
    rooted.defjvp(root_jvp)
    out = rooted(list(f_consts), list(solve_consts), list(guess_leaves))
    root = tree_unflatten(tree, out[:n])
    return (root, tree_unflatten(aux_trees[0], out[n:])) if has_aux else root


def _tangent_solved(f_jaxpr, consts_f, root, rhs, tree, tangent_solve):
    """`tangent_solve(J, rhs)` with `J` the linearization of `f` at `root`."""
    def f_of_x(x):
        return tree_unflatten(tree, jaxpr_as_fun(f_jaxpr)(*consts_f, *tree_flatten(x)[0]))

    _, jacobian = linearize(f_of_x, tree_unflatten(tree, root))
    solved = tangent_solve(jacobian, tree_unflatten(tree, rhs))
    return tree_flatten(solved)[0]
