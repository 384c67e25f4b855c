"""shard_map on 8 CPU devices against independent oracles: NumPy block arithmetic, core's
reference interpreter (each manual mesh axis a named vmap over the blocks), and the rules'
consistency (jvp against finite differences, grad against the reference's grad)."""

import laminax_core as lc
import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_core import lax
from laminax_core.internal import run_reference
from laminax_pjit import Mesh, NamedSharding, P, shard_map
from laminax_pjit._shard_map_rules import shard_map_p


@pytest.fixture(scope="module")
def mesh42():
    return Mesh(np.array(ld.devices()).reshape(4, 2), ("x", "y"))


@pytest.fixture(scope="module")
def mesh8():
    return Mesh(np.array(ld.devices()), ("i",))


def _reference(f, *args):
    """The shard_map's value by core's reference interpreter (no XLA collectives)."""
    (eqn,) = [e for e in lc.make_jaxpr(f)(*args).jaxpr.eqns if e.primitive is shard_map_p]
    return run_reference(shard_map_p, list(args), eqn.params)


def _f32(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def test_blocks_and_psum_match_numpy(mesh42):
    x = _f32(8, 4)
    f = shard_map(lambda b: lax.psum(b, "y"), mesh=mesh42, in_specs=P("x", "y"),
                  out_specs=P("x", None))
    out = f(x)
    blocks = x.reshape(4, 2, 2, 2)  # (x, rows, y, cols)
    expected = blocks.sum(axis=2).reshape(8, 2)
    np.testing.assert_allclose(np.asarray(out), expected)
    assert out.sharding == NamedSharding(mesh42, P("x", None))


def test_identity_keeps_layout(mesh42):
    x = _f32(8, 6)
    out = shard_map(lambda b: b * 2, mesh=mesh42, in_specs=P("x"), out_specs=P("x"))(x)
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    rows = sorted({(s.index[0].start, s.index[0].stop) for s in out.addressable_shards})
    assert len(out.addressable_shards) == 8 and rows == [(0, 2), (2, 4), (4, 6), (6, 8)]


COLLECTIVES = {
    "psum": lambda b: lax.psum(b, "i"),
    "pmax": lambda b: lax.pmax(b, "i"),
    "pmin": lambda b: lax.pmin(b, "i"),
    "pmean": lambda b: lax.pmean(b, "i"),
    "all_gather": lambda b: lax.all_gather(b, "i"),
    "all_gather_tiled": lambda b: lax.all_gather(b, "i", tiled=True, axis=1),
    "psum_scatter": lambda b: lax.psum_scatter(b.reshape(8, 2), "i"),
    "psum_scatter_tiled": lambda b: lax.psum_scatter(b, "i", scatter_dimension=1, tiled=True),
    "ppermute": lambda b: lax.ppermute(b, "i", [(j, (j + 1) % 8) for j in range(8)]),
    "ppermute_partial": lambda b: lax.ppermute(b, "i", [(0, 3), (5, 1)]),
    "all_to_all": lambda b: lax.all_to_all(b.reshape(8, 2), "i", 0, 1),
    "all_to_all_tiled": lambda b: lax.all_to_all(b, "i", 1, 0, tiled=True),
    "pbroadcast": lambda b: lax.pbroadcast(b, "i", 3),
    "axis_index": lambda b: b + lax.convert_element_type(lax.axis_index("i"), np.float32),
    "axis_size": lambda b: b * lax.axis_size("i"),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_lowered_equal_reference(mesh8, name):
    # XLA's collectives on 8 devices against the vmap meaning of each collective
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    f = shard_map(COLLECTIVES[name], mesh=mesh8, in_specs=P("i"), out_specs=P("i"),
                  check_vma=False)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(_reference(f, x)[0]), rtol=1e-6)


def test_two_axis_program_equals_reference(mesh42):
    def body(a, b):
        c = lax.psum(a, "y") * b
        d = lax.all_gather(c, "x", tiled=True)
        idx = lax.convert_element_type(lax.axis_index("x"), np.float32)
        return c, (idx + d.sum()).reshape(1)

    f = shard_map(body, mesh=mesh42, in_specs=(P("x", "y"), P(None, "y")),
                  out_specs=(P("x", "y"), P(("x", "y"))))
    a, b = _f32(8, 4), np.ones((2, 4), np.float32)
    for got, want in zip(f(a, b), _reference(f, a, b), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def test_grad_of_psum_replicated_output(mesh8):
    # out = sum of all blocks, replicated: d(sum(out))/dx is the number of output entries
    # that each x contributes to (every block feeds every replica's copy once)
    f = shard_map(lambda b: lax.psum(b, "i"), mesh=mesh8, in_specs=P("i"), out_specs=P())
    x = _f32(16)
    g = lc.grad(lambda v: f(v).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.ones(16))


def test_grad_matches_plain_function(mesh42):
    # a shard_map that computes sum((x @ w)**2) with a psum over the contracted axis
    def body(xb, wb):
        return lax.psum(xb @ wb, "y")

    f = shard_map(body, mesh=mesh42, in_specs=(P("x", "y"), P("y", None)),
                  out_specs=P("x", None))
    x = np.random.default_rng(1).standard_normal((8, 6)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)

    def loss(x, w):
        return (f(x, w) ** 2).sum()

    gx, gw = lc.grad(loss, argnums=(0, 1))(x, w)
    ex, ew = lc.grad(lambda x, w: ((x @ w) ** 2).sum(), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(ex), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(ew), rtol=1e-5)


def test_grad_of_replicated_input_sums_over_devices(mesh8):
    f = shard_map(lambda b, s: b * s, mesh=mesh8, in_specs=(P("i"), P()), out_specs=P("i"))
    x, s = _f32(16), np.float32(3.0)
    gs = lc.grad(lambda s: f(x, s).sum())(s)
    np.testing.assert_allclose(np.asarray(gs), x.sum())


def test_jvp_matches_finite_difference(mesh8):
    f = shard_map(lambda b: lax.all_gather(lax.sin(b), "i", tiled=True) * 2, mesh=mesh8,
                  in_specs=P("i"), out_specs=P("i"), check_vma=False)
    x, t = _f32(16) / 10, np.ones(16, np.float32)
    _, tangent = lc.jvp(f, (x,), (t,))
    eps = 1e-3
    fd = (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=2e-2, atol=1e-2)


def test_vmap_of_shard_map_equals_loop(mesh42):
    f = shard_map(lambda b: lax.psum(b, "x") * 2, mesh=mesh42, in_specs=P("x", "y"),
                  out_specs=P(None, "y"))
    xs = np.stack([_f32(8, 4), -_f32(8, 4)])
    got = lc.vmap(f)(xs)
    for k in range(2):
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(f(xs[k])))


def test_shard_map_inside_jit(mesh8):
    f = shard_map(lambda b: lax.psum(b, "i"), mesh=mesh8, in_specs=P("i"), out_specs=P())
    x = _f32(16)
    out = ld.jit(lambda v: f(v) + 1)(x)
    np.testing.assert_allclose(np.asarray(out), x.reshape(8, 2).sum(0) + 1)
    text = ld.jit(f).lower(x).as_text()
    assert "sdy.manual_computation" in text and "mhlo.num_partitions = 8" in text


def test_closure_over_outer_values(mesh8):
    y = np.float32(5.0)
    f = shard_map(lambda b: b + y, mesh=mesh8, in_specs=P("i"), out_specs=P("i"))
    np.testing.assert_allclose(np.asarray(f(_f32(8))), _f32(8) + 5)


def test_partial_manual_axis_names(mesh42):
    f = shard_map(lambda b: lax.psum(b, "x"), mesh=mesh42, in_specs=P("x"), out_specs=P(),
                  axis_names={"x"})
    np.testing.assert_allclose(np.asarray(f(_f32(8, 2))), _f32(8, 2).reshape(4, 2, 2).sum(0))


# ----- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("spec,kind", [
    (P("x", None, None), "rank"),
    (P("z"), "unknown"),
    (("x",), "type"),
    ("x", "type"),
])
def test_bad_in_specs(mesh42, spec, kind):
    f = shard_map(lambda b: b, mesh=mesh42, in_specs=spec, out_specs=P("x"))
    error = TypeError if kind == "type" else ValueError
    with pytest.raises(error, match="in_specs"):
        f(_f32(8, 4))


