"""`scan` and `map`: the `scan` primitive, a loop over the leading axis of its `xs` with a
carry. Operands are `(*consts, *carry, *xs)`; the body jaxpr maps `(consts, carry, x)` to
`(carry, y)`, and the ys are stacked along a new leading axis."""

from __future__ import annotations

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _trace
from laminax_core._api import vmap
from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import UndefinedPrimal, backward_pass
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr
from laminax_core._primitive import define_higher_order_primitive
from laminax_core._sharding_rules import leading_added, leading_removed
from laminax_core.lax import _elementwise, _joining, _slicing, _structural
from laminax_core.lax._control_flow import common

__all__ = ["map", "scan", "scan_p"]


def scan(f, init, xs=None, length: int | None = None, reverse: bool = False, unroll: int = 1):
    """Loops `carry, y = f(carry, x)` over the leading axis of `xs`, stacking the ys.

    Args:
      f: the body, `(carry, x) -> (carry, y)`; the carry keeps its structure and types.
      init: the initial carry (a pytree).
      xs: the pytree of arrays scanned over (None with `length` for no inputs).
      length: the number of iterations, if `xs` does not give it.
      reverse: scan from the end.
      unroll: accepted for JAX compatibility; the reference runs iteration by iteration.

    Returns:
      `(final_carry, stacked_ys)`.

    Example:
      >>> scan(lambda c, x: (c + x, c), np.float32(0), np.arange(3, dtype=np.float32))
      (array(3., dtype=float32), array([0., 0., 1.], dtype=float32))
    """
    if not isinstance(unroll, bool) and (
            not isinstance(unroll, int | np.integer) or unroll < 0):
        raise ValueError(f"scan: `unroll` must be a `bool` or a non-negative `int`, got "
                         f"{unroll!r}.")
    carry, carry_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    carry_avals = [get_aval(c) for c in carry]
    x_avals = [leading_removed(get_aval(x)) for x in xs_leaves]
    out_trees: list = []

    def body(*args):
        c = tree_unflatten(carry_tree, args[: len(carry)])
        x = tree_unflatten(xs_tree, args[len(carry) :])
        result = f(c, x)
        if not (isinstance(result, tuple | list) and len(result) == 2):
            raise TypeError(f"scan body output must be a pair, got {type(result).__name__}.")
        new_carry, y = result
        new_leaves, new_tree = tree_flatten(new_carry)
        if new_tree != carry_tree:
            raise TypeError(
                "scan body function carry input and carry output must have the same pytree "
                f"structure, but they differ: the input carry is {carry_tree} and the output "
                f"carry is {new_tree}."
            )
        y_leaves, y_tree = tree_flatten(y)
        common.check_no_refs([*new_leaves, *y_leaves], f, "scan")
        out_trees[:] = [y_tree]
        return [*new_leaves, *y_leaves]

    closed, consts = common.trace_closed(body, [*carry_avals, *x_avals], "scan")
    carry, promoted = common.promote_weak_carry(
        carry, carry_avals, closed.out_avals[: len(carry)]
    )
    if promoted:
        carry_avals = [get_aval(c) for c in carry]
        closed, consts = common.trace_closed(body, [*carry_avals, *x_avals], "scan")
    common.check_same_types(
        "scan body function carry input and carry output",
        carry_avals,
        closed.out_avals[: len(carry)],
    )
    params = dict(length=length, reverse=bool(reverse), unroll=unroll)
    outs = _bind_forwarding(closed, consts, carry, xs_leaves, params)
    return (
        tree_unflatten(carry_tree, outs[: len(carry)]),
        tree_unflatten(out_trees[0], outs[len(carry) :]),
    )


