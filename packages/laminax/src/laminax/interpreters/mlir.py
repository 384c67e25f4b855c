"""`jax.interpreters.mlir`: StableHLO lowering rules of primitives (JAX's names).

`register_lowering(p, rule)` stores into dispatch's lowering table, which jit and eager
execution read. A rule is `rule(ctx, *operands, **params)`, `ctx` a `LoweringRuleContext`
(`avals_in`, `avals_out`, `module_context`, `tokens_in`), operands and results `ir.Value`s.
`lower_fun(fun)` makes a rule that lowers `fun`'s lax operations in place.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from jaxlib.mlir import ir as ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_dispatch import internal as _internal
from laminax_dispatch.internal import LoweringRuleContext as LoweringRuleContext
from laminax_dispatch.internal import ModuleContext as ModuleContext
from laminax_dispatch.internal import aval_to_ir_type as aval_to_ir_type
from laminax_dispatch.internal import ir_constant as ir_constant

__all__ = [
    "LoweringRuleContext",
    "ModuleContext",
    "aval_to_ir_type",
    "emit_python_callback",
    "hlo",
    "ir",
    "ir_constant",
    "lower_fun",
    "register_lowering",
]

# The platforms laminax compiles for share one rule per primitive; a rule registered for one
# platform only is used when the primitive has no platform-independent rule.
_platform_independent: set = set()


def register_lowering(primitive, rule: Callable, platform: str | None = None, **options):
    """Registers `rule` as `primitive`'s lowering (JAX's `cacheable`/`inline` options accepted
    and ignored: laminax always caches compiled programs and inlines rules)."""
    del options
    if platform is None:
        _platform_independent.add(primitive)
    elif primitive in _platform_independent:
        return rule
    _internal.register_lowering(primitive, rule)
    return rule


def emit_python_callback(ctx, callback: Callable, token, operands, operand_avals, result_avals,
                         *, has_side_effect: bool, partitioned: bool = False, sharding=None,
                         **layouts):
    """Lowers a host call of `callback(*numpy operands) -> sequence of results` (JAX's
    signature; layouts are accepted and left to XLA). Returns `(results, token, keepalive)`:
    the result values, the token threaded through the call (None if none was given), and
    None (the module keeps the callback alive)."""
    del operand_avals, layouts

    def host(*args):
        outs = callback(*args)
        return tuple(np.asarray(o, a.dtype) for o, a in zip(outs, result_avals, strict=True))

    host.__name__ = getattr(callback, "__name__", "callback")
    results, new_token = _internal.emit_python_callback(
        ctx, host, list(operands), list(result_avals), token=token,
        has_side_effect=has_side_effect, sharding=sharding, partitioned=partitioned,
    )
    return results, new_token, None


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering rule tracing `fun(*operands, **params)` on the operands' avals and lowering
    its operations in place; `fun` returns a list of outputs unless `multiple_results=False`."""
    return _internal.lower_fun(fun, multiple_results=multiple_results)
