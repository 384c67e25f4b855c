"""The extension API as equinox's own test suite uses it, run as `import jax` code on laminax and
on real JAX 0.10.2: what a library-defined primitive's rules receive (tuples, as JAX hands them),
`Trace.main` telling a transformation's own tracers from outer ones, `linear_transpose` of
abstract primals, and `Lowered.compile(compiler_options=)`."""

from aliasrun import assert_same, run_as_jax
from jaxref import requires_jax, run_jax

pytestmark = requires_jax

# One snippet (one fresh process per side): a primitive defined through `jax.extend.core`, with
# rules registered through `jax.interpreters`, recording the types of what its rules receive.
SOURCE = """
import jax.extend.core
from jax.interpreters import ad, batching, mlir

seen = {}
double_p = jax.extend.core.Primitive("double")
double_p.def_impl(lambda x: 2 * x)
double_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(double_p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))

def jvp(primals, tangents):
    seen["jvp"] = (type(primals).__name__, type(tangents).__name__)
    return double_p.bind(*primals), double_p.bind(*tangents)

def batch(args, dims):
    seen["batch"] = (type(args).__name__, type(dims).__name__)
    # a rule may use its dims as vmap axes, which must then match the operands' tree
    out = jax.vmap(lambda *a: 2 * a[0], in_axes=dims)(*args)
    return out, 0

def axis_batch(size, name, trace_type, args, dims):
    seen["axis_batch"] = (type(args).__name__, type(dims).__name__, size)
    return double_p.bind(*args), dims[0]

ad.primitive_jvps[double_p] = jvp
batching.primitive_batchers[double_p] = batch
x = jnp.arange(3.0)
jvp_out = jax.jvp(double_p.bind, (x,), (jnp.ones(3),))
vmap_out = jax.vmap(double_p.bind)(jnp.ones((2, 3)))
triple_p = jax.extend.core.Primitive("triple")
triple_p.def_impl(lambda x: 3 * x)
triple_p.def_abstract_eval(lambda x: x)
batching.axis_primitive_batchers[triple_p] = axis_batch
triple_out = jax.vmap(triple_p.bind)(jnp.ones((4, 2)))

# `main` identifies a transformation: equinox's filter_jvp keeps the outputs whose tracer's
# `_trace.main` is the main of its own jvp
mains = {}
def inner(y):
    mains["inner"] = jax.extend.core.find_top_trace([y]).main
    mains["inner_of_outer"] = jax.extend.core.find_top_trace([mains["outer_x"]]).main
    return y * mains["outer_x"]
def outer(x):
    mains["outer_x"] = x
    mains["outer"] = jax.extend.core.find_top_trace([x]).main
    out = jax.jvp(inner, (x,), (x,))[1]
    mains["own"] = out._trace.main is mains["outer"]
    return out
jax.jvp(outer, (2.0,), (1.0,))

ct = jax.linear_transpose(lambda v: 2.0 * v, jax.core.ShapedArray((2,), jnp.float32))(jnp.ones(2))
ct_weak = jax.linear_transpose(lambda v: 3 * v,
                               jax.core.ShapedArray((), jnp.float32, weak_type=True))(1.0)
result = {
    "seen": seen,
    "jvp": [np.asarray(v) for v in jvp_out],
    "vmap": np.asarray(vmap_out),
    "triple": np.asarray(triple_out),
    "main_distinct": mains["inner"] is not mains["outer"],
    "main_outer_seen_inside": mains["inner_of_outer"] is mains["outer"],
    "main_own": mains["own"],
    "transpose_shaped": [np.asarray(c) for c in ct] + [str(ct[0].dtype)],
    "transpose_weak": [np.asarray(ct_weak[0]), str(ct_weak[0].dtype)],
}
"""


def test_library_primitive_rules_and_trace_main_match_jax():
    ours, theirs = run_as_jax(SOURCE), run_jax(SOURCE)
    assert ours["seen"] == theirs["seen"]
    for key in sorted(theirs):
        assert_same(ours[key], theirs[key])


