"""Every lax primitive (core's `OP_CASES` table) runs on XLA eagerly and under `jit`, and agrees
with core's NumPy reference interpreter, in the table's dtypes and in bfloat16."""

import contextlib

import ml_dtypes
import numpy as np
import pytest
from jaxlib import _jax
from laminax_core import config
from laminax_core.internal import set_eager_impl
from laminax_core.testing import OP_CASES, random_args
from laminax_dispatch import jit
from laminax_pytree import tree_leaves

CASES = [(case, np.dtype(dtype)) for case in OP_CASES for dtype in case.dtypes]
IDS = [f"{case.name}-{dtype.name}-{i}" for i, (case, dtype) in enumerate(CASES)]

# Float32 rows also run in bfloat16, compared with the float32 reference at bfloat16 precision.
# Rows whose meaning depends on the bit width are left out.
_NOT_IN_BF16 = {
    "bitcast_convert_type",
    "reduce_precision",
    "nextafter",
    "complex",
    "conj",
    "real",
    "imag",
    "polygamma",
    "zeta",
    "digamma",
    "lgamma",
    "erf_inv",
    "cumlogsumexp",
    "sort",
    "top_k",
    "argmax",
    "argmin",
    "round",
    "floor",
    "ceil",
    "rem",
    "sign",
    "integer_pow",
    "pow",
    "reduce",  # the reduce row passes a float32 init value
    "cholesky",
    "triangular_solve",
    "lu",
    "qr",
    "eigh",
    "svd",  # no bf16 LAPACK
    "bessel_i0e",
    "bessel_i1e",
    "igamma",
    "igammac",
    "igamma_grad_a",
    "regularized_incomplete_beta",
}
# Primitives without a StableHLO lowering yet: under jit they raise the missing-lowering error;
# eagerly they run on the NumPy reference.
UNLOWERED: set[str] = set()
BF16_CASES = [
    (case, np.dtype(ml_dtypes.bfloat16))
    for case, dtype in CASES
    if dtype == np.float32 and case.name not in _NOT_IN_BF16
]


@contextlib.contextmanager
def numpy_reference():
    """Runs primitives on core's NumPy reference interpreter instead of XLA."""
    previous = set_eager_impl(None)
    try:
        yield
    finally:
        set_eager_impl(previous)


def _values(out) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in tree_leaves(out)]


def _assert_close(actual, expected, tol, context):
    for a, e in zip(_values(actual), _values(expected), strict=True):
        assert a.shape == e.shape, context
        if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
            np.testing.assert_array_equal(a, e, err_msg=context)
        else:
            np.testing.assert_allclose(
                a.astype(np.complex128),
                e.astype(np.complex128),
                rtol=tol,
                atol=tol,
                err_msg=context,
            )


def _tolerance(case, dtype) -> float:
    # XLA's transcendental functions differ from NumPy's in the last bits
    return max(case.tol, 2e-5) if dtype != ml_dtypes.bfloat16 else 3e-2


def _reference(case, args):
    with numpy_reference():
        return case.fun(*args)


@pytest.mark.parametrize("case,dtype", CASES, ids=IDS)
def test_eager_on_xla_matches_reference(case, dtype):
    args = random_args(case, dtype)
    out = case.fun(*args)
    assert all(isinstance(x, _jax.ArrayImpl) for x in tree_leaves(out))
    _assert_close(out, _reference(case, args), _tolerance(case, dtype), case.name)


@pytest.mark.parametrize("case,dtype", CASES, ids=IDS)
def test_jit_matches_reference(case, dtype):
    args = random_args(case, dtype)
    if case.name in UNLOWERED:
        with pytest.raises(NotImplementedError, match=f"primitive '{case.name}' has no StableHLO"):
            jit(case.fun)(*args)
        return
    out = jit(case.fun)(*args)
    _assert_close(out, _reference(case, args), _tolerance(case, dtype), case.name)


@pytest.mark.parametrize("case,dtype", CASES, ids=IDS)
def test_jit_and_eager_agree_in_dtype_and_weak_type(case, dtype):
    if case.name in UNLOWERED:
        pytest.skip(f"{case.name} has no lowering (see UNLOWERED)")
    args = random_args(case, dtype)
    eager, jitted = tree_leaves(case.fun(*args)), tree_leaves(jit(case.fun)(*args))
    assert [(x.dtype, x.weak_type) for x in eager] == [(x.dtype, x.weak_type) for x in jitted]


@pytest.mark.parametrize(
    "case,dtype", BF16_CASES, ids=[f"{c.name}-bf16-{i}" for i, (c, _) in enumerate(BF16_CASES)]
)
def test_bfloat16_on_xla_matches_float32_reference(case, dtype):
    args32 = random_args(case, np.float32)
    args = [a.astype(dtype) if a.dtype == np.float32 else a for a in args32]
    expected = _reference(case, [a.astype(np.float32) if a.dtype == dtype else a for a in args])
    for out in (case.fun(*args), jit(case.fun)(*args)):
        _assert_close(out, expected, _tolerance(case, dtype), case.name)


def test_x64_cases_run_in_float64():
    case = next(c for c in OP_CASES if c.name == "sin")
    with config.enable_x64(True):
        args = random_args(case, np.float64)
        out = jit(case.fun)(*args)
        assert out.dtype == np.float64
        _assert_close(out, _reference(case, args), 1e-12, "sin f64")
