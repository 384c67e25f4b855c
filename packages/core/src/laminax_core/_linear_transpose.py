"""`linear_transpose`: the transpose of a linear function, without a point to linearize at."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from laminax_core import dtypes
from laminax_core._api import _check_args, _flatten_fun
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import partial_eval, transpose
from laminax_core._interpreters.jvp import Zero, zeros_like_aval
from laminax_pytree import Partial, tree_flatten, tree_unflatten

__all__ = ["linear_transpose"]


def linear_transpose(fun: Callable, *primals, reduce_axes=()) -> Callable:
    """The transpose of the linear function `fun`, for inputs shaped like `primals`.

    `fun` is traced once with abstract inputs; the returned function maps an output
    cotangent `ct` to the input cotangents, so that `<ct, fun(x)> == <transpose(ct), x>`.

    Args:
      fun: a function linear in all of its arguments (pytrees allowed).
      *primals: arrays (or `ShapeDtypeStruct`s) giving the arguments' shapes and dtypes; only
        their types are used.
      reduce_axes: accepted for JAX compatibility; must be empty.

    Returns:
      A pytree-compatible function `transposed(out_cotangent)` returning a tuple with one
      cotangent per primal.

    Raises:
      TypeError: inputs and outputs mix inexact and integer dtypes; or, from the transposed
        function, a cotangent whose structure or type does not match `fun`'s output.

    Example:
      >>> t = linear_transpose(lambda x: 2.0 * x, np.float32(1))
      >>> t(np.float32(3))
      (Array(6., dtype=float32),)
    """
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is no longer supported by JAX "
                                  "either; pass reduce_axes=().")
    leaves, in_tree = tree_flatten(primals)
    # only the primals' types matter: JAX also takes abstract values (ShapedArray) for them
    _check_args("linear_transpose", [x for x in leaves if not isinstance(x, ShapedArray)])
    in_avals = [x if isinstance(x, ShapedArray) else get_aval(x) for x in leaves]
    out_trees: list = []
    flat = _flatten_fun("linear_transpose", fun, in_tree, out_trees)
    closed, _ = partial_eval.trace_to_jaxpr(flat, in_avals, "linear_transpose")
    out_avals = closed.out_avals
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    all_dtypes = in_dtypes + out_dtypes
    if not (all(dtypes.issubdtype(d, np.inexact) for d in all_dtypes)
            or all(dtypes.issubdtype(d, np.integer) for d in all_dtypes)):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {in_dtypes} -> {out_dtypes}."
        )
    transposed = functools.partial(_transposed, closed, in_tree, out_trees[0], in_avals)
    return Partial(transposed, closed.consts)


def _transposed(closed, in_tree, out_tree, in_avals, consts, out_cotangent):
    cts, ct_tree = tree_flatten(out_cotangent)
    if ct_tree != out_tree:
        raise TypeError(
            f"cotangent tree does not match function output, expected {out_tree} but got "
            f"{ct_tree}"
        )
    ct_avals = [get_aval(ct) for ct in cts]
    if any(c.shape != a.shape or c.dtype != a.dtype
           for c, a in zip(ct_avals, closed.out_avals, strict=True)):
        raise TypeError(
            f"cotangent type does not match function output, expected "
            f"{[a.str_short() for a in closed.out_avals]} but got "
            f"{[c.str_short() for c in ct_avals]}"
        )
    args = [transpose.UndefinedPrimal(a) for a in in_avals]
    cts_in = transpose.backward_pass(closed.jaxpr, consts, args, cts)
    cts_in = [zeros_like_aval(a) if ct is None or isinstance(ct, Zero) else ct
              for ct, a in zip(cts_in, in_avals, strict=True)]
    return tree_unflatten(in_tree, cts_in)
