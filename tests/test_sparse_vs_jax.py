"""`jax.experimental.sparse` (BCOO, BCSR, sparsify) against real JAX 0.10.2: layouts (data,
indices, indptr exactly), dense values, products, gradients and vmap, eagerly and under jit;
plus SciPy as an independent oracle."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from exprcompare import JAX_SNIPPET, compare
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)


def _with_zeros(shape, density=0.4):
    return (R.randn(*shape) * (R.rand(*shape) < density)).astype(np.float32)


Q = _with_zeros((3, 4, 1)) * R.randn(1, 1, 2).astype(np.float32)  # zero blocks along the dense dim
INPUTS = dict(
    M=_with_zeros((3, 4)), T=_with_zeros((2, 3, 4)), Q=Q, W=R.randn(4, 5).astype(np.float32),
    V=R.randn(4).astype(np.float32), L=R.randn(5, 3).astype(np.float32),
    WB=R.randn(2, 4, 5).astype(np.float32), W2=R.randn(2, 5).astype(np.float32),
    DATA=np.array([1.0, 2.0, 3.0, 0.0], np.float32),
    IDX=np.array([[0, 1], [2, 3], [0, 1], [1, 1]], np.int32),
)
B = "sparse.BCOO.fromdense(M, nse=7)"
BT = "sparse.BCOO.fromdense(T, n_batch=1, nse=9)"
DUP = "sparse.BCOO((DATA, IDX), shape=(3, 4))"


def J(expr: str) -> str:
    """Marks a row that is also compared under jit (compiling every row twice would cost
    minutes of CI on two cores: one or more of each kind is enough)."""
    _JITTED.add(expr)
    return expr


_JITTED: set[str] = set()
EXPRS = [
    # layouts
    J("sparse.BCOO.fromdense(M)"), J(BT), "sparse.BCOO.fromdense(T, n_batch=2, nse=4)",
    J("sparse.BCOO.fromdense(T, n_dense=1, nse=8)"),
    "sparse.BCOO.fromdense(T, n_batch=1, n_dense=1)",
    J("sparse.BCOO.fromdense(Q, n_dense=1, nse=9)"),
    "sparse.BCOO.fromdense(M, nse=7, index_dtype=jnp.int16)",
    # dense values
    J(f"{BT}.todense()"), f"sparse.bcoo_todense({DUP})", f"sparse.todense({B})",
    "sparse.todense(M)",
    # products with a dense operand
    J(f"{B} @ W"), f"{B} @ V", f"jnp.asarray(L) @ {B}", J(f"{BT} @ W"), J(f"{BT} @ WB"),
    f"sparse.BCOO.fromdense(T, nse=20) @ W", f"jnp.asarray(L) @ {BT}",
    J(f"sparse.bcoo_dot_general({BT}, WB, dimension_numbers=(((2,), (1,)), ((0,), (0,))))"),
    J(f"sparse.bcoo_dot_general({BT}, W2, dimension_numbers=(((0,), (0,)), ((), ())))"),
    J("sparse.bcoo_dot_general(sparse.BCOO.fromdense(Q, n_dense=1, nse=9), W, "
      "dimension_numbers=(((1,), (0,)), ((), ())))"),
    "sparse.bcoo_dot_general(sparse.BCOO.fromdense(Q, n_dense=1, nse=9), W[:2], "
    "dimension_numbers=(((2,), (0,)), ((), ())))",
    f"sparse.bcoo_dot_general(W, {B}, dimension_numbers=(((0,), (1,)), ((), ())))",
    f"{DUP} @ W",
    # sparse @ sparse (values; JAX's padding layout is its own)
    J(f"({B} @ {B}.T).todense()"),
    J(f"sparse.bcoo_dot_general({BT}, {BT}, dimension_numbers=(((2,), (2,)), ((0,), (0,))))"
      ".todense()"),
    # elementwise
    f"{B} * 2.0", J(f"{B} * M"), f"-{B}", J(f"{B} / 4.0"), f"({B} * {B}).todense()",
    f"({B} + {B}).todense()", f"{B} + M", f"{BT} * T[1]",
    J(f"sparse.bcoo_multiply_dense({B}, W[:3, :4])"),
    # sparsify
    f"sparse.sparsify(lambda x, y: x + y)({B}, {B})", f"sparse.sparsify(lambda x: x + x)({B})",
    J(f"sparse.sparsify(lambda x: 3 * x - x)({B})"), f"sparse.sparsify(jnp.sum)({B})",
    J(f"sparse.sparsify(lambda x: x.sum(1))({BT})"),
    f"sparse.sparsify(lambda x: jnp.sum(x, (0, 2)))({BT}).todense()",
    f"sparse.sparsify(lambda x: x.T)({B})", J(f"sparse.sparsify(jnp.sin)({B})"),
    f"sparse.sparsify(jnp.sin)({DUP}).todense()", f"sparse.sparsify(lambda x: x ** 3)({B})",
    J(f"sparse.sparsify(jnp.matmul)({B}, W)"),
    f"sparse.sparsify(lambda x: x.reshape(12))({B}).todense()",
    f"sparse.sparsify(jnp.cos)({B})", f"sparse.sparsify(lambda x: x + 1.0)({B})",
    J(f"sparse.sparsify(lambda x: x * W[:3, :4])({B})"),
    f"sparse.sparsify(lambda x: jnp.abs(x) @ V)({B})",
    # structure
    f"{DUP}.sum_duplicates()", J(f"{DUP}.sum_duplicates(nse=5, remove_zeros=False)"),
    f"{DUP}.sort_indices()", f"sparse.bcoo_sum_duplicates({BT}, nse=9)",
    J(f"{BT}.transpose((0, 2, 1))"), "sparse.BCOO.fromdense(T, nse=20).T", f"{BT}.T",
    J("sparse.BCOO.fromdense(T, nse=20).reshape(6, 4)"), f"{BT}.reshape(2, 12)",
    J(f"sparse.bcoo_reduce_sum({BT}, axes=(1,))"), f"{B}.sum()",
    f"sparse.bcoo_extract({B}, W[:3, :4])", f"{B}.astype(jnp.int32)",
    # BCSR
    J("sparse.BCSR.fromdense(M, nse=8)"), "sparse.BCSR.fromdense(T, n_batch=1, nse=5)",
    "sparse.BCSR.fromdense(M, nse=8).to_bcoo()", f"sparse.BCSR.from_bcoo({B})",
    "sparse.BCSR.fromdense(M, nse=8) @ V",
    J("sparse.BCSR.fromdense(T, n_batch=1, nse=5).todense()"),
    "sparse.BCSR.fromdense(Q, n_dense=1, nse=9).todense()",
    J("sparse.bcsr_dot_general(sparse.BCSR.fromdense(M, nse=8), W, "
      "dimension_numbers=(((1,), (0,)), ((), ())))"),
    J("sparse.bcsr_concatenate([sparse.BCSR.fromdense(M, nse=6), sparse.BCSR.fromdense(M[::-1], "
      "nse=6)], dimension=1)"),
    f"sparse.bcoo_concatenate([{B}, sparse.BCOO.fromdense(M * 3, nse=5)], dimension=0)",
    "sparse.bcsr_broadcast_in_dim(sparse.BCSR.fromdense(M, nse=6), shape=(2, 3, 4), "
    "broadcast_dimensions=(1, 2))",
    # constructors
    "sparse.eye(4, 5, k=1)", "sparse.eye(3, n_batch=1)", "sparse.eye(3, 4, k=2, dtype=jnp.int32)",
    J("sparse.empty((2, 3, 4), n_batch=1, n_dense=1)"),
    "sparse.random_bcoo(jax.random.key(1), (3, 4, 5), nse=0.3, n_batch=1)",
    J("sparse.random_bcoo(jax.random.key(2), (6, 5), nse=7, sorted_indices=True)"),
    "sparse.random_bcoo(jax.random.key(3), (4, 3, 2), nse=5, n_dense=1, unique_indices=False)",
    # transformations
    f"jax.grad(lambda d: (sparse.BCOO((d, {B}.indices), shape=(3, 4)) @ W).sum())({B}.data)",
    J(f"jax.grad(lambda w: jnp.sum(({B} @ w) ** 2))(W)"),
    "jax.grad(lambda m: jnp.sum(jnp.tanh(sparse.BCOO.fromdense(m, nse=7) @ W)))(M)",
    J("jax.grad(lambda m: jnp.sum(jnp.asarray(L) @ sparse.BCOO.fromdense(m, n_batch=1, "
      "nse=9)))(T)"),
    J(f"sparse.grad(lambda b: jnp.sum((b @ W) ** 2))({B})"),
    f"sparse.value_and_grad(lambda b, w: jnp.sum(b @ w), argnums=(0, 1))({B}, W)",
    J("jax.grad(lambda d: sparse.BCOO((d, IDX), shape=(3, 4)).todense()[0, 1])(DATA)"),
    J(f"jax.vmap(lambda b: b @ V)({BT})"), f"jax.vmap(lambda b: b.todense())({BT})",
    f"jax.vmap(lambda b, w: b @ w)({BT}, WB)",
    J("jax.vmap(lambda m: sparse.BCOO.fromdense(m, nse=6))(T)"),
    f"jax.vmap(lambda b: b.sum_duplicates(nse=9))({BT})",
    J(f"jax.vmap(jax.grad(lambda v, b: jnp.sum(jnp.sin(b @ v))), (None, 0))(V, {BT})"),
    f"jax.jacfwd(lambda w: {B} @ w)(V)",
    # sparse-aware Jacobians (the data's derivative, batched over the output's dimensions)
    f"sparse.jacfwd(lambda b, w: b @ w, argnums=(0, 1))({B}, W)",
    J(f"sparse.jacrev(lambda b: jnp.tanh(b @ V))({BT})"), f"sparse.jacobian(lambda b: b @ V)({B})",
    f"sparse.grad(lambda b: ((b @ W).sum(), M), has_aux=True)({B})",
    # slicing and layout changes
    f"sparse.bcoo_slice({B}, start_indices=(1, 0), limit_indices=(3, 4))",
    J(f"sparse.bcoo_slice({BT}, start_indices=(0, 1, 1), limit_indices=(2, 3, 4), "
      "strides=(1, 1, 2))"),
    f"sparse.bcoo_dynamic_slice({B}, start_indices=(M[0, 0].astype(int) + 2, 1), "
    "slice_sizes=(2, 2))",
    J(f"sparse.sparsify(lambda x: x[1:, ::2])({B})"), f"{B}[1]", J(f"{BT}[1, :2]"), f"{BT}[:, 1]", f"{BT}.update_layout(n_batch=0)",
    J("sparse.bcoo_update_layout(sparse.BCOO.fromdense(Q, n_dense=1, nse=9), n_dense=0)"),
    f"sparse.bcoo_update_layout({BT}, n_batch=2, n_dense=1, on_inefficient=None)",
    f"sparse.bcoo_update_layout({B}, n_batch=1)",
    "sparse.bcoo_update_layout(sparse.BCOO.fromdense(T, n_batch=2, n_dense=1, nse=2), n_batch=0,"
    " n_dense=0)",
    J("sparse.bcoo_dot_general_sampled(M, W, sparse.BCOO.fromdense(L.T, nse=8).indices, "
      "dimension_numbers=(((1,), (0,)), ((), ())))"),
    "jax.grad(lambda w: sparse.bcoo_dot_general_sampled(M, w, sparse.BCOO.fromdense(L.T, "
    "nse=8).indices, dimension_numbers=(((1,), (0,)), ((), ()))).sum())(W)",
    # errors
    "sparse.BCOO.fromdense(M, n_batch=3)", f"{B} @ jnp.ones((5, 2))",
    f"sparse.bcoo_transpose({BT}, permutation=(2, 1, 0))",
    "sparse.random_bcoo(jax.random.key(0), (3, 4), nse=12)",
    f"sparse.bcoo_dot_general({B}, {B}, dimension_numbers=(((1,), (1,)), ((0,), (0,))))",
]
JITTED = {i for i, expr in enumerate(EXPRS) if expr in _JITTED}

SNIPPET = "from jax.experimental import sparse\n" + JAX_SNIPPET.replace(
    '"lax": lax}', '"lax": lax, "sparse": sparse}').replace(
    "for jit in (False, True)]",
    "for jit in ((False, True) if i in jitted else (False,))]").replace(
    "for expr in exprs]", "for i, expr in enumerate(exprs)]")


def run_laminax(expr: str, inputs: dict, jit: bool):
    import laminax as jax
    import laminax.numpy as jnp
    from laminax import lax
    from laminax.experimental import sparse

    base = {"jnp": jnp, "np": np, "jax": jax, "lax": lax, "sparse": sparse}
    try:
        if jit:
            out = jax.jit(lambda kw: eval(expr, {**base, **kw}))(inputs)
        else:
            out = eval(expr, {**base, **inputs})
        leaves = jax.tree_util.tree_leaves(out)
        return ("ok", [np.asarray(v) for v in leaves], [str(np.asarray(v).dtype) for v in leaves])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err)[:300])


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax(SNIPPET, exprs=EXPRS, inputs=INPUTS, jitted=sorted(JITTED))


@requires_jax
@pytest.mark.parametrize("index,jit", [(i, j) for i in range(len(EXPRS)) for j in (
    (False, True) if i in JITTED else (False,))], ids=lambda v: str(v))
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-5, atol=1e-5)


@requires_jax
def test_attributes_and_flags_match_jax():
    snippet = """
