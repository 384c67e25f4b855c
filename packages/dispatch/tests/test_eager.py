"""Eager op-by-op dispatch: primitives outside a trace run on XLA through a per-signature
executable cache, trivial computations are not compiled, and Arrays carry core's operators."""

import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_core import grad, lax, vmap
from laminax_core.internal import Primitive
from laminax_dispatch import _eager, jit
from laminax_dispatch.internal import cache_info

F32 = np.float32


def test_primitives_outside_a_trace_return_arrays():
    out = lax.sin(np.arange(3, dtype=F32))
    assert isinstance(out, ld.Array)
    np.testing.assert_allclose(out, np.sin(np.arange(3, dtype=F32)), rtol=1e-6)


def test_python_scalars_are_weakly_typed_numpy_values_are_not():
    assert lax.add(2.0, 3.0).weak_type
    strong = lax.add(np.float32(2), 3.0)
    assert strong.dtype == np.float32 and not strong.weak_type


def test_same_signature_runs_without_the_python_path():
    x = np.ones(7, F32)
    lax.cos(x)
    before = _eager.eager_cache_info()
    lax.cos(x + 0)  # the C++ fast path finds the executable: Python counts neither
    after = _eager.eager_cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])


def test_new_params_or_avals_compile_again():
    before = _eager.eager_cache_info()["misses"]
    lax.reduce_sum(np.ones((2, 9), F32), (0,))
    lax.reduce_sum(np.ones((2, 9), F32), (1,))
    lax.reduce_sum(np.ones((2, 9), np.int32), (1,))
    assert _eager.eager_cache_info()["misses"] == before + 3


def test_forwarding_computations_are_not_compiled_and_share_the_buffer():
    x = ld.device_put(np.arange(3, dtype=F32))
    compiles = cache_info()["misses"] + cache_info()["hits"]
    y = lax.stop_gradient(x)
    z = lax.convert_element_type(x, np.float32, weak_type=True)
    assert cache_info()["misses"] + cache_info()["hits"] == compiles
    assert y.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
    assert z.weak_type and not x.weak_type
    assert z.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()


def test_copy_makes_a_new_buffer():
    x = ld.device_put(np.arange(3, dtype=F32))
    y = lax.copy_p.bind(x)
    assert y.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(y, x)


def test_committed_inputs_give_committed_outputs():
    device = ld.devices()[0]
    x = ld.device_put(np.ones(2, F32), device)
    assert lax.neg(x).committed
    assert not lax.neg(np.ones(2, F32)).committed


def test_arrays_have_the_operators_of_tracers():
    x = ld.device_put(np.arange(6, dtype=F32).reshape(2, 3))
    np.testing.assert_array_equal(x + 1, np.arange(6).reshape(2, 3) + 1)
    np.testing.assert_array_equal(2 * x, np.arange(6).reshape(2, 3) * 2)
    host = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(x @ x.T, host @ host.T)
    np.testing.assert_array_equal(x[1, 1:], [4, 5])
    np.testing.assert_array_equal(x.sum(axis=0), [3, 5, 7])
    np.testing.assert_array_equal((x > 2), np.arange(6).reshape(2, 3) > 2)
    np.testing.assert_array_equal(-(x**2), -(np.arange(6).reshape(2, 3) ** 2))
    assert isinstance(x.reshape(3, 2), ld.Array)


def test_arrays_have_core_numpy_methods_and_at_updates():
    x = ld.device_put(np.arange(4, dtype=F32))
    y = x.at[1].set(9.0)
    assert isinstance(y, ld.Array)
    np.testing.assert_array_equal(y, [0, 9, 2, 3])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    assert float(x.mean()) == 1.5
    np.testing.assert_array_equal(x[np.array([0, 2])], [0, 2])
    assert x.nbytes == 16


def test_numpy_operand_on_the_left_defers_to_the_array():
    x = ld.device_put(np.ones(3, F32))
    out = np.ones(3, F32) + x
    assert isinstance(out, ld.Array)


def test_eager_and_traced_code_read_the_same():
    def f(x):
        return (x[1:] * 2.0).sum() + x.max()

    x = np.arange(4, dtype=F32)
    assert float(f(ld.device_put(x))) == float(jit(f)(x)) == 15.0
    np.testing.assert_allclose(grad(f)(x), [0, 2, 2, 3])
    np.testing.assert_allclose(vmap(f)(np.stack([x, x])), [15, 15])


def test_primitive_without_lowering_runs_its_reference_eagerly_and_fails_under_jit():
    double_p = Primitive("eager_only_double")
    double_p.def_abstract_eval(lambda aval: aval)
    double_p.def_reference(lambda x: 2 * x)
    out = double_p.bind(np.arange(3, dtype=F32))
    assert isinstance(out, ld.Array)
    np.testing.assert_array_equal(out, [0, 2, 4])
    with pytest.raises(
        NotImplementedError,
        match=r"jit: primitive 'eager_only_double' has no "
        r"StableHLO lowering\. Register one with "
        r"laminax_dispatch.register_lowering",
    ):
        jit(lambda x: double_p.bind(x))(np.ones(2, F32))


def test_user_impl_takes_precedence():
    p = Primitive("user_impl_square")
    p.def_impl(lambda x: np.square(np.asarray(x)))
    p.def_abstract_eval(lambda aval: aval)
    out = p.bind(np.float32(3))
    assert float(out) == 9.0 and not isinstance(out, ld.Array)


def test_jnp_array_gives_a_device_array_with_jax_weak_types():
    import laminax_core.numpy as jnp
    from laminax_dispatch import Array

    for value, weak in [(1.0, True), ([1.0, 2.0], False), (np.float32(2), False)]:
        out = jnp.array(value)
        assert isinstance(out, Array) and out.weak_type == weak, (value, out)
    x = jnp.asarray(np.arange(3))
    assert isinstance(x, Array) and x.dtype == np.int32
    assert float(x.at[0].set(5)[0]) == 5.0


def test_jnp_array_under_a_transformation_stays_a_constant():
    import laminax_core.numpy as jnp
    from laminax_core import make_jaxpr

    jaxpr = make_jaxpr(lambda a: a + jnp.array([1.0, 2.0]))(np.ones(2, np.float32))
    assert len(jaxpr.jaxpr.constvars) == 1 and isinstance(jaxpr.consts[0], np.ndarray)
