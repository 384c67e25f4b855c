"""Linear algebra exported for GPUs, against real JAX 0.10.2: `export(..., platforms=("cuda",))`
(and rocm) of cholesky, lu, qr, eigh, svd, triangular_solve, householder_product and
tridiagonal writes the cusolver / hipsolver custom calls JAX writes (targets, operands,
result types, layouts, aliases, backend and frontend attributes, Shardy's sharding rules),
and `platforms=("cpu", "cuda")` gives JAX's two-level `stablehlo.case` whose CPU branch runs
here, both ways. This machine has no GPU: the GPU branches are compared as text."""

import re

import laminax
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

pytestmark = requires_jax

FUNS = {
    # (no matmul: JAX lowers dot_general per platform too)
    "cholesky": "lambda x: jnp.linalg.cholesky(x + jnp.swapaxes(x, -1, -2) + 10 * jnp.eye(4))",
    "lu": "lambda x: jax.lax.linalg.lu(x)",
    "qr": "lambda x: jnp.linalg.qr(x)",
    "qr_complete": "lambda x: jnp.linalg.qr(x, mode='complete')",
    "eigh": "lambda x: jnp.linalg.eigh(x + jnp.swapaxes(x, -1, -2))",
    "eigh_jacobi": "lambda x: jax.lax.linalg.eigh(x, implementation="
                   "jax.lax.linalg.EighImplementation.JACOBI)",
    "svd": "lambda x: jnp.linalg.svd(x)",
    "svd_reduced": "lambda x: jnp.linalg.svd(x, full_matrices=False)",
    "svd_values": "lambda x: jnp.linalg.svd(x, compute_uv=False)",
    "svd_qr": "lambda x: jax.lax.linalg.svd(x, full_matrices=False, "
              "algorithm=jax.lax.linalg.SvdAlgorithm.QR)",
    "householder_product": "lambda x: jax.lax.linalg.householder_product(x, x[..., 0, :2])",
    "tridiagonal": "lambda x: jax.lax.linalg.tridiagonal(x + jnp.swapaxes(x, -1, -2))",
    "triangular_solve": "lambda x: jax.lax.linalg.triangular_solve(x, x[..., :2], "
                        "left_side=True, lower=True, transpose_a=True)",
}
SHAPES = [(4, 4), (2, 3, 5), (5, 3)]
CASES = [(name, shape, "float32") for name in FUNS for shape in SHAPES
         if not (name.startswith(("cholesky", "eigh", "triangular", "householder", "tridiagonal"))
                 and shape[-1] != shape[-2])]
CASES += [("lu", (3, 3), "complex64"), ("svd", (3, 3), "complex64"),
          ("eigh", (3, 3), "complex64"), ("svd_reduced", (40, 36), "float32")]

_SRC = """
import re
def go(jax, jnp, cases, platforms):
    out = []
    for name, shape, dtype in cases:
        f = eval(funs[name], {"jax": jax, "jnp": jnp})
        try:
            e = jax.export.export(jax.jit(f), platforms=platforms)(
                jax.ShapeDtypeStruct(shape, np.dtype(dtype)))
            out.append(e.mlir_module())
        except Exception as ex:
            out.append(f"{type(ex).__name__}: {ex}")
    return out
"""


