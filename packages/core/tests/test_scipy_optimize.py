"""`laminax_core.scipy.optimize.minimize` on the reference interpreter (NumPy oracle)."""

import numpy as np
import pytest
from laminax_core import numpy as jnp
from laminax_core.scipy.optimize import minimize

A = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
B = np.array([1.0, -1.0], np.float32)


@pytest.mark.parametrize("method", ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"])
def test_quadratic_minimum_is_the_linear_solve(method):
    fun = lambda x: 0.5 * x @ (A @ x) - B @ x  # noqa: E731
    r = minimize(fun, np.zeros(2, np.float32), method=method, options=dict(gtol=1e-6))
    np.testing.assert_allclose(r.x, np.linalg.solve(A, B), atol=1e-4)
    np.testing.assert_allclose(r.jac, 0, atol=1e-4)


def test_bad_arguments():
    with pytest.raises(ValueError, match="not recognized"):
        minimize(jnp.sum, np.zeros(2, np.float32), method="powell")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(jnp.sum, np.zeros(2, np.float32), args=[1], method="BFGS")
