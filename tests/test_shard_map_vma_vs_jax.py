"""Varying-manual-axes types in shard_map bodies (`check_vma=True`) against real JAX 0.10.2 on
8 CPU devices: the printed jaxprs (`f32[2]{V:x}`, the `pvary` / `psum_invariant` equations
JAX inserts), `jax.typeof` inside a body, the TypeErrors of loops and conds whose types
change, and gradients through typed bodies (the transposes of pvary and psum_invariant)."""

import pytest
from jaxref import requires_jax
from test_shard_map_vs_jax import _assert_same, _sorted_sets, run_both

SETUP = "a = np.arange(8.0, dtype=np.float32)\nb = np.ones(2, np.float32)\n"

# bodies of shard_map(f, mesh=mesh, in_specs=(P('x'), P()), out_specs=P('x')) of (a, b)
BODIES = {
    "binary_op_pvary": "a + b",
    "literal_pvary": "a * 2.0 + jnp.sin(b)",
    "psum_of_varying": "lax.psum(a + b, 'x')",
    "psum_of_invariant": "lax.psum(b, 'x')",
    "psum_two_axes_invariant": "lax.psum(b, ('x', 'y'))",
    "psum_other_axis": "lax.psum(a, 'y')",
    "pmax": "lax.pmax(a, 'x') + lax.pmin(b, 'x')",
    "pmean": "lax.pmean(a, 'x') * lax.pmean(b, 'x')",
    "all_gather": "lax.all_gather(b, 'x', tiled=True)[:2] + lax.all_gather(a, 'x')[0]",
    "ppermute": "lax.ppermute(b, 'x', [(i, (i + 1) % 4) for i in range(4)])",
    "axis_index": "a + lax.axis_index('x')",
    "zeros_like": "jnp.zeros_like(a)",
    "ones_like_invariant": "jnp.ones_like(b)",
    "full_like": "jnp.full_like(a, 3.0) + lax.full_like(a, 1.0)",
    "pcast": "lax.pcast(b, 'x', to='varying') * 2",
    "jit_inside": "jax.jit(lambda u, v: lax.psum(u, 'x') + v)(a, b)",
    "cond_invariant_branches": "lax.cond(a[0] > 0, lambda: b, lambda: b * 2)",
    "fori_varying_carry": "lax.fori_loop(0, 3, lambda i, c: c + a, jnp.zeros_like(a))",
    "scan_over_varying": "lax.scan(lambda c, x: (c + x, c), jnp.zeros_like(a[:1]), "
                         "a[:, None])[1][:, 0]",
    "long_body": "jnp.sin(jnp.cos(jnp.tanh(a * b + 1.0) - b) * 3.0 + a) / (b + 2.0) - a * a",
}


def _program(body, check_vma=True, out_spec="P('x')"):
    return (SETUP + f"f = shard_map(lambda a, b: {body}, mesh=mesh, in_specs=(P('x'), P()), "
            f"out_specs={out_spec}, check_vma={check_vma})\n")


@requires_jax
@pytest.mark.parametrize("name", sorted(BODIES))
def test_typed_jaxprs_match_jax(name):
    got, expected = run_both(_program(BODIES[name]) + "result = str(jax.make_jaxpr(f)(a, b))")
    assert isinstance(expected, str), expected
    assert _sorted_sets(got) == _sorted_sets(expected)


@requires_jax
@pytest.mark.parametrize("name", ["binary_op_pvary", "psum_of_varying", "pmean", "all_gather",
                                  "fori_varying_carry", "jit_inside", "full_like"])
def test_typed_values_and_gradients_match_jax(name):
    # with types the transpose psums where pvary was inserted (no per-device corrections)
    got, expected = run_both(_program(BODIES[name]) + (
        "loss = lambda a, b: (f(a, b) * jnp.arange(1.0, 9.0)).sum()\n"
        "result = [np.asarray(f(a, b)), *[np.asarray(g) for g in "
        "jax.grad(loss, argnums=(0, 1))(a, b)],\n"
        "          *[np.asarray(g) for g in jax.jit(jax.grad(loss, argnums=(0, 1)))(a, b)]]"))
    _assert_same(got, expected)


@requires_jax
def test_grad_jaxpr_residuals_follow_their_types():
    # the known shard_map returns a residual varying over x alone: its out_spec is P('x')
    source = _program("lax.psum(a * b, 'x') + a[0] * 2", out_spec="P()") + (
        "text = str(jax.make_jaxpr(jax.grad(lambda b: f(a, b).sum()))(b))\n"
        "result = [line.strip() for line in text.splitlines() if 'specs=' in line]")
    got, expected = run_both(source)
    assert got == expected


@requires_jax
def test_typeof_inside_a_body():
    source = SETUP + (
        "seen = []\n"
        "def body(a, b):\n"
        "    c = lax.psum(a, 'x')\n"
        "    for v in (a, b, c, a + b, lax.axis_index('y')):\n"
        "        t = jax.typeof(v)\n"
        "        seen.append((str(t), repr(t), repr(t.mat), sorted(t.manual_axis_type.varying)))\n"
        "    return c\n"
        "jax.make_jaxpr(shard_map(body, mesh=mesh, in_specs=(P('x'), P()), out_specs=P()))(a, b)\n"
        "g = shard_map(lambda a, b: (a, b), mesh=mesh, in_specs=(P('x'), P()),\n"
        "              out_specs=(P('x'), P()), check_vma=False)\n"
        "seen.append(str(jax.make_jaxpr(g)(a, b)))\n"
        "result = seen\n")
    got, expected = run_both(source)
    assert got == expected


