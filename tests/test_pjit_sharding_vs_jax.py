"""laminax_pjit's meshes, PartitionSpecs and NamedShardings against real JAX 0.10.2 on 8 CPU
devices: the same snippet runs under both, with the names bound to each library."""

import warnings

import laminax_dispatch as ld
import laminax_pjit as lp
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

# The snippets see: Mesh, NamedSharding, P, AbstractMesh, AxisType, make_mesh, devices,
# device_put, jit, mesh_utils, np; they assign `result` (plain data).
JAX_PRELUDE = (
    "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AbstractMesh, AxisType\n"
    "from jax.experimental import mesh_utils\n"
    "make_mesh, devices, device_put, jit = jax.make_mesh, jax.devices, jax.device_put, jax.jit\n"
)


def run_both(source: str):
    """(laminax's result, JAX's result) of `source`; an exception is (type name, message)."""
    expected = _jax_outcome(source)
    scope = {
        "Mesh": lp.Mesh,
        "NamedSharding": lp.NamedSharding,
        "P": lp.P,
        "AbstractMesh": lp.AbstractMesh,
        "AxisType": lp.AxisType,
        "make_mesh": lp.make_mesh,
        "mesh_utils": lp.mesh_utils,
        "devices": ld.devices,
        "device_put": ld.device_put,
        "jit": ld.jit,
        "np": np,
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            exec(source, scope)
        actual = ("ok", scope["result"])
    except Exception as err:  # noqa: BLE001 - compared with JAX's exception below
        actual = ("error", type(err).__name__)
    return actual, expected


def _jax_outcome(source: str):
    try:
        return ("ok", run_jax(JAX_PRELUDE + source, devices=8))
    except JaxReferenceError as err:
        return ("error", err.type_name)


MESH = "mesh = Mesh(np.array(devices()).reshape(4, 2), ('x', 'y'))\n"

SPEC_CASES = {
    "repr": "result = [repr(P(*e)) for e in [(), ('x',), (None, 'x'), (('x', 'y'),), ('x', None, ('a',))]]",
    "interned": "result = (P('x') is P('x'), P('x') == ('x',), P(['a', 'b']) == P(('a', 'b')))",
    "tuple_ops": "result = (len(P('a', None)), list(P('a', ('b', 'c'))), repr(P('a') + ('b',)), repr(('c',) + P('a')), P('a', None).index(None), P('a', 'a').count('a'))",
    "unconstrained": "result = repr(P(None, 'a', P.UNCONSTRAINED))",
    "unreduced": "result = repr(P('x', unreduced={'y'}))",
    "unreduced_overlap": "P('x', unreduced={'x'})",
    "unreduced_bad_type": "P('x', unreduced=['y'])",
    "unreduced_none": "P('x', unreduced={None})",
    "getitem_with_unreduced": "P('x', unreduced={'y'})[0]",
}

MESH_CASES = {
    "repr_str": MESH + "result = (repr(mesh), str(mesh), dict(mesh.shape), mesh.size, mesh.axis_sizes)",
    "ids": MESH + "result = (mesh.device_ids.tolist(), mesh.empty, mesh.is_multi_process, mesh.local_mesh is mesh)",
    "interned": MESH + "result = (Mesh(np.array(devices()).reshape(4, 2), ('x', 'y')) is mesh)",
    "one_name_string": "result = repr(Mesh(np.array(devices()), 'x'))",
    "abstract": MESH + "result = (repr(mesh.abstract_mesh.shape_tuple), repr(AbstractMesh((2, 4), ('a', 'b'))), AbstractMesh((2,), ('a',)) is AbstractMesh((2,), ('a',)))",
    "axis_types": "m = Mesh(np.array(devices()).reshape(4, 2), ('x', 'y'), (AxisType.Explicit, AxisType.Auto))\nresult = (repr(m.axis_types), m.explicit_axes, m.auto_axes, m.are_all_axes_explicit)",
    "ndim_mismatch": "Mesh(np.array(devices()).reshape(4, 2), ('x',))",
    "none_name": "Mesh(np.array(devices()).reshape(4, 2), ('x', None))",
    "bad_axis_types": "Mesh(np.array(devices()), ('x',), ('Auto',))",
    "axis_types_count": "Mesh(np.array(devices()), ('x',), (AxisType.Auto, AxisType.Auto))",
    "make_mesh": "m = make_mesh((4, 2), ('a', 'b'))\nresult = (repr(m), m.device_ids.tolist())",
    "make_mesh_subset": "m = make_mesh((3,), ('a',))\nresult = (repr(m), m.device_ids.tolist())",
    "make_mesh_too_big": "make_mesh((16,), ('a',))",
    "make_mesh_names": "make_mesh((4, 2), ('a',))",
    "make_mesh_not_ints": "make_mesh(('a', 2), ('a', 'b'))",
    "device_mesh": "result = mesh_utils.create_device_mesh((2, 4)).shape",
    "device_mesh_ids": "result = [d.id for d in mesh_utils.create_device_mesh((2, 2, 2)).flat]",
    "device_mesh_count": "mesh_utils.create_device_mesh((3, 2))",
    "hybrid": "result = [[d.id for d in row] for row in mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)]",
    "hybrid_count": "mesh_utils.create_hybrid_device_mesh((2, 4), (2, 1), process_is_granule=True)",
}

SPECS = [
    "P()",
    "P('x')",
    "P(None, 'y')",
    "P('x', 'y')",
    "P('y', 'x')",
    "P(('x', 'y'))",
    "P(('y', 'x'), None)",
    "P(None, ('x', 'y'))",
    "P('y')",
]

SHARDING_CASES = {
    f"layout {spec}": MESH
    + f"s = NamedSharding(mesh, {spec})\n"
    + "result = (repr(s), s.shard_shape((8, 16)), s.num_devices, s.is_fully_replicated, "
    + "s.is_fully_addressable, s.memory_kind, str(s._to_xla_hlo_sharding(2)), "
    + "sorted((d.id, str(i)) for d, i in s.devices_indices_map((8, 16)).items()), "
    + "sorted(d.id for d in s.device_set), [d.id for d in s._device_assignment])"
    for spec in SPECS
}
SHARDING_CASES.update(
    {
        "equality": MESH
        + "a, b = NamedSharding(mesh, P('x')), NamedSharding(mesh, P('x'))\n"
        + "result = (a == b, hash(a) == hash(b), a == NamedSharding(mesh, P('x', None)), a == NamedSharding(mesh, P('y')))",
        "memory_kind": MESH + "result = repr(NamedSharding(mesh, P('x')).with_memory_kind('pinned_host'))",
        "memory_kind_bad": MESH + "NamedSharding(mesh, P('x')).with_memory_kind('bogus')",
        "addressable_map": MESH
        + "s = NamedSharding(mesh, P('y'))\nresult = sorted((d.id, str(i)) for d, i in s.addressable_devices_indices_map((4,)).items())",
        "unknown_axis": MESH + "NamedSharding(mesh, P('z'))",
        "duplicate_axis": MESH + "NamedSharding(mesh, P('x', 'x'))",
        "duplicate_in_tuple": MESH + "NamedSharding(mesh, P(('x', 'y'), 'y'))",
        "uneven": MESH + "NamedSharding(mesh, P('x')).shard_shape((6, 2))",
        "uneven_indices": MESH + "NamedSharding(mesh, P(None, 'y')).devices_indices_map((4, 3))",
        "rank_too_small": MESH + "NamedSharding(mesh, P('x', 'y')).check_compatible_aval((4,))",
        "unconstrained_explicit": "m = make_mesh((8,), ('a',))\nNamedSharding(m, P(P.UNCONSTRAINED))",
        "unreduced_auto": MESH + "NamedSharding(mesh, P('x', unreduced={'y'}))",
        "unreduced_explicit": "m = make_mesh((4, 2), ('a', 'b'))\ns = NamedSharding(m, P('a', unreduced={'b'}))\nresult = (repr(s), s.is_fully_replicated, str(s._to_xla_hlo_sharding(1)))",
        "size_one_axis": "m = Mesh(np.array(devices()).reshape(1, 8), ('a', 'b'))\ns = NamedSharding(m, P('a', 'b'))\nresult = (str(s._to_xla_hlo_sharding(2)), s.shard_shape((3, 8)), s.is_fully_replicated)",
        "abstract_mesh": "m = AbstractMesh((4, 2), ('a', 'b'))\ns = NamedSharding(m, P('a'))\nresult = (repr(s), s.num_devices, s.shard_shape((8, 2)))",
        "abstract_device_set": "NamedSharding(AbstractMesh((4, 2), ('a', 'b')), P('a')).device_set",
        "update": MESH + "result = repr(NamedSharding(mesh, P('x')).update(spec=('y',)))",
        "replicated_axes": MESH + "result = sorted(NamedSharding(mesh, P('x')).replicated_axes)",
        "equivalent": MESH
        + "result = (NamedSharding(mesh, P('x')).is_equivalent_to(NamedSharding(mesh, P('x', None)), 2), NamedSharding(mesh, P()).is_equivalent_to(NamedSharding(mesh, P('x')), 1))",
    }
)


def _check(source):
    actual, expected = run_both(source)
    assert actual == expected


@requires_jax
@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_partition_spec_matches_jax(name):
    _check(SPEC_CASES[name])


@requires_jax
@pytest.mark.parametrize("name", sorted(MESH_CASES))
def test_mesh_matches_jax(name):
    _check(MESH_CASES[name])


@requires_jax
@pytest.mark.parametrize("name", sorted(SHARDING_CASES))
def test_named_sharding_matches_jax(name):
    _check(SHARDING_CASES[name])


ARRAY_CASES = {
    f"device_put {spec}": MESH
    + f"s = NamedSharding(mesh, {spec})\n"
    + "x = device_put(np.arange(128, dtype=np.float32).reshape(8, 16), s)\n"
    + "result = (repr(x.sharding), x.is_fully_replicated, np.asarray(x), "
    + "sorted((sh.device.id, str(sh.index), sh.replica_id, sh.data.shape) for sh in x.addressable_shards), "
    + "sorted((sh.device.id, str(sh.index), sh.replica_id) for sh in x.global_shards), x.committed)"
    for spec in SPECS
}
ARRAY_CASES.update(
    {
        f"jit output of {body}": MESH
        + "x = device_put(np.arange(128, dtype=np.float32).reshape(8, 16), NamedSharding(mesh, P('x', 'y')))\n"
        + f"y = jit(lambda a: {body})(x)\nresult = (repr(y.sharding), np.asarray(y))"
        for body in ["a * 2", "a.T", "a.sum(0)", "a.sum()", "a @ a.T", "a[::2]"]
    }
)
ARRAY_CASES.update(
    {
        "reshard": MESH
        + "x = device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P('x')))\n"
        + "y = device_put(x, NamedSharding(mesh, P(None, ('x', 'y'))))\n"
        + "result = (repr(y.sharding), np.asarray(y), sorted((s.device.id, str(s.index)) for s in y.addressable_shards))",
        "device_put_uneven": MESH + "device_put(np.ones((6, 2), np.float32), NamedSharding(mesh, P('x')))",
        "device_put_rank": MESH + "device_put(np.ones(4, np.float32), NamedSharding(mesh, P('x', 'y')))",
        "device_put_tree_prefix": MESH
        + "t = device_put({'a': np.ones((8, 2), np.float32), 'b': [np.zeros(4, np.float32), np.ones(8, np.float32)]},"
        + " {'a': NamedSharding(mesh, P('x')), 'b': NamedSharding(mesh, P('y'))})\n"
        + "result = {k: repr(v.sharding) for k, v in [('a', t['a']), ('b0', t['b'][0]), ('b1', t['b'][1])]}",
    }
)


@requires_jax
@pytest.mark.parametrize("name", sorted(ARRAY_CASES))
def test_sharded_arrays_match_jax(name):
    actual, expected = run_both(ARRAY_CASES[name])
    assert actual[0] == expected[0]
    if actual[0] == "error":
        assert actual == expected
        return
    for a, e in zip(actual[1], expected[1], strict=True):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(a, e)
        else:
            assert a == e


def test_laminax_never_imports_jax():
    import sys

    assert "jax" not in sys.modules
    assert "jax._src.named_sharding" not in sys.modules