COMPILER_OPTIONS = """
lowered = jax.jit(lambda x, y: 2 * x + y).lower(jnp.array(3), 4)
compiled = lowered.compile(compiler_options={"xla_gpu_autotune_level": "0",
                                             "xla_embed_ir_in_executable": True})
try:
    lowered.compile(compiler_options={"xla_no_such_option": "1"})
    rejected = None
except jax.errors.JaxRuntimeError as err:
    rejected = "No such compile option: 'xla_no_such_option'" in str(err)
result = [np.asarray(compiled(jnp.array(3), 4)), np.asarray(lowered.compile()(jnp.array(5), 1)),
          rejected]
"""


def test_lowered_compile_with_compiler_options_matches_jax():
    assert_same(run_as_jax(COMPILER_OPTIONS), run_jax(COMPILER_OPTIONS))


# What equinox's type-checked internals (jaxtyping + beartype) need: `jnp.array` of constants is
# a jax.Array under every transformation (a tracer under jit), and vmap passes unmapped
# arguments of any type through; eval_jaxpr-style interpreters ask `get_bind_params`.
CONSTANTS_AND_UNMAPPED = """
kinds = {}
def probe(name):
    def f(x):
        c = jnp.array([1.0, 2.0])
        kinds[name] = (isinstance(c, jax.Array), isinstance(jnp.array(True), jax.Array))
        return x * c.sum()
    return f
jax.jvp(probe("jvp"), (1.0,), (1.0,))
jax.vjp(probe("vjp"), 1.0)
jax.grad(probe("grad"))(1.0)
jax.vmap(probe("vmap"))(jnp.ones(2))
jax.jit(probe("jit"))(1.0)
jax.jit(jax.grad(probe("jit_grad")))(1.0)
try:
    jax.jit(lambda: bool(jnp.array(True)))()
    bool_under_jit = None
except Exception as err:
    bool_under_jit = type(err).__name__
jaxpr = jax.make_jaxpr(lambda x: (x + jnp.array(2.0), jnp.array(True), jnp.array([1, 2])))(1.0)
params = [e.primitive.get_bind_params(e.params) == e.params for e in jaxpr.jaxpr.eqns]
result = {
    "kinds": kinds,
    "bool_under_jit": bool_under_jit,
    "jaxpr": str(jaxpr),
    "params": params,
    "unmapped_function": np.asarray(
        jax.vmap(lambda f, x: f(x), in_axes=(None, 0))(lambda v: v.sum(), jnp.ones((3, 2)))),
}
"""


def test_constants_under_transformations_and_unmapped_arguments_match_jax():
    assert_same(run_as_jax(CONSTANTS_AND_UNMAPPED), run_jax(CONSTANTS_AND_UNMAPPED))


# A library primitive lowered to a host call through `mlir.emit_python_callback`, as equinox's
# `noinline` does (the keepalive goes to the module context).
HOST_CALL_LOWERING = """
import jax.extend.core
from jax.interpreters import mlir

calls = []
host_p = jax.extend.core.Primitive("host_square")
host_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))

def callback(x):
    calls.append(x.shape)
    return [np.asarray(x) ** 2]

def lowering(ctx, x):
    results, token, keepalive = mlir.emit_python_callback(
        ctx, callback, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False,
        sharding=None)
    ctx.module_context.add_keepalive(keepalive)
    return results

mlir.register_lowering(host_p, lowering)
out = jax.jit(lambda v: host_p.bind(v) + 1.0)(jnp.arange(3.0))
result = [np.asarray(out), str(out.dtype), calls]
"""


def test_host_call_lowering_of_a_library_primitive_matches_jax():
    assert_same(run_as_jax(HOST_CALL_LOWERING), run_jax(HOST_CALL_LOWERING))


# `out_shardings` is a prefix of the output where lists and tuples differ (equinox's
# filter_pmap maps a list output with a list of out_axes).
OUT_SHARDINGS_LISTS = """
s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
outcomes = []
for f, spec in [(lambda x: [x, x], [s, s]), (lambda x: ([x, x],), ([s, s],)),
                (lambda x: ([x, x],), ((s, s),)), (lambda x: ((x, x),), ([s, s],))]:
    try:
        outcomes.append(str(jax.tree_util.tree_structure(jax.jit(f, out_shardings=spec)(
            jnp.ones(2)))))
    except ValueError:
        outcomes.append("ValueError")
pmapped = jax.pmap(lambda x: ([None, x * 2, None], ()), out_axes=([0, 0, 1], None))(
    jnp.ones((1, 3)))
result = [outcomes, str(jax.tree_util.tree_structure(pmapped)), np.asarray(pmapped[0][1])]
"""


