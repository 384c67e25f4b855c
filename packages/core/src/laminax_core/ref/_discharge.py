"""Discharging references: a program that reads and writes references becomes one that
threads their values (what XLA runs).

`discharge_jaxpr` turns a closed jaxpr whose reference inputs are read and written into one
that takes their values and returns, after its outputs, their final values. References created
inside become plain values. A higher-order equation that receives references (scan, while,
cond, jit ...) is rewritten by its rule in `discharge_rules`, which threads the references'
values through the carried jaxprs: a loop carries them, a cond returns them from every branch.
"""

from __future__ import annotations

import collections

from laminax_core import lax
from laminax_core._avals import AbstractRef, Ref, get_aval
from laminax_core._checkpoint import remat_p
from laminax_core._custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters.partial_eval import trace_to_jaxpr
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr, Literal
from laminax_core.lax._control_flow.cond import cond_p
from laminax_core.lax._control_flow.scan import scan_p
from laminax_core.lax._control_flow.while_loop import while_p
from laminax_core.ref import _primitives as prims

__all__ = [
    "call_rule", "discharge_jaxpr", "discharge_rules", "eager_with_refs", "has_refs",
    "on_ref_values", "run_discharged",
]

# primitive -> rule(invals, ref_keys, **params) -> (outs, {key: final value}): `invals` holds
# the current value of every reference operand, `ref_keys` an identity per operand (None for
# arrays; equal keys are one reference passed twice).
discharge_rules: dict = {}


def has_refs(closed: ClosedJaxpr) -> bool:
    """Whether `closed` takes, holds or makes references (it needs discharging)."""
    return (any(isinstance(e, prims.InternalMutableArrayEffect) for e in closed.jaxpr.effects)
            or any(isinstance(a, AbstractRef) for a in closed.in_avals))


