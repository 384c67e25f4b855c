"""`scipy.stats` against real JAX 0.10.2 (values under jit in float32 and float64, gradients)
and against SciPy (values in float64): every distribution function JAX has, at ordinary and
edge arguments (outside the support, at its ends, invalid parameters, NaN)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps
from jaxref import requires_jax, run_jax
from laminax import enable_x64

R = np.random.RandomState(0)
X = np.array([-np.inf, -30.0, -3.0, -1.0, -0.5, 0.0, 0.2, 0.5, 0.999, 1.0, 1.5, 2.0, 3.0, 7.5,
              40.0, np.inf, np.nan])
Q = np.array([-0.1, 0.0, 1e-6, 0.01, 0.2, 0.5, 0.7, 0.99, 1.0, 1.1, np.nan])
K = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 1.5, np.nan])
N = X.size

# name -> expression over X (points), Q (probabilities), K (counts); S is the stats module
CASES = {
    "norm.logpdf": "S.norm.logpdf(X, 0.5, 2.0)", "norm.pdf": "S.norm.pdf(X)",
    "norm.cdf": "S.norm.cdf(X, -1.0, 3.0)", "norm.logcdf": "S.norm.logcdf(X)",
    "norm.sf": "S.norm.sf(X, 1.0)", "norm.logsf": "S.norm.logsf(X)",
    "norm.ppf": "S.norm.ppf(Q, 1.0, 2.0)", "norm.isf": "S.norm.isf(Q)",
    "bernoulli.logpmf": "S.bernoulli.logpmf(K, 0.3)", "bernoulli.pmf": "S.bernoulli.pmf(K, 0.7, 1)",
    "bernoulli.cdf": "S.bernoulli.cdf(X, 0.3)", "bernoulli.ppf": "S.bernoulli.ppf(Q, 0.4)",
    "beta.logpdf": "S.beta.logpdf(X, 2.0, 3.0)", "beta.pdf": "S.beta.pdf(X, 0.5, 0.5, -1.0, 3.0)",
    "beta.cdf": "S.beta.cdf(X, 2.0, 3.0)", "beta.logcdf": "S.beta.logcdf(X, 2.0, 3.0)",
    "beta.sf": "S.beta.sf(X, 2.0, 3.0)", "beta.logsf": "S.beta.logsf(X, 1.5, 0.7)",
    "betabinom.logpmf": "S.betabinom.logpmf(K, 10.0, 2.0, 3.0)",
    "betabinom.pmf": "S.betabinom.pmf(K, 6.0, 0.5, 1.5)",
    "binom.logpmf": "S.binom.logpmf(K, 10.0, 0.3)", "binom.pmf": "S.binom.pmf(K, 5.0, 0.5)",
    "cauchy.logpdf": "S.cauchy.logpdf(X, 1.0, 2.0)", "cauchy.pdf": "S.cauchy.pdf(X)",
    "cauchy.cdf": "S.cauchy.cdf(X)", "cauchy.logcdf": "S.cauchy.logcdf(X, 0.5)",
    "cauchy.sf": "S.cauchy.sf(X)", "cauchy.logsf": "S.cauchy.logsf(X)",
    "cauchy.ppf": "S.cauchy.ppf(Q, 1.0, 2.0)", "cauchy.isf": "S.cauchy.isf(Q)",
    "chi2.logpdf": "S.chi2.logpdf(X, 3.0)", "chi2.pdf": "S.chi2.pdf(X, 4.0, 0.5, 2.0)",
    "chi2.cdf": "S.chi2.cdf(X, 3.0)", "chi2.logcdf": "S.chi2.logcdf(X, 2.0)",
    "chi2.sf": "S.chi2.sf(X, 3.0)", "chi2.logsf": "S.chi2.logsf(X, 5.0)",
    "expon.logpdf": "S.expon.logpdf(X, 0.5, 2.0)", "expon.pdf": "S.expon.pdf(X)",
    "expon.cdf": "S.expon.cdf(X)", "expon.logcdf": "S.expon.logcdf(X)",
    "expon.sf": "S.expon.sf(X, 1.0)", "expon.logsf": "S.expon.logsf(X)",
    "expon.ppf": "S.expon.ppf(Q, 1.0, 3.0)",
    "gamma.logpdf": "S.gamma.logpdf(X, 2.5)", "gamma.pdf": "S.gamma.pdf(X, 0.7, 0.1, 2.0)",
    "gamma.cdf": "S.gamma.cdf(X, 2.5)", "gamma.logcdf": "S.gamma.logcdf(X, 1.5)",
    "gamma.sf": "S.gamma.sf(X, 2.5)", "gamma.logsf": "S.gamma.logsf(X, 3.0)",
    "gennorm.logpdf": "S.gennorm.logpdf(X, 1.5)", "gennorm.pdf": "S.gennorm.pdf(X, 3.0)",
    "gennorm.cdf": "S.gennorm.cdf(X, 1.5)",
    "geom.logpmf": "S.geom.logpmf(K, 0.3)", "geom.pmf": "S.geom.pmf(K, 0.6, -1)",
    "gumbel_l.logpdf": "S.gumbel_l.logpdf(X, 0.5, 2.0)", "gumbel_l.pdf": "S.gumbel_l.pdf(X)",
    "gumbel_l.cdf": "S.gumbel_l.cdf(X)", "gumbel_l.logcdf": "S.gumbel_l.logcdf(X)",
    "gumbel_l.sf": "S.gumbel_l.sf(X)", "gumbel_l.logsf": "S.gumbel_l.logsf(X, 1.0)",
    "gumbel_l.ppf": "S.gumbel_l.ppf(Q, 1.0, 2.0)",
    "gumbel_r.logpdf": "S.gumbel_r.logpdf(X, 0.5, 2.0)", "gumbel_r.pdf": "S.gumbel_r.pdf(X)",
    "gumbel_r.cdf": "S.gumbel_r.cdf(X)", "gumbel_r.logcdf": "S.gumbel_r.logcdf(X)",
    "gumbel_r.sf": "S.gumbel_r.sf(X)", "gumbel_r.logsf": "S.gumbel_r.logsf(X, 1.0)",
    "gumbel_r.ppf": "S.gumbel_r.ppf(Q, 1.0, 2.0)",
    "laplace.logpdf": "S.laplace.logpdf(X, 0.5, 2.0)", "laplace.pdf": "S.laplace.pdf(X)",
    "laplace.cdf": "S.laplace.cdf(X, 1.0)",
    "logistic.logpdf": "S.logistic.logpdf(X, 0.5, 2.0)", "logistic.pdf": "S.logistic.pdf(X)",
    "logistic.cdf": "S.logistic.cdf(X)", "logistic.sf": "S.logistic.sf(X, 1.0)",
    "logistic.ppf": "S.logistic.ppf(Q, 1.0, 2.0)", "logistic.isf": "S.logistic.isf(Q)",
    "nbinom.logpmf": "S.nbinom.logpmf(K, 3.0, 0.4)", "nbinom.pmf": "S.nbinom.pmf(K, 2.5, 0.6)",
    "pareto.logpdf": "S.pareto.logpdf(X, 2.0)", "pareto.pdf": "S.pareto.pdf(X, 3.0, -1.0, 2.0)",
    "pareto.cdf": "S.pareto.cdf(X, 2.0)", "pareto.logcdf": "S.pareto.logcdf(X, 2.0)",
    "pareto.sf": "S.pareto.sf(X, 1.5)", "pareto.logsf": "S.pareto.logsf(X, 2.0)",
    "pareto.ppf": "S.pareto.ppf(Q, 2.0, 0.5, 2.0)",
    "poisson.logpmf": "S.poisson.logpmf(K, 3.0)", "poisson.pmf": "S.poisson.pmf(K, 0.5, 1)",
    "poisson.cdf": "S.poisson.cdf(K, 3.0)",
    "t.logpdf": "S.t.logpdf(X, 3.0)", "t.pdf": "S.t.pdf(X, 1.5, 0.5, 2.0)",
    "truncnorm.logpdf": "S.truncnorm.logpdf(X, -1.0, 2.0)",
    "truncnorm.pdf": "S.truncnorm.pdf(X, 0.5, 3.0)",
    "truncnorm.cdf": "S.truncnorm.cdf(X, -1.0, 2.0)",
    "truncnorm.logcdf": "S.truncnorm.logcdf(X, -2.0, 1.0)",
    "truncnorm.sf": "S.truncnorm.sf(X, -1.0, 2.0)",
    "truncnorm.logsf": "S.truncnorm.logsf(X, -2.0, 1.0, 0.5, 1.5)",
    "uniform.logpdf": "S.uniform.logpdf(X, -1.0, 3.0)", "uniform.pdf": "S.uniform.pdf(X)",
    "uniform.cdf": "S.uniform.cdf(X, -1.0, 3.0)", "uniform.ppf": "S.uniform.ppf(Q, 1.0, 2.0)",
    "vonmises.logpdf": "S.vonmises.logpdf(X, 2.0)", "vonmises.pdf": "S.vonmises.pdf(X, 0.5)",
    "wrapcauchy.logpdf": "S.wrapcauchy.logpdf(X, 0.3)", "wrapcauchy.pdf": "S.wrapcauchy.pdf(X, 0.8)",
    # invalid parameters
    "beta.logpdf.bad": "S.beta.logpdf(X, -1.0, 2.0)", "gumbel_r.logpdf.bad": "S.gumbel_r.logpdf(X, 0.0, -1.0)",
    "vonmises.logpdf.bad": "S.vonmises.logpdf(X, -1.0)", "wrapcauchy.bad": "S.wrapcauchy.logpdf(X, 1.5)",
    "betabinom.bad": "S.betabinom.logpmf(K, -1.0, 2.0, 3.0)", "truncnorm.bad": "S.truncnorm.logpdf(X, 2.0, 1.0)",
    # parameters varying elementwise
    "gamma.logpdf.arrays": "S.gamma.logpdf(jnp.abs(X), 0.5 + jnp.abs(X[::-1]) / 10)",
    "norm.cdf.arrays": "S.norm.cdf(X, X[::-1], 0.5 + jnp.abs(X) / 10)",
    "binom.pmf.arrays": "S.binom.pmf(K, K[::-1] + 3.0, jnp.linspace(0, 1, K.size))",
    "multinomial.logpmf": "S.multinomial.logpmf(np.array([1, 2, 3]), 6, np.array([0.2, 0.3, 0.5]))",
    "multinomial.pmf": "S.multinomial.pmf(np.array([[1, 2, 3], [0, 0, 6]]), 6, np.array([0.2, 0.3, 0.5]))",
    "multinomial.wrong_n": "S.multinomial.logpmf(np.array([1, 2, 3]), 5, np.array([0.2, 0.3, 0.5]))",
    "mvn.logpdf": "S.multivariate_normal.logpdf(X[2:11].reshape(3, 3), np.array([0.1, 0.2, -0.3]),"
                  " np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]]))",
    "mvn.pdf": "S.multivariate_normal.pdf(X[2:5], np.zeros(3), 2.0)",
    "mvn.scalar": "S.multivariate_normal.logpdf(X, 0.5, 2.0)",
    "dirichlet.logpdf": "S.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0]))",
    "dirichlet.pdf": "S.dirichlet.pdf(np.array([[0.2, 0.1], [0.3, 0.6]]), np.array([1.5, 2.0, 3.0]))",
    "dirichlet.off_simplex": "S.dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), np.array([1.5, 2.0, 3.0]))",
    "poisson.entropy": "S.poisson.entropy(np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 150.0, 1e4]))",
    "rankdata": "S.rankdata(K[:-1])", "rankdata.min": "S.rankdata(np.array([3, 1, 3, 2, 3]), 'min')",
    "rankdata.max": "S.rankdata(np.array([3, 1, 3, 2, 3]), 'max')",
    "rankdata.dense": "S.rankdata(np.array([3, 1, 3, 2, 3]), 'dense')",
    "rankdata.ordinal": "S.rankdata(np.array([3, 1, 3, 2, 3]), 'ordinal')",
    "rankdata.axis": "S.rankdata(np.array([[3, 1, 3], [2, 2, 0]]), axis=1)",
    "rankdata.nan": "S.rankdata(K)",
    "mode": "S.mode(np.array([[1, 2, 2, 3], [4, 4, 1, 1], [5, 5, 5, 0]]))",
    "mode.axis1": "S.mode(np.array([[1, 2, 2, 3], [4, 4, 1, 1]]), axis=1, keepdims=True)",
    "mode.none": "S.mode(np.array([[1.5, 2.5], [2.5, 0.0]]), axis=None)",
    "sem": "S.sem(X[1:-2])", "sem.axis": "S.sem(X[2:14].reshape(3, 4), axis=1, ddof=0)",
    "sem.omit": "S.sem(X[1:], nan_policy='omit')",
}
ERRORS = {
    "rankdata.bad_method": "S.rankdata(K, 'mean')",
    "rankdata.omit": "S.rankdata(K, nan_policy='omit')",
    "mode.bad_policy": "S.mode(K, nan_policy='nope')",
    "sem.bad_policy": "S.sem(K, nan_policy='raise')",
    "multinomial.float": "S.multinomial.logpmf(np.array([1.0, 2.0]), 3.0, np.array([0.5, 0.5]))",
    "dirichlet.alpha2d": "S.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))",
    "dirichlet.x_len": "S.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))",
    "mvn.shapes": "S.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))",
    "mvn.singular": "S.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(3), True)",
    "norm.list": "S.norm.logpdf([1.0, 2.0])",
}
INPUTS = dict(X=X, Q=Q, K=K)

# All value cases go through one jit per side (compiling one program, not a hundred); the
# error cases one jit each.
_SNIPPET = """
import jax.scipy.stats as S
def _all(X, Q, K):
    env = dict(S=S, jnp=jnp, np=np, X=X, Q=Q, K=K)
    return {name: eval(expr, env) for name, expr in cases.items()}
