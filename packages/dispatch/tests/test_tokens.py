"""Runtime tokens: computations with ordered effects chain their token buffers."""

import laminax_dispatch as ld
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ShapedArray
from laminax_dispatch.internal import (
    Executable,
    build_module,
    compile_module,
    effects_barrier,
    runtime_tokens,
)

F32_3 = ShapedArray((3,), np.float32)


def _token_add(effects=("io",)):
    module = build_module(
        "jit_effectful_add",
        [F32_3, F32_3],
        [F32_3],
        lambda toks, args: (toks, [hlo.AddOp(*args).result]),
        num_tokens=len(effects),
    )
    return Executable(
        compile_module(module, ld.devices()[:1]),
        "jit_effectful_add",
        [F32_3, F32_3],
        [F32_3],
        ordered_effects=effects,
    )


@pytest.fixture(autouse=True)
def _fresh_tokens():
    effects_barrier()
    yield
    effects_barrier()


def test_effectful_computation_returns_correct_outputs():
    run = _token_add()
    (out,) = run(np.arange(3, dtype=np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])


def test_first_call_creates_a_token_and_records_the_result_token():
    run = _token_add()
    assert "io" not in runtime_tokens.current_tokens
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    token = runtime_tokens.current_tokens["io"]
    assert token.shape == (0,) and token.dtype == np.bool_
    assert ld.devices()[0] in runtime_tokens.output_runtime_tokens


def test_each_call_consumes_the_previous_calls_token(monkeypatch):
    run = _token_add()
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    first_result = runtime_tokens.current_tokens["io"]
    passed = []
    original = runtime_tokens.get_token_input

    def spy(effect, device):
        token = original(effect, device)
        passed.append(token)
        return token

    monkeypatch.setattr(runtime_tokens, "get_token_input", spy)
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    assert passed == [first_result]
    assert runtime_tokens.current_tokens["io"] is not first_result


def test_two_effects_get_two_tokens():
    run = _token_add(effects=("print", "io"))
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    assert set(runtime_tokens.current_tokens) == {"print", "io"}


def test_effects_barrier_waits_and_forgets_tokens():
    run = _token_add()
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    effects_barrier()
    assert runtime_tokens.current_tokens == {}
    assert runtime_tokens.output_runtime_tokens == {}


def test_computations_without_effects_leave_tokens_alone():
    module = build_module(
        "jit_pure", [F32_3, F32_3], [F32_3], lambda toks, args: (toks, [hlo.AddOp(*args).result])
    )
    run = Executable(compile_module(module, ld.devices()[:1]), "jit_pure", [F32_3, F32_3], [F32_3])
    run(np.ones(3, np.float32), np.ones(3, np.float32))
    assert runtime_tokens.current_tokens == {}


def test_host_callback_modules_record_a_runtime_token_without_ordered_effects():
    module = build_module(
        "jit_cb", [F32_3, F32_3], [F32_3], lambda toks, args: (toks, [hlo.AddOp(*args).result])
    )
    run = Executable(
        compile_module(module, ld.devices()[:1]),
        "jit_cb",
        [F32_3, F32_3],
        [F32_3],
        has_host_callbacks=True,
    )
    (out,) = run(np.ones(3, np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0, 2.0])
    assert runtime_tokens.current_tokens == {}
    assert ld.devices()[0] in runtime_tokens.output_runtime_tokens
