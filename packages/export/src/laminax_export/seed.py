"""The seed-era API (2023's `jax.experimental.export`): `export(fun, *, lowering_platform,
strict_checks)`, the seed's `Exported`, `call_exported`, `poly_spec`, `poly_specs`."""

from laminax_export._seed import Exported as Exported
from laminax_export._seed import call_exported as call_exported
from laminax_export._seed import default_lowering_platform as default_lowering_platform
from laminax_export._seed import export as export
from laminax_export._seed import poly_spec as poly_spec
from laminax_export._seed import poly_specs as poly_specs

__all__ = [
    "Exported",
    "call_exported",
    "default_lowering_platform",
    "export",
    "poly_spec",
    "poly_specs",
]
