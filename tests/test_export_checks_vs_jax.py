"""laminax_export's safety checks against real JAX 0.10.2: host callbacks cannot be exported
(JAX's error), with either API."""

import laminax_export as le
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import ShapeDtypeStruct
from laminax_dispatch import jit
from laminax_export import seed
from laminax_hostcb import io_callback, pure_callback


def with_pure_callback(x):
    return pure_callback(lambda a: np.sin(a), ShapeDtypeStruct(x.shape, x.dtype), x)


def with_io_callback(x):
    return io_callback(lambda a: np.cos(a), ShapeDtypeStruct(x.shape, x.dtype), x) * 2


@requires_jax
@pytest.mark.parametrize("fun, kind", [(with_pure_callback, "pure"), (with_io_callback, "io")])
def test_host_callbacks_cannot_be_exported(fun, kind):
    got = run_jax("""
def f(x):
    cb = jax.pure_callback if kind == "pure" else jax.experimental.io_callback
    return cb(lambda a: np.sin(a), jax.ShapeDtypeStruct(x.shape, x.dtype), x)
import jax.experimental
checks = [jax.export.DisabledSafetyCheck.custom_call("xla_ffi_python_cpu_callback")]
result = []
for disabled in ([], checks):
    try:
        jax.export.export(jax.jit(f), disabled_checks=disabled)(
            jax.ShapeDtypeStruct((3,), np.float32))
        result.append(None)
    except Exception as e:
        result.append((type(e).__name__, str(e)))
""", kind=kind)
    spec = ShapeDtypeStruct((3,), np.float32)
    checks = [le.DisabledSafetyCheck.custom_call("xla_ffi_python_cpu_callback")]
    for (type_name, message), disabled in zip(got, ([], checks), strict=True):
        with pytest.raises(NotImplementedError) as info:
            le.export(jit(fun), disabled_checks=disabled)(spec)
        assert type(info.value).__name__ == type_name
        assert str(info.value).startswith(message)
    with pytest.raises(NotImplementedError, match="host_callbacks"):
        seed.export(fun, strict_checks=False)(spec)
