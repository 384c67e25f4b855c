"""Run a table of expressions under laminax and real JAX and compare each outcome.

The hardening tests (issue 12) check a class of inputs at a time: many expressions, each a
value or an error. All expressions of a table go to JAX in one snippet (eager; an expression
that wants `jit` says so itself), laminax evaluates the same source, and `exprcompare.compare`
checks values, dtypes and shapes, or the error type.
"""

from __future__ import annotations

import numpy as np
from exprcompare import compare
from jaxref import run_jax

_SNIPPET = """
from functools import partial
from jax import lax

def _run(expr):
    scope = {"jnp": jnp, "np": np, "jax": jax, "lax": lax, "partial": partial, **inputs}
    try:
        if setup:
            exec(setup, scope)
        out = eval(expr, scope)
        leaves = jax.tree_util.tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves])
    except Exception as err:
        return ("error", type(err).__name__, str(err)[:300])

result = [_run(expr) for expr in exprs]
"""


def run_laminax(expr: str, inputs: dict, setup: str = ""):
    """The outcome of `expr` under laminax: ("ok", values, dtypes) or ("error", type, text)."""
    from functools import partial

    import laminax as jax
    import laminax.numpy as jnp
    from laminax import lax

    scope = {"jnp": jnp, "np": np, "jax": jax, "lax": lax, "partial": partial, **inputs}
    try:
        if setup:
            exec(setup, scope)
        out = eval(expr, scope)
        leaves = jax.tree_util.tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err)[:300])


def check_table(exprs: list[str], setup: str = "", **inputs) -> dict[str, int]:
    """Asserts every expression gives JAX's outcome under laminax; returns how many gave a
    value and how many an error (so a test can also require that both kinds occurred)."""
    exprs = list(dict.fromkeys(exprs))  # each distinct input once
    theirs = run_jax(_SNIPPET, exprs=exprs, setup=setup, inputs=inputs)
    counts = {"ok": 0, "error": 0}
    failures = []
    for expr, jax_outcome in zip(exprs, theirs, strict=True):
        ours = run_laminax(expr, inputs, setup)
        try:
            compare(expr, ours, jax_outcome)
        except AssertionError as err:
            failures.append(str(err).splitlines()[0][:400])
        counts[jax_outcome[0]] += 1
    assert not failures, f"{len(failures)} of {len(exprs)} differ from JAX:\n" + "\n".join(
        failures[:25])
    return counts
