"""pmap on 8 CPU devices: values against NumPy, shardings, collectives against their vmap
meaning, static and donated arguments, and JAX's errors."""

import laminax_core as lc
import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_core import lax
from laminax_pjit import Mesh, NamedSharding, P, pmap


def test_psum_over_devices_and_output_sharding():
    out = pmap(lambda x: lax.psum(x, "i"), axis_name="i")(np.arange(8.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), np.full(8, 28.0))
    assert out.sharding == NamedSharding(Mesh(np.array(ld.devices()), ("i",)), P("i"))


@pytest.mark.parametrize("body", [
    lambda x: lax.pmean(x, "i"),
    lambda x: lax.all_gather(x, "i"),
    lambda x: lax.ppermute(x, "i", [(j, (j + 1) % 4) for j in range(4)]),
    lambda x: x * lax.axis_index("i"),
    lambda x: lax.psum_scatter(x, "i"),
])
def test_collectives_equal_vmap(body):
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    got = pmap(body, axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(got),
                               np.asarray(lc.vmap(body, axis_name="i")(x)), rtol=1e-6)


def test_in_axes_out_axes():
    f = pmap(lambda x, y: x * y, in_axes=(1, None), out_axes=1)
    out = f(np.ones((3, 4), np.float32), np.float32(2.0))
    assert out.shape == (3, 4) and out.sharding.spec == P(None, "_internal_pmap_axis_name")
    np.testing.assert_allclose(np.asarray(out), np.full((3, 4), 2.0))
    rep = pmap(lambda x: lax.psum(x, "i"), axis_name="i", out_axes=None)(np.ones(4, np.float32))
    assert np.asarray(rep).shape == () and float(rep) == 4.0


def test_pytrees_and_kwargs():
    f = pmap(lambda d, k: {"s": d["a"] + d["b"], "k": k * 2})
    out = f({"a": np.ones(2), "b": np.arange(2.0)}, k=np.ones(2))
    np.testing.assert_allclose(np.asarray(out["s"]), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(out["k"]), [2.0, 2.0])


def test_static_broadcasted_argnums():
    f = pmap(lambda x, n: x * n, static_broadcasted_argnums=1)
    np.testing.assert_allclose(np.asarray(f(np.ones(2), 3)), [3.0, 3.0])
    np.testing.assert_allclose(np.asarray(f(np.ones(2), 5)), [5.0, 5.0])
    with pytest.raises(ValueError, match="static_broadcasted_argnums"):
        f(np.ones(2))


def test_devices_and_donation():
    out = pmap(lambda x: x + 1, devices=ld.devices()[2:4])(np.ones(2, np.float32))
    assert {s.device for s in out.addressable_shards} == set(ld.devices()[2:4])
    x = ld.device_put(np.ones(8, np.float32))
    y = pmap(lambda v: v * 2, donate_argnums=0)(x)
    np.testing.assert_allclose(np.asarray(y), np.full(8, 2.0))


def test_grad_and_jit_of_pmap():
    f = pmap(lambda v: v ** 2)
    g = lc.grad(lambda x: f(x).sum())(np.arange(4.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(g), [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_allclose(np.asarray(ld.jit(f)(np.arange(4.0, dtype=np.float32))),
                               [0.0, 1.0, 4.0, 9.0])


@pytest.mark.parametrize("kwargs,error", [
    ({"in_axes": "a"}, TypeError),
    ({"out_axes": 1.5}, TypeError),
    ({"devices": []}, ValueError),
])
def test_bad_arguments(kwargs, error):
    with pytest.raises(error):
        pmap(lambda x: x, **kwargs)


@pytest.mark.parametrize("call,error", [
    (lambda: pmap(lambda x: x)(np.ones(9)), ValueError),          # more positions than devices
    (lambda: pmap(lambda x: x, in_axes=None)(np.ones(2)), ValueError),  # nothing mapped
    (lambda: pmap(lambda x: x, axis_size=3)(np.ones(2)), ValueError),
    (lambda: pmap(lambda x, y: x, in_axes=(0, 0, 0))(np.ones(2), np.ones(2)), ValueError),
    (lambda: pmap(lambda x: x)(np.float32(1)), IndexError),  # JAX's type (no axis 0)
])
def test_bad_calls(call, error):
    with pytest.raises(error):
        call()
