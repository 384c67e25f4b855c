"""Placement and device_put against real JAX on 8 CPU devices.

laminax's side uses dispatch's `GSPMDSharding` (devices + HloSharding); JAX's side builds the
same layout as a `NamedSharding` on a mesh of the devices in order, so the two are compared by
what they mean: the values, each device's index, replica ids, and the output's HloSharding.
"""

import numpy as np
import pytest
from jaxlib import xla_client as xc
from jaxref import requires_jax, run_jax

import laminax
from laminax_dispatch import GSPMDSharding, SingleDeviceSharding, devices, jit
from laminax_dispatch import device_put as dispatch_device_put

pytestmark = [requires_jax, pytest.mark.jax]

X = np.arange(64, dtype=np.float32).reshape(8, 8)

# (laminax tile dims, JAX mesh shape, JAX spec) describing the same layout
LAYOUTS = [
    ((8, 1), (8,), "P('x', None)"),
    ((1, 8), (8,), "P(None, 'x')"),
    ((4, 2), (4, 2), "P('x', 'y')"),
    ((2, 4), (2, 4), "P('x', 'y')"),
]


def gspmd(dims):
    return GSPMDSharding(tuple(devices()), xc.HloSharding.iota_tile(list(dims)))


def _jax_mesh(shape, spec):
    names = "('x',)" if len(shape) == 1 else "('x', 'y')"
    return (
        "from jax.sharding import NamedSharding, PartitionSpec as P, Mesh\n"
        f"mesh = Mesh(np.array(jax.devices()).reshape({shape}), {names})\n"
        f"s = NamedSharding(mesh, {spec})\n"
    )


def _shards(array):
    return sorted(
        (sh.device.id, tuple((i.start, i.stop) for i in sh.index), sh.replica_id)
        for sh in array.addressable_shards
    )


@pytest.mark.parametrize("dims,shape,spec", LAYOUTS)
def test_device_put_shards_match_jax(dims, shape, spec):
    expected = run_jax(
        _jax_mesh(shape, spec) + "y = jax.device_put(x, s)\n"
        "result = (sorted((sh.device.id, tuple((i.start, i.stop) for i in sh.index), "
        "sh.replica_id) for sh in y.addressable_shards), str(y.sharding._to_xla_hlo_sharding(2)))",
        devices=8,
        x=X,
    )
    y = laminax.device_put(X, gspmd(dims))
    assert _shards(y) == expected[0]
    assert str(y.sharding._to_xla_hlo_sharding(2)) == expected[1]
    np.testing.assert_array_equal(np.asarray(y), X)


@pytest.mark.parametrize("dims,shape,spec", LAYOUTS)
def test_jit_output_shardings_match_jax(dims, shape, spec):
    source = _jax_mesh(shape, spec) + (
        "f = jax.jit(lambda a: (a * 2, a.sum(0), a.T))\n"
        "outs = f(jax.device_put(x, s))\n"
        "result = [(np.asarray(o), str(o.sharding._to_xla_hlo_sharding(o.ndim)), "
        "sorted((sh.device.id, tuple((i.start, i.stop) for i in sh.index)) "
        "for sh in o.addressable_shards)) for o in outs]"
    )
    expected = run_jax(source, devices=8, x=X)
    outs = jit(lambda a: (a * 2, a.sum(0), a.T))(laminax.device_put(X, gspmd(dims)))
    for out, (value, hlo, shards) in zip(outs, expected, strict=True):
        np.testing.assert_allclose(np.asarray(out), value)
        assert str(out.sharding._to_xla_hlo_sharding(out.ndim)) == hlo
        got = sorted(
            (sh.device.id, tuple((i.start, i.stop) for i in sh.index))
            for sh in out.addressable_shards
        )
        assert got == shards


