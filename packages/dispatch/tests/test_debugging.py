"""Debugging options under jit: debug_nans/debug_infs name the primitive and the line,
log_compiles logs each jit compilation, dump_ir_to writes each module, and the persistent
compilation cache serves jit across processes."""

import contextlib
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from laminax_core import config, lax
from laminax_dispatch import jit

F32 = np.float32


@contextlib.contextmanager
def option(name, value):
    previous = getattr(config.config, name)
    config.config.update(name, value)
    try:
        yield
    finally:
        config.config.update(name, previous)


def _log_of_zero(x):
    y = x * 2.0
    z = lax.log(y - y)  # the line debug_nans must name
    return z + 1.0


def test_debug_nans_eager_names_the_primitive():
    with config.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in sqrt"):
            lax.sqrt(np.float32(-1))


def test_debug_nans_under_jit_reruns_op_by_op_and_names_primitive_and_line():
    f = jit(lambda x: lax.sqrt(x) + 1.0)
    with config.debug_nans(True):
        with pytest.raises(
            FloatingPointError,
            match=r"invalid value \(nan\) encountered in sqrt, "
            r"from .*test_debugging.py:\d+",
        ):
            f(np.array([1.0, -1.0], F32))


def test_debug_nans_with_donation_keeps_the_donated_input_for_the_rerun():
    from laminax_dispatch import device_put

    f = jit(lambda x: lax.sqrt(x) + 1.0, donate_argnums=0)
    with config.debug_nans(True):
        for _ in range(2):  # the Python path, then whatever jaxlib's fast path would do
            x = device_put(np.array([1.0, -1.0], F32))
            with pytest.raises(FloatingPointError,
                               match=r"invalid value \(nan\) encountered in sqrt, from "):
                f(x)


def test_debug_nans_says_when_the_deoptimized_rerun_does_not_reproduce():
    # a NaN constant returned as an output: no primitive produces it when re-run op by op
    f = jit(lambda x: (x, np.float32(np.nan)))
    with config.debug_nans(True):
        with pytest.raises(FloatingPointError, match="the de-optimized function .* produced "
                                                     "no invalid value"):
            f(np.float32(1.0))


def test_debug_infs_under_jit_names_log_and_its_line():
    with config.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log") as info:
            jit(_log_of_zero)(np.ones(2, F32))
    line = _log_of_zero.__code__.co_firstlineno + 2
    assert f"test_debugging.py:{line}" in str(info.value)


def test_without_debug_nans_nan_results_are_returned():
    out = jit(lambda x: lax.sqrt(x))(np.float32(-1))
    assert np.isnan(float(out))


def test_log_compiles_logs_function_avals_and_seconds(caplog):
    def traced_fn(x, y):
        return x @ y

    with option("jax_log_compiles", True), caplog.at_level(logging.WARNING):
        jit(traced_fn)(np.ones((2, 3), F32), np.ones((3, 4), F32))
    messages = [r.getMessage() for r in caplog.records if r.name == "laminax_dispatch.jit"]
    assert len(messages) == 2  # tracing, then compiling (as JAX logs both)
    assert messages[0].startswith("Finished tracing + transforming traced_fn for pjit in ")
    assert "jit(traced_fn)" in messages[1] and "[f32[2,3], f32[3,4]]" in messages[1]
    assert all(m.rstrip().endswith("sec") for m in messages)


def test_log_compiles_off_logs_nothing_at_warning(caplog):
    with caplog.at_level(logging.WARNING):
        jit(lambda x: x - 3.0)(np.ones(7, F32))
    assert not [r for r in caplog.records if r.name == "laminax_dispatch.jit"]


def test_dump_ir_to_writes_each_jit_module(tmp_path):
    def dumped_fn(x):
        return lax.exp(x)

    with option("jax_dump_ir_to", str(tmp_path)):
        jit(dumped_fn)(np.ones(3, F32))
    files = list(tmp_path.glob("jit_dumped_fn*.mlir"))
    assert len(files) == 1
    text = files[0].read_text()
    assert "stablehlo.exponential" in text and "jit(dumped_fn)/exp" in text


CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from laminax_core import config
    from laminax_dispatch import jit
    from laminax_dispatch.internal import cache_info
    config.update("jax_compilation_cache_dir", sys.argv[1])
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    out = jit(lambda x: (x * 3.0 + 1.0).sum())(np.arange(4, dtype=np.float32))
    print(float(out), cache_info()["disk_hits"])
""")


def _run_child(cache_dir) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(cache_dir)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_persistent_cache_serves_jit_across_processes(tmp_path):
    assert _run_child(tmp_path) == "22.0 0"
    assert list(tmp_path.iterdir())
    assert _run_child(tmp_path) == "22.0 1"
