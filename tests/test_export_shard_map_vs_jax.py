"""shard_map in exported functions, against real JAX 0.10.2, with either partitioner: under
GSPMD (`jax_use_shardy_partitioner=False`) the body is the private function `shmap_body`,
which receives the platform index and the dimension variables as leading arguments (marked
`jax.global_constant`), as JAX's; a region manual over size-1 axes only (a one-device mesh)
is lowered in place with Shardy and called without GSPMD's sharding custom calls, as JAX
does, so that such artifacts run in JAX. Artifacts cross both ways, polymorphic and
multi-platform."""

import re

import laminax
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

pytestmark = requires_jax

_SRC = """
def make(jax, jnp, P):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))

    def body(y):
        mine = jax.lax.platform_dependent(y, cpu=lambda z: z * 2, default=lambda z: -z)
        total = jax.lax.psum(y.sum(axis=0), "x") + jax.lax.axis_index("x")
        return jnp.sin(y) * y.shape[0] + mine + total

    def f(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
    return f

def artifacts(jax, jnp, P):
    f = make(jax, jnp, P)
    b, = jax.export.symbolic_shape("b")
    poly = jax.export.export(jax.jit(f), platforms=("cpu", "cuda"))(
        jax.ShapeDtypeStruct((b, 3), np.float32))
    plain = jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct((4, 3), np.float32))
    return f, poly, plain

def calls(exps, xs):
    return [np.asarray(exps[0].call(x)) for x in xs] + [np.asarray(exps[1].call(xs[1]))]
"""
XS = [np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32) for n in (2, 4)]


def _body_header(text: str) -> str:
    line = next((ln for ln in text.splitlines() if "func.func private @shmap_body" in ln), "")
    head = line.split("->")[0]
    # the arguments' attributes, without locations
    return re.sub(r' loc\((?:"[^"]*"|[^()"])*\)', "", head)


@pytest.mark.parametrize("shardy", [False, True])
def test_one_device_shard_map_artifacts_cross_both_ways(shardy):
    scope = {"np": np}
    exec(_SRC, scope)
    previous = laminax.config.read("jax_use_shardy_partitioner")
    laminax.config.update("jax_use_shardy_partitioner", shardy)
    try:
        f, poly, plain = scope["artifacts"](laminax, laminax.numpy, laminax.sharding.PartitionSpec)
        got = run_jax(_SRC + """
jax.config.update("jax_use_shardy_partitioner", shardy)
from jax.sharding import PartitionSpec as P
f, poly, plain = artifacts(jax, jnp, P)
mine = [jax.export.deserialize(bytearray(b)) for b in blobs]
result = dict(ref=[np.asarray(f(x)) for x in xs], texts=[poly.mlir_module(), plain.mlir_module()],
              blobs=[bytes(poly.serialize()), bytes(plain.serialize())],
              mine=calls(mine, xs))
""", fresh=True, shardy=shardy, xs=XS, blobs=[poly.serialize(), plain.serialize()])
        theirs = [laminax.export.deserialize(b) for b in got["blobs"]]
        ref = got["ref"] + [got["ref"][1]]
        for out in (got["mine"], scope["calls"](theirs, XS), scope["calls"]((poly, plain), XS)):
            for a, b in zip(out, ref, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        for mine, text in zip((poly, plain), got["texts"], strict=True):
            mine = mine.mlir_module()
            for marker in ("sdy.manual_computation", "Sharding", "shmap_body"):
                assert (marker in mine) == (marker in text), marker
            assert _body_header(mine) == _body_header(text)
        if not shardy:
            assert 'jax.global_constant = "b"' in _body_header(poly.mlir_module())
    finally:
        laminax.config.update("jax_use_shardy_partitioner", previous)


_EIGHT = """
def make8(jax, jnp, P):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))

    def body(y):
        mine = jax.lax.platform_dependent(y, cpu=lambda z: z * 2, default=lambda z: -z)
        return jnp.sin(y) * y.shape[0] + mine + jax.lax.psum(y.sum(), ("x", "y"))

    def f(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(x)
    b, = jax.export.symbolic_shape("b")
    exp = jax.export.export(jax.jit(f), platforms=("cpu", "cuda"))(
        jax.ShapeDtypeStruct((4 * b, 6), np.float32))
    # an 8-device artifact runs where its argument is placed on the 8 devices
    placed = jax.sharding.NamedSharding(mesh, P("x", "y"))
    return f, exp, lambda e, x: jax.jit(e.call, in_shardings=placed)(x)
"""
X8 = np.random.default_rng(8).standard_normal((8, 6)).astype(np.float32)


def test_gspmd_shard_map_on_8_devices_takes_platform_index_and_dim_vars():
    if laminax.device_count() < 8:
        pytest.skip("needs 8 CPU devices (LAMINAX_NUM_CPU_DEVICES=8)")
    scope = {"np": np}
    exec(_EIGHT, scope)
    previous = laminax.config.read("jax_use_shardy_partitioner")
    laminax.config.update("jax_use_shardy_partitioner", False)
    try:
        f, mine, run = scope["make8"](laminax, laminax.numpy, laminax.sharding.PartitionSpec)
        got = run_jax(_EIGHT + """
jax.config.update("jax_use_shardy_partitioner", False)
from jax.sharding import PartitionSpec as P
f, theirs, run = make8(jax, jnp, P)
result = dict(ref=np.asarray(f(x)), text=theirs.mlir_module(), blob=bytes(theirs.serialize()),
              mine=np.asarray(run(jax.export.deserialize(bytearray(blob)), x)))
""", fresh=True, devices=8, x=X8, blob=mine.serialize())
        assert _body_header(mine.mlir_module()) == _body_header(got["text"])
        assert 'jax.global_constant = "b"' in _body_header(mine.mlir_module())
        theirs = laminax.export.deserialize(got["blob"])
        for out in (got["mine"], run(mine, X8), run(theirs, X8)):
            np.testing.assert_allclose(np.asarray(out), got["ref"], rtol=1e-5, atol=1e-5)
    finally:
        laminax.config.update("jax_use_shardy_partitioner", previous)
