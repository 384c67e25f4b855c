"""`checkpoint` (alias `remat`): trade computation for memory in reverse mode.

A checkpointed function is traced into the `remat2` primitive. Evaluating, jvp and vmap just
process its jaxpr. Under linearize (grad, vjp), its partial evaluation saves as residuals only
what the `policy` allows (by default nothing but the inputs) and moves the equations whose
outputs are not saved into the unknown part, where the backward pass recomputes them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _trace, dtypes, lax
from laminax_core._argnums import resolve_argnums
from laminax_core._avals import get_aval
from laminax_core._checkpoint_policies import checkpoint_policies, policy_saves
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero
from laminax_core._interpreters.transpose import UndefinedPrimal, backward_pass
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, dce_jaxpr
from laminax_core._primitive import define_higher_order_primitive
from laminax_core.lax._control_flow import common

__all__ = [
    "checkpoint",
    "checkpoint_policies",
    "remat",
]


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
    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        static_set = set(_static_positions(static_argnums, len(args)))
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


def _static_positions(static_argnums, nargs: int) -> tuple[int, ...]:
    """checkpoint's static positions for a call with `nargs` positional arguments, checked
    in JAX's order: a negative position before the first argument (ValueError, whatever the
    container), then the type, stricter than jit's: an int or a tuple of ints, no lists,
    NumPy integers or bools (TypeError), then the range (ValueError)."""
    items = ((static_argnums,) if type(static_argnums) is int
             else static_argnums if isinstance(static_argnums, tuple | list | range) else ())
    resolve_argnums([i for i in items if isinstance(i, int) and i < 0], nargs)
    if type(static_argnums) is int:
        static_argnums = (static_argnums,)
    elif not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError(
            "checkpoint / remat static_argnums must be an int or a tuple of ints, got "
            f"{static_argnums!r}."
        )
    return resolve_argnums(static_argnums, nargs)


def _remat_abstract_eval(*avals, jaxpr, prevent_cse, differentiated, policy):
    return jaxpr.out_avals, jaxpr.effects


def _remat_impl(*args, jaxpr, prevent_cse, differentiated, policy):
    return common.jaxpr_as_fun(jaxpr)(*args)


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [not isinstance(t, Zero) for t in tangents]
    jvp_closed, out_nz = common.jvp_jaxpr(jaxpr, nonzeros, [False] * len(jaxpr.out_avals))
    outs = remat_p.bind(
        *primals,
        *[t for t in tangents if not isinstance(t, Zero)],
        jaxpr=jvp_closed,
        prevent_cse=prevent_cse,
        differentiated=differentiated,
        policy=policy,
    )
    n = len(jaxpr.out_avals)
    out_t = iter(outs[n:])
    return outs[:n], [
        next(out_t) if nz else Zero(a.to_tangent_aval())
        for nz, a in zip(out_nz, jaxpr.out_avals, strict=True)
    ]


def _remat_batch(axis_data, args, dims, *, jaxpr, prevent_cse, differentiated, policy):
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
    return policy_saves(policy, eqn.primitive, [v.aval for v in eqn.invars], eqn.params)


# the control flow whose bodies the policy reaches into, as JAX's: their bodies become remats
# with the same policy, so that their splits save what the policy allows (as stacked residuals
# of a scan) and recompute the rest
_POLICY_BODIES = {"scan": ("jaxpr",), "cond": ("branches",), "jit": ("jaxpr",)}


def _under_policy(body: ClosedJaxpr, policy) -> ClosedJaxpr:
    def run(*args):
        return remat_p.bind(*args, jaxpr=body, prevent_cse=False, differentiated=False,
                            policy=policy)

    closed, consts = common.trace_closed(run, body.in_avals, "checkpoint")
    assert not consts  # the body's own constants are not tracers
    return closed


def _policy_pushed(eqn, policy):
    """The params of higher-order `eqn` with the policy pushed into its bodies, or None."""
    names = _POLICY_BODIES.get(eqn.primitive.name)
    if policy is None or names is None:
        return None
    params = dict(eqn.params)
    for name in names:
        value = params[name]
        params[name] = (tuple(_under_policy(b, policy) for b in value)
                        if isinstance(value, tuple) else _under_policy(value, policy))
    return params


class _NestedSplits:
    """Splits the higher-order equations the policy reaches into (`_POLICY_BODIES`) with
    partial_eval_jaxpr, the same way in the known and the staged parts: the known half runs
    where the known values are computed, and its residuals are saved like the policy's choices
    (`save(residuals)` in the known part, `take(n)` in the staged one)."""

    def __init__(self, policy, pe):
        self.policy, self.pe = policy, pe

    def split(self, eqn, ins, *, save=None, take=None):
        params = _policy_pushed(eqn, self.policy)
        if params is None:
            return None
        in_uk = [self.pe.is_unknown(x) for x in ins]
        prim = eqn.primitive

        def single(*xs):
            return prim.bind(*xs, **params)

        closed, hoisted = common.trace_closed(single, [get_aval(x) for x in ins], "checkpoint")
        assert not hoisted
        known, unknown, out_uk, res_avals = partial_eval.partial_eval_jaxpr(
            closed, in_uk, [False] * len(closed.out_avals))
        known_ins = [x for x, u in zip(ins, in_uk, strict=True) if not u]
        n_known = len(known.out_avals) - len(res_avals)
        if save is not None:
            with _trace.set_current_trace(self.pe.parent):
                known_outs = common.jaxpr_as_fun(known)(*known_ins)
            residuals = known_outs[n_known:]
            save(residuals)
        else:
            residuals = take(len(res_avals))
            # only the known outputs are recomputed here (the residuals come saved)
            pruned, _ = dce_jaxpr(known.jaxpr, [True] * n_known + [False] * len(res_avals),
                                  instantiate=True)
            with _trace.set_current_trace(self.pe.parent):
                known_outs = eval_jaxpr(pruned, known.consts, *known_ins)
        with _trace.set_current_trace(self.pe):
            unknown_outs = common.jaxpr_as_fun(unknown)(
                *residuals, *[x for x, u in zip(ins, in_uk, strict=True) if u])
        known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
        return [next(unknown_iter) if u else next(known_iter) for u in out_uk]


def _eval_with_policy(closed: ClosedJaxpr, args, pe, policy, saveable_outs: Callable,
                      nested: Callable) -> list:
    """Evaluates `closed` under the partial-eval trace `pe`: known equations run in its parent,
    equations reading unknowns are staged (higher-order ones split by their partial-eval rule,
    or by `nested(eqn, ins)` when the policy reaches into their bodies). A known equation the
    policy saves is not run: `saveable_outs(eqn, ins)` gives its outputs.
    """
    env: dict[int, object] = {}
    jaxpr = closed.jaxpr
    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*closed.consts, *args], strict=True):
        env[id(var)] = value

    def read(v):
        return v.val if isinstance(v, Literal) else env[id(v)]

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        unknown = any(map(pe.is_unknown, ins))
        outs = None
        if not unknown and _saveable(policy, eqn):
            outs = saveable_outs(eqn, ins)
        elif unknown:
            outs = nested(eqn, ins)
        if outs is None:
            with _trace.set_current_trace(pe):
                outs = eqn.primitive.bind(*ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update((id(v), x) for v, x in zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _known_part(closed: ClosedJaxpr, in_uk, policy):
    """The known part of a remat body: known inputs -> known outputs, then the outputs of every
    saveable equation (the candidate residuals).

    Returns:
      `(known_jaxpr, out_unknowns, n_candidates)`.
    """
    found: dict = {}

    def fun(*known_in):
        pe = partial_eval.JaxprTrace(
            _trace.current_trace(), evaluate_known=True, transformation="checkpoint"
        )
        known_iter = iter(known_in)
        ins = [
            pe.new_arg(a) if u else next(known_iter)
            for a, u in zip(closed.in_avals, in_uk, strict=True)
        ]
        saved: list = []

        def run_and_save(eqn, ins):
            outs = eqn.primitive.bind(*ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            saved.extend(outs)
            return outs

        try:
            splits = _NestedSplits(policy, pe)
            outs = _eval_with_policy(closed, ins, pe, policy, run_and_save,
                                     functools.partial(splits.split, save=saved.extend))
            found["out_uk"] = [pe.is_unknown(o) for o in outs]
        finally:
            pe.is_live = False
        found["n"] = len(saved)
        return [o for o in outs if not pe.is_unknown(o)] + saved

    avals = [a for a, u in zip(closed.in_avals, in_uk, strict=True) if not u]
    known, _ = partial_eval.trace_to_jaxpr(fun, avals, "checkpoint")
    return known, found["out_uk"], found["n"]


def _staged_part(closed: ClosedJaxpr, in_uk, out_uk, policy, candidate_avals) -> ClosedJaxpr:
    """The staged remat body: (candidate residuals, every input) -> unknown outputs. It
    recomputes the known values the policy does not save (the known halves of split higher-order
    equations included), then runs the unknown equations."""

    def fun(*args):
        candidates, ins = iter(args[: len(candidate_avals)]), args[len(candidate_avals) :]
        pe = partial_eval.JaxprTrace(
            _trace.current_trace(), evaluate_known=True, transformation="checkpoint"
        )
        pe_ins = [pe.new_arg(get_aval(x)) if u else x for x, u in zip(ins, in_uk, strict=True)]
        try:
            splits = _NestedSplits(policy, pe)
            outs = _eval_with_policy(
                closed, pe_ins, pe, policy, lambda eqn, _: [next(candidates) for _ in eqn.outvars],
                functools.partial(splits.split, take=lambda n: [next(candidates) for _ in range(n)]),
            )
            unknown_outs = [o for o, u in zip(outs, out_uk, strict=True) if u]
            linear, consts = pe.to_jaxpr(unknown_outs)
        finally:
            pe.is_live = False
        return eval_jaxpr(linear, consts, *[x for x, u in zip(ins, in_uk, strict=True) if u])

    staged, _ = partial_eval.trace_to_jaxpr(fun, [*candidate_avals, *closed.in_avals], "checkpoint")
    return staged


def _close_over(jaxpr: Jaxpr, closed: ClosedJaxpr) -> ClosedJaxpr:
    # `jaxpr` uses a subset of `closed`'s constvars
    values = {id(v): c for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True)}
    return ClosedJaxpr(jaxpr, [values[id(v)] for v in jaxpr.constvars])


def _reduce_residual_precision(jaxpr: Jaxpr, n_res: int) -> Jaxpr:
    """Rounds each floating residual that the known equations also read to its own format
    right where it is produced (a `reduce_precision` to the dtype's exponent and mantissa bits),
    so that XLA's excess precision cannot make the forward and backward passes disagree, as
    JAX does."""
    read = {id(v) for e in jaxpr.eqns for v in e.invars if isinstance(v, Var)}
    eqns = list(jaxpr.eqns)
    for var in jaxpr.outvars[len(jaxpr.outvars) - n_res :]:
        if not dtypes.issubdtype(var.aval.dtype, np.floating) or id(var) not in read:
            continue
        info = dtypes.finfo(var.aval.dtype)
        params = {"exponent_bits": int(info.nexp), "mantissa_bits": int(info.nmant)}
        at = next((i for i, e in enumerate(eqns) if any(v is var for v in e.outvars)), None)
        if at is None:  # an input that a nested split keeps as its residual
            continue
        producer = eqns[at]
        if producer.primitive is lax.reduce_precision_p and producer.params == params:
            continue
        raw = Var(var.aval)
        outvars = [raw if v is var else v for v in producer.outvars]
        eqns[at] = JaxprEqn(
            producer.invars,
            outvars,
            producer.primitive,
            producer.params,
            producer.effects,
            producer.source_info,
        )
        rounding = JaxprEqn([raw], [var], lax.reduce_precision_p, params, frozenset())
        eqns.insert(at + 1, rounding)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns, jaxpr.effects)


def _remat_partial_eval(trace, args, params):
    # The known equations run now (in the parent trace), outside any remat; the staged remat
    # (differentiated=True) takes the saved residuals and the inputs it uses, and recomputes the
    # rest, as JAX's checkpoint partial evaluation does.
    closed, policy = params["jaxpr"], params["policy"]
    in_uk = [trace.is_unknown(x) for x in args]
    with _trace.set_current_trace(trace.parent):
        known, out_uk, n_cand = _known_part(closed, in_uk, policy)
    n_known = len(known.out_avals) - n_cand
    staged = _staged_part(closed, in_uk, out_uk, policy, known.out_avals[n_known:])
    staged_jaxpr, used = dce_jaxpr(staged.jaxpr, [True] * len(staged.out_avals))
    used_res, used_in = used[:n_cand], used[n_cand:]
    known_jaxpr, _ = dce_jaxpr(known.jaxpr, [True] * n_known + used_res, instantiate=True)
    known_jaxpr = _reduce_residual_precision(known_jaxpr, sum(used_res))
    known_args = [x for x, u in zip(args, in_uk, strict=True) if not u]
    with _trace.set_current_trace(trace.parent):
        known_vals = common.jaxpr_as_fun(_close_over(known_jaxpr, known))(*known_args)
    staged_outs = trace.stage(
        remat_p,
        [*known_vals[n_known:], *[x for x, u in zip(args, used_in, strict=True) if u]],
        dict(params, jaxpr=_close_over(staged_jaxpr, staged), differentiated=True),
    )
    known_iter, staged_iter = iter(known_vals[:n_known]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in out_uk]


# ----- transpose: a remat of the backward pass ----------------------------------------------


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    # The transpose is itself a remat: its jaxpr first recomputes the non-linear equations
    # from the known operands, then runs the backward pass of the linear ones. Only nonzero
    # cotangents go in and come out.
    linear = [undefined(a) for a in args]
    known = [a for a in args if not undefined(a)]
    ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals]
    nonzero = [not isinstance(ct, Zero) for ct in cts]
    zeros_in: list = []

    def transposed(*known_and_cts):
        # partial evaluation first splits equations mixing known and linear values (a jvp'd
        # scan or remat inside) into a recomputation and a linear part, as JAX's does
        known_part, linear_part, _, _ = partial_eval.partial_eval_jaxpr(
            jaxpr, linear, [True] * len(ct_avals)
        )
        residuals = common.jaxpr_as_fun(known_part)(*known_and_cts[: len(known)])
        operands = [*residuals, *[UndefinedPrimal(a.aval) for a in args if undefined(a)]]
        ct_iter = iter(known_and_cts[len(known) :])
        cts_out = [
            next(ct_iter) if nz else Zero(a) for a, nz in zip(ct_avals, nonzero, strict=True)
        ]
        cts_in = backward_pass(linear_part.jaxpr, linear_part.consts, operands, cts_out)
        cts_in = cts_in[len(residuals) :]
        zeros_in[:] = [isinstance(ct, Zero) for ct in cts_in]
        return [ct for ct in cts_in if not isinstance(ct, Zero)]

    avals = [get_aval(k) for k in known] + [
        a for a, nz in zip(ct_avals, nonzero, strict=True) if nz
    ]
    closed, hoisted = common.trace_closed(transposed, avals, "checkpoint transpose")
    outs = iter(
        remat_p.bind(
            *hoisted,
            *known,
            *[ct for ct in cts if not isinstance(ct, Zero)],
            jaxpr=closed,
            prevent_cse=prevent_cse,
            differentiated=differentiated,
            policy=policy,
        )
    )
    zeros = iter(zeros_in)
    return [
        (Zero(a.aval) if next(zeros) else next(outs)) if lin else None
        for a, lin in zip(args, linear, strict=True)
    ]


remat_p = define_higher_order_primitive(
    "remat2",
    abstract_eval=_remat_abstract_eval,
    reference=_remat_impl,
    jvp=_remat_jvp,
    transpose=_remat_transpose,
    batch=_remat_batch,
    partial_eval=_remat_partial_eval,
)
