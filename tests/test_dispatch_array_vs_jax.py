"""laminax_dispatch's Array and device queries against real JAX 0.10.2."""

import os
import subprocess
import sys

import laminax_dispatch as ld
import ml_dtypes
import numpy as np
import pytest
from jaxref import JaxReferenceError, jax_python, requires_jax, run_jax

VALUES = {
    "f32_vector": np.array([1.0, 2.0], np.float32),
    "f32_scalar": np.float32(3),
    "i32_matrix": np.arange(6, dtype=np.int32).reshape(2, 3),
    "bf16_empty": np.zeros(0, ml_dtypes.bfloat16),
    "bf16_vector": np.array([1.5, -2.25], ml_dtypes.bfloat16),
    "f8_vector": np.array([1, 2], ml_dtypes.float8_e4m3fn),
    "c64": np.array([1 + 2j], np.complex64),
    "bool_scalar": np.bool_(True),
    "long_f32": np.arange(100, dtype=np.float32),
    "wide_f32": np.linspace(-1e6, 1e6, 37).astype(np.float32).reshape(37, 1),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1e10], np.float32),
    "u8_cube": np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    "f16_scalar": np.float16(0.1),
    "f64_canonicalized": np.array([0.1, 0.2]),
}


@requires_jax
@pytest.mark.parametrize("name", sorted(VALUES))
def test_repr_and_str_match_jax(name):
    value = VALUES[name]
    expected = run_jax("x = jax.device_put(value); result = (repr(x), str(x))", value=value)
    x = ld.device_put(value)
    assert (repr(x), str(x)) == tuple(expected)


@requires_jax
@pytest.mark.parametrize("value", [3.0, 3, True, 2 + 1j, -0.0], ids=repr)
def test_python_scalars_match_jax(value):
    expected = run_jax("x = jax.device_put(value); result = (repr(x), x.weak_type)", value=value)
    x = ld.device_put(value)
    assert (repr(x), x.weak_type) == tuple(expected)


@requires_jax
def test_sharding_repr_and_committed_match_jax():
    expected = run_jax(
        "x = jax.device_put(np.ones(2, np.float32))\n"
        "y = jax.device_put(x, jax.devices()[0])\n"
        "result = (repr(x.sharding), x.committed, y.committed, x.nbytes, x.itemsize)"
    )
    x = ld.device_put(np.ones(2, np.float32))
    y = ld.device_put(x, ld.devices()[0])
    assert (repr(x.sharding), x.committed, y.committed, x.nbytes, x.itemsize) == tuple(expected)


@requires_jax
@pytest.mark.parametrize(
    "snippet",
    ["float(x)", "int(x)", "bool(x)", "len(s)", "iter(s)", "hash(x)", "x.item()", "bool(e)"],
)
def test_conversion_errors_match_jax(snippet):
    inputs = {
        "x": np.array([1.0, 2.0], np.float32),
        "s": np.float32(1),
        "e": np.zeros(0, np.float32),
    }
    source = "x, s, e = (jax.device_put(v) for v in (x, s, e))\nresult = " + snippet
    with pytest.raises(JaxReferenceError) as jax_error:
        run_jax(source, **inputs)
    scope = {k: ld.device_put(v) for k, v in inputs.items()}
    with pytest.raises(Exception) as ours:
        eval(snippet, scope)
    assert type(ours.value).__name__ == jax_error.value.type_name
    assert str(ours.value) == jax_error.value.message


@requires_jax
def test_deleted_array_message_starts_like_jax():
    with pytest.raises(JaxReferenceError) as jax_error:
        run_jax("x = jax.device_put(np.ones(2, np.float32)); x.delete(); result = np.asarray(x)")
    x = ld.device_put(np.ones(2, np.float32))
    x.delete()
    with pytest.raises(RuntimeError) as ours:
        np.asarray(x)
    assert jax_error.value.type_name == "RuntimeError"
    assert str(ours.value).startswith(jax_error.value.message)


def _count(python, package, env):
    code = (
        f"import {package} as m; print(m.device_count(), m.local_device_count(), "
        "m.default_backend(), m.process_count())"
    )
    clean = {k: v for k, v in os.environ.items() if not k.endswith("NUM_CPU_DEVICES")}
    clean.pop("XLA_FLAGS", None)
    clean.update(env, JAX_PLATFORMS="cpu", LAMINAX_PLATFORMS="cpu")
    done = subprocess.run(
        [str(python), "-c", code], env=clean, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@requires_jax
@pytest.mark.parametrize(
    "env",
    [{}, {"XLA_FLAGS": "--xla_force_host_platform_device_count=3"}, {"JAX_NUM_CPU_DEVICES": "5"}],
    ids=["default", "xla_flag", "num_cpu_devices"],
)
def test_device_counts_match_jax(env):
    assert _count(sys.executable, "laminax_dispatch", env) == _count(jax_python(), "jax", env)
