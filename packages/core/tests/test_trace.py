"""Tracer behaviour: operators, attributes, indexing, and JAX's errors with hints."""

import numpy as np
import pytest
from laminax_core import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    grad,
    jvp,
    lax,
    make_jaxpr,
    vmap,
)

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _prims(fun, *args):
    return [e.primitive.name for e in make_jaxpr(fun)(*args).eqns]


def test_tracer_attributes():
    seen = {}

    def fun(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, T=x.T.shape)
        return x

    make_jaxpr(fun)(X)
    assert seen == {"shape": (3, 4), "dtype": np.float32, "ndim": 2, "size": 12, "T": (4, 3)}


@pytest.mark.parametrize(
    "fun,expected",
    [
        (lambda x: x + 1, X + 1),
        (lambda x: 1 - x, 1 - X),
        (lambda x: x * x, X * X),
        (lambda x: x / 2, X / 2),
        (lambda x: 2 / (x + 1), 2 / (X + 1)),
        (lambda x: -x, -X),
        (lambda x: x**2, X**2),
        (lambda x: (x + 1) ** 0.5, (X + 1) ** 0.5),
        (lambda x: abs(x - 5), abs(X - 5)),
        (lambda x: x @ x.T, X @ X.T),
        (lambda x: x > 3, X > 3),
        (lambda x: x <= 3, X <= 3),
        (lambda x: x == 3, X == 3),
        (lambda x: x.sum(), X.sum()),
        (lambda x: x.sum(axis=0), X.sum(0)),
        (lambda x: x.max(axis=1), X.max(1)),
        (lambda x: x.mean(), X.mean()),
        (lambda x: x.argmax(), X.argmax()),
        (lambda x: x.reshape(4, 3), X.reshape(4, 3)),
        (lambda x: x.reshape(-1), X.reshape(-1)),
        (lambda x: x.astype(np.int32), X.astype(np.int32)),
        (lambda x: x.transpose(), X.T),
        (lambda x: x[None].squeeze(), X),
        (lambda x: x % 5, X % 5),
        (lambda x: 7 % (x + 1), 7 % (X + 1)),
        (lambda x: x // 5, X // 5),
        (lambda x: x.astype(np.int32) & 6, X.astype(np.int32) & 6),
        (lambda x: ~x.astype(np.int32), ~X.astype(np.int32)),
        (lambda x: x.astype(np.int32) << 1, X.astype(np.int32) << 1),
    ],
)
def test_operators_under_vmap_match_numpy(fun, expected):
    # vmap over a size-1 axis traces the operators without changing the result
    out = vmap(fun)(X[None])[0]
    np.testing.assert_allclose(
        np.asarray(out, np.float64), np.asarray(expected, np.float64), rtol=1e-5
    )


@pytest.mark.parametrize(
    "index",
    [
        1,
        -1,
        (1, 2),
        (slice(1, 3),),
        (slice(None), 2),
        (None, 1),
        (Ellipsis, 1),
        (1, None, 2),
        (slice(0, 3, 2), slice(None, None, 3)),
        (Ellipsis,),
        (slice(1, 2), None),
    ],
)
def test_static_indexing_matches_numpy(index):
    out = vmap(lambda x: x[index])(X[None])[0]
    np.testing.assert_array_equal(out, X[index])


def test_indexing_prints_like_jax():
    assert _prims(lambda x: x[1], X) == ["slice", "squeeze"]
    assert _prims(lambda x: x[1:2, None], X) == ["slice", "broadcast_in_dim"]


def test_traced_integer_index_uses_dynamic_slice():
    xs = np.stack([X, X, X])
    out = vmap(lambda x, i: x[i])(xs, np.array([0, 2, -1], np.int32))
    np.testing.assert_array_equal(out, X[[0, 2, -1]])


def test_indexing_a_numpy_array_with_a_tracer_raises():
    with pytest.raises(TracerArrayConversionError):
        vmap(lambda i: X[i])(np.array([0, 1], np.int32))


def test_index_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        make_jaxpr(lambda x: x[:0][5])(X)
    with pytest.raises(IndexError, match="Too many indices"):
        make_jaxpr(lambda x: x[1, 2, 3])(X)


def test_mixed_dtype_operators_promote_like_jax():
    closed = make_jaxpr(lambda x, y: x + y)(np.ones(3, np.int32), np.ones(3, np.float32))
    assert [e.primitive.name for e in closed.eqns] == ["convert_element_type", "add"]
    assert closed.out_avals[0].dtype == np.float32
    closed = make_jaxpr(lambda x: x + 1.0)(np.ones(3, np.float16))
    assert closed.out_avals[0].dtype == np.float16
    assert str(closed).count("1.0:f16[]") == 1


def test_bool_of_tracer_raises_with_hint():
    with pytest.raises(TracerBoolConversionError, match="static_argnums"):
        make_jaxpr(lambda x: 1 if x > 0 else 0)(np.float32(1))


def test_int_and_float_of_tracer_raise_concretization_errors():
    with pytest.raises(ConcretizationTypeError, match="int"):
        make_jaxpr(lambda x: int(x))(np.float32(1))
    with pytest.raises(ConcretizationTypeError, match="float"):
        make_jaxpr(lambda x: float(x))(np.float32(1))


def test_index_of_tracer_raises_integer_conversion_error():
    with pytest.raises(TracerIntegerConversionError):
        make_jaxpr(lambda x: [1, 2, 3][x])(np.int32(1))


def test_numpy_conversion_raises_array_conversion_error():
    with pytest.raises(TracerArrayConversionError):
        make_jaxpr(lambda x: np.asarray(x))(X)


def test_jvp_tracers_of_concrete_values_allow_python_control_flow():
    def fun(x):
        return x * 2.0 if x > 0 else -x

    assert jvp(fun, (np.float32(1),), (np.float32(1),))[1] == 2.0
    assert grad(fun)(np.float32(-1)) == -1.0


def test_leaked_tracer_raises_unexpected_tracer_error():
    leaked = []

    def fun(x):
        leaked.append(x)
        return x

    make_jaxpr(fun)(np.float32(1))
    with pytest.raises(UnexpectedTracerError, match=r"make_jaxpr.*test_trace.py"):
        lax.sin(leaked[0])


def test_leaked_tracer_from_vmap_names_vmap():
    leaked = []
    vmap(lambda x: leaked.append(x) or x)(np.ones(2, np.float32))
    with pytest.raises(UnexpectedTracerError, match="vmap"):
        make_jaxpr(lambda y: y + leaked[0])(np.float32(1))


def test_tracers_are_unhashable_and_sized():
    def fun(x):
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
        assert len(x) == 3
        assert [r.shape for r in x] == [(4,)] * 3
        return x

    make_jaxpr(fun)(X)


# ----- jax_check_tracer_leaks ---------------------------------------------------------------

import gc  # noqa: E402
import weakref  # noqa: E402

from laminax_core import config, custom_jvp, hessian  # noqa: E402

LEAKED_BOX: list = []


@pytest.fixture
def leak_checks():
    LEAKED_BOX.clear()
    with config.checking_leaks():
        yield
    LEAKED_BOX.clear()


def test_leak_check_is_off_by_default():
    box = []
    make_jaxpr(lambda x: box.append(x) or x)(1.0)
    assert not config.check_tracer_leaks.value and len(box) == 1


def test_make_jaxpr_leak_into_a_global_raises_at_the_end(leak_checks):
    pattern = r"(?s)Leaked trace DynamicJaxprTrace.*module \S*test_trace"
    with pytest.raises(Exception, match=pattern):
        make_jaxpr(lambda x: LEAKED_BOX.append(x) or x)(1.0)


def test_vmap_leak_into_a_local_or_an_attribute_raises(leak_checks):
    box = []
    with pytest.raises(Exception, match=r"(?s)Leaked trace BatchTrace.*a local of test_vmap_leak"):
        vmap(lambda x: box.append(x * 2) or x)(X)

    class Holder:
        pass

    holder = Holder()
    with pytest.raises(Exception, match=r"(?s)Leaked trace BatchTrace.*<Holder \d+>"):
        vmap(lambda x: setattr(holder, "value", x) or x)(X)


def test_differentiation_leaks_are_not_checked_as_in_jax(leak_checks):
    box = []
    assert grad(lambda x: box.append(x) or x)(1.0) == 1.0
    assert jvp(lambda x: box.append(x) or x, (1.0,), (1.0,))[1] == 1.0
    with pytest.raises(UnexpectedTracerError):
        lax.sin(box[0])


def test_no_leak_no_error(leak_checks):
    @custom_jvp
    def f(x):
        return lax.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 2.0))
    x = np.arange(3, dtype=np.float32)
    programs = [
        lambda: make_jaxpr(lambda v: lax.cond(v[0] > 0, lax.sin, lax.cos, v))(x),
        lambda: grad(lambda v: lax.scan(lambda c, y: (c * y, c), v, x)[0])(1.0),
        lambda: vmap(grad(lambda v: f(v) * v))(x),
        lambda: grad(lambda v: vmap(f)(v).sum())(x),
        lambda: hessian(lambda v: (v**3).sum())(x),
        lambda: make_jaxpr(vmap(lambda v: lax.dynamic_slice(x, (v,), (2,))))(np.int32([0, 1])),
    ]
    for program in programs:
        program()


def test_an_exception_inside_the_trace_wins_over_the_leak(leak_checks):
    def fails(x):
        LEAKED_BOX.append(x)
        raise ValueError("inner")

    with pytest.raises(ValueError, match="inner"):
        make_jaxpr(fails)(1.0)


def test_leak_check_keeps_no_local_alive_and_no_namespace_changed(leak_checks):
    class Big:
        pass

    obj = Big()
    ref = weakref.ref(obj)
    make_jaxpr(lambda v: v * 2)(1.0)
    del obj
    gc.collect()
    assert ref() is None
    namespace = {"make_jaxpr": make_jaxpr, "before": 1}
    exec("out = make_jaxpr(lambda v: v + 1)(1.0)\nafter = 2", namespace)
    assert namespace["before"] == 1 and namespace["after"] == 2
