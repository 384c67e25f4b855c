"""Lowerings of `laminax_core/_custom_derivatives.py`: a custom_jvp or custom_vjp function runs
its primal jaxpr (the rules only matter to differentiation), inlined as JAX does; so does a
custom_vmap function (its rule only matters to vmap)."""

from __future__ import annotations

import numpy as np
from laminax_core.internal import (
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vmap_call_p,
    linear_call_p,
)

from laminax_dispatch._lowering._core import ir_constant, jaxpr_subcomp, register_lowering

__all__ = ["inline_closed_jaxpr"]


def inline_closed_jaxpr(ctx, closed, args, scope: str) -> list:
    """Emits `closed` (a ClosedJaxpr or Jaxpr) in place on `args`, threading ctx's tokens."""
    jaxpr = getattr(closed, "jaxpr", closed)
    consts = [ir_constant(c) for c in getattr(closed, "consts", ())]
    outs, tokens = jaxpr_subcomp(
        ctx.module_context, jaxpr, f"{ctx.name_stack}/{scope}", ctx.tokens_in, consts, *args
    )
    ctx.tokens_out = tokens
    return outs


def _custom_call_lower(ctx, *args, call_jaxpr, name=None, **params):
    return inline_closed_jaxpr(ctx, call_jaxpr, args, name or "custom")


register_lowering(custom_jvp_call_p, _custom_call_lower)
register_lowering(custom_vjp_call_p, _custom_call_lower)
register_lowering(linear_call_p, lambda ctx, *args, callee, **params: inline_closed_jaxpr(
    ctx, callee, args, "linear_call"))


def _custom_vmap_lower(ctx, *args, call, **params):
    return inline_closed_jaxpr(ctx, call, args, "custom_vmap")


register_lowering(custom_vmap_call_p, _custom_vmap_lower)
