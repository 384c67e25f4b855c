"""`jax.interpreters.ad`: forward- and reverse-mode rules of primitives (JAX's names).

`primitive_jvps` and `primitive_transposes` are core's jvp and transpose tables themselves:
a rule stored here is the rule every laminax transformation uses. A jvp rule is
`rule(primals, tangents, **params) -> (primal_out, tangent_out)`, tangents possibly symbolic
`Zero`s; a transpose rule is `rule(ct, *operands, **params) -> cotangent per operand`, linear
operands being `UndefinedPrimal`s.
"""

from __future__ import annotations

from collections.abc import Callable

from laminax_core.internal import JVPTrace as JVPTrace
from laminax_core.internal import UndefinedPrimal as UndefinedPrimal
from laminax_core.internal import Zero as Zero
from laminax_core.internal import is_undefined_primal as is_undefined_primal
from laminax_core.internal import jvp
from laminax_core.internal import jvp_rules as primitive_jvps
from laminax_core.internal import transpose_rules as primitive_transposes

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_tangents",
    "defbilinear",
    "defjvp",
    "deflinear",
    "deflinear2",
    "get_primitive_transpose",
    "instantiate_zeros",
    "is_undefined_primal",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]

JVPTracer = jvp.JVPTracer
add_tangents = jvp.add_tangents
instantiate_zeros = jvp.instantiate_zeros
zeros_like_aval = jvp.zeros_like_aval


def get_primitive_transpose(primitive) -> Callable:
    """`primitive`'s transpose rule; NotImplementedError naming it if it has none."""
    try:
        return primitive_transposes[primitive]
    except KeyError:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{primitive}' not "
            "implemented."
        ) from None


def defjvp(primitive, *jvp_rules: Callable | None) -> None:
    """Sets `primitive`'s jvp from one rule per operand, `rule(tangent, *primals, **params)`
    giving that operand's contribution to the output tangent (None: not differentiable)."""

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = Zero.from_primal_value(out)
        for operand_rule, t in zip(jvp_rules, tangents, strict=True):
            if operand_rule is not None and not isinstance(t, Zero):
                total = add_tangents(total, operand_rule(t, *primals, **params))
        return out, total

    primitive_jvps[primitive] = rule


def deflinear2(primitive, transpose_rule: Callable) -> None:
    """Declares `primitive` linear in all operands: its jvp applies it to the tangents and its
    transpose is `transpose_rule(ct, *operands, **params) -> cotangents`."""
    primitive_jvps[primitive] = jvp.linear_jvp_rule(primitive)

    def transpose(ct, *operands, **params):
        if isinstance(ct, Zero):
            return [None] * len(operands)
        return transpose_rule(ct, *operands, **params)

    primitive_transposes[primitive] = transpose


def deflinear(primitive, transpose_rule: Callable) -> None:
    """As `deflinear2` with `transpose_rule(ct, **params)` (the operands are not passed)."""
    deflinear2(primitive, lambda ct, *operands, **params: transpose_rule(ct, **params))


def defbilinear(primitive, lhs_rule: Callable | None, rhs_rule: Callable | None) -> None:
    """Declares `primitive(x, y)` linear in each operand separately: `lhs_rule(ct, x, y,
    **params)` is x's cotangent when x is the undefined operand, `rhs_rule` likewise for y."""
    defjvp(
        primitive,
        lambda t, x, y, **params: primitive.bind(t, y, **params),
        lambda t, x, y, **params: primitive.bind(x, t, **params),
    )

    def transpose(ct, x, y, **params):
        if isinstance(ct, Zero):
            return [None, None]
        if is_undefined_primal(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]

    primitive_transposes[primitive] = transpose
