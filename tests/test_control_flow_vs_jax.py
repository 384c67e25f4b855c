"""Control flow and checkpoint against real JAX 0.10.2: cond, switch, while_loop, fori_loop,
scan, map and checkpoint (with its policies) under grad, jvp, vmap, hessian and nested in each
other.

Each program `g` is written once, in source form, against names both libraries have. It runs
under real JAX and under laminax_core; the tests compare the values, the jaxpr's output avals and
equation count, and, for the programs marked `exact`, the printed jaxpr character for character.
"""


import numpy as np
import pytest
from jaxpr_programs import ProgramSuite, normalize
from jaxref import requires_jax

S = np.float32(0.7)
F3 = np.array([0.5, -1.0, 2.0], np.float32)
M23 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
M33 = (np.arange(9, dtype=np.float32).reshape(3, 3) - 4) / 8

# (name, source defining g, args, exact printed jaxpr expected)
CASES = [
    (
        "cond_closure",
        "g = lambda x, y: lax.cond(x > 0, lambda v: v * y, lambda v: v + y, x)",
        (S, np.float32(2.0)),
        True,
    ),
    (
        "grad_cond",
        "g = grad(lambda x: lax.cond(x > 0, lax.sin, lax.cos, x))",
        (S,),
        True,
    ),
    (
        "grad_cond_closure",
        "g = grad(lambda x, y: lax.cond(x > 0, lambda v: lax.sin(v) * y, lambda v: v + y, "
        "x), argnums=(0, 1))",
        (S, np.float32(2.0)),
        True,
    ),
    (
        "grad_cond_vector",
        "g = grad(lambda x: lax.cond(x.sum() > 0, lambda v: (lax.sin(v) * v).sum(), lambda "
        "v: lax.cos(v).sum(), x))",
        (F3,),
        True,
    ),
    (
        "grad_cond_mixed_shapes",
        "g = grad(lambda x: lax.cond(x.sum() > 0, lambda v: lax.exp(v).sum(), lambda v: (v * "
        "v.sum()).sum(), x))",
        (F3,),
        True,
    ),
    (
        "jvp_cond",
        "g = lambda x: jvp(lambda v: lax.cond(v > 0, lax.sin, lax.cos, v), (x,), "
        "(np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "vmap_cond_unbatched_pred",
        "g = vmap(lambda x: lax.cond(True, lax.sin, lax.cos, x))",
        (F3,),
        True,
    ),
    (
        "vmap_cond_matrix",
        "g = vmap(lambda x: lax.cond(x.sum() > 0, lambda v: v * 2.0, lax.sin, x))",
        (M23,),
        True,
    ),
    (
        "vmap_cond_closure",
        "g = lambda x, y: vmap(lambda v: lax.cond(v > 0, lambda u: u * y, lambda u: u - y, v))(x)",
        (F3, np.float32(3.0)),
        True,
    ),
    (
        "grad_vmap_cond",
        "g = grad(lambda x: vmap(lambda v: lax.cond(v > 0, lax.sin, lax.cos, v))(x).sum())",
        (F3,),
        True,
    ),
    (
        "vmap_grad_cond",
        "g = vmap(grad(lambda x: lax.cond(x > 0, lax.sin, lax.cos, x)))",
        (F3,),
        True,
    ),
    (
        "vmap_switch",
        "g = lambda x, i: vmap(lambda v, j: lax.switch(j, [lax.sin, lax.cos, lax.exp], v))(x, i)",
        (F3, np.array([0, 2, 1], np.int32)),
        True,
    ),
    (
        "grad_switch_tuple",
        "g = grad(lambda x, i: lax.switch(i, [lambda v: (v, v * 2.0), lambda v: (lax.sin(v), "
        "v), lambda v: (v * v, lax.exp(v))], x)[0] * 3.0)",
        (S, 1),
        False,
    ),
    (
        "hessian_cond",
        "g = hessian(lambda x: lax.cond(x > 0, lambda v: lax.sin(v) * v, lax.cos, x))",
        (S,),
        False,
    ),
    (
        "nested_cond",
        "g = lambda x: lax.cond(x > 0, lambda v: lax.cond(v > 1, lax.sin, lax.cos, v), "
        "lambda v: -v, x)",
        (S,),
        True,
    ),
    (
        "grad_nested_cond",
        "g = grad(lambda x: lax.cond(x > 0, lambda v: lax.cond(v > 1, lax.sin, lax.cos, v), "
        "lambda v: -v * v, x))",
        (S,),
        False,
    ),
    (
        "while_tuple",
        "g = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))",
        (S,),
        True,
    ),
    (
        "jvp_while",
        "g = lambda x: jvp(lambda v: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, "
        "v), (x,), (np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "vmap_while_batched_body",
        "g = vmap(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * "
        "1.5), (0, x)))",
        (F3,),
        True,
    ),
    (
        "fori_traced",
        "g = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x)",
        (S, 3),
        True,
    ),
    (
        "grad_fori",
        "g = grad(lambda x: lax.fori_loop(0, 3, lambda i, c: lax.sin(c) * x, x))",
        (S,),
        False,
    ),
    (
        "jvp_fori",
        "g = lambda x: jvp(lambda v: lax.fori_loop(0, 4, lambda i, c: c * v, v), (x,), "
        "(np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "vmap_fori",
        "g = vmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + x, x))",
        (F3,),
        True,
    ),
    (
        "scan_reverse",
        "g = lambda x: lax.scan(lambda c, y: (c * y, c + y), 1.0, x, reverse=True)",
        (F3,),
        True,
    ),
    (
        "scan_no_xs",
        "g = lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=3)",
        (S,),
        True,
    ),
    (
        "grad_scan_xs",
        "g = grad(lambda x: lax.scan(lambda c, y: (c * lax.sin(y), c), 1.0, x)[0])",
        (F3,),
        False,
    ),
    (
        "grad_scan_consts",
        "g = grad(lambda w, x: lax.scan(lambda c, y: (lax.tanh(w * c + y), c), 0.1, x)[0], "
        "argnums=(0, 1))",
        (S, F3),
        False,
    ),
    (
        "jvp_scan_carry",
        "g = lambda x: jvp(lambda v: lax.scan(lambda c, y: (c * y, c), v, x)[0], (x[0],), "
        "(np.float32(1.0),))",
        (F3,),
        True,
    ),
    (
        "vmap_scan_consts",
        "g = lambda w, x: vmap(lambda v: lax.scan(lambda c, y: (c * w + y, c), 0.0, v)[0])(x)",
        (S, M23),
        True,
    ),
    (
        "grad_scan_matrix",
        "g = grad(lambda w, xs: lax.scan(lambda h, x: (lax.tanh(w @ h + x), h.sum()), "
        "np.zeros(3, np.float32), xs)[1].sum())",
        (M33, np.stack([F3, F3 * 2])),
        False,
    ),
    (
        "map_grad",
        "g = grad(lambda x: lax.map(lambda v: lax.sin(v) * v, x).sum())",
        (F3,),
        True,
    ),
    (
        "vmap_map",
        "g = vmap(lambda x: lax.map(lax.cos, x))",
        (M23,),
        True,
    ),
    (
        "grad_scan_cond",
        "g = grad(lambda x: lax.scan(lambda c, y: (lax.cond(y > 0, lambda v: v * y, lambda "
        "v: v + y, c), c), 1.0, x)[0])",
        (F3,),
        False,
    ),
    (
        "grad_cond_scan",
        "g = grad(lambda x, p: lax.cond(p, lambda v: lax.scan(lambda c, y: (c * y, c), 1.0, "
        "v)[0], lambda v: v.sum(), x))",
        (F3, True),
        False,
    ),
    (
        "grad_checkpoint_nothing",
        "g = grad(checkpoint(lambda w, x: lax.tanh(w @ x).sum(), "
        "policy=checkpoint_policies.nothing_saveable))",
        (M23, F3),
        False,
    ),
    (
        "grad_checkpoint_everything",
        "g = grad(checkpoint(lambda w, x: lax.tanh(w @ x).sum(), "
        "policy=checkpoint_policies.everything_saveable))",
        (M23, F3),
        False,
    ),
    (
        "grad_checkpoint_no_batch",
        "g = grad(checkpoint(lambda w, x: lax.tanh(w @ x).sum(), "
        "policy=checkpoint_policies.dots_with_no_batch_dims_saveable))",
        (M23, F3),
        False,
    ),
    (
        "grad_checkpoint_two_args",
        "g = grad(checkpoint(lambda x, y: lax.sin(x) * lax.cos(y)), argnums=(0, 1))",
        (S, np.float32(0.30000001192092896)),
        True,
    ),
    (
        "grad_checkpoint_argnum1",
        "g = grad(checkpoint(lambda x, y: lax.sin(x * y) * x), argnums=1)",
        (S, np.float32(0.30000001192092896)),
        True,
    ),
    (
        "jvp_checkpoint",
        "g = lambda x: jvp(checkpoint(lambda v: lax.sin(lax.sin(v))), (x,), (np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "vmap_checkpoint",
        "g = vmap(checkpoint(lambda v: lax.sin(lax.cos(v))))",
        (F3,),
        True,
    ),
    (
        "vmap_grad_checkpoint",
        "g = vmap(grad(checkpoint(lambda v: lax.sin(lax.cos(v)))))",
        (F3,),
        True,
    ),
    (
        "hessian_checkpoint",
        "g = hessian(checkpoint(lambda v: lax.sin(v) * v))",
        (S,),
        False,
    ),
    (
        "grad_checkpoint_scan",
        "g = grad(lambda x: lax.scan(checkpoint(lambda c, y: (lax.sin(c * y), c)), 1.0, x)[0])",
        (F3,),
        True,
    ),
    (
        "grad_scan_in_checkpoint",
        "g = grad(checkpoint(lambda x: lax.scan(lambda c, y: (lax.sin(c * y), c), 1.0, x)[0]))",
        (F3,),
        False,
    ),
    (
        "grad_checkpoint_cond",
        "g = grad(checkpoint(lambda x: lax.cond(x > 0, lax.sin, lax.cos, lax.sin(x))))",
        (S,),
        False,
    ),
    (
        "grad_nested_checkpoint",
        "g = grad(checkpoint(lambda x: checkpoint(lax.sin)(lax.sin(x)) * x))",
        (S,),
        False,
    ),
    (
        "grad_checkpoint_prevent_cse",
        "g = grad(checkpoint(lambda x: lax.sin(lax.sin(x)), prevent_cse=False))",
        (S,),
        True,
    ),
    (
        "grad_checkpoint_static",
        "g = grad(checkpoint(lambda x, n: x ** n, static_argnums=(1,)))",
        (S, 3),
        True,
    ),
    (
        "cond_pytree",
        "g = lambda x: lax.cond(x[0] > 0, lambda p: {'a': p[0] * 2.0, 'b': (p[1], p[0])}, "
        "lambda p: {'a': p[1], 'b': (p[0], p[1] + 1.0)}, (x[0], x[1]))",
        (F3,),
        True,
    ),
    (
        "grad_cond_pytree",
        "g = grad(lambda x: lax.cond(x[0] > 0, lambda p: p['u'] * p['v'], lambda p: p['u'] - "
        "p['v'], {'u': x[0], 'v': x[1]}))",
        (F3,),
        True,
    ),
    (
        "cond_int_operand",
        "g = lambda x, n: lax.cond(x > 0, lambda v, k: v * k, lambda v, k: v - k, x, n)",
        (S, np.int32(3)),
        True,
    ),
    (
        "grad_cond_int_operand",
        "g = grad(lambda x, n: lax.cond(x > 0, lambda v, k: v * k, lambda v, k: v - k, x, n))",
        (S, np.int32(3)),
        True,
    ),
    (
        "switch_traced_int_index",
        "g = lambda x, i: lax.switch(i, [lax.sin, lax.cos], x)",
        (S, np.int32(1)),
        True,
    ),
    (
        "grad_switch_unused_branch_input",
        "g = grad(lambda x, y, i: lax.switch(i, [lambda a, b: a * b, lambda a, b: a, lambda "
        "a, b: lax.sin(b)], x, y), argnums=(0, 1))",
        (S, np.float32(1.5), 1),
        True,
    ),
    (
        "jvp_switch",
        "g = lambda x, i: jvp(lambda v: lax.switch(i, [lax.sin, lax.cos, lambda u: u * u], "
        "v), (x,), (np.float32(2.0),))",
        (S, 2),
        True,
    ),
    (
        "vmap_switch_unbatched_index",
        "g = lambda x: vmap(lambda v: lax.switch(1, [lax.sin, lax.cos], v))(x)",
        (F3,),
        True,
    ),
    (
        "vmap_cond_batched_operand_only",
        "g = lambda x, p: vmap(lambda v: lax.cond(p > 0, lax.sin, lax.cos, v))(x)",
        (F3, np.float32(1.0)),
        True,
    ),
    (
        "while_closure",
        "g = lambda x, y: lax.while_loop(lambda c: c < y, lambda c: c * 2.0 + x, x)",
        (S, np.float32(9.0)),
        True,
    ),
    (
        "vmap_while_batched_cond",
        "g = vmap(lambda x: lax.while_loop(lambda c: c < 5.0, lambda c: c + 1.5, x))",
        (F3,),
        True,
    ),
    (
        "vmap_while_closure",
        "g = lambda x, y: vmap(lambda v: lax.while_loop(lambda c: c < y, lambda c: c + v, v))(x)",
        (np.abs(F3) + 0.5, np.float32(4.0)),
        True,
    ),
    (
        "jvp_while_pytree",
        "g = lambda x: jvp(lambda v: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, "
        "c[1] * v, c[2] + c[1]), (0, v, v)), (x,), (np.float32(1.0),))",
        (S,),
        False,
    ),
    (
        "fori_unroll_body_index",
        "g = lambda x: lax.fori_loop(1, 4, lambda i, c: c * i, x)",
        (S,),
        True,
    ),
    (
        "grad_fori_pytree",
        "g = grad(lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0] * c[1], c[1] + 1.0), (x, "
        "x))[0])",
        (S,),
        True,
    ),
    (
        "scan_pytree",
        "g = lambda x: lax.scan(lambda c, y: ((c[0] + y['a'], c[1] * 2.0), y['a'] * c[1]), "
        "(0.0, 1.0), {'a': x})",
        (F3,),
        True,
    ),
    (
        "grad_scan_pytree",
        "g = grad(lambda x: lax.scan(lambda c, y: ((c[0] + y * c[1], c[1] * y), c[0]), (0.0, "
        "1.0), x)[0][0])",
        (F3,),
        False,
    ),
    (
        "scan_unroll",
        "g = lambda x: lax.scan(lambda c, y: (c + y, c), 0.0, x, unroll=2)",
        (F3,),
        True,
    ),
    (
        "jvp_scan_xs",
        "g = lambda x: jvp(lambda v: lax.scan(lambda c, y: (c + lax.sin(y), c), 0.0, v), "
        "(x,), (np.ones(3, np.float32),))",
        (F3,),
        False,
    ),
    (
        "vmap_scan_unbatched_xs",
        "g = lambda c0, xs: vmap(lambda c: lax.scan(lambda c, y: (c * y, c), c, xs))(c0)",
        (F3, F3),
        True,
    ),
    (
        "vmap_grad_scan",
        "g = vmap(grad(lambda x: lax.scan(lambda c, y: (c * lax.sin(y), c), 1.0, x)[0]))",
        (M23,),
        False,
    ),
    (
        "hessian_scan",
        "g = hessian(lambda x: lax.scan(lambda c, y: (c * y, c), 1.0, x)[0])",
        (F3,),
        False,
    ),
    (
        "grad_map",
        "g = grad(lambda w, x: lax.map(lambda v: (v * w).sum(), x).sum())",
        (F3, M23),
        True,
    ),
    (
        "grad_while_cond_inside",
        "g = lambda x: jvp(lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, "
        "lax.cond(c[1] > 1.0, lambda u: u * 0.5, lambda u: u * 3.0, c[1])), (0, v))[1], "
        "(x,), (np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "grad_checkpoint_policy_scan",
        "g = grad(lambda w, xs: lax.scan(checkpoint(lambda h, x: (lax.tanh(w @ h + x), "
        "h.sum()), policy=checkpoint_policies.dots_saveable), np.zeros(3, np.float32), "
        "xs)[1].sum())",
        (M33, np.stack([F3, F3 * 2])),
        False,
    ),
    (
        "grad_checkpoint_pytree",
        "g = grad(checkpoint(lambda p: lax.sin(p['a']) * p['b']))",
        ({"a": S, "b": np.float32(2.0)},),
        True,
    ),
    (
        "grad_checkpoint_multiple_outputs",
        "g = grad(lambda x: sum(checkpoint(lambda v: (lax.sin(v), lax.cos(v) * v))(x)))",
        (S,),
        True,
    ),
    (
        "grad_checkpoint_closure",
        "g = lambda x, y: grad(checkpoint(lambda v: lax.sin(v) * y))(x)",
        (S, np.float32(3.0)),
        True,
    ),
    (
        "jvp_grad_checkpoint",
        "g = lambda x: jvp(grad(checkpoint(lambda v: lax.sin(v) * v)), (x,), (np.float32(1.0),))",
        (S,),
        False,
    ),
    (
        "grad_checkpoint_while",
        "g = lambda x: jvp(checkpoint(lambda v: lax.while_loop(lambda c: c < 5.0, lambda c: "
        "c * 2.0, v)), (x,), (np.float32(1.0),))",
        (S,),
        True,
    ),
    (
        "cond_forwarded_output",
        "g = lambda x: lax.cond(x > 0, lambda y: (lax.sin(y), y), lambda y: (y, y), x)",
        (S,),
        True,
    ),
    (
        "switch_forwarded_output",
        "g = lambda x, i: lax.switch(i, [lambda y: (y, y * 2.0), lambda y: (y, lax.sin(y))], x)",
        (S, np.int32(1)),
        True,
    ),
    (
        "grad_cond_forwarded_output",
        "g = grad(lambda x: sum(lax.cond(x > 0, lambda y: (lax.sin(y), y), lambda y: (y * 3.0, "
        "y), x)))",
        (S,),
        True,
    ),
    (
        "scan_forwards_carry_and_xs",
        "g = lambda x: lax.scan(lambda c, y: ((lax.sin(c), c)[1], y), x, np.ones(2, np.float32))",
        (S,),
        True,
    ),
    (
        "scan_invariant_carry",
        "g = lambda x: lax.scan(lambda c, y: ((c[0] + y, c[1]), y * 2.0), (x, x), "
        "np.ones(2, np.float32))",
        (S,),
        True,
    ),
    (
        "while_invariant_carry",
        "g = lambda x, y: lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + c[1], c[1]), "
        "(x, y))",
        (S, np.float32(0.5)),
        True,
    ),
    (
        "vmap_while_invariant_carry",
        "g = vmap(lambda x, y: lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + c[1], "
        "c[1]), (x, y)), (0, None))",
        (F3, np.float32(0.5)),
        True,
    ),
]

