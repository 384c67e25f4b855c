"""Multi-platform exports against real JAX 0.10.2: `export(f, platforms=(...))` gives one module
whose `main` takes the platform index first (a `_platform_index` global constant) and dispatches
on it with `stablehlo.case`; `lax.platform_dependent` picks its branch in the compiled program;
artifacts (and their vjps) cross both ways; platforms this machine lacks lower but do not run.
"""

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import lax
from laminax_core import numpy as lnp
from laminax_dispatch import jit

X = np.array([0.5, -1.0, 2.0], np.float32)
SPEC = lc.ShapeDtypeStruct((3,), np.float32)
PLATFORMS = ("cpu", "cuda", "tpu")

# one source, run with `jnp`/`lax` of either implementation
SRC = """
def f(x):
    return lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos, default=jnp.tanh) * 2.0
"""


def _f():
    scope = {"jnp": lnp, "lax": lax}
    exec(SRC, scope)
    return scope["f"]


JAX_EXPORT = """
from jax import lax
scope = {"jnp": jnp, "lax": lax}
exec(src, scope)
exp = jax.export.export(jax.jit(scope["f"]), platforms=platforms)(
    jax.ShapeDtypeStruct((3,), jnp.float32))
text = exp.mlir_module()
main = next(l for l in text.split("\\n") if "func.func public @main" in l)
result = dict(platforms=exp.platforms, main=main, cases=text.count("stablehlo.case"),
              head=next(l for l in text.split("\\n") if l.startswith("module")),
              blob=bytes(exp.serialize(vjp_order=1)))
"""

JAX_CALL = """
exp = jax.export.deserialize(bytearray(blob))
try:
    result = dict(value=exp.call(x), jit=jax.jit(exp.call)(x),
                  grad=jax.grad(lambda x: exp.call(x).sum())(x), platforms=exp.platforms)
except Exception as e:
    result = (type(e).__name__, str(e))
"""


def _main_line(exp):
    return next(line for line in exp.mlir_module().split("\n")
                if "func.func public @main" in line)


def _strip_locs(line):
    import re

    return re.sub(r" loc\([^)]*\)", "", line)


@requires_jax
def test_module_layout_matches_jax():
    exp = le.export(jit(_f()), platforms=PLATFORMS)(SPEC)
    ref = run_jax(JAX_EXPORT, src=SRC, platforms=PLATFORMS)
    assert exp.platforms == ref["platforms"]
    assert exp.mlir_module().split("\n")[0] == ref["head"]  # uses_shape_polymorphism = true
    assert _main_line(exp) == _strip_locs(ref["main"])
    assert "tensor<i32> {jax.global_constant = \"_platform_index\"}" in _main_line(exp)
    # platform index -> branch index, then the branches
    assert exp.mlir_module().count("stablehlo.case") >= 2 and ref["cases"] >= 2
    # one platform: no index argument, the branch chosen at lowering
    single = le.export(jit(_f()), platforms=("cuda",))(SPEC)
    ref1 = run_jax(JAX_EXPORT, src=SRC, platforms=("cuda",))
    assert _main_line(single) == _strip_locs(ref1["main"])
    assert "_platform_index" not in single.mlir_module()


