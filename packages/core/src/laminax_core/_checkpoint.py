"""`checkpoint` (alias `remat`): trade computation for memory in reverse mode.

A checkpointed function is traced into the `remat2` primitive. Evaluating, jvp and vmap just
process its jaxpr. Under linearize (grad, vjp), its partial evaluation saves as residuals only
what the `policy` allows (by default nothing but the inputs) and moves the equations whose
outputs are not saved into the unknown part, where the backward pass recomputes them.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _trace
from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.jvp import Zero
from laminax_core._interpreters.transpose import UndefinedPrimal, backward_pass
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, dce_jaxpr
from laminax_core._primitive import Primitive
from laminax_core.lax._control_flow import common

__all__ = ["checkpoint", "checkpoint_policies", "remat"]


def _nothing_saveable(primitive, *avals, **params) -> bool:
    return False


def _everything_saveable(primitive, *avals, **params) -> bool:
    return True


def _dots_saveable(primitive, *avals, **params) -> bool:
    return primitive.name == "dot_general"


def _dots_with_no_batch_dims_saveable(primitive, *avals, **params) -> bool:
    if primitive.name != "dot_general":
        return False
    (_, _), (lhs_batch, _) = params["dimension_numbers"]
    return not lhs_batch


checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=_nothing_saveable,
    everything_saveable=_everything_saveable,
    dots_saveable=_dots_saveable,
    checkpoint_dots=_dots_saveable,
    dots_with_no_batch_dims_saveable=_dots_with_no_batch_dims_saveable,
)
"""Policies for `checkpoint(policy=...)`: `policy(primitive, *avals, **params)` says whether
an equation's outputs may be saved for the backward pass."""


