"""jaxlib's C++ fast path under jit and eager dispatch: repeated calls stay out of Python, and
every case that needs Python (tracers, effects, donation, deleted buffers, debug checks,
disable_jit, config changes, bad arguments) still comes back to it and behaves as before."""

import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_core import config, grad, lax, make_jaxpr, vmap
from laminax_core.internal import Effect, Primitive, lowerable_effects, ordered_effects
from laminax_dispatch import _eager, effects_barrier, jit, register_lowering
from laminax_dispatch._fast_path import fast_path_data

F32 = np.float32


def _fresh(n=3):
    return ld.device_put(np.arange(n, dtype=F32)) + 0.0


# ----- jit: the fast path is taken --------------------------------------------------------------


def test_repeated_calls_do_not_reach_python():
    f = jit(lambda x: x * 2.0)
    x = _fresh()
    for _ in range(5):
        out = f(x)
    np.testing.assert_array_equal(out, [0, 2, 4])
    assert f._cache_misses == 1
    assert f._cpp_cache_size() == 1


def test_numpy_arrays_and_python_scalars_take_the_fast_path_too():
    f = jit(lambda x, y: x + y)
    for _ in range(3):
        out = f(np.ones(2, F32), 2.0)
    np.testing.assert_array_equal(out, [3, 3])
    assert f._cache_misses == 1


def test_weak_and_strong_scalars_get_separate_entries():
    f = jit(lambda x: x * 2)  # (an identity is not compiled: it never reaches the fast path)
    assert f(1.0).weak_type
    assert not f(np.float32(1.0)).weak_type
    assert f(1.0).weak_type
    assert f._cache_misses == 2


def test_new_shape_static_value_or_config_misses_once_each():
    f = jit(lambda x, n: x * n, static_argnums=1)
    x = _fresh()
    f(x, 2)
    f(x, 2)
    f(x, 3)
    f(np.ones(4, F32), 3)
    assert f._cache_misses == 3
    with config.enable_x64(True):
        assert f(1.0, 2).dtype == np.float64
    assert f._cache_misses == 4


def test_clear_cache_empties_the_cpp_cache():
    f = jit(lambda x: x + 1.0)
    f(_fresh())
    f.clear_cache()
    assert f._cpp_cache_size() == 0
    f(_fresh())
    assert f._cache_misses == 2


def test_outputs_keep_the_committed_flag_of_the_first_call():
    f = jit(lambda x: x + 1.0)
    committed = ld.device_put(np.ones(2, F32), ld.devices()[0])
    uncommitted = ld.device_put(np.ones(2, F32))
    for _ in range(2):
        assert f(committed).committed
        assert not f(uncommitted).committed


def test_fast_path_data_describes_the_executable():
    f = jit(lambda x, unused: (x * 2.0, {"y": x.sum()}))
    x = _fresh()
    f(x, x)
    entry = next(iter(f._cache().values()))
    outs = entry([x, x])
    data = entry.fast_path_data(outs)
    assert data.kept_var_bitvec == [False, True] or data.kept_var_bitvec == [True, False]
    assert [a.shape for a in data.out_avals] == [(3,), ()]
    assert len(data.in_shardings) == 1 and data.out_pytree_def == entry.out_tree
    assert fast_path_data(None, None, [1.0], [True]) is None  # outputs that are not Arrays


# ----- jit: what still needs Python ---------------------------------------------------------------


def test_under_a_trace_the_call_is_staged_not_run():
    f = jit(lambda x: x * 3.0)
    f(F32(1))  # cached for the fast path
    assert "jit" in str(make_jaxpr(lambda x: f(x) + 1.0)(F32(1)))
    assert grad(lambda x: f(x))(F32(2.0)) == 3.0
    np.testing.assert_array_equal(vmap(f)(np.ones(2, F32)), [3, 3])
    jaxpr = make_jaxpr(lambda: f(F32(1)))()  # concrete argument, still staged
    assert "jit" in str(jaxpr)


class _FastPathTestEffect(Effect):
    """An ordered effect: calls with it need runtime tokens, so Python."""


ordered_effects.add_type(_FastPathTestEffect)
lowerable_effects.add_type(_FastPathTestEffect)
_effect_p = Primitive("fast_path_test_effect")
_effect_p.def_effectful_abstract_eval(lambda x: (x, {_FastPathTestEffect()}))


def _effect_lower(ctx, x):
    ctx.tokens_out = dict(ctx.tokens_in)
    return x


register_lowering(_effect_p, _effect_lower)


def test_ordered_effects_go_through_python_every_call():
    f = jit(lambda x: _effect_p.bind(x) * 2.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(np.ones(2, F32)), [2, 2])
    effects_barrier()
    assert f._cache_misses == 3


def test_donation_on_the_fast_path_deletes_and_keeps_the_same_buffer_check():
    f = jit(lambda a, b: a + b, donate_argnums=0)
    for _ in range(3):
        x = _fresh()
        pointer = x.unsafe_buffer_pointer()
        assert f(x, _fresh()).unsafe_buffer_pointer() == pointer
        assert x.is_deleted()
    assert f._cache_misses == 1
    x = _fresh()
    with pytest.raises(RuntimeError, match="a donated buffer can be passed only once"):
        f(x, x)
    assert not x.is_deleted()
    g = jit(lambda a, b: a - b, donate_argnums=1)
    g(_fresh(), _fresh())
    with pytest.raises(RuntimeError, match="are the same buffer, and it is donated"):
        g(x, x)


