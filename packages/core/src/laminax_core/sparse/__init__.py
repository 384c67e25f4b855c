"""`jax.experimental.sparse`: the BCOO and BCSR sparse formats, their operations and
`sparsify`, as compositions of lax (gathers, scatter-adds, sorts and `dot_general`): `jit`,
`grad` and `vmap` apply to them as to any lax program. BCOO and BCSR arrays are pytrees whose
leaves are their buffers."""

from laminax_core.sparse._bcoo import *  # noqa: F403
from laminax_core.sparse._bcoo import __all__ as _bcoo_all
from laminax_core.sparse._bcsr import *  # noqa: F403
from laminax_core.sparse._bcsr import __all__ as _bcsr_all
from laminax_core.sparse._legacy import *  # noqa: F403
from laminax_core.sparse._legacy import __all__ as _legacy_all
from laminax_core.sparse._transform import *  # noqa: F403
from laminax_core.sparse._transform import __all__ as _transform_all

__all__ = sorted([*_bcoo_all, *_bcsr_all, *_legacy_all, *_transform_all])
