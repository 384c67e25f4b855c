"""Which mesh axes each value of a shard_map body may vary over (JAX's "vma").

With `check_vma=True` the set is in every aval of the body (core's `_manual_axes`, as JAX
0.10.2 types it); this inference over the traced jaxpr backs those types in the out_specs
check (an output whose out_spec leaves a mesh axis unnamed must not vary over it), for
equations whose types come from elsewhere. The rules, per equation:

- a psum / pmax / pmin over named axes removes them (the result is the same everywhere);
- `axis_index` varies over its axis;
- a call (`jit`, checkpoint, custom derivatives) is followed into its jaxpr; `cond` takes the
  union over its branches (not the predicate's: JAX 0.10.2 lets a varying predicate choose an
  invariant result, for `while` too); `scan` and `while` iterate their body to a fixed point
  over the loop-carried values (typed loops have already refused a carry that changes type);
- a collective that moves data (all_gather, psum_scatter, ppermute, all_to_all, pbroadcast)
  varies over its axes as well as its operands' (JAX makes the operand vary over them first);
  pbroadcast refuses an operand that does not vary over its axis, as JAX's does;
- everything else varies over the union of its operands.
"""

from __future__ import annotations

from laminax_core.internal import ClosedJaxpr, Jaxpr, Literal

__all__ = ["infer_varying"]

_REDUCTIONS = {"psum", "pmax", "pmin", "psum_invariant"}
_MOVING = {"all_gather", "reduce_scatter", "ppermute", "all_to_all", "pbroadcast"}


def _names(axis_name) -> frozenset:
    names = axis_name if isinstance(axis_name, tuple | list) else (axis_name,)
    return frozenset(a for a in names if not isinstance(a, int))


def _sub(jaxpr) -> Jaxpr:
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def infer_varying(jaxpr: Jaxpr, in_vma: list[frozenset]) -> list[frozenset]:
    """The varying axes of `jaxpr`'s outputs, given its inputs'."""
    env: dict[int, frozenset] = {}

    def read(atom) -> frozenset:
        if isinstance(atom, Literal):
            return frozenset()
        return env.get(id(atom), frozenset())

    for var, vma in zip(jaxpr.invars, in_vma, strict=True):
        env[id(var)] = vma
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = _equation(eqn, ins)
        for var, vma in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = vma
    return [read(v) for v in jaxpr.outvars]


def _union(sets) -> frozenset:
    return frozenset().union(*sets)


def _equation(eqn, ins: list[frozenset]) -> list[frozenset]:
    name, params, n_out = eqn.primitive.name, eqn.params, len(eqn.outvars)
    if name in _REDUCTIONS:
        named = {a for a in params["axes"] if not isinstance(a, int)}
        return [vma - named for vma in ins]
    if name in _MOVING:
        axes = _names(params["axis_name"])
        if name == "pbroadcast" and not axes <= _union(ins):
            raise ValueError(
                f"Collective pbroadcast must be applied to a device-varying type, but got "
                f"{_union(ins)} for collective acting over axis name {tuple(sorted(axes))}; "
                "give it a value that varies over the axis (lax.pcast(x, axis_name, "
                "to='varying')), or pass "
                "check_vma=False to shard_map."
            )
        return [_union(ins) | axes] * n_out
    if name == "pvary":
        return [ins[0] | frozenset(params["axes"])]
    if name == "axis_index":
        return [frozenset({params["axis_name"]})]
    if name == "cond":
        branches = [infer_varying(_sub(b), ins[1:]) for b in params["branches"]]
        return [_union(outs) for outs in zip(*branches, strict=True)]
    if name == "shard_map":  # a nested one: its own manual axes are not the outer body's
        outs = infer_varying(_sub(params["jaxpr"]), ins)
        return [vma - params["newly_manual_axes"] for vma in outs]
    if name == "scan":
        return _scan(params, ins)
    if name == "while":
        return _while(params, ins)
    inner = params.get("jaxpr", params.get("call_jaxpr"))
    if inner is not None and len(_sub(inner).invars) == len(ins):
        return infer_varying(_sub(inner), ins)
    return [_union(ins)] * n_out


def _scan(params, ins):
    body = _sub(params["jaxpr"])
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    consts, carry, xs = ins[:n_consts], ins[n_consts:n_consts + n_carry], ins[n_consts + n_carry:]
    while True:
        outs = infer_varying(body, [*consts, *carry, *xs])
        new_carry = [c | o for c, o in zip(carry, outs[:n_carry], strict=True)]
        if new_carry == carry:
            return [*carry, *outs[n_carry:]]
        carry = new_carry


def _while(params, ins):
    body = _sub(params["body_jaxpr"])
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    body_consts, carry = ins[nc:nc + nb], ins[nc + nb:]
    while True:
        outs = infer_varying(body, [*body_consts, *carry])
        new_carry = [c | o for c, o in zip(carry, outs, strict=True)]
        if new_carry == carry:
            return carry
        carry = new_carry