def _bind_forwarding(closed, consts, carry, xs, params) -> list:
    # As in JAX: a carry the body returns unchanged becomes a const (its final value is its
    # initial one), and a y that is an x unchanged is not stacked again (the x is returned).
    n_consts, n_carry = len(consts), len(carry)
    fwd = common.forwarded_inputs(closed)
    to_const = [fwd[i] == n_consts + i for i in range(n_carry)]
    if any(to_const):
        closed = common.prune_outputs(
            closed, [not m for m in to_const] + [True] * len(fwd[n_carry:])
        )
        closed = common.move_inputs_to_front(
            closed, [False] * n_consts + to_const + [False] * len(xs)
        )
        consts = [*[c for c, m in zip(carry, to_const, strict=True) if m], *consts]
        carry = [c for c, m in zip(carry, to_const, strict=True) if not m]
    x_start = n_consts + n_carry
    y_fwd = [f - x_start if f is not None and f >= x_start else None for f in fwd[n_carry:]]
    closed = common.prune_outputs(closed, [True] * len(carry) + [f is None for f in y_fwd])
    outs = scan_p.bind(
        *consts, *carry, *xs, jaxpr=closed, num_consts=len(consts), num_carry=len(carry), **params
    )
    carry_iter, ys_iter = iter(outs[: len(carry)]), iter(outs[len(carry) :])
    moved = iter(consts)
    carry_out = [next(moved) if m else next(carry_iter) for m in to_const]
    ys = [next(ys_iter) if f is None else _fresh(xs[f]) for f in y_fwd]
    return [*carry_out, *ys]


def _fresh(x):
    # a forwarded NumPy x comes back as a new array of the canonical dtype, as JAX
    # puts it on the device (int64 -> int32 with x64 off): `copy` is dispatched like any op;
    # when evaluated eagerly; tracers and device arrays are immutable and come back as they are
    if not isinstance(x, np.ndarray | np.generic):
        return x
    if _trace.current_trace() is _trace.eval_trace():
        return _elementwise.copy_p.bind(x)
    return np.array(x)  # traced: the constant itself, as in JAX's jaxpr


def _scan_length(xs_leaves, length):
    sizes = {get_aval(x).shape[0] if get_aval(x).ndim else None for x in xs_leaves}
    if None in sizes:
        raise ValueError("scan got value with no leading axis to scan over.")
    if length is not None:
        sizes.add(int(length))
    if len(sizes) > 1:
        raise ValueError(
            f"scan got values with different leading axis sizes: "
            f"{', '.join(str(n) for n in sorted(sizes))}."
        )
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return sizes.pop()


def map(f, xs, *, batch_size: int | None = None):  # noqa: A001 (JAX's name)
    """Applies `f` to each slice of `xs` along the leading axis (a scan with no carry).

    Args:
      f: the function of one slice.
      xs: a pytree of arrays with a common leading axis.
      batch_size: if given, `f` is vmapped over batches of this many slices and the scan runs
        over the batches (a remainder that does not fill a batch is one more vmapped call).

    Example:
      >>> map(lambda x: x * 2.0, np.arange(3, dtype=np.float32))
      array([0., 2., 4.], dtype=float32)
    """
    if batch_size is None or (type(batch_size) is int and batch_size == 0):
        # batch_size=0 means no batching in JAX too
        _, ys = scan(lambda carry, x: ((), f(x)), (), xs)
        return ys
    return _batched_map(f, xs, batch_size)


def _batched_map(f, xs, batch_size):
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}.")
    leaves, tree = tree_flatten(xs)
    n = _scan_length(leaves, None)
    batch_size = min(int(batch_size), n) or 1
    n_full, rest = divmod(n, batch_size)
    full = [_structural.reshape(_slicing.slice_in_dim(x, 0, n_full * batch_size, axis=0),
                        (n_full, batch_size, *get_aval(x).shape[1:])) for x in leaves]
    batched = vmap(f)
    _, ys = scan(lambda carry, x: ((), batched(x)), (), tree_unflatten(tree, full))
    ys_leaves, ys_tree = tree_flatten(ys)
    ys_leaves = [_structural.reshape(y, (n_full * batch_size, *get_aval(y).shape[2:]))
                 for y in ys_leaves]
    if rest:
        tail = tree_unflatten(tree, [_slicing.slice_in_dim(x, n_full * batch_size, n, axis=0)
                                     for x in leaves])
        tail_leaves = tree_flatten(batched(tail))[0]
        ys_leaves = [_joining.concatenate([y, t], 0) for y, t in zip(ys_leaves, tail_leaves,
                                                                 strict=True)]
    return tree_unflatten(ys_tree, ys_leaves)


