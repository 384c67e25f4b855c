"""Host callbacks in programs over several devices (8 virtual CPU devices): under pjit the
operand is collected to one device and the callback runs once, on the first device of the
program; under pmap and shard_map each device calls back with its own slice (the seed's and
JAX's rules)."""

import threading

import numpy as np
import pytest
from laminax_core import ShapeDtypeStruct, vmap
from laminax_dispatch import device_put, devices, effects_barrier, jit
from laminax_hostcb import debug_callback, debug_print, io_callback, pure_callback
from laminax_hostcb import host_callback as hcb
from laminax_pjit import Mesh, NamedSharding, P, pmap, shard_map

F32 = np.float32
pytestmark = pytest.mark.skipif(len(devices()) < 8, reason="needs 8 CPU devices")


@pytest.fixture
def sharded_x():
    mesh = Mesh(np.array(devices()[:8]), ("d",))
    return device_put(np.arange(16, dtype=F32), NamedSharding(mesh, P("d")))


def test_pjit_tap_collects_the_whole_operand_once_on_the_first_device(sharded_x):
    seen = []
    tap = lambda a, tr, *, device: seen.append((a.tolist(), device))  # noqa: E731
    out = jit(lambda x: hcb.id_tap(tap, x * 2, tap_with_device=True))(sharded_x)
    hcb.barrier_wait()
    assert seen == [((np.arange(16) * 2.0).tolist(), devices()[0])]
    np.testing.assert_array_equal(out, np.arange(16) * 2.0)
    assert out.sharding.is_equivalent_to(sharded_x.sharding, 1)


def test_pjit_call_and_pure_callback_return_whole_arrays(sharded_x):
    calls = []

    def host(a):
        calls.append(a.shape)
        return np.asarray(a) + 1

    spec = ShapeDtypeStruct((16,), np.float32)
    out = jit(lambda x: hcb.call(host, x, result_shape=spec) * 2)(sharded_x)
    out2 = jit(lambda x: pure_callback(host, spec, x))(sharded_x)
    np.testing.assert_array_equal(out, (np.arange(16) + 1.0) * 2)
    np.testing.assert_array_equal(out2, np.arange(16) + 1.0)
    assert calls == [(16,), (16,)]


def test_ordered_callbacks_over_8_devices_keep_order_with_one_device_programs(sharded_x):
    log = []
    many = jit(lambda x: io_callback(lambda a: log.append(float(a)), None, x.sum(), ordered=True))
    one = jit(lambda x: io_callback(lambda a: log.append(("one", float(a))), None, x,
                                    ordered=True))
    many_taps = jit(lambda x: hcb.id_tap(lambda a, tr: log.append(("tap", float(a))), x.sum()))
    one_tap = jit(lambda x: hcb.id_tap(lambda a, tr: log.append(("tap1", float(a))), x))
    for i in range(4):
        many(sharded_x * i)
        one(F32(-i))
    effects_barrier()
    assert log == [v for i in range(4) for v in (120.0 * i, ("one", -float(i)))]
    log.clear()
    for i in range(4):
        many_taps(sharded_x * i)
        one_tap(F32(-i))
    hcb.barrier_wait()
    assert log == [v for i in range(4) for v in (("tap", 120.0 * i), ("tap1", -float(i)))]


def test_ordered_debug_print_over_8_devices_is_refused_as_in_jax(sharded_x):
    with pytest.raises(ValueError, match=r"ordered effects are not supported for more than 1"):
        jit(lambda x: debug_print("{}", x, ordered=True))(sharded_x)


def test_pmap_taps_once_per_device_with_its_slice():
    seen = []
    lock = threading.Lock()

    def tap(a, tr, *, device):
        with lock:
            seen.append((device.id, a.tolist(), tr))

    x = np.arange(8, dtype=F32).reshape(4, 2)
    out = pmap(lambda v: hcb.id_tap(tap, v * 2, tap_with_device=True), axis_name="i")(x)
    hcb.barrier_wait()
    np.testing.assert_array_equal(out, x * 2)
    mapped = (("pmap", {"axis_name": "i", "axis_size": 4}),)
    assert sorted(seen) == [
        (d.id, (x[i] * 2).tolist(), mapped) for i, d in enumerate(devices()[:4])
    ]


