"""Issue 12: every API that takes argument positions or axis specs reads them through one shared
check (laminax_core's `_argnums`: `check_argnums`, `index_or_indices`, `resolve_argnums`), and
answers a bad value with JAX's error type. Each table runs under laminax and real JAX: a value
must match JAX's, an error JAX's type.

Inputs JAX answers by accident are left out and named here: `custom_jvp`/`custom_vjp` take
`nondiff_argnums=(0, 1.5)` and `np.array([0, 1])` in JAX until a rule runs, and read
`nondiff_argnums=0` as no position at all (laminax refuses all three when the function is
made, TypeError: the last silently drops the position the user named), and JAX's
`custom_vjp` with a negative
nondiff position fails in its own bwd-output check where laminax answers JAX's `custom_jvp`
value.
"""

import random

import pytest
from hardening_table import check_table
from jaxref import requires_jax

pytestmark = requires_jax

SETUP = """
import importlib
pjit = importlib.import_module(jax.__name__ + ".experimental.pjit").pjit
def f(x, y, z=1.0): return (x * y * z).sum()
def g(x, y): return x * y
x = jnp.ones(3); y = jnp.arange(3.0)
"""

SPECS = ["'a'", "1.5", "(0, 'a')", "(0, 1.5)", "[0, 1]", "(0, 0)", "5", "-5", "-1", "(0, 5)",
         "None", "()", "np.int64(1)", "(1, 0)", "{0}", "[[0]]", "True", "(True,)", "2", "-3",
         "object()", "range(2)", "np.array([0, 1])", "np.array(1)", "(np.int32(0),)", "-2"]

CALLS = [
    "jax.grad(f, argnums={a})(x, y)", "jax.value_and_grad(f, argnums={a})(x, y)",
    "jax.jacfwd(g, argnums={a})(x, y)", "jax.jacrev(g, argnums={a})(x, y)",
    "jax.hessian(f, argnums={a})(x, y)", "jax.grad(f, argnums={a})(x, y, z=2.0)",
    "jax.jacfwd(f, argnums={a})(x, y)",
    "jax.checkpoint(f, static_argnums={a})(x, y)", "jax.remat(f, static_argnums={a})(1.0, 2.0)",
    "jax.custom_jvp(f, nondiff_argnums={a})(x, y)", "jax.custom_vjp(f, nondiff_argnums={a})(x, y)",
    "jax.jit(f, static_argnums={a})(1.0, 2.0)", "jax.jit(f, donate_argnums={a})(x, y)",
    "pjit(f, static_argnums={a})(1.0, 2.0)",
    "jax.pmap(g, static_broadcasted_argnums={a})(x[:1], y[:1])",
    "jax.pmap(g, donate_argnums={a})(x[:1], y[:1])",
]

# JAX answers these by accident (see the module docstring)
SKIP = {"jax.custom_jvp(f, nondiff_argnums=(0, 1.5))(x, y)",
        "jax.custom_vjp(f, nondiff_argnums=(0, 1.5))(x, y)",
        "jax.custom_jvp(f, nondiff_argnums=np.array([0, 1]))(x, y)",
        "jax.custom_vjp(f, nondiff_argnums=np.array([0, 1]))(x, y)"}


def _table(specs):
    exprs = [call.format(a=a) for a in specs for call in CALLS]
    return [e for e in exprs if e not in SKIP and "nondiff_argnums=0)" not in e]


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_argument_positions_of_every_transformation_as_jax():
    counts = check_table(_table(SPECS), SETUP)
    assert counts["ok"] > 100 and counts["error"] > 250, counts


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_random_argument_positions_as_jax():
    rng = random.Random(12)
    specs = set()
    while len(specs) < 24:
        n = rng.randint(0, 3)
        items = [rng.randint(-4, 4) for _ in range(n)]
        kind = rng.choice(["tuple", "list", "int", "np"])
        if kind == "int" and items:
            specs.add(str(items[0]))
        elif kind == "np" and items:
            specs.add(f"np.int16({items[0]})")
        elif kind == "list":
            specs.add(repr(items))
        else:
            specs.add(repr(tuple(items)))
    counts = check_table(_table(sorted(specs)), SETUP)
    assert counts["ok"] > 50 and counts["error"] > 50, counts


NONDIFF_SETUP = """
def fj(x, n): return x * n
def mk(nd):
    cj = jax.custom_jvp(fj, nondiff_argnums=nd)
    @cj.defjvp
    def _(n, p, t): return fj(p[0], n), t[0] * n
    cv = jax.custom_vjp(fj, nondiff_argnums=nd)
    cv.defvjp(lambda x, n: (fj(x, n), None), lambda n, r, g: (g * n,))
    return cj, cv
"""


