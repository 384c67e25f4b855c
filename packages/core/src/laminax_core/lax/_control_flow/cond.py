"""`cond` and `switch`: the `cond` primitive, which applies one of several branch jaxprs.

Operands are `(index, *consts, *args)`; `branches` are closed jaxprs that all take the consts
of every branch followed by the arguments. Under vmap with a batched index, cond becomes a
`select_n` over every branch's result, as in JAX.
"""

from __future__ import annotations

import collections

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _trace, dtypes
from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import UndefinedPrimal, backward_pass
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr, Var
from laminax_core._primitive import define_higher_order_primitive
from laminax_core.lax import _elementwise, _math, _structural
from laminax_core.lax._control_flow import common

__all__ = ["cond", "cond_p", "switch"]


_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """Applies `true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one primitive
    (both branches are traced; under vmap with a batched `pred` both run).

    Example:
      >>> cond(np.float32(1) > 0, lambda x: x + 1.0, lambda x: x - 1.0, np.float32(2))
      array(3., dtype=float32)
    """
    if operand is not _NO_OPERAND:  # JAX's older spelling: one operand, by keyword
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed, "
                f"got operand={operand!r} and positional operands {operands}."
            )
        operands = (operand,)
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred!r} of shape {aval.shape}.")
    if not (aval.dtype == np.bool_ or dtypes.issubdtype(aval.dtype, np.number)):
        raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype}.")
    if aval.dtype != np.bool_:
        pred = _elementwise.ne(pred, np.zeros((), aval.dtype))
    index = _elementwise.convert_element_type(pred, np.int32)
    # the primitive's branch order is (false, true); errors list them as the user wrote them
    return _bind_cond(index, (false_fun, true_fun), operands, "true_fun and false_fun output",
                      shown=(1, 0))


def switch(index, branches, *operands):
    """Applies `branches[index](*operands)`; `index` is clamped into range.

    Example:
      >>> switch(1, [lambda x: x, lambda x: x * 2.0], np.float32(3))
      array(6., dtype=float32)
    """
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    aval = get_aval(index)
    if aval.shape != () or not dtypes.issubdtype(aval.dtype, np.integer):
        raise TypeError(f"Branch index must be scalar integer, got {aval.str_short()}.")
    if len(branches) == 1:
        return branches[0](*operands)
    if isinstance(index, int):
        index = np.int32(index)
    elif aval.dtype != np.int32 or aval.weak_type:  # a weak index is made strong, as in JAX
        index = _elementwise.convert_element_type(index, np.int32)
    index = _math.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _bind_cond(index, branches, operands, "branch outputs")


def _bind_cond(index, funs, operands, what, shown=None):
    leaves, in_tree = tree_flatten(operands)
    avals = [get_aval(x) for x in leaves]
    traced, out_trees = [], []
    for fun in funs:
        trees: list = []
        traced.append(common.trace_user_fun(fun, in_tree, avals, "cond", trees))
        out_trees.append(trees[0])
    order = shown or range(len(funs))
    if any(t != out_trees[0] for t in out_trees):
        trees = [str(out_trees[i]) for i in order]
        raise TypeError(f"{what} must have same type structure, got {' and '.join(trees)}.")
    first, *rest = order
    for i in rest:
        common.check_same_types(what, traced[first][0].out_avals, traced[i][0].out_avals)
    branches, consts = _join_consts(traced)
    inputs = [*consts, *leaves]
    forwarded = _forwarded_inputs(branches, inputs)
    branches = tuple(_drop_outputs(b, forwarded) for b in branches)
    outs = iter(cond_p.bind(index, *inputs, branches=branches))
    results = [next(outs) if i is None else inputs[i] for i in forwarded]
    return tree_unflatten(out_trees[0], results)


def _forwarded_inputs(branches, inputs) -> list:
    """For each output, the input every branch returns unchanged (None if any computes it):
    such outputs skip the cond, as in JAX. Python scalars are not forwarded (they are no
    arrays)."""
    per_branch = []
    for branch in branches:
        position = {id(v): i for i, v in enumerate(branch.jaxpr.invars)}
        per_branch.append([position.get(id(v)) for v in branch.jaxpr.outvars])
    forwarded = []
    for found in zip(*per_branch, strict=True):
        i = found[0]
        same = i is not None and all(f == i for f in found)
        is_array = same and isinstance(inputs[i], _trace.Tracer | np.ndarray)
        forwarded.append(i if is_array else None)
    return forwarded


def _drop_outputs(closed: ClosedJaxpr, forwarded) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    outvars = [v for v, i in zip(jaxpr.outvars, forwarded, strict=True) if i is None]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, jaxpr.eqns, jaxpr.effects),
                       closed.consts)  # fmt: skip