def test_out_shardings_lists_and_pmap_list_out_axes_match_jax():
    assert_same(run_as_jax(OUT_SHARDINGS_LISTS), run_jax(OUT_SHARDINGS_LISTS))


# A custom_vjp's Python-scalar residuals reach bwd as Python scalars (equinox's
# filter_custom_vjp passes its `perturbed` flags this way and type-checks them as bools).
SCALAR_RESIDUALS = """
seen = []
@jax.custom_vjp
def f(x):
    return x * 2
def fwd(x):
    return x * 2, (True, 3, x)
def bwd(res, ct):
    seen.append([type(res[0]) is bool, isinstance(res[1], int), res[1] == 3])
    return (ct * (2.0 if res[0] else 0.0),)
f.defvjp(fwd, bwd)
grads = [jax.grad(f)(1.0), jax.jit(jax.grad(f))(1.0), jax.grad(jax.jit(f))(1.0),
         jax.vmap(jax.grad(f))(jnp.ones(2))]
result = [seen[:3], [np.asarray(g) for g in grads]]
"""


def test_custom_vjp_python_scalar_residuals_match_jax():
    assert_same(run_as_jax(SCALAR_RESIDUALS), run_jax(SCALAR_RESIDUALS))


# equinox's max pooling of an integer array starts reduce_window from -inf (JAX converts it
# saturating, with no warning).
REDUCE_WINDOW_INT_INF = """
import warnings
with warnings.catch_warnings():  # not process-wide: the reference worker runs other snippets
    warnings.simplefilter("error")
    x = jnp.arange(6, dtype=jnp.int32).reshape(1, 6)
    result = [np.asarray(jax.lax.reduce_window(x, init, op, (1, 2), (1, 2), "VALID"))
              for init, op in ((-jnp.inf, jax.lax.max), (jnp.inf, jax.lax.min))]
"""


def test_reduce_window_integer_operand_infinite_init_matches_jax():
    assert_same(run_as_jax(REDUCE_WINDOW_INT_INF), run_jax(REDUCE_WINDOW_INT_INF))


# Transforming a callable whose `__name__` is not a string (an equinox Module with such a field).
ODD_NAME = """
class Model:
    __name__ = property(lambda self: 3)
    def __call__(self, x):
        return jnp.sum(x * x)
m = Model()
result = [np.asarray(jax.vmap(m)(jnp.ones((2, 3)))), np.asarray(jax.grad(m)(jnp.ones(3))),
          np.asarray(jax.value_and_grad(m)(jnp.ones(2))[0])]
"""


def test_transforming_a_callable_without_a_string_name_matches_jax():
    assert_same(run_as_jax(ODD_NAME), run_jax(ODD_NAME))


COMPILE_TIME_EVAL = """
@jax.jit
def f(x):
    with jax.ensure_compile_time_eval():
        flag = jnp.array(True)
        concrete = bool(flag) and bool(jnp.array([1, 2]).sum() == 3)
    return x + 1 if concrete else x
result = np.asarray(f(1.0))
"""


def test_constants_under_ensure_compile_time_eval_match_jax():
    assert_same(run_as_jax(COMPILE_TIME_EVAL), run_jax(COMPILE_TIME_EVAL))


# pmap's ahead-of-time path takes the pmapped function's pytree arguments (equinox's
# filter_pmap(...).lower(...).compile()).
PMAP_AOT = """
f = jax.pmap(lambda d, s: {"a": d["x"] * 2 + s})
lowered = f.lower({"x": jnp.ones((1, 3))}, jnp.zeros((1,)))
compiled = lowered.compile()
out = compiled({"x": jnp.ones((1, 3)) * 3}, jnp.ones((1,)))
try:
    compiled(jnp.ones((1, 3)), jnp.ones((1,)))
    wrong_tree = None
except TypeError:
    wrong_tree = "TypeError"
result = [np.asarray(out["a"]), str(lowered.in_tree), wrong_tree]
"""


def test_pmap_lower_compile_takes_pytree_arguments_like_jax():
    assert_same(run_as_jax(PMAP_AOT), run_jax(PMAP_AOT))
