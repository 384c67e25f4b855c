"""Staging primitives into jaxprs, and known/unknown partial evaluation.

`JaxprTrace` records the primitives applied to its tracers as jaxpr equations. In *staging* mode
(make_jaxpr) it records everything it is handed. In *partial-eval* mode (linearize, vjp, grad)
an application whose inputs are all known values of the parent trace is evaluated right away in
the parent; only the applications touching an unknown (a tangent) are recorded, with the known
values they read becoming the jaxpr's constants. That is what lets `grad` of a function with
Python control flow on concrete values work eagerly: primal values stay concrete.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from laminax_core import _manual_axes, _trace, config, dtypes
from laminax_core._avals import Ref, ShapedArray, get_aval
from laminax_core._interpreters import jvp as jvp_interpreter
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._interpreters.eval import EvalTrace, eval_jaxpr
from laminax_core._jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    check_jaxpr,
)

__all__ = [
    "JaxprTrace",
    "hoist_tracer_consts",
    "JaxprTracer",
    "linearize_flat",
    "partial_eval_jaxpr",
    "partial_eval_rules",
    "trace_to_jaxpr",
]

# primitive -> rule(trace, args, params) -> outputs: how a higher-order primitive applied to a
# mix of known and unknown inputs splits into a known part (evaluated in the parent) and an
# unknown part (staged). Without a rule the whole application is staged.
partial_eval_rules: dict = {}

_LITERAL_TYPES = (bool, int, float, complex, np.generic)


class JaxprTracer(_trace.Tracer):
    """A value being staged: stands for the jaxpr variable `_var`.

    The slot is private because tracers carry jnp's array methods, `x.var()` among them.
    """

    __slots__ = ("_var",)

    def __init__(self, trace: JaxprTrace, var: Var):
        super().__init__(trace)
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._var.aval


def _canonical_value(x, aval: ShapedArray):
    """A NumPy constant in its aval's dtype (float64 data becomes float32 without x64), so
    that what the jaxpr holds is what its types say."""
    if isinstance(x, np.ndarray | np.generic) and x.dtype != aval.dtype:
        return np.asarray(x, aval.dtype)
    return x


def _is_literal(x) -> bool:
    if isinstance(x, _LITERAL_TYPES):
        return True
    return isinstance(x, np.ndarray) and x.shape == () and x.dtype != dtypes.float0


class JaxprTrace(_trace.Trace):
    """Builds a jaxpr from the primitives applied to its tracers.

    Args:
      parent: the trace below.
      evaluate_known: evaluate applications with no tracer of this trace in the parent
        (partial evaluation) instead of staging them.
      transformation: the name error messages use.
    """

    def __init__(self, parent, *, evaluate_known: bool, transformation: str = "make_jaxpr"):
        super().__init__(parent)
        self.evaluate_known = evaluate_known
        self.transformation = transformation
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self._consts: dict[int, tuple[Var, object]] = {}
        self._const_sources: list = []

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        """A new jaxpr input of abstract value `aval`."""
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, var)

    def atom(self, x):
        """The jaxpr atom standing for `x`: a tracer's var, a literal, or a constvar."""
        if isinstance(x, JaxprTracer) and x._trace is self:
            return x._var
        if _is_literal(x):
            aval = get_aval(x)
            return Literal(_canonical_value(x, aval), aval)
        entry = self._consts.get(key := id(x))
        if entry is None:
            parent = self.parent
            if (isinstance(x, Ref) and isinstance(parent, JaxprTrace)
                    and not parent.evaluate_known):
                # a concrete reference closed over by a nested staging: an input of the
                # outermost program (like an outer tracer), so its writes reach it
                self._const_sources.append(x)
                x = JaxprTracer(parent, parent.atom(x))
                self._const_sources.append(x)
            if isinstance(x, _trace.Tracer):
                entry = (Var(get_aval(x)), x)
            else:
                aval = get_aval(x)
                entry = (Var(aval.strip_weak_type()), _canonical_value(x, aval))
                self._const_sources.append(x)  # keeps id(x) from being reused while tracing
            self._consts[key] = entry
        return entry[0]

    def constant_tracer(self, value):
        """A tracer standing for the constant `value` (a literal or a constvar); None in partial
        evaluation, where constants are known values of the trace below."""
        if self.evaluate_known:
            return None
        return JaxprTracer(self, self.atom(value))

    def is_unknown(self, x) -> bool:
        """Whether `x` is staged by this trace (rather than a known value of the parent)."""
        return isinstance(x, JaxprTracer) and x._trace is self

    def process_primitive(self, primitive, args, params):
        if self.evaluate_known:
            if eval_interpreter.takes_refs(primitive, args, params):
                return eval_interpreter.run_on_ref_values(primitive, args, params)
            if not any(map(self.is_unknown, args)):
                with _trace.set_current_trace(self.parent):
                    return primitive.bind(*args, **params)
            rule = partial_eval_rules.get(primitive)
            if rule is not None:
                return rule(self, list(args), params)
        return self.stage(primitive, args, params)

    def stage(self, primitive, args, params):
        """Records `primitive(*args)` as an equation and returns tracers of its outputs."""
        fix = None
        if _manual_axes.active and _manual_axes.state.axes is not None:  # a check_vma body
            args, fix = _manual_axes.stage_typed(self, primitive, args, params)
        invars = [self.atom(x) for x in args]
        avals_out, effects = primitive.abstract_eval(*[a.aval for a in invars], **params)
        if not primitive.multiple_results:
            avals_out = [avals_out]
        if fix is not None:
            avals_out = fix(avals_out)
        outvars = [Var(aval) for aval in avals_out]
        eqn = JaxprEqn(invars, outvars, primitive, params, effects, _trace.user_source_info(),
                       _trace.current_name_stack())
        self.eqns.append(eqn)
        outs = [JaxprTracer(self, var) for var in outvars]
        return outs if primitive.multiple_results else outs[0]

    def to_jaxpr(self, outs: Sequence) -> tuple[Jaxpr, list]:
        """The jaxpr computing `outs` from the inputs, and the values of its constvars."""
        outvars = [self.atom(x) for x in outs]
        if isinstance(self.parent, EvalTrace):  # JAX marks `_` only in an outermost jaxpr
            _drop_unused_outvars(self.eqns, outvars)
        constvars = [var for var, _ in self._consts.values()]
        consts = [value for _, value in self._consts.values()]
        return Jaxpr(constvars, self.invars, outvars, self.eqns), consts


