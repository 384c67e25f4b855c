"""Reverse mode: transposing linear jaxprs (the backward pass), with symbolic-zero cotangents.

A transpose rule is `rule(ct, *args, **params) -> [cotangent or None per operand]`, where each
linear operand arrives as `UndefinedPrimal(aval)` and the others as values. `backward_pass` walks
a linear jaxpr from the outputs back: equations whose output cotangents are all zero are
skipped, so inputs that do not influence the outputs cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from laminax_core._interpreters.jvp import Zero, add_tangents
from laminax_core._jaxpr import Jaxpr, Literal

__all__ = ["PendingCtRef", "UndefinedPrimal", "backward_pass", "is_undefined_primal", "transpose_rules"]

# primitive -> rule(ct, *args, **params) -> list of cotangents (None: no cotangent)
transpose_rules: dict = {}
# The reference primitives (installed by `laminax_core.ref`): rule(cts, *operands, **params),
# where a linear reference operand (or output) arrives as its cotangent reference.
ref_transpose_rules: dict = {}


class PendingCtRef:
    """The cotangent reference of a linear reference, made when first needed: from the first
    cotangent accumulated into the whole of it (as JAX's transposes make it), else zeros."""

    __slots__ = ("aval", "ref")

    def __init__(self, aval):
        self.aval = aval  # the AbstractRef
        self.ref = None


class UndefinedPrimal:
    """Marks a linear operand of a transpose rule; only its abstract value is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    """Whether `x` is a linear operand (an `UndefinedPrimal`) in a transpose rule."""
    return isinstance(x, UndefinedPrimal)


def _missing_rule(primitive) -> NotImplementedError:
    return NotImplementedError(
        f"Transpose rule (for reverse-mode differentiation) for '{primitive.name}' not "
        f"implemented. Register one with {primitive.name}_p.def_transpose(rule), or use "
        "custom_vjp."
    )


def _forward_nonlinear(jaxpr: Jaxpr, env: dict, linear: set[int]) -> list:
    """Evaluates the equations that read no linear variable; returns the linear ones."""
    linear_eqns = []
    for eqn in jaxpr.eqns:
        # a reference made in a linear jaxpr holds tangents: its reads and writes are linear
        if any(id(v) in linear for v in eqn.invars if not isinstance(v, Literal)) or any(
                hasattr(v.aval, "inner_aval") for v in eqn.outvars):
            linear.update(id(v) for v in eqn.outvars)
            linear_eqns.append(eqn)
            continue
        args = [v.val if isinstance(v, Literal) else env[id(v)] for v in eqn.invars]
        outs = eqn.primitive.bind(*args, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = value
    return linear_eqns


def backward_pass(jaxpr: Jaxpr, consts: Sequence, args: Sequence, cts_out: Sequence) -> list:
    """Transposes `jaxpr` with respect to its `UndefinedPrimal` arguments.

    Args:
      jaxpr: a jaxpr linear in the invars marked undefined.
      consts: values of its constvars.
      args: one per invar: an `UndefinedPrimal` (linear input) or a value.
      cts_out: one cotangent per outvar (arrays or `Zero`).

    Returns:
      One cotangent per invar: an array or `Zero` for linear inputs, None for the others.
    """
    env: dict[int, object] = {}
    linear: set[int] = set()
    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        if isinstance(value, UndefinedPrimal):
            linear.add(id(var))
        else:
            env[id(var)] = value
    linear_eqns = _forward_nonlinear(jaxpr, env, linear)
    ct_env: dict[int, object] = {}

    def add_ct(var, ct):
        if isinstance(var, Literal) or id(var) not in linear or ct is None or isinstance(ct, Zero):
            return
        ct_env[id(var)] = add_tangents(ct_env[id(var)], ct) if id(var) in ct_env else ct

    for var, ct in zip(jaxpr.outvars, cts_out, strict=True):
        add_ct(var, ct)
    ct_refs: dict[int, object] = {}

    def ct_ref(var):
        if id(var) not in ct_refs:
            ct_refs[id(var)] = PendingCtRef(var.aval)
        return ct_refs[id(var)]

    for eqn in reversed(linear_eqns):
        ref_rule = ref_transpose_rules.get(eqn.primitive)
        if ref_rule is not None:  # always run: a write has no output cotangent to skip on
            _transpose_ref_eqn(eqn, ref_rule, env, linear, ct_env, ct_ref, add_ct)
            continue
        cts = [ct_env.pop(id(v), Zero(v.aval.to_tangent_aval())) for v in eqn.outvars]
        if all(isinstance(ct, Zero) for ct in cts):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise _missing_rule(eqn.primitive)
        operands = [
            UndefinedPrimal(v.aval)
            if not isinstance(v, Literal) and id(v) in linear
            else (v.val if isinstance(v, Literal) else env[id(v)])
            for v in eqn.invars
        ]
        ct = cts if eqn.primitive.multiple_results else cts[0]
        cts_in = rule(ct, *operands, **eqn.params)
        for var, ct_in in zip(eqn.invars, cts_in, strict=True):
            add_ct(var, ct_in)
    return [
        ct_env.get(id(v), Zero(v.aval)) if isinstance(a, UndefinedPrimal) else None
        for v, a in zip(jaxpr.invars, args, strict=True)
    ]


def _transpose_ref_eqn(eqn, rule, env, linear, ct_env, ct_ref, add_ct) -> None:
    def operand(v):
        if isinstance(v, Literal):
            return v.val
        if id(v) in linear:
            return ct_ref(v) if hasattr(v.aval, "inner_aval") else UndefinedPrimal(v.aval)
        return env[id(v)]

    cts = [ct_ref(v) if hasattr(v.aval, "inner_aval") else
           ct_env.pop(id(v), Zero(v.aval.to_tangent_aval())) for v in eqn.outvars]
    cts_in = rule(cts, *map(operand, eqn.invars), **eqn.params)
    for var, ct_in in zip(eqn.invars, cts_in, strict=True):
        if not (not isinstance(var, Literal) and hasattr(var.aval, "inner_aval")):
            add_ct(var, ct_in)
