"""lax.conv_general_dilated_patches and conv_general_dilated_local against direct NumPy
loops over windows."""

import numpy as np
import pytest
from laminax_core import grad, lax

R = np.random.RandomState(0)
X = R.standard_normal((2, 3, 5, 4)).astype(np.float32)  # NCHW


def _np_patches(x, fh, fw, stride):
    n, c, h, w = x.shape
    oh, ow = (h - fh) // stride + 1, (w - fw) // stride + 1
    out = np.zeros((n, c * fh * fw, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            window = x[:, :, i * stride:i * stride + fh, j * stride:j * stride + fw]
            out[:, :, i, j] = window.reshape(n, -1)
    return out


@pytest.mark.parametrize("fh,fw,stride", [(2, 2, 1), (3, 2, 2), (1, 1, 1)])
def test_patches_are_the_windows_channel_major(fh, fw, stride):
    out = lax.conv_general_dilated_patches(X, (fh, fw), (stride, stride), "VALID")
    np.testing.assert_allclose(out, _np_patches(X, fh, fw, stride), rtol=1e-6, atol=1e-6)


def test_patches_in_nhwc_layout():
    xh = np.transpose(X, (0, 2, 3, 1))
    out = lax.conv_general_dilated_patches(xh, (2, 2), (1, 1), "VALID",
                                           dimension_numbers=("NHWC", "OIHW", "NHWC"))
    np.testing.assert_allclose(out, np.transpose(_np_patches(X, 2, 2, 1), (0, 2, 3, 1)),
                               rtol=1e-6, atol=1e-6)


def test_local_convolution_uses_a_kernel_per_position():
    w = R.standard_normal((4, 3 * 2 * 2, 4, 3)).astype(np.float32)  # (O, I*fh*fw, oh, ow)
    out = lax.conv_general_dilated_local(X, w, (1, 1), "VALID", (2, 2))
    patches = _np_patches(X, 2, 2, 1)
    expected = np.einsum("nkhw,okhw->nohw", patches, w)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_local_convolution_is_differentiable_in_the_kernel():
    w = R.standard_normal((4, 12, 4, 3)).astype(np.float32)
    g = grad(lambda k: lax.conv_general_dilated_local(X, k, (1, 1), "VALID", (2, 2)).sum())(w)
    patches = _np_patches(X, 2, 2, 1)
    np.testing.assert_allclose(g, np.broadcast_to(patches.sum(0)[None], w.shape), rtol=1e-5,
                               atol=1e-5)
