"""lax.fft and jnp.fft on the reference interpreter: values against numpy.fft, the transpose
of each transform type through the dot-product identity, jvp, vmap, shapes, and errors."""

import numpy as np
import pytest
from laminax_core import jvp, lax, make_jaxpr, vjp, vmap
from laminax_core import numpy as jnp

RNG = np.random.RandomState(0)
X = RNG.standard_normal((3, 4, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 4, 6)) + 1j * RNG.standard_normal((3, 4, 6))).astype(np.complex64)


def _pairing(a, b) -> float:
    # JAX's cotangent pairing: Re(sum(a * b)), bilinear (no conjugate)
    return float(np.real(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128))))


def _random(shape, dtype):
    draw = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        draw = draw + 1j * RNG.standard_normal(shape)
    return draw.astype(dtype)


LAX_CASES = [
    ("fft", Z, (6,), np.fft.fft),
    ("fft", Z, (4, 6), np.fft.fft2),
    ("ifft", Z, (3, 4, 6), np.fft.ifftn),
    ("rfft", X, (6,), np.fft.rfft),
    ("rfft", X, (4, 6), np.fft.rfft2),
    ("rfft", X[..., :5], (4, 5), np.fft.rfft2),
    ("irfft", Z[..., :4], (6,), lambda z: np.fft.irfft(z, 6)),
    ("irfft", Z[..., :3], (4, 5), lambda z: np.fft.irfft2(z, (4, 5))),
]


@pytest.mark.parametrize("kind,x,lengths,ref", LAX_CASES)
def test_lax_fft_matches_numpy(kind, x, lengths, ref):
    out = lax.fft(x, kind, lengths)
    expected = ref(x)
    assert out.shape == expected.shape
    assert out.dtype == (np.float32 if kind == "irfft" else np.complex64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind,x,lengths,ref", LAX_CASES)
def test_transpose_satisfies_the_dot_product_identity(kind, x, lengths, ref):
    fun = lambda v: lax.fft(v, kind, lengths)  # noqa: E731
    out, pullback = vjp(fun, x)
    u = _random(out.shape, out.dtype)
    v = _random(x.shape, x.dtype)
    (ct,) = pullback(u)
    assert ct.dtype == x.dtype and ct.shape == x.shape
    np.testing.assert_allclose(_pairing(ct, v), _pairing(u, fun(v)), rtol=1e-4)


@pytest.mark.parametrize("kind,x,lengths,ref", LAX_CASES)
def test_jvp_is_the_transform_of_the_tangent(kind, x, lengths, ref):
    t = _random(x.shape, x.dtype)
    out, out_t = jvp(lambda v: lax.fft(v, kind, lengths), (x,), (t,))
    np.testing.assert_allclose(out_t, lax.fft(t, kind, lengths), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_over_any_axis_matches_a_loop(in_axes):
    cube = RNG.standard_normal((6, 6, 6)).astype(np.float32)
    batched = vmap(lambda v: lax.fft(v, "rfft", (6,)), in_axes=in_axes)(cube)
    rows = [lax.fft(np.take(cube, i, in_axes), "rfft", (6,)) for i in range(6)]
    np.testing.assert_allclose(batched, np.stack(rows), rtol=1e-6, atol=1e-6)


def test_jaxpr_prints_params_as_jax_does():
    text = str(make_jaxpr(lambda v: lax.fft(v, lax.FftType.RFFT, (6,)))(X))
    assert "fft[fft_lengths=(6,) fft_type=2]" in text
    assert "convert_element_type" not in text


def test_fft_converts_real_and_integer_input():
    assert lax.fft(np.ones(4, np.int32), "fft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.int32), "rfft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.float32), lax.FftType.IFFT, ()).dtype == np.complex64


@pytest.mark.parametrize(
    "x,kind,lengths,error,match",
    [
        (Z, "rfft", (6,), ValueError, "RFFT accepts only real-valued input"),
        (Z, "Fft", (6,), ValueError, "unknown FFT type 'Fft'"),
        (Z, 3.5, (6,), TypeError, "unknown FFT type value 3.5"),
        (Z, "fft", (5,), ValueError, r"must end in \(5,\)"),
        (Z, "irfft", (5, 6), ValueError, r"must end in \(5,\)"),
        (Z, "fft", (1, 3, 4, 6), ValueError, "fewer dimensions than fft_lengths"),
    ],
)
def test_bad_arguments_raise(x, kind, lengths, error, match):
    with pytest.raises(error, match=match):
        lax.fft(x, kind, lengths)


# ----- jnp.fft ------------------------------------------------------------------------------

NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "name,x,kwargs",
    [
        ("fft", X, {}),
        ("fft", X, {"n": 8, "axis": 1}),
        ("ifft", Z, {"n": 3, "axis": 0}),
        ("rfft", X, {"n": 5}),
        ("irfft", Z, {}),
        ("irfft", Z, {"n": 7, "axis": 1}),
        ("hfft", Z, {"n": 9}),
        ("ihfft", X, {"axis": 0}),
        ("fft2", Z, {"s": (5, 3)}),
        ("ifft2", Z, {"axes": (0, 2)}),
        ("rfft2", X, {}),
        ("irfft2", Z, {"s": (4, 9)}),
        ("fftn", Z, {}),
        ("ifftn", X, {"axes": (2, 0)}),
        ("rfftn", X, {"s": (2, 8), "axes": (0, 2)}),
        ("irfftn", Z, {"axes": (1, 0)}),
    ],
)
def test_numpy_fft_matches_numpy(name, x, kwargs, norm):
    out = getattr(jnp.fft, name)(x, **kwargs, norm=norm)
    expected = getattr(np.fft, name)(x, **kwargs, norm=norm)
    assert out.shape == expected.shape
    assert out.dtype == (np.float32 if expected.dtype.kind == "f" else np.complex64)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


