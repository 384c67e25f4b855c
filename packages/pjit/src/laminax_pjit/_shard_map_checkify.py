"""checkify through `shard_map` (and so `pmap`, which is a jit of one): each shard runs the
checkified body from a fresh error state and returns it stacked along a leading axis split over
the manual mesh axes; the first failing shard's error is merged into the caller's state."""

from __future__ import annotations

from laminax_core.checkify import checkify_rules, evaluate
from laminax_pytree import tree_map

from laminax_pjit._partition_spec import PartitionSpec
from laminax_pjit._shard_map import shard_map


def _shard_map_checkify(eqn, invals, state, codes):
    p = eqn.params
    body_jaxpr = p["jaxpr"]
    manual = tuple(a for a in p["mesh"].axis_names if a in p["newly_manual_axes"])

    def body(*args):
        inner = state.fresh()
        outs = evaluate(body_jaxpr.jaxpr, body_jaxpr.consts, list(args), inner)
        stacked = tree_map(lambda x: x[None], inner.carried(codes))
        return stacked, list(outs)

    stacked_spec = PartitionSpec(manual if len(manual) > 1 else manual[0]) if manual else PartitionSpec()
    stacked, outs = shard_map(
        body, mesh=p["mesh"], in_specs=tuple(p["in_specs"]),
        out_specs=(stacked_spec, list(p["out_specs"])), axis_names=frozenset(manual),
        check_vma=p["check_vma"],
    )(*invals)
    state.absorb_stacked(stacked, codes)
    return outs


checkify_rules["shard_map"] = _shard_map_checkify
