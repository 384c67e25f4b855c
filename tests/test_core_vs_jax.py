"""laminax_core's tracing and transformations against real JAX 0.10.2.

Each case is a small program `g` written once, in source form, against names both libraries
have (`lax`, `grad`, `vmap`, `jvp`, ...). It runs under real JAX and under laminax_core, and the
tests compare the values, the jaxpr's output avals and equation count, and, for the cases marked
`exact`, the printed jaxpr character for character.
"""


import laminax_core as lc
import numpy as np
import pytest
from jaxpr_programs import ProgramSuite, normalize
from jaxref import requires_jax, run_jax
from laminax_core import lax

F3 = np.array([0.5, -1.0, 2.0], np.float32)
M23 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
M34 = np.arange(12, dtype=np.float32).reshape(3, 4) / 8
I3 = np.array([1, 2, 3], np.int32)

_CUSTOM_JVP = """
@custom_jvp
def f(x):
    return lax.sin(x)

@f.defjvp
def f_jvp(primals, tangents):
    return f(primals[0]), tangents[0] * 2.0

"""
_CUSTOM_VJP = """
def fwd(x):
    return lax.sin(x), lax.cos(x)

def bwd(cos_x, ct):
    return (ct * cos_x * 3.0,)

@custom_vjp
def h(x):
    return lax.sin(x)

h.defvjp(fwd, bwd)

"""

