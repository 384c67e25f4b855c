"""Dtypes for laminax: ml_dtypes' narrow types, weak types, x64 canonicalization and promotion.

The public surface mirrors `jax.dtypes` (and the dtype helpers of `jax.numpy`), plus the helpers the
rest of laminax builds on. Three ideas carry it:

* **Canonicalization.** With `jax_enable_x64` off (the default) laminax has no 64-bit dtypes:
  `canonicalize_dtype` maps int64/uint64/float64/complex128 to their 32-bit counterparts.
* **Weak types.** A Python scalar (`1`, `2.0`, `1j`) has a dtype but no opinion about its width:
  it is *weakly typed*, and combining it with an array keeps the array's dtype
  (`result_type(1.0, bfloat16) == bfloat16`).
* **The promotion lattice.** `result_type` finds the least upper bound of its arguments on JAX's
  type promotion lattice (JEP 9407), not NumPy's value-based rules: it never silently widens to
  64 bits, and the 8/6/4-bit floats and 1/2/4-bit integers promote only to themselves.

The dtypes live in `_dtypes_base.py`, the lattice in `_promotion.py`; this module is their
`__all__` together.
"""

from laminax_core import _dtypes_base, _promotion
from laminax_core._dtypes_base import *  # noqa: F403  (the public names are the modules' __all__)
from laminax_core._promotion import *  # noqa: F403

__all__ = sorted([*_dtypes_base.__all__, *_promotion.__all__])
