"""Two small primitives outside the elementwise families: `optimization_barrier` (an
identity on any number of arrays that XLA may not move computation across) and `mulhi`
(the high half of an integer product)."""

from __future__ import annotations

import numpy as np

from laminax_core._interpreters.jvp import instantiate_zeros
from laminax_core._effects import (
    Effect,
    control_flow_allowed_effects,
    lowerable_effects,
)
from laminax_core._primitive import (
    NOT_LINEAR,
    Primitive,
    ZERO_TANGENT,
    batch_elementwise,
    define_primitive,
    same_shape,
)
from laminax_core.lax._helpers import as_operands
from laminax_pytree import tree_flatten, tree_unflatten

__all__ = ["NoDCEEffect", "dce_sink", "mulhi", "optimization_barrier"]
# the primitives, which lax exports beside their functions
__all__ += [
    "dce_sink_p", "mulhi_p", "optimization_barrier_p",
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


# ----- dce_sink -----------------------------------------------------------------------------


class NoDCEEffect(Effect):
    """The effect of `dce_sink`: dead-code elimination keeps the equation (and so what it
    consumes) however unused its operand is."""


no_dce_effect = NoDCEEffect()
control_flow_allowed_effects.add_type(NoDCEEffect)
lowerable_effects.add_type(NoDCEEffect)


def dce_sink(val, *, prevent_mlir_dce: bool = False) -> None:
    """Consumes every leaf of the pytree `val`, so that tracing keeps the computation of the
    values however unused they are (returns nothing).

    Args:
      val: a pytree of arrays.
      prevent_mlir_dce: also keep them alive through compilation (a side-effecting custom
        call); by default the sink lowers to nothing and XLA may still drop the work.

    Example:
      >>> dce_sink(np.float32(1.0)) is None
      True
    """
    for leaf in tree_flatten(val)[0]:
        dce_sink_p.bind(leaf, prevent_mlir_dce=prevent_mlir_dce)


dce_sink_p = Primitive("dce_sink")
dce_sink_p.multiple_results = True
dce_sink_p.def_impl(lambda x, **_: [])
dce_sink_p.def_reference(lambda x, **_: [])
dce_sink_p.def_effectful_abstract_eval(lambda x, **_: ([], {no_dce_effect}))
# linear: the tangent is sunk as well, and the transpose gives the operand no cotangent
dce_sink_p.def_jvp(lambda primals, tangents, **p: (
    dce_sink_p.bind(*primals, **p),
    dce_sink_p.bind(*map(instantiate_zeros, tangents), **p)))
dce_sink_p.def_transpose(lambda cts, x, **_: [None])
# vmapped, the sink disappears (as in JAX, whose batching rule binds nothing)
dce_sink_p.def_batch(lambda axis_data, args, dims, **_: ([], []))


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