# (name, source defining g, args, exact printed jaxpr expected)
CASES = [
    ("sin", "g = lambda x: lax.sin(x)", (F3,), True),
    ("add_literal", "g = lambda x: x + 1.0", (F3,), True),
    ("mul_int_literal", "g = lambda x: x * 2", (F3,), True),
    ("int_ops", "g = lambda x: x * 2 + 1", (I3,), True),
    ("sum", "g = lambda x: x.sum()", (M23,), True),
    ("sum_axis", "g = lambda x: lax.reduce_sum(x, (0,))", (M23,), True),
    ("reduce_max", "g = lambda x: lax.reduce_max(x, (0, 1))", (M23,), True),
    ("argmax", "g = lambda x: lax.argmax(x, 1, np.int32)", (M23,), True),
    ("transpose", "g = lambda x: x.T", (M23,), True),
    ("reshape", "g = lambda x: x.reshape(3, 2)", (M23,), True),
    ("reshape_dims", "g = lambda x: lax.reshape(x, (3, 2), (1, 0))", (M23,), True),
    ("index_int", "g = lambda x: x[1]", (M23,), True),
    ("index_slice_none", "g = lambda x: x[0:1, None]", (M23,), True),
    ("index_strided", "g = lambda x: x[:, ::2]", (M23,), True),
    ("astype", "g = lambda x: x.astype(np.int32)", (M23,), True),
    ("convert", "g = lambda x: lax.convert_element_type(x, np.float32)", (I3,), True),
    ("broadcast_in_dim", "g = lambda x: lax.broadcast_in_dim(x, (2, 3), (1,))", (F3,), True),
    ("expand_dims", "g = lambda x: lax.expand_dims(x, (0, 2))", (M23,), True),
    ("squeeze", "g = lambda x: lax.squeeze(x[None], (0,))", (F3,), True),
    ("integer_pow", "g = lambda x: x ** 3", (F3,), True),
    ("pow", "g = lambda x: lax.pow(x * x + 1.0, 2.5)", (F3,), True),
    ("compare_select", "g = lambda x: lax.select_n(x > 0, -x, x)", (F3,), True),
    ("stop_gradient", "g = lambda x: lax.stop_gradient(x)", (F3,), True),
    ("concatenate", "g = lambda x: lax.concatenate([x, x], 0)", (F3,), True),
    ("pad", "g = lambda x: lax.pad(x, 0.0, [(1, 2, 1)])", (F3,), True),
    ("iota", "g = lambda x: lax.iota(np.int32, 4)", (F3,), True),
    ("dynamic_slice", "g = lambda x: lax.dynamic_slice(x, (1,), (2,))", (F3,), True),
    (
        "dynamic_update_slice",
        "g = lambda x: lax.dynamic_update_slice(x, lax.slice(x, (0,), (1,)), (np.int32(1),))",
        (F3,),
        True,
    ),
    (
        "unary_chain",
        "g = lambda x: lax.rsqrt(x * x + 1.0) + lax.sqrt(x * x) + lax.tanh(x) + lax.abs(x)"
        " + lax.sign(x) + lax.logistic(x)",
        (F3,),
        True,
    ),
    ("exp_log_div", "g = lambda x: lax.exp(lax.log(x * x)) - x / 3", (F3,), True),
    ("max_min", "g = lambda x: lax.max(x, 0.0) + lax.min(x, 1.0)", (F3,), True),
    ("dot", "g = lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())))", (M23, M34), True),
    (
        "batched_dot",
        "g = lambda x: lax.dot_general(x, x, (((2,), (2,)), ((0,), (0,))))",
        (np.ones((2, 3, 4), np.float32),),
        True,
    ),
    ("tuple_out", "g = lambda x: (x, 2.0 * x)", (np.float32(2.0),), True),
    ("closure_const", "c = np.arange(3, dtype=np.float32)\ng = lambda x: x + c", (F3,), True),
    (
        "many_args",
        "g = lambda *xs: sum(xs[1:], xs[0])",
        tuple(np.float32(i) for i in range(30)),
        True,
    ),
    # transformations
    ("grad_sin_sum", "g = grad(lambda x: lax.sin(x).sum())", (F3,), True),
    ("grad_mul", "g = grad(lambda x, y: (x * y).sum(), argnums=(0, 1))", (F3, F3), True),
    ("grad_tanh", "g = grad(lambda x: lax.tanh(x).sum())", (F3,), True),
    (
        "grad_dot",
        "g = grad(lambda w, x: lax.dot_general(w, x, (((1,), (0,)), ((), ()))).sum())",
        (M23, F3),
        True,
    ),
    (
        "grad_broadcast_reshape",
        "g = grad(lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)).reshape(6).sum())",
        (F3,),
        True,
    ),
    ("grad_slice_pad", "g = grad(lambda x: (x[1:] * x[:-1]).sum())", (F3,), True),
    ("grad_concat", "g = grad(lambda x: lax.concatenate([x, 2.0 * x], 0).sum())", (F3,), True),
    ("grad_select", "g = grad(lambda x: lax.select_n(x > 0, x * x, x).sum())", (F3,), True),
    ("grad_exp_log", "g = grad(lambda x: (lax.exp(x) * lax.log(x * x)).sum())", (F3,), True),
    ("grad_max", "g = grad(lambda x: lax.reduce_max(x * x, (0,)))", (F3,), True),
    ("grad_transpose", "g = grad(lambda x: (x.T * x.T).sum())", (M23,), True),
    ("grad_int_pow", "g = grad(lambda x: (x ** 3).sum())", (F3,), True),
    (
        "grad_allow_int",
        "g = grad(lambda x, n: x * 2.0, allow_int=True)",
        (np.float32(1.0), 2),
        True,
    ),
    ("value_and_grad", "g = value_and_grad(lambda x: lax.sin(x).sum())", (F3,), True),
    ("grad_of_grad", "g = grad(grad(lambda x: lax.sin(x) * x))", (np.float32(0.7),), True),
    ("jvp", "g = lambda x: jvp(lax.sin, (x,), (x,))", (F3,), True),
    ("jvp_mul", "g = lambda x, y: jvp(lambda a, b: a * b, (x, y), (y, x))", (F3, F3), True),
    ("vjp", "g = lambda x: vjp(lambda a: lax.sin(a) * a, x)[1](x)", (F3,), True),
    ("linearize", "g = lambda x: linearize(lambda a: lax.cos(a) * a, x)[1](x)", (F3,), True),
    # (JAX prints broadcast_dimensions=(np.int64(1),) here, a NumPy-int artefact we do not copy)
    ("vmap_add_none", "g = vmap(lambda x, y: lax.add(x, y), in_axes=(0, None))", (M23, F3), True),
    ("vmap_in_axes_1", "g = vmap(lambda x: lax.sin(x).sum(), in_axes=1)", (M23,), True),
    ("vmap_out_axes", "g = vmap(lambda x: x, in_axes=1, out_axes=1)", (M23,), True),
    (
        "vmap_dot",
        "g = vmap(lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))))",
        (M23, M23),
        True,
    ),
    (
        "vmap_matvec",
        "g = vmap(lambda x, w: lax.dot_general(w, x, (((1,), (0,)), ((), ()))), in_axes=(0, None))",
        (M23, M34.T),
        True,
    ),
    ("vmap_psum", "g = vmap(lambda x: lax.psum(x, 'i'), axis_name='i')", (F3,), True),
    ("vmap_pmax", "g = vmap(lambda x: lax.pmax(x, 'i'), axis_name='i')", (F3,), True),
    ("vmap_pmean", "g = vmap(lambda x: lax.pmean(x, 'i'), axis_name='i')", (F3,), True),
    (
        "vmap_axis_index",
        "g = vmap(lambda x: lax.axis_index('i') + 0 * x.astype(np.int32), axis_name='i')",
        (F3,),
        True,
    ),
    ("vmap_all_gather", "g = vmap(lambda x: lax.all_gather(x, 'i'), axis_name='i')", (F3,), True),
    (
        "vmap_nested_psum",
        "g = vmap(vmap(lambda x: lax.psum(x, ('i', 'j')), axis_name='j'), axis_name='i')",
        (M23,),
        True,
    ),
    (
        "vmap_grad_psum",
        "g = vmap(grad(lambda v: lax.psum(v * v, 'i')), axis_name='i')",
        (F3,),
        True,
    ),
    ("vmap_of_grad", "g = vmap(grad(lambda x: lax.sin(x) * x))", (F3,), True),
    ("grad_of_vmap", "g = grad(lambda x: vmap(lambda v: lax.sin(v) * v)(x).sum())", (F3,), True),
    (
        "jvp_of_grad",
        "g = lambda x: jvp(grad(lambda a: lax.sin(a) * a), (x,), (x,))",
        (np.float32(0.3),),
        True,
    ),
    ("jacfwd", "g = jacfwd(lambda x: lax.sin(x) * x)", (F3,), True),
    ("jacrev", "g = jacrev(lambda x: lax.sin(x) * x)", (F3,), True),
    ("jacfwd_matrix", "g = jacfwd(lambda m: lax.tanh(m @ m.T))", (M23,), False),
    ("jacrev_matrix", "g = jacrev(lambda m: lax.tanh(m @ m.T))", (M23,), False),
    ("hessian", "g = hessian(lambda x: (x * x * x).sum())", (F3,), False),
    # more batching and differentiation patterns
    (
        "vmap_dot_in_axes",
        "g = vmap(lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))), in_axes=(1, None))",
        (M34, M34),
        True,
    ),
    (
        "vmap_reduce_max_axis1",
        "g = vmap(lambda x: lax.reduce_max(x, (0,)), in_axes=1)",
        (M23,),
        False,
    ),
    ("vmap_argmax", "g = vmap(lambda x: lax.argmax(x, 0, np.int32))", (M23,), True),
    (
        "vmap_select_scalar_pred",
        "g = vmap(lambda p, x: lax.select_n(p, x, -x), in_axes=(0, 0))",
        (np.array([True, False]), M23),
        True,
    ),
    (
        "vmap_transpose_reshape",
        "g = vmap(lambda x: x.T.reshape(6), in_axes=2)",
        (np.ones((2, 3, 4), np.float32),),
        True,
    ),
    (
        "vmap_concat_mixed",
        "g = vmap(lambda x, y: lax.concatenate([x, y], 0), in_axes=(0, None))",
        (M23, F3),
        True,
    ),
    ("vmap_pad", "g = vmap(lambda x: lax.pad(x, 0.0, [(1, 1, 1)]))", (M23,), True),
    (
        "vmap_dynamic_slice",
        "g = vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))",
        (M23, np.array([0, 1], np.int32)),
        True,
    ),
    (
        "vmap_dus",
        "g = vmap(lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(1),)))",
        (M23, np.ones((2, 1), np.float32)),
        True,
    ),
    (
        "vmap_broadcast",
        "g = vmap(lambda x: lax.broadcast_in_dim(x, (2, 3), (0,)), in_axes=1)",
        (M23,),
        True,
    ),
    ("vmap_iota_add", "g = vmap(lambda x: x + lax.iota(np.float32, 3))", (M23,), True),
    (
        "vmap_integer_pow",
        "g = vmap(lambda x: x ** 3 + lax.sqrt(x * x + 1.0), in_axes=1)",
        (M23,),
        True,
    ),
    ("grad_pad_slice", "g = grad(lambda x: lax.pad(x, 1.5, [(2, -1, 1)]).sum())", (F3,), False),
    (
        "grad_dynamic_slice",
        "g = grad(lambda x: (lax.dynamic_slice(x, (1,), (2,)) ** 2).sum())",
        (F3,),
        True,
    ),
    (
        "grad_dus",
        "g = grad(lambda x, u: (lax.dynamic_update_slice(x, u, (np.int32(0),)) * x).sum(),"
        " argnums=(0, 1))",
        (F3, np.ones(2, np.float32)),
        True,
    ),
    (
        "grad_reshape_dims",
        "g = grad(lambda x: (lax.reshape(x, (3, 2), (1, 0)) ** 2).sum())",
        (M23,),
        True,
    ),
    (
        "grad_squeeze_expand",
        "g = grad(lambda x: lax.expand_dims(lax.squeeze(x, (0,)), (1,)).sum())",
        (M23[:1],),
        True,
    ),
    (
        "grad_convert",
        "g = grad(lambda x: lax.convert_element_type(x, np.float16).sum().astype(np.float32))",
        (F3,),
        True,
    ),
    (
        "grad_pow_both",
        "g = grad(lambda x, y: lax.pow(x, y).sum(), argnums=(0, 1))",
        (np.abs(F3) + 0.5, F3),
        True,
    ),
    (
        "grad_div_both",
        "g = grad(lambda x, y: (x / y).sum(), argnums=(0, 1))",
        (F3, np.abs(F3) + 1.0),
        True,
    ),
    (
        "grad_batched_dot",
        "g = grad(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))).sum(),"
        " argnums=(0, 1))",
        (np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)),
        True,
    ),
    ("hessian_logistic", "g = hessian(lambda x: lax.logistic(x).sum())", (F3,), False),
    (
        "jacrev_vmap_psum",
        "g = jacrev(lambda x: vmap(lambda v: lax.psum(v * v, 'i'), axis_name='i')(x))",
        (F3,),
        True,
    ),
    # more control flow and checkpoint
    (
        "grad_switch",
        "g = grad(lambda x, i: lax.switch(i, [lax.sin, lax.cos, lax.exp], x))",
        (np.float32(0.5), 2),
        True,
    ),
    (
        "jvp_scan",
        "g = lambda x: jvp(lambda a: lax.scan(lambda c, y: (c * y + a, c), a, x)[0], (x[0],),"
        " (np.float32(1.0),))",
        (F3,),
        False,
    ),
    (
        "vmap_scan_consts",
        "g = vmap(lambda w: lax.scan(lambda c, y: (lax.tanh(c * w + y), c), 0.0, x3)[0])",
        (F3,),
        True,
    ),
    (
        "vmap_while_consts",
        "g = vmap(lambda w: lax.while_loop(lambda c: c < 5.0, lambda c: c + w, 0.0))",
        (np.abs(F3) + 1.0,),
        True,
    ),
    (
        "grad_fori_cond",
        "g = grad(lambda x: lax.fori_loop(0, 4, lambda i, c: lax.cond(i < 2, lambda v: v * x,"
        " lambda v: v + x, c), x))",
        (np.float32(2.0),),
        False,
    ),
    ("checkpoint", "g = checkpoint(lambda x: lax.sin(lax.sin(x)))", (np.float32(1.0),), True),
    (
        "grad_checkpoint",
        "g = grad(checkpoint(lambda x: lax.sin(lax.sin(x))))",
        (np.float32(1.0),),
        True,
    ),
    (
        "grad_checkpoint_dots",
        "g = grad(checkpoint(lambda w, x: lax.tanh(w @ x).sum(),"
        " policy=checkpoint_policies.dots_saveable))",
        (M23, F3),
        False,
    ),
    # custom derivatives
    ("custom_jvp", _CUSTOM_JVP + "g = f", (np.float32(1.0),), True),
    ("grad_custom_jvp", _CUSTOM_JVP + "g = grad(f)", (np.float32(1.0),), True),
    ("vmap_custom_jvp", _CUSTOM_JVP + "g = vmap(f)", (F3,), True),
    ("grad_vmap_custom_jvp", _CUSTOM_JVP + "g = grad(lambda x: vmap(f)(x).sum())", (F3,), True),
    ("custom_vjp", _CUSTOM_VJP + "g = h", (np.float32(1.0),), True),
    ("grad_custom_vjp", _CUSTOM_VJP + "g = grad(lambda x: h(x) * x)", (np.float32(1.0),), True),
    ("jacrev_custom_vjp", _CUSTOM_VJP + "g = jacrev(lambda x: h(x) * 2.0)", (F3,), True),
    # control flow
    ("cond", "g = lambda x: lax.cond(x > 0, lax.sin, lax.cos, x)", (np.float32(1.0),), True),
    ("cond_neg", "g = lambda x: lax.cond(x > 0, lax.sin, lax.cos, x)", (np.float32(-1.0),), True),
    (
        "grad_cond",
        "g = grad(lambda x: lax.cond(x > 0, lax.sin, lax.cos, x))",
        (np.float32(1.0),),
        True,
    ),
    ("vmap_cond", "g = vmap(lambda x: lax.cond(x > 0, lax.sin, lax.cos, x))", (F3,), True),
    (
        "switch",
        "g = lambda x: lax.switch(1, [lax.sin, lax.cos, lax.tanh], x)",
        (np.float32(1.0),),
        True,
    ),
    (
        "while",
        "g = lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + 1.0, x)",
        (np.float32(1.0),),
        True,
    ),
    (
        "jvp_while",
        "g = lambda x: jvp(lambda a: lax.while_loop(lambda c: c[0] < 4,"
        " lambda c: (c[0] + 1, c[1] * a), (0, a))[1], (x,), (x,))",
        (np.float32(1.5),),
        True,
    ),
    (
        "vmap_while",
        "g = vmap(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0),"
        " (0, 1.0))[1])",
        (I3,),
        True,
    ),
    (
        "fori",
        "g = lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)",
        (np.float32(1.0),),
        True,
    ),
    ("scan", "g = lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x)", (F3,), True),
    (
        "grad_scan",
        "g = grad(lambda x: lax.scan(lambda c, y: (lax.tanh(c * y), c), 0.5, x)[0])",
        (F3,),
        False,
    ),
    (
        "vmap_scan",
        "g = vmap(lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x))",
        (M23,),
        True,
    ),
    ("map", "g = lambda x: lax.map(lax.sin, x)", (F3,), True),
    (
        "hessian_quadratic",
        "g = hessian(lambda x: (x * lax.dot_general(x, x, (((0,), (0,)), ((), ())))).sum())",
        (F3,),
        False,
    ),
]

