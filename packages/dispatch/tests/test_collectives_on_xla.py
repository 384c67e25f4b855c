"""Collectives under jit on one device: what vmap leaves of a named reduction (positional axes)
and the identity psum over no axes compile to reductions; a named axis nobody bound is refused."""

import numpy as np
import pytest
from laminax_core import jacrev, lax, vmap
from laminax_dispatch import jit

F32 = np.float32
X = np.arange(6, dtype=F32).reshape(2, 3)


@pytest.mark.parametrize(
    "collective,reduce",
    [(lax.psum, np.sum), (lax.pmax, np.max), (lax.pmin, np.min)],
)
def test_vmapped_named_reduction_compiles_to_a_reduction(collective, reduce):
    f = jit(vmap(lambda v: collective(v, "i"), axis_name="i"))
    np.testing.assert_array_equal(f(X), np.broadcast_to(reduce(X, axis=0), X.shape))


def test_identity_psum_left_by_the_transpose_compiles():
    f = jit(jacrev(vmap(lambda v: lax.psum(v, "i"), axis_name="i")))
    np.testing.assert_array_equal(f(np.arange(2, dtype=F32)), np.ones((2, 2), F32))


def test_positional_psum_bound_directly_sums_those_axes():
    f = jit(lambda v: lax.psum_p.bind(v, axes=(1,), axis_index_groups=None)[0])
    np.testing.assert_array_equal(f(X), X.sum(axis=1))


def test_named_axis_that_nobody_bound_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        jit(lambda v: lax.psum(v, "i"))(X)