def _calls(text: str) -> list[str]:
    """The solver custom calls and triangular solves of a module, without locations, value
    names and Shardy's sharding rules."""
    out = []
    for line in text.splitlines():
        if "custom_call @" not in line and "stablehlo.triangular_solve" not in line:
            continue
        if "shape_assertion" in line:
            continue
        line = re.sub(r" loc\(.*", "", line)
        if "lapack_" in line:  # laminax's CPU calls carry no Shardy rules (JAX's do)
            line = re.sub(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?custom>", "", line)
        out.append(re.sub(r"%[\w#]+(:\d+)?", "%", line.strip()))
    return out


def _gpu_calls(text: str) -> list[str]:
    return [c for c in _calls(text) if "lapack_" not in c]


def _laminax(cases, platforms):
    scope = {"np": np, "funs": FUNS}
    exec(_SRC, scope)
    return scope["go"](laminax, laminax.numpy, cases, platforms)


@pytest.mark.parametrize("platform", ["cuda", "rocm"])
def test_gpu_solver_calls_as_jax(platform):
    cases = CASES if platform == "cuda" else CASES[:: 3]
    theirs = run_jax(_SRC + "result = go(jax, jnp, cases, platforms)", cases=cases,
                     platforms=(platform,), funs=FUNS)
    mine = _laminax(cases, (platform,))
    for case, m, t in zip(cases, mine, theirs, strict=True):
        assert not t.startswith(("ValueError", "NotImplementedError", "TypeError")), (case, t)
        assert _calls(m) == _calls(t), case
        assert _calls(m), case


_RUN = """
def _leaves(jax, src):  # a list: the artifacts carry no named tuples (QRResult ...)
    f = eval(src, {"jax": jax, "jnp": jax.numpy})
    return lambda x: jax.tree_util.tree_leaves(f(x))

def run(jax, jnp, blobs, cases):
    out = []
    for blob, (name, shape, dtype) in zip(blobs, cases):
        x = np.random.default_rng(len(name)).standard_normal(shape).astype(dtype)
        out.append([np.asarray(r) for r in
                    jax.tree_util.tree_leaves(jax.export.deserialize(bytearray(blob)).call(x))])
    return out
"""


def test_cpu_and_cuda_artifacts_run_on_cpu_both_ways():
    # (LAPACK's gesvd, svd_qr's CPU kernel, is not on JAX's list of stable targets; JAX
    # refuses Jacobi eigh on CPU)
    # (a batch for lu only: the runs are slow in JAX)
    cases = [c for c in CASES if c[2] == "float32" and c[0] not in ("svd_qr", "eigh_jacobi")
             and (c[1] == (4, 4) or (c[0] == "lu" and c[1] == (2, 3, 5)))]
    platforms = ("cpu", "cuda")
    scope = {"np": np}
    exec(_RUN, scope)
    _leaves = scope["_leaves"]
    mine = [laminax.export.export(laminax.jit(_leaves(laminax, FUNS[n])), platforms=platforms)(
        laminax.ShapeDtypeStruct(s, np.dtype(d))) for n, s, d in cases]
    got = run_jax(_SRC + _RUN + """
theirs = [jax.export.export(jax.jit(_leaves(jax, funs[n])),
                            platforms=platforms)(jax.ShapeDtypeStruct(s, np.dtype(d)))
          for n, s, d in cases]
result = dict(texts=[t.mlir_module() for t in theirs],
              blobs=[bytes(t.serialize()) for t in theirs],
              ref=run(jax, jnp, [t.serialize() for t in theirs], cases),
              mine=run(jax, jnp, blobs, cases))
""", cases=cases, platforms=platforms, funs=FUNS, blobs=[m.serialize() for m in mine])
    from_jax = scope["run"](laminax, laminax.numpy, got["blobs"], cases)
    for case, m, text in zip(cases, mine, got["texts"], strict=True):
        # the platform index mapped to a rule, then one branch per rule (JAX has such a pair
        # per primitive: qr's geqrf and orgqr get one each there, one for both here)
        assert m.mlir_module().count("stablehlo.case") == 2, case
        # the GPU branch's calls (laminax's CPU calls carry no frontend attributes)
        gpu = [_gpu_calls(t) for t in (m.mlir_module(), text)]
        assert gpu[0] == gpu[1] and gpu[0], case
    for case, ref, a, b in zip(cases, got["ref"], got["mine"], from_jax, strict=True):
        for r, x, y in zip(ref, a, b, strict=True):
            np.testing.assert_allclose(x, r, rtol=1e-4, atol=1e-4, err_msg=str(case))
            np.testing.assert_allclose(y, r, rtol=1e-4, atol=1e-4, err_msg=str(case))
