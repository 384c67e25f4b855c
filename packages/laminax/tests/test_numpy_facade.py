"""laminax.numpy's one-array elementwise functions are inlined jits, as JAX's are: eager calls
take the compiled fast path, and under transformations they stage what the plain ones do."""

import laminax
import laminax.numpy as jnp
import laminax_core.numpy as core_numpy
import numpy as np
import pytest
from laminax_core.internal import unary_elementwise_names as UNARY_ELEMENTWISE

WRAPPED = [n for n in UNARY_ELEMENTWISE if getattr(jnp, n) is not getattr(core_numpy, n)]


def test_the_elementwise_functions_are_wrapped_and_the_ufunc_objects_are_not():
    assert "sin" in WRAPPED and "tanh" in WRAPPED
    assert jnp.negative is core_numpy.negative  # a ufunc object keeps its methods
    assert jnp.sum is core_numpy.sum


@pytest.mark.parametrize("name", WRAPPED)
def test_eager_values_and_weak_types_match_the_plain_function(name):
    x = np.linspace(0.1, 0.9, 5).astype(np.float32)
    np.testing.assert_array_equal(getattr(jnp, name)(x), getattr(core_numpy, name)(x))
    assert getattr(jnp, name)(0.5).weak_type == getattr(core_numpy, name)(0.5).weak_type


@pytest.mark.parametrize("name", WRAPPED)
def test_traced_calls_stage_the_same_equations_as_the_plain_function(name):
    def staged(fun):
        return str(laminax.make_jaxpr(lambda x: fun(x) * 2.0)(np.float32(0.5)))

    assert staged(getattr(jnp, name)) == staged(getattr(core_numpy, name))


def test_repeated_eager_calls_do_not_return_to_python():
    x = jnp.ones(4, jnp.float32)
    jnp.cos(x)
    misses = jnp.cos._jit_function._cache_misses
    for _ in range(20):
        jnp.cos(x)
    assert jnp.cos._jit_function._cache_misses == misses


def test_the_wrapper_is_jaxlibs_pjit_function_with_the_jit_methods():
    # as JAX's jnp.sin: no Python frame around the C++ call
    assert type(jnp.sin).__name__ == "PjitFunction" and jnp.sin.__name__ == "sin"
    assert "stablehlo.sine" in jnp.sin.lower(np.float32(1)).as_text()
    assert jnp.sin.eval_shape(np.ones(3, np.float32)).shape == (3,)
    # a constant under a transformation is staged, not computed by the C++ cache
    text = str(laminax.make_jaxpr(lambda y: jnp.sin(np.float32(2)) + y)(np.float32(1)))
    assert "sin" in text


def test_bad_input_still_gets_the_numpy_error():
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin([1.0, 2.0])