def test_in_out_shardings_match_jax():
    source = _jax_mesh((4, 2), "P('x', 'y')") + (
        "r = NamedSharding(mesh, P())\n"
        "f = jax.jit(lambda a, b: (a @ b, a + b), in_shardings=(s, r), out_shardings=(r, s))\n"
        "outs = f(x, x)\n"
        "result = [(np.asarray(o), str(o.sharding._to_xla_hlo_sharding(2))) for o in outs]"
    )
    expected = run_jax(source, devices=8, x=X)
    s, r = gspmd((4, 2)), GSPMDSharding.get_replicated(devices())
    outs = jit(lambda a, b: (a @ b, a + b), in_shardings=(s, r), out_shardings=(r, s))(X, X)
    for out, (value, hlo) in zip(outs, expected, strict=True):
        np.testing.assert_allclose(np.asarray(out), value, rtol=1e-6)
        assert str(out.sharding._to_xla_hlo_sharding(2)) == hlo


def test_resharding_by_device_put_matches_jax():
    source = _jax_mesh((4, 2), "P('x', 'y')") + (
        "t = NamedSharding(mesh, P('y', 'x'))\n"
        "y = jax.device_put(jax.device_put(x, s), t)\n"
        "result = sorted((sh.device.id, tuple((i.start, i.stop) for i in sh.index)) "
        "for sh in y.addressable_shards)"
    )
    expected = run_jax(source, devices=8, x=X)
    # P('y', 'x') on a (4, 2) mesh: dim 0 over y (2), dim 1 over x (4), devices transposed
    proto = xc.OpSharding()
    proto.type = xc.OpSharding.Type.OTHER
    proto.tile_assignment_dimensions = [2, 4]
    proto.tile_assignment_devices = [0, 2, 4, 6, 1, 3, 5, 7]
    t = GSPMDSharding(tuple(devices()), proto)
    y = laminax.device_put(laminax.device_put(X, gspmd((4, 2))), t)
    got = sorted(
        (sh.device.id, tuple((i.start, i.stop) for i in sh.index)) for sh in y.addressable_shards
    )
    assert got == expected
    np.testing.assert_array_equal(np.asarray(y), X)


def test_incompatible_devices_error_matches_jax():
    source = (
        "a = jax.device_put(x, jax.devices()[0]); b = jax.device_put(x, jax.devices()[1])\n"
        "try:\n    jax.jit(lambda u, v: u + v)(a, b)\n    result = None\n"
        "except Exception as e:\n    result = (type(e).__name__, str(e))"
    )
    name, message = run_jax(source, devices=8, x=X)
    a = laminax.device_put(X, devices()[0])
    b = laminax.device_put(X, devices()[1])
    with pytest.raises(ValueError) as info:
        jit(lambda u, v: u + v)(a, b)
    assert type(info.value).__name__ == name
    assert str(info.value).split(". Got")[0] == message.split(". Got")[0]


# ----- device_put as a primitive ------------------------------------------------------------


def test_grad_through_device_put_matches_jax():
    expected = run_jax("result = jax.grad(lambda x: jax.device_put(x) * 2.)(1.)")
    assert float(laminax.grad(lambda x: laminax.device_put(x) * 2.0)(1.0)) == float(expected)
    assert float(expected) == 2.0


def test_jit_vmap_of_device_put_match_jax():
    expected = run_jax(
        "f = lambda x: jax.device_put(x) * 2.\n"
        "result = (jax.jit(f)(1.), jax.vmap(f)(jnp.arange(3.)))"
    )
    f = lambda x: laminax.device_put(x) * 2.0  # noqa: E731
    assert float(jit(f)(1.0)) == float(expected[0])
    np.testing.assert_array_equal(np.asarray(laminax.vmap(f)(np.arange(3.0))), expected[1])


@pytest.mark.parametrize("target", ["None", "jax.devices()[1]"])
def test_make_jaxpr_of_device_put_matches_jax(target):
    expected = run_jax(
        f"result = str(jax.make_jaxpr(lambda x: jax.device_put(x, {target}) * 2.)(1.))",
        devices=8,
    )
    device = None if target == "None" else devices()[1]
    got = str(laminax.make_jaxpr(lambda x: laminax.device_put(x, device) * 2.0)(1.0))
    assert got == expected


def test_grad_of_device_put_onto_sharding_and_vjp():
    s = gspmd((8, 1))
    expected = run_jax(
        _jax_mesh((8,), "P('x', None)")
        + "result = jax.grad(lambda x: (jax.device_put(x, s) ** 2).sum())(x)",
        devices=8,
        x=X,
    )
    got = laminax.grad(lambda x: (laminax.device_put(x, s) ** 2).sum())(X)
    np.testing.assert_allclose(np.asarray(got), expected)