ERRORS = {
    # a loop carry or a cond branch whose manual-axis type changes (JAX's TypeError)
    "scan_carry": "lax.scan(lambda c, x: (c + x, c), jnp.zeros(()), a)[0][None]",
    "while_carry": "lax.while_loop(lambda c: c[0] < 10., lambda c: c + a, b)",
    "fori_carry": "lax.fori_loop(0, 3, lambda i, c: c + a, b)",
    "cond_branches": "lax.cond(a[0] > 0, lambda: a, lambda: b)",
    # psum over axes the operand varies over only in part
    "psum_partly_varying": "lax.psum(a, ('x', 'y'))",
    "pcast_bad_to": "lax.pcast(b, 'x', to='sideways')",
    "pcast_already_varying": "lax.pcast(a, 'x', to='varying')",
    "pcast_set": "lax.pcast(b, {'x'}, to='varying')",
    "pbroadcast_invariant": "lax.pbroadcast(b, 'x', 0)",
    # the fix JAX's message suggests makes the carry vary from the start
    "scan_carry_fixed": "lax.scan(lambda c, x: (c + x, c), lax.pcast(b[0] * 0, 'x', "
                        "to='varying'), a)[0][None]",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_type_errors_match_jax(name):
    got, expected = run_both(_program(ERRORS[name]) + "result = str(jax.make_jaxpr(f)(a, b))")
    if isinstance(expected, str):
        assert _sorted_sets(got) == _sorted_sets(expected)
    else:
        assert got == expected


@requires_jax
def test_unchecked_bodies_still_run_the_loops():
    # check_vma=False keeps no types: the carry JAX refuses above runs, with the same values
    source = _program(ERRORS["fori_carry"], check_vma=False) + "result = np.asarray(f(a, b))"
    _assert_same(*run_both(source))


@requires_jax
def test_manual_axis_type_class():
    source = (
        "M = jax.sharding.ManualAxisType\n"
        "m = M(varying=frozenset({'x'}))\n"
        "result = [repr(m), repr(M()), m == M(varying={'x'}), m == M(), M().empty, m.empty,\n"
        "          repr(m.update(reduced=frozenset({'y'}))), sorted(m.varying)]\n"
        "try:\n"
        "    M(varying={'x'}, unreduced={'x'})\n"
        "except ValueError as err:\n"
        "    result.append(type(err).__name__)\n")
    got, expected = run_both(source)
    assert got == expected


TRANSFORMED = {
    # vmap over a typed body (psum_invariant batched per example), jvp, linearize, and the
    # gradients of the data-moving collectives
    "vmap_jvp": "f = shard_map(lambda a, b: lax.psum(jnp.sin(a) * b, 'x'), mesh=mesh,\n"
                "              in_specs=(P('x'), P()), out_specs=P())\n"
                "result = [np.asarray(jax.vmap(f, in_axes=(None, 0))(a, np.stack([b, 2 * b]))),\n"
                "          *jax.jvp(f, (a, b), (a, b)),\n"
                "          str(jax.make_jaxpr(lambda a, b: jax.jvp(f, (a, b), (a, b)))(a, b))]",
    "exchange_grads": "def body(a, b):\n"
                      "    c = lax.ppermute(a * b, 'x', [(i, (i + 1) % 4) for i in range(4)])\n"
                      "    d = lax.all_to_all(jnp.concatenate([c, c, c, c]), 'x', 0, 0, tiled=True)\n"
                      "    e = lax.psum_scatter(jnp.concatenate([d, d]), 'x', tiled=True)\n"
                      "    return lax.all_gather(e, 'x', tiled=True)\n"
                      "f = shard_map(body, mesh=mesh, in_specs=(P('x'), P()), out_specs=P('x'))\n"
                      "result = [f(a, b), *jax.grad(lambda a, b: (f(a, b) * np.arange(64.0)).sum(),\n"
                      "                             argnums=(0, 1))(a, b)]",
    "linearize_cond": "f = shard_map(lambda a, b: lax.cond(b[0] > 0, lambda: lax.pcast(\n"
                      "    b, 'x', to='varying') * a, lambda: a), mesh=mesh, in_specs=(P('x'), P()),\n"
                      "    out_specs=P('x'))\n"
                      "y, lin = jax.linearize(f, a, b)\n"
                      "result = [y, lin(a, b), *jax.grad(lambda a, b: f(a, b).sum(),\n"
                      "                                  argnums=(0, 1))(a, b)]",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_typed_bodies_under_transformations_match_jax(name):
    source = SETUP + "b = np.arange(2.0, dtype=np.float32) + 1\n" + TRANSFORMED[name] + (
        "\nresult = [r if isinstance(r, str) else np.asarray(r) for r in result]")
    got, expected = run_both(source)
    if isinstance(expected, list) and isinstance(expected[-1], str):
        assert _sorted_sets(got[-1]) == _sorted_sets(expected[-1])
        got, expected = got[:-1], expected[:-1]
    _assert_same(got, expected)
