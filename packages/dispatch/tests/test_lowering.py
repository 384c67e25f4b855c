"""Lowering: every core primitive has a rule, the rule table API, constants, locations, and
module structure."""

import os

import laminax_core
import laminax_core.nn  # noqa: F401  (registers its primitives, if any)
import laminax_core.random  # noqa: F401
import laminax_core.scipy  # noqa: F401
import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import (
    Primitive,
    batch_rules,
    custom_lin_p,
    describe,
    jvp_rules,
    reference_rules,
)
from laminax_dispatch import jit, lowering_for, register_lowering
from laminax_dispatch._lowering import lowerings
from laminax_dispatch._lowering._core import elementwise, registered_at

F32 = np.float32

# Primitives that never reach the compiler in this layer, or are not lowered yet:
# named-axis collectives bind only inside vmap, which batches them away (their SPMD lowering
# belongs to laminax_pjit); custom_lin is transposed away before lowering, as in JAX; the
# reference primitives are discharged (their values threaded) before lowering.
NOT_LOWERED = {
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "swap",
    "all_gather",
    "all_to_all",
    "axis_index",
    "custom_lin",
    "pbroadcast",
    "ppermute",
    "ragged_all_to_all",
    "reduce_scatter",
}
_DISPATCH_SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(lowering_for.__code__.co_filename)))


def _lowered_here(primitive) -> bool:
    # a rule laminax_pjit registered (the SPMD collectives) does not count for this layer
    return primitive in lowerings and registered_at.get(primitive, "").startswith(_DISPATCH_SOURCE)


_CORE_SOURCE = os.path.dirname(os.path.abspath(laminax_core.__file__)) + os.sep


def _defined_in_core(primitive) -> bool:
    # Tests define primitives of their own (and may run in this process first): only the ones
    # whose rules core's own modules registered count.
    return any(where.startswith(_CORE_SOURCE) for where in primitive.registered_at.values())


def _core_primitives():
    return {
        p
        for table in (reference_rules, jvp_rules, batch_rules)
        for p in table
        if isinstance(p, Primitive) and _defined_in_core(p)
    }


def test_every_core_primitive_has_a_lowering():
    missing = sorted(
        p.name for p in _core_primitives() if p not in lowerings and p.name not in NOT_LOWERED
    )
    assert missing == [], f"primitives without a StableHLO lowering: {missing}"


def test_not_lowered_list_is_current():
    lowered = sorted(p.name for p in _core_primitives() if _lowered_here(p) and p.name in NOT_LOWERED)
    assert lowered == [], f"remove from NOT_LOWERED: {lowered}"
    assert custom_lin_p not in lowerings


def test_missing_lowering_error_names_the_primitive_and_the_fix():
    my_op_p = Primitive("my_op")
    my_op_p.def_abstract_eval(lambda aval: aval)
    with pytest.raises(NotImplementedError) as info:
        jit(lambda x: my_op_p.bind(x)).lower(F32(1))
    assert str(info.value) == (
        "jit: primitive 'my_op' has no StableHLO lowering. Register one with "
        "laminax_dispatch.register_lowering(my_op_p, rule)."
    )


def test_register_lowering_and_lowering_for_make_a_primitive_jittable():
    twice_p = Primitive("twice")
    twice_p.def_abstract_eval(lambda aval: aval)
    register_lowering(twice_p, lambda ctx, x: hlo.add(x, x))
    thrice_p = Primitive("thrice")
    thrice_p.def_abstract_eval(lambda aval: aval)

    @lowering_for(thrice_p)
    def _thrice_lower(ctx, x):
        return hlo.add(hlo.add(x, x), x)

    out = jit(lambda x: thrice_p.bind(twice_p.bind(x)))(np.arange(3, dtype=F32))
    np.testing.assert_array_equal(out, [0, 6, 12])
    assert "test_lowering.py" in describe(twice_p).splitlines()[-1]


def test_describe_lists_where_the_lowering_is_registered():
    assert "_lowering/elementwise.py" in describe(lax.sin_p).splitlines()[-1]


def test_elementwise_rule_broadcasts_scalar_operands():
    scaled_p = Primitive("test_scaled_add")
    scaled_p.def_abstract_eval(lambda x, y: x)
    register_lowering(scaled_p, elementwise(hlo.add))
    out = jit(lambda x: scaled_p.bind(x, np.float32(1)))(np.zeros(3, F32))
    np.testing.assert_array_equal(out, [1, 1, 1])


@pytest.mark.parametrize(
    "value",
    [
        np.array([True, False, True, True, False, False, False, False, True]),
        np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16),
        np.array([1, 2**31 + 5], np.uint32),
        np.array([1 + 2j, -3j], np.complex64),
        np.broadcast_to(np.float32(7), (2, 3)),
        np.arange(3, dtype=np.int32)[None, :],  # a zero stride on a length-1 axis: not a splat
    ],
    ids=["bool", "bfloat16", "uint32", "complex64", "splat", "unit-axis-view"],
)
def test_embedded_constants_round_trip(value):
    out = jit(lambda: value)()
    np.testing.assert_array_equal(np.asarray(out), value)


def test_locations_carry_the_name_stack_and_the_source_line():
    def located(x):
        return lax.sin(x)  # this line

    line = located.__code__.co_firstlineno + 1
    text = jit(located).lower(F32(1)).as_text(debug_info=True)
    assert '"jit(located)/sin"' in text
    assert f'test_lowering.py":{line}' in text


def test_module_is_named_like_jax_and_main_is_public():
    text = jit(lambda x: x + 1.0).lower(F32(1)).as_text()
    assert text.startswith(
        "module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, "
        "mhlo.num_replicas = 1 : i32}"
    )
    assert (
        "func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "
        '"result"})' in text
    )


def test_same_ops_as_jax_for_logistic_and_integer_pow():
    text = jit(lambda x: (lax.logistic(x), lax.integer_pow(x, 3))).lower(np.ones(3, F32)).as_text()
    ops = [line.split("=")[1].split()[0] for line in text.splitlines() if " = stablehlo." in line]
    assert ops == [
        "stablehlo.constant",
        "stablehlo.broadcast_in_dim",
        "stablehlo.negate",
        "stablehlo.exponential",
        "stablehlo.add",
        "stablehlo.constant",
        "stablehlo.broadcast_in_dim",
        "stablehlo.divide",
        "stablehlo.multiply",
        "stablehlo.multiply",
    ]
