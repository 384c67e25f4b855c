"""Today's host callbacks against JAX 0.10.2: `pure_callback` (every vmap_method), `io_callback`
(ordered and not), `debug.callback`, `debug.print`, under jit, vmap, grad and control flow.

Each program is one piece of source run twice: under real JAX (through `jaxref`) and under
laminax with ``jax = laminax``. It assigns `result`: outputs, what the callbacks saw, the text
printed, or the type and message of the error raised; the two results must agree.
"""

import textwrap

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax.experimental import io_callback

PRELUDE = """
import contextlib, io, functools
F32 = np.float32
def error_of(fn):
    try:
        fn()
    except Exception as err:
        return type(err).__name__, str(err).splitlines()[0][:120]
    return None
def printed(fn):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
        jax.effects_barrier()
    return out.getvalue()
"""

PROGRAMS = {
    "pure_callback_jit_and_eager": """
def f(x):
    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
x = np.arange(4, dtype=F32)
result = [np.asarray(jax.jit(f)(x)), np.asarray(f(x))]
""",
    "pure_callback_receives_arrays_on_cpu": """
seen = []
def cb(x, y):
    seen.append((type(x).__name__, x.shape, str(x.dtype), type(y).__name__))
    return x
jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct((2,), F32), x, y=2))(np.ones(2, F32))
result = seen
""",
    "pure_callback_pytrees_and_kwargs": """
def cb(tree, scale):
    return {"a": tree[0] * scale, "b": (tree[1] + 1,)}
shapes = {"a": jax.ShapeDtypeStruct((3,), F32), "b": (jax.ShapeDtypeStruct((), np.int32),)}
out = jax.jit(lambda t: jax.pure_callback(cb, shapes, t, scale=F32(2)))(
    (np.arange(3, dtype=F32), np.int32(4)))
result = [np.asarray(out["a"]), int(out["b"][0])]
""",
    "pure_callback_every_vmap_method": """
result = {}
for method in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
               "legacy_vectorized"]:
    shapes = []
    def cb(x, y):
        shapes.append((np.shape(x), np.shape(y)))
        return np.asarray(x) + np.asarray(y)
    def f(x, y):
        return jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                 vmap_method=method)
    out = jax.jit(jax.vmap(f, in_axes=(0, None)))(np.arange(6, dtype=F32).reshape(3, 2),
                                                  np.ones(2, F32))
    result[method] = (shapes, np.asarray(out))
""",
    "pure_callback_vmap_batch_axis_not_first": """
shapes = []
def cb(x):
    shapes.append(np.shape(x))
    return np.asarray(x) * 2
f = lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                vmap_method="expand_dims")
out = jax.vmap(f, in_axes=1)(np.arange(6, dtype=F32).reshape(2, 3))
result = [shapes, np.asarray(out)]
""",
    "pure_callback_vmap_without_method_raises": """
f = lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), F32), x)
result = error_of(lambda: jax.vmap(f)(np.ones(3, F32)))
""",
    "pure_callback_unknown_vmap_method": """
result = error_of(lambda: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), F32), F32(1),
                                            vmap_method="vectorized"))
""",
    "pure_callback_grad_raises": """
f = lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), F32), x)
result = [error_of(lambda: jax.grad(f)(F32(1))), error_of(lambda: jax.jvp(f, (F32(1),), (F32(1),)))]
""",
    "pure_callback_differentiable_through_custom_jvp": """
@jax.custom_jvp
def host_sin(x):
    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                             vmap_method="sequential")
@host_sin.defjvp
def host_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return host_sin(x), jax.pure_callback(np.cos, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                          vmap_method="sequential") * t
xs = np.linspace(0, 1, 4, dtype=F32)
result = [float(jax.grad(host_sin)(F32(0.5))), np.asarray(jax.jit(jax.vmap(jax.grad(host_sin)))(xs))]
""",
    "pure_callback_wrong_result_shape_and_dtype": """
bad_shape = lambda x: jax.pure_callback(lambda v: np.zeros(2, F32), jax.ShapeDtypeStruct((3,), F32), x)
bad_dtype = lambda x: jax.pure_callback(lambda v: np.zeros(3, np.int32), jax.ShapeDtypeStruct((3,), F32), x)
def run(fn):
    try:
        np.asarray(jax.jit(fn)(np.ones(3, F32)))
    except Exception as err:
        text = str(err)
        return [k for k in ("Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)",
                            "Incorrect output dtype for return value #0: Expected: float32, Actual: int32")
                if k in text]
result = [run(bad_shape), run(bad_dtype)]
""",
    "exceptions_in_callbacks_reach_the_caller": """
def boom(x):
    raise ValueError("boom from the host")
def run(fn):
    try:
        np.asarray(jax.jit(fn)(F32(1)))
    except Exception as err:
        return type(err).__name__, "ValueError: boom from the host" in str(err)
result = [run(lambda x: jax.pure_callback(boom, jax.ShapeDtypeStruct((), F32), x)),
          run(lambda x: io_callback(boom, jax.ShapeDtypeStruct((), F32), x)),
          run(lambda x: io_callback(boom, jax.ShapeDtypeStruct((), F32), x, ordered=True))]
""",
    "bad_arguments_raise_jax_error_types": """
def kind(fn):
    try:
        fn()
    except Exception as err:
        return type(err).__name__
    return None
x = F32(1)
result = [
    kind(lambda: jax.pure_callback(np.sin, bad, x, vmap_method="sequential"))
    for bad in (3, "f32", object(), [jax.ShapeDtypeStruct((), F32), 2.5], {"a": "b"})
] + [
    kind(lambda: io_callback(np.sin, bad, x)) for bad in (3, "f32", (object(),))
] + [
    kind(lambda: jax.debug.callback(bad)) for bad in (3, None if False else "s", [1])
] + [
    kind(lambda: jax.debug.print(fmt, 1)) for fmt in ("{} {}", "{x}", "{0} {2}")
]
""",
    "pure_callback_64bit_result_without_x64": """
result = error_of(lambda: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), np.float64), F32(1)))
""",
    "pure_callback_float64_result_is_canonicalized": """
out = jax.jit(lambda x: jax.pure_callback(lambda v: np.asarray(v, np.float64) * 2,
                                          jax.ShapeDtypeStruct((2,), F32), x))(np.ones(2, F32))
result = [str(out.dtype), np.asarray(out)]
""",
    "pure_callback_unused_result_is_dropped": """
calls = []
def cb(x):
    calls.append(1)
    return x
def f(x):
    jax.pure_callback(cb, jax.ShapeDtypeStruct((), F32), x)
    return x + 1
jax.jit(f)(F32(1))
result = len(calls)
""",
    "io_callback_ordered_in_scan_and_across_calls": """
log = []
def record(tag, x):
    log.append((tag, float(x)))
def body(c, x):
    io_callback(functools.partial(record, "scan"), None, c, ordered=True)
    return c + x, c * 2
f = jax.jit(lambda xs: jax.lax.scan(body, F32(0), xs))
g = jax.jit(lambda x: io_callback(functools.partial(record, "g"), None, x, ordered=True))
for i in range(3):
    f(np.arange(3, dtype=F32) + i)
    g(F32(-i))
jax.effects_barrier()
result = log
""",
    "io_callback_returns_values_and_keeps_unused_calls": """
calls = []
def cb(x):
    calls.append(float(x))
    return np.asarray(x) * 3
def f(x):
    io_callback(cb, jax.ShapeDtypeStruct((), F32), x)
    return io_callback(cb, jax.ShapeDtypeStruct((), F32), x + 1)
out = jax.jit(f)(F32(1))
jax.effects_barrier()
result = [float(out), sorted(calls)]
""",
    "io_callback_vmap": """
calls = []
def cb(x):
    calls.append(np.shape(x))
    return np.asarray(x) + 1
f = lambda x: io_callback(cb, jax.ShapeDtypeStruct((2,), F32), x)
out = jax.vmap(f)(np.ones((3, 2), F32))
ordered = lambda x: io_callback(cb, jax.ShapeDtypeStruct((2,), F32), x, ordered=True)
result = [calls, np.asarray(out), error_of(lambda: jax.vmap(ordered)(np.ones((3, 2), F32)))]
""",
    "io_callback_is_not_differentiable": """
f = lambda x: io_callback(lambda v: v, jax.ShapeDtypeStruct((), F32), x)
result = [error_of(lambda: jax.grad(f)(F32(1))), error_of(lambda: jax.jvp(f, (F32(1),), (F32(1),)))]
""",
    "io_callback_in_cond_and_while": """
log = []
def rec(x):
    log.append(int(x))
def body(i):
    io_callback(rec, None, i, ordered=True)
    return i + 1
def cond_fun(i):
    return i < 4
def f(p, x):
    jax.lax.while_loop(cond_fun, body, x)
    jax.lax.cond(p, lambda: io_callback(rec, None, 100, ordered=True),
                 lambda: io_callback(rec, None, 200, ordered=True))
jax.jit(f)(True, 1)
jax.jit(f)(False, 2)
jax.effects_barrier()
result = log
""",
    "callback_may_call_jax_itself": """
double = jax.jit(lambda v: v * 2)
def cb(x):
    return np.asarray(double(x) + jnp.sin(x))
out = jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct((3,), F32), x))(np.ones(3, F32))
result = np.asarray(out)
""",
    "debug_print_formats": """
def f(x, y):
    jax.debug.print("x={x} y={}", y, x=x)
    jax.debug.print("no placeholders")
    jax.debug.print("{} {}", x, 7, skip_format_check=False)
    jax.debug.print("{0:.3f} and {1}", x[0], "static")
    jax.debug.print("")
    return x
x = np.arange(3, dtype=F32)
result = [printed(lambda: jax.jit(f)(x, np.int32(5))), printed(lambda: f(x, np.int32(5)))]
""",
    "debug_print_ordered_under_jit_vmap_grad_and_loops": """
def body(i, c):
    jax.debug.print("step {i} c={c}", i=i, c=c, ordered=True)
    return c * 2
def f(x):
    y = jax.lax.fori_loop(0, 3, body, x)
    jax.debug.print("after {}", y, ordered=True)
    return y * x
out = []
out.append(printed(lambda: jax.jit(f)(F32(1.5))))
out.append(printed(lambda: jax.grad(f)(F32(1.5))))
out.append(printed(lambda: jax.jit(jax.vmap(lambda v: jax.debug.print("v={}", v)))(np.arange(3))))
out.append(printed(lambda: jax.jit(jax.grad(lambda v: (jax.debug.print("g {}", v), v * v)[1]))(F32(2))))
result = out
""",
    "debug_print_two_call_form_and_errors": """
out = [printed(lambda: jax.jit(lambda x: jax.debug.print(ordered=True)("two {x}", x=x))(F32(1)))]
out.append(error_of(lambda: jax.debug.print(f"{3}", 3)))
out.append(error_of(lambda: jax.debug.print("{x}", x=1, y=2)))
out.append(error_of(lambda: jax.debug.print(ordered=True)("a", ordered=False)))
result = out
""",
    "debug_log_hands_info_records_to_logging": """
import logging
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.levelname, record.getMessage(), record.lineno > 0))
handler = Keep()
logging.getLogger().addHandler(handler)
try:
    jax.jit(lambda x: jax.debug.log("logged {x}", x=x))(np.arange(3))
    jax.debug.log("eager {}", 2)
    jax.effects_barrier()
finally:
    logging.getLogger().removeHandler(handler)
result = records
""",
    "debug_print_uses_numpy_print_options": """
x = np.linspace(0, 1, 3, dtype=F32)
def run():
    with np.printoptions(precision=2):
        jax.jit(lambda v: jax.debug.print("{}", v))(x)
result = printed(run)
""",
    "debug_callback_static_and_array_arguments": """
seen = []
def cb(a, tag, *, scale):
    seen.append((type(a).__name__, np.asarray(a).tolist(), tag, scale))
def f(x):
    jax.debug.callback(cb, x, "tag", scale=3)
    jax.debug.callback(ordered=True)(cb, x * 2, "second", scale=None)
    return x
jax.jit(f)(np.arange(2, dtype=F32))
f(np.arange(2, dtype=F32))
jax.effects_barrier()
result = [seen, error_of(lambda: jax.debug.callback(3))]
""",
    "debug_callback_vmap_calls_once_per_element": """
seen = []
jax.vmap(lambda x, y: jax.debug.callback(lambda a, b: seen.append((float(a), float(b))), x, y),
         in_axes=(0, None))(np.arange(3, dtype=F32), F32(7))
result = seen
""",
}


def _exec_laminax(source: str):
    scope = {"jax": laminax, "jnp": lnp, "np": np, "io_callback": io_callback}
    exec(textwrap.dedent(PRELUDE) + textwrap.dedent(source), scope)
    return scope["result"]


def _assert_same(ours, theirs, where="result"):
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-6, err_msg=where)
        assert np.asarray(ours).dtype == theirs.dtype, where
    elif isinstance(theirs, dict):
        assert set(ours) == set(theirs), where
        for k in theirs:
            _assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs), f"{where}: {ours!r} != {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name):
    source = PROGRAMS[name]
    expected = run_jax(
        "from jax.experimental import io_callback\n"
        + textwrap.dedent(PRELUDE)
        + textwrap.dedent(source)
    )
    _assert_same(_exec_laminax(source), expected)


def test_laminax_programs_run_without_jax():
    # the laminax half alone, where the reference environment is missing
    out = _exec_laminax(PROGRAMS["pure_callback_jit_and_eager"])
    np.testing.assert_allclose(out[0], np.sin(np.arange(4, dtype=np.float32)), rtol=1e-6)
    np.testing.assert_allclose(out[1], out[0])