def checkpoint(
    fun: Callable,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Callable:
    """`fun`, recomputing its intermediate values in the backward pass instead of storing them.

    Args:
      fun: the function.
      prevent_cse: accepted for JAX compatibility (recorded in the jaxpr).
      policy: which intermediate values may be saved (see `checkpoint_policies`); None saves
        nothing but the inputs.
      static_argnums: arguments passed as Python values, not traced.

    Returns:
      The checkpointed function.

    Example:
      >>> f = checkpoint(lambda x: lax.sin(lax.sin(x)))
      >>> float(grad(f)(np.float32(0.5))) == float(grad(lambda x: lax.sin(lax.sin(x)))(
      ...     np.float32(0.5)))
      True
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        static_set = {s % len(args) for s in static} if args else set()
        dyn_idx = [i for i in range(len(args)) if i not in static_set]
        leaves, in_tree = tree_flatten(tuple(args[i] for i in dyn_idx))
        out_trees: list = []

        def flat(*xs):
            full = list(args)
            for i, value in zip(dyn_idx, tree_unflatten(in_tree, xs), strict=True):
                full[i] = value
            out_leaves, out_tree = tree_flatten(fun(*full, **kwargs))
            out_trees.append(out_tree)
            return out_leaves

        closed, consts = common.trace_closed(flat, [get_aval(x) for x in leaves], "checkpoint")
        outs = remat_p.bind(
            *consts,
            *leaves,
            jaxpr=closed,
            prevent_cse=prevent_cse,
            differentiated=False,
            policy=policy,
        )
        return tree_unflatten(out_trees[0], outs)

    return checkpointed


remat = checkpoint

remat_p = Primitive("remat2")
remat_p.multiple_results = True


@remat_p.def_effectful_abstract_eval
def _remat_abstract_eval(*avals, jaxpr, prevent_cse, differentiated, policy):
    return jaxpr.out_avals, jaxpr.effects


@remat_p.def_reference
def _remat_impl(*args, jaxpr, prevent_cse, differentiated, policy):
    return common.jaxpr_as_fun(jaxpr)(*args)


@remat_p.def_jvp
def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [not isinstance(t, Zero) for t in tangents]
    jvp_closed, out_nz = common.jvp_jaxpr(jaxpr, nonzeros, [False] * len(jaxpr.out_avals))
    outs = remat_p.bind(
        *primals,
        *[t for t in tangents if not isinstance(t, Zero)],
        jaxpr=jvp_closed,
        prevent_cse=prevent_cse,
        differentiated=True,
        policy=policy,
    )
    n = len(jaxpr.out_avals)
    out_t = iter(outs[n:])
    return outs[:n], [
        next(out_t) if nz else Zero(a.to_tangent_aval())
        for nz, a in zip(out_nz, jaxpr.out_avals, strict=True)
    ]


@remat_p.def_batch
def _remat_batch(axis_data, args, dims, *, jaxpr, prevent_cse, differentiated, policy):
    from laminax_core._interpreters.batching import bdim_at_front

    args = [
        x if d is None else bdim_at_front(x, d, axis_data.size)
        for x, d in zip(args, dims, strict=True)
    ]
    in_dims = [None if d is None else 0 for d in dims]
    out_dims = [0 if f else None for f in common.out_batched(jaxpr, axis_data, in_dims)]
    batched = common.batch_jaxpr(jaxpr, axis_data, in_dims, lambda n: out_dims)
    return remat_p.bind(
        *args, jaxpr=batched, prevent_cse=prevent_cse, differentiated=differentiated, policy=policy
    ), out_dims


# ----- partial evaluation: what to save, what to recompute ---------------------------------


def _saveable(policy, eqn) -> bool:
    if policy is None:
        return False
    return bool(policy(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params))


def _split_with_policy(jaxpr: Jaxpr, in_unknowns, policy):
    """Splits `jaxpr` (no constvars) into known equations and unknown equations (preceded by
    the recomputation of every unsaveable known value they read).

    Returns:
      `(known_eqns, unknown_eqns, residual_vars, out_unknowns)`.
    """
    unknown = {id(v) for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u}
    producer, known_eqns, unknown_eqns = {}, [], []
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and id(v) in unknown for v in eqn.invars):
            unknown.update(id(v) for v in eqn.outvars)
            unknown_eqns.append(eqn)
        else:
            known_eqns.append(eqn)
            producer.update({id(v): eqn for v in eqn.outvars})
    inputs = {id(v) for v in jaxpr.invars}
    residuals: dict[int, Var] = {}
    recompute: list = []
    seen: set[int] = set()

    def need(var):  # make a known value available to the unknown part
        if isinstance(var, Literal) or id(var) in unknown or id(var) in seen:
            return
        seen.add(id(var))
        eqn = producer.get(id(var))
        if id(var) in inputs or eqn is None or _saveable(policy, eqn):
            residuals[id(var)] = var
            return
        for v in eqn.invars:
            need(v)
        if eqn not in recompute:
            recompute.append(eqn)

    for eqn in unknown_eqns:
        for v in eqn.invars:
            need(v)
    out_unknowns = [isinstance(v, Var) and id(v) in unknown for v in jaxpr.outvars]
    order = {id(e): i for i, e in enumerate(jaxpr.eqns)}
    recompute.sort(key=lambda e: order[id(e)])
    return known_eqns, recompute + unknown_eqns, list(residuals.values()), out_unknowns


def _remat_partial_eval(trace, args, params):
    closed, policy = params["jaxpr"], params["policy"]
    in_uk = [trace.is_unknown(x) for x in args]
    jaxpr = closed.jaxpr
    known_eqns, unknown_eqns, res_vars, out_uk = _split_with_policy(jaxpr, in_uk, policy)
    known_in = [v for v, u in zip(jaxpr.invars, in_uk, strict=True) if not u]
    known_out = [v for v, u in zip(jaxpr.outvars, out_uk, strict=True) if not u]
    known = Jaxpr(jaxpr.constvars, known_in, [*known_out, *res_vars], known_eqns)
    known, _ = dce_jaxpr(known, [True] * len(known.outvars), instantiate=True)
    known_args = [x for x, u in zip(args, in_uk, strict=True) if not u]
    with _trace.set_current_trace(trace.parent):
        known_vals = common.jaxpr_as_fun(ClosedJaxpr(known, closed.consts))(*known_args)
    n_known = len(known_out)
    residuals = known_vals[n_known:]
    unknown_in = [v for v, u in zip(jaxpr.invars, in_uk, strict=True) if u]
    unknown_out = [v for v, u in zip(jaxpr.outvars, out_uk, strict=True) if u]
    unknown = ClosedJaxpr(
        Jaxpr(jaxpr.constvars, [*res_vars, *unknown_in], unknown_out, unknown_eqns), closed.consts
    )
    staged = trace.stage(
        remat_p,
        [*residuals, *[x for x, u in zip(args, in_uk, strict=True) if u]],
        dict(params, jaxpr=unknown, differentiated=True),
    )
    known_iter, staged_iter = iter(known_vals[:n_known]), iter(staged)
    return [next(staged_iter) if u else next(known_iter) for u in out_uk]


partial_eval.partial_eval_rules[remat_p] = _remat_partial_eval


@remat_p.def_transpose
def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    # the backward pass first re-evaluates the non-linear (recomputed) equations, then
    # transposes the linear ones
    operands = [UndefinedPrimal(a.aval) if undefined(a) else a for a in args]
    cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, operands, list(cts))
    return [ct if undefined(a) else None for ct, a in zip(cts_in, args, strict=True)]