@requires_jax
def test_laminax_artifact_runs_in_jax():
    exp = le.export(jit(_f()), platforms=PLATFORMS)(SPEC)
    np.testing.assert_allclose(exp.call(X), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(jit(exp.call)(X), np.sin(X) * 2, rtol=1e-6)
    got = run_jax(JAX_CALL, blob=bytes(exp.serialize(vjp_order=1)), x=X)
    assert got["platforms"] == PLATFORMS
    np.testing.assert_allclose(got["value"], np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(got["jit"], np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(got["grad"], np.cos(X) * 2, rtol=1e-6)


@requires_jax
def test_jax_artifact_runs_in_laminax():
    ref = run_jax(JAX_EXPORT, src=SRC, platforms=PLATFORMS)
    exp = le.deserialize(ref["blob"])
    assert exp.platforms == PLATFORMS and exp.has_vjp()
    np.testing.assert_allclose(exp.call(X), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(jit(exp.call)(X), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(lc.grad(lambda x: exp.call(x).sum())(X), np.cos(X) * 2,
                               rtol=1e-6)
    # the vjp is itself a multi-platform export
    vjp = exp.vjp()
    assert vjp.platforms == PLATFORMS
    assert "_platform_index" in _main_line(vjp)


@requires_jax
def test_absent_platform_lowers_and_serializes_but_does_not_run():
    exp = le.export(jit(_f()), platforms=("cuda", "tpu"))(SPEC)
    blob = bytes(exp.serialize())
    back = le.deserialize(blob)
    assert back.platforms == ("cuda", "tpu")
    got = run_jax(JAX_CALL, blob=blob, x=X)
    with pytest.raises(ValueError) as info:
        back.call(X)
    assert got[0] == "ValueError"
    # JAX's words, up to laminax's added hint
    assert str(info.value).startswith(got[1].rstrip("."))
    # the platform check disabled, it runs (the first platform's code: cos)
    free = le.export(jit(_f()), platforms=("cuda",),
                     disabled_checks=[le.DisabledSafetyCheck.platform()])(SPEC)
    np.testing.assert_allclose(free.call(X), np.cos(X) * 2, rtol=1e-6)


@requires_jax
def test_platform_dependent_eager_jit_grad_vmap_match_jax():
    f = _f()
    ref = run_jax("""
from jax import lax
scope = {"jnp": jnp, "lax": lax}
exec(src, scope)
f = scope["f"]
result = dict(eager=f(x), jit=jax.jit(f)(x), grad=jax.grad(lambda x: f(x).sum())(x),
              vmap=jax.vmap(f)(x), two=lax.platform_dependent(x, x, cpu=lambda a, b: a * b,
                                                               default=lambda a, b: a - b))
""", src=SRC, x=X)
    np.testing.assert_allclose(f(X), ref["eager"], rtol=1e-6)
    np.testing.assert_allclose(jit(f)(X), ref["jit"], rtol=1e-6)
    np.testing.assert_allclose(lc.grad(lambda x: f(x).sum())(X), ref["grad"], rtol=1e-6)
    np.testing.assert_allclose(lc.vmap(f)(X), ref["vmap"], rtol=1e-6)
    np.testing.assert_allclose(
        lax.platform_dependent(X, X, cpu=lambda a, b: a * b, default=lambda a, b: a - b),
        ref["two"], rtol=1e-6)
    jaxpr = str(lc.make_jaxpr(f)(X))
    assert "platform_index[" in jaxpr and "cond[" in jaxpr


@requires_jax
def test_missing_branch_errors_match_jax():
    src = "def f(x):\n    return lax.platform_dependent(x, cuda=jnp.sin)\n"
    scope = {"jnp": lnp, "lax": lax}
    exec(src, scope)
    ref = run_jax("""
from jax import lax
scope = {"jnp": jnp, "lax": lax}
exec(src, scope)
out = []
for platforms in (None, ("cpu", "cuda")):
    try:
        if platforms is None:
            jax.jit(scope["f"])(x)
        else:
            jax.export.export(jax.jit(scope["f"]), platforms=platforms)(
                jax.ShapeDtypeStruct((3,), jnp.float32))
        out.append(None)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
result = out
""", src=src, x=X)
    with pytest.raises(NotImplementedError) as eager:
        jit(scope["f"])(X)
    with pytest.raises(NotImplementedError) as multi:
        le.export(jit(scope["f"]), platforms=("cpu", "cuda"))(SPEC)
    for info, (kind, message) in zip((eager, multi), ref, strict=True):
        assert kind == "NotImplementedError"
        # JAX prints its params with the default-less platforms list the same way
        assert str(info.value).split("'")[0] == message.split("'")[0]
        assert str(info.value).split(" not found for ")[1] == message.split(" not found for ")[1]


def test_cpu_only_lowerings_refuse_other_platforms_unless_branched():
    # LAPACK's geev: cpu only in laminax (cholesky, lu, qr, eigh, svd and triangular_solve
    # have GPU lowerings: tests/test_export_linalg_gpu_vs_jax.py)
    eig = lambda x: lnp.linalg.eigvals(x).real  # noqa: E731
    qr = lambda x: lnp.linalg.qr(x)[0]  # noqa: E731
    spec = lc.ShapeDtypeStruct((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match=r"not found for platforms \['cuda'\]"):
        le.export(jit(eig), platforms=("cpu", "cuda"))(spec)
    g = lambda x: lax.platform_dependent(x, cpu=qr, default=lambda x: -x)  # noqa: E731
    exp = le.export(jit(g), platforms=("cpu", "cuda"))(spec)
    m = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32)
    want = np.linalg.qr(m)[0]
    got = np.asarray(le.deserialize(exp.serialize()).call(m))
    np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-5, atol=1e-6)
    cuda_only = le.export(jit(g), platforms=("cuda",))(spec)
    assert "lapack" not in cuda_only.mlir_module()
    assert "cusolver" in le.export(jit(qr), platforms=("cuda",))(spec).mlir_module()


def test_polymorphic_multiplatform_export():
    (b,) = le.symbolic_shape("b")
    exp = le.export(jit(_f()), platforms=("cpu", "cuda"))(lc.ShapeDtypeStruct((b,), np.float32))
    main = _main_line(exp)
    assert main.startswith("  func.func public @main(%arg0: tensor<i32> "
                           "{jax.global_constant = \"_platform_index\"}, %arg1: tensor<?xf32>")
    assert "call @_wrapped_jax_export_main(%arg0, " in exp.mlir_module()
    x5 = np.linspace(-1, 1, 5, dtype=np.float32)
    np.testing.assert_allclose(le.deserialize(exp.serialize()).call(x5), np.sin(x5) * 2,
                               rtol=1e-6)


def test_calling_a_multiplatform_artifact_inside_a_multiplatform_export():
    inner = le.export(jit(_f()), platforms=("tpu", "cuda", "cpu"))(SPEC)
    outer = le.export(jit(lambda x: inner.call(x) + 1.0), platforms=("cpu", "cuda"))(SPEC)
    np.testing.assert_allclose(outer.call(X), np.sin(X) * 2 + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="was exported for platforms"):
        le.export(jit(lambda x: inner.call(x)), platforms=("cpu", "rocm"))(SPEC)


@requires_jax
def test_platform_index_reaches_nested_functions_and_loops():
    # nested jit calls are private functions: the platform index is passed to them
    def g(x):
        pd = _f()
        return jit(pd)(x) + lax.scan(lambda c, r: (c + pd(r), c), np.float32(0), x)[0]

    exp = le.export(jit(g), platforms=("cuda", "cpu"))(SPEC)
    want = np.sin(X) * 2 + (np.sin(X) * 2).sum()
    np.testing.assert_allclose(exp.call(X), want, rtol=1e-5)
    got = run_jax("result = jax.export.deserialize(bytearray(blob)).call(x)",
                  blob=bytes(exp.serialize()), x=X)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_platform_index_and_dimension_variables_enter_shard_map():
    # (not run in JAX: JAX inlines a one-device shard_map and cannot run the sdy custom calls
    # of laminax's one-device shard_map artifact, with or without this)
    from laminax_dispatch import devices
    from laminax_pjit import Mesh, PartitionSpec, shard_map

    mesh = Mesh(np.array(devices()[:1]), ("i",))

    def g(x):
        body = lambda y: _f()(y) * y.shape[0]  # noqa: E731
        return shard_map(body, mesh=mesh, in_specs=PartitionSpec("i"),
                         out_specs=PartitionSpec("i"))(x)

    want = np.sin(X) * 2 * 3
    multi = le.export(jit(g), platforms=("cpu", "cuda"))(SPEC)
    (b,) = le.symbolic_shape("b")
    poly = le.export(jit(g))(lc.ShapeDtypeStruct((b,), np.float32))
    for exp in (multi, poly):
        np.testing.assert_allclose(exp.call(X), want, rtol=1e-5)
        np.testing.assert_allclose(le.deserialize(exp.serialize()).call(X), want, rtol=1e-5)
