"""`laminax.experimental.shard_map`: the seed-era home of `shard_map`. JAX 0.10.2 keeps it as a
deprecated alias (the first read in a process warns, `DeprecationWarning`), with the older
positional spelling and `check_rep` for today's `check_vma`."""

import functools
import warnings

from laminax_pjit import shard_map as _shard_map

__all__ = ["shard_map"]


def _legacy_shard_map(f, mesh, in_specs, out_specs, check_rep: bool = True):
    """`laminax.shard_map` in its older spelling: mesh and specs positional, `check_rep` for
    `check_vma`, manual over every mesh axis."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      axis_names=frozenset(), check_vma=check_rep)


_legacy_shard_map.__name__ = "shard_map"


@functools.cache  # warn once per process, as JAX does
def __getattr__(name):
    if name == "shard_map":
        warnings.warn(
            "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
            DeprecationWarning, stacklevel=2)
        return _legacy_shard_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
