"""pjit: specs resolved against the mesh at call time, one implementation with jit."""

import warnings

import numpy as np
import pytest
from laminax_core import grad, make_jaxpr, vmap
from laminax_dispatch import jit
from laminax_dispatch import device_put, devices
from laminax_pjit import Mesh, NamedSharding, P, pjit, set_mesh
from laminax_pjit._pjit import PjitFunction

MESH = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
X = np.arange(32, dtype=np.float32).reshape(8, 4)


@pytest.fixture(autouse=True)
def quiet_mesh_context():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def test_pjit_lays_out_like_jit_with_the_resolved_shardings():
    f = pjit(lambda a: a @ a.T, in_shardings=P("x"), out_shardings=P(None, "y"))
    with MESH:
        y = f(X)
    expected = jit(
        lambda a: a @ a.T,
        in_shardings=NamedSharding(MESH, P("x")),
        out_shardings=NamedSharding(MESH, P(None, "y")),
    )(X)
    np.testing.assert_allclose(np.asarray(y), X @ X.T)
    assert y.sharding == expected.sharding == NamedSharding(MESH, P(None, "y"))


def test_one_jit_per_mesh_seen():
    f = pjit(lambda a: a + 1, in_shardings=P("x"), out_shardings=P("x"))
    other = Mesh(np.array(devices()[:8]).reshape(2, 4), ("x", "y"))
    with MESH:
        f(X)
        f(X)
    with other:
        assert f(X).sharding.mesh is other
    assert isinstance(f, PjitFunction) and set(f._jits) == {MESH, other}


def test_shardings_only_need_no_mesh():
    s = NamedSharding(MESH, P("y"))
    y = pjit(lambda a: a * 2, in_shardings=s, out_shardings=s)(X)
    assert y.sharding == s


def test_seed_spelling_is_the_same_function():
    old = pjit(lambda a: a - 1, P("x"), P("x"))
    with MESH:
        np.testing.assert_array_equal(np.asarray(old(X)), X - 1)


def test_pjit_composes_with_transformations():
    f = pjit(lambda a: (a**2).sum(), in_shardings=P("x"), out_shardings=None)
    with MESH:
        np.testing.assert_allclose(np.asarray(grad(f)(X)), 2 * X)
        np.testing.assert_allclose(np.asarray(vmap(f)(np.stack([X, X]))), [(X**2).sum()] * 2)
        assert "jit[" in str(make_jaxpr(f)(X))


def test_set_mesh_resolves_specs_for_jit():
    with set_mesh(MESH):
        y = jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("y"))(X)
    assert y.sharding == NamedSharding(MESH, P("y"))


def test_donated_sharded_argument_is_deleted():
    x = device_put(X, NamedSharding(MESH, P("x")))
    f = pjit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x"), donate_argnums=0)
    with MESH:
        f(x)
    assert x.is_deleted()


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: pjit(lambda a: a, in_shardings=("x",)), TypeError),
        (lambda: pjit(lambda a: a, in_shardings=P("x", "x")), ValueError),
        (lambda: pjit(lambda a: a, in_shardings=P(P.UNCONSTRAINED)), ValueError),
        (lambda: pjit(lambda a: a, in_shardings=P("x"))(X), RuntimeError),
        (lambda: pjit(lambda a: a, in_shardings=None, device=devices()[0]), ValueError),
        (lambda: pjit(3), TypeError),
    ],
)
def test_bad_pjit_calls_raise(make, error):
    with pytest.raises(error):
        make()


def test_jit_options_pass_through():
    with MESH:
        inlined = pjit(lambda a: a * 2, in_shardings=P("x"), inline=True)
        assert "jit[" not in str(make_jaxpr(lambda a: inlined(a) + 1)(X))
        kept = pjit(lambda a, unused: a * 2, in_shardings=P("x"), keep_unused=True)
        assert len(kept.lower(X, X).compile().input_shardings[0]) == 2
        named = pjit(lambda a, n: a * n, static_argnames="n", in_shardings=P("x"))
        np.testing.assert_array_equal(np.asarray(named(X, n=3)), X * 3)
    on_device = pjit(lambda a: a + 1, device=devices()[2])(X)
    assert on_device.sharding.device_set == {devices()[2]}
