"""make_array_from_callback / _single_device_arrays / _process_local_data."""

import numpy as np
import pytest
from laminax_dispatch import device_put, devices
from laminax_pjit import (
    Mesh,
    NamedSharding,
    P,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)

MESH = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
X = np.arange(64, dtype=np.float32).reshape(8, 8)


@pytest.mark.parametrize("spec", [P(), P("x"), P("y", "x"), P(("x", "y"))], ids=repr)
def test_each_device_gets_its_slice(spec):
    s = NamedSharding(MESH, spec)
    calls = []
    y = make_array_from_callback(X.shape, s, lambda i: calls.append(i) or X[i])
    np.testing.assert_array_equal(np.asarray(y), X)
    assert y.sharding == s and len(calls) == 8
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])


def test_single_device_arrays_assemble_without_copy():
    s = NamedSharding(MESH, P("x"))
    pieces = [device_put(X[i], d) for d, i in s.addressable_devices_indices_map(X.shape).items()]
    y = make_array_from_single_device_arrays(X.shape, s, pieces)
    np.testing.assert_array_equal(np.asarray(y), X)
    assert {sh.data.unsafe_buffer_pointer() for sh in y.addressable_shards} == {
        p.unsafe_buffer_pointer() for p in pieces
    }


def test_process_local_data_is_the_whole_array_in_one_process():
    y = make_array_from_process_local_data(NamedSharding(MESH, P(None, "y")), X)
    np.testing.assert_array_equal(np.asarray(y), X)
    with pytest.raises(ValueError, match="global_shape"):
        make_array_from_process_local_data(NamedSharding(MESH, P()), X, (16, 8))


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: make_array_from_callback((8, 8), "sharding", lambda i: X[i]), TypeError),
        (lambda: make_array_from_callback((8, 8), NamedSharding(MESH, P("x")), lambda i: X), ValueError),
        (lambda: make_array_from_callback((6, 8), NamedSharding(MESH, P("x")), lambda i: X[i]), ValueError),
        (lambda: make_array_from_single_device_arrays((8, 8), NamedSharding(MESH, P("x")), [X]), TypeError),
        (lambda: make_array_from_single_device_arrays((8, 8), NamedSharding(MESH, P("x")), [device_put(X)]), ValueError),
    ],
)
def test_bad_pieces_raise(make, error):
    with pytest.raises(error):
        make()
