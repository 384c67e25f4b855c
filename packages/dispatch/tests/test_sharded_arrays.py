"""Sharded Arrays on 8 CPU devices: device_put onto shardings (pytrees, prefixes), shards,
gathering, resharding, donation, make_array_from_callback / _single_device_arrays; checked
against NumPy."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jaxlib import xla_client as xc
from laminax_dispatch import (
    GSPMDSharding,
    SingleDeviceSharding,
    device_get,
    device_put,
    devices,
    jit,
    make_array_from_callback,
    make_array_from_single_device_arrays,
)

X = np.arange(48, dtype=np.float32).reshape(8, 6)


def tiled(*dims, devs=None):
    devs = tuple(devs or devices())
    return GSPMDSharding(devs, xc.HloSharding.iota_tile(list(dims)))


def replicated():
    return GSPMDSharding.get_replicated(tuple(devices()))


def partially_replicated():
    # rows over 4 devices, each row block held by 2 devices
    proto = xc.OpSharding()
    proto.type = xc.OpSharding.Type.OTHER
    proto.tile_assignment_dimensions = [4, 1, 2]
    proto.tile_assignment_devices = list(range(8))
    proto.replicate_on_last_tile_dim = True
    return GSPMDSharding(tuple(devices()), proto)


SHARDINGS = {
    "rows": lambda: tiled(8, 1),
    "grid": lambda: tiled(4, 2),
    "columns": lambda: tiled(1, 2, devs=devices()[:2]),
    "replicated": replicated,
    "partial": partially_replicated,
}


@pytest.mark.parametrize("name", sorted(SHARDINGS))
def test_device_put_shards_and_gather(name):
    s = SHARDINGS[name]()
    y = device_put(X, s)
    assert y.sharding == s and y.committed
    assert y.is_fully_replicated == (name == "replicated")
    indices = s.devices_indices_map(X.shape)
    shards = y.addressable_shards
    assert {sh.device for sh in shards} == s.device_set
    for sh in shards:
        assert sh.index == indices[sh.device]
        np.testing.assert_array_equal(np.asarray(sh.data), X[sh.index])
        assert sh.data.shape == s.shard_shape(X.shape)
    # replica ids number the copies of each piece 0, 1, ...
    by_index: dict = {}
    for sh in shards:
        by_index.setdefault(str(sh.index), []).append(sh.replica_id)
    assert all(sorted(ids) == list(range(len(ids))) for ids in by_index.values())
    np.testing.assert_array_equal(np.asarray(y), X)
    np.testing.assert_array_equal(device_get(y), X)


def test_global_shards_are_the_addressable_ones_in_one_process():
    y = device_put(X, tiled(4, 2))
    assert [sh.device for sh in y.global_shards] == list(tiled(4, 2)._device_assignment)
    assert sorted(str(sh.index) for sh in y.global_shards) == sorted(
        str(sh.index) for sh in y.addressable_shards
    )


@pytest.mark.parametrize("source", sorted(SHARDINGS))
@pytest.mark.parametrize("target", sorted(SHARDINGS))
def test_resharding_keeps_values(source, target):
    y = device_put(device_put(X, SHARDINGS[source]()), SHARDINGS[target]())
    assert y.sharding == SHARDINGS[target]()
    np.testing.assert_array_equal(np.asarray(y), X)
    for sh in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(sh.data), X[sh.index])


def test_device_put_pytree_with_prefix_of_shardings():
    tree = {"a": X, "b": (X[:, :2], np.float32(3))}
    out = device_put(tree, {"a": tiled(8, 1), "b": replicated()})
    assert out["a"].sharding == tiled(8, 1)
    assert out["b"][0].sharding == replicated() and out["b"][1].sharding == replicated()
    np.testing.assert_array_equal(np.asarray(out["b"][0]), X[:, :2])


def test_uneven_split_raises_value_error():
    for shape in [(7, 6), (9, 2), (3,)]:
        value = np.zeros(shape, np.float32)
        dims = [8] + [1] * (len(shape) - 1)
        with pytest.raises(ValueError, match="partitioned 8 times"):
            device_put(value, tiled(*dims))


def test_bad_placement_types_raise_type_error():
    for bad in ["cpu", 0, object(), np.zeros(2)]:
        with pytest.raises((TypeError, ValueError)):
            device_put(X, bad)


def test_sharded_array_pickles_and_prints():
    y = device_put(X, tiled(4, 2))
    np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(y))), X)
    assert repr(y).startswith("Array([[ 0.,  1.")
    assert tiled(4, 2) == tiled(4, 2) and hash(tiled(4, 2)) == hash(tiled(4, 2))
    assert tiled(4, 2) != tiled(2, 4) and tiled(8, 1) != tiled(8, 1, devs=devices()[::-1])


def test_donating_sharded_buffers():
    s = tiled(8, 1)
    x = device_put(X, s)
    f = jit(lambda a: a * 2, donate_argnums=0)
    y = f(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), X * 2)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    z = f(device_put(X, s))  # the fast path donates too
    np.testing.assert_array_equal(np.asarray(z), X * 2)


def test_device_put_donate_sharded():
    x = device_put(X, tiled(8, 1))
    y = device_put(x, tiled(8, 1, devs=devices()[::-1]), donate=True)
    np.testing.assert_array_equal(np.asarray(y), X)


def test_make_array_from_callback():
    s = tiled(4, 2)
    calls = []

    def piece(index):
        calls.append(index)
        return X[index]

    y = make_array_from_callback(X.shape, s, piece)
    assert len(calls) == 8 and y.sharding == s and y.committed
    np.testing.assert_array_equal(np.asarray(y), X)
    with pytest.raises(ValueError, match="shard shape"):
        make_array_from_callback((8, 6), s, lambda index: np.zeros((1, 1), np.float32))


def test_make_array_from_single_device_arrays():
    s = tiled(8, 1)
    indices = s.devices_indices_map(X.shape)
    pieces = [device_put(X[indices[d]], d) for d in s._device_assignment]
    y = make_array_from_single_device_arrays(X.shape, s, pieces[::-1])
    np.testing.assert_array_equal(np.asarray(y), X)
    with pytest.raises(ValueError, match="Expected 8 per-device arrays"):
        make_array_from_single_device_arrays(X.shape, s, pieces[:7])
    with pytest.raises(ValueError, match="shard shape"):
        make_array_from_single_device_arrays(X.shape, s, [device_put(X, d) for d in devices()])


@settings(max_examples=25, deadline=None)
@given(
    rows=st.sampled_from([1, 2, 4]),
    cols=st.sampled_from([1, 2]),
    shape=st.tuples(st.sampled_from([8, 16]), st.sampled_from([2, 4, 6])),
)
def test_any_tiling_round_trips(rows, cols, shape):
    n = rows * cols
    s = tiled(rows, cols, devs=devices()[:n])
    value = np.random.default_rng(rows * 10 + cols).standard_normal(shape).astype(np.float32)
    y = device_put(value, s)
    np.testing.assert_array_equal(np.asarray(y), value)
    np.testing.assert_allclose(np.asarray(jit(lambda a: a * 3 + 1)(y)), value * 3 + 1, rtol=1e-6, atol=1e-6)


def test_sharding_with_wrong_device_count_raises():
    s = GSPMDSharding(tuple(devices()[:4]), xc.HloSharding.iota_tile([8]))
    with pytest.raises(ValueError, match="8 devices"):
        s.devices_indices_map((8,))


def test_single_device_sharding_still_default():
    y = device_put(X)
    assert y.sharding == SingleDeviceSharding(devices()[0]) and not y.committed


@pytest.mark.parametrize("name", sorted(SHARDINGS))
def test_iterating_a_sharded_array_gives_its_rows(name):
    y = device_put(X, SHARDINGS[name]())
    rows = list(y)
    assert len(rows) == 8
    for row, expected in zip(rows, X, strict=True):
        np.testing.assert_array_equal(np.asarray(row), expected)