values = jax.jit(_all)(X, Q, K)
values = {k: [np.asarray(v) for v in jax.tree_util.tree_leaves(o)] for k, o in values.items()}
def _error(expr):
    try:
        jax.jit(lambda X, Q, K: eval(expr, dict(S=S, jnp=jnp, np=np, X=X, Q=Q, K=K)))(X, Q, K)
        return ("ok",)
    except Exception as err:
        return ("error", type(err).__name__)
result = values, {name: _error(expr) for name, expr in errors.items()}
"""


def _laminax_values(dtype):
    import laminax as jax
    import laminax.numpy as jnp
    import laminax.scipy.stats as S  # noqa: N812

    def run_all(X, Q, K):  # noqa: N803
        env = dict(S=S, jnp=jnp, np=np, X=X, Q=Q, K=K)
        return {name: eval(expr, env) for name, expr in CASES.items()}  # noqa: S307

    out = jax.jit(run_all)(*[v.astype(dtype) for v in (X, Q, K)])
    return {k: [np.asarray(v) for v in jax.tree_util.tree_leaves(o)] for k, o in out.items()}


def _laminax_error(expr, dtype):
    import laminax as jax
    import laminax.numpy as jnp
    import laminax.scipy.stats as S  # noqa: N812

    args = [v.astype(dtype) for v in (X, Q, K)]
    try:
        jax.jit(lambda X, Q, K: eval(expr, dict(S=S, jnp=jnp, np=np, X=X, Q=Q, K=K)))(*args)  # noqa: N803, S307
        return ("ok",)
    except Exception as err:  # noqa: BLE001 (the type is compared)
        return ("error", type(err).__name__)


@pytest.fixture(scope="module", params=[False, True], ids=["x32", "x64"])
def x64(request):
    return request.param


@pytest.fixture(scope="module")
def jax_results(x64):
    dtype = np.float64 if x64 else np.float32
    inputs = {k: v.astype(dtype) for k, v in INPUTS.items()}
    return run_jax(_SNIPPET, cases=CASES, errors=ERRORS, x64=x64, **inputs)


@pytest.fixture(scope="module")
def laminax_results(x64):
    with enable_x64(x64):
        return _laminax_values(np.float64 if x64 else np.float32)


def _tolerance(x64, name):
    # ndtri is refined differently (a Newton step, see laminax_core.scipy.special); the
    # incomplete gamma/beta and lgamma programs fuse differently
    loose = any(name.startswith(p) for p in ("beta", "chi2", "gamma", "truncnorm", "poisson",
                                              "t.", "gennorm", "betabinom", "nbinom", "binom",
                                              "norm.ppf", "norm.isf", "mvn"))
    if x64:
        return dict(rtol=1e-9 if loose else 1e-12, atol=1e-12)
    return dict(rtol=5e-4 if loose else 2e-5, atol=2e-6)


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_jax(name, x64, jax_results, laminax_results):
    ours, theirs = laminax_results[name], jax_results[0][name]
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got, want)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        np.testing.assert_allclose(got, want, err_msg=name, **_tolerance(x64, name))


@requires_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name, x64, jax_results):
    with enable_x64(x64):
        ours = _laminax_error(ERRORS[name], np.float64 if x64 else np.float32)
    assert ours[0] == "error" and ours == tuple(jax_results[1][name]), (ours, jax_results[1][name])


# ----- against SciPy, in float64

SCIPY = {
    "norm": ("logpdf pdf cdf logcdf sf logsf", (0.5, 2.0), "ppf isf"),
    "cauchy": ("logpdf pdf cdf logcdf sf logsf", (1.0, 2.0), "ppf isf"),
    "expon": ("logpdf pdf cdf logcdf sf logsf", (0.5, 2.0), "ppf"),
    "laplace": ("logpdf pdf cdf", (0.5, 2.0), ""),
    "logistic": ("logpdf pdf cdf sf", (0.5, 2.0), "ppf isf"),
    "gumbel_l": ("logpdf pdf cdf logcdf sf logsf", (0.5, 2.0), "ppf"),
    "gumbel_r": ("logpdf pdf cdf logcdf sf logsf", (0.5, 2.0), "ppf"),
    "uniform": ("logpdf pdf cdf", (-1.0, 3.0), "ppf"),
    "beta": ("logpdf pdf cdf sf", (2.0, 3.0, -1.0, 3.0), ""),
    "chi2": ("logpdf pdf cdf sf", (3.0, 0.5, 2.0), ""),
    "gamma": ("logpdf pdf cdf sf", (2.5, 0.1, 2.0), ""),
    "gennorm": ("logpdf pdf cdf", (1.5,), ""),
    "pareto": ("logpdf pdf cdf logcdf sf logsf", (2.0, -1.0, 2.0), "ppf"),
    "t": ("logpdf pdf", (3.0, 0.5, 2.0), ""),
    "truncnorm": ("logpdf pdf cdf logcdf sf logsf", (-1.0, 2.0, 0.5, 1.5), ""),
    "vonmises": ("logpdf pdf", (2.0,), ""),
    "wrapcauchy": ("logpdf pdf", (0.3,), ""),
}
DISCRETE = {
    "bernoulli": ("logpmf pmf", (0.3,)), "binom": ("logpmf pmf", (10, 0.3)),
    "betabinom": ("logpmf pmf", (10, 2.0, 3.0)), "geom": ("logpmf pmf", (0.3,)),
    "nbinom": ("logpmf pmf", (3, 0.4)), "poisson": ("logpmf pmf cdf", (3.0,)),
}


def _scipy_cases():
    for dist, (fns, params, quantile_fns) in SCIPY.items():
        for fn in fns.split():
            yield dist, fn, params, X
        for fn in quantile_fns.split():
            yield dist, fn, params, Q
    whole = K[np.isnan(K) | (K == np.round(K))]  # JAX (like laminax) does not zero k = 1.5
    for dist, (fns, params) in DISCRETE.items():
        for fn in fns.split():
            yield dist, fn, params, whole


@pytest.mark.parametrize(("dist", "fn", "params", "points"), list(_scipy_cases()),
                         ids=[f"{d}.{f}" for d, f, _, _ in _scipy_cases()])
def test_values_match_scipy(dist, fn, params, points):
    import laminax.scipy.stats as S  # noqa: N812
    if dist == "vonmises":  # SciPy's von Mises is supported on one period around loc only
        points = points[(points > -np.pi) & (points < np.pi)]
    with np.errstate(all="ignore"):
        expected = getattr(getattr(sps, dist), fn)(points, *params)
    with enable_x64(True):
        got = np.asarray(getattr(getattr(S, dist), fn)(points, *params))
    finite = np.isfinite(expected) & ~np.isnan(points)
    rtol = 1e-6 if dist == "betabinom" else 1e-7  # JAX's betaln is as far from SciPy's
    np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol, atol=1e-12,
                               err_msg=f"{dist}.{fn}")
    if fn not in ("ppf", "isf"):  # JAX's quantiles at q = 0, 1 are finite (tan(pi/2) ...)
        both = ~np.isnan(points)
        np.testing.assert_array_equal(np.isinf(got[both]), np.isinf(expected[both]),
                                      err_msg=f"{dist}.{fn}")


def test_summaries_match_scipy():
    import laminax.scipy.stats as S  # noqa: N812

    data = R.randint(0, 4, size=(6, 5)).astype(np.float32)
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(S.rankdata(data, method), sps.rankdata(data, method))
        np.testing.assert_array_equal(S.rankdata(data, method, axis=0),
                                      sps.rankdata(data, method, axis=0))
    result = S.mode(data, axis=1)
    expected = sps.mode(data, axis=1)
    np.testing.assert_array_equal(result.mode, expected.mode)
    np.testing.assert_array_equal(result.count, expected.count)
    np.testing.assert_allclose(S.sem(data, axis=0), sps.sem(data, axis=0), rtol=1e-5)


# ----- gradients against JAX

GRADS = {
    "norm.logpdf": "jax.grad(lambda x, m, s: S.norm.logpdf(x, m, s).sum(), (0, 1, 2))(P, P[::-1], P + 1)",
    "norm.logcdf": "jax.grad(lambda x: S.norm.logcdf(x).sum())(X6)",
    "gamma.logpdf": "jax.grad(lambda x, a: S.gamma.logpdf(x, a).sum(), (0, 1))(P + 0.1, P + 1)",
    "beta.cdf": "jax.grad(lambda x: S.beta.cdf(x, 2.0, 3.0).sum())(P / 3)",
    "t.logpdf": "jax.grad(lambda x, df: S.t.logpdf(x, df).sum(), (0, 1))(X6, P + 1)",
    "truncnorm.logpdf": "jax.grad(lambda x: S.truncnorm.logpdf(x, -1.0, 2.0).sum())(P)",
    "mvn.logpdf": "jax.grad(lambda m: S.multivariate_normal.logpdf(X6[:3], m, np.eye(3) * 2).sum())(P[:3])",
    "poisson.logpmf": "jax.grad(lambda mu: S.poisson.logpmf(np.arange(6.0), mu).sum())(P + 0.5)",
    "logistic.logpdf": "jax.vmap(jax.grad(lambda x: S.logistic.logpdf(x, 0.5, 2.0)))(X6)",
}


@requires_jax
def test_gradients_match_jax():
    import laminax as jax
    import laminax.scipy.stats as S  # noqa: N812

    P = np.array([0.1, 0.4, 0.9, 1.3, 2.0, 2.7], np.float32)  # noqa: N806
    X6 = np.array([-2.0, -0.7, 0.0, 0.3, 1.1, 2.4], np.float32)  # noqa: N806
    expected = run_jax("import jax.scipy.stats as S\n"
                       "result = {k: jax.tree_util.tree_leaves(eval(v)) for k, v in exprs.items()}",
                       exprs=GRADS, P=P, X6=X6)
    for name, expr in GRADS.items():
        got = jax.tree_util.tree_leaves(eval(expr, dict(jax=jax, S=S, np=np, P=P, X6=X6)))  # noqa: S307
        for g, e in zip(got, expected[name], strict=True):
            np.testing.assert_allclose(np.asarray(g), e, rtol=2e-5, atol=1e-6, err_msg=name)


# ----- gaussian_kde

KDE_EXPRS = {
    "evaluate": "S.gaussian_kde(D2).evaluate(P2)",
    "call_1d": "S.gaussian_kde(D1)(P1)",
    "logpdf": "S.gaussian_kde(D2, bw_method='silverman').logpdf(P2)",
    "weights": "S.gaussian_kde(D2, weights=W).pdf(P2)",
    "scalar_bw": "S.gaussian_kde(D1, bw_method=0.3)(P1)",
    "callable_bw": "S.gaussian_kde(D1, bw_method=lambda k: 0.5 * k.neff ** -0.2)(P1)",
    "attrs": "(lambda k: (k.covariance, k.inv_cov, k.neff, k.weights))(S.gaussian_kde(D2, weights=W))",
    "integrate_gaussian": "S.gaussian_kde(D2).integrate_gaussian(np.zeros(2), np.eye(2))",
    "integrate_box_1d": "S.gaussian_kde(D1).integrate_box_1d(-0.5, 1.0)",
    "integrate_kde": "S.gaussian_kde(D2).integrate_kde(S.gaussian_kde(D2[:, :7] + 1))",
    "resample": "S.gaussian_kde(D2, weights=W).resample(jax.random.key(3), (6,))",
    "point_vector": "S.gaussian_kde(D2)(np.array([0.1, 0.2]))",
    "jit_pytree": "jax.jit(lambda k, p: k(p))(S.gaussian_kde(D2), P2)",
    "grad": "jax.grad(lambda p: S.gaussian_kde(D1).logpdf(p).sum())(P1)",
}
KDE_ERRORS = {
    "one_element": "S.gaussian_kde(np.ones(1))",
    "bad_bw": "S.gaussian_kde(D1, bw_method='nope')",
    "bad_weights": "S.gaussian_kde(D1, weights=np.ones(3))",
    "dims": "S.gaussian_kde(D2)(np.ones((3, 4)))",
    "box_2d": "S.gaussian_kde(D2).integrate_box_1d(0.0, 1.0)",
    "box": "S.gaussian_kde(D2).integrate_box(np.zeros(2), np.ones(2))",
    "set_bandwidth": "S.gaussian_kde(D2).set_bandwidth('scott')",
    "complex": "S.gaussian_kde(D1 + 1j)",
}
KDE_INPUTS = dict(D2=R.randn(2, 25).astype(np.float32), P2=R.randn(2, 6).astype(np.float32),
                  D1=R.randn(20).astype(np.float32), P1=np.linspace(-2, 2, 7, dtype=np.float32),
                  W=R.uniform(0.5, 2.0, 25).astype(np.float32))
_KDE_SNIPPET = """
import jax.scipy.stats as S
def _run(expr):
    try:
        out = eval(expr, dict(S=S, jax=jax, jnp=jnp, np=np, **inputs))
        return ("ok", [np.asarray(v) for v in jax.tree_util.tree_leaves(out)])
    except Exception as err:
        return ("error", type(err).__name__)
