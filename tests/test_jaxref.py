"""The differential-testing helper itself: values, errors and isolation come back as promised."""

import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax


@requires_jax
def test_run_jax_returns_arrays_as_numpy():
    result = run_jax("result = jnp.arange(3) * scale", scale=2)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, [0, 2, 4])
    assert result.dtype == np.int32


@requires_jax
def test_run_jax_converts_nested_containers():
    result = run_jax("result = {'a': (jnp.ones(2), [jnp.zeros(1)]), 'b': 'text'}")
    assert result["b"] == "text"
    np.testing.assert_array_equal(result["a"][0], np.ones(2, np.float32))
    assert isinstance(result["a"][1], list)


@requires_jax
def test_run_jax_x64_worker_is_separate():
    assert run_jax("result = str(jnp.zeros(1).dtype)") == "float32"
    assert run_jax("result = str(jnp.zeros(1).dtype)", x64=True) == "float64"


@requires_jax
def test_run_jax_reports_jax_exceptions_with_type_and_message():
    with pytest.raises(JaxReferenceError, match="ValueError") as info:
        run_jax("jax.tree_util.tree_unflatten(jax.tree_util.tree_structure([1, 2]), [1])")
    assert info.value.type_name == "ValueError"