def _drop_unused_outvars(eqns, outvars) -> None:
    """Replaces equation outputs nothing reads by `DropVar`s (printed `_`), as JAX does."""
    used = {id(v) for v in outvars}
    for eqn in eqns:
        used.update(id(v) for v in eqn.invars)
    for eqn in eqns:
        eqn.outvars = [v if id(v) in used else DropVar(v.aval) for v in eqn.outvars]


def trace_to_jaxpr(
    fun: Callable, in_avals: Sequence[ShapedArray], transformation: str = "make_jaxpr"
) -> tuple[ClosedJaxpr, list]:
    """Stages `fun` (flat arrays in, flat list out) into a closed jaxpr.

    Returns:
      `(closed_jaxpr, outs)` where `outs` are the traced outputs (for their avals).

    Raises:
      RuntimeError: the ``jax_no_tracing`` option is on.
    """
    if config.no_tracing.value:
        name = getattr(fun, "__name__", type(fun).__name__)
        raise RuntimeError(
            f"re-tracing function {name} for `{transformation}`, but 'no_tracing' is set")
    trace = JaxprTrace(_trace.current_trace(), evaluate_known=False, transformation=transformation)
    try:
        ins = [trace.new_arg(aval) for aval in in_avals]
        # a staged jaxpr's scopes are relative to the equation that will hold it
        with _trace.set_current_trace(trace), _trace.fresh_name_stack():
            outs = list(fun(*ins))
        jaxpr, consts = trace.to_jaxpr(outs)
    finally:
        trace.is_live = False
    if config.enable_checks.value:
        check_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr, consts), outs


