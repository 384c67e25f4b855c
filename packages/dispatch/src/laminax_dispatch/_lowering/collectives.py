"""Lowerings of `laminax_core/lax/_collectives.py` on one device.

On a single device a collective can only be left with positional axes (what `vmap` turns a
named reduction into) or with none (the identity psum JAX's transpose leaves): those are plain
reductions. A named axis still present at lowering time was never bound by `vmap` (or, in the
layer above, by a mesh), which JAX reports as an unbound axis name.
"""

from __future__ import annotations

from laminax_core import lax

from laminax_dispatch._lowering._core import lower_fun, register_lowering

__all__: list[str] = []


def _positional(name: str, axes) -> tuple[int, ...]:
    named = [a for a in axes if not isinstance(a, int)]
    if named:
        raise NameError(
            f"unbound axis name: {named[0]}. {name} over a named axis needs the axis to be bound "
            "by vmap(..., axis_name=...) (or a mesh) around the code that uses it"
        )
    return tuple(sorted(axes))


def _reduction_rule(name: str, reduce):
    def expand(*xs, axes, axis_index_groups):
        if axis_index_groups is not None:
            raise NotImplementedError(
                f"{name} with axis_index_groups has no single-device lowering; "
                "drop axis_index_groups or run under vmap"
            )
        positional = _positional(name, axes)
        return [reduce(x, positional) if positional else x for x in xs]

    return lower_fun(expand, multiple_results=True)


register_lowering(lax.psum_p, _reduction_rule("psum", lax.reduce_sum))
register_lowering(lax.pmax_p, _reduction_rule("pmax", lax.reduce_max))
register_lowering(lax.pmin_p, _reduction_rule("pmin", lax.reduce_min))


def _psum_invariant(x, *, axes):
    _positional("psum", axes)  # its axes are always named: unbound here
    return x


# the varying-manual-axes casts of shard_map bodies (pjit lowers them over the mesh): pvary
# changes only the type; psum_invariant over no bound axis is unbound, as psum's
register_lowering(lax.pvary_p, lambda ctx, x, *, axes: [x])
register_lowering(lax.psum_invariant_p, lower_fun(_psum_invariant, multiple_results=False))
