"""jit: retracing rules, static arguments, pruning, placement, nesting, transformations of jitted
functions, disable_jit, and the function cache (weak, bounded, shared)."""

import gc
import weakref

import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_core import config, grad, lax, make_jaxpr, value_and_grad, vmap
from laminax_dispatch import _jit, jit
from laminax_dispatch._fast_path import new_cache

F32 = np.float32


class Counter:
    """A function that counts how often it is traced."""

    def __init__(self, fun):
        self.fun = fun
        self.traces = 0
        self.__name__ = getattr(fun, "__name__", "counted")

    def __call__(self, *args, **kwargs):
        self.traces += 1
        return self.fun(*args, **kwargs)


# ----- calling and retracing ----------------------------------------------------------------


def test_jit_computes_and_returns_arrays_in_the_output_tree():
    f = jit(lambda x, y: {"sum": x + y, "prod": (x * y, x - y)})
    out = f(np.arange(3, dtype=F32), np.ones(3, F32))
    assert isinstance(out["sum"], ld.Array)
    np.testing.assert_array_equal(out["prod"][1], [-1, 0, 1])


def test_second_call_with_same_signature_does_not_retrace():
    f = Counter(lambda x: x * 2)
    g = jit(f)
    g(np.ones(3, F32))
    g(np.zeros(3, F32))
    assert f.traces == 1


@pytest.mark.parametrize(
    "first,second",
    [
        (np.ones(3, F32), np.ones(4, F32)),  # shape
        (np.ones(3, F32), np.ones(3, np.int32)),  # dtype
        (1.0, np.float32(1.0)),  # weak type
        ((np.ones(2, F32),), [np.ones(2, F32)]),  # tree structure
    ],
    ids=["shape", "dtype", "weak_type", "tree"],
)
def test_new_signature_retraces(first, second):
    f = Counter(lambda x: x)
    g = jit(f)
    g(first)
    g(second)
    assert f.traces == 2


def test_config_in_trace_context_retraces():
    f = Counter(lambda x: x + 1)
    g = jit(f)
    g(np.ones(2, F32))
    with config.enable_x64(True):
        out = g(np.ones(2, F32))
    assert f.traces == 2
    assert out.dtype == np.float32


def test_new_jit_object_for_the_same_function_shares_the_cache():
    f = Counter(lambda x: x * 3)
    jit(f)(np.ones(2, F32))
    jit(f)(np.ones(2, F32))
    assert f.traces == 1


def test_cache_holds_the_function_weakly():
    def f(x):
        return x + 1

    jit(f)(np.ones(2, F32))
    assert f in _jit._fun_caches
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None  # neither the cache nor its compiled entries kept it alive


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_jit, "_CACHE_SIZE", 3)
    monkeypatch.setattr(_jit, "_cpp_cache", new_cache(3))  # the C++ fast path's bound
    f = Counter(lambda x: x)
    g = jit(f)
    for n in range(5):
        g(np.ones(n + 1, F32))
    assert g._cache_size() == 3
    g(np.ones(1, F32))  # evicted: traced again
    assert f.traces == 6


def test_clear_cache_forgets_signatures():
    f = Counter(lambda x: x)
    g = jit(f)
    g(np.ones(2, F32))
    g.clear_cache()
    g(np.ones(2, F32))
    assert f.traces == 2


def test_python_scalars_give_weakly_typed_results():
    out = jit(lambda x: x * 2)(3.0)
    assert out.dtype == np.float32 and out.weak_type


def test_jit_as_a_decorator_with_options():
    @jit(static_argnums=1)
    def power(x, n):
        return x**n

    np.testing.assert_allclose(power(np.full(2, 2, F32), 3), [8, 8])
    assert power.__name__ == "power"


def test_jit_on_a_method_takes_the_instance_as_first_argument():
    class Scale:
        @jit
        def apply(self, x):
            return x * 2.0

    with pytest.raises(TypeError, match="of type Scale is not a valid array type"):
        Scale().apply(np.ones(2, F32))


def test_non_array_output_raises_type_error():
    with pytest.raises(TypeError, match="returned a value of type str"):
        jit(lambda x: "text")(1.0)


