"""Issue 12 checks that need no runtime (core's reference interpreter): shapes whose element
count overflows int64 (JAX aborts inside jaxlib; core refuses them first), lax.cond's
type-mismatch error listing true_fun's types first, and Python ints beyond the weak int dtype
with x64 on and off."""

import itertools

import numpy as np
import pytest
from laminax_core import config, lax
from laminax_core import numpy as jnp
from laminax_core.internal import ShapedArray

HUGE_SHAPES = [
    (2**31, 2**31, 4), (2**62, 4), (2**21, 2**21, 2**21), (2**32, 2**32), (3, 2**62),
    (2**63 - 1, 2),
]  # fmt: skip


@pytest.mark.parametrize("shape", HUGE_SHAPES)
def test_shapes_beyond_int64_elements_are_a_value_error_before_the_runtime(shape):
    for make in (lambda: ShapedArray(shape, np.float32), lambda: jnp.zeros(shape),
                 lambda: jnp.ones(shape, np.int8), lambda: jnp.broadcast_to(1.0, shape)):
        with pytest.raises(ValueError, match="more than an array can hold"):
            make()


def test_large_but_representable_shapes_are_accepted_abstractly():
    assert ShapedArray((2**31, 2**31), np.float32).size == 2**62
    assert ShapedArray((2**62, 1), np.float32).shape == (2**62, 1)
    assert ShapedArray([2**40, 0, 2**40], np.float32).size == 0  # empty: nothing to count


@pytest.mark.parametrize("true_t, false_t", itertools.permutations(
    [np.float32, np.int32, np.float16, np.bool_], 2))
def test_cond_type_mismatch_lists_true_fun_first(true_t, false_t):
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda: np.zeros((), true_t), lambda: np.zeros((), false_t))
    message = str(info.value)
    true_name = ShapedArray((), true_t).str_short()
    false_name = ShapedArray((), false_t).str_short()
    assert message.index(true_name) < message.index(false_name), message


@pytest.mark.parametrize("x64", [False, True])
def test_python_ints_beyond_the_weak_int_dtype_overflow_in_either_mode(x64):
    limit = 2**63 if x64 else 2**31
    with config.enable_x64(x64):
        x = np.arange(3, dtype=np.int64 if x64 else np.int32)
        for value in (limit, -limit - 1, limit * 4, -(limit * 4)):
            for op in (lambda v: jnp.add(x, v), lambda v: jnp.less(x, v),
                       lambda v: jnp.maximum(x, v), lambda v: lax.add(x, v),
                       lambda v: jnp.asarray(v), lambda v: jnp.where(x > 0, x, v)):
                with pytest.raises(OverflowError, match="too large to convert"):
                    op(value)
        for value in (limit - 1, -limit):  # the boundaries themselves fit
            assert jnp.add(x, value).dtype == x.dtype
