"""Mutable array references (`jax.new_ref`, `jax.ref`) against real JAX 0.10.2: values eagerly
and under jit (references passed in, closed over, made inside), in scan / fori_loop / cond /
while_loop bodies, through grad / jvp / vmap, the printed jaxprs (`Ref{f32[3]}`, `b[0] <- c`),
the `Ref` object itself, and JAX's errors."""

from __future__ import annotations

import laminax as jax
import laminax.numpy as jnp
import numpy as np
import pytest
from aliasrun import run_as_jax
from jaxref import JaxReferenceError, requires_jax, run_jax
from laminax import lax

# Each program defines `result` from `jax`, `jnp`, `lax`, `np`: plain data (arrays, strings).
PROGRAMS = {
    "straight_line": """
def f(x):
    r = jax.new_ref(x)
    r[...] += 1.0
    r[0] = 5.0
    y = r[1:]
    r[...] = r[...] * 2
    return jax.freeze(r), y
x = jnp.arange(3.0)
result = [str(jax.make_jaxpr(f)(x)), *f(x), *jax.jit(f)(x)]
""",
    "index_forms": """
def f(q, i):
    q[0, 1:] = jnp.ones(2)
    return q[1], q[:, 0], q[0, 1], q[i, 1], q[:, i], q[..., 0], q[0, ...], q[-1], q[::2], q[:, :]
q = jax.new_ref(jnp.arange(12.0).reshape(4, 3))
result = [str(jax.make_jaxpr(f)(q, 1)), *jax.jit(f)(q, 1), jax.freeze(q)]
""",
    "addupdate_and_ref_module": """
r = jax.new_ref(jnp.ones(3))
old = jax.ref.swap(r, 0, 5.0)
jax.ref.addupdate(r, 1, 2.0)
r.addupdate(jnp.full(3, 10.0))
jax.ref.set(r, (2,), 7.0)
def f(r):
    jax.ref.addupdate(r, 0, 2.0)
    return jax.ref.get(r, 1), jax.ref.swap(r, slice(1, 3), jnp.zeros(2))
s = jax.new_ref(jnp.arange(3.0))
result = [old, jax.ref.get(r), jax.freeze(r), str(jax.make_jaxpr(f)(s)), *jax.jit(f)(s),
          jax.freeze(s)]
""",
    "jit_argument_written_back": """
r = jax.new_ref(jnp.arange(3.0))
g = jax.jit(lambda r, x: r.__setitem__(..., r[...] + x))
g(r, 1.0)
g(r, 2.0)
h = jax.jit(lambda r: r.__setitem__(0, 9.0))
result = [repr(r), str(jax.make_jaxpr(h)(r)), (h(r), jax.freeze(r))[1]]
""",
    "jit_closed_over": """
r = jax.new_ref(jnp.zeros(3))
g = jax.jit(lambda y: r.__setitem__(1, y))
g(7.0)
g(8.0)
k = jax.new_ref(jnp.zeros((), jnp.int32))
def count(x):
    k[...] += 1
    return x * 2
result = [jax.freeze(r), jax.jit(count)(3.0), jax.jit(count)(4.0), jax.freeze(k)]
""",
    "scan_closure": """
def f(x):
    r = jax.new_ref(0.0)
    def body(c, xi):
        r[...] += xi
        return c, ()
    lax.scan(body, 0.0, x)
    return r[...]
x = jnp.arange(3.0)
result = [str(jax.make_jaxpr(f)(x)), f(x), jax.jit(f)(x)]
""",
    "fori_loop": """
def f(x):
    r = jax.new_ref(x)
    def body(i, c):
        r[i] = r[i] * 2.0 + c
        return c + 1.0
    lax.fori_loop(0, 3, body, 0.0)
    return jax.freeze(r)
x = jnp.arange(3.0)
result = [f(x), jax.jit(f)(x)]
""",
    "cond": """
def f(p, x):
    r = jax.new_ref(x)
    lax.cond(p, lambda: r.__setitem__(..., r[...] + 1), lambda: None)
    return r[...]
x = jnp.arange(3.0)
result = [f(True, x), f(False, x), jax.jit(f)(True, x), jax.jit(f)(False, x)]
""",
    "while_loop": """
def f(x):
    r = jax.new_ref(0.0)
    def body(i):
        r[...] += x[i]
        return i + 1
    lax.while_loop(lambda i: i < 3, body, 0)
    return r[...]
x = jnp.arange(1.0, 4.0)
result = [f(x), jax.jit(f)(x)]
""",
    "control_flow_jaxprs": """
def fori(x):
    r = jax.new_ref(x)
    def body(i, c):
        r[i] = r[i] * 2.0
        return c
    lax.fori_loop(0, 3, body, 0)
    return jax.freeze(r)
def cond(p, x):
    r = jax.new_ref(x)
    lax.cond(p, lambda: r.__setitem__(..., r[...] + 1), lambda: None)
    return r[...]
def while_(x):
    r = jax.new_ref(0.0)
    def body(i):
        r[...] += 1.0
        return i + 1
    lax.while_loop(lambda i: i < 5, body, 0)
    return r[...]
x = jnp.arange(3.0)
result = [str(jax.make_jaxpr(fori)(x)), str(jax.make_jaxpr(cond)(True, x)),
          str(jax.make_jaxpr(while_)(x)), while_(x)]
""",
    "eager_loops_write_outer_ref": """
q = jax.new_ref(jnp.zeros(()))
lax.scan(lambda c, xi: (q.__setitem__(..., q[...] + xi), (c, None))[1], 0.0, jnp.arange(4.0))
jax.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: (q.__setitem__(..., q[...] * x), c)[1], 0))(2.0)
result = [jax.freeze(q)]
""",
    "grad_jvp_vmap": """
def f(x):
    r = jax.new_ref(jnp.zeros_like(x))
    r[...] = jnp.sin(x)
    r[0] = r[0] * 3
    r[1:] += x[1:] ** 2
    return jnp.sum(r[...])
def g(x):
    r = jax.new_ref(jnp.zeros_like(x))
    r[...] = jnp.sin(x)
    r[0] = r[0] * 3
    return jnp.sum(r[...])
x = jnp.arange(1.0, 4.0)
result = [str(jax.make_jaxpr(jax.grad(g))(x)),
          jax.grad(f)(x), jax.jit(jax.grad(f))(x), *jax.jvp(f, (x,), (jnp.ones(3),)),
          jax.vmap(f)(jnp.arange(6.0).reshape(2, 3)),
          jax.vmap(lambda v: (lambda q: (q.__setitem__(0, v[1]), jax.freeze(q))[1])(
              jax.new_ref(v)))(jnp.arange(6.0).reshape(2, 3))]
""",
    "transforms_of_loops_and_calls": """
def scan_sq(x):
    q = jax.new_ref(0.0)
    lax.scan(lambda c, xi: (q.__setitem__(..., q[...] + xi * xi), (c, None))[1], 0.0, x)
    return q[...]
def remat(x):
    q = jax.new_ref(x)
    q[0] = x[1] * 2.0
    return jax.freeze(q).sum()
def vmapped(v):
    q = jax.new_ref(jnp.zeros(()))
    lax.fori_loop(0, 3, lambda i, c: (q.__setitem__(..., q[...] + v[i] * c), c * 2.0)[1], 1.0)
    return q[...]
x = jnp.arange(1.0, 4.0)
result = [jax.grad(scan_sq)(x), jax.jit(jax.grad(scan_sq))(x), jax.jit(jax.checkpoint(remat))(x),
          jax.grad(jax.checkpoint(remat))(x), jax.vmap(vmapped)(jnp.arange(6.0).reshape(2, 3)),
          jax.vmap(jax.grad(vmapped))(jnp.arange(6.0).reshape(2, 3)),
          jax.linearize(remat, x)[1](jnp.ones(3)), *jax.vjp(lambda x: remat(x) * 2, x)[1](1.0)]
""",
    "calls_operands_and_indices": """
r = jax.new_ref(jnp.arange(3.0))
inner = jax.jit(lambda r, y: r.__setitem__(0, y))
jax.jit(lambda r: inner(r, 4.0))(r)
lax.cond(True, lambda q: q.__setitem__(1, 9.0), lambda q: None, r)
d = {"a": jax.new_ref(jnp.zeros(2)), "b": jnp.ones(2)}
jax.jit(lambda d: d["a"].__setitem__(..., d["b"] + 1))(d)
x = jnp.arange(3.0)
result = [jax.freeze(r), jax.freeze(d["a"]),
          jax.jit(lambda x, i: (lambda q: (q.__setitem__(i, 7.0), jax.freeze(q))[1])(
              jax.new_ref(x)))(x, 2),
          jax.jit(lambda x, i: jax.new_ref(x)[i])(x, jnp.array([2, 0])),
          jax.jit(lambda: (lambda q: (q.__setitem__(..., 3), q[...])[1])(jax.new_ref(1)))(),
          str(jax.eval_shape(lambda x: jax.freeze(jax.new_ref(x)), x).shape)]
""",
    "export_pmap_lower": """
def f(x):
    r = jax.new_ref(x)
    lax.fori_loop(0, 3, lambda i, c: (r.__setitem__(i, r[i] * c), c + 1.0)[1], 2.0)
    return jax.freeze(r)
x = jnp.arange(1.0, 4.0)
exported = jax.export.export(jax.jit(f))(x)
q = jax.new_ref(x)
text = jax.jit(lambda r: r.__setitem__(0, 5.0)).lower(q).as_text()
result = [exported.call(x), len(exported.in_avals), len(exported.out_avals),
          jax.pmap(lambda v: jax.freeze((lambda q: (q.__setitem__(0, 1.0), q)[1])(
              jax.new_ref(v))))(x[None]), "@main" in text, jax.freeze(q)]
""",
    "empty_and_free_ref": """
def f():
    r = jax.empty_ref(jax.ShapeDtypeStruct((2,), jnp.float32))
    r[...] = jnp.ones(2)
    return jax.freeze(r)
def g(x):
    jax.free_ref(jax.new_ref(x))
    return x
result = [str(jax.make_jaxpr(f)()), jax.jit(f)(), str(jax.make_jaxpr(g)(1.0))]
""",
    "ref_object": """
r = jax.new_ref(jnp.arange(3))
s = jax.new_ref(1.0)
result = [repr(r), str(jax.typeof(r)), str(jax.typeof(s)), str(jax.typeof(s).inner_aval),
          isinstance(r, jax.Ref), isinstance(r, jax.Array), r.shape, str(r.dtype), r.ndim,
          r.size, len(r), type(jax.typeof(r)).__name__, repr(jax.new_ref(3)),
          jax.jit(lambda x: str(jax.typeof(jax.new_ref(x))) == 'Ref{float32[3]}' and x)(
              jnp.ones(3)) is not None]
""",
}

