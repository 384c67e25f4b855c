"""`laminax_core.scipy.fft`, `integrate` and `cluster.vq` on the reference interpreter, against
SciPy and NumPy."""

import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.fft as sfft
from laminax_core.scipy import fft, integrate
from laminax_core.scipy.cluster import vq

R = np.random.RandomState(1)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_dct_pair(n):
    x = R.randn(2, n).astype(np.float32)
    np.testing.assert_allclose(fft.dct(x), sfft.dct(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fft.idct(fft.dct(x, norm="ortho"), norm="ortho"), x, atol=1e-5)
    with pytest.raises(NotImplementedError):
        fft.dct(x, type=1)


def test_trapezoid_and_vq():
    y = R.randn(5).astype(np.float32)
    np.testing.assert_allclose(integrate.trapezoid(y, dx=0.5), np.trapezoid(y, dx=0.5),
                               rtol=1e-5)
    obs, book = R.randn(6, 2).astype(np.float32), R.randn(3, 2).astype(np.float32)
    np.testing.assert_array_equal(vq.vq(obs, book)[0], svq.vq(obs, book)[0])
