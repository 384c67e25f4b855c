"""pjit, with_sharding_constraint and building sharded Arrays, against real JAX 0.10.2 on 8 CPU
devices: the same snippet runs under both (values, output specs, shard placement, jaxprs, error
types)."""

import warnings

import laminax_core as lc
import laminax_core.numpy as lnp
import laminax_dispatch as ld
import laminax_pjit as lp
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

JAX_PRELUDE = """
import warnings
warnings.simplefilter('ignore')
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental.pjit import pjit
from jax.lax import with_sharding_constraint as wsc
make_jaxpr, grad, vmap, jvp, devices, device_put, jit = jax.make_jaxpr, jax.grad, jax.vmap, jax.jvp, jax.devices, jax.device_put, jax.jit
scan, cond, fori_loop, checkpoint = jax.lax.scan, jax.lax.cond, jax.lax.fori_loop, jax.checkpoint
make_array_from_callback = jax.make_array_from_callback
make_array_from_single_device_arrays = jax.make_array_from_single_device_arrays
make_array_from_process_local_data = jax.make_array_from_process_local_data
set_mesh = jax.set_mesh
linearize = jax.linearize
"""

# A jaxpr's structure, the same under both libraries (variable names aside): each equation's
# primitive, where its operands come from (an input, or an output of an earlier equation),
# and for jit equations their name, context mesh, shardings and inner equations.
SUMMARY = """
def summary(closed):
    def shard(s):
        return 'UnspecifiedValue' if s is None or repr(s) == 'UnspecifiedValue' else repr(s)
    def ctx(m):
        return None if m is None or m.empty else repr(m)
    def body(j):
        where = {id(v): ('in', i) for i, v in enumerate(j.invars)}
        rows = []
        for k, e in enumerate(j.eqns):
            row = [e.primitive.name, [where.get(id(v), 'lit') for v in e.invars], len(e.outvars)]
            for i, v in enumerate(e.outvars):
                where[id(v)] = (k, i)
            if e.primitive.name == 'jit':
                q = e.params
                row += [q['name'], ctx(q.get('ctx_mesh')), [shard(s) for s in q['in_shardings']],
                        [shard(s) for s in q['out_shardings']], body(q['jaxpr'].jaxpr)]
            rows.append(row)
        return rows, [where.get(id(v), 'lit') for v in j.outvars]
    return body(closed.jaxpr)
F = pjit(lambda a: jnp.sin(a) * 2, in_shardings=P('x'), out_shardings=P('x'))
FN = pjit(lambda a: jnp.sin(a) * 2, in_shardings=NamedSharding(mesh, P('x')),
          out_shardings=NamedSharding(mesh, P('x')))
FN2 = pjit(lambda a, b: jnp.sin(a) * b, in_shardings=NamedSharding(mesh, P('x')))
"""

MESH = (
    "mesh = Mesh(np.array(devices()).reshape(4, 2), ('x', 'y'))\n"
    "x = np.arange(64, dtype=np.float32).reshape(8, 8) / 10\n"
)


def _laminax_scope():
    return {
        "Mesh": lp.Mesh,
        "NamedSharding": lp.NamedSharding,
        "P": lp.P,
        "pjit": lp.pjit,
        "wsc": lp.with_sharding_constraint,
        "make_jaxpr": lc.make_jaxpr,
        "grad": lc.grad,
        "vmap": lc.vmap,
        "jvp": lc.jvp,
        "devices": ld.devices,
        "device_put": ld.device_put,
        "jit": ld.jit,
        "scan": lc.lax.scan,
        "cond": lc.lax.cond,
        "fori_loop": lc.lax.fori_loop,
        "checkpoint": lc.checkpoint,
        "make_array_from_callback": lp.make_array_from_callback,
        "make_array_from_single_device_arrays": lp.make_array_from_single_device_arrays,
        "make_array_from_process_local_data": lp.make_array_from_process_local_data,
        "set_mesh": lp.set_mesh,
        "linearize": lc.linearize,
        "np": np,
        "jnp": lnp,
    }


