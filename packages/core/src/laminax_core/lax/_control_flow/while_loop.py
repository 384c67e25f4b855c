"""`while_loop` and `fori_loop`: the `while` primitive. Operands are
`(*cond_consts, *body_consts, *carry)`; `cond_jaxpr` maps `(cond_consts, carry)` to a bool
scalar and `body_jaxpr` maps `(body_consts, carry)` to the next carry.

Forward mode and vmap work; reverse mode does not (the number of iterations is not known ahead
of time), as in JAX: `fori_loop` with static bounds is a `scan` and differentiates both ways.
"""

from __future__ import annotations

import operator

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _trace, dtypes
from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr
from laminax_core._primitive import define_higher_order_primitive
from laminax_core.lax import _elementwise
from laminax_core.lax._control_flow import common
from laminax_core.lax._control_flow.scan import _carry_fixpoint, _cut, scan

__all__ = ["fori_loop", "while_loop", "while_p"]


def while_loop(cond_fun, body_fun, init_val):
    """Repeats `val = body_fun(val)` while `cond_fun(val)` is true.

    Example:
      >>> while_loop(lambda c: c < 10, lambda c: c * 2.0, np.float32(1))
      array(16., dtype=float32)
    """
    carry, tree = tree_flatten(init_val)
    args_tree = tree_flatten((init_val,))[1]  # the functions take the carry as one argument
    avals = [get_aval(c) for c in carry]
    cond_trees: list = []
    cond_closed, cond_consts = common.trace_user_fun(
        cond_fun, args_tree, avals, "while_loop", cond_trees
    )
    out = cond_closed.out_avals
    if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise TypeError(
            "cond_fun must return a boolean scalar, but got output type(s) "
            f"{[a.str_short() for a in out]}."
        )
    body_trees: list = []
    body_closed, body_consts = common.trace_user_fun(
        body_fun, args_tree, avals, "while_loop", body_trees
    )
    if body_trees[0] == tree:
        carry, promoted = common.promote_weak_carry(carry, avals, body_closed.out_avals)
        if promoted:
            avals = [get_aval(c) for c in carry]
            cond_closed, cond_consts = common.trace_user_fun(
                cond_fun, args_tree, avals, "while_loop", cond_trees
            )
            body_closed, body_consts = common.trace_user_fun(
                body_fun, args_tree, avals, "while_loop", body_trees
            )
    if body_trees[0] != tree:
        raise TypeError(
            "body_fun output and input must have same type structure, got "
            f"{body_trees[0]} and {tree}."
        )
    common.check_same_types("body_fun output and input", avals, body_closed.out_avals)
    outs = _bind_forwarding(cond_closed, cond_consts, body_closed, body_consts, carry)
    return tree_unflatten(tree, outs)


def _bind_forwarding(cond_closed, cond_consts, body_closed, body_consts, carry) -> list:
    # As in JAX: a carry the body returns unchanged and the predicate does not read becomes a
    # body const (so vmap with a batched predicate need not batch it).
    n_bc = len(body_consts)
    fwd = common.forwarded_inputs(body_closed)
    read = {id(v) for e in cond_closed.jaxpr.eqns for v in e.invars}
    read |= {id(v) for v in cond_closed.jaxpr.outvars}
    carry_vars = cond_closed.jaxpr.invars[len(cond_consts) :]
    to_const = [fwd[i] == n_bc + i and id(carry_vars[i]) not in read for i in range(len(carry))]
    if any(to_const):
        keep = [not m for m in to_const]
        body_closed = common.prune_outputs(body_closed, keep)
        body_closed = common.move_inputs_to_front(body_closed, [False] * n_bc + to_const)
        cond_jaxpr = cond_closed.jaxpr
        invars = cond_jaxpr.invars[: len(cond_consts)] + [
            v for v, k in zip(carry_vars, keep, strict=True) if k
        ]
        cond_closed = ClosedJaxpr(
            Jaxpr(cond_jaxpr.constvars, invars, cond_jaxpr.outvars, cond_jaxpr.eqns,
                  cond_jaxpr.effects),
            cond_closed.consts,
        )  # fmt: skip
        body_consts = [*[c for c, m in zip(carry, to_const, strict=True) if m], *body_consts]
        carry = [c for c, k in zip(carry, keep, strict=True) if k]
    outs = iter(
        while_p.bind(
            *cond_consts,
            *body_consts,
            *carry,
            cond_jaxpr=cond_closed,
            body_jaxpr=body_closed,
            cond_nconsts=len(cond_consts),
            body_nconsts=len(body_consts),
        )
    )
    moved = iter(body_consts)
    return [next(moved) if m else next(outs) for m in to_const]


