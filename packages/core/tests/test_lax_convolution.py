"""conv_general_dilated: dimension numbers (strings and tuples), padding, dilations, grouped
convolutions, derivatives to both operands (second order), batching, and errors."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr, vmap
from laminax_core.testing import check_grads

RNG = np.random.RandomState(0)
CASES = [
    dict(x=(2, 5, 6, 4), w=(3, 3, 4, 6), strides=(1, 2), pad="SAME",
         dn=("NHWC", "HWIO", "NHWC")),
    dict(x=(2, 3, 5, 5), w=(4, 3, 2, 2), strides=(1, 1), pad="VALID"),
    dict(x=(2, 3, 5, 5), w=(6, 1, 2, 2), strides=(2, 1), pad=[(1, 0), (0, 1)], ld=(2, 1),
         rd=(1, 2), fg=3),
    dict(x=(4, 3, 5, 5), w=(4, 3, 2, 2), strides=(1, 1), pad="VALID", bg=2),
    dict(x=(2, 4, 7), w=(6, 2, 3), strides=(3,), pad=[(2, -1)], fg=2),
    dict(x=(2, 7, 3), w=(2, 3, 4), strides=(1,), pad="SAME", dn=("NWC", "WIO", "NCW")),
]


def _fun(case):
    return lambda x, w: lax.conv_general_dilated(
        x, w, case["strides"], case["pad"], case.get("ld"), case.get("rd"), case.get("dn"),
        case.get("fg", 1), case.get("bg", 1))


def _args(case):
    return (RNG.standard_normal(case["x"]).astype(np.float32),
            RNG.standard_normal(case["w"]).astype(np.float32))


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_derivatives_to_both_operands_second_order(case):
    check_grads(_fun(case), _args(case), order=2)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_batching_matches_loop(case, in_axes):
    f = _fun(case)
    x, w = _args(case)
    xs, ws = np.stack([x, 2 * x, x - 1]), np.stack([w, w + 1, w / 2])
    got = vmap(f, in_axes=in_axes)(xs if in_axes[0] == 0 else x, ws if in_axes[1] == 0 else w)
    expected = np.stack([f(xs[b] if in_axes[0] == 0 else x, ws[b] if in_axes[1] == 0 else w)
                         for b in range(3)])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_dimension_numbers_from_strings():
    dn = lax.conv_dimension_numbers((2, 5, 6, 4), (3, 3, 4, 6), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    text = str(make_jaxpr(_fun(CASES[0]))(*_args(CASES[0])))
    assert ("dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, "
            "1), out_spec=(0, 3, 1, 2))") in text
    assert "padding=((1, 1), (0, 1))" in text and "out_sharding=None" in text


def test_values_against_a_direct_sum():
    x = RNG.standard_normal((1, 1, 4)).astype(np.float32)
    w = RNG.standard_normal((1, 1, 2)).astype(np.float32)
    out = lax.conv_general_dilated(x, w, (1,), "VALID", rhs_dilation=(2,))
    np.testing.assert_allclose(out[0, 0], [x[0, 0, i] * w[0, 0, 0] + x[0, 0, i + 2] * w[0, 0, 1]
                                           for i in range(2)], rtol=1e-6)


def test_preferred_element_type_and_integer_inputs():
    x = np.ones((1, 1, 3), np.int8)
    out = lax.conv_general_dilated(x, x, (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32 and out[0, 0, 0] == 3


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.conv_general_dilated(np.ones((1, 3, 5), np.float32),
                                      np.ones((2, 2, 2), np.float32), (1,), "VALID"), ValueError,
     r"lhs feature dimension size \(3\) must equal the rhs input feature dimension size \(2\)"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5), np.float32),
                                      np.ones((2, 2, 2), np.int32), (1,), "VALID"), TypeError,
     "conv_general_dilated requires arguments to have the same dtypes, got float32, int32"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5), np.float32),
                                      np.ones((2, 2, 2), np.float32), (1,), "SAME",
                                      lhs_dilation=(2,)), ValueError,
     "String padding is not implemented for transposed convolution"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5), np.float32),
                                      np.ones((2, 2, 2), np.float32), (1, 1), "VALID"),
     ValueError, "window_strides"),  # JAX's types (checked in tests/test_hardening_sweep)
    (lambda: lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), ("NCW", "OIX", "NCW")), TypeError,
     "spatial dimensions"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()