def linearize_flat(fun: Callable, primals: Sequence, *, transformation: str = "linearize"):
    """Evaluates `fun` at `primals` and stages its linear (tangent) part into a jaxpr.

    Returns:
      `(primals_out, linear_jaxpr, consts)`: `linear_jaxpr` maps the input tangents to the
      output tangents; its constvars take `consts` (known values of the current trace).
    """
    parent = _trace.current_trace()
    pe_trace = JaxprTrace(parent, evaluate_known=True, transformation=transformation)
    tangents = []
    for x in primals:
        aval = get_aval(x).to_tangent_aval()
        arg = pe_trace.new_arg(aval)
        tangents.append(arg if aval.dtype != dtypes.float0 else jvp_interpreter.Zero(aval))
    try:
        with _trace.set_current_trace(pe_trace):
            primals_out, tangents_out = jvp_interpreter.jvp_flat(
                fun, primals, tangents, transformation=transformation, instantiate=True
            )
        if any(pe_trace.is_unknown(p) for p in primals_out):
            # a staged primal would leak out of the linearization as a tracer
            raise TypeError(
                f"{transformation}: a primal output depends on a computation that partial "
                "evaluation staged whole (a primitive without a partial-evaluation rule that "
                "splits known from unknown inputs), so its value is not known here."
            )
        jaxpr, consts = pe_trace.to_jaxpr(tangents_out)
    finally:
        pe_trace.is_live = False
    return primals_out, jaxpr, consts


def partial_eval_jaxpr(closed: ClosedJaxpr, in_unknowns, instantiate):
    """Splits `closed` into a known and an unknown jaxpr.

    Args:
      closed: the jaxpr.
      in_unknowns: one flag per input.
      instantiate: one flag per output that must come out of the unknown jaxpr even if known.

    Returns:
      `(known, unknown, out_unknowns, residual_avals)`: `known` maps the known inputs to the
      known outputs followed by residuals; `unknown` maps the residuals followed by the unknown
      inputs to the unknown outputs.
    """
    found: dict = {}
    known_avals = [a for a, u in zip(closed.in_avals, in_unknowns, strict=True) if not u]
    unknown_avals = [a for a, u in zip(closed.in_avals, in_unknowns, strict=True) if u]

    def known_fun(*known_ins):
        pe = JaxprTrace(
            _trace.current_trace(), evaluate_known=True, transformation="partial evaluation"
        )
        known_iter = iter(known_ins)
        ins = [
            pe.new_arg(a) if u else next(known_iter)
            for a, u in zip(closed.in_avals, in_unknowns, strict=True)
        ]
        try:
            with _trace.set_current_trace(pe):
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            unknown_flags = [
                pe.is_unknown(o) or inst for o, inst in zip(outs, instantiate, strict=True)
            ]
            jaxpr, residuals = pe.to_jaxpr(
                [o for o, u in zip(outs, unknown_flags, strict=True) if u]
            )
        finally:
            pe.is_live = False
        found.update(
            jaxpr=jaxpr, out_unknowns=unknown_flags, res_avals=[get_aval(r) for r in residuals]
        )
        return [o for o, u in zip(outs, unknown_flags, strict=True) if not u] + list(residuals)

    known, _ = trace_to_jaxpr(known_fun, known_avals, "partial evaluation")
    jaxpr = found["jaxpr"]
    unknown = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns, jaxpr.effects)
    del unknown_avals
    return known, ClosedJaxpr(unknown, []), found["out_unknowns"], found["res_avals"]


def hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Moves the constants that are tracers of outer traces to leading invars (so the outer
    traces see them as operands); NumPy constants stay in the closed jaxpr."""
    pairs = list(zip(closed.jaxpr.constvars, closed.consts, strict=True))
    keep = [(v, c) for v, c in pairs if not isinstance(c, _trace.Tracer)]
    hoist = [(v, c) for v, c in pairs if isinstance(c, _trace.Tracer)]
    jaxpr = closed.jaxpr
    new = Jaxpr(
        [v for v, _ in keep],
        [v for v, _ in hoist] + jaxpr.invars,
        jaxpr.outvars,
        jaxpr.eqns,
        jaxpr.effects,
    )
    return ClosedJaxpr(new, [c for _, c in keep]), [c for _, c in hoist]
