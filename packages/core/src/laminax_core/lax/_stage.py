"""`stage` (lift a constant into the current trace: an Array when eager) with its primitive,
and `shape_as_value` (a shape, symbolic dimensions included, as an integer vector)."""

from __future__ import annotations

import numpy as np

from laminax_core._interpreters.eval import EvalTrace
from laminax_core._primitive import ANY, batch_elementwise, define_primitive, linear, same_shape
from laminax_core._shape_poly import DimExpr
from laminax_core._trace import Tracer, current_trace
from laminax_core.lax._elementwise import convert_element_type
from laminax_core.lax._joining import concatenate
from laminax_core.lax._structural import dimension_as_value, expand_dims

__all__ = ["shape_as_value", "stage"]
# the primitives, which lax exports beside their functions
__all__ += [
    "stage_p",
]  # fmt: skip


def stage(x, /):
    """The identity that lifts a value (a Python scalar, a NumPy array) into the active trace:
    outside any transformation, an Array; a traced value is returned as it is.

    Example:
      >>> stage(np.float32(2.0))
      array(2., dtype=float32)
    """
    if isinstance(x, Tracer) or not isinstance(current_trace(), EvalTrace):
        return x  # a staged constant is a constant of the program, as JAX folds it
    return stage_p.bind(x)


stage_p = define_primitive(
    "stage",
    abstract_eval=same_shape(dtypes=ANY),
    reference=lambda x: x,
    jvp=linear,
    transpose=lambda ct, x: [ct],
    batch=batch_elementwise,
)


def shape_as_value(shape):
    """The shape as an int32 vector (int64 if a dimension needs it), a symbolic dimension
    computed from the program's arguments.

    Example:
      >>> shape_as_value((2, 3))
      array([2, 3], dtype=int32)
    """
    constant = [d for d in shape if not isinstance(d, DimExpr)]
    wide = any(abs(int(d)) > np.iinfo(np.int32).max for d in constant)
    dtype = np.dtype(np.int64 if wide else np.int32)
    if len(constant) == len(shape):
        return np.asarray(shape, dtype)
    dims = [expand_dims(convert_element_type(dimension_as_value(d), dtype), (0,))
            for d in shape]
    return concatenate(dims, 0)