# ----- the primitive and its rules --------------------------------------------------------


def _split(args, num_consts, num_carry):
    return (
        list(args[:num_consts]),
        list(args[num_consts : num_consts + num_carry]),
        list(args[num_consts + num_carry :]),
    )


def _scan_abstract_eval(*avals, jaxpr, length, reverse, unroll, num_consts, num_carry):
    ys = [leading_added(a, length) for a in jaxpr.out_avals[num_carry:]]
    return [*jaxpr.out_avals[:num_carry], *ys], jaxpr.effects


def _scan_impl(*args, jaxpr, length, reverse, unroll, num_consts, num_carry):
    consts, carry, xs = _split(args, num_consts, num_carry)
    body = common.jaxpr_as_fun(jaxpr)
    ys_per_step = []
    for i in reversed(range(length)) if reverse else range(length):
        x = [
            _structural.squeeze(
                _slicing.dynamic_slice(
                    v, [np.int32(i)] + [np.int32(0)] * (v.ndim - 1), (1, *v.shape[1:])
                ),
                (0,),
            )
            for v in xs
        ]
        outs = body(*consts, *carry, *x)
        carry, y = outs[:num_carry], outs[num_carry:]
        ys_per_step.append(y)
    if reverse:
        ys_per_step.reverse()
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [
        np.stack([np.asarray(step[k]) for step in ys_per_step])
        if length
        else np.zeros((0, *a.shape), a.dtype)
        for k, a in enumerate(y_avals)
    ]
    return [*carry, *ys]