def test_jit_of_non_callable_raises():
    with pytest.raises(TypeError, match="expected a callable"):
        jit(3)


# ----- static arguments ---------------------------------------------------------------------


def test_static_argnums_retrace_per_value():
    f = Counter(lambda x, n: x * n)
    g = jit(f, static_argnums=1)
    assert float(g(F32(2), 3)) == 6.0
    g(F32(2), 3)
    g(F32(2), 4)
    assert f.traces == 2


def test_static_argnames_and_argnums_are_resolved_from_each_other():
    traces = []

    def f(x, n):
        traces.append(n)
        return x * n

    g = jit(f, static_argnames="n")
    assert g._options.static_argnums == (1,)
    assert jit(f, static_argnums=1)._options.static_argnames == ("n",)
    g(F32(1), 2)
    g(F32(1), n=2)
    assert float(g(F32(1), n=5)) == 5.0
    assert traces[0] == 2 and traces[-1] == 5


def test_unhashable_static_argument_raises_value_error_naming_it():
    g = jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match=r"Non-hashable static arguments.*list.*\[1\]"):
        g(1.0, [1])
    h = jit(lambda x, n: x, static_argnames="n")
    with pytest.raises(ValueError, match=r"static argument 'n'"):
        h(1.0, n={"a": 1})


def test_static_argnums_out_of_range_raises():
    with pytest.raises(ValueError, match="static_argnums=5 refers to argument 5"):
        jit(lambda x: x, static_argnums=5)


def test_static_and_donated_argument_cannot_coincide():
    with pytest.raises(ValueError, match="cannot intersect"):
        jit(lambda x, y: x, static_argnums=0, donate_argnums=0)


def test_static_value_is_used_as_python_value_while_tracing():
    def f(x, mode):
        return x + 1 if mode == "add" else x - 1

    g = jit(f, static_argnums=1)
    assert float(g(F32(1), "add")) == 2.0
    assert float(g(F32(1), "sub")) == 0.0


# ----- pruning, placement -------------------------------------------------------------------


def test_unused_arguments_are_pruned_unless_keep_unused():
    f = lambda x, unused: x * 2  # noqa: E731
    args = (np.ones(2, F32), np.ones(5, F32))
    pruned = jit(f).lower(*args).as_text()
    kept = jit(f, keep_unused=True).lower(*args).as_text()
    assert "tensor<5xf32>" not in pruned.split("->")[0]
    assert "%arg1: tensor<5xf32>" in kept
    np.testing.assert_array_equal(jit(f)(*args), [2, 2])


def test_committed_argument_decides_the_device_and_commits_outputs():
    x = ld.device_put(np.ones(2, F32), ld.devices()[0])
    out = jit(lambda x: x + 1)(x)
    assert out.committed and out.devices() == {ld.devices()[0]}
    assert not jit(lambda x: x + 1)(np.ones(2, F32)).committed


def test_device_option_commits_to_that_device():
    device = ld.devices()[-1]
    out = jit(lambda x: x * 2, device=device)(np.ones(2, F32))
    assert out.devices() == {device} and out.committed


def test_device_and_backend_together_raise():
    with pytest.raises(ValueError, match="device or backend"):
        jit(lambda x: x, device=ld.devices()[0], backend="cpu")


@pytest.mark.skipif(ld.device_count() < 2, reason="needs two CPU devices")
def test_incompatible_committed_devices_raise_jax_error():
    a = ld.device_put(np.ones(2, F32), ld.devices()[0])
    b = ld.device_put(np.ones(2, F32), ld.devices()[1])
    with pytest.raises(ValueError, match="Received incompatible devices for jitted computation"):
        jit(lambda x, y: x + y)(a, b)


def test_large_closed_over_constant_is_hoisted_small_is_embedded():
    big = np.arange(1000, dtype=F32)
    small = np.arange(4, dtype=F32)
    text_big = jit(lambda x: x + big).lower(np.ones(1000, F32)).as_text()
    text_small = jit(lambda x: x + small).lower(np.ones(4, F32)).as_text()
    assert "tensor<1000xf32>, %arg1: tensor<1000xf32>" in text_big
    assert "dense<[0.000000e+00, 1.000000e+00" in text_small
    np.testing.assert_array_equal(jit(lambda x: x + big)(np.ones(1000, F32)), big + 1)


