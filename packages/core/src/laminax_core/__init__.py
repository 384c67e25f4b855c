"""laminax-core: dtypes, abstract values, tracing into jaxprs, and transformations.

The user API: the transformations (`grad`, `vmap`, `make_jaxpr` ...), abstract values
(`ShapeDtypeStruct`, `ShapedArray`), jaxpr types, `Primitive` for user-defined primitives, and
the public modules `lax`, `dtypes`, `config`, `errors`, `testing`. `laminax_core.internal` is
for the laminax layers above.
"""

from laminax_core import config as config
from laminax_core import dtypes as dtypes
from laminax_core import errors as errors
from laminax_core import lax as lax
from laminax_core._api import eval_shape as eval_shape
from laminax_core._api import grad as grad
from laminax_core._api import jvp as jvp
from laminax_core._api import linearize as linearize
from laminax_core._api import make_jaxpr as make_jaxpr
from laminax_core._api import value_and_grad as value_and_grad
from laminax_core._api import vjp as vjp
from laminax_core._api import vmap as vmap
from laminax_core._avals import ShapedArray as ShapedArray
from laminax_core._avals import ShapeDtypeStruct as ShapeDtypeStruct
from laminax_core._checkpoint import checkpoint as checkpoint
from laminax_core._checkpoint import checkpoint_policies as checkpoint_policies
from laminax_core._checkpoint import remat as remat
from laminax_core._custom_derivatives import custom_jvp as custom_jvp
from laminax_core._custom_derivatives import custom_vjp as custom_vjp
from laminax_core._custom_gradient import closure_convert as closure_convert
from laminax_core._custom_gradient import custom_gradient as custom_gradient
from laminax_core._effects import Effect as Effect
from laminax_core._interpreters.eval import eval_jaxpr as eval_jaxpr
from laminax_core._jacobians import hessian as hessian
from laminax_core._jacobians import jacfwd as jacfwd
from laminax_core._jacobians import jacrev as jacrev
from laminax_core._linear_transpose import linear_transpose as linear_transpose
from laminax_core._scopes import ensure_compile_time_eval as ensure_compile_time_eval
from laminax_core._scopes import named_call as named_call
from laminax_core._scopes import named_scope as named_scope
from laminax_core._scopes import typeof as typeof
from laminax_core._dslice import ds as ds
from laminax_core._memory import MemorySpace as MemorySpace
from laminax_core._jaxpr import ClosedJaxpr as ClosedJaxpr
from laminax_core._jaxpr import Jaxpr as Jaxpr
from laminax_core._jaxpr import JaxprEqn as JaxprEqn
from laminax_core._jaxpr import Literal as Literal
from laminax_core._jaxpr import Var as Var
from laminax_core._primitive import Primitive as Primitive
from laminax_core._trace import Tracer as Tracer
from laminax_core.config import disable_jit as disable_jit
from laminax_core.dtypes import float0 as float0
from laminax_core.errors import ConcretizationTypeError as ConcretizationTypeError
from laminax_core.errors import TracerArrayConversionError as TracerArrayConversionError
from laminax_core.errors import TracerBoolConversionError as TracerBoolConversionError
from laminax_core.errors import TracerIntegerConversionError as TracerIntegerConversionError
from laminax_core.errors import UnexpectedTracerError as UnexpectedTracerError
from laminax_core.lax import stop_gradient as stop_gradient

# numpy puts jnp's methods and operators on tracers (x + 1, x[i], x.sum() ...) and gives lax the
# few jnp functions it needs; import it with the package so they are always there
from laminax_core import numpy as _numpy  # noqa: E402, F401  isort: skip

__all__ = [
    "closure_convert",
    "custom_gradient",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "Effect",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "ShapeDtypeStruct",
    "ShapedArray",
    "Tracer",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "Var",
    "checkpoint",
    "checkpoint_policies",
    "config",
    "custom_jvp",
    "custom_vjp",
    "disable_jit",
    "dtypes",
    "errors",
    "eval_jaxpr",
    "eval_shape",
    "float0",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "lax",
    "linearize",
    "make_jaxpr",
    "remat",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "ensure_compile_time_eval",
    "linear_transpose",
    "named_call",
    "named_scope",
    "typeof",
    "ds",
    "MemorySpace",
    "vmap",
]
