"""laminax pjit: meshes, PartitionSpec, NamedSharding, pjit, shard_map, pmap, multi-process."""

from laminax_pjit import _shard_map_lowering  # noqa: F401  (registers shard_map's lowerings)
from laminax_pjit._shard_map import shard_map as shard_map

__all__: list[str] = ["shard_map"]
