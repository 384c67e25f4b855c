"""`laminax.example_libraries`: JAX's small reference libraries, `stax` (neural-network layers)
and `optimizers` (first-order optimizers), written over laminax's public API."""

__all__: list[str] = []  # as in JAX, the submodules are imported by name
