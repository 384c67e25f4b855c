"""laminax export: portable StableHLO artifacts in JAX's serialization format."""

__all__: list[str] = []