def test_more_than_three_axes_run_in_groups():
    y = RNG.standard_normal((2, 3, 2, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(jnp.fft.fftn(y), np.fft.fftn(y), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jnp.fft.rfftn(y), np.fft.rfftn(y), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jnp.fft.irfftn(y[0]), np.fft.irfftn(y[0]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jnp.fft.ifftn(y), np.fft.ifftn(y), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n,d", [(1, 1.0), (6, 0.5), (7, 2.0)])
def test_frequencies_match_numpy(n, d):
    np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert jnp.fft.fftfreq(n, d).dtype == np.float32
    assert jnp.fft.rfftfreq(n, dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("axes", [None, 0, (1, 2), [2]])
def test_shifts_match_numpy(axes):
    np.testing.assert_array_equal(jnp.fft.fftshift(X, axes), np.fft.fftshift(X, axes))
    np.testing.assert_array_equal(jnp.fft.ifftshift(X, axes), np.fft.ifftshift(X, axes))


def test_grad_through_numpy_fft_is_real():
    _, pullback = vjp(lambda v: jnp.fft.rfft(v, norm="ortho"), X)
    (ct,) = pullback(np.ones((3, 4, 4), np.complex64))
    assert ct.dtype == np.float32 and ct.shape == X.shape


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: jnp.fft.fft(X, norm="bad"), ValueError, "invalid norm value 'bad'"),
        (lambda: jnp.fft.fft(X, n=0), ValueError, "lengths must be positive"),
        (lambda: jnp.fft.fft(X, axis=(0, 1)), ValueError, "transforms one axis"),
        (lambda: jnp.fft.fft2(X, axes=(0,)), ValueError, "transforms exactly 2 axes"),
        (lambda: jnp.fft.fftn(X, s=(2, 2), axes=(0,)), ValueError, "different lengths"),
        (lambda: jnp.fft.fftn(X, axes=(0, 0)), ValueError, "does not support repeated axes"),
        (lambda: jnp.fft.fftfreq([3]), ValueError, "n must be an int"),
        (lambda: jnp.fft.rfftfreq(3, d=[1.0]), ValueError, "d must be a single value"),
        (lambda: jnp.fft.fft([1.0, "a"]), TypeError, "fft"),
    ],
)
def test_numpy_fft_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