def _join_consts(traced):
    """Gives every branch the (hoisted) consts of all branches as leading inputs; a value that
    several branches close over is passed once, as in JAX."""
    all_consts: list = []
    position: dict[int, int] = {}
    for _, consts in traced:
        for c in consts:
            if id(c) not in position:
                position[id(c)] = len(all_consts)
                all_consts.append(c)
    branches = []
    for closed, consts in traced:
        jaxpr = closed.jaxpr
        const_vars = [Var(get_aval(c)) for c in all_consts]
        for var, c in zip(jaxpr.invars[: len(consts)], consts, strict=True):
            const_vars[position[id(c)]] = var
        invars = [*const_vars, *jaxpr.invars[len(consts) :]]
        new = Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns, jaxpr.effects)
        branches.append(ClosedJaxpr(new, closed.consts))
    return tuple(branches), all_consts


def _cond_abstract_eval(index, *args, branches):
    if index.dtype != np.int32 or index.shape != ():
        raise TypeError(f"cond: the index must be an int32 scalar, got {index.str_short()}.")
    effects = frozenset().union(*(b.effects for b in branches))
    return branches[0].out_avals, effects


def _cond_impl(index, *args, branches):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return common.jaxpr_as_fun(branches[i])(*args)


def _cond_jvp(primals, tangents, *, branches):
    index, *args = primals
    nonzeros = [not isinstance(t, Zero) for t in tangents[1:]]
    out_nz = [False] * len(branches[0].out_avals)
    for b in branches:  # the union of the branches' nonzero output tangents
        _, nz = common.jvp_jaxpr(b, nonzeros, out_nz)
        out_nz = [a or c for a, c in zip(out_nz, nz, strict=True)]
    jvp_branches = tuple(common.jvp_jaxpr(b, nonzeros, out_nz)[0] for b in branches)
    arg_tangents = [t for t in tangents[1:] if not isinstance(t, Zero)]
    outs = cond_p.bind(index, *args, *arg_tangents, branches=jvp_branches)
    n = len(branches[0].out_avals)
    tangent_iter = iter(outs[n:])
    out_tangents = [
        next(tangent_iter) if nz else Zero(a.to_tangent_aval())
        for a, nz in zip(branches[0].out_avals, out_nz, strict=True)
    ]
    return outs[:n], out_tangents


def _cond_partial_eval(trace, args, params):
    # Split every branch into a known and an unknown jaxpr. The known cond computes the known
    # outputs and the residuals; the staged cond reads them. Branches share residual slots of
    # equal aval, and a branch fills the slots it does not compute with `empty2`, as JAX does.
    branches = params["branches"]
    index, *ops = args
    if trace.is_unknown(index):
        return trace.stage(cond_p, args, params)
    in_uk = [trace.is_unknown(x) for x in ops]
    out_uk = [False] * len(branches[0].out_avals)
    for b in branches:  # an output is unknown if it is in any branch
        _, _, uk, _ = partial_eval.partial_eval_jaxpr(b, in_uk, out_uk)
        out_uk = [a or c for a, c in zip(out_uk, uk, strict=True)]
    splits = [partial_eval.partial_eval_jaxpr(b, in_uk, out_uk) for b in branches]
    slot_avals, slots = _merge_residuals([res_avals for *_, res_avals in splits])
    n_known = sum(not u for u in out_uk)
    known_branches = tuple(
        _known_filling_slots(known, branch_slots, slot_avals, n_known)
        for (known, *_), branch_slots in zip(splits, slots, strict=True)
    )
    unknown_branches = tuple(
        _unknown_reading_slots(unknown, branch_slots, slot_avals)
        for (_, unknown, *_), branch_slots in zip(splits, slots, strict=True)
    )
    known_ops = [x for x, uk in zip(ops, in_uk, strict=True) if not uk]
    with _trace.set_current_trace(trace.parent):
        known_outs = cond_p.bind(index, *known_ops, branches=known_branches)
    residuals = known_outs[n_known:]
    unknown_ops = [x for x, uk in zip(ops, in_uk, strict=True) if uk]
    unknown_outs = trace.stage(
        cond_p, [index, *residuals, *unknown_ops], {"branches": unknown_branches}
    )
    known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_uk]


def _merge_residuals(res_avals_per_branch):
    """Shares residual slots between branches: the k-th residual of a given aval in every
    branch goes to one slot, so there are as many slots of an aval as the most any branch needs.

    Returns:
      `(slot_avals, slots)`: the aval of each slot, and for each branch the slot of each of its
      residuals.
    """
    slot_of: dict = {}  # (aval, k) -> slot
    slots = []
    for res_avals in res_avals_per_branch:
        seen: collections.Counter = collections.Counter()
        branch_slots = []
        for aval in res_avals:
            branch_slots.append(slot_of.setdefault((aval, seen[aval]), len(slot_of)))
            seen[aval] += 1
        slots.append(branch_slots)
    return [aval for aval, _ in slot_of], slots