def test_vmap_inside_pmap_records_the_mapped_axis_then_the_batch():
    seen = []
    lock = threading.Lock()

    def tap(a, tr):
        with lock:
            seen.append((a.tolist(), tr))

    x = np.arange(8, dtype=F32).reshape(2, 2, 2)
    pmap(vmap(lambda v: hcb.id_tap(tap, v)), axis_name="p")(x)
    hcb.barrier_wait()
    expected = (("pmap", {"axis_name": "p", "axis_size": 2}), ("batch", {"batch_dims": (0,)}))
    assert sorted(seen) == [(x[0].tolist(), expected), (x[1].tolist(), expected)]


def test_shard_map_call_runs_per_device_on_local_shards():
    mesh = Mesh(np.array(devices()[:4]), ("d",))
    calls = []

    def host(a, *, device):
        calls.append((device.id, a.shape))
        return np.asarray(a) * 10

    f = shard_map(lambda v: hcb.call(host, v, result_shape=v, call_with_device=True),
                  mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    x = np.arange(8, dtype=F32).reshape(4, 2)
    np.testing.assert_array_equal(jit(f)(x), x * 10)
    assert sorted(calls) == [(d.id, (1, 2)) for d in devices()[:4]]


def test_unordered_callbacks_run_per_device_inside_shard_map():
    mesh = Mesh(np.array(devices()[:4]), ("d",))
    seen = []
    f = shard_map(lambda v: (io_callback(lambda a: seen.append(a.tolist()), None, v), v)[1],
                  mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    jit(f)(np.arange(4, dtype=F32))
    effects_barrier()
    assert sorted(seen) == [[0.0], [1.0], [2.0], [3.0]]


def test_device_index_picks_the_device_that_taps_under_pjit(sharded_x):
    seen = []
    tap = lambda a, tr, *, device: seen.append((a.shape, device))  # noqa: E731
    jit(lambda x: hcb.id_tap(tap, x, tap_with_device=True, device_index=3))(sharded_x)
    out = jit(lambda x: hcb.call(lambda a: np.asarray(a) + 1, x, result_shape=x,
                                 device_index=5))(sharded_x)
    hcb.barrier_wait()
    assert seen == [((16,), devices()[3])]
    np.testing.assert_array_equal(out, np.arange(16) + 1.0)


@pytest.mark.parametrize("index", [8, 11, -1])
def test_device_index_outside_the_program_is_a_value_error(sharded_x, index):
    with pytest.raises(ValueError, match=f"device_index={index} is out of range"):
        jit(lambda x: hcb.id_tap(lambda a, tr: None, x, device_index=index))(sharded_x)


def test_callback_sharding_picks_a_device_and_is_refused_inside_shard_map(sharded_x):
    from laminax_dispatch import SingleDeviceSharding

    spec = ShapeDtypeStruct((16,), np.float32)
    on_2 = SingleDeviceSharding(devices()[2])
    out = jit(lambda x: pure_callback(lambda a: np.asarray(a) * 3, spec, x, sharding=on_2))(
        sharded_x
    )
    np.testing.assert_array_equal(out, np.arange(16) * 3.0)
    mesh = Mesh(np.array(devices()[:4]), ("d",))
    f = shard_map(lambda v: pure_callback(lambda a: a, ShapeDtypeStruct((1,), np.float32), v,
                                          sharding=on_2),
                  mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    with pytest.raises(NotImplementedError, match="sharding inside spmd computations"):
        jit(f)(np.arange(4, dtype=F32))


def test_partitioned_debug_callback_and_print_see_local_shards(sharded_x, capsys):
    seen = []
    lock = threading.Lock()

    def cb(a):
        with lock:
            seen.append(np.asarray(a).tolist())

    jit(lambda x: debug_callback(cb, x * 2, partitioned=True))(sharded_x)
    effects_barrier()
    assert sorted(seen) == sorted((np.arange(16, dtype=F32) * 2).reshape(8, 2).tolist())
    seen.clear()
    jit(lambda x: debug_callback(cb, x * 2))(sharded_x)
    effects_barrier()
    assert seen == [(np.arange(16, dtype=F32) * 2).tolist()]
    capsys.readouterr()
    jit(lambda x: debug_print("shard {}", x, partitioned=True))(sharded_x)
    effects_barrier()
    lines = sorted(capsys.readouterr().out.splitlines())
    assert lines == sorted(f"shard [{2 * i}. {2 * i + 1}.]" for i in range(8))
