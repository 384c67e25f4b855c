"""pure_callback, io_callback and the debug callbacks without the facade: results against NumPy,
what each vmap_method hands the callback, ordering, and the errors of unsupported uses (the
differential tests against JAX are in the root tests/test_hostcb_callbacks_vs_jax.py)."""

import contextlib
import io

import numpy as np
import pytest
from laminax_core import ShapeDtypeStruct, grad, lax, vmap
from laminax_dispatch import effects_barrier, jit
from laminax_hostcb import debug_callback, debug_print, io_callback, pure_callback

F32 = np.float32


def host_sin(x):
    return pure_callback(np.sin, ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")


def test_pure_callback_matches_numpy_eager_and_jitted():
    x = np.linspace(-1, 1, 5, dtype=F32)
    np.testing.assert_allclose(host_sin(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(jit(host_sin)(x), np.sin(x), rtol=1e-6)


@pytest.mark.parametrize(
    "method, shapes",
    [
        ("sequential", [((2,), (2,))] * 3),
        ("sequential_unrolled", [((2,), (2,))] * 3),
        ("expand_dims", [((3, 2), (1, 2))]),
        ("broadcast_all", [((3, 2), (3, 2))]),
        ("legacy_vectorized", [((3, 2), (2,))]),
    ],
)
def test_each_vmap_method_hands_the_callback_its_documented_shapes(method, shapes):
    seen = []

    def add(a, b):
        seen.append((np.shape(a), np.shape(b)))
        return np.asarray(a) + np.asarray(b)

    f = lambda x, y: pure_callback(add, ShapeDtypeStruct(x.shape, x.dtype), x, y,  # noqa: E731
                                   vmap_method=method)
    x, y = np.arange(6, dtype=F32).reshape(3, 2), np.ones(2, F32)
    np.testing.assert_allclose(vmap(f, in_axes=(0, None))(x, y), x + y)
    assert seen == shapes


def test_vmap_without_a_method_and_grad_are_refused():
    f = lambda x: pure_callback(np.sin, ShapeDtypeStruct((), F32), x)  # noqa: E731
    with pytest.raises(NotImplementedError, match="vmap_method"):
        vmap(f)(np.ones(2, F32))
    with pytest.raises(ValueError, match="custom_jvp"):
        grad(f)(F32(1))
    with pytest.raises(ValueError, match="vmap_method must be on of"):
        pure_callback(np.sin, ShapeDtypeStruct((), F32), F32(1), vmap_method="bad")


def test_ordered_io_callback_keeps_program_order_across_calls_and_loops():
    log = []
    rec = lambda v: log.append(int(v))  # noqa: E731

    def body(c, _):
        io_callback(rec, None, c, ordered=True)
        return c + 1, None

    f = jit(lambda c: lax.scan(body, c, None, length=3)[0])
    g = jit(lambda c: io_callback(rec, None, -c, ordered=True))
    for i in range(4):
        f(np.int32(10 * i))
        g(np.int32(i))
    effects_barrier()
    assert log == [v for i in range(4) for v in (10 * i, 10 * i + 1, 10 * i + 2, -i)]


def test_debug_print_and_callback_print_and_see_values():
    seen = []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        jit(lambda x: debug_print("x={x} sum={}", x.sum(), x=x, ordered=True))(np.arange(3))
        debug_callback(lambda v: seen.append(np.asarray(v).tolist()), np.arange(2))
        effects_barrier()
    assert out.getvalue() == "x=[0 1 2] sum=3\n"
    assert seen == [[0, 1]]
    with pytest.raises(ValueError, match="Unused keyword arguments"):
        debug_print("{x}", x=1, y=2)


@pytest.mark.parametrize("bad", [3, "f32", object(), [ShapeDtypeStruct((), F32), 2.5]])
def test_result_shapes_without_shape_and_dtype_are_refused_naming_the_leaf(bad):
    with pytest.raises(AttributeError, match="must have 'shape' and 'dtype' attributes"):
        pure_callback(np.sin, bad, F32(1))
    with pytest.raises(AttributeError, match="must have 'shape' and 'dtype' attributes"):
        io_callback(np.sin, bad, F32(1))


def test_64_bit_result_dtypes_are_refused_without_x64():
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        pure_callback(np.sin, ShapeDtypeStruct((), np.float64), F32(1))