def fori_loop(lower, upper, body_fun, init_val, *, unroll: int | bool | None = None):
    """Repeats `val = body_fun(i, val)` for `i` from `lower` to `upper - 1`.

    With concrete bounds it is a `scan` (reverse-differentiable) that `unroll` steps are
    unrolled into, as in `scan`; with traced bounds, a `while_loop` (no `unroll`).

    Example:
      >>> fori_loop(0, 3, lambda i, c: c * 2.0, np.float32(1))
      array(8., dtype=float32)
    """
    _check_fori_bounds(lower, upper, body_fun)
    try:
        lo, hi = operator.index(lower), operator.index(upper)
    except TypeError:
        lo = hi = None
    if lo is not None:

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), ()

        (_, out), _ = scan(
            step, (np.int32(lo), init_val), None, length=max(hi - lo, 0),
            unroll=1 if unroll is None else unroll,
        )
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known: "
            "pass Python ints (or concrete values) as lower and upper."
        )

    def cond_fun(carry):
        # lax.lt: a weak bound is not converted, as in JAX
        return _elementwise.lt(carry[0], carry[1])

    def body(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    dtype = dtypes.result_type(lower, upper)
    _, _, out = while_loop(cond_fun, body, (_as(lower, dtype), _as(upper, dtype), init_val))
    return out


def _check_fori_bounds(lower, upper, body_fun) -> None:
    """The loop bounds must share a dtype (a weakly typed signed int may join a signed int of
    another width), as in JAX: promoting them silently could change the loop's count."""
    if not callable(body_fun):
        raise TypeError(f"lax.fori_loop: body_fun must be callable, got {type(body_fun)}.")
    lo, hi = get_aval(lower), get_aval(upper)
    if lo.dtype == hi.dtype:
        return
    signed = dtypes.issubdtype(lo.dtype, np.signedinteger) and dtypes.issubdtype(
        hi.dtype, np.signedinteger)
    if signed and lo.weak_type != hi.weak_type:
        return
    raise TypeError(
        "lower and upper arguments to fori_loop must have equal types, got "
        f"{lo.dtype.name} and {hi.dtype.name}; convert one of them (for example "
        "jnp.int32(upper))."
    )


def _as(x, dtype):
    if not isinstance(x, _trace.Tracer):
        return np.asarray(x, dtype)
    return x if x.dtype == dtype else _elementwise.convert_element_type(x, dtype)


# ----- the primitive and its rules --------------------------------------------------------


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return body_jaxpr.out_avals, cond_jaxpr.effects | body_jaxpr.effects


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # A batched predicate (vmap) has a shape that prefixes every carry's: the loop runs while
    # any example is not done, and a done example keeps its carry.
    cond_consts, body_consts, carry = _cut(args, [cond_nconsts, body_nconsts, len(args)])
    cond, body = common.jaxpr_as_fun(cond_jaxpr), common.jaxpr_as_fun(body_jaxpr)
    pred = np.asarray(cond(*cond_consts, *carry)[0])
    while pred.any():
        new = body(*body_consts, *carry)
        if pred.shape:
            new = [
                np.where(_prefix(pred, np.shape(c)), n, c) for n, c in zip(new, carry, strict=True)
            ]
        carry = new
        pred = np.asarray(cond(*cond_consts, *carry)[0])
    return list(carry)


def _prefix(pred, shape):
    # the per-example predicate broadcast along a carry's trailing dims
    return pred.reshape(pred.shape + (1,) * (len(shape) - pred.ndim))


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    sizes = [cond_nconsts, body_nconsts, len(primals)]
    cond_consts, body_consts, carry = _cut(primals, sizes)
    _, t_body_consts, t_carry = _cut(tangents, sizes)
    const_nz = [not isinstance(t, Zero) for t in t_body_consts]

    def step(flags):
        return common.jvp_jaxpr(body_jaxpr, [*const_nz, *flags], [False] * len(carry))[1]

    carry_nz = _carry_fixpoint(step, [not isinstance(t, Zero) for t in t_carry])
    body_jvp, _ = common.jvp_jaxpr(body_jaxpr, [*const_nz, *carry_nz], carry_nz)
    n_bc, n_tbc, n_c, n_tc = len(body_consts), sum(const_nz), len(carry), sum(carry_nz)

    def body(*a):  # (body consts, their tangents, carry, carry tangents)
        bc, tbc, c, tc = _cut(a, [n_bc, n_tbc, n_c, n_tc])
        return common.jaxpr_as_fun(body_jvp)(*bc, *c, *tbc, *tc)

    def cond(*a):  # (cond consts, carry, carry tangents)
        return common.jaxpr_as_fun(cond_jaxpr)(*a[: cond_nconsts + n_c])

    t_avals = [
        a.to_tangent_aval()
        for a, nz in zip(body_jaxpr.in_avals[n_bc:], carry_nz, strict=True)
        if nz
    ]
    tc_avals = [
        a.to_tangent_aval()
        for a, nz in zip(body_jaxpr.in_avals[:n_bc], const_nz, strict=True)
        if nz
    ]
    body_closed, _ = common.trace_closed(
        body,
        [*body_jaxpr.in_avals[:n_bc], *tc_avals, *body_jaxpr.in_avals[n_bc:], *t_avals],
        "while jvp",
    )
    cond_closed, _ = common.trace_closed(cond, [*cond_jaxpr.in_avals, *t_avals], "while jvp")
    keep = lambda ts, flags: [t for t, f in zip(ts, flags, strict=True) if f]  # noqa: E731
    t_carry = [instantiate_zeros(t) if f else t for t, f in zip(t_carry, carry_nz, strict=True)]
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *keep(t_body_consts, const_nz),
        *carry,
        *keep(t_carry, carry_nz),
        cond_jaxpr=cond_closed,
        body_jaxpr=body_closed,
        cond_nconsts=cond_nconsts,
        body_nconsts=n_bc + n_tbc,
    )
    out_t = iter(outs[n_c:])
    return outs[:n_c], [
        next(out_t) if nz else Zero(a.to_tangent_aval())
        for nz, a in zip(carry_nz, body_jaxpr.out_avals, strict=True)
    ]