def test_dispatch_device_put_is_the_facade_one():
    assert laminax.device_put is dispatch_device_put


def test_compiled_sharding_mismatch_error_matches_jax():
    source = _jax_mesh((8,), "P('x', None)") + (
        "c = jax.jit(lambda a: a * 2).lower(jax.device_put(x, s)).compile()\n"
        "try:\n    c(jax.device_put(x, jax.devices()[0]))\n    result = None\n"
        "except Exception as e:\n    result = (type(e).__name__, str(e).splitlines()[0])"
    )
    name, first_line = run_jax(source, devices=8, x=X)
    compiled = jit(lambda a: a * 2).lower(laminax.device_put(X, gspmd((8, 1)))).compile()
    with pytest.raises(ValueError) as info:
        compiled(laminax.device_put(X, devices()[0]))
    assert type(info.value).__name__ == name
    assert str(info.value).splitlines()[0] == first_line


def test_grad_of_jit_with_shardings_matches_jax():
    source = _jax_mesh((4, 2), "P('x', 'y')") + (
        "r = NamedSharding(mesh, P())\n"
        "f = jax.jit(lambda a, b: jnp.sin(a * b).sum(), in_shardings=(s, r), out_shardings=r)\n"
        "g = jax.jit(jax.grad(f, argnums=(0, 1)))\n"
        "outs = g(x, x)\n"
        "result = [(np.asarray(o), str(o.sharding._to_xla_hlo_sharding(2))) for o in outs]"
    )
    expected = run_jax(source, devices=8, x=X)
    s, r = gspmd((4, 2)), GSPMDSharding.get_replicated(devices())
    f = jit(lambda a, b: laminax.numpy.sin(a * b).sum(), in_shardings=(s, r), out_shardings=r)
    outs = jit(laminax.grad(f, argnums=(0, 1)))(X, X)
    for out, (value, hlo) in zip(outs, expected, strict=True):
        np.testing.assert_allclose(np.asarray(out), value, rtol=2e-5, atol=1e-5)
        assert str(out.sharding._to_xla_hlo_sharding(2)) == hlo
    # the shardings travel through jvp and transpose in jit_p's params
    text = str(laminax.make_jaxpr(laminax.grad(f))(X, X))
    assert text.count("in_shardings=") >= 2 and text.count("out_shardings=") >= 2


def test_vmap_of_jit_with_shardings_matches_jax():
    source = _jax_mesh((8,), "P('x', None)") + (
        "f = jax.jit(lambda a: a * 2 + 1, in_shardings=s, out_shardings=s)\n"
        "y = jax.jit(jax.vmap(f, in_axes=1))(xs)\n"
        "result = (np.asarray(y), str(y.sharding._to_xla_hlo_sharding(3)))"
    )
    xs = np.arange(8 * 3 * 4, dtype=np.float32).reshape(8, 3, 4)
    value, hlo = run_jax(source, devices=8, xs=xs)
    s = gspmd((8, 1))
    y = jit(laminax.vmap(jit(lambda a: a * 2 + 1, in_shardings=s, out_shardings=s), in_axes=1))(xs)
    np.testing.assert_array_equal(np.asarray(y), value)
    assert str(y.sharding._to_xla_hlo_sharding(3)) == hlo


def test_output_in_host_memory_matches_jax():
    source = (
        "d = jax.devices()[0]\n"
        "s = jax.sharding.SingleDeviceSharding(d, memory_kind='pinned_host')\n"
        "f = jax.jit(lambda a: a * 2, out_shardings=s)\n"
        "text = f.lower(x).as_text()\n"
        "y = f(x)\n"
        "result = (np.asarray(y), y.sharding.memory_kind, 'annotate_device_placement' in text,"
        " 'mhlo.memory_kind = \"pinned_host\"' in text)"
    )
    value, kind, annotated, attribute = run_jax(source, x=X)
    s = SingleDeviceSharding(devices()[0], memory_kind="pinned_host")
    f = jit(lambda a: a * 2, out_shardings=s)
    text = f.lower(X).as_text()
    y = f(X)
    np.testing.assert_array_equal(np.asarray(y), value)
    assert y.sharding.memory_kind == kind == s.memory_kind
    assert ("annotate_device_placement" in text) == annotated
    assert ('mhlo.memory_kind = "pinned_host"' in text) == attribute
    assert f.lower(X).compile().runtime_executable().get_output_memory_kinds() == [["pinned_host"]]