ERRORS = {
    "return_ref_from_jit": "jax.jit(lambda x: jax.new_ref(x))(jnp.ones(3))",
    "same_ref_twice": "(lambda r: jax.jit(lambda a, b: a[...])(r, r))(jax.new_ref(jnp.ones(3)))",
    "dtype_mismatch": "jax.new_ref(jnp.ones(3)).__setitem__(..., jnp.ones(3, jnp.int32))",
    "dtype_mismatch_jit": "jax.jit(lambda x: jax.new_ref(x).__setitem__(..., x.astype(int)))"
                          "(jnp.ones(3))",
    "python_float_into_int": "jax.new_ref(jnp.zeros(3, jnp.int32)).__setitem__(0, 1.5)",
    "shape_mismatch": "jax.new_ref(jnp.ones(3)).__setitem__(..., jnp.ones(4))",
    "no_broadcast": "jax.new_ref(jnp.ones(3)).__setitem__(..., 2.0)",
    "out_of_bounds": "jax.new_ref(jnp.ones(3))[5]",
    "too_many_indices": "jax.new_ref(jnp.ones(3))[0, 0]",
    "scan_carry_ref": "lax.scan(lambda c, _: (c, None), jax.new_ref(jnp.ones(2)), length=2)",
    "cond_returns_ref": "lax.cond(True, lambda: jax.new_ref(1.0), lambda: jax.new_ref(2.0))",
    "vmap_write_unbatched": "(lambda q: jax.vmap(lambda x: q.__setitem__(..., x))"
                            "(jnp.ones((2, 3))))(jax.new_ref(jnp.zeros(3)))",
    "new_ref_of_list": "jax.new_ref([1, 2])",
    "grad_of_ref_argument": "jax.grad(lambda r: r[...].sum())(jax.new_ref(jnp.arange(3.0)))",
    "export_ref_argument": "jax.export.export(jax.jit(lambda r: r.__setitem__(0, 5.0)))"
                           "(jax.new_ref(jnp.ones(3)))",
    "while_carry_ref": "lax.while_loop(lambda c: False, lambda c: c, jax.new_ref(jnp.ones(3)))",
}

