"""Table-driven tests over every lax primitive (laminax_core.testing.OP_CASES): reference vs
NumPy, abstract eval vs the reference's output, jvp vs finite differences (orders 1 and 2),
transpose through <A x, y> = <x, A^T y>, and batching vs a Python loop."""

import numpy as np
import pytest
from laminax_core import eval_shape, internal, jvp, lax, vjp, vmap
from laminax_core.testing import OP_CASES, check_grads, random_args

CASES = [(case, dtype) for case in OP_CASES for dtype in case.dtypes]
IDS = [f"{case.name}-{np.dtype(dtype).name}-{i}" for i, (case, dtype) in enumerate(CASES)]


def _float_positions(case, dtype):
    return [
        i
        for i in range(len(case.shapes))
        if i not in case.int_args and np.issubdtype(np.dtype(dtype), np.floating)
    ]


def _as_function_of(case, args, positions):
    def fun(*dyn):
        full = list(args)
        for i, value in zip(positions, dyn, strict=True):
            full[i] = value
        return case.fun(*full)

    return fun


@pytest.mark.parametrize("case,dtype", CASES, ids=IDS)
def test_reference_matches_numpy(case, dtype):
    args = random_args(case, dtype)
    expected = case.reference(*args)
    actual = case.fun(*args)
    np.testing.assert_allclose(
        np.asarray(actual, np.float64),
        np.asarray(expected, np.float64),
        rtol=case.tol,
        atol=case.tol,
    )


@pytest.mark.parametrize("case,dtype", CASES, ids=IDS)
def test_abstract_eval_matches_reference_output(case, dtype):
    args = random_args(case, dtype)
    shape = eval_shape(case.fun, *args)
    actual = np.asarray(case.fun(*args))
    assert shape.shape == actual.shape
    assert shape.dtype == actual.dtype


DIFF_CASES = [(c, d) for c, d in CASES if c.differentiable and np.issubdtype(d, np.floating)]


@pytest.mark.parametrize("case,dtype", DIFF_CASES, ids=[IDS[CASES.index(cd)] for cd in DIFF_CASES])
def test_derivatives_match_finite_differences(case, dtype):
    args = random_args(case, dtype, seed=1)
    positions = _float_positions(case, dtype)
    fun = _as_function_of(case, args, positions)
    check_grads(
        fun,
        [args[i] for i in positions],
        order=2,
        atol=case.grad_tol,
        rtol=case.grad_tol,
        eps=case.grad_eps,
    )


LINEAR_CASES = [(c, d, i) for c, d in CASES if np.issubdtype(d, np.floating) for i in c.linear_args]


@pytest.mark.parametrize(
    "case,dtype,position",
    LINEAR_CASES,
    ids=[f"{c.name}-{i}-{n}" for n, (c, d, i) in enumerate(LINEAR_CASES)],
)
def test_transpose_satisfies_dot_product_identity(case, dtype, position):
    args = random_args(case, dtype, seed=2)
    linear_fun = _as_function_of(case, args, [position])
    rng = np.random.RandomState(3)
    x = rng.standard_normal(np.shape(args[position])).astype(dtype)
    # the function is affine in the argument; its linear part is A x = f(x) - f(0)
    a_x = np.asarray(linear_fun(x), np.float64) - np.asarray(
        linear_fun(np.zeros_like(x)), np.float64
    )
    y = rng.standard_normal(a_x.shape).astype(np.asarray(linear_fun(x)).dtype)
    _, pullback = vjp(linear_fun, x)
    (at_y,) = pullback(y)
    lhs = np.sum(a_x * y)
    rhs = np.sum(np.asarray(x, np.float64) * np.asarray(at_y, np.float64))
    np.testing.assert_allclose(lhs, rhs, rtol=max(case.tol, 1e-4) * 10, atol=1e-3)


def _batch_specs(case):
    n = len(case.shapes)
    specs = [(0,) * n]
    if n > 1:
        specs.append((0,) + (None,) * (n - 1))
        specs.append((None,) * (n - 1) + (0,))
    if case.shapes[0]:
        specs.append((-1,) + (0,) * (n - 1))
    return specs


BATCH_CASES = [(c, d, s) for c, d in CASES for s in _batch_specs(c)]


@pytest.mark.parametrize(
    "case,dtype,in_axes",
    BATCH_CASES,
    ids=[f"{c.name}-{s}-{n}" for n, (c, d, s) in enumerate(BATCH_CASES)],
)
def test_batching_matches_python_loop(case, dtype, in_axes):
    size = 3
    base = random_args(case, dtype, seed=4)
    batched = random_args(case, dtype, seed=5, batch=size)
    args = []
    for b, x, axis in zip(base, batched, in_axes, strict=True):
        args.append(b if axis is None else np.moveaxis(x, 0, axis))
    actual = vmap(case.fun, in_axes=in_axes)(*args)
    rows = []
    for k in range(size):
        row = [
            a if axis is None else np.take(a, k, axis=axis)
            for a, axis in zip(args, in_axes, strict=True)
        ]
        rows.append(np.asarray(case.fun(*row)))
    np.testing.assert_allclose(
        np.asarray(actual, np.float64),
        np.stack(rows).astype(np.float64),
        rtol=case.tol,
        atol=case.tol,
    )