def test_nondiff_argnums_with_rules_as_jax():
    exprs = []
    for nd in ["(1,)", "(-1,)", "[1]", "(np.int64(1),)", "(5,)", "(-5,)", "range(1, 2)",
               "(1, 1)", "(2,)", "(-3,)"]:
        for call in ["jax.grad(lambda x: c(x, 3.0))(2.0)", "c(2.0, 3.0)",
                     "jax.jvp(lambda x: c(x, 3.0), (2.0,), (1.0,))",
                     "jax.vmap(lambda x: c(x, 3.0))(jnp.ones(2))"]:
            for k in (0, 1):
                expr = f"(lambda c: {call})(mk({nd})[{k}])"
                # JAX's own custom_vjp check rejects a negative position under grad
                if not (nd == "(-1,)" and k == 1 and call.startswith("jax.grad")):
                    exprs.append(expr)
    counts = check_table(exprs, NONDIFF_SETUP)
    assert counts["ok"] > 20 and counts["error"] > 20, counts


AXES_SETUP = """
x = jnp.ones((2, 3)); y = jnp.arange(6.0).reshape(2, 3); z = jnp.ones(2)
def g(a, b): return a * b
"""


def test_vmap_and_pmap_axes_as_jax():
    exprs = []
    for s in ["0", "1", "-1", "2", "-3", "None", "'a'", "1.5", "np.int64(0)", "True", "(0, 0)",
              "(0, None)", "[0, 1]", "(0,)", "(0, 0, 0)", "((0,), 0)", "{'a': 0}", "(0, 'a')",
              "(0, 1.5)", "(np.int32(1), 0)", "(None, None)", "(0, (0, 0))", "(-1, -2)"]:
        exprs += [f"jax.vmap(g, in_axes={s})(x, y)", f"jax.vmap(g, out_axes={s})(x, y)",
                  f"jax.vmap(lambda a, b: (a, b), out_axes={s})(x, y)",
                  f"jax.pmap(g, in_axes={s})(x[:1], y[:1])",
                  f"jax.pmap(g, out_axes={s})(x[:1], y[:1])",
                  f"jax.vmap(g, in_axes={s}, axis_size=2)(x, y)"]
    for s in ["(0, 2)", "(0, -3)", "(2, 0)", "(0, 5)", "(1, 1)", "(0, 1)"]:
        exprs += [f"jax.pmap(g, in_axes={s})(x[:1], y[:1])", f"jax.vmap(g, in_axes={s})(x, y)",
                  f"jax.vmap(g, in_axes={s})(x, y.T)"]
    for s in ["0", "1", "2", "-3", "(0, 1)", "(5, 0)", "(None, 0)"]:
        exprs += [f"jax.vmap(lambda a, b: (a, b), out_axes={s})(x, z)",
                  f"jax.pmap(lambda a, b: (a, b), out_axes={s})(x[:1], z[:1])"]
    exprs += ["jax.vmap(g)(x, z)", "jax.vmap(g)(x, jnp.ones(3))",
              "jax.vmap(g, in_axes=(0, None))(x, z)",
              "jax.vmap(g, in_axes=(1, 0))(x, jnp.ones((3, 3)))", "jax.vmap(g, axis_size=3)(x, y)",
              "jax.vmap(g, in_axes=None)(x, y)", "jax.vmap(g, in_axes=None, axis_size=2)(x, y)",
              "jax.vmap(lambda a: 1.0)(x)", "jax.vmap(lambda a: 1.0, out_axes=None)(x)",
              "jax.vmap(lambda a: a, out_axes=None)(x)",
              "jax.vmap(lambda a, b: a, in_axes=(0, 0))(x, [z, z])",
              "jax.vmap(lambda a, b: a)(x, {'k': z})", "jax.vmap(g, in_axes=(0, {'k': 0}))(x, y)",
              "jax.vmap(lambda a: a, in_axes=[0])(x)",
              "jax.vmap(lambda a: a, in_axes=({'b': 0},))({'a': x})",
              "jax.pmap(lambda a: a)(np.float32(1))",
              "jax.pmap(lambda a, b: a)(np.float32(1), np.ones(1))",
              "jax.pmap(lambda a, b: a)(np.ones(1), np.float32(1))",
              "jax.pmap(lambda a: a, in_axes=1)(np.ones(1))",
              "jax.vmap(lambda a: a)(np.float32(1))",
              "jax.vmap(lambda a, b: a)(np.ones(1), np.float32(1))"]
    # a mapped size of 3 runs here (8 CPU devices) and not in the one-device JAX worker
    exprs = [e for e in exprs if e not in ("jax.pmap(g, in_axes=1)(x[:1], y[:1])",
                                           "jax.pmap(g, in_axes=(1, 1))(x[:1], y[:1])")]
    counts = check_table(exprs, AXES_SETUP)
    assert counts["ok"] > 30 and counts["error"] > 120, counts