ENV = "from jax import lax\n"


def _run_laminax(source: str):
    scope = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    exec(source, scope)  # noqa: S102 (the same program text as the JAX side runs)
    return scope["result"]


def _assert_same(got, want, name):
    assert len(got) == len(want), name
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, str | bool | int | tuple) and not isinstance(w, np.generic):
            assert g == w, f"{name}[{i}]:\n{g}\n!=\n{w}"
        else:
            g = np.asarray(g)
            assert g.dtype == w.dtype, f"{name}[{i}]: {g.dtype} != {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{name}[{i}]")


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name):
    source = PROGRAMS[name]
    want = run_jax(ENV + source + "\nresult = [np.asarray(v) if hasattr(v, 'dtype') and not "
                   "isinstance(v, (str, tuple)) else v for v in result]")
    _assert_same(_run_laminax(source), want, name)


@requires_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_jax(name):
    source = f"result = {ERRORS[name]}"
    with pytest.raises(JaxReferenceError) as jax_err:
        run_jax(ENV + source)
    with pytest.raises(Exception) as err:  # noqa: PT011 (compared with JAX's type below)
        _run_laminax(source)
    assert type(err.value).__name__ == jax_err.value.type_name, (err.value, jax_err.value)


@requires_jax
def test_import_jax_ref_program_matches_jax():
    # a program written against JAX, run unchanged in laminax's `import jax` mode
    source = (
        "import jax, jax.numpy as jnp\n"
        "from jax.ref import AbstractRef, Ref, addupdate, get\n"
        "r = jax.ref.new_ref(jnp.arange(4.0))\n"
        "addupdate(r, 1, 10.0)\n"
        "step = jax.jit(lambda r, s: r.__setitem__(slice(2, None), r[2:] * s))\n"
        "step(r, 3.0)\n"
        "result = [jax.ref.freeze(r), get(r, 0), isinstance(jax.typeof(r), AbstractRef),\n"
        "          isinstance(r, Ref), str(jax.typeof(r))]")
    got, want = run_as_jax(source), run_jax(source)
    _assert_same(got, [np.asarray(w) if hasattr(w, "dtype") else w for w in want], "alias")
