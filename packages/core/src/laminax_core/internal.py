"""What the laminax layers above core may use: the primitive registry and rule tables, jaxpr
machinery, trace internals and the eager-execution hook.

Nothing here is promised to code outside laminax: names and signatures change with laminax's
internal needs, without deprecation.
"""

from __future__ import annotations

from laminax_core._api import check_argnames as check_argnames
from laminax_core._api import check_argnums as check_argnums
from laminax_core._api import index_or_indices as index_or_indices
from laminax_core._api import resolve_argnums as resolve_argnums
from laminax_core._avals import AbstractRef as AbstractRef
from laminax_core._avals import AbstractToken as AbstractToken
from laminax_core._avals import Ref as Ref
from laminax_core.ref._discharge import discharge_jaxpr as discharge_jaxpr
from laminax_core.ref._discharge import discharge_rules as discharge_rules
from laminax_core.ref._discharge import has_refs as has_refs
from laminax_core._avals import AbstractValue as AbstractValue
from laminax_core._avals import Token as Token
from laminax_core._shape_poly import DimExpr as DimExpr
from laminax_core._shape_poly import SymbolicScope as SymbolicScope
from laminax_core._shape_poly import definitely_equal as definitely_equal
from laminax_core._shape_poly import is_constant_dim as is_constant_dim
from laminax_core._shape_poly import is_symbolic_dim as is_symbolic_dim
from laminax_core._shape_poly import max_dim as max_dim
from laminax_core._shape_poly import min_dim as min_dim
from laminax_core._shape_poly import parse_shape as parse_shape
from laminax_core._avals import ShapedArray as ShapedArray
from laminax_core._avals import EMPTY_MAT as EMPTY_MAT
from laminax_core._avals import ManualAxisType as ManualAxisType
from laminax_core._manual_axes import checking as manual_axes_checking
from laminax_core._manual_axes import state as manual_axes_state
from laminax_core._manual_axes import typing_rules as manual_axes_typing_rules
from laminax_core._avals import WeakTypedArray as WeakTypedArray
from laminax_core._avals import get_aval as get_aval
from laminax_core._avals import ShardingTypeError as ShardingTypeError
from laminax_core._avals import sharding_typers as sharding_typers
from laminax_core._sharding_rules import leading_added as leading_added
from laminax_core._avals import pytype_aval_mappings as pytype_aval_mappings
from laminax_core._avals import short_dtype_name as short_dtype_name
from laminax_core._avals import weak_array as weak_array
from laminax_core._checkpoint import remat_p as remat_p
from laminax_core._checkpoint_policies import name_p as name_p
from laminax_core._custom_batching import custom_vmap_call_p as custom_vmap_call_p
from laminax_core._ffi import ffi_call as ffi_call
from laminax_core._ffi import ffi_call_p as ffi_call_p
from laminax_core._custom_derivatives import custom_jvp_call_p as custom_jvp_call_p
from laminax_core._custom_derivatives import custom_lin_p as custom_lin_p
from laminax_core._custom_derivatives import custom_vjp_call_p as custom_vjp_call_p
from laminax_core._effects import Effect as Effect
from laminax_core._effects import EffectTypeSet as EffectTypeSet
from laminax_core._effects import control_flow_allowed_effects as control_flow_allowed_effects
from laminax_core._effects import lowerable_effects as lowerable_effects
from laminax_core._effects import no_effects as no_effects
from laminax_core._effects import ordered_effects as ordered_effects
from laminax_core._interpreters import batching, jvp, transpose
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters.batching import AxisData as AxisData
from laminax_core._interpreters.batching import BatchTrace as BatchTrace
from laminax_core._interpreters.batching import batch_rules as batch_rules
from laminax_core._interpreters.batching import not_mapped as not_mapped
from laminax_core._interpreters.eval import eval_jaxpr as eval_jaxpr
from laminax_core._interpreters.eval import eval_trace as eval_trace
from laminax_core._interpreters.eval import get_eager_impl as get_eager_impl
from laminax_core._interpreters.eval import reference_rules as reference_rules
from laminax_core._interpreters.eval import run_reference as run_reference
from laminax_core._interpreters.eval import set_eager_impl as set_eager_impl
from laminax_core.numpy._placement import set_device_placer as set_device_placer
from laminax_core.numpy._operands import promote_dtypes_inexact as promote_dtypes_inexact
from laminax_core._interpreters.jvp import JVPTrace as JVPTrace
from laminax_core._interpreters.jvp import Zero as Zero
from laminax_core._interpreters.jvp import jvp_rules as jvp_rules
from laminax_core._interpreters.partial_eval import JaxprTrace as JaxprTrace
from laminax_core._interpreters.partial_eval import JaxprTracer as JaxprTracer
from laminax_core._interpreters.partial_eval import hoist_tracer_consts as hoist_tracer_consts
from laminax_core._interpreters.partial_eval import linearize_flat as linearize_flat
from laminax_core._interpreters.partial_eval import partial_eval_jaxpr as partial_eval_jaxpr
from laminax_core._interpreters.partial_eval import partial_eval_rules as partial_eval_rules
from laminax_core._interpreters.partial_eval import trace_to_jaxpr as trace_to_jaxpr
from laminax_core._interpreters.transpose import UndefinedPrimal as UndefinedPrimal
from laminax_core._interpreters.transpose import backward_pass as backward_pass
from laminax_core._interpreters.transpose import is_undefined_primal as is_undefined_primal
from laminax_core._interpreters.transpose import transpose_rules as transpose_rules
from laminax_core._jaxpr import ClosedJaxpr as ClosedJaxpr
from laminax_core._jaxpr import DropVar as DropVar
from laminax_core._jaxpr import Jaxpr as Jaxpr
from laminax_core._jaxpr import JaxprEqn as JaxprEqn
from laminax_core._jaxpr import Literal as Literal
from laminax_core._jaxpr import Var as Var
from laminax_core._jaxpr import check_jaxpr as check_jaxpr
from laminax_core._jaxpr import dce_closed_jaxpr as dce_closed_jaxpr
from laminax_core._jaxpr import dce_jaxpr as dce_jaxpr
from laminax_core._jaxpr import pp_jaxpr as pp_jaxpr
from laminax_core._primitive import ANY as ANY
from laminax_core._primitive import FLOATING as FLOATING
from laminax_core._primitive import INEXACT as INEXACT
from laminax_core._primitive import NO_OPERANDS as NO_OPERANDS
from laminax_core._primitive import NOT_BATCHED as NOT_BATCHED
from laminax_core._primitive import NOT_DIFFERENTIABLE as NOT_DIFFERENTIABLE
from laminax_core._primitive import NOT_LINEAR as NOT_LINEAR
from laminax_core._primitive import NUMERIC as NUMERIC
from laminax_core._primitive import STAGED_WHOLE as STAGED_WHOLE
from laminax_core._primitive import ZERO_TANGENT as ZERO_TANGENT
from laminax_core._primitive import Primitive as Primitive
from laminax_core._primitive import batch_elementwise as batch_elementwise
from laminax_core._primitive import define_higher_order_primitive as define_higher_order_primitive
from laminax_core._primitive import define_primitive as define_primitive
from laminax_core._primitive import jvp_from as jvp_from
from laminax_core._primitive import linear as linear
from laminax_core._primitive import same_shape as same_shape
from laminax_core._trace import Trace as Trace
from laminax_core._trace import Tracer as Tracer
from laminax_core._trace import _context as trace_context
from laminax_core._trace import current_trace as current_trace
from laminax_core._trace import set_current_trace as set_current_trace

