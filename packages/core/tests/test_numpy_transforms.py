"""laminax_core.numpy under transformations: gradients of representative functions against
finite differences (check_grads, orders 1 and 2), vmap against a Python loop, and the public
surface (every `__all__` name documented, doctests passing)."""

import doctest
import importlib

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import config, grad, vmap
from laminax_core.numpy._indexing import IndexUpdateHelper
from laminax_core.testing import check_grads

RNG = np.random.RandomState(0)
A = RNG.randn(3, 4).astype(np.float64)
B = RNG.randn(4, 2).astype(np.float64)
P = (RNG.rand(3, 4) + 0.5).astype(np.float64)

GRAD_CASES = [
    ("sin_cos", lambda x: jnp.sin(x) * jnp.cos(x), (A,)),
    ("exp_log1p", lambda x: jnp.log1p(jnp.exp(x)), (A,)),
    ("power", lambda x, y: jnp.power(x, y), (P, A)),
    ("sqrt_cbrt", lambda x: jnp.sqrt(x) + jnp.cbrt(x), (P,)),
    ("tanh_arctan", lambda x: jnp.tanh(x) + jnp.arctan(x), (A,)),
    ("logaddexp", lambda x, y: jnp.logaddexp(x, y), (A, A.T.reshape(3, 4) * 0.3)),
    ("hypot", lambda x, y: jnp.hypot(x, y), (P, P * 2)),
    ("arctan2", lambda x, y: jnp.arctan2(x, y), (A, P)),
    ("divide", lambda x, y: x / y, (A, P)),
    ("where", lambda x: jnp.where(x > 0, x * 2, jnp.square(x)), (A,)),
    ("clip", lambda x: jnp.clip(x, -0.5, 0.5), (A,)),
    ("sum_mean", lambda x: jnp.sum(x, axis=0) + jnp.mean(x, axis=1, keepdims=True).sum(), (A,)),
    ("var_std", lambda x: jnp.var(x, axis=1) + jnp.std(x), (A,)),
    ("prod", lambda x: jnp.prod(x, axis=1), (P,)),
    ("max_min", lambda x: jnp.max(x, axis=1) - jnp.min(x), (A,)),
    ("cumsum_cumprod", lambda x: jnp.cumsum(x, axis=1) + jnp.cumprod(x, axis=0)[0].sum(), (P,)),
    ("logsumexp_like", lambda x: jnp.log(jnp.sum(jnp.exp(x - jnp.max(x))))
     + jnp.max(x), (A,)),
    ("matmul", lambda x, y: jnp.matmul(x, y), (A, B)),
    ("einsum", lambda x, y: jnp.einsum("ij,jk,ik->i", x, y, jnp.ones((3, 2))), (A, B)),
    ("tensordot", lambda x, y: jnp.tensordot(x, y, 1), (A, B)),
    ("outer_kron", lambda x: jnp.outer(x[0], x[1]) + jnp.kron(x[:1, :2], x[:2, :1]).sum(), (A,)),
    ("trace_diag", lambda x: jnp.trace(x) + jnp.diagonal(x, 1).sum(), (A,)),
    ("reshape_transpose", lambda x: jnp.transpose(jnp.reshape(x, (2, 6))) * 2, (A,)),
    ("concatenate_stack", lambda x: jnp.stack([x, jnp.concatenate([x[:, 2:], x[:, :2]], 1)]),
     (A,)),
    ("pad_reflect", lambda x: jnp.pad(x, ((1, 2), (2, 1)), mode="reflect"), (A,)),
    ("roll_flip_tile", lambda x: jnp.tile(jnp.flip(jnp.roll(x, 1, axis=1), 0), (2, 1)), (A,)),
    ("getitem_advanced", lambda x: x[np.array([0, 2, 2]), 1:] * x[:, np.array([3, 0])].sum(),
     (A,)),
    ("at_set_add", lambda x: IndexUpdateHelper(IndexUpdateHelper(x)[1].set(x[0] ** 2))[
        np.array([0, 0])].add(x[2]), (A,)),
    ("take_along_axis", lambda x: jnp.take_along_axis(x, np.argsort(A, axis=1), axis=1), (A,)),
    ("sort", lambda x: jnp.sort(x, axis=1), (A,)),
    ("linspace", lambda x: jnp.linspace(x[0, 0], x[1, 1], 5), (A,)),
    ("norm_like", lambda x: jnp.sqrt(jnp.sum(jnp.abs(x) ** 2)), (A,)),
    ("average", lambda x: jnp.average(x, axis=1, weights=jnp.arange(1.0, 5.0)), (A,)),
    ("quantile", lambda x: jnp.quantile(x, 0.3, axis=1), (A,)),
    ("sinc", lambda x: jnp.sinc(x), (A,)),
]