def _carry_fixpoint(step, carry_flags):
    """Grows the carry flags (nonzero, unknown, batched) until the body preserves them."""
    while True:
        out_flags = step(carry_flags)
        grown = [a or b for a, b in zip(carry_flags, out_flags, strict=True)]
        if grown == carry_flags:
            return carry_flags
        carry_flags = grown


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, unroll, num_consts, num_carry):
    nz = [not isinstance(t, Zero) for t in tangents]
    const_nz, carry_nz, xs_nz = _split(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(flags):
        _, out_nz = common.jvp_jaxpr(
            jaxpr, [*const_nz, *flags, *xs_nz], [False] * len(jaxpr.out_avals)
        )
        return out_nz[:num_carry]

    carry_nz = _carry_fixpoint(step, carry_nz)
    jvp_closed, out_nz = common.jvp_jaxpr(
        jaxpr, [*const_nz, *carry_nz, *xs_nz], [*carry_nz, *[False] * n_ys]
    )
    ys_nz = out_nz[num_carry:]
    # reorder the jvp jaxpr's (primals, tangents) into scan's (consts, carry, xs) groups
    consts, carry, xs = _split(primals, num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(tangents, num_consts, num_carry)
    t_carry = [instantiate_zeros(t) if f else t for t, f in zip(t_carry, carry_nz, strict=True)]
    keep = lambda ts, flags: [t for t, f in zip(ts, flags, strict=True) if f]  # noqa: E731
    groups = [len(consts), sum(const_nz), len(carry), sum(carry_nz), len(xs), sum(xs_nz)]
    body = _regroup(jvp_closed, groups, num_carry, sum(carry_nz), len(jaxpr.out_avals))
    outs = scan_p.bind(
        *consts,
        *keep(t_consts, const_nz),
        *carry,
        *keep(t_carry, carry_nz),
        *xs,
        *keep(t_xs, xs_nz),
        jaxpr=body,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=groups[0] + groups[1],
        num_carry=groups[2] + groups[3],
    )
    n_c, n_tc = num_carry, sum(carry_nz)
    carry_out, t_carry_out = outs[:n_c], iter(outs[n_c : n_c + n_tc])
    ys, t_ys = outs[n_c + n_tc : n_c + n_tc + n_ys], iter(outs[n_c + n_tc + n_ys :])
    out_avals = _scan_abstract_eval(
        jaxpr=jaxpr,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=num_consts,
        num_carry=num_carry,
    )[0]
    tangents_out = [
        next(t_carry_out) if f else Zero(a.to_tangent_aval())
        for f, a in zip(carry_nz, out_avals[:n_c], strict=True)
    ]
    tangents_out += [
        next(t_ys) if f else Zero(a.to_tangent_aval())
        for f, a in zip(ys_nz, out_avals[n_c:], strict=True)
    ]
    return [*carry_out, *ys], tangents_out


def _regroup(jvp_closed, groups, num_carry, num_carry_t, num_primal_out):
    """The jvp jaxpr (primals then tangents in, primals then tangents out) with inputs in
    (consts, const tangents, carry, carry tangents, xs, x tangents) order and outputs in
    (carry, carry tangents, ys, y tangents) order."""
    n_c, n_tc, n_k, n_tk, n_x, n_tx = groups

    def fun(*args):
        c, tc, k, tk, x, tx = _cut(args, groups)
        outs = common.jaxpr_as_fun(jvp_closed)(*c, *k, *x, *tc, *tk, *tx)
        primal, tangent = outs[:num_primal_out], outs[num_primal_out:]
        carry, ys = primal[:num_carry], primal[num_carry:]
        t_carry, t_ys = tangent[:num_carry_t], tangent[num_carry_t:]
        return [*carry, *t_carry, *ys, *t_ys]

    ins = jvp_closed.in_avals
    primal_avals, tangent_avals = ins[: n_c + n_k + n_x], ins[n_c + n_k + n_x :]
    p_c, p_k, p_x = _cut(primal_avals, [n_c, n_k, n_x])
    t_c, t_k, t_x = _cut(tangent_avals, [n_tc, n_tk, n_tx])
    closed, _ = common.trace_closed(fun, [*p_c, *t_c, *p_k, *t_k, *p_x, *t_x], "scan jvp")
    return closed


def _cut(seq, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start : start + n]))
        start += n
    return out