def run_both(source: str):
    # JAX 0.10.2 removed the seed's names; laminax keeps them, so JAX runs today's spelling
    jax_source = source.replace("_axis_resources=", "_shardings=")
    try:
        expected = ("ok", run_jax(JAX_PRELUDE + jax_source, devices=8))
    except JaxReferenceError as err:
        expected = ("error", err.type_name)
    scope = _laminax_scope()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(source, scope)
        actual = ("ok", scope["result"])
    except Exception as err:  # noqa: BLE001 - compared with JAX's exception type
        actual = ("error", type(err).__name__)
    return actual, expected


def _same(a, e):
    if isinstance(e, np.ndarray):
        np.testing.assert_allclose(np.asarray(a), e, rtol=1e-5, atol=1e-6)
    elif isinstance(e, (tuple, list)):
        assert len(a) == len(e)
        for ai, ei in zip(a, e, strict=True):
            _same(ai, ei)
    elif isinstance(e, dict):
        assert a.keys() == e.keys()
        for k in e:
            _same(a[k], e[k])
    else:
        assert a == e


def check(source: str):
    actual, expected = run_both(source)
    assert actual[0] == expected[0], (actual, expected)
    _same(actual[1], expected[1])


def out(expr: str) -> str:
    """`result` = (value, spec of its sharding) of `expr`."""
    return f"y = {expr}\nresult = (np.asarray(y), repr(y.sharding.spec))\n"