def _known_filling_slots(known: ClosedJaxpr, branch_slots, slot_avals, n_known):
    # the known branch outputs its known outputs, then every slot (`empty2` where it has none)
    def fun(*args):
        outs = common.jaxpr_as_fun(known)(*args)
        filled = [common.empty_like_aval(aval) for aval in slot_avals]
        for slot, residual in zip(branch_slots, outs[n_known:], strict=True):
            filled[slot] = residual
        return [*outs[:n_known], *filled]

    closed, _ = common.trace_closed(fun, known.in_avals, "cond partial eval")
    return closed


def _unknown_reading_slots(unknown: ClosedJaxpr, branch_slots, slot_avals):
    # the unknown branch takes every slot, then the unknown operands; it reads its own slots
    def fun(*args):
        residuals = [args[slot] for slot in branch_slots]
        return common.jaxpr_as_fun(unknown)(*residuals, *args[len(slot_avals) :])

    avals = [*slot_avals, *unknown.in_avals[len(branch_slots) :]]
    closed, _ = common.trace_closed(fun, avals, "cond partial eval")
    return closed


def _cond_transpose(cts, index, *args, branches):
    linear = [undefined(a) for a in args]
    known = [a for a in args if not undefined(a)]
    cts = [instantiate_zeros(ct) for ct in cts]
    lin_avals = [a.aval for a in args if undefined(a)]

    def transposed(branch):
        def fun(*known_and_cts):
            known_vals = iter(known_and_cts[: len(known)])
            operands = [
                UndefinedPrimal(b) if lin else next(known_vals)
                for b, lin in zip(branch.in_avals, linear, strict=True)
            ]
            ct_in = backward_pass(
                branch.jaxpr, branch.consts, operands, list(known_and_cts[len(known) :])
            )
            return [
                zeros_like_aval(aval) if isinstance(c, Zero) else c
                for c, aval in zip(
                    [c for c, lin in zip(ct_in, linear, strict=True) if lin], lin_avals, strict=True
                )
            ]

        avals = [get_aval(k) for k in known] + [get_aval(c) for c in cts]
        closed, _ = common.trace_closed(fun, avals, "cond transpose")
        return closed

    outs = cond_p.bind(index, *known, *cts, branches=tuple(map(transposed, branches)))
    out_iter = iter(outs)
    return [None] + [next(out_iter) if lin else None for lin in linear]


def _cond_batch(axis_data, args, dims, *, branches):
    index, *ops = args
    index_dim, op_dims = dims[0], dims[1:]
    if index_dim is not None:
        return _cond_batch_index(axis_data, index, index_dim, ops, op_dims, branches)
    ops = [
        x if d is None else bdim_at_front(x, d, axis_data.size)
        for x, d in zip(ops, op_dims, strict=True)
    ]
    op_dims = [None if d is None else 0 for d in op_dims]
    # an output is batched if it is in any branch
    flags = [False] * len(branches[0].out_avals)
    for b in branches:
        flags = [
            f or g for f, g in zip(flags, common.out_batched(b, axis_data, op_dims), strict=True)
        ]
    out_dims = [0 if f else None for f in flags]
    batched = tuple(common.batch_jaxpr(b, axis_data, op_dims, lambda n: out_dims) for b in branches)
    return cond_p.bind(index, *ops, branches=batched), out_dims


def _cond_batch_index(axis_data, index, index_dim, ops, op_dims, branches):
    # A batched index: every branch runs on every example and `select_n` picks the results,
    # as in JAX. Each branch sees its operands through a select against their stop_gradient,
    # so reverse mode sends no cotangent into the examples a branch did not take.

    size = axis_data.size
    index = bdim_at_front(index, index_dim, size)
    ops = [bdim_at_front(x, d, size) for x, d in zip(ops, op_dims, strict=True)]
    in_dims = [0] * len(ops)
    per_branch = []
    for i, branch in enumerate(branches):
        batched = common.batch_jaxpr(branch, axis_data, in_dims, lambda n: [0] * n)
        taken = _elementwise.eq(index, np.int32(i))
        branch_ops = [_select_n_along(taken, _elementwise.stop_gradient(x), x) for x in ops]
        per_branch.append(common.jaxpr_as_fun(batched)(*branch_ops))
    outs = [_select_n_along(index, *results) for results in zip(*per_branch, strict=True)]
    return outs, [0] * len(outs)


def _select_n_along(which, *cases):
    # select_n with a per-example `which` (shape (size,)) broadcast along the cases' dims

    shape = get_aval(cases[0]).shape
    if len(shape) > 1:
        which = _structural.broadcast_in_dim(which, shape, (0,))
    return _elementwise.select_n(which, *cases)


cond_p = define_higher_order_primitive(
    "cond",
    abstract_eval=_cond_abstract_eval,
    reference=_cond_impl,
    jvp=_cond_jvp,
    transpose=_cond_transpose,
    batch=_cond_batch,
    partial_eval=_cond_partial_eval,
)
