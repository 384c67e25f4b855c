"""with_sharding_constraint: identity on values, the layout pinned, under every transformation."""

import warnings

import numpy as np
import pytest
from laminax_core import checkpoint, grad, jvp, lax, make_jaxpr, vmap
from laminax_dispatch import devices, jit
from laminax_pjit import Mesh, NamedSharding, P, sharding_constraint_p, with_sharding_constraint

MESH = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
S = NamedSharding(MESH, P("x"))
X = np.arange(32, dtype=np.float32).reshape(8, 4) / 7


def test_constraint_is_identity_and_pins_the_layout():
    y = jit(lambda a: with_sharding_constraint(a * 2, S) + 1)(X)
    np.testing.assert_allclose(np.asarray(y), X * 2 + 1)
    text = jit(lambda a: with_sharding_constraint(a, S)).lower(X).as_text()
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]>' in text


def test_eager_constraint_moves_the_array():
    assert with_sharding_constraint(X, S).sharding == S


def test_linear_rules_constrain_tangents_and_cotangents():
    f = lambda a: with_sharding_constraint(a, S) ** 2  # noqa: E731
    _, t = jvp(f, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(np.asarray(t), 2 * X, rtol=1e-6)
    g = jit(grad(lambda a: f(a).sum()))(X)
    np.testing.assert_allclose(np.asarray(g), 2 * X, rtol=1e-6)
    jaxpr = make_jaxpr(grad(lambda a: f(a).sum()))(X)
    assert str(jaxpr).count("sharding_constraint") == 2


def test_vmap_gives_the_new_dimension_to_spmd_axis_name():
    jaxpr = make_jaxpr(vmap(lambda a: with_sharding_constraint(a, S), spmd_axis_name="y"))(np.stack([X, X]))
    (eqn,) = jaxpr.jaxpr.eqns
    assert eqn.primitive is sharding_constraint_p and eqn.params["sharding"].spec is P("y", "x")
    jaxpr = make_jaxpr(vmap(lambda a: with_sharding_constraint(a, S), in_axes=1))(np.stack([X, X], 1))
    assert jaxpr.jaxpr.eqns[0].params["sharding"].spec is P("x", None)


def test_control_flow_and_checkpoint():
    body = lambda c, _: (with_sharding_constraint(c * 0.5, S), c.sum())  # noqa: E731
    c, ys = jit(lambda a: lax.scan(body, a, None, length=2))(X)
    np.testing.assert_allclose(np.asarray(c), X * 0.25, rtol=1e-6)
    g = jit(grad(lambda a: checkpoint(lambda b: with_sharding_constraint(b, S) ** 3)(a).sum()))(X)
    np.testing.assert_allclose(np.asarray(g), 3 * X**2, rtol=1e-5)


def test_bare_specs_use_the_mesh_in_context():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with MESH:
            jaxpr = make_jaxpr(lambda a: with_sharding_constraint(a, P("y")))(X)
    assert jaxpr.jaxpr.eqns[0].params["sharding"] == NamedSharding(MESH, P("y"))


@pytest.mark.parametrize(
    "shardings, error",
    [(P("x"), RuntimeError), (None, ValueError), ("x", TypeError), (NamedSharding(MESH, P("x", "y", None)), ValueError)],
)
def test_bad_constraints_raise(shardings, error):
    with pytest.raises(error):
        with_sharding_constraint(X, shardings)


def test_jit_retraces_when_the_mesh_in_context_changes():
    f = jit(lambda a: with_sharding_constraint(a + 1, P("x")))
    other = Mesh(np.array(devices()[:8]).reshape(2, 4), ("x", "y"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with MESH:
            first = f(X)
        with other:
            second = f(X)
    assert first.sharding == NamedSharding(MESH, P("x"))
    assert second.sharding == NamedSharding(other, P("x"))
    np.testing.assert_allclose(np.asarray(second), X + 1)


def test_vmap_of_an_xla_layout_adds_an_unsplit_dimension():
    from laminax_dispatch import GSPMDSharding

    gspmd = GSPMDSharding(tuple(devices()[:8]), S._to_xla_hlo_sharding(2))
    batched = np.stack([X, X + 1])
    f = jit(vmap(lambda a: with_sharding_constraint(a * 2, gspmd)))
    jaxpr = make_jaxpr(vmap(lambda a: with_sharding_constraint(a, gspmd)))(batched)
    layout = jaxpr.jaxpr.eqns[0].params["sharding"]
    assert layout.is_equivalent_to(NamedSharding(MESH, P(None, "x")), 3)
    np.testing.assert_allclose(np.asarray(f(batched)), batched * 2)