def test_a_deleted_array_on_the_fast_path_raises_runtime_error():
    f = jit(lambda x: x + 1.0)
    x = _fresh()
    f(x)
    x.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        f(x)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        x + 1.0  # the eager fast path says the same


def test_debug_nans_is_checked_after_the_fast_path_cached_the_call():
    f = jit(lambda x: lax.log(x))
    f(np.ones(2, F32))
    with config.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\).* in log"):
            f(-np.ones(2, F32))
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            lax.log(-np.ones(2, F32))


def test_disable_jit_calls_the_function_after_it_was_cached():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1.0

    g = jit(f)
    g(F32(1))
    g(F32(1))
    with config.disable_jit(True):
        assert float(g(F32(1))) == 2.0
    assert len(calls) == 2


def test_bad_arguments_raise_the_python_paths_errors():
    f = jit(lambda x, n: x, static_argnames="n")
    f(1.0, n=1)
    with pytest.raises(TypeError, match="of type str is not a valid array type"):
        f("text", n=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments.*static argument 'n'"):
        f(1.0, n={"a": 1})
    # under a transformation too (the call reaches jaxlib's C++ first there as well)
    with pytest.raises(ValueError, match="Non-hashable static arguments.*static argument 'n'"):
        vmap(lambda x: f(x, n=[1]))(np.ones(2, F32))


def test_traced_calls_are_staged_even_after_eager_calls_filled_the_cpp_cache():
    # the running trace is part of jaxlib's cache key: a concrete argument under make_jaxpr
    # must be staged, not run by the C++ entry the eager calls made
    f = jit(lambda x: x * 2.0)
    c = np.ones(3, F32)
    f(c)
    f(c)
    text = str(make_jaxpr(lambda y: f(c) + y)(np.ones(3, F32)))
    assert "jit[" in text and "mul" in text
    with config.debug_nans(True):  # a checked call is never answered by an unchecked entry
        with pytest.raises(FloatingPointError):
            jit(lambda x: x / x)(np.zeros(2, F32))
        g = jit(lambda x: x / x)
    g(np.ones(2, F32))
    g(np.ones(2, F32))
    with config.debug_nans(True), pytest.raises(FloatingPointError):
        g(np.zeros(2, F32))


# ----- eager dispatch ---------------------------------------------------------------------------


def test_eager_repeats_stay_in_cpp():
    x, y = _fresh(), _fresh()
    x * y
    before = _eager.eager_cache_info()
    for _ in range(3):
        out = x * y
    np.testing.assert_array_equal(out, [0, 1, 4])
    after = _eager.eager_cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])


def test_eager_weak_constants_keep_their_dtype_apart_from_strong_ones():
    x = ld.device_put(np.ones(2, np.float16))
    for _ in range(2):
        assert (x + 1.0).dtype == np.float16
        assert (x + np.float32(1.0)).dtype == np.float32
        assert lax.add(2.0, 3.0).weak_type
        assert not lax.add(np.float32(2), 3.0).weak_type


def test_eager_forwarding_computations_still_share_the_buffer():
    x = _fresh()
    for _ in range(2):
        assert lax.stop_gradient(x).unsafe_buffer_pointer() == x.unsafe_buffer_pointer()


def test_eager_multiple_results_come_back_as_a_list():
    x = ld.device_put(np.arange(6, dtype=F32).reshape(2, 3))
    params = {"dimension": 1, "is_stable": True, "num_keys": 1}
    for _ in range(2):
        outs = _eager.apply_primitive(lax.sort_p, [-x, x], params)
    assert isinstance(outs, list) and len(outs) == 2
    np.testing.assert_array_equal(outs[1], x[:, ::-1])


def test_clear_eager_cache_drops_the_cpp_functions():
    lax.neg(np.ones(2, F32))
    _eager.clear_eager_cache()
    assert _eager.eager_cache_info()["cpp_functions"] == 0
    np.testing.assert_array_equal(lax.neg(np.ones(2, F32)), [-1, -1])


# ----- the Array operator shortcut ----------------------------------------------------------------


def test_operator_shortcut_keeps_numpy_semantics():
    t, f = ld.device_put(np.array([True, False])), ld.device_put(np.array([True, True]))
    np.testing.assert_array_equal(t + f, [True, True])  # booleans: logical or, not the shortcut
    np.testing.assert_array_equal(t * f, [True, False])
    i = ld.device_put(np.array([1, 2], np.int32))
    assert (i / i).dtype == np.float32  # integer division goes through promotion
    assert (i + i).dtype == np.int32
    w = lax.add(2.0, 3.0)  # a weakly typed Array
    assert w.weak_type and (w + w).weak_type and float(w * w) == 25.0


def test_operator_shortcut_under_a_trace_stages_the_equation():
    x = _fresh()
    assert "add" in str(make_jaxpr(lambda: x + x)())