def run_discharged(jaxpr, consts, args, ref_keys=None):
    """Evaluates `jaxpr` under the current trace with every reference replaced by its value.

    Returns `(outs, finals)`: the outputs, and the final value of each reference input (a dict
    keyed by `ref_keys`, one per input, default the input's position).
    """
    env: dict[int, object] = {}
    refs: dict[int, object] = {}  # ref var -> key of the reference it stands for
    values: dict = {}  # key -> current value
    keys = ref_keys if ref_keys is not None else list(range(len(args)))
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        if isinstance(value, Ref):
            refs[id(var)] = ("const", id(var))
            values[refs[id(var)]] = value._buf
        else:
            env[id(var)] = value
    for var, value, key in zip(jaxpr.invars, args, keys, strict=True):
        if isinstance(var.aval, AbstractRef):
            refs[id(var)] = key
            values.setdefault(key, value)
        else:
            env[id(var)] = value

    def read(atom):
        if isinstance(atom, Literal):
            return atom.val
        if id(atom) in refs:
            return values[refs[id(atom)]]
        return env[id(atom)]

    for eqn in jaxpr.eqns:
        prim, params = eqn.primitive, eqn.params
        if prim is prims.new_ref_p or prim is prims.empty_ref_p:
            key = ("made", id(eqn.outvars[0]))
            refs[id(eqn.outvars[0])] = key
            values[key] = (read(eqn.invars[0]) if prim is prims.new_ref_p else
                           _zeros(params["ty"]))
            continue
        in_keys = [refs.get(id(v)) if not isinstance(v, Literal) else None for v in eqn.invars]
        if not any(k is not None for k in in_keys) and not _holds_refs(params):
            outs = prim.bind(*map(read, eqn.invars), **params)
        else:
            outs = _discharge_eqn(prim, [read(v) for v in eqn.invars], in_keys, params, values)
        outs = outs if prim.multiple_results else [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = value
    outs = [read(v) for v in jaxpr.outvars]
    finals = {key: values[key] for key in dict.fromkeys(
        k for v, k in zip(jaxpr.invars, keys, strict=True) if isinstance(v.aval, AbstractRef))}
    const_refs = [(c, refs[id(v)]) for v, c in zip(jaxpr.constvars, consts, strict=True)
                  if isinstance(c, Ref)]
    if const_refs:  # closed-over concrete references: written back by the eager caller
        finals["consts"] = [(c, values[k]) for c, k in const_refs]
    return outs, finals


def _holds_refs(params) -> bool:
    """Whether a higher-order equation's jaxprs use references (made inside, or concrete ones
    closed over): its rule discharges them, as XLA has no references."""
    for p in params.values():
        for c in p if isinstance(p, tuple) else (p,):
            if isinstance(c, ClosedJaxpr) and (has_refs(c) or any(
                    isinstance(x, Ref) for x in c.consts)):
                return True
    return False


def _zeros(aval):
    return prims.jnp.zeros(aval.shape, aval.dtype)


def _discharge_eqn(prim, invals, in_keys, params, values):
    if prim is prims.get_p:
        return prims.index_value(invals[0], params["indexer"], invals[1:])
    if prim is prims.swap_p:
        ref, value, *dyn = invals
        values[in_keys[0]] = prims.update_value(ref, params["indexer"], dyn, value)
        return prims.index_value(ref, params["indexer"], dyn)
    if prim is prims.addupdate_p:
        ref, value, *dyn = invals
        values[in_keys[0]] = prims.update_value(ref, params["indexer"], dyn, value, add=True)
        return []
    if prim is prims.freeze_p:
        return invals[0]
    if prim is prims.free_ref_p:
        return []
    rule = discharge_rules.get(prim)
    if rule is None and not any(k is not None for k in in_keys):
        rule = _discharge_inner_jaxprs(prim)
    if rule is None:
        raise TypeError(
            f"The primitive {prim.name!r} received a mutable array reference, but it has no rule "
            "to thread references (discharge rule); read the reference's value first.")
    try:
        outs, finals = rule(invals, in_keys, **params)
    except _NoRule:
        raise TypeError(
            f"The primitive {prim.name!r} uses mutable array references in a form that cannot "
            "be threaded (a reference closed over by its program); create it inside.") from None
    for key, value in finals.items():
        values[key] = value
    return outs


# (id(closed), keys) -> (closed, result): jaxprs compare by identity, so a discharged program
# is traced (and compiled by dispatch) once per program, not per call
_cache: collections.OrderedDict = collections.OrderedDict()
_CACHE_SIZE = 512


def discharge_jaxpr(closed: ClosedJaxpr, ref_keys=None) -> tuple[ClosedJaxpr, list]:
    """`closed` with its references discharged.

    Returns `(jaxpr, final_keys)`: the new jaxpr takes the values of the reference inputs in
    their places and returns, after the outputs, the final value of each distinct reference
    input, in the order of `final_keys` (keys from `ref_keys`, default the positions).
    """
    keys = tuple(ref_keys) if ref_keys is not None else tuple(range(len(closed.in_avals)))
    cached = _cache.get((id(closed), keys))
    if cached is not None and cached[0] is closed:
        return cached[1]
    in_avals = [a.inner_aval if isinstance(a, AbstractRef) else a for a in closed.in_avals]
    final_keys = list(dict.fromkeys(
        k for a, k in zip(closed.in_avals, keys, strict=True) if isinstance(a, AbstractRef)))

    def fun(*vals):
        outs, finals = run_discharged(closed.jaxpr, closed.consts, vals, list(keys))
        return [*outs, *(finals[k] for k in final_keys)]

    new, _ = trace_to_jaxpr(fun, in_avals, transformation="discharge")
    result = (new, final_keys)
    _cache[(id(closed), keys)] = (closed, result)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


# ----- eager evaluation of a higher-order primitive given concrete references ---------------


def eager_with_refs(primitive, args, params):
    """Runs `primitive` on concrete references: their values go in, their final values are
    written back (the eval trace's path for scan, while, cond, jit given references)."""
    keys = [id(a) if isinstance(a, Ref) else None for a in args]
    owners = {id(a): a for a in args if isinstance(a, Ref)}
    rule = discharge_rules.get(primitive)
    if rule is None:
        raise TypeError(f"The primitive {primitive.name!r} cannot take a mutable array "
                        "reference; read the reference's value first.")
    vals = [a._buf if isinstance(a, Ref) else a for a in args]
    outs, finals = rule(vals, keys, **params)
    for key, value in finals.items():
        if key == "consts":
            for ref, final in value:
                ref._buf = final
        else:
            owners[key]._buf = value
    return outs


def on_ref_values(primitive, args, params):
    """Runs `primitive` on the current values of the references it is given (read with
    `get`, written back with `swap`) under the current trace: how jvp, vmap and linearize
    see a loop, cond or call that uses references."""
    keys = [id(a) if isinstance(a, Ref) else None for a in args]
    owners = {id(a): a for a in args if isinstance(a, Ref)}
    vals = [prims.get_p.bind(a, indexer=None) if k is not None else a
            for a, k in zip(args, keys, strict=True)]
    outs, finals = discharge_rules[primitive](vals, keys, **params)
    for key, value in finals.items():
        for ref, final in value if key == "consts" else [(owners[key], value)]:
            prims.ref_set(ref, None, final)
    return outs


def call_rule(primitive, param: str = "jaxpr"):
    """The discharge rule of a call-like primitive: operands map to the jaxpr's inputs and
    its outputs are the primitive's (remat, custom calls)."""
    def rule(invals, ref_keys, **params):
        closed, const_refs = _lift_ref_consts(params[param])
        keys = _const_keys(const_refs) + list(ref_keys)
        new, final_keys = discharge_jaxpr(closed, keys)
        outs = primitive.bind(*(r._buf for r in const_refs), *invals, **{**params, param: new})
        n = len(outs) - len(final_keys)
        finals = dict(zip(final_keys, outs[n:], strict=True))
        return outs[:n], _finals_with_consts(finals, const_refs)
    return rule


def _discharge_inner_jaxprs(primitive):
    """For any higher-order primitive given no references, whose jaxprs make their own: each
    jaxpr discharged in place (its signature is unchanged), or None if one cannot be."""
    def discharged(p):
        if isinstance(p, tuple):
            return tuple(map(discharged, p))
        closed = ClosedJaxpr(p, []) if isinstance(p, Jaxpr) else p
        if not isinstance(closed, ClosedJaxpr) or not has_refs(closed):
            return p
        if any(isinstance(c, Ref) for c in closed.consts):
            raise _NoRule
        new, _ = discharge_jaxpr(closed)
        if isinstance(p, Jaxpr):
            if new.consts:
                raise _NoRule
            return new.jaxpr
        return new

    def rule(invals, ref_keys, **params):
        new_params = {k: discharged(v) for k, v in params.items()}
        return primitive.bind(*invals, **new_params), {}

    return rule


class _NoRule(Exception):
    pass


# ----- rules for the control-flow primitives ------------------------------------------------


def _lift_ref_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """`closed` with its concrete-reference constants moved to leading inputs, and those."""
    is_ref = [isinstance(c, Ref) for c in closed.consts]
    if not any(is_ref):
        return closed, []
    j = closed.jaxpr
    moved = [v for v, r in zip(j.constvars, is_ref, strict=True) if r]
    kept = [v for v, r in zip(j.constvars, is_ref, strict=True) if not r]
    new = Jaxpr(kept, [*moved, *j.invars], j.outvars, j.eqns, j.effects)
    return (ClosedJaxpr(new, [c for c, r in zip(closed.consts, is_ref, strict=True) if not r]),
            [c for c, r in zip(closed.consts, is_ref, strict=True) if r])


def _const_keys(refs) -> list:
    return [("ref", id(r)) for r in refs]


def _finals_with_consts(finals: dict, refs) -> dict:
    consts = [(r, finals.pop(("ref", id(r)))) for r in refs if ("ref", id(r)) in finals]
    if consts:
        finals.setdefault("consts", []).extend(consts)
    return finals


def _scan_discharge(invals, ref_keys, *, jaxpr, num_consts, num_carry, **params):
    jaxpr, const_refs = _lift_ref_consts(jaxpr)
    invals = [r._buf for r in const_refs] + list(invals)
    ref_keys = _const_keys(const_refs) + list(ref_keys)
    num_consts += len(const_refs)
    body, final_keys = discharge_jaxpr(jaxpr, ref_keys)
    const_keys = ref_keys[:num_consts]
    plain = [v for v, k in zip(invals[:num_consts], const_keys, strict=True) if k is None]
    start = {}
    for k, v in zip(const_keys, invals[:num_consts], strict=True):
        if k is not None:
            start.setdefault(k, _strong(v))
    n_plain, n_refs = len(plain), len(final_keys)

    # the references' values are leading carries: [plain consts, ref values, carry, xs]
    def scan_body(*args):
        plain_in = iter(args[:n_plain])
        refvals = dict(zip(final_keys, args[n_plain:n_plain + n_refs], strict=True))
        full = [refvals[k] if k is not None else next(plain_in) for k in const_keys]
        outs = eval_interpreter.eval_jaxpr(body.jaxpr, body.consts, *full,
                                           *args[n_plain + n_refs:])
        n_out = len(outs) - n_refs
        return [*outs[n_out:], *outs[:n_out]]

    avals = [*(_aval_of(v) for v in plain), *(_aval_of(start[k]) for k in final_keys),
             *body.in_avals[num_consts:]]
    new, _ = trace_to_jaxpr(scan_body, avals, transformation="discharge")
    outs = scan_p.bind(
        *plain, *(start[k] for k in final_keys), *invals[num_consts:], jaxpr=new,
        num_consts=n_plain, num_carry=n_refs + num_carry, **params)
    return outs[n_refs:], _finals_with_consts(dict(zip(final_keys, outs[:n_refs])), const_refs)


def _while_discharge(invals, ref_keys, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_jaxpr, cond_refs = _lift_ref_consts(cond_jaxpr)
    body_jaxpr, body_refs = _lift_ref_consts(body_jaxpr)
    c_vals, b_vals, carry = (invals[:cond_nconsts], invals[cond_nconsts:cond_nconsts
                             + body_nconsts], invals[cond_nconsts + body_nconsts:])
    c_keys = _const_keys(cond_refs) + list(ref_keys[:cond_nconsts])
    b_keys = _const_keys(body_refs) + list(ref_keys[cond_nconsts:cond_nconsts + body_nconsts])
    c_vals = [r._buf for r in cond_refs] + list(c_vals)
    b_vals = [r._buf for r in body_refs] + list(b_vals)
    keys = list(dict.fromkeys(k for k in (*c_keys, *b_keys) if k is not None))
    start = {}
    for k, v in zip((*c_keys, *b_keys), (*c_vals, *b_vals), strict=True):
        if k is not None:
            start.setdefault(k, _strong(v))
    n = len(keys)
    c_plain = [v for v, k in zip(c_vals, c_keys, strict=True) if k is None]
    b_plain = [v for v, k in zip(b_vals, b_keys, strict=True) if k is None]
    cond_d, _ = discharge_jaxpr(cond_jaxpr, [*c_keys, *[None] * len(carry)])
    body_d, body_final = discharge_jaxpr(body_jaxpr, [*b_keys, *[None] * len(carry)])

    def fill(plain, refvals, ks):
        plain, by_key = iter(plain), dict(zip(keys, refvals, strict=True))
        return [by_key[k] if k is not None else next(plain) for k in ks]

    def cond_fun(*args):
        plain, refvals, c = args[:len(c_plain)], args[len(c_plain):len(c_plain) + n], \
            args[len(c_plain) + n:]
        return eval_interpreter.eval_jaxpr(cond_d.jaxpr, cond_d.consts,
                                           *fill(plain, refvals, c_keys), *c)[:1]

    def body_fun(*args):
        plain, refvals, c = args[:len(b_plain)], args[len(b_plain):len(b_plain) + n], \
            args[len(b_plain) + n:]
        outs = eval_interpreter.eval_jaxpr(body_d.jaxpr, body_d.consts,
                                           *fill(plain, refvals, b_keys), *c)
        n_out = len(outs) - len(body_final)
        new = dict(zip(keys, refvals, strict=True))
        new.update(zip(body_final, outs[n_out:], strict=True))
        return [*(new[k] for k in keys), *outs[:n_out]]

    ref_avals = [_aval_of(start[k]) for k in keys]
    carry_avals = list(body_jaxpr.out_avals)
    c_avals = [get_aval(v) for v in c_plain] + ref_avals + carry_avals
    b_avals = [get_aval(v) for v in b_plain] + ref_avals + carry_avals
    cond_new, _ = trace_to_jaxpr(cond_fun, c_avals, transformation="discharge")
    body_new, _ = trace_to_jaxpr(body_fun, b_avals, transformation="discharge")
    outs = while_p.bind(
        *c_plain, *b_plain, *(start[k] for k in keys), *carry, cond_jaxpr=cond_new,
        body_jaxpr=body_new, cond_nconsts=len(c_plain), body_nconsts=len(b_plain))
    finals = dict(zip(keys, outs[:n], strict=True))
    return outs[n:], _finals_with_consts(finals, [*cond_refs, *body_refs])


def _aval_of(x):
    return get_aval(x).strip_weak_type()


def _strong(x):
    """`x` without a weak type: a loop carry's type is fixed by its first value."""
    aval = get_aval(x)
    return lax.convert_element_type(x, aval.dtype) if aval.weak_type else x


def _cond_discharge(invals, ref_keys, *, branches):
    index, *ops = invals
    lifted = [_lift_ref_consts(b) for b in branches]
    all_refs = list({id(r): r for _, refs in lifted for r in refs}.values())
    extra_keys = _const_keys(all_refs)
    keys = [*extra_keys, *ref_keys[1:]]
    vals = [r._buf for r in all_refs] + list(ops)
    distinct = list(dict.fromkeys(k for k in keys if k is not None))
    start = {}
    for k, v in zip(keys, vals, strict=True):
        if k is not None:
            start.setdefault(k, v)
    plain = [v for v, k in zip(vals, keys, strict=True) if k is None]
    new_branches = []
    for branch, refs in lifted:
        b_keys = [*_const_keys(refs), *ref_keys[1:]]
        d, finals_order = discharge_jaxpr(branch, b_keys)

        def fun(*args, d=d, b_keys=b_keys, finals_order=finals_order):
            plain_in, refvals = iter(args[:len(plain)]), dict(zip(distinct, args[len(plain):],
                                                                  strict=True))
            full = [refvals[k] if k is not None else next(plain_in) for k in
                    [*extra_keys, *ref_keys[1:]]]
            ins = [refvals[k] for k in b_keys[:len(b_keys) - len(ops)]] + full[len(extra_keys):]
            outs = eval_interpreter.eval_jaxpr(d.jaxpr, d.consts, *ins)
            n_out = len(outs) - len(finals_order)
            refvals.update(zip(finals_order, outs[n_out:], strict=True))
            return [*outs[:n_out], *(refvals[k] for k in distinct)]

        avals = [_aval_of(v) for v in plain] + [_aval_of(start[k]) for k in distinct]
        new_branches.append(trace_to_jaxpr(fun, avals, transformation="discharge")[0])
    outs = cond_p.bind(index, *plain, *(start[k] for k in distinct),
                                   branches=tuple(new_branches))
    n_out = len(outs) - len(distinct)
    finals = dict(zip(distinct, outs[n_out:], strict=True))
    return outs[:n_out], _finals_with_consts(finals, all_refs)


discharge_rules[scan_p] = _scan_discharge
discharge_rules[while_p] = _while_discharge
discharge_rules[cond_p] = _cond_discharge
discharge_rules[remat_p] = call_rule(remat_p)
discharge_rules[custom_jvp_call_p] = call_rule(custom_jvp_call_p, "call_jaxpr")
discharge_rules[custom_vjp_call_p] = call_rule(custom_vjp_call_p, "call_jaxpr")