result = {k: _run(v) for k, v in exprs.items()}
"""


@requires_jax
def test_gaussian_kde_matches_jax_and_scipy():
    import laminax as jax
    import laminax.numpy as jnp
    import laminax.scipy.stats as S  # noqa: N812

    exprs = {**KDE_EXPRS, **KDE_ERRORS}
    expected = run_jax(_KDE_SNIPPET, exprs=exprs, inputs=KDE_INPUTS)
    for name, expr in exprs.items():
        try:
            out = eval(expr, dict(S=S, jax=jax, jnp=jnp, np=np, **KDE_INPUTS))  # noqa: S307
            got = ("ok", [np.asarray(v) for v in jax.tree_util.tree_leaves(out)])
        except Exception as err:  # noqa: BLE001 (the type is compared)
            got = ("error", type(err).__name__)
        assert got[0] == expected[name][0], (name, got, expected[name])
        if got[0] == "error":
            assert got[1] == expected[name][1], (name, got, expected[name])
            continue
        for g, w in zip(got[1], expected[name][1], strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6, err_msg=name)
    d2, p2 = KDE_INPUTS["D2"], KDE_INPUTS["P2"]
    np.testing.assert_allclose(S.gaussian_kde(d2)(p2), sps.gaussian_kde(d2)(p2), rtol=1e-4)