def _while_partial_eval(trace, args, params):
    # The known carries are computed by a while loop of their own when neither they nor the
    # predicate depend on unknown values; the whole loop is also staged for the unknown ones.
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cond_n, body_n = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts, carry = _cut(args, [cond_n, body_n, len(args)])
    uk = lambda xs: [trace.is_unknown(x) for x in xs]  # noqa: E731
    const_uk = uk(body_consts)

    def step(flags):
        return partial_eval.partial_eval_jaxpr(body_jaxpr, [*const_uk, *flags], flags)[2]

    carry_uk = _carry_fixpoint(step, uk(carry))
    _, _, pred_uk, _ = partial_eval.partial_eval_jaxpr(
        cond_jaxpr, [*uk(cond_consts), *carry_uk], [False]
    )
    staged = trace.stage(while_p, args, params)
    if pred_uk[0] or all(carry_uk):
        return staged
    known_idx = [i for i, f in enumerate(carry_uk) if not f]

    def fill(avals, values, flags):  # known values, with zeros in place of the unknown ones
        it = iter(values)
        return [zeros_like_aval(a) if f else next(it) for a, f in zip(avals, flags, strict=True)]

    known = lambda xs, flags: [x for x, f in zip(xs, flags, strict=True) if not f]  # noqa: E731
    cc_uk = uk(cond_consts)
    n_kbc, n_kcc = sum(not f for f in const_uk), sum(not f for f in cc_uk)

    def body(*a):
        bc = fill(body_jaxpr.in_avals[:body_n], a[:n_kbc], const_uk)
        outs = common.jaxpr_as_fun(body_jaxpr)(
            *bc, *fill(body_jaxpr.out_avals, a[n_kbc:], carry_uk)
        )
        return [outs[i] for i in known_idx]

    def cond(*a):
        cc = fill(cond_jaxpr.in_avals[:cond_n], a[:n_kcc], cc_uk)
        return common.jaxpr_as_fun(cond_jaxpr)(
            *cc, *fill(body_jaxpr.out_avals, a[n_kcc:], carry_uk)
        )

    known_avals = [body_jaxpr.out_avals[i] for i in known_idx]
    body_closed, _ = common.trace_closed(
        body, [*known(body_jaxpr.in_avals[:body_n], const_uk), *known_avals], "while partial eval"
    )
    cond_closed, _ = common.trace_closed(
        cond, [*known(cond_jaxpr.in_avals[:cond_n], cc_uk), *known_avals], "while partial eval"
    )
    with _trace.set_current_trace(trace.parent):
        known_outs = while_p.bind(
            *known(cond_consts, cc_uk),
            *known(body_consts, const_uk),
            *[carry[i] for i in known_idx],
            cond_jaxpr=cond_closed,
            body_jaxpr=body_closed,
            cond_nconsts=n_kcc,
            body_nconsts=n_kbc,
        )
    known_iter = iter(known_outs)
    return [s if f else next(known_iter) for s, f in zip(staged, carry_uk, strict=True)]


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop."
    )


