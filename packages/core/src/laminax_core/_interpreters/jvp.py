"""Forward-mode differentiation: the JVP trace and the jvp rule table.

A `JVPTracer` pairs a primal with a tangent. Tangents may be symbolic zeros (`Zero(aval)`):
inputs that are not differentiated, and outputs of rules that do not depend on them, cost
nothing. A jvp rule is `rule(primals, tangents, **params) -> (primal_out, tangent_out)` and runs
with the parent trace current, so primal work happens one level down (concretely under the eval
trace, staged under make_jaxpr, split into known/unknown under linearize).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from laminax_core import _trace, dtypes
from laminax_core._avals import ShapedArray, WeakTypedArray, get_aval
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters import lax_ops

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "JvpFrom",
    "Zero",
    "add_tangents",
    "instantiate_zeros",
    "user_value",
    "jvp_flat",
    "jvp_rules",
    "zeros_like_aval",
    "jvp_from",
    "linear_jvp_rule",
    "zero_tangent_rule",
]

# primitive -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
jvp_rules: dict = {}


class Zero:
    """A symbolic zero tangent (or cotangent) of abstract value `aval`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_primal_value(x) -> Zero:
        """The zero tangent of the primal `x`."""
        return Zero(get_aval(x).to_tangent_aval())

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def zeros_like_aval(aval: ShapedArray):
    """A zero array of `aval` (bound under the current trace unless it is a scalar or float0)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    scalar = np.zeros((), aval.dtype)
    if aval.weak_type:  # the zero tangent of a weakly typed value is weakly typed (JAX's)
        scalar = scalar.view(WeakTypedArray)
    if aval.shape == ():
        return scalar
    return lax_ops.broadcast_in_dim(scalar, aval.shape, ())


def user_value(x, aval: ShapedArray):
    """`x` (a result of grad, jvp, vjp or linearize) as the caller receives it: outside every
    transformation a NumPy constant becomes an Array of `aval`'s type (weak type included),
    as JAX's zeros are; float0 stays NumPy, as in JAX."""
    if (
        isinstance(x, (np.ndarray, np.generic))
        and aval.dtype != dtypes.float0
        and _trace.current_trace() is _trace.eval_trace()
    ):
        return lax_ops.convert_element_type(x, aval.dtype, weak_type=aval.weak_type)
    return x


def instantiate_zeros(tangent):
    """`tangent`, with a symbolic zero replaced by a zero array."""
    return zeros_like_aval(tangent.aval) if isinstance(tangent, Zero) else tangent


def add_tangents(x, y):
    """The sum of two tangents, either of which may be a symbolic zero (`add_any` otherwise)."""
    if isinstance(x, Zero):
        return y
    if isinstance(y, Zero):
        return x
    return lax_ops.add_any(x, y)


class JvpFrom:
    """A jvp rule built from per-operand rules `rule(x_dot, ans, *primals, **params)`."""

    def __init__(self, rules):
        self.rules = rules

    def for_primitive(self, primitive) -> Callable:
        rules = self.rules

        def rule(primals, tangents, **params):
            ans = primitive.bind(*primals, **params)
            total = Zero.from_primal_value(ans)
            for operand_rule, x_dot in zip(rules, tangents, strict=True):
                if operand_rule is not None and not isinstance(x_dot, Zero):
                    total = add_tangents(total, operand_rule(x_dot, ans, *primals, **params))
            return ans, total

        return rule


def jvp_from(*rules) -> JvpFrom:
    return JvpFrom(rules)


def linear_jvp_rule(primitive) -> Callable:
    """The jvp of a primitive linear in every operand: the primitive applied to the tangents."""

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if all(isinstance(t, Zero) for t in tangents):
            if primitive.multiple_results:
                return ans, [Zero.from_primal_value(a) for a in ans]
            return ans, Zero.from_primal_value(ans)
        return ans, primitive.bind(*map(instantiate_zeros, tangents), **params)

    return rule


def zero_tangent_rule(primitive) -> Callable:
    """The jvp of a piecewise-constant primitive: its tangent is a symbolic zero."""

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return ans, [Zero.from_primal_value(a) for a in ans]
        return ans, Zero.from_primal_value(ans)

    return rule


class JVPTracer(_trace.Tracer):
    """A primal value with its tangent."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        super().__init__(trace)
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self):
        if isinstance(self.primal, _trace.Tracer):
            return self.primal.to_concrete_value()
        return np.asarray(self.primal)


class JVPTrace(_trace.Trace):
    """The trace of one `jvp` (or one level of `grad`, `linearize`, `jacfwd`...)."""

    check_leaks = False  # as in JAX, jax_check_tracer_leaks does not check differentiation

    def __init__(self, parent, transformation: str = "jvp"):
        super().__init__(parent)
        self.transformation = transformation

    def lift(self, x):
        """`(primal, tangent)` of `x`; values not of this trace get a zero tangent."""
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, primitive, args, params):
        if eval_interpreter.takes_refs(primitive, args, params):
            return eval_interpreter.run_on_ref_values(primitive, args, params)
        primals, tangents = zip(*map(self.lift, args), strict=True) if args else ((), ())
        # a new reference gets a tangent reference even from a zero tangent: later writes
        # into it may carry tangents
        if all(isinstance(t, Zero) for t in tangents) and not getattr(
                primitive, "ref_allocating", False):
            with _trace.set_current_trace(self.parent):
                return primitive.bind(*primals, **params)
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{primitive.name}' not implemented. Register one with "
                f"{primitive.name}_p.def_jvp(rule), or use custom_jvp."
            )
        with _trace.set_current_trace(self.parent):
            primal_out, tangent_out = rule(tuple(primals), tuple(tangents), **params)
        if primitive.multiple_results:
            return [self.maybe_wrap(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.maybe_wrap(primal_out, tangent_out)

    def wrap(self, primal, tangent):
        return JVPTracer(self, primal, tangent)

    def maybe_wrap(self, primal, tangent):
        # as JAX's: an output with a symbolic-zero tangent is the primal value itself, so
        # callers can tell what the differentiated inputs reach (equinox's filter_jvp does)
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)


def jvp_flat(
    fun: Callable, primals, tangents, *, transformation: str = "jvp", instantiate: bool = True
):
    """Runs `fun` (flat list in, flat list out) forward with tangents.

    Returns:
      `(primals_out, tangents_out)`; symbolic zeros are kept unless `instantiate`.
    """
    trace = JVPTrace(_trace.current_trace(), transformation)
    try:
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents, strict=True)]
        with _trace.set_current_trace(trace):
            outs = fun(*ins)
        pairs = [trace.lift(out) for out in outs]
    finally:
        trace.is_live = False
    primals_out = [p for p, _ in pairs]
    tangents_out = [t for _, t in pairs]
    if instantiate:
        tangents_out = [
            user_value(zeros_like_aval(t.aval), t.aval) if isinstance(t, Zero) else t
            for t in tangents_out
        ]
    return primals_out, tangents_out
