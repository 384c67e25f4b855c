"""PartitionSpec: interning, tuple behaviour, reductions, errors."""

import pickle

import pytest
from laminax_pjit import P, PartitionSpec


def test_specs_are_interned_and_never_equal_tuples():
    assert P("x", None) is P("x", None)
    assert P(["a", "b"]) is P(("a", "b"))
    assert P("x") != ("x",)
    assert PartitionSpec is P


def test_single_axis_tuples_are_canonicalized():
    assert P(("a",)).partitions == ("a",)
    assert P(["a"], None).partitions == ("a", None)


def test_tuple_protocol():
    spec = P("a", ("b", "c"), None)
    assert len(spec) == 3 and list(spec) == ["a", ("b", "c"), None] and spec[1] == ("b", "c")
    assert P("a") + ("b",) is P("a", "b")
    assert ("b",) + P("a") is P("b", "a")
    assert P("a") + P("b", unreduced={"c"}) is P("a", "b", unreduced={"c"})
    assert spec.index(("b", "c")) == 1 and P("a", "a").count("a") == 2


def test_repr_lists_reductions():
    assert repr(P()) == "P()"
    assert repr(P("x")) == "P('x',)"
    assert repr(P("x", unreduced={"y"})) == "P('x', unreduced={'y'})"
    assert repr(P(reduced={"y"})) == "P(reduced={'y'})"
    assert repr(P(None, P.UNCONSTRAINED)) == "P(None, UNCONSTRAINED)"


def test_pickle_round_trips_to_the_same_object():
    spec = P("x", P.UNCONSTRAINED, unreduced={"z"})
    assert pickle.loads(pickle.dumps(spec)) is spec


def test_normalized_spec_pads_and_drops_unconstrained():
    assert P(P.UNCONSTRAINED, "x")._normalized_spec_for_aval(3) is P(None, "x", None)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: P("x", unreduced={"x"}), ValueError, "unreduced"),
        (lambda: P(unreduced={"x"}, reduced={"x"}), ValueError, "overlap"),
        (lambda: P(unreduced=["x"]), TypeError, "set or frozenset"),
        (lambda: P(reduced={None}), ValueError, "None"),
        (lambda: P("x", unreduced={"y"})[0], ValueError, "spec.partitions"),
        (lambda: list(P("x", reduced={"y"})), ValueError, "spec.partitions"),
        (lambda: P("x")._check_compatible_wrt_shape(()), ValueError, "P\\(\\)"),
    ],
)
def test_bad_specs_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_specs_are_immutable_and_final():
    with pytest.raises(AttributeError):
        P("x")._partitions = ()
    with pytest.raises(TypeError):

        class Sub(PartitionSpec):
            pass