def _scan_partial_eval(trace, args, params):
    """Splits a scan with known and unknown operands into a known scan run in the parent and an
    unknown scan staged for transposition.

    Residuals (known values the unknown body reads) are sorted as JAX sorts them: a known const
    or x read as-is is passed to the unknown scan directly (forwarded); one computed from the
    known consts alone is loop-invariant, so it is computed once, before the loop, together
    with every other const-only value of the known body (hoisted); only the rest vary per
    iteration and leave the known scan stacked along a leading `length` axis.
    """
    jaxpr, num_consts, num_carry = params["jaxpr"], params["num_consts"], params["num_carry"]
    const_uk, carry_uk, xs_uk = _split([trace.is_unknown(x) for x in args], num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(flags):
        _, _, out_uk, _ = partial_eval.partial_eval_jaxpr(
            jaxpr, [*const_uk, *flags, *xs_uk], [*flags, *[False] * n_ys]
        )
        return out_uk[:num_carry]

    carry_uk = _carry_fixpoint(step, carry_uk)
    known, unknown, out_uk, res_avals = partial_eval.partial_eval_jaxpr(
        jaxpr, [*const_uk, *carry_uk, *xs_uk], [*carry_uk, *[False] * n_ys]
    )
    consts, carry, xs = _split(args, num_consts, num_carry)
    known_ins = [_pick(consts, const_uk, False), _pick(carry, carry_uk, False)]
    known_ins.append(_pick(xs, xs_uk, False))
    with _trace.set_current_trace(trace.parent):
        known_outs, residuals, intensive = _run_known_scan(
            known, known_ins, len(out_uk) - sum(out_uk), params
        )
    # the unknown scan: (intensive residuals, unknown consts, unknown carry, unknown xs,
    # extensive residuals)
    unknown_outs = trace.stage(
        scan_p,
        [
            *_pick(residuals, intensive, True),
            *_pick(consts, const_uk, True),
            *_pick(carry, carry_uk, True),
            *_pick(xs, xs_uk, True),
            *_pick(residuals, intensive, False),
        ],
        dict(
            params,
            jaxpr=_move_residual_binders(unknown, intensive),
            num_consts=sum(intensive) + sum(const_uk),
            num_carry=sum(carry_uk),
        ),
    )
    known_iter, unknown_iter = iter(known_outs), iter(unknown_outs)
    return [next(unknown_iter) if f else next(known_iter) for f in out_uk]


def _move_residual_binders(unknown, intensive):
    """`unknown` (residuals first, then the unknown inputs) with the binders of the intensive
    residuals kept in front and those of the extensive ones moved to the back."""
    jaxpr, n_res = unknown.jaxpr, len(intensive)
    res_vars, uk_vars = jaxpr.invars[:n_res], jaxpr.invars[n_res:]
    invars = [*_pick(res_vars, intensive, True), *uk_vars, *_pick(res_vars, intensive, False)]
    moved = Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns, jaxpr.effects)
    return ClosedJaxpr(moved, unknown.consts)


def _pick(vals, flags, want):
    return [v for v, f in zip(vals, flags, strict=True) if f == want]


def _run_known_scan(known, known_ins, n_out, params):
    """Runs the known part of a scan in the current trace.

    Args:
      known: `(known consts, known carry, known xs) -> (known carry, known ys, residuals)`.
      known_ins: the known operands, as `[consts, carry, xs]` lists.
      n_out: the number of known carry and ys outputs.
      params: the scan's params.

    Returns:
      `(known_outs, residuals, intensive)`: the known carry and ys, the residual values (loop
      invariants unstacked, the others stacked), and whether each residual is loop-invariant.
    """
    k_consts, k_carry, k_xs = known_ins
    forwarded = _forwarded_residuals(known, n_out, len(k_consts), len(k_carry))
    outvars = known.jaxpr.outvars
    kept = [v for v, f in zip(outvars, [None] * n_out + forwarded, strict=True) if f is None]
    known_nf = ClosedJaxpr(
        Jaxpr(known.jaxpr.constvars, known.jaxpr.invars, kept, known.jaxpr.eqns),
        known.consts,
    )
    hoisted, loop_outs = _hoisted_loop(known_nf, k_consts, k_carry, k_xs, n_out, params)
    known_outs, ext_res = loop_outs[:n_out], iter(loop_outs[n_out:])
    known_flat, residuals, intensive = [*k_consts, *k_carry, *k_xs], [], []
    for f in forwarded:
        if f is None:
            found = next(hoisted)
            intensive.append(found is not None)
            residuals.append(next(ext_res) if found is None else found[0])
        else:
            residuals.append(known_flat[f])
            intensive.append(f < len(k_consts))
    return known_outs, residuals, intensive


def _forwarded_residuals(known, n_out, n_consts, n_carry):
    """For each residual of `known`: the index of the known input it is, if it is a const or an
    x read as-is (a carry input differs per iteration from what the unknown body needs)."""
    position = {id(v): i for i, v in enumerate(known.jaxpr.invars)}
    found = []
    for v in known.jaxpr.outvars[n_out:]:
        i = position.get(id(v))
        is_carry = i is not None and n_consts <= i < n_consts + n_carry
        found.append(None if is_carry else i)
    return found


