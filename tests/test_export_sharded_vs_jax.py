"""Sharded exports against real JAX 0.10.2 on 8 CPU devices: a jitted function with
NamedSharding in/out shardings exports to the same module attributes and named shardings, and
the artifact crosses both ways and runs with the exported layouts."""

import laminax as lx
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax.sharding import NamedSharding
from laminax.sharding import PartitionSpec as P

A = np.arange(32, dtype=np.float32).reshape(8, 4) / 7
B = np.ones((8, 4), np.float32) * 0.5

JAX_SIDE = """
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4, 2), ("x", "y"))
s_in, s_out = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "y"))
f = jax.jit(lambda a, b: (jnp.sin(a) * 2 + b, a.sum()), in_shardings=(s_in, None),
            out_shardings=(s_out, None))
spec = jax.ShapeDtypeStruct((8, 4), np.float32)
own = jax.export.export(f)(spec, spec)
other = jax.export.deserialize(bytearray(blob))
x = jax.device_put(A, s_in)
outs = other.call(x, B)
def named(e):
    return [None if s is None else (str(s.spec), s.mesh.axis_names, s.mesh.axis_sizes)
            for s in (*e._in_named_shardings, *e._out_named_shardings)]
result = dict(blob=bytes(own.serialize()), nr_devices=other.nr_devices,
              named_own=named(own), named_other=named(other),
              head=next(l for l in own.mlir_module().split("\\n") if l.startswith("module")),
              out0=np.asarray(outs[0]), out1=np.asarray(outs[1]), out0_spec=str(outs[0].sharding.spec))
"""


def _laminax_exported():
    mesh = lx.make_mesh((4, 2), ("x", "y"))
    s_in, s_out = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "y"))
    f = lx.jit(lambda a, b: (lx.numpy.sin(a) * 2 + b, a.sum()), in_shardings=(s_in, None),
               out_shardings=(s_out, None))
    spec = lx.ShapeDtypeStruct((8, 4), np.float32)
    return mesh, s_in, lx.export.export(f)(spec, spec)


def _named(e):
    return [None if s is None else (str(s.spec), tuple(s.mesh.axis_names),
                                    tuple(s.mesh.axis_sizes))
            for s in (*e._in_named_shardings, *e._out_named_shardings)]


@requires_jax
def test_sharded_artifacts_cross_both_ways():
    if lx.device_count() < 8:
        pytest.skip("needs 8 CPU devices (LAMINAX_NUM_CPU_DEVICES=8)")
    mesh, s_in, exp = _laminax_exported()
    got = run_jax(JAX_SIDE, blob=bytes(exp.serialize()), A=A, B=B, devices=8)
    want0, want1 = np.sin(A) * 2 + B, A.sum()
    # laminax's artifact in JAX
    assert got["nr_devices"] == exp.nr_devices == 8
    assert got["named_other"] == got["named_own"] == _named(exp)
    assert exp.mlir_module().split("\n")[0] == got["head"]
    np.testing.assert_allclose(got["out0"], want0, rtol=1e-6)
    np.testing.assert_allclose(got["out1"], want1, rtol=1e-6)
    # JAX's artifact in laminax
    theirs = lx.export.deserialize(got["blob"])
    assert theirs.nr_devices == 8 and _named(theirs) == got["named_own"]
    x = lx.device_put(A, s_in)
    out0, out1 = theirs.call(x, B)
    np.testing.assert_allclose(np.asarray(out0), want0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out1), want1, rtol=1e-6)
    assert str(out0.sharding.spec) == got["out0_spec"]
    out0_jit, _ = lx.jit(theirs.call)(x, B)
    np.testing.assert_allclose(np.asarray(out0_jit), want0, rtol=1e-6)
    # in_shardings_jax on a mesh of other devices (reversed), as JAX's docs show
    run_mesh = lx.sharding.Mesh(np.array(lx.devices()[::-1]).reshape(4, 2), ("x", "y"),
                                axis_types=mesh.axis_types)
    shardings = theirs.in_shardings_jax(run_mesh)
    assert shardings[1] is None and shardings[0].mesh is run_mesh
    assert str(shardings[0].spec) == "P('x', None)"
    out0, _ = theirs.call(lx.device_put(A, shardings[0]), B)
    np.testing.assert_allclose(np.asarray(out0), want0, rtol=1e-6)
    assert out0.sharding.mesh is run_mesh
    with pytest.raises(ValueError, match="does not match the mesh used for export"):
        theirs.in_shardings_jax(lx.make_mesh((2, 4), ("x", "y")))


def test_sharded_artifact_on_one_device_is_refused():
    if lx.device_count() < 8:
        pytest.skip("needs 8 CPU devices")
    _, _, exp = _laminax_exported()
    back = lx.export.deserialize(exp.serialize())
    with pytest.raises(ValueError, match="exported for 8 devices and is called in a context "
                                         "with 1 devices"):
        back.call(A, B)