@pytest.mark.parametrize("shape", [(6, 4), (3,), (10, 2)])
def test_non_divisible_dims(mesh42, shape):
    f = shard_map(lambda b: b, mesh=mesh42, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match="evenly divisible"):
        f(np.zeros(shape, np.float32))


@pytest.mark.parametrize("body,out_spec", [
    (lambda b: b, P()),
    (lambda b: lax.all_gather(b, "x"), P()),
    (lambda b: lax.psum(b, "y"), P()),
    (lambda b: b * lax.axis_index("y"), P("x")),
])
def test_out_specs_claiming_replication(mesh42, body, out_spec):
    f = shard_map(body, mesh=mesh42, in_specs=P("x"), out_specs=out_spec)
    with pytest.raises(ValueError, match="replicat"):
        f(_f32(8, 4))
    # the same program runs when the check is off
    shard_map(body, mesh=mesh42, in_specs=P("x"), out_specs=out_spec, check_vma=False)(_f32(8, 4))


@pytest.mark.parametrize("body", [
    lambda b: lax.psum(b, ("x", "y")),
    lambda b: lax.pmax(lax.psum(b, "y"), "x"),
    lambda b: lax.pmean(b, ("x", "y")),
])
def test_replicated_outputs_pass_the_check(mesh42, body):
    shard_map(body, mesh=mesh42, in_specs=P("x", "y"), out_specs=P())(_f32(8, 4))


