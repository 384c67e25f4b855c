"""The lowering of checkify's `check`: a `check` reaching XLA was never functionalized.

JAX discharges `check` inside `checkify`; a staged `check` outside it is an error when the
computation is compiled, and a `debug_check` is dropped.
"""

from __future__ import annotations

from laminax_core.checkify import UNFUNCTIONALIZED, check_p

from laminax_dispatch._lowering._core import register_lowering


def _check_lowering(ctx, *args, sites, debug):
    if debug:
        return []
    raise ValueError(UNFUNCTIONALIZED)


register_lowering(check_p, _check_lowering)
