"""`jax_check_tracer_leaks` against real JAX 0.10.2: which transformations raise "Leaked trace"
when the traced function keeps a tracer (in a global, a local, an object attribute), and that
programs that keep none run unchanged."""

import laminax_core as lc
import numpy as np
import pytest
from jaxref import requires_jax, run_jax

# name -> source of `run()`, written once against both libraries
CASES = {
    "make_jaxpr_global": "def run():\n    make_jaxpr(lambda x: BOX.append(x) or x)(1.0)",
    "make_jaxpr_local": (
        "def run():\n    box = []\n    make_jaxpr(lambda x: box.append(x) or x)(1.0)"
    ),
    "make_jaxpr_intermediate": (
        "def run():\n    make_jaxpr(lambda x: BOX.append(lax.sin(x)) or x)(1.0)"
    ),
    "vmap_global": "def run():\n    vmap(lambda x: BOX.append(x) or x)(np.ones(3, np.float32))",
    "vmap_attribute": (
        "class Holder:\n    pass\n\nholder = Holder()\n\n"
        "def run():\n    vmap(lambda x: setattr(holder, 'v', x) or x)(np.ones(3, np.float32))"
    ),
    "grad_global": "def run():\n    grad(lambda x: BOX.append(x) or x)(1.0)",
    "jvp_global": "def run():\n    jvp(lambda x: BOX.append(x) or x, (1.0,), (1.0,))",
    "vmap_inside_grad": (
        "def run():\n    grad(lambda x: vmap(lambda v: BOX.append(v) or v)(x).sum())"
        "(np.ones(3, np.float32))"
    ),
    "ok_make_jaxpr": "def run():\n    make_jaxpr(lambda x: lax.sin(x) * 2)(1.0)",
    "ok_cond": "def run():\n    make_jaxpr(lambda x: lax.cond(x > 0, lax.sin, lax.cos, x))(1.0)",
    "ok_scan_grad": (
        "def run():\n    grad(lambda x: lax.scan(lambda c, y: (c * y, c), x,"
        " np.ones(3, np.float32))[0])(1.0)"
    ),
    "ok_vmap_grad": (
        "def run():\n    vmap(grad(lambda x: lax.sin(x) * x))(np.ones(3, np.float32))"
    ),
    "ok_hessian": "def run():\n    hessian(lambda x: (x * x * x).sum())(np.ones(3, np.float32))",
}

_JAX = """
from jax import lax, grad, jvp, vmap, make_jaxpr, hessian
result = {}
for name, src in cases.items():
    ns = dict(np=np, lax=lax, grad=grad, jvp=jvp, vmap=vmap, make_jaxpr=make_jaxpr,
              hessian=hessian, BOX=[])
    exec(src, ns)
    try:
        with jax.checking_leaks():
            ns["run"]()
        result[name] = None
    except Exception as err:
        result[name] = (type(err).__name__, str(err).split(".")[0])
"""


def _laminax(src):
    ns = dict(
        np=np, lax=lc.lax, grad=lc.grad, jvp=lc.jvp, vmap=lc.vmap, make_jaxpr=lc.make_jaxpr,
        hessian=lc.hessian, BOX=[],
    )
    exec(src, ns)
    try:
        with lc.config.checking_leaks():
            ns["run"]()
    except Exception as err:
        return (type(err).__name__, str(err).split(".")[0])
    return None


@pytest.fixture(scope="module")
def jax_results():
    return run_jax(_JAX, cases=CASES)


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_leak_checks_match_jax(jax_results, name):
    expected = jax_results[name]
    assert _laminax(CASES[name]) == (None if expected is None else tuple(expected))