def test_out_spec_longer_than_rank(mesh42):
    f = shard_map(lambda b: b.sum(), mesh=mesh42, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match="out_specs"):
        f(_f32(8, 4))


def test_mesh_and_axis_names_errors(mesh42):
    with pytest.raises(TypeError, match="Mesh"):
        shard_map(lambda b: b, mesh="mesh", in_specs=P(), out_specs=P())(1.0)
    with pytest.raises(ValueError, match="subset"):
        shard_map(lambda b: b, mesh=mesh42, in_specs=P(), out_specs=P(),
                  axis_names={"q"})(1.0)
    with pytest.raises(TypeError, match="frozenset"):
        shard_map(lambda b: b, mesh=mesh42, in_specs=P(), out_specs=P(),
                  axis_names=["x"])(1.0)
    with pytest.raises(ValueError, match="context mesh"):
        shard_map(lambda b: b, in_specs=P(), out_specs=P())(1.0)


def test_none_in_specs_make_arguments_static(mesh42):
    # as in JAX: a None in_spec closes the body over the whole argument on every device
    f = shard_map(lambda s, b: b * s.sum(), mesh=mesh42, in_specs=(None, P("x")),
                  out_specs=P("x"))
    s = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(f(s, _f32(8))), _f32(8) * 3.0)


def test_unbound_axis_name(mesh42):
    f = shard_map(lambda b: lax.psum(b, "nope"), mesh=mesh42, in_specs=P("x"),
                  out_specs=P("x"))
    with pytest.raises(NameError, match="unbound axis name"):
        f(_f32(8, 4))


def test_mesh_from_set_mesh(mesh8):
    from laminax_pjit import set_mesh

    f = shard_map(lambda b: lax.psum(b, "i"), in_specs=P("i"), out_specs=P())
    with set_mesh(mesh8):
        out = f(_f32(16))
    np.testing.assert_allclose(np.asarray(out), _f32(16).reshape(8, 2).sum(0))


def test_control_flow_in_the_body(mesh8):
    def body(b):
        # a carry that starts varying (b * 0) stays so (`full_like(b, 0)` would too)
        total = lax.fori_loop(0, 3, lambda i, c: c + lax.psum(b, "i"), b * 0)
        return lax.cond(lax.axis_index("i") > 3, lambda v: v * 2, lambda v: v, total)

    f = shard_map(body, mesh=mesh8, in_specs=P("i"), out_specs=P("i"))
    x = _f32(16)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(_reference(f, x)[0]))
    # a loop whose carry starts and stays replicated passes the vma check (as in JAX)...
    g = shard_map(lambda b: lax.fori_loop(0, 2, lambda i, c: c + lax.psum(b, "i"),
                                          lax.psum(b, "i")),
                  mesh=mesh8, in_specs=P("i"), out_specs=P())
    np.testing.assert_allclose(np.asarray(g(x)), x.reshape(8, 2).sum(0) * 3)
    # ...but one that starts varying does not
    with pytest.raises(ValueError, match="replicat"):
        shard_map(body, mesh=mesh8, in_specs=P("i"), out_specs=P())(x)


def test_linearize_and_vjp(mesh42):
    f = shard_map(lambda b: lax.psum(lax.sin(b), "y"), mesh=mesh42, in_specs=P("x", "y"),
                  out_specs=P("x"))
    x = _f32(8, 4) / 10
    y, f_lin = lc.linearize(f, x)
    t = np.ones_like(x)
    np.testing.assert_allclose(np.asarray(f_lin(t)), np.asarray(lc.jvp(f, (x,), (t,))[1]),
                               rtol=1e-6)
    y2, pullback = lc.vjp(f, x)
    (ct,) = pullback(np.ones_like(np.asarray(y2)))
    np.testing.assert_allclose(np.asarray(ct), np.cos(x), rtol=1e-5)


