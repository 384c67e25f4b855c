"""`jax.extend.core`: primitives and jaxprs for libraries that define their own operations.

A `Primitive` made here is core's own class: with an abstract evaluation
(`def_abstract_eval`), an implementation (`def_impl`), and rules in
`laminax.interpreters.ad`/`batching`/`mlir`, it works under jit, grad, vmap and every other
transformation exactly as lax's primitives do.
"""

from __future__ import annotations

from laminax_core.internal import ClosedJaxpr as ClosedJaxpr
from laminax_core.internal import DropVar as DropVar
from laminax_core.internal import Effect as Effect
from laminax_core.internal import Jaxpr as Jaxpr
from laminax_core.internal import JaxprEqn as JaxprEqn
from laminax_core.internal import Literal as Literal
from laminax_core.internal import Primitive as Primitive
from laminax_core.internal import Var as Var
from laminax_core.internal import check_jaxpr as check_jaxpr
from laminax_core.internal import jaxpr_as_fun as jaxpr_as_fun
from laminax_core.internal import no_effects as no_effects
from laminax_core.internal import set_current_trace as set_current_trace

from laminax.core import find_top_trace as find_top_trace
from laminax.core import jaxprs_in_params as jaxprs_in_params
from laminax.core import mapped_aval as mapped_aval
from laminax.core import subjaxprs as subjaxprs
from laminax.core import unmapped_aval as unmapped_aval

__all__ = [
    "ClosedJaxpr",
    "DropVar",
    "Effect",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "Var",
    "check_jaxpr",
    "find_top_trace",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "mapped_aval",
    "no_effects",
    "set_current_trace",
    "subjaxprs",
    "unmapped_aval",
]
