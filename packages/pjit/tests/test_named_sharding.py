"""NamedSharding: the Sharding protocol, checked against NumPy slicing of real device_puts."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laminax_dispatch import Sharding, device_put, devices, jit
from laminax_pjit import AbstractMesh, Mesh, NamedSharding, P, make_mesh
from laminax_pjit._named_sharding import DuplicateSpecError, IndivisibleError

MESH = Mesh(np.array(devices()[:8]).reshape(2, 2, 2), ("a", "b", "c"))


@st.composite
def specs(draw, ndim=2):
    axes = list(draw(st.permutations(MESH.axis_names)))
    cut = sorted(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    groups = [axes[lo:hi] for lo, hi in zip([0, *cut], cut, strict=False)]
    return P(*[None if not g else g[0] if len(g) == 1 else tuple(g) for g in groups])


@settings(max_examples=40, deadline=None)
@given(spec=specs())
def test_shards_hold_the_slices_devices_indices_map_names(spec):
    sharding = NamedSharding(MESH, spec)
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    y = device_put(x, sharding)
    indices = sharding.devices_indices_map(x.shape)
    assert set(indices) == set(devices()[:8])
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), x[indices[shard.device]])
        assert shard.data.shape == sharding.shard_shape(x.shape)
    np.testing.assert_array_equal(np.asarray(y), x)
    assert y.sharding == sharding


@settings(max_examples=40, deadline=None)
@given(spec=specs())
def test_hlo_sharding_round_trips_through_the_parser(spec):
    sharding = NamedSharding(MESH, spec)
    hlo = sharding._to_xla_hlo_sharding(2)
    back = sharding._from_xla_hlo_sharding(hlo)
    assert back._to_xla_hlo_sharding(2) == hlo
    assert back.is_equivalent_to(sharding, 2)


def test_protocol_and_identity():
    s = NamedSharding(MESH, P("a", ("b", "c")))
    assert isinstance(s, Sharding) and s.num_devices == 8 and s.memory_kind == "device"
    assert s == NamedSharding(MESH, P("a", ("b", "c"))) and hash(s) == hash(NamedSharding(MESH, P("a", ("b", "c"))))
    assert s != NamedSharding(MESH, P("a", ("c", "b")))
    assert s.device_set == set(devices()[:8]) and s.is_fully_addressable
    assert not s.is_fully_replicated and NamedSharding(MESH, P()).is_fully_replicated
    assert s.replicated_axes == frozenset() and NamedSharding(MESH, P("a")).replicated_axes == {"b", "c"}
    assert s.with_memory_kind("pinned_host").memory_kind == "pinned_host"
    sdy = s._to_sdy_sharding(3)
    assert [d.axes for d in sdy.dims] == [("a",), ("b", "c"), ()]


def test_outputs_of_jit_report_named_shardings():
    mesh = Mesh(np.array(devices()[:8]).reshape(4, 2), ("x", "y"))
    x = device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    assert jit(lambda a: a * 2)(x).sharding == NamedSharding(mesh, P("x", "y"))
    assert jit(lambda a: a.T)(x).sharding == NamedSharding(mesh, P("y", "x"))
    assert jit(lambda a: a.sum())(x).sharding == NamedSharding(mesh, P())


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: NamedSharding(MESH, P("z")), ValueError, "not found in mesh"),
        (lambda: NamedSharding(MESH, P("a", "a")), DuplicateSpecError, "duplicate entries"),
        (lambda: NamedSharding(MESH, ("a",)), TypeError, "PartitionSpec"),
        (lambda: NamedSharding(MESH, P("a")).shard_shape((3,)), IndivisibleError, "partitioned 2 times"),
        (lambda: NamedSharding(MESH, P("a", "b")).shard_shape((4,)), ValueError, "rank at least 2"),
        (lambda: NamedSharding(make_mesh((8,), ("x",)), P(P.UNCONSTRAINED)), ValueError, "UNCONSTRAINED"),
        (lambda: NamedSharding(MESH, P(unreduced={"a"})), ValueError, "Explicit"),
        (lambda: NamedSharding(AbstractMesh((8,), ("x",)), P("x")).device_set, ValueError, "AbstractMesh"),
        (lambda: NamedSharding(MESH, P("a")).with_memory_kind("bogus"), ValueError, "bogus"),
    ],
)
def test_bad_shardings_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()
