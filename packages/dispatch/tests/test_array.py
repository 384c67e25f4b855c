"""Array: properties, host conversion, printing, DLPack, pickling and deletion."""

import operator
import pickle

import laminax_dispatch as ld
import ml_dtypes
import numpy as np
import pytest
from laminax_core.internal import ShapedArray, get_aval


def put(value, dtype=None):
    return ld.device_put(np.asarray(value, dtype=dtype))


def test_properties_of_a_float32_matrix():
    x = put(np.arange(6).reshape(2, 3), np.float32)
    assert isinstance(x, ld.Array)
    assert (x.shape, x.dtype, x.ndim, x.size) == ((2, 3), np.dtype(np.float32), 2, 6)
    assert (x.itemsize, x.nbytes, x.weak_type) == (4, 24, False)
    assert x.devices() == {ld.devices()[0]}
    assert x.device == ld.devices()[0]
    assert x.sharding == ld.SingleDeviceSharding(ld.devices()[0])
    assert x.is_fully_replicated and x.is_fully_addressable
    assert not x.committed


def test_aval_is_cores_shaped_array_and_get_aval_finds_it():
    x = ld.device_put(2.0)
    assert x.aval == ShapedArray((), np.float32, weak_type=True)
    assert get_aval(x) is x.aval


def test_addressable_shards_cover_the_whole_array():
    x = put([1.0, 2.0], np.float32)
    (shard,) = x.addressable_shards
    assert shard.device == ld.devices()[0]
    assert shard.index == (slice(None),)
    assert shard.replica_id == 0
    np.testing.assert_array_equal(np.asarray(shard.data), [1.0, 2.0])


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.array([1.0, 2.0], np.float32), "Array([1., 2.], dtype=float32)"),
        (np.float32(3), "Array(3., dtype=float32)"),
        (np.zeros((2, 3), np.int32), "Array([[0, 0, 0],\n       [0, 0, 0]], dtype=int32)"),
        (np.zeros(0, ml_dtypes.bfloat16), "Array([], shape=(0,), dtype=bfloat16)"),
        (np.array([1, 2], ml_dtypes.float8_e4m3fn), "Array([1, 2], dtype=float8_e4m3fn)"),
        (np.array([1 + 2j], np.complex64), "Array([1.+2.j], dtype=complex64)"),
        (np.bool_(True), "Array(True, dtype=bool)"),
    ],
)
def test_repr_matches_jax_format(value, expected):
    assert repr(ld.device_put(value)) == expected


def test_repr_shows_weak_type_for_python_scalars():
    assert repr(ld.device_put(3.0)) == "Array(3., dtype=float32, weak_type=True)"
    assert repr(ld.device_put(3)) == "Array(3, dtype=int32, weak_type=True)"


def test_long_repr_wraps_like_numpy():
    text = repr(put(np.arange(100), np.float32))
    assert text.startswith("Array([ 0.,  1.,")
    assert text.endswith("99.], dtype=float32)")
    assert "\n       13.," in text


def test_str_and_format_use_the_values():
    x = put([1.0, 2.0], np.float32)
    assert str(x) == "[1. 2.]"
    assert f"{x}" == "[1. 2.]"
    assert format(ld.device_put(np.float32(3.5)), ".2f") == "3.50"
    with pytest.raises(TypeError):
        format(x, ".2f")


def test_array_protocol_is_a_read_only_zero_copy_view():
    x = put([1.0, 2.0], np.float32)
    host = np.asarray(x)
    assert not host.flags.writeable
    assert host.ctypes.data == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), [1.0, 2.0])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.array(x, copy=True).flags.writeable


def test_item_tolist_and_python_scalar_conversions():
    assert put([[5]], np.int32).item() == 5
    assert put([1.0, 2.0], np.float32).tolist() == [1.0, 2.0]
    assert float(ld.device_put(np.float32(2.5))) == 2.5
    assert int(ld.device_put(np.float32(2.7))) == 2
    assert complex(ld.device_put(np.float32(2))) == 2 + 0j
    assert bool(put([1], np.int32)) is True
    assert operator.index(ld.device_put(np.int32(3))) == 3
    assert put([[1.0], [2.0]]).tolist() == [[1.0], [2.0]]


def test_bfloat16_tolist_gives_python_floats():
    assert put([1.5], ml_dtypes.bfloat16).tolist() == [1.5]


def test_scalar_conversion_of_a_vector_raises_type_error():
    with pytest.raises(TypeError, match=r"Only scalar arrays .* got arr.ndim=1"):
        float(put([1.0, 2.0]))
    with pytest.raises(TypeError, match="integer scalar arrays"):
        operator.index(ld.device_put(np.float32(1)))
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        put([1, 2]).item()


def test_truth_value_of_many_or_no_elements_is_ambiguous():
    with pytest.raises(ValueError, match="more than one element is ambiguous"):
        bool(put([1, 2]))
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(put(np.zeros(0)))


def test_len_and_iteration():
    x = put([[1, 2], [3, 4]], np.int32)
    assert len(x) == 2
    rows = list(x)
    assert all(isinstance(r, ld.Array) for r in rows)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(ld.device_put(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(ld.device_put(1.0))


def test_arrays_are_unhashable():
    with pytest.raises(TypeError, match="unhashable type"):
        hash(put([1.0]))


def test_pickle_round_trip_lands_on_the_default_device_uncommitted():
    x = ld.device_put(np.array([1.0, 2.0], np.float32), ld.devices()[0])
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, ld.Array) and not y.committed
    assert y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0])
    assert pickle.loads(pickle.dumps(ld.device_put(3.0))).weak_type


def test_dlpack_with_numpy():
    x = put(np.arange(6).reshape(2, 3), np.int32)
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(6).reshape(2, 3))


def test_from_dlpack_of_a_numpy_array():
    from laminax_dispatch import from_dlpack

    host = np.arange(4, dtype=np.float32)
    x = from_dlpack(host)
    assert isinstance(x, ld.Array) and x.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x), host)


def test_deleted_array_raises_runtime_error_on_use():
    x = put([1.0, 2.0], np.float32)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2\]"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        repr(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        ld.block_until_ready(x)


def test_readiness_and_host_prefetch():
    x = put([1.0], np.float32)
    assert x.block_until_ready() is x
    assert x.is_ready()
    x.copy_to_host_async()
    np.testing.assert_array_equal(np.asarray(x), [1.0])


def test_make_array_checks_devices_and_shapes():
    piece = put([1.0, 2.0], np.float32)
    sharding = ld.SingleDeviceSharding(ld.devices()[0])
    whole = ld.make_array(ShapedArray((2,), np.float32), sharding, [piece])
    assert whole.committed
    np.testing.assert_array_equal(np.asarray(whole), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"expected every per-device array to be float32\[3\]"):
        ld.make_array(ShapedArray((3,), np.float32), sharding, [piece])