from jax.experimental import sparse
def info(m):
    return (type(m).__name__, m.shape, m.nse, m.n_batch, m.n_dense, m.indices_sorted,
            m.unique_indices, repr(m), str(m.dtype))
b = sparse.BCOO.fromdense(M)
bt = sparse.BCOO.fromdense(T, n_batch=1)
result = [info(x) for x in (b, bt, sparse.BCOO.fromdense(T, n_dense=1), b.T, -b, b * 2,
          sparse.sparsify(lambda x, y: x + y)(b, b), sparse.sparsify(lambda x: x + x)(b),
          b.sum_duplicates(), bt.transpose((0, 2, 1)), sparse.BCSR.fromdense(M),
          sparse.BCSR.fromdense(T, n_batch=1), sparse.eye(3), sparse.empty((2, 3)),
          sparse.random_bcoo(jax.random.key(0), (4, 5)), b @ b.T, b.sum(0),
          sparse.BCSR.fromdense(M).to_bcoo(), sparse.BCSR.from_bcoo(b))]
"""
    from laminax.experimental import sparse

    import laminax as jax

    def info(m):
        return (type(m).__name__, m.shape, m.nse, m.n_batch, m.n_dense, m.indices_sorted,
                m.unique_indices, repr(m), str(m.dtype))

    M, T = INPUTS["M"], INPUTS["T"]
    b = sparse.BCOO.fromdense(M)
    bt = sparse.BCOO.fromdense(T, n_batch=1)
    ours = [info(x) for x in (b, bt, sparse.BCOO.fromdense(T, n_dense=1), b.T, -b, b * 2,
            sparse.sparsify(lambda x, y: x + y)(b, b), sparse.sparsify(lambda x: x + x)(b),
            b.sum_duplicates(), bt.transpose((0, 2, 1)), sparse.BCSR.fromdense(M),
            sparse.BCSR.fromdense(T, n_batch=1), sparse.eye(3), sparse.empty((2, 3)),
            sparse.random_bcoo(jax.random.key(0), (4, 5)), b @ b.T, b.sum(0),
            sparse.BCSR.fromdense(M).to_bcoo(), sparse.BCSR.from_bcoo(b))]
    theirs = run_jax(snippet, M=M, T=T)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        if k == 15:  # sparse @ sparse: the product's nse is JAX's own padding bookkeeping
            o, t = o[:2] + o[3:7], tuple(t[:2]) + tuple(t[3:7])
        assert o == tuple(t), (k, o, t)


@requires_jax
def test_sparse_arguments_cross_jit_and_pytree_utilities():
    from laminax.experimental import sparse

    import laminax as jax

    M, W = INPUTS["M"], INPUTS["W"]
    b = sparse.BCOO.fromdense(M, nse=7)
    leaves, tree = jax.tree_util.tree_flatten(b)
    assert len(leaves) == 2 and leaves[0] is b.data and leaves[1] is b.indices
    again = jax.tree_util.tree_unflatten(tree, leaves)
    assert again.shape == b.shape and again.indices_sorted and again.unique_indices
    f = jax.jit(lambda m, w: (m @ w, m * 2, m.T))
    out, doubled, transposed = f(b, W)
    np.testing.assert_allclose(out, M @ W, rtol=1e-5, atol=1e-5)
    assert isinstance(doubled, sparse.BCOO) and doubled.shape == (3, 4)
    np.testing.assert_allclose(transposed.todense(), M.T)
    assert b.block_until_ready() is b
    csr = sparse.BCSR.fromdense(M)
    assert len(jax.tree_util.tree_leaves(csr)) == 3
    np.testing.assert_allclose(jax.jit(lambda c: c.todense())(csr), M)
    with pytest.raises(ValueError, match="nse must be specified"):
        jax.jit(lambda m: m.sum_duplicates())(b)


def test_against_scipy():
    from laminax.experimental import sparse

    rng = np.random.RandomState(1)
    for shape, density in (((6, 9), 0.3), ((1, 7), 0.9)):
        ref = scipy.sparse.random(*shape, density=density, format="coo", random_state=rng,
                                  dtype=np.float32)
        b = sparse.BCOO.from_scipy_sparse(ref)
        np.testing.assert_allclose(b.todense(), ref.toarray())
        dense = rng.randn(shape[1], 3).astype(np.float32)
        np.testing.assert_allclose(b @ dense, ref @ dense, rtol=1e-5, atol=1e-5)
        other = scipy.sparse.random(shape[1], 5, density=0.4, format="csr", random_state=rng,
                                    dtype=np.float32)
        product = b @ sparse.BCOO.from_scipy_sparse(other)
        np.testing.assert_allclose(product.todense(), (ref @ other).toarray(), rtol=1e-5,
                                   atol=1e-5)
        csr = sparse.BCSR.fromdense(ref.toarray())
        ref_csr = ref.tocsr()
        np.testing.assert_array_equal(csr.indptr, ref_csr.indptr)
        np.testing.assert_array_equal(csr.indices, ref_csr.indices)
        np.testing.assert_allclose(csr.data, ref_csr.data)
    # repeated coordinates add up as in SciPy's COO format
    rows, cols = np.array([0, 2, 0, 1, 2]), np.array([1, 0, 1, 1, 0])
    data = np.arange(1, 6, dtype=np.float32)
    ref = scipy.sparse.coo_matrix((data, (rows, cols)), shape=(3, 2))
    b = sparse.BCOO((data, np.stack([rows, cols], 1).astype(np.int32)), shape=(3, 2))
    merged = b.sum_duplicates()
    ref.sum_duplicates()
    assert merged.nse == ref.nnz
    np.testing.assert_allclose(merged.todense(), ref.toarray())
    np.testing.assert_allclose(b.todense(), ref.toarray())


# the unbatched formats: one program run by both libraries (M is a global of the snippet)
LEGACY = """
def run(jax, jnp, sparse):
    c = sparse.COO.fromdense(M, nse=6); r = sparse.CSR.fromdense(M, nse=6); k = sparse.CSC.fromdense(M, nse=6)
    outs = [(c.data, c.row, c.col, c._rows_sorted, c._cols_sorted, repr(c)),
            (c.T.row, c.T._rows_sorted, c.T._cols_sorted, repr(c.T), c.T.todense()),
            (r.data, r.indices, r.indptr, repr(r), r.todense()),
            (type(r.T).__name__, r.T.indptr, r.T.todense()),
            (k.data, k.indices, k.indptr, repr(k), k.todense(), k.T.todense()),
            (sparse.coo_matvec(c, np.ones(4, np.float32)), sparse.coo_matvec(c, np.arange(3, dtype=np.float32), transpose=True)),
            (sparse.csr_matmat(r, np.arange(8, dtype=np.float32).reshape(4, 2)), sparse.csr_matvec(r, np.arange(3, dtype=np.float32), transpose=True)),
            (c @ np.arange(4, dtype=np.float32), k @ np.arange(4, dtype=np.float32), r @ np.ones((4, 3), np.float32), k @ np.ones((4, 3), np.float32)),
            (sparse.eye(3, sparse_format='coo').row, sparse.coo_fromdense(M, nse=5).row, sparse.csr_fromdense(M, nse=5).indptr),
            (sparse.coo_todense(c), sparse.csr_todense(r)),
            (sparse.empty((2, 3), sparse_format='csr').indptr, sparse.eye(3, 4, k=1, sparse_format='csc').indptr, sparse.eye(3, 4, k=1, sparse_format='csc').todense()),
            (sparse.COO.fromdense(M).nse, str(sparse.COO.fromdense(M).dtype)),
            (jax.jit(lambda m: sparse.CSR.fromdense(m, nse=5))(M).indptr, jax.jit(lambda m, v: sparse.COO.fromdense(m, nse=5) @ v)(M, np.ones(4, np.float32))),
            (jax.grad(lambda d: (sparse.COO((d, c.row, c.col), shape=(3, 4)) @ np.arange(4, dtype=np.float32)).sum())(c.data),),
            (jax.tree_util.tree_leaves(r)[2],),
           ]
    return [[x if isinstance(x, (str, bool, int)) else np.asarray(x) for x in o] for o in outs]
"""


@requires_jax
def test_coo_csr_csc_match_jax():
    from laminax.experimental import sparse

    import laminax as jax
    import laminax.numpy as jnp

    M = INPUTS["M"]
    namespace = {"np": np, "M": M}
    exec(LEGACY, namespace)  # noqa: S102 (the same program JAX runs)
    ours = namespace["run"](jax, jnp, sparse)
    theirs = run_jax("from jax.experimental import sparse\n" + LEGACY
                     + "result = run(jax, jnp, sparse)", M=M)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        for a, b in zip(o, t, strict=True):
            if isinstance(a, np.ndarray):
                assert a.shape == b.shape and a.dtype == b.dtype, (k, a, b)
                np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=str(k))
            else:
                assert a == b, (k, a, b)
