"""Primitive, define_primitive and describe: user-defined primitives work with every
transformation."""

import numpy as np
import pytest
from laminax_core import Primitive, ShapedArray, grad, jvp, lax, make_jaxpr, vjp, vmap
from laminax_core.internal import (
    NOT_LINEAR,
    batch_elementwise,
    define_primitive,
    describe,
    jvp_from,
    same_shape,
    set_eager_impl,
)

triple_p = Primitive("triple")
triple_p.def_impl(lambda x: 3 * x)
triple_p.def_abstract_eval(lambda aval: aval)
triple_p.def_jvp(lambda primals, tangents: (triple_p.bind(*primals), triple_p.bind(*tangents)))
triple_p.def_transpose(lambda ct, x: [triple_p.bind(ct)])
triple_p.def_batch(lambda axis_data, args, dims: (triple_p.bind(*args), dims[0]))


def test_user_primitive_binds_eagerly_and_traces():
    np.testing.assert_array_equal(triple_p.bind(np.float32(2)), 6.0)
    assert str(make_jaxpr(lambda x: triple_p.bind(x))(np.float32(2))) == (
        "{ lambda ; a:f32[]. let b:f32[] = triple a in (b,) }"
    )


def test_user_primitive_under_every_transformation():
    x = np.float32(2)
    assert jvp(lambda v: triple_p.bind(v), (x,), (np.float32(1),))[1] == 3.0
    assert grad(lambda v: triple_p.bind(v) * v)(x) == 12.0
    assert vjp(lambda v: triple_p.bind(v), x)[1](np.float32(1))[0] == 3.0
    np.testing.assert_array_equal(
        vmap(lambda v: triple_p.bind(v))(np.ones(3, np.float32)), np.full(3, 3.0, np.float32)
    )


def test_missing_rules_raise_clear_errors():
    bare_p = Primitive("bare")
    bare_p.def_impl(lambda x: x)
    bare_p.def_abstract_eval(lambda aval: aval)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'bare'"):
        jvp(lambda v: bare_p.bind(v), (np.float32(1),), (np.float32(1),))
    with pytest.raises(NotImplementedError, match="Batching rule for 'bare'"):
        vmap(lambda v: bare_p.bind(v))(np.ones(2, np.float32))
    nothing_p = Primitive("nothing")
    with pytest.raises(NotImplementedError, match="no abstract evaluation rule"):
        make_jaxpr(lambda v: nothing_p.bind(v))(np.float32(1))


def test_missing_transpose_rule_raises():
    half_p = Primitive("half")
    half_p.def_impl(lambda x: x / 2)
    half_p.def_abstract_eval(lambda aval: aval)
    half_p.def_jvp(lambda p, t: (half_p.bind(*p), half_p.bind(*t)))
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'half'"):
        grad(lambda v: half_p.bind(v))(np.float32(1))


def _cube_jvp(t, ans, x):
    return lax.mul(t, lax.mul(3.0, lax.mul(x, x)))  # d x^3 = 3 x^2


cube_p = define_primitive(
    "cube",
    abstract_eval=same_shape(),
    reference=lambda x: x**3,
    jvp=jvp_from(_cube_jvp),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def test_define_primitive_registers_every_rule():
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(cube_p.bind(x), x**3)
    np.testing.assert_allclose(grad(lambda v: cube_p.bind(v).sum())(x), 3 * x**2)
    np.testing.assert_array_equal(vmap(lambda v: cube_p.bind(v))(x), x**3)
    text = describe(cube_p)
    assert "primitive 'cube'" in text
    assert "transpose      NOT_LINEAR" in text
    assert "test_primitive.py" in text


def test_describe_lists_where_lax_rules_are_registered():
    text = describe(lax.sin_p)
    assert "_elementwise.py" in text and "jvp" in text and "batch" in text


def test_eager_hook_replaces_the_reference():
    calls = []

    def executor(primitive, args, params):
        calls.append(primitive.name)
        return np.float32(42)

    previous = set_eager_impl(executor)
    try:
        assert lax.sin(np.float32(0)) == 42
    finally:
        set_eager_impl(previous)
    assert calls == ["sin"]
    assert lax.sin(np.float32(0)) == 0


def test_abstract_eval_returns_avals():
    out, effects = lax.add_p.abstract_eval(
        ShapedArray((2,), np.float32), ShapedArray((2,), np.float32)
    )
    assert out == ShapedArray((2,), np.float32) and effects == frozenset()


# ----- higher-order primitives: every rule given, or said not to apply ----------------------


def _higher_order_primitives():
    from laminax_core import internal, lax

    return [lax.cond_p, lax.scan_p, lax.while_p, internal.remat_p, internal.custom_jvp_call_p,
            internal.custom_vjp_call_p, internal.custom_lin_p]


@pytest.mark.parametrize("primitive", _higher_order_primitives(), ids=str)
def test_higher_order_primitives_register_every_rule(primitive):
    kinds = {"abstract_eval", "reference", "jvp", "transpose", "batch", "partial_eval"}
    assert kinds <= set(primitive.registered_at), primitive.registered_at


def test_a_higher_order_primitive_without_a_rule_is_refused():
    from laminax_core._primitive import STAGED_WHOLE, define_higher_order_primitive

    with pytest.raises(TypeError, match="batch"):
        define_higher_order_primitive(
            "incomplete", abstract_eval=lambda: ([], set()), reference=lambda: [],
            jvp=lambda p, t: (p, t), transpose=lambda ct: ct, partial_eval=STAGED_WHOLE,
        )