@pytest.mark.parametrize("name,fun,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(name, fun, args):
    order = 1 if name in ("sort", "quantile", "max_min", "clip") else 2
    with config.enable_x64(True):
        check_grads(fun, args, order=order, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4,
                    eps=1e-6)


VMAP_CASES = [
    ("sum_axis", lambda x: jnp.sum(x, axis=0)), ("mean", jnp.mean), ("var", jnp.var),
    ("cumsum", lambda x: jnp.cumsum(x, axis=-1)), ("argmax", lambda x: jnp.argmax(x, axis=1)),
    ("sort", jnp.sort), ("argsort", lambda x: jnp.argsort(x, axis=0)),
    ("matmul", lambda x: x @ x.T), ("einsum", lambda x: jnp.einsum("ij,kj->ik", x, x)),
    ("getitem", lambda x: x[np.array([2, 0]), ::-1]),
    ("at_add", lambda x: IndexUpdateHelper(x)[1, 2:].add(1.0)),
    ("where", lambda x: jnp.where(x > 0, x, 0.0)), ("pad", lambda x: jnp.pad(x, 1, mode="edge")),
    ("transpose", jnp.transpose), ("roll", lambda x: jnp.roll(x, 2)),
    ("quantile", lambda x: jnp.quantile(x, 0.5, axis=0)), ("diag", jnp.diagonal),
    ("take", lambda x: jnp.take(x, np.array([0, 5]))), ("unique", lambda x: jnp.unique(
        jnp.round(x), size=4)), ("nonzero", lambda x: jnp.nonzero(x > 0, size=3)[1]),
    ("searchsorted", lambda x: jnp.searchsorted(jnp.sort(x[0]), x[1])),
    ("clip", lambda x: jnp.clip(x, -0.2, 0.3)), ("isclose", lambda x: jnp.isclose(x, x[0])),
]


@pytest.mark.parametrize("name,fun", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_a_python_loop(name, fun):
    xs = RNG.randn(3, 3, 4).astype(np.float32)
    batched = vmap(fun)(xs)
    looped = np.stack([np.asarray(fun(x)) for x in xs])
    np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-6)


def test_vmap_over_a_non_leading_axis_with_jnp_methods():
    xs = RNG.randn(4, 3).astype(np.float32)
    out = vmap(lambda x: x.mean() + x.std(), in_axes=1)(xs)
    np.testing.assert_allclose(out, xs.mean(0) + xs.std(0), rtol=1e-5)


def test_gradient_of_integer_indexing_through_a_traced_index():
    def f(x, i):
        return jnp.sum(x[i] ** 2)

    g = grad(f)(np.arange(4.0, dtype=np.float32), np.int32(2))
    np.testing.assert_allclose(g, [0, 0, 4, 0])


MODULES = ["_creation", "_ufuncs", "_logic", "_reductions", "_shape", "_indexing",
           "_index_tricks", "_signal", "_vectorize", "_linalg_products", "_einsum", "_sorting",
           "_dtypes", "linalg"]


def test_every_public_name_has_a_docstring():
    undocumented = [name for name in jnp.__all__
                    if callable(getattr(jnp, name)) and not isinstance(getattr(jnp, name), type(np))
                    and not (getattr(jnp, name).__doc__ or "").strip()]
    assert undocumented == []
    assert len(jnp.__all__) == len(set(jnp.__all__))
    for name in jnp.__all__:
        assert hasattr(jnp, name), name


@pytest.mark.parametrize("module", MODULES)
def test_doctests_pass(module):
    mod = importlib.import_module(f"laminax_core.numpy.{module}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(mod):
        test.globs = {**vars(mod), "np": np, "jnp": jnp}
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