def _while_batch(axis_data, args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    sizes = [cond_nconsts, body_nconsts, len(args)]
    moved = [
        x if d is None else bdim_at_front(x, d, axis_data.size)
        for x, d in zip(args, dims, strict=True)
    ]
    cond_consts, body_consts, carry = _cut(moved, sizes)
    cc_b, bc_b, k_b = _cut([d is not None for d in dims], sizes)
    flag_dims = lambda flags: [0 if f else None for f in flags]  # noqa: E731

    def step(flags):
        return common.out_batched(body_jaxpr, axis_data, flag_dims([*bc_b, *flags]))

    k_b = _carry_fixpoint(step, k_b)
    pred_b = common.out_batched(cond_jaxpr, axis_data, flag_dims([*cc_b, *k_b]))[0]
    if pred_b or cond_jaxpr.out_avals[0].shape:
        # A batched predicate stays batched, as in JAX: every carry is batched (at 0, so that
        # the predicate's shape prefixes each carry's) and the loop runs while any example is
        # not done; the lowering keeps the carry of the finished ones.
        pred_b, k_b = True, [True] * len(carry)
    carry = [
        bdim_at_front(x, None, axis_data.size) if f and d is None else x
        for x, d, f in zip(carry, dims[cond_nconsts + body_nconsts :], k_b, strict=True)
    ]
    k_dims = flag_dims(k_b)
    body_b = common.batch_jaxpr(body_jaxpr, axis_data, flag_dims(bc_b) + k_dims, lambda n: k_dims)
    cond_b = common.batch_jaxpr(
        cond_jaxpr, axis_data, flag_dims(cc_b) + k_dims, lambda n: [0 if pred_b else None]
    )
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *carry,
        cond_jaxpr=cond_b,
        body_jaxpr=body_b,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts,
    )
    return outs, k_dims


while_p = define_higher_order_primitive(
    "while",
    abstract_eval=_while_abstract_eval,
    reference=_while_impl,
    jvp=_while_jvp,
    transpose=_while_transpose,
    batch=_while_batch,
    partial_eval=_while_partial_eval,
)
