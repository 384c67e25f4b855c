"""Host callbacks in programs over 8 CPU devices against JAX 0.10.2: under jit with sharded
arguments the callback runs once with whole values; under pmap and shard_map once per device
with its slice; ordered effects over several devices are allowed for io_callback and refused
for debug.print. Each program runs under real JAX (8 devices) and under laminax."""

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax.experimental import io_callback

PRELUDE = """
import functools
Mesh, NamedSharding, P = jax.sharding.Mesh, jax.sharding.NamedSharding, jax.sharding.PartitionSpec
F32 = np.float32
mesh = Mesh(np.array(jax.devices()[:8]), ("d",))
sharded = jax.device_put(np.arange(16, dtype=F32), NamedSharding(mesh, P("d")))
def error_of(fn):
    try:
        fn()
    except Exception as err:
        return type(err).__name__, str(err).splitlines()[0][:60]
    return None
"""

PROGRAMS = {
    "jit_over_8_devices_calls_back_once_with_whole_values": """
seen = []
def cb(x):
    seen.append(np.asarray(x).tolist())
    return np.asarray(x) * 2
spec = jax.ShapeDtypeStruct((16,), F32)
out = jax.jit(lambda x: jax.pure_callback(cb, spec, x))(sharded)
io = jax.jit(lambda x: io_callback(cb, spec, x + 1))(sharded)
jax.jit(lambda x: jax.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), x.sum()))(sharded)
jax.effects_barrier()
result = [seen, np.asarray(out), np.asarray(io)]
""",
    "ordered_io_callback_over_8_devices": """
log = []
f = jax.jit(lambda x: io_callback(lambda v: log.append(float(v)), None, x.sum(), ordered=True))
g = jax.jit(lambda x: io_callback(lambda v: log.append(-float(v)), None, x, ordered=True))
for i in range(3):
    f(sharded * i)
    g(F32(i))
jax.effects_barrier()
result = log
""",
    "ordered_debug_print_over_8_devices_is_refused": """
result = error_of(lambda: jax.jit(lambda x: jax.debug.print("{}", x, ordered=True))(sharded))
""",
    "pmap_calls_back_once_per_device": """
seen = []
def cb(x):
    seen.append(np.asarray(x).tolist())
    return np.asarray(x) + 1
spec = jax.ShapeDtypeStruct((2,), F32)
x = np.arange(8, dtype=F32).reshape(4, 2)
out = jax.pmap(lambda v: jax.pure_callback(cb, spec, v))(x)
out2 = jax.pmap(lambda v: io_callback(cb, spec, v * 10))(x)
jax.effects_barrier()
result = [sorted(seen), np.asarray(out), np.asarray(out2)]
""",
    "shard_map_calls_back_per_device_with_local_shards": """
seen = []
m4 = Mesh(np.array(jax.devices()[:4]), ("d",))
f = jax.shard_map(lambda v: (jax.debug.callback(lambda a: seen.append(np.asarray(a).tolist()), v), v * 2)[1],
                  mesh=m4, in_specs=P("d"), out_specs=P("d"))
out = jax.jit(f)(np.arange(8, dtype=F32))
jax.effects_barrier()
result = [sorted(seen), np.asarray(out)]
""",
    "partitioned_debug_callback_sees_local_shards": """
seen = []
def cb(a):
    seen.append(("p", np.asarray(a).tolist()))
def cb_whole(a):
    seen.append(("w", np.asarray(a).tolist()))
x2 = jax.device_put(np.arange(16, dtype=F32).reshape(8, 2), NamedSharding(mesh, P("d")))
jax.jit(lambda v: jax.debug.callback(cb, v * 2, partitioned=True))(x2)
jax.jit(lambda v: jax.debug.callback(cb_whole, v * 2, partitioned=False))(x2)
f = jax.shard_map(lambda v: (jax.debug.callback(cb, v + 1, partitioned=True), v)[1],
                  mesh=mesh, in_specs=P("d"), out_specs=P("d"))
jax.jit(f)(x2)
jax.effects_barrier()
result = sorted(map(str, seen))
""",
}


def _exec_laminax(source: str):
    scope = {"jax": laminax, "jnp": lnp, "np": np, "io_callback": io_callback}
    exec(PRELUDE + source, scope)
    return scope["result"]


def _assert_same(ours, theirs, where="result"):
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-6, err_msg=where)
    elif isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs), f"{where}: {ours!r} != {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sharded_program_matches_jax(name):
    if len(laminax.devices()) < 8:
        pytest.skip("needs 8 CPU devices (the root conftest sets them)")
    source = PROGRAMS[name]
    expected = run_jax("from jax.experimental import io_callback\n" + PRELUDE + source, devices=8)
    _assert_same(_exec_laminax(source), expected)
