"""device_put / device_get / block_until_ready, committed devices, and the device-mismatch error."""

import os
import subprocess
import sys

import laminax_dispatch as ld
import ml_dtypes
import numpy as np
import pytest
from laminax_core.config import enable_x64
from laminax_dispatch.internal import devices_for_args

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.uint8,
    np.uint16,
    np.uint32,
    np.float16,
    np.float32,
    np.complex64,
    ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2fnuz,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_preserves_values_and_dtype(dtype):
    host = (np.arange(12) % 5).reshape(3, 4).astype(dtype)
    x = ld.device_put(host)
    assert x.dtype == np.dtype(dtype) and x.shape == (3, 4) and not x.weak_type
    back = ld.device_get(x)
    assert back.dtype == np.dtype(dtype)
    wide = np.complex64 if np.iscomplexobj(host) else np.float32
    np.testing.assert_array_equal(back.astype(wide), host.astype(wide))


@pytest.mark.parametrize(
    "value, dtype",
    [(1.5, np.float32), (7, np.int32), (2 + 1j, np.complex64)],
)
def test_python_scalars_become_weakly_typed(value, dtype):
    x = ld.device_put(value)
    assert x.weak_type and x.dtype == dtype and x.shape == ()
    assert x.item() == value


def test_python_bool_and_numpy_scalars_are_strongly_typed():
    assert not ld.device_put(True).weak_type
    assert not ld.device_put(np.float32(1)).weak_type


def test_64_bit_inputs_are_canonicalized_without_x64():
    assert ld.device_put(np.float64(1)).dtype == np.float32
    assert ld.device_put(np.array([1, 2], np.int64)).dtype == np.int32
    assert ld.device_put(np.array([1, 2], np.uint64)).dtype == np.uint32


def test_64_bit_inputs_are_kept_with_x64():
    with enable_x64(True):
        assert ld.device_put(np.array([1.0], np.float64)).dtype == np.float64
        assert ld.device_put(1.0).dtype == np.float64
        assert ld.device_put(2**40).item() == 2**40


def test_too_large_python_int_raises_overflow_error():
    with pytest.raises(
        OverflowError, match="Python int 1099511627776 too large to convert to int32"
    ):
        ld.device_put(2**40)


def test_non_array_leaf_raises_type_error():
    with pytest.raises(TypeError, match="'s' of type <class 'str'> is not a valid array type"):
        ld.device_put("s")


def test_bad_device_argument_raises_type_error():
    with pytest.raises(TypeError, match="device must be a Device, a Sharding or None"):
        ld.device_put(1.0, "cpu:0")


def test_pytrees_are_mapped_leafwise():
    out = ld.device_put({"a": 1, "b": (np.float32(2), [np.ones(2, np.int32)])})
    assert set(out) == {"a", "b"}
    assert out["a"].weak_type and out["b"][0].dtype == np.float32
    assert out["b"][1][0].tolist() == [1, 1]


def test_device_get_of_a_pytree_keeps_non_arrays():
    x = ld.device_put(np.ones(2, np.float32))
    out = ld.device_get({"a": x, "b": 3})
    assert out["b"] == 3 and isinstance(out["a"], np.ndarray)


def test_committed_rules():
    device = ld.devices()[0]
    x = ld.device_put(np.ones(3, np.float32))
    assert not x.committed
    assert ld.device_put(x) is x
    y = ld.device_put(x, device)
    assert y.committed and y is not x
    assert y.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()  # no copy, new metadata
    assert ld.device_put(y, device) is y
    assert ld.device_put(y).committed
    assert ld.device_put(np.ones(2), ld.SingleDeviceSharding(device)).committed


def test_block_until_ready_returns_its_argument():
    tree = [ld.device_put(1.0), {"k": ld.device_put(np.zeros(3))}, "not an array"]
    assert ld.block_until_ready(tree) is tree


def test_devices_for_args_ignores_uncommitted_arrays():
    device = ld.devices()[0]
    assert devices_for_args([ld.device_put(1.0), 2.0]) is None
    committed = ld.device_put(np.ones(2), device)
    assert devices_for_args([ld.device_put(1.0), committed]) == device


def _run(code: str) -> str:
    env = dict(os.environ, LAMINAX_NUM_CPU_DEVICES="2")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_copy_to_another_device_and_mismatch_error_on_two_devices():
    code = """
import numpy as np, laminax_dispatch as ld
from laminax_dispatch.internal import devices_for_args
d0, d1 = ld.devices()
x = ld.device_put(np.arange(3, dtype=np.float32), d0)
y = ld.device_put(x, d1)
print(y.committed, y.device.id, y.tolist(), x.device.id)
z = ld.device_put(np.ones((2, 2), np.int32), d1)
try:
    devices_for_args([x, z], ["x", "y"], "add")
except ValueError as e:
    print(e)
tree = ld.device_put((np.ones(2), {"a": 1.0, "b": 2}), (d0, d1))
leaves = [tree[0], tree[1]["a"], tree[1]["b"]]
mixed = ld.device_put((np.ones(2), 3.0), (d0, None))
print([a.device.id for a in leaves], [a.committed for a in leaves],
      [a.device.id for a in mixed], [a.committed for a in mixed])
"""
    lines = _run(code).splitlines()
    assert lines[0] == "True 1 [0.0, 1.0, 2.0] 0"
    assert lines[2] == "[0, 1, 1] [True, True, True] [0, 0] [True, False]"
    assert lines[1] == (
        "Received incompatible devices for jitted computation. Got argument x of add with shape "
        "float32[3] and with device ids [0] on platform CPU and argument y of add with shape "
        "int32[2,2] and with device ids [1] on platform CPU"
    )


def test_may_alias_false_always_copies():
    x = ld.device_put(np.ones(3, np.float32))
    y = ld.device_put(x, may_alias=False)
    assert y is not x and not y.committed
    assert y.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
    host = np.ones(3, np.float32)
    assert ld.device_put(host, may_alias=False).unsafe_buffer_pointer() != host.ctypes.data


def test_donate_returns_a_usable_array():
    x = ld.device_put(np.arange(3, dtype=np.float32), ld.devices()[0])
    y = ld.device_put(x, donate=True)
    assert y.committed
    np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 2.0])


def test_may_alias_and_donate_together_raise_value_error():
    with pytest.raises(ValueError, match="may_alias and donate cannot be True at the same time"):
        ld.device_put(ld.device_put(1.0), may_alias=True, donate=True)


def test_device_put_of_a_deleted_array_raises_runtime_error():
    x = ld.device_put(np.ones(2, np.float32))
    x.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        ld.device_put(x, ld.devices()[0])


def test_device_prefix_that_does_not_match_raises_value_error():
    device = ld.devices()[0]
    with pytest.raises(ValueError, match="must be a Device, a Sharding, None, or a pytree prefix"):
        ld.device_put((1.0, 2.0), (device, device, device))
