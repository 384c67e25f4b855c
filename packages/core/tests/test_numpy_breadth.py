"""The rarer jnp names against NumPy on the reference interpreter: bit packing, r_/c_/s_,
place, i0/kaiser/spacing, multidimensional histograms, polyfit/polydiv, and the I/O and
printing helpers."""

import io

import numpy as np
import pytest
from laminax_core import errors, grad, make_jaxpr
from laminax_core import numpy as jnp

R = np.random.RandomState(0)


# ----- packbits / unpackbits ----------------------------------------------------------------


@pytest.mark.parametrize("shape,axis", [((3, 11), None), ((3, 11), 1), ((3, 11), 0),
                                        ((17,), 0), ((2, 3, 9), -1), ((2, 8, 3), 1)])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_match_numpy(shape, axis, bitorder):
    x = R.randint(0, 3, size=shape).astype(np.int32)
    packed = np.packbits(x, axis, bitorder=bitorder)
    np.testing.assert_array_equal(jnp.packbits(x, axis, bitorder), packed)
    for count in (None, 3, 30, -2):
        expected = np.unpackbits(packed, axis, count=count, bitorder=bitorder)
        np.testing.assert_array_equal(jnp.unpackbits(packed, axis, count, bitorder), expected)


def test_bit_packing_errors():
    with pytest.raises(TypeError, match="integer or boolean array"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="expects a uint8 array"):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="bitorder must be 'big' or 'little'"):
        jnp.packbits(np.ones(3, bool), bitorder="middle")


# ----- r_, c_, s_, index_exp, place ---------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.r_[1:4, 0, np.array([7, 8])],
        lambda m: m.r_[0:1:5j],
        lambda m: m.r_["0,2", [1, 2], [3, 4]],
        lambda m: m.r_["-1,2,0", [1, 2], [3, 4]],
        lambda m: m.r_["r", [1, 2]],
        lambda m: m.r_["c", [1, 2]],
        lambda m: m.r_["1,3", np.ones((2, 2)), np.zeros((2, 2))],
        lambda m: m.c_[np.array([1, 2, 3]), np.array([4, 5, 6])],
        lambda m: m.c_[np.ones((2, 2)), [[5], [6]]],
        lambda m: m.c_[1:3, [7, 8]],
    ],
)
def test_concatenators_match_numpy(build):
    ours, theirs = build(jnp), build(np)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs)


def test_concatenator_errors_and_index_builders():
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[1, "0"]
    with pytest.raises(ValueError, match="is not 'r', 'c' or 'axis"):
        jnp.r_["x", [1]]
    assert jnp.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))
    assert jnp.index_exp[2] == (2,)


def test_place_matches_numpy():
    arr = np.arange(12.0).reshape(3, 4)
    mask = arr % 3 == 0
    vals = np.array([10.0, 20.0])
    expected = arr.copy()
    np.place(expected, mask, vals)
    np.testing.assert_array_equal(jnp.place(arr, mask, vals, inplace=False), expected)


@pytest.mark.parametrize("kwargs,match", [
    ({}, "cannot modify arrays in place"),
    ({"inplace": False, "mask": np.ones(3, bool)}, "same size"),
    ({"inplace": False, "vals": np.zeros(0)}, "empty array"),
])
def test_place_errors(kwargs, match):
    args = {"mask": np.ones(4, bool), "vals": np.ones(2), **kwargs}
    with pytest.raises(ValueError, match=match):
        jnp.place(np.zeros(4), **args)


# ----- i0, kaiser, spacing ------------------------------------------------------------------


def test_i0_matches_numpy_and_its_derivative_is_i1():
    x = np.array([-3.0, -0.5, 0.0, 1.0, 4.0, 12.0], np.float32)
    np.testing.assert_allclose(jnp.i0(x), np.i0(x), rtol=1e-5)
    assert jnp.i0(np.arange(3)).dtype == np.float32
    # I1(x) by its series sum (x/2)^(2k+1) / (k! (k+1)!)
    x0, k = 1.5, np.arange(30)
    from math import factorial

    i1 = sum((x0 / 2) ** (2 * j + 1) / (factorial(j) * factorial(j + 1)) for j in k)
    np.testing.assert_allclose(grad(jnp.i0)(np.float32(x0)), i1, rtol=1e-5)
    np.testing.assert_allclose(grad(jnp.i0)(np.float32(-x0)), -i1, rtol=1e-5)
    with pytest.raises(ValueError, match="defined for real inputs only"):
        jnp.i0(np.complex64(1))