# ----- nesting and transformations ----------------------------------------------------------


def test_jit_of_jit_prints_a_jit_equation_and_lowers_to_a_private_function():
    inner = jit(lambda x: x * 2.0)
    outer = lambda x: inner(x) + 1.0  # noqa: E731
    text = str(make_jaxpr(outer)(F32(1)))
    assert "jit[" in text and "name=<lambda>" in text and "b:f32[] = mul a 2.0:f32[]" in text
    lowered = jit(outer).lower(F32(1)).as_text()
    assert 'func.func private @"<lambda>"' in lowered and "call @" in lowered
    assert float(jit(outer)(F32(3))) == 7.0


def test_jit_called_under_a_trace_is_traced_once_per_signature():
    f = Counter(lambda x: x * 2.0)
    inner = jit(f)
    outer = jit(lambda x: inner(x) + inner(x + 1.0) + inner(np.ones(2, F32)))
    np.testing.assert_array_equal(outer(np.zeros(2, F32)), [4, 4])
    assert f.traces == 1
    closing = jit(lambda x: jit(lambda y: y * x)(x))  # closes over a tracer: traced each time
    assert float(closing(F32(3))) == 9.0


def test_inline_jit_leaves_no_call_equation():
    inner = jit(lambda x: x * 2.0, inline=True)
    text = str(make_jaxpr(lambda x: inner(x) + 1.0)(F32(1)))
    assert "jit[" not in text and "mul" in text


def test_grad_of_jit_matches_grad_of_function():
    f = lambda x: (lax.sin(x) * x).sum()  # noqa: E731
    x = np.linspace(0, 1, 4).astype(F32)
    np.testing.assert_allclose(grad(jit(f))(x), grad(f)(x), rtol=1e-6)
    value, g = value_and_grad(jit(f))(x)
    assert isinstance(value, ld.Array)
    np.testing.assert_allclose(g, grad(f)(x), rtol=1e-6)


def test_grad_of_jit_runs_primal_and_transpose_as_jit_calls():
    f = jit(lambda x: lax.sin(x).sum())
    text = str(make_jaxpr(grad(f))(np.ones(3, F32)))
    assert text.count("jit[") == 2 and text.count("name=<lambda>") == 2


def test_jit_of_grad_of_jit_compiles_one_program():
    f = jit(lambda x: (x * x).sum())
    g = jit(grad(f))
    np.testing.assert_allclose(g(np.arange(3, dtype=F32)), [0, 2, 4])


def test_vmap_of_jit_matches_loop():
    f = jit(lambda x, y: (x * y).sum())
    xs = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_allclose(vmap(f)(xs, xs), [(r * r).sum() for r in xs])
    text = str(make_jaxpr(vmap(f))(xs, xs))
    assert "jit[" in text and "f32[2,3]" in text


def test_jit_closing_over_an_outer_tracer():
    def outer(x):
        inner = jit(lambda y: y * x)
        return inner(F32(2))

    assert float(jit(outer)(F32(3))) == 6.0
    assert float(grad(outer)(F32(3))) == 2.0


# ----- disable_jit --------------------------------------------------------------------------


def test_disable_jit_runs_the_python_function():
    seen = []

    def f(x):
        seen.append(type(x))
        return x + 1

    with config.disable_jit():
        jit(f)(np.ones(2, F32))
    assert seen == [np.ndarray]
    with config.disable_jit(False):
        jit(f)(np.ones(2, F32))
    assert seen[-1] is not np.ndarray


def test_nested_jit_prints_name_then_donations_then_jaxpr_as_jax_does():
    from laminax_core import make_jaxpr

    text = str(make_jaxpr(jit(lambda x, y: x + y, donate_argnums=0))(1.0, 2.0))
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index("c:f32[] = jit[")
    assert lines[start + 1 : start + 3] == ["name=<lambda>", "donated_invars=(True, False)"]
    assert lines[start + 3].startswith("jaxpr={ lambda")
    assert "donated_invars" not in str(make_jaxpr(jit(lambda x: x * 2.0))(1.0))