SUITE = ProgramSuite(
    CASES,
    names=("grad", "value_and_grad", "jvp", "vjp", "linearize", "vmap", "jacfwd", "jacrev",
           "hessian", "custom_jvp", "custom_vjp", "checkpoint", "checkpoint_policies"),
    extra={"x3": np.array([0.5, -1.0, 2.0], np.float32)},
)
_laminax, _jax_result = SUITE.laminax, SUITE.jax


IDS = [c[0] for c in CASES]


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", CASES, ids=IDS)
def test_values_and_avals_match_jax(name, src, args, exact):
    expected = _jax_result(name)
    actual = _laminax(src, args)
    assert actual["avals"] == expected["avals"]
    assert len(actual["out"]) == len(expected["out"])
    for a, e in zip(actual["out"], expected["out"], strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype, (a, e)
        if a.dtype.names is None:  # float0 has no values
            np.testing.assert_allclose(
                a.astype(np.float64), e.astype(np.float64), rtol=2e-5, atol=1e-5
            )


_normalize = normalize


EXACT = [c for c in CASES if c[3]]

# Programs whose jaxprs differ from JAX's in equation count, and why.
COUNT_DIFFERENCES = {
}


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", EXACT, ids=[c[0] for c in EXACT])
def test_printed_jaxpr_matches_jax(name, src, args, exact):
    expected = _jax_result(name)
    actual = _laminax(src, args)
    assert actual["text"] == _normalize(expected["text"])
    assert actual["n_eqns"] == expected["n_eqns"]


COUNTED = [c for c in CASES if c[0] not in COUNT_DIFFERENCES]


@requires_jax
@pytest.mark.parametrize("name,src,args,exact", COUNTED, ids=[c[0] for c in COUNTED])
def test_equation_counts_match_jax(name, src, args, exact):
    assert _laminax(src, args)["n_eqns"] == _jax_result(name)["n_eqns"]


_VMAP_SIZES = """
def f(x, y):
    return x + y

try:
    jax.vmap(f)(np.ones(2, np.float32), {"a": np.ones(3, np.float32)})
except ValueError as err:
    result = str(err)
"""


@requires_jax
def test_vmap_inconsistent_sizes_message_matches_jax():
    def f(x, y):
        return x + y

    with pytest.raises(ValueError) as info:
        lc.vmap(f)(np.ones(2, np.float32), {"a": np.ones(3, np.float32)})
    assert str(info.value) == run_jax(_VMAP_SIZES)


# Programs that must fail, with the exception type JAX raises: (name, source of `run()`).
ERROR_CASES = [
    ("bool_of_tracer", "def run():\n    make_jaxpr(lambda x: 1 if x > 0 else 0)(1.0)"),
    ("int_of_tracer", "def run():\n    make_jaxpr(lambda x: int(x))(1.0)"),
    ("array_of_tracer", "def run():\n    make_jaxpr(lambda x: np.asarray(x))(np.ones(2))"),
    ("index_with_tracer", "def run():\n    make_jaxpr(lambda i: [1, 2][i])(1)"),
    ("grad_non_scalar", "def run():\n    grad(lambda x: x)(np.ones(2, np.float32))"),
    ("grad_int_input", "def run():\n    grad(lambda x: x)(1)"),
    ("jvp_dtype_mismatch", "def run():\n    jvp(lambda x: x, (np.float32(1),), (np.float16(1),))"),
    ("vmap_in_axes_too_long", "def run():\n    vmap(lambda x: x, in_axes=(0, 0))(np.ones(2))"),
    ("sin_of_int", "def run():\n    lax.sin(np.arange(3, dtype=np.int32))"),
    ("add_mixed_dtypes", "def run():\n    lax.add(np.ones(2, np.float32), np.ones(2, np.int32))"),
    ("unbound_axis", "def run():\n    lax.psum(np.float32(1), 'i')"),
    (
        "leaked_tracer",
        "def run():\n    box = []\n    make_jaxpr(lambda x: box.append(x) or x)(1.0)\n"
        "    lax.sin(box[0])",
    ),
    (
        "while_reverse_mode",
        "def run():\n    grad(lambda x: lax.while_loop(lambda c: c < 3.0,"
        " lambda c: c * x, 1.0))(2.0)",
    ),
    (
        "custom_vjp_forward_mode",
        "def run():\n    f = custom_vjp(lambda x: x)\n    f.defvjp(lambda x: (x, None),"
        " lambda r, g: (g,))\n    jvp(f, (1.0,), (1.0,))",
    ),
]

_ERROR_SNIPPET = """
import jax
from jax import lax
result = []
for name, src in cases:
    ns = dict(lax=lax, np=np, grad=jax.grad, jvp=jax.jvp, vmap=jax.vmap,
              make_jaxpr=jax.make_jaxpr, custom_vjp=jax.custom_vjp)
    exec(src, ns)
    try:
        ns["run"]()
        result.append(None)
    except Exception as err:
        result.append(type(err).__name__)
"""


@requires_jax
def test_errors_have_jax_exception_types():
    expected = run_jax(_ERROR_SNIPPET, cases=ERROR_CASES)
    found = []
    for _, src in ERROR_CASES:
        ns = dict(
            lax=lax,
            np=np,
            grad=lc.grad,
            jvp=lc.jvp,
            vmap=lc.vmap,
            make_jaxpr=lc.make_jaxpr,
            custom_vjp=lc.custom_vjp,
        )
        exec(src, ns)
        try:
            ns["run"]()
            found.append(None)
        except Exception as err:  # noqa: BLE001 (comparing exception types is the point)
            found.append(type(err).__name__)
    assert dict(zip([n for n, _ in ERROR_CASES], found, strict=True)) == dict(
        zip([n for n, _ in ERROR_CASES], expected, strict=True)
    )


# ----- scan's partial evaluation: which residuals the forward scan stacks ------------------
# Each program defines `f` and `args` with `lax` and `jnp`; staged under grad, vjp and
# linearize, the scan equations must have JAX's outputs (count and avals): residuals that depend
# only on the scan's constants are hoisted out of the loop, not stacked per iteration.

_SCAN_PROGRAMS = {
    "rnn": """
rng = np.random.RandomState(0)
args = (rng.randn(4, 4).astype(np.float32) / 2, rng.randn(3, 4).astype(np.float32),
        rng.randn(4).astype(np.float32), rng.randn(5, 2, 3).astype(np.float32))

def f(wh, wx, b, xs):
    def step(h, x):
        h = jnp.tanh(h @ wh + x @ wx + b)
        return h, h
    return (lax.scan(step, np.zeros((2, 4), np.float32), xs)[1] ** 2).sum()
""",
    "closed_over_matrix": """
rng = np.random.RandomState(1)
M = rng.randn(3, 3).astype(np.float32) / 2
args = (rng.randn(3).astype(np.float32), rng.randn(4, 3).astype(np.float32))

def f(c0, xs):
    def step(c, x):
        c = jnp.sin(M @ c) * x
        return c, c.sum()
    c, ys = lax.scan(step, c0, xs)
    return c.sum() + ys.sum()
""",
    "varying_residuals": """
rng = np.random.RandomState(2)
args = (np.float32(0.7), rng.randn(6).astype(np.float32))

def f(a, xs):
    c, ys = lax.scan(lambda c, x: (jnp.sin(c * x) * a, jnp.exp(c * a)), np.float32(0.3), xs)
    return c + ys.sum()
""",
}

_SCAN_STAGINGS = """
def stagings(f, args):
    n = len(args)
    return dict(
        grad=lambda *a: grad(f, argnums=tuple(range(n)))(*a),
        vjp=lambda *a: vjp(f, *a)[1](np.float32(1.0)),
        linearize=lambda *a: linearize(f, *a)[1](*a),
    )

def describe(make_jaxpr, stagings, args, short):
    found = {}
    for how, g in stagings.items():
        closed = make_jaxpr(g)(*args)
        scans = [[short(v.aval) for v in e.outvars] for e in closed.jaxpr.eqns
                 if e.primitive.name == "scan"]
        found[how] = dict(n_eqns=len(closed.jaxpr.eqns), scans=scans)
    return found
"""

_SCAN_JAX = (
    """
import jax
from jax import lax
grad, vjp, linearize = jax.grad, jax.vjp, jax.linearize
"""
    + _SCAN_STAGINGS
    + """
ns = dict(np=np, jnp=jnp, lax=lax)
exec(program, ns)
f, args = ns["f"], ns["args"]
result = dict(
    staged=describe(jax.make_jaxpr, stagings(f, args), args,
                    lambda a: a.str_short(short_dtypes=True)),
    grads=[np.asarray(g) for g in jax.grad(f, argnums=tuple(range(len(args))))(*args)],
)
"""
)


@requires_jax
@pytest.mark.parametrize("name", list(_SCAN_PROGRAMS))
def test_scan_residuals_match_jax(name):
    from laminax_core import numpy as lnp

    expected = run_jax(_SCAN_JAX, program=_SCAN_PROGRAMS[name])
    helpers = dict(np=np, grad=lc.grad, vjp=lc.vjp, linearize=lc.linearize)
    exec(_SCAN_STAGINGS, helpers)
    ns = dict(np=np, jnp=lnp, lax=lax)
    exec(_SCAN_PROGRAMS[name], ns)
    f, args = ns["f"], ns["args"]
    staged = helpers["describe"](
        lc.make_jaxpr, helpers["stagings"](f, args), args, lambda a: a.str_short()
    )
    assert staged == expected["staged"]
    grads = lc.grad(f, argnums=tuple(range(len(args))))(*args)
    for g, e in zip(grads, expected["grads"], strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=2e-5, atol=1e-5)


@requires_jax
def test_shaped_array_str_and_repr_match_jax():
    cases = [((), "float32", True), ((2, 3), "int32", False), ((4,), "bool", True),
             ((1, 2), "bfloat16", False), ((2,), "float0", False)]
    got = run_jax("""
from jax.core import ShapedArray
dt = lambda n: jax.dtypes.float0 if n == "float0" else jnp.dtype(n)
result = [(str(ShapedArray(s, dt(d), weak_type=w)), repr(ShapedArray(s, dt(d), weak_type=w)))
          for s, d, w in cases]
""", cases=cases)
    dtypes = {"float0": lc.dtypes.float0, "bfloat16": lc.dtypes.bfloat16}
    mine = [(str(a), repr(a)) for a in (lc.ShapedArray(s, np.dtype(dtypes.get(d, d)), w)
                                        for s, d, w in cases)]
    assert mine == [tuple(p) for p in got]
