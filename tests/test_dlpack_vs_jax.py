"""`jax.dlpack` / `jnp.from_dlpack` against real JAX 0.10.2: memory shared with the producer on
CPU (NumPy, an Array, any object with the protocol), copies when asked, dtype canonicalization,
placement and commitment, `is_supported_dtype`, and the errors."""

from __future__ import annotations

import numpy as np
from jaxref import requires_jax, run_jax

import laminax
import laminax.numpy as lnp

SNIPPET = """
def aligned(values):
    # XLA's CPU runtime uses a producer's memory in place only when it is 64-byte aligned
    values = np.asarray(values, np.float32)
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + values.nbytes].view(np.float32).reshape(values.shape)
    out[...] = values
    return out

class Producer:  # any object with the protocol, wrapping a NumPy array
    def __init__(self, array):
        self.array = array
    def __dlpack__(self, stream=None, **kwargs):
        return self.array.__dlpack__(stream=stream, **kwargs)
    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

def outcome(thunk):
    try:
        return ("ok", thunk())
    except Exception as e:
        return (type(e).__name__,)

def shared(make):
    src = aligned(np.arange(6).reshape(2, 3))
    x = make(src)
    src[0, 0] = 42.0
    return (np.asarray(x).tolist(), x.dtype.name, x.shape, x.committed)

dev = jax.devices()[0]
result = {
    "numpy": shared(jax.dlpack.from_dlpack),
    "jnp": shared(jnp.from_dlpack),
    "producer": shared(lambda a: jax.dlpack.from_dlpack(Producer(a))),
    "device": shared(lambda a: jax.dlpack.from_dlpack(a, device=dev)),
    "sharding": shared(lambda a: jax.dlpack.from_dlpack(
        a, device=jax.sharding.SingleDeviceSharding(dev))),
    "copy": shared(lambda a: jax.dlpack.from_dlpack(a, copy=True)),
    "copy False": shared(lambda a: jax.dlpack.from_dlpack(a, copy=False)),
    "int64": outcome(lambda: (lambda x: (x.dtype.name, x.tolist()))(
        jnp.from_dlpack(np.arange(4, dtype=np.int64)))),
    "float64": outcome(lambda: (lambda x: (x.dtype.name, x.tolist()))(
        jax.dlpack.from_dlpack(np.linspace(0, 1, 3)))),
    "bool": outcome(lambda: jax.dlpack.from_dlpack(np.array([True, False])).tolist()),
    "array": outcome(lambda: jax.dlpack.from_dlpack(jnp.arange(3.0) * 2).tolist()),
    "numpy of Array": np.from_dlpack(jnp.arange(3.0) + 1).tolist(),
    "device tuple": tuple(int(v) for v in jnp.arange(3.0).__dlpack_device__()),
    "list": outcome(lambda: jax.dlpack.from_dlpack([1.0, 2.0])),
    "supported": [jax.dlpack.is_supported_dtype(d) for d in
                  ("int8", "uint64", "bfloat16", "float16", "float64", "complex128", "bool",
                   "float8_e4m3fn", "int4", np.object_, np.str_)],
    "supported None": outcome(lambda: jax.dlpack.is_supported_dtype(None)),
}
"""


def _run_laminax():
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(SNIPPET, scope)
    return scope["result"]


@requires_jax
def test_dlpack_matches_jax():
    expected = run_jax(SNIPPET)
    got = _run_laminax()
    mismatched = {k: (got[k], expected[k]) for k in expected if got[k] != expected[k]}
    assert not mismatched
    # not vacuous: the in-place write shows through the zero-copy import (in JAX 0.10.2 on CPU
    # even with copy=True, which the comparison above holds laminax to)
    assert got["numpy"][0][0][0] == 42.0 and got["producer"][0][0][0] == 42.0
    assert got["int64"] == ("ok", ("int32", [0, 1, 2, 3]))
