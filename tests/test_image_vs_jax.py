"""`image.resize` and `scale_and_translate` (every method, antialiasing on and off) against real
JAX 0.10.2 (values eagerly and under jit, gradients, errors)."""

from __future__ import annotations

import numpy as np
import pytest
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
X = R.randn(2, 9, 7, 3).astype(np.float32)
I = np.arange(63, dtype=np.int32).reshape(9, 7)  # noqa: E741
INPUTS = dict(X=X, I=I, S=np.array([0.7, 1.3], np.float32), T=np.array([0.5, -1.0], np.float32))
M = ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area")
EXPRS = [
    *(f"jax.image.resize(X, {shape}, '{m}', antialias={aa})" for m in M for aa in (True, False)
      for shape in ((2, 4, 13, 3), (2, 17, 3, 3))),
    "jax.image.resize(X, (2, 9, 7, 3), 'linear')", "jax.image.resize(I, (5, 11), 'bilinear')",
    "jax.image.resize(I, (5, 11), jax.image.ResizeMethod.NEAREST)",
    "jax.image.resize(X[0, :, :, 0], (3, 3), 'tricubic')",
    *(f"jax.image.scale_and_translate(X, (2, 6, 9, 3), (1, 2), S, T, '{m}', antialias={aa})"
      for m in M[1:] for aa in (True, False)),
    "jax.image.scale_and_translate(X[0], (5, 7, 3), [0], S[:1], T[:1], 'linear')",
    "jax.grad(lambda x: jax.image.resize(x, (2, 4, 13, 3), 'cubic')[0, 1, 2, 0])(X)",
    "jax.grad(lambda s: jax.image.scale_and_translate(X, (2, 6, 9, 3), (1, 2), s, T, "
    "'linear').sum())(S)",
    "jax.image.resize(X, (2, 4), 'linear')", "jax.image.resize(X, (2, 4, 4, 3), 'box')",
    "jax.image.scale_and_translate(X, (2, 6, 9, 3), (1, 2), S, T, 'nearest')",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.image\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-5, atol=2e-5)


def test_method_names():
    from laminax.image import ResizeMethod

    assert ResizeMethod.from_string("bicubic") is ResizeMethod.CUBIC
    with pytest.raises(ValueError):
        ResizeMethod.from_string("box")


# the programs bench_library times: laminax hands XLA the same program as JAX (the optimized
# HLO has the same instructions of each opcode and result shape), so their speeds agree; for
# nearest, JAX's also wraps negative indices around (a compare, an add and a select on the
# index vector), which laminax's indices, in range by construction, do without
_BENCH_RESIZES = [((256, 256, 3), (96, 96, 3), "linear"), ((64, 64, 3), (256, 256, 3), "cubic"),
                  ((256, 256, 3), (160, 160, 3), "nearest")]
_HLO_SNIPPET = """
x = np.zeros(in_shape, np.float32)
result = jax.jit(lambda x: jax.image.resize(x, out_shape, method)).lower(x).compile().as_text()
"""


@requires_jax
@pytest.mark.parametrize("in_shape, out_shape, method", _BENCH_RESIZES)
def test_bench_resize_compiles_to_jaxs_hlo(in_shape, out_shape, method):
    import laminax
    from test_bench_hlo_vs_jax import opcode_counts

    theirs = run_jax("import jax.image\n" + _HLO_SNIPPET, in_shape=in_shape,
                     out_shape=out_shape, method=method)
    scope = {"jax": laminax, "np": np, "in_shape": in_shape, "out_shape": out_shape,
             "method": method}
    exec(compile(_HLO_SNIPPET, "<snippet>", "exec"), scope)  # noqa: S102 (our own program)
    ours, theirs = opcode_counts(scope["result"]), opcode_counts(theirs)
    if method != "nearest":
        assert ours == theirs
    else:
        assert all(ours[key] <= theirs[key] for key in ours), ours - theirs
        assert ours["gather"] == theirs["gather"] == 2
