"""lax's shape calculators agree with the shapes the operations produce."""

import numpy as np
import pytest
from laminax_core import lax

R = np.random.RandomState(0)


@pytest.mark.parametrize("lhs,rhs,strides,pads", [
    ((2, 3, 9, 9), (4, 3, 3, 3), (2, 2), "VALID"),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 3), "SAME"),
    ((1, 2, 7, 7), (3, 2, 2, 3), (1, 1), [(1, 2), (0, -1)]),
])
def test_conv_shape_tuple_is_the_convolutions_shape(lhs, rhs, strides, pads):
    out = lax.conv_general_dilated(np.zeros(lhs, np.float32), np.zeros(rhs, np.float32),
                                   strides, pads)
    assert lax.conv_shape_tuple(lhs, rhs, strides, pads) == out.shape


def test_conv_general_shape_tuple_and_permutations():
    numbers = ("NHWC", "HWIO", "NCHW")
    assert lax.conv_general_permutations(numbers) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 1, 2, 3))
    lhs, rhs = np.zeros((2, 9, 7, 3), np.float32), np.zeros((3, 2, 3, 4), np.float32)
    out = lax.conv_general_dilated(lhs, rhs, (2, 1), "VALID", dimension_numbers=numbers)
    assert lax.conv_general_shape_tuple(lhs.shape, rhs.shape, (2, 1), "VALID", numbers) == (
        out.shape)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 0), (2, 1)]])
def test_conv_transpose_shape_tuple_is_conv_transposes_shape(padding):
    numbers = ("NHWC", "HWIO", "NHWC")
    lhs, rhs = np.zeros((1, 4, 5, 2), np.float32), np.zeros((3, 2, 2, 5), np.float32)
    out = lax.conv_transpose(lhs, rhs, (2, 3), padding, dimension_numbers=numbers)
    assert lax.conv_transpose_shape_tuple(lhs.shape, rhs.shape, (2, 3), padding, numbers) == (
        out.shape)


def test_reduce_window_shape_tuple_is_the_reductions_shape():
    x = np.zeros((7, 8), np.float32)
    out = lax.reduce_window(x, np.float32(0), lax.add, (3, 2), (2, 1), ((1, 1), (0, 1)),
                            base_dilation=(2, 1), window_dilation=(1, 2))
    assert lax.reduce_window_shape_tuple((7, 8), (3, 2), (2, 1), ((1, 1), (0, 1)),
                                         base_dilation=(2, 1), window_dilation=(1, 2)) == (
        out.shape)


def test_layout_errors():
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_permutations(("NHWC", "HWIO", "NHW"))
    with pytest.raises(TypeError, match="same set of spatial characters"):
        lax.conv_general_permutations(("NHWC", "HDIO", "NHWC"))
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((1, 1, 4, 4), (1, 1, 2, 2), (1, 1), [(0, 0)])


def test_lax_dtype_is_the_dtype_of_a_value():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(1) == np.int32
    assert lax.dtype(np.ones(2, np.float64)) == np.float32 and lax.dtype(float) == np.float32
    assert lax.dtype(np.int8(1)) == np.int8 and lax.dtype("float32") == np.float32