@pytest.mark.parametrize("m,beta", [(0, 2.0), (1, 2.0), (5, 3.0), (8, 0.5), (12, 14.0)])
def test_kaiser_matches_numpy(m, beta):
    np.testing.assert_allclose(jnp.kaiser(m, beta), np.kaiser(m, beta), rtol=2e-5, atol=1e-7)
    assert jnp.kaiser(m, beta).dtype == np.float32


def test_spacing_matches_numpy():
    x = np.array([0.0, 1.0, -1.0, 1e30, -3e-39, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(jnp.spacing(x), np.spacing(x))
    np.testing.assert_array_equal(jnp.spacing(np.float16(1)), np.spacing(np.float16(1)))
    assert jnp.spacing(3).dtype == np.float32
    with pytest.raises(ValueError, match="not defined for complex inputs"):
        jnp.spacing(np.complex64(1))


# ----- histograms ---------------------------------------------------------------------------

SAMPLE = R.standard_normal((60, 3)).astype(np.float32)


@pytest.mark.parametrize("kwargs", [
    {"bins": 4},
    {"bins": (3, 4, 5), "density": True},
    {"bins": [np.array([-2.0, 0.0, 2.0]), 3, 2], "range": [None, (-1, 1), None]},
    {"bins": 3, "weights": np.abs(SAMPLE[:, 0])},
])
def test_histogramdd_matches_numpy(kwargs):
    hist, edges = jnp.histogramdd(SAMPLE, **kwargs)
    expected, expected_edges = np.histogramdd(SAMPLE, **kwargs)
    np.testing.assert_allclose(hist, expected, rtol=1e-5, atol=1e-6)
    for e, ee in zip(edges, expected_edges, strict=True):
        np.testing.assert_allclose(e, ee, rtol=1e-6)
    if "weights" not in kwargs and not kwargs.get("density"):
        assert hist.dtype == np.int32


@pytest.mark.parametrize("kwargs", [
    {"bins": 5, "range": [(-1, 1), (-2, 2)], "weights": SAMPLE[:, 2]},
    {"bins": [np.array([-1.0, 0.0, 1.0]), 3]},
    {"bins": np.array([-1.0, 0.0, 1.0, 2.0]), "density": True},
])
def test_histogram2d_matches_numpy(kwargs):
    out = jnp.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], **kwargs)
    expected = np.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], **kwargs)
    for o, e in zip(out, expected, strict=True):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)


def test_histogramdd_errors():
    with pytest.raises(ValueError, match="one entry per dimension"):
        jnp.histogramdd(SAMPLE, bins=[2, 3])
    with pytest.raises(ValueError, match="weights must have shape"):
        jnp.histogramdd(SAMPLE, weights=np.ones(3))
    with pytest.raises(ValueError, match="range must be a sequence of 3"):
        jnp.histogramdd(SAMPLE, range=[(0, 1)])


# ----- polyfit, polydiv ---------------------------------------------------------------------

XS = np.linspace(-1, 1, 11).astype(np.float32)
YS = (XS**2 - 0.5 * XS + 0.01 * R.standard_normal(11)).astype(np.float32)


@pytest.mark.parametrize("deg", [0, 1, 2, 4])
def test_polyfit_matches_numpy(deg):
    np.testing.assert_allclose(jnp.polyfit(XS, YS, deg), np.polyfit(XS, YS, deg), atol=2e-5)
    ys = np.stack([YS, 2 * YS + 1], axis=1)
    np.testing.assert_allclose(jnp.polyfit(XS, ys, deg), np.polyfit(XS, ys, deg), atol=2e-5)


def test_polyfit_weights_full_and_cov_match_numpy():
    w = np.abs(R.standard_normal(11)).astype(np.float32) + 0.1
    np.testing.assert_allclose(jnp.polyfit(XS, YS, 3, w=w), np.polyfit(XS, YS, 3, w=w),
                               atol=2e-5)
    ours, theirs = jnp.polyfit(XS, YS, 2, full=True), np.polyfit(XS, YS, 2, full=True)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-7)
    for cov in (True, "unscaled"):
        c, v = jnp.polyfit(XS, YS, 2, cov=cov)
        expected = np.polyfit(XS, YS, 2, cov=cov)[1]
        np.testing.assert_allclose(v, expected, rtol=1e-3, atol=1e-5 * np.abs(expected).max())


