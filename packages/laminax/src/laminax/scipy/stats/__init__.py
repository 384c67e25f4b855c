"""`laminax.scipy.stats`: laminax's implementation lives in `laminax_core.scipy.stats`; this
package re-exports its public names, with one submodule per distribution as JAX has."""

from laminax_core.scipy.stats import gaussian_kde, mode, rankdata, sem  # noqa: F401

from laminax.scipy.stats import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
    pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy,
)
from laminax_core.scipy.stats import __all__ as __all__
