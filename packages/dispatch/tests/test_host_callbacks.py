"""Host callbacks from compiled code: a rule emits XLA's FFI Python callback, the module records
the function, and ordered effects make the calls happen in program order across executions."""

import numpy as np
import pytest
from jaxlib import _jax
from laminax_core import make_jaxpr
from laminax_core.internal import Effect, Primitive, lowerable_effects, ordered_effects
from laminax_dispatch import devices, effects_barrier, jit, register_lowering
from laminax_dispatch.internal import Executable, emit_python_callback, lower_jaxpr

F32 = np.float32


class HostLogEffect(Effect):
    """An ordered effect whose lowering calls Python on the host."""


ordered_effects.add_type(HostLogEffect)
lowerable_effects.add_type(HostLogEffect)
EFFECT = HostLogEffect()
LOG: list = []

host_log_p = Primitive("host_log")
host_log_p.def_effectful_abstract_eval(lambda x: (x, {EFFECT}))


def _record(value):
    LOG.append(np.array(value))
    return (value,)


def _host_log_lower(ctx, x):
    outs, token = emit_python_callback(
        ctx, _record, [x], ctx.avals_in, token=ctx.tokens_in[EFFECT]
    )
    ctx.tokens_out = {**ctx.tokens_in, EFFECT: token}
    return outs[0]


register_lowering(host_log_p, _host_log_lower)


def _compile(lowering):
    device_list = _jax.DeviceList(tuple(devices()[:1]))
    loaded = devices()[0].client.compile_and_load(
        lowering.module, device_list, _jax.CompileOptions(), lowering.host_callbacks
    )
    return Executable(
        loaded,
        lowering.name,
        lowering.in_avals,
        lowering.out_avals,
        ordered_effects=lowering.ordered_effects,
        has_host_callbacks=True,
    )


@pytest.fixture(autouse=True)
def _fresh_log():
    effects_barrier()
    LOG.clear()
    yield
    effects_barrier()


def test_lowering_records_the_callback_and_names_it_by_index():
    closed = make_jaxpr(lambda x: host_log_p.bind(x) * 2.0)(F32(1))
    lowering = lower_jaxpr(closed, name="jit_f", ordered=[EFFECT])
    assert len(lowering.host_callbacks) == 1
    text = str(lowering.module)
    assert "xla_ffi_python_cpu_callback" in text
    assert "index = 0 : ui64" in text


def test_callbacks_run_in_program_order_across_asynchronous_calls():
    closed = make_jaxpr(lambda x: host_log_p.bind(x) * 2.0)(F32(1))
    run = _compile(lower_jaxpr(closed, name="jit_f", ordered=[EFFECT]))
    outs = [run(F32(i))[0] for i in range(30)]
    effects_barrier()
    assert [float(v) for v in LOG] == list(range(30))
    assert [float(o) for o in outs] == [2.0 * i for i in range(30)]


def test_a_callback_returning_the_wrong_shape_raises_with_both_shapes():
    def bad(ctx, x):
        outs, _ = emit_python_callback(ctx, lambda v: (np.zeros(2, F32),), [x], ctx.avals_in)
        return outs[0]

    bad_p = Primitive("bad_host_call")
    bad_p.def_abstract_eval(lambda x: x)
    register_lowering(bad_p, bad)
    closed = make_jaxpr(lambda x: bad_p.bind(x))(np.ones(3, F32))
    run = _compile(lower_jaxpr(closed, name="jit_bad"))
    with pytest.raises(Exception, match=r"result 0 is float32\[2\], expected float32\[3\]"):
        np.asarray(run(np.ones(3, F32))[0])


def test_jitted_calls_log_in_program_order_and_keep_their_results():
    f = jit(lambda x: host_log_p.bind(x) + 1.0)
    outs = [f(F32(i)) for i in range(30)]
    effects_barrier()
    assert [float(v) for v in LOG] == list(range(30))
    assert [float(o) for o in outs] == [i + 1.0 for i in range(30)]


def test_eager_and_jitted_effects_interleave_in_program_order():
    f = jit(lambda x: host_log_p.bind(x * 10.0))
    for i in range(5):
        f(F32(i))
        host_log_p.bind(F32(-i))
    effects_barrier()
    assert [float(v) for v in LOG] == [0, 0, 10, -1, 20, -2, 30, -3, 40, -4]


def test_modules_with_callbacks_are_never_written_to_the_persistent_cache(tmp_path):
    from laminax_core.config import config

    saved = (config.jax_compilation_cache_dir, config.jax_persistent_cache_min_compile_time_secs)
    config.update("jax_compilation_cache_dir", str(tmp_path))
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        jit(lambda x: host_log_p.bind(x) * 3.0)(F32(2))
        jit(lambda x: x * 3.0)(F32(2))  # a pure module in the same setting is written
    finally:
        config.update("jax_compilation_cache_dir", saved[0])
        config.update("jax_persistent_cache_min_compile_time_secs", saved[1])
    effects_barrier()
    assert [float(v) for v in LOG] == [2.0]
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 1