def _hoisted_loop(known_nf, k_consts, k_carry, k_xs, n_out, params):
    """Evaluates the const-only part of `known_nf` once, outside the loop, and scans the rest.

    Returns:
      `(hoisted, loop_outs)`: an iterator giving, per non-forwarded residual, `(value,)` for a
      loop-invariant one or None for one the loop stacks; and the loop's outputs (known carry,
      known ys, stacked residuals).
    """
    n_res = len(known_nf.out_avals) - n_out
    n_loop_in = len(k_carry) + len(k_xs)
    if known_nf.effects:  # an effect runs once per iteration: nothing is hoisted
        res_uk, loop, loop_consts, invariant = [True] * n_res, known_nf, list(k_consts), []
    else:
        hoist, loop, out_uk, _ = partial_eval.partial_eval_jaxpr(
            known_nf, [False] * len(k_consts) + [True] * n_loop_in, [True] * n_out + [False] * n_res
        )
        res_uk = out_uk[n_out:]
        hoist_outs = common.jaxpr_as_fun(hoist)(*k_consts)
        n_invariant = n_res - sum(res_uk)
        invariant, loop_consts = hoist_outs[:n_invariant], hoist_outs[n_invariant:]
    invariant_iter = iter(invariant)
    hoisted = iter([None if uk else (next(invariant_iter),) for uk in res_uk])
    if not loop.out_avals and not loop.effects:
        return hoisted, []
    loop_outs = scan_p.bind(
        *loop_consts,
        *k_carry,
        *k_xs,
        **dict(params, jaxpr=loop, num_consts=len(loop_consts), num_carry=len(k_carry)),
    )
    return hoisted, loop_outs


def _scan_transpose(cts, *args, jaxpr, length, reverse, unroll, num_consts, num_carry):
    consts, carry, xs = _split(args, num_consts, num_carry)
    # a carry is transposed as linear even when its initial value is a known constant: in a
    # linear scan that constant is a zero (an instantiated tangent), as JAX assumes too
    lin_c = [undefined(c) for c in consts]
    lin_x = [undefined(x) for x in xs]
    nl_consts = [c for c in consts if not undefined(c)]
    nl_xs = [x for x in xs if not undefined(x)]
    # a symbolic-zero ys cotangent is not scanned over: the body sees it as a Zero
    ct_carry = [instantiate_zeros(ct) for ct in cts[:num_carry]]
    ys_zero = [isinstance(ct, Zero) for ct in cts[num_carry:]]
    ct_ys = [ct for ct in cts[num_carry:] if not isinstance(ct, Zero)]
    y_ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals[num_carry:]]
    lin_c_avals = [c.aval for c in consts if undefined(c)]
    ct_consts = [zeros_like_aval(a) for a in lin_c_avals]
    x_avals = [
        a for a, lin in zip(jaxpr.in_avals[num_consts + num_carry :], lin_x, strict=True) if lin
    ]
    carry_avals = jaxpr.in_avals[num_consts : num_consts + num_carry]

    def body(*a):
        nl_c, acc, ct_k, ct_y, nl_x = _cut(
            a, [len(nl_consts), len(ct_consts), num_carry, len(ct_ys), len(nl_xs)]
        )
        c_iter, x_iter = iter(nl_c), iter(nl_x)
        operands = [
            UndefinedPrimal(av) if lin else next(c_iter)
            for av, lin in zip(jaxpr.in_avals[:num_consts], lin_c, strict=True)
        ]
        operands += [UndefinedPrimal(av) for av in carry_avals]
        operands += [
            UndefinedPrimal(av) if lin else next(x_iter)
            for av, lin in zip(jaxpr.in_avals[num_consts + num_carry :], lin_x, strict=True)
        ]
        ct_y_iter = iter(ct_y)
        ct_y = [
            Zero(av) if zero else next(ct_y_iter)
            for av, zero in zip(y_ct_avals, ys_zero, strict=True)
        ]
        ct_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, operands, [*ct_k, *ct_y])
        ct_in = [
            zeros_like_aval(av) if isinstance(c, Zero) else c
            for c, av in zip(ct_in, jaxpr.in_avals, strict=True)
        ]
        ct_c, ct_carry_in, ct_x = _split(ct_in, num_consts, num_carry)

        new_acc = [
            _elementwise.add_any(a_, c)
            for a_, c in zip(
                acc, [c for c, lin in zip(ct_c, lin_c, strict=True) if lin], strict=True
            )
        ]
        return [*new_acc, *ct_carry_in, *[c for c, lin in zip(ct_x, lin_x, strict=True) if lin]]

    avals = [
        *[get_aval(c) for c in nl_consts],
        *lin_c_avals,
        *carry_avals,
        *[leading_removed(get_aval(c)) for c in ct_ys],
        *[leading_removed(get_aval(x)) for x in nl_xs],
    ]
    body_closed, _ = common.trace_closed(body, avals, "scan transpose")
    outs = scan_p.bind(
        *nl_consts,
        *ct_consts,
        *ct_carry,
        *ct_ys,  # the scanned cotangents come before the scanned residuals, as in JAX
        *nl_xs,
        jaxpr=body_closed,
        length=length,
        reverse=not reverse,
        unroll=unroll,
        num_consts=len(nl_consts),
        num_carry=len(ct_consts) + num_carry,
    )
    acc, ct_init, ct_xs = _cut(outs, [len(ct_consts), num_carry, len(x_avals)])
    acc_iter, xs_iter = iter(acc), iter(ct_xs)
    return (
        [next(acc_iter) if lin else None for lin in lin_c]
        + [ct if undefined(c) else None for ct, c in zip(ct_init, carry, strict=True)]
        + [next(xs_iter) if lin else None for lin in lin_x]
    )


