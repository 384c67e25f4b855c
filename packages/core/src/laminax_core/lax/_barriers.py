"""Two small primitives outside the elementwise families: `optimization_barrier` (an
identity on any number of arrays that XLA may not move computation across) and `mulhi`
(the high half of an integer product)."""

from __future__ import annotations

import numpy as np

from laminax_core._interpreters.jvp import instantiate_zeros
from laminax_core._primitive import (
    NOT_LINEAR,
    ZERO_TANGENT,
    batch_elementwise,
    define_primitive,
    same_shape,
)
from laminax_core.lax._helpers import as_operands
from laminax_pytree import tree_flatten, tree_unflatten

__all__ = ["mulhi", "optimization_barrier"]
# the primitives, which lax exports beside their functions
__all__ += [
    "mulhi_p", "optimization_barrier_p",
]  # fmt: skip


# ----- optimization_barrier -----------------------------------------------------------------


def optimization_barrier(operand, /):
    """Returns `operand` (a pytree of arrays) unchanged, but XLA may not move computation
    into or out of the barrier: everything the inputs depend on is computed before, and what
    depends on the outputs after (useful to keep rematerialization where it was put).

    Example:
      >>> optimization_barrier((np.float32(1), np.int32(2)))
      (array(1., dtype=float32), array(2, dtype=int32))
    """
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _optimization_barrier_jvp(primals, tangents):
    # the primals and the tangents each pass through a barrier of their own, as in JAX
    tangents = [instantiate_zeros(t) for t in tangents]
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


def _optimization_barrier_transpose(cts, *operands):
    return optimization_barrier_p.bind(*[instantiate_zeros(ct) for ct in cts])


optimization_barrier_p = define_primitive(
    "optimization_barrier",
    abstract_eval=lambda *avals: list(avals),
    reference=lambda *arrays: list(arrays),
    jvp=_optimization_barrier_jvp,
    transpose=_optimization_barrier_transpose,
    batch=lambda axis_data, args, dims: (optimization_barrier_p.bind(*args), list(dims)),
    multiple_results=True,
)


# ----- mulhi --------------------------------------------------------------------------------


def mulhi(x, y, /):
    """Elementwise high half of an integer product: for N-bit `x` and `y`, the upper N bits
    of their 2N-bit product (signed or unsigned as the dtype is).

    Example:
      >>> mulhi(np.uint32(0x80000000), np.uint32(6))
      array(3, dtype=uint32)
    """
    return mulhi_p.bind(*as_operands(x, y))


def _mulhi_reference(x, y):
    bits = x.dtype.itemsize * 8
    if bits <= 32:
        wide = np.int64 if np.issubdtype(x.dtype, np.signedinteger) else np.uint64
        product = x.astype(wide) * y.astype(wide)
    else:  # Python integers hold the 128-bit product
        product = np.asarray(x).astype(object) * np.asarray(y).astype(object)
    return np.asarray(product >> bits).astype(x.dtype)


mulhi_p = define_primitive(
    "mulhi",
    abstract_eval=same_shape(dtypes=(np.integer,)),
    reference=_mulhi_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)
