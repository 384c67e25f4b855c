"""jax_default_device and its context, log_compiles as a context with the tracing-time line,
clear_caches, jit(backend=) committing its outputs (the seed dispatch.py's behaviour)."""

import logging

import laminax_dispatch as ld
import numpy as np
from laminax_core.config import config

X = np.ones(3, np.float32)


def test_default_device_context_moves_uncommitted_work_and_jit_follows_it():
    devices = ld.devices()
    assert len(devices) >= 3
    f = ld.jit(lambda x: x * 2)
    assert f(X).devices() == {devices[0]}
    for target in (devices[2], devices[1]):
        with ld.default_device(target):
            out = f(X)  # the fast path must not reuse the entry placed on device 0
            assert out.devices() == {target} and not out.committed
            assert ld.device_put(1.0).devices() == {target}
    assert f(X).devices() == {devices[0]}


def test_default_device_config_option_and_platform_names():
    devices = ld.devices()
    config.update("jax_default_device", devices[1])
    try:
        assert ld.device_put(X).devices() == {devices[1]}
    finally:
        config.update("jax_default_device", None)
    with ld.default_device("cpu"):
        assert ld.device_put(X).devices() == {devices[0]}
    assert ld.device_put(X).devices() == {devices[0]}


def test_default_device_refuses_other_values():
    import pytest

    with pytest.raises(ValueError, match="jax_default_device must be a Device"):
        config.update("jax_default_device", 3)


def test_log_compiles_context_logs_tracing_and_compiling(caplog):
    with caplog.at_level(logging.WARNING), ld.log_compiles():
        ld.jit(lambda x: x - 7)(X)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing + transforming <lambda> for pjit in") for m in
               messages), messages
    assert any(m.startswith("Compiling jit(<lambda>) with argument avals [f32[3]]") for m in
               messages), messages
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        ld.jit(lambda x: x - 8)(X)  # off again outside the context
    assert not caplog.records


def test_clear_caches_forgets_compiled_signatures():
    from laminax_dispatch.internal import cache_info

    f = ld.jit(lambda x: x + 41)
    f(X)
    assert f._cache_size() == 1
    ld.clear_caches()
    assert f._cache_size() == 0 and cache_info()["size"] == 0
    np.testing.assert_array_equal(f(X), X + 41)  # and it still works, recompiled
    assert f._cache_size() == 1


def test_jit_backend_commits_its_outputs_as_the_seed_does():
    out = ld.jit(lambda x: x + 1, backend="cpu")(X)
    assert out.committed and out.devices() == {ld.devices()[0]}
    assert not ld.jit(lambda x: x + 1)(X).committed


def test_trivial_computations_are_not_compiled_and_return_fresh_buffers():
    from laminax_dispatch.internal import cache_info

    x = ld.device_put(X)
    ld.clear_caches()
    forward = ld.jit(lambda a, b: (b, a, 2.0, a))
    outs = forward(x, 3)
    assert cache_info()["misses"] == 0  # nothing compiled
    np.testing.assert_array_equal(outs[1], X)
    assert outs[0].weak_type and outs[2].weak_type and outs[1].dtype == np.float32
    # fresh buffers, as a compiled program's outputs: deleting one leaves the input alone
    outs[1].delete()
    np.testing.assert_array_equal(x, X)
    assert outs[3] is not x
    # the AOT stages still compile it on demand
    np.testing.assert_array_equal(forward.lower(x, 3).compile()(x, 3)[1], X)


def test_the_shared_executable_cache_is_bounded_by_bytes(monkeypatch):
    from laminax_dispatch import _compile
    from laminax_dispatch.internal import cache_info

    ld.clear_caches()
    budget = 4 * _compile._DEFAULT_EXECUTABLE_BYTES
    monkeypatch.setattr(_compile, "_CACHE_BYTES", budget)
    for i in range(12):  # twelve distinct programs (the constant differs)
        np.testing.assert_array_equal(ld.jit(lambda x, i=i: x * 2 + i)(X), X * 2 + i)
    info = cache_info()
    assert info["misses"] == 12
    assert info["size"] == 4 and info["bytes"] <= budget
    # a live function keeps its own executable: evicted from the shared cache, it still runs
    keep = ld.jit(lambda x: x * 5)
    keep(X)
    for i in range(6):
        ld.jit(lambda x, i=i: x - i)(X)
    misses = cache_info()["misses"]
    np.testing.assert_array_equal(keep(X), X * 5)
    assert cache_info()["misses"] == misses


def test_live_functions_share_executables_beyond_the_byte_budget(monkeypatch):
    from laminax_dispatch import _compile
    from laminax_dispatch.internal import cache_info

    ld.clear_caches()
    monkeypatch.setattr(_compile, "_CACHE_BYTES", 0)  # nothing unheld is kept
    def make(i):  # one source location: the modules differ only in the constant
        return ld.jit(lambda x: x * 3 + i)

    def call(f):  # one call site too (modules carry their caller's location)
        return f(X)

    live = [make(i) for i in range(5)]
    for i, f in enumerate(live):
        np.testing.assert_array_equal(call(f), X * 3 + i)
    # held by live functions: kept whatever the budget, and a new function compiling the same
    # module shares the executable instead of compiling again
    assert cache_info()["size"] == 5
    misses = cache_info()["misses"]
    np.testing.assert_array_equal(call(make(2)), X * 3 + 2)
    assert cache_info()["misses"] == misses and cache_info()["hits"] >= 1
    # dropped (no cyclic GC needed: a jitted function is not part of a reference cycle)
    del live, f
    assert cache_info()["size"] == 0