CASES = {
    # the seed's spelling, resolved against `with mesh:` at call time
    "seed_spelling": MESH
    + "f = pjit(lambda a: a * 2, in_axis_resources=P('x'), out_axis_resources=P('y'))\n"
    + "with mesh:\n    y = f(x)\n"
    + "result = (np.asarray(y), repr(y.sharding.spec), sorted((s.device.id, str(s.index)) for s in y.addressable_shards))",
    "none_means_replicated": MESH
    + "f = pjit(lambda a: a + 1, in_shardings=None, out_shardings=None)\nwith mesh:\n    "
    + out("f(x)").replace("\n", "\n    ", 1),
    "prefix_and_lists": MESH
    + "f = pjit(lambda t: (t['a'] @ t['b'], t['a'].sum()), in_shardings=[{'a': P('x'), 'b': P(None, 'y')}], out_shardings=(P('x', 'y'), None))\n"
    + "with mesh:\n    r = f({'a': x, 'b': x.T})\n"
    + "result = [(np.asarray(v), repr(v.sharding.spec)) for v in r]",
    "named_shardings_need_no_mesh": MESH
    + "f = pjit(lambda a: a.T, in_shardings=NamedSharding(mesh, P('x')), out_shardings=NamedSharding(mesh, P(None, 'x')))\n"
    + out("f(x)"),
    "static_and_donate": MESH
    + "f = pjit(lambda a, n: a * n, in_shardings=P('x'), out_shardings=P('x'), static_argnums=1, donate_argnums=0)\n"
    + "with mesh:\n    xa = device_put(x, NamedSharding(mesh, P('x')))\n    y = f(xa, 3)\n"
    + "result = (np.asarray(y), repr(y.sharding.spec), xa.is_deleted())",
    "mesh_read_at_call_time": MESH
    + "f = pjit(lambda a: a * 2, in_shardings=P('x'), out_shardings=P('x'))\n"
    + "other = Mesh(np.array(devices()).reshape(2, 4), ('x', 'y'))\n"
    + "with mesh:\n    y1 = f(x)\nwith other:\n    y2 = f(x)\n"
    + "result = (y1.sharding.mesh.axis_sizes, y2.sharding.mesh.axis_sizes, np.asarray(y2))",
    "grad_of_pjit": MESH
    + "f = pjit(lambda a: (a ** 2).sum(), in_shardings=P('x'), out_shardings=None)\n"
    + "with mesh:\n    g = jit(grad(f))(x)\nresult = np.asarray(g)",
    "jvp_of_pjit": MESH
    + "f = pjit(lambda a: jnp.sin(a), in_shardings=P('x'), out_shardings=P('x'))\n"
    + "with mesh:\n    p, t = jvp(f, (x,), (x,))\nresult = (np.asarray(p), np.asarray(t))",
    "vmap_of_pjit": MESH
    + "f = pjit(lambda a: a * 3, in_shardings=P('x'), out_shardings=P('x'))\n"
    + "with mesh:\n    y = vmap(f)(np.stack([x, x + 1]))\nresult = np.asarray(y)",
    "pjit_in_jit": MESH
    + "f = pjit(lambda a: a * 2, in_shardings=P('x'), out_shardings=P('y'))\n"
    + "with mesh:\n    y = jit(lambda a: f(a) + 1)(x)\nresult = np.asarray(y)",
    # a jit output only a constraint lays out is reported on the constraint's mesh
    "wsc_values_and_spec": MESH
    + out("jit(lambda a: wsc(a * 2, NamedSharding(mesh, P('y', 'x'))))(x)"),
    "wsc_then_reduce_spec": MESH
    + out("jit(lambda a: wsc(a * 2, NamedSharding(mesh, P('y', 'x'))).sum(0))(x)"),
    "wsc_bare_spec_under_mesh": MESH
    + "with mesh:\n    y = jit(lambda a: wsc(a + 1, P('x')))(x)\nresult = np.asarray(y)",
    "wsc_unconstrained": MESH
    + "y = jit(lambda a: wsc(a + 1, NamedSharding(mesh, P('x', P.UNCONSTRAINED))))(x)\nresult = np.asarray(y)",
    "wsc_eager_moves": MESH + out("wsc(x, NamedSharding(mesh, P('x')))"),
    "wsc_grad": MESH
    + "s = NamedSharding(mesh, P('x'))\nresult = np.asarray(jit(grad(lambda a: (wsc(a, s) ** 3).sum()))(x))",
    "wsc_vmap": MESH
    + "s = NamedSharding(mesh, P('x'))\nresult = np.asarray(jit(vmap(lambda a: wsc(a * a, s)))(np.stack([x, x])))",
    "wsc_scan": MESH
    + "s = NamedSharding(mesh, P('x'))\n"
    + "def body(c, _):\n    return wsc(c * 1.5, s), c.sum()\n"
    + "c, ys = jit(lambda a: scan(body, a, None, length=3))(x)\nresult = (np.asarray(c), np.asarray(ys))",
    "wsc_cond_and_loop": MESH
    + "s = NamedSharding(mesh, P('y'))\n"
    + "f = lambda a: cond(a.sum() > 0, lambda b: wsc(b * 2, s), lambda b: b, a)\n"
    + "g = lambda a: fori_loop(0, 3, lambda i, b: wsc(b + i, s), a)\n"
    + "result = (np.asarray(jit(f)(x)), np.asarray(jit(g)(x)))",
    "wsc_checkpoint": MESH
    + "s = NamedSharding(mesh, P('x'))\n"
    + "result = np.asarray(jit(grad(lambda a: checkpoint(lambda b: jnp.sin(wsc(b, s)))(a).sum()))(x))",
    "wsc_jaxpr": MESH
    + "s = NamedSharding(mesh, P('x'))\nresult = str(make_jaxpr(lambda a: wsc(a * 2, s) + 1)(x))",
    "wsc_jaxpr_vmap_spmd": MESH
    + "s = NamedSharding(mesh, P('x'))\nresult = str(make_jaxpr(vmap(lambda a: wsc(a, s), spmd_axis_name='y'))(np.stack([x, x])))",
    "wsc_jaxpr_bare_spec": MESH
    + "with mesh:\n    result = str(make_jaxpr(lambda a: wsc(a, P('x')))(x))",
    "wsc_lowered": MESH
    + "s = NamedSharding(mesh, P('x'))\ntext = jit(lambda a: wsc(a, s)).lower(x).as_text()\n"
    + "result = [l.strip() for l in text.splitlines() if 'sharding_constraint' in l]",
    "lowered_and_compiled_shardings": MESH
    + "f = pjit(lambda a: a.T, in_shardings=P('x'), out_shardings=P('y'))\n"
    + "with mesh:\n    lowered = f.lower(x)\n    compiled = lowered.compile()\n"
    + "result = (repr(compiled.input_shardings), repr(compiled.output_shardings))",
    "callback_array": MESH
    + "s = NamedSharding(mesh, P('y', 'x'))\n"
    + "y = make_array_from_callback((8, 8), s, lambda i: x[i])\n"
    + "result = (np.asarray(y), repr(y.sharding), sorted((sh.device.id, str(sh.index)) for sh in y.addressable_shards))",
    "single_device_arrays": MESH
    + "s = NamedSharding(mesh, P('x'))\n"
    + "pieces = [device_put(x[i], d) for d, i in s.addressable_devices_indices_map(x.shape).items()]\n"
    + "y = make_array_from_single_device_arrays(x.shape, s, pieces)\nresult = (np.asarray(y), repr(y.sharding.spec))",
    "process_local_data": MESH
    + out("make_array_from_process_local_data(NamedSharding(mesh, P(None, 'y')), x)"),
    "pjit_in_scan_and_cond": MESH
    + "f = pjit(lambda a: a * 1.5 + 1, in_shardings=P('x'), out_shardings=P('x'))\n"
    + "with mesh:\n"
    + "    c, _ = jit(lambda a: scan(lambda c, _: (f(c), None), a, None, length=3))(x)\n"
    + "    d = jit(lambda a: cond(a.sum() > 0, f, lambda b: b - 1, a))(x)\n"
    + "result = (np.asarray(c), np.asarray(d))",
    "pjit_nested_in_pjit": MESH
    + "inner = pjit(lambda a: a * 2, in_shardings=P('y'), out_shardings=P('y'))\n"
    + "outer = pjit(lambda a: inner(a) + 1, in_shardings=P('x'), out_shardings=P(None, 'x'))\n"
    + "with mesh:\n    " + out("outer(x)").replace("\n", "\n    ", 1),
    "device_put_spec_under_set_mesh": MESH
    + "with set_mesh(mesh):\n    t = device_put({'a': x, 'b': [x]}, {'a': P('x'), 'b': P(None, 'y')})\n"
    + "result = (repr(t['a'].sharding), repr(t['b'][0].sharding), np.asarray(t['b'][0]))",
    "jit_spec_under_set_mesh": MESH
    + "with set_mesh(mesh):\n    y = jit(lambda a: a + 1, in_shardings=P('x'), out_shardings=P('y'))(x)\n"
    + "result = (repr(y.sharding), np.asarray(y))",
    "error_device_put_spec_without_set_mesh": MESH + "with mesh:\n    device_put(x, P('x'))",
    # computations run on the context mesh: set_mesh's for jit and eager ops, the `with mesh:`
    # one for pjit (plain jit ignores `with mesh:`)
    "context_mesh_jit": MESH
    + "with set_mesh(mesh):\n    a = jit(lambda a: a * 2)(x)\n    b = jit(lambda a: a.sum())(x)\n"
    + "result = (repr(a.sharding), repr(b.sharding), np.asarray(a), np.asarray(b))",
    "context_mesh_eager": MESH
    + "with set_mesh(mesh):\n    " + out("jnp.ones(4) * 2").replace("\n", "\n    ", 1),
    "context_mesh_pjit": MESH
    + "with mesh:\n    a = pjit(lambda a: a * 2)(x)\n    b = jit(lambda a: a * 2)(x)\n"
    + "result = (repr(a.sharding), repr(b.sharding))",
    "error_context_mesh_committed_elsewhere": MESH
    + "y = device_put(x, devices()[3])\nwith mesh:\n    pjit(lambda a: a * 2)(y)",
    # the jit equation a pjit call becomes: its shardings and inner jaxpr (inner jaxprs print
    # with other variable names, so the params are compared one by one)
    "pjit_jaxpr": MESH
    + "f = pjit(lambda a, b: (a @ b, a.sum()), in_shardings=(P('x'), None), out_shardings=(P(None, 'y'), P()))\n"
    + "with mesh:\n    closed = make_jaxpr(f)(x, x)\n"
    + "(eqn,) = closed.jaxpr.eqns\n"
    + "result = (eqn.primitive.name, repr(eqn.params['in_shardings']), repr(eqn.params['out_shardings']), str(eqn.params['jaxpr']), eqn.params['name'])",
    # under grad the forward call keeps pjit's in_shardings and the backward call gives the
    # cotangent the input's sharding
    "pjit_jaxpr_under_grad": MESH
    + "f = pjit(lambda a: jnp.sin(a).sum(), in_shardings=P('x'), out_shardings=None)\n"
    + "with mesh:\n    closed = make_jaxpr(grad(f))(x)\n    g = grad(f)(x)\n"
    + "calls = [e for e in closed.jaxpr.eqns if e.primitive.name == 'jit']\n"
    + "result = (repr(calls[0].params['in_shardings']), repr(calls[-1].params['out_shardings']), np.asarray(g))",
    # the jit equations of pjit programs under jvp, linearize and grad, compared by structure
    # (equations, how their operands are wired, shardings, context mesh, inner equations):
    # JAX's split into a known call returning residuals and a staged call taking them
    "pjit_jaxpr_params": MESH + SUMMARY
    + "with mesh:\n    result = summary(make_jaxpr(F)(x))",
    "pjit_jvp_jaxpr": MESH + SUMMARY
    + "with mesh:\n    result = summary(make_jaxpr(lambda a: jvp(F, (a,), (a,)))(x))",
    "pjit_linearize_jaxpr": MESH + SUMMARY
    + "with mesh:\n    result = summary(make_jaxpr(lambda a: linearize(F, a)[1](a))(x))",
    "pjit_grad_jaxpr_residuals": MESH + SUMMARY
    + "g = grad(lambda a: FN(a).sum())\nresult = (summary(make_jaxpr(g)(x)), np.asarray(g(x)))",
    "pjit_grad_jaxpr_forwarded_residual": MESH + SUMMARY
    + "g = grad(lambda a, b: FN2(a, b).sum())\n"
    + "result = (summary(make_jaxpr(g)(x, x + 1)), np.asarray(g(x, x + 1)))",
    "jit_ctx_mesh": MESH + SUMMARY
    + "h = jit(lambda a: a * 2)\nwith mesh:\n    under_with = summary(make_jaxpr(h)(x))\n"
    + "with set_mesh(mesh):\n    under_set = summary(make_jaxpr(h)(x))\n"
    + "result = (under_with, under_set)",
    # errors
    "error_static_argnums_past_args": MESH + "with mesh:\n    pjit(lambda a: a, in_shardings=None, static_argnums=3)(x)",
    "error_donate_argnums_past_args": MESH + "with mesh:\n    pjit(lambda a: a, in_shardings=None, donate_argnums=2)(x)",
    "error_not_a_spec": MESH + "pjit(lambda a: a, in_shardings=('x',))",
    "error_no_mesh": MESH + "pjit(lambda a: a, in_shardings=P('x'))(x)",
    "error_jit_spec_no_mesh": MESH + "jit(lambda a: a, in_shardings=P('x'))(x)",
    "error_uneven": MESH + "with mesh:\n    pjit(lambda a: a, in_shardings=P('x'))(np.ones(6))",
    "error_rank": MESH + "with mesh:\n    pjit(lambda a: a, in_shardings=P('x', 'y'))(np.ones(8))",
    "error_duplicate": MESH + "pjit(lambda a: a, in_shardings=P('x', 'x'))",
    "error_unknown_axis": MESH + "with mesh:\n    pjit(lambda a: a, in_shardings=P('z'))(x)",
    "error_wsc_no_mesh": MESH + "wsc(x, P('x'))",
    "error_wsc_none": MESH + "wsc(x, None)",
    "error_wsc_string": MESH + "wsc(x, 'x')",
    "error_wsc_rank": MESH + "wsc(np.ones(4), NamedSharding(mesh, P('x', 'y')))",
    "error_device_and_shardings": MESH + "pjit(lambda a: a, in_shardings=P('x'), device=devices()[0])",
    "error_incompatible_devices": MESH
    + "a = device_put(x, NamedSharding(Mesh(np.array(devices()[:4]), ('x',)), P('x')))\n"
    + "b = device_put(x, NamedSharding(mesh, P('x')))\njit(lambda p, q: p + q)(a, b)",
    "error_committed_outside_mesh": MESH
    + "a = device_put(x, NamedSharding(Mesh(np.array(devices()[:4]), ('x',)), P('x')))\n"
    + "with mesh:\n    pjit(lambda p: p * 2, in_shardings=P('x'))(a)",
    "error_committed_other_layout": MESH
    + "a = device_put(x, NamedSharding(mesh, P('y')))\n"
    + "with mesh:\n    pjit(lambda p: p * 2, in_shardings=P('x'))(a)",
    "error_empty_mesh_sharding": MESH
    + "empty = Mesh(np.empty((), dtype=object), ())\n"
    + "pjit(lambda a: a, in_shardings=NamedSharding(empty, P()))(x)",
    "error_empty_mesh_constraint": MESH
    + "empty = Mesh(np.empty((), dtype=object), ())\nwsc(x, NamedSharding(empty, P()))",
    "error_callback_shape": MESH
    + "make_array_from_callback((8, 8), NamedSharding(mesh, P('x')), lambda i: np.ones(3))",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_pjit_matches_jax(name):
    check(CASES[name])


def test_old_names_warn_once_and_both_names_clash():
    import laminax_pjit._pjit as pjit_module

    pjit_module._warned_old_names = False
    with pytest.warns(DeprecationWarning, match="in_axis_resources"):
        lp.pjit(lambda a: a, in_axis_resources=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lp.pjit(lambda a: a, out_axis_resources=None)
    with pytest.raises(ValueError, match="not both"):
        lp.pjit(lambda a: a, in_shardings=None, in_axis_resources=None)


@requires_jax
def test_gspmd_constraint_lowering_matches_jax():
    source = (
        "jax.config.update('jax_use_shardy_partitioner', False)\n"
        "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ('x', 'y'))\n"
        "s = NamedSharding(mesh, P('y', 'x'))\n"
        "text = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, s)).lower(np.ones((8, 8), np.float32)).as_text()\n"
        "result = [l.split('=', 1)[1].strip() for l in text.splitlines() if '@Sharding' in l]"
    )
    expected = run_jax(source, devices=8, fresh=True)
    from laminax_dispatch.internal import use_shardy_partitioner

    mesh = lp.Mesh(np.array(ld.devices()).reshape(4, 2), ("x", "y"))
    s = lp.NamedSharding(mesh, lp.P("y", "x"))
    with use_shardy_partitioner(False):
        text = ld.jit(lambda a: lp.with_sharding_constraint(a * 2, s)).lower(
            np.ones((8, 8), np.float32)
        ).as_text()
    actual = [l.split("=", 1)[1].strip() for l in text.splitlines() if "@Sharding" in l]
    assert expected and actual == expected
