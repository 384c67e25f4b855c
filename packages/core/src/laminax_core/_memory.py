"""`MemorySpace` (JAX's `jax.memory.Space`): where an array lives."""

from __future__ import annotations

import enum

__all__ = ["MemorySpace"]


class MemorySpace(enum.Enum):
    """Where an array lives (JAX's `jax.memory.Space`): device memory, pinned host memory,
    or any; printed in `empty2`'s params as JAX prints it."""

    Device = "device"
    Host = "host"
    Any = "any"

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    # identity hashing, as JAX's (Enum hashes the name)
    __hash__ = object.__hash__
