"""`gaussian_kde`: a kernel density estimate with Gaussian kernels whose covariance is the
data's (weighted) covariance scaled by a bandwidth factor (Scott's or Silverman's rule)."""

from __future__ import annotations

import numpy as np

from laminax_core import _api, dtypes, random
from laminax_core import numpy as jnp
from laminax_core.scipy import linalg, special
from laminax_pytree import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (SciPy's name)
    """A Gaussian kernel density estimate of `d`-dimensional data.

    Args:
      dataset: the samples, `(d, n)` (or `(n,)` for 1-d data).
      bw_method: "scott" (default), "silverman", a scalar factor, or a callable of the
        estimate returning the factor.
      weights: optional sample weights `(n,)` (normalized to sum 1).

    Attributes:
      dataset, weights, neff (the effective sample size), covariance and inv_cov (of the
      kernel); `d` and `n` are the dimension and the number of samples.

    Raises:
      NotImplementedError: complex data.
      ValueError: fewer than two elements; weights of the wrong shape; an unknown `bw_method`.
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if dtypes.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        dtype = dataset.dtype
        if weights is not None:
            weights = jnp.atleast_1d(jnp.asarray(weights))
            dtype = dtypes.result_type(dataset, weights)
        if not dtypes.issubdtype(dtype, np.inexact):
            dtype = dtypes.default_float_dtype()
        dataset = dataset.astype(dtype)
        if weights is not None:
            weights = weights.astype(dtype)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
        else:
            weights = jnp.full(n, 1.0 / n, dtype=dtype)
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / jnp.sum(weights**2)
        bw_method = "scott" if bw_method is None else bw_method
        if bw_method == "scott":
            factor = jnp.power(self.neff, -1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = jnp.power(self.neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
        self.covariance = data_cov * factor**2
        self.inv_cov = jnp.linalg.inv(data_cov) / factor**2

    def tree_flatten(self):
        """The arrays, as pytree children."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuilds an estimate from `tree_flatten`'s children."""
        del aux_data
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self) -> int:
        """The data's dimension."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of samples."""
        return self.dataset.shape[1]

    def _points(self, points):
        points = jnp.asarray(points)
        if dtypes.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _log_kernels(self, points):
        """log N(x; data_i, covariance) for each point and sample, `(m, n)`, computed in the
        coordinates where the kernel is the unit Gaussian."""
        whitening = linalg.cholesky(self.inv_cov, lower=True)
        data = jnp.dot(self.dataset.T, whitening)
        xs = jnp.dot(points.T.astype(data.dtype), whitening)
        log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * self.d * np.log(2 * np.pi)
        return log_norm - 0.5 * jnp.sum(jnp.square(xs[:, None, :] - data[None, :, :]), axis=-1)

    def evaluate(self, points):
        """The density at `points` (`(d, m)`, or `(m,)` in 1-d)."""
        kernels = jnp.exp(self._log_kernels(self._points(points)))
        return jnp.sum(self.weights[None, :] * kernels, axis=1)

    def __call__(self, points):
        """The density at `points` (`evaluate`)."""
        return self.evaluate(points)

    def pdf(self, x):
        """The density at `x` (`evaluate`)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at `x`, summed in log space."""
        return special.logsumexp(self._log_kernels(self._points(x)), b=self.weights[None, :],
                                 axis=1)

    def _convolved(self, chol, norm, target, weights, mean):
        diff = target - mean[:, None]
        alpha = linalg.cho_solve(chol, diff)
        return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * alpha, axis=0)) * weights)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian `N(mean, cov)`."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return self._convolved(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The probability mass of [low, high] (1-d estimates only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this density and `other`'s."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = _api.vmap(lambda m: self._convolved(chol, norm, large.dataset,
                                                        large.weights, m), in_axes=1)
        return jnp.sum(per_point(small.dataset) * small.weights)

    def resample(self, key, shape=()):
        """Draws samples `(d, *shape)`: a data point chosen by weight plus kernel noise."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype)
        return self.dataset[:, index] + jnp.moveaxis(noise, -1, 0)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (as in JAX): only 1-d boxes, with `integrate_box_1d`."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not supported (as in JAX): the bandwidth is fixed at construction."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")
