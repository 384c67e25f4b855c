"""laminax pjit: meshes, PartitionSpec, NamedSharding, pjit, shard_map, pmap, multi-process."""

__all__: list[str] = []