# the special functions as lax programs: what dispatch lowers igamma, betainc ... to
from laminax_core.lax import _special_programs as special_programs
from laminax_core.lax._control_flow import empty2_p as empty2_p
from laminax_core.lax._dot_algorithms import CPU_PRESETS as cpu_dot_presets
from laminax_core.lax._dot_algorithms import algorithm_compute_types as algorithm_compute_types
# ragged_dot_general, cholesky_update and symmetric_product as lax programs: what dispatch
# lowers them to
from laminax_core._linear_call import linear_call_p as linear_call_p
from laminax_core.random._gamma import _gamma_impl as random_gamma_program
from laminax_core.lax._ragged_dot import ragged_dot_program as ragged_dot_program
from laminax_core.lax._scaled_dot import scaled_dot_decomposition as scaled_dot_decomposition
from laminax_core.lax._scaled_dot import scaled_dot_p as scaled_dot_p
from laminax_core.lax.linalg import _updates as linalg_update_programs
from laminax_core.lax._control_flow.common import batch_jaxpr as batch_jaxpr
from laminax_core.lax._control_flow.common import jaxpr_as_fun as jaxpr_as_fun
from laminax_core.lax._control_flow.common import jvp_jaxpr as jvp_jaxpr
from laminax_core.lax._control_flow.common import out_batched as out_batched
from laminax_core.lax._control_flow.common import trace_closed as trace_closed
from laminax_core.lax._helpers import highest as highest
from laminax_core.lax._helpers import lowest as lowest
from laminax_core.lax._indexing import default_fill_value as default_fill_value
from laminax_core.numpy._ufuncs import UNARY_ELEMENTWISE as unary_elementwise_names
from laminax_core.random._threefry import threefry2x32_lax as threefry2x32_lax
from laminax_core._dtypes_base import ExtendedDType as ExtendedDType
from laminax_core.random._keys import PRNGKeyArray as PRNGKeyArray
from laminax_core.random._keys import random_unwrap_p as random_unwrap_p
from laminax_core.random._keys import random_wrap_p as random_wrap_p