def test_polyfit_errors():
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(XS, YS, -1)
    with pytest.raises(TypeError, match="1-D vector for x"):
        jnp.polyfit(XS[None], YS, 1)
    with pytest.raises(TypeError, match="the same length"):
        jnp.polyfit(XS[:3], YS, 1)


@pytest.mark.parametrize("u,v", [
    ([1.0, -6.0, 11.0, -6.0], [1.0, -1.0]),
    ([1.0, -6.0, 11.0, -5.0], [2.0, -1.0, 3.0]),
    ([3.0], [1.0, 2.0]),
])
def test_polydiv_matches_numpy_up_to_leading_zeros(u, v):
    q, r = jnp.polydiv(np.array(u), np.array(v))
    eq, er = np.polydiv(np.array(u), np.array(v))
    np.testing.assert_allclose(q, eq, atol=1e-6)
    np.testing.assert_allclose(r[len(r) - len(er):], er, atol=1e-6)
    _, trimmed = jnp.polydiv(np.array(u), np.array(v), trim_leading_zeros=True)
    assert trimmed.shape[0] <= len(er) or np.allclose(er, 0)


def test_polydiv_trimming_needs_concrete_values():
    jaxpr = make_jaxpr(lambda u: jnp.polydiv(u, np.array([1.0, 1.0]))[1])(np.ones(3, np.float32))
    assert jaxpr.out_avals[0].shape == (3,)
    with pytest.raises(errors.ConcretizationTypeError):
        make_jaxpr(lambda u: jnp.polydiv(u, np.ones(2), trim_leading_zeros=True))(np.ones(3))


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [1.0, -6.0, 11.0, -6.0], [2.0, 0.0, 1.0],
                               [0.0, 0.0, 1.0, -3.0, 2.0], [5.0], [1.0, 0.0, 0.0]])
def test_roots_match_numpy(p):
    p = np.array(p, np.float32)
    ours, theirs = np.asarray(jnp.roots(p)), np.roots(p)
    assert ours.shape == theirs.shape and ours.dtype == np.complex64
    # the same multiset of roots: each of NumPy's has one of ours next to it, and vice versa
    distance = np.abs(ours[:, None] - theirs[None, :])
    assert (distance.min(0, initial=np.inf) < 1e-5).all()
    assert (distance.min(1, initial=np.inf) < 1e-5).all()


def test_roots_without_stripping_mark_leading_zeros_with_nan():
    out = np.asarray(jnp.roots(np.array([0.0, 0.0, 1.0, -3.0, 2.0], np.float32),
                               strip_zeros=False))
    np.testing.assert_allclose(np.sort_complex(out[:2]), [1, 2], atol=1e-6)
    assert np.isnan(out[2:]).all()
    with pytest.raises(errors.ConcretizationTypeError):
        make_jaxpr(jnp.roots)(np.ones(3, np.float32))
    assert make_jaxpr(lambda p: jnp.roots(p, strip_zeros=False))(np.ones(3)).out_avals[0].shape \
        == (2,)


# ----- I/O and printing ---------------------------------------------------------------------


def test_save_and_load_round_trip():
    buffer = io.BytesIO()
    jnp.save(buffer, np.arange(4, dtype=np.int32))
    buffer.seek(0)
    np.testing.assert_array_equal(jnp.load(buffer), [0, 1, 2, 3])


def test_buffers_and_strings():
    np.testing.assert_array_equal(jnp.frombuffer(b"\x01\x02\x03", dtype=np.uint8), [1, 2, 3])
    assert jnp.frombuffer(np.arange(2, dtype=np.float32).tobytes(), np.float32).dtype == np.float32
    np.testing.assert_array_equal(jnp.fromstring("1, 2", dtype=np.int32, sep=","), [1, 2])


@pytest.mark.parametrize("name", ["fromiter", "fromfile"])
def test_impure_readers_are_refused_as_in_jax(name):
    with pytest.raises(NotImplementedError, match=f"jnp.{name}\\(\\) is not implemented"):
        getattr(jnp, name)(iter([1, 2]), dtype=np.int32)


def test_print_options_are_numpys():
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert jnp.array_str(np.array([1 / 3])) == "[0.33]"
    assert jnp.array_repr(np.array([1], np.int32)) == "array([1], dtype=int32)"
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
