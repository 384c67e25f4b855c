"""custom_gradient and closure_convert: gradients come from the user's vjp closure, and closed-over
float tracers become explicit arguments."""

import numpy as np
import pytest
from laminax_core import closure_convert, custom_gradient, grad, jvp, make_jaxpr, vmap
from laminax_core import numpy as jnp

F32 = np.float32


@custom_gradient
def _square_with_fake_gradient(x):
    return x * x, lambda g: (g * 10.0,)


def test_value_is_the_function_and_gradient_is_the_rule():
    assert float(_square_with_fake_gradient(F32(3))) == 9.0
    assert float(grad(_square_with_fake_gradient)(F32(3))) == 10.0


def test_rule_can_use_values_of_the_forward_pass():
    @custom_gradient
    def clipped_log(x):
        def vjp(g):
            return (g / jnp.maximum(x, F32(1e-3)),)

        return jnp.log(x), vjp

    np.testing.assert_allclose(grad(clipped_log)(F32(0.5)), 2.0)
    np.testing.assert_allclose(grad(clipped_log)(F32(1e-6)), 1000.0, rtol=1e-6)


def test_several_arguments_and_argnums():
    @custom_gradient
    def prod(x, y):
        return x * y, lambda ct: (ct * y * 2.0, ct * x * 3.0)

    gx, gy = grad(prod, argnums=(0, 1))(F32(2), F32(5))
    assert (float(gx), float(gy)) == (10.0, 6.0)


def test_pytree_output_cotangents_reach_the_rule():
    @custom_gradient
    def pair(x):
        return {"a": x, "b": 2.0 * x}, lambda ct: (ct["a"] + 100.0 * ct["b"],)

    assert float(grad(lambda x: pair(x)["b"])(F32(1))) == 100.0


def test_vmap_of_grad_applies_the_rule_per_example():
    out = vmap(grad(_square_with_fake_gradient))(np.arange(3, dtype=F32))
    np.testing.assert_array_equal(out, [10.0, 10.0, 10.0])


def test_forward_mode_is_refused_as_for_custom_vjp():
    with pytest.raises(TypeError, match="custom_vjp"):
        jvp(_square_with_fake_gradient, (F32(1),), (F32(1),))


def test_closure_convert_outside_transformations_hoists_nothing():
    fun, consts = closure_convert(lambda x: x * 2.0, F32(1))
    assert consts == []
    assert float(fun(F32(4))) == 8.0


def test_closure_convert_hoists_float_tracers_and_keeps_their_derivative():
    def outer(a):
        fun, consts = closure_convert(lambda x: x * a, F32(1))
        assert len(consts) == 1
        return fun(F32(2), *consts)

    assert float(grad(outer)(F32(3))) == 2.0


def test_closure_convert_leaves_integer_tracers_closed_over():
    def outer(a, n):
        fun, consts = closure_convert(lambda x: x * a + n, F32(1))
        return fun(F32(2), *consts), len(consts)

    jaxpr = make_jaxpr(lambda a, n: outer(a, n)[0])(F32(1), np.int32(2))
    assert jaxpr.out_avals[0].dtype == np.float32
    value, count = outer(F32(1), np.int32(2))
    assert float(value) == 4.0 and count == 0


def test_closure_convert_rejects_a_different_argument_structure():
    fun, consts = closure_convert(lambda p: p["x"] * 2.0, {"x": F32(1)})
    with pytest.raises(TypeError, match="traced for arguments"):
        fun((F32(1),), *consts)
