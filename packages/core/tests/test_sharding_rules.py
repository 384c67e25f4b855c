"""Typed shardings in core's avals, through the aval-sharding protocol alone (core cannot import
pjit, so a small stand-in sharding plays NamedSharding's part). The full behaviour against real
JAX is in the root tests/test_explicit_sharding_vs_jax.py."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr
from laminax_core import ShapeDtypeStruct
from laminax_core.internal import ShapedArray, ShardingTypeError


class FakeSharding:
    """Per-dimension mesh axis names on a mesh of the given axis sizes (hashable by value)."""

    def __init__(self, entries, sizes=(("x", 2), ("y", 4))):
        self.aval_partitions = tuple(entries)
        self.aval_mesh = tuple(sizes)
        self.aval_axis_sizes = dict(sizes)

    def with_aval_partitions(self, entries):
        return FakeSharding(entries, self.aval_mesh)

    def as_aval_sharding(self, ndim):
        return self

    def __eq__(self, other):
        return isinstance(other, FakeSharding) and (self.aval_partitions, self.aval_mesh) == (
            other.aval_partitions,
            other.aval_mesh,
        )

    def __hash__(self):
        return hash((self.aval_partitions, self.aval_mesh))


def typed_aval(shape, *entries, dtype=np.float32):
    return ShapedArray(shape, dtype, sharding=FakeSharding(entries))


def typed(shape, *entries, dtype=np.float32):
    """A stand-in argument whose type carries the sharding."""
    return ShapeDtypeStruct(shape, dtype, sharding=FakeSharding(entries))


def test_default_is_untyped_and_prints_unchanged():
    a = ShapedArray((8, 4), np.float32)
    assert a.sharding is None and a.str_short() == "f32[8,4]"
    assert a == ShapedArray((8, 4), np.float32) and hash(a) == hash(ShapedArray((8, 4), np.float32))


def test_typed_aval_prints_like_jax_and_compares_by_sharding():
    a = typed_aval((8, 4, 2), "x", None, ("x", "y"))
    assert a.str_short() == "f32[8@x,4,2@(x,y)]"
    assert repr(a) == "ShapedArray(float32[8@x,4,2@(x,y)])"
    assert a != ShapedArray((8, 4, 2), np.float32)
    assert a.update(dtype=np.int32).sharding == a.sharding  # same shape: kept
    assert a.update(shape=(64,)).sharding is None  # new shape: entries no longer apply


def test_sharding_length_must_match_rank():
    with pytest.raises(ValueError, match="ndim"):
        typed_aval((8, 4), "x")


def jaxpr_of(f, *avals):
    return str(make_jaxpr(f)(*avals))


def test_rules_through_make_jaxpr():
    x, y = typed((8, 4), "x", None), typed((4, 16), None, "y")
    assert "c:f32[8@x,16@y] = dot_general" in jaxpr_of(lambda a, b: a @ b, x, y)
    text = jaxpr_of(lambda a: (a * 2, a.sum(0), a.sum(1), a.T, a.reshape(2, 4, 4)), x)
    for piece in ("b:f32[8@x,4] = mul", "c:f32[4] = reduce_sum", "d:f32[8@x] = reduce_sum",
                  "e:f32[4,8@x] = transpose", "f:f32[2@x,4,4] = reshape"):
        assert piece in text


def test_reshape_splits_and_merges_mesh_axes():
    x = typed((8, 16), ("x", "y"), None)
    out = make_jaxpr(lambda a: (a.reshape(2, 4, 16), a.reshape(128), a.reshape(8, 16, 1)))(x)
    assert [v.aval.str_short() for v in out.jaxpr.outvars] == [
        "f32[2@x,4@y,16]", "f32[128@(x,y)]", "f32[8@(x,y),16,1]"
    ]


@pytest.mark.parametrize(
    "f, avals",
    [
        (lambda a, b: a + b, (typed((8, 4), "x", None), typed((8, 4), None, "x"))),
        (lambda a, b: a + b, (typed((8, 4), "x", None), typed((8, 4), "y", None))),
        (lambda a, b: a @ b, (typed((8, 4), None, "x"), typed((4, 8), "x", None))),
        (lambda a, b: a @ b, (typed((8, 4), "x", None), typed((4, 8), None, "x"))),
        (lambda a: a.reshape(16, 2), (typed((8, 4), None, "x"),)),
        (  # batch dimensions split differently
            lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
            (typed((2, 4, 4), "x", None, None), typed((2, 4, 4), "y", None, None)),
        ),
    ],
)
def test_conflicting_shardings_raise_sharding_type_error(f, avals):
    with pytest.raises(ShardingTypeError):
        make_jaxpr(f)(*avals)


def test_different_meshes_raise():
    a = typed((8, 4), "x", None)
    b = ShapeDtypeStruct((8, 4), np.float32, sharding=FakeSharding(("x", None), (("x", 4),)))
    with pytest.raises(ShardingTypeError, match="Mesh"):
        make_jaxpr(lambda p, q: p * q)(a, b)
