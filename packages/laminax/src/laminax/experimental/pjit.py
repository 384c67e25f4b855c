"""laminax.experimental.pjit: the seed-era home of `pjit` and `PartitionSpec`.

`pjit(fun, in_axis_resources, out_axis_resources, static_argnums, donate_argnums)` (the seed's
spelling, with one DeprecationWarning for the old keyword names) and today's `in_shardings` /
`out_shardings` both work; `with_sharding_constraint` is here as it was in the seed.
"""

from laminax_pjit import PartitionSpec as PartitionSpec
from laminax_pjit import pjit as pjit
from laminax_pjit import with_sharding_constraint as with_sharding_constraint

__all__ = ["PartitionSpec", "pjit", "with_sharding_constraint"]
