"""`jax.extend.mlir`: the MLIR bindings lowering rules build with (`ir`, the StableHLO dialect)."""

from jaxlib.mlir import ir as ir
from jaxlib.mlir.dialects import stablehlo as hlo

__all__ = ["hlo", "ir"]