def test_committed_sharded_inputs_and_pjit(mesh8):
    from laminax_pjit import pjit

    x = ld.device_put(_f32(16), NamedSharding(mesh8, P("i")))
    f = shard_map(lambda b: b * 2, mesh=mesh8, in_specs=P("i"), out_specs=P("i"))
    out = f(x)
    assert out.sharding == x.sharding
    np.testing.assert_allclose(np.asarray(out), _f32(16) * 2)
    g = pjit(lambda v: f(v) + 1, in_shardings=NamedSharding(mesh8, P("i")),
             out_shardings=NamedSharding(mesh8, P()))
    y = g(x)
    np.testing.assert_allclose(np.asarray(y), _f32(16) * 2 + 1)
    assert y.sharding.is_fully_replicated


def test_repeated_calls_reuse_the_trace(mesh8):
    calls = []

    def body(b):
        calls.append(1)
        return b + 1

    f = shard_map(body, mesh=mesh8, in_specs=P("i"), out_specs=P("i"))
    for _ in range(3):
        f(_f32(8))
    f(_f32(16))
    assert len(calls) == 2  # once per input shape


def test_gspmd_lowering(mesh42):
    from laminax_core import config
    from laminax_dispatch.internal import use_shardy_partitioner

    f = shard_map(lambda b, c: (lax.psum(b, "y"), c), mesh=mesh42,
                  in_specs=(P("x", "y"), P()), out_specs=(P("x"), P()))
    a = _f32(8, 4)
    previous = use_shardy_partitioner.value
    config.update("jax_use_shardy_partitioner", False)
    try:
        text = ld.jit(f).lower(a, np.float32(1)).as_text()
        out, c = f(a, np.float32(1))
    finally:
        config.update("jax_use_shardy_partitioner", previous)
    for piece in ("@SPMDFullToShardShape", "@SPMDShardToFullShape", "call @shmap_body",
                  'mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"'):
        assert piece in text
    assert "sdy." not in text
    np.testing.assert_allclose(np.asarray(out), a.reshape(8, 2, 2).sum(1))
    assert float(c) == 1.0


def test_grad_with_scalar_and_forwarded_residuals(mesh42):
    # cos(sum(b)) is a rank-0 per-device residual; w (a known input) is forwarded as one
    def body(b, w):
        return lax.sin(b.sum()) * b * w

    f = shard_map(body, mesh=mesh42, in_specs=(P("x", "y"), P()), out_specs=P("x", "y"))
    x = np.random.default_rng(4).standard_normal((8, 4)).astype(np.float32)
    w = np.float32(1.5)

    def plain(x):
        blocks = x.reshape(4, 2, 2, 2).transpose(0, 2, 1, 3)  # (x, y, rows, cols)
        sums = blocks.sum(axis=(2, 3), keepdims=True)
        return (lc.numpy.sin(sums) * blocks * w).sum()

    g = lc.grad(lambda x: f(x, w).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(lc.grad(plain)(x)), rtol=1e-5)
    jaxpr = str(lc.make_jaxpr(lc.grad(lambda x: f(x, w).sum()))(x))
    assert jaxpr.count("shard_map[") == 2  # the known part, then the transposed staged part


def test_mesh_in_another_device_order():
    mesh = Mesh(np.array(ld.devices()[::-1]).reshape(2, 4), ("a", "b"))
    f = shard_map(lambda v: lax.psum(v, "b") + lax.convert_element_type(
        lax.axis_index("a") * 10 + lax.axis_index("b"), np.float32),
        mesh=mesh, in_specs=P("a", "b"), out_specs=P("a", "b"))
    x = _f32(4, 8)
    out = f(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(_reference(f, x)[0]))
    first = [s for s in out.addressable_shards if s.index == (slice(0, 2), slice(0, 2))]
    assert first[0].device == ld.devices()[7]


def test_checkpoint_and_scan_around_shard_map(mesh8):
    f = shard_map(lambda b: lax.psum(lax.sin(b), "i"), mesh=mesh8, in_specs=P("i"),
                  out_specs=P())
    x = _f32(16) / 7
    expected = lc.grad(lambda x: f(x).sum())(x)
    np.testing.assert_allclose(np.asarray(lc.grad(lambda x: lc.checkpoint(f)(x).sum())(x)),
                               np.asarray(expected), rtol=1e-6)

    def loop(x):
        carry, _ = lax.scan(lambda c, _: (c + f(x).sum(), None), 0.0, None, length=3)
        return carry

    np.testing.assert_allclose(np.asarray(lc.grad(loop)(x)), 3 * np.asarray(expected),
                               rtol=1e-5)
