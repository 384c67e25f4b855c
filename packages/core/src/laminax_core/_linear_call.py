"""`linear_call`: a call of a function linear in some of its arguments, with the user's own
transpose (JAX's `jax.custom_derivatives.linear_call`).

`fun(residuals, linear)` is staged into the `linear_call` primitive's `callee`; its jvp applies
the same call to the tangents (the residuals must not carry any), and its transpose calls
`fun_transpose(residuals, cotangents)` through another `linear_call` whose own transpose is
`fun` again. Like JAX's primitive, it has no batching rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal
from laminax_core._primitive import Primitive

__all__ = ["linear_call", "linear_call_p"]


def _stage(fun, in_tree, avals, name):
    """`(callee, consts, out_tree)`: `fun` staged, the tracers it closes over as leading
    invars (passed as operands), its NumPy constants kept in the closed jaxpr."""
    out_trees = []

    def flat(*leaves):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves

    closed, _ = partial_eval.trace_to_jaxpr(flat, list(avals), name)
    callee, consts = partial_eval.hoist_tracer_consts(closed)
    return callee, consts, out_trees[0]


def linear_call(fun: Callable, fun_transpose: Callable, residual_args, linear_args):
    """Calls `fun(residual_args, linear_args)`, linear in `linear_args`, whose transpose (for
    `linear_transpose`, `vjp`, `grad`) is `fun_transpose(residual_args, cotangents)`.

    Args:
      fun: `(residuals, linear) -> out`, linear in its second argument.
      fun_transpose: `(residuals, out_cotangent) -> linear cotangent`, with the structure of
        `linear_args`.
      residual_args, linear_args: pytrees of arrays.

    Returns:
      `fun(residual_args, linear_args)`.

    Example:
      >>> float(linear_call(lambda r, x: x / r, lambda r, t: t / r, 4.0, 2.0))
      0.5
    """
    res, res_tree = tree_flatten(residual_args)
    lin, lin_tree = tree_flatten(linear_args)
    res_avals = [get_aval(x) for x in res]
    lin_avals = [get_aval(x) for x in lin]
    f_tree = tree_flatten((residual_args, linear_args))[1]
    callee, consts, out_tree = _stage(fun, f_tree, [*res_avals, *lin_avals], "linear_call")
    out_avals = callee.out_avals

    @functools.cache
    def transpose_thunk():
        ct_example = tree_unflatten(out_tree, [0] * len(out_avals))
        t_tree = tree_flatten((residual_args, ct_example))[1]
        transpose, t_consts, t_out_tree = _stage(fun_transpose, t_tree,
                                                 [*res_avals, *out_avals], "linear_call")
        if t_out_tree != lin_tree:
            raise TypeError("transpose output pytree structure must match that of linear "
                            f"inputs, got output structure {t_out_tree} and input structure "
                            f"{lin_tree}.")
        return transpose, t_consts

    out = linear_call_p.bind(*consts, *res, *lin, callee=callee,
                             transpose_thunk=transpose_thunk, num_callee_consts=len(consts),
                             num_res=len(res))
    return tree_unflatten(out_tree, out)


def _impl(*args, callee, transpose_thunk, num_callee_consts, num_res):
    return eval_jaxpr(callee.jaxpr, callee.consts, *args)


def _jvp(primals, tangents, *, callee, transpose_thunk, num_callee_consts, num_res):
    split = num_callee_consts + num_res
    if not all(isinstance(t, Zero) for t in tangents[:split]):
        raise TypeError("linear_call: differentiating with respect to the residual arguments "
                        "(or values the function closes over) is not supported.")
    params = dict(callee=callee, transpose_thunk=transpose_thunk,
                  num_callee_consts=num_callee_consts, num_res=num_res)
    primals_out = linear_call_p.bind(*primals, **params)
    tangents_out = linear_call_p.bind(*primals[:split],
                                      *map(instantiate_zeros, tangents[split:]), **params)
    return primals_out, tangents_out


def _transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    transpose, t_consts = transpose_thunk()
    f_consts = args[:num_callee_consts]
    res = args[num_callee_consts:num_callee_consts + num_res]
    if any(is_undefined_primal(x) for x in res):
        raise TypeError("linear_call: the residual arguments must not be linear inputs.")
    ct_avals = transpose.in_avals[len(t_consts) + num_res:]
    cts = [zeros_like_aval(a) if isinstance(ct, Zero) else ct for ct, a in zip(cts, ct_avals)]
    cts_out = linear_call_p.bind(*t_consts, *res, *cts, callee=transpose,
                                 transpose_thunk=lambda: (callee, list(f_consts)),
                                 num_callee_consts=len(t_consts), num_res=len(res))
    return [None] * (num_callee_consts + num_res) + list(cts_out)


linear_call_p = Primitive("linear_call")
linear_call_p.multiple_results = True
linear_call_p.def_impl(_impl)
linear_call_p.def_reference(_impl)
linear_call_p.def_abstract_eval(lambda *avals, callee, **_: list(callee.out_avals))
linear_call_p.def_jvp(_jvp)
linear_call_p.def_transpose(_transpose)