def test_device_put_src_matches_jax():
    expected = run_jax(
        "result = (str(jax.make_jaxpr(lambda x: jax.device_put(x, src=jax.devices()[0]))(1.)),"
        " jax.grad(lambda x: jax.device_put(x, jax.devices()[1], src=jax.devices()[0]) * 3.)(1.))",
        devices=8,
    )
    text = str(laminax.make_jaxpr(lambda x: laminax.device_put(x, src=devices()[0]))(1.0))
    assert text == expected[0]
    g = laminax.grad(lambda x: laminax.device_put(x, devices()[1], src=devices()[0]) * 3.0)(1.0)
    assert float(g) == float(expected[1])


@pytest.mark.parametrize(
    "case",
    [
        "jax.jit(lambda a: a * 2, in_shardings=s)(np.ones((7, 2), np.float32))",
        "jax.jit(lambda a: a * 2, in_shardings=s)(np.ones((8,), np.float32))",
        "jax.jit(lambda a: a.sum(), out_shardings=s)(np.ones((8, 2), np.float32))",
        "jax.jit(lambda a: (a, a[0]), out_shardings=s)(np.ones((8, 2), np.float32))",
    ],
)
def test_shardings_that_do_not_fit_raise_like_jax(case):
    source = _jax_mesh((8,), "P('x', None)") + (
        f"try:\n    {case}\n    result = None\n"
        "except Exception as e:\n    result = (type(e).__name__, str(e).replace(str(s), 'S'))"
    )
    name, message = run_jax(source, devices=8)
    s = gspmd((8, 1))
    with pytest.raises(ValueError) as info:
        eval(case.replace("jax.jit", "jit"), {"jit": jit, "s": s, "np": np})
    got = str(info.value).replace(str(s), "S")
    assert issubclass(type(info.value), ValueError) and name in ("ValueError", "IndivisibleError")
    # the part before the sharding's own explanation is JAX's word for word
    assert got.split(": S")[0].split(" of S")[0] == message.split(": S")[0].split(" of S")[0]


def test_device_put_inside_jit_places_like_jax():
    source = (
        "from jax.sharding import SingleDeviceSharding as S\n"
        "a = jax.jit(lambda x: jax.device_put(x, jax.devices()[1]) * 2.)(1.)\n"
        "b = jax.jit(lambda x: jax.device_put(x, S(jax.devices()[1])) * 2.)(1.)\n"
        "try:\n"
        "    jax.jit(lambda x: jax.device_put(x, S(jax.devices()[1])))(jax.device_put(1., jax.devices()[0]))\n"
        "    err = None\n"
        "except Exception as e:\n    err = (type(e).__name__, str(e))\n"
        "result = ([d.id for d in a.devices()], a.committed, [d.id for d in b.devices()], b.committed, err)"
    )
    a_ids, a_committed, b_ids, b_committed, (name, message) = run_jax(source, devices=8)
    a = jit(lambda x: laminax.device_put(x, devices()[1]) * 2.0)(1.0)
    b = jit(lambda x: laminax.device_put(x, SingleDeviceSharding(devices()[1])) * 2.0)(1.0)
    assert ([d.id for d in a.devices()], a.committed) == (a_ids, a_committed)
    assert ([d.id for d in b.devices()], b.committed) == (b_ids, b_committed)
    with pytest.raises(ValueError) as info:
        jit(lambda x: laminax.device_put(x, SingleDeviceSharding(devices()[1])))(
            laminax.device_put(1.0, devices()[0])
        )
    assert type(info.value).__name__ == name
    assert str(info.value).startswith(message.split(" on platform")[0])
