"""`laminax_core.scipy.stats` on the reference interpreter, against SciPy (float32)."""

import numpy as np
import pytest
import scipy.stats as sps
from laminax_core import grad
from laminax_core.scipy import stats

X = np.linspace(-3, 6, 13).astype(np.float32)
K = np.arange(-1, 9).astype(np.float32)

CASES = [
    ("norm", "logpdf", (0.5, 2.0), X), ("norm", "cdf", (), X), ("expon", "logpdf", (), X),
    ("gamma", "cdf", (2.5,), X), ("beta", "logpdf", (2.0, 3.0, -3.0, 10.0), X),
    ("t", "logpdf", (3.0,), X), ("logistic", "sf", (), X), ("pareto", "logsf", (2.0,), X),
    ("poisson", "logpmf", (3.0,), K), ("binom", "pmf", (8, 0.3), K), ("geom", "pmf", (0.4,), K),
]


@pytest.mark.parametrize(("dist", "fn", "params", "points"), CASES,
                         ids=[f"{d}.{f}" for d, f, _, _ in CASES])
def test_matches_scipy(dist, fn, params, points):
    got = np.asarray(getattr(getattr(stats, dist), fn)(points, *params))
    with np.errstate(all="ignore"):
        want = getattr(getattr(sps, dist), fn)(points, *params)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-4, atol=1e-6)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_norm_logpdf_gradient_is_analytic():
    g = grad(lambda x: stats.norm.logpdf(x, 1.0, 2.0))(np.float32(3.0))
    np.testing.assert_allclose(g, -(3.0 - 1.0) / 4.0, rtol=1e-6)


def test_summaries():
    data = np.array([3.0, 1.0, 3.0, 2.0], np.float32)
    np.testing.assert_array_equal(stats.rankdata(data), sps.rankdata(data))
    assert int(stats.mode(np.array([1, 2, 2, 3])).mode) == 2
    with pytest.raises(ValueError, match="unknown method"):
        stats.rankdata(data, "mean")
