"""Primitives: named operations that every transformation knows how to process.

A `Primitive` is only a name plus an abstract-evaluation rule; `bind` hands it to the current
trace. Every other rule lives in a table owned by the interpreter that reads it:
`_interpreters/eval.py` (reference implementations), `jvp.py`, `transpose.py`, `batching.py`
(and dispatch's lowering table, one layer up). `define_primitive` fills every table at once and
requires every rule as a keyword, so a primitive's block shows what it supports; a rule that
does not apply is one of the sentinels `NOT_LINEAR`, `ZERO_TANGENT`, `NO_OPERANDS`.
User-defined primitives use JAX's hooks instead: `def_impl`, `def_abstract_eval`,
`def_effectful_abstract_eval`, plus `def_jvp`, `def_transpose`, `def_batch`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from laminax_core import _effects, _trace, dtypes
from laminax_core._avals import ShapedArray
from laminax_core._dtypes_base import ExtendedDType
from laminax_core._sharding_rules import broadcasting_sharding
from laminax_core._interpreters import batching
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters import jvp as jvp_interpreter
from laminax_core._interpreters import partial_eval as partial_eval_interpreter
from laminax_core._interpreters import transpose as transpose_interpreter

__all__ = [
    "ANY",
    "FLOATING",
    "INEXACT",
    "INTEGRAL",
    "NOT_LINEAR",
    "NO_OPERANDS",
    "NOT_BATCHED",
    "NOT_DIFFERENTIABLE",
    "NUMERIC",
    "Primitive",
    "STAGED_WHOLE",
    "ZERO_TANGENT",
    "batch_elementwise",
    "bind",
    "define_higher_order_primitive",
    "define_primitive",
    "jvp_from",
    "linear",
    "same_shape",
    "check_dtype",
    "broadcast_operand_shapes",
    "check_same_dtypes",
]


class _Sentinel:
    """A rule that does not apply (or a shared builder), given as a keyword of
    `define_primitive`: `NOT_LINEAR`, `ZERO_TANGENT`, `NO_OPERANDS`, `linear`."""

    def __init__(self, name: str, meaning: str):
        self.name = name
        self.meaning = meaning

    def __repr__(self) -> str:
        return self.name


NOT_LINEAR = _Sentinel("NOT_LINEAR", "not linear in any operand: no transpose rule")
ZERO_TANGENT = _Sentinel("ZERO_TANGENT", "piecewise constant: its tangent is always zero")
NO_OPERANDS = _Sentinel("NO_OPERANDS", "takes no array operands: nothing to batch")
# For `define_higher_order_primitive`: the whole application is staged under linearize when any
# input is unknown (no known/unknown split), or the primitive is never differentiated forward.
STAGED_WHOLE = _Sentinel("STAGED_WHOLE", "staged whole under partial evaluation")
NOT_DIFFERENTIABLE = _Sentinel(
    "NOT_DIFFERENTIABLE", "only ever transposed (it lives in a linear jaxpr): no jvp rule"
)
NOT_BATCHED = _Sentinel("NOT_BATCHED", "only ever transposed (it lives in a linear jaxpr)")
# `jvp=linear`: linear in every operand, so the tangent is the primitive applied to the tangents.
linear = _Sentinel("linear", "linear: its jvp applies the primitive to the tangents")

# dtype families for `same_shape(dtypes=...)`, named as JAX's messages name them.
FLOATING = (np.floating,)
INEXACT = (np.floating, np.complexfloating)
INTEGRAL = (np.integer, np.bool_)
NUMERIC = (np.number,)
ANY = None


def _caller_location(depth: int = 2) -> str:
    """`file:line` of the module-level statement that registers a rule (else the caller)."""
    frame = sys._getframe(depth)
    caller = frame
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    frame = frame or caller
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Primitive:
    """A named operation. Create one, give it rules, and apply it with `bind`.

    Args:
      name: the name jaxprs print.

    Example:
      >>> double_p = Primitive("double")
      >>> _ = double_p.def_impl(lambda x: 2 * x)
      >>> _ = double_p.def_abstract_eval(lambda aval: aval)
      >>> print(double_p.bind(np.float32(3.0)))
      6.0
    """

    multiple_results = False

    def __init__(self, name: str):
        self.name = name
        self.impl: Callable | None = None
        self._abstract_eval: Callable | None = None
        self.print_params: Callable | None = None  # params -> dict of the params to print
        self.named_call_param: str | None = None  # a called jaxpr printed with outer names
        self.registered_at: dict[str, str] = {}

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args, **params):
        """Applies the primitive under the current trace."""
        return bind(self, args, params)

    def get_bind_params(self, params: dict) -> dict:
        """The parameters to bind an equation's primitive with, from the equation's (JAX's
        hook for primitives whose equations store their parameters in another form; laminax's
        store them as bound)."""
        return params

    def def_impl(self, impl: Callable) -> Callable:
        """Sets the eager implementation `impl(*arrays, **params)`."""
        self.impl = impl
        self.registered_at["impl"] = _caller_location()
        return impl

    def def_abstract_eval(self, rule: Callable) -> Callable:
        """Sets `rule(*avals, **params) -> aval` (a list of avals if `multiple_results`)."""
        self._abstract_eval = lambda *avals, **params: (rule(*avals, **params), _effects.no_effects)
        self.registered_at["abstract_eval"] = _caller_location()
        return rule

    def def_effectful_abstract_eval(self, rule: Callable) -> Callable:
        """Sets `rule(*avals, **params) -> (aval or avals, set of effects)`."""
        self._abstract_eval = lambda *avals, **params: _with_frozen_effects(rule(*avals, **params))
        self.registered_at["abstract_eval"] = _caller_location()
        return rule

    def abstract_eval(self, *avals, **params):
        """`(avals_out, effects)` of applying the primitive to `avals`."""
        if self._abstract_eval is None:
            raise NotImplementedError(
                f"primitive {self.name!r} has no abstract evaluation rule, so it cannot be "
                "traced. Register one with def_abstract_eval."
            )
        return self._abstract_eval(*avals, **params)

    def def_jvp(self, rule: Callable) -> Callable:
        """Sets the jvp rule `rule(primals, tangents, **params) -> (primal_out, tangent_out)`."""
        jvp_interpreter.jvp_rules[self] = rule
        self.registered_at["jvp"] = _caller_location()
        return rule

    def def_transpose(self, rule: Callable) -> Callable:
        """Sets the transpose rule `rule(ct, *args, **params) -> cotangent per operand`."""
        transpose_interpreter.transpose_rules[self] = rule
        self.registered_at["transpose"] = _caller_location()
        return rule

    def def_batch(self, rule: Callable) -> Callable:
        """Sets the batching rule `rule(axis_data, args, dims, **params) -> (out, out_dim)`."""
        batching.batch_rules[self] = rule
        self.registered_at["batch"] = _caller_location()
        return rule

    def def_reference(self, rule: Callable) -> Callable:
        """Sets the NumPy reference implementation used when no eager executor is plugged in."""
        eval_interpreter.reference_rules[self] = rule
        self.registered_at["reference"] = _caller_location()
        return rule


def _with_frozen_effects(result):
    avals, effects = result
    return avals, frozenset(effects)


# primitive -> `rule(*args, **params)` applying it to operands of which some are typed PRNG
# keys, by acting on their physical data (`random/_key_rules.py`): the primitive itself never
# sees a key operand, so its rules (and dispatch's lowering) know only NumPy dtypes.
physical_key_rules: dict[Primitive, Callable] = {}


def bind(primitive: Primitive, args, params: dict):
    """Hands `primitive(*args, **params)` to the current trace."""
    if primitive in physical_key_rules and any(
            isinstance(getattr(x, "dtype", None), ExtendedDType) for x in args):
        return physical_key_rules[primitive](*args, **params)
    _trace.check_leaked(args, primitive.name)
    if _trace.evaluates_at_compile_time(args):
        return _trace.eval_trace().process_primitive(primitive, args, params)
    return _trace.current_trace().process_primitive(primitive, args, params)


def define_primitive(
    name: str,
    *,
    abstract_eval: Callable,
    reference: Callable,
    jvp: Callable | _Sentinel,
    transpose: Callable | _Sentinel,
    batch: Callable | _Sentinel,
    multiple_results: bool = False,
    print_params: Callable | None = None,
) -> Primitive:
    """Creates a primitive and registers every one of its rules (lax's way to add one).

    Args:
      name: JAX's primitive name, as jaxprs print it.
      abstract_eval: `(*avals, **params) -> aval`; see `same_shape`.
      reference: the NumPy implementation `(*arrays, **params) -> array`.
      jvp: a jvp rule (see `jvp_from`, `linear`) or `ZERO_TANGENT`.
      transpose: a transpose rule or `NOT_LINEAR`.
      batch: a batching rule (see `batch_elementwise`) or `NO_OPERANDS`.
      multiple_results: whether the primitive returns a list of arrays.
      print_params: optional `params -> dict` choosing which params jaxprs print.

    Returns:
      The new `Primitive`, whose `registered_at` records where each rule was registered.
    """
    jvp_given = jvp
    primitive = Primitive(name)
    if isinstance(jvp, jvp_interpreter.JvpFrom):
        jvp = jvp.for_primitive(primitive)
    primitive.multiple_results = multiple_results
    primitive.print_params = print_params
    primitive._abstract_eval = lambda *a, **p: (abstract_eval(*a, **p), _effects.no_effects)
    where = _caller_location()
    eval_interpreter.reference_rules[primitive] = reference
    if jvp is ZERO_TANGENT:
        jvp = jvp_interpreter.zero_tangent_rule(primitive)
    elif jvp is linear:
        jvp = jvp_interpreter.linear_jvp_rule(primitive)
    jvp_interpreter.jvp_rules[primitive] = jvp
    if hasattr(abstract_eval, "primitive_name"):
        abstract_eval.primitive_name = name
    if transpose is not NOT_LINEAR:
        transpose_interpreter.transpose_rules[primitive] = transpose
    if batch is batch_elementwise:
        batching.batch_rules[primitive] = batching.elementwise_batch_rule(primitive)
    elif batch is not NO_OPERANDS:
        batching.batch_rules[primitive] = batch
    rules = {
        "abstract_eval": abstract_eval,
        "reference": reference,
        "jvp": jvp_given,
        "transpose": transpose,
        "batch": batch,
    }
    for kind, rule in rules.items():
        primitive.registered_at[kind] = where if not isinstance(rule, _Sentinel) else repr(rule)
    return primitive


def define_higher_order_primitive(
    name: str,
    *,
    abstract_eval: Callable,
    reference: Callable,
    jvp: Callable | _Sentinel,
    transpose: Callable | _Sentinel,
    batch: Callable | _Sentinel,
    partial_eval: Callable | _Sentinel,
    impl: Callable | None = None,
    print_params: Callable | None = None,
) -> Primitive:
    """Creates a primitive that carries jaxprs in its params (cond, while, scan, remat2, the
    custom-derivative calls ...) and registers every one of its rules.

    Like `define_primitive`, every rule is a required keyword, so a forgotten one is an error
    when the module is imported, and a rule that does not apply is said with a sentinel.

    Args:
      name: JAX's primitive name, as jaxprs print it.
      abstract_eval: `(*avals, **params) -> (avals, effects)`: the effects of the carried jaxprs.
      reference: the implementation `(*arrays, **params) -> arrays` (it evaluates the jaxprs).
      jvp: the jvp rule, or `NOT_DIFFERENTIABLE`.
      transpose: the transpose rule, or `NOT_LINEAR`.
      batch: the batching rule, or `NOT_BATCHED`.
      partial_eval: the rule splitting an application into known and unknown parts under
        linearize (`partial_eval.partial_eval_rules`), or `STAGED_WHOLE`.
      impl: an implementation that runs instead of any executor (one that only raises, say).
      print_params: optional `params -> dict` choosing which params jaxprs print.

    Returns:
      The new `Primitive` (multiple results), with `registered_at` filled.
    """
    primitive = Primitive(name)
    primitive.multiple_results = True
    primitive.print_params = print_params
    where = _caller_location()
    primitive._abstract_eval = lambda *a, **p: _with_frozen_effects(abstract_eval(*a, **p))
    eval_interpreter.reference_rules[primitive] = reference
    if impl is not None:
        primitive.impl = impl
    tables = {
        "jvp": (jvp, jvp_interpreter.jvp_rules),
        "transpose": (transpose, transpose_interpreter.transpose_rules),
        "batch": (batch, batching.batch_rules),
        "partial_eval": (partial_eval, partial_eval_interpreter.partial_eval_rules),
    }
    for kind, (rule, table) in tables.items():
        if not isinstance(rule, _Sentinel):
            table[primitive] = rule
        primitive.registered_at[kind] = repr(rule) if isinstance(rule, _Sentinel) else where
    primitive.registered_at["abstract_eval"] = primitive.registered_at["reference"] = where
    if impl is not None:
        primitive.registered_at["impl"] = where
    return primitive


# ----- shared rule builders -----------------------------------------------------------------


def _family_names(families) -> str:
    return ", ".join(f.__name__ for f in families)


def check_dtype(name: str, dtype, families) -> None:
    """Raises TypeError if `dtype` is not a subtype of one of `families`."""
    if families is None or any(dtypes.issubdtype(dtype, f) for f in families):
        return
    raise TypeError(
        f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes are subtypes of "
        f"{_family_names(families)}. Convert first, for example with x.astype(jnp.float32)."
    )


def broadcast_operand_shapes(name: str, avals) -> tuple[int, ...]:
    """The result shape of elementwise operands of equal rank (size-1 dims broadcast, as do
    rank-0 operands)."""
    shapes = [a.shape for a in avals if a.shape != ()]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) > 1:
        raise TypeError(
            f"{name}: arrays must have the same number of dimensions, got {sorted(ranks)}. "
            "lax does not add dimensions; use jnp functions or lax.broadcast_in_dim first."
        )
    result = []
    for sizes in zip(*shapes, strict=True):
        non_one = {d for d in sizes if d != 1}
        if len(non_one) > 1:
            listed = ", ".join(str(s) for s in shapes)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {listed}.")
        result.append(non_one.pop() if non_one else 1)
    return tuple(result)


def check_same_dtypes(name: str, avals) -> None:
    """Raises TypeError unless every operand has the same dtype."""
    found = [a.dtype for a in avals]
    if len(set(found)) > 1:
        listed = ", ".join(d.name for d in found)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {listed}. "
            f"(Tip: jnp.{name} is a similar function that does automatic type promotion on "
            "inputs.)"
        )


def same_shape(*, dtypes=ANY, result_dtype=None, n_skip: int = 0) -> Callable:
    """Abstract eval of an elementwise primitive: same dtype in, same shape out.

    Args:
      dtypes: the accepted dtype families (`FLOATING`, `INEXACT`, `NUMERIC`, ...), or `ANY`.
      result_dtype: the output dtype if it is fixed (comparisons give `bool`).
      n_skip: leading operands exempt from the dtype checks (`select_n`'s predicate).
    """

    def rule(*avals, **params):
        name = rule.primitive_name
        checked = avals[n_skip:]
        for aval in checked:
            check_dtype(name, aval.dtype, dtypes)
        check_same_dtypes(name, checked)
        shape = broadcast_operand_shapes(name, avals)
        dtype = checked[0].dtype if result_dtype is None else result_dtype
        weak = result_dtype is None and all(a.weak_type for a in checked)
        sharding = None
        if any(a.sharding is not None for a in avals):
            sharding = broadcasting_sharding(name, avals, shape, dtype)
        return ShapedArray(shape, dtype, weak, sharding)

    rule.primitive_name = "elementwise"
    return rule


def jvp_from(*rules: Callable | None) -> Callable:
    """A jvp rule summing per-operand contributions `rule(x_dot, ans, *primals, **params)`.

    `None` marks an operand the output does not depend on differentiably.
    """
    return jvp_interpreter.jvp_from(*rules)


def batch_elementwise(axis_data, args, dims, **params):
    """`batch=batch_elementwise`: the batching rule of an elementwise primitive.

    `define_primitive` replaces it by a rule bound to the primitive; it is never called.
    """
    raise TypeError("batch_elementwise is a marker for define_primitive(batch=...).")