__all__ = [
    "EMPTY_MAT",
    "ManualAxisType",
    "manual_axes_checking",
    "manual_axes_state",
    "manual_axes_typing_rules",
    "DimExpr",
    "SymbolicScope",
    "definitely_equal",
    "is_constant_dim",
    "is_symbolic_dim",
    "max_dim",
    "min_dim",
    "parse_shape",
    "check_argnames",
    "check_argnums",
    "index_or_indices",
    "resolve_argnums",
    "AbstractRef",
    "AbstractToken",
    "Ref",
    "discharge_jaxpr",
    "discharge_rules",
    "has_refs",
    "AbstractValue",
    "Token",
    "all_primitives",
    "empty2_p",
    "special_programs",
    "linalg_update_programs",
    "ragged_dot_program",
    "linear_call_p",
    "random_gamma_program",
    "scaled_dot_decomposition",
    "scaled_dot_p",
    "cpu_dot_presets",
    "algorithm_compute_types",
    "ANY",
    "AxisData",
    "backward_pass",
    "batch_elementwise",
    "batch_jaxpr",
    "batch_rules",
    "BatchTrace",
    "check_jaxpr",
    "ClosedJaxpr",
    "control_flow_allowed_effects",
    "current_trace",
    "custom_jvp_call_p",
    "custom_vmap_call_p",
    "ffi_call",
    "ffi_call_p",
    "custom_lin_p",
    "custom_vjp_call_p",
    "dce_closed_jaxpr",
    "dce_jaxpr",
    "default_fill_value",
    "define_higher_order_primitive",
    "define_primitive",
    "describe",
    "DropVar",
    "Effect",
    "EffectTypeSet",
    "eval_jaxpr",
    "eval_trace",
    "FLOATING",
    "get_aval",
    "ShardingTypeError",
    "sharding_typers",
    "leading_added",
    "get_eager_impl",
    "highest",
    "hoist_tracer_consts",
    "INEXACT",
    "is_undefined_primal",
    "Jaxpr",
    "jaxpr_as_fun",
    "JaxprEqn",
    "JaxprTrace",
    "JaxprTracer",
    "jvp_from",
    "jvp_jaxpr",
    "jvp_rules",
    "JVPTrace",
    "linear",
    "linearize_flat",
    "Literal",
    "lowerable_effects",
    "lowest",
    "no_effects",
    "NO_OPERANDS",
    "NOT_BATCHED",
    "NOT_DIFFERENTIABLE",
    "NOT_LINEAR",
    "not_mapped",
    "NUMERIC",
    "ordered_effects",
    "out_batched",
    "partial_eval_jaxpr",
    "partial_eval_rules",
    "pp_jaxpr",
    "Primitive",
    "pytype_aval_mappings",
    "reference_rules",
    "register_describer",
    "remat_p",
    "name_p",
    "run_reference",
    "same_shape",
    "set_current_trace",
    "set_eager_impl",
    "set_device_placer",
    "promote_dtypes_inexact",
    "ShapedArray",
    "STAGED_WHOLE",
    "short_dtype_name",
    "threefry2x32_lax",
    "ExtendedDType",
    "PRNGKeyArray",
    "random_unwrap_p",
    "random_wrap_p",
    "trace_closed",
    "trace_context",
    "trace_to_jaxpr",
    "Tracer",
    "transpose_rules",
    "unary_elementwise_names",
    "UndefinedPrimal",
    "Var",
    "weak_array",
    "WeakTypedArray",
    "Zero",
    "ZERO_TANGENT",
]  # fmt: skip

# `trace_context.trace is None` says no transformation is running (the eval trace is current)
# without a function call: dispatch's eager fast path reads it on every call.
# `unary_elementwise_names`: the one-array `jnp` functions the facade wraps in an inlined jit.

# Upper layers add lines to `describe` (dispatch: the lowering) with `register_describer`.
_describers: list = []


def register_describer(fn) -> None:
    """Adds `fn(primitive) -> list of (rule kind, text)` to what `describe` lists."""
    _describers.append(fn)


def all_primitives() -> list:
    """Every primitive with a reference rule or an abstract evaluation registered in core."""
    return sorted(eval_interpreter.reference_rules, key=lambda p: p.name)


def describe(primitive) -> str:
    """Lists a primitive's rules and where each was registered.

    Example:
      >>> from laminax_core import lax
      >>> print(describe(lax.sin_p).splitlines()[0])
      primitive 'sin'
    """
    lines = [
        f"primitive {primitive.name!r}"
        + (" (multiple results)" if primitive.multiple_results else "")
    ]
    tables = {
        "abstract_eval": primitive._abstract_eval is not None,
        "reference": primitive in eval_interpreter.reference_rules or primitive.impl is not None,
        "jvp": primitive in jvp.jvp_rules,
        "transpose": primitive in transpose.transpose_rules,
        "batch": primitive in batching.batch_rules,
    }
    for kind, present in tables.items():
        where = primitive.registered_at.get(kind)
        text = where if where else ("registered" if present else "none")
        lines.append(f"  {kind:<14} {text}")
    for fn in _describers:
        lines += [f"  {kind:<14} {text}" for kind, text in fn(primitive)]
    return "\n".join(lines)
