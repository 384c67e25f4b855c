"""jacfwd, jacrev and hessian: Jacobians as vmap of jvp over the input basis, or vmap of vjp
over the output basis, laid out (and built, with lax) as JAX lays them out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import dtypes, lax
from laminax_core._api import (
    _check_args,
    _flatten_fun_for,
    _normalize_argnums,
    index_or_indices,
    _partial_on,
    _vjp_flat,
)
from laminax_core._avals import get_aval
from laminax_core._interpreters import batching
from laminax_core._interpreters.jvp import jvp_flat

__all__ = ["hessian", "jacfwd", "jacrev"]


def _std_basis(leaves) -> tuple[int, list]:
    """The identity in the flattened space of `leaves`, built with lax as JAX builds it
    (iota, eq, convert, split), one basis array `(total, *leaf_shape)` per leaf."""
    avals = [get_aval(x) for x in leaves]
    total = sum(a.size for a in avals)
    inexact = [a.dtype for a in avals if dtypes.issubdtype(a.dtype, np.inexact)]
    dtype = dtypes.result_type(*inexact) if inexact else dtypes.default_float_dtype()
    rows = lax.broadcasted_iota(np.int32, (total, total), 0)
    cols = lax.broadcasted_iota(np.int32, (total, total), 1)
    eye = lax.convert_element_type(lax.eq(lax.add(rows, np.int32(0)), cols), dtype)
    parts = _unravel(eye, 1, [a.size for a in avals], [(total, *a.shape) for a in avals])
    basis = [
        lax.convert_element_type(part, a.dtype if a.dtype in inexact else dtype)
        for part, a in zip(parts, avals, strict=True)
    ]
    return total, basis


def _unravel(arr, axis: int, sizes, shapes):
    """Splits `arr` along `axis` into pieces of `sizes` and reshapes them to `shapes`."""
    pieces = lax.split(arr, sizes, axis)
    return [lax.reshape(piece, shape) for piece, shape in zip(pieces, shapes, strict=True)]


def _check_jac_inputs(name: str, leaves, holomorphic: bool, allow_int: bool = False) -> None:
    for leaf in leaves:
        dtype = get_aval(leaf).dtype
        if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                f"{name} with holomorphic=True requires inputs with complex dtype, "
                f"but got {dtype.name}."
            )
        if not holomorphic and not dtypes.issubdtype(dtype, np.inexact) and not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                "Integer-valued inputs, set allow_int to True."
            )


def _jacobian_tree(out_tree, in_tree, blocks_per_out, argnums):
    per_out = [tree_unflatten(in_tree, blocks) for blocks in blocks_per_out]
    if isinstance(argnums, int):
        per_out = [b[0] for b in per_out]
    return tree_unflatten(out_tree, per_out)


def jacfwd(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """The Jacobian of `fun` by forward mode (vmap of jvp over the input basis).

    Returns:
      A function returning, for each output leaf, the Jacobian blocks of shape
      `out_shape + in_shape` arranged like the differentiated arguments.

    Example:
      >>> jacfwd(lambda x: x * x)(np.arange(2.0, dtype=np.float32))
      array([[0., 0.],
             [0., 2.]], dtype=float32)
    """

    argnums = index_or_indices("jacfwd argnums", argnums)

    def jacfun(*args, **kwargs):
        nums = _normalize_argnums("jacfwd", argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_args("jacfwd", leaves)
        _check_jac_inputs("jacfwd", leaves, holomorphic)
        partial_fun = _partial_on(lambda *a: fun(*a, **kwargs), args, nums)
        flat, out_trees, aux = _flatten_fun_for("jacfwd", partial_fun, in_tree, has_aux)
        total, basis = _std_basis(leaves)
        pushfwd = lambda *tangents: jvp_flat(flat, leaves, list(tangents))  # noqa: E731
        n_out = []

        def batched(*tangents):
            primals_out, tangents_out = pushfwd(*tangents)
            n_out.append(len(primals_out))
            return [*primals_out, *tangents_out]

        outs = batching.batch_flat(
            batched,
            basis,
            [0] * len(basis),
            batching.AxisData(None, total),
            lambda: [None] * n_out[0] + [-1] * n_out[0],
        )
        primals_out, jacs = outs[: n_out[0]], outs[n_out[0] :]
        in_avals = [get_aval(x) for x in leaves]
        blocks = [
            _unravel(
                j,
                get_aval(j).ndim - 1,
                [a.size for a in in_avals],
                [(*get_aval(p).shape, *a.shape) for a in in_avals],
            )
            for j, p in zip(jacs, primals_out, strict=True)
        ]
        jac = _jacobian_tree(out_trees[0], in_tree, blocks, argnums)
        return (jac, aux[0]) if has_aux else jac

    return jacfun


def jacrev(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable:
    """The Jacobian of `fun` by reverse mode (vmap of vjp over the output basis).

    Returns:
      A function returning Jacobian blocks laid out as `jacfwd`'s.

    Example:
      >>> jacrev(lambda x: x * x)(np.arange(2.0, dtype=np.float32))
      array([[0., 0.],
             [0., 2.]], dtype=float32)
    """

    argnums = index_or_indices("jacrev argnums", argnums)

    def jacfun(*args, **kwargs):
        nums = _normalize_argnums("jacrev", argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_args("jacrev", leaves)
        _check_jac_inputs("jacrev", leaves, holomorphic, allow_int)
        partial_fun = _partial_on(lambda *a: fun(*a, **kwargs), args, nums)
        flat, out_trees, aux = _flatten_fun_for("jacrev", partial_fun, in_tree, has_aux)
        primals_out, pullback = _vjp_flat(flat, leaves)
        total, basis = _std_basis(primals_out)
        cts = batching.batch_flat(
            lambda *c: pullback(list(c)),
            basis,
            [0] * len(basis),
            batching.AxisData(None, total),
            lambda: [0] * len(leaves),
        )
        out_avals = [get_aval(p) for p in primals_out]
        blocks = [[] for _ in out_avals]
        for ct in cts:  # one per input leaf, shape (total, *in_shape)
            in_shape = get_aval(ct).shape[1:]
            sizes = [a.size for a in out_avals]
            pieces = _unravel(ct, 0, sizes, [(*a.shape, *in_shape) for a in out_avals])
            for per_out, piece in zip(blocks, pieces, strict=True):
                per_out.append(piece)
        jac = _jacobian_tree(out_trees[0], in_tree, blocks, argnums)
        return (jac, aux[0]) if has_aux else jac

    return jacfun


def hessian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """The Hessian of a scalar `fun`: `jacfwd(jacrev(fun))`.

    Example:
      >>> hessian(lambda x: (x * x * x).sum())(np.ones(2, np.float32))
      array([[6., 0.],
             [0., 6.]], dtype=float32)
    """
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )
