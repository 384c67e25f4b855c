"""laminax's `random`: JAX's counter-based PRNG (threefry2x32), bit-exact with JAX 0.10.2.

Keys are explicit values: create one with `key(seed)` (typed) or `PRNGKey(seed)` (raw
`uint32[2]`), derive independent keys with `split`/`fold_in`, and pass a key to each sampler.
`threefry2x32_p` and `threefry_2x32` (the hash primitive and its counter layout, JAX's
`jax.extend.random` names) are exported for the layers above.
"""

from laminax_core.random._discrete import binomial as binomial
from laminax_core.random._discrete import multinomial as multinomial
from laminax_core.random._discrete import poisson as poisson
from laminax_core.random._gamma import beta as beta
from laminax_core.random._gamma import dirichlet as dirichlet
from laminax_core.random._gamma import gamma as gamma
from laminax_core.random._gamma import loggamma as loggamma
from laminax_core.random._gamma import random_gamma_p as random_gamma_p
from laminax_core.random import _key_rules  # noqa: F401  (registers the rules for keys)
from laminax_core.random import _keys
from laminax_core.random._keys import PRNGKey as PRNGKey
from laminax_core.random._keys import PRNGKeyArray as PRNGKeyArray
from laminax_core.random._keys import fold_in as fold_in
from laminax_core.random._keys import key as key
from laminax_core.random._keys import key_data as key_data
from laminax_core.random._keys import key_impl as key_impl
from laminax_core.random._keys import split as split
from laminax_core.random._keys import wrap_key_data as wrap_key_data
from laminax_core.random._linalg_samplers import multivariate_normal as multivariate_normal
from laminax_core.random._linalg_samplers import orthogonal as orthogonal
from laminax_core.random._permutations import choice as choice
from laminax_core.random._permutations import permutation as permutation
from laminax_core.random._samplers import bernoulli as bernoulli
from laminax_core.random._samplers import bits as bits
from laminax_core.random._samplers import categorical as categorical
from laminax_core.random._samplers import exponential as exponential
from laminax_core.random._samplers import gumbel as gumbel
from laminax_core.random._samplers import laplace as laplace
from laminax_core.random._samplers import logistic as logistic
from laminax_core.random._samplers import normal as normal
from laminax_core.random._samplers import randint as randint
from laminax_core.random._samplers import truncated_normal as truncated_normal
from laminax_core.random._samplers import uniform as uniform
from laminax_core.random._threefry import threefry2x32_p as threefry2x32_p
from laminax_core.random._threefry import threefry_2x32 as threefry_2x32
from laminax_core.random._transformed import ball as ball
from laminax_core.random._transformed import cauchy as cauchy
from laminax_core.random._transformed import chisquare as chisquare
from laminax_core.random._transformed import clone as clone
from laminax_core.random._transformed import double_sided_maxwell as double_sided_maxwell
from laminax_core.random._transformed import f as f
from laminax_core.random._transformed import generalized_normal as generalized_normal
from laminax_core.random._transformed import geometric as geometric
from laminax_core.random._transformed import key_dtype as key_dtype
from laminax_core.random._transformed import lognormal as lognormal
from laminax_core.random._transformed import maxwell as maxwell
from laminax_core.random._transformed import pareto as pareto
from laminax_core.random._transformed import rademacher as rademacher
from laminax_core.random._transformed import rayleigh as rayleigh
from laminax_core.random._transformed import t as t
from laminax_core.random._transformed import triangular as triangular
from laminax_core.random._transformed import wald as wald
from laminax_core.random._transformed import weibull_min as weibull_min

__all__ = [
    "random_gamma_p",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "PRNGKey",
    "PRNGKeyArray",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "threefry2x32_p",
    "threefry_2x32",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]

_keys.install_array_methods()
