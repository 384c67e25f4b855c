"""ppermute, pbroadcast, psum_scatter, all_to_all and axis_size under vmap, against NumPy
index arithmetic over the batch (the named axis's positions), and their errors."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, vmap

X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)


def _named(f):
    return vmap(f, axis_name="i")


def test_ppermute_moves_rows_and_zero_fills():
    out = _named(lambda v: lax.ppermute(v, "i", [(0, 2), (3, 1)]))(X)
    expected = np.zeros_like(X)
    expected[2], expected[1] = X[0], X[3]
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_pbroadcast_copies_the_source_row():
    out = _named(lambda v: lax.pbroadcast(v, "i", 2))(X)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(X[2], X.shape))


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter_keeps_each_positions_block(tiled):
    if tiled:
        out = _named(lambda v: lax.psum_scatter(v, "i", tiled=True))(X)
        expected = X.sum(0).reshape(4, 2)
    else:
        out = _named(lambda v: lax.psum_scatter(v[:4], "i"))(X)
        expected = X[:, :4].sum(0)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_all_to_all_transposes_blocks():
    out = _named(lambda v: lax.all_to_all(v.reshape(4, 2), "i", 0, 0, tiled=True))(X)
    # position i receives block i (2 values) of every position j, in j order
    expected = np.stack([X[:, 2 * i:2 * i + 2].reshape(-1) for i in range(4)]).reshape(4, 8, 1)
    np.testing.assert_array_equal(np.asarray(out).reshape(4, 8, 1), expected)


def test_axis_size_and_tuple_axis_index():
    assert _named(lambda v: v * 0 + lax.axis_size("i"))(X)[0, 0] == 4
    idx = vmap(vmap(lambda v: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")(
        X.reshape(2, 2, 8))
    np.testing.assert_array_equal(np.asarray(idx), [[0, 1], [2, 3]])


def test_linear_rules_transpose_to_the_inverse_movement():
    w = np.arange(32, dtype=np.float32).reshape(4, 8)
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    g = grad(lambda x: (_named(lambda v: lax.ppermute(v, "i", perm))(x) * w).sum())(X)
    np.testing.assert_array_equal(np.asarray(g), np.roll(w, -1, axis=0))
    _, t = jvp(_named(lambda v: lax.psum_scatter(v, "i", tiled=True)), (X,), (np.ones_like(X),))
    np.testing.assert_allclose(np.asarray(t), np.full((4, 2), 4.0))


@pytest.mark.parametrize("f", [
    lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]),   # a repeated destination
    lambda v: lax.ppermute(v, "i", [(0, 7)]),           # outside the axis
    lambda v: lax.pbroadcast(v, "i", 4),
    lambda v: lax.psum_scatter(v, "i"),                 # 8 != 4 untiled
    lambda v: lax.psum_scatter(v[:3], "i", tiled=True),  # 3 not divisible by 4
    lambda v: lax.psum_scatter(v, "i", scatter_dimension=2),
    lambda v: lax.all_to_all(v, "i", 0, 0),
])
def test_bad_arguments_raise_value_error(f):
    with pytest.raises(ValueError):
        _named(f)(X)


def test_unbound_name():
    with pytest.raises(NameError, match="unbound axis name"):
        lax.ppermute(X, "q", [(0, 1)])


def test_pvary_and_psum_invariant_under_vmap():
    # shard_map's typed casts: pvary is the identity, psum_invariant a psum over the named axis
    # (NumPy's sum over the mapped axis is the oracle)
    from laminax_core import lax as core_lax

    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)

    def body(v):
        w = core_lax.pvary_p.bind(v, axes=("i",))
        return core_lax.psum_invariant_p.bind(w * 2, axes=("i",))

    np.testing.assert_allclose(vmap(body, axis_name="i")(x), np.broadcast_to(2 * x.sum(0), (3, 2)))
    with pytest.raises(NameError):
        core_lax.pcast(x, "i", to="varying")  # no axis named i is bound
