"""lax.optimization_barrier (identity on pytrees; jvp, transpose and vmap pass through) and
lax.mulhi (high half of integer products, signed and unsigned, 8 to 64 bits)."""

import numpy as np
import pytest
from laminax_core import config, grad, jvp, lax, make_jaxpr, vmap


def test_optimization_barrier_returns_its_pytree():
    x, y = np.float32(1.5), np.arange(3, dtype=np.int32)
    out = lax.optimization_barrier({"a": x, "b": (y,)})
    assert out["a"] == x
    np.testing.assert_array_equal(out["b"][0], y)


def test_optimization_barrier_is_one_equation_over_all_leaves():
    jaxpr = make_jaxpr(lambda a, b: lax.optimization_barrier((a, b)))(np.float32(1), np.int32(2))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["optimization_barrier"]
    assert len(jaxpr.jaxpr.eqns[0].outvars) == 2


def test_optimization_barrier_derivatives_and_vmap():
    x = np.arange(4, dtype=np.float32)
    g = grad(lambda v: lax.optimization_barrier(v * v).sum())(x)
    np.testing.assert_array_equal(g, 2 * x)
    _, t = jvp(lambda v: lax.optimization_barrier((v, 3 * v))[1], (x,), (np.ones(4, np.float32),))
    np.testing.assert_array_equal(t, [3, 3, 3, 3])
    out = vmap(lambda v: lax.optimization_barrier(v + 1))(x)
    np.testing.assert_array_equal(out, x + 1)


def _mulhi_big(x, y, bits):
    return [(int(a) * int(b)) >> bits for a, b in zip(x.ravel(), y.ravel(), strict=True)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
def test_mulhi_is_the_high_half_of_the_product(dtype):
    info = np.iinfo(dtype)
    rng = np.random.RandomState(0)
    x = rng.randint(info.min, info.max, 20, dtype=np.int64).astype(dtype)
    y = rng.randint(info.min, info.max, 20, dtype=np.int64).astype(dtype)
    out = lax.mulhi(x, y)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.astype(np.int64), _mulhi_big(x, y, info.bits))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_mulhi_of_64_bit_integers(dtype):
    info = np.iinfo(dtype)
    with config.enable_x64(True):
        x = np.array([info.max, info.min, 12345678901234], dtype)
        y = np.array([info.max, 3, info.max // 7], dtype)
        out = lax.mulhi(x, y)
        assert out.dtype == dtype
        assert [int(v) for v in out] == _mulhi_big(x, y, 64)


def test_mulhi_rejects_floats():
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
        lax.mulhi(np.float32(1), np.float32(2))
