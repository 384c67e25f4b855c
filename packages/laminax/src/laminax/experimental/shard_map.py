"""`laminax.experimental.shard_map`: the seed-era home of `shard_map` (JAX 0.10.2 keeps it as
a deprecated alias), whose `check_rep` is today's `check_vma`."""

from laminax_pjit import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f, mesh, in_specs, out_specs, check_rep: bool = True):
    """`laminax.shard_map` in its older spelling: mesh and specs positional, `check_rep` for
    `check_vma`, manual over every mesh axis."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      axis_names=frozenset(), check_vma=check_rep)
