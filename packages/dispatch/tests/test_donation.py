"""Buffer donation under jit: aliasing really happens, donated Arrays are deleted, unusable
donations warn and do no harm, and one buffer cannot be donated twice in a call."""

import warnings

import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_dispatch import jit

F32 = np.float32


def _fresh(n=3):
    return ld.device_put(np.arange(n, dtype=F32)) + 0.0  # an Array nobody else holds


def test_donated_buffer_becomes_the_output_buffer():
    x = _fresh()
    pointer = x.unsafe_buffer_pointer()
    out = jit(lambda x: x * 2.0, donate_argnums=0)(x)
    assert out.unsafe_buffer_pointer() == pointer
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_donated_array_is_deleted_and_using_it_raises_runtime_error():
    x = _fresh()
    jit(lambda x: x + 1.0, donate_argnums=0)(x)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        x + 1
    with pytest.raises(RuntimeError, match="deleted"):
        jit(lambda x: x)(x)


def test_donate_argnames_and_pytrees():
    params = {"w": _fresh(), "b": _fresh(2)}
    pointers = {k: v.unsafe_buffer_pointer() for k, v in params.items()}
    step = jit(lambda params, lr: {k: v - lr for k, v in params.items()}, donate_argnames="params")
    new = step(params, 0.5)
    assert all(params[k].is_deleted() for k in params)
    assert {k: v.unsafe_buffer_pointer() for k, v in new.items()} == pointers


def test_main_argument_carries_the_aliasing_attribute():
    text = (
        jit(lambda x, y: (x + 1.0, y.sum()), donate_argnums=0)
        .lower(np.ones(3, F32), np.ones(3, F32))
        .as_text()
    )
    assert "%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}" in text
    assert "%arg1: tensor<3xf32>)" in text


def test_unusable_donation_warns_and_leaves_the_array_alone():
    x = _fresh()
    f = jit(lambda x: x.sum(), donate_argnums=0)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[3\]"):
        out = f(x)
    assert not x.is_deleted()
    assert float(out) == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)  # the warning comes with compilation, once per signature


def test_same_buffer_donated_twice_in_one_call_raises():
    x = _fresh()
    f = jit(lambda a, b: (a + b, a - b), donate_argnums=(0, 1))
    with pytest.raises(RuntimeError, match="are the same buffer, and it is donated"):
        f(x, x)
    assert not x.is_deleted()


def test_donated_buffer_also_passed_undonated_raises():
    x = _fresh()
    f = jit(lambda a, b: a + b, donate_argnums=0)
    with pytest.raises(RuntimeError, match="a donated buffer can be passed only once"):
        f(x, x)


def test_donating_host_values_is_harmless():
    host = np.ones(3, F32)
    out = jit(lambda x: x + 1.0, donate_argnums=0)(host)
    np.testing.assert_array_equal(out, [2, 2, 2])
    np.testing.assert_array_equal(host, [1, 1, 1])