def _scan_batch(axis_data, args, dims, *, jaxpr, length, reverse, unroll, num_consts, num_carry):
    consts, carry, xs = _split(args, num_consts, num_carry)
    c_dims, k_dims, x_dims = _split(dims, num_consts, num_carry)
    consts = [x if d is None else move_bdim(x, d, 0) for x, d in zip(consts, c_dims, strict=True)]
    c_b = [d is not None for d in c_dims]
    x_b = [d is not None for d in x_dims]

    def step(flags):
        in_dims = [0 if f else None for f in [*c_b, *flags, *x_b]]
        return common.out_batched(jaxpr, axis_data, in_dims)[:num_carry]

    k_b = _carry_fixpoint(step, [d is not None for d in k_dims])
    carry = [
        bdim_at_front(x, d, axis_data.size) if f else x
        for x, d, f in zip(carry, k_dims, k_b, strict=True)
    ]
    # scan's axis stays first: a batched x goes to axis 1, its slices have the batch at 0
    xs = [x if d is None else move_bdim(x, d, 1) for x, d in zip(xs, x_dims, strict=True)]
    in_dims = [0 if f else None for f in [*c_b, *k_b, *x_b]]
    y_b = common.out_batched(jaxpr, axis_data, in_dims)[num_carry:]
    out_dims = [0 if f else None for f in [*k_b, *y_b]]
    body = common.batch_jaxpr(jaxpr, axis_data, in_dims, lambda n: out_dims)
    outs = scan_p.bind(
        *consts,
        *carry,
        *xs,
        jaxpr=body,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=num_consts,
        num_carry=num_carry,
    )
    return outs, [0 if f else None for f in k_b] + [1 if f else None for f in y_b]


scan_p = define_higher_order_primitive(
    "scan",
    abstract_eval=_scan_abstract_eval,
    reference=_scan_impl,
    jvp=_scan_jvp,
    transpose=_scan_transpose,
    batch=_scan_batch,
    partial_eval=_scan_partial_eval,
)
