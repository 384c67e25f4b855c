"""laminax.experimental.export: the seed-era `jax.experimental.export` API, implemented by
laminax-export (`laminax_export._seed`): `export(fun, *, lowering_platform, strict_checks)`,
`Exported` with the seed's fields, `call_exported`, `poly_spec` and `poly_specs`.
Today's API is `laminax.export`.
"""

from laminax_export import DisabledSafetyCheck as DisabledSafetyCheck
from laminax_export.seed import Exported as Exported
from laminax_export.seed import call_exported as call_exported
from laminax_export.seed import default_lowering_platform as default_lowering_platform
from laminax_export.seed import export as export
from laminax_export.seed import poly_spec as poly_spec
from laminax_export.seed import poly_specs as poly_specs

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "call_exported",
    "default_lowering_platform",
    "export",
    "poly_spec",
    "poly_specs",
]
