"""Which mesh axes each value of a shard_map body may vary over (JAX's "vma").

JAX 0.10.2 carries this set in every aval inside shard_map; laminax infers it from the body's
jaxpr after tracing, which is what `check_vma` needs: an output whose out_spec leaves a mesh
axis unnamed must not vary over it. The rules, per equation:

- a psum / pmax / pmin over named axes removes them (the result is the same everywhere);
- `axis_index` varies over its axis;
- a call (`jit`, checkpoint, custom derivatives) is followed into its jaxpr; `cond` takes the
  union over its branches and the predicate; `scan` and `while` iterate their body to a fixed
  point over the loop-carried values;
- everything else (ppermute, all_gather, all_to_all, psum_scatter included, as in JAX) varies
  over the union of its operands.
"""

from __future__ import annotations

from laminax_core.internal import ClosedJaxpr, Jaxpr, Literal

__all__ = ["infer_varying"]

_REDUCTIONS = {"psum", "pmax", "pmin"}


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
    if name == "axis_index":
        return [frozenset({params["axis_name"]})]
    if name == "cond":
        branches = [infer_varying(_sub(b), ins[1:]) for b in params["branches"]]
        return [ins[0] | _union(outs) for outs in zip(*branches, strict=True)]
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
    cond, body = _sub(params["cond_jaxpr"]), _sub(params["body_jaxpr"])
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
    while True:
        (pred,) = infer_varying(cond, [*cond_consts, *carry])
        outs = infer_varying(body, [*body_consts, *carry])
        # a predicate varying over an axis makes the trip count, so every carry, vary over it
        new_carry = [c | o | pred for c, o in zip(carry, outs, strict=True)]
        if new_carry == carry:
            return carry
        carry = new_carry
