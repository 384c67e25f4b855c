"""Compare Python expressions between laminax and real JAX, eagerly and under jit.

Each expression is evaluated with `jax`, `jnp`, `lax`, `np` and the named inputs as globals:
once eagerly and once inside `jit` with the array inputs passed as (traced) arguments. All
expressions of a table go to JAX in one snippet; `compare` checks the outcome (values, dtypes,
shapes, or the error type) of laminax's run against JAX's.
"""

from __future__ import annotations

import numpy as np

JAX_SNIPPET = """
from jax import lax

def _leaves(out):
    leaves = jax.tree_util.tree_leaves(out)
    return [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves]

def _run(expr, jit):
    base = {"jnp": jnp, "np": np, "jax": jax, "lax": lax}
    try:
        if jit:
            out = jax.jit(lambda kw: eval(expr, {**base, **kw}))(inputs)
        else:
            out = eval(expr, {**base, **inputs})
        values, dtypes = _leaves(out)
        return ("ok", values, dtypes)
    except Exception as err:
        return ("error", type(err).__name__, str(err)[:300])

result = [[_run(expr, jit) for jit in (False, True)] for expr in exprs]
"""


def run_laminax(expr: str, inputs: dict, jit: bool):
    """The outcome of `expr` under laminax: ("ok", values, dtypes) or ("error", type, text)."""
    import laminax as jax
    import laminax.numpy as jnp
    from laminax import lax

    base = {"jnp": jnp, "np": np, "jax": jax, "lax": lax}
    try:
        if jit:
            out = jax.jit(lambda kw: eval(expr, {**base, **kw}))(inputs)
        else:
            out = eval(expr, {**base, **inputs})
        leaves = jax.tree_util.tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err)[:300])


def compare(expr: str, ours, theirs, rtol: float = 2e-4, atol: float = 2e-4) -> None:
    """Asserts laminax's outcome `ours` matches JAX's `theirs` (see `run_laminax`)."""
    assert ours[0] == theirs[0], f"{expr}: laminax {ours[:3]} vs JAX {theirs[:3]}"
    if ours[0] == "error":
        assert ours[1] == theirs[1], (
            f"{expr}: laminax raised {ours[1]}: {ours[2]}; JAX raised {theirs[1]}: {theirs[2]}"
        )
        return
    _, values, dtypes = ours
    _, j_values, j_dtypes = theirs
    assert dtypes == j_dtypes, f"{expr}: dtypes {dtypes} vs JAX {j_dtypes}"
    for v, jv in zip(values, j_values, strict=True):
        assert v.shape == jv.shape, f"{expr}: shape {v.shape} vs JAX {jv.shape}"
        if np.issubdtype(jv.dtype, np.inexact):
            np.testing.assert_allclose(v, jv, rtol=rtol, atol=atol, err_msg=expr)
        else:
            np.testing.assert_array_equal(v, jv, err_msg=expr)
