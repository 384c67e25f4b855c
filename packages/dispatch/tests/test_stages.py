"""Ahead-of-time stages: trace -> Traced, lower -> Lowered, compile -> Compiled, eval_shape."""

import laminax_dispatch as ld
import numpy as np
import pytest
from jaxlib.mlir import ir
from laminax_core import ShapeDtypeStruct
from laminax_core import config as core_config
from laminax_dispatch import jit, stages

F32 = np.float32


def f(x, y):
    return {"a": x * 2.0, "b": (x + y).sum()}


def test_trace_gives_the_jaxpr_and_out_info():
    traced = jit(f).trace(np.ones(3, F32), np.ones(3, F32))
    assert isinstance(traced, stages.Traced)
    assert "mul" in str(traced.jaxpr) and "reduce_sum" in str(traced.jaxpr)
    assert traced.out_info == {"a": ShapeDtypeStruct((3,), F32), "b": ShapeDtypeStruct((), F32)}


def test_lower_gives_stablehlo_text_and_an_mlir_module():
    lowered = jit(f).lower(np.ones(3, F32), np.ones(3, F32))
    assert isinstance(lowered, stages.Lowered)
    text = lowered.as_text()
    assert text.startswith("module @jit_f")
    assert "func.func public @main" in text and "stablehlo.multiply" in text
    assert isinstance(lowered.compiler_ir(), ir.Module)
    assert str(lowered.in_tree) == "PyTreeDef(((*, *), {}))"
    assert lowered.out_info["b"].shape == ()


def test_lowered_text_with_debug_info_has_locations():
    text = jit(f).lower(np.ones(3, F32), np.ones(3, F32)).as_text(debug_info=True)
    assert "jit(f)/mul" in text and "test_stages.py" in text


def test_unknown_dialect_raises():
    with pytest.raises(ValueError, match="unknown dialect 'tosa'"):
        jit(f).lower(np.ones(3, F32), np.ones(3, F32)).as_text("tosa")


def test_compiled_runs_and_reports():
    compiled = jit(f).lower(np.ones(3, F32), np.ones(3, F32)).compile()
    assert isinstance(compiled, stages.Compiled)
    out = compiled(np.arange(3, dtype=F32), np.ones(3, F32))
    np.testing.assert_array_equal(out["a"], [0, 2, 4])
    assert "HloModule" in compiled.as_text()
    assert "bytes accessed" in compiled.cost_analysis() or compiled.cost_analysis() != {}
    assert compiled.memory_analysis().argument_size_in_bytes == 24
    (shardings, kw) = compiled.input_shardings
    assert kw == {} and len(shardings) == 2
    assert shardings[0] == ld.SingleDeviceSharding(ld.devices()[0])
    assert set(compiled.output_shardings) == {"a", "b"}


def test_compiled_with_other_avals_raises_listing_both_signatures():
    compiled = jit(lambda x: x * 2).lower(F32(1)).compile()
    with pytest.raises(
        TypeError,
        match=r"Argument 'x' compiled with float32\[\] and called "
        r"with float32\[3\]",
    ):
        compiled(np.ones(3, F32))


def test_compiled_takes_only_dynamic_arguments():
    compiled = jit(lambda x, n: x * n, static_argnums=1).lower(F32(1), 3).compile()
    assert float(compiled(F32(2))) == 6.0
    with pytest.raises(TypeError, match="compiled for arguments with tree"):
        compiled(F32(2), 3)


def test_eval_shape_runs_nothing():
    calls = []

    def g(x):
        calls.append(1)
        return {"y": x[:2] * 2}

    shapes = jit(g).eval_shape(np.ones(5, F32))
    assert shapes == {"y": ShapeDtypeStruct((2,), F32)}
    assert jit(lambda x: x * 2).eval_shape(1.0) == ShapeDtypeStruct((), F32, weak_type=True)



def test_compiled_calls_take_the_cpp_fast_path_and_still_check_arguments(monkeypatch):
    misses = []
    original = stages.Compiled._cache_miss

    def counted(self, *args, **kwargs):
        misses.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(stages.Compiled, "_cache_miss", counted)
    compiled = jit(lambda x, y: x * 2.0 + y).lower(np.ones(3, F32), np.ones(3, F32)).compile()
    x, y = ld.device_put(np.arange(3, dtype=F32)), ld.device_put(np.ones(3, F32))
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x, y), [1, 3, 5])
    assert len(misses) == 1  # the first call; the others ran in C++
    # once the fast path has an entry, wrong calls still get the Python path's errors
    with pytest.raises(TypeError, match="compiled with float32"):
        compiled(np.ones(4, F32), y)
    with pytest.raises(TypeError, match="compiled for arguments with tree"):
        compiled(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        compiled(x, y)


def test_compiled_checks_nans_when_asked_after_fast_calls():
    compiled = jit(lambda x: x / x).lower(np.ones(2, F32)).compile()
    zeros = ld.device_put(np.zeros(2, F32))
    assert np.isnan(np.asarray(compiled(zeros))).all()  # the fast path has its entry now
    with core_config.debug_nans(True), pytest.raises(FloatingPointError):
        compiled(zeros)
