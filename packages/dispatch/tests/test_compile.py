"""Compiling and running hand-built modules; the in-memory cache, compile logs, IR dumps."""

import logging

import laminax_dispatch as ld
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ShapedArray
from laminax_core.config import config
from laminax_dispatch.internal import (
    Executable,
    build_module,
    cache_info,
    clear_caches,
    compile_module,
)


def _add_module(n=3, dtype=np.float32, name="jit_add"):
    aval = ShapedArray((n,), dtype)
    body = lambda tokens, args: (tokens, [hlo.AddOp(*args).result])  # noqa: E731
    return build_module(name, [aval, aval], [aval], body), aval


def _dot_module(m, k, n):
    lhs, rhs, out = (ShapedArray(s, np.float32) for s in ((m, k), (k, n), (m, n)))

    def body(tokens, args):
        dims = hlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=[],
            rhs_batching_dimensions=[],
            lhs_contracting_dimensions=[1],
            rhs_contracting_dimensions=[0],
        )
        from laminax_dispatch.internal import aval_to_ir_type

        return tokens, [hlo.DotGeneralOp(aval_to_ir_type(out), *args, dims).result]

    return build_module("jit_dot", [lhs, rhs], [out], body), (lhs, rhs, out)


@pytest.fixture
def option():
    """Sets config options for one test and restores them afterwards."""
    saved = {}

    def set_option(name, value):
        saved.setdefault(name, config.read(name))
        config.update(name, value)

    yield set_option
    for name, value in saved.items():
        config.update(name, value)


def test_add_matches_numpy():
    module, aval = _add_module()
    device = ld.devices()[0]
    run = Executable(compile_module(module, [device]), "jit_add", [aval, aval], [aval])
    x, y = np.arange(3, dtype=np.float32), np.full(3, 0.5, np.float32)
    (out,) = run(x, ld.device_put(y))
    assert isinstance(out, ld.Array) and out.aval == aval and not out.committed
    np.testing.assert_array_equal(np.asarray(out), x + y)


def test_dot_matches_numpy():
    module, (lhs, rhs, out_aval) = _dot_module(4, 5, 3)
    run = Executable(compile_module(module, ld.devices()[:1]), "jit_dot", [lhs, rhs], [out_aval])
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 5)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    (out,) = run(a, b)
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5, atol=1e-5)


def test_committed_outputs_when_asked():
    module, aval = _add_module()
    run = Executable(compile_module(module, ld.devices()[:1]), "jit_add", [aval, aval], [aval])
    (out,) = run(np.ones(3, np.float32), np.ones(3, np.float32), committed=True)
    assert out.committed


def test_identical_module_hits_the_in_memory_cache():
    clear_caches()
    first = compile_module(_add_module(5)[0], ld.devices()[:1])
    second = compile_module(_add_module(5)[0], ld.devices()[:1])
    assert first is second
    info = cache_info()
    assert (info["hits"], info["misses"], info["size"]) == (1, 1, 1)


def test_different_shapes_compile_separately():
    clear_caches()
    compile_module(_add_module(5)[0], ld.devices()[:1])
    compile_module(_add_module(6)[0], ld.devices()[:1])
    assert cache_info()["misses"] == 2


def test_wrong_argument_type_raises_type_error():
    module, aval = _add_module()
    run = Executable(compile_module(module, ld.devices()[:1]), "jit_add", [aval, aval], [aval])
    with pytest.raises(TypeError, match=r"compiled for argument 1 of type f32\[3\], but got"):
        run(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="compiled for 2 arguments, got 1"):
        run(np.ones(3, np.float32))


def test_deleted_argument_raises_runtime_error():
    module, aval = _add_module()
    run = Executable(compile_module(module, ld.devices()[:1]), "jit_add", [aval, aval], [aval])
    x = ld.device_put(np.ones(3, np.float32))
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        run(x, x)


def test_log_compiles_logs_name_avals_and_seconds(caplog, option):
    clear_caches()
    option("jax_log_compiles", True)
    with caplog.at_level(logging.WARNING, logger="laminax_dispatch"):
        module, aval = _add_module(7, name="jit_logged")
        compile_module(module, ld.devices()[:1], in_avals=[aval, aval])
    (record,) = [r for r in caplog.records if "jit_logged" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "for [f32[7], f32[7]] in" in record.getMessage()
    assert record.getMessage().endswith(" sec")


def test_compiles_are_not_logged_at_warning_by_default(caplog):
    clear_caches()
    with caplog.at_level(logging.WARNING, logger="laminax_dispatch"):
        compile_module(_add_module(8, name="jit_quiet")[0], ld.devices()[:1])
    assert not [r for r in caplog.records if "jit_quiet" in r.getMessage()]


def test_dump_ir_writes_each_module_with_locations(tmp_path, option):
    clear_caches()
    option("jax_dump_ir_to", str(tmp_path))
    compile_module(_add_module(9, name="jit_dumped")[0], ld.devices()[:1])
    compile_module(_add_module(10, name="jit_dumped")[0], ld.devices()[:1])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == "jit_dumped.0.mlir" or files == ["jit_dumped.mlir", files[1]]
    assert len(files) == 2
    text = (tmp_path / "jit_dumped.mlir").read_text()
    assert "module @jit_dumped" in text and "tensor<9xf32>" in text and "loc(" in text


def test_xla_rejecting_a_module_raises_runtime_error():
    aval = ShapedArray((3,), np.float32)
    module = build_module(
        "jit_custom",
        [aval],
        [aval],
        lambda t, a: (
            t,
            [hlo.CustomCallOp([a[0].type], a, call_target_name="laminax_no_such_target").result],
        ),
    )
    with pytest.raises(RuntimeError, match="XLA could not compile the module"):
        compile_module(module, ld.devices()[:1])


def test_compile_options_follow_jax_config_options():
    # JAX 0.10.2's defaults (memory fitting O2, no AutoFDO profile: -1) and its option names
    from laminax_dispatch._compile import compile_options

    build = compile_options(ld.devices()[:1]).executable_build_options
    assert (build.memory_fitting_level, build.optimization_level) == (29, 0)
    assert compile_options(ld.devices()[:1]).profile_version == -1
    saved = {
        name: getattr(config, name)
        for name in (
            "jax_memory_fitting_level", "jax_optimization_level",
            "jax_exec_time_optimization_effort", "jax_xla_profile_version",
            "jax_compiler_enable_remat_pass",
        )
    }  # fmt: skip
    try:
        config.update("jax_memory_fitting_level", "O1")
        config.update("jax_optimization_level", "O3")
        config.update("jax_exec_time_optimization_effort", 0.5)
        config.update("jax_xla_profile_version", 7)
        config.update("jax_compiler_enable_remat_pass", False)
        options = compile_options(ld.devices()[:1])
        build = options.executable_build_options
        assert (build.memory_fitting_level, build.optimization_level) == (19, 39)
        assert build.exec_time_optimization_effort == 0.5
        assert options.profile_version == 7
        assert build.debug_options.xla_disable_hlo_passes == "rematerialization"
        with pytest.raises(ValueError):
            config.update("jax_memory_fitting_level", "O9")
    finally:
        for name, value in saved.items():
            config.update(name, value)


def test_compile_options_allow_propagation_per_argument():
    from laminax_dispatch._compile import compile_options

    options = compile_options(
        ld.devices()[:1], propagate_to_inputs=[False, True], propagate_to_outputs=[True]
    )
    build = options.executable_build_options
    assert build.allow_spmd_sharding_propagation_to_parameters == [False, True]
    assert build.allow_spmd_sharding_propagation_to_output == [True]