# Programs whose jaxprs differ from JAX's in equation count, and why (values still compared);
# empty since every program's count matches: add an entry only with the reason.
COUNT_DIFFERENCES: dict[str, str] = {}

SUITE = ProgramSuite(
    CASES, names=("grad", "jvp", "vmap", "hessian", "checkpoint", "checkpoint_policies")
)
_laminax, _jax_result, _normalize = SUITE.laminax, SUITE.jax, normalize


IDS = [c[0] for c in CASES]
EXACT = [c for c in CASES if c[3]]
COUNTED = [c for c in CASES if c[0] not in COUNT_DIFFERENCES]


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", CASES, ids=IDS)
def test_values_and_avals_match_jax(name, src, args, exact):
    expected = _jax_result(name)
    actual = _laminax(src, args)
    assert actual["avals"] == expected["avals"]
    assert len(actual["out"]) == len(expected["out"])
    for a, e in zip(actual["out"], expected["out"], strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype, (a, e)
        if a.dtype.names is None:  # float0 tangents have no values
            np.testing.assert_allclose(
                a.astype(np.float64), e.astype(np.float64), rtol=2e-5, atol=1e-5
            )


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", COUNTED, ids=[c[0] for c in COUNTED])
def test_equation_counts_match_jax(name, src, args, exact):
    assert _laminax(src, args)["n_eqns"] == _jax_result(name)["n_eqns"]


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", EXACT, ids=[c[0] for c in EXACT])
def test_printed_jaxpr_matches_jax(name, src, args, exact):
    assert _laminax(src, args)["text"] == _normalize(_jax_result(name)["text"])


def test_count_differences_name_real_programs():
    assert set(COUNT_DIFFERENCES) <= set(IDS)
