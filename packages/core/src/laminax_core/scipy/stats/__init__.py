"""`scipy.stats`: probability distributions (one module per distribution, each with the
functions JAX provides for it: `logpdf`/`pdf`/`cdf`/`sf`/`ppf` ... or `logpmf`/`pmf`), the
kernel density estimate `gaussian_kde`, and the sample summaries `mode`, `rankdata`, `sem`.

Every function is a composition of lax operations, differentiable and usable under `jit` and
`vmap`; values agree with JAX 0.10.2 (and SciPy) to float tolerance.
"""

from laminax_core.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from laminax_core.scipy.stats._kde import gaussian_kde
from laminax_core.scipy.stats._summaries import ModeResult, mode, rankdata, sem

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet",
    "expon", "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
    "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
    "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
]  # fmt: skip