def test_every_primitive_has_a_row():
    # named-axis collectives run under vmap only (test_vmap.py, test_collectives_exchange.py)
    collectives = {"psum", "pmax", "pmin", "all_gather", "axis_index", "all_to_all",
                   "pbroadcast", "ppermute", "reduce_scatter"}
    # shard_map's varying-manual-axes casts (tests/test_shard_map_vma_vs_jax.py)
    collectives |= {"pvary", "psum_invariant"}
    # XLA:CPU cannot run it (tests/test_toplevel_names2_vs_jax.py: jaxprs, lowering, errors)
    collectives |= {"ragged_all_to_all"}
    # dimension_value has a value only inside a program exported with symbolic shapes
    # (tests/test_export_shape_poly_vs_jax.py: mean, dim * array, arange(b) ...)
    # platform_index too, and its value depends on the platforms lowered for
    # (tests/test_export_multiplatform_vs_jax.py)
    covered = {case.name for case in OP_CASES} | collectives | {"iota", "dimension_value",
                                                                "platform_index"}
    # XLA's own random bits have no NumPy reference (tests/test_lax_rng_ragged_vs_jax.py);
    # tokens are no arrays (tests/test_lax_tokens_vs_jax.py)
    covered |= {"rng_uniform", "rng_bit_generator", "create_token", "after_all"}
    # higher-order primitives have their own tests (test_control_flow.py,
    # tests/test_lax_composite_vs_jax.py)
    higher_order = {"cond", "scan", "while", "composite"}
    lax_primitives = [getattr(lax, n) for n in lax.__all__ if n.endswith("_p")]
    lax_primitives = [p for p in lax_primitives if p.name not in higher_order]
    assert set(lax_primitives) <= set(internal.all_primitives())
    missing = [p.name for p in lax_primitives if p.name not in covered]
    assert not missing, f"primitives without an OP_CASES row: {missing}"


def test_iota_values_and_dtype():
    np.testing.assert_array_equal(lax.iota(np.int32, 4), np.arange(4, dtype=np.int32))
    assert lax.iota(np.float32, 3).dtype == np.float32


def test_jvp_of_piecewise_constant_primitives_is_zero():
    x = np.array([1.5, -2.0], np.float32)
    for fun in (
        lax.sign,
        lax.stop_gradient,
        lambda v: lax.convert_element_type(lax.convert_element_type(v, np.int32), np.float32),
    ):
        _, t = jvp(fun, (x,), (np.ones_like(x),))
        np.testing.assert_array_equal(t, np.zeros_like(x))


@pytest.mark.parametrize(
    "fun,match",
    [
        (lambda: lax.sin(np.arange(3, dtype=np.int32)), "sin does not accept dtype int32"),
        (
            lambda: lax.add(np.ones(3, np.float32), np.ones(3, np.int32)),
            "lax.add requires arguments to have the same dtypes, got float32, int32",
        ),
        (
            lambda: lax.add(np.ones(3, np.float32), np.ones(2, np.float32)),
            "add got incompatible shapes for broadcasting",
        ),
        (
            lambda: lax.add(np.ones(3, np.float32), np.ones((1, 3), np.float32)),
            "arrays must have the same number of dimensions",
        ),
        (lambda: lax.reshape(np.ones(6, np.float32), (4,)), "cannot reshape"),
        (
            lambda: lax.dot_general(
                np.ones((2, 3), np.float32), np.ones((4, 2), np.float32), (((1,), (0,)), ((), ()))
            ),
            "contracting dimensions",
        ),
        (lambda: lax.broadcast_in_dim(np.ones(3, np.float32), (2, 4), (1,)), "cannot be broadcast"),
        (
            lambda: lax.concatenate([np.ones((2, 3), np.float32), np.ones((2, 3), np.int32)], 0),
            "must agree in dtype",
        ),
        (lambda: lax.transpose(np.ones((2, 3), np.float32), (0, 0)), "not a permutation"),
    ],
)
def test_shape_and_dtype_errors(fun, match):
    with pytest.raises(TypeError, match=match):
        fun()


def test_squeezing_a_dimension_that_is_not_one_is_a_value_error():
    with pytest.raises(ValueError, match="not of size 1"):  # JAX's type
        lax.squeeze(np.ones((2, 3), np.float32), (0,))
